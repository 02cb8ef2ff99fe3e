/* test_sked_guard.c: the SKED local-memory guard (replay/src/sked_guard.c).
 *
 * 1. The rule on hand-built QMD/context pairs: CUDA's sizing on the H200 (1600 bytes per thread, 0x640000
 *    bytes per TPC) is accepted at the boundary, one byte more per thread is refused, and a launch that
 *    needs local memory on a context with no base or no size is refused.
 * 2. streams_threads, multi_kernel and cuda_graph through --lane synth on a fake hardware backend (the
 *    simulator, asynchronous, so the guards are on): no submission refused. Before the synth lane carried
 *    the captured local-memory methods (CUDA sets them once, on one channel of the group, in a submission
 *    with no launch), the first launch on another channel of the group was refused here, as the H200
 *    raised Xid 13 SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE for it. The verbatim lane is checked the same way. */
#include <stdio.h>
#include <string.h>

#include "../../replay/src/engine.h"
#include "check.h"
#include "fake_gpu.h"
#include "vgt/replay.h"
#include "vgt/trace.h"

static vgt_backend_ops fake;
static void rule(void)
{
    char why[400];
    CHECK(!sked_guard_violates(0, 0, 0, 0, why, sizeof why), "no local memory needed: accepted without any");
    CHECK(!sked_guard_violates(0, 1600, 0x7fd44a000000ull, 0x640000, why, sizeof why), "1600 B/thread in 0x640000/TPC");
    CHECK(!sked_guard_violates(1000, 600, 0x7fd44a000000ull, 0x640000, why, sizeof why), "LOW + HIGH at the boundary");
    CHECK(sked_guard_violates(0, 1601, 0x7fd44a000000ull, 0x640000, why, sizeof why), "1601 B/thread refused");
    CHECK(strstr(why, "HIGH_SIZE 1601") && strstr(why, "0x640000"), "names the QMD fields and the context: %s", why);
    CHECK(sked_guard_violates(0, 1600, 0, 0x640000, why, sizeof why) && strstr(why, "no local memory base"),
          "no base: refused (%s)", why);
    CHECK(sked_guard_violates(16, 0, 0x7fd44a000000ull, 0, why, sizeof why) && strstr(why, "no local memory size"),
          "no size: refused (%s)", why);
}

static void replay(const char *trace, vgt_lane lane)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.check = 1;
    o.lane = lane;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    if (vgt_replay_open(&rp, &o, &e) != VGT_OK || vgt_reader_open_path(&r, trace, NULL, &e) != VGT_OK) {
        CHECK(0, "open %s: %s", trace, e.msg);
        return;
    }
    vgt_status rc = vgt_replay_run(rp, r, &e);
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, &e);
    CHECK_STATUS(rc, VGT_OK, &e, "replay of %s", trace);
    const vgt_replay_summary *s = vgt_replay_summary_get(rp);
    CHECK(s->refused == 0 && s->synth_refused == 0, "%s, lane %s: %llu submissions refused (%llu synth)", trace,
          lane == VGT_LANE_SYNTH ? "synth" : "verbatim", (unsigned long long)s->refused,
          (unsigned long long)s->synth_refused);
    CHECK(lane != VGT_LANE_SYNTH || s->lanes[VGT_LANE_SYNTH] > 0, "%s: synthesized submissions ran", trace);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

int main(void)
{
    fake = fake_gpu_from_sim(NULL);
    rule();
    static const char *const traces[] = {"corpus/streams_threads.vgt", "corpus/multi_kernel.vgt", "corpus/cuda_graph.vgt"};
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        replay(traces[i], VGT_LANE_SYNTH);
        replay(traces[i], VGT_LANE_VERBATIM);
    }
    return check_finish("test_sked_guard");
}
