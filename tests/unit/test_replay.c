/* test_replay.c: the replay engine on sim, over traces written with the writer API: state rebuilt from
 * records, a cross-channel acquire that blocks and resumes, checks that pass and fail per submission,
 * --submits, a fault that is reported while the replay goes on, an acquire nothing releases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/replay.h"
#include "vgt/trace.h"
#include "check.h"

#define CLIENT 0xC1u
#define PB_VA 0x100000ull
#define DATA_VA 0x200000ull

typedef struct tw {
    vgt_writer *w;
    uint64_t ts, pb_off;
    vgt_error err;
} tw;

static void ok(vgt_status rc, tw *t)
{
    if (rc != VGT_OK) {
        fprintf(stderr, "writer: %s\n", t->err.msg);
        exit(1);
    }
}

static void setup_objects(tw *t)
{
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 2};
    ok(vgt_write_mem_alloc(t->w, ++t->ts, &m, &t->err), t);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(t->w, ++t->ts, &g, &t->err), t);
    g.gpu_va = DATA_VA, g.offset = 0x100000;
    ok(vgt_write_gpu_map(t->w, ++t->ts, &g, &t->err), t);
    for (uint32_t h = 0xA0; h <= 0xA1; h++) {
        vgt_rec_channel c = {.client = CLIENT, .parent = 3, .handle = h, .cls = 0xC86F, .entries = 128};
        ok(vgt_write_channel(t->w, ++t->ts, &c, &t->err), t);
        vgt_rec_engine_object o = {.client = CLIENT, .channel = h, .handle = h + 0x100, .cls = 0xA140};
        ok(vgt_write_engine_object(t->w, ++t->ts, &o, &t->err), t);
    }
}

/* One submission of host semaphore operations {va, payload, SEM_EXECUTE} on channel ch. */
static void submit_sems(tw *t, uint32_t ch, const uint64_t (*ops)[3], uint32_t n)
{
    uint32_t pb[64], k = 0;
    for (uint32_t i = 0; i < n; i++) {
        pb[k++] = 1u << 29 | 5u << 16 | 0x5c >> 2;   /* INC header: SEM_ADDR_LO .. SEM_EXECUTE */
        pb[k++] = (uint32_t)ops[i][0];
        pb[k++] = (uint32_t)(ops[i][0] >> 32);
        pb[k++] = (uint32_t)ops[i][1];
        pb[k++] = (uint32_t)(ops[i][1] >> 32);
        pb[k++] = (uint32_t)ops[i][2];
    }
    uint64_t va = PB_VA + t->pb_off;
    t->pb_off += 4096;
    uint8_t entry[8];
    uint64_t e = (uint64_t)(((uint32_t)(va >> 32) & 0xFF) | k << 10) << 32 | ((uint32_t)va & ~3u);
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(e >> (8 * i));
    vgt_segment seg = {.gpu_va = va, .length = 4 * k, .data = (const uint8_t *)pb};
    vgt_rec_gpfifo_submit s = {.client = CLIENT, .channel = ch, .entry_count = 1, .segment_count = 1, .entries = entry,
                               .segments = &seg, .gp_get_after = VGT_GP_NOT_READ, .gp_put_after = 1};
    ok(vgt_write_gpfifo_submit(t->w, ++t->ts, &s, &t->err), t);
}

static void memory(tw *t, uint64_t va, uint32_t value, uint32_t reason)
{
    vgt_rec_memory m = {.gpu_va = va, .length = 4, .reason = reason, .memory = 0x10, .data = (const uint8_t *)&value};
    ok(vgt_write_memory(t->w, ++t->ts, &m, &t->err), t);
}

static void semaphore(tw *t, uint64_t va, uint64_t value)
{
    vgt_rec_semaphore s = {.gpu_va = va, .value = value, .size = 4};
    ok(vgt_write_semaphore(t->w, ++t->ts, &s, &t->err), t);
}

/* The main scenario; bad_observed makes the observed record after submission 1 wrong. */
static void write_trace(const char *path, int bad_observed)
{
    tw t = {0};
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id[] = {{"producer", "test_replay"}};
    ok(vgt_writer_open_path(&t.w, path, &o, id, 1, &t.err), &t);
    setup_objects(&t);
    memory(&t, DATA_VA, 0, VGT_MEM_INITIAL);
    const uint64_t s0[2][3] = {{DATA_VA, 1, 0 /* ACQUIRE == 1 */}, {DATA_VA + 0x10, 7, 1 /* RELEASE */}};
    submit_sems(&t, 0xA0, s0, 2);                          /* 0: channel A blocks */
    const uint64_t s1[1][3] = {{DATA_VA, 1, 1}};
    submit_sems(&t, 0xA1, s1, 1);                          /* 1: channel B releases; A resumes */
    semaphore(&t, DATA_VA + 0x10, 7);                      /* checks after submission 1 */
    memory(&t, DATA_VA + 0x10, bad_observed ? 8 : 7, VGT_MEM_OBSERVED);
    memory(&t, DATA_VA, 1, VGT_MEM_CHANGED);               /* written by submission 1: checked */
    memory(&t, DATA_VA + 0x40, 5, VGT_MEM_OBSERVED);       /* never produced by sim: not comparable */
    const uint64_t s2[2][3] = {{0x7000000000ull, 1, 1}, {DATA_VA + 0x20, 3, 1}};
    submit_sems(&t, 0xA0, s2, 2);                          /* 2: faults, then goes on */
    memory(&t, DATA_VA + 0x20, 3, VGT_MEM_OBSERVED);
    ok(vgt_writer_close(t.w, &t.err), &t);
}

typedef struct seen {
    int mismatches, faults, submit_lines;
    int64_t mismatch_submit;
    char last[VGT_ERROR_MSG_MAX];
} seen;

static void on_report(void *ctx, const vgt_replay_report *r)
{
    seen *s = ctx;
    if (r->kind == VGT_RPT_MISMATCH) s->mismatches++, s->mismatch_submit = r->submit_index;
    if (r->kind == VGT_RPT_EVENT && r->event_kind == VGT_BEV_FAULT) s->faults++;
    if (r->kind == VGT_RPT_SUBMIT_CHECKS) s->submit_lines++;
    snprintf(s->last, sizeof s->last, "%s", r->msg ? r->msg : "");
}

static vgt_status replay(const char *path, vgt_range submits, int prefix_state_only, seen *s, vgt_replay_summary *out,
                         vgt_error *err)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &vgt_backend_sim;
    o.check = 1;
    o.submits = submits;
    o.prefix_state_only = prefix_state_only;
    o.report = on_report;
    o.report_ctx = s;
    vgt_reader *r = NULL;
    vgt_replay *rp = NULL;
    vgt_status rc = vgt_reader_open_path(&r, path, NULL, err);
    if (rc == VGT_OK) rc = vgt_replay_open(&rp, &o, err);
    if (rc == VGT_OK) rc = vgt_replay_run(rp, r, err);
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, err);
    if (rp) *out = *vgt_replay_summary_get(rp);
    vgt_replay_close(rp);
    vgt_reader_close(r);
    return rc;
}

static void test_scenario(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/good.vgt", dir);
    write_trace(path, 0);
    seen s = {0};
    vgt_replay_summary sum;
    vgt_error err;
    vgt_status rc = replay(path, (vgt_range){0, UINT64_MAX}, 0, &s, &sum, &err);
    CHECK(rc == VGT_OK, "%s", err.msg);
    CHECK(sum.submissions == 3 && sum.submissions_replayed == 3, "%llu/%llu", (unsigned long long)sum.submissions,
          (unsigned long long)sum.submissions_replayed);
    /* SEMAPHORE, observed 7, changed (in the write log), observed after submission 2 */
    CHECK(sum.checks_passed == 4 && sum.checks_failed == 0, "passed %llu failed %llu (%s)",
          (unsigned long long)sum.checks_passed, (unsigned long long)sum.checks_failed, s.last);
    CHECK(sum.checks_skipped == 1, "not comparable %llu", (unsigned long long)sum.checks_skipped);
    CHECK(sum.ctr.blocked_waits == 1 && sum.ctr.sem_acquires == 1, "blocked %llu acquires %llu",
          (unsigned long long)sum.ctr.blocked_waits, (unsigned long long)sum.ctr.sem_acquires);
    CHECK(s.faults == 1 && sum.faults == 1, "faults %d/%llu", s.faults, (unsigned long long)sum.faults);
    CHECK(vgt_replay_summary_failed(&sum), "a fault must fail the replay");
    CHECK(s.submit_lines == 2, "per-submission check lines %d", s.submit_lines);
    /* coverage: the SEMAPHORE and three MEMORY observed records are observed (4 bytes each); the one at
     * +0x40 sim never produces; the changed record's 4 bytes are compared but not observed bytes */
    CHECK(sum.observed_bytes == 16 && sum.observed_bytes_compared == 12 && sum.bytes_compared == 16,
          "observed %llu, compared %llu of them, %llu in all", (unsigned long long)sum.observed_bytes,
          (unsigned long long)sum.observed_bytes_compared, (unsigned long long)sum.bytes_compared);

    snprintf(path, sizeof path, "%s/bad.vgt", dir);
    write_trace(path, 1);
    memset(&s, 0, sizeof s);
    rc = replay(path, (vgt_range){0, UINT64_MAX}, 0, &s, &sum, &err);
    CHECK(rc == VGT_OK, "%s", err.msg);
    CHECK(sum.checks_failed == 1 && s.mismatches == 1 && s.mismatch_submit == 1, "failed %llu at %lld",
          (unsigned long long)sum.checks_failed, (long long)s.mismatch_submit);

    /* only submission 1, with submission 0 run unchecked before it (the default prefix): A blocked in
     * the prefix, B's release resumes it inside the window, and the wrong observed value is caught */
    memset(&s, 0, sizeof s);
    rc = replay(path, (vgt_range){1, 1}, 0, &s, &sum, &err);
    CHECK(rc == VGT_OK, "%s", err.msg);
    CHECK(sum.submissions_replayed == 1 && sum.submissions_prefix == 1 && sum.checks_failed == 1,
          "replayed %llu prefix %llu failed %llu", (unsigned long long)sum.submissions_replayed,
          (unsigned long long)sum.submissions_prefix, (unsigned long long)sum.checks_failed);
    /* the SEMAPHORE and the wrong observed value are compared (a failed check covers its bytes too) */
    CHECK(sum.observed_bytes == 12 && sum.observed_bytes_compared == 8, "run prefix: observed %llu compared %llu",
          (unsigned long long)sum.observed_bytes, (unsigned long long)sum.observed_bytes_compared);
    /* the same with a state-only prefix: A's acquire never ran, so nothing writes +0x10 and the
     * observed record there is not comparable; nothing faults */
    memset(&s, 0, sizeof s);
    rc = replay(path, (vgt_range){1, 1}, 1, &s, &sum, &err);
    CHECK(rc == VGT_OK, "%s", err.msg);
    CHECK(sum.submissions_replayed == 1 && sum.ctr.faults == 0 && sum.checks_failed == 0, "replayed %llu faults %llu",
          (unsigned long long)sum.submissions_replayed, (unsigned long long)sum.ctr.faults);
    /* reading stops after submission 1: only the three records after it count; none is produced */
    CHECK(sum.observed_bytes == 12 && sum.observed_bytes_compared == 0, "window: observed %llu compared %llu",
          (unsigned long long)sum.observed_bytes, (unsigned long long)sum.observed_bytes_compared);
}

/* --min-coverage values and the exact comparison the corpus floors rely on. */
static void test_coverage(void)
{
    vgt_coverage_min m;
    static const struct {
        const char *s;
        uint64_t num, den;
        int fraction;
    } good[] = {{"50", 50, 100, 0},       {"50%", 50, 100, 0},   {"0", 0, 100, 0},         {"100", 100, 100, 0},
                {"0.5", 5, 1000, 0},      {"100.0%", 1000, 1000, 0}, {"12/2179072", 12, 2179072, 1}, {"0/1", 0, 1, 1},
                {"007.25", 725, 10000, 0}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CHECK(vgt_coverage_parse(good[i].s, &m) == 0 && m.num == good[i].num && m.den == good[i].den &&
                  m.fraction == good[i].fraction && !strcmp(m.text, good[i].s),
              "parse '%s': %llu/%llu", good[i].s, (unsigned long long)m.num, (unsigned long long)m.den);
    }
    static const char *const bad[] = {"", "-1", "+5", "101", "100.01", "1000", "abc", "5.", ".5", "5%%", "%", "1/0",
                                      "3/2", "1/", "/1", "1//2", "0x10", "1e2", " 5", "5 ", "nan", "0.12345678901234567",
                                      "99999999999999999999/99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(vgt_coverage_parse(bad[i], &m) == -1, "'%s' must be refused", bad[i]);

    /* exact: the fraction reached meets itself, one byte less does not; big counts do not overflow */
    CHECK(!vgt_coverage_parse("12/2179072", &m) && vgt_coverage_met(12, 2179072, &m) && !vgt_coverage_met(11, 2179072, &m),
          "fraction floor");
    CHECK(!vgt_coverage_parse("50", &m) && vgt_coverage_met(1, 2, &m) && !vgt_coverage_met(UINT64_MAX / 2 - 1, UINT64_MAX - 1, &m) &&
              vgt_coverage_met(UINT64_MAX / 2, UINT64_MAX - 1, &m),
          "50%% at 64-bit counts");
    CHECK(!vgt_coverage_parse("0", &m) && vgt_coverage_met(0, 0, &m), "a zero minimum is met by nothing observed");
    CHECK(!vgt_coverage_parse("0.0001", &m) && !vgt_coverage_met(0, 0, &m), "nothing observed meets no positive minimum");

    static const struct {
        uint64_t c, o;
        const char *want;
    } pct[] = {{12, 2179072, "0.00055"}, {1, 2, "50"},   {1, 3, "33.33"},       {2, 3, "66.66"}, {0, 5, "0"},
               {5, 5, "100"},            {0, 0, "-"},     {999999, 1000000, "99.99"}, {1, 1000000000000000ull, "<0.000000000001"},
               {UINT64_MAX - 1, UINT64_MAX, "99.99"}, {3, 8, "37.5"}};
    char buf[48];
    for (size_t i = 0; i < sizeof pct / sizeof pct[0]; i++) {
        vgt_coverage_pct(pct[i].c, pct[i].o, buf, sizeof buf);
        CHECK(!strcmp(buf, pct[i].want), "pct %llu/%llu: '%s', want '%s'", (unsigned long long)pct[i].c,
              (unsigned long long)pct[i].o, buf, pct[i].want);
    }
}

/* An acquire that nothing ever releases: finish reports it, it does not hang. */
static void test_never_released(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/stuck.vgt", dir);
    tw t = {0};
    vgt_writer_options o = vgt_writer_defaults();
    ok(vgt_writer_open_path(&t.w, path, &o, NULL, 0, &t.err), &t);
    setup_objects(&t);
    const uint64_t s0[1][3] = {{DATA_VA + 8, 0x99, 2 /* ACQ_STRICT_GEQ */}};
    submit_sems(&t, 0xA1, s0, 1);
    ok(vgt_writer_close(t.w, &t.err), &t);
    seen s = {0};
    vgt_replay_summary sum;
    vgt_error err;
    vgt_status rc = replay(path, (vgt_range){0, UINT64_MAX}, 0, &s, &sum, &err);
    CHECK(rc == VGT_E_TIMEOUT, "status %d", rc);
    CHECK(strstr(err.msg, "can never be satisfied in sim") && strstr(err.msg, "ACQ_STRICT_GEQ") &&
              strstr(err.msg, "0x200008"),
          "message: %s", err.msg);
    CHECK(sum.blocked && vgt_replay_summary_failed(&sum), "blocked not in the summary");
}

/* A MEMORY changed record after a submission is a snapshot taken at the next doorbell: a byte still
 * holding its previous value was not yet written when captured (neither pass nor fail); any other
 * value differing from the replay is a mismatch. */
static void test_changed_record_lag(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/lag.vgt", dir);
    for (int wrong = 0; wrong < 2; wrong++) {
        tw t = {0};
        vgt_writer_options o = vgt_writer_defaults();
        ok(vgt_writer_open_path(&t.w, path, &o, NULL, 0, &t.err), &t);
        setup_objects(&t);
        memory(&t, DATA_VA + 0x30, 0x44, VGT_MEM_INITIAL);
        const uint64_t s0[1][3] = {{DATA_VA + 0x30, 9, 1}};
        submit_sems(&t, 0xA0, s0, 1);
        memory(&t, DATA_VA + 0x30, wrong ? 5 : 0x44, VGT_MEM_CHANGED);   /* 0x44: still the old value */
        ok(vgt_writer_close(t.w, &t.err), &t);
        seen s = {0};
        vgt_replay_summary sum;
        vgt_error err;
        CHECK_STATUS(replay(path, (vgt_range){0, UINT64_MAX}, 0, &s, &sum, &err), VGT_OK, &err, "replay");
        if (wrong) CHECK(sum.checks_failed == 1 && s.mismatches == 1, "wrong value: failed %llu", (unsigned long long)sum.checks_failed);
        else CHECK(sum.checks_failed == 0 && sum.checks_passed == 0, "lag: passed %llu failed %llu",
                   (unsigned long long)sum.checks_passed, (unsigned long long)sum.checks_failed);
    }
}

static void test_lanes(void)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &vgt_backend_sim;
    o.lane = VGT_LANE_SYNTH;
    vgt_replay *rp;
    vgt_error err;
    CHECK_STATUS(vgt_replay_open(&rp, &o, &err), VGT_OK, &err, "the synth lane opens on sim");
    if (rp) {
        const vgt_replay_summary *s = vgt_replay_summary_get(rp);
        CHECK(!strcmp(s->lane, "synth"), "lane %s", s->lane);
        vgt_replay_close(rp);
    }
    o.lane = VGT_LANE_CUDA;
    CHECK(vgt_replay_open(&rp, &o, &err) == VGT_E_UNSUPPORTED && strstr(err.msg, "lane cuda is not implemented by backend sim"),
          "%s", err.msg);
    CHECK(vgt_lane_from_name("verbatim") == VGT_LANE_VERBATIM && vgt_lane_from_name("x") == -1, "lane names");
}

/* The synth lane's channels: a CUDA context opens 20 channels (12 copy-only, 8 compute and copy). The H200
 * backend holds 32 live channels and realizes the captured ones before the first submission; a channel of
 * the lane's own per captured channel (13 for vadd) ran out there, and the compute channel's launches never
 * ran. Synthesized work runs on its captured channel's backend channel: the sim gets exactly the captured
 * channels. */
static void test_synth_channels(void)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &vgt_backend_sim;
    o.lane = VGT_LANE_SYNTH;
    o.check = 1;
    o.backend_cfg.max_channels = 20;
    seen s = {0};
    o.report = on_report;
    o.report_ctx = &s;
    vgt_reader *r = NULL;
    vgt_replay *rp = NULL;
    vgt_error err;
    vgt_status rc = vgt_reader_open_path(&r, "corpus/vadd.vgt", NULL, &err);
    if (rc == VGT_OK) rc = vgt_replay_open(&rp, &o, &err);
    if (rc == VGT_OK) rc = vgt_replay_run(rp, r, &err);
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, &err);
    CHECK(rc == VGT_OK, "%s", err.msg);
    if (rp) {
        const vgt_replay_summary *sum = vgt_replay_summary_get(rp);
        CHECK(sum->warnings == 0 && sum->faults == 0, "warnings %llu faults %llu (%s)", (unsigned long long)sum->warnings,
              (unsigned long long)sum->faults, s.last);
        CHECK(sum->lanes[VGT_LANE_SYNTH] == 190 && sum->synth_refused == 0, "synth %llu refused %llu",
              (unsigned long long)sum->lanes[VGT_LANE_SYNTH], (unsigned long long)sum->synth_refused);
        CHECK(sum->ctr.launches == 2 && sum->ctr.copies == 103, "launches %llu copies %llu run",
              (unsigned long long)sum->ctr.launches, (unsigned long long)sum->ctr.copies);
    }
    vgt_replay_close(rp);
    vgt_reader_close(r);
}

int main(void)
{
    char dir[] = "/tmp/test_replay_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    test_lanes();
    test_synth_channels();
    test_coverage();
    test_scenario(dir);
    test_never_released(dir);
    test_changed_record_lag(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) {}
    return check_finish("test_replay");
}
