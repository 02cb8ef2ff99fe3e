/* reloc_patch.c: lane 1 rewrites what points into a moved mapping (addrmap.c) before the backend sees
 * a submission. It subscribes to the channel's decoded stream (stream.c: sub_reloc):
 *  - address operands in the push-buffer bytes: every method of analyze's address-pair table
 *    (vgt/addr_operands.h) is tracked per channel with its captured value, the value the
 *    replay sent, and where it sits (a submission's segment bytes). Whenever a half is written, the
 *    pair's captured address is translated (addr_to_replay) and both halves set to the translated
 *    address where they lie in the current submission: the rewrite happens in a copy of the segment
 *    bytes (rp->pbcopy), every segment holding that dword alike. A half sent in an earlier submission
 *    that would have to change cannot be rewritten any more: a warning names it at the end of the
 *    submission;
 *  - the address fields of QMDs whose bytes are in the submission (uploaded by I2M just before the
 *    SEND_PCAS_A that launches them, as libcuda does, or sent inline with LOAD_INLINE_QMD_DATA):
 *    rewritten in those data dwords (vgt_qmd_relocate, analyze/src/addr_qmd.c); a QMD launched by address whose bytes the trace
 *    wrote into memory (MEMORY records) is rewritten there, in the backend's memory, before the
 *    submission runs; one whose bytes are not all known cannot be, and a warning names its fields;
 *  - GPFIFO entries whose push buffer moved (patch_entry): GET/GET_HI rewritten.
 * Each rewrite is reported (VGT_RPT_RELOCATION: submission, entry, dword, method, old -> new VA).
 * Not rewritten (reported as warnings): operands an MME macro builds at run time (reloc_macros.c finds
 * them in the plan), QMDs in memory whose bytes the trace does not know, and addresses inside other
 * memory structures (descriptors, constant buffers), which no decoder here describes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/addr_operands.h"
#include "vgt/nv/cla140.h"
#include "vgt/nv/clc7c0.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/nv_facts.h"
#include "vgt/nv_pushbuf.h"
#include "vgt/qmd.h"

/* What the rewrites of one submission work with: the stream's view, and reloc_patch.c's own. */
typedef struct patch_ctx {
    vgt_replay *rp;
    engine_channel *c;
    const vgt_record *rec;
    const vgt_rec_gpfifo_submit *sub;
    patch_submit *ps;
    stream_submit *s;
} patch_ctx;

static patch_ctx ctx_of(stream_submit *s)
{
    return (patch_ctx){.rp = s->rp, .c = s->c, .rec = s->rec, .sub = s->sub, .ps = &s->rp->patch_cur, .s = s};
}

static void fail(patch_ctx *x, vgt_status rc)
{
    if (x->s->rc == VGT_OK) x->s->rc = rc;
}

static void patch_channel_free(engine_channel *c)
{
    free(c->patch);
    c->patch = NULL;
}

/* The current submission's segments copied once into rp->pbcopy, so that they can be rewritten. */
static vgt_status copy_segments(vgt_replay *rp, const vgt_rec_gpfifo_submit *sub, uint64_t seq, vgt_error *err)
{
    if (rp->patched) return VGT_OK;
    uint64_t total = 0;
    for (uint32_t i = 0; i < sub->segment_count; i++) total += sub->segments[i].length;
    if (total > rp->cap_pbcopy) {
        uint8_t *n = realloc(rp->pbcopy, total);
        if (!n) return VGT_FAIL(err, VGT_E_NOMEM, seq, "replay: out of memory copying %llu push-buffer bytes",
                                (unsigned long long)total);
        rp->pbcopy = n;
        rp->cap_pbcopy = total;
    }
    if (sub->segment_count > rp->cap_seg_off) {
        uint64_t *n = realloc(rp->seg_off, (size_t)sub->segment_count * sizeof *n);
        if (!n) return VGT_FAIL(err, VGT_E_NOMEM, seq, "replay: out of memory for %u segments", sub->segment_count);
        rp->seg_off = n;
        rp->cap_seg_off = sub->segment_count;
    }
    uint64_t off = 0;
    for (uint32_t i = 0; i < sub->segment_count; i++) {
        rp->seg_off[i] = off;
        if (sub->segments[i].length) memcpy(rp->pbcopy + off, sub->segments[i].data, sub->segments[i].length);
        off += sub->segments[i].length;
    }
    rp->patched = 1;
    return VGT_OK;
}

/* Store v at captured push-buffer VA pb_va in every segment copy that holds that dword. */
static void poke(vgt_replay *rp, const vgt_rec_gpfifo_submit *sub, uint64_t pb_va, uint32_t v)
{
    for (uint32_t i = 0; i < sub->segment_count; i++) {
        const vgt_segment *s = &sub->segments[i];
        if (pb_va < s->gpu_va || pb_va - s->gpu_va >= s->length || s->length - (pb_va - s->gpu_va) < 4) continue;
        uint8_t *p = rp->pbcopy + rp->seg_off[i] + (pb_va - s->gpu_va);
        p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
    }
}

/* Make half h (in this submission: the caller checked) carry want. */
static void set_half(patch_ctx *x, patch_half *h, uint32_t want)
{
    if (h->sent == want) return;
    vgt_status rc = copy_segments(x->rp, x->sub, x->rec->seq, x->s->err);
    if (rc != VGT_OK) {
        fail(x, rc);
        return;
    }
    poke(x->rp, x->sub, (uint64_t)h->pb_va, want);
    h->sent = want;
}

/* The half just written can always carry want. The other half only when it already does, or when it
 * was written right before in this submission (the same method run: nothing used the pair between);
 * rewriting one written earlier would change what the methods between them used. */
static int can_set(const patch_half *h, uint32_t want, const vgt_mpos *now)
{
    if (h->sent == want) return 1;
    return h->pb_va >= 0 && h->entry == now->entry && h->dword <= now->dword && now->dword - h->dword <= 2;
}

/* One report per address write: its two halves are one rewrite. */
static int already_noted(patch_channel *pc, uint32_t slot, uint64_t to, const vgt_mpos *pos)
{
    patch_note *n = &pc->noted[slot];
    int same = n->valid && n->to == to && n->entry == pos->entry && pos->dword - n->dword <= 2;
    *n = (patch_note){.to = to, .entry = pos->entry, .dword = pos->dword, .valid = 1};
    return same;
}

static void evaluate(patch_ctx *x, const vgt_addr_pair *p, uint32_t slot, const vgt_mpos *pos)
{
    patch_half *hi = &x->c->patch->half[slot][0], *lo = &x->c->patch->half[slot][1];
    if (!lo->set || (p->hi && !hi->set)) return;
    uint64_t va = vgt_addr_pair_address(p, hi->captured, lo->captured);
    uint64_t to = va ? addr_to_replay(x->rp, va) : va;
    uint32_t want_hi, want_lo;
    vgt_addr_pair_encode(p, to, hi->captured, &want_hi, &want_lo);
    uint32_t was_hi = hi->sent, was_lo = lo->sent;
    if (!can_set(lo, want_lo, pos) || (p->hi && !can_set(hi, want_hi, pos))) {
        x->ps->pending |= 1ull << slot;   /* both halves or none: never half an address */
        x->ps->pending_pair[slot] = p;
        x->ps->pending_va[slot] = va;
        return;
    }
    x->ps->pending &= ~(1ull << slot);
    set_half(x, lo, want_lo);
    if (p->hi) set_half(x, hi, want_hi);
    if (to == va || (was_hi == hi->sent && was_lo == lo->sent)) return;
    if (already_noted(x->c->patch, slot, to, pos)) return;
    x->rp->sum.operands_rewritten++;
    engine_note(x->rp, "submission %lld (seq %llu) entry %u dword %u: %s 0x%llx -> 0x%llx", (long long)x->rp->cur_index,
                (unsigned long long)x->rec->seq, pos->entry, pos->dword, p->name, (unsigned long long)va,
                (unsigned long long)to);
}

/* ---- QMDs ---- */

static uint64_t to_replay(const void *rp, uint64_t va) { return addr_to_replay(rp, va); }

/* Methods (the class constants): LAUNCH_DMA and LOAD_INLINE_DATA of the I2M methods (the same offsets in
 * the I2M, compute and 3D classes), OFFSET_OUT; SEND_PCAS_A, SET_INLINE_QMD_ADDRESS_B,
 * LOAD_INLINE_QMD_DATA(i) of the compute classes. */
#define M_OFFSET_OUT NVA140_OFFSET_OUT
#define M_I2M_LAUNCH NVA140_LAUNCH_DMA
#define M_I2M_DATA NVA140_LOAD_INLINE_DATA
#define M_PCAS_A NVCBC0_SEND_PCAS_A
#define M_INLINE_QMD_B NVCBC0_SET_INLINE_QMD_ADDRESS_B
#define M_INLINE_QMD_DATA NVCBC0_LOAD_INLINE_QMD_DATA(0)

static int has_i2m(uint32_t cls)
{
    vgt_nv_family f = vgt_nv_class_family(cls);
    return f == VGT_NV_FAM_I2M || f == VGT_NV_FAM_COMPUTE || f == VGT_NV_FAM_3D;
}

/* The captured address a pair's halves hold (0 when not both set). */
static uint64_t pair_value(const patch_channel *pc, uint32_t cls, uint32_t lo_mthd)
{
    const vgt_addr_pair *p;
    uint32_t slot;
    if (vgt_addr_pair_of(cls, lo_mthd, &p, &slot) != 1) return 0;
    const patch_half *hi = &pc->half[slot][0], *lo = &pc->half[slot][1];
    if (!lo->set || (p->hi && !hi->set)) return 0;
    return vgt_addr_pair_address(p, hi->captured, lo->captured);
}

static void upload_start(patch_upload *u, uint64_t dst)
{
    u->dst = dst;
    u->n = 0;
    u->active = 1;
}

static void upload_add(patch_upload *u, uint32_t index, uint32_t data, int64_t pb_va)
{
    if (!u->active || index >= PATCH_QMD_DWORDS) return;
    u->data[index] = data;
    u->pb_va[index] = pb_va;
    if (index + 1 > u->n) u->n = index + 1;
}

/* The QMD in u: its address fields rewritten in the push buffer when every dword of it is in this
 * submission; 0 when it is not (the caller warns). */
static int patch_qmd(patch_ctx *x, patch_upload *u, const char *how)
{
    uint8_t q[4 * PATCH_QMD_DWORDS];
    for (uint32_t i = 0; i < u->n; i++)
        q[4 * i] = (uint8_t)u->data[i], q[4 * i + 1] = (uint8_t)(u->data[i] >> 8),
        q[4 * i + 2] = (uint8_t)(u->data[i] >> 16), q[4 * i + 3] = (uint8_t)(u->data[i] >> 24);
    vgt_qmd_fix fix[VGT_QMD_MAX_FIXES];
    uint32_t nfix = vgt_qmd_relocate(to_replay, x->rp, q, 4 * u->n, fix, VGT_QMD_MAX_FIXES);
    if (!nfix) return 1;
    for (uint32_t i = 0; i < u->n; i++)
        if (u->pb_va[i] < 0) return 0;
    vgt_status rc = copy_segments(x->rp, x->sub, x->rec->seq, x->s->err);
    if (rc != VGT_OK) {
        fail(x, rc);
        return 1;
    }
    for (uint32_t i = 0; i < u->n; i++) {
        uint32_t v = (uint32_t)q[4 * i] | (uint32_t)q[4 * i + 1] << 8 | (uint32_t)q[4 * i + 2] << 16 |
                     (uint32_t)q[4 * i + 3] << 24;
        if (v != u->data[i]) poke(x->rp, x->sub, (uint64_t)u->pb_va[i], v), u->data[i] = v;
    }
    for (uint32_t k = 0; k < nfix; k++) {
        x->rp->sum.operands_rewritten++;
        engine_note(x->rp, "submission %lld (seq %llu): %s QMD at 0x%llx: %s %u 0x%llx -> 0x%llx (QMD dword %u)",
                    (long long)x->rp->cur_index, (unsigned long long)x->rec->seq, how, (unsigned long long)u->dst,
                    fix[k].what, fix[k].element, (unsigned long long)fix[k].from, (unsigned long long)fix[k].to,
                    fix[k].dword);
    }
    return 1;
}

/* A QMD launched by address whose bytes the submission did not upload: the trace wrote it into memory
 * (MEMORY records, the CPU's stores), which the replay has written at the QMD's replay VA. When the trace
 * knows all of its bytes, its address fields are rewritten there, before the submission runs (a host
 * write, as the capture's was); otherwise each field that points into a moved mapping is named. */
static void qmd_in_memory(patch_ctx *x, uint64_t qmd_va)
{
    uint8_t q[4 * PATCH_QMD_DWORDS];
    uint64_t known = 0;
    vgt_error e;
    if (!qmd_va || vgt_model_mem_read(x->rp->model, qmd_va, q, sizeof q, &known, &e) != VGT_OK || !known) return;
    vgt_qmd_fix fix[VGT_QMD_MAX_FIXES];
    uint32_t nfix = vgt_qmd_relocate(to_replay, x->rp, q, sizeof q, fix, VGT_QMD_MAX_FIXES);
    if (!nfix) return;
    uint32_t size = vgt_qmd_version_size(vgt_qmd_detect(q, sizeof q));
    engine_settle(x->rp, SETTLE_WRITE);
    int whole = known >= size && size &&
                x->rp->ops->mem_write(x->rp->be, x->rp->vas, addr_to_replay(x->rp, qmd_va), q, size, &e) == VGT_OK;
    for (uint32_t k = 0; k < nfix; k++) {
        if (whole) {
            x->rp->sum.operands_rewritten++;
            engine_note(x->rp, "submission %lld (seq %llu): QMD in memory at 0x%llx: %s %u 0x%llx -> 0x%llx (QMD dword %u)",
                        (long long)x->rp->cur_index, (unsigned long long)x->rec->seq, (unsigned long long)qmd_va,
                        fix[k].what, fix[k].element, (unsigned long long)fix[k].from, (unsigned long long)fix[k].to,
                        fix[k].dword);
        } else {
            engine_warn(x->rp, "submission %lld (seq %llu): the QMD at 0x%llx is launched by address and only %llu of "
                        "its bytes are known: its %s %u 0x%llx points into a relocated mapping and is not rewritten",
                        (long long)x->rp->cur_index, (unsigned long long)x->rec->seq, (unsigned long long)qmd_va,
                        (unsigned long long)known, fix[k].what, fix[k].element, (unsigned long long)fix[k].from);
        }
    }
}

static void qmd_method(patch_ctx *x, const vgt_method *m, int64_t pb_va)
{
    patch_channel *pc = x->c->patch;
    vgt_nv_family fam = vgt_nv_class_family(m->cls);
    patch_upload *last = &pc->upload[pc->next_upload % PATCH_UPLOADS];
    if (has_i2m(m->cls) && m->mthd == M_I2M_LAUNCH) {
        last = &pc->upload[++pc->next_upload % PATCH_UPLOADS];
        upload_start(last, pair_value(pc, m->cls, M_OFFSET_OUT));
    } else if (has_i2m(m->cls) && m->mthd == M_I2M_DATA) {
        upload_add(last, last->n, m->data, pb_va);
    }
    if (fam != VGT_NV_FAM_COMPUTE) return;
    if (m->mthd == M_INLINE_QMD_B) {
        upload_start(&pc->inline_qmd, pair_value(pc, m->cls, M_INLINE_QMD_B));
    } else if (m->mthd >= M_INLINE_QMD_DATA && m->mthd < M_INLINE_QMD_DATA + 4 * PATCH_QMD_DWORDS) {
        uint32_t i = (m->mthd - M_INLINE_QMD_DATA) / 4;
        upload_add(&pc->inline_qmd, i, m->data, pb_va);
        if ((i == NVC7C0_LOAD_INLINE_QMD_DATA__SIZE - 1 || i == NVCBC0_LOAD_INLINE_QMD_DATA__SIZE - 1) && !patch_qmd(x, &pc->inline_qmd, "inline"))
            engine_warn(x->rp, "submission %lld: an inline QMD began in an earlier submission: its address fields "
                        "are not rewritten", (long long)x->rp->cur_index);
    } else if (m->mthd == M_PCAS_A) {
        uint64_t q = (uint64_t)VGT_NV_GET(m->data, NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8) << 8;
        for (uint32_t k = 0; k < PATCH_UPLOADS; k++) {   /* the newest upload to q first */
            patch_upload *u = &pc->upload[(pc->next_upload - k) % PATCH_UPLOADS];
            if (u->active && u->dst == q && u->n >= 64) {
                if (patch_qmd(x, u, "uploaded")) return;
                break;
            }
        }
        qmd_in_memory(x, q);
    }
}

static void on_method(stream_submit *s, const vgt_method *m)
{
    patch_ctx x = ctx_of(s);
    const vgt_addr_pair *p;
    uint32_t slot;
    uint64_t eva = m->pos.entry < x.sub->entry_count ? x.ps->entry_va[m->pos.entry] : 0;
    int64_t pb_va = eva ? (int64_t)(eva + 4ull * m->pos.dword) : -1;
    int half = m->masked ? -1 : vgt_addr_pair_of(m->cls, m->mthd, &p, &slot);
    if (half >= 0) {
        x.c->patch->half[slot][half] = (patch_half){.captured = m->data, .sent = m->data, .pb_va = pb_va,
                                                    .entry = m->pos.entry, .dword = m->pos.dword, .set = 1};
        evaluate(&x, p, slot, &m->pos);
    }
    if (!m->masked) qmd_method(&x, m, pb_va);   /* after the pair: SET_INLINE_QMD_ADDRESS_B is both */
}

static void on_entry(stream_submit *s, const vgt_gp_entry *e, uint32_t index)
{
    if (index < s->sub->entry_count) s->rp->patch_cur.entry_va[index] = e->is_control ? 0 : e->va;
}

/* Halves from earlier submissions are no longer in the bytes: they stay as sent. */
static void age_halves(patch_channel *pc)
{
    for (uint32_t i = 0; i < PATCH_MAX_PAIRS; i++) {
        pc->half[i][0].pb_va = pc->half[i][1].pb_va = -1;
        pc->noted[i].valid = 0;
    }
    for (uint32_t i = 0; i < PATCH_QMD_DWORDS; i++) {
        pc->inline_qmd.pb_va[i] = -1;
        for (uint32_t k = 0; k < PATCH_UPLOADS; k++) pc->upload[k].pb_va[i] = -1;
    }
}

static void warn_pending(patch_ctx *x)
{
    for (uint32_t s = 0; s < PATCH_MAX_PAIRS; s++) {
        if (!(x->ps->pending >> s & 1)) continue;
        const patch_half *hi = &x->c->patch->half[s][0], *lo = &x->c->patch->half[s][1];
        engine_warn(x->rp, "submission %lld (seq %llu) entry %u dword %u: %s 0x%llx is to be 0x%llx, but a half of it "
                    "was sent earlier (high 0x%x, low 0x%x as sent): not rewritten", (long long)x->rp->cur_index,
                    (unsigned long long)x->rec->seq, lo->entry, lo->dword, x->ps->pending_pair[s]->name,
                    (unsigned long long)x->ps->pending_va[s],
                    (unsigned long long)addr_to_replay(x->rp, x->ps->pending_va[s]), hi->sent, lo->sent);
    }
}

/* Every submission of every channel: the copy is reset, and when a mapping moved (or the plan expects
 * one to) the operands are followed; otherwise only the decoder runs (cheap), ready when one comes. */
static unsigned begin(stream_submit *s)
{
    vgt_replay *rp = s->rp;
    engine_channel *c = s->c;
    patch_submit *ps = &rp->patch_cur;
    rp->patched = 0;
    ps->full = 0;
    ps->pending = 0;
    if (!c->patch) {
        if (!(c->patch = calloc(1, sizeof *c->patch))) {
            s->rc = VGT_FAIL(s->err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory for relocation state");
            return 0;
        }
        age_halves(c->patch);
    }
    if (!(rp->nmoves || rp->opt.nrelocate || rp->track_addresses)) return 0;
    if (s->sub->entry_count > ps->cap_entry_va) {
        uint64_t *n = realloc(ps->entry_va, (size_t)s->sub->entry_count * sizeof *n);
        if (!n) {
            s->rc = VGT_FAIL(s->err, VGT_E_NOMEM, s->rec->seq, "replay: out of memory for %u entries",
                             s->sub->entry_count);
            return 0;
        }
        ps->entry_va = n;
        ps->cap_entry_va = s->sub->entry_count;
    }
    if (s->sub->entry_count) memset(ps->entry_va, 0, (size_t)s->sub->entry_count * sizeof *ps->entry_va);
    ps->full = 1;
    return STREAM_METHODS | STREAM_ENTRIES;
}

static void end(stream_submit *s)
{
    patch_ctx x = ctx_of(s);
    if (!s->c->patch) return;
    if (x.ps->full) warn_pending(&x);
    age_halves(s->c->patch);
}

/* Relocation follows every replay: a mapping may have to move at any GPU_MAP. */
static int active(const vgt_replay *rp)
{
    (void)rp;
    return 1;
}

const stream_sub sub_reloc = {.name = "reloc", .active = active, .begin = begin, .entry = on_entry,
                              .method = on_method, .end = end, .channel_free = patch_channel_free};

/* The entry's GET/GET_HI (the codec of vgt/nv_pushbuf.h). */
uint64_t patch_entry(vgt_replay *rp, uint32_t index, uint64_t raw)
{
    if (!rp->nmoves) return raw;
    vgt_gp_entry e;
    vgt_gp_entry_decode(raw, &e);
    if (e.is_control) return raw;
    uint64_t to = addr_to_replay(rp, e.va);
    if (to == e.va) return raw;
    if (to >> VGT_NV_GP_VA_BITS) {
        engine_warn(rp, "submission %lld entry %u: push buffer 0x%llx moved to 0x%llx, above what an entry addresses; "
                    "entry not rewritten", (long long)rp->cur_index, index, (unsigned long long)e.va,
                    (unsigned long long)to);
        return raw;
    }
    rp->sum.entries_rewritten++;
    engine_note(rp, "submission %lld (seq %llu) entry %u: GPFIFO entry push buffer 0x%llx -> 0x%llx", (long long)rp->cur_index,
                (unsigned long long)rp->cur_seq, index, (unsigned long long)e.va, (unsigned long long)to);
    return vgt_nv_gp_with_va(raw, to);
}
