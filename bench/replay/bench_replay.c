/* bench_replay.c: replay throughput through the sim backend, beside a plain decode pass over the same
 * trace as the baseline, measured in the same run (bench/replay/run.sh prints the ratio).
 *
 *   bench_replay TRACE [--passes N]
 * prints, for each mode, one line "mode seconds submissions pushbuf_bytes":
 *   read    the reader alone (records read, nothing decoded)
 *   decode  reader + vgt_pb_decode_submit with an empty method callback (the baseline)
 *   bulk    the same with the bulk path for non-increasing runs too (what census and the sim use)
 *   replay  reader + trace model + sim backend (vgt_replay, no --check)
 *   check   the same with --check
 * Each mode runs N passes (default 3) and reports the fastest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/pushbuf.h"
#include "vgt/replay.h"
#include "vgt/trace.h"

typedef struct result {
    double seconds;
    uint64_t submissions, pushbuf_bytes, methods;
} result;

static int count_method(void *ctx, const vgt_method *m)
{
    (*(uint64_t *)ctx)++;
    return 0;
}

static int count_run(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    (void)m, (void)data;
    *(uint64_t *)ctx += count;
    return 0;
}

static int pass_read_or_decode(const char *path, int decode, int bulk, result *out, vgt_error *err)
{
    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, err) != VGT_OK) return -1;
    vgt_pb_state st[64];
    uint32_t chan_of[64], nchan = 0;
    vgt_segment *segs = malloc(4096 * sizeof *segs);
    vgt_pb_callbacks cb = {.method = count_method, .ctx = &out->methods, .noninc_run = bulk ? count_run : NULL};
    vgt_record rec;
    vgt_status rc;
    uint64_t t0 = vgt_now_ns();
    while ((rc = vgt_reader_next(r, &rec, err)) == VGT_OK) {
        if (rec.type != VGT_REC_GPFIFO_SUBMIT) continue;
        out->submissions++;
        if (!decode) continue;
        vgt_rec_gpfifo_submit s;
        if (vgt_decode_gpfifo_submit(&rec, &s, segs, 4096, err) != VGT_OK) break;
        for (uint32_t i = 0; i < s.segment_count; i++) out->pushbuf_bytes += s.segments[i].length;
        uint32_t k = 0;
        while (k < nchan && chan_of[k] != s.channel) k++;
        if (k == nchan && nchan < 64) vgt_pb_state_init(&st[nchan], 0xC86F), chan_of[nchan++] = s.channel;
        if (k < 64 && vgt_pb_decode_submit(&st[k], rec.seq, &s, &cb, err) != VGT_OK) break;
    }
    out->seconds = (double)(vgt_now_ns() - t0) / 1e9;
    free(segs);
    vgt_reader_close(r);
    return rc == VGT_E_EOF ? 0 : -1;
}

static void no_report(void *ctx, const vgt_replay_report *r) {}

static int pass_replay(const char *path, int check, result *out, vgt_error *err)
{
    vgt_reader *r;
    vgt_replay *rp;
    if (vgt_reader_open_path(&r, path, NULL, err) != VGT_OK) return -1;
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &vgt_backend_sim;
    o.check = check;
    o.report = no_report;
    uint64_t t0 = vgt_now_ns();
    int bad = vgt_replay_open(&rp, &o, err) != VGT_OK;
    if (!bad) {
        bad = vgt_replay_run(rp, r, err) != VGT_OK || vgt_replay_finish(rp, err) != VGT_OK;
        const vgt_replay_summary *s = vgt_replay_summary_get(rp);
        out->submissions = s->submissions_replayed;
        out->pushbuf_bytes = s->ctr.pushbuf_bytes;
        out->methods = s->ctr.methods;
        vgt_replay_close(rp);
    }
    out->seconds = (double)(vgt_now_ns() - t0) / 1e9;
    vgt_reader_close(r);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_replay TRACE [--passes N]\n");
        return 2;
    }
    int passes = argc > 3 && !strcmp(argv[2], "--passes") ? atoi(argv[3]) : 3;
    if (passes < 1) passes = 1;
    static const char *const modes[] = {"read", "decode", "bulk", "replay", "check"};
    for (int m = 0; m < 5; m++) {
        result best = {0};
        for (int p = 0; p < passes; p++) {
            result r = {0};
            vgt_error err;
            int rc = m < 3 ? pass_read_or_decode(argv[1], m >= 1, m == 2, &r, &err) : pass_replay(argv[1], m == 4, &r, &err);
            if (rc) {
                fprintf(stderr, "bench_replay %s: %s\n", modes[m], err.msg);
                return 1;
            }
            if (p == 0 || r.seconds < best.seconds) best = r;
        }
        printf("%s %.6f %llu %llu %llu\n", modes[m], best.seconds, (unsigned long long)best.submissions,
               (unsigned long long)best.pushbuf_bytes, (unsigned long long)best.methods);
        fflush(stdout);
    }
    return 0;
}
