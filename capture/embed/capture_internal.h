/* capture_internal.h: the state behind vgt_capture (capture.h). Shared by the files of capture/embed. */
#ifndef VGT_CAPTURE_INTERNAL_H
#define VGT_CAPTURE_INTERNAL_H

#include <pthread.h>

#include "vgt/capture.h"

typedef struct cap_channel {
    uint32_t client, handle, cls;
    uint64_t ring_va;
    uint32_t entries;
    uint32_t last_put;         /* GP_PUT of the previous submission (0 before the first) */
    uint64_t ext_base;         /* SET_PB_SEGMENT_EXTENDED_BASE: push-buffer VA bits 63:40 */
    int has_token;
    uint32_t token;
} cap_channel;

struct vgt_capture {
    vgt_writer *w;
    vgt_capture_options opt;
    pthread_mutex_t mu;
    vgt_capture_view *views;   /* sorted by gpu_va, non-overlapping */
    uint32_t nviews, cap_views;
    cap_channel *channels;
    uint32_t nchannels, cap_channels;
    uint8_t *scratch;          /* entries and segments of one submission */
    uint64_t scratch_size;
    vgt_segment *segs;
    uint32_t cap_segs;
    vgt_capture_stats stats;
    /* A submission collected by vgt_capture_doorbell_begin, written by _end (c->mu held in between). */
    struct cap_pending {
        cap_channel *ch;
        uint32_t gp_put, count, nseg, flags;
        uint64_t total;
    } pending;
};

/* capture_views.c (callers hold c->mu) */
uint64_t cap_read_locked(vgt_capture *c, uint64_t gpu_va, void *dst, uint64_t len);
/* A direct pointer to [gpu_va, gpu_va+len) when one host view holds all of it, else NULL. */
const void *cap_direct_locked(vgt_capture *c, uint64_t gpu_va, uint64_t len);

/* capture_channels.c (callers hold c->mu) */
cap_channel *cap_channel_find(vgt_capture *c, uint32_t client, uint32_t handle);
cap_channel *cap_channel_by_token(vgt_capture *c, uint32_t token);

/* capture_session.c */
vgt_status cap_grow(void **arr, uint32_t *cap, uint32_t need, uint32_t elem, uint32_t max, const char *what,
                    vgt_error *err);

#endif
