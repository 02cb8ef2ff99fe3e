/* plan.c: the engine plans before it replays (replay.h, options.plan). Planning needs to see the trace
 * ahead of the replay: the backend's own range must avoid every mapping (the backend opens with it), a
 * mapping that moves takes along operands of submissions that come before and after it, and the census
 * must watch from the first submission the ranges the capture observes, which it reads back only at the
 * end. So the engine holds the records back, feeding each to the planner (reloc.c: GPU_MAP ranges,
 * push-buffer segments, MEMORY observed ranges) as it arrives, and makes the plan:
 *  - at the end of the records (vgt_replay_run at the end of its reader, or vgt_replay_finish);
 *  - or when the records held reach options.plan_buffer_limit (1 GiB of record bytes by default).
 * Then, when some mapping moves, one walk over the held records finds the operands that point into it
 * (reloc_operands.c, reloc_macros.c); the backend opens with the chosen range; the caller sees the plan
 * (options.on_plan); and the held records are replayed in order, then the rest as they come.
 * A file and a stream of the same trace are held back and planned alike, so they replay alike.
 *
 * Past the limit the plan covers what was held (a warning says so) and the engine decides the rest as it
 * reads: a later mapping over the backend's range moves at that GPU_MAP (addrmap.c), a later mapping
 * that cannot keep its VA moves with the operands from then on rewritten, and a range the trace observes
 * later is watched from when it is read.
 *
 * Live (options.live: the trace is being recorded while it is replayed), nothing can wait for the end.
 * A live replay on hardware asked for nothing the plan makes (no census, --plan or --relocate) holds
 * nothing back: the backend opens at vgt_replay_open with the preferred range (backend_cfg.reserved_va,
 * else the backend's default) and every record is replayed as it arrives. Holding the setup back looked
 * free (nothing runs before a doorbell) but was not: everything the engine does before the first
 * submission (opening the backend: RM client, device, UVM registration, the VA space; creating the
 * channels; mapping and clearing the allocations) then ran at the program's first doorbell, after the
 * program had done its own start-up and while it went on submitting at full rate; on the H200 that first
 * submission cost ~480 ms, a backlog the replay, barely faster than the program, never drained. Replayed
 * as they come, the setup records (which a live capture hands on at once, writer.c) are realized while
 * the program is still starting up. What the plan would have added over the setup is only the backend's
 * range placed off the setup's mappings; instead a setup mapping that lands on the range moves at its
 * GPU_MAP (addrmap.c), before any submission, so its operands are rewritten in every submission that
 * names it (reloc_patch.c follows them once a mapping moved). The drivers' mappings the corpus holds
 * (CUDA, Vulkan, GL on Hopper) never reach the default range.
 * Not a second thread instead: opening the backend on one would be safe (nothing touches it until the
 * open returns, and the engine would wait for it before its first backend operation), but creating
 * channels and mapping memory on one while the engine writes memory and submits on the other would need a
 * lock around every operation of the gpu backend, whose session (its fds, allocations, channels) assumes
 * one thread. Replaying each record as it arrives overlaps the same work with the program's start-up in
 * the same order as before. (The gpu backend still creates its hardware channels at the first submission,
 * backend_gpu.c prepare: it must see every engine object of a channel, and of the channel's group, first.)
 * Asked for the census, --plan or --relocate, the engine holds back the records before the first
 * GPFIFO_SUBMIT (the program's setup, where it maps most of its memory) and plans over them as above: the
 * backend's range away from every mapping seen so far, the moves known so far with their operands (the
 * first submission then pays for the backend's start). From the first submission on it decides as past
 * the limit. What can differ from the file: census rows of the submissions before a range's first
 * observation (the capture observes at the end: a live census watches almost nothing; warned), and
 * operands of earlier submissions into a mapping that has to move later (each warned where the rewrite
 * cannot be made). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "reloc_internal.h"
#include "vgt/grow.h"

int plan_wanted(const vgt_replay *rp)
{
    /* the plan places lane 1's mappings; a lane with its own record hook (lane 3) places its device ranges
     * itself, through the host's driver, as the calls come */
    if (rp->lane->record) return 0;
    if (rp->opt.plan || rp->opt.census || rp->opt.nrelocate) return 1;
    /* hardware: the backend's range off the trace's mappings; live, not worth holding the setup (above) */
    return (rp->ops->caps() & VGT_CAP_ASYNC) && !rp->opt.live;
}

static uint64_t buffer_limit(const vgt_replay *rp)
{
    return rp->opt.plan_buffer_limit ? rp->opt.plan_buffer_limit : VGT_REPLAY_PLAN_BUFFER_DEFAULT;
}

static vgt_status plan_new(vgt_replay *rp, vgt_error *err)
{
    if (rp->plan) return VGT_OK;
    if (!(rp->plan = calloc(1, sizeof *rp->plan)))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory for the address plan");
    vgt_reloc_plan_begin(rp->plan, rp->opt.backend_cfg.reserved_va, rp->relocate, rp->opt.nrelocate);
    return VGT_OK;
}

static vgt_record held_at(const vgt_replay *rp, uint64_t i)
{
    vgt_record r = rp->held[i].rec;
    r.payload = rp->held_bytes + rp->held[i].off;
    return r;
}

vgt_status plan_hold(vgt_replay *rp, const vgt_record *rec, int *held, vgt_error *err)
{
    *held = 0;
    VGT_TRY(plan_new(rp, err));
    if (rp->opt.live && rec->type == VGT_REC_GPFIFO_SUBMIT) {   /* the first doorbell: plan what was set up */
        rp->sum.live_planned_records = rp->nheld;
        return plan_close(rp, err);
    }
    if (rp->held_len + rec->length > buffer_limit(rp)) {
        rp->plan->partial = 1;
        return plan_close(rp, err);
    }
    /* small first capacities, doubled as needed: a short trace (or a stream cut early) holds a few records */
    if (vgt_grow(&rp->held, &rp->cap_held, rp->nheld + 1, 64) ||
        vgt_grow(&rp->held_bytes, &rp->cap_held_bytes, rp->held_len + rec->length, 64u << 10))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory holding records for the plan");
    rp->held[rp->nheld] = (plan_held){.rec = *rec, .off = rp->held_len};
    rp->held[rp->nheld++].rec.payload = NULL;
    if (rec->length) memcpy(rp->held_bytes + rp->held_len, rec->payload, rec->length);
    rp->held_len += rec->length;
    VGT_TRY(vgt_reloc_plan_record(rp->plan, rec, err));
    *held = 1;
    return VGT_OK;
}

/* The operands of the held records that point into a moving mapping: one walk, only when some move. */
static vgt_status find_operands(vgt_replay *rp, vgt_error *err)
{
    if (!rp->plan->nmoving) return VGT_OK;
    reloc_operands *o;
    VGT_TRY(reloc_operands_begin(&o, rp->plan, rp->opt.model_memory_limit, err));
    vgt_status rc = VGT_OK;
    for (uint64_t i = 0; i < rp->nheld && rc == VGT_OK; i++) {
        vgt_record r = held_at(rp, i);
        rc = reloc_operands_record(o, &r, err);
    }
    return reloc_operands_end(o, rc, err);
}

/* The warnings (operands the replay cannot rewrite) go first, in their order: the caller prints the plan
 * that way, and the engine warns with each. Returns how many. */
static uint32_t warnings_first(vgt_reloc_plan *p)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < p->nnotes; i++) {
        if (p->notes[i].kind != VGT_RELOC_NOT_REWRITABLE) continue;
        vgt_reloc_note n = p->notes[k];
        p->notes[k++] = p->notes[i];
        p->notes[i] = n;
    }
    return k;
}

static void apply(vgt_replay *rp)
{
    vgt_reloc_plan *p = rp->plan;
    rp->opt.backend_cfg.reserved_va = p->reserved_va;
    /* operands followed from the first submission: something moves, or may (live: --relocate names VAs
     * whose mappings may come later) */
    rp->track_addresses = p->nmoving > 0 || (rp->opt.live && rp->opt.nrelocate);
    uint32_t nwarn = warnings_first(p);
    if (rp->opt.on_plan) rp->opt.on_plan(rp->opt.report_ctx, p);
    if (p->partial)
        engine_warn(rp, "the address plan covers the first %llu records (%llu bytes held back, the limit): mappings "
                    "read later move when they must as they come, and ranges the trace observes later are watched "
                    "from when they are read", (unsigned long long)p->records, (unsigned long long)rp->held_len);
    for (uint32_t i = 0; i < nwarn; i++) engine_warn(rp, "%s", p->notes[i].msg);
    if (rp->opt.live && rp->opt.census)
        engine_warn(rp, "live census: the ranges the trace observes are watched from when they are read (the capture "
                    "observes them at its end): submissions before that have no rows for them, unlike a replay of "
                    "the finished trace");
    if (rp->opt.census)   /* the capture observes ranges after the submissions that wrote them */
        for (uint32_t i = 0; i < p->nobserved; i++) census_watch(rp, p->observed[i].va, p->observed[i].len, "observed");
    free(rp->avoid);   /* a new VA the replay chooses avoids every mapping planned */
    rp->avoid = p->map_ranges;
    rp->navoid = p->nmap_ranges;
    p->map_ranges = NULL;
    p->nmap_ranges = p->cap_map_ranges = 0;
}

static void drop_held(vgt_replay *rp)
{
    free(rp->held);
    free(rp->held_bytes);
    rp->held = NULL;
    rp->held_bytes = NULL;
    rp->nheld = rp->cap_held = rp->held_len = rp->cap_held_bytes = 0;
}

vgt_status plan_close(vgt_replay *rp, vgt_error *err)
{
    if (!rp->planning) return VGT_OK;
    rp->planning = 0;
    vgt_status rc = plan_new(rp, err);
    if (rc == VGT_OK) {
        vgt_reloc_plan_moving(rp->plan);
        rc = find_operands(rp, err);
    }
    if (rc == VGT_OK) rc = vgt_reloc_plan_end(rp->plan, err);
    if (rc == VGT_OK) {
        apply(rp);
        rc = engine_start(rp, err);
    }
    vgt_reloc_plan_free(rp->plan);
    free(rp->plan);
    rp->plan = NULL;
    for (uint64_t i = 0; i < rp->nheld && rc == VGT_OK && !rp->done; i++) {
        vgt_record r = held_at(rp, i);
        rc = engine_record(rp, &r, err);
    }
    drop_held(rp);
    return rc;
}

void plan_free(vgt_replay *rp)
{
    if (rp->plan) vgt_reloc_plan_free(rp->plan);
    free(rp->plan);
    rp->plan = NULL;
    drop_held(rp);
}
