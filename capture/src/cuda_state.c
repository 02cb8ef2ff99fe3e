/* cuda_state.c: what the CUDA layer remembers between calls (cuda_cap.h). Small tables under one mutex,
 * never held across a real driver call or a record write: a record to write is decided under the lock
 * and written after it is released. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "cuda_cap.h"
#include "vgt/grow.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
void cu_state_lock(void) { pthread_mutex_lock(&mu); }
void cu_state_unlock(void) { pthread_mutex_unlock(&mu); }

/* Room in arr (n held, cap allocated) for one more; 0 when out of memory. */
#define GROW(arr, n, cap) (vgt_grow(&(arr), &(cap), (n) + 1, 32) == 0)

/* ---- images ---- */
typedef struct image {
    uint64_t hash, size;
    uint32_t kind;
    const void *ptr;              /* deferred: where the program's bytes are (it keeps them: static fatbins) */
    uint8_t *copy;                /* deferred: our copy (the program's bytes may not outlive the call) */
    char *path;                   /* the file that holds the bytes (a load from a file; an image found in a
                                   * mapped file while the caller's bytes were still there), or NULL */
    uint64_t file_offset;
    int transient;                /* the caller's bytes may not outlive the load: ptr is not looked up later */
    int state;                    /* 0 deferred, 1 being written, 2 written */
} image;
static image *images;
static uint64_t nimages, capimages;

/* Images are written at the first launch that needs them, not at their load: the CUDA runtime loads every
 * fatbinary a program (PyTorch: thousands) was built with, and launches from a few. Bytes that may not
 * outlive the load call are copied (always when the caller says so, else up to this size: the runtime's
 * large fatbinaries are in the program's own mapped image). */
#define IMAGE_COPY_MAX (1ull << 20)

static image *image_find(uint64_t hash)
{
    for (uint64_t i = 0; i < nimages; i++)
        if (images[i].hash == hash) return &images[i];
    return NULL;
}

/* --cuda-images (VGT_CAPTURE_CUDA_IMAGES): embed every image; ref: name every image found in a file by
 * the file; auto (default): embed up to VGT_CAPTURE_CUDA_IMAGE_EMBED_MAX bytes (1 MiB), name larger ones
 * by their file. Images in no file (NVRTC's, Triton's cubins) are embedded whatever the mode. */
static int image_by_file(uint64_t size)
{
    static int mode = -1;
    static uint64_t embed_max;
    if (mode < 0) {
        const char *m = getenv("VGT_CAPTURE_CUDA_IMAGES"), *e = getenv("VGT_CAPTURE_CUDA_IMAGE_EMBED_MAX");
        mode = m && !strcmp(m, "embed") ? 0 : m && !strcmp(m, "ref") ? 1 : 2;
        embed_max = e && *e ? strtoull(e, NULL, 0) : 1ull << 20;
    }
    return mode == 1 || (mode == 2 && size > embed_max);
}

/* The file that holds im's bytes, checked: the path and offset into r; 0 when none does. The program's
 * address is only looked up in the maps, never read (it may be gone); the file's bytes must hash to the
 * image's hash. */
static int image_file(const image *im, vgt_rec_cuda_image_ref *r, char *path, size_t n)
{
    uint64_t off = im->file_offset;
    if (im->path) {
        if (strlen(im->path) >= n) return 0;
        snprintf(path, n, "%s", im->path);
    } else if (im->transient || !im->ptr ||
               !vgt_capture_mapped_file(NULL, (uint64_t)(uintptr_t)im->ptr, im->size, path, n, &off)) {
        return 0;
    }
    *r = (vgt_rec_cuda_image_ref){.hash = im->hash, .file_offset = off, .image_length = (uint32_t)im->size,
                                  .kind = im->kind, .path_length = (uint32_t)strlen(path), .path = path};
    struct stat st;
    if (stat(path, &st) == 0) r->file_size = (uint64_t)st.st_size;
    vgt_error e;
    return vgt_cuda_image_ref_load(r, NULL, &e) == VGT_OK;
}

static void image_write(image *im, const void *bytes)
{
    char path[4096];
    vgt_rec_cuda_image_ref ref;
    if (image_by_file(im->size) && image_file(im, &ref, path, sizeof path)) {
        uint8_t entries[64 * VGT_CUDA_FATBIN_ENTRY_SIZE];
        uint32_t ne = im->kind == VGT_CUDA_IMAGE_FATBIN ? vgt_cuda_fatbin_entries(bytes, im->size, entries, 64) : 0;
        ref.entries_length = (ne > 64 ? 64 : ne) * VGT_CUDA_FATBIN_ENTRY_SIZE;
        ref.entries = entries;
        cu_write(VGT_REC_CUDA_IMAGE_REF, &ref);
        return;
    }
    vgt_rec_cuda_image r = {.hash = im->hash, .image_length = (uint32_t)im->size, .kind = im->kind, .image = bytes};
    cu_write(VGT_REC_CUDA_IMAGE, &r);
}

uint64_t cu_image_note(const void *bytes, uint64_t size, uint32_t kind, int copy, const char *path)
{
    if (!bytes || !size || size > VGT_MAX_RECORD_PAYLOAD - 64) return 0;
    uint64_t hash = XXH64(bytes, size, 0);
    cu_state_lock();
    image *im = image_find(hash);
    if (!im && GROW(images, nimages, capimages)) {
        im = &images[nimages++];
        *im = (image){.hash = hash, .size = size, .kind = kind, .ptr = bytes, .transient = copy};
        if ((copy || size <= IMAGE_COPY_MAX) && (im->copy = malloc(size))) memcpy(im->copy, bytes, size);
        if (path && path[0] == '/') im->path = strdup(path);
    }
    /* bytes that will be gone at the launch: where they came from is looked up now, while they are here */
    int look = im && im->state == 0 && !im->path && copy && image_by_file(size);
    cu_state_unlock();
    if (look) {
        char p[4096];
        uint64_t off;
        if (vgt_capture_mapped_file(NULL, (uint64_t)(uintptr_t)bytes, size, p, sizeof p, &off)) {
            char *dup = strdup(p);
            cu_state_lock();
            if (!im->path && dup) im->path = dup, im->file_offset = off, dup = NULL;
            cu_state_unlock();
            free(dup);
        }
    }
    return hash;
}

/* ---- owners: function -> module / kernel -> library -> image ---- */
typedef struct owner {
    uint64_t handle, parent, image_hash;
    char *name;
    int kind;                     /* CU_OWNER_* */
} owner;
static owner *owners;
static uint64_t nowners, capowners;

static owner *owner_find(uint64_t h)
{
    for (uint64_t i = nowners; i-- > 0;)
        if (owners[i].handle == h) return &owners[i];
    return NULL;
}

void cu_owner_set(uint64_t handle, uint64_t parent, uint64_t image_hash, const char *name, int kind)
{
    if (!handle) return;
    cu_state_lock();
    owner *o = owner_find(handle);
    if (!o && GROW(owners, nowners, capowners)) o = &owners[nowners++], memset(o, 0, sizeof *o);
    if (o) {
        o->handle = handle, o->parent = parent, o->image_hash = image_hash, o->kind = kind;
        free(o->name);
        o->name = name ? strdup(name) : NULL;
    }
    cu_state_unlock();
}

const char *cu_owner_name(uint64_t handle)
{
    cu_state_lock();
    owner *o = owner_find(handle);
    const char *n = o ? o->name : NULL;
    cu_state_unlock();
    return n;
}

int cu_owner_kind(uint64_t handle)
{
    cu_state_lock();
    owner *o = owner_find(handle);
    int k = o ? o->kind : -1;
    cu_state_unlock();
    return k;
}

uint32_t cu_owner_list(int kind, const char *name, uint64_t *out, uint32_t max)
{
    uint32_t n = 0;
    cu_state_lock();
    for (uint64_t i = nowners; i-- > 0 && n < max;)
        if (owners[i].kind == kind && (!name || (owners[i].name && !strcmp(owners[i].name, name))))
            out[n++] = owners[i].handle;
    cu_state_unlock();
    return n;
}

void cu_image_for_function(uint64_t fn)
{
    cu_state_lock();
    uint64_t hash = 0;
    owner *o = owner_find(fn);
    for (int i = 0; o && i < 4 && !hash; i++) {
        hash = o->image_hash;
        o = owner_find(o->parent);
    }
    image *im = hash ? image_find(hash) : NULL;
    const void *bytes = NULL;
    if (im && im->state == 0) {
        im->state = 1;
        bytes = im->copy ? im->copy : im->ptr;
    }
    cu_state_unlock();
    if (!bytes) return;
    image_write(im, bytes);
    cu_state_lock();
    im->state = 2;
    free(im->copy);
    im->copy = NULL;
    cu_state_unlock();
}

/* ---- parameter layouts (cuFuncGetParamInfo, CUDA 12.4; cuKernelGetParamInfo for a CUkernel) ---- */
typedef struct layout {
    uint64_t fn;
    int known;
    uint32_t n, bytes;
    uint8_t *entries;             /* n x {u32 offset, u32 size}, little-endian */
} layout;
static layout *layouts;
static uint64_t nlayouts, caplayouts;

#define MAX_PARAMS 4096u

static int query_layout(CUfunction f, layout *l)
{
    typedef CUresult (*info_fn)(void *, size_t, size_t *, size_t *);
    static info_fn func_info, kernel_info;
    static int looked;
    if (!looked) {
        func_info = (info_fn)cu_lib_sym("cuFuncGetParamInfo");
        kernel_info = (info_fn)cu_lib_sym("cuKernelGetParamInfo");
        looked = 1;
    }
    info_fn q[2] = {func_info, kernel_info};
    for (int k = 0; k < 2; k++) {
        if (!q[k]) continue;
        uint8_t *e = NULL;
        uint32_t n = 0, bytes = 0;
        CUresult r = CUDA_SUCCESS;
        for (; n < MAX_PARAMS; n++) {
            size_t off = 0, size = 0;
            r = q[k](f, n, &off, &size);
            if (r != CUDA_SUCCESS) break;
            uint8_t *ne = realloc(e, 8u * (n + 1));
            if (!ne) break;
            e = ne;
            uint32_t o32 = (uint32_t)off, s32 = (uint32_t)size;
            memcpy(e + 8u * n, &o32, 4);
            memcpy(e + 8u * n + 4, &s32, 4);
            if (o32 + s32 > bytes) bytes = o32 + s32;
        }
        /* past the last parameter: CUDA_ERROR_INVALID_VALUE; any other error on the first: wrong kind of handle */
        if (r == CUDA_ERROR_INVALID_VALUE || n) {
            l->known = 1, l->n = n, l->bytes = bytes, l->entries = e;
            return 1;
        }
        free(e);
    }
    return 0;
}

int cu_layout(CUfunction f, const uint8_t **out, uint32_t *n, uint32_t *bytes)
{
    uint64_t key = (uint64_t)(uintptr_t)f;
    cu_state_lock();
    for (uint64_t i = 0; i < nlayouts; i++)
        if (layouts[i].fn == key) {
            layout *l = &layouts[i];
            *out = l->entries, *n = l->n, *bytes = l->bytes;
            int k = l->known;
            cu_state_unlock();
            return k;
        }
    cu_state_unlock();
    layout l = {.fn = key};
    query_layout(f, &l);   /* a driver call: outside the lock */
    cu_state_lock();
    if (GROW(layouts, nlayouts, caplayouts)) layouts[nlayouts++] = l;
    cu_state_unlock();
    *out = l.entries, *n = l.n, *bytes = l.bytes;
    return l.known;
}

/* ---- device allocations ---- */
typedef struct alloc { uint64_t base, size; } alloc;
static alloc *allocs;
static uint64_t nallocs, capallocs;

void cu_alloc_add(uint64_t base, uint64_t size)
{
    cu_state_lock();
    if (GROW(allocs, nallocs, capallocs)) allocs[nallocs++] = (alloc){base, size};
    cu_state_unlock();
}

void cu_alloc_remove(uint64_t base)
{
    cu_state_lock();
    for (uint64_t i = 0; i < nallocs; i++)
        if (allocs[i].base == base) {
            allocs[i] = allocs[--nallocs];
            break;
        }
    cu_state_unlock();
}

int cu_is_device(uint64_t a)
{
    cu_state_lock();
    int found = 0;
    for (uint64_t i = 0; i < nallocs && !found; i++) found = a - allocs[i].base < allocs[i].size;
    cu_state_unlock();
    return found;
}

/* ---- streams being captured ---- */
static uint64_t capturing[64];
static uint32_t ncapturing;

void cu_capture_begin(uint64_t s)
{
    cu_state_lock();
    if (ncapturing < 64) capturing[ncapturing++] = s;
    cu_state_unlock();
}

void cu_capture_end(uint64_t s)
{
    cu_state_lock();
    for (uint32_t i = 0; i < ncapturing; i++)
        if (capturing[i] == s) {
            capturing[i] = capturing[--ncapturing];
            break;
        }
    cu_state_unlock();
}

int cu_capturing(uint64_t s)
{
    if (!s) return 0;   /* the legacy and per-thread default streams cannot be captured */
    cu_state_lock();
    int found = 0;
    for (uint32_t i = 0; i < ncapturing && !found; i++) found = capturing[i] == s;
    cu_state_unlock();
    return found;
}

/* ---- asynchronous device-to-host copies, events ---- */
typedef struct pending { uint64_t host, dev, size, stream; } pending;
static pending *pend;
static uint64_t npend, cappend;

void cu_pending_dtoh(uint64_t host, uint64_t dev, uint64_t size, uint64_t stream)
{
    cu_state_lock();
    if (GROW(pend, npend, cappend)) pend[npend++] = (pending){host, dev, size, stream};
    cu_state_unlock();
}

typedef struct evrec { uint64_t event, stream; } evrec;
static evrec *events;
static uint64_t nevents, capevents;

void cu_event_recorded(uint64_t event, uint64_t stream)
{
    cu_state_lock();
    uint64_t i = 0;
    while (i < nevents && events[i].event != event) i++;
    if (i < nevents) events[i].stream = stream;
    else if (GROW(events, nevents, capevents)) events[nevents++] = (evrec){event, stream};
    cu_state_unlock();
}

uint64_t cu_event_stream(uint64_t event)
{
    cu_state_lock();
    uint64_t s = ~0ull;
    for (uint64_t i = 0; i < nevents; i++)
        if (events[i].event == event) s = events[i].stream;
    cu_state_unlock();
    return s;
}

static void write_result(const cu_call *c, const pending *p)
{
    uint64_t n = p->size < cu_data_max() ? p->size : cu_data_max();
    vgt_rec_cuda_memory m = {
        .dst = p->host, .src = p->dev, .size = p->size, .stream = p->stream, .op = VGT_CUDA_OP_DTOH_RESULT,
        .data_length = (uint32_t)n, .data = (const uint8_t *)(uintptr_t)p->host,
    };
    m.call = c->head;   /* the synchronization that made the bytes valid */
    if (n < p->size) m.call.flags |= VGT_CUDA_MEM_DATA_TRUNCATED;
    cu_write(VGT_REC_CUDA_MEMORY, &m);
}

/* A synchronization of the legacy default stream (0) waits for every blocking stream: all of them. */
void cu_flush_dtoh(const cu_call *c, uint64_t stream, int any)
{
    pending done[64];
    for (;;) {
        uint32_t nd = 0;
        cu_state_lock();
        for (uint64_t i = 0; i < npend && nd < 64;) {
            if (any || stream == 0 || pend[i].stream == stream) {
                done[nd++] = pend[i];
                pend[i] = pend[--npend];
            } else {
                i++;
            }
        }
        cu_state_unlock();
        for (uint32_t i = 0; i < nd; i++) write_result(c, &done[i]);
        if (nd < 64) return;
    }
}

/* ---- graph execs' copy nodes ---- */
typedef struct gnode { uint64_t exec, dst, src, size; uint32_t node, op; } gnode;
static gnode *gnodes;
static uint64_t ngnodes, capgnodes;

void cu_graph_copy_node(uint64_t exec, uint32_t node, uint32_t op, uint64_t dst, uint64_t src, uint64_t size)
{
    if (op != VGT_CUDA_OP_HTOD && op != VGT_CUDA_OP_DTOH) return;
    cu_state_lock();
    if (GROW(gnodes, ngnodes, capgnodes)) gnodes[ngnodes++] = (gnode){exec, dst, src, size, node, op};
    cu_state_unlock();
}

void cu_graph_before_launch(uint64_t exec, uint64_t stream, const cu_call *c)
{
    for (uint64_t i = 0;; i++) {
        cu_state_lock();
        while (i < ngnodes && gnodes[i].exec != exec) i++;
        gnode g = i < ngnodes ? gnodes[i] : (gnode){0};
        int found = i < ngnodes;
        cu_state_unlock();
        if (!found) return;
        if (g.op == VGT_CUDA_OP_DTOH) {
            cu_pending_dtoh(g.dst, g.src, g.size, stream);
            continue;
        }
        uint64_t n = g.size < cu_data_max() ? g.size : cu_data_max();
        vgt_rec_cuda_memory m = {
            .call = c->head, .dst = g.dst, .src = g.src, .size = g.size, .stream = stream, .graph_exec = exec,
            .op = VGT_CUDA_OP_HTOD, .node_index = g.node, .data_length = (uint32_t)n,
            .data = (const uint8_t *)(uintptr_t)g.src,
        };
        m.call.flags |= VGT_CUDA_MEM_GRAPH_NODE | (n < g.size ? VGT_CUDA_MEM_DATA_TRUNCATED : 0);
        m.call.submits_after = m.call.submits_before;
        cu_write(VGT_REC_CUDA_MEMORY, &m);
    }
}

void cu_graph_forget(uint64_t exec)
{
    cu_state_lock();
    for (uint64_t i = 0; i < ngnodes;)
        if (gnodes[i].exec == exec) gnodes[i] = gnodes[--ngnodes];
        else i++;
    cu_state_unlock();
}

void cu_state_finish(void)
{
    cu_state_lock();
    uint64_t n = npend;
    cu_state_unlock();
    if (n)
        shim_problem(1, VGT_E_UNSUPPORTED, "%llu asynchronous device-to-host copies were never synchronized: their "
                     "bytes are not in the trace", (unsigned long long)n);
}
