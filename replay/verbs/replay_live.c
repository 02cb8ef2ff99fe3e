/* replay_live.c: see replay_live.h. Latencies are differences of CLOCK_MONOTONIC times taken in two
 * processes of one machine (the capture's GPFIFO_SUBMIT timestamp, the engine's clock), so they mean
 * something only for a trace replayed while it is recorded on the same machine (`vgt record --replay`,
 * or a stream paced live into `vgt replay --live`); for an old file they are just large. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "replay_live.h"
#include "vgt/cli.h"
#include "vgt/grow.h"
#include "vgt/trace.h"

#define LIVE_MAX_SAMPLES (16u << 20)   /* per series; later submissions are written to FILE, not summarized */
#define LIVE_REDRAW_NS 100000000ull    /* the counters on a terminal: at most ten times a second */

int live_open(live_out *l, const char *latency_path, int tty)
{
    memset(l, 0, sizeof *l);
    l->tty = tty;
    if (!latency_path) return VGT_EXIT_OK;
    vgt_error err;
    if (vgt_outfile_open(&l->lat, latency_path, VGT_OUT_NO_STDOUT, &err) != VGT_OK ||
        !(l->lat_f = vgt_outfile_stdio(&l->lat, &err))) {
        if (l->lat.kind) vgt_outfile_discard(&l->lat);
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--latency: %s", err.msg);
    }
    fprintf(l->lat_f, "# submission\tseq\tchannel\tcapture_ts\treceived_ns\tsubmit_ns\tdoorbell_ns\tlatency_ns\tread_ns"
            "\twaited_ns\n");
    return VGT_EXIT_OK;
}

enum { S_TOTAL, S_TRANSPORT, S_ENGINE, S_PIPE, S_CHECKS, S_MODEL, S_LANE, S_WAITED, S_N };
_Static_assert(S_N <= sizeof ((live_out *)0)->series / sizeof ((live_out *)0)->series[0], "series");

static int keep(live_out *l, const int64_t *v)
{
    if (l->n == l->cap) {
        if (l->cap >= LIVE_MAX_SAMPLES) return -1;
        /* every series grows from the one shared capacity to the same new one; when one fails, those grown so
         * far keep their samples and the shared capacity stays */
        uint64_t nc = l->cap;
        for (int i = 0; i < S_N; i++) {
            nc = l->cap;
            if (vgt_grow(&l->series[i], &nc, l->n + 1, 4096)) return -1;
        }
        l->cap = nc;
    }
    for (int i = 0; i < S_N; i++) l->series[i][l->n] = v[i];
    l->n++;
    return 0;
}

/* The counters, one line per channel and a total, drawn over the previous ones. */
static void draw(live_out *l)
{
    uint32_t n;
    const vgt_replay_channel_count *c = vgt_replay_channels(l->rp, &n);
    if (!c) return;
    if (l->drawn_lines) fprintf(stderr, "\033[%uA", l->drawn_lines);
    vgt_replay_channel_count t = {0};
    for (uint32_t i = 0; i < n; i++) {
        fprintf(stderr, "\r\033[K  channel 0x%08x: %" PRIu64 " submissions, %" PRIu64 " launches, %" PRIu64 " draws, %" PRIu64
                " macro calls, %" PRIu64 " faults\n", c[i].handle, c[i].submissions, c[i].launches, c[i].draws,
                c[i].macro_calls, c[i].faults);
        t.submissions += c[i].submissions, t.launches += c[i].launches, t.draws += c[i].draws;
        t.macro_calls += c[i].macro_calls, t.faults += c[i].faults;
    }
    fprintf(stderr, "\r\033[Klive: %" PRIu64 " submissions, %" PRIu64 " launches, %" PRIu64 " draws, %" PRIu64
            " macro calls, %" PRIu64 " faults\n", t.submissions, t.launches, t.draws, t.macro_calls, t.faults);
    l->drawn_lines = n + 1;
    fflush(stderr);
}

void live_submitted(live_out *l, const vgt_replay_submitted *s)
{
    int64_t v[S_N];
    v[S_TOTAL] = (int64_t)(s->doorbell_ns - s->capture_ts);
    v[S_TRANSPORT] = (int64_t)(s->received_ns - s->capture_ts);
    v[S_ENGINE] = (int64_t)(s->doorbell_ns - s->received_ns);
    v[S_PIPE] = (int64_t)(s->read_ns - s->capture_ts);
    v[S_CHECKS] = (int64_t)(s->received_ns - s->read_ns);
    v[S_MODEL] = (int64_t)(s->submit_ns - s->received_ns);
    v[S_LANE] = (int64_t)(s->doorbell_ns - s->submit_ns);
    v[S_WAITED] = (int64_t)s->waited_ns;
    if (l->lat_f) {
        fprintf(l->lat_f, "%" PRId64 "\t%" PRIu64 "\t0x%x\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64
                "\t%" PRIu64 "\t%" PRIu64 "\n", s->submit_index, s->seq, s->channel, s->capture_ts, s->received_ns,
                s->submit_ns, s->doorbell_ns, v[S_TOTAL], s->read_ns, s->waited_ns);
        if (keep(l, v)) l->dropped++;
    }
    if (l->tty && l->rp && s->doorbell_ns - l->last_draw_ns >= LIVE_REDRAW_NS) {
        l->last_draw_ns = s->doorbell_ns;
        draw(l);
    }
}

int live_close(live_out *l)
{
    if (l->tty && l->rp) draw(l);
    if (!l->lat_f) return VGT_EXIT_OK;
    vgt_error err;
    l->lat_f = NULL;
    if (vgt_outfile_commit(&l->lat, &err) != VGT_OK) return vgt_cli_error("replay", VGT_EXIT_USAGE, "--latency: %s", err.msg);
    return VGT_EXIT_OK;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct pct3 {
    int64_t p50, p99, max;
} pct3;

/* Nearest-rank percentiles (sorts v). */
static pct3 percentiles(int64_t *v, uint64_t n)
{
    pct3 p = {0, 0, 0};
    if (!n) return p;
    qsort(v, n, sizeof *v, cmp64);
    p.p50 = v[(n * 50 + 99) / 100 - 1];   /* the ceil(n q / 100)-th smallest */
    p.p99 = v[(n * 99 + 99) / 100 - 1];
    p.max = v[n - 1];
    return p;
}

typedef struct lat_stats {
    pct3 s[S_N];
} lat_stats;

static lat_stats stats(const live_out *l)
{
    lat_stats st;
    for (int i = 0; i < S_N; i++) st.s[i] = percentiles(l->series[i], l->n);
    return st;
}

/* The stages a submission goes through, in order, for the breakdown (text and JSON). */
static const struct { int series; const char *key, *what; } stages[] = {
    {S_PIPE, "to_read", "capture -> read"},          /* the capture's write, pipes, relay, the queue before the reader */
    {S_CHECKS, "read_to_engine", "read -> engine"},  /* the reader's chunk checks */
    {S_MODEL, "engine_to_lane", "engine -> lane"},   /* model, decode, subscribers */
    {S_LANE, "lane_to_doorbell", "lane -> doorbell"},   /* segments written, backend submit */
    {S_WAITED, "waited", "GPU waits before"},        /* the engine waited for earlier work since the previous doorbell */
};
#define NSTAGES (sizeof stages / sizeof stages[0])

void live_print_text(const live_out *l, const vgt_replay_summary *s, FILE *f)
{
    if (s->live && s->live_planned_records)
        fprintf(f, "  live: planned over the %" PRIu64 " records before the first submission; the rest decided as it "
                "came\n", s->live_planned_records);
    else if (s->live)
        fprintf(f, "  live: every record replayed as it came (nothing held back to plan)\n");
    if (l->cap || l->lat_f || l->n) {
        lat_stats st = stats(l);
        fprintf(f, "  latency: %" PRIu64 " submissions%s; capture doorbell -> replayed doorbell p50 %.1f us, p99 %.1f us, "
                "max %.1f us (to the engine p50 %.1f, p99 %.1f; in the engine p50 %.1f, p99 %.1f)\n",
                l->n, l->dropped ? " (more in the file)" : "", st.s[S_TOTAL].p50 / 1e3, st.s[S_TOTAL].p99 / 1e3,
                st.s[S_TOTAL].max / 1e3, st.s[S_TRANSPORT].p50 / 1e3, st.s[S_TRANSPORT].p99 / 1e3,
                st.s[S_ENGINE].p50 / 1e3, st.s[S_ENGINE].p99 / 1e3);
        uint32_t dom = 0;
        for (uint32_t i = 0; i < NSTAGES; i++) {
            pct3 p = st.s[stages[i].series];
            fprintf(f, "    stage %-17s p50 %9.1f us, p99 %9.1f us, max %9.1f us\n", stages[i].what, p.p50 / 1e3,
                    p.p99 / 1e3, p.max / 1e3);
            if (p.p99 > st.s[stages[dom].series].p99) dom = i;
        }
        if (l->n) fprintf(f, "    dominant stage at p99: %s\n", stages[dom].what);
    }
    if (s->waits)
        fprintf(f, "  waits for the GPU: %" PRIu64 " (%.1f ms in all), %s\n", s->waits, s->wait_ns / 1e6,
                s->wait_demand ? "on demand" : "after each submission");
    if (s->wait_demand && s->waits)
        fprintf(f, "    on demand: %" PRIu64 " before checks, %" PRIu64 " before host writes, %" PRIu64 " for the census, "
                "%" PRIu64 " before push buffers in flight were written over, %" PRIu64 " where the program waited "
                "for the GPU\n", s->waits_for_check, s->waits_for_write, s->waits_for_census, s->waits_for_pb_reuse,
                s->waits_for_sync);
    if (!s->live) return;
    uint32_t n;
    const vgt_replay_channel_count *c = vgt_replay_channels(l->rp, &n);
    for (uint32_t i = 0; c && i < n; i++)
        fprintf(f, "  channel 0x%08x: %" PRIu64 " submissions, %" PRIu64 " launches, %" PRIu64 " draws, %" PRIu64
                " macro calls, %" PRIu64 " faults\n", c[i].handle, c[i].submissions, c[i].launches, c[i].draws,
                c[i].macro_calls, c[i].faults);
}

static void json_pct(FILE *f, const char *name, pct3 p)
{
    fprintf(f, "\"%s\":{\"p50_ns\":%" PRId64 ",\"p99_ns\":%" PRId64 ",\"max_ns\":%" PRId64 "}", name, p.p50, p.p99, p.max);
}

void live_print_json(const live_out *l, const vgt_replay_summary *s, FILE *f)
{
    if (l->cap || l->n) {
        lat_stats st = stats(l);
        fprintf(f, ",\"latency\":{\"submissions\":%" PRIu64 ",", l->n);
        json_pct(f, "total", st.s[S_TOTAL]);
        fputc(',', f);
        json_pct(f, "to_engine", st.s[S_TRANSPORT]);
        fputc(',', f);
        json_pct(f, "in_engine", st.s[S_ENGINE]);
        for (uint32_t i = 0; i < NSTAGES; i++) {
            fputc(',', f);
            json_pct(f, stages[i].key, st.s[stages[i].series]);
        }
        fputc('}', f);
    }
    fprintf(f, ",\"waits\":{\"count\":%" PRIu64 ",\"ns\":%" PRIu64 ",\"on_demand\":%s,\"for_check\":%" PRIu64
            ",\"for_write\":%" PRIu64 ",\"for_census\":%" PRIu64 ",\"for_pb_reuse\":%" PRIu64 ",\"for_sync\":%" PRIu64
            "}", s->waits, s->wait_ns, s->wait_demand ? "true" : "false", s->waits_for_check, s->waits_for_write,
            s->waits_for_census, s->waits_for_pb_reuse, s->waits_for_sync);
    if (!s->live) return;
    fprintf(f, ",\"live_planned_records\":%" PRIu64 ",\"channels\":[", s->live_planned_records);
    uint32_t n;
    const vgt_replay_channel_count *c = vgt_replay_channels(l->rp, &n);
    for (uint32_t i = 0; c && i < n; i++)
        fprintf(f, "%s{\"handle\":%u,\"submissions\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"draws\":%" PRIu64
                ",\"macro_calls\":%" PRIu64 ",\"faults\":%" PRIu64 "}", i ? "," : "", c[i].handle, c[i].submissions,
                c[i].launches, c[i].draws, c[i].macro_calls, c[i].faults);
    fputc(']', f);
}

void live_free(live_out *l)
{
    if (l->lat_f) vgt_outfile_discard(&l->lat);
    for (int i = 0; i < S_N; i++) free(l->series[i]);
}
