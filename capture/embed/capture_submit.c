/* capture_submit.c: a doorbell -> one GPFIFO_SUBMIT record (entries + the bytes of their segments), in
 * one call under the capture's mutex: token -> channel -> (USERD GP_PUT) -> entries and segments read
 * through the views -> the tracker's changed memory -> the record.
 *
 * GPFIFO entries are read with the codec of vgt/nv_pushbuf.h (push-buffer VA, LEVEL, LENGTH in dwords;
 * LENGTH 0 is a control entry, whose SET_PB_SEGMENT_EXTENDED_BASE gives the VA bits above 40 of the
 * entries after it). */
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"
#include "vgt/nv_abi.h"   /* USERMODE_DOORBELL, USERD_GP_GET, USERD_GP_PUT, USERD_SIZE */
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

/* One submission, start to end under c->mu: the entries from the channel's last GP_PUT up to gp_put and
 * their segments; the tracker's changed memory (which leaves out the bytes the segments carry); the
 * GPFIFO_SUBMIT record. When the segments cannot be collected the tracker still records the changed
 * memory (nothing is left out) and the error comes back. */
static vgt_status submit_locked(vgt_capture *c, cap_channel *ch, uint32_t gp_get, uint32_t gp_put, uint64_t *seq,
                                vgt_error *err)
{
    submit_ctx s = { 0 };
    uint32_t count = 0;
    vgt_status rc = VGT_OK;
    if (gp_put >= ch->entries)
        rc = VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "capture: GP_PUT %u on channel 0x%x with %u ring entries", gp_put,
                      ch->handle, ch->entries);
    if (rc == VGT_OK) {
        count = (gp_put + ch->entries - ch->last_put) % ch->entries;
        rc = collect(c, ch, count, &s, err);
    }
    if (c->tracker.before_submit) c->tracker.before_submit(c->tracker.ctx, rc == VGT_OK ? c->segs : NULL, rc == VGT_OK ? s.nseg : 0);
    if (rc != VGT_OK) return rc;
    vgt_rec_gpfifo_submit r = {
        .client = ch->client, .channel = ch->handle, .token = ch->has_token ? ch->token : 0, .flags = s.flags,
        .gp_get_before = gp_get, .gp_put_before = ch->last_put, .gp_get_after = VGT_GP_NOT_READ,
        .gp_put_after = gp_put, .entry_count = count, .segment_count = s.nseg,
        .entries = c->scratch, .segments = c->segs,
    };
    if (seq) *seq = vgt_writer_next_seq(c->w);
    VGT_TRY(vgt_write_gpfifo_submit(c->w, vgt_now_ns(), &r, err));
    ch->last_put = gp_put;
    c->stats.submits++;
    atomic_fetch_add(&c->submits_written, 1);
    c->stats.entries += count;
    c->stats.segment_bytes += s.total;
    return VGT_OK;
}

/* A doorbell whose token no channel owns: a DOORBELL record (channel 0) so the trace still shows it. */
static vgt_status unknown_token(vgt_capture *c, uint32_t token, vgt_error *err)
{
    c->stats.unknown_tokens++;
    vgt_rec_doorbell d = { .token = token, .offset = USERMODE_DOORBELL };
    VGT_TRY(vgt_write_doorbell(c->w, vgt_now_ns(), &d, err));
    return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: doorbell with unknown token 0x%x", token);
}

vgt_status vgt_capture_doorbell(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_get, uint32_t gp_put,
                                uint64_t *seq, vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    c->stats.doorbells++;
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
    if (!cap_lock_live(c)) return VGT_OK;
    c->stats.doorbells++;
    cap_channel *ch = cap_channel_by_token(c, token);
    vgt_status rc = ch ? submit_locked(c, ch, gp_get, gp_put, seq, err) : unknown_token(c, token, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* GP_PUT and GP_GET, read from USERD before the doorbell store reaches the GPU: GP_GET says how far the GPU
 * had fetched the entries of earlier submissions (completion forensics: a ring wrap, a GET past the last
 * recorded PUT). USERD is uncached device memory (about 1 us a read on the H200): two reads a doorbell. */
static vgt_status store_locked(vgt_capture *c, uint32_t token, vgt_capture_doorbell_info *info, vgt_error *err)
{
    cap_channel *ch = cap_channel_by_token(c, token);
    if (!ch) {
        info->unknown_token = 1;
        return unknown_token(c, token, err);
    }
    info->client = ch->client;
    info->channel = ch->handle;
    info->userd_memory = ch->userd_memory;
    info->userd_offset = ch->userd_offset;
    const volatile uint8_t *userd = cap_cpu_pointer(c, ch->client, ch->userd_memory, ch->userd_offset, USERD_SIZE);
    if (!userd) {
        info->no_userd = 1;
        vgt_rec_doorbell d = { .token = token, .channel = ch->handle, .offset = USERMODE_DOORBELL };
        VGT_TRY(vgt_write_doorbell(c->w, vgt_now_ns(), &d, err));
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: channel 0x%x: USERD (memory 0x%x + 0x%llx) is not "
                        "CPU-mapped; GP_PUT unknown", ch->handle, ch->userd_memory, (unsigned long long)ch->userd_offset);
    }
    if (!ch->infra_told) {
        ch->infra_told = 1;
        if (c->tracker.channel_infra)
            c->tracker.channel_infra(c->tracker.ctx, ch->ring_va, 8ull * ch->entries, (const void *)userd, USERD_SIZE);
    }
    uint64_t t0 = vgt_now_ns();
    uint32_t gp_put = *(const volatile uint32_t *)(userd + USERD_GP_PUT);
    uint32_t gp_get = *(const volatile uint32_t *)(userd + USERD_GP_GET);
    c->stats.userd_ns += vgt_now_ns() - t0;
    return submit_locked(c, ch, gp_get, gp_put, NULL, err);
}

vgt_status vgt_capture_doorbell_store(vgt_capture *c, uint32_t token, vgt_capture_doorbell_info *info, vgt_error *err)
{
    *info = (vgt_capture_doorbell_info){ 0 };
    if (!cap_lock_live(c)) return VGT_OK;
    c->stats.doorbells++;
    vgt_status rc = store_locked(c, token, info, err);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* The end of the capture: each channel that submitted and whose USERD is still CPU-mapped gets a
 * CHANNEL_PROGRESS record with its GP_GET and GP_PUT, so a reader knows whether the GPU had fetched every
 * entry the trace holds. Called under c->mu, before the capture stops recording. */
void cap_progress_at_end_locked(vgt_capture *c)
{
    for (uint32_t i = 0; i < c->nchannels; i++) {
        cap_channel *ch = &c->channels[i];
        if (!ch->infra_told) continue;   /* never rang a doorbell through USERD */
        const volatile uint8_t *userd = cap_cpu_pointer(c, ch->client, ch->userd_memory, ch->userd_offset, USERD_SIZE);
        if (!userd) continue;
        vgt_rec_channel_progress p = {
            .client = ch->client, .channel = ch->handle, .flags = VGT_PROGRESS_FLAG_END,
            .gp_get = *(const volatile uint32_t *)(userd + USERD_GP_GET),
            .gp_put = *(const volatile uint32_t *)(userd + USERD_GP_PUT),
        };
        vgt_error err;
        if (vgt_write_channel_progress(c->w, vgt_now_ns(), &p, &err) != VGT_OK) return;
        c->stats.progress_records++;
    }
}

vgt_status vgt_capture_progress(vgt_capture *c, uint32_t client, uint32_t channel, uint32_t gp_get, uint32_t gp_put,
                                vgt_error *err)
{
    if (!cap_lock_live(c)) return VGT_OK;
    cap_channel *ch = cap_channel_find(c, client, channel);
    vgt_status rc;
    if (!ch) {
        rc = VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "capture: progress of unknown channel 0x%x/0x%x", client, channel);
    } else {
        vgt_rec_channel_progress p = { .client = client, .channel = channel, .gp_get = gp_get, .gp_put = gp_put,
                                       .flags = VGT_PROGRESS_FLAG_END };
        rc = vgt_write_channel_progress(c->w, vgt_now_ns(), &p, err);
        if (rc == VGT_OK) c->stats.progress_records++;
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}
