/* capture_session.c: open/close of an embedded capture, declarations written as records, diagnostics. */
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

vgt_status vgt_capture_open(vgt_capture **out, vgt_writer *w, const vgt_capture_options *opt, vgt_error *err)
{
    if (!w) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "capture: no writer");
    vgt_capture *c = calloc(1, sizeof *c);
    if (!c) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "capture: out of memory");
    c->w = w;
    c->opt.max_segment_bytes = opt && opt->max_segment_bytes ? opt->max_segment_bytes : DEFAULT_SEGMENT_BYTES;
    c->opt.max_submit_bytes = opt && opt->max_submit_bytes ? opt->max_submit_bytes : DEFAULT_SUBMIT_BYTES;
    c->opt.device_views = opt ? opt->device_views : 0;
    pthread_mutex_init(&c->mu, NULL);
    /* Preallocate the submission scratch so the common doorbell path does not allocate. */
    c->scratch_size = 1u << 20;
    c->scratch = malloc(c->scratch_size);
    c->cap_segs = 1024;
    c->segs = malloc(c->cap_segs * sizeof *c->segs);
    if (!c->scratch || !c->segs) {
        vgt_capture_close(c);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "capture: out of memory for the submission scratch");
    }
    *out = c;
    return VGT_OK;
}

void vgt_capture_close(vgt_capture *c)
{
    if (!c) return;
    pthread_mutex_destroy(&c->mu);
    free(c->views);
    free(c->channels);
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

vgt_status vgt_capture_object(vgt_capture *c, uint32_t client, uint32_t parent, uint32_t handle, uint32_t cls,
                              vgt_error *err)
{
    vgt_rec_rm_alloc a = { .client = client, .parent = parent, .handle = handle, .cls = cls };
    return vgt_write_rm_alloc(c->w, vgt_now_ns(), &a, err);
}

vgt_status vgt_capture_engine(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t handle, uint32_t cls,
                              vgt_error *err)
{
    vgt_rec_engine_object e = { .client = client, .channel = channel, .handle = handle, .cls = cls };
    return vgt_write_engine_object(c->w, vgt_now_ns(), &e, err);
}

vgt_status vgt_capture_token(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t token, vgt_error *err)
{
    VGT_TRY(vgt_capture_register_token(c, client, channel, token, err));
    vgt_rec_work_submit_token t = { .client = client, .channel = channel, .token = token };
    return vgt_write_work_submit_token(c->w, vgt_now_ns(), &t, err);
}

vgt_status vgt_capture_channel(vgt_capture *c, const vgt_rec_channel *ch, vgt_error *err)
{
    VGT_TRY(vgt_capture_register_channel(c, ch, err));
    return vgt_write_channel(c->w, vgt_now_ns(), ch, err);
}

vgt_status vgt_capture_diagnostic(vgt_capture *c, uint32_t severity, vgt_status code, const char *text,
                                  vgt_error *err)
{
    vgt_rec_diagnostic d = { .severity = severity, .code = (uint32_t)code, .length = (uint32_t)strlen(text),
                             .text = text };
    return vgt_write_diagnostic(c->w, vgt_now_ns(), &d, err);
}
