/* capture_session.c: open/close of a capture, its fork safety, the records written on the host's behalf,
 * diagnostics and the end of the capture. */
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"

#define DEFAULT_SEGMENT_BYTES (8u << 20)
#define DEFAULT_SUBMIT_BYTES (48u << 20)

vgt_status cap_grow(void **arr, uint32_t *cap, uint32_t need, uint32_t elem, uint32_t max, const char *what,
                    vgt_error *err)
{
    if (need <= *cap) return VGT_OK;
    if (need > max) return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "capture: %u %s over the limit %u", need, what, max);
    uint32_t n = *cap ? *cap : 16;
    while (n < need) n = n > max / 2 ? max : n * 2;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "capture: out of memory for %u %s", n, what);
    *arr = p;
    *cap = n;
    return VGT_OK;
}

int cap_lock_live(vgt_capture *c)
{
    pthread_mutex_lock(&c->mu);
    if (!atomic_load(&c->finished)) return 1;
    pthread_mutex_unlock(&c->mu);
    return 0;
}

/* ---- fork: a child must never inherit a capture's mutex held by a thread that does not exist there.
 * fork() waits (prepare) until no thread is inside any open capture; both sides then release them, the
 * child by making them anew (nothing else can hold them there). */
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static vgt_capture *open_list;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&open_mu);
    for (vgt_capture *c = open_list; c; c = c->next_open) pthread_mutex_lock(&c->mu);
}

static void fork_parent(void)
{
    for (vgt_capture *c = open_list; c; c = c->next_open) pthread_mutex_unlock(&c->mu);
    pthread_mutex_unlock(&open_mu);
}

static void fork_child(void)
{
    for (vgt_capture *c = open_list; c; c = c->next_open) pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&open_mu, NULL);
}

static void register_atfork(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

vgt_status vgt_capture_open(vgt_capture **out, vgt_writer *w, const vgt_capture_options *opt, vgt_error *err)
{
    if (!w) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "capture: no writer");
    vgt_capture *c = calloc(1, sizeof *c);
    if (!c) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "capture: out of memory");
    c->w = w;
    c->opt.max_segment_bytes = opt && opt->max_segment_bytes ? opt->max_segment_bytes : DEFAULT_SEGMENT_BYTES;
    c->opt.max_submit_bytes = opt && opt->max_submit_bytes ? opt->max_submit_bytes : DEFAULT_SUBMIT_BYTES;
    c->opt.device_views = opt ? opt->device_views : 0;
    if (opt && opt->tracker) c->tracker = *opt->tracker;
    pthread_mutex_init(&c->mu, NULL);
    atomic_store(&c->cpu_lo, UINT64_MAX);   /* empty: nothing mapped yet */
    /* Preallocate the submission scratch so the common doorbell path does not allocate. */
    c->scratch_size = 1u << 20;
    c->scratch = malloc(c->scratch_size);
    c->cap_segs = 1024;
    c->segs = malloc(c->cap_segs * sizeof *c->segs);
    if (!c->scratch || !c->segs) {
        free(c->scratch);
        free(c->segs);
        free(c);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "capture: out of memory for the submission scratch");
    }
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&open_mu);
    c->next_open = open_list;
    open_list = c;
    pthread_mutex_unlock(&open_mu);
    *out = c;
    return VGT_OK;
}

void vgt_capture_close(vgt_capture *c)
{
    if (!c) return;
    pthread_mutex_lock(&open_mu);
    for (vgt_capture **p = &open_list; *p; p = &(*p)->next_open)
        if (*p == c) { *p = c->next_open; break; }
    pthread_mutex_unlock(&open_mu);
    pthread_mutex_destroy(&c->mu);
    free(c->views);
    free(c->by_va);
    free(c->channels);
    free(c->objects);
    free(c->cmaps);
    free(c->gmaps);
    free(c->scratch);
    free(c->segs);
    free(c);
}

vgt_writer *vgt_capture_writer(vgt_capture *c) { return c->w; }

vgt_capture_stats vgt_capture_get_stats(vgt_capture *c)
{
    pthread_mutex_lock(&c->mu);
    vgt_capture_stats s = c->stats;
    pthread_mutex_unlock(&c->mu);
    return s;
}

uint64_t vgt_capture_submits(vgt_capture *c) { return c ? atomic_load(&c->submits_written) : 0; }

vgt_status vgt_capture_record(vgt_capture *c, uint16_t type, const void *rec, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    uint64_t ts = vgt_now_ns();
    vgt_status rc;
    switch (type) {
    case VGT_REC_SESSION_START: rc = vgt_write_session_start(c->w, ts, rec, err); break;
    case VGT_REC_SESSION_END: rc = vgt_write_session_end(c->w, ts, rec, err); break;
    case VGT_REC_PROCESS_START: rc = vgt_write_process_start(c->w, ts, rec, err); break;
    case VGT_REC_PROCESS_END: rc = vgt_write_process_end(c->w, ts, rec, err); break;
    case VGT_REC_RM_ALLOC: rc = vgt_write_rm_alloc(c->w, ts, rec, err); break;
    case VGT_REC_RM_FREE: rc = vgt_write_rm_free(c->w, ts, rec, err); break;
    case VGT_REC_RM_CONTROL: rc = vgt_write_rm_control(c->w, ts, rec, err); break;
    case VGT_REC_IOCTL: rc = vgt_write_ioctl(c->w, ts, rec, err); break;
    case VGT_REC_ENGINE_OBJECT: rc = vgt_write_engine_object(c->w, ts, rec, err); break;
    case VGT_REC_MARKER: rc = vgt_write_marker(c->w, ts, rec, err); break;
    case VGT_REC_CUDA_IMAGE: rc = vgt_write_cuda_image(c->w, ts, rec, err); break;
    case VGT_REC_CUDA_IMAGE_REF: rc = vgt_write_cuda_image_ref(c->w, ts, rec, err); break;
    case VGT_REC_CUDA_LOAD: rc = vgt_write_cuda_load(c->w, ts, rec, err); break;
    case VGT_REC_CUDA_FUNCTION: rc = vgt_write_cuda_function(c->w, ts, rec, err); break;
    case VGT_REC_CUDA_KERNEL: rc = vgt_write_cuda_kernel(c->w, ts, rec, err); break;
    case VGT_REC_CUDA_MEMORY: rc = vgt_write_cuda_memory(c->w, ts, rec, err); break;
    case VGT_REC_CUDA_CALL: rc = vgt_write_cuda_call(c->w, ts, rec, err); break;
    default:
        rc = VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "capture: record type 0x%04x is not written through "
                      "vgt_capture_record", type);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_object(vgt_capture *c, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                              vgt_error *err)
{
    vgt_rec_rm_alloc a = { .client = client, .parent = parent, .handle = handle, .cls = cls };
    return vgt_capture_record(c, VGT_REC_RM_ALLOC, &a, err);
}

vgt_status vgt_capture_engine(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t handle, uint32_t cls,
                              vgt_error *err)
{
    vgt_rec_engine_object e = { .client = client, .channel = channel, .handle = handle, .cls = cls };
    return vgt_capture_record(c, VGT_REC_ENGINE_OBJECT, &e, err);
}

vgt_status vgt_capture_diagnostic(vgt_capture *c, uint32_t severity, vgt_status code, const char *text,
                                  vgt_error *err)
{
    if (atomic_load(&c->finished)) return VGT_OK;
    vgt_rec_diagnostic d = { .severity = severity, .code = (uint32_t)code, .length = (uint32_t)strlen(text),
                             .text = text };
    return vgt_write_diagnostic(c->w, vgt_now_ns(), &d, err);
}

void vgt_capture_finish(vgt_capture *c)
{
    if (!cap_lock_live(c)) return;
    if (c->tracker.finish) c->tracker.finish(c->tracker.ctx);
    cap_progress_at_end_locked(c);
    atomic_store(&c->finished, 1);
    pthread_mutex_unlock(&c->mu);
}
