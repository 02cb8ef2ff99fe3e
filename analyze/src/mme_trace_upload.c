/* mme_trace_upload.c: macro uploads of a channel: the instruction RAM its MME objects share, and the unit
 * of the TU104 upload pointers, decided from the stream.
 *
 * Unit. NVK (Mesa src/nouveau/vulkan/nvk_queue.c) writes LOAD_MME_INSTRUCTION_RAM_POINTER and
 * LOAD_MME_START_ADDRESS_RAM in dwords and binds each next macro at the dword where the previous upload
 * ended. NVIDIA's driver on Hopper (corpus/gl_egl.vgt, its submission 2: 15 dwords written at pointer 0,
 * the next macro bound and uploaded at 5) counts 96-bit groups. [inference from traces; no primary source]
 *
 *   undecided --pointer/start == end of the upload in dwords--> dwords: log dropped
 *   undecided --pointer/start == end in groups (length a multiple of 3)--> groups: replay_in_groups()
 *   undecided --log full--> dwords
 * While undecided, dwords are applied (the facts file and NVK) and the upload methods are logged, so that
 * a switch to groups re-applies them at the right places. The Fermi format is always dwords.
 *
 * Sharing. Instruction-RAM writes (pointer and data) reach every object of the channel with the same
 * format; start-address writes only their own object (see mt_channel in mme_trace_internal.h).
 */
#include <stdlib.h>

#include "mme_trace_internal.h"

static void log_free(mt_upload_log *l)
{
    free(l->obj);
    free(l->m);
    free(l->v);
    *l = (mt_upload_log){0};
}

static bool grow(uint32_t **p, uint32_t cap)
{
    uint32_t *n = realloc(*p, cap * sizeof *n);
    if (!n) return false;
    *p = n;
    return true;
}

/* Returns false when the log is full or memory ran out: the caller then settles on dwords. */
static bool log_push(mt_upload_log *l, uint32_t obj, uint32_t method, uint32_t value)
{
    if (l->n == l->cap) {
        if (l->cap >= MT_UPLOAD_LOG_MAX) return false;
        uint32_t cap = l->cap ? l->cap * 2 : 256;
        if (!grow(&l->obj, cap) || !grow(&l->m, cap) || !grow(&l->v, cap)) return false;
        l->cap = cap;
    }
    l->obj[l->n] = obj;
    l->m[l->n] = method;
    l->v[l->n++] = value;
    return true;
}

static uint32_t scaled(uint32_t unit, uint32_t v)
{
    uint64_t d = (uint64_t)v * (unit ? unit : 1);
    return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

static bool is_iram(uint32_t m) { return m == VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER || m == VGT_MME_M_LOAD_INSTRUCTION_RAM; }

/* One upload method of object o, in the channel's unit, to o or (instruction RAM) to all its siblings. */
static vgt_status apply(vgt_mme_trace *t, mt_channel *ch, mt_object *o, uint32_t method, uint32_t value, vgt_error *err)
{
    if (method == VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER || method == VGT_MME_M_LOAD_START_ADDRESS_RAM)
        value = scaled(ch->unit, value);
    if (!is_iram(method)) return vgt_mme_tracker_feed(o->tr, method, value, err);
    for (uint32_t i = 0; i < ch->nobjs; i++) {
        mt_object *s = t->objects[ch->objs[i]];
        if (!s->tr) continue;   /* retired */
        s->uploads_seen = true;
        VGT_TRY(vgt_mme_tracker_feed(s->tr, method, value, err));
    }
    return VGT_OK;
}

static vgt_status replay_in_groups(vgt_mme_trace *t, mt_channel *ch, vgt_error *err)
{
    ch->unit = 3;
    t->stats.group_unit_channels++;
    for (uint32_t i = 0; i < ch->log.n; i++)
        VGT_TRY(apply(t, ch, t->objects[ch->log.obj[i]], ch->log.m[i], ch->log.v[i], err));
    log_free(&ch->log);
    return VGT_OK;
}

/* A pointer or start value v arrived: does it say where the upload in progress ended? */
static vgt_status decide(vgt_mme_trace *t, mt_channel *ch, uint32_t v, vgt_error *err)
{
    if (!ch->seg_open || !ch->seg_len) return VGT_OK;
    uint64_t end_dwords = (uint64_t)ch->seg_base + ch->seg_len;
    uint64_t end_groups = (uint64_t)ch->seg_base + ch->seg_len / 3;
    if (v == end_dwords) {
        ch->unit = 1;
        log_free(&ch->log);
    } else if (ch->seg_len % 3 == 0 && v == end_groups) {
        VGT_TRY(replay_in_groups(t, ch, err));
    }
    return VGT_OK;
}

vgt_status mt_upload_method(mt_object *o, uint32_t method, uint32_t value, vgt_error *err)
{
    vgt_mme_trace *t = o->trace;
    mt_channel *ch = o->chan;
    o->uploads_seen = true;
    if (ch->unit == 0 && (method == VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER || method == VGT_MME_M_LOAD_START_ADDRESS_RAM))
        VGT_TRY(decide(t, ch, value, err));
    if (method == VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER) {
        ch->seg_open = true;
        ch->seg_base = value;
        ch->seg_len = 0;
    } else if (method == VGT_MME_M_LOAD_INSTRUCTION_RAM && ch->seg_open) {
        ch->seg_len++;
    }
    if (ch->unit == 0 && !log_push(&ch->log, o->index, method, value)) {
        ch->unit = 1;
        log_free(&ch->log);
    }
    return apply(t, ch, o, method, value, err);
}

/* ---- channels ------------------------------------------------------------------------------------- */
static mt_channel *channel_find(vgt_mme_trace *t, const mt_object *o)
{
    for (uint32_t i = 0; i < t->nchans; i++) {
        mt_channel *ch = t->chans[i];
        if (ch->client == o->client && ch->channel == o->channel && ch->alloc_seq == o->alloc_seq && ch->fmt == o->fmt)
            return ch;
    }
    return NULL;
}

static vgt_status channel_new(vgt_mme_trace *t, const mt_object *o, mt_channel **out, vgt_error *err)
{
    if (t->nchans == t->chans_cap) {
        uint32_t cap = t->chans_cap ? t->chans_cap * 2 : 16;
        mt_channel **p = realloc(t->chans, cap * sizeof *p);
        if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME channels", cap);
        t->chans = p;
        t->chans_cap = cap;
    }
    mt_channel *ch = calloc(1, sizeof *ch);
    if (!ch) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for an MME channel");
    ch->client = o->client;
    ch->channel = o->channel;
    ch->alloc_seq = o->alloc_seq;
    ch->fmt = o->fmt;
    ch->unit = o->fmt == VGT_MME_TU104 ? 0 : 1;
    t->chans[t->nchans++] = ch;
    *out = ch;
    return VGT_OK;
}

vgt_status mt_channel_join(vgt_mme_trace *t, mt_object *o, vgt_error *err)
{
    mt_channel *ch = channel_find(t, o);
    if (!ch) VGT_TRY(channel_new(t, o, &ch, err));
    if (ch->nobjs == ch->objs_cap) {
        uint32_t cap = ch->objs_cap ? ch->objs_cap * 2 : 4;
        if (!grow(&ch->objs, cap)) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME objects", cap);
        ch->objs_cap = cap;
    }
    o->chan = ch;
    /* the shared RAM as it is now: copied from the first live sibling, in dwords */
    for (uint32_t i = 0; i < ch->nobjs; i++) {
        mt_object *s = t->objects[ch->objs[i]];
        if (!s->tr) continue;   /* retired */
        uint32_t used = 0;
        const uint32_t *iram = vgt_mme_tracker_iram(s->tr, &used);
        if (!used) break;
        VGT_TRY(vgt_mme_tracker_feed(o->tr, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0, err));
        for (uint32_t k = 0; k < used; k++) VGT_TRY(vgt_mme_tracker_feed(o->tr, VGT_MME_M_LOAD_INSTRUCTION_RAM, iram[k], err));
        break;
    }
    ch->objs[ch->nobjs++] = o->index;
    return VGT_OK;
}

void mt_channels_free(vgt_mme_trace *t)
{
    for (uint32_t i = 0; i < t->nchans; i++) {
        log_free(&t->chans[i]->log);
        free(t->chans[i]->objs);
        free(t->chans[i]);
    }
    free(t->chans);
}
