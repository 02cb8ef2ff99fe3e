/* cuda_launch.c: the module, function, launch and graph entry points (cuda_cap.h). Each calls the real
 * one and returns its result unchanged; the records are written after it returns. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuda_cap.h"
#include "cuda_syms.h"

#define PT VGT_CUDA_CALL_PER_THREAD
#define U64(p) ((uint64_t)(uintptr_t)(p))

/* ---- modules and libraries ---- */

static void write_load(cu_call *c, uint64_t handle, uint64_t hash, const char *path)
{
    if (!c->rec) return;
    vgt_rec_cuda_load l = {.call = c->head, .handle = handle, .image_hash = hash,
                           .path_length = path ? (uint32_t)strlen(path) : 0, .path = path};
    cu_write(VGT_REC_CUDA_LOAD, &l);
}

/* The image bytes of a load from memory (copy: the caller may free them when the call returns). */
static uint64_t note_image(const cu_call *c, const void *image, int copy)
{
    if (!c->rec || !image) return 0;
    const void *data;
    uint32_t kind;
    uint64_t size = cu_image_size(image, &data, &kind);
    if (!size) {
        if (shim_first_time(0xC0DA100000000000ull ^ (uint64_t)(uintptr_t)image))
            shim_problem(1, VGT_E_UNSUPPORTED, "%s: the image at %p is of no size the capture can tell; not stored",
                         vgt_cuda_api_name(c->head.api), image);
        return 0;
    }
    return cu_image_note(data, size, kind, copy, NULL);
}

/* The image of a load from a file: the file's bytes. */
static uint64_t note_file(const cu_call *c, const char *path)
{
    if (!c->rec || !path) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    uint64_t hash = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size <= (1ull << 30)) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            hash = cu_image_note(p, (uint64_t)st.st_size, vgt_cuda_image_kind_of(p, (uint64_t)st.st_size), 1, path);
            munmap(p, (size_t)st.st_size);
        }
    }
    close(fd);
    return hash;
}

SHIM_EXPORT CUresult cuModuleLoad(CUmodule *m, const char *fname)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MODULE_LOAD, 0);
    CUresult r = CU_REAL(cuModuleLoad) ? CU_REAL(cuModuleLoad)(m, fname) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    if (c.rec) {
        uint64_t h = note_file(&c, fname), mod = r == CUDA_SUCCESS && m ? U64(*m) : 0;
        cu_owner_set(mod, 0, h, NULL, CU_OWNER_LOAD);
        write_load(&c, mod, h, fname);
    }
    return r;
}

#define LOAD_DATA_BODY(api, sym, call, image, copy)                                   \
    CU_CALL(c);                                                                        \
    cu_begin(&c, api, 0);                                                             \
    CUresult r = CU_REAL(sym) ? CU_REAL(sym) call : CUDA_ERROR_NOT_FOUND;             \
    cu_end(&c, r);                                                                    \
    if (c.rec) {                                                                      \
        uint64_t h = note_image(&c, image, copy), mod = r == CUDA_SUCCESS && m ? U64(*m) : 0; \
        cu_owner_set(mod, 0, h, NULL, CU_OWNER_LOAD);                                 \
        write_load(&c, mod, h, NULL);                                                 \
    }                                                                                 \
    return r

SHIM_EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    LOAD_DATA_BODY(VGT_CUDA_MODULE_LOAD_DATA, cuModuleLoadData, (m, image), image, 1);
}

SHIM_EXPORT CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned int n, CUjit_option *o, void **v)
{
    LOAD_DATA_BODY(VGT_CUDA_MODULE_LOAD_DATA_EX, cuModuleLoadDataEx, (m, image, n, o, v), image, 1);
}

SHIM_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *m, const void *fat)
{
    LOAD_DATA_BODY(VGT_CUDA_MODULE_LOAD_FAT_BINARY, cuModuleLoadFatBinary, (m, fat), fat, 0);
}

SHIM_EXPORT CUresult cuLibraryLoadData(CUlibrary *m, const void *code, CUjit_option *jo, void **jv, unsigned int jn,
                                       CUlibraryOption *lo, void **lv, unsigned int ln)
{
    /* The runtime hands over the fatbinaries compiled into the program: they outlive the call. */
    LOAD_DATA_BODY(VGT_CUDA_LIBRARY_LOAD_DATA, cuLibraryLoadData, (m, code, jo, jv, jn, lo, lv, ln), code, 0);
}

SHIM_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *m, const char *path, CUjit_option *jo, void **jv, unsigned int jn,
                                           CUlibraryOption *lo, void **lv, unsigned int ln)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_LIBRARY_LOAD_FROM_FILE, 0);
    CUresult r = CU_REAL(cuLibraryLoadFromFile) ? CU_REAL(cuLibraryLoadFromFile)(m, path, jo, jv, jn, lo, lv, ln)
                                                 : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    if (c.rec) {
        uint64_t h = note_file(&c, path), lib = r == CUDA_SUCCESS && m ? U64(*m) : 0;
        cu_owner_set(lib, 0, h, NULL, CU_OWNER_LOAD);
        write_load(&c, lib, h, path);
    }
    return r;
}

static void write_call(const cu_call *c, uint64_t object, uint64_t arg0, uint64_t arg1)
{
    if (!c->rec) return;
    vgt_rec_cuda_call k = {.call = c->head, .object = object, .arg0 = arg0, .arg1 = arg1};
    cu_write(VGT_REC_CUDA_CALL, &k);
}

SHIM_EXPORT CUresult cuModuleUnload(CUmodule m)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MODULE_UNLOAD, 0);
    CUresult r = CU_REAL(cuModuleUnload) ? CU_REAL(cuModuleUnload)(m) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, U64(m), 0, 0);
    return r;
}

SHIM_EXPORT CUresult cuLibraryUnload(CUlibrary m)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_LIBRARY_UNLOAD, 0);
    CUresult r = CU_REAL(cuLibraryUnload) ? CU_REAL(cuLibraryUnload)(m) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, U64(m), 0, 0);
    return r;
}

/* ---- functions ---- */

static void write_function(const cu_call *c, uint64_t fn, uint64_t owner, const char *name)
{
    if (!c->rec) return;
    vgt_rec_cuda_function f = {.call = c->head, .function = fn, .owner = owner,
                               .name_length = name ? (uint32_t)strlen(name) : 0, .name = name};
    cu_write(VGT_REC_CUDA_FUNCTION, &f);
}

SHIM_EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MODULE_GET_FUNCTION, 0);
    CUresult r = CU_REAL(cuModuleGetFunction) ? CU_REAL(cuModuleGetFunction)(f, m, name) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    uint64_t fn = r == CUDA_SUCCESS && f ? U64(*f) : 0;
    if (c.rec) cu_owner_set(fn, U64(m), 0, name, CU_OWNER_FUNCTION);
    write_function(&c, fn, U64(m), name);
    return r;
}

SHIM_EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_LIBRARY_GET_KERNEL, 0);
    CUresult r = CU_REAL(cuLibraryGetKernel) ? CU_REAL(cuLibraryGetKernel)(k, lib, name) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    uint64_t kh = r == CUDA_SUCCESS && k ? U64(*k) : 0;
    if (c.rec) cu_owner_set(kh, U64(lib), 0, name, CU_OWNER_KERNEL);
    write_function(&c, kh, U64(lib), name);
    return r;
}

/* Module globals (__constant__ and __device__ variables; cudaMemcpyToSymbol finds its destination here):
 * recorded as CUDA_FUNCTION records of their own api, the global's device address as the function, so that
 * a replay that loads the module again can send copies to the captured address to the global of its own
 * load. The owner's image is written first: the copies come before any launch needs it. */
static void write_global(const cu_call *c, CUresult r, const CUdeviceptr *dptr, uint64_t owner, const char *name)
{
    if (!c->rec) return;
    cu_image_for_function(owner);
    write_function(c, r == CUDA_SUCCESS && dptr ? (uint64_t)*dptr : 0, owner, name);
}

SHIM_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule m, const char *name)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MODULE_GET_GLOBAL, 0);
    CUresult r = CU_REAL(cuModuleGetGlobal_v2) ? CU_REAL(cuModuleGetGlobal_v2)(dptr, bytes, m, name) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_global(&c, r, dptr, U64(m), name);
    return r;
}

SHIM_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary lib, const char *name)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_LIBRARY_GET_GLOBAL, 0);
    CUresult r = CU_REAL(cuLibraryGetGlobal) ? CU_REAL(cuLibraryGetGlobal)(dptr, bytes, lib, name) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_global(&c, r, dptr, U64(lib), name);
    return r;
}

SHIM_EXPORT CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_KERNEL_GET_FUNCTION, 0);
    CUresult r = CU_REAL(cuKernelGetFunction) ? CU_REAL(cuKernelGetFunction)(f, k) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    if (c.rec) {
        uint64_t fn = r == CUDA_SUCCESS && f ? U64(*f) : 0;
        const char *name = cu_owner_name(U64(k));
        char copy[512] = "";
        if (name) snprintf(copy, sizeof copy, "%s", name);
        cu_owner_set(fn, U64(k), 0, copy[0] ? copy : NULL, CU_OWNER_FUNCTION);
        write_function(&c, fn, U64(k), copy);
    }
    return r;
}

/* ---- launches ---- */

int cu_pack_params(CUfunction f, void **params, void **extra, uint8_t **buf, uint32_t *len, const uint8_t **layout,
                   uint32_t *layout_len)
{
    uint32_t n = 0, bytes = 0;
    const uint8_t *l = NULL;
    int known = cu_layout(f, &l, &n, &bytes);
    *buf = NULL, *len = 0, *layout = known ? l : NULL, *layout_len = known ? 8u * n : 0;
    if (extra) {   /* CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE: the buffer is the packed parameters */
        const void *ptr = NULL;
        size_t size = 0;
        for (int i = 0; extra[i] != (void *)CU_LAUNCH_PARAM_END_AS_INT && i < 16; i += 2) {
            if (extra[i] == (void *)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT) ptr = extra[i + 1];
            else if (extra[i] == (void *)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT && extra[i + 1]) size = *(size_t *)extra[i + 1];
        }
        if (ptr && size && size <= (1u << 20) && (*buf = malloc(size))) {
            memcpy(*buf, ptr, size);
            *len = (uint32_t)size;
            return 1;
        }
    }
    if (!known || !params) return known && n == 0;
    if (!bytes) return 1;
    if (!(*buf = calloc(1, bytes))) return 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t off, size;
        memcpy(&off, l + 8u * i, 4);
        memcpy(&size, l + 8u * i + 4, 4);
        if (params[i]) memcpy(*buf + off, params[i], size);
    }
    *len = bytes;
    return 1;
}

typedef struct launch_desc {
    CUfunction f;
    unsigned int grid[3], block[3], shared;
    CUstream stream;
    void **params, **extra;
    uint32_t flags;
} launch_desc;

static void write_kernel(const cu_call *c, const launch_desc *d, uint64_t graph_exec, uint32_t node)
{
    uint8_t *buf;
    uint32_t len, llen;
    const uint8_t *layout;
    uint32_t flags = d->flags;
    if (!cu_pack_params(d->f, d->params, d->extra, &buf, &len, &layout, &llen)) flags |= VGT_CUDA_KERNEL_PARAMS_UNKNOWN;
    vgt_rec_cuda_kernel k = {
        .call = c->head, .function = U64(d->f), .stream = U64(d->stream),
        .grid = {d->grid[0], d->grid[1], d->grid[2]}, .block = {d->block[0], d->block[1], d->block[2]},
        .shared_bytes = d->shared, .params_length = len, .graph_exec = graph_exec, .node_index = node,
        .layout_length = llen, .params = buf, .layout = layout,
    };
    k.call.flags |= flags;
    cu_image_for_function(U64(d->f));   /* a graph's kernels too: their image before their first record */
    cu_write(VGT_REC_CUDA_KERNEL, &k);
    free(buf);
}

/* Before the real call: the image of a function launched for the first time goes into the trace first. */
static void before_launch(const cu_call *c, CUfunction f)
{
    if (c->rec) cu_image_for_function(U64(f));
}

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                              void **, void **);

static CUresult launch(launch_fn real, uint32_t vflags, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    if (!real) return CUDA_ERROR_NOT_FOUND;
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_LAUNCH_KERNEL, vflags);
    before_launch(&c, f);
    CUresult r = real(f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
    cu_end(&c, r);
    if (c.rec) {
        launch_desc d = {f, {gx, gy, gz}, {bx, by, bz}, shared, s, params, extra,
                         cu_capturing(U64(s)) ? VGT_CUDA_KERNEL_STREAM_CAPTURE : 0};
        write_kernel(&c, &d, 0, 0);
    }
    return r;
}

SHIM_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    return launch(CU_REAL(cuLaunchKernel), 0, f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}

SHIM_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                         unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    return launch(CU_REAL(cuLaunchKernel_ptsz), PT, f, gx, gy, gz, bx, by, bz, shared, s, params, extra);
}

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

static CUresult launch_ex(launch_ex_fn real, uint32_t vflags, const CUlaunchConfig *cfg, CUfunction f, void **params,
                          void **extra)
{
    if (!real) return CUDA_ERROR_NOT_FOUND;
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_LAUNCH_KERNEL_EX, vflags);
    before_launch(&c, f);
    CUresult r = real(cfg, f, params, extra);
    cu_end(&c, r);
    if (c.rec && cfg) {
        launch_desc d = {f, {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ}, {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ},
                         cfg->sharedMemBytes, cfg->hStream, params, extra,
                         cu_capturing(U64(cfg->hStream)) ? VGT_CUDA_KERNEL_STREAM_CAPTURE : 0};
        for (unsigned i = 0; cfg->attrs && i < cfg->numAttrs; i++) {
            if (cfg->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) {
                if (cfg->attrs[i].value.cooperative) d.flags |= VGT_CUDA_KERNEL_COOPERATIVE;
            } else {
                d.flags |= VGT_CUDA_KERNEL_ATTRS_DROPPED;
            }
        }
        write_kernel(&c, &d, 0, 0);
    }
    return r;
}

SHIM_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    return launch_ex(CU_REAL(cuLaunchKernelEx), 0, cfg, f, params, extra);
}

SHIM_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
{
    return launch_ex(CU_REAL(cuLaunchKernelEx_ptsz), PT, cfg, f, params, extra);
}

typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void **);

static CUresult coop(coop_fn real, uint32_t vflags, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                     unsigned by, unsigned bz, unsigned shared, CUstream s, void **params)
{
    if (!real) return CUDA_ERROR_NOT_FOUND;
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_LAUNCH_COOPERATIVE_KERNEL, vflags);
    before_launch(&c, f);
    CUresult r = real(f, gx, gy, gz, bx, by, bz, shared, s, params);
    cu_end(&c, r);
    if (c.rec) {
        launch_desc d = {f, {gx, gy, gz}, {bx, by, bz}, shared, s, params, NULL,
                         VGT_CUDA_KERNEL_COOPERATIVE | (cu_capturing(U64(s)) ? VGT_CUDA_KERNEL_STREAM_CAPTURE : 0)};
        write_kernel(&c, &d, 0, 0);
    }
    return r;
}

SHIM_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                               unsigned by, unsigned bz, unsigned shared, CUstream s, void **params)
{
    return coop(CU_REAL(cuLaunchCooperativeKernel), 0, f, gx, gy, gz, bx, by, bz, shared, s, params);
}

SHIM_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                    unsigned by, unsigned bz, unsigned shared, CUstream s, void **params)
{
    return coop(CU_REAL(cuLaunchCooperativeKernel_ptsz), PT, f, gx, gy, gz, bx, by, bz, shared, s, params);
}

/* ---- graphs ---- */

/* The nodes of graph in an order they may run in (Kahn's algorithm over cuGraphGetEdges; creation order
 * where the edges cannot be read). *n nodes, malloc'd. */
static CUgraphNode *graph_order(CUgraph g, size_t *n)
{
    typedef CUresult (*nodes_fn)(CUgraph, CUgraphNode *, size_t *);
    typedef CUresult (*edges_fn)(CUgraph, CUgraphNode *, CUgraphNode *, size_t *);
    typedef CUresult (*edges2_fn)(CUgraph, CUgraphNode *, CUgraphNode *, void *, size_t *);
    nodes_fn get_nodes = (nodes_fn)cu_lib_sym("cuGraphGetNodes");
    edges2_fn get_edges2 = (edges2_fn)cu_lib_sym("cuGraphGetEdges_v2");
    edges_fn get_edges = (edges_fn)cu_lib_sym("cuGraphGetEdges");
    *n = 0;
    size_t count = 0;
    if (!get_nodes || get_nodes(g, NULL, &count) != CUDA_SUCCESS || !count) return NULL;
    CUgraphNode *nodes = calloc(count, sizeof *nodes);
    if (!nodes || get_nodes(g, nodes, &count) != CUDA_SUCCESS) {
        free(nodes);
        return NULL;
    }
    size_t ne = 0;
    CUgraphNode *from = NULL, *to = NULL;
    int edges = get_edges2 ? get_edges2(g, NULL, NULL, NULL, &ne) == CUDA_SUCCESS
                           : get_edges && get_edges(g, NULL, NULL, &ne) == CUDA_SUCCESS;
    if (edges && ne) {
        from = calloc(ne, sizeof *from), to = calloc(ne, sizeof *to);
        edges = from && to && (get_edges2 ? get_edges2(g, from, to, NULL, &ne) : get_edges(g, from, to, &ne)) == CUDA_SUCCESS;
    }
    CUgraphNode *order = calloc(count, sizeof *order);
    uint32_t *indeg = calloc(count, sizeof *indeg);
    if (!order || !indeg || !edges || !ne) {
        free(order), free(indeg), free(from), free(to);
        *n = count;
        return nodes;   /* no edges (or unreadable): creation order */
    }
    for (size_t e = 0; e < ne; e++)
        for (size_t i = 0; i < count; i++)
            if (nodes[i] == to[e]) indeg[i]++;
    size_t done = 0;
    while (done < count) {
        size_t pick = count;
        for (size_t i = 0; i < count && pick == count; i++)
            if (nodes[i] && indeg[i] == 0) pick = i;
        if (pick == count) break;   /* a cycle: cannot happen in a graph the driver instantiated */
        order[done++] = nodes[pick];
        for (size_t e = 0; e < ne; e++)
            if (from[e] == nodes[pick])
                for (size_t i = 0; i < count; i++)
                    if (nodes[i] == to[e] && indeg[i]) indeg[i]--;
        nodes[pick] = NULL;
    }
    free(nodes), free(indeg), free(from), free(to);
    *n = done;
    return order;
}

/* A memcpy node's op from its memory types (unified: by the allocations we saw). */
static uint32_t copy_op(int srctype, uint64_t src, int dsttype, uint64_t dst)
{
    int sdev = srctype == CU_MEMORYTYPE_DEVICE || (srctype == CU_MEMORYTYPE_UNIFIED && cu_is_device(src));
    int ddev = dsttype == CU_MEMORYTYPE_DEVICE || (dsttype == CU_MEMORYTYPE_UNIFIED && cu_is_device(dst));
    return sdev ? (ddev ? VGT_CUDA_OP_DTOD : VGT_CUDA_OP_DTOH) : (ddev ? VGT_CUDA_OP_HTOD : VGT_CUDA_OP_HTOH);
}

static void write_graph_nodes(const cu_call *c, CUgraphExec exec, CUgraphNode *nodes, size_t n)
{
    typedef CUresult (*type_fn)(CUgraphNode, int *);
    typedef CUresult (*kparams_fn)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2 *);
    typedef CUresult (*mparams_fn)(CUgraphNode, CUDA_MEMCPY3D *);
    typedef CUresult (*sparams_fn)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS *);
    type_fn node_type = (type_fn)cu_lib_sym("cuGraphNodeGetType");
    kparams_fn kparams = (kparams_fn)cu_lib_sym("cuGraphKernelNodeGetParams_v2");
    mparams_fn mparams = (mparams_fn)cu_lib_sym("cuGraphMemcpyNodeGetParams");
    sparams_fn sparams = (sparams_fn)cu_lib_sym("cuGraphMemsetNodeGetParams");
    for (size_t i = 0; i < n; i++) {
        int type = -1;
        if (!node_type || node_type(nodes[i], &type) != CUDA_SUCCESS) continue;
        if (type == CU_GRAPH_NODE_TYPE_KERNEL && kparams) {
            CUDA_KERNEL_NODE_PARAMS_v2 p;
            memset(&p, 0, sizeof p);
            if (kparams(nodes[i], &p) != CUDA_SUCCESS) continue;
            /* a launch of a CUkernel captured from a stream: the driver's own CUfunction for it */
            cu_node_function(c, U64(p.func), U64(p.kern));
            launch_desc d = {p.func ? p.func : (CUfunction)(void *)p.kern, {p.gridDimX, p.gridDimY, p.gridDimZ},
                             {p.blockDimX, p.blockDimY, p.blockDimZ}, p.sharedMemBytes, NULL, p.kernelParams, p.extra,
                             VGT_CUDA_KERNEL_GRAPH_NODE};
            write_kernel(c, &d, U64(exec), (uint32_t)i);
        } else if (type == CU_GRAPH_NODE_TYPE_MEMCPY && mparams) {
            CUDA_MEMCPY3D p;
            memset(&p, 0, sizeof p);
            if (mparams(nodes[i], &p) != CUDA_SUCCESS) continue;
            uint64_t src = (p.srcMemoryType == CU_MEMORYTYPE_HOST ? U64(p.srcHost) : p.srcDevice) + p.srcXInBytes;
            uint64_t dst = (p.dstMemoryType == CU_MEMORYTYPE_HOST ? U64(p.dstHost) : p.dstDevice) + p.dstXInBytes;
            uint64_t h = p.Height ? p.Height : 1, dpt = p.Depth ? p.Depth : 1;
            uint64_t size = p.WidthInBytes * h * dpt;
            uint32_t op = copy_op(p.srcMemoryType, src, p.dstMemoryType, dst);
            vgt_rec_cuda_memory m = {.call = c->head, .dst = dst, .src = src, .size = size, .graph_exec = U64(exec),
                                     .op = op, .node_index = (uint32_t)i};
            m.call.flags |= VGT_CUDA_MEM_GRAPH_NODE;
            if ((h > 1 || dpt > 1) && shim_first_time(0xC0DA200000000000ull))
                shim_problem(1, VGT_E_UNSUPPORTED, "graph memcpy node of %llux%llux%llu bytes recorded as one linear copy",
                             (unsigned long long)p.WidthInBytes, (unsigned long long)h, (unsigned long long)dpt);
            cu_write(VGT_REC_CUDA_MEMORY, &m);
            cu_graph_copy_node(U64(exec), (uint32_t)i, op, dst, src, size);
        } else if (type == CU_GRAPH_NODE_TYPE_MEMSET && sparams) {
            CUDA_MEMSET_NODE_PARAMS p;
            memset(&p, 0, sizeof p);
            if (sparams(nodes[i], &p) != CUDA_SUCCESS) continue;
            uint32_t op = p.elementSize == 1 ? VGT_CUDA_OP_MEMSET8 : p.elementSize == 2 ? VGT_CUDA_OP_MEMSET16
                                                                                        : VGT_CUDA_OP_MEMSET32;
            vgt_rec_cuda_memory m = {.call = c->head, .dst = p.dst, .size = (uint64_t)p.width * p.elementSize *
                                     (p.height ? p.height : 1), .graph_exec = U64(exec), .op = op, .value = p.value,
                                     .node_index = (uint32_t)i};
            m.call.flags |= VGT_CUDA_MEM_GRAPH_NODE;
            cu_write(VGT_REC_CUDA_MEMORY, &m);
        } else if (type != CU_GRAPH_NODE_TYPE_EMPTY && shim_first_time(0xC0DA300000000000ull ^ (uint64_t)type)) {
            shim_problem(1, VGT_E_UNSUPPORTED, "graph node of type %d not recorded (a replay runs the graph without it)",
                         type);
        }
    }
}

static void after_instantiate(cu_call *c, CUresult r, CUgraphExec *e, CUgraph g)
{
    if (!c->rec) return;
    CUgraphExec exec = r == CUDA_SUCCESS && e ? *e : NULL;
    size_t n = 0;
    CUgraphNode *nodes = exec ? graph_order(g, &n) : NULL;
    write_call(c, U64(exec), U64(g), n);
    if (nodes) write_graph_nodes(c, exec, nodes, n);
    free(nodes);
}

SHIM_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_GRAPH_INSTANTIATE, 0);
    CUresult r = CU_REAL(cuGraphInstantiateWithFlags) ? CU_REAL(cuGraphInstantiateWithFlags)(e, g, flags)
                                                       : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    after_instantiate(&c, r, e, g);
    return r;
}

typedef CUresult (*inst_params_fn)(CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *);

static CUresult inst_params(inst_params_fn real, uint32_t vflags, CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    if (!real) return CUDA_ERROR_NOT_FOUND;
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_GRAPH_INSTANTIATE, vflags);
    CUresult r = real(e, g, p);
    cu_end(&c, r);
    after_instantiate(&c, r, e, g);
    return r;
}

SHIM_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    return inst_params(CU_REAL(cuGraphInstantiateWithParams), 0, e, g, p);
}

SHIM_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *e, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    return inst_params(CU_REAL(cuGraphInstantiateWithParams_ptsz), PT, e, g, p);
}

typedef CUresult (*glaunch_fn)(CUgraphExec, CUstream);

static CUresult graph_launch(glaunch_fn real, uint32_t vflags, CUgraphExec e, CUstream s)
{
    if (!real) return CUDA_ERROR_NOT_FOUND;
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_GRAPH_LAUNCH, vflags);
    if (c.rec) cu_graph_before_launch(U64(e), U64(s), &c);
    CUresult r = real(e, s);
    cu_end(&c, r);
    write_call(&c, U64(e), U64(s), 0);
    return r;
}

SHIM_EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { return graph_launch(CU_REAL(cuGraphLaunch), 0, e, s); }
SHIM_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec e, CUstream s)
{
    return graph_launch(CU_REAL(cuGraphLaunch_ptsz), PT, e, s);
}

SHIM_EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_GRAPH_EXEC_DESTROY, 0);
    CUresult r = CU_REAL(cuGraphExecDestroy) ? CU_REAL(cuGraphExecDestroy)(e) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    if (c.rec) cu_graph_forget(U64(e));
    write_call(&c, U64(e), 0, 0);
    return r;
}
