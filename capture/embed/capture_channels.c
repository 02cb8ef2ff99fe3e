/* capture_channels.c: the channels a capture knows (ring VA and size, token, last GP_PUT). */
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

vgt_status vgt_capture_register_channel(vgt_capture *c, const vgt_rec_channel *ch, vgt_error *err)
{
    if (ch->entries == 0 || ch->entries > VGT_CAPTURE_MAX_RING_ENTRIES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "capture: channel 0x%x has %u ring entries, expected 1..%u",
                        ch->handle, ch->entries, VGT_CAPTURE_MAX_RING_ENTRIES);
    pthread_mutex_lock(&c->mu);
    vgt_status rc = VGT_OK;
    cap_channel *slot = cap_channel_find(c, ch->client, ch->handle);
    if (!slot) {
        rc = cap_grow((void **)&c->channels, &c->cap_channels, c->nchannels + 1, sizeof *c->channels,
                      VGT_CAPTURE_MAX_CHANNELS, "channels", err);
        if (rc == VGT_OK) slot = &c->channels[c->nchannels++];
    }
    if (slot) {
        memset(slot, 0, sizeof *slot);
        slot->client = ch->client;
        slot->handle = ch->handle;
        slot->cls = ch->cls;
        slot->ring_va = ch->ring_va;
        slot->entries = ch->entries;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_register_token(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t token,
                                      vgt_error *err)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_find(c, client, channel);
    if (ch) {
        ch->has_token = 1;
        ch->token = token;
    }
    pthread_mutex_unlock(&c->mu);
    if (!ch)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: token 0x%x for unknown channel 0x%x/0x%x",
                        token, client, channel);
    return VGT_OK;
}

void vgt_capture_forget_channel(vgt_capture *c, uint32_t client, uint32_t channel)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_find(c, client, channel);
    if (ch) {
        *ch = c->channels[c->nchannels - 1];
        c->nchannels--;
    }
    pthread_mutex_unlock(&c->mu);
}

vgt_status vgt_capture_channel_of_token(vgt_capture *c, uint32_t token, uint32_t *client, uint32_t *channel,
                                        vgt_error *err)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_by_token(c, token);
    if (ch) {
        *client = ch->client;
        *channel = ch->handle;
    }
    pthread_mutex_unlock(&c->mu);
    return ch ? VGT_OK : VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: no channel has token 0x%x", token);
}

vgt_status vgt_capture_last_put(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t *gp_put, vgt_error *err)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_find(c, client, channel);
    if (ch) *gp_put = ch->last_put;
    pthread_mutex_unlock(&c->mu);
    return ch ? VGT_OK : VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: unknown channel 0x%x/0x%x", client, channel);
}
