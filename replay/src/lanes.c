/* lanes.c: how a submission reaches the backend. A lane is a table entry: its name, the backend
 * capability it needs, and the function that runs one GPFIFO_SUBMIT.
 *  - verbatim: the captured push-buffer segments are written into backend memory at their captured
 *    VAs, then the captured GPFIFO entries are submitted unchanged; where lane 1 moved a mapping
 *    (addrmap.c), at the moved VA, with the address operands and entries rewritten (reloc_patch.c).
 *  - synth (lane 2): each submission's work rebuilt into a fresh push buffer on a channel of the lane's own
 *    (lane_synth.c); work it cannot rebuild runs verbatim.
 *  - auto: the first lane the backend implements; on hardware, verbatim per submission and synth where
 *    verbatim must not run (lane_synth.c).
 *  - cuda (lane 3, lane_cuda.c): the captured CUDA driver API calls forwarded through the host's libcuda
 *    (backend cuda); it replays the API records, not the submissions, which the host driver makes anew.
 *  A lane a backend lacks the capability for is refused by vgt_replay_open with "lane X is not implemented
 *  by backend Y". */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* Write the submission's push-buffer segments where the GPU will fetch them. A segment outside every
 * GPU_MAP (a capture that missed the mapping) is mapped for the replay, with a warning. */
static vgt_status write_segments(vgt_replay *rp, const vgt_rec_gpfifo_submit *sub, vgt_error *err)
{
    for (uint32_t i = 0; i < sub->segment_count; i++) {
        const vgt_segment *s = &sub->segments[i];
        vgt_error e;
        if (!s->length) continue;
        if (s->flags & VGT_SEGMENT_FLAG_TRUNCATED)
            engine_warn(rp, "submission %lld: segment %u at VA 0x%llx was captured truncated (%u bytes)",
                        (long long)rp->cur_index, i, (unsigned long long)s->gpu_va, s->length);
        /* at the segment's replay VA, with its address operands rewritten when a mapping moved */
        uint64_t va = addr_to_replay(rp, s->gpu_va);
        const uint8_t *data = rp->patched ? rp->pbcopy + rp->seg_off[i] : s->data;
        engine_pb_write(rp, va, s->length);
        if (rp->ops->mem_write(rp->be, rp->vas, va, data, s->length, &e) == VGT_OK) continue;
        uint64_t lo = va & ~0xFFFull, hi = (va + s->length + 0xFFF) & ~0xFFFull;
        if (hi <= lo || rp->ops->map(rp->be, rp->vas, lo, hi - lo, VGT_APERTURE_UNKNOWN, &e) != VGT_OK ||
            rp->ops->mem_write(rp->be, rp->vas, va, data, s->length, &e) != VGT_OK) {
            engine_warn(rp, "submission %lld: segment %u at VA 0x%llx not written: %s", (long long)rp->cur_index, i,
                        (unsigned long long)s->gpu_va, e.msg);
            continue;
        }
        engine_warn(rp, "submission %lld: push buffer at VA 0x%llx is in no GPU_MAP of the trace; mapped for the replay",
                    (long long)rp->cur_index, (unsigned long long)s->gpu_va);
    }
    return VGT_OK;
}

static vgt_status submit_entries(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                                 uint32_t flags, vgt_error *err)
{
    if (!sub->entry_count) return VGT_OK;
    uint64_t *ents = malloc((size_t)sub->entry_count * sizeof *ents);
    if (!ents) return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "replay: out of memory for %u GPFIFO entries", sub->entry_count);
    for (uint32_t i = 0; i < sub->entry_count; i++) ents[i] = patch_entry(rp, i, vgt_submit_entry(sub, i));
    vgt_error e;
    int done = 0;
    if (!(flags & VGT_SUBMIT_STATE_ONLY)) {   /* the census per draw: in pieces cut after its draws */
        vgt_status cut = draw_cuts_submit(rp, ch, ents, sub->entry_count, &done, err);
        if (done || cut != VGT_OK) {
            free(ents);
            return cut;
        }
    }
    vgt_status rc = rp->ops->submit(rp->be, ch, ents, sub->entry_count, flags, &e);
    free(ents);
    if (rc == VGT_E_FAULT || rc == VGT_E_LIMIT) {
        if (!(flags & VGT_SUBMIT_STATE_ONLY)) rp->sum.faults++;
        return VGT_OK;   /* reported through the backend's events; the replay goes on */
    }
    if (rc != VGT_OK) return VGT_FAIL(err, rc, rec->seq, "submission at seq %llu: %s", (unsigned long long)rec->seq, e.msg);
    return VGT_OK;
}

vgt_status lane_run_verbatim(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                             vgt_error *err)
{
    /* a launch its context has not the local memory for (sked_guard.c): every lane's verbatim path */
    if (rp->run_chan && sked_guard_verbatim(rp, rp->run_chan)) return sked_refuse(rp, rp->run_chan);
    rp->sum.lanes[VGT_LANE_VERBATIM]++;   /* here, not in the engine: synth and auto fall back to it */
    VGT_TRY(write_segments(rp, sub, err));
    return submit_entries(rp, rec, sub, ch, 0, err);
}

vgt_status lane_state_only(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                           vgt_error *err)
{
    VGT_TRY(write_segments(rp, sub, err));
    return submit_entries(rp, rec, sub, ch, VGT_SUBMIT_STATE_ONLY, err);
}

/* Lane 3 never gets submissions (its record hook takes every record); were one handed to it, it has
 * nothing to do: the host's CUDA driver makes the submissions of the calls it forwards. */
static vgt_status run_cuda(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                           vgt_error *err)
{
    (void)rp, (void)rec, (void)sub, (void)ch, (void)err;
    return VGT_OK;
}

static const engine_lane lanes[] = {
    {"verbatim", VGT_LANE_VERBATIM, VGT_CAP_LANE_VERBATIM, lane_run_verbatim, NULL, NULL, NULL},
    {"synth", VGT_LANE_SYNTH, VGT_CAP_LANE_SYNTH, lane_run_synth, NULL, NULL, NULL},
    {"cuda", VGT_LANE_CUDA, VGT_CAP_LANE_CUDA, run_cuda, lane_cuda_record, lane_cuda_finish, lane_cuda_close},
};
/* auto on hardware with the synth lane: verbatim per submission, synthesized where verbatim must not run */
static const engine_lane lane_per_submission = {"auto", VGT_LANE_AUTO, VGT_CAP_LANE_VERBATIM, lane_run_auto,
                                                     NULL, NULL, NULL};
#define NLANES (sizeof lanes / sizeof lanes[0])

const engine_lane *lane_find(vgt_lane l)
{
    for (size_t i = 0; i < NLANES; i++)
        if (lanes[i].lane == l) return &lanes[i];
    return NULL;
}

/* The first lane, in table order, that the backend implements and this build can run; on hardware that
 * also synthesizes, the per-submission choice (lane_synth.c). */
const engine_lane *lane_auto(uint32_t caps)
{
    uint32_t both = VGT_CAP_ASYNC | VGT_CAP_LANE_VERBATIM | VGT_CAP_LANE_SYNTH;
    if ((caps & both) == both) return &lane_per_submission;
    for (size_t i = 0; i < NLANES; i++)
        if ((caps & lanes[i].cap) && lanes[i].run) return &lanes[i];
    return NULL;
}

const char *vgt_lane_name(vgt_lane l)
{
    const engine_lane *e = lane_find(l);
    return e ? e->name : "auto";
}

int vgt_lane_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "auto")) return VGT_LANE_AUTO;
    for (size_t i = 0; i < NLANES; i++)
        if (!strcmp(lanes[i].name, name)) return (int)lanes[i].lane;
    return -1;
}
