/* timeline.c: `vgt timeline TRACE -o FILE.json`: the trace as Chrome trace-event JSON (the "JSON Object
 * Format" of the Trace Event Format), which ui.perfetto.dev and chrome://tracing open.
 *
 * Process "GPU channels": a track (thread) per channel with its submissions as complete ("X") slices and,
 * inside each, its GPFIFO entries; launches, draws, MME macro calls and semaphore releases are instant
 * ("i") events inside their entry. Process "capture (CPU)": the capture's own time, every record at its
 * timestamp on a track per record family (objects, memory, submission), and the session as one slice.
 *
 * Time: a trace knows when the CPU submitted work (record timestamps, ns), not when the GPU ran it. A
 * submission's slice starts at its GPFIFO_SUBMIT's timestamp and lasts until the channel's next submission
 * (the last one: 1 us); inside it, entries and events are laid out by push-buffer position (dwords), so
 * their order is exact and their spacing is a layout, not a measurement (each slice's args say so).
 * Timestamps are microseconds from the trace's first record. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget_report.h"
#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/events.h"
#include "vgt/grow.h"
#include "vgt/json.h"
#include "vgt/outfile.h"
#include "vgt/rows.h"
#include "vgt/trace.h"
#include "vgt/u64map.h"

#define PID_GPU 1
#define PID_CPU 2
#define LAST_SUBMIT_NS 1000u

typedef struct timeline_args {
    const char *out;
    int quiet, no_cpu, follow;
} timeline_args;

static const vgt_cli_opt timeline_options[] = {
    {"output", 'o', VGT_ARG_PATH, "FILE.json", "where the JSON goes ('-': standard output); replaced only once "
     "complete", .off = offsetof(timeline_args, out), .flags = VGT_OPT_REQUIRED},
    {"no-cpu", 0, VGT_ARG_NONE, NULL, "leave out the capture's CPU-side records (smaller files for long traces)",
     .off = offsetof(timeline_args, no_cpu)},
    VGT_OPT_QUIET(timeline_args, quiet),
    VGT_OPT_FOLLOW(timeline_args, follow),
    {0}};

const vgt_cli_spec cmd_timeline_spec = {
    .verb = "timeline", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = timeline_options,
    .about = "Write the trace as Chrome trace-event JSON for ui.perfetto.dev (or chrome://tracing): a track per "
             "channel with its submissions and their GPFIFO entries as slices, launches, draws, MME macro calls and "
             "semaphore releases as instant events inside them, and the capture's CPU-side time (every record at "
             "its timestamp, on a track per record family). A submission lasts from its GPFIFO_SUBMIT timestamp to "
             "the channel's next submission: the trace holds when the CPU submitted, not when the GPU ran; inside "
             "a submission, entries and events are placed by push-buffer position.",
    .notes = "exit: 0 ok, 1 the trace could not be read to the end, 2 usage or I/O error",
};

typedef struct tl {
    FILE *f;
    int first;
    uint64_t t0;              /* ns: the first record's timestamp */
} tl;

static void ev_begin(tl *t, const char *ph, const char *name, int pid, uint64_t tid, double ts_us)
{
    fputs(t->first ? "\n" : ",\n", t->f);
    t->first = 0;
    fprintf(t->f, "{\"ph\":\"%s\",\"name\":", ph);
    vgt_json_string(t->f, name);
    fprintf(t->f, ",\"pid\":%d,\"tid\":%" PRIu64 ",\"ts\":%.3f", pid, tid, ts_us);
}

static double us(const tl *t, double ns) { return (ns - (double)t->t0) / 1000.0; }

static void meta(tl *t, const char *what, int pid, uint64_t tid, const char *name)
{
    ev_begin(t, "M", what, pid, tid, 0);
    fputs(",\"args\":{\"name\":", t->f);
    vgt_json_string(t->f, name);
    fputs("}}", t->f);
}

/* Channels in order of first submission: tid = index + 1. Hashed (a trace may hold 65,536 channels), with
 * the class of each channel's first submission that names one. */
typedef struct chan_list {
    uint64_t *handle;
    uint32_t *cls;
    uint32_t n, caphandle, capcls;   /* two capacities: one array may grow before the other fails */
    vgt_u64map ix;            /* handle -> index */
} chan_list;

static uint32_t chan_tid(chan_list *c, uint64_t handle, uint32_t cls)
{
    uint32_t i;
    if (vgt_u64map_get(&c->ix, handle, &i)) {
        if (!c->cls[i]) c->cls[i] = cls;
        return i + 1;
    }
    if (vgt_grow(&c->handle, &c->caphandle, c->n + 1ull, 16) || vgt_grow(&c->cls, &c->capcls, c->n + 1ull, 16))
        return 0;
    if (vgt_u64map_put(&c->ix, handle, c->n)) return 0;
    c->handle[c->n] = handle;
    c->cls[c->n] = cls;
    return ++c->n;
}

static void chan_list_free(chan_list *c)
{
    free(c->handle);
    free(c->cls);
    vgt_u64map_free(&c->ix);
}

typedef struct sub_span {
    double start, dur;        /* ns */
    uint64_t dwords;          /* push-buffer dwords of its entries */
    uint64_t first_entry;     /* index into the entries rows */
    uint32_t nentries, tid;
} sub_span;

/* ns of (entry, dword) inside submission s: by push-buffer position. before[e]: the dwords of the entries
 * of e's submission before entry row e (one pass; a submission may hold thousands of entries). */
static double position(const sub_span *s, const uint64_t *before, uint32_t entry, uint32_t dword)
{
    if (!s->dwords) return s->start;
    uint64_t off = entry < s->nentries ? before[s->first_entry + entry] : s->dwords;
    off += dword;
    if (off > s->dwords) off = s->dwords;
    return s->start + s->dur * (double)off / (double)s->dwords;
}

static const char *cpu_family(uint16_t type)
{
    switch (type) {
    case VGT_REC_GPFIFO_SUBMIT: case VGT_REC_DOORBELL: case VGT_REC_SEMAPHORE: case VGT_REC_WORK_SUBMIT_TOKEN:
    case VGT_REC_CHANNEL_STATE: case VGT_REC_CHANNEL_METHODS:
        return "submission";
    case VGT_REC_MEMORY: case VGT_REC_MEM_ALLOC: case VGT_REC_GPU_MAP: case VGT_REC_GPU_UNMAP: case VGT_REC_CPU_MAP:
    case VGT_REC_CPU_UNMAP:
        return "memory";
    default:
        return "objects";
    }
}

static vgt_status cpu_records(tl *t, const char *path, vgt_error *err)
{
    static const char *const families[] = {"objects", "memory", "submission"};
    for (int i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "records: %s", families[i]);
        meta(t, "thread_name", PID_CPU, (uint64_t)i + 1, name);
    }
    vgt_reader *r;
    VGT_TRY(vgt_reader_open_path(&r, path, NULL, err));
    vgt_record rec;
    vgt_status st;
    uint64_t first_ts = UINT64_MAX, last_ts = 0;
    while ((st = vgt_reader_next(r, &rec, err)) == VGT_OK) {
        if (rec.ts < first_ts) first_ts = rec.ts;
        if (rec.ts > last_ts) last_ts = rec.ts;
        const char *fam = cpu_family(rec.type);
        uint64_t tid = fam[0] == 'o' ? 1 : fam[0] == 'm' ? 2 : 3;
        const char *name = vgt_rec_type_name(rec.type);
        char unknown[16];
        if (!name) snprintf(unknown, sizeof unknown, "0x%04x", rec.type), name = unknown;
        ev_begin(t, "i", name, PID_CPU, tid, us(t, (double)rec.ts));
        fprintf(t->f, ",\"s\":\"t\",\"args\":{\"seq\":%" PRIu64 ",\"bytes\":%u}}", rec.seq, rec.length);
    }
    vgt_reader_close(r);
    if (st != VGT_E_EOF) return st;
    if (first_ts != UINT64_MAX) {
        ev_begin(t, "X", "capture session", PID_CPU, 4, us(t, (double)first_ts));
        fprintf(t->f, ",\"dur\":%.3f}", (double)(last_ts - first_ts) / 1000.0);
        meta(t, "thread_name", PID_CPU, 4, "session");
    }
    return VGT_OK;
}

static void on_progress(void *ctx, uint64_t off) { vgt_progress_set(ctx, off); }

static vgt_status first_ts(const char *path, uint64_t *ts, vgt_error *err)
{
    vgt_reader *r;
    VGT_TRY(vgt_reader_open_path(&r, path, NULL, err));
    vgt_record rec;
    vgt_status st = vgt_reader_next(r, &rec, err);
    *ts = st == VGT_OK ? rec.ts : 0;
    vgt_reader_close(r);
    return st == VGT_E_EOF ? VGT_OK : st;
}

/* The GPU side: channels, submissions, entries, events, macro calls. */
static vgt_status gpu_side(tl *t, const vgt_rows_all *a)
{
    const vgt_row_submit *subs = a->rows[VGT_ROWS_SUBMITS];
    const vgt_row_entry *ents = a->rows[VGT_ROWS_ENTRIES];
    const vgt_row_event *evs = a->rows[VGT_ROWS_EVENTS];
    const vgt_row_macro_call *calls = a->rows[VGT_ROWS_MACRO_CALLS];
    uint64_t ns = a->count[VGT_ROWS_SUBMITS], ne = a->count[VGT_ROWS_ENTRIES];
    sub_span *span = calloc(ns ? ns : 1, sizeof *span);
    uint64_t *before = calloc(ne ? ne : 1, sizeof *before);
    vgt_u64map next = {0};    /* channel -> the index of its next submission (a backward pass) */
    chan_list ch = {0};
    if (!span || !before || ns >= UINT32_MAX) {
        free(span), free(before);
        return VGT_E_NOMEM;
    }
    meta(t, "process_name", PID_GPU, 0, "GPU channels");
    meta(t, "process_name", PID_CPU, 0, "capture (CPU)");
    uint64_t e = 0;
    int nomem = 0;
    for (uint64_t i = 0; i < ns && !nomem; i++) {
        const vgt_row_submit *s = &subs[i];
        span[i].start = (double)s->ts;
        nomem = !(span[i].tid = chan_tid(&ch, s->channel, (uint32_t)s->channel_class));
        while (e < ne && ents[e].submission < s->submission) e++;
        span[i].first_entry = e;
        while (e < ne && ents[e].submission == s->submission) {
            before[e] = span[i].dwords;
            span[i].dwords += ents[e].length;
            span[i].nentries++;
            e++;
        }
    }
    for (uint64_t i = ns; i-- > 0 && !nomem;) {
        const vgt_row_submit *s = &subs[i];
        uint32_t j;
        span[i].dur = LAST_SUBMIT_NS;
        if (vgt_u64map_get(&next, s->channel, &j))   /* the channel's next submission */
            span[i].dur = subs[j].ts > s->ts ? (double)(subs[j].ts - s->ts) : 0;
        if (span[i].dur < 1) span[i].dur = 1;   /* a slice of at least 1 ns, so that nothing inside is lost */
        nomem = vgt_u64map_put(&next, s->channel, (uint32_t)i) != 0;
    }
    vgt_u64map_free(&next);
    if (nomem) {
        free(span), free(before), chan_list_free(&ch);
        return VGT_E_NOMEM;
    }
    for (uint32_t c = 0; c < ch.n; c++) {
        uint32_t cls = ch.cls[c];
        char cname[64], name[128];
        snprintf(name, sizeof name, "channel 0x%08" PRIx64 " %s", ch.handle[c], cls ? vgt_class_name(cls, cname, sizeof cname) : "");
        meta(t, "thread_name", PID_GPU, c + 1, name);
    }
    for (uint64_t i = 0; i < ns; i++) {
        const vgt_row_submit *s = &subs[i];
        char name[64];
        snprintf(name, sizeof name, "submission %" PRIu64, s->submission);
        ev_begin(t, "X", name, PID_GPU, span[i].tid, us(t, span[i].start));
        fprintf(t->f, ",\"dur\":%.3f,\"cat\":\"submission\",\"args\":{\"seq\":%" PRIu64 ",\"entries\":%" PRIu64
                ",\"methods\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"draws\":%" PRIu64 ",\"macro_calls\":%" PRIu64
                ",\"semaphore_releases\":%" PRIu64 ",\"time\":\"CPU submit time; lasts until the channel's next "
                "submission\"}}", span[i].dur / 1000.0, s->seq, s->entry_count, s->methods, s->launches, s->draws,
                s->macro_calls, s->sem_releases);
        for (uint32_t k = 0; k < span[i].nentries; k++) {
            const vgt_row_entry *en = &ents[span[i].first_entry + k];
            double a0 = position(&span[i], before, k, 0), a1 = position(&span[i], before, k, (uint32_t)en->length);
            snprintf(name, sizeof name, en->is_control ? "control entry %u" : "entry %u", k);
            ev_begin(t, "X", name, PID_GPU, span[i].tid, us(t, a0));
            fprintf(t->f, ",\"dur\":%.3f,\"cat\":\"gpfifo\",\"args\":{\"va\":\"0x%" PRIx64 "\",\"dwords\":%" PRIu64
                    ",\"level\":%" PRIu64 ",\"time\":\"placed by push-buffer position\"}}", (a1 - a0) / 1000.0, en->va,
                    en->length, en->level);
        }
    }
    /* events and calls: rows are in trace order, so their submission is found by walking forward */
    uint64_t si = 0;
    for (uint64_t i = 0; i < a->count[VGT_ROWS_EVENTS]; i++) {
        const vgt_row_event *v = &evs[i];
        if (v->kind != VGT_EV_LAUNCH && v->kind != VGT_EV_DRAW && v->kind != VGT_EV_SEM_RELEASE) continue;
        while (si < ns && subs[si].submission < v->submission) si++;
        if (si == ns || subs[si].submission != v->submission) continue;
        const char *name = v->kind == VGT_EV_LAUNCH ? "launch" : v->kind == VGT_EV_DRAW ? "draw" : "semaphore release";
        ev_begin(t, "i", name, PID_GPU, span[si].tid, us(t, position(&span[si], before, v->entry, v->dword)));
        fprintf(t->f, ",\"s\":\"t\",\"cat\":\"%s\",\"args\":{\"seq\":%" PRIu64 ",\"entry\":%u,\"dword\":%u,\"origin\":\"%s\"",
                v->kind == VGT_EV_LAUNCH ? "launch" : v->kind == VGT_EV_DRAW ? "draw" : "semaphore", v->seq, v->entry,
                v->dword, v->origin ? "macro" : "stream");
        if (v->kind == VGT_EV_LAUNCH)
            fprintf(t->f, ",\"qmd\":\"0x%" PRIx64 "\",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]", v->va, v->a[0], v->a[1],
                    v->a[2], v->a[3], v->a[4], v->a[5]);
        else if (v->kind == VGT_EV_DRAW)
            fprintf(t->f, ",\"topology\":\"%s\",\"count\":%u,\"instances\":%u", vgt_topology_name(v->a[1]), v->a[3], v->a[4]);
        else
            fprintf(t->f, ",\"va\":\"0x%" PRIx64 "\",\"payload\":%" PRIu64 ",\"source\":\"%s\"", v->va, v->va2,
                    vgt_sem_source_name(v->a[0]));
        fputs("}}", t->f);
    }
    si = 0;
    for (uint64_t i = 0; i < a->count[VGT_ROWS_MACRO_CALLS]; i++) {
        const vgt_row_macro_call *c = &calls[i];
        while (si < ns && subs[si].submission < c->submission) si++;
        if (si == ns || subs[si].submission != c->submission) continue;
        char name[48];
        snprintf(name, sizeof name, "macro 0x%x", c->index);
        ev_begin(t, "i", name, PID_GPU, span[si].tid, us(t, position(&span[si], before, c->entry, c->dword)));
        fprintf(t->f, ",\"s\":\"t\",\"cat\":\"macro\",\"args\":{\"call\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"version\":%d"
                ",\"params\":%u,\"emits\":%u,\"instructions\":%" PRIu64 ",\"hash\":\"%016" PRIx64 "\"}}", c->id, c->seq,
                c->version == UINT32_MAX ? -1 : (int)c->version, c->nparams, c->nemits, c->instructions, c->hash);
    }
    free(span);
    free(before);
    chan_list_free(&ch);
    return VGT_OK;
}

int cmd_timeline(int argc, char **argv)
{
    timeline_args ta = {0};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_timeline_spec, argc, argv, &ta, &a);
    if (rc >= 0) return rc;
    const char *path = a.pos[0];
    char spool[64];
    if (vgt_cli_seekable_input("timeline", &path, spool, sizeof spool)) return VGT_EXIT_USAGE;   /* read twice */
    if (ta.follow && path == a.pos[0] && (rc = vgt_cli_follow_to_end("timeline", path))) return rc;
    vgt_error err;
    vgt_rows_all all;
    vgt_progress p;
    vgt_progress_begin_file(&p, "timeline", path, ta.quiet);
    vgt_status st = vgt_rows_load(path, (1u << VGT_ROWS_SUBMITS) | (1u << VGT_ROWS_ENTRIES) | (1u << VGT_ROWS_EVENTS) |
                                  (1u << VGT_ROWS_MACRO_CALLS), &all, on_progress, &p, &err);
    vgt_progress_end(&p);
    tl t = {.first = 1};
    if (st == VGT_OK) st = first_ts(path, &t.t0, &err);
    if (st != VGT_OK) {
        vgt_rows_free(&all);
        return vgt_cli_report("timeline", &err);
    }
    vgt_outfile of;
    if (vgt_outfile_open(&of, ta.out, 0, &err) != VGT_OK || !(t.f = vgt_outfile_stdio(&of, &err))) {
        vgt_rows_free(&all);
        return vgt_cli_report("timeline", &err);
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace\":", t.f);
    vgt_json_string(t.f, a.pos[0]);
    fputs(",\"tool\":\"vgt timeline\"},\"traceEvents\":[", t.f);
    st = gpu_side(&t, &all);
    if (st == VGT_OK && !ta.no_cpu) st = cpu_records(&t, path, &err);
    else if (st != VGT_OK) vgt_fail(&err, st, VGT_NO_OFFSET, "timeline: no memory");
    fputs("\n]}\n", t.f);
    char note[sizeof all.stats.mme_budget_note];
    memcpy(note, all.stats.mme_budget_note, sizeof note);
    vgt_rows_free(&all);
    if (st != VGT_OK) {
        vgt_outfile_discard(&of);
        return vgt_cli_report("timeline", &err);
    }
    if (vgt_outfile_commit(&of, &err) != VGT_OK) return vgt_cli_report("timeline", &err);
    /* the events those macro calls would have made are not on the timeline */
    return mme_budget_print("timeline", note) ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}
