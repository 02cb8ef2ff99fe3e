/* sem_i2m.c: inline-to-memory uploads: LINE_LENGTH_IN, LINE_COUNT, OFFSET_OUT_UPPER, OFFSET_OUT,
 * PITCH_OUT, then LAUNCH_DMA, then the data as LOAD_INLINE_DATA dwords (usually one non-increasing run).
 * Same offsets in the 3D and compute classes and in KEPLER_INLINE_TO_MEMORY_B (NVIDIA open-gpu-doc
 * classes/inline-to-memory/cla140.h, compute/clcbc0.h): LAUNCH_DMA DST_MEMORY_LAYOUT 0 (1 = pitch),
 * COMPLETION_TYPE 5:4 (0 flush disable, 1 flush only, 2 release semaphore).
 *
 * The UPLOAD event is delivered when line_length * line_count bytes have arrived (the last dword may be
 * padding), or at vgt_sem_flush with complete = 0. Bytes are collected only when the config asks
 * (keep_upload_bytes) and only up to cfg.max_upload; the count is always kept. */
#include <stdlib.h>
#include <string.h>

#include "sem_internal.h"

static void emit_upload(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m, int complete)
{
    vgt_event ev;
    sem_event_init(&ev, VGT_EV_UPLOAD, m);
    vgt_ev_upload *u = &ev.u.upload;
    u->dst_va = ((uint64_t)(s->offset_upper & 0x1ffffffu) << 32) | s->offset;
    u->line_length = s->line_length;
    u->line_count = s->line_count;
    u->pitch_out = s->pitch_out;
    u->pitch_layout = s->raw & 1;
    u->completion = (s->raw >> 4) & 3;
    u->complete = (uint8_t)complete;
    u->length = s->expected;
    u->received = s->received;
    u->raw = s->raw;
    if (s->buf) u->data = s->buf;
    s->active = 0;
    sem_emit(t, &ev);
}

static vgt_status start(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m, vgt_error *err)
{
    s->raw = m->data;
    s->launch = *m;
    s->expected = (uint64_t)s->line_length * s->line_count;
    s->received = 0;
    s->active = 1;
    s->buf = s->store;
    if (!t->cfg.keep_upload_bytes || s->expected > t->cfg.max_upload) s->buf = NULL;
    else {
        if (s->cap < s->expected) {
            uint64_t cap = s->expected < 4096 ? 4096 : s->expected;
            uint8_t *nb = realloc(s->store, cap);
            if (!nb) return VGT_FAIL(err, VGT_E_NOMEM, m->pos.dword, "allocating %llu bytes for an upload",
                                     (unsigned long long)cap);
            s->store = s->buf = nb;
            s->cap = cap;
        }
    }
    if (s->expected == 0) emit_upload(t, s, m, 1);
    return VGT_OK;
}

void sem_i2m_collect(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m)
{
    (void)t;
    uint64_t n = s->expected - s->received < 4 ? s->expected - s->received : 4;
    uint8_t le[4] = { (uint8_t)m->data, (uint8_t)(m->data >> 8), (uint8_t)(m->data >> 16), (uint8_t)(m->data >> 24) };
    memcpy(s->buf + s->received, le, n);
}

void sem_i2m_complete(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m)
{
    emit_upload(t, s, m, 1);
}

vgt_status sem_i2m(vgt_sem_tracker *t, i2m_state *s, unsigned role, const vgt_method *m, vgt_error *err)
{
    switch (role) {
    case R_I2M_LINE_LENGTH: s->line_length = m->data; break;
    case R_I2M_LINE_COUNT: s->line_count = m->data; break;
    case R_I2M_OFFSET_UPPER: s->offset_upper = m->data; break;
    case R_I2M_OFFSET: s->offset = m->data; break;
    case R_I2M_PITCH: s->pitch_out = m->data; break;
    case R_I2M_LAUNCH:
        if (s->active) emit_upload(t, s, m, 0);   /* a new launch cut the previous one short */
        return start(t, s, m, err);
    case R_I2M_DATA: sem_i2m_data(t, s, m); break;
    }
    return VGT_OK;
}

void sem_i2m_flush(vgt_sem_tracker *t, i2m_state *s, unsigned subch)
{
    if (!s->active) return;
    vgt_method m = s->launch;
    m.subch = subch;
    emit_upload(t, s, &m, 0);
}
