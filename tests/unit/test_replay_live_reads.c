/* test_replay_live_reads.c: what a live replay reads back from the backend per submission.
 *
 * On the GPU every byte the engine reads through mem_read crosses the PCIe BAR (about 1.4 GB/s): 69 KB
 * per submission is about 50 us of the engine's time on each one, and in a live replay that is latency.
 * The replay runs corpus/many_launches.vgt (10,000 launches) live, with --check, lane auto, through a
 * fake hardware backend (sim's operations with the GPU's capabilities: asynchronous, no write log), so
 * that the engine takes the GPU's paths (the synth lane's work extractor subscribed, checks without a
 * write log, waits on demand), and sim's host-access counters say what the engine read:
 *  - lane auto runs every submission of many_launches verbatim (no segment was captured truncated), so
 *    nothing may read the launches' memory (programs, constant buffers, QMDs) to build a plan that is
 *    never run: at most READ_BUDGET bytes per submission on average, what `--lane verbatim` reads, with
 *    the same checks' results;
 *  - the checks read back only the bytes they compare (check.c gather_unlogged): a MEMORY record of
 *    push-buffer pages or of bytes the model already holds costs no read;
 *  - a submission with a truncated segment still gets its plan (the synth lane reads then): covered by
 *    `--lane synth`, which reads the launches' memory as before. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vgt/replay.h"
#include "vgt/trace.h"
#include "check.h"
#include "fake_gpu.h"

#define TRACE "corpus/many_launches.vgt"
static const char *trace_path = TRACE;   /* argv[2] in the profiling mode */
/* bytes read back per submission, on average, that a live replay of many_launches may cost: what its
 * checks compare (the MEMORY records of the module loads that differ from the model, the observed
 * records after the launches), 3 MB in all, 300 bytes per submission on average; most submissions read
 * nothing (READS_PER_SUBMISSION: at most one read per ten submissions) */
#define READ_BUDGET 512
#define READS_PER_SUBMISSION 0.1

static vgt_backend_ops fake;

static void use_fake_gpu(void) { fake = fake_gpu_from_sim(NULL); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

typedef struct run_result {
    vgt_replay_summary s;
    double cpu_us_per_submission;
    double decode_p50_us;          /* the engine's time from a submission's record to its lane (model_decode) */
} run_result;

static uint64_t *decode_ns;
static size_t ndecode, capdecode;

static void on_submitted(void *ctx, const vgt_replay_submitted *sub)
{
    (void)ctx;
    if (ndecode == capdecode) {
        size_t n = capdecode ? 2 * capdecode : 16384;
        uint64_t *d = realloc(decode_ns, n * sizeof *d);
        if (!d) return;
        decode_ns = d, capdecode = n;
    }
    decode_ns[ndecode++] = sub->submit_ns - sub->received_ns;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int run(const vgt_backend_ops *be, vgt_lane lane, run_result *out)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = be;
    o.check = 1;
    o.live = 1;
    o.wait_demand = 1;
    o.lane = lane;
    o.on_submitted = on_submitted;
    ndecode = 0;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    if (vgt_replay_open(&rp, &o, &e) != VGT_OK || vgt_reader_open_path(&r, trace_path, NULL, &e) != VGT_OK) {
        fprintf(stderr, "open: %s\n", e.msg);
        return -1;
    }
    double t0 = now_s();
    vgt_status rc = VGT_OK;
    if (trace_path == (const char *)TRACE) rc = vgt_replay_run(rp, r, &e);
    else {   /* any trace, record by record: a synthetic one too (its placeholder code runs on sim alone) */
        vgt_record rec;
        while (rc == VGT_OK && (rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) rc = vgt_replay_record(rp, &rec, &e);
        if (rc == VGT_E_EOF) rc = VGT_OK;
    }
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, &e);
    double t1 = now_s();
    CHECK_STATUS(rc, VGT_OK, &e, "live replay of %s", trace_path);
    out->s = *vgt_replay_summary_get(rp);
    qsort(decode_ns, ndecode, sizeof *decode_ns, cmp_u64);
    out->decode_p50_us = ndecode ? decode_ns[(ndecode - 1) / 2] / 1e3 : 0;
    out->cpu_us_per_submission = out->s.submissions_replayed ? (t1 - t0) * 1e6 / out->s.submissions_replayed : 0;
    vgt_reader_close(r);
    vgt_replay_close(rp);
    return 0;
}

/* argv[1] "auto", "verbatim" or "synth" [argv[2] a trace, default TRACE]: that replay alone, for a profiler
 * or a measure of the engine's cost per submission; nothing checked */
int main(int argc, char **argv)
{
    use_fake_gpu();
    run_result hw, verb, synth;
    if (argc > 1) {
        if (argc > 2) trace_path = argv[2];
        vgt_lane l = !strcmp(argv[1], "synth") ? VGT_LANE_SYNTH : !strcmp(argv[1], "verbatim") ? VGT_LANE_VERBATIM : VGT_LANE_AUTO;
        if (run(&fake, l, &hw)) return 1;
        printf("%s: %.1f bytes read back per submission, %.1f us per submission, model_decode p50 %.1f us\n",
               argv[1], (double)hw.s.ctr.host_read_bytes / (double)(hw.s.submissions_replayed ? hw.s.submissions_replayed : 1),
               hw.cpu_us_per_submission, hw.decode_p50_us);
        return 0;
    }
    if (run(&fake, VGT_LANE_AUTO, &hw) || run(&fake, VGT_LANE_VERBATIM, &verb) ||
        run(&fake, VGT_LANE_SYNTH, &synth))
        return 1;
    const vgt_replay_summary *s = &hw.s;
    double per = s->submissions_replayed ? (double)s->ctr.host_read_bytes / (double)s->submissions_replayed : 0;
    printf("live replay of %s as on the GPU (lane auto): %llu submissions, %llu bytes read back (%.1f per "
           "submission) in %llu reads; %.1f us per submission here, model_decode p50 %.1f us\n",
           TRACE, (unsigned long long)s->submissions_replayed, (unsigned long long)s->ctr.host_read_bytes, per,
           (unsigned long long)s->ctr.host_reads, hw.cpu_us_per_submission, hw.decode_p50_us);
    printf("  --lane verbatim: %.1f us per submission here, model_decode p50 %.1f us\n", verb.cpu_us_per_submission,
           verb.decode_p50_us);
    printf("  --lane synth: %.1f bytes per submission, %.1f us per submission here\n",
           (double)synth.s.ctr.host_read_bytes / (double)(synth.s.submissions_replayed ? synth.s.submissions_replayed : 1),
           synth.cpu_us_per_submission);
    CHECK(s->submissions_replayed == 10178, "every submission replayed: %llu", (unsigned long long)s->submissions_replayed);
    CHECK(s->lanes[VGT_LANE_VERBATIM] == s->submissions_replayed && s->lanes[VGT_LANE_SYNTH] == 0,
          "lane auto runs every submission verbatim: %llu verbatim, %llu synth",
          (unsigned long long)s->lanes[VGT_LANE_VERBATIM], (unsigned long long)s->lanes[VGT_LANE_SYNTH]);
    CHECK(per <= READ_BUDGET, "at most %d bytes read back per submission: %.1f (%llu bytes in %llu reads)", READ_BUDGET,
          per, (unsigned long long)s->ctr.host_read_bytes, (unsigned long long)s->ctr.host_reads);
    CHECK(s->ctr.host_reads <= READS_PER_SUBMISSION * s->submissions_replayed,
          "most submissions read nothing back: %llu reads for %llu submissions", (unsigned long long)s->ctr.host_reads,
          (unsigned long long)s->submissions_replayed);
    /* reading less leaves the checks as they were: those of the same replay with the synth lane out of it
     * (sim produces no kernel's output, so an observed record of one fails here; on the GPU it passes) */
    CHECK(s->checks_passed == verb.s.checks_passed && s->checks_failed == verb.s.checks_failed &&
              s->checks_skipped == verb.s.checks_skipped && s->observed_bytes_compared == verb.s.observed_bytes_compared &&
              s->observed_bytes_compared > 0,
          "checks as with --lane verbatim: %llu/%llu/%llu (passed, failed, not comparable; %llu observed bytes compared) "
          "against %llu/%llu/%llu (%llu)", (unsigned long long)s->checks_passed, (unsigned long long)s->checks_failed,
          (unsigned long long)s->checks_skipped, (unsigned long long)s->observed_bytes_compared,
          (unsigned long long)verb.s.checks_passed, (unsigned long long)verb.s.checks_failed,
          (unsigned long long)verb.s.checks_skipped, (unsigned long long)verb.s.observed_bytes_compared);
    CHECK_EQ_U64(s->ctr.host_read_bytes, verb.s.ctr.host_read_bytes, "lane auto reads what lane verbatim reads");
    /* the synth lane still builds its plans from the replay's memory */
    CHECK(synth.s.lanes[VGT_LANE_SYNTH] == synth.s.submissions_replayed && synth.s.synth_refused == 0,
          "--lane synth synthesizes every submission: %llu of %llu, %llu refused",
          (unsigned long long)synth.s.lanes[VGT_LANE_SYNTH], (unsigned long long)synth.s.submissions_replayed,
          (unsigned long long)synth.s.synth_refused);
    CHECK(synth.s.ctr.host_read_bytes > (uint64_t)READ_BUDGET * synth.s.submissions_replayed,
          "--lane synth reads the launches' memory: %llu bytes", (unsigned long long)synth.s.ctr.host_read_bytes);
    free(decode_ns);
    return check_finish("test_replay_live_reads");
}
