/* test_replay_live_setup.c: a live replay on hardware sets the program's setup up as it arrives.
 *
 * On the H200 the first submission of a live replay cost ~480 ms in the engine: the engine held back the
 * records before the first GPFIFO_SUBMIT to plan over them, and only at that submission opened the
 * backend (RM client, device, UVM, the VA space), created the channels, mapped and cleared the
 * allocations; the program meanwhile had done its own start-up and went on submitting, and the replay,
 * barely faster, never caught up. A fake slow hardware backend (sim's operations with the GPU's
 * capabilities: asynchronous, no write log; opening it takes SLOW_OPEN_MS, each channel SLOW_CHANNEL_MS)
 * replays corpus/many_launches.vgt record by record as a live stream hands them over:
 *  - live: the backend is open, every channel created with its objects and every mapping made before the
 *    first submission reaches the engine, and that submission's time from the engine to its lane (the
 *    bench's "engine -> lane" stage) holds none of it;
 *  - the results are those of the file, planned as before (checks, submissions, host writes);
 *  - live with the backend's range on the program's own mappings: those move at their GPU_MAP, before any
 *    submission, and every operand into them is rewritten: the checks still pass as on the file, where the
 *    plan moves the backend's range instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vgt/replay.h"
#include "vgt/trace.h"
#include "check.h"
#include "fake_gpu.h"

#define TRACE "corpus/many_launches.vgt"
#define SLOW_OPEN_MS 200
#define SLOW_CHANNEL_MS 5
#define TRACE_CHANNELS 20u   /* vgt info: many_launches sets up 20 channels before its first submission */

static vgt_backend_ops fake;
static struct {
    int opens, vaspaces, channels, objects, maps;
} calls;

static void sleep_ms(long ms) { nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL); }

static vgt_status fake_open(vgt_backend **b, const vgt_backend_config *cfg, vgt_error *err)
{
    calls.opens++;
    sleep_ms(SLOW_OPEN_MS);   /* the RM client, the device, UVM's registration of the GPU and the VA space */
    return vgt_backend_sim.open(b, cfg, err);
}

static vgt_status fake_vaspace(vgt_backend *b, uint32_t *vas, vgt_error *err)
{
    calls.vaspaces++;
    return vgt_backend_sim.vaspace_create(b, vas, err);
}

static vgt_status fake_channel(vgt_backend *b, const vgt_backend_channel_desc *d, uint32_t *ch, vgt_error *err)
{
    calls.channels++;
    sleep_ms(SLOW_CHANNEL_MS);
    return vgt_backend_sim.channel_create(b, d, ch, err);
}

static vgt_status fake_object(vgt_backend *b, uint32_t ch, uint32_t cls, uint32_t handle, vgt_error *err)
{
    calls.objects++;
    return vgt_backend_sim.object_create(b, ch, cls, handle, err);
}

static vgt_status fake_map(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint32_t aperture, vgt_error *err)
{
    calls.maps++;
    return vgt_backend_sim.map(b, vas, va, size, aperture, err);
}

static void use_fake_gpu(void)
{
    fake = fake_gpu_from_sim("fake-slow-gpu");
    fake.open = fake_open;
    fake.vaspace_create = fake_vaspace;
    fake.channel_create = fake_channel;
    fake.object_create = fake_object;
    fake.map = fake_map;
}

static uint64_t first_engine_to_lane_ns;
static int nsubmitted;

static void on_submitted(void *ctx, const vgt_replay_submitted *s)
{
    (void)ctx;
    if (nsubmitted++ == 0) first_engine_to_lane_ns = s->submit_ns - s->received_ns;
}

typedef struct run_out {
    vgt_replay_summary s;
    int calls_before_first[5];   /* opens, vaspaces, channels, objects, maps when the first submission came */
    uint64_t moves;
} run_out;

static void count_move(void *ctx, const vgt_replay_report *r)
{
    if (r->kind == VGT_RPT_RELOCATION && r->msg && strstr(r->msg, "backend's own range")) (*(uint64_t *)ctx)++;
}

/* The trace replayed on the fake: live, record by record as a live stream hands them to the engine; or
 * as a file (vgt_replay_run). reserved_va: the backend's range (0: the default). */
static void run(int live, uint64_t reserved_va, run_out *out)
{
    memset(out, 0, sizeof *out);
    memset(&calls, 0, sizeof calls);
    nsubmitted = 0;
    first_engine_to_lane_ns = 0;
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.check = 1;
    o.live = live;
    o.wait_demand = live;
    o.on_submitted = on_submitted;
    o.report = count_move;
    o.report_ctx = &out->moves;
    o.backend_cfg.reserved_va = reserved_va;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    CHECK_STATUS(vgt_replay_open(&rp, &o, &e), VGT_OK, &e, "vgt_replay_open");
    CHECK_STATUS(vgt_reader_open_path(&r, TRACE, NULL, &e), VGT_OK, &e, "open " TRACE);
    vgt_status rc = VGT_OK;
    if (live) {
        vgt_record rec;
        int submits = 0;
        while (rc == VGT_OK && (rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
            if (rec.type == VGT_REC_GPFIFO_SUBMIT && submits++ == 0) {
                int now[5] = {calls.opens, calls.vaspaces, calls.channels, calls.objects, calls.maps};
                memcpy(out->calls_before_first, now, sizeof now);
            }
            rc = vgt_replay_record(rp, &rec, &e);
        }
        if (rc == VGT_E_EOF) rc = VGT_OK;
    } else {
        rc = vgt_replay_run(rp, r, &e);
    }
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, &e);
    CHECK_STATUS(rc, VGT_OK, &e, "replay of " TRACE);
    out->s = *vgt_replay_summary_get(rp);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

static void same_results(const char *what, const vgt_replay_summary *a, const vgt_replay_summary *f)
{
    CHECK(a->submissions_replayed == f->submissions_replayed && a->submissions_replayed == 10178,
          "%s: %llu submissions replayed, the file %llu", what, (unsigned long long)a->submissions_replayed,
          (unsigned long long)f->submissions_replayed);
    CHECK(a->checks_passed == f->checks_passed && a->checks_failed == f->checks_failed &&
              a->checks_skipped == f->checks_skipped && a->checks_passed > 0,
          "%s: checks %llu passed, %llu failed, %llu skipped; the file %llu/%llu/%llu", what,
          (unsigned long long)a->checks_passed, (unsigned long long)a->checks_failed,
          (unsigned long long)a->checks_skipped, (unsigned long long)f->checks_passed,
          (unsigned long long)f->checks_failed, (unsigned long long)f->checks_skipped);
    CHECK(a->ctr.host_write_bytes == f->ctr.host_write_bytes, "%s: %llu bytes written by the host, the file %llu", what,
          (unsigned long long)a->ctr.host_write_bytes, (unsigned long long)f->ctr.host_write_bytes);
    CHECK(a->faults == f->faults && a->ctr.faults == f->ctr.faults && a->refused == f->refused && !a->blocked,
          "%s: faults %llu/%llu, refused %llu, blocked %d; the file %llu/%llu, %llu", what,
          (unsigned long long)a->faults, (unsigned long long)a->ctr.faults, (unsigned long long)a->refused, a->blocked,
          (unsigned long long)f->faults, (unsigned long long)f->ctr.faults, (unsigned long long)f->refused);
}

int main(void)
{
    use_fake_gpu();
    run_out file, live, moved;
    run(0, 0, &file);
    run(1, 0, &live);
    printf("live: before the first submission %d open, %d VA space, %d channels, %d objects, %d maps; its engine -> "
           "lane %.1f ms (opening the backend takes %d ms, each channel %d ms)\n", live.calls_before_first[0],
           live.calls_before_first[1], live.calls_before_first[2], live.calls_before_first[3],
           live.calls_before_first[4], first_engine_to_lane_ns / 1e6, SLOW_OPEN_MS, SLOW_CHANNEL_MS);
    CHECK(live.calls_before_first[0] == 1 && live.calls_before_first[1] == 1,
          "live: the backend and its VA space open before the first submission arrives (%d, %d)",
          live.calls_before_first[0], live.calls_before_first[1]);
    CHECK(live.calls_before_first[2] == (int)TRACE_CHANNELS && live.calls_before_first[3] > 0 &&
              live.calls_before_first[4] > 0,
          "live: the setup's channels (%d of %u), objects (%d) and mappings (%d) made as they arrived",
          live.calls_before_first[2], TRACE_CHANNELS, live.calls_before_first[3], live.calls_before_first[4]);
    CHECK(first_engine_to_lane_ns < SLOW_OPEN_MS * 1000000ull / 2,
          "live: the first submission's engine -> lane is %.1f ms, the backend's start (%d ms) is in it",
          first_engine_to_lane_ns / 1e6, SLOW_OPEN_MS);
    CHECK(live.s.live && !live.s.live_planned_records, "live: nothing held back (%llu records planned)",
          (unsigned long long)live.s.live_planned_records);
    same_results("live", &live.s, &file.s);
    CHECK(!live.moves && !file.moves, "nothing moves off the default range: live %llu, file %llu",
          (unsigned long long)live.moves, (unsigned long long)file.moves);

    /* the backend's range where the program maps its memory (CUDA's 0x200000000 region) */
    run(1, 0x200000000ull, &moved);
    CHECK(moved.moves > 0, "live: the mappings on the backend's range moved (%llu)", (unsigned long long)moved.moves);
    CHECK(moved.calls_before_first[0] == 1, "live, moved: the backend open before the first submission");
    same_results("live with the backend's range on the program's mappings", &moved.s, &file.s);
    return check_finish("test_replay_live_setup");
}
