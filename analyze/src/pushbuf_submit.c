/* pushbuf_submit.c: decode a whole GPFIFO_SUBMIT record: each ring entry in order, its push-buffer bytes
 * found among the record's captured segments (main and subroutine levels alike).
 *
 * Segment lookup: entries usually reference segments in order, so the segment after the last hit is tried
 * first; otherwise a binary search when the segments are sorted by VA, else a linear scan (the list is
 * small: one segment per distinct push-buffer range of one submission).
 *
 * An entry whose range is not (fully) captured is a diagnostic: the captured prefix is decoded and the
 * rest reported, never read.
 */
#include <stdio.h>

#include "vgt/pushbuf.h"

typedef struct seg_index {
    const vgt_segment *seg;
    uint32_t count;
    uint32_t hint;     /* the segment after the last hit */
    int sorted;        /* segments ascend by gpu_va */
} seg_index;

static int seg_contains(const vgt_segment *s, uint64_t va)
{
    return va >= s->gpu_va && va - s->gpu_va < s->length;
}

static const vgt_segment *seg_find(seg_index *ix, uint64_t va)
{
    if (ix->hint < ix->count && seg_contains(&ix->seg[ix->hint], va)) return &ix->seg[ix->hint++];
    if (ix->sorted) {
        uint32_t lo = 0, hi = ix->count;   /* first segment with gpu_va > va */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (ix->seg[mid].gpu_va <= va) lo = mid + 1;
            else hi = mid;
        }
        /* several segments may start at or below va (overlaps): walk back while one could contain it */
        for (uint32_t i = lo; i-- > 0;) {
            if (seg_contains(&ix->seg[i], va)) {
                ix->hint = i + 1;
                return &ix->seg[i];
            }
            if (lo - i > 8) break;
        }
    }
    for (uint32_t i = 0; i < ix->count; i++)
        if (seg_contains(&ix->seg[i], va)) {
            ix->hint = i + 1;
            return &ix->seg[i];
        }
    return NULL;
}

static void seg_index_init(seg_index *ix, const vgt_rec_gpfifo_submit *sub)
{
    ix->seg = sub->segments;
    ix->count = sub->segments ? sub->segment_count : 0;
    ix->hint = 0;
    ix->sorted = 1;
    for (uint32_t i = 1; i < ix->count; i++)
        if (ix->seg[i].gpu_va < ix->seg[i - 1].gpu_va) ix->sorted = 0;
}

static void report(const vgt_pb_callbacks *cb, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    if (cb->diag) cb->diag(cb->ctx, kind, pos, msg);
}

static void control_entry(vgt_pb_state *st, const vgt_gp_entry *e, const vgt_pb_callbacks *cb, const vgt_mpos *pos)
{
    char msg[160];
    switch (e->opcode) {
    case 0: case 2: case 3: break;   /* NOP, GP_CRC, PB_CRC: nothing to decode */
    case 4: st->extended_base = (uint64_t)e->operand << 40; break;
    default:
        snprintf(msg, sizeof msg, "control entry %u has opcode %u (%s)", pos->entry, e->opcode,
                 e->opcode == 1 ? "ILLEGAL" : "unknown");
        report(cb, VGT_DIAG_CONTROL_ENTRY, pos, msg);
    }
}

/* Decode one non-control entry from the segment holding its VA. */
static vgt_status data_entry(vgt_pb_state *st, seg_index *ix, const vgt_gp_entry *e, const vgt_pb_callbacks *cb,
                             vgt_mpos pos, vgt_error *err)
{
    char msg[200];
    uint64_t want = (uint64_t)e->length * 4u;
    const vgt_segment *s = seg_find(ix, e->va);
    if (!s) {
        snprintf(msg, sizeof msg, "entry %u: push buffer at 0x%llx (%u dwords) is in no captured segment", pos.entry,
                 (unsigned long long)e->va, e->length);
        report(cb, VGT_DIAG_ADDRESS_NOT_CAPTURED, &pos, msg);
        return VGT_OK;
    }
    uint64_t avail = s->length - (e->va - s->gpu_va);
    if (avail < want) {
        snprintf(msg, sizeof msg, "entry %u: segment at 0x%llx holds %llu of the entry's %llu bytes%s", pos.entry,
                 (unsigned long long)s->gpu_va, (unsigned long long)avail, (unsigned long long)want,
                 (s->flags & VGT_SEGMENT_FLAG_TRUNCATED) ? " (captured truncated)" : "");
        report(cb, VGT_DIAG_TRUNCATED_SEGMENT, &pos, msg);
    } else {
        avail = want;
    }
    if (!s->data) return VGT_OK;
    return vgt_pb_decode(st, s->data + (e->va - s->gpu_va), (uint32_t)avail, pos, cb, err);
}

vgt_status vgt_pb_decode_submit(vgt_pb_state *st, uint64_t seq, const vgt_rec_gpfifo_submit *sub,
                                const vgt_pb_callbacks *cb, vgt_error *err)
{
    if (!st || !sub || !cb || (sub->entry_count && !sub->entries))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "vgt_pb_decode_submit: state, record and callbacks are required");
    seg_index ix;
    seg_index_init(&ix, sub);
    st->stopped = 0;
    for (uint32_t i = 0; i < sub->entry_count; i++) {
        vgt_gp_entry e;
        vgt_mpos pos = {seq, i, 0};
        vgt_gp_entry_decode(vgt_submit_entry(sub, i), &e);
        if (!e.is_control) e.va += st->extended_base;
        if (cb->entry) cb->entry(cb->ctx, &e, i, &pos);
        if (e.is_control) {
            control_entry(st, &e, cb, &pos);
            continue;
        }
        VGT_TRY(data_entry(st, &ix, &e, cb, pos, err));
        if (st->stopped) return VGT_OK;
    }
    return VGT_OK;
}
