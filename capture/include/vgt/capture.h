/* capture.h: the embedding API: record a guest's (or a process's) GPU submissions into a .vgt trace
 * from a host that already sees its GPFIFO: a device model, a hypervisor module, or vgtrace's own
 * LD_PRELOAD shim (capture/src/), which is built on it.
 *
 * The capture keeps the one registry of what it records: RM objects, CPU and GPU mappings, the memory
 * views they make (a GPU VA range the capture can read), channels with their ring, USERD location and
 * work-submit token. The host declares what it knows and which GPU VA ranges it can read (views: a host
 * pointer or a read callback, given directly or made where a CPU mapping and a GPU mapping cover the same
 * bytes of one memory object). On each doorbell it passes the channel and the new GP_PUT, or only the
 * token when the capture can read GP_PUT from USERD itself; the capture reads the new ring entries and
 * every push-buffer segment they reference (subroutine entries too) through the views and writes one
 * GPFIFO_SUBMIT record, exactly as docs/trace-format.md §5 describes. Memory contents go out as MEMORY
 * records read through the same views, or from a memory tracker the host plugs in (vgt_capture_tracker).
 *
 *     vgt_capture *c;
 *     vgt_capture_open(&c, writer, NULL, &err);
 *     vgt_capture_view v = { .gpu_va = 0x200000000, .length = 8 << 20, .host = guest_ptr };
 *     vgt_capture_map_view(c, &v, &err);                        // GPU_MAP (source: embedding API)
 *     vgt_rec_channel ch = { .client = 1, .handle = 0xbeef0100, .cls = 0xc86f,
 *                            .ring_va = 0x200000000, .entries = 1024 };
 *     vgt_capture_channel(c, &ch, &err);                         // CHANNEL
 *     vgt_capture_memory(c, 0x200000000, 8 << 20, VGT_MEM_INITIAL, &err);
 *     vgt_capture_doorbell(c, 1, 0xbeef0100, gp_get, new_gp_put, NULL, &err);   // GPFIFO_SUBMIT
 *     vgt_capture_close(c);                                      // the writer stays open
 *
 * Threads: the capture has one mutex; every call that reads or changes the registry or writes a record
 * takes it and releases it before returning (no call returns holding it). Locks, in this order: the
 * capture's mutex, then the writer's. A tracker's hooks run with the capture's mutex held: they may write
 * records to the writer and call vgt_capture_diagnostic, never another call on the capture. A host that
 * calls a doorbell from a signal handler (the shim does) must never be inside the capture, the tracker or
 * the writer at the interrupted instruction; see capture/README.md.
 * Fork: fork() waits until no thread is inside a capture (pthread_atfork handlers, registered at the
 * first vgt_capture_open), so a child inherits every capture unlocked and consistent.
 */
#ifndef VGT_CAPTURE_H
#define VGT_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "vgt/error.h"
#include "vgt/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read up to len bytes of GPU VA gpu_va into dst; return how many could be read (0..len). */
typedef uint32_t (*vgt_capture_read_fn)(void *ctx, uint64_t gpu_va, void *dst, uint32_t len);

typedef struct vgt_capture_view {
    uint64_t gpu_va, length;
    const void *host;            /* the bytes at gpu_va, or NULL to use read */
    vgt_capture_read_fn read;
    void *ctx;
    uint32_t client, memory;     /* memory object handle (0 if none), named in MEMORY records */
    uint64_t memory_offset;      /* offset of gpu_va in that memory object */
} vgt_capture_view;

#define VGT_CAPTURE_MAX_VIEWS 65536u
#define VGT_CAPTURE_MAX_CHANNELS 4096u
#define VGT_CAPTURE_MAX_RING_ENTRIES (1u << 20)
#define VGT_CAPTURE_MAX_MEMORY_RECORD (4u << 20)    /* a producer splits larger contents */

/* A memory tracker: the host's way of recording memory contents as the views come and go and before
 * each submission (the LD_PRELOAD shim's write tracking, capture/src/shim_memtrack.c). Every hook is
 * optional and runs with the capture's mutex held (see Threads above). */
typedef struct vgt_capture_tracker {
    void *ctx;
    /* A view appeared. cls: its memory object's class (0 if none is registered); zeroed: memory RM
     * handed out zeroed in this capture that nothing can have written yet (no initial read needed). */
    void (*view_added)(void *ctx, const vgt_capture_view *v, uint32_t cls, int zeroed);
    /* A view is about to go (what the GPU wrote there can still be read). */
    void (*view_removing)(void *ctx, const vgt_capture_view *v);
    /* The first CPU mapping of fresh memory that no GPU mapping covers yet: watched for writes, it lets
     * the view that comes with the GPU mapping skip its initial read. */
    void (*fresh_cpu_map)(void *ctx, uint64_t cpu, uint64_t length);
    /* CPU addresses [cpu, cpu+length) are being unmapped. */
    void (*cpu_unmapping)(void *ctx, uint64_t cpu, uint64_t length);
    /* A channel's first doorbell: its ring (GPU VA) and USERD (host address), bytes the submission
     * records carry or a replay never uses. */
    void (*channel_infra)(void *ctx, uint64_t ring_va, uint64_t ring_bytes, const void *userd, uint64_t userd_bytes);
    /* Before a submission's GPFIFO_SUBMIT record: the memory changed since the previous one, less the
     * bytes of this submission's segments (segs NULL, nseg 0 when they could not be collected). */
    void (*before_submit)(void *ctx, const vgt_segment *segs, uint32_t nseg);
    /* vgt_capture_finish: the last records (what the GPU wrote to views still present). */
    void (*finish)(void *ctx);
} vgt_capture_tracker;

typedef struct vgt_capture_options {
    uint32_t max_segment_bytes;  /* one push-buffer segment; longer ones are cut and flagged (default 8 MiB) */
    uint32_t max_submit_bytes;   /* all segments of one submission (default 48 MiB) */
    int device_views;            /* 1: host views point at GPU memory mapped to the CPU (write-combined or
                                  * uncached): always copy out with vgt_copy_from_device, never hand the
                                  * writer a pointer into it */
    const vgt_capture_tracker *tracker;   /* copied at open; NULL: none */
} vgt_capture_options;

typedef struct vgt_capture vgt_capture;

typedef struct vgt_capture_stats {
    uint64_t submits, entries, segment_bytes, memory_records, memory_bytes, unknown_tokens, read_failures;
    uint64_t doorbells;          /* doorbell calls, known tokens or not */
    uint64_t userd_ns;           /* reading GP_PUT and GP_GET from USERD (vgt_capture_doorbell_store) */
    uint64_t progress_records;   /* CHANNEL_PROGRESS records (vgt_capture_finish, vgt_capture_progress) */
} vgt_capture_stats;

/* The writer is borrowed: it must outlive the capture; vgt_capture_close does not close it. */
vgt_status vgt_capture_open(vgt_capture **c, vgt_writer *w, const vgt_capture_options *opt, vgt_error *err);
void vgt_capture_close(vgt_capture *c);
vgt_writer *vgt_capture_writer(vgt_capture *c);
vgt_capture_stats vgt_capture_get_stats(vgt_capture *c);
/* GPFIFO_SUBMIT records written so far (no lock: the CUDA layer reads it around every API call to link
 * the call to the submissions it caused, docs/trace-format.md "Linking"). */
uint64_t vgt_capture_submits(vgt_capture *c);

/* Declarations, each written as its record (status NV_OK, no params). */
vgt_status vgt_capture_object(vgt_capture *c, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                              vgt_error *err);
vgt_status vgt_capture_engine(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t handle, uint32_t cls,
                              vgt_error *err);
/* Writes WORK_SUBMIT_TOKEN, then gives the channel its token (VGT_E_NOT_FOUND for an unknown channel). A
 * token may be reused by a channel made after another was freed: the newest channel wins. */
vgt_status vgt_capture_token(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t token, vgt_error *err);
/* Writes CHANNEL; when ch->status is 0 and ch->entries is not, registers the channel: its ring (ring_va,
 * entries: at most VGT_CAPTURE_MAX_RING_ENTRIES, else VGT_E_LIMIT) and its USERD (userd_memory +
 * userd_offset, read through a CPU mapping of that memory: vgt_capture_doorbell_store). */
vgt_status vgt_capture_channel(vgt_capture *c, const vgt_rec_channel *ch, vgt_error *err);

/* Any record, written under the capture's mutex; after vgt_capture_finish nothing is written (VGT_OK).
 * For records that change nothing the capture tracks (RM_ALLOC, RM_FREE, RM_CONTROL, IOCTL,
 * ENGINE_OBJECT, PROCESS_START, the CUDA API records of format 1.2, ...); rec points at the vgt_rec_*
 * struct of type (VGT_E_ARG for types without one: GPFIFO_SUBMIT, MEMORY and the others the capture
 * writes itself). */
vgt_status vgt_capture_record(vgt_capture *c, uint16_t type, const void *rec, vgt_error *err);

/* ---- the registry of a host that sees the RM ioctls (the LD_PRELOAD shim) ----
 * RM objects, and the CPU and GPU mappings of memory objects: where a CPU mapping and a GPU mapping
 * cover the same bytes of the same (client, memory), a view is made (GPU VA -> CPU pointer; CUDA's
 * VA == CPU VA falls out of its own two mappings, never assumed) and the tracker hears of it. */
enum vgt_capture_object_flags {
    VGT_CAPTURE_OBJ_MEMORY = 1u,     /* a memory object: its mappings make views */
    VGT_CAPTURE_OBJ_CHANNEL = 2u,    /* a channel: its children are engine objects */
    VGT_CAPTURE_OBJ_USERMODE = 4u,   /* the usermode (doorbell) page's object */
    VGT_CAPTURE_OBJ_FRESH = 8u,      /* memory RM allocated in this capture: zero as handed out */
};
/* Register (or re-register) an object; VGT_E_LIMIT when the table is full. No record. */
vgt_status vgt_capture_register_object(vgt_capture *c, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                                       uint32_t flags, vgt_error *err);
/* The flags an object was registered with, 0 for an unknown one. */
uint32_t vgt_capture_object_flags(vgt_capture *c, uint32_t client, uint32_t handle);
/* Writes MEM_ALLOC; when m->status is 0 registers the memory object (flags | VGT_CAPTURE_OBJ_MEMORY) and,
 * for an OS descriptor (m->cpu_address), its own pages as a CPU mapping of [0, size) that goes with it. */
vgt_status vgt_capture_mem_alloc(vgt_capture *c, const vgt_rec_mem_alloc *m, uint32_t flags, vgt_error *err);
/* An object was freed: it and (8 levels deep) its children are forgotten: a memory object's views (the
 * tracker hears of each before it goes), GPU mappings and own-pages mapping; a channel's ring and token. */
void vgt_capture_forget_object(vgt_capture *c, uint32_t client, uint32_t handle);
/* Writes CPU_MAP; track != 0: the mapping of (m->client, m->memory) is registered (views form). */
vgt_status vgt_capture_cpu_map(vgt_capture *c, const vgt_rec_cpu_map *m, int track, vgt_error *err);
/* munmap of [cpu, cpu+length): the views there go, and each registered CPU mapping it touches is
 * forgotten with a CPU_UNMAP record. */
vgt_status vgt_capture_cpu_unmap(vgt_capture *c, uint64_t cpu, uint64_t length, vgt_error *err);
/* 0 when [cpu, cpu+length) lies outside every CPU address a CPU mapping or view of c ever covered (its
 * munmap has nothing to record); 1 when it may touch one. No lock. */
int vgt_capture_cpu_may_cover(const vgt_capture *c, uint64_t cpu, uint64_t length);
/* The registered CPU mapping starting at cpu (for mremap): VGT_OK and *out, or VGT_E_NOT_FOUND. */
vgt_status vgt_capture_cpu_map_at(vgt_capture *c, uint64_t cpu, vgt_rec_cpu_map *out, vgt_error *err);
/* Writes GPU_MAP; when g->status is 0 registers the mapping (views form). */
vgt_status vgt_capture_gpu_map(vgt_capture *c, const vgt_rec_gpu_map *g, vgt_error *err);
/* Writes GPU_UNMAP; when u->status is 0 forgets the mapping of u->client starting at u->gpu_va (of
 * u->memory, or any memory when 0) and the views in its range. */
vgt_status vgt_capture_gpu_unmap(vgt_capture *c, const vgt_rec_gpu_unmap *u, vgt_error *err);
/* Writes GPU_UNMAP; when u->status is 0 forgets every mapping and view in [u->gpu_va, +u->length). */
vgt_status vgt_capture_gpu_unmap_range(vgt_capture *c, const vgt_rec_gpu_unmap *u, vgt_error *err);

/* Memory views given directly. map_view writes GPU_MAP (source VGT_MAP_EMBEDDED) and adds the view;
 * add_view only adds it. Views may not overlap (VGT_E_ARG naming both ranges). remove: by the view's
 * start. The tracker hears of each. */
vgt_status vgt_capture_map_view(vgt_capture *c, const vgt_capture_view *v, vgt_error *err);
vgt_status vgt_capture_unmap_view(vgt_capture *c, uint64_t gpu_va, vgt_error *err);
vgt_status vgt_capture_add_view(vgt_capture *c, const vgt_capture_view *v, vgt_error *err);
vgt_status vgt_capture_remove_view(vgt_capture *c, uint64_t gpu_va, vgt_error *err);
/* Copy through the views; returns the bytes read before the first unreadable byte. */
uint64_t vgt_capture_read(vgt_capture *c, uint64_t gpu_va, void *dst, uint64_t len);

/* ---- doorbells: each one call, under the capture's mutex from start to end ----
 * The submission: the entries from the channel's previous GP_PUT up to gp_put and the bytes of their
 * segments, read through the views; the tracker's before_submit (changed memory) goes first; then one
 * GPFIFO_SUBMIT record. *seq (may be NULL) receives its sequence number. */
vgt_status vgt_capture_doorbell(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_get,
                                uint32_t gp_put, uint64_t *seq, vgt_error *err);
/* The same, with the channel found from a work-submit token (VGT_E_NOT_FOUND for an unknown token, after
 * writing a DOORBELL record with channel 0 so the trace still shows it). */
vgt_status vgt_capture_doorbell_token(vgt_capture *c, uint32_t token, uint32_t gp_get, uint32_t gp_put,
                                      uint64_t *seq, vgt_error *err);
/* A doorbell store of token seen by the host (the usermode page's NOTIFY_CHANNEL_PENDING): the channel
 * from the token, GP_PUT and GP_GET read from its USERD through a CPU mapping (gp_get_before: how far the
 * GPU had fetched before this doorbell).
 * VGT_E_NOT_FOUND, after a DOORBELL record, for an unknown token (*info: unknown_token) or a channel
 * whose USERD no CPU mapping covers (*info: no_userd); other errors name the channel in *info. Nothing
 * happens after vgt_capture_finish. */
typedef struct vgt_capture_doorbell_info {
    uint32_t client, channel;          /* the token's channel (0 when unknown) */
    uint32_t userd_memory;             /* its USERD, for the host's message */
    uint64_t userd_offset;
    int unknown_token, no_userd;
} vgt_capture_doorbell_info;
vgt_status vgt_capture_doorbell_store(vgt_capture *c, uint32_t token, vgt_capture_doorbell_info *info, vgt_error *err);
/* GP_PUT recorded by the last submission of a channel (the next submission's gp_put_before). */
vgt_status vgt_capture_last_put(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t *gp_put,
                                vgt_error *err);

/* A channel's GP_GET and GP_PUT observed by the host without a doorbell (a device model at its end, or
 * after it saw the channel go idle): a CHANNEL_PROGRESS record (flags END). VGT_E_NOT_FOUND for an
 * unknown channel. */
vgt_status vgt_capture_progress(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_get, uint32_t gp_put,
                                vgt_error *err);
/* The end of the capture: the tracker's finish hook, a CHANNEL_PROGRESS record (GP_GET, GP_PUT) for every
 * channel that rang a doorbell through vgt_capture_doorbell_store and whose USERD is still CPU-mapped,
 * then every later call records nothing, so the host may write its last records (PROCESS_END,
 * SESSION_END) and close the writer. */
void vgt_capture_finish(vgt_capture *c);

/* MEMORY records for [gpu_va, gpu_va+length) read through the views (split at view boundaries and at
 * VGT_CAPTURE_MAX_MEMORY_RECORD); bytes outside every view fail with VGT_E_NOT_FOUND naming the address. */
vgt_status vgt_capture_memory(vgt_capture *c, uint64_t gpu_va, uint64_t length, uint32_t reason, vgt_error *err);

/* A DIAGNOSTIC record (severity 0 info, 1 warning, 2 error). Takes only the writer's lock, so a
 * tracker's hooks may call it; nothing is written after vgt_capture_finish. */
vgt_status vgt_capture_diagnostic(vgt_capture *c, uint32_t severity, vgt_status code, const char *text,
                                  vgt_error *err);

/* ---- write tracking of ordinary memory (userfaultfd asynchronous write-protect + PAGEMAP_SCAN) ----
 * For memory the GPU reads from the program's own pages (OS-descriptor allocations): writes, system
 * calls included, are never blocked, and collect lists the pages written since the previous collect,
 * protecting them again. VGT_E_UNSUPPORTED on kernels before 6.7 or for mappings it cannot track. */
typedef struct vgt_capture_wp vgt_capture_wp;
typedef void (*vgt_capture_wp_fn)(void *ctx, void *addr, uint64_t len);
vgt_status vgt_capture_wp_open(vgt_capture_wp **wp, vgt_error *err);
void vgt_capture_wp_close(vgt_capture_wp *wp);
vgt_status vgt_capture_wp_add(vgt_capture_wp *wp, void *addr, uint64_t len, vgt_error *err);
void vgt_capture_wp_remove(vgt_capture_wp *wp, void *addr, uint64_t len);
vgt_status vgt_capture_wp_collect(vgt_capture_wp *wp, void *addr, uint64_t len, vgt_capture_wp_fn fn, void *ctx,
                                  vgt_error *err);

/* ---- RM_VID_HEAP_CONTROL (escape 0x4A, NVOS32_PARAMETERS, 0xB8 bytes) ----
 * The Vulkan and OpenGL drivers allocate memory through this escape rather than RM_ALLOC. Decoding it
 * turns an allocation into the MEM_ALLOC record RM_ALLOC's memory classes get. */
#define VGT_NVOS32_SIZE 0xB8u
enum vgt_nvos32_function {
    VGT_NVOS32_ALLOC_SIZE = 2, VGT_NVOS32_FREE = 3, VGT_NVOS32_INFO = 5, VGT_NVOS32_ALLOC_TILED_PITCH_HEIGHT = 6,
    VGT_NVOS32_ALLOC_SIZE_RANGE = 14, VGT_NVOS32_ALLOC_OS_DESCRIPTOR = 27,
};
typedef struct vgt_capture_nvos32 {
    uint32_t function;           /* enum vgt_nvos32_function (others are left undecoded) */
    int is_alloc, is_free;       /* which of the two below is filled */
    vgt_rec_mem_alloc alloc;     /* client, parent (device), handle, cls (0x40 vidmem, 0x3e sysmem, 0x50a0
                                  * virtual, 0x71 OS descriptor, 0 when RM chooses), size, flags, attr,
                                  * attr2, aperture, status; cpu_address: the OS descriptor's address */
    uint32_t va_space;           /* hVASpace (virtual allocations) */
    uint64_t offset;             /* returned offset (the GPU VA of a virtual allocation) */
    uint32_t type, format;       /* surface type and format */
    uint32_t free_client, free_handle;
} vgt_capture_nvos32;
/* Decode one NVOS32_PARAMETERS as returned by the kernel (params_out); len is what was recorded.
 * VGT_E_TRUNCATED when len is under VGT_NVOS32_SIZE; VGT_E_UNSUPPORTED for functions that neither
 * allocate nor free (out->function is still set). A failed call keeps its status in alloc.status. */
vgt_status vgt_capture_nvos32_decode(const uint8_t *p, uint32_t len, vgt_capture_nvos32 *out, vgt_error *err);

/* ---- identity block (docs/trace-format.md §2) ---- */
#define VGT_CAPTURE_IDENTITY_MAX 32u
typedef struct vgt_capture_identity {
    vgt_identity entries[VGT_CAPTURE_IDENTITY_MAX];
    uint32_t count;
    char text[16384];            /* the strings entries point at */
    uint32_t used;
} vgt_capture_identity;
/* Describe this host, its NVIDIA GPU and driver (from /proc/driver/nvidia, sysfs and the
 * CHECK_VERSION_STR query on /dev/nvidiactl; keys whose source is missing are left out), the captured
 * command line, the start times and the capture settings. Never fails: what cannot be read is absent. */
void vgt_capture_identity_collect(vgt_capture_identity *id, const char *producer, const char *capture_mode,
                                  const char *memory_mode, int crash_safe, int argc, char *const *argv);
/* Add or replace one entry (the value is copied). */
void vgt_capture_identity_set(vgt_capture_identity *id, const char *key, const char *value);
/* Chip and architecture of an NVIDIA PCI device id ("GH100", "hopper"), or NULLs when not in the table. */
void vgt_capture_chip_of_pci(uint32_t device_id, const char **chip, const char **architecture);

/* ---- the file behind an address (CUDA images referenced by file, format 1.5 CUDA_IMAGE_REF) ---- */
/* Whether [addr, addr + size) of this process lies in a file mapped into it (one mapping, or mappings of
 * the same file back to back at consecutive file offsets), as maps_path (NULL: /proc/self/maps) lists
 * them: the file's path into path (n bytes; a path that does not fit, a deleted file, an anonymous or
 * special mapping: 0) and the file offset of addr into *offset. Reads only the maps file, never addr. */
int vgt_capture_mapped_file(const char *maps_path, uint64_t addr, uint64_t size, char *path, size_t n,
                            uint64_t *offset);

#ifdef __cplusplus
}
#endif
#endif
