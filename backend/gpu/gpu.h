/* gpu.h: a small user-space client of the NVIDIA kernel driver (RM and UVM ioctls only: no libcuda,
 * no NVIDIA headers), the layer under the `gpu` backend. It opens the GPU, owns one UVM-registered GPU
 * VA space, places allocations at the GPU VAs the caller names, creates channels with engine objects,
 * submits GPFIFO entries through USERD and the usermode doorbell, waits on semaphores with timeouts and
 * watches each channel's error notifier.
 *
 *     vgt_gpu *g;
 *     vgt_error err;
 *     if (vgt_gpu_open(NULL, &g, &err) != VGT_OK)      // "no NVIDIA GPU: /dev/nvidiactl not found"
 *         return fail(&err);
 *     vgt_gpu_mem *m;  vgt_gpu_chan *c;
 *     VGT_TRY(vgt_gpu_mem_alloc(g, VGT_GPU_SYSMEM, 0x200000000, 1 << 20, &m, &err));
 *     VGT_TRY(vgt_gpu_chan_create(g, NULL, &c, &err));                  // C86F + CBC0 C8B5 CB97 A140 902D
 *     ... write a push buffer with vgt_gpu_write() or through vgt_gpu_mem_cpu() ...
 *     VGT_TRY(vgt_gpu_submit_pb(c, 0x200000000, ndwords, &err));
 *     VGT_TRY(vgt_gpu_wait_sem32(c, 0x200001000, 0xcafe, VGT_GPU_WAIT_EQ, 2000, &err));
 *     vgt_gpu_close(g);                                                  // frees everything
 *
 * Invariants
 *   - Every object and allocation belongs to one root client; vgt_gpu_close() (also called at exit for
 *     sessions left open) frees the client, which frees the whole tree in RM. On a fatal signal the
 *     handler frees the root client and closes the fds (syscalls only), then re-raises the signal.
 *   - Allocations never overlap each other or the backend's own reserved range (infra_va); reads and
 *     writes are refused unless they lie inside one allocation: only our own memory is touched.
 *   - Every wait has a timeout and, while it waits, watches the channel's error notifier: an RM error
 *     (robust-channel code, e.g. 31 = MMU fault) ends the wait with VGT_E_FAULT naming the channel, the
 *     code, GPGet/GPPut and the push-buffer Get pointer (the method window that was running).
 *   - Errors name the ioctl, the handle(s) and the RM status (number and name).
 *
 * Not thread-safe: one thread drives one vgt_gpu.
 */
#ifndef VGT_GPU_CLIENT_H
#define VGT_GPU_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vgt/error.h"
#include "vgt/nv_pushbuf.h"
#include "vgt/pbwriter.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vgt_gpu vgt_gpu;
typedef struct vgt_gpu_mem vgt_gpu_mem;
typedef struct vgt_gpu_chan vgt_gpu_chan;

/* Hopper classes the channel code knows (DOC classes/: host, compute, dma-copy, 3d, memory-to-memory). */
enum {
    VGT_GPU_CLASS_AMPERE_CHANNEL = 0xc56f,   /* AMPERE_CHANNEL_GPFIFO_A: the Vulkan driver's, also on Hopper */
    VGT_GPU_CLASS_HOPPER_CHANNEL = 0xc86f,   /* HOPPER_CHANNEL_GPFIFO_A: CUDA's */
    VGT_GPU_CLASS_HOPPER_COMPUTE = 0xcbc0,   /* HOPPER_COMPUTE_A */
    VGT_GPU_CLASS_HOPPER_COPY = 0xc8b5,      /* HOPPER_DMA_COPY_A */
    VGT_GPU_CLASS_HOPPER_3D = 0xcb97,        /* HOPPER_A */
    VGT_GPU_CLASS_I2M = 0xa140,              /* KEPLER_INLINE_TO_MEMORY_B */
    VGT_GPU_CLASS_TWOD = 0x902d,             /* FERMI_TWOD_A */
};

/* Named maxima: checked before anything is allocated. */
#define VGT_GPU_MAX_ALLOCS 4096u
#define VGT_GPU_MAX_ALLOC_BYTES (64ull << 30)
#define VGT_GPU_MAX_CHANNELS 32u   /* live channels: a CUDA context alone opens 20 */
#define VGT_GPU_MAX_ENGINES 8u
#define VGT_GPU_MAX_GPFIFO_ENTRIES 4096u   /* the ring lives in the channel's 64 KiB infra slot */
#define VGT_GPU_MAX_CLASSES 200u
#define VGT_GPU_PAGE 0x1000ull

/* The backend's own range: channel rings, USERD and fence push buffers (one 64 KiB slot per channel)
 * and, above them, the VA ranges UVM maps each channel's context buffers into. It must lie below
 * 2^40: GPFIFO entries carry 40-bit push-buffer VAs, and on Hopper the 3D unit reads its context
 * buffers with 40-bit VAs (only compute units take 57-bit ones: OGKM uvm_hopper.c max_channel_va; on
 * the H200 a channel range at 2^48 faulted in HUBCLIENT_SCC_NB at the address cut to 40 bits).
 * Default 960 GiB: below 2^40, far above the low ranges drivers allocate from (CUDA's
 * 0x2_0000_0000 region, RM's bottom-up VAs); lane 1 moves it with infra_va when a trace needs it. */
#define VGT_GPU_DEFAULT_INFRA_VA 0xf000000000ull
#define VGT_GPU_CHANNEL_VA_LIMIT (1ull << 40)
#define VGT_GPU_INFRA_SLOT 0x10000ull          /* per channel: ring + USERD */
#define VGT_GPU_CTX_RANGE 0x20000000ull        /* per channel: UVM_REGISTER_CHANNEL range, 512 MiB */
#define VGT_GPU_CTX_BASE_OFFSET 0x100000000ull /* ctx ranges start at infra_va + 4 GiB */
#define VGT_GPU_INFRA_SPAN (VGT_GPU_CTX_BASE_OFFSET + VGT_GPU_MAX_CHANNELS * VGT_GPU_CTX_RANGE)

/* One line of the ioctl trace (no newline); the library never prints. */
typedef void (*vgt_gpu_log_fn)(void *user, const char *line);

typedef struct vgt_gpu_options {
    const char *dev_dir;        /* NULL: "/dev" (tests point it at a folder without nvidiactl) */
    uint64_t infra_va;          /* 0: VGT_GPU_DEFAULT_INFRA_VA; 4 KiB aligned */
    bool no_signal_teardown;    /* true: install no signal handlers (the caller tears down) */
    vgt_gpu_log_fn log;         /* may be NULL */
    void *log_user;
} vgt_gpu_options;

typedef struct vgt_gpu_info {
    uint8_t uuid[16];
    uint32_t pci_domain, pci_bus, pci_slot, pci_function;
    uint16_t vendor_id, device_id;
    uint32_t minor;             /* /dev/nvidiaN */
    uint32_t usermode_class;
    uint32_t nclasses;
    uint32_t classes[VGT_GPU_MAX_CLASSES];
    char driver[128];           /* first line of /proc/driver/nvidia/version, "" if unreadable */
} vgt_gpu_info;

/* Opens the nodes, root client, device, subdevice, usermode page, FERMI_VASPACE_A owned by UVM
 * (UVM_REGISTER_GPU + UVM_REGISTER_GPU_VASPACE). Without a GPU: VGT_E_BACKEND, "no NVIDIA GPU:
 * <dir>/nvidiactl not found". Everything is undone on failure. */
vgt_status vgt_gpu_open(const vgt_gpu_options *opt, vgt_gpu **out, vgt_error *err);
/* Frees every channel, allocation and RM object, unregisters from UVM, closes the fds. g may be NULL. */
void vgt_gpu_close(vgt_gpu *g);
const vgt_gpu_info *vgt_gpu_info_get(const vgt_gpu *g);
bool vgt_gpu_has_class(const vgt_gpu *g, uint32_t cls);

/* ---- memory at fixed GPU VAs --------------------------------------------------------------------- */
typedef enum vgt_gpu_mem_kind {
    VGT_GPU_SYSMEM = 1,         /* NV01_MEMORY_SYSTEM (0x3e), CPU-mapped through nvidiactl */
    VGT_GPU_VIDMEM = 2,         /* NV01_MEMORY_LOCAL_USER (0x40), CPU-mapped through BAR1 */
} vgt_gpu_mem_kind;

/* Allocates size bytes (4 KiB multiple, at most VGT_GPU_MAX_ALLOC_BYTES) and maps them at GPU VA va
 * (4 KiB aligned): UVM_CREATE_EXTERNAL_RANGE, RM_MAP_MEMORY_DMA with DMA_OFFSET_FIXED,
 * UVM_MAP_EXTERNAL_ALLOCATION; plus a CPU mapping. VGT_E_ARG when the range overlaps an existing
 * allocation or the infra range (the message names which), VGT_E_BACKEND for RM/UVM refusals. */
vgt_status vgt_gpu_mem_alloc(vgt_gpu *g, vgt_gpu_mem_kind kind, uint64_t va, uint64_t size, vgt_gpu_mem **out,
                             vgt_error *err);
/* Maps [va, va+size) (4 KiB aligned, free) onto the memory already mapped at [src_va, src_va+size): the
 * same RM memory object mapped a second time (UVM_CREATE_EXTERNAL_RANGE, RM_MAP_MEMORY_DMA of the same
 * handle at the source's offset, UVM_MAP_EXTERNAL_ALLOCATION with that offset), its CPU view the
 * source's. Freeing either mapping keeps the other working; the memory object goes with the last. */
vgt_status vgt_gpu_mem_alias(vgt_gpu *g, uint64_t va, uint64_t size, uint64_t src_va, vgt_gpu_mem **out,
                             vgt_error *err);
vgt_status vgt_gpu_mem_free(vgt_gpu *g, vgt_gpu_mem *m, vgt_error *err);
/* Clears [va, va+size) (4-byte multiples, inside our allocations) to zero with the copy engine, on a
 * channel of the backend's own, and waits for it (rm_zero.c says why). */
vgt_status vgt_gpu_zero(vgt_gpu *g, uint64_t va, uint64_t size, vgt_error *err);
uint64_t vgt_gpu_mem_va(const vgt_gpu_mem *m);
uint64_t vgt_gpu_mem_size(const vgt_gpu_mem *m);
volatile void *vgt_gpu_mem_cpu(const vgt_gpu_mem *m);
/* The allocation holding [va, va+len), or NULL. */
vgt_gpu_mem *vgt_gpu_mem_find(vgt_gpu *g, uint64_t va, uint64_t len);
/* Copy through the CPU mapping; VGT_E_FAULT when the range is not inside one of our allocations. */
vgt_status vgt_gpu_write(vgt_gpu *g, uint64_t va, const void *src, size_t len, vgt_error *err);
vgt_status vgt_gpu_read(vgt_gpu *g, uint64_t va, void *dst, size_t len, vgt_error *err);
vgt_status vgt_gpu_fill32(vgt_gpu *g, uint64_t va, uint32_t value, size_t nwords, vgt_error *err);

/* ---- channels ------------------------------------------------------------------------------------ */
typedef struct vgt_gpu_chan_options {
    uint32_t channel_class;         /* 0: HOPPER_CHANNEL_GPFIFO_A; C56F also accepted */
    uint32_t gpfifo_entries;        /* 0: 1024; a power of two, 2..VGT_GPU_MAX_GPFIFO_ENTRIES and the slot */
    uint32_t nengines;              /* 0 with engines NULL: CBC0, C8B5, CB97, A140, 902D */
    const uint32_t *engines;        /* engine object classes, allocated in this order */
    bool async_subcontext;          /* false: sync subcontext (VEID 0), required for 3D */
    uint32_t submit_timeout_ms;     /* waiting for ring space; 0: 2000 */
    /* Join this live channel's TSG and context share instead of making a new group: channels of one
     * group share one engine context (MME RAM, shader local memory, class state), as the capture's
     * channels of one KEPLER_CHANNEL_GROUP_A did. NULL: a group of its own. async_subcontext is then
     * the group's, unless own_subcontext. */
    vgt_gpu_chan *group_with;
    /* With group_with: a FERMI_CONTEXT_SHARE_A of its own in that TSG (sync or async per
     * async_subcontext), i.e. its own subcontext (VEID) of the group's context, as a capture channel
     * with its own context share had (Vulkan's compute queue: its MME and compute state are separate
     * from the 3D channel's although both run in one TSG). */
    bool own_subcontext;
    /* NVOS04 flags for the channel allocation; only RM_CHANNEL_FLAGS_PLACEMENT (runqueue, group thread)
     * are passed on: a capture's async-subcontext compute channel was on runqueue 1. */
    uint32_t alloc_flags;
} vgt_gpu_chan_options;

/* Where a channel of a capture channel group goes (backend_gpu.c realises channels with it). */
typedef enum vgt_gpu_placement {
    VGT_GPU_PLACE_OWN_TSG = 0,      /* no live peer: a TSG of its own with a sync context share (VEID 0) */
    VGT_GPU_PLACE_SHARE,            /* the peer's TSG and context share (same captured share, or none known) */
    VGT_GPU_PLACE_SUBCONTEXT,       /* the peer's TSG, an async context share of its own (own VEID) */
    VGT_GPU_PLACE_SHARE_SYNC_TAKEN, /* wants its own share but needs VEID 0 (3D), which a peer holds: SHARE */
    VGT_GPU_PLACE_SUBCONTEXT_SYNC,  /* the peer's TSG, a sync context share of its own (VEID 0 still free:
                                       the peers are all async) */
} vgt_gpu_placement;

/* A live channel of the same capture group, as the planner sees it. */
typedef struct vgt_gpu_peer {
    uint32_t context_share;         /* its captured context share (0: unknown) */
    bool async;                     /* it runs on an async context share of its own */
} vgt_gpu_peer;

/* The placement of a channel with captured context share `share` (0: unknown) among the group's live
 * peers; needs_sync: it has a class only the sync subcontext runs (3D, 2D, I2M). *peer: the index of the
 * peer to join (SHARE*: one with the same share, else one on the sync share; SUBCONTEXT*: any). Pure.
 * A group's first channel (OWN_TSG) takes the sync share unless it needs none and a later channel of
 * the group with another share does (backend_gpu.c asks for async then, so VEID 0 stays free). */
vgt_gpu_placement vgt_gpu_place(uint32_t share, bool needs_sync, const vgt_gpu_peer *peers, uint32_t npeers,
                                uint32_t *peer);
/* True for engine classes that only run on the sync subcontext (VEID 0): 3D, 2D, inline-to-memory. */
bool vgt_gpu_class_needs_sync(uint32_t cls);

/* TSG (or group_with's), context share, error notifier, channel (ring + USERD in the infra slot), engine objects,
 * work-submit token, UVM_REGISTER_CHANNEL, schedule. An engine class the GPU does not list is
 * VGT_E_UNSUPPORTED. */
vgt_status vgt_gpu_chan_create(vgt_gpu *g, const vgt_gpu_chan_options *opt, vgt_gpu_chan **out, vgt_error *err);
void vgt_gpu_chan_destroy(vgt_gpu_chan *c);
uint32_t vgt_gpu_chan_class(const vgt_gpu_chan *c);
uint32_t vgt_gpu_chan_token(const vgt_gpu_chan *c);
/* The RM handle of the engine object of class cls on this channel, 0 if none. */
uint32_t vgt_gpu_chan_engine(const vgt_gpu_chan *c, uint32_t cls);

/* GPFIFO entry (the codec of vgt/nv_pushbuf.h): push buffer at va (4-byte aligned, below 2^40),
 * ndwords < 2^21. flags: VGT_GPU_GP_* below. */
#define VGT_GPU_GP_MAIN 0u
#define VGT_GPU_GP_SUBROUTINE VGT_NV_GP_SUBROUTINE   /* LEVEL */
#define VGT_GPU_GP_SYNC VGT_NV_GP_SYNC               /* SYNC: wait for the previous entries' pushes to finish */
uint64_t vgt_gpu_gp_entry(uint64_t va, uint32_t ndwords, unsigned flags);

/* Append entries to the ring, publish GPPut in USERD and ring the doorbell (barriers between).
 * Waits (submit_timeout_ms) for ring space; VGT_E_FAULT if the channel has reported an error. */
vgt_status vgt_gpu_submit(vgt_gpu_chan *c, const uint64_t *entries, uint32_t n, vgt_error *err);
vgt_status vgt_gpu_submit_pb(vgt_gpu_chan *c, uint64_t va, uint32_t ndwords, vgt_error *err);

typedef enum vgt_gpu_wait_op {
    VGT_GPU_WAIT_EQ = 0,        /* *va == value */
    VGT_GPU_WAIT_GEQ = 1,       /* (int32_t)(*va - value) >= 0: a wrapping counter */
} vgt_gpu_wait_op;

/* Poll the 32-bit word at va (in one of our allocations) until the condition holds; VGT_E_TIMEOUT
 * after timeout_ms, VGT_E_FAULT as soon as the channel's error notifier reports an error. Both
 * messages carry the channel state (GPGet/GPPut, push-buffer Get, last value read). */
vgt_status vgt_gpu_wait_sem32(vgt_gpu_chan *c, uint64_t va, uint32_t value, vgt_gpu_wait_op op,
                              uint32_t timeout_ms, vgt_error *err);
/* Submit a host semaphore release (with WFI) into the channel's own slot and wait for it: every
 * earlier submission on the channel has then finished. VGT_E_TIMEOUT / VGT_E_FAULT as above. */
vgt_status vgt_gpu_chan_fence(vgt_gpu_chan *c, uint32_t timeout_ms, vgt_error *err);
/* The two halves of vgt_gpu_chan_fence: submit the release (no wait), and wait for the last release
 * issued (a channel blocked on an acquire can be polled again later without a new fence). */
vgt_status vgt_gpu_chan_fence_issue(vgt_gpu_chan *c, vgt_error *err);
vgt_status vgt_gpu_chan_fence_wait(vgt_gpu_chan *c, uint32_t timeout_ms, vgt_error *err);
/* Wait until the GPU has fetched every submitted entry (GPGet == GPPut). */
vgt_status vgt_gpu_wait_fetched(vgt_gpu_chan *c, uint32_t timeout_ms, vgt_error *err);

typedef struct vgt_gpu_chan_state {
    uint32_t gp_get, gp_put;        /* ring indices: GPU's and ours */
    uint64_t pb_get, pb_put;        /* push-buffer pointers the PBDMA reports in USERD (40-bit VAs) */
    uint64_t submitted;             /* entries submitted so far */
    bool error;                     /* the error notifier was written */
    uint32_t error_code;            /* its info32: robust-channel error (see vgt_gpu_rc_name) */
    uint16_t error_info16, error_status;
    uint64_t error_time_ns;
} vgt_gpu_chan_state;

void vgt_gpu_chan_state_get(const vgt_gpu_chan *c, vgt_gpu_chan_state *out);
/* VGT_OK, or VGT_E_FAULT with the notifier's error in the message. */
vgt_status vgt_gpu_chan_check(const vgt_gpu_chan *c, vgt_error *err);

/* Names: RM status ("NV_ERR_INVALID_ARGUMENT"), robust-channel error ("MMU fault"); never NULL. */
const char *vgt_gpu_rm_status_name(uint32_t status);
const char *vgt_gpu_rc_name(uint32_t code);
/* Why RM refuses a control to this client before running it, for the statuses that mean that
 * (insufficient permissions, test-only code, not supported, privileged security); NULL for any other
 * status (the control ran and failed, or the call was malformed). */
const char *vgt_gpu_rm_refusal(uint32_t status);
/* The usermode page's nanosecond timer (PTIMER), 0 when not mapped. */
uint64_t vgt_gpu_timer_ns(const vgt_gpu *g);

/* ---- push buffers -------------------------------------------------------------------------------- */
/* The backend's own submissions and the self-test write their methods with vgt/pbwriter.h (vgt_pbw). */

/* ---- resuming a channel cut out of a longer trace (format 1.1; rm_preamble.c) ---------------------- */
#define VGT_GPU_PREAMBLE_BYTES 0x400000ull   /* per channel: state push buffers between two fences */
/* SET_OBJECT for every subchannel with a class (CHANNEL_STATE's bindings; 0 = none). */
void vgt_gpu_pb_bindings(vgt_pbw *pb, const uint32_t subch_class[8]);
/* The CHANNEL_METHODS writes, in order: runs of one subchannel with consecutive methods become one INC
 * header, runs writing one method again and again (MME uploads) one NON_INC header. m[i].method must be
 * a multiple of 4 at most 0x3ffc and subch < 8, else the writer is marked bad (vgt_pbw_check). */
struct vgt_state_method;
void vgt_gpu_pb_state_methods(vgt_pbw *pb, const struct vgt_state_method *m, uint32_t n);
/* Dwords vgt_gpu_pb_bindings + vgt_gpu_pb_state_methods need at most for n writes. */
uint64_t vgt_gpu_pb_state_bound(uint32_t n);
/* Copy dw[0..n) into the channel's state window and submit it (a subroutine entry) before whatever is
 * submitted next. A full window is recycled after a fence; VGT_E_LIMIT when n dwords exceed it. */
vgt_status vgt_gpu_chan_run_pb(vgt_gpu_chan *c, const uint32_t *dw, uint32_t n, vgt_error *err);

#ifdef __cplusplus
}
#endif
#endif
