/* capture_submit.c: a doorbell -> one GPFIFO_SUBMIT record (entries + the bytes of their segments).
 *
 * GPFIFO entries are read with the codec of vgt/nv_pushbuf.h (push-buffer VA, LEVEL, LENGTH in dwords;
 * LENGTH 0 is a control entry, whose SET_PB_SEGMENT_EXTENDED_BASE gives the VA bits above 40 of the
 * entries after it). */
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"
#include "vgt/nv_pushbuf.h"

static vgt_status ensure_scratch(vgt_capture *c, uint64_t need, vgt_error *err)
{
    if (need <= c->scratch_size) return VGT_OK;
    uint64_t n = c->scratch_size * 2 > need ? c->scratch_size * 2 : need;
    void *p = realloc(c->scratch, n);
    if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "capture: out of memory for %llu bytes of submission",
                            (unsigned long long)n);
    c->scratch = p;
    c->scratch_size = n;
    return VGT_OK;
}

/* True when [va, va+len) lies inside a segment already collected (entries often repeat a range). */
static int covered(const vgt_capture *c, uint32_t nseg, uint64_t va, uint32_t len)
{
    for (uint32_t i = 0; i < nseg; i++)
        if (va >= c->segs[i].gpu_va && va + len <= c->segs[i].gpu_va + c->segs[i].length) return 1;
    return 0;
}

typedef struct submit_ctx {
    uint64_t used;            /* scratch bytes used by copied segments (after the entries) */
    uint64_t total;           /* segment bytes in this submission */
    uint32_t nseg;
    uint32_t flags;
} submit_ctx;

/* Add the segment of one entry: a direct pointer into a host view when possible, else a copy into
 * scratch (sized beforehand by collect, so earlier copies never move). */
static vgt_status add_segment(vgt_capture *c, submit_ctx *s, uint64_t va, uint64_t bytes, uint32_t level,
                              uint64_t entries_bytes, vgt_error *err)
{
    uint32_t flags = level ? VGT_SEGMENT_FLAG_SUBROUTINE : 0;
    if (bytes > c->opt.max_segment_bytes) { bytes = c->opt.max_segment_bytes; flags |= VGT_SEGMENT_FLAG_TRUNCATED; }
    if (s->total + bytes > c->opt.max_submit_bytes) {
        bytes = s->total < c->opt.max_submit_bytes ? c->opt.max_submit_bytes - s->total : 0;
        flags |= VGT_SEGMENT_FLAG_TRUNCATED;
    }
    if (covered(c, s->nseg, va, (uint32_t)bytes)) return VGT_OK;
    VGT_TRY(cap_grow((void **)&c->segs, &c->cap_segs, s->nseg + 1, sizeof *c->segs, VGT_CAPTURE_MAX_RING_ENTRIES,
                     "segments", err));
    vgt_segment *sg = &c->segs[s->nseg++];
    sg->gpu_va = va;
    sg->flags = flags;
    const void *direct = cap_direct_locked(c, va, bytes);
    if (direct) {
        sg->length = (uint32_t)bytes;
        sg->data = direct;
    } else {
        uint64_t got = cap_read_locked(c, va, c->scratch + entries_bytes + s->used, bytes);
        if (got < bytes) { sg->flags |= VGT_SEGMENT_FLAG_TRUNCATED; c->stats.read_failures++; }
        sg->length = (uint32_t)got;
        sg->data = c->scratch + entries_bytes + s->used;
        s->used += (got + 7) & ~7ull;
    }
    if (sg->flags & VGT_SEGMENT_FLAG_TRUNCATED) s->flags |= VGT_SUBMIT_FLAG_SEGMENT_TRUNCATED;
    s->total += sg->length;
    return VGT_OK;
}

static vgt_status collect(vgt_capture *c, cap_channel *ch, uint32_t count, submit_ctx *s, vgt_error *err)
{
    uint64_t entries_bytes = 8ull * count;
    VGT_TRY(ensure_scratch(c, entries_bytes, err));
    for (uint32_t i = 0; i < count; i++) {
        uint32_t idx = (ch->last_put + i) % ch->entries;
        uint8_t *e = c->scratch + 8ull * i;
        if (cap_read_locked(c, ch->ring_va + 8ull * idx, e, 8) < 8) {
            memset(e, 0, 8);
            s->flags |= VGT_SUBMIT_FLAG_SEGMENT_TRUNCATED;
            c->stats.read_failures++;
        }
    }
    /* Bound the bytes copied segments may need, so scratch is sized once. */
    uint64_t bound = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t b = 4ull * vgt_nv_gp_length(vgt_nv_gp_load(c->scratch + 8ull * i));
        bound += (b < c->opt.max_segment_bytes ? b : c->opt.max_segment_bytes) + 8;
        if (bound > c->opt.max_submit_bytes + 8ull * count) { bound = c->opt.max_submit_bytes + 8ull * count; break; }
    }
    VGT_TRY(ensure_scratch(c, entries_bytes + bound, err));
    for (uint32_t i = 0; i < count; i++) {
        uint64_t raw = vgt_nv_gp_load(c->scratch + 8ull * i);
        uint32_t len = vgt_nv_gp_length(raw);
        if (len == 0) {
            if (vgt_nv_gp_opcode(raw) == VGT_NV_GP_OPCODE_SET_PB_SEGMENT_EXTENDED_BASE) ch->ext_base = vgt_nv_gp_extended_base(raw);
            continue;
        }
        uint64_t va = ch->ext_base | vgt_nv_gp_va(raw);
        VGT_TRY(add_segment(c, s, va, 4ull * len, vgt_nv_gp_level(raw), entries_bytes, err));
    }
    return VGT_OK;
}

/* The entries from the channel's last GP_PUT up to gp_put and their segments, into c->pending. */
static vgt_status collect_locked(vgt_capture *c, cap_channel *ch, uint32_t gp_put, vgt_error *err)
{
    if (gp_put >= ch->entries)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "capture: GP_PUT %u on channel 0x%x with %u ring entries",
                        gp_put, ch->handle, ch->entries);
    uint32_t count = (gp_put + ch->entries - ch->last_put) % ch->entries;
    submit_ctx s = { 0 };
    VGT_TRY(collect(c, ch, count, &s, err));
    c->pending = (struct cap_pending){ .ch = ch, .gp_put = gp_put, .count = count, .nseg = s.nseg, .flags = s.flags,
                                       .total = s.total };
    return VGT_OK;
}

static vgt_status write_locked(vgt_capture *c, uint32_t gp_get, uint64_t *seq, vgt_error *err)
{
    const struct cap_pending *p = &c->pending;
    cap_channel *ch = p->ch;
    vgt_rec_gpfifo_submit r = {
        .client = ch->client, .channel = ch->handle, .token = ch->has_token ? ch->token : 0, .flags = p->flags,
        .gp_get_before = gp_get, .gp_put_before = ch->last_put, .gp_get_after = VGT_GP_NOT_READ,
        .gp_put_after = p->gp_put, .entry_count = p->count, .segment_count = p->nseg,
        .entries = c->scratch, .segments = c->segs,
    };
    if (seq) *seq = vgt_writer_next_seq(c->w);
    VGT_TRY(vgt_write_gpfifo_submit(c->w, vgt_now_ns(), &r, err));
    ch->last_put = p->gp_put;
    c->stats.submits++;
    c->stats.entries += p->count;
    c->stats.segment_bytes += p->total;
    return VGT_OK;
}

static vgt_status submit_locked(vgt_capture *c, cap_channel *ch, uint32_t gp_get, uint32_t gp_put, uint64_t *seq,
                                vgt_error *err)
{
    VGT_TRY(collect_locked(c, ch, gp_put, err));
    return write_locked(c, gp_get, seq, err);
}

vgt_status vgt_capture_doorbell_begin(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_put,
                                      const vgt_segment **segs, uint32_t *nseg, vgt_error *err)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_find(c, client, channel);
    vgt_status rc = ch ? collect_locked(c, ch, gp_put, err)
                       : VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: doorbell on unknown channel 0x%x/0x%x",
                                  client, channel);
    if (rc != VGT_OK) {
        pthread_mutex_unlock(&c->mu);
        return rc;
    }
    *segs = c->segs;
    *nseg = c->pending.nseg;
    return VGT_OK;
}

vgt_status vgt_capture_doorbell_end(vgt_capture *c, uint32_t gp_get, uint64_t *seq, vgt_error *err)
{
    vgt_status rc = write_locked(c, gp_get, seq, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_doorbell(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_get, uint32_t gp_put,
                                uint64_t *seq, vgt_error *err)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_find(c, client, channel);
    vgt_status rc = ch ? submit_locked(c, ch, gp_get, gp_put, seq, err)
                       : VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: doorbell on unknown channel 0x%x/0x%x",
                                  client, channel);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

vgt_status vgt_capture_doorbell_token(vgt_capture *c, uint32_t token, uint32_t gp_get, uint32_t gp_put, uint64_t *seq,
                                      vgt_error *err)
{
    pthread_mutex_lock(&c->mu);
    cap_channel *ch = cap_channel_by_token(c, token);
    vgt_status rc;
    if (ch) {
        rc = submit_locked(c, ch, gp_get, gp_put, seq, err);
    } else {
        c->stats.unknown_tokens++;
        vgt_rec_doorbell d = { .token = token, .offset = 0x90 };
        rc = vgt_write_doorbell(c->w, vgt_now_ns(), &d, err);
        if (rc == VGT_OK) rc = VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: doorbell with unknown token 0x%x", token);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}
