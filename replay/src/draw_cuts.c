/* draw_cuts.c: the census per draw (options.draw_cuts, `vgt replay --census-per-draw`).
 *
 * Subscriber sub_cuts finds, in the decoded stream of a submission, where the work of each listed draw or
 * launch begins and ends: before the header of the method that issued it, and after that method, at the
 * start of the next method header (a macro's draw: after its call, its CALL_MME_DATA included, since the
 * macro runs as its data arrives). The work before a draw (clears, copies) is a piece of its own, whose
 * rows name no draw. The submission's
 * GPFIFO entries are then handed to the backend in pieces cut there (an entry cut in two: the same VA for
 * the first dwords, the rest after them), and after each piece the engine waits for the work (on the GPU:
 * idle, a fence semaphore released behind it, bounded by the submission timeout) and reads the watched
 * ranges back: every census row names the draws of its piece.
 *
 * Cuts fall only on method-header boundaries, so no method run is split; a piece's methods reach the GPU
 * exactly as they would in one submission (the channel's method state carries across GPFIFO entries).
 * What it cannot separate: draws issued by one method run (or one macro call) share a piece; work that
 * runs asynchronously past a fence (none on the 3D and compute engines) would be counted late. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv_facts.h"
#include "vgt/grow.h"
#include "vgt/nv_pushbuf.h"

#define MME_FIRST NVCB97_CALL_MME_MACRO(0)
#define MME_END (NVCB97_CALL_MME_MACRO(0) + NVCB97_CALL_MME_MACRO__SIZE * 8u)

static int active(const vgt_replay *rp)
{
    return rp->opt.census && rp->opt.draw_cuts && rp->opt.ndraw_cuts;
}

static int pos_cmp(uint64_t seq, uint32_t entry, uint32_t dword, const vgt_replay_draw_cut *c)
{
    if (seq != c->seq) return seq < c->seq ? -1 : 1;
    if (entry != c->entry) return entry < c->entry ? -1 : 1;
    if (dword != c->dword) return dword < c->dword ? -1 : 1;
    return 0;
}

/* The first cut at or after (seq, entry, dword). */
static uint32_t lower_bound(const vgt_replay *rp, uint64_t seq, uint32_t entry, uint32_t dword)
{
    uint32_t lo = 0, hi = rp->opt.ndraw_cuts;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pos_cmp(seq, entry, dword, &rp->opt.draw_cuts[mid]) > 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static unsigned begin(stream_submit *s)
{
    draw_cut_state *k = &s->rp->cuts;
    k->seq = s->rec->seq;
    k->npieces = 0;
    k->pending = 0;
    k->pending_macro = 0;
    k->hdr_entry = k->hdr_dword = 0;
    k->tail_first = -1;
    k->tail_count = 0;
    k->next = lower_bound(s->rp, s->rec->seq, 0, 0);
    if (k->next == s->rp->opt.ndraw_cuts || s->rp->opt.draw_cuts[k->next].seq != s->rec->seq) return 0;
    return STREAM_METHODS;
}

/* A cut before dword `dword` of entry `entry` (a header): the piece so far ends there with the draws it
 * issued. A cut where the last one was (or at the very start) makes no piece. */
static void add_piece(stream_submit *s, uint32_t entry, uint32_t dword)
{
    draw_cut_state *k = &s->rp->cuts;
    const draw_piece *last = k->npieces ? &k->pieces[k->npieces - 1] : NULL;
    if (last ? last->entry == entry && last->dword == dword : !entry && !dword) return;
    if (vgt_grow(&k->pieces, &k->cap, k->npieces + 1ull, 16)) {
        s->rc = VGT_FAIL(s->err, VGT_E_NOMEM, s->rec->seq, "census per draw: out of memory for %u pieces", k->npieces + 1);
        return;
    }
    k->pieces[k->npieces++] = (draw_piece){.entry = entry, .dword = dword, .draw_first = k->tail_first,
                                           .draw_count = k->tail_count};
    k->tail_first = -1;
    k->tail_count = 0;
}

static int is_macro_method(const vgt_method *m)
{
    return m->mthd >= MME_FIRST && m->mthd < MME_END && vgt_nv_class_family(m->cls) == VGT_NV_FAM_3D;
}

static void on_method(stream_submit *s, const vgt_method *m)
{
    draw_cut_state *k = &s->rp->cuts;
    const vgt_replay_options *o = &s->rp->opt;
    if (m->first) {
        /* the header of this method: its dword before the data, or the data itself (immediate) */
        uint32_t hdr = m->kind == VGT_HDR_IMMD || !m->pos.dword ? m->pos.dword : m->pos.dword - 1;
        /* the data of the draw's macro call may come in headers of its own: the call goes on */
        if (k->pending && !(k->pending_macro && is_macro_method(m) && (m->mthd & 4u))) {
            add_piece(s, m->pos.entry, hdr);   /* after the draw */
            k->pending = k->pending_macro = 0;
        }
        k->hdr_entry = m->pos.entry, k->hdr_dword = hdr;
    }
    while (k->next < o->ndraw_cuts && pos_cmp(m->pos.seq, m->pos.entry, m->pos.dword, &o->draw_cuts[k->next]) >= 0) {
        const vgt_replay_draw_cut *c = &o->draw_cuts[k->next++];
        if (c->seq != m->pos.seq) continue;
        /* before the draw: the work before it (clears, copies, earlier draws' tails) is a piece of its own,
         * so that the draw's rows are its stores alone */
        if (!k->pending) add_piece(s, k->hdr_entry, k->hdr_dword);
        if (k->tail_first < 0) k->tail_first = (int64_t)c->number;
        k->tail_count++;
        k->pending = 1;
        if (is_macro_method(m)) k->pending_macro = 1;
    }
}

const stream_sub sub_cuts = {.name = "cuts", .active = active, .begin = begin, .method = on_method};

/* The entry with its LENGTH replaced (every other bit kept). */
static uint64_t with_length(uint64_t e, uint32_t n)
{
    uint32_t w1 = (vgt_nv_gp_w1(e) & ~(VGT_NV_GP_MAX_LENGTH << 10)) | (n & VGT_NV_GP_MAX_LENGTH) << 10;
    return vgt_nv_gp_join(vgt_nv_gp_w0(e), w1);
}

/* After a piece: wait for its work, read the watched ranges back (rows named by the piece's draws) and
 * take what was read as the next piece's "before". */
static vgt_status piece_done(vgt_replay *rp, int64_t first, uint32_t count, vgt_error *err)
{
    engine_wait_submission(rp);
    rp->census.draw_first = first;
    rp->census.draw_count = count;
    return census_after(rp, 1, err);
}

vgt_status draw_cuts_submit(vgt_replay *rp, uint32_t ch, const uint64_t *ents, uint32_t count, int *done,
                            vgt_error *err)
{
    draw_cut_state *k = &rp->cuts;
    *done = 0;
    if (!active(rp) || rp->run_rec == NULL || k->seq != rp->run_rec->seq) return VGT_OK;
    rp->census.draw_first = k->tail_first;
    rp->census.draw_count = k->tail_count;
    if (!k->npieces) return VGT_OK;   /* one piece: the submission's own census closes it */
    uint64_t *buf = malloc(((size_t)count + 1) * sizeof *buf);
    if (!buf) return VGT_FAIL(err, VGT_E_NOMEM, rp->cur_seq, "census per draw: out of memory for %u entries", count);
    uint32_t e = 0, skip = 0;   /* the next entry, and the dwords of it the earlier pieces ran */
    vgt_status rc = VGT_OK;
    for (uint32_t p = 0; p <= k->npieces && rc == VGT_OK; p++) {
        uint32_t end_e = p < k->npieces ? k->pieces[p].entry : count, end_d = p < k->npieces ? k->pieces[p].dword : 0;
        uint32_t n = 0;
        for (; e < count && (e < end_e || (e == end_e && end_d > skip)); ) {
            uint64_t raw = ents[e];
            uint32_t len = vgt_nv_gp_length(raw);
            uint32_t stop = e == end_e ? end_d : len;
            if (vgt_nv_gp_is_control(raw)) buf[n++] = raw;
            else if (stop > skip) buf[n++] = with_length(vgt_nv_gp_with_va(raw, vgt_nv_gp_va(raw) + 4ull * skip), stop - skip);
            if (e == end_e && !vgt_nv_gp_is_control(raw) && stop < len) {
                skip = stop;
                break;
            }
            e++, skip = 0;
        }
        vgt_error be;
        vgt_status st = n ? rp->ops->submit(rp->be, ch, buf, n, 0, &be) : VGT_OK;
        if (st == VGT_E_FAULT || st == VGT_E_LIMIT) {
            rp->sum.faults++;   /* reported through the backend's events; the replay goes on */
            break;
        }
        if (st != VGT_OK) {
            rc = VGT_FAIL(err, st, rp->cur_seq, "submission at seq %llu: %s", (unsigned long long)rp->cur_seq, be.msg);
            break;
        }
        if (p < k->npieces) rc = piece_done(rp, k->pieces[p].draw_first, k->pieces[p].draw_count, err);
    }
    free(buf);
    rp->census.draw_first = k->tail_first;
    rp->census.draw_count = k->tail_count;
    *done = 1;
    return rc;
}

void draw_cuts_free(vgt_replay *rp)
{
    free(rp->cuts.pieces);
    memset(&rp->cuts, 0, sizeof rp->cuts);
}
