/* gp_check.c: GP_GET / GP_PUT forensics per channel (vgt/gp_check.h). */
#include "vgt/gp_check.h"

#include <stdio.h>
#include <stdlib.h>

#include "le.h"
#include "vgt/grow.h"
#include "vgt/u64map.h"

typedef struct gp_chan {
    uint32_t entries;        /* ring size (0: channel not allocated in the trace, nothing is checked) */
    uint32_t put;            /* last GP_PUT recorded */
    uint32_t get;            /* last GP_GET read, VGT_GP_NOT_READ when none yet */
    int have_put;
} gp_chan;

struct vgt_gp_check {
    vgt_u64map index;        /* (client, channel) -> chans[i] */
    gp_chan *chans;
    uint32_t n, cap;
    vgt_gp_stats st;
};

vgt_status vgt_gp_check_open(vgt_gp_check **out, vgt_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "gp check: out of memory");
    return VGT_OK;
}

void vgt_gp_check_close(vgt_gp_check *g)
{
    if (!g) return;
    vgt_u64map_free(&g->index);
    free(g->chans);
    free(g);
}

const vgt_gp_stats *vgt_gp_check_stats(const vgt_gp_check *g) { return &g->st; }

static gp_chan *chan(vgt_gp_check *g, uint32_t client, uint32_t channel, int create, vgt_error *err, vgt_status *rc)
{
    uint32_t i;
    uint64_t key = vgt_u64map_handle_key(client, channel);
    if (vgt_u64map_get(&g->index, key, &i)) return &g->chans[i];
    if (!create) return NULL;
    if (vgt_grow(&g->chans, &g->cap, g->n + 1ull, 16)) {
        *rc = VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "gp check: out of memory for %u channels", g->n + 1);
        return NULL;
    }
    if (vgt_u64map_put(&g->index, key, g->n) < 0) {
        *rc = VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "gp check: out of memory for %u channels", g->n + 1);
        return NULL;
    }
    g->chans[g->n] = (gp_chan){ .get = VGT_GP_NOT_READ };
    return &g->chans[g->n++];
}

static vgt_gp_event *emit(vgt_gp_event *ev, int *n, vgt_gp_event_kind k, const vgt_record *rec, uint32_t client,
                          uint32_t channel, const gp_chan *c)
{
    vgt_gp_event *e = &ev[(*n)++];
    *e = (vgt_gp_event){ .kind = k, .seq = rec->seq, .client = client, .channel = channel, .entries = c->entries,
                         .prev_get = c->get, .at_end = rec->type == VGT_REC_CHANNEL_PROGRESS };
    return e;
}

/* One GP_GET read against the window the GPU may have fetched: from the previous read (or, before the
 * first, the start of the ring) forward up to put, the last GP_PUT written before the read. */
static void check_get(vgt_gp_check *g, gp_chan *c, const vgt_record *rec, uint32_t client, uint32_t channel,
                      uint32_t get, uint32_t put, vgt_gp_event *ev, int *n)
{
    if (get == VGT_GP_NOT_READ || !c->entries) return;
    g->st.get_checked++;
    uint32_t N = c->entries, base = c->get == VGT_GP_NOT_READ ? 0 : c->get;
    if (get >= N || put >= N || (get + N - base) % N > (put + N - base) % N) {
        vgt_gp_event *e = emit(ev, n, VGT_GP_GET_PAST_PUT, rec, client, channel, c);
        e->get = get, e->put = put;
        g->st.get_past_put++;
        if (get < N) c->get = get;
        return;
    }
    if (get < base) {
        vgt_gp_event *e = emit(ev, n, VGT_GP_GET_WRAP, rec, client, channel, c);
        e->get = get, e->put = put;
        g->st.get_wraps++;
    }
    c->get = get;
}

static vgt_status feed_submit(vgt_gp_check *g, const vgt_record *rec, vgt_gp_event *ev, int *n, vgt_error *err)
{
    if (rec->length < 40)
        return VGT_FAIL(err, VGT_E_FORMAT, rec->chunk_offset, "GPFIFO_SUBMIT seq %llu: %u bytes, under its 40-byte fixed part",
                        (unsigned long long)rec->seq, rec->length);
    const uint8_t *p = rec->payload;
    uint32_t client = le_get32(p), channel = le_get32(p + 4), get_before = le_get32(p + 16),
             put_before = le_get32(p + 20), get_after = le_get32(p + 24), put_after = le_get32(p + 28),
             count = le_get32(p + 32);
    g->st.submits++;
    g->st.get_read += get_before != VGT_GP_NOT_READ;
    gp_chan *c = chan(g, client, channel, 0, err, NULL);
    if (!c || !c->entries) return VGT_OK;
    check_get(g, c, rec, client, channel, get_before, put_before, ev, n);
    if (count && put_before < c->entries && put_before + count >= c->entries) {
        vgt_gp_event *e = emit(ev, n, VGT_GP_PUT_WRAP, rec, client, channel, c);
        e->get = put_before, e->put = put_after;
        g->st.put_wraps++;
    }
    check_get(g, c, rec, client, channel, get_after, put_after, ev, n);
    c->put = put_after, c->have_put = 1;
    return VGT_OK;
}

vgt_status vgt_gp_check_feed(vgt_gp_check *g, const vgt_record *rec, vgt_gp_event ev[VGT_GP_MAX_EVENTS], int *n,
                             vgt_error *err)
{
    *n = 0;
    vgt_status rc = VGT_OK;
    switch (rec->type) {
    case VGT_REC_CHANNEL: {
        vgt_rec_channel ch;
        VGT_TRY(vgt_decode_channel(rec, &ch, err));
        if (ch.status) return VGT_OK;
        gp_chan *c = chan(g, ch.client, ch.handle, 1, err, &rc);
        if (!c) return rc;
        /* a new channel under the handle: its ring starts empty at index 0 */
        *c = (gp_chan){ .entries = ch.entries, .get = VGT_GP_NOT_READ };
        return VGT_OK;
    }
    case VGT_REC_GPFIFO_SUBMIT:
        return feed_submit(g, rec, ev, n, err);
    case VGT_REC_CHANNEL_PROGRESS: {
        vgt_rec_channel_progress p;
        VGT_TRY(vgt_decode_channel_progress(rec, &p, err));
        g->st.progress++;
        gp_chan *c = chan(g, p.client, p.channel, 0, err, NULL);
        uint32_t put = c && c->have_put ? c->put : 0;
        if (p.gp_get != VGT_GP_NOT_READ && p.gp_get == put) g->st.fetched_all++;
        if (c) check_get(g, c, rec, p.client, p.channel, p.gp_get, put, ev, n);
        return VGT_OK;
    }
    default:
        return VGT_OK;
    }
}

const char *vgt_gp_event_name(vgt_gp_event_kind k)
{
    switch (k) {
    case VGT_GP_PUT_WRAP: return "PUT_WRAP";
    case VGT_GP_GET_WRAP: return "GET_WRAP";
    case VGT_GP_GET_PAST_PUT: return "GET_PAST_PUT";
    }
    return "?";
}

static int prev_text(uint32_t prev, char *buf, size_t cap)
{
    return prev == VGT_GP_NOT_READ ? snprintf(buf, cap, "none, the ring start") : snprintf(buf, cap, "%u", prev);
}

int vgt_gp_event_text(const vgt_gp_event *e, char *buf, size_t cap)
{
    char prev[32];
    prev_text(e->prev_get, prev, sizeof prev);
    const char *where = e->at_end ? " at the end of the capture" : "";
    switch (e->kind) {
    case VGT_GP_PUT_WRAP:
        return snprintf(buf, cap, "seq %llu channel 0x%x: PUT_WRAP: entries from %u run past the end of the %u-entry "
                        "ring; GP_PUT %u", (unsigned long long)e->seq, e->channel, e->get, e->entries, e->put);
    case VGT_GP_GET_WRAP:
        return snprintf(buf, cap, "seq %llu channel 0x%x: GET_WRAP: GP_GET %u%s after %s: the GPU fetched across the "
                        "end of the %u-entry ring (GP_PUT %u)", (unsigned long long)e->seq, e->channel, e->get, where, prev,
                        e->entries, e->put);
    case VGT_GP_GET_PAST_PUT:
        return snprintf(buf, cap, "seq %llu channel 0x%x: GET_PAST_PUT: GP_GET %u%s is beyond the last recorded GP_PUT "
                        "%u (previous GP_GET %s, %u entries): the GPU fetched an entry no recorded submission wrote",
                        (unsigned long long)e->seq, e->channel, e->get, where, e->put, prev, e->entries);
    }
    return snprintf(buf, cap, "seq %llu channel 0x%x: ?", (unsigned long long)e->seq, e->channel);
}

int vgt_gp_event_json(const vgt_gp_event *e, char *buf, size_t cap)
{
    char prev[16];
    if (e->prev_get == VGT_GP_NOT_READ) snprintf(prev, sizeof prev, "null");
    else snprintf(prev, sizeof prev, "%u", e->prev_get);
    return snprintf(buf, cap, "{\"kind\":\"%s\",\"seq\":%llu,\"client\":%u,\"channel\":%u,\"entries\":%u,\"get\":%u,"
                    "\"prev_get\":%s,\"put\":%u,\"at_end\":%s}", vgt_gp_event_name(e->kind), (unsigned long long)e->seq,
                    e->client, e->channel, e->entries, e->get, prev, e->put, e->at_end ? "true" : "false");
}
