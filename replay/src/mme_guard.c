/* mme_guard.c: keep macro calls that would raise an MME exception off the GPU.
 *
 * Why: an MME exception (Xid 13, "Graphics Exception: ILLEGAL_OPCODE", ESR 0x404490 bit 2) in any
 * channel leaves the H200 unable to finish a stock Vulkan draw by any other process until the machine
 * restarts; GL draws and CUDA kernels still run, and waiting, new channels and valid macro calls do not
 * bring it back (tests/gpu/aftereffect.sh; backend/gpu/README.md "Engine exceptions"). So on a hardware
 * backend every channel's macro uploads and calls are run through the MME simulator first, and a
 * submission whose call the simulator says raises an exception the hardware raises too (the self-test's
 * agreement row mme_mul_out confirms ILLEGAL_OPCODE) is not submitted: it is reported and counted as
 * refused. options.force lets it through. Other error classes stay allowed: the simulator flags some
 * calls the hardware runs cleanly (extra parameters left by NVIDIA's guard macros).
 * The simulator's work is bounded by the MME budgets (vgt/mme.h), shared by every channel: a hostile trace
 * cannot keep it busy for minutes. A call over budget is not simulated, so nothing vouches for it: its
 * submission is refused like one that raises an exception.
 * It subscribes to the channel's decoded stream (stream.c: sub_mme_guard). */
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "vgt/mme.h"

/* The simulator's error classes known to raise an exception on the hardware (checked on the H200). */
static int raises_on_hardware(vgt_mme_error e) { return e == VGT_MME_ILLEGAL_OPCODE; }

int mme_guard_active(const vgt_replay *rp)
{
    return (rp->ops->caps() & VGT_CAP_ASYNC) && !rp->opt.force;
}

static vgt_status on_call(void *user, const vgt_mme_call *call, vgt_error *err)
{
    (void)err;
    engine_channel *c = user;
    if (call->status == VGT_OK || !call->result || !raises_on_hardware(call->result->error) || c->mme_refuse[0])
        return VGT_OK;
    snprintf(c->mme_refuse, sizeof c->mme_refuse, "CALL_MME_MACRO(%u) of class 0x%04x (start 0x%x): the MME "
             "simulator predicts %s at pc %u, which the GPU raises as a graphics exception",
             call->macro, call->cls, call->start, vgt_mme_error_name(call->result->error), call->result->pc);
    return VGT_OK;
}

/* One method write of class cls to the channel's tracker (made at the first write of a class with an MME). */
static void feed(vgt_replay *rp, engine_channel *c, uint32_t cls, uint32_t mthd, uint32_t data)
{
    vgt_error e;
    vgt_mme_format fmt = vgt_mme_format_for_class(cls);
    if (c->mme_off || fmt == VGT_MME_NONE) return;
    /* a class of another format than the tracker's: the tracker refuses it without a change (no message
     * formatted for every such write) */
    if (c->mme && vgt_mme_tracker_format(c->mme) != fmt) return;
    if (!c->mme) {
        vgt_mme_tracker_config cfg = {.cls = cls, .on_call = on_call, .user = c, .budget = &rp->mme_guard_budget};
        if (vgt_mme_tracker_create(&cfg, &c->mme, &e) != VGT_OK) {
            c->mme = NULL;
            c->mme_off = 1;
            return;
        }
    }
    if (vgt_mme_tracker_feed_class(c->mme, cls, mthd, data, &e) == VGT_E_LIMIT) {
        vgt_mme_tracker_destroy(c->mme);   /* more MME classes than a channel has: stop guarding it */
        c->mme = NULL;
        c->mme_off = 1;
    }
}

/* A CHANNEL_METHODS record restores a channel's engine state (a trace cut out of a longer one): its writes
 * (macro uploads and bindings among them) reach the guard's tracker too, so the calls after the cut run on
 * the macros the GPU will hold, and calls the restore itself makes are checked. Returns 1 when the restore
 * must not reach the GPU (c->mme_refuse says why). */
int mme_guard_state(vgt_replay *rp, engine_channel *c, const vgt_state_method *w, uint32_t n)
{
    if (!mme_guard_active(rp)) return 0;
    c->mme_refuse[0] = 0;
    const vgt_model_channel *mc = vgt_model_channel_find(rp->model, c->client, c->handle);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t cls = mc && mc->has_state && w[k].subch < VGT_SUBCHANNELS ? mc->state.subch_class[w[k].subch] : 0;
        if (cls) feed(rp, c, cls, w[k].method, w[k].value);
    }
    vgt_error e;
    if (c->mme) vgt_mme_tracker_flush(c->mme, &e);
    return c->mme_refuse[0] != 0;
}

/* One decoded method of the channel (every class: the tracker refuses those without an MME). */
static void on_method(stream_submit *s, const vgt_method *m)
{
    if (!m->masked) feed(s->rp, s->c, m->cls, m->mthd, m->data);
}

/* A run of one method: the tracker takes it whole (a write that only sets the shadow costs one). */
static void on_run(stream_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    engine_channel *c = s->c;
    vgt_mme_format fmt = vgt_mme_format_for_class(m->cls);
    if (m->masked || c->mme_off || fmt == VGT_MME_NONE || (c->mme && vgt_mme_tracker_format(c->mme) != fmt)) return;
    if (!c->mme || count == 1) {   /* the first write makes the tracker */
        on_method(s, m);
        if (count == 1) return;
        data += 4, count--;
        if (c->mme_off || !c->mme) return;
    }
    vgt_error e;
    if (vgt_mme_tracker_feed_run(c->mme, m->cls, m->mthd, data, count, &e) == VGT_E_LIMIT) {
        vgt_mme_tracker_destroy(c->mme);   /* as feed: more MME classes than a channel has */
        c->mme = NULL;
        c->mme_off = 1;
    }
}

static unsigned begin(stream_submit *s)
{
    vgt_replay *rp = s->rp;
    s->c->mme_refuse[0] = 0;
    vgt_mme_budget_next_submission(&rp->mme_guard_budget);
    rp->mme_guard_budget.submissions = (uint64_t)rp->cur_index;   /* the note names the trace's submission */
    rp->mme_guard_refused = rp->mme_guard_budget.refused;
    return STREAM_METHODS;
}

/* After the submission's methods: a call still collecting parameters completes with the submission;
 * c->mme_refuse then says why the submission must not run ("" when it may). */
static void end(stream_submit *s)
{
    vgt_error e;
    engine_channel *c = s->c;
    vgt_replay *rp = s->rp;
    if (c->mme) vgt_mme_tracker_flush(c->mme, &e);
    uint64_t unchecked = rp->mme_guard_budget.refused - rp->mme_guard_refused;
    if (unchecked && !c->mme_refuse[0]) {
        char note[160];
        vgt_mme_budget_note(&rp->mme_guard_budget, note, sizeof note);
        snprintf(c->mme_refuse, sizeof c->mme_refuse, "%llu macro calls not checked by the MME simulator (%s)",
                 (unsigned long long)unchecked, note);
    }
}

static void channel_free(engine_channel *c)
{
    if (c->mme) vgt_mme_tracker_destroy(c->mme);
    c->mme = NULL;
    c->mme_off = 0;
    c->mme_refuse[0] = 0;
}

static int active(const vgt_replay *rp) { return mme_guard_active(rp); }

const stream_sub sub_mme_guard = {.name = "mme_guard", .active = active, .begin = begin, .method = on_method,
                                  .run = on_run, .end = end, .channel_free = channel_free};
