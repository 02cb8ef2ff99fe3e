/* mme_trace_channel.c: the MME channels of a trace: one vgt_mme_tracker per (channel incarnation, format),
 * shared by the channel's MME objects. The library models what they share (one instruction RAM, a
 * start-address RAM per class, vgt/mme.h); here the objects are grouped, settled and retired with it. */
#include <stdlib.h>

#include "mme_trace_internal.h"
#include "vgt/grow.h"

static vgt_u64map *index_of(vgt_mme_trace *t, vgt_mme_format fmt) { return &t->chan_ix[fmt == VGT_MME_FERMI]; }

mt_channel *mt_channel_latest(const vgt_mme_trace *t, uint32_t client, uint32_t channel, vgt_mme_format fmt)
{
    uint32_t i;
    if (!vgt_u64map_get(&t->chan_ix[fmt == VGT_MME_FERMI], vgt_u64map_handle_key(client, channel), &i)) return NULL;
    return t->chans[i];
}

/* Hashed: one lookup per method of an MME class, whatever the number of channels. */
static mt_channel *channel_find(vgt_mme_trace *t, const mt_object *o)
{
    mt_channel *ch = mt_channel_latest(t, o->client, o->channel, o->fmt);
    return ch && ch->tr && ch->alloc_seq == o->alloc_seq ? ch : NULL;
}

static vgt_status channel_new(vgt_mme_trace *t, const mt_object *o, mt_channel **out, vgt_error *err)
{
    if (vgt_grow(&t->chans, &t->chans_cap, t->nchans + 1ull, 16))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME channels", t->nchans + 1);
    mt_channel *ch = calloc(1, sizeof *ch);
    if (!ch || vgt_u64map_put(index_of(t, o->fmt), vgt_u64map_handle_key(o->client, o->channel), t->nchans)) {
        free(ch);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for an MME channel");
    }
    ch->trace = t;
    ch->client = o->client;
    ch->channel = o->channel;
    ch->alloc_seq = o->alloc_seq;
    ch->fmt = o->fmt;
    vgt_mme_tracker_config tc = {.cls = o->cls, .sim = t->cfg.sim, .max_call_params = t->cfg.max_call_params,
                                 .max_emits = t->cfg.max_emits, .read_mem = mt_tracker_read_mem,
                                 .on_call = mt_tracker_call, .user = ch, .budget = &t->budget};
    vgt_status rc = vgt_mme_tracker_create(&tc, &ch->tr, err);
    if (rc != VGT_OK) {
        free(ch);
        return rc;
    }
    t->chans[t->nchans++] = ch;
    t->stats.channels++;
    *out = ch;
    return VGT_OK;
}

vgt_status mt_channel_join(vgt_mme_trace *t, mt_object *o, vgt_error *err)
{
    mt_channel *ch = channel_find(t, o);
    if (!ch) VGT_TRY(channel_new(t, o, &ch, err));
    if (vgt_grow(&ch->objs, &ch->objs_cap, ch->nobjs + 1ull, 4))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME objects", ch->nobjs + 1);
    ch->objs[ch->nobjs++] = o->index;
    o->chan = ch;
    return VGT_OK;
}

mt_object *mt_channel_object(const mt_channel *ch, uint32_t cls)
{
    for (uint32_t i = 0; i < ch->nobjs; i++) {
        mt_object *o = ch->trace->objects[ch->objs[i]];
        if (o->cls == cls) return o;
    }
    return NULL;
}

vgt_status mt_channel_settle(vgt_mme_trace *t, mt_channel *ch, uint64_t submission, uint64_t seq, vgt_error *err)
{
    if (!ch->tr) return VGT_OK;
    VGT_TRY(vgt_mme_tracker_flush(ch->tr, err));
    if (!ch->uploads_seen) return VGT_OK;
    ch->uploads_seen = false;   /* an upload by one class changes what every class's indices hold */
    for (uint32_t i = 0; i < ch->nobjs; i++) {
        mt_object *o = t->objects[ch->objs[i]];
        uint64_t sub = submission == MT_AT_LAST_CALL ? o->call_submission : submission;
        uint64_t sq = submission == MT_AT_LAST_CALL ? o->call_seq : seq;
        VGT_TRY(mt_check_bindings(t, o, sub, sq, err));
    }
    return VGT_OK;
}

void mt_channel_absorb_stats(vgt_mme_trace *t, const mt_channel *ch)
{
    if (!ch->tr) return;
    const vgt_mme_tracker_stats *ts = vgt_mme_tracker_stats_get(ch->tr);
    t->stats.dma_errors += ts->dma_errors;
    t->stats.orphan_data += ts->orphan_data;
}

vgt_status mt_channel_retire(vgt_mme_trace *t, mt_channel *ch, vgt_error *err)
{
    VGT_TRY(mt_channel_settle(t, ch, MT_AT_LAST_CALL, 0, err));
    mt_channel_absorb_stats(t, ch);
    vgt_mme_tracker_destroy(ch->tr);
    ch->tr = NULL;
    for (uint32_t i = 0; i < ch->nobjs; i++) t->objects[ch->objs[i]]->retired = true;
    return VGT_OK;
}

void mt_channels_free(vgt_mme_trace *t)
{
    for (uint32_t i = 0; i < t->nchans; i++) {
        vgt_mme_tracker_destroy(t->chans[i]->tr);
        free(t->chans[i]->objs);
        free(t->chans[i]);
    }
    free(t->chans);
    vgt_u64map_free(&t->chan_ix[0]);
    vgt_u64map_free(&t->chan_ix[1]);
}
