/* slice_methods.c: the engine state a slice carries per channel (slice_methods.h; format 1.1
 * CHANNEL_METHODS, docs/trace-format.md 0x0028).
 *
 * Pass 1 keeps, per channel incarnation, the latest value of every class method (subchannel, byte
 * address) the engines received before A, with a stamp saying when it was written, and feeds the
 * channel's MME methods to a vgt_mme_tracker (vgt/mme.h), whose calls also report what the macros
 * emitted: emitted methods change the class state like pushed ones (and the MME shadow RAM that later
 * macros read through STATE). The rule table decides only at write time which of those are pure state,
 * so the per-method cost of pass 1 is one array store.
 */
#include "slice_methods.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/classes.h"
#include "vgt/grow.h"
#include "vgt/mme.h"
#include "vgt/u64map.h"

/* ---- the rule: which class methods are pure state -------------------------------------------------
 * Carried: host methods never (mthd < 0x100: SET_OBJECT, semaphores, ...; CHANNEL_STATE carries the
 * bindings); otherwise a method whose table name matches a `carry` pattern and no `never` pattern.
 * Names are those of the class tables (trace-format/facts/classes, from NVIDIA's open-gpu-doc class headers). */
static const char *const carry[] = {
    "SET_*",            /* state setters by naming convention of the class headers */
    "OFFSET_IN_*", "OFFSET_OUT*", "PITCH_IN", "PITCH_OUT",   /* copy / inline-to-memory transfer */
    "LINE_LENGTH_IN", "LINE_COUNT", "SRC_ORIGIN_*", "DST_ORIGIN_*",   /* parameters, consumed by LAUNCH_DMA */
};
static const char *const never[] = {
    "SET_REPORT_SEMAPHORE_D",       /* writing D performs the report / release (3D and compute classes) */
    "SET_FALCON*",                  /* handed to the context-switch firmware: a request, not state */
    "SET_INSTRUMENTATION_METHOD_DATA",   /* an instrumentation event */
    "SET_STREAM_OUT_BUFFER_LOAD_WRITE_POINTER",   /* loads the pointer from memory when written */
    "SET_INLINE_INDEX*",            /* part of inline-index draws */
    "SET_INLINE_QMD_ADDRESS_*",     /* address of an inline QMD launch in flight (LOAD_INLINE_QMD_DATA) */
};
/* Everything else is never carried; among it the work triggers: LAUNCH_DMA, LOAD_INLINE_DATA, BEGIN, END,
 * DRAW_*, CLEAR_SURFACE, SEND_PCAS_*, SEND_SIGNALING_PCAS*, REPORT_SEMAPHORE_EXECUTE, CALL_MME_MACRO/DATA,
 * MME_DMA_*, INVALIDATE_*, WAIT_FOR_IDLE, NOTIFY, PM_TRIGGER*, NO_OPERATION. The MME program methods
 * (LOAD_MME_*) are written from the tracker's RAM instead (write_mme_program). */

#define N(a) (sizeof a / sizeof a[0])
#define METHOD_WORDS ((VGT_MAX_METHOD_ADDRESS + 4u) / 4u)
#define MAX_STATE_CHANNELS 4096u   /* channel incarnations with class state (128 KiB per subchannel used) */
#define MAX_WRITES ((VGT_MAX_RECORD_PAYLOAD - 16u) / VGT_CHANNEL_METHOD_SIZE)
#define MME_START_ENTRIES 256u     /* start-address RAM entries per class (vgt/mme.h: j < 256) */

int slice_methods_is_state(uint32_t cls, uint32_t mthd)
{
    if (vgt_nv_is_host_method(mthd) || mthd > VGT_MAX_METHOD_ADDRESS) return 0;
    uint32_t index = 0;
    const vgt_method_info *info = vgt_class_method(vgt_class_find(cls), mthd, &index);
    if (!info) return 0;
    int yes = 0;
    for (size_t i = 0; i < N(carry) && !yes; i++) yes = !fnmatch(carry[i], info->name, 0);
    for (size_t i = 0; i < N(never) && yes; i++) yes = fnmatch(never[i], info->name, 0) != 0;
    return yes;
}

/* ---- per channel ---- */

typedef struct cell {
    uint64_t stamp;            /* 0: never written */
    uint32_t cls, value;
} cell;

typedef struct chan_methods {
    struct slice_methods *owner;
    uint32_t client, handle;
    uint64_t alloc_seq;
    uint64_t stamp;
    cell *sub[VGT_SUBCHANNELS];   /* METHOD_WORDS cells each, allocated at the first write */
    vgt_mme_tracker *mme;
    uint32_t call_subch;       /* subchannel of the latest CALL_MME_MACRO: where its emissions land */
} chan_methods;

struct slice_methods {
    const vgt_model *model;
    chan_methods **v;
    uint32_t n, cap;
    vgt_u64map ix;             /* client:handle -> index in v */
    uint32_t last;             /* the channel of the previous method */
    vgt_mme_budget budget;     /* the trackers' MME budgets (vgt/mme.h) */
    uint64_t submission;       /* of the previous method: a new one renews the submission's budget */
    vgt_status st;
    vgt_error err;
};

static int fail(slice_methods *sm, vgt_status st, const char *what)
{
    if (sm->st == VGT_OK) sm->st = VGT_FAIL(&sm->err, st, VGT_NO_OFFSET, "slice: %s", what);
    return 1;
}

static void chan_clear(chan_methods *c)
{
    for (uint32_t i = 0; i < VGT_SUBCHANNELS; i++) free(c->sub[i]), c->sub[i] = NULL;
    vgt_mme_tracker_destroy(c->mme);
    c->mme = NULL;
    c->stamp = 0;
}

static int put(chan_methods *c, uint32_t subch, uint32_t cls, uint32_t mthd, uint32_t value)
{
    if (vgt_nv_is_host_method(mthd) || mthd > VGT_MAX_METHOD_ADDRESS || subch >= VGT_SUBCHANNELS) return 0;
    if (!c->sub[subch] && !(c->sub[subch] = calloc(METHOD_WORDS, sizeof(cell))))
        return fail(c->owner, VGT_E_NOMEM, "no memory for a subchannel's method state");
    c->sub[subch][mthd / 4] = (cell){++c->stamp, cls, value};
    return 0;
}

static vgt_status read_mem(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    const chan_methods *c = user;
    uint64_t known = 0;
    VGT_TRY(vgt_model_mem_read(c->owner->model, va, dst, len, &known, err));
    if (known < len)
        return VGT_FAIL(err, VGT_E_FAULT, va, "MME DMA read of %zu bytes at 0x%llx: only %llu captured", len,
                        (unsigned long long)va, (unsigned long long)known);
    return VGT_OK;
}

/* What a macro emitted changes its class's state as pushed methods do. */
static vgt_status on_call(void *user, const vgt_mme_call *call, vgt_error *err)
{
    chan_methods *c = user;
    for (uint32_t i = 0; i < call->nemits; i++)
        if (put(c, c->call_subch, call->cls, call->emits[i].method, call->emits[i].value))
            return VGT_FAIL(err, c->owner->st, VGT_NO_OFFSET, "%s", c->owner->err.msg);
    return VGT_OK;
}

static chan_methods *chan_for(slice_methods *sm, const vgt_walk_channel *wc)
{
    uint32_t i = sm->last;
    if ((i < sm->n && sm->v[i]->client == wc->client && sm->v[i]->handle == wc->handle) ||
        vgt_u64map_get(&sm->ix, vgt_u64map_handle_key(wc->client, wc->handle), &i)) {
        chan_methods *c = sm->v[i];
        sm->last = i;
        if (c->alloc_seq != wc->alloc_seq) chan_clear(c), c->alloc_seq = wc->alloc_seq;   /* re-allocated */
        return c;
    }
    if (sm->n == MAX_STATE_CHANNELS) {
        fail(sm, VGT_E_LIMIT, "more than 4096 channels with engine state");
        return NULL;
    }
    if (vgt_grow(&sm->v, &sm->cap, sm->n + 1ull, 16))
        return fail(sm, VGT_E_NOMEM, "no memory for channels"), NULL;
    chan_methods *c = calloc(1, sizeof *c);
    if (!c || vgt_u64map_put(&sm->ix, vgt_u64map_handle_key(wc->client, wc->handle), sm->n)) {
        free(c);
        return fail(sm, VGT_E_NOMEM, "no memory for a channel"), NULL;
    }
    *c = (chan_methods){.owner = sm, .client = wc->client, .handle = wc->handle, .alloc_seq = wc->alloc_seq};
    sm->v[sm->n++] = c;
    return c;
}

static int feed_mme(chan_methods *c, const vgt_method *m)
{
    vgt_error e;
    if (!c->mme) {
        vgt_mme_tracker_config cfg = {.cls = m->cls, .read_mem = read_mem, .on_call = on_call, .user = c,
                                      .budget = &c->owner->budget};
        if (vgt_mme_tracker_create(&cfg, &c->mme, &e) != VGT_OK) return fail(c->owner, e.code, e.msg);
    }
    vgt_status st = vgt_mme_tracker_feed_class(c->mme, m->cls, m->mthd, m->data, &e);
    if (c->owner->st != VGT_OK) return 1;   /* on_call could not keep an emission */
    if (st == VGT_E_NOMEM) return fail(c->owner, st, e.msg);
    /* other failures (a second MME format, a class limit) leave that class's program out of the slice */
    if (m->mthd >= VGT_MME_M_CALL_MACRO0 && !(m->mthd & 4)) c->call_subch = m->subch;
    return 0;
}

/* ---- the API ---- */

vgt_status slice_methods_new(slice_methods **out, const vgt_model *model, vgt_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory for method state");
    (*out)->model = model;
    vgt_mme_budget_init(&(*out)->budget, 0, 0, 0);
    return VGT_OK;
}

void slice_methods_free(slice_methods *sm)
{
    if (!sm) return;
    for (uint32_t i = 0; i < sm->n; i++) chan_clear(sm->v[i]), free(sm->v[i]);
    free(sm->v);
    vgt_u64map_free(&sm->ix);
    free(sm);
}

int slice_methods_on_method(slice_methods *sm, const vgt_walk_submit *s, const vgt_method *m)
{
    if (sm->st != VGT_OK) return 1;
    if (m->is_host || m->masked || !m->cls) return 0;
    if (s->index != sm->submission) {
        sm->submission = s->index;
        vgt_mme_budget_next_submission(&sm->budget);
    }
    chan_methods *c = chan_for(sm, s->chan);
    if (!c) return 1;
    if (vgt_mme_format_for_class(m->cls) != VGT_MME_NONE && feed_mme(c, m)) return 1;
    return put(c, m->subch, m->cls, m->mthd, m->data);
}

int slice_methods_budget_note(const slice_methods *sm, char *buf, size_t size)
{
    return vgt_mme_budget_note(&sm->budget, buf, size);
}

vgt_status slice_methods_status(const slice_methods *sm, vgt_error *err)
{
    if (sm->st != VGT_OK && err) *err = sm->err;
    return sm->st;
}

/* ---- writing ---- */

typedef struct out_list {
    vgt_state_method *v;
    uint32_t n, cap;
} out_list;

static vgt_status add(out_list *o, uint32_t subch, uint32_t method, uint32_t value, vgt_error *err)
{
    if (o->n == MAX_WRITES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "slice: more than %u state writes for one channel", MAX_WRITES);
    if (vgt_grow(&o->v, &o->cap, o->n + 1ull, 256))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory for %u state writes", o->n + 1);
    o->v[o->n++] = (vgt_state_method){subch, method, value};
    return VGT_OK;
}

/* The instruction RAM as far as uploads reached, through the first bound subchannel of the tracker's
 * format (the MME objects of a channel share it), then each bound MME class's start-address RAM. */
static vgt_status write_mme_program(const chan_methods *c, const uint32_t *subch_class, out_list *o, vgt_error *err)
{
    if (!c->mme) return VGT_OK;
    vgt_mme_format fmt = vgt_mme_tracker_format(c->mme);
    uint32_t used = 0, done_cls[VGT_SUBCHANNELS], ndone = 0;
    const uint32_t *iram = vgt_mme_tracker_iram(c->mme, &used);
    for (uint32_t s = 0; s < VGT_SUBCHANNELS; s++) {
        uint32_t cls = subch_class[s];
        if (!cls || vgt_mme_format_for_class(cls) != fmt) continue;
        if (!ndone && used) {
            VGT_TRY(add(o, s, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0, err));
            for (uint32_t i = 0; i < used; i++) VGT_TRY(add(o, s, VGT_MME_M_LOAD_INSTRUCTION_RAM, iram[i], err));
        }
        int seen = 0;
        for (uint32_t k = 0; k < ndone; k++) seen |= done_cls[k] == cls;
        if (seen) continue;
        done_cls[ndone++] = cls;
        for (uint32_t j = 0; j < MME_START_ENTRIES; j++) {
            uint32_t start;
            vgt_error e;
            if (vgt_mme_tracker_macro(c->mme, cls, j, &start, NULL, NULL, NULL, &e) != VGT_OK) continue;
            VGT_TRY(add(o, s, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, j, err));
            VGT_TRY(add(o, s, VGT_MME_M_LOAD_START_ADDRESS_RAM, start, err));
        }
    }
    return VGT_OK;
}

typedef struct stamped {
    uint64_t stamp;
    vgt_state_method m;
} stamped;

static int by_stamp(const void *a, const void *b)
{
    uint64_t x = ((const stamped *)a)->stamp, y = ((const stamped *)b)->stamp;
    return x < y ? -1 : x > y;
}

/* The latest value of every pure-state method of the classes still bound, in the order last written. */
static vgt_status write_class_state(const chan_methods *c, const uint32_t *subch_class, out_list *o, vgt_error *err)
{
    uint64_t n = 0;
    for (uint32_t s = 0; s < VGT_SUBCHANNELS; s++)
        for (uint32_t i = 0; c->sub[s] && i < METHOD_WORDS; i++) n += c->sub[s][i].stamp != 0;
    if (!n) return VGT_OK;
    stamped *v = malloc(n * sizeof *v);
    if (!v) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory for %llu methods", (unsigned long long)n);
    uint64_t k = 0;
    for (uint32_t s = 0; s < VGT_SUBCHANNELS; s++)
        for (uint32_t i = 0; c->sub[s] && i < METHOD_WORDS; i++) {
            const cell *x = &c->sub[s][i];
            if (!x->stamp || x->cls != subch_class[s] || !slice_methods_is_state(x->cls, 4 * i)) continue;
            v[k++] = (stamped){x->stamp, {s, 4 * i, x->value}};
        }
    qsort(v, k, sizeof *v, by_stamp);
    vgt_status st = VGT_OK;
    for (uint64_t i = 0; i < k && st == VGT_OK; i++) st = add(o, v[i].m.subch, v[i].m.method, v[i].m.value, err);
    free(v);
    return st;
}

vgt_status slice_methods_write(slice_methods *sm, vgt_writer *w, uint64_t ts, uint32_t client, uint32_t handle,
                               uint64_t alloc_seq, const uint32_t *subch_class, uint32_t *count, vgt_error *err)
{
    if (count) *count = 0;
    const chan_methods *c = NULL;
    for (uint32_t i = 0; i < sm->n && !c; i++)
        if (sm->v[i]->client == client && sm->v[i]->handle == handle && sm->v[i]->alloc_seq == alloc_seq) c = sm->v[i];
    if (!c) return VGT_OK;
    out_list o = {0};
    vgt_status st = write_mme_program(c, subch_class, &o, err);
    if (st == VGT_OK) st = write_class_state(c, subch_class, &o, err);
    uint8_t *bytes = st == VGT_OK && o.n ? malloc((size_t)o.n * VGT_CHANNEL_METHOD_SIZE) : NULL;
    if (st == VGT_OK && o.n && !bytes)
        st = VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory for %u state writes", o.n);
    if (st == VGT_OK && o.n) {
        for (uint32_t i = 0; i < o.n; i++) vgt_channel_method_put(bytes + (size_t)i * VGT_CHANNEL_METHOD_SIZE, &o.v[i]);
        vgt_rec_channel_methods r = {client, handle, 0, o.n * VGT_CHANNEL_METHOD_SIZE, bytes};
        st = vgt_write_channel_methods(w, ts, &r, err);
        if (st == VGT_OK && count) *count = o.n;
    }
    free(bytes);
    free(o.v);
    return st;
}
