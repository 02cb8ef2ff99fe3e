/* bench_decode.c: push-buffer decode-to-census throughput on one core, against a plain pass over the
 * same bytes (summing their dwords) in the same run. Driven by bench/decode/run.sh.
 *
 *   bench_decode TRACE [--repeat N] [--pass both|census|ceiling] [--per-method]
 *
 * Loads every GPFIFO_SUBMIT record of TRACE into memory first (so the timed passes see no I/O and no
 * decompression), and the channel classes from CHANNEL records. Then, N times each, best time kept:
 *   ceiling: sum every push-buffer dword of every segment;
 *   census:  vgt_pb_decode_submit on every submission (one decoder state per channel) with per-class
 *            method counts and a semantic tracker per channel counting events (what `vgt census` does,
 *            without the trace reader and model): non-increasing runs in bulk (noninc_run ->
 *            vgt_sem_noninc_run), or with --per-method one `method` call per dword.
 * Prints one line: bytes=... ceiling_s=... census_s=... ceiling_gbps=... census_gbps=... census_cpu_s=...
 * census_cpu_gbps=... ratio=... methods=... events=... launches=... (GB = 10^9 bytes of push buffer; _cpu
 * figures use this thread's CPU time, which other load on a shared machine disturbs less than wall time). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vgt/events.h"
#include "vgt/pushbuf.h"
#include "vgt/trace.h"

#define MAX_CHANNELS 256u
#define MAX_SEGS 4096u

typedef struct sub_rec { vgt_record rec; uint8_t *payload; } sub_rec;

typedef struct chan {
    uint32_t client, handle, cls;
    vgt_pb_state pb;
    vgt_sem_tracker *sem;
} chan;

typedef struct bench {
    sub_rec *subs;
    uint64_t nsubs, cap;
    chan ch[MAX_CHANNELS];
    uint32_t nch;
    uint64_t pb_bytes;
    /* census counters */
    uint64_t methods, events[VGT_EV_KIND_COUNT_];
    uint32_t cls_seen[64];
    uint64_t per_class[64];
    uint32_t nclass, last;
    vgt_sem_tracker *cur;
    int per_method;           /* --per-method: every dword through `method` (the path before bulk runs) */
} bench;

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of this thread: on a shared machine, less disturbed by other load than wall time. */
static double cpu(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

static void die(const char *what, const vgt_error *err)
{
    fprintf(stderr, "bench_decode: %s: %s\n", what, err ? err->msg : "failed");
    exit(2);
}

static chan *channel(bench *b, uint32_t client, uint32_t handle)
{
    for (uint32_t i = 0; i < b->nch; i++)
        if (b->ch[i].client == client && b->ch[i].handle == handle) return &b->ch[i];
    if (b->nch == MAX_CHANNELS) die("too many channels", NULL);
    chan *c = &b->ch[b->nch++];
    c->client = client;
    c->handle = handle;
    return c;
}

static void load(bench *b, const char *path)
{
    vgt_reader *r;
    vgt_error err;
    vgt_record rec;
    vgt_status rc;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) die(path, &err);
    while ((rc = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        if (rec.type == VGT_REC_CHANNEL) {
            vgt_rec_channel c;
            if (vgt_decode_channel(&rec, &c, &err) != VGT_OK) die("channel record", &err);
            channel(b, c.client, c.handle)->cls = c.cls;
        }
        if (rec.type != VGT_REC_GPFIFO_SUBMIT) continue;
        if (b->nsubs == b->cap) {
            b->cap = b->cap ? 2 * b->cap : 1024;
            b->subs = realloc(b->subs, b->cap * sizeof *b->subs);
            if (!b->subs) die("out of memory", NULL);
        }
        sub_rec *s = &b->subs[b->nsubs++];
        s->rec = rec;
        s->payload = malloc(rec.length ? rec.length : 1);
        if (!s->payload) die("out of memory", NULL);
        memcpy(s->payload, rec.payload, rec.length);
        s->rec.payload = s->payload;
    }
    if (rc != VGT_E_EOF) die("reading", &err);
    vgt_reader_close(r);
}

static uint64_t ceiling_pass(bench *b)
{
    static vgt_segment seg[MAX_SEGS];
    uint64_t sum = 0, bytes = 0;
    vgt_error err;
    for (uint64_t i = 0; i < b->nsubs; i++) {
        vgt_rec_gpfifo_submit g;
        if (vgt_decode_gpfifo_submit(&b->subs[i].rec, &g, seg, MAX_SEGS, &err) != VGT_OK) die("submit", &err);
        for (uint32_t k = 0; k < g.segment_count; k++) {
            const uint8_t *p = seg[k].data;
            uint32_t n = seg[k].length / 4;
            for (uint32_t d = 0; d < n; d++) {
                uint32_t v;
                memcpy(&v, p + 4 * d, 4);
                sum += v;
            }
            bytes += seg[k].length;
        }
    }
    b->pb_bytes = bytes;
    return sum;
}

static void on_event(void *ctx, const vgt_event *ev)
{
    ((bench *)ctx)->events[ev->kind]++;
}

static int on_method(void *ctx, const vgt_method *m)
{
    bench *b = ctx;
    b->methods++;
    if (b->nclass && b->cls_seen[b->last] == m->cls) b->per_class[b->last]++;
    else {
        uint32_t i = 0;
        while (i < b->nclass && b->cls_seen[i] != m->cls) i++;
        if (i == b->nclass && b->nclass < 64) { b->cls_seen[i] = m->cls; b->per_class[i] = 0; b->nclass++; }
        if (i < b->nclass) { b->per_class[i]++; b->last = i; }
    }
    vgt_error err;
    if (vgt_sem_method(b->cur, m, &err) != VGT_OK) die("semantic tracker", &err);
    return 0;
}

/* Non-increasing runs in one call, as `vgt census` takes them (walk.h on_noninc_run). */
static int on_run(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    bench *b = ctx;
    b->methods += count;
    if (b->nclass && b->cls_seen[b->last] == m->cls) b->per_class[b->last] += count;
    else {
        uint32_t i = 0;
        while (i < b->nclass && b->cls_seen[i] != m->cls) i++;
        if (i == b->nclass && b->nclass < 64) { b->cls_seen[i] = m->cls; b->per_class[i] = 0; b->nclass++; }
        if (i < b->nclass) { b->per_class[i] += count; b->last = i; }
    }
    vgt_error err;
    if (vgt_sem_noninc_run(b->cur, m, data, count, 0, &err) != VGT_OK) die("semantic tracker", &err);
    return 0;
}

static void census_pass(bench *b)
{
    static vgt_segment seg[MAX_SEGS];
    vgt_error err;
    b->methods = 0;
    memset(b->events, 0, sizeof b->events);
    b->nclass = 0;
    for (uint32_t i = 0; i < b->nch; i++) {
        vgt_pb_state_init(&b->ch[i].pb, b->ch[i].cls);
        vgt_sem_free(b->ch[i].sem);
        vgt_sem_config cfg = { .on_event = on_event, .ctx = b };
        if (vgt_sem_new(&b->ch[i].sem, &cfg, &err) != VGT_OK) die("tracker", &err);
    }
    vgt_pb_callbacks cb = { .method = on_method, .ctx = b, .noninc_run = b->per_method ? NULL : on_run };
    for (uint64_t i = 0; i < b->nsubs; i++) {
        vgt_rec_gpfifo_submit g;
        if (vgt_decode_gpfifo_submit(&b->subs[i].rec, &g, seg, MAX_SEGS, &err) != VGT_OK) die("submit", &err);
        chan *c = channel(b, g.client, g.channel);
        if (!c->sem) {   /* a channel without a CHANNEL record */
            vgt_pb_state_init(&c->pb, c->cls);
            vgt_sem_config cfg = { .on_event = on_event, .ctx = b };
            if (vgt_sem_new(&c->sem, &cfg, &err) != VGT_OK) die("tracker", &err);
        }
        b->cur = c->sem;
        if (vgt_pb_decode_submit(&c->pb, b->subs[i].rec.seq, &g, &cb, &err) != VGT_OK) die("decode", &err);
        vgt_sem_flush(c->sem);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: bench_decode TRACE [--repeat N] [--pass both|census|ceiling] [--per-method]\n"); return 2; }
    int repeat = 3, do_ceiling = 1, do_census = 1;   /* --pass: one pass only, for profilers */
    static bench b;
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--per-method")) {
            b.per_method = 1;
            memmove(&argv[i], &argv[i + 1], (size_t)(argc - i - 1) * sizeof *argv);
            argc--;
            break;
        }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--repeat")) repeat = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (!strcmp(argv[i], "--pass")) {
            do_ceiling = strcmp(argv[i + 1], "census") != 0;
            do_census = strcmp(argv[i + 1], "ceiling") != 0;
        }
    }
    load(&b, argv[1]);
    double best_ceiling = 1e30, best_census = 1e30, best_census_cpu = 1e30;
    volatile uint64_t sink = 0;
    for (int k = 0; k < repeat; k++) {
        double t0 = now();
        if (do_ceiling || !b.pb_bytes) sink += ceiling_pass(&b);
        double t1 = now(), c1 = cpu();
        if (do_census) census_pass(&b);
        double t2 = now(), c2 = cpu();
        if (t1 - t0 < best_ceiling) best_ceiling = t1 - t0;
        if (t2 - t1 < best_census) best_census = t2 - t1;
        if (c2 - c1 < best_census_cpu) best_census_cpu = c2 - c1;
    }
    uint64_t events = 0;
    for (int k = 0; k < VGT_EV_KIND_COUNT_; k++) events += b.events[k];
    printf("bytes=%" PRIu64 " submissions=%" PRIu64 " ceiling_s=%.4f census_s=%.4f ceiling_gbps=%.3f census_gbps=%.3f"
           " census_cpu_s=%.4f census_cpu_gbps=%.3f ratio=%.3f methods=%" PRIu64 " events=%" PRIu64 " launches=%" PRIu64 " uploads=%" PRIu64 " copies=%" PRIu64
           " releases=%" PRIu64 "\n",
           b.pb_bytes, b.nsubs, best_ceiling, best_census, b.pb_bytes / best_ceiling / 1e9, b.pb_bytes / best_census / 1e9,
           best_census_cpu, b.pb_bytes / best_census_cpu / 1e9, best_ceiling / best_census, b.methods, events, b.events[VGT_EV_LAUNCH], b.events[VGT_EV_UPLOAD],
           b.events[VGT_EV_COPY], b.events[VGT_EV_SEM_RELEASE]);
    for (uint32_t i = 0; i < b.nch; i++) vgt_sem_free(b.ch[i].sem);
    for (uint64_t i = 0; i < b.nsubs; i++) free(b.subs[i].payload);
    free(b.subs);
    return sink == 42 ? 3 : 0;
}
