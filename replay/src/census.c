/* census.c: the store census (--census). The replay reads back, around every submission, the ranges
 * worth watching: the CPU-visible pages the trace observes (MEMORY observed records, page-aligned) and
 * the render targets the decoded methods name (rt_track.c). A range whose bytes changed across a
 * submission gives one row: pages written, bytes changed, first changed byte, the index of the first
 * non-zero pixel, and for a render target px0, the value of its first pixel after the submission. A team
 * hunting a draw that never stores reads these as "wrote=0 / px0=0" (nothing written, the first pixel
 * still black); here they are measured on whatever backend runs the replay.
 * With the census per draw (draw_cuts.c) a submission is read back after each of its pieces too, and each
 * row names the draws of its piece.
 * A read after work the GPU did not finish (its wait timed out, or the channel faulted) is flagged
 * unfinished: zero bytes changed then says nothing about what the draw stores.
 * Bounded: at most CENSUS_MAX_RANGES ranges and CENSUS_MAX_BYTES watched bytes (ranges beyond are
 * counted as skipped), at most CENSUS_MAX_ROWS rows (then counted as dropped). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/grow.h"

#define CENSUS_MAX_RANGES 1024u
#define CENSUS_MAX_BYTES (64ull << 20)
#define CENSUS_MAX_ROWS (1ull << 20)
#define PAGE 4096ull

void vgt_store_diff(const uint8_t *before, const uint8_t *after, uint64_t len, vgt_store_row *row)
{
    row->pages_written = row->bytes_changed = 0;
    row->first_changed = row->first_nonzero_pixel = row->px0 = -1;
    uint64_t last_page = UINT64_MAX;
    for (uint64_t i = 0; i < len; i++) {
        if (before[i] == after[i]) continue;
        row->bytes_changed++;
        if (row->first_changed < 0) row->first_changed = (int64_t)i;
        if (i / PAGE != last_page) row->pages_written++, last_page = i / PAGE;
    }
    for (uint64_t p = 0; p + 4 <= len; p += 4)
        if (after[p] | after[p + 1] | after[p + 2] | after[p + 3]) {
            row->first_nonzero_pixel = (int64_t)(p / 4);
            break;
        }
}

static int64_t le32(const uint8_t *p)
{
    return (int64_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

void census_watch(vgt_replay *rp, uint64_t va, uint64_t len, const char *what)
{
    census_state *c = &rp->census;
    uint64_t lo = va & ~(PAGE - 1), hi = (va + len + PAGE - 1) & ~(PAGE - 1);
    if (hi <= lo) return;
    int64_t first_px = strcmp(what, "render-target") ? -1 : (int64_t)(va - lo);
    for (uint32_t i = 0; i < c->n; i++) {
        census_range *r = &c->ranges[i];
        if (r->va > lo || r->va + r->len < hi) continue;
        /* already watched; a render target inside a range watched for another reason makes it the
         * target's range, so that its rows say render-target and carry px0 */
        if (first_px >= 0 && r->first_px < 0) r->what = what, r->first_px = (int64_t)(va - r->va);
        return;
    }
    if (c->n == CENSUS_MAX_RANGES || c->bytes + (hi - lo) > CENSUS_MAX_BYTES) {
        c->skipped_bytes += hi - lo;
        return;
    }
    if (vgt_grow(&c->ranges, &c->cap, c->n + 1ull, 16)) {
        c->skipped_bytes += hi - lo;
        return;
    }
    uint8_t *before = malloc(hi - lo);
    if (!before) {
        c->skipped_bytes += hi - lo;
        return;
    }
    c->ranges[c->n++] = (census_range){.va = lo, .len = hi - lo, .what = what, .first_px = first_px, .before = before};
    c->bytes += hi - lo;
}

/* Read a range; a range the backend cannot read (not mapped yet) reads as zeros, so that the first
 * submission that maps and writes it still shows. */
static void read_range(vgt_replay *rp, const census_range *r, uint8_t *dst)
{
    vgt_error e;
    if (rp->ops->mem_read(rp->be, rp->vas, addr_to_replay(rp, r->va), dst, r->len, &e) != VGT_OK) memset(dst, 0, r->len);
}

vgt_status census_before(vgt_replay *rp, vgt_error *err)
{
    census_state *c = &rp->census;
    c->changed = 0;
    c->per_draw = rp->opt.draw_cuts && rp->opt.ndraw_cuts;
    c->draw_first = -1;
    c->draw_count = 0;
    if (c->n) engine_settle(rp, SETTLE_CENSUS);
    for (uint32_t i = 0; i < c->n; i++) read_range(rp, &c->ranges[i], c->ranges[i].before);
    return VGT_OK;
}

static vgt_status add_row(census_state *c, const vgt_store_row *row, vgt_error *err)
{
    if (c->nrows == CENSUS_MAX_ROWS) {
        c->dropped_rows++;
        return VGT_OK;
    }
    if (vgt_grow(&c->rows, &c->cap_rows, c->nrows + 1, 64))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "census: out of memory for %llu rows", (unsigned long long)c->nrows + 1);
    c->rows[c->nrows++] = *row;
    return VGT_OK;
}

vgt_status census_after(vgt_replay *rp, int piece, vgt_error *err)
{
    census_state *c = &rp->census;
    int stored = 0;   /* this read found a changed byte */
    if (c->n) engine_settle(rp, SETTLE_CENSUS);   /* what this submission wrote: once it ran */
    /* the GPU did not finish the work read here: a draw's render targets give rows even unchanged */
    int unfinished = rp->unfinished;
    int keep_quiet = unfinished && c->per_draw && c->draw_first >= 0;
    for (uint32_t i = 0; i < c->n; i++) {
        census_range *r = &c->ranges[i];
        if (r->len > c->cap_after) {
            uint8_t *n = realloc(c->after, r->len);
            if (!n) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "census: out of memory for %llu bytes",
                                    (unsigned long long)r->len);
            c->after = n;
            c->cap_after = r->len;
        }
        read_range(rp, r, c->after);
        vgt_store_row row = {.submit_index = rp->cur_index, .submit_seq = rp->cur_seq, .channel = rp->cur_channel,
                             .va = r->va, .len = r->len, .what = r->what, .draw_first = c->draw_first,
                             .draw_count = c->draw_count, .per_draw = (uint8_t)c->per_draw,
                             .unfinished = (uint8_t)unfinished};
        vgt_store_diff(r->before, c->after, r->len, &row);
        /* a piece of a submission cut at its draws: what it read is the next piece's "before" */
        if (piece) memcpy(r->before, c->after, r->len);
        if (!row.bytes_changed && !(keep_quiet && r->first_px >= 0)) continue;
        if (r->first_px >= 0 && (uint64_t)r->first_px + 4 <= r->len) row.px0 = le32(c->after + r->first_px);
        if (row.bytes_changed) c->changed = stored = 1;
        VGT_TRY(add_row(c, &row, err));
    }
    if (piece) c->pieces++;
    if (c->draw_first >= 0) {
        c->draws += c->draw_count;
        if (!stored) c->draws_quiet += c->draw_count;
        if (unfinished) c->draws_unfinished += c->draw_count;
    }
    if (!piece) {
        if (!c->changed) c->quiet_submissions++;
        c->changed = 0;
    }
    c->draw_first = -1;
    c->draw_count = 0;
    return VGT_OK;
}

void census_free(vgt_replay *rp)
{
    census_state *c = &rp->census;
    for (uint32_t i = 0; i < c->n; i++) free(c->ranges[i].before);
    free(c->ranges);
    free(c->after);
    free(c->rows);
    memset(c, 0, sizeof *c);
}

const vgt_store_row *vgt_replay_stores(const vgt_replay *rp, uint64_t *count)
{
    *count = rp->census.nrows;
    return rp->census.rows;
}

void vgt_replay_census_watch(vgt_replay *rp, uint64_t va, uint64_t len, const char *what)
{
    census_watch(rp, va, len, what);
}
