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

/* What the transfer wrote, into the overlay: packed lines of line_length bytes land pitch_out apart, in
 * order, so lines that overlap (pitch_out below line_length, 0 included) leave the later line's bytes.
 * The span is exactly the bytes covered: the packed bytes only when pitch_out equals line_length. A
 * block-linear destination or a transfer cut short is a hole over the bytes it covers. */
void sem_i2m_gather(i2m_state *s)
{
    uint64_t at = 0;
    for (uint32_t i = 0; i < s->npieces; at += s->pieces[i].len, i++) memcpy(s->buf + at, s->pieces[i].src, s->pieces[i].len);
    s->npieces = 0;
}

static void remember(vgt_sem_tracker *t, i2m_state *s, uint64_t dst, int complete)
{
    sem_overlay *o = &t->overlay;
    int pitch = s->raw & 1;
    uint64_t span = s->line_count > 1 && pitch ? (uint64_t)s->pitch_out * (s->line_count - 1) + s->line_length
                                               : s->expected;
    if (!complete || !pitch || !s->bytes) {
        if (s->npieces) sem_i2m_gather(s);   /* the event's data */
        sem_overlay_hole(o, dst, span);
        return;
    }
    if (s->npieces && !(span == s->expected && sem_overlay_write_pieces(o, dst, s->pieces, s->npieces, span)))
        sem_i2m_gather(s);   /* not remembered in pieces: as copied bytes */
    if (s->npieces) return;
    if (span == s->expected) {
        if (t->run_lent && s->bytes != s->buf) sem_overlay_write_lent(o, dst, s->bytes, s->expected);   /* in place */
        else sem_overlay_write(o, dst, s->bytes, s->expected);
        return;
    }
    if (s->line_count > 64) { sem_overlay_hole(o, dst, span); return; }
    for (uint32_t i = 0; i < s->line_count; i++)
        sem_overlay_write(o, dst + (uint64_t)i * s->pitch_out, s->bytes + (uint64_t)i * s->line_length, s->line_length);
}

static void emit_upload(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m, int complete)
{
    vgt_event ev;
    sem_event_init(t, &ev, VGT_EV_UPLOAD, m);
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
    s->active = 0;
    remember(t, s, u->dst_va, complete);
    if (s->bytes && !s->npieces) u->data = s->bytes;   /* remembered in pieces: not in one place */
    sem_emit(t, &ev);
    s->bytes = s->buf;
    s->npieces = 0;
}

static vgt_status start(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m, vgt_error *err)
{
    s->raw = m->data;
    s->launch = *m;
    s->expected = (uint64_t)s->line_length * s->line_count;
    s->received = 0;
    s->active = 1;
    s->npieces = 0;
    s->buf = s->store;
    int keep = t->cfg.keep_upload_bytes && s->expected <= t->cfg.max_upload;
    int overlay = !t->overlay.disabled && s->expected <= VGT_SEM_OVERLAY_MAX_WRITE;
    if (!keep && !overlay) s->buf = NULL, s->bytes = NULL;
    else {
        if (s->cap < s->expected) {
            uint64_t cap = s->expected < 4096 ? 4096 : s->expected;
            uint8_t *nb = realloc(s->store, cap);
            if (!nb) return VGT_FAIL(err, VGT_E_NOMEM, m->pos.dword, "allocating %llu bytes for an upload",
                                     (unsigned long long)cap);
            s->store = s->buf = nb;
            s->cap = cap;
        }
        s->bytes = s->buf;
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

uint32_t sem_i2m_bulk(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    if (!s->active) return 0;
    uint64_t left = s->expected - s->received;   /* > 0: an active transfer is not complete */
    uint32_t take = left / 4 + (left % 4 != 0) < count ? (uint32_t)(left / 4 + (left % 4 != 0)) : count;
    uint64_t n = 4ull * take < left ? 4ull * take : left;
    if (s->buf && !s->received && n == left) s->bytes = data;   /* all of it: used in place */
    else if (s->buf && t->run_lent && !t->cfg.keep_upload_bytes && (!s->received || s->npieces) &&
             s->npieces < SEM_PIECES)
        s->pieces[s->npieces++] = (sem_piece){data, n};   /* lent: copied only if it must be */
    else if (s->buf) {
        if (s->npieces) sem_i2m_gather(s);
        memcpy(s->buf + s->received, data, n);
    }
    s->received += 4ull * take;
    if (s->received >= s->expected) {   /* completed by the take-th dword: the event's position and data */
        vgt_method last = *m;
        const uint8_t *p = data + 4u * (take - 1);
        last.data = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        last.pos.dword = m->pos.dword + take - 1;
        last.first = take == 1 && m->first;
        sem_i2m_complete(t, s, &last);
    }
    return take;
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
