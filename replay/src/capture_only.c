/* capture_only.c: bytes of the capture's memory that only the captured driver's CPU (or the captured
 * channels' own host unit) wrote, which a verbatim replay never reproduces, so --check on a backend
 * without a write log (the GPU) must not compare them. Found on the H200 corpus run (2026-11-30):
 *  - each captured channel's USERD (CUDA maps it in one sysmem object next to the rings: vadd's pages
 *    0x2006xx000 differed at +0x40, PUT and GET of the channel's push buffer, e.g. 0x00c00370 twice):
 *    the driver writes PUT, the host unit GET / GP_GET of the CAPTURED channel; the replay runs each
 *    channel on its own ring and USERD (backend/gpu infra slot), so the captured USERD keeps whatever
 *    the trace's initial contents held;
 *  - each captured channel's GPFIFO ring: entries the driver wrote (the replay hands entries to its own
 *    ring), including ones written and never submitted before the capture ended;
 *  - pages holding submitted push-buffer segments: the driver keeps writing methods after the last
 *    submitted segment (vk_compute: 0x4582b24, right after the last segment 0x4582abc + 26 dwords, held
 *    0x2001c00d.. that no submission carried). Bytes a segment carried are uploaded by the replay and
 *    equal anyway; the rest of such a page is CPU data, not GPU output.
 * USERD size: 512 bytes (open-gpu-doc manuals hopper/gh100 dev_ram.ref NV_RAMUSERD__SIZE). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/grow.h"

#define USERD_BYTES 512u
#define GP_ENTRY_BYTES 8u
#define PAGE 4096ull

static void clear_range(uint64_t va, uint64_t len, uint64_t lo, uint64_t hi, uint8_t *mask, uint64_t *n)
{
    uint64_t s = lo > va ? lo : va, e = hi < va + len ? hi : va + len;
    for (uint64_t i = s; i < e; i++) {
        *n += mask[i - va] != 0;
        mask[i - va] = 0;
    }
}

/* The GPU VA of a channel's USERD: its own VA when recorded, else the mapping of its USERD memory. */
static uint64_t userd_va(const vgt_model *m, const vgt_rec_channel *c)
{
    if (c->userd_gpu_va) return c->userd_gpu_va;
    for (uint32_t i = 0, n = vgt_model_mapping_count(m); i < n; i++) {
        const vgt_model_mapping *mp = vgt_model_mapping_at(m, i);
        if (mp->client == c->client && mp->memory == c->userd_memory && c->userd_offset >= mp->offset &&
            c->userd_offset - mp->offset < mp->length)
            return mp->gpu_va + (c->userd_offset - mp->offset);
    }
    return 0;
}

static int page_known(const vgt_replay *rp, uint64_t page, uint32_t *at)
{
    uint32_t lo = 0, hi = rp->npb_pages;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (rp->pb_pages[mid] < page) lo = mid + 1;
        else hi = mid;
    }
    *at = lo;
    return lo < rp->npb_pages && rp->pb_pages[lo] == page;
}

static void add_page(vgt_replay *rp, uint64_t page)
{
    uint32_t at;
    if (page_known(rp, page, &at)) return;
    /* doubled from 256 up to the maximum (a power of two): most traces use a few pages */
    if (rp->npb_pages == CAPTURE_PB_PAGES_MAX || vgt_grow(&rp->pb_pages, &rp->cap_pb_pages, rp->npb_pages + 1ull, 256)) {
        rp->pb_pages_dropped++;
        return;
    }
    memmove(rp->pb_pages + at + 1, rp->pb_pages + at, (rp->npb_pages - at) * sizeof *rp->pb_pages);
    rp->pb_pages[at] = page;
    rp->npb_pages++;
}

static void add_range(vgt_replay *rp, uint64_t va, uint64_t len)
{
    if (rp->nco_ranges == CAPTURE_RANGES_MAX ||
        (!rp->co_ranges && !(rp->co_ranges = malloc(CAPTURE_RANGES_MAX * sizeof *rp->co_ranges)))) {
        rp->pb_pages_dropped++;
        return;
    }
    rp->co_ranges[rp->nco_ranges++] = (volatile_range){va, len};
}

/* Kept when the channel is created: drivers free channels before the trace's last observations (gl_egl
 * and vk_compute free theirs before their final MEMORY observed records of the USERD pages). */
void capture_only_note_channel(vgt_replay *rp, const vgt_rec_channel *c)
{
    uint64_t u = userd_va(rp->model, c);
    if (u) add_range(rp, u, USERD_BYTES);
    if (c->ring_va) add_range(rp, c->ring_va, (uint64_t)c->entries * GP_ENTRY_BYTES);
}

void capture_only_note_submit(vgt_replay *rp, const vgt_rec_gpfifo_submit *sub)
{
    for (uint32_t i = 0; i < sub->segment_count; i++) {
        const vgt_segment *s = &sub->segments[i];
        if (!s->length) continue;
        for (uint64_t p = s->gpu_va / PAGE; p <= (s->gpu_va + s->length - 1) / PAGE; p++) add_page(rp, p);
    }
}

uint64_t capture_only_unmask(const vgt_replay *rp, uint64_t va, uint64_t len, uint8_t *mask)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < rp->nco_ranges; i++)
        clear_range(va, len, rp->co_ranges[i].va, rp->co_ranges[i].va + rp->co_ranges[i].len, mask, &n);
    for (uint32_t i = 0, nc = vgt_model_channel_count(rp->model); i < nc; i++) {
        const vgt_rec_channel *c = &vgt_model_channel_at(rp->model, i)->rec;
        uint64_t u = userd_va(rp->model, c);
        if (u) clear_range(va, len, u, u + USERD_BYTES, mask, &n);
        if (c->ring_va) clear_range(va, len, c->ring_va, c->ring_va + (uint64_t)c->entries * GP_ENTRY_BYTES, mask, &n);
    }
    for (uint64_t p = va / PAGE; len && p <= (va + len - 1) / PAGE; p++) {
        uint32_t at;
        if (page_known(rp, p, &at)) clear_range(va, len, p * PAGE, (p + 1) * PAGE, mask, &n);
    }
    return n;
}
