/* capture_channels.c: the channels a capture knows: ring VA and size, USERD location, work-submit token,
 * last GP_PUT. The only table of channels: the LD_PRELOAD shim keeps none of its own. */
#include <string.h>

#include "capture_internal.h"

cap_channel *cap_channel_find(vgt_capture *c, uint32_t client, uint32_t handle)
{
    for (uint32_t i = 0; i < c->nchannels; i++)
        if (c->channels[i].client == client && c->channels[i].handle == handle) return &c->channels[i];
    return NULL;
}

cap_channel *cap_channel_by_token(vgt_capture *c, uint32_t token)
{
    /* Newest first: a token can be reused by a channel allocated after another was freed. */
    for (uint32_t i = c->nchannels; i-- > 0;)
        if (c->channels[i].has_token && c->channels[i].token == token) return &c->channels[i];
    return NULL;
}

void cap_channel_forget(vgt_capture *c, uint32_t client, uint32_t handle)
{
    cap_channel *ch = cap_channel_find(c, client, handle);
    if (ch) *ch = c->channels[--c->nchannels];
}

static vgt_status register_locked(vgt_capture *c, const vgt_rec_channel *ch, vgt_error *err)
{
    if (ch->entries > VGT_CAPTURE_MAX_RING_ENTRIES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "capture: channel 0x%x has %u ring entries, expected 1..%u",
                        ch->handle, ch->entries, VGT_CAPTURE_MAX_RING_ENTRIES);
    cap_channel *slot = cap_channel_find(c, ch->client, ch->handle);
    if (!slot) {
        VGT_TRY(cap_grow((void **)&c->channels, &c->cap_channels, c->nchannels + 1, sizeof *c->channels,
                         VGT_CAPTURE_MAX_CHANNELS, "channels", err));
        slot = &c->channels[c->nchannels++];
    }
    *slot = (cap_channel){ .client = ch->client, .handle = ch->handle, .cls = ch->cls, .ring_va = ch->ring_va,
                           .entries = ch->entries, .userd_memory = ch->userd_memory, .userd_offset = ch->userd_offset };
    return VGT_OK;
}

vgt_status vgt_capture_channel(vgt_capture *c, const vgt_rec_channel *ch, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_status rc = vgt_write_channel(c->w, vgt_now_ns(), ch, err);
    vgt_error rerr;
    if (ch->status == 0 && ch->entries && register_locked(c, ch, &rerr) != VGT_OK && rc == VGT_OK) {
        *err = rerr;
        rc = rerr.code;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_token(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t token, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    vgt_rec_work_submit_token t = { .client = client, .channel = channel, .token = token };
    vgt_status rc = vgt_write_work_submit_token(c->w, vgt_now_ns(), &t, err);
    cap_channel *ch = cap_channel_find(c, client, channel);
    if (ch) {
        ch->has_token = 1;
        ch->token = token;
    } else if (rc == VGT_OK) {
        rc = VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: token 0x%x for unknown channel 0x%x/0x%x", token,
                      client, channel);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_last_put(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t *gp_put, vgt_error *err)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_find(c, client, channel);
    if (ch) *gp_put = ch->last_put;
    pthread_mutex_unlock(&c->mu);
    return ch ? VGT_OK : VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: unknown channel 0x%x/0x%x", client, channel);
}
