/* capture.h: the embedding API: record a guest's (or a process's) GPU submissions into a .vgt trace
 * from a host that already sees its GPFIFO: a device model, a hypervisor module, or vgtrace's own
 * LD_PRELOAD shim (capture/src/), which is built on it.
 *
 * The host declares what it knows (objects, channels with ring VA and size, engine objects, work-submit
 * tokens) and which GPU VA ranges it can read (memory views: a host pointer or a read callback). On each
 * doorbell it passes the channel and the new GP_PUT; the capture reads the new ring entries and every
 * push-buffer segment they reference (subroutine entries too) through the views and writes one
 * GPFIFO_SUBMIT record, exactly as docs/trace-format.md §5 describes. Memory contents go out as MEMORY
 * records read through the same views.
 *
 *     vgt_capture *c;
 *     vgt_capture_open(&c, writer, NULL, &err);
 *     vgt_capture_view v = { .gpu_va = 0x200000000, .length = 8 << 20, .host = guest_ptr };
 *     vgt_capture_map_view(c, &v, &err);                        // GPU_MAP (source: embedding API)
 *     vgt_rec_channel ch = { .client = 1, .handle = 0xbeef0100, .cls = 0xc86f,
 *                            .ring_va = 0x200000000, .entries = 1024 };
 *     vgt_capture_channel(c, &ch, &err);                         // CHANNEL
 *     vgt_capture_memory(c, 0x200000000, 8 << 20, VGT_MEM_INITIAL, &err);
 *     vgt_capture_doorbell(c, 1, 0xbeef0100, gp_get, new_gp_put, &err);   // GPFIFO_SUBMIT
 *     vgt_capture_close(c);                                      // the writer stays open
 *
 * Threads: every call takes the capture's own mutex. A host that calls vgt_capture_doorbell from a
 * signal handler (the shim does) must never hold that mutex, nor be inside the writer, at the
 * interrupted instruction; see capture/README.md.
 */
#ifndef VGT_CAPTURE_H
#define VGT_CAPTURE_H

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

typedef struct vgt_capture_options {
    uint32_t max_segment_bytes;  /* one push-buffer segment; longer ones are cut and flagged (default 8 MiB) */
    uint32_t max_submit_bytes;   /* all segments of one submission (default 48 MiB) */
    int device_views;            /* 1: host views point at GPU memory mapped to the CPU (write-combined or
                                  * uncached): always copy out with vgt_copy_from_device, never hand the
                                  * writer a pointer into it */
} vgt_capture_options;

typedef struct vgt_capture vgt_capture;

typedef struct vgt_capture_stats {
    uint64_t submits, entries, segment_bytes, memory_records, memory_bytes, unknown_tokens, read_failures;
} vgt_capture_stats;

/* The writer is borrowed: it must outlive the capture; vgt_capture_close does not close it. */
vgt_status vgt_capture_open(vgt_capture **c, vgt_writer *w, const vgt_capture_options *opt, vgt_error *err);
void vgt_capture_close(vgt_capture *c);
vgt_writer *vgt_capture_writer(vgt_capture *c);
vgt_capture_stats vgt_capture_get_stats(vgt_capture *c);

/* Declarations, each written as its record (status NV_OK, no params). */
vgt_status vgt_capture_object(vgt_capture *c, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                              vgt_error *err);
vgt_status vgt_capture_engine(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t handle, uint32_t cls,
                              vgt_error *err);
vgt_status vgt_capture_token(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t token, vgt_error *err);
/* Writes CHANNEL and registers the ring (ring_va, entries: 1..VGT_CAPTURE_MAX_RING_ENTRIES). */
vgt_status vgt_capture_channel(vgt_capture *c, const vgt_rec_channel *ch, vgt_error *err);

/* Register only (no record): the shim writes its own CHANNEL / WORK_SUBMIT_TOKEN records from the ioctls. */
vgt_status vgt_capture_register_channel(vgt_capture *c, const vgt_rec_channel *ch, vgt_error *err);
vgt_status vgt_capture_register_token(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t token,
                                      vgt_error *err);
void vgt_capture_forget_channel(vgt_capture *c, uint32_t client, uint32_t channel);
/* The channel a token was declared for (VGT_E_NOT_FOUND if none). */
vgt_status vgt_capture_channel_of_token(vgt_capture *c, uint32_t token, uint32_t *client, uint32_t *channel,
                                        vgt_error *err);

/* Memory views. map_view writes GPU_MAP (source VGT_MAP_EMBEDDED) and adds the view; add_view only adds
 * it. Views may not overlap (VGT_E_ARG naming both ranges). remove: by the view's start. */
vgt_status vgt_capture_map_view(vgt_capture *c, const vgt_capture_view *v, vgt_error *err);
vgt_status vgt_capture_unmap_view(vgt_capture *c, uint64_t gpu_va, vgt_error *err);
vgt_status vgt_capture_add_view(vgt_capture *c, const vgt_capture_view *v, vgt_error *err);
vgt_status vgt_capture_remove_view(vgt_capture *c, uint64_t gpu_va, vgt_error *err);
/* Copy through the views; returns the bytes read before the first unreadable byte. */
uint64_t vgt_capture_read(vgt_capture *c, uint64_t gpu_va, void *dst, uint64_t len);

/* A doorbell on (client, channel) with the GP_GET the host sees and the new GP_PUT: writes GPFIFO_SUBMIT
 * with the entries from the previous GP_PUT up to gp_put and the bytes of their segments. *seq (may be
 * NULL) receives the record's sequence number. */
vgt_status vgt_capture_doorbell(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_get,
                                uint32_t gp_put, uint64_t *seq, vgt_error *err);
/* vgt_capture_doorbell in two halves, for a host that records the memory the submission may read in
 * between and wants to know the segments first (the LD_PRELOAD shim leaves the bytes they carry out of
 * its changed-memory records). begin collects the new entries and their segments and keeps the capture's
 * mutex; *segs (*nseg of them) stays valid until end, which writes the GPFIFO_SUBMIT record and releases
 * the mutex. When begin fails nothing is held and end must not be called. */
vgt_status vgt_capture_doorbell_begin(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_put,
                                      const vgt_segment **segs, uint32_t *nseg, vgt_error *err);
vgt_status vgt_capture_doorbell_end(vgt_capture *c, uint32_t gp_get, uint64_t *seq, vgt_error *err);
/* The same, with the channel found from a work-submit token (VGT_E_NOT_FOUND for an unknown token, after
 * writing a DOORBELL record with channel 0 so the trace still shows it). */
vgt_status vgt_capture_doorbell_token(vgt_capture *c, uint32_t token, uint32_t gp_get, uint32_t gp_put,
                                      uint64_t *seq, vgt_error *err);
/* GP_PUT recorded by the last submission of a channel (the next submission's gp_put_before). */
vgt_status vgt_capture_last_put(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t *gp_put,
                                vgt_error *err);

/* MEMORY records for [gpu_va, gpu_va+length) read through the views (split at view boundaries and at
 * VGT_CAPTURE_MAX_MEMORY_RECORD); bytes outside every view fail with VGT_E_NOT_FOUND naming the address. */
vgt_status vgt_capture_memory(vgt_capture *c, uint64_t gpu_va, uint64_t length, uint32_t reason, vgt_error *err);

/* A DIAGNOSTIC record (severity 0 info, 1 warning, 2 error). */
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

#ifdef __cplusplus
}
#endif
#endif
