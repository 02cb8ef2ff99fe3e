/* mme_trace.c: MME macros across a trace: one vgt_mme_tracker per channel incarnation (mme_trace_channel.c),
 * fed every method of the channel's MME objects in stream order with their class; each completed call
 * resolved to the registry version that ran and handed to the caller with its position, parameters,
 * emissions and outcome.
 *
 *   method of an MME class --object_for()--> object --vgt_mme_tracker_feed_class(channel's tracker)-->
 *                                                   --call done: mt_tracker_call() -> the calling object
 *   end of submission --submit_end(): settle the channels touched (flush, register new bindings)-->
 *   end of walk --finish(): the same for every channel
 */
#include <stdlib.h>
#include <string.h>

#include "mme_trace_internal.h"
#include "vgt/grow.h"
#include "vgt/nv/clcb97.h"

vgt_status vgt_mme_trace_new(const vgt_mme_trace_config *cfg, vgt_mme_trace **out, vgt_error *err)
{
    if (!out) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "vgt_mme_trace_new needs an out pointer");
    vgt_mme_trace *t = calloc(1, sizeof *t);
    if (!t) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for the MME trace state");
    if (cfg) t->cfg = *cfg;
    vgt_mme_budget_init(&t->budget, t->cfg.budget_submission, t->cfg.budget_trace, t->cfg.budget_failed);
    t->last_object = MT_NONE;
    *out = t;
    return VGT_OK;
}


void vgt_mme_trace_free(vgt_mme_trace *t)
{
    if (!t) return;
    for (uint32_t i = 0; i < t->nobjects; i++) free(t->objects[i]);
    free(t->objects);
    free(t->touched);
    mt_channels_free(t);
    mt_registry_free(t);
    if (t->cfg.free_user) t->cfg.free_user(t->cfg.user);
    free(t);
}

void vgt_mme_trace_model(vgt_mme_trace *t, const vgt_model *model) { t->model = model; }

/* ---- the tracker's callbacks -------------------------------------------------------------------- */
vgt_status mt_tracker_read_mem(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    const vgt_mme_trace *t = ((mt_channel *)user)->trace;
    if (!t->model) return VGT_FAIL(err, VGT_E_FAULT, va, "no trace memory to read MME DMA from");
    uint64_t known = 0;
    VGT_TRY(vgt_model_mem_read(t->model, va, dst, len, &known, err));
    if (known < len)
        return VGT_FAIL(err, VGT_E_FAULT, va, "MME DMA read of %zu bytes at 0x%llx: only %llu of them were captured",
                        len, (unsigned long long)va, (unsigned long long)known);
    return VGT_OK;
}

static uint32_t category(mt_object *o, uint32_t method)
{
    uint32_t w = (method >> 2) & (MT_METHOD_WORDS - 1);
    if (!o->category[w]) o->category[w] = (uint16_t)vgt_mme_emit_category(o->cls, method);
    return o->category[w];
}

/* The registry version the call ran: the one last seen bound to j, or a new one when the body changed.
 * NULL when j was never bound (or nothing was uploaded at its start) or the registry is full. */
static vgt_status resolve_version(vgt_mme_trace *t, mt_object *o, const vgt_mme_call *mc, vgt_mme_trace_macro **out,
                                  vgt_error *err)
{
    *out = NULL;
    if (vgt_mme_tracker_macro(o->chan->tr, o->cls, mc->macro, NULL, NULL, NULL, NULL, NULL) != VGT_OK ||
        !mc->body_dwords) {
        t->stats.unbound_calls++;
        return VGT_OK;
    }
    uint32_t id = o->cur_version[mc->macro];
    if (id == MT_NONE || t->versions[id].start_dword != mc->start_dword || t->versions[id].hash != mc->body_hash) {
        VGT_TRY(mt_version(t, o, mc->macro, mc->start, mc->start_dword, mc->body_hash, mc->body_dwords, o->call_submission,
                           o->call_seq, &id, err));
        o->cur_version[mc->macro] = id;
    }
    if (id != MT_NONE) *out = &t->versions[id];
    return VGT_OK;
}

static void count_call(vgt_mme_trace *t, vgt_mme_trace_macro *v, const vgt_mme_trace_call *c)
{
    if (v) {
        v->calls++;
        v->emits += c->nemits;
        v->categories |= c->categories;
        if (c->status != VGT_OK) v->call_errors++;
    }
    t->stats.calls++;
    t->stats.emits += c->nemits;
    if (c->status != VGT_OK) t->stats.call_errors++;
    else if (c->result.params_consumed < c->result.params_total) t->stats.params_left_calls++;
    if (c->selected) t->stats.selected_calls++;
}

vgt_status mt_tracker_call(void *user, const vgt_mme_call *mc, vgt_error *err)
{
    mt_channel *ch = user;
    vgt_mme_trace *t = ch->trace;
    mt_object *o = mt_channel_object(ch, mc->cls);
    if (!o)   /* every class the tracker is fed comes through an object of the channel */
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "MME call of class 0x%04x on channel 0x%x has no object",
                        mc->cls, ch->channel);
    vgt_mme_trace_call c = {.id = t->next_call++, .submission = o->call_submission, .seq = o->call_seq,
                            .pos = o->call_pos, .client = o->client, .channel = o->channel, .subch = o->call_subch,
                            .cls = o->cls, .selected = o->call_selected, .index = mc->macro, .params = mc->params,
                            .nparams = mc->nparams, .params_truncated = mc->params_truncated, .status = mc->status,
                            .result = *mc->result, .emits = mc->emits, .nemits = mc->nemits, .message = ""};
    if (mc->status != VGT_OK && mc->err) c.message = mc->err->msg;
    for (uint32_t i = 0; i < mc->nemits; i++) {
        uint32_t cat = category(o, mc->emits[i].method);
        c.categories |= cat;
        if (cat == VGT_MME_EMIT_UNKNOWN) t->stats.unknown_emits++;
    }
    vgt_mme_trace_macro *v;
    VGT_TRY(resolve_version(t, o, mc, &v, err));
    c.macro = v;
    count_call(t, v, &c);
    if (t->cfg.on_call && t->cfg.on_call(t->cfg.user, &c)) {
        t->stopped = 1;
        return VGT_FAIL(err, VGT_E_EOF, VGT_NO_OFFSET, "stopped by the call callback");
    }
    return VGT_OK;
}

/* ---- objects ------------------------------------------------------------------------------------ */
static vgt_status object_new(vgt_mme_trace *t, const vgt_walk_channel *ch, uint32_t cls, mt_object **out,
                             vgt_error *err)
{
    if (t->nobjects >= VGT_MME_TRACE_MAX_OBJECTS)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "more than %u (channel, class) objects with an MME",
                        VGT_MME_TRACE_MAX_OBJECTS);
    if (t->nobjects == t->objects_cap) {   /* objects[] and touched[] share objects_cap */
        uint32_t ocap = t->objects_cap, tcap = t->objects_cap;
        if (vgt_grow(&t->objects, &ocap, t->nobjects + 1ull, 16) || vgt_grow(&t->touched, &tcap, t->nobjects + 1ull, 16))
            return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME objects", t->nobjects + 1);
        t->objects_cap = ocap < tcap ? ocap : tcap;
    }
    mt_object *o = calloc(1, sizeof *o);
    if (!o) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for an MME object");
    o->trace = t;
    o->index = t->nobjects;
    o->client = ch->client;
    o->channel = ch->handle;
    o->alloc_seq = ch->alloc_seq;
    o->cls = cls;
    o->fmt = vgt_mme_format_for_class(cls);
    for (uint32_t j = 0; j < VGT_MME_MACRO_COUNT; j++) o->cur_version[j] = MT_NONE;
    t->objects[t->nobjects++] = o;
    t->stats.objects = t->nobjects;
    *out = o;
    return mt_channel_join(t, o, err);
}

static bool object_is(const mt_object *o, const vgt_walk_channel *ch, uint32_t cls)
{
    return !o->retired && o->cls == cls && o->channel == ch->handle && o->client == ch->client;
}

/* The live object of (channel, class); a re-allocated channel retires its old channel and objects. */
static vgt_status object_for(vgt_mme_trace *t, const vgt_walk_channel *ch, uint32_t cls, mt_object **out,
                             vgt_error *err)
{
    mt_object *o = NULL;
    if (t->last_object != MT_NONE && object_is(t->objects[t->last_object], ch, cls)) o = t->objects[t->last_object];
    if (!o) {   /* through the channel's latest incarnation (hashed), never a scan of every object */
        mt_channel *c = mt_channel_latest(t, ch->client, ch->handle, vgt_mme_format_for_class(cls));
        mt_object *co = c ? mt_channel_object(c, cls) : NULL;
        if (co && object_is(co, ch, cls)) o = co;
    }
    if (o && o->alloc_seq != ch->alloc_seq) {   /* re-allocated: the old incarnation's state goes */
        VGT_TRY(mt_channel_retire(t, o->chan, err));
        o = NULL;
    }
    if (!o) VGT_TRY(object_new(t, ch, cls, &o, err));
    t->last_object = o->index;
    if (!o->touched) {
        o->touched = true;
        t->touched[t->ntouched++] = o->index;
    }
    *out = o;
    return VGT_OK;
}

/* ---- feeding --------------------------------------------------------------------------------------- */
static bool is_upload(uint32_t m)
{
    return m >= VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER && m <= VGT_MME_M_LOAD_START_ADDRESS_RAM;
}
static bool is_call(uint32_t m) { return m >= VGT_MME_M_CALL_MACRO0 && m < 4 * MT_METHOD_WORDS && !(m & 4); }

int vgt_mme_trace_needs_every_dword(uint32_t mthd)
{
    return (mthd >= NVCB97_LOAD_MME_INSTRUCTION_RAM_POINTER && mthd <= NVCB97_SET_MME_SHADOW_RAM_CONTROL) ||
           (mthd >= NVCB97_SET_MME_MEM_ADDRESS_A && mthd <= NVCB97_SET_MME_DATA_FIFO_CONFIG) ||
           mthd >= NVCB97_CALL_MME_MACRO(0);
}

vgt_status vgt_mme_trace_method(vgt_mme_trace *t, const vgt_walk_submit *s, const vgt_method *m, vgt_error *err)
{
    if (m->is_host || m->masked || vgt_mme_format_for_class(m->cls) == VGT_MME_NONE) return VGT_OK;
    mt_object *o;
    VGT_TRY(object_for(t, s->chan, m->cls, &o, err));
    if (is_upload(m->mthd)) o->chan->uploads_seen = true;
    VGT_TRY(vgt_mme_tracker_feed_class(o->chan->tr, m->cls, m->mthd, m->data, err));
    if (is_call(m->mthd)) {   /* after the feed: it completed the previous call under the old position */
        o->call_pos = m->pos;
        o->call_submission = s->index;
        o->call_seq = s->seq;
        o->call_subch = m->subch;
        o->call_selected = s->selected;
    }
    return VGT_OK;
}

vgt_status vgt_mme_trace_submit_end(vgt_mme_trace *t, const vgt_walk_submit *s, vgt_error *err)
{
    vgt_status rc = VGT_OK;
    for (uint32_t i = 0; i < t->ntouched; i++) {
        mt_object *o = t->objects[t->touched[i]];
        o->touched = false;
        if (rc == VGT_OK) rc = mt_channel_settle(t, o->chan, s->index, s->seq, err);
    }
    t->ntouched = 0;
    vgt_mme_budget_next_submission(&t->budget);   /* after the settle: a pending call ran in this one */
    t->stats.calls_refused = t->budget.refused;
    return rc;
}

vgt_status vgt_mme_trace_finish(vgt_mme_trace *t, vgt_error *err)
{
    if (t->finished) return VGT_OK;
    t->finished = 1;
    vgt_status rc = VGT_OK;
    for (uint32_t i = 0; i < t->nobjects; i++) t->objects[i]->touched = false;
    t->ntouched = 0;
    for (uint32_t i = 0; i < t->nchans; i++) {
        mt_channel *ch = t->chans[i];
        if (!t->stopped && rc == VGT_OK) rc = mt_channel_settle(t, ch, MT_AT_LAST_CALL, 0, err);
        mt_channel_absorb_stats(t, ch);
    }
    t->stats.calls_refused = t->budget.refused;
    return rc;
}

/* ---- its own walk ---------------------------------------------------------------------------------- */
typedef struct run_ctx {
    vgt_mme_trace *t;
    vgt_status rc;
    vgt_error err;
} run_ctx;

static int run_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    (void)rec;
    vgt_mme_trace_model(((run_ctx *)ctx)->t, model);
    return 0;
}

static int run_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    run_ctx *r = ctx;
    r->rc = vgt_mme_trace_method(r->t, s, m, &r->err);
    return r->rc != VGT_OK;
}

static int run_submit_end(void *ctx, const vgt_walk_submit *s)
{
    run_ctx *r = ctx;
    r->rc = vgt_mme_trace_submit_end(r->t, s, &r->err);
    return r->rc != VGT_OK;
}

vgt_status vgt_mme_trace_run(vgt_mme_trace *t, const char *path, const vgt_walk_options *opt,
                             vgt_walk_stats *stats, vgt_error *err)
{
    vgt_walk_options o = opt ? *opt : vgt_walk_defaults();
    o.deliver_unselected = 1;
    run_ctx r = {.t = t};
    vgt_error_clear(&r.err);
    /* a state preamble (format 1.1 CHANNEL_METHODS) feeds the trackers like pushed methods: the MME
     * program and shadow state of a channel cut out of a longer trace arrive that way */
    vgt_walk_callbacks cb = {.on_record = run_record, .on_method = run_method, .on_submit_end = run_submit_end,
                             .on_state_method = run_method, .ctx = &r};
    VGT_TRY(vgt_walk_path(path, &o, &cb, stats, err));
    if (r.rc != VGT_OK && r.rc != VGT_E_EOF) {
        if (err) *err = r.err;
        return r.rc;
    }
    vgt_status rc = vgt_mme_trace_finish(t, err);
    return rc == VGT_E_EOF ? VGT_OK : rc;
}

/* ---- queries ----------------------------------------------------------------------------------------- */
uint32_t vgt_mme_trace_macro_count(const vgt_mme_trace *t) { return t->nversions; }
const vgt_mme_trace_macro *vgt_mme_trace_macro_at(const vgt_mme_trace *t, uint32_t i)
{
    return i < t->nversions ? &t->versions[i] : NULL;
}
const vgt_mme_trace_stats *vgt_mme_trace_stats_get(const vgt_mme_trace *t) { return &t->stats; }
int vgt_mme_trace_budget_note(const vgt_mme_trace *t, char *buf, size_t size)
{
    return vgt_mme_budget_note(&t->budget, buf, size);
}
