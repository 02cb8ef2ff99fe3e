/* gpu_internal.h: the state of a gpu session and the ioctl layer the object, memory, channel and
 * submit files share. Internal to backend/gpu.
 *
 * Session lifecycle (each arrow names the function that performs it):
 *
 *   closed --vgt_gpu_open()--> open --vgt_gpu_chan_create()/vgt_gpu_mem_alloc()--> open (+objects)
 *     open --vgt_gpu_close() / atexit / teardown_signal()--> closed
 *   Inside open: objects_open() = nodes -> root client -> UVM init -> card -> device -> subdevice ->
 *   virtual-memory object -> class list -> usermode page -> VA space -> GPU UUID -> UVM GPU + VA space.
 *   objects_close() undoes in reverse order; freeing the root client frees every RM object below it.
 */
#ifndef VGT_GPU_INTERNAL_H
#define VGT_GPU_INTERNAL_H

#include <stdarg.h>

#include "gpu.h"
#include "rm_abi.h"

struct vgt_gpu_mem {
    vgt_gpu_mem_kind kind;
    uint32_t handle;
    uint64_t va, size;
    volatile uint8_t *cpu;       /* CPU mapping of the whole allocation */
    bool uvm_range;              /* UVM_CREATE_EXTERNAL_RANGE done: UVM_FREE on release */
    bool internal;               /* the backend's own (ring/USERD); not visible to vgt_gpu_mem_find */
    /* Aliases (vgt_gpu_mem_alias): one RM memory object mapped at a second VA. An alias shares its
     * owner's handle and CPU mapping (cpu points at owner->cpu + offset) and never frees them; the
     * owner's memory object and CPU mapping go with the last of its mappings, whichever that is. */
    vgt_gpu_mem *owner;          /* an alias: the allocation whose memory it maps again; NULL otherwise */
    uint64_t offset;             /* an alias: where its range starts in the owner's memory */
    uint32_t refs;               /* an owner: aliases still mapping its memory */
    bool dma_mapped;             /* an alias: its own RM_MAP_MEMORY_DMA, undone on release */
    bool detached;               /* an owner unmapped while aliases live: out of mems, storage kept */
};

/* A TSG and its context share, shared by the channels created into it (vgt_gpu_chan_options.group_with);
 * freed with its last channel. */
typedef struct gpu_group {
    uint32_t tsg, ctxshare;
    uint32_t refs;               /* channels in it */
} gpu_group;

struct vgt_gpu_chan {
    vgt_gpu *gpu;
    uint32_t index;              /* slot in gpu->chans and in the infra range */
    uint32_t cls;
    gpu_group *group;            /* TSG + context share, possibly shared with other channels */
    uint32_t tsg, ctxshare, notifier_mem, channel;   /* tsg, ctxshare: copies of group's */
    uint32_t engine_class[VGT_GPU_MAX_ENGINES], engine_handle[VGT_GPU_MAX_ENGINES];
    uint32_t nengines;
    uint32_t token;
    bool uvm_registered;
    vgt_gpu_mem *infra;          /* ring at +0, USERD at +ring bytes (512-aligned) */
    volatile uint64_t *ring;
    volatile uint32_t *userd;
    volatile uint8_t *notifier;  /* CPU mapping of the error notifier */
    uint32_t entries, put;
    uint64_t submitted;
    uint32_t submit_timeout_ms;
    uint32_t fence_value;        /* last payload released by vgt_gpu_chan_fence */
    vgt_gpu_mem *preamble;       /* state push buffers (rm_preamble.c), allocated at the first one */
    uint32_t preamble_used;      /* bytes of it handed to the GPU since the last fence */
};

struct vgt_gpu {
    vgt_gpu_options opt;
    char dev_dir[256];
    int fd_ctl, fd_uvm, fd_uvm_mm, fd_dev;
    uint32_t client, device, subdevice, virtmem, usermode, vaspace;
    uint32_t gpu_id, device_instance;
    bool uvm_gpu, uvm_vaspace;
    volatile uint8_t *usermode_cpu;
    vgt_gpu_info info;
    vgt_gpu_mem **mems;
    uint32_t nmems, capmems;
    uint32_t detached_owners;    /* owners unmapped whose memory aliases still use (rm_memory.c) */
    vgt_gpu_chan *chans[VGT_GPU_MAX_CHANNELS];
    vgt_gpu_chan *zero_chan;     /* the copy-engine channel that clears new allocations (rm_zero.c) */
    int registry_slot;           /* index in the teardown registry, -1 if none */
};

/* ---- ioctl layer (rm_ioctl.c): each fills err with the ioctl's name, handles and RM status ------- */
vgt_status rm_alloc(vgt_gpu *g, uint32_t parent, uint32_t cls, void *params, uint32_t size, const char *what,
                    uint32_t *handle, vgt_error *err);
vgt_status rm_control(vgt_gpu *g, uint32_t object, uint32_t cmd, void *params, uint32_t size, const char *what,
                      vgt_error *err);
/* rm_control that also hands back RM's status (0 when the ioctl itself failed: err says errno). */
vgt_status rm_control_status(vgt_gpu *g, uint32_t object, uint32_t cmd, void *params, uint32_t size,
                             const char *what, uint32_t *rm_status, vgt_error *err);
vgt_status rm_free(vgt_gpu *g, uint32_t parent, uint32_t object, const char *what, vgt_error *err);
/* RM_MAP_MEMORY + mmap of a fresh fd: nvidiactl for sysmem, a registered /dev/nvidiaN for BAR memory. */
vgt_status rm_map_cpu(vgt_gpu *g, uint32_t memory, uint64_t size, bool bar, const char *what,
                      volatile uint8_t **out, vgt_error *err);
vgt_status rm_map_dma_fixed(vgt_gpu *g, uint32_t memory, uint64_t offset, uint64_t va, uint64_t size,
                            const char *what, vgt_error *err);
/* The DMA mapping of memory at va goes; failures are logged only (release goes on). */
void rm_unmap_dma(vgt_gpu *g, uint32_t memory, uint64_t va, uint64_t size);
vgt_status rm_read_cards(vgt_gpu *g, rm_card_info *cards, uint32_t n, vgt_error *err);
vgt_status rm_open_registered_dev(vgt_gpu *g, int *fd, vgt_error *err);
/* UVM ioctl on fd; status points at the params' status field. */
vgt_status uvm_call(vgt_gpu *g, int fd, unsigned long req, void *params, const uint32_t *status, const char *what,
                    vgt_error *err);
vgt_status node_open(vgt_gpu *g, const char *name, int *fd, vgt_error *err);
void gpu_log(const vgt_gpu *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- objects (rm_objects.c) ---------------------------------------------------------------------- */
vgt_status objects_open(vgt_gpu *g, vgt_error *err);
void objects_close(vgt_gpu *g);

/* ---- memory (rm_memory.c) ------------------------------------------------------------------------ */
/* The backend's own sysmem (ring + USERD); excluded from vgt_gpu_mem_find. */
vgt_status mem_alloc_internal(vgt_gpu *g, uint64_t va, uint64_t size, vgt_gpu_mem **out, vgt_error *err);
/* Release every allocation (session teardown). */
void mem_release_all(vgt_gpu *g);
/* Which allocation's memory object [va, va+size) maps, and at what offset in it: an alias resolves to
 * its owner. VGT_E_NOT_FOUND when no allocation holds the range. Pure (no ioctl). */
vgt_status mem_alias_source(vgt_gpu *g, uint64_t va, uint64_t size, vgt_gpu_mem **owner, uint64_t *offset,
                            vgt_error *err);
/* A sysmem notifier object, CPU-mapped but not GPU-mapped. */
vgt_status mem_alloc_notifier(vgt_gpu *g, uint32_t *handle, volatile uint8_t **cpu, vgt_error *err);

/* ---- teardown registry (rm_teardown.c) ----------------------------------------------------------- */
void teardown_register(vgt_gpu *g);
void teardown_unregister(vgt_gpu *g);

/* ---- submit helpers (rm_submit.c) ---------------------------------------------------------------- */
double mono_ms(void);
/* "channel 0xc86f (handle 0x..): GPGet 3 GPPut 4, pb Get 0x.., ..." for messages. */
void chan_describe(const vgt_gpu_chan *c, char *buf, size_t cap);

#define NOTIFIER_BYTES 0x10000u   /* the size the probe proved; RM reads the first records */
#define NOTIFIER_CLEAR_BYTES 0x100u

/* Layout of a channel's infra slot (VGT_GPU_INFRA_SLOT bytes of sysmem at infra_va + index * slot):
 * the GPFIFO ring from 0 (at most 0x8000 bytes: 4096 entries), USERD, the fence's push buffer and
 * the fence's semaphore word. */
#define INFRA_RING_MAX 0x8000u
#define INFRA_USERD_OFF 0x8000u
#define INFRA_FENCE_PB_OFF 0x9000u
#define INFRA_FENCE_PB_DWORDS 64u
#define INFRA_FENCE_SEM_OFF 0xa000u
/* State push buffers (format 1.1 slices: rm_preamble.c): one VGT_GPU_PREAMBLE_BYTES window per live
 * channel inside the infra range, between the infra slots (32 x 64 KiB) and the context ranges (+4 GiB). */
#define INFRA_PREAMBLE_OFF 0x40000000ull

#endif
