/* lane_synth.c: lane 2, synthesized launches. The captured push buffers are not run: each submission's
 * work (analyze's launch_desc.h: launches described in full, uploads, copies, semaphores) is rebuilt by a
 * synthesizer (analyze's synth.h) into a fresh push buffer that runs on the captured channel's backend
 * channel (its engine objects, group and subcontext as captured), with fresh QMDs in the compute class's
 * QMD version whose program, constant buffers and QMD live in memory of the lane's own (the arena) with
 * every address field relocated. Input memory is the replay's (restored from the trace, produced by the
 * submissions before); outputs land at their captured VAs, where --check compares them.
 *
 *   stream.c decode --> subscriber `synth`: the channel's work extractor (its own tracker and MME, over
 *        the replay's memory) --> each work item into the channel's synthesizer --> at the end of the
 *        submission the plan is decoded back and compared (vgt_synth_check)
 *   lane run --> plan ok: the captured submission goes to its channel state-only (subchannel bindings and
 *                macros stay right for submissions that run verbatim; on the GPU it runs nothing), then
 *                the arena written (program, constant buffers, QMDs, push buffer) and one GPFIFO entry on
 *                the same channel. Not a channel of the lane's own per captured channel: the H200 backend
 *                holds 32 live channels and realizes a CUDA context's 20 before the first submission, so
 *                the 12th lane channel of vadd (and its compute channel, the 13th) could not be opened and
 *                its launches never ran. Acquires keep waiting on the channels they waited on when captured.
 *                A submission that runs verbatim leaves the synthesizer to set bindings and state again
 *             --> work it cannot synthesize (draws, block-linear copies): the submission runs verbatim
 *             --> a launch it must not build (program bytes not in the trace, a QMD the layout cannot
 *                 hold, a stream that does not decode back): not submitted, reported, counted as refused
 *
 * `--lane auto` on a hardware backend: verbatim, unless a segment of the submission was captured truncated
 * (its push buffer is not all in the trace); then synthesized when it can be. A submission the MME guard
 * refuses stays refused: its work would be rebuilt from the emissions of the very macro call the simulator
 * says raises an exception. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/launch_desc.h"
#include "vgt/synth.h"

#define ARENA_SIZE (256ull << 20)
/* the top of the arena is never recycled: a CUDA graph's nodes (QMDs that wait for a scheduling QMD, with
 * their programs and constant buffers) are sent once and run by every later graph launch */
#define ARENA_KEEP (32ull << 20)
#define ARENA_RECYCLED (ARENA_SIZE - ARENA_KEEP)
#define ARENA_ALIGN (4ull << 30)
#define ARENA_FLOOR (64ull << 30)

enum { PLAN_OK = 0, PLAN_UNSUPPORTED = 1, PLAN_REFUSED = 2 };

typedef struct synth_chan {
    vgt_ldx_channel *lc;
    vgt_synth *syn;
    int status;                   /* PLAN_* of the current submission */
    char why[560];
    uint64_t refused;             /* the extractor's macro calls refused (MME budget) before this submission */
} synth_chan;

struct synth_lane {
    vgt_ldx *x;
    synth_chan *cur;              /* the channel being decoded */
    uint64_t arena_va, arena_used, keep_used;
    int arena_mapped, arena_failed;
    uint8_t warned_fallback;
    /* the current submission's plan may run (--lane synth; lane auto: a segment captured truncated). When
     * it cannot, the extractor still follows the channel's methods (its state: bindings, macros, QMD
     * fields) but builds no work and reads no memory: on the GPU a read crosses the PCIe BAR, and the
     * launches' programs, constant buffers and QMDs of every verbatim submission (69 KB each in
     * many_launches) cost more than the rest of the engine. */
    int planning;
};

static int synth_active(const vgt_replay *rp)
{
    if (!(rp->ops->caps() & VGT_CAP_LANE_SYNTH)) return 0;
    return rp->opt.lane == VGT_LANE_SYNTH || (rp->opt.lane == VGT_LANE_AUTO && (rp->ops->caps() & VGT_CAP_ASYNC));
}

/* ---- memory: the replay's, through the one captured-to-replay translation ---- */

static vgt_status replay_mem(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    (void)err;
    vgt_replay *rp = ctx;
    vgt_error e;
    *known = 0;
    if (!rp->synth->planning) {
        memset(dst, 0, len);   /* unknown: no plan of this submission will run */
        return VGT_OK;
    }
    if (!rp->be || rp->ops->mem_read(rp->be, rp->vas, addr_to_replay(rp, va), dst, len, &e) != VGT_OK) {
        memset(dst, 0, len);
        return VGT_OK;   /* not mapped in the replay: unknown */
    }
    *known = len;
    return VGT_OK;
}

static int arena_map(vgt_replay *rp)
{
    struct synth_lane *L = rp->synth;
    if (L->arena_mapped) return 1;
    if (L->arena_failed) return 0;
    vgt_error e;
    if (addr_own_range(rp, ARENA_SIZE, ARENA_ALIGN, ARENA_FLOOR, &L->arena_va, &e) != VGT_OK ||
        rp->ops->map(rp->be, rp->vas, L->arena_va, ARENA_SIZE, VGT_APERTURE_VIDMEM, &e) != VGT_OK) {
        L->arena_failed = 1;
        engine_warn(rp, "synth lane: no memory of its own (%s)", e.msg);
        return 0;
    }
    L->arena_mapped = 1;
    return 1;
}

/* Takes size bytes at align from one part of the arena: [base, base + limit), *used of it taken so far. */
static uint64_t arena_take(vgt_replay *rp, uint64_t *used, uint64_t base, uint64_t limit, uint64_t size, uint64_t align)
{
    if (!arena_map(rp)) return 0;
    if (align < 256) align = 256;
    uint64_t at = (*used + align - 1) & ~(align - 1);
    if (at + size > limit || at + size < at) return 0;
    *used = at + size;
    return rp->synth->arena_va + base + at;
}

static uint64_t arena_alloc(void *ctx, uint64_t size, uint64_t align)
{
    vgt_replay *rp = ctx;
    return arena_take(rp, &rp->synth->arena_used, 0, ARENA_RECYCLED, size, align);
}

static uint64_t arena_alloc_keep(void *ctx, uint64_t size, uint64_t align)
{
    vgt_replay *rp = ctx;
    return arena_take(rp, &rp->synth->keep_used, ARENA_RECYCLED, ARENA_KEEP, size, align);
}

/* Past half the arena, at the start of a submission: every earlier submission has finished (the engine
 * waits for each), so the arena starts again. */
static void arena_recycle(vgt_replay *rp)
{
    struct synth_lane *L = rp->synth;
    if (L->arena_used <= ARENA_RECYCLED / 2) return;
    vgt_error e;
    if (rp->ops->idle) rp->ops->idle(rp->be, 0, &e);
    L->arena_used = 0;
    for (uint32_t i = 0; i < rp->nchans; i++) {
        synth_chan *sc = rp->chans[i].synth;
        if (sc && sc->syn) vgt_synth_forget_memory(sc->syn);
    }
}

/* ---- the subscriber ---- */

static void on_work(void *ctx, const vgt_work *w)
{
    vgt_replay *rp = ctx;
    synth_chan *sc = rp->synth->cur;
    if (!rp->synth->planning || !sc || sc->status != PLAN_OK || !sc->syn) return;
    vgt_error e;
    vgt_status rc = vgt_synth_work(sc->syn, w, &e);
    if (rc == VGT_OK) return;
    sc->status = rc == VGT_E_UNSUPPORTED ? PLAN_UNSUPPORTED : PLAN_REFUSED;
    snprintf(sc->why, sizeof sc->why, "%s", e.msg);
}

static vgt_status lane_start(vgt_replay *rp, vgt_error *err)
{
    if (rp->synth) return VGT_OK;
    struct synth_lane *L = calloc(1, sizeof *L);
    if (!L) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "synth lane: out of memory");
    vgt_ldx_config cfg = {.on_work = on_work, .ctx = rp, .mem_read = replay_mem, .mem_ctx = rp,
                          .trace_read = vgt_sem_model_reader, .trace_ctx = rp->model, .model = rp->model};
    vgt_status rc = vgt_ldx_new(&cfg, &L->x, err);
    if (rc != VGT_OK) {
        free(L);
        return rc;
    }
    rp->synth = L;
    return VGT_OK;
}

static int sub_active(const vgt_replay *rp) { return synth_active(rp); }

/* Whether the plan of this submission can run: always with --lane synth; with lane auto only when a
 * segment was captured truncated (lane_run_auto). */
static int plan_may_run(const vgt_replay *rp, const vgt_rec_gpfifo_submit *sub)
{
    if (rp->opt.lane == VGT_LANE_SYNTH) return 1;
    for (uint32_t i = 0; sub && i < sub->segment_count; i++)
        if (sub->segments[i].flags & VGT_SEGMENT_FLAG_TRUNCATED) return 1;
    return 0;
}

static unsigned sub_begin(stream_submit *s)
{
    vgt_replay *rp = s->rp;
    engine_channel *c = s->c;
    vgt_error e;
    if (!rp->synth && lane_start(rp, &e) != VGT_OK) return 0;
    synth_chan *sc = c->synth;
    if (!sc) {
        if (!(sc = calloc(1, sizeof *sc))) return 0;
        c->synth = sc;
        vgt_synth_config scfg = {.alloc = arena_alloc, .alloc_keep = arena_alloc_keep, .ctx = rp, .host_cls = c->cls,
                                 .context_state_in_stream = 1};
        if (vgt_ldx_channel_new(rp->synth->x, c->client, c->handle, c->cls, &sc->lc, &e) != VGT_OK ||
            vgt_synth_new(&scfg, &sc->syn, &e) != VGT_OK) {
            sc->status = PLAN_UNSUPPORTED;
            snprintf(sc->why, sizeof sc->why, "%s", e.msg);
            return 0;
        }
    }
    if (!sc->lc || !sc->syn) return 0;
    arena_recycle(rp);
    vgt_ldx_submit_begin(sc->lc, (uint64_t)rp->cur_index, s->rec->seq);
    sc->refused = vgt_ldx_calls_refused(rp->synth->x);
    vgt_synth_begin(sc->syn);
    rp->synth->planning = plan_may_run(rp, s->sub);
    vgt_ldx_channel_quiet(sc->lc, !rp->synth->planning);
    sc->status = rp->synth->planning ? PLAN_OK : PLAN_UNSUPPORTED;
    snprintf(sc->why, sizeof sc->why, "%s", rp->synth->planning ? "" : "no segment captured truncated");
    rp->synth->cur = sc;
    return STREAM_METHODS;
}

static void sub_method(stream_submit *s, const vgt_method *m)
{
    synth_chan *sc = s->c->synth;
    vgt_error e;
    if (!sc || !sc->lc) return;
    if (vgt_ldx_method(sc->lc, m, &e) != VGT_OK && sc->status == PLAN_OK) {
        sc->status = PLAN_UNSUPPORTED;
        snprintf(sc->why, sizeof sc->why, "the work extractor stopped: %.480s", e.msg);
    }
    /* Local memory is the context's, shared by the group's channels: CUDA sets it on one channel when a
     * kernel needs more (streams_threads: submission 150 on 0x5c00001c, no launch in it) and launches on
     * the other channels rely on it. The captured submission runs state-only, so the plan carries these
     * methods where the driver sent them; without them the H200 raised Xid 13
     * SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE at the first launch on another channel. */
    if (s->rp->synth->planning && sc->status == PLAN_OK && !m->masked && !m->is_host &&
        vgt_synth_is_context_state(m->cls, m->mthd) &&
        vgt_synth_context_state(sc->syn, m->subch, m->cls, m->mthd, m->data, &e) != VGT_OK) {
        sc->status = PLAN_UNSUPPORTED;
        snprintf(sc->why, sizeof sc->why, "local memory state not carried: %.480s", e.msg);
    }
}

/* A run of one method: the extractor takes it whole; a run of context state (planning) goes write by write. */
static void sub_run(stream_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    synth_chan *sc = s->c->synth;
    vgt_error e;
    if (!sc || !sc->lc) return;
    if (s->rp->synth->planning && !m->masked && !m->is_host && vgt_synth_is_context_state(m->cls, m->mthd)) {
        for (uint32_t i = 0; i < count; i++) {
            vgt_method one = vgt_pb_run_method(m, data, i);
            sub_method(s, &one);
        }
        return;
    }
    if (vgt_ldx_noninc_run(sc->lc, m, data, count, &e) != VGT_OK && sc->status == PLAN_OK) {
        sc->status = PLAN_UNSUPPORTED;
        snprintf(sc->why, sizeof sc->why, "the work extractor stopped: %.480s", e.msg);
    }
}

static void sub_end(stream_submit *s)
{
    synth_chan *sc = s->c->synth;
    vgt_error e;
    if (!sc || !sc->lc) return;
    if (vgt_ldx_submit_end(sc->lc, &e) != VGT_OK && sc->status == PLAN_OK) {
        sc->status = PLAN_UNSUPPORTED;
        snprintf(sc->why, sizeof sc->why, "the work extractor stopped: %.480s", e.msg);
    }
    s->rp->synth->cur = NULL;
    if (!s->rp->synth->planning) return;   /* its plan cannot run: nothing to check */
    s->rp->synth->planning = 0;
    /* a macro call over the MME budget did not run: the work it builds is not in the plan, which must not
     * stand for the submission (it runs verbatim, where the MME guard has its say) */
    uint64_t refused = vgt_ldx_calls_refused(s->rp->synth->x) - sc->refused;
    if (refused && sc->status == PLAN_OK) {
        char note[256];
        vgt_ldx_budget_note(s->rp->synth->x, note, sizeof note);
        sc->status = PLAN_UNSUPPORTED;
        snprintf(sc->why, sizeof sc->why, "%llu macro calls not run by the work extractor: %s",
                 (unsigned long long)refused, note);
    }
    /* decoded back before it can reach a GPU */
    if (sc->status == PLAN_OK && vgt_synth_plan_get(sc->syn)->nruns && vgt_synth_check(sc->syn, &e) != VGT_OK) {
        sc->status = PLAN_REFUSED;
        snprintf(sc->why, sizeof sc->why, "the synthesized stream does not decode back to the captured work: %.440s", e.msg);
    }
}

static void sub_channel_free(engine_channel *c)
{
    synth_chan *sc = c->synth;
    if (!sc) return;
    vgt_ldx_channel_free(sc->lc);
    vgt_synth_free(sc->syn);
    free(sc);
    c->synth = NULL;
}

const stream_sub sub_synth = {.name = "synth", .active = sub_active, .begin = sub_begin, .method = sub_method,
                              .run = sub_run, .end = sub_end, .channel_free = sub_channel_free};

void lane_synth_memory(vgt_replay *rp, uint64_t va, uint64_t len)
{
    if (rp->synth) vgt_ldx_forget(rp->synth->x, va, len);
}

void lane_synth_free(vgt_replay *rp)
{
    if (!rp->synth) return;
    vgt_ldx_free(rp->synth->x);
    free(rp->synth);
    rp->synth = NULL;
}

int lane_synth_ready(const vgt_replay *rp, const engine_channel *c)
{
    const synth_chan *sc = c->synth;
    return rp->synth && sc && sc->syn && sc->status == PLAN_OK;
}

/* ---- running a plan ---- */

static void count_lane(vgt_replay *rp, vgt_lane l)
{
    if (l >= VGT_LANE_VERBATIM && l <= VGT_LANE_CUDA) rp->sum.lanes[l]++;
}

/* The plan of the submission, on the lane's channel. */
static vgt_status run_plan(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                           engine_channel *c, vgt_error *err)
{
    synth_chan *sc = c->synth;
    const vgt_synth_plan *p = vgt_synth_plan_get(sc->syn);
    /* the captured submission only keeps its channel's state (bindings, macros) */
    if (sked_guard_plan(rp, c, p)) return sked_refuse(rp, c);   /* checked before anything reaches the GPU */
    VGT_TRY(lane_state_only(rp, rec, sub, ch, err));
    count_lane(rp, VGT_LANE_SYNTH);
    if (!p->nruns) return VGT_OK;
    vgt_error e;
    for (uint32_t i = 0; i < p->nblobs; i++) {
        const vgt_synth_blob *b = &p->blobs[i];
        if (rp->ops->mem_write(rp->be, rp->vas, b->va, p->bytes + b->off, b->len, &e) != VGT_OK) {
            engine_warn(rp, "submission %lld: synthesized %s not written: %s", (long long)rp->cur_index, b->what, e.msg);
            return VGT_OK;
        }
    }
    uint32_t ndw = 0;
    const uint32_t *dw = vgt_synth_pushbuf(sc->syn, &ndw, &e);
    uint64_t pb = dw ? arena_alloc(rp, (uint64_t)ndw * 4, 256) : 0;
    if (!dw || !pb || rp->ops->mem_write(rp->be, rp->vas, pb, dw, (uint64_t)ndw * 4, &e) != VGT_OK) {
        engine_warn(rp, "submission %lld: synthesized push buffer not written: %s", (long long)rp->cur_index,
                    dw && pb ? e.msg : "no memory left for it");
        return VGT_OK;
    }
    uint64_t entries[16];
    uint32_t nent = 0;
    for (uint32_t done = 0; done < ndw && nent < 16; nent++) {   /* 8 MiB of dwords per entry */
        uint32_t k = ndw - done < VGT_NV_GP_MAX_LENGTH ? ndw - done : VGT_NV_GP_MAX_LENGTH;
        entries[nent] = vgt_nv_gp_encode(pb + (uint64_t)done * 4, k, 0);
        done += k;
    }
    vgt_status rc = rp->ops->submit(rp->be, ch, entries, nent, 0, &e);
    if (rc == VGT_E_FAULT || rc == VGT_E_LIMIT) {
        /* a fault is the backend's event; a channel the backend could not open (its limit) is said here:
         * the submission's work did not run */
        if (rc == VGT_E_LIMIT)
            engine_warn(rp, "submission %lld: the synthesized submission did not run: %s", (long long)rp->cur_index, e.msg);
        rp->sum.faults++;
        return VGT_OK;
    }
    if (rc != VGT_OK) return VGT_FAIL(err, rc, rec->seq, "synthesized submission at seq %llu: %s", (unsigned long long)rec->seq, e.msg);
    return VGT_OK;
}

static void refuse_plan(vgt_replay *rp, synth_chan *sc)
{
    char msg[600];
    snprintf(msg, sizeof msg, "not submitted: %s", sc->why);
    rp->sum.synth_refused++;
    vgt_replay_report r = {.kind = VGT_RPT_EVENT, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .channel = rp->cur_channel, .event_kind = VGT_BEV_UNSUPPORTED, .msg = msg};
    engine_report(rp, &r);
}

vgt_status lane_run_synth(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                          vgt_error *err)
{
    engine_channel *c = rp->run_chan;
    synth_chan *sc = c ? c->synth : NULL;
    if (c && c->mme_refuse[0]) return engine_refuse(rp, c);   /* its work comes from that macro's emissions */
    if (sc && sc->syn && sc->status == PLAN_OK) return run_plan(rp, rec, sub, ch, c, err);
    if (sc && sc->status == PLAN_REFUSED) {
        refuse_plan(rp, sc);
        return lane_state_only(rp, rec, sub, ch, err);
    }
    /* work the lane does not synthesize (draws, ...): the captured push buffers run */
    if (!rp->synth || !rp->synth->warned_fallback) {
        engine_warn(rp, "submission %lld: %s; it runs verbatim (lane verbatim; later ones are counted, not reported)",
                    (long long)rp->cur_index, sc && sc->why[0] ? sc->why : "nothing to synthesize it from");
        if (rp->synth) rp->synth->warned_fallback = 1;
    }
    if (sc && sc->syn) vgt_synth_forget_state(sc->syn);   /* the captured methods set the channel's state now */
    return lane_run_verbatim(rp, rec, sub, ch, err);
}

vgt_status lane_run_auto(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                         vgt_error *err)
{
    engine_channel *c = rp->run_chan;
    int truncated = 0;
    for (uint32_t i = 0; i < sub->segment_count; i++)
        if (sub->segments[i].flags & VGT_SEGMENT_FLAG_TRUNCATED) truncated = 1;
    /* a submission the MME guard refuses stays refused: the macro the simulator says raises an exception is
     * the one whose emissions the synthesized stream would be built from */
    if (c && truncated && !c->mme_refuse[0] && lane_synth_ready(rp, c)) return run_plan(rp, rec, sub, ch, c, err);
    if (c && c->mme_refuse[0]) return engine_refuse(rp, c);
    if (c && c->synth && c->synth->syn) vgt_synth_forget_state(c->synth->syn);
    return lane_run_verbatim(rp, rec, sub, ch, err);
}
