/* capture_internal.h: the state behind vgt_capture (capture.h), the capture's one registry. Shared by the
 * files of capture/embed; every function here runs with c->mu held (the public calls take it).
 *
 *   capture_session.c   open/close, fork safety, records written on the host's behalf, finish
 *   capture_objects.c   RM objects (client, handle) -> parent, class, flags
 *   capture_maps.c      CPU and GPU mappings of memory objects -> views where they overlap
 *   capture_views.c     views (GPU VA ranges the capture can read), reads and MEMORY records
 *   capture_channels.c  channels: ring, USERD location, token, last GP_PUT
 *   capture_submit.c    doorbells -> GPFIFO_SUBMIT
 */
#ifndef VGT_CAPTURE_INTERNAL_H
#define VGT_CAPTURE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "vgt/capture.h"

typedef struct cap_channel {
    uint32_t client, handle, cls;
    uint64_t ring_va;
    uint32_t entries;
    uint32_t last_put;         /* GP_PUT of the previous submission (0 before the first) */
    uint64_t ext_base;         /* SET_PB_SEGMENT_EXTENDED_BASE: push-buffer VA bits 63:40 */
    int has_token;
    uint32_t token;
    uint32_t userd_memory;     /* USERD: this memory object of the channel's client, at this offset */
    uint64_t userd_offset;
    int infra_told;            /* the tracker heard of its ring and USERD (at the first doorbell) */
} cap_channel;

typedef struct cap_object {
    uint32_t client, handle, parent, cls;
    uint8_t used, flags;          /* flags: enum vgt_capture_object_flags */
    uint8_t gpu_mapped;           /* memory: a GPU mapping was made */
    uint32_t cpu_maps;            /* memory: CPU mappings made so far */
    uint64_t doorbells_at_gpu_map;   /* c->stats.doorbells at its first GPU mapping */
} cap_object;

typedef struct cap_cpu_map { uint32_t client, device, memory; uint64_t offset, length, cpu; int implicit; } cap_cpu_map;
typedef struct cap_gpu_map { uint32_t client, device, va_space, memory; uint64_t offset, length, gpu_va; } cap_gpu_map;

struct vgt_capture {
    vgt_writer *w;
    vgt_capture_options opt;
    vgt_capture_tracker tracker;
    pthread_mutex_t mu;
    _Atomic int finished;      /* vgt_capture_finish ran: nothing more is recorded */
    struct vgt_capture *next_open;   /* the list fork() walks (capture_session.c) */
    /* Views in the order they were added (a removed one's slot takes the last one), which is the order
     * the tracker hears of them going when several go at once; by_va indexes them sorted by gpu_va. */
    vgt_capture_view *views;
    uint32_t *by_va;
    uint32_t nviews, cap_views, cap_by_va;
    cap_channel *channels;
    uint32_t nchannels, cap_channels;
    cap_object *objects;       /* open addressing (capture_objects.c), allocated at the first object */
    uint32_t nobjects;
    cap_cpu_map *cmaps;
    uint32_t ncmaps, cap_cmaps;
    cap_gpu_map *gmaps;
    uint32_t ngmaps, cap_gmaps;
    uint8_t *scratch;          /* entries and segments of one submission */
    uint64_t scratch_size;
    vgt_segment *segs;
    uint32_t cap_segs;
    vgt_capture_stats stats;
    _Atomic uint64_t submits_written;   /* GPFIFO_SUBMIT records written (vgt_capture_submits) */
    /* The CPU addresses any CPU mapping or view ever covered, [cpu_lo, cpu_hi): only grows, written
     * under mu, read without it by vgt_capture_cpu_unmap's fast path (vgt_capture_cpu_may_cover). */
    _Atomic uint64_t cpu_lo, cpu_hi;
};
/* Widen c's CPU bounds to [cpu, cpu+length) (under c->mu). */
void cap_cpu_bounds_add(vgt_capture *c, uint64_t cpu, uint64_t length);

/* capture_session.c */
vgt_status cap_grow(void **arr, uint32_t *cap, uint32_t need, uint32_t elem, uint32_t max, const char *what,
                    vgt_error *err);
/* Lock c->mu; 0 when the capture is finished (then nothing is held). */
int cap_lock_live(vgt_capture *c);

/* capture_views.c */
uint64_t cap_read_locked(vgt_capture *c, uint64_t gpu_va, void *dst, uint64_t len);
/* A direct pointer to [gpu_va, gpu_va+len) when one host view holds all of it, else NULL. */
const void *cap_direct_locked(vgt_capture *c, uint64_t gpu_va, uint64_t len);
/* Add a view and tell the tracker (cls, zeroed: as vgt_capture_tracker.view_added). */
vgt_status cap_view_add(vgt_capture *c, const vgt_capture_view *v, uint32_t cls, int zeroed, vgt_error *err);
/* Tell the tracker, then remove views[i]. */
void cap_view_drop(vgt_capture *c, uint32_t i);

/* capture_objects.c */
cap_object *cap_object_find(vgt_capture *c, uint32_t client, uint32_t handle);

/* capture_maps.c */
/* CPU pointer for (client, memory, offset .. +length), or NULL when no CPU mapping covers it. */
void *cap_cpu_pointer(vgt_capture *c, uint32_t client, uint32_t memory, uint64_t offset, uint64_t length);
/* Forget the views, GPU mappings and own-pages CPU mapping of a freed memory object. */
void cap_memory_freed(vgt_capture *c, uint32_t client, uint32_t memory);
void cap_gpu_unmap_range(vgt_capture *c, uint64_t gpu_va, uint64_t length);

/* capture_submit.c: CHANNEL_PROGRESS of every channel whose USERD is mapped (vgt_capture_finish) */
void cap_progress_at_end_locked(vgt_capture *c);

/* capture_channels.c */
cap_channel *cap_channel_find(vgt_capture *c, uint32_t client, uint32_t handle);
cap_channel *cap_channel_by_token(vgt_capture *c, uint32_t token);
void cap_channel_forget(vgt_capture *c, uint32_t client, uint32_t handle);

#endif
