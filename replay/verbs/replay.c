/* replay.c: `vgt replay TRACE`: run a trace on a backend (see replay/include/vgt/replay.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_live.h"
#include "replay_out.h"
#include "vgt/cli.h"
#include "vgt/grow.h"
#include "vgt/outfile.h"
#include "vgt/replay.h"
#include "vgt/trace.h"

#define MAX_DUMPS 16
#define MAX_RT_DUMPS 8
#define MAX_CENSUS_TEXT_ROWS 200
#define MAX_DUMP_BYTES (1ull << 30)
#define MAX_TEXT_EVENTS 200          /* per kind, then "... N more" */
#define MAX_JSON_REPORTS 100000
#define MAX_RELOCATE 256


typedef struct dump_req {
    uint64_t va, len;
    const char *path;
} dump_req;

typedef struct cli {
    int json, quiet, verbose;
    uint64_t shown[9];
    uint64_t hidden;
    FILE *out;
    /* JSON: reports kept until the end */
    char **lines;
    uint64_t nlines, caplines, dropped;
    const struct plan_out *plan;   /* what on_plan prints with */
    vgt_progress progress;         /* bytes of the trace replayed, on a terminal */
    live_out live;                 /* --latency, --live counters */
} cli;

static const char *event_name(int kind)
{
    static const char *const names[] = {"?", "fault", "unsupported", "diagnostic", "blocked", "resumed", "macro", "limit"};
    return kind >= 0 && kind < 8 ? names[kind] : "?";
}

static void keep_json(cli *c, const vgt_replay_report *r)
{
    if (c->nlines >= MAX_JSON_REPORTS || vgt_grow(&c->lines, &c->caplines, c->nlines + 1, 64)) {
        c->dropped++;
        return;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        c->dropped++;
        return;
    }
    static const char *const kinds[] = {"?", "submission", "mismatch", "event", "warning", "relocation"};
    fprintf(f, "{\"kind\":\"%s\",\"submission\":%lld,\"seq\":%llu,\"channel\":%u", kinds[r->kind >= 1 && r->kind <= 5 ? r->kind : 0],
            (long long)r->submit_index, (unsigned long long)r->submit_seq, r->channel);
    if (r->kind == VGT_RPT_SUBMIT_CHECKS)
        fprintf(f, ",\"passed\":%u,\"failed\":%u,\"not_comparable\":%u", r->passed, r->failed, r->skipped);
    if (r->kind == VGT_RPT_MISMATCH) {
        fprintf(f, ",\"record_seq\":%llu,\"record\":", (unsigned long long)r->record_seq);
        vgt_json_string(f, r->record_kind);
        fprintf(f, ",\"va\":%llu,\"length\":%llu,\"compared\":%llu,\"differing\":%llu,\"first_va\":%llu,"
                   "\"expected\":%llu,\"found\":%llu",
                (unsigned long long)r->va, (unsigned long long)r->length, (unsigned long long)r->compared,
                (unsigned long long)r->differing, (unsigned long long)r->first_va, (unsigned long long)r->expected,
                (unsigned long long)r->found);
    }
    if (r->kind == VGT_RPT_EVENT) fprintf(f, ",\"event\":\"%s\"", event_name(r->event_kind));
    fputs(",\"message\":", f);
    vgt_json_string(f, r->msg ? r->msg : "");
    fputc('}', f);
    fclose(f);
    c->lines[c->nlines++] = buf;
}

static void on_progress(void *ctx, const vgt_record *rec) { vgt_progress_set(ctx, rec->chunk_offset); }

static void on_report(void *ctx, const vgt_replay_report *r)
{
    cli *c = ctx;
    if (c->json) {
        keep_json(c, r);
        return;
    }
    if (isatty(fileno(c->out))) vgt_progress_clear(&c->progress);   /* the report's line, not through the bar */
    if (r->kind == VGT_RPT_SUBMIT_CHECKS) {
        if (!c->quiet || r->failed) fprintf(c->out, "%s\n", r->msg);
        return;
    }
    if (r->kind == VGT_RPT_MISMATCH) {
        fprintf(c->out, "  MISMATCH %s\n", r->msg);
        return;
    }
    int slot = r->kind == VGT_RPT_WARNING ? 0 : r->kind == VGT_RPT_RELOCATION ? 8 : (r->event_kind & 7);
    if (r->kind == VGT_RPT_RELOCATION && c->quiet) return;
    if (r->kind == VGT_RPT_EVENT && (r->event_kind == VGT_BEV_UNBLOCKED) && c->quiet) return;
    if (c->shown[slot]++ >= MAX_TEXT_EVENTS && !c->verbose) {
        c->hidden++;
        return;
    }
    if (r->kind == VGT_RPT_WARNING) fprintf(c->out, "  warning: %s\n", r->msg);
    else if (r->kind == VGT_RPT_RELOCATION) fprintf(c->out, "  address: %s\n", r->msg);
    else if (r->submit_index >= 0)
        fprintf(c->out, "  submission %lld (seq %llu): %s: %s\n", (long long)r->submit_index,
                (unsigned long long)r->submit_seq, event_name(r->event_kind), r->msg);
    else fprintf(c->out, "  %s: %s\n", event_name(r->event_kind), r->msg);
}

/* The coverage reached, as the result line and messages say it: "0.00055%", with the fraction when the
 * minimum was given as one (a truncated percentage may read equal to it). */
static void coverage_text(const vgt_replay_summary *s, const vgt_coverage_min *min, char *buf, size_t cap)
{
    char pct[48];
    vgt_coverage_pct(s->observed_bytes_compared, s->observed_bytes, pct, sizeof pct);
    if (!s->observed_bytes) snprintf(buf, cap, "n/a (nothing observed)");
    else if (min && min->fraction)
        snprintf(buf, cap, "%s%% (%llu/%llu)", pct, (unsigned long long)s->observed_bytes_compared,
                 (unsigned long long)s->observed_bytes);
    else snprintf(buf, cap, "%s%%", pct);
}

static int coverage_short(const vgt_replay_summary *s, int check, const vgt_coverage_min *min)
{
    return check && min && !vgt_coverage_met(s->observed_bytes_compared, s->observed_bytes, min);
}

/* Append one reason to buf ("; " between reasons), truncating at cap. */
static void add_reason(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_reason(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n && n + 2 < cap) memcpy(buf + n, "; ", 3), n += 2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* Why the result is FAILED ("" when it is not): the summary's problems, and a coverage below
 * --min-coverage (min; NULL when not given). Returns 1 when failed. */
static int result_why(const vgt_replay_summary *s, int check, const vgt_coverage_min *min, char *buf, size_t cap)
{
    buf[0] = '\0';
    uint64_t faults = s->ctr.faults > s->faults ? s->ctr.faults : s->faults;
    if (s->checks_failed)
        add_reason(buf, cap, "%llu check%s failed", (unsigned long long)s->checks_failed, s->checks_failed > 1 ? "s" : "");
    if (faults) add_reason(buf, cap, "%llu fault%s", (unsigned long long)faults, faults > 1 ? "s" : "");
    if (s->blocked) add_reason(buf, cap, "channels never finished");
    if (s->refused) add_reason(buf, cap, "%llu submission%s refused", (unsigned long long)s->refused, s->refused > 1 ? "s" : "");
    if (s->synth_refused)
        add_reason(buf, cap, "%llu submission%s not synthesized", (unsigned long long)s->synth_refused,
                   s->synth_refused > 1 ? "s" : "");
    if (s->cuda_graphs_not_run)
        add_reason(buf, cap, "%llu CUDA graph launch%s not run", (unsigned long long)s->cuda_graphs_not_run,
                   s->cuda_graphs_not_run > 1 ? "es" : "");
    int short_of = coverage_short(s, check, min);
    if (short_of) {
        char have[96], want[64];
        coverage_text(s, min, have, sizeof have);
        vgt_coverage_min_text(min, want, sizeof want);
        add_reason(buf, cap, "coverage %s < %s", have, want);
    }
    return short_of || vgt_replay_summary_failed(s);
}

static void print_result_text(FILE *f, const vgt_replay_summary *s, int check, const vgt_coverage_min *min)
{
    char why[512], have[96], want[64];
    if (result_why(s, check, min, why, sizeof why)) {
        fprintf(f, "result: FAILED%s%s%s\n", why[0] ? " (" : "", why, why[0] ? ")" : "");
        return;
    }
    if (!check) {
        fputs("result: ok (nothing compared: --check not given)\n", f);
        return;
    }
    coverage_text(s, min, have, sizeof have);
    if (min) vgt_coverage_min_text(min, want, sizeof want);
    fprintf(f, "result: ok (coverage %s%s%s)\n", have, min ? " >= " : "", min ? want : "");
}

/* What the backend counted while it ran the work (backends with VGT_CAP_DECODES). */
static void print_work_text(FILE *f, const vgt_backend_counters *k)
{
    fprintf(f, "  GPFIFO entries %llu (%llu control); push buffer %llu bytes; methods %llu (%llu host, %llu to unmodelled classes)\n",
            (unsigned long long)k->entries, (unsigned long long)k->control_entries, (unsigned long long)k->pushbuf_bytes,
            (unsigned long long)k->methods, (unsigned long long)k->host_methods, (unsigned long long)k->unknown_class_methods);
    fprintf(f, "  launches %llu; empty dispatches %llu; draws %llu; uploads %llu (%llu bytes); copies %llu (%llu bytes, "
               "%llu memsets); empty DMAs %llu\n",
            (unsigned long long)k->launches, (unsigned long long)k->empty_dispatches, (unsigned long long)k->draws,
            (unsigned long long)k->uploads, (unsigned long long)k->upload_bytes, (unsigned long long)k->copies,
            (unsigned long long)k->copy_bytes, (unsigned long long)k->memsets, (unsigned long long)k->empty_dmas);
    fprintf(f, "  semaphores: %llu releases, %llu acquires, %llu reductions, %llu report semaphores\n",
            (unsigned long long)k->sem_releases, (unsigned long long)k->sem_acquires, (unsigned long long)k->sem_reductions,
            (unsigned long long)k->report_semaphores);
    if (k->qmd_armed || k->qmd_dependent_runs)
        fprintf(f, "  QMDs: %llu armed by their PCAS to wait for a scheduling QMD, %llu run by a completing QMD\n",
                (unsigned long long)k->qmd_armed, (unsigned long long)k->qmd_dependent_runs);
    fprintf(f, "  macro calls %llu (%llu errors, %llu methods emitted)\n", (unsigned long long)k->macro_calls,
            (unsigned long long)k->macro_errors, (unsigned long long)k->macro_methods);
    if (k->macro_refused)
        fprintf(f, "  macro calls not run: %llu (an MME budget was spent)\n", (unsigned long long)k->macro_refused);
}

/* problem: why the replay stopped early (the trace is broken), or NULL. */
static void print_summary_text(FILE *f, const vgt_replay_summary *s, int check, const vgt_coverage_min *min,
                               uint64_t hidden, const char *problem)
{
    const vgt_backend_counters *k = &s->ctr;
    fprintf(f, "summary (backend %s, lane %s):\n", s->backend, s->lane);
    fprintf(f, "  records %llu; submissions %llu replayed of %llu", (unsigned long long)s->records,
            (unsigned long long)s->submissions_replayed, (unsigned long long)s->submissions);
    if (s->submissions_prefix) fprintf(f, " (%llu before --submits: not checked)", (unsigned long long)s->submissions_prefix);
    fputc('\n', f);
    fprintf(f, "  lanes: verbatim %llu, synth %llu, cuda %llu submissions\n", (unsigned long long)s->lanes[VGT_LANE_VERBATIM],
            (unsigned long long)s->lanes[VGT_LANE_SYNTH], (unsigned long long)s->lanes[VGT_LANE_CUDA]);
    if (s->cuda_forwarded || s->cuda_skipped)
        fprintf(f, "  cuda: %llu calls forwarded, %llu not reproducible; %llu device ranges at their captured addresses, "
                   "%llu moved (%llu pointer parameters relocated)\n",
                (unsigned long long)s->cuda_forwarded, (unsigned long long)s->cuda_skipped,
                (unsigned long long)s->cuda_ranges_kept, (unsigned long long)s->cuda_ranges_moved,
                (unsigned long long)s->cuda_params_relocated);
    if (s->cuda_graphs_not_run)
        fprintf(f, "  cuda: %llu graph launches not run (a kernel node cannot be resolved; see the warnings)\n",
                (unsigned long long)s->cuda_graphs_not_run);
    if (s->work_counted) print_work_text(f, k);
    else fprintf(f, "  work: not counted by backend %s, which runs the push buffers without decoding them ('vgt "
                    "census TRACE' counts the launches, draws, copies, semaphores and macro calls)\n", s->backend);
    if (check)
        fprintf(f, "  checks: %llu passed, %llu failed, %llu not comparable (not produced by %s, or not yet written when captured; %llu bytes compared)\n",
                (unsigned long long)s->checks_passed, (unsigned long long)s->checks_failed,
                (unsigned long long)s->checks_skipped, s->backend, (unsigned long long)s->bytes_compared);
    if (check) {
        char pct[48];
        vgt_coverage_pct(s->observed_bytes_compared, s->observed_bytes, pct, sizeof pct);
        if (s->observed_bytes)
            fprintf(f, "  coverage: %llu of %llu observed bytes compared (%s%%)", (unsigned long long)s->observed_bytes_compared,
                    (unsigned long long)s->observed_bytes, pct);
        else fprintf(f, "  coverage: 0 of 0 observed bytes compared (no SEMAPHORE or MEMORY observed record after a "
                        "replayed submission)");
        if (s->bytes_compared > s->observed_bytes_compared)
            fprintf(f, "; %llu more bytes compared in MEMORY changed/initial records the submissions wrote",
                    (unsigned long long)(s->bytes_compared - s->observed_bytes_compared));
        fputc('\n', f);
    }
    if (check && s->bytes_capture_only)
        fprintf(f, "  not compared: %llu bytes only the captured driver wrote (captured channels' USERD and rings, "
                   "push-buffer pages)\n", (unsigned long long)s->bytes_capture_only);
    if (!check) fprintf(f, "  checks: not requested (--check)\n");
    fprintf(f, "  faults %llu; unsupported operations %llu; decoder diagnostics %llu; blocked waits %llu; warnings %llu%s\n",
            (unsigned long long)k->faults, (unsigned long long)k->unsupported, (unsigned long long)k->diagnostics,
            (unsigned long long)k->blocked_waits, (unsigned long long)s->warnings, s->blocked ? "; CHANNELS NEVER FINISHED" : "");
    fprintf(f, "  timing: replay %.3f ms from the first submission to all work done; capture %.3f ms from the first "
               "to the last submission\n", s->replay_span_ns / 1e6, s->capture_span_ns / 1e6);
    /* what the engine read back through the backend: on hardware each byte crosses the PCIe BAR */
    uint64_t nsub = s->submissions_replayed ? s->submissions_replayed : 1;
    fprintf(f, "  host access: %llu reads (%llu bytes, %.1f per submission replayed), %llu writes (%llu bytes)\n",
            (unsigned long long)k->host_reads, (unsigned long long)k->host_read_bytes,
            (double)k->host_read_bytes / (double)nsub, (unsigned long long)k->host_writes,
            (unsigned long long)k->host_write_bytes);
    if (s->relocations || s->aliases || s->aliases_unreproduced)
        fprintf(f, "  addresses: %llu mappings relocated; %llu address operands and %llu GPFIFO entries rewritten; "
                   "%llu memory objects mapped twice aliased (%llu not reproduced)\n",
                (unsigned long long)s->relocations, (unsigned long long)s->operands_rewritten,
                (unsigned long long)s->entries_rewritten, (unsigned long long)s->aliases,
                (unsigned long long)s->aliases_unreproduced);
    if (s->refused)
        fprintf(f, "  refused: %llu submissions not run: a macro call would raise an MME exception (--force)\n",
                (unsigned long long)s->refused);
    if (s->synth_refused)
        fprintf(f, "  not synthesized: %llu submissions not run: a launch that must not be built, or a synthesized "
                   "stream that does not decode back to the captured work\n", (unsigned long long)s->synth_refused);
    if (hidden) fprintf(f, "  (%llu further messages not shown)\n", (unsigned long long)hidden);
    if (s->limits_note) fprintf(f, "  note: %s\n", s->limits_note);
    if (problem) fprintf(f, "result: FAILED (the trace could not be read to its end: %s)\n", problem);
    else print_result_text(f, s, check, min);
}

/* finish_msg: what finishing reported (channels that never finished), or NULL; trace_error: the
 * replay stopped early because the trace is broken (finish_msg then says why). */
static void print_summary_json(FILE *f, const vgt_replay_summary *s, int check, const vgt_coverage_min *min,
                               const cli *c, const char *finish_msg, int trace_error)
{
    const vgt_backend_counters *k = &s->ctr;
    fprintf(f, "{\"backend\":\"%s\",\"lane\":\"%s\",\"records\":%llu,\"submissions\":%llu,\"submissions_replayed\":%llu,"
               "\"submissions_prefix\":%llu,",
            s->backend, s->lane, (unsigned long long)s->records, (unsigned long long)s->submissions,
            (unsigned long long)s->submissions_replayed, (unsigned long long)s->submissions_prefix);
    fprintf(f, "\"work_counted\":%s,", s->work_counted ? "true" : "false");   /* false: the counts below are 0 */
    fprintf(f, "\"entries\":%llu,\"pushbuf_bytes\":%llu,\"methods\":%llu,\"launches\":%llu,\"empty_dispatches\":%llu,"
               "\"draws\":%llu,\"uploads\":%llu,\"upload_bytes\":%llu,\"copies\":%llu,\"copy_bytes\":%llu,\"memsets\":%llu,"
               "\"empty_dmas\":%llu,",
            (unsigned long long)k->entries, (unsigned long long)k->pushbuf_bytes, (unsigned long long)k->methods,
            (unsigned long long)k->launches, (unsigned long long)k->empty_dispatches, (unsigned long long)k->draws,
            (unsigned long long)k->uploads, (unsigned long long)k->upload_bytes, (unsigned long long)k->copies,
            (unsigned long long)k->copy_bytes, (unsigned long long)k->memsets, (unsigned long long)k->empty_dmas);
    fprintf(f, "\"semaphores\":{\"releases\":%llu,\"acquires\":%llu,\"reductions\":%llu,\"report\":%llu,\"qmd\":%llu},",
            (unsigned long long)k->sem_releases, (unsigned long long)k->sem_acquires,
            (unsigned long long)k->sem_reductions, (unsigned long long)k->report_semaphores,
            (unsigned long long)k->qmd_releases);
    fprintf(f, "\"host_access\":{\"reads\":%llu,\"read_bytes\":%llu,\"writes\":%llu,\"write_bytes\":%llu},",
            (unsigned long long)k->host_reads, (unsigned long long)k->host_read_bytes, (unsigned long long)k->host_writes,
            (unsigned long long)k->host_write_bytes);
    fprintf(f, "\"qmds\":{\"armed\":%llu,\"dependent_runs\":%llu},", (unsigned long long)k->qmd_armed,
            (unsigned long long)k->qmd_dependent_runs);
    fprintf(f, "\"macro_calls\":%llu,\"macro_errors\":%llu,\"macro_refused\":%llu,\"faults\":%llu,\"unsupported\":%llu,\"diagnostics\":%llu,"
               "\"warnings\":%llu,\"blocked\":%s,",
            (unsigned long long)k->macro_calls, (unsigned long long)k->macro_errors,
            (unsigned long long)k->macro_refused, (unsigned long long)k->faults,
            (unsigned long long)k->unsupported, (unsigned long long)k->diagnostics, (unsigned long long)s->warnings,
            s->blocked ? "true" : "false");
    if (check) {
        fprintf(f, "\"checks\":{\"passed\":%llu,\"failed\":%llu,\"not_comparable\":%llu,\"bytes_compared\":%llu,"
                   "\"bytes_capture_only\":%llu,\"observed_bytes\":%llu,\"observed_bytes_compared\":%llu,\"coverage_pct\":",
                (unsigned long long)s->checks_passed, (unsigned long long)s->checks_failed,
                (unsigned long long)s->checks_skipped, (unsigned long long)s->bytes_compared,
                (unsigned long long)s->bytes_capture_only, (unsigned long long)s->observed_bytes,
                (unsigned long long)s->observed_bytes_compared);
        if (s->observed_bytes) fprintf(f, "%.17g},", 100.0 * (double)s->observed_bytes_compared / (double)s->observed_bytes);
        else fputs("null},", f);
    }
    if (check && min) {
        fputs("\"min_coverage\":{\"requested\":", f);
        vgt_json_string(f, min->text);
        fprintf(f, ",\"pct\":%.17g,\"met\":%s},", vgt_coverage_min_pct(min), coverage_short(s, check, min) ? "false" : "true");
    }
    fprintf(f, "\"refused\":%llu,\"synth_refused\":%llu,", (unsigned long long)s->refused,
            (unsigned long long)s->synth_refused);
    fprintf(f, "\"lanes\":{\"verbatim\":%llu,\"synth\":%llu,\"cuda\":%llu},", (unsigned long long)s->lanes[VGT_LANE_VERBATIM],
            (unsigned long long)s->lanes[VGT_LANE_SYNTH], (unsigned long long)s->lanes[VGT_LANE_CUDA]);
    fprintf(f, "\"cuda\":{\"forwarded\":%llu,\"skipped\":%llu,\"graphs_not_run\":%llu,\"params_relocated\":%llu,"
               "\"ranges_kept\":%llu,\"ranges_moved\":%llu},",
            (unsigned long long)s->cuda_forwarded, (unsigned long long)s->cuda_skipped,
            (unsigned long long)s->cuda_graphs_not_run, (unsigned long long)s->cuda_params_relocated,
            (unsigned long long)s->cuda_ranges_kept, (unsigned long long)s->cuda_ranges_moved);
    fprintf(f, "\"replay_span_ns\":%llu,\"capture_span_ns\":%llu,", (unsigned long long)s->replay_span_ns,
            (unsigned long long)s->capture_span_ns);
    fprintf(f, "\"addresses\":{\"relocations\":%llu,\"operands_rewritten\":%llu,\"entries_rewritten\":%llu,"
               "\"aliases\":%llu,\"aliases_not_reproduced\":%llu},",
            (unsigned long long)s->relocations, (unsigned long long)s->operands_rewritten,
            (unsigned long long)s->entries_rewritten, (unsigned long long)s->aliases,
            (unsigned long long)s->aliases_unreproduced);
    fputs("\"note\":", f);
    vgt_json_string(f, s->limits_note ? s->limits_note : "");
    if (finish_msg) {
        fputs(trace_error ? ",\"error\":" : ",\"finish\":", f);
        vgt_json_string(f, finish_msg);
    }
    live_print_json(&c->live, s, f);
    fprintf(f, ",\"reports_dropped\":%llu,\"reports\":[", (unsigned long long)c->dropped);
    for (uint64_t i = 0; i < c->nlines; i++) fprintf(f, "%s%s", i ? "," : "", c->lines[i]);
    char why[512];
    int failed = result_why(s, check, min, why, sizeof why);
    if (trace_error) snprintf(why, sizeof why, "the trace could not be read to its end");
    fputs("]", f);
    if ((failed || trace_error) && why[0]) {
        fputs(",\"why\":", f);
        vgt_json_string(f, why);
    }
    fprintf(f, ",\"result\":\"%s\"}\n", failed || trace_error ? "failed" : "ok");
}

static int parse_dump(const char *s, dump_req *d)
{
    const char *c1 = strchr(s, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    char a[64], b[64];
    if (!c1 || !c2 || c1 - s >= 64 || c2 - c1 - 1 >= 64 || !c2[1]) return -1;
    memcpy(a, s, (size_t)(c1 - s));
    a[c1 - s] = '\0';
    memcpy(b, c1 + 1, (size_t)(c2 - c1 - 1));
    b[c2 - c1 - 1] = '\0';
    d->path = c2 + 1;
    return vgt_parse_u64(a, &d->va) || vgt_parse_u64(b, &d->len) || d->len == 0 || d->len > MAX_DUMP_BYTES ? -1 : 0;
}

static int write_dump(vgt_replay *rp, const dump_req *d)
{
    uint8_t *buf = malloc(d->len);
    vgt_error err;
    if (!buf) return vgt_cli_error("replay", VGT_EXIT_USAGE, "--dump: no memory for %llu bytes", (unsigned long long)d->len);
    if (vgt_replay_read(rp, d->va, buf, d->len, &err) != VGT_OK) {
        free(buf);
        return vgt_cli_error("replay", VGT_EXIT_PROBLEM, "--dump 0x%llx:%llu: %s", (unsigned long long)d->va,
                             (unsigned long long)d->len, err.msg);
    }
    /* beside FILE, renamed over it once complete; a device or FIFO is written to */
    vgt_outfile of;
    FILE *f = vgt_outfile_open(&of, d->path, VGT_OUT_NO_STDOUT, &err) == VGT_OK ? vgt_outfile_stdio(&of, &err) : NULL;
    if (f && fwrite(buf, 1, d->len, f) != d->len) {
        VGT_FAIL(&err, VGT_E_IO, VGT_NO_OFFSET, "writing '%s' failed: %s", d->path, strerror(errno));
        vgt_outfile_discard(&of);
        f = NULL;
    } else if (f && vgt_outfile_commit(&of, &err) != VGT_OK) {
        f = NULL;
    } else if (!f && of.kind) {
        vgt_outfile_discard(&of);
    }
    free(buf);
    if (!f) return vgt_cli_error("replay", VGT_EXIT_USAGE, "--dump: %s", err.msg);
    return VGT_EXIT_OK;
}

static int write_state(vgt_replay *rp, const char *path)
{
    vgt_error err;
    vgt_outfile of;
    FILE *f = vgt_outfile_open(&of, path, VGT_OUT_NO_STDOUT, &err) == VGT_OK ? vgt_outfile_stdio(&of, &err) : NULL;
    if (f && vgt_replay_dump_state(rp, f, &err) != VGT_OK) {
        vgt_outfile_discard(&of);
        return vgt_cli_error("replay", VGT_EXIT_PROBLEM, "--dump-state: %s", err.msg);
    }
    if (f && vgt_outfile_commit(&of, &err) == VGT_OK) return VGT_EXIT_OK;
    if (f || of.kind) vgt_outfile_discard(&of);
    return vgt_cli_error("replay", VGT_EXIT_USAGE, "--dump-state: %s", err.msg);
}

typedef struct args {
    const char *trace, *backend, *lane;
    vgt_range submits;
    int check, json, quiet, verbose, prefix_state, force;
    dump_req dumps[MAX_DUMPS];
    int ndumps;
    rt_dump_req rt_dumps[MAX_RT_DUMPS];
    int nrt_dumps, list_rt, census, census_per_draw, plan, no_wait;
    const char *census_json, *dump_state;
    uint64_t reserved_va, submit_timeout_ms;
    int subcontexts;   /* enum vgt_backend_subcontexts */
    uint64_t relocate[MAX_RELOCATE];
    uint32_t nrelocate;
    vgt_coverage_min min_coverage;
    int has_min_coverage;
    int follow, live;
    int wait;          /* wait_modes: 0 auto, 1 each, 2 demand */
    const char *latency;
} args;

/* ---- options whose values need more than their kind's check (apply callbacks of the table) ---- */

static int opt_min_coverage(void *opts, const char *v)
{
    args *a = opts;
    if (vgt_coverage_parse(v, &a->min_coverage))
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--min-coverage '%s' is not a percentage 0..100 (e.g. 50 "
                             "or 0.5%%) or a fraction N/D", v);
    a->has_min_coverage = 1;
    return 0;
}

static int opt_dump(void *opts, const char *v)
{
    args *a = opts;
    if (a->ndumps == MAX_DUMPS) return vgt_cli_error("replay", VGT_EXIT_USAGE, "at most %d --dump", MAX_DUMPS);
    if (parse_dump(v, &a->dumps[a->ndumps]))
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--dump '%s' is not VA:LEN:FILE (LEN 1..%llu)", v, MAX_DUMP_BYTES);
    a->ndumps++;
    return 0;
}

static int opt_dump_rt(void *opts, const char *v)
{
    args *a = opts;
    if (a->nrt_dumps == MAX_RT_DUMPS) return vgt_cli_error("replay", VGT_EXIT_USAGE, "at most %d --dump-rt", MAX_RT_DUMPS);
    if (rt_dump_parse(v, &a->rt_dumps[a->nrt_dumps]))
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--dump-rt '%s' is not N:FILE.png (N < %d)", v, VGT_RT_MAX);
    a->nrt_dumps++;
    return 0;
}

static int opt_expect_hash(void *opts, const char *v)
{
    args *a = opts;
    if (!a->nrt_dumps) return vgt_cli_error("replay", VGT_EXIT_USAGE, "--expect-hash follows a --dump-rt");
    char hex[40];
    snprintf(hex, sizeof hex, "0x%s", v);
    rt_dump_req *r = &a->rt_dumps[a->nrt_dumps - 1];
    if (vgt_parse_u64(strncmp(v, "0x", 2) ? hex : v, &r->expect))
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--expect-hash '%s' is not hexadecimal", v);
    r->has_expect = 1;
    return 0;
}

static int opt_relocate(void *opts, const char *v)
{
    args *a = opts;
    if (a->nrelocate == MAX_RELOCATE) return vgt_cli_error("replay", VGT_EXIT_USAGE, "at most %d --relocate", MAX_RELOCATE);
    if (vgt_parse_u64(v, &a->relocate[a->nrelocate]))
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--relocate '%s' is not a VA", v);
    a->nrelocate++;
    return 0;
}

static const char *const prefix_modes[] = {"run", "state", NULL};
static const char *const wait_modes[] = {"auto", "each", "demand", NULL};
static const char *const subcontext_modes[] = {"captured", "group", "tsg", NULL};   /* enum vgt_backend_subcontexts */

#define A(field) .off = offsetof(args, field)
static const vgt_cli_opt replay_options[] = {
    {"backend", 0, VGT_ARG_STRING, "NAME", "sim (software front end), gpu (H200 through RM/UVM), cuda (the host's libcuda: lane cuda)",
     A(backend)},
    {"lane", 0, VGT_ARG_STRING, "NAME", "verbatim (captured push buffers at captured VAs), synth (each submission's work "
     "rebuilt into a fresh push buffer, checked by decoding it back), cuda (the captured CUDA calls forwarded through "
     "libcuda; backend cuda by default), auto (default: the first the backend runs; on the GPU verbatim, synth where "
     "verbatim must not run)",
     A(lane)},
    VGT_OPT_SUBMITS(args, submits, "replay and check submissions A..B (0-based); reading stops after B; a window "
                    "outside the trace is an error (exit 2, after the replay)"),
    {"prefix", 0, VGT_ARG_ENUM, "MODE", "what happens to submissions before A: run (default: executed unchecked, so A "
     "starts from the state they leave) or state (bindings and macros only, no work)", A(prefix_state),
     .choices = prefix_modes},
    {"check", 0, VGT_ARG_NONE, NULL, "after each submission compare replayed memory with the trace's observed contents "
     "(SEMAPHORE records, MEMORY observed, and MEMORY changed for bytes the submission wrote), wherever the backend can "
     "produce them; report per submission, and the coverage: how many of the observed bytes were compared. Observed "
     "bytes: the bytes of the SEMAPHORE and MEMORY observed records that follow a replayed submission (what the capture "
     "read back of the GPU's results); a byte is compared when the backend produced it and it is neither volatile "
     "(timestamps, report counters) nor written only by the captured driver. MEMORY changed bytes compared are counted "
     "apart (they are snapshots the CPU writes too)", A(check)},
    {"min-coverage", 0, VGT_ARG_STRING, "PCT", "with --check: fail (exit 1) when less than PCT percent of the observed "
     "bytes were compared (0..100, e.g. 50 or 0.5%; N/D: an exact fraction, e.g. 12/2179072)",
     .apply = opt_min_coverage},
    {"dump", 0, VGT_ARG_STRING, "VA:LEN:FILE", "write LEN bytes of replayed memory at VA to FILE at the end",
     .apply = opt_dump, .flags = VGT_OPT_REPEAT},
    {"dump-rt", 0, VGT_ARG_STRING, "N:FILE.png", "write render target N (decoded SET_COLOR_TARGET_* state, --list-rt) "
     "as PNG, de-swizzled when block-linear; prints covered pixels and the FNV-1a 64 pixel hash", .apply = opt_dump_rt,
     .flags = VGT_OPT_REPEAT},
    {"expect-hash", 0, VGT_ARG_STRING, "HEX", "the hash the preceding --dump-rt must have (rows either way up): else "
     "exit 1", .apply = opt_expect_hash, .flags = VGT_OPT_REPEAT},
    {"list-rt", 0, VGT_ARG_NONE, NULL, "list the render targets the replay bound", A(list_rt)},
    {"census", 0, VGT_ARG_NONE, NULL, "store census: read back, around each submission, the pages the trace observes "
     "and the render targets; print which changed (pages, bytes, px0: a target's first pixel)", A(census)},
    {"census-json", 0, VGT_ARG_PATH, "FILE", "the census rows as JSON lines (the stores table of `vgt db`)",
     A(census_json)},
    {"census-per-draw", 0, VGT_ARG_NONE, NULL, "the census after each draw and launch (implies --census): each "
     "submission is cut after the method that issued each draw (numbered as `vgt draws` does), each piece waited for "
     "and read back, so that every row names its draws. A trace file only (not a stream)", A(census_per_draw)},
    {"dump-state", 0, VGT_ARG_PATH, "FILE", "the end state as JSON lines, alike on every backend (for comparing "
     "two replays): the value of each semaphore the trace observes and an FNV-1a 64 hash per 256 bytes of each "
     "range it observes; what the backend did not model (sim: bytes shaders may have written) is marked unknown",
     A(dump_state)},
    {"submit-timeout", 0, VGT_ARG_U64, "MS", "hardware: wait at most MS for each submission (default 5000)",
     A(submit_timeout_ms), .min = 1, .max = 3600000},
    {"no-wait", 0, VGT_ARG_NONE, NULL, "hardware: do not wait after each submission (speed runs; checks then race)",
     A(no_wait)},
    {"wait", 0, VGT_ARG_ENUM, "WHEN", "hardware: when the replay waits for the GPU to finish what it submitted: each "
     "(after each submission), demand (only when something needs it finished: a check or the census reading memory, "
     "a host write, a push buffer written over one still in flight, an unmap; the next doorbell rings without waiting "
     "for the GPU; a fault may then be reported against a later submission; only for a GPU the replay has to "
     "itself: with another process's work on it, launches that depend on each other in flight together have run "
     "out of order on the H200), auto (default: each, --live too)", A(wait), .choices = wait_modes},
    {"reserved-va", 0, VGT_ARG_U64, "VA", "hardware: where the backend's own buffers go (default planned off the "
     "trace's VAs)", A(reserved_va), .what = "VA"},
    {"subcontexts", 0, VGT_ARG_ENUM, "M", "hardware: channels of one captured channel group go in one TSG, each "
     "captured context share its own subcontext (captured, default); or all on one subcontext (group); or each channel "
     "in a TSG of its own (tsg). For diagnosis", A(subcontexts), .choices = subcontext_modes},
    {"relocate", 0, VGT_ARG_STRING, "VA", "move the mapping that contains captured VA VA to a new VA: every address "
     "operand and GPFIFO entry pointing into it is rewritten and reported; for diagnosis, and for hardware that "
     "refuses a VA. Mappings that are not 4 KiB aligned or overlap one of another captured VA space move without "
     "being asked", .apply = opt_relocate, .flags = VGT_OPT_REPEAT},
    {"plan", 0, VGT_ARG_NONE, NULL, "print the lane-1 address plan (relocations) before replaying", A(plan)},
    {"force", 0, VGT_ARG_NONE, NULL, "hardware: run what is refused otherwise, because it raises engine exceptions "
     "that can leave the GPU unable to finish other programs' draws: a trace marked synthetic (placeholder shader "
     "code) or derived (identity derived_from: edited to provoke a fault, as the corpus's lint traces are), and "
     "submissions whose macro calls the MME simulator predicts to raise ILLEGAL_OPCODE", A(force)},
    VGT_OPT_FOLLOW(args, follow),
    {"live", 0, VGT_ARG_NONE, NULL, "the trace is being recorded while it is replayed (a pipe from `vgt record -o -`; "
     "what `vgt record --replay` runs): nothing waits for its end. Each record is replayed as it comes (the backend "
     "opens at once, so the program's setup is set up during its own start-up); with --census, --plan or --relocate "
     "the plan is made over the records before the first submission and the rest decided as it comes; checks are the same as on the finished trace, but --census watches "
     "the ranges the capture observes (at its end) only from when they are read (a warning says so). Shows the "
     "counters per channel on stderr when it is a terminal (submissions, launches, draws, macro calls, faults) and "
     "in the summary", A(live)},
    {"latency", 0, VGT_ARG_PATH, "FILE", "write one line per submission run: its capture timestamp (the doorbell the "
     "capture trapped), when the engine received it, when the lane started and when the replayed doorbell was rung "
     "(CLOCK_MONOTONIC, ns), the latency, when its chunk was read from the input and how long the engine waited for "
     "the GPU before it; the summary gives p50, p99 and max, and per stage. Meaningful when the trace is "
     "replayed while it is recorded on this machine", A(latency)},
    {"json", 0, VGT_ARG_NONE, NULL, "one JSON object at the end instead of text", A(json)},
    {"quiet", 0, VGT_ARG_NONE, NULL, "text: only mismatches, problems and the summary", A(quiet)},
    {"verbose", 0, VGT_ARG_NONE, NULL, "text: every message (otherwise at most 200 of each kind)", A(verbose)},
    {0}};
#undef A

const vgt_cli_spec cmd_replay_spec = {
    .verb = "replay", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = replay_options,
    .about = "Replay a trace (TRACE, or - for a stream on stdin, or a FIFO) on a backend: objects, channels, mappings "
             "and memory are rebuilt, then each submission runs on a lane. Without --backend the GPU is used when one is "
             "usable, sim otherwise (the choice is said on stderr).\n\n"
             "A stream gives the results of the finished file: when the replay plans (hardware, --census, --relocate, "
             "--plan) the engine holds the records back until the end of the trace, which needs its end (the capture "
             "observes ranges at its end). --live plans at the first submission instead (only when --census, --plan or "
             "--relocate asks for the plan) and says what can differ.",
    .notes = "exit: 0 ok, 1 a check failed / a fault / a channel never finished / coverage below --min-coverage, 2 "
             "usage or I/O error (also a --submits window outside the trace)",
};

static int parse_args(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->submits = VGT_RANGE_ALL;
    vgt_cli_args pos;
    int rc = vgt_cli_parse(&cmd_replay_spec, argc, argv, a, &pos);
    if (rc >= 0) return rc;
    a->trace = pos.pos[0];
    if (a->has_min_coverage && !a->check)
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--min-coverage needs --check (coverage is what the checks compared)");
    return -1;
}

static int open_reader(const char *path, int follow, vgt_reader **r, vgt_error *err)
{
    vgt_reader_options ro = {.streaming = follow, .verify_checksums = 1, .follow = follow};
    if (!strcmp(path, "-")) {
        ro.streaming = 1;
        return vgt_reader_open_fd(r, 0, 0, &ro, err) == VGT_OK ? 0 : -1;
    }
    return vgt_reader_open_path(r, path, &ro, err) == VGT_OK ? 0 : -1;
}

static void on_submitted(void *ctx, const vgt_replay_submitted *s) { live_submitted(&((cli *)ctx)->live, s); }

static int choose(const args *a, vgt_replay_options *o)
{
    if (!a->backend && a->lane && !strcmp(a->lane, "cuda")) {
        o->backend = vgt_backend_find("cuda");   /* lane 3 runs only there: no need to name it twice */
    } else if (a->backend) {
        o->backend = vgt_backend_find(a->backend);
        if (!o->backend)
            return vgt_cli_error("replay", VGT_EXIT_USAGE, "unknown backend '%s' (sim, gpu, cuda)", a->backend);
    } else {
        char why[VGT_ERROR_MSG_MAX];
        o->backend = vgt_backend_auto(why, sizeof why);
        if (why[0]) fprintf(stderr, "vgt replay: using backend %s (%s)\n", o->backend->name, why);
        else fprintf(stderr, "vgt replay: using backend %s\n", o->backend->name);
    }
    int lane = a->lane ? vgt_lane_from_name(a->lane) : VGT_LANE_AUTO;
    if (lane < 0) return vgt_cli_error("replay", VGT_EXIT_USAGE, "unknown lane '%s' (verbatim, synth, cuda, auto)", a->lane);
    o->lane = (vgt_lane)lane;
    return -1;
}

static int finish(vgt_replay *rp, const args *a, cli *c)
{
    vgt_error err;
    vgt_error_clear(&err);
    vgt_status rc = vgt_replay_finish(rp, &err);
    if (rc != VGT_OK && !a->json) fprintf(c->out, "  %s\n", err.msg);
    int code = VGT_EXIT_OK;
    for (int i = 0; i < a->ndumps; i++) {
        int r = write_dump(rp, &a->dumps[i]);
        if (r > code) code = r;
    }
    if (a->dump_state) {
        int r = write_state(rp, a->dump_state);
        if (r > code) code = r;
    }
    FILE *side = a->json ? stderr : c->out;   /* JSON keeps stdout to one object */
    if (a->list_rt) rt_list_print(rp, side);
    for (int i = 0; i < a->nrt_dumps; i++) {
        int r = rt_dump_write(rp, &a->rt_dumps[i], side);
        if (r > code) code = r;
    }
    if (a->census || a->census_per_draw) census_print(rp, side, a->verbose ? UINT64_MAX : MAX_CENSUS_TEXT_ROWS);
    if (a->census_json) {
        int r = census_write_jsonl(rp, a->census_json);
        if (r > code) code = r;
    }
    const vgt_replay_summary *s = vgt_replay_summary_get(rp);
    const vgt_coverage_min *min = a->has_min_coverage ? &a->min_coverage : NULL;
    int lrc = live_close(&c->live);
    if (lrc > code) code = lrc;
    if (a->json) print_summary_json(c->out, s, a->check, min, c, rc != VGT_OK ? err.msg : NULL, 0);
    else print_summary_text(c->out, s, a->check, min, c->hidden, NULL);
    if (!a->json) live_print_text(&c->live, s, c->out);
    if ((a->census || a->census_per_draw) && !a->json)
        fprintf(c->out, "  census: %u ranges (%llu bytes) watched, %llu bytes over the bound; %llu rows; %llu "
                        "submissions changed no watched byte\n",
                s->census_ranges, (unsigned long long)s->census_bytes, (unsigned long long)s->census_skipped_bytes,
                (unsigned long long)s->census_rows, (unsigned long long)s->census_quiet);
    if (a->census_per_draw && !a->json)
        fprintf(c->out, "  census per draw: %llu draws and launches read back after their piece, %llu of them "
                        "changed no watched byte; %llu reads inside submissions; %llu draws read before the GPU "
                        "finished their piece%s\n",
                (unsigned long long)s->census_draws, (unsigned long long)s->census_draws_quiet,
                (unsigned long long)s->census_pieces, (unsigned long long)s->census_draws_unfinished,
                s->census_draws_unfinished ? " (what they changed says nothing about what they store)" : "");
    if ((vgt_replay_summary_failed(s) || coverage_short(s, a->check, min)) && code == VGT_EXIT_OK) code = VGT_EXIT_PROBLEM;
    return code;
}

/* The engine's address plan, made before it replays anything (replay.h, options.on_plan): printed with
 * --plan, or when it has something to say; a --relocate VA in no mapping is said too. */
typedef struct plan_out {
    cli *c;
    const args *a;
} plan_out;

static void on_plan(void *ctx, const vgt_reloc_plan *p)
{
    const plan_out *po = ((cli *)ctx)->plan;
    const args *a = po->a;
    for (uint32_t k = 0; k < a->nrelocate; k++) {
        uint32_t i = 0;
        while (i < p->nmap_ranges && (a->relocate[k] < p->map_ranges[i].va ||
                                      a->relocate[k] - p->map_ranges[i].va >= p->map_ranges[i].len))
            i++;
        if (i == p->nmap_ranges)
            fprintf(stderr, "vgt replay: --relocate 0x%llx: no GPU_MAP of the trace contains it; nothing moves\n",
                    (unsigned long long)a->relocate[k]);
    }
    if (a->plan || (p->nnotes && !a->json)) plan_print(p, a->json ? stderr : po->c->out);
}

int cmd_replay(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0) return rc;
    vgt_replay_options o = vgt_replay_defaults();
    if ((rc = choose(&a, &o)) >= 0) return rc;
    cli c = {.json = a.json, .quiet = a.quiet, .verbose = a.verbose, .out = stdout};
    o.check = a.check;
    o.submits = a.submits;
    o.prefix_state_only = a.prefix_state;
    o.report = on_report;
    o.report_ctx = &c;
    o.census = a.census || a.census_json || a.census_per_draw;
    vgt_replay_draw_cut *cuts = NULL;
    if (a.census_per_draw) {
        /* the cuts come from a walk of the whole file before the replay: a stream cannot be read twice */
        if (!strcmp(a.trace, "-") || a.follow || a.live)
            return vgt_cli_error("replay", VGT_EXIT_USAGE, "--census-per-draw needs a trace file (not a stream, "
                                 "--follow or --live)");
        if ((rc = replay_draw_cuts(a.trace, &cuts, &o.ndraw_cuts)) >= 0) return rc;
        o.draw_cuts = cuts;
    }
    o.dump_state = a.dump_state != NULL;
    o.track_render_targets = a.list_rt || a.nrt_dumps || o.census;
    o.no_wait = a.no_wait;
    o.force = a.force;
    o.submit_timeout_ms = (uint32_t)a.submit_timeout_ms;
    /* planning is the engine's (it holds records back, so a stream and a file are planned alike) */
    o.plan = a.plan;
    o.on_plan = on_plan;
    o.backend_cfg.reserved_va = a.reserved_va;
    o.backend_cfg.subcontexts = a.subcontexts;
    o.relocate = a.relocate;
    o.nrelocate = a.nrelocate;
    o.live = a.live;
    /* each unless asked: a live replay shares the GPU with the program it follows, and with that program's
     * work beside it, many_launches' kernels (each launch ordered after the one before by dependent QMDs)
     * ran out of order on the H200 whenever two of the replay's submissions were in flight together
     * (replay/README.md, "Waiting for the GPU") */
    o.wait_demand = a.wait == 2;
    plan_out po = {&c, &a};
    c.plan = &po;
    o.progress = on_progress;
    o.progress_ctx = &c.progress;
    int tty = a.live && isatty(STDERR_FILENO);
    if ((rc = live_open(&c.live, a.latency, tty))) {
        free(cuts);
        return rc;
    }
    if (a.latency || tty) o.on_submitted = on_submitted;
    o.channel_counters = a.live;
    vgt_error err;
    vgt_reader *r = NULL;
    vgt_replay *rp = NULL;
    /* a trace marked synthetic or derived is refused before the GPU is even opened */
    if (open_reader(a.trace, a.follow, &r, &err) || vgt_replay_admit(r, o.backend, o.force, &err) != VGT_OK ||
        vgt_replay_open(&rp, &o, &err) != VGT_OK) {
        vgt_reader_close(r);
        live_free(&c.live);
        free(cuts);
        return vgt_cli_report("replay", &err);
    }
    c.live.rp = rp;
    /* a stream that must be planned is held back to its end (the census and the plan need it): said, since
     * nothing runs until then; --live plans at the first submission instead */
    int stream = !strcmp(a.trace, "-") || a.follow || !vgt_reader_info(r)->file_size;
    if (stream && !a.live && ((o.backend->caps() & VGT_CAP_ASYNC) || o.census || a.plan || a.nrelocate))
        fprintf(stderr, "vgt replay: note: the replay is planned over the whole trace, so it starts at the end of the "
                "stream (--live starts at once)\n");
    /* one thing at a time on the terminal: the live counters (a growing stream has no end to measure
     * against) replace the progress line */
    vgt_progress_begin_file(&c.progress, "replay", a.trace, a.quiet || tty);
    vgt_status run_rc = vgt_replay_run(rp, r, &err);
    vgt_progress_end(&c.progress);
    if (run_rc != VGT_OK) {
        /* the trace itself is broken: what ran so far is still summarized */
        rc = vgt_cli_report("replay", &err);
        vgt_replay_finish(rp, NULL);
        const vgt_coverage_min *min = a.has_min_coverage ? &a.min_coverage : NULL;
        if (a.json) print_summary_json(stdout, vgt_replay_summary_get(rp), a.check, min, &c, err.msg, 1);
        else print_summary_text(stdout, vgt_replay_summary_get(rp), a.check, min, c.hidden, err.msg);
    } else {
        rc = finish(rp, &a, &c);
        int w = vgt_cli_window_check("replay", "--submits", &a.submits, vgt_replay_summary_get(rp)->submissions,
                                     "submissions");
        if (w) rc = w;   /* the window named submissions the trace lacks: said after the summary */
    }
    live_free(&c.live);
    vgt_replay_close(rp);
    vgt_reader_close(r);
    free(cuts);
    for (uint64_t i = 0; i < c.nlines; i++) free(c.lines[i]);
    free(c.lines);
    return rc;
}
