/* mme.c: `vgt mme TRACE [--json] [--macro N] [--submits A..B] [--channel H] [--calls] [--expand]
 * [--no-disasm]`: the MME macro census of a trace: every macro version uploaded (channel, class, index,
 * start, length, content hash, the name derived from what it emits, disassembly), calls per macro per
 * submission, each call's emitted method stream decoded with the class tables, and simulator errors with
 * their pc and the call's position.
 *
 * One walk (vgt_mme_trace_run, mme_trace.h); calls are printed as they complete (--calls/--expand), the
 * macro table, the per-submission counts and the errors after the walk. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget_report.h"
#include "walk_filter.h"
#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/grow.h"
#include "vgt/mme_trace.h"

#define MME_MAX_ROWS (1u << 20)       /* (submission, macro version) count rows kept */
#define MME_MAX_ERRORS 1000u          /* error details kept; the total is always counted */

typedef struct sub_row {
    uint64_t submission, seq;
    uint32_t channel, index, version;   /* version UINT32_MAX: unbound */
    uint64_t calls;
    uint32_t categories;
} sub_row;

typedef struct err_row {
    uint64_t call, submission;
    vgt_mpos pos;
    uint32_t channel, index, version, pc;
    char what[48];
    char msg[200];
} err_row;

typedef struct mme_cli {
    int json, calls, expand, disasm, code;
    int has_macro;
    uint32_t macro;
    int first_call;
    sub_row *rows;
    uint32_t nrows, rows_cap, row_sub_start;   /* rows of the current submission start here */
    uint64_t rows_dropped;
    err_row errors[MME_MAX_ERRORS];
    uint32_t nerrors;
    uint64_t errors_total, calls_shown;
} mme_cli;

static void count_row(mme_cli *c, const vgt_mme_trace_call *k)
{
    uint32_t version = k->macro ? k->macro->id : UINT32_MAX;
    if (c->nrows && c->rows[c->nrows - 1].submission != k->submission) c->row_sub_start = c->nrows;
    for (uint32_t i = c->row_sub_start; i < c->nrows; i++) {
        sub_row *r = &c->rows[i];
        if (r->submission == k->submission && r->version == version && r->index == k->index && r->channel == k->channel) {
            r->calls++;
            r->categories |= k->categories;
            return;
        }
    }
    if (c->nrows == MME_MAX_ROWS || vgt_grow(&c->rows, &c->rows_cap, c->nrows + 1ull, 256)) {
        c->rows_dropped++;
        return;
    }
    c->rows[c->nrows++] = (sub_row){k->submission, k->seq, k->channel, k->index, version, 1, k->categories};
}

static void keep_error(mme_cli *c, const vgt_mme_trace_call *k)
{
    c->errors_total++;
    if (c->nerrors == MME_MAX_ERRORS) return;
    err_row *e = &c->errors[c->nerrors++];
    *e = (err_row){.call = k->id, .submission = k->submission, .pos = k->pos, .channel = k->channel,
                   .index = k->index, .version = k->macro ? k->macro->id : UINT32_MAX, .pc = k->result.pc};
    snprintf(e->what, sizeof e->what, "%s",
             k->status == VGT_E_DECODE ? vgt_mme_error_name(k->result.error) : vgt_status_name(k->status));
    snprintf(e->msg, sizeof e->msg, "%s", k->message);
}

static int on_call(void *user, const vgt_mme_trace_call *k)
{
    mme_cli *c = user;
    if (!k->selected || (c->has_macro && k->index != c->macro)) return 0;
    count_row(c, k);
    if (k->status != VGT_OK) keep_error(c, k);
    if (!c->calls && !c->expand) return 0;
    unsigned flags = VGT_MME_PRINT_PARAMS | (c->expand ? VGT_MME_PRINT_EMITS : 0);
    c->calls_shown++;
    if (c->json) {
        printf("%s", c->first_call ? "" : ",");
        vgt_mme_trace_print_call_json(stdout, k, flags);
        c->first_call = 0;
    } else {
        vgt_mme_trace_print_call(stdout, k, flags, "  ");
    }
    return vgt_cli_out_failed(stdout);   /* a lost output stops the run */
}

/* ---- after the walk -------------------------------------------------------------------------------- */
static void disasm_lines(const vgt_mme_trace_macro *v, int json, const char *indent)
{
    char line[512];
    uint32_t step = vgt_mme_inst_dwords(v->fmt);
    int first = 1;
    for (uint32_t at = 0; step && at + step <= v->dwords; at += step) {
        vgt_mme_disasm_line(v->fmt, v->code, v->dwords, 0, at, 0, line, sizeof line);
        if (json) {
            printf("%s", first ? "" : ",");
            vgt_json_string(stdout, line);
        } else {
            printf("%s%s\n", indent, line);
        }
        first = 0;
    }
}

static void print_macros(const mme_cli *c, const vgt_mme_trace *t)
{
    char buf[64];
    int first = 1;
    if (!c->json) printf("macros:\n");
    for (uint32_t i = 0; i < vgt_mme_trace_macro_count(t); i++) {
        const vgt_mme_trace_macro *v = vgt_mme_trace_macro_at(t, i);
        if (c->has_macro && v->index != c->macro) continue;
        const char *from;
        const char *name = vgt_mme_trace_macro_name(v, &from);
        const char *cls = vgt_class_name(v->cls, buf, sizeof buf);
        if (c->json) {
            printf("%s{\"version\":%u,\"client\":%u,\"channel\":%u,\"class\":%u,\"class_name\":", first ? "" : ",", v->id,
                   v->client, v->channel, v->cls);
            vgt_json_string(stdout, cls);
            printf(",\"format\":\"%s\",\"macro\":%u,\"start\":%u,\"start_dword\":%u,\"dwords\":%u,\"hash\":\"%016" PRIx64
                   "\",\"name\":",
                   vgt_mme_format_name(v->fmt), v->index, v->start, v->start_dword, v->dwords, v->hash);
            vgt_json_string(stdout, name);
            printf(",\"named_from\":\"%s\",\"static_categories\":%u", from, v->static_categories);
            printf(",\"first_submission\":%" PRIu64 ",\"first_seq\":%" PRIu64 ",\"calls\":%" PRIu64
                   ",\"call_errors\":%" PRIu64 ",\"emits\":%" PRIu64 ",\"categories\":%u",
                   v->first_submission, v->first_seq, v->calls, v->call_errors, v->emits, v->categories);
            if (c->code) {   /* the body's dwords as uploaded: what a hardware check uploads again */
                printf(",\"code\":[");
                for (uint32_t k = 0; k < v->dwords; k++) printf("%s%u", k ? "," : "", v->code[k]);
                putchar(']');
            }
            if (c->disasm) {
                printf(",\"disassembly\":[");
                disasm_lines(v, 1, "");
                putchar(']');
            }
            putchar('}');
        } else {
            printf("  version %u: channel 0x%x %s (%s) macro 0x%x start 0x%x (dword 0x%x) %u dwords hash %016" PRIx64
                   " \"%s\"%s\n    first seen submission %" PRIu64 " seq %" PRIu64 "; %" PRIu64 " calls (%" PRIu64
                   " with errors), %" PRIu64 " emits (all calls, whole walk)\n",
                   v->id, v->channel, cls, vgt_mme_format_name(v->fmt), v->index, v->start, v->start_dword, v->dwords,
                   v->hash, name, !strcmp(from, "code") ? " (from its code: never called)" : "", v->first_submission,
                   v->first_seq, v->calls, v->call_errors, v->emits);
            if (c->code)
                for (uint32_t k = 0; k < v->dwords; k++)
                    printf("%s%08x%s", k % 8 ? " " : "      code: ", v->code[k], k % 8 == 7 || k + 1 == v->dwords ? "\n" : "");
            if (c->disasm) disasm_lines(v, 0, "      ");
        }
        first = 0;
    }
}

static const char *row_name(const sub_row *r)
{
    return r->version == UINT32_MAX ? "unbound" : vgt_mme_macro_name(r->categories, 1);
}

static void print_rows(const mme_cli *c)
{
    if (!c->json) printf("calls per submission (selected):\n");
    for (uint32_t i = 0; i < c->nrows; i++) {
        const sub_row *r = &c->rows[i];
        if (c->json) {
            printf("%s{\"submission\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"channel\":%u,\"macro\":%u,\"version\":", i ? "," : "",
                   r->submission, r->seq, r->channel, r->index);
            if (r->version == UINT32_MAX) printf("null");
            else printf("%u", r->version);
            printf(",\"kind\":\"%s\",\"calls\":%" PRIu64 "}", row_name(r), r->calls);
        } else {
            printf("  submission %" PRIu64 " seq %" PRIu64 " channel 0x%x: macro 0x%x", r->submission, r->seq, r->channel,
                   r->index);
            if (r->version != UINT32_MAX) printf(" version %u", r->version);
            printf(" (%s) x%" PRIu64 "\n", row_name(r), r->calls);
        }
    }
}

typedef struct macro_count {
    uint64_t calls, submissions;
    uint32_t channel, categories;
} macro_count;

static void print_macro_count(const mme_cli *c, const vgt_mme_trace_macro *v, uint32_t index, const macro_count *k,
                              int first)
{
    const char *name = v ? vgt_mme_macro_name(k->categories, 1) : "unbound";
    if (c->json) {
        printf("%s{\"macro\":%u,\"version\":", first ? "" : ",", index);
        if (v) printf("%u", v->id);
        else printf("null");
        printf(",\"channel\":%u,\"kind\":\"%s\",\"calls\":%" PRIu64 ",\"submissions\":%" PRIu64 "}", k->channel,
               name, k->calls, k->submissions);
        return;
    }
    printf("  macro 0x%x", index);
    if (v) printf(" version %u", v->id);
    printf(" channel 0x%x (%s): %" PRIu64 " calls in %" PRIu64 " submissions\n", k->channel, name, k->calls,
           k->submissions);
}

/* Calls per macro version over the selected submissions, in version order; unbound calls per index. */
static void print_per_macro(const mme_cli *c, const vgt_mme_trace *t)
{
    uint32_t nv = vgt_mme_trace_macro_count(t);
    macro_count *k = calloc((size_t)nv + VGT_MME_MACRO_COUNT, sizeof *k);
    if (!c->json) printf("calls per macro (selected submissions):\n");
    if (!k) {
        fprintf(stderr, "vgt mme: no memory for the per-macro counts\n");
        return;
    }
    for (uint32_t i = 0; i < c->nrows; i++) {
        const sub_row *r = &c->rows[i];
        macro_count *m = &k[r->version == UINT32_MAX ? nv + r->index : r->version];   /* unbound: per index */
        m->calls += r->calls;
        m->submissions++;   /* rows are per (submission, version): one row, one submission */
        m->channel = r->channel;
        m->categories |= r->categories;
    }
    int first = 1;
    for (uint32_t i = 0; i < nv + VGT_MME_MACRO_COUNT; i++) {
        if (!k[i].calls) continue;
        const vgt_mme_trace_macro *v = i < nv ? vgt_mme_trace_macro_at(t, i) : NULL;
        print_macro_count(c, v, v ? v->index : i - nv, &k[i], first);
        first = 0;
    }
    free(k);
}

static void print_errors(const mme_cli *c)
{
    if (!c->json) printf("errors: %" PRIu64 "\n", c->errors_total);
    for (uint32_t i = 0; i < c->nerrors; i++) {
        const err_row *e = &c->errors[i];
        if (c->json) {
            printf("%s{\"call\":%" PRIu64 ",\"submission\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"entry\":%u,\"dword\":%u,"
                   "\"channel\":%u,\"macro\":%u,\"version\":",
                   i ? "," : "", e->call, e->submission, e->pos.seq, e->pos.entry, e->pos.dword, e->channel, e->index);
            if (e->version == UINT32_MAX) printf("null");
            else printf("%u", e->version);
            printf(",\"class\":\"%s\",\"pc\":%u,\"message\":", e->what, e->pc);
            vgt_json_string(stdout, e->msg);
            putchar('}');
        } else {
            printf("  call %" PRIu64 " macro 0x%x at %" PRIu64 ":%u:%u (submission %" PRIu64 "): %s at pc %u: %s\n", e->call,
                   e->index, e->pos.seq, e->pos.entry, e->pos.dword, e->submission, e->what, e->pc, e->msg);
        }
    }
    if (!c->json && c->errors_total > c->nerrors)
        printf("  ... %" PRIu64 " more not listed\n", c->errors_total - c->nerrors);
}

static void print_total_json(const mme_cli *c, const vgt_mme_trace_stats *s)
{
    printf("],\"errors_total\":%" PRIu64 ",\"total\":{\"objects\":%" PRIu64 ",\"channels\":%" PRIu64
           ",\"versions\":%" PRIu64
           ",\"calls\":%" PRIu64 ",\"selected_calls\":%" PRIu64 ",\"call_errors\":%" PRIu64 ",\"emits\":%" PRIu64
           ",\"unbound_calls\":%" PRIu64 ",\"unknown_emits\":%" PRIu64
           ",\"dropped_versions\":%" PRIu64 ",\"dma_errors\":%" PRIu64 ",\"orphan_data\":%" PRIu64
           ",\"rows_dropped\":%" PRIu64 ",\"params_left_calls\":%" PRIu64 "}}\n",
           c->errors_total, s->objects, s->channels, s->versions, s->calls, s->selected_calls, s->call_errors, s->emits,
           s->unbound_calls, s->unknown_emits, s->dropped_versions, s->dma_errors,
           s->orphan_data, c->rows_dropped, s->params_left_calls);
}

static void print_summary(const mme_cli *c, const vgt_mme_trace *t)
{
    const vgt_mme_trace_stats *s = vgt_mme_trace_stats_get(t);
    if (c->json) {
        printf("],\"macros\":[");
        print_macros(c, t);
        printf("],\"per_macro\":[");
        print_per_macro(c, t);
        printf("],\"per_submission\":[");
        print_rows(c);
        printf("],\"errors\":[");
        print_errors(c);
        print_total_json(c, s);
        return;
    }
    print_macros(c, t);
    print_per_macro(c, t);
    print_rows(c);
    print_errors(c);
    printf("total: %" PRIu64 " objects with an MME on %" PRIu64 " channels, %" PRIu64 " macro versions, %" PRIu64 " calls (%" PRIu64
           " in the selected submissions), %" PRIu64 " with errors, %" PRIu64 " emitted methods",
           s->objects, s->channels, s->versions, s->calls, s->selected_calls, s->call_errors, s->emits);
    if (s->unbound_calls) printf(", %" PRIu64 " calls of unbound macros", s->unbound_calls);
    if (s->unknown_emits) printf(", %" PRIu64 " emits of methods the class does not define", s->unknown_emits);
    if (s->dropped_versions) printf(", %" PRIu64 " versions not kept (registry full)", s->dropped_versions);
    if (s->dma_errors) printf(", %" PRIu64 " push-buffer MME DMA errors", s->dma_errors);
    if (s->orphan_data) printf(", %" PRIu64 " CALL_MME_DATA without a call", s->orphan_data);
    if (c->rows_dropped) printf(", %" PRIu64 " per-submission rows not kept", c->rows_dropped);
    /* not an error (the TU104 MME discards a call's unread parameters), but worth seeing: a driver's guard */
    if (s->params_left_calls) printf(", %" PRIu64 " calls left parameters unread", s->params_left_calls);
    putchar('\n');
}

typedef struct mme_args {
    int json, calls, expand, no_disasm, code;
    uint64_t macro;
    walk_filter filter;
} mme_args;

static const vgt_cli_opt mme_options[] = {
    {"json", 0, VGT_ARG_NONE, NULL, "one JSON document {\"calls\":[...],\"macros\":[...],\"per_macro\":[...],"
     "\"per_submission\":[...],\"errors\":[...],\"total\":{...}}", .off = offsetof(mme_args, json)},
    {"macro", 0, VGT_ARG_U64, "N", "only macro index N (calls, counts and versions)", .off = offsetof(mme_args, macro),
     .max = VGT_MME_MACRO_COUNT - 1, .what = "macro index"},
    WALK_FILTER_OPTIONS(mme_args, filter, "calls of submissions A..B (0-based GPFIFO_SUBMIT index; N, A..B, A.. or ..B); "
                        "uploads and calls before A are still simulated so that A sees the right state; a window "
                        "outside the trace is an error (exit 2)", "only calls on channel handle H"),
    {"calls", 0, VGT_ARG_NONE, NULL, "each call: position, parameters, emission count, outcome",
     .off = offsetof(mme_args, calls)},
    {"expand", 0, VGT_ARG_NONE, NULL, "each call with its emitted methods decoded (implies --calls)",
     .off = offsetof(mme_args, expand)},
    {"no-disasm", 0, VGT_ARG_NONE, NULL, "leave the disassembly out", .off = offsetof(mme_args, no_disasm)},
    {"code", 0, VGT_ARG_NONE, NULL, "each macro version's body as uploaded (dwords; JSON: \"code\", numbers)",
     .off = offsetof(mme_args, code)},
    {0}};

const vgt_cli_spec cmd_mme_spec = {
    .verb = "mme", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = mme_options,
    .about = "TRACE may be '-' (a stream on stdin). MME macros of a trace, per channel and class: every macro version "
             "uploaded (index, start, length, content hash, a name derived from what its calls emit: draw, clear, "
             "launch, constant-buffer update, inline upload, report, constant-buffer bind, state setter, ...) with its "
             "disassembly; calls per macro per submission; simulator errors with pc and position. Every "
             "CALL_MME_MACRO(j) runs the body bound to j at that moment, in the simulator, with the shadow state and "
             "DMA memory of the trace. Start addresses count instructions (TU104: 96-bit groups, shown with their "
             "dword); a channel's 3D and compute classes share one instruction RAM and each keeps its own start "
             "addresses.",
    .notes = "exit: 0 ok, 1 a selected call ended in a simulator error or the trace could not be read to the end, 2 "
             "usage or I/O error (also a --submits window outside the trace)",
};

int cmd_mme(int argc, char **argv)
{
    mme_args ma = {.filter.submits = VGT_RANGE_ALL};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_mme_spec, argc, argv, &ma, &a);
    if (rc >= 0) return rc;
    mme_cli *c = calloc(1, sizeof *c);
    if (!c) return vgt_cli_error("mme", VGT_EXIT_USAGE, "out of memory");
    c->json = ma.json;
    c->calls = ma.calls;
    c->expand = ma.expand;
    c->disasm = !ma.no_disasm;
    c->code = ma.code;
    c->has_macro = vgt_cli_given(&cmd_mme_spec, &a, "macro");
    c->macro = (uint32_t)ma.macro;
    c->first_call = 1;
    vgt_walk_options opt = vgt_walk_defaults();
    walk_filter_apply(&cmd_mme_spec, &a, &ma.filter, &opt);
    const char *path = a.pos[0];
    vgt_walk_stats wst = {0};

    vgt_mme_trace_config cfg = {.on_call = on_call, .user = c};
    vgt_mme_trace *t = NULL;
    vgt_error err;
    vgt_status st = vgt_mme_trace_new(&cfg, &t, &err);
    if (st == VGT_OK) {
        if (c->json) printf("{\"trace\":"), vgt_json_string(stdout, path), printf(",\"calls\":[");
        else if (c->calls || c->expand) printf("calls:\n");
        st = vgt_mme_trace_run(t, path, &opt, &wst, &err);
    }
    if (vgt_cli_out_failed(stdout)) {
        rc = vgt_cli_check_output("mme", stdout, "standard output", VGT_EXIT_USAGE);
    } else if (st != VGT_OK) {
        vgt_cli_flush(stdout);
        if (c->json && t) printf("]}\n");
        rc = vgt_cli_report("mme", &err);
    } else {
        print_summary(c, t);
        int budget = mme_budget_report("mme", t);
        rc = walk_filter_check("mme", &ma.filter, &wst);
        if (!rc) rc = c->errors_total || budget ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
    }
    vgt_mme_trace_free(t);
    free(c->rows);
    free(c);
    return rc;
}
