/* stream.c: each submission is decoded once. Every engine channel has one push-buffer decoder
 * (vgt_pb_state: subchannel bindings, runs across entries) and, when a subscriber takes events, one
 * semantic tracker (analyze's events.h). The decoded methods, GPFIFO entries and events go to a small
 * list of subscribers, in the engine's order:
 *
 *   GPFIFO_SUBMIT --vgt_pb_decode_submit (channel's decoder)--> entry / method
 *        method --> [semantic tracker --> event] --> each subscriber: reloc, volatile, mme_guard, rt
 *
 *   reloc      (reloc_patch.c) address operands into moved mappings rewritten in a copy of the segments
 *   volatile   (volatile.c)    timestamps and report counters, left out of checks without a write log
 *   mme_guard  (mme_guard.c)   macro calls the MME simulator says would raise an exception (hardware)
 *   rt         (rt_track.c)    the render targets bound (--list-rt, --dump-rt; the census watches them)
 *   synth      (lane_synth.c)  the work of each submission rebuilt into a fresh stream (lane synth; auto on hardware)
 *   count      (live_count.c)  launches, draws and macro calls per channel (live counters)
 *   cuts       (draw_cuts.c)   where each listed draw's work ends (the census per draw)
 *   state      (state_dump.c)  the semaphores released, for --dump-state
 *
 * Which subscribers take part is decided once, when the replay starts (each one's active()); each says at
 * begin() whether it wants this submission's methods: when none does, the decoder runs for state only
 * (no per-method calls), as fast as a decode can be. The census reads back what rt adds; the checks use
 * what volatile finds; a fault window (window.c) re-decodes the faulted submission from the snapshot of
 * the decoder taken before it (pb_before): a snapshot, not a second decoder that follows the stream.
 * The decoder starts at the channel's first submission, from the model's CHANNEL_STATE when the trace
 * has one (a trace cut out of a longer one), and starts again after each later CHANNEL_STATE. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static const stream_sub *const all_subs[] = {&sub_reloc, &sub_volatile, &sub_mme_guard, &sub_sked_guard, &sub_rt, &sub_synth,
                                              &sub_state, &sub_count, &sub_cuts};

void stream_start(vgt_replay *rp)
{
    rp->nsubs = 0;
    rp->stream_events = 0;
    for (size_t i = 0; i < sizeof all_subs / sizeof all_subs[0] && rp->nsubs < STREAM_MAX_SUBS; i++) {
        if (!all_subs[i]->active(rp)) continue;
        rp->subs[rp->nsubs++] = all_subs[i];
        if (all_subs[i]->event) rp->stream_events = 1;
    }
}

/* The submission's decode, with the subscribers that asked for methods and entries. */
typedef struct decode_ctx {
    stream_submit s;
    const stream_sub *methods[STREAM_MAX_SUBS];
    const stream_sub *entries[STREAM_MAX_SUBS];
    uint32_t nmethods, nentries;
    int events;                  /* the tracker is fed */
} decode_ctx;

/* Events arrive while a method is fed, so always during a decode: the tracker's context is the replay,
 * which points at the decode under way. */
static void on_event(void *ctx, const vgt_event *ev)
{
    decode_ctx *d = ((vgt_replay *)ctx)->stream_cur;
    if (!d) return;
    for (uint32_t i = 0; i < d->s.rp->nsubs; i++)
        if (d->s.rp->subs[i]->event) d->s.rp->subs[i]->event(&d->s, ev);
}

static int on_method(void *ctx, const vgt_method *m)
{
    decode_ctx *d = ctx;
    engine_channel *c = d->s.c;
    vgt_error e;
    if (d->events && c->sem && vgt_sem_method(c->sem, m, &e) != VGT_OK) {
        vgt_sem_free(c->sem);   /* a tracker that failed once stays off for this channel */
        c->sem = NULL;
        c->sem_off = 1;
    }
    for (uint32_t i = 0; i < d->nmethods; i++) d->methods[i]->method(&d->s, m);
    return d->s.rc != VGT_OK;
}

/* A non-increasing run (one method, count dwords): the tracker takes it whole, then each subscriber (in
 * its run hook, or write by write). Within a run every write goes to one method, so no subscriber's view
 * changes with the order: a method a subscriber watches (the local-memory or notify methods, a macro call)
 * completes no event of the tracker's that the same subscriber takes, and the extractor (synth) keeps its
 * own order inside vgt_ldx_noninc_run. */
static int on_run(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    decode_ctx *d = ctx;
    engine_channel *c = d->s.c;
    vgt_error e;
    if (d->events && c->sem && vgt_sem_noninc_run(c->sem, m, data, count, 0, &e) != VGT_OK) {
        vgt_sem_free(c->sem);   /* as on_method: a tracker that failed once stays off for this channel */
        c->sem = NULL;
        c->sem_off = 1;
    }
    for (uint32_t i = 0; i < d->nmethods && d->s.rc == VGT_OK; i++) {
        const stream_sub *u = d->methods[i];
        if (u->run) {
            u->run(&d->s, m, data, count);
            continue;
        }
        for (uint32_t k = 0; k < count && d->s.rc == VGT_OK; k++) {
            vgt_method one = vgt_pb_run_method(m, data, k);
            u->method(&d->s, &one);
        }
    }
    return d->s.rc != VGT_OK;
}

static void on_entry(void *ctx, const vgt_gp_entry *e, uint32_t index, const vgt_mpos *pos)
{
    (void)pos;
    decode_ctx *d = ctx;
    for (uint32_t i = 0; i < d->nentries; i++) d->entries[i]->entry(&d->s, e, index);
}

/* The decoder starts at the channel's first submission (or again after a CHANNEL_STATE), the tracker
 * when a subscriber takes events (a tracker that cannot be made leaves the events off, as one that fails). */
static void channel_begin(vgt_replay *rp, engine_channel *c)
{
    if (!c->pb_started) {
        const vgt_model_channel *mc = vgt_model_channel_find(rp->model, c->client, c->handle);
        if (mc && mc->has_state) vgt_pb_state_adopt(&c->pb, c->cls, &mc->state);
        else vgt_pb_state_init(&c->pb, c->cls);
        c->pb_started = 1;
    }
    if (rp->stream_events && !c->sem && !c->sem_off) {
        /* no memory reader: QMD bytes come from what the stream wrote (the tracker's overlay) */
        vgt_sem_config cfg = {.on_event = on_event, .ctx = rp};
        vgt_error e;
        if (vgt_sem_new(&c->sem, &cfg, &e) != VGT_OK) c->sem = NULL, c->sem_off = 1;
    }
}

vgt_status stream_decode(vgt_replay *rp, engine_channel *c, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub,
                         vgt_error *err)
{
    decode_ctx d = {.s = {.rp = rp, .c = c, .rec = rec, .sub = sub, .rc = VGT_OK, .err = err}};
    channel_begin(rp, c);
    for (uint32_t i = 0; i < rp->nsubs; i++) {
        const stream_sub *u = rp->subs[i];
        unsigned want = u->begin ? u->begin(&d.s) : 0;
        if ((want & STREAM_METHODS) && u->method) d.methods[d.nmethods++] = u;
        if ((want & STREAM_ENTRIES) && u->entry) d.entries[d.nentries++] = u;
    }
    if (d.s.rc != VGT_OK) return d.s.rc;
    d.events = c->sem != NULL;
    c->pb_before = c->pb;
    int methods = d.nmethods || d.events;
    vgt_pb_callbacks cb = {.method = methods ? on_method : NULL, .entry = d.nentries ? on_entry : NULL, .ctx = &d,
                           .noninc_run = methods ? on_run : NULL};
    vgt_error e;
    rp->stream_cur = &d;
    vgt_status dec = vgt_pb_decode_submit(&c->pb, rec->seq, sub, &cb, &e);
    rp->stream_cur = NULL;
    if (dec != VGT_OK)
        engine_warn(rp, "submission %lld (seq %llu) not decoded: %s", (long long)rp->cur_index,
                    (unsigned long long)rec->seq, e.msg);
    if (d.s.rc != VGT_OK) return d.s.rc;
    for (uint32_t i = 0; i < rp->nsubs; i++)
        if (rp->subs[i]->end) rp->subs[i]->end(&d.s);
    return d.s.rc;
}

void stream_channel_free(engine_channel *c)
{
    for (size_t i = 0; i < sizeof all_subs / sizeof all_subs[0]; i++)
        if (all_subs[i]->channel_free) all_subs[i]->channel_free(c);
    if (c->sem) vgt_sem_free(c->sem);
    c->sem = NULL;
    c->sem_off = 0;
    c->pb_started = 0;
}
