/* fake_libcuda.c: a libcuda.so.1 for tests on machines without a GPU. It implements the driver API
 * entry points the capture wraps and the cuda backend calls, on host memory: a device pointer is a host
 * address, a kernel is a C function chosen by the kernel's name, every call is synchronous.
 *
 * Kernels (name: parameters):
 *   vadd:  const float *a, const float *b, float *c, int n          c[i] = a[i] + b[i]
 *   scale: float *x, float k, int n                                  x[i] *= k
 *   iota:  unsigned *x, unsigned base, int n                         x[i] = base + i
 *   addg:  unsigned *x, int n                                        x[i] += bias (the newest module's global)
 * A module image is any bytes (PTX text in the tests); its functions are the kernels above, and its one global,
 * "bias" (4 bytes, cuModuleGetGlobal / cuLibraryGetGlobal), lives on a page of its own: at FAKECUDA_GLOBAL_AT
 * when set (a hint), else where mmap puts it, so that a replay's load puts it elsewhere than the capture's.
 * Copies check that their device side is mapped (CUDA_ERROR_INVALID_VALUE otherwise, as the driver answers
 * an address it does not know) rather than crash.
 *
 * The virtual memory API reserves address ranges with mmap (MAP_FIXED_NOREPLACE at the requested address;
 * FAKECUDA_NO_FIXED=1 ignores the request, as a driver that cannot reserve there) and maps by making the
 * pages readable and writable. cuInit opens FAKECUDA_CTL when set (the capture starts at the program's
 * first open of a GPU node; the tests name a plain file as that node). FAKECUDA_VERBOSE=1 prints each call.
 * cuGetProcAddress answers from the table at the end, as the real driver answers with its exported
 * functions, by version: cuStreamBeginCapture is its first version below 10010, cuCtxSynchronize is
 * cuCtxSynchronize_v2 from 13000.
 *
 * As the real driver, a CUkernel (cuLibraryGetKernel) is a handle of its own, and the context's CUfunction
 * for it (cuKernelGetFunction) a third one, different from what cuModuleGetFunction answers. Streams can be
 * captured into graphs (cuStreamBeginCapture*, cuStreamEndCapture): launches and asynchronous copies into
 * such a stream become nodes instead of running, and a launch of a CUkernel becomes a node of the
 * context's CUfunction for it, which is what cuGraphKernelNodeGetParams answers (kern NULL): a function
 * the program never looked up, as with the CUDA runtime's stream-captured graphs. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vgt/cuda_abi.h"

#define API __attribute__((visibility("default")))
#define U(p) ((uintptr_t)(p))

static void trace(const char *name)
{
    if (getenv("FAKECUDA_VERBOSE")) fprintf(stderr, "fakecuda: %s\n", name);
}

typedef struct fmod { int magic; char *image; uint32_t *bias; } fmod;
typedef struct ffunc { int kind; const char *name; } ffunc;   /* kind 1: vadd, 2: scale, 3: iota, 4: addg */

#define NK 4
static const struct { const char *name; int kind; uint32_t n, off[4], size[4]; } kernels[NK] = {
    {"vadd", 1, 4, {0, 8, 16, 24}, {8, 8, 8, 4}},
    {"scale", 2, 3, {0, 8, 12}, {8, 4, 4}},
    {"iota", 3, 3, {0, 8, 12}, {8, 4, 4}},
    {"addg", 4, 2, {0, 8}, {8, 4}},
};
static ffunc funcs[NK] = {{1, "vadd"}, {2, "scale"}, {3, "iota"}, {4, "addg"}};
static ffunc ctx_funcs[NK] = {{1, "vadd"}, {2, "scale"}, {3, "iota"}, {4, "addg"}};   /* cuKernelGetFunction's */
static uint32_t *newest_bias;   /* addg's global: the newest module's */

/* Whether [p, p+n) is mapped (msync fails with ENOMEM on an unmapped page). */
static int mapped(uintptr_t p, size_t n)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), lo = p / pg * pg, hi = (p + (n ? n : 1) + pg - 1) / pg * pg;
    return p && msync((void *)lo, hi - lo, MS_ASYNC) == 0;
}

static ffunc *find_kernel(const char *name)
{
    for (int i = 0; i < NK; i++)
        if (name && !strcmp(kernels[i].name, name)) return &funcs[i];
    return NULL;
}

/* The kernel of a CUfunction (a module's, or the context's for a CUkernel); -1 for anything else. */
static int kernel_index(const void *f)
{
    for (int i = 0; i < NK; i++)
        if (f == &funcs[i] || f == &ctx_funcs[i]) return i;
    return -1;
}

/* The kernel of a CUkernel (its entry + 1); -1 for anything else. */
static int kern_index(const void *k)
{
    for (int i = 0; i < NK; i++)
        if ((const char *)k == (const char *)&funcs[i] + 1) return i;
    return -1;
}

API CUresult cuInit(unsigned int flags)
{
    (void)flags;
    trace("cuInit");
    const char *ctl = getenv("FAKECUDA_CTL");
    if (ctl && *ctl) {
        int fd = open(ctl, O_RDWR | O_CLOEXEC);
        if (fd < 0) return CUDA_ERROR_NOT_INITIALIZED;
    }
    return CUDA_SUCCESS;
}
API CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
API CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return ordinal == 0 ? CUDA_SUCCESS : 101; }
API CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    snprintf(name, (size_t)len, "fake CUDA device");
    return CUDA_SUCCESS;
}
static int ctx_dummy;
API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)(void *)&ctx_dummy; return CUDA_SUCCESS; }
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; return CUDA_SUCCESS; }
API CUresult cuCtxSetCurrent(CUcontext c) { (void)c; return CUDA_SUCCESS; }
API CUresult cuCtxSynchronize(void) { trace("cuCtxSynchronize"); return CUDA_SUCCESS; }
API CUresult cuCtxSynchronize_v2(CUcontext c) { (void)c; trace("cuCtxSynchronize_v2"); return CUDA_SUCCESS; }

/* ---- modules, libraries, functions ---- */
API CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    trace("cuModuleLoadData");
    if (!m || !image) return CUDA_ERROR_INVALID_VALUE;
    fmod *f = calloc(1, sizeof *f);
    f->magic = 0x4d4f44;
    const char *at = getenv("FAKECUDA_GLOBAL_AT");
    static unsigned loads;
    void *hint = at && *at ? (void *)(uintptr_t)(strtoull(at, NULL, 0) + 4096u * loads++) : NULL;
    void *g = mmap(hint, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    if (g == MAP_FAILED && hint) g = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g == MAP_FAILED) return 2;
    f->bias = newest_bias = g;
    *m = (CUmodule)(void *)f;
    return CUDA_SUCCESS;
}
API CUresult cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
    (void)n, (void)o, (void)v;
    return cuModuleLoadData(m, image);
}
API CUresult cuModuleLoadFatBinary(CUmodule *m, const void *image) { return cuModuleLoadData(m, image); }
API CUresult cuModuleLoad(CUmodule *m, const char *path) { return cuModuleLoadData(m, path); }
API CUresult cuModuleUnload(CUmodule m) { free(m); return CUDA_SUCCESS; }
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    trace("cuModuleGetFunction");
    ffunc *k = find_kernel(name);
    if (!m || !k) return CUDA_ERROR_NOT_FOUND;
    *f = (CUfunction)(void *)k;
    return CUDA_SUCCESS;
}
API CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *n, CUmodule m, const char *name)
{
    trace("cuModuleGetGlobal_v2");
    fmod *f = (fmod *)(void *)m;
    if (!f || !name || strcmp(name, "bias")) return CUDA_ERROR_NOT_FOUND;
    if (p) *p = U(f->bias);
    if (n) *n = 4;
    return CUDA_SUCCESS;
}
API CUresult cuLibraryGetGlobal(CUdeviceptr *p, size_t *n, CUlibrary l, const char *name)
{
    trace("cuLibraryGetGlobal");
    return cuModuleGetGlobal_v2(p, n, (CUmodule)(void *)l, name);
}
API CUresult cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *jo, void **jv, unsigned jn,
                               CUlibraryOption *lo, void **lv, unsigned ln)
{
    (void)jo, (void)jv, (void)jn, (void)lo, (void)lv, (void)ln;
    trace("cuLibraryLoadData");
    return cuModuleLoadData((CUmodule *)(void *)l, code);
}
API CUresult cuLibraryUnload(CUlibrary l) { free(l); return CUDA_SUCCESS; }
/* A CUkernel is the kernel's entry + 1: a different handle, which cuKernelGetFunction maps back. */
API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
    trace("cuLibraryGetKernel");
    ffunc *f = find_kernel(name);
    if (!l || !f) return CUDA_ERROR_NOT_FOUND;
    *k = (CUkernel)(void *)((char *)f + 1);
    return CUDA_SUCCESS;
}
API CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
    trace("cuKernelGetFunction");
    int i = kern_index(k);
    if (i < 0) return CUDA_ERROR_INVALID_VALUE;
    *f = (CUfunction)(void *)&ctx_funcs[i];
    return CUDA_SUCCESS;
}
API CUresult cuFuncGetName(const char **name, CUfunction f)
{
    int i = kernel_index(f);
    if (i < 0) return 400;
    *name = kernels[i].name;
    return CUDA_SUCCESS;
}

static int resolve(const void *f)
{
    int i = kernel_index(f);
    return i >= 0 ? i : kern_index(f);   /* a CUkernel used as a CUfunction */
}

API CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
    int k = kernel_index(f);
    if (k < 0) return 400;   /* CUDA_ERROR_INVALID_HANDLE: not a CUfunction */
    if (i >= kernels[k].n) return CUDA_ERROR_INVALID_VALUE;
    *off = kernels[k].off[i], *size = kernels[k].size[i];
    return CUDA_SUCCESS;
}
API CUresult cuKernelGetParamInfo(CUkernel kn, size_t i, size_t *off, size_t *size)
{
    int k = kern_index(kn);
    if (k < 0) return 400;
    if (i >= kernels[k].n) return CUDA_ERROR_INVALID_VALUE;
    *off = kernels[k].off[i], *size = kernels[k].size[i];
    return CUDA_SUCCESS;
}

/* ---- graphs and streams being captured into them (the entry points are further down) ---- */
typedef struct fnode { int type; CUDA_KERNEL_NODE_PARAMS_v2 k; uint8_t params[64]; void *pp[4]; CUDA_MEMCPY3D m; } fnode;
typedef struct fgraph { fnode nodes[16]; int n; } fgraph;
API CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
                                     const CUDA_KERNEL_NODE_PARAMS_v2 *p);
API CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
                                  const CUDA_MEMCPY3D *p, CUcontext c);
static int streams[64], events[64], nstreams, nevents;
static fgraph *capturing[64];   /* per stream: the graph it is being captured into */

static fgraph *capture_of(CUstream s)
{
    int *p = (int *)(void *)s;
    return p >= streams && p < streams + 64 ? capturing[p - streams] : NULL;
}

/* A launch into a stream being captured: a kernel node. A CUkernel's node holds the context's CUfunction
 * for it, as the driver makes it (the program never sees that handle). */
static CUresult capture_launch(fgraph *g, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned sh, void **params)
{
    int kn = kern_index(f);
    CUDA_KERNEL_NODE_PARAMS_v2 p = {0};
    p.func = kn >= 0 ? (CUfunction)(void *)&ctx_funcs[kn] : f;
    p.gridDimX = gx, p.gridDimY = gy, p.gridDimZ = gz, p.blockDimX = bx, p.blockDimY = by, p.blockDimZ = bz;
    p.sharedMemBytes = sh, p.kernelParams = params;
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    CUgraphNode node;
    return cuGraphAddKernelNode_v2(&node, (CUgraph)(void *)g, NULL, 0, &p);
}

/* An asynchronous copy into a stream being captured: a memcpy node. */
static CUresult capture_copy(fgraph *g, int dst_type, uintptr_t dst, int src_type, uintptr_t src, size_t n)
{
    CUDA_MEMCPY3D m = {0};
    m.dstMemoryType = dst_type, m.srcMemoryType = src_type;
    if (dst_type == CU_MEMORYTYPE_HOST) m.dstHost = (void *)dst; else m.dstDevice = dst;
    if (src_type == CU_MEMORYTYPE_HOST) m.srcHost = (const void *)src; else m.srcDevice = src;
    m.WidthInBytes = n, m.Height = 1, m.Depth = 1;
    CUgraphNode node;
    return cuGraphAddMemcpyNode(&node, (CUgraph)(void *)g, NULL, 0, &m, NULL);
}

/* Run kernel k over grid x block threads with the parameter buffer p (the kernel's layout). */
static void run(int k, unsigned threads, const uint8_t *p)
{
    uint64_t a, b, c;
    int32_t n;
    float s;
    uint32_t base;
    if (k == 0) {
        memcpy(&a, p, 8), memcpy(&b, p + 8, 8), memcpy(&c, p + 16, 8), memcpy(&n, p + 24, 4);
        for (int i = 0; i < n && (unsigned)i < threads; i++)
            ((float *)(uintptr_t)c)[i] = ((const float *)(uintptr_t)a)[i] + ((const float *)(uintptr_t)b)[i];
    } else if (k == 1) {
        memcpy(&a, p, 8), memcpy(&s, p + 8, 4), memcpy(&n, p + 12, 4);
        for (int i = 0; i < n && (unsigned)i < threads; i++) ((float *)(uintptr_t)a)[i] *= s;
    } else if (k == 2) {
        memcpy(&a, p, 8), memcpy(&base, p + 8, 4), memcpy(&n, p + 12, 4);
        for (int i = 0; i < n && (unsigned)i < threads; i++) ((uint32_t *)(uintptr_t)a)[i] = base + (uint32_t)i;
    } else if (k == 3) {
        memcpy(&a, p, 8), memcpy(&n, p + 8, 4);
        for (int i = 0; i < n && (unsigned)i < threads && newest_bias; i++) ((uint32_t *)(uintptr_t)a)[i] += *newest_bias;
    }
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned sh, CUstream s, void **params, void **extra)
{
    int k = resolve(f);
    if (k < 0) return 400;
    fgraph *g = capture_of(s);
    if (g) return capture_launch(g, f, gx, gy, gz, bx, by, bz, sh, params);
    uint8_t buf[64] = {0};
    if (params) {
        for (uint32_t i = 0; i < kernels[k].n; i++) memcpy(buf + kernels[k].off[i], params[i], kernels[k].size[i]);
    } else if (extra) {
        /* the buffer holds what BUFFER_SIZE says, no more: a launch of 16 bytes of parameters must not read 32 */
        const void *from = NULL;
        size_t n = 0;
        for (int i = 0; extra[i] != (void *)CU_LAUNCH_PARAM_END_AS_INT; i += 2) {
            if (extra[i] == (void *)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT) from = extra[i + 1];
            if (extra[i] == (void *)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT) n = *(const size_t *)extra[i + 1];
        }
        if (!from || n > sizeof buf) return CUDA_ERROR_INVALID_VALUE;
        memcpy(buf, from, n);
    } else {
        return CUDA_ERROR_INVALID_VALUE;
    }
    run(k, gx * gy * gz * bx * by * bz, buf);
    return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned sh, CUstream s, void **params, void **extra)
{
    trace("cuLaunchKernel");
    return launch(f, gx, gy, gz, bx, by, bz, sh, s, params, extra);
}
API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz, unsigned sh, CUstream s, void **params, void **extra)
{
    return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, sh, s, params, extra);
}
API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    trace("cuLaunchKernelEx");
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ, c->sharedMemBytes,
                  c->hStream, params, extra);
}
API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                       unsigned bz, unsigned sh, CUstream s, void **params)
{
    return launch(f, gx, gy, gz, bx, by, bz, sh, s, params, NULL);
}

/* ---- memory: host memory ---- */
API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    trace("cuMemAlloc_v2");
    void *m = aligned_alloc(256, (n + 255) & ~(size_t)255);
    if (!m) return 2;
    memset(m, 0xEE, n);   /* fresh device memory is garbage, not zero */
    *p = U(m);
    return CUDA_SUCCESS;
}
API CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
API CUresult cuMemAllocHost_v2(void **p, size_t n) { *p = malloc(n); return *p ? CUDA_SUCCESS : 2; }
API CUresult cuMemFreeHost(void *p) { free(p); return CUDA_SUCCESS; }
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
    if (!mapped(d, n)) return CUDA_ERROR_INVALID_VALUE;
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
    if (!mapped(s, n)) return CUDA_ERROR_INVALID_VALUE;
    memcpy(d, (void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
API CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
    memmove((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
API CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return cuMemcpyDtoD_v2(d, s, n); }
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    fgraph *g = capture_of(st);
    if (g) return capture_copy(g, CU_MEMORYTYPE_DEVICE, (uintptr_t)d, CU_MEMORYTYPE_HOST, U(s), n);
    return cuMemcpyHtoD_v2(d, s, n);
}
API CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    fgraph *g = capture_of(st);
    if (g) return capture_copy(g, CU_MEMORYTYPE_HOST, U(d), CU_MEMORYTYPE_DEVICE, (uintptr_t)s, n);
    return cuMemcpyDtoH_v2(d, s, n);
}
API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpyDtoD_v2(d, s, n); }
API CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { (void)st; return cuMemcpyDtoD_v2(d, s, n); }
API CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { memset((void *)(uintptr_t)d, v, n); return CUDA_SUCCESS; }
API CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n)
{
    for (size_t i = 0; i < n; i++) ((uint16_t *)(uintptr_t)d)[i] = v;
    return CUDA_SUCCESS;
}
API CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
    for (size_t i = 0; i < n; i++) ((uint32_t *)(uintptr_t)d)[i] = v;
    return CUDA_SUCCESS;
}
API CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { (void)s; return cuMemsetD8_v2(d, v, n); }
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { (void)s; return cuMemsetD32_v2(d, v, n); }

/* ---- the virtual memory API, on host pages ---- */
typedef struct fhandle { size_t size; } fhandle;
API CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *p, int o)
{
    (void)p, (void)o;
    *g = 2u << 20;
    return CUDA_SUCCESS;
}
API CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long f)
{
    (void)align, (void)f;
    trace("cuMemAddressReserve");
    int fixed = addr && !getenv("FAKECUDA_NO_FIXED");
    void *p = mmap(fixed ? (void *)(uintptr_t)addr : NULL, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (fixed ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    if (p == MAP_FAILED) {
        if (!fixed) return 2;
        p = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);   /* a hint only */
        if (p == MAP_FAILED) return 2;
    }
    *ptr = U(p);
    return CUDA_SUCCESS;
}
API CUresult cuMemAddressFree(CUdeviceptr p, size_t size) { munmap((void *)(uintptr_t)p, size); return CUDA_SUCCESS; }
API CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *p, unsigned long long f)
{
    (void)p, (void)f;
    fhandle *m = malloc(sizeof *m);
    m->size = size;
    *h = U(m);
    return CUDA_SUCCESS;
}
API CUresult cuMemRelease(CUmemGenericAllocationHandle h) { free((void *)(uintptr_t)h); return CUDA_SUCCESS; }
API CUresult cuMemMap(CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h, unsigned long long f)
{
    (void)off, (void)h, (void)f;
    return mprotect((void *)(uintptr_t)p, size, PROT_READ | PROT_WRITE) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
    munmap((void *)(uintptr_t)p, size);
    return CUDA_SUCCESS;
}
API CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *d, size_t n)
{
    (void)p, (void)size, (void)d, (void)n;
    return CUDA_SUCCESS;
}

/* ---- streams, events ---- */
API CUresult cuStreamCreate(CUstream *s, unsigned f) { (void)f; *s = (CUstream)(void *)&streams[nstreams++ % 64]; return CUDA_SUCCESS; }
API CUresult cuStreamDestroy_v2(CUstream s) { (void)s; return CUDA_SUCCESS; }
API CUresult cuStreamSynchronize(CUstream s) { (void)s; trace("cuStreamSynchronize"); return CUDA_SUCCESS; }
API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f) { (void)s, (void)e, (void)f; return CUDA_SUCCESS; }
API CUresult cuEventCreate(CUevent *e, unsigned f) { (void)f; *e = (CUevent)(void *)&events[nevents++ % 64]; return CUDA_SUCCESS; }
API CUresult cuEventRecord(CUevent e, CUstream s) { (void)e, (void)s; return CUDA_SUCCESS; }
API CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
API CUresult cuEventDestroy_v2(CUevent e) { (void)e; return CUDA_SUCCESS; }

/* ---- stream capture ---- */
API CUresult cuGraphCreate(CUgraph *g, unsigned f);
API CUresult cuStreamBeginCapture_v2(CUstream s, int mode)
{
    (void)mode;
    trace("cuStreamBeginCapture_v2");
    int *p = (int *)(void *)s;
    if (p < streams || p >= streams + 64 || capturing[p - streams]) return CUDA_ERROR_INVALID_VALUE;
    CUgraph g;
    cuGraphCreate(&g, 0);
    capturing[p - streams] = (fgraph *)(void *)g;
    return CUDA_SUCCESS;
}
API CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, int mode) { return cuStreamBeginCapture_v2(s, mode); }
API CUresult cuStreamBeginCapture(CUstream s) { return cuStreamBeginCapture_v2(s, 0); }
API CUresult cuStreamBeginCapture_ptsz(CUstream s) { return cuStreamBeginCapture_v2(s, 0); }
API CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    trace("cuStreamEndCapture");
    int *p = (int *)(void *)s;
    if (p < streams || p >= streams + 64 || !capturing[p - streams]) return CUDA_ERROR_INVALID_VALUE;
    *g = (CUgraph)(void *)capturing[p - streams];
    capturing[p - streams] = NULL;
    return CUDA_SUCCESS;
}

/* ---- graphs: nodes kept in creation order, no edges ---- */
API CUresult cuGraphCreate(CUgraph *g, unsigned f) { (void)f; *g = (CUgraph)calloc(1, sizeof(fgraph)); return CUDA_SUCCESS; }
API CUresult cuGraphDestroy(CUgraph g) { free(g); return CUDA_SUCCESS; }
API CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
                                     const CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    (void)deps, (void)nd;
    fgraph *fg = (fgraph *)g;
    fnode *n = &fg->nodes[fg->n];
    n->type = CU_GRAPH_NODE_TYPE_KERNEL;
    n->k = *p;
    int k = resolve(p->func);
    if (k < 0) return 400;
    for (uint32_t i = 0; i < kernels[k].n; i++) memcpy(n->params + kernels[k].off[i], p->kernelParams[i], kernels[k].size[i]);
    *out = (CUgraphNode)(void *)n;
    fg->n++;
    return CUDA_SUCCESS;
}
API CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t nd,
                                  const CUDA_MEMCPY3D *p, CUcontext c)
{
    (void)deps, (void)nd, (void)c;
    fgraph *fg = (fgraph *)g;
    fnode *n = &fg->nodes[fg->n];
    n->type = CU_GRAPH_NODE_TYPE_MEMCPY;
    n->m = *p;
    *out = (CUgraphNode)(void *)n;
    fg->n++;
    return CUDA_SUCCESS;
}
API CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
    fgraph *fg = (fgraph *)g;
    if (nodes)
        for (int i = 0; i < fg->n && (size_t)i < *n; i++) nodes[i] = (CUgraphNode)(void *)&fg->nodes[i];
    *n = (size_t)fg->n;
    return CUDA_SUCCESS;
}
API CUresult cuGraphGetEdges_v2(CUgraph g, CUgraphNode *from, CUgraphNode *to, void *data, size_t *n)
{
    (void)g, (void)from, (void)to, (void)data;
    *n = 0;
    return CUDA_SUCCESS;
}
API CUresult cuGraphNodeGetType(CUgraphNode n, int *t) { *t = ((fnode *)n)->type; return CUDA_SUCCESS; }
API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode n, CUDA_KERNEL_NODE_PARAMS_v2 *p)
{
    fnode *fn = (fnode *)n;
    *p = fn->k;
    int k = resolve(fn->k.func);
    /* the driver hands out pointers to its own copies of the parameters */
    for (uint32_t i = 0; i < kernels[k].n; i++) fn->pp[i] = fn->params + kernels[k].off[i];
    p->kernelParams = fn->pp;
    return CUDA_SUCCESS;
}
API CUresult cuGraphMemcpyNodeGetParams(CUgraphNode n, CUDA_MEMCPY3D *p) { *p = ((fnode *)n)->m; return CUDA_SUCCESS; }
API CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    (void)f;
    fgraph *copy = malloc(sizeof *copy);
    *copy = *(fgraph *)g;
    *e = (CUgraphExec)(void *)copy;
    return CUDA_SUCCESS;
}
API CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
    (void)s;
    trace("cuGraphLaunch");
    fgraph *g = (fgraph *)e;
    for (int i = 0; i < g->n; i++) {
        fnode *n = &g->nodes[i];
        if (n->type == CU_GRAPH_NODE_TYPE_KERNEL) {
            int k = resolve(n->k.func);
            run(k, n->k.gridDimX * n->k.blockDimX, n->params);
        } else {
            const void *src = n->m.srcMemoryType == CU_MEMORYTYPE_HOST ? n->m.srcHost : (const void *)(uintptr_t)n->m.srcDevice;
            void *dst = n->m.dstMemoryType == CU_MEMORYTYPE_HOST ? n->m.dstHost : (void *)(uintptr_t)n->m.dstDevice;
            memcpy((char *)dst + n->m.dstXInBytes, (const char *)src + n->m.srcXInBytes, n->m.WidthInBytes);
        }
    }
    return CUDA_SUCCESS;
}
API CUresult cuGraphExecDestroy(CUgraphExec e) { free(e); return CUDA_SUCCESS; }

/* ---- cuGetProcAddress: the exported functions, by name and version ---- */
#define E(n) {#n, (void *)n}
static const struct { const char *name; void *fn; } table[] = {
    E(cuInit), E(cuDriverGetVersion), E(cuDeviceGet), E(cuModuleLoadData), E(cuModuleLoadDataEx),
    E(cuModuleGetFunction), E(cuModuleGetGlobal_v2), E(cuLibraryGetGlobal), E(cuLibraryLoadData), E(cuLibraryGetKernel), E(cuKernelGetFunction), E(cuFuncGetName),
    E(cuLaunchKernel), E(cuLaunchKernel_ptsz), E(cuLaunchKernelEx), E(cuMemAlloc_v2), E(cuMemFree_v2),
    E(cuMemcpyHtoD_v2), E(cuMemcpyDtoH_v2), E(cuMemcpyDtoHAsync_v2), E(cuMemcpyHtoDAsync_v2), E(cuMemsetD32_v2),
    E(cuStreamCreate), E(cuStreamSynchronize), E(cuCtxSynchronize), E(cuCtxSynchronize_v2), E(cuGraphCreate),
    E(cuGraphAddKernelNode_v2), E(cuGraphAddMemcpyNode), E(cuGraphInstantiateWithFlags), E(cuGraphLaunch),
    E(cuGraphExecDestroy), E(cuFuncGetParamInfo), E(cuStreamBeginCapture), E(cuStreamBeginCapture_ptsz),
    E(cuStreamBeginCapture_v2), E(cuStreamBeginCapture_v2_ptsz), E(cuStreamEndCapture),
};
/* Names whose versions are not the general rule below: the name from version since on (older: the base). */
static const struct { const char *base; int since; const char *name; } versioned[] = {
    {"cuGraphInstantiate", 12000, "cuGraphInstantiateWithFlags"},
    {"cuStreamBeginCapture", 10010, "cuStreamBeginCapture_v2"},
    {"cuCtxSynchronize", 13000, "cuCtxSynchronize_v2"},
};

static void *find(const char *name)
{
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        if (!strcmp(table[k].name, name)) return table[k].fn;
    return NULL;
}

/* CUDA's versioned names: the base name at version >= 3020 is its _v2 where one exists (but for the names
 * of versioned[]); with the per-thread default stream flag, its _ptsz where one exists. */
static void *lookup(const char *base, int version, cuuint64_t flags)
{
    char name[128], v[128];
    snprintf(name, sizeof name, "%.100s", base);
    int special = 0;
    for (size_t i = 0; i < sizeof versioned / sizeof versioned[0]; i++)
        if (!strcmp(base, versioned[i].base)) {
            special = 1;
            if (version >= versioned[i].since) snprintf(name, sizeof name, "%.100s", versioned[i].name);
        }
    snprintf(v, sizeof v, "%.100s_v2", base);
    if (!special && version >= 3020 && find(v)) memcpy(name, v, sizeof name);
    snprintf(v, sizeof v, "%.100s_ptsz", name);
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && find(v)) return find(v);
    return find(name);
}
API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, void *status)
{
    (void)status;
    if (!strcmp(symbol, "cuGetProcAddress")) {
        *pfn = (void *)cuGetProcAddress_v2;
        return CUDA_SUCCESS;
    }
    *pfn = lookup(symbol, version, flags);
    return *pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}
API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
