/* backend.h: what executes a replay. ONE const operation table per backend, chosen at run time (in the
 * manner of SQLite's os_unix.c VFS): `sim` (a software model of the GPU front end, always built), `gpu`
 * (the H200 through RM/UVM ioctls) and `cuda` (the host's libcuda, loaded at run time, for lane 3).
 *
 * A backend never sees trace records: the replay engine (replay/) turns records into these operations.
 * Every operation fills the caller's vgt_error on failure (error.h); none prints or exits.
 *
 *     const vgt_backend_ops *ops = vgt_backend_find("sim");
 *     vgt_backend *b;  vgt_error err;
 *     ops->open(&b, NULL, &err);
 *     uint32_t vas;  ops->vaspace_create(b, &vas, &err);
 *     ops->map(b, vas, 0x100000, 0x10000, VGT_APERTURE_VIDMEM, &err);
 *     ops->mem_write(b, vas, 0x100000, pushbuf, n, &err);
 *     uint32_t ch;  vgt_backend_channel_desc d = { .vas = vas, .cls = 0xC86F, .ring_va = 0, .entries = 1024 };
 *     ops->channel_create(b, &d, &ch, &err);
 *     ops->submit(b, ch, entries, count, 0, &err);
 *     ops->close(b);
 *
 * Invariants every backend keeps:
 *  - Memory is reachable only through mapped GPU VA ranges; an access outside them is VGT_E_FAULT with
 *    the VA in the message, never a host crash.
 *  - Push-buffer bytes are fetched from the backend's own memory at the GPFIFO entries' VAs: the engine
 *    writes them there (mem_write) before submit.
 *  - Sizes are bounded by vgt_backend_config limits, checked before allocating.
 */
#ifndef VGT_BACKEND_H
#define VGT_BACKEND_H

#include <stdint.h>

#include "vgt/error.h"
#include "vgt/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vgt_backend vgt_backend;   /* an opened backend instance (opaque, per backend) */

/* What a backend can produce, for --check and for the summary. */
enum vgt_backend_cap {
    VGT_CAP_SEMAPHORES = 1u << 0,   /* host, copy-engine, report and QMD release semaphores */
    VGT_CAP_UPLOADS = 1u << 1,      /* inline-to-memory uploads */
    VGT_CAP_COPIES = 1u << 2,       /* copy-engine pitch/linear copies and remap/memset */
    VGT_CAP_SHADERS = 1u << 3,      /* compute shaders are executed */
    VGT_CAP_RASTER = 1u << 4,       /* draws are rasterized */
    VGT_CAP_MACROS = 1u << 5,       /* MME macros are executed */
    VGT_CAP_WRITE_LOG = 1u << 6,    /* produced() and write_log() tell what the GPU wrote */
    VGT_CAP_ASYNC = 1u << 7,        /* work runs after submit returns (hardware): the engine waits with
                                       idle(timeout) before it reads memory a submission wrote */
    VGT_CAP_LANE_VERBATIM = 1u << 8,/* captured push buffers run unchanged at their captured VAs */
    VGT_CAP_LANE_SYNTH = 1u << 9,   /* re-synthesized push buffers (lane 2) */
    VGT_CAP_LANE_CUDA = 1u << 10,   /* CUDA-level replay (lane 3) */
    VGT_CAP_DECODES = 1u << 11,     /* the backend decodes what it runs and counts it (the counters' methods,
                                       launches, draws, copies, semaphores, macro calls); without it those
                                       counters stay 0 and the summary says they were not counted */
};

/* submit() flags. */
#define VGT_SUBMIT_STATE_ONLY 1u   /* decode and track state (subchannel bindings, macros) but run no
                                      side effect: used for submissions outside --submits */

typedef struct vgt_backend_config {
    uint64_t max_memory_bytes;     /* backing store for written pages; 0 = VGT_BACKEND_DEFAULT_MAX_MEMORY */
    uint64_t max_methods_per_submit;/* 0 = VGT_BACKEND_DEFAULT_MAX_METHODS: a hostile loop is cut there */
    uint64_t max_queued_methods;   /* methods a blocked channel may hold; 0 = default */
    uint32_t max_channels;         /* 0 = VGT_BACKEND_DEFAULT_MAX_CHANNELS */
    uint64_t max_macro_instructions;/* per MME macro call; 0 = the MME simulator's default */
    uint64_t max_copy_bytes;       /* one copy-engine transfer; 0 = VGT_BACKEND_DEFAULT_MAX_COPY; larger
                                      ones are reported as not modelled */
    uint64_t reserved_va;          /* where a hardware backend may put its own buffers (rings, context
                                      ranges); 0 = the backend's default. Lane 1 moves it off the
                                      trace's VAs (replay/src/reloc.c plans it) */
    uint32_t subcontexts;          /* hardware: enum vgt_backend_subcontexts, how capture channel groups
                                      are reproduced; 0 = as captured */
} vgt_backend_config;

/* vgt_backend_config.subcontexts (hardware diagnostics: `vgt replay --subcontexts`). */
enum vgt_backend_subcontexts {
    VGT_SUBCTX_CAPTURED = 0,       /* a group's channels in one TSG, each captured context share its own
                                      subcontext (VEID) */
    VGT_SUBCTX_GROUP = 1,          /* a group's channels in one TSG on one subcontext */
    VGT_SUBCTX_TSG = 2,            /* every channel in a TSG of its own (groups not reproduced) */
};

#define VGT_BACKEND_DEFAULT_MAX_MEMORY (4ull << 30)
#define VGT_BACKEND_DEFAULT_MAX_METHODS (64ull << 20)
#define VGT_BACKEND_DEFAULT_MAX_QUEUED (4ull << 20)
#define VGT_BACKEND_DEFAULT_MAX_CHANNELS 4096u
#define VGT_BACKEND_DEFAULT_MAX_COPY (1ull << 30)
#define VGT_BACKEND_MAX_MAP_RANGES (1u << 20)
#define VGT_BACKEND_MAX_ENTRY_BYTES (8u << 20)
/* The hardware backend's own range (rings, USERD, per-channel context ranges) is this long and must
 * end below 2^40 (push-buffer VAs in GPFIFO entries are 40 bits); backend/gpu asserts it fits. */
#define VGT_BACKEND_RESERVED_SPAN (20ull << 30)
#define VGT_BACKEND_RESERVED_DEFAULT 0xf000000000ull
#define VGT_BACKEND_PB_VA_LIMIT (1ull << 40)   /* one GPFIFO entry: LENGTH 30:10 is 21 bits of dwords */

typedef struct vgt_backend_channel_desc {
    uint32_t vas;                  /* VA space from vaspace_create */
    uint32_t cls;                  /* channel (host) class, e.g. 0xC86F */
    uint64_t ring_va;              /* GPFIFO ring GPU VA (0 when unknown) */
    uint32_t entries;              /* ring size in entries */
    uint32_t handle;               /* the trace's handle, for messages */
    /* The trace's channel group (KEPLER_CHANNEL_GROUP_A object the channel was allocated under; 0:
     * none) and its client. Channels of one group share one TSG, hence one engine context (MME RAM,
     * shader local memory, class state): hardware backends put them in one group too. */
    uint32_t group_client, group;
    /* The trace's FERMI_CONTEXT_SHARE_A of the channel (0: none recorded). Channels of one group with
     * different context shares ran in different subcontexts (VEIDs) of the group's context: each with
     * its own compute state and MME (Vulkan gives its compute queue one; CUDA's share one). */
    uint32_t context_share;
    /* The NVOS04 flags the capture allocated the channel with (NV_CHANNEL_ALLOC_PARAMS.flags) and the
     * flags of its context share (NV_CTXSHARE_ALLOCATION_PARAMETERS.flags); has_*: recorded at all.
     * Hardware backends reproduce the scheduling ones (runqueue, group thread; sync/async subcontext):
     * RM lets a compute object onto an async subcontext of a graphics TSG only on the runqueue the
     * capture used (H200, vk_triangle's compute queue: flags 0x10000030). */
    uint32_t alloc_flags, share_flags;
    int has_alloc_flags, has_share_flags;
} vgt_backend_channel_desc;

/* Counters a backend keeps over its life (the replay summary). Backends leave unknown ones at 0.
 * launches and copies are LAUNCH and COPY events, empty_dispatches and empty_dmas the EMPTY_DISPATCH and
 * EMPTY_DMA events (vgt/events.h: what runs threads, what moves bytes), as census counts them. */
typedef struct vgt_backend_counters {
    uint64_t submits, entries, control_entries, pushbuf_bytes;
    uint64_t methods, host_methods, unknown_class_methods;
    uint64_t launches, draws, uploads, upload_bytes, copies, copy_bytes, memsets;
    uint64_t empty_dispatches, empty_dmas;
    uint64_t sem_releases, sem_acquires, sem_reductions, report_semaphores;
    uint64_t macro_calls, macro_errors, macro_methods;
    uint64_t macro_refused;        /* calls not run: an MME budget was spent (vgt/mme.h vgt_mme_budget) */
    uint64_t faults, unsupported, blocked_waits, diagnostics;
    /* QMDs with REQUIRE_SCHEDULING_PCAS whose PCAS armed them without running them, and QMDs run because
     * a completing QMD scheduled them (DEPENDENT_QMD actions: CUDA graphs' kernel nodes) */
    uint64_t qmd_armed, qmd_dependent_runs;
    uint64_t qmd_releases;         /* SEM_RELEASE events of QMDs (in sem_releases too) */
    /* The engine's host accesses through mem_read / mem_write (not the backend's own: a semaphore wait's
     * polling is not counted). On hardware a read crosses the PCIe BAR (slow), so the bytes read per
     * submission are a cost of the replay: what --check and the synth lane read back, nothing else. */
    uint64_t host_reads, host_read_bytes, host_writes, host_write_bytes;
} vgt_backend_counters;

/* One range the GPU wrote (write_log). */
typedef struct vgt_backend_write {
    uint64_t va;
    uint64_t len;
} vgt_backend_write;

/* A problem met while executing (a fault, an unsupported operation, a decoder diagnostic, an acquire
 * that blocks). Delivered through the event callback so the engine can report it per submission. */
typedef struct vgt_backend_event {
    int kind;                      /* enum vgt_backend_event_kind */
    uint32_t channel;              /* backend channel id */
    uint64_t seq;                  /* the submission's seq given to submit (via set_context) */
    uint32_t entry, dword;         /* method position when known */
    const char *msg;
    uint64_t pb_va;                /* hardware faults: the push-buffer Get pointer the channel reported (the
                                      engine turns it into a method window), 0 when unknown */
} vgt_backend_event;

enum vgt_backend_event_kind {
    VGT_BEV_FAULT = 1,             /* an access outside the memory map */
    VGT_BEV_UNSUPPORTED = 2,       /* an operation the backend does not model (block-linear copy, ...) */
    VGT_BEV_DIAG = 3,              /* a push-buffer decoder diagnostic */
    VGT_BEV_BLOCKED = 4,           /* a channel waits on a semaphore acquire */
    VGT_BEV_UNBLOCKED = 5,         /* ... and resumed */
    VGT_BEV_MACRO = 6,             /* an MME macro ended with a hardware error class */
    VGT_BEV_LIMIT = 7,             /* a method or queue limit cut the work short */
};

typedef void (*vgt_backend_event_fn)(void *ctx, const vgt_backend_event *ev);

/* Lane 3 (VGT_CAP_LANE_CUDA): the operations of a backend that forwards CUDA driver API work through a
 * CUDA driver (backend/cuda). Handles (modules, functions) are the backend's, as u64; addresses are the
 * backend's device addresses. Each operation completes before it returns (the backend synchronizes), so
 * what the engine reads back is what the work left. */
typedef struct vgt_backend_cuda_ops {
    /* Load a module image (fatbin, cubin, PTX) and look a function up in it by its mangled name. */
    vgt_status (*module_load)(vgt_backend *b, const void *image, uint64_t len, uint64_t *module, vgt_error *err);
    vgt_status (*function)(vgt_backend *b, uint64_t module, const char *name, uint64_t *fn, vgt_error *err);
    /* A module global (__constant__ / __device__ variable) by its name: its device address and size. */
    vgt_status (*global)(vgt_backend *b, uint64_t module, const char *name, uint64_t *dptr, uint64_t *size,
                         vgt_error *err);
    /* The unit of reserve: device address ranges are reserved and mapped in multiples of it. */
    uint64_t (*granularity)(vgt_backend *b);
    /* Device memory for [va, va+size) (va and size multiples of the granularity): at va itself when the
     * driver lets us reserve it there, else wherever it can; *got says where (== va: kept). */
    vgt_status (*reserve)(vgt_backend *b, uint64_t va, uint64_t size, uint64_t *got, vgt_error *err);
    vgt_status (*write)(vgt_backend *b, uint64_t dst, const void *src, uint64_t len, vgt_error *err);
    vgt_status (*read)(vgt_backend *b, uint64_t src, void *dst, uint64_t len, vgt_error *err);
    vgt_status (*copy)(vgt_backend *b, uint64_t dst, uint64_t src, uint64_t len, vgt_error *err);
    /* value repeated every elem_size (1, 2, 4) bytes over len bytes */
    vgt_status (*memset)(vgt_backend *b, uint64_t dst, uint32_t value, uint32_t elem_size, uint64_t len, vgt_error *err);
    /* A kernel launch with its packed parameter buffer, then a synchronization (a launch failure or a fault
     * comes back here). */
    vgt_status (*launch)(vgt_backend *b, uint64_t fn, const uint32_t grid[3], const uint32_t block[3], uint32_t shared,
                         const void *params, uint32_t params_len, int cooperative, vgt_error *err);
} vgt_backend_cuda_ops;

/* Every member is required of a backend whose probe can succeed, except produced, write_log_reset and
 * write_log, which are NULL (or fail) when caps() lacks VGT_CAP_WRITE_LOG. A backend registered only to
 * say why it is unavailable needs name, summary, probe, caps and open. */
typedef struct vgt_backend_ops {
    const char *name;              /* "sim", "gpu", "cuda" */
    const char *summary;           /* one line for --help */
    /* Whether this backend can run here: VGT_OK, or VGT_E_UNSUPPORTED with the reason in err
     * ("not available in this build", "no GPU found: /dev/nvidiactl: No such file or directory"). */
    vgt_status (*probe)(vgt_error *err);
    uint32_t (*caps)(void);        /* enum vgt_backend_cap */
    /* What the summary must say about what this backend does not do (NULL when it does everything). */
    const char *limits_note;

    vgt_status (*open)(vgt_backend **b, const vgt_backend_config *cfg, vgt_error *err);
    void (*close)(vgt_backend *b);
    void (*set_event_handler)(vgt_backend *b, vgt_backend_event_fn fn, void *ctx);
    /* The record sequence number of the submission being executed, for positions in events. */
    void (*set_context)(vgt_backend *b, uint64_t seq);

    vgt_status (*vaspace_create)(vgt_backend *b, uint32_t *vas, vgt_error *err);
    vgt_status (*map)(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint32_t aperture, vgt_error *err);
    vgt_status (*unmap)(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, vgt_error *err);
    /* Optional (NULL: the backend cannot alias). Map [va, va+size) onto the storage currently mapped at
     * [src_va, src_va+size): one memory object mapped at two VAs (Vulkan maps its shader heap and
     * descriptor memory twice), so that what the GPU or the host writes through one VA is read through
     * the other. va and src_va must have the same offset in a 4 KiB page; the source range must be
     * mapped; the new range must not overlap a mapping. unmap(va, size) removes the alias only;
     * unmapping the source first leaves the alias's storage alive (released with its last mapping).
     * On failure (VGT_E_ARG, VGT_E_UNSUPPORTED, VGT_E_BACKEND) nothing is mapped: the engine then maps
     * separate storage and warns that the alias is not reproduced. */
    vgt_status (*map_alias)(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint64_t src_va,
                            vgt_error *err);
    /* Host (CPU-side) access. A host write clears the "produced by the GPU" state of those bytes. */
    vgt_status (*mem_write)(vgt_backend *b, uint32_t vas, uint64_t va, const void *src, uint64_t len, vgt_error *err);
    vgt_status (*mem_read)(vgt_backend *b, uint32_t vas, uint64_t va, void *dst, uint64_t len, vgt_error *err);

    vgt_status (*channel_create)(vgt_backend *b, const vgt_backend_channel_desc *d, uint32_t *ch, vgt_error *err);
    vgt_status (*object_create)(vgt_backend *b, uint32_t ch, uint32_t cls, uint32_t handle, vgt_error *err);
    /* Optional. Resume a channel cut out of a longer trace (format 1.1 CHANNEL_STATE): its subchannel
     * bindings, subdevice masks and push-buffer extended base, before its next submission. */
    vgt_status (*channel_state)(vgt_backend *b, uint32_t ch, const vgt_rec_channel_state *cs, vgt_error *err);
    /* Optional. Restore the engine state of a channel cut out of a longer trace (format 1.1
     * CHANNEL_METHODS): n method writes to the classes bound to their subchannels (by channel_state or
     * earlier submissions), executed as if pushed before the channel's next submission, in order, but not
     * counted as submitted work (counters.methods, submits). Call after channel_state, before submit. */
    vgt_status (*channel_methods)(vgt_backend *b, uint32_t ch, const vgt_state_method *m, uint32_t n, vgt_error *err);
    /* Hand GPFIFO entries (raw 64-bit words as in the ring) to a channel. Returns VGT_OK when the
     * entries were accepted, even if the channel then blocks on an acquire (see idle / events);
     * VGT_E_FAULT / VGT_E_LIMIT when the work was cut short. */
    vgt_status (*submit)(vgt_backend *b, uint32_t ch, const uint64_t *entries, uint32_t count, uint32_t flags,
                         vgt_error *err);
    /* Wait until the 4- or 8-byte value at va satisfies value (>= unsigned). VGT_E_TIMEOUT naming the
     * value found when it does not within timeout_ns (sim: when no channel can make progress). */
    vgt_status (*sem_wait)(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t value, uint32_t size,
                           uint64_t timeout_ns, vgt_error *err);
    /* Run every channel as far as it can go; VGT_E_TIMEOUT naming each channel still blocked (and on
     * what) when some cannot finish. */
    vgt_status (*idle)(vgt_backend *b, uint64_t timeout_ns, vgt_error *err);
    /* Optional. Called once, before the first submission: set up now what would otherwise be set up
     * lazily at each channel's first submission (hardware: the channels whose engine objects are known),
     * as the captured program did before its first submission, so that it stays out of the replay's
     * timing. A failure is not fatal: the channel is set up at its first submission as before. */
    void (*prepare)(vgt_backend *b);

    /* Bookkeeping of GPU writes (VGT_CAP_WRITE_LOG). produced: mask[i] = 1 when byte va+i holds a
     * value the GPU produced deterministically (a semaphore payload, an upload, a copy) and no host
     * write replaced since. write_log: the ranges written since the last write_log_reset. */
    vgt_status (*produced)(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err);
    /* Optional (NULL: every byte is what the device holds). mask[i] = 1 when the backend knows byte va+i:
     * 0 where it did not model what wrote it (sim: shaders it does not execute). */
    vgt_status (*known)(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err);
    void (*write_log_reset)(vgt_backend *b);
    const vgt_backend_write *(*write_log)(vgt_backend *b, uint32_t *count);

    void (*counters)(vgt_backend *b, vgt_backend_counters *out);
    /* Lane 3: the CUDA driver operations (NULL for the backends without VGT_CAP_LANE_CUDA). */
    const vgt_backend_cuda_ops *cuda;
} vgt_backend_ops;

/* ---- the table of backends ---- */
uint32_t vgt_backend_count(void);
const vgt_backend_ops *vgt_backend_at(uint32_t i);
const vgt_backend_ops *vgt_backend_find(const char *name);   /* NULL when no backend has that name */
/* The backend to use when none is named: the GPU when its probe succeeds, else sim. *why receives the
 * reason the GPU was not chosen (empty when it was). */
const vgt_backend_ops *vgt_backend_auto(char *why, uint32_t why_size);

/* The backends themselves (for tests that want one directly). vgt_backend_gpu is defined by
 * backend/gpu/backend_gpu.c (the H200 through RM/UVM); its probe
 * says "no NVIDIA GPU" where there is none. vgt_backend_cuda (backend/cuda) loads libcuda at run time
 * (VGT_CUDA_LIB names another library: tests use a fake one); its probe refuses where there is none. */
extern const vgt_backend_ops vgt_backend_sim;
extern const vgt_backend_ops vgt_backend_gpu;
extern const vgt_backend_ops vgt_backend_cuda;

#ifdef __cplusplus
}
#endif
#endif
