/* sem_launch.c: compute launches.
 *
 * By address: SEND_PCAS_A 0x2b4 holds the QMD VA >> 8; the launch is scheduled by SEND_SIGNALING_PCAS_B
 * 0x2bc with SCHEDULE (bit 1) or SEND_SIGNALING_PCAS2_B 0x2c0 with a PCAS_ACTION 3:0 that schedules
 * (SCHEDULE 2, INVALIDATE_COPY_SCHEDULE 3, PREFETCH_SCHEDULE 9, INVALIDATE_PREFETCH_COPY_SCHEDULE 0xA,
 * INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING 0xB). The QMD bytes come from GPU memory.
 * Inline: SET_INLINE_QMD_ADDRESS_A 0x318 (QMD_ADDRESS_SHIFTED8_UPPER; on CBC0 bits 8:0, and INLINE_SIZE
 * bit 30: 0 = 256 bytes, 1 = 384 bytes) and _B 0x31c (SHIFTED8_LOWER), then LOAD_INLINE_QMD_DATA(i)
 * 0x320 + 4i; the launch happens when the last dword of the inline size arrives. A 256-byte inline V04
 * QMD takes its last 128 bytes from memory at the QMD address [unconfirmed: the class header only names
 * the two sizes; we read the rest from the model and report qmd_known = 0 when it is not there].
 * Facts: NVIDIA open-gpu-doc classes/compute/clc5c0.h, clc6c0.h, clcbc0.h.
 *
 * QMD bytes are read through the tracker's stream-write overlay first (events.h): libcuda writes each QMD
 * with an inline-to-memory upload right before its SEND_PCAS_A, so the bytes are in the stream itself.
 *
 * A QMD whose grid or block is zero runs no threads: it is delivered as EMPTY_DISPATCH (events_count.c).
 * Each enabled release semaphore of the QMD is also delivered as a SEM_RELEASE (source qmd), after the
 * LAUNCH or EMPTY_DISPATCH: the GPU writes it when the grid completes. */
#include <string.h>

#include "sem_internal.h"

void vgt_ev_sem_from_qmd_release(const vgt_qmd_release *r, unsigned slot, vgt_ev_sem *s)
{
    memset(s, 0, sizeof *s);
    s->source = VGT_SEM_SRC_QMD;
    s->op = r->reduction_enable ? VGT_SEM_OP_REDUCTION : VGT_SEM_OP_RELEASE;
    s->size = r->payload64 ? 8 : 4;
    s->va = r->va;
    s->payload = r->payload64 ? r->payload : (uint32_t)r->payload;
    if (r->reduction_enable) {
        static const uint8_t red[8] = { VGT_RED_ADD, VGT_RED_MIN, VGT_RED_MAX, VGT_RED_INC, VGT_RED_DEC,
                                        VGT_RED_AND, VGT_RED_OR, VGT_RED_XOR };
        s->reduction = red[r->reduction_op & 7];
        if (r->reduction_format == 1) s->flags |= VGT_SEM_FLAG_SIGNED;
    }
    if (r->structure_size == 0) s->flags |= VGT_SEM_FLAG_TIMESTAMP;
    s->raw = slot;
}

static void emit_releases(vgt_sem_tracker *t, const vgt_method *m, const vgt_qmd *q)
{
    for (unsigned i = 0; i < q->release_count; i++) {
        if (!q->release[i].enabled) continue;
        vgt_event ev;
        sem_event_init(t, &ev, VGT_EV_SEM_RELEASE, m);
        vgt_ev_sem_from_qmd_release(&q->release[i], i, &ev.u.sem);
        sem_emit(t, &ev);
    }
}

/* Decode bytes (len known of them) and deliver LAUNCH (EMPTY_DISPATCH when it runs no threads) then the
 * QMD's releases. */
static void deliver(vgt_sem_tracker *t, const vgt_method *m, uint64_t qmd_va, int is_inline, uint32_t signal,
                    const uint8_t *bytes, uint32_t len, uint32_t known)
{
    vgt_event ev;
    sem_event_init(t, &ev, VGT_EV_LAUNCH, m);
    vgt_ev_launch *l = &ev.u.launch;
    l->qmd_va = qmd_va;
    l->inline_qmd = (uint8_t)is_inline;
    l->signal = signal;
    l->qmd_bytes = bytes;
    l->qmd_length = len;
    vgt_qmd_version v = known >= 73 ? vgt_qmd_detect(bytes, len) : VGT_QMD_UNKNOWN;
    uint32_t need = vgt_qmd_version_size(v);
    l->qmd_known = v != VGT_QMD_UNKNOWN && known >= need;
    if (v != VGT_QMD_UNKNOWN && vgt_qmd_decode_as(v, bytes, len, &l->qmd, NULL) == VGT_OK) l->decoded = 1;
    if (!vgt_launch_runs_threads(l)) ev.kind = VGT_EV_EMPTY_DISPATCH;
    sem_emit(t, &ev);
    if (l->decoded && l->qmd_known) emit_releases(t, m, &l->qmd);
}

static vgt_status launch_by_address(vgt_sem_tracker *t, compute_state *c, const vgt_method *m, vgt_error *err)
{
    if (!c->pcas_pending) return VGT_OK;   /* a signal without SEND_PCAS_A: nothing to launch */
    if (t->skip_launches) {
        c->pcas_pending = 0;
        return VGT_OK;
    }
    uint8_t qmd[VGT_QMD_MAX_BYTES];
    uint32_t known = 0;
    VGT_TRY(sem_mem_read(t, c->pcas_qmd_va, qmd, sizeof qmd, &known, err));
    c->pcas_pending = 0;
    deliver(t, m, c->pcas_qmd_va, 0, m->data, qmd, sizeof qmd, known);
    return VGT_OK;
}

static vgt_status launch_inline(vgt_sem_tracker *t, compute_state *c, const vgt_method *m, vgt_error *err)
{
    int cbc0 = (m->cls & 0xffff) >= 0xcbc0;
    uint64_t upper = cbc0 ? (c->inline_a & 0x1ffu) : c->inline_a;
    uint64_t va = ((upper << 32) | c->inline_b) << 8;
    uint32_t have = c->inline_dwords * 4u, known = have;
    if (t->skip_launches) {
        c->inline_loaded = 0;
        sem_overlay_write(&t->overlay, va, c->inline_qmd, have);
        return VGT_OK;
    }
    vgt_qmd_version v = vgt_qmd_detect(c->inline_qmd, have);
    if (vgt_qmd_version_size(v) > have) {   /* the rest of the QMD is in memory at its address */
        uint32_t k = 0;
        VGT_TRY(sem_mem_read(t, va + have, c->inline_qmd + have, VGT_QMD_MAX_BYTES - have, &k, err));
        known = have + k;
    }
    c->inline_loaded = 0;
    sem_overlay_write(&t->overlay, va, c->inline_qmd, have);   /* the GPU stores the inline QMD at its address */
    deliver(t, m, va, 1, 0, c->inline_qmd, VGT_QMD_MAX_BYTES, known);
    return VGT_OK;
}

static int schedules(unsigned role, uint32_t data)
{
    if (role == R_SIGNAL_PCAS_B) return (data >> 1) & 1;
    unsigned action = data & 0xf;
    return action == 2 || action == 3 || action == 9 || action == 0xa || action == 0xb;
}

vgt_status sem_launch(vgt_sem_tracker *t, sub_state *sub, unsigned role, unsigned index, const vgt_method *m,
                      vgt_error *err)
{
    compute_state *c = &sub->compute;
    switch (role) {
    case R_PCAS_A:
        c->pcas_pending = 1;
        c->pcas_qmd_va = (uint64_t)m->data << 8;
        break;
    case R_SIGNAL_PCAS_B: case R_SIGNAL_PCAS2_B:
        if (schedules(role, m->data)) return launch_by_address(t, c, m, err);
        break;
    case R_INLINE_QMD_A:
        c->inline_a = m->data;
        break;
    case R_INLINE_QMD_B:
        c->inline_b = m->data;
        c->inline_dwords = ((m->cls & 0xffff) >= 0xcbc0 && ((c->inline_a >> 30) & 1)) ? 96 : 64;
        c->inline_loaded = 0;
        memset(c->inline_qmd, 0, sizeof c->inline_qmd);
        break;
    case R_INLINE_QMD_DATA:
        if (!c->inline_dwords) c->inline_dwords = 64;   /* data before any address: assume the 256-byte form */
        if (index >= c->inline_dwords) break;
        c->inline_qmd[4 * index] = (uint8_t)m->data;
        c->inline_qmd[4 * index + 1] = (uint8_t)(m->data >> 8);
        c->inline_qmd[4 * index + 2] = (uint8_t)(m->data >> 16);
        c->inline_qmd[4 * index + 3] = (uint8_t)(m->data >> 24);
        if (index + 1 > c->inline_loaded) c->inline_loaded = index + 1;
        if (index + 1 == c->inline_dwords) return launch_inline(t, c, m, err);
        break;
    }
    return VGT_OK;
}
