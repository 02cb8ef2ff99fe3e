/* decode.c: `vgt decode TRACE`: every submission, GPFIFO entry and method of a trace, named from the class
 * tables, with the semantic events (launches, uploads, copies, semaphores, draws) in line, as text or JSONL.
 *
 *   submit 3 seq 41 channel 0xcafe0001 client 0xc1d00001 HOPPER_CHANNEL_GPFIFO_A gp_put 2..4 entries 2 segments 1
 *     entry 0 va 0x200001000 dwords 12 main
 *       41:0:1       s1 HOPPER_COMPUTE_A           0x02000100 SEND_PCAS_A = QMD_ADDRESS_SHIFTED8=0x2000100
 *       => LAUNCH qmd=0x200010000 ...
 *       !! 41:0:12 COUNT_PAST_SEGMENT: count runs past segment end at entry 0 dword 12: ...
 *
 * Every method line starts with its position seq:entry:dword (the record's sequence number, the GPFIFO
 * entry within the submission, the dword within the entry's push buffer), so lines can be grepped alone.
 * The walker (vgt/walk.h) decodes every submission for state; filters only choose what is printed.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/events.h"
#include "vgt/mme_trace.h"
#include "vgt/walk.h"
#include "budget_report.h"
#include "walk_filter.h"

static const char decode_about[] =
    "Decode every submission of a trace (\"-\": a trace stream on stdin): the GPFIFO entries, each method with its "
    "class and decoded fields (from the class tables), and the launches, uploads, copies, semaphores and draws they "
    "make (\"=>\"). Diagnostics (\"!!\") are printed where they occur. A method line reads\n"
    "    SEQ:ENTRY:DWORD  sSUBCH CLASS  DATA NAME(INDEX) = FIELD=VALUE, ...\n"
    "(the submission record's sequence number, the GPFIFO entry in it, the dword in that entry's push buffer). "
    "Without filters, channel and engine-object records are listed as they come. A trace cut out of a longer one "
    "(vgt slice) restores each channel's engine state first: those writes are printed under a \"state preamble\" "
    "header, their position SEQ:0:N (the CHANNEL_METHODS record, write N).";

#define MAX_METHOD_FILTERS 16

typedef struct decode_opts {
    int jsonl, no_fields, no_events, expand_macros, quiet;
    int nmethods;
    const char *methods[MAX_METHOD_FILTERS];
    walk_filter filter;
} decode_opts;

typedef struct decoder {
    decode_opts o;
    FILE *out;
    const vgt_model *model;
    const vgt_walk_submit *cur;   /* the submission being decoded */
    int any_filter;
    int printing;                 /* the method being fed to the tracker was printed (events follow it) */
    uint64_t problems;
    uint64_t diag_count[16];
    vgt_error sem_err;
    int sem_failed;
    vgt_mme_trace *mme;           /* --expand-macros */
    uint64_t preamble_seq;        /* seq + 1 of the CHANNEL_METHODS whose header was printed last; 0 none */
    vgt_progress progress;        /* bytes of the trace read, on a terminal (output to a file or pipe) */
} decoder;

/* ---- filters ---- */

static int method_matches(const decoder *d, const vgt_method *m)
{
    if (!d->o.nmethods) return 1;
    uint32_t index = 0;
    const vgt_method_info *info = vgt_class_method(vgt_class_find(m->cls), m->mthd, &index);
    char indexed[128];
    if (info) snprintf(indexed, sizeof indexed, "%s(%u)", info->name, index);
    for (int i = 0; i < d->o.nmethods; i++) {
        const char *pat = d->o.methods[i];
        uint64_t addr;
        if (!vgt_parse_u64(pat, &addr)) {
            if (addr == m->mthd) return 1;
            continue;
        }
        if (!info) continue;
        if (!fnmatch(pat, info->name, FNM_CASEFOLD) || (info->stride && !fnmatch(pat, indexed, FNM_CASEFOLD)))
            return 1;
    }
    return 0;
}

/* ---- text and JSON lines ---- */

static const char *class_label(uint32_t cls, char *buf, size_t size)
{
    if (!cls) return "?";
    return vgt_class_name(cls, buf, size);
}

static void print_submit(decoder *d, const vgt_walk_submit *s)
{
    const vgt_rec_gpfifo_submit *u = s->sub;
    char cb[32];
    if (d->o.jsonl) {
        fprintf(d->out,
                "{\"type\":\"submit\",\"index\":%llu,\"seq\":%llu,\"client\":%u,\"channel\":%u,\"class\":%u,\"class_name\":\"%s\","
                "\"gp_put_before\":%u,\"gp_put_after\":%u,\"entries\":%u,\"segments\":%u,\"flags\":%u}\n",
                (unsigned long long)s->index, (unsigned long long)s->seq, u->client, u->channel, s->chan->cls,
                class_label(s->chan->cls, cb, sizeof cb), u->gp_put_before, u->gp_put_after, u->entry_count,
                u->segment_count, u->flags);
        return;
    }
    fprintf(d->out, "submit %llu seq %llu channel 0x%08x client 0x%08x %s gp_put %u..%u entries %u segments %u%s\n",
            (unsigned long long)s->index, (unsigned long long)s->seq, u->channel, u->client,
            class_label(s->chan->cls, cb, sizeof cb), u->gp_put_before, u->gp_put_after, u->entry_count, u->segment_count,
            (u->flags & VGT_SUBMIT_FLAG_SEGMENT_TRUNCATED) ? " (segments truncated)" : "");
}

static void print_entry(decoder *d, const vgt_walk_submit *s, const vgt_gp_entry *e, uint32_t index)
{
    const char *op = e->is_control ? vgt_gp_opcode_name(e->opcode) : NULL;
    if (d->o.jsonl) {
        fprintf(d->out, "{\"type\":\"entry\",\"seq\":%llu,\"entry\":%u,\"raw\":%llu,", (unsigned long long)s->seq, index,
                (unsigned long long)e->raw);
        if (e->is_control)
            fprintf(d->out, "\"control\":\"%s\",\"opcode\":%u,\"operand\":%u}\n", op ? op : "UNKNOWN", e->opcode, e->operand);
        else
            fprintf(d->out, "\"va\":%llu,\"length\":%u,\"level\":%u,\"sync\":%u,\"fetch\":%u}\n", (unsigned long long)e->va,
                    e->length, e->level, e->sync, e->fetch);
        return;
    }
    if (e->is_control)
        fprintf(d->out, "  entry %u control %s operand 0x%x\n", index, op ? op : "UNKNOWN", e->operand);
    else
        fprintf(d->out, "  entry %u va 0x%llx dwords %u %s%s%s\n", index, (unsigned long long)e->va, e->length,
                e->level ? "subroutine" : "main", e->sync ? " sync" : "", e->fetch ? " conditional-fetch" : "");
}

/* Decimal digits of v at p; returns the end. */
static char *put_dec(char *p, uint64_t v)
{
    char t[24];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) *p++ = t[--n];
    return p;
}

static void print_method_json(decoder *d, const vgt_method *m, const char *cls, const char *type)
{
    char text[2048];
    size_t n = vgt_method_format_json(m->cls, m->mthd, m->data, text, sizeof text);
    if (n >= sizeof text) snprintf(text, sizeof text, "{\"method\":null,\"fields\":{}}");
    fprintf(d->out,
            "{\"type\":\"%s\",\"seq\":%llu,\"entry\":%u,\"dword\":%u,\"subch\":%u,\"class\":%u,\"class_name\":\"%s\","
            "\"mthd\":%u,\"data\":%u,\"kind\":\"%s\",\"first\":%u,\"masked\":%u,%s\n",
            type, (unsigned long long)m->pos.seq, m->pos.entry, m->pos.dword, m->subch, m->cls, cls, m->mthd, m->data,
            vgt_hdr_kind_name(m->kind), m->first, m->masked, text + 1);
}

/* "    seq:entry:dword  sN CLASS  DATA NAME = FIELDS": built by hand, the dumper's hot path. */
static void print_method(decoder *d, const vgt_method *m)
{
    char line[2300], cb[32], *p = line;
    const char *cls = class_label(m->cls, cb, sizeof cb);
    if (d->o.jsonl) {
        print_method_json(d, m, cls, d->cur && d->cur->preamble ? "state_method" : "method");
        return;
    }
    memcpy(p, "    ", 4);
    p += 4;
    char *pos = p;
    p = put_dec(p, m->pos.seq);
    *p++ = ':';
    p = put_dec(p, m->pos.entry);
    *p++ = ':';
    p = put_dec(p, m->pos.dword);
    while (p - pos < 12) *p++ = ' ';
    *p++ = ' ';
    *p++ = 's';
    *p++ = (char)('0' + (m->subch & 7u));
    *p++ = ' ';
    char *c = p;
    size_t cn = strlen(cls);
    memcpy(p, cls, cn);
    p += cn;
    while (p - c < 26) *p++ = ' ';
    *p++ = ' ';
    *p++ = '0';
    *p++ = 'x';
    for (int sh = 28; sh >= 0; sh -= 4) *p++ = "0123456789abcdef"[(m->data >> sh) & 15u];
    *p++ = ' ';
    size_t room = sizeof line - (size_t)(p - line) - 32;
    size_t n;
    if (d->o.no_fields)
        n = vgt_method_name(m->cls, m->mthd, p, room);
    else
        n = vgt_method_format(m->cls, m->mthd, m->data, p, room);
    p += n < room ? n : room - 1;
    if (m->masked) {
        memcpy(p, "  (masked off)", 14);
        p += 14;
    }
    *p++ = '\n';
    fwrite(line, 1, (size_t)(p - line), d->out);
}

static int is_problem(vgt_diag_kind k)
{
    return k == VGT_DIAG_ILLEGAL_HEADER || k == VGT_DIAG_ADDRESS_NOT_CAPTURED || k == VGT_DIAG_TRUNCATED_SEGMENT ||
           k == VGT_DIAG_CONTROL_ENTRY;
}

static void print_diag(decoder *d, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    if (d->o.jsonl) {
        fprintf(d->out, "{\"type\":\"diag\",\"kind\":\"%s\",\"seq\":%llu,\"entry\":%u,\"dword\":%u,\"problem\":%s,\"message\":",
                vgt_diag_kind_name(kind), (unsigned long long)pos->seq, pos->entry, pos->dword,
                is_problem(kind) ? "true" : "false");
        vgt_json_string(d->out, msg);
        fputs("}\n", d->out);
        return;
    }
    fprintf(d->out, "    !! %llu:%u:%u %s: %s\n", (unsigned long long)pos->seq, pos->entry, pos->dword,
            vgt_diag_kind_name(kind), msg);
}

static void print_record(decoder *d, const vgt_record *rec)
{
    vgt_error err;
    char cb[32];
    if (rec->type == VGT_REC_CHANNEL) {
        vgt_rec_channel c;
        if (vgt_decode_channel(rec, &c, &err) != VGT_OK) return;
        if (d->o.jsonl)
            fprintf(d->out, "{\"type\":\"channel\",\"seq\":%llu,\"client\":%u,\"handle\":%u,\"class\":%u,\"class_name\":\"%s\","
                            "\"ring_va\":%llu,\"entries\":%u}\n",
                    (unsigned long long)rec->seq, c.client, c.handle, c.cls, class_label(c.cls, cb, sizeof cb),
                    (unsigned long long)c.ring_va, c.entries);
        else
            fprintf(d->out, "channel 0x%08x client 0x%08x %s ring 0x%llx entries %u (seq %llu)\n", c.handle, c.client,
                    class_label(c.cls, cb, sizeof cb), (unsigned long long)c.ring_va, c.entries, (unsigned long long)rec->seq);
    } else if (rec->type == VGT_REC_ENGINE_OBJECT) {
        vgt_rec_engine_object o;
        if (vgt_decode_engine_object(rec, &o, &err) != VGT_OK) return;
        if (d->o.jsonl)
            fprintf(d->out, "{\"type\":\"object\",\"seq\":%llu,\"client\":%u,\"channel\":%u,\"handle\":%u,\"class\":%u,"
                            "\"class_name\":\"%s\"}\n",
                    (unsigned long long)rec->seq, o.client, o.channel, o.handle, o.cls, class_label(o.cls, cb, sizeof cb));
        else
            fprintf(d->out, "object 0x%08x %s on channel 0x%08x (seq %llu)\n", o.handle, class_label(o.cls, cb, sizeof cb),
                    o.channel, (unsigned long long)rec->seq);
    }
}

/* ---- walker callbacks ---- */

static void on_event(void *ctx, const vgt_event *ev)
{
    decoder *d = ctx;
    if (d->o.no_events || !d->cur || !d->cur->selected || !d->printing) return;
    if (d->o.jsonl) {
        vgt_event_print_json(d->out, ev);
        fputc('\n', d->out);
        return;
    }
    char text[1024];
    vgt_event_format(ev, text, sizeof text);
    fprintf(d->out, "    => %s\n", text);
}

static void on_channel(void *ctx, vgt_walk_channel *c)
{
    decoder *d = ctx;
    vgt_sem_config cfg = {.on_event = on_event, .ctx = d, .mem_read = vgt_sem_model_reader,
                          .mem_ctx = (void *)d->model, .keep_upload_bytes = 1};
    if (vgt_sem_attach(&c->user, &cfg, &d->sem_err) != VGT_OK) d->sem_failed = 1;   /* decode goes on without events */
}

static void on_channel_end(void *ctx, vgt_walk_channel *c)
{
    (void)ctx;
    vgt_sem_detach(&c->user);
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    decoder *d = ctx;
    d->model = model;
    if (d->mme) vgt_mme_trace_model(d->mme, model);
    if (!d->any_filter) print_record(d, rec);
    vgt_progress_set(&d->progress, rec->chunk_offset);
    return 0;
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    decoder *d = ctx;
    d->cur = s;
    if (s->selected && !d->o.nmethods) print_submit(d, s);
    return 0;
}

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    decoder *d = ctx;
    /* calls still collecting data end with the submission (their events first), then held events */
    if (d->mme && vgt_mme_trace_submit_end(d->mme, s, &d->sem_err) != VGT_OK) d->sem_failed = 1;
    d->printing = !d->o.nmethods;   /* events completed by the end of the submission */
    if (s->chan->user) vgt_sem_flush(s->chan->user);
    d->cur = NULL;
    return vgt_cli_out_failed(d->out);
}

static void on_entry(void *ctx, const vgt_walk_submit *s, const vgt_gp_entry *e, uint32_t index)
{
    decoder *d = ctx;
    if (s->selected && !d->o.nmethods) print_entry(d, s, e, index);
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    decoder *d = ctx;
    if (d->mme && vgt_mme_trace_method(d->mme, s, m, &d->sem_err) != VGT_OK) d->sem_failed = 1;
    d->printing = s->selected && method_matches(d, m);
    if (d->printing) print_method(d, m);
    if (s->chan->user && vgt_sem_method(s->chan->user, m, &d->sem_err) != VGT_OK) d->sem_failed = 1;
    return 0;
}

/* Format 1.1 CHANNEL_METHODS: the engine state a sliced trace restores before a channel's next submission.
 * Printed under a "state preamble" header (JSON: "state_preamble", then "state_method" lines), and fed
 * to the trackers like pushed methods, so later macro calls and copies resolve. */
static void print_preamble(decoder *d, const vgt_walk_submit *s)
{
    vgt_rec_channel_methods cm;
    vgt_error e;
    uint32_t n = vgt_decode_channel_methods(s->rec, &cm, &e) == VGT_OK ? vgt_channel_methods_count(&cm) : 0;
    if (d->o.jsonl)
        fprintf(d->out, "{\"type\":\"state_preamble\",\"seq\":%llu,\"channel\":%u,\"client\":%u,\"writes\":%u,"
                "\"before_submit\":%llu}\n", (unsigned long long)s->seq, s->chan->handle, s->chan->client, n,
                (unsigned long long)s->index);
    else
        fprintf(d->out, "state preamble seq %llu channel 0x%08x client 0x%08x writes %u (engine state restored before "
                "submit %llu; not submitted work)\n", (unsigned long long)s->seq, s->chan->handle, s->chan->client, n,
                (unsigned long long)s->index);
}

static int on_state_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    decoder *d = ctx;
    if (d->mme && vgt_mme_trace_method(d->mme, s, m, &d->sem_err) != VGT_OK) d->sem_failed = 1;
    d->printing = s->selected && method_matches(d, m);
    if (d->printing && d->preamble_seq != s->seq + 1) {
        print_preamble(d, s);
        d->preamble_seq = s->seq + 1;
    }
    d->cur = s;
    if (d->printing) print_method(d, m);
    d->cur = NULL;
    if (s->chan->user && vgt_sem_method(s->chan->user, m, &d->sem_err) != VGT_OK) d->sem_failed = 1;
    return 0;
}

static void on_diag(void *ctx, const vgt_walk_submit *s, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    decoder *d = ctx;
    if (!s->selected) return;
    if ((unsigned)kind < 16) d->diag_count[kind]++;
    if (is_problem(kind)) d->problems++;
    if (!d->o.nmethods) print_diag(d, kind, pos, msg);
}

/* --expand-macros: a completed macro call is printed (the call, its parameters, its emitted methods), then
 * its emissions go to the channel's tracker at the call's place in the stream, so the draws and launches
 * the macro issues are printed after it ("[macro call N]"; JSON: "origin":"macro"), as census counts them.
 * A call never spans submissions: its channel is the current submission's. */
static int on_macro_call(void *user, const vgt_mme_trace_call *call)
{
    decoder *d = user;
    vgt_mme_trace_print_expansion(d->out, d->o.jsonl, call);   /* an output error is seen by ferror below */
    const vgt_walk_submit *s = d->cur;
    if (!s || !s->chan->user || call->channel != s->chan->handle || call->client != s->chan->client) return 0;
    int printing = d->printing;
    d->printing = call->selected;
    if (vgt_sem_macro_call(s->chan->user, call, &d->sem_err) != VGT_OK) d->sem_failed = 1;
    d->printing = printing;
    return vgt_cli_out_failed(d->out);
}

/* ---- the verb ---- */

static int add_method(void *opts, const char *v)
{
    decode_opts *o = opts;
    if (o->nmethods == MAX_METHOD_FILTERS)
        return vgt_cli_error("decode", VGT_EXIT_USAGE, "at most %d --method filters", MAX_METHOD_FILTERS);
    o->methods[o->nmethods++] = v;
    return 0;
}

static const vgt_cli_opt decode_options[] = {
    {"jsonl", 0, VGT_ARG_NONE, NULL, "one JSON object a line: {\"type\":\"submit\"|\"entry\"|\"method\"|\"diag\"|"
     "\"channel\"|\"object\",...} and {\"event\":...} for semantic events", .off = offsetof(decode_opts, jsonl)},
    WALK_FILTER_OPTIONS(decode_opts, filter, "only submissions with these indices (0-based, in trace order; N, A..B, "
                        "A.. or ..B); a window outside the trace is an error (exit 2)",
                        "only submissions to channel handle H"),
    {"method", 0, VGT_ARG_STRING, "NAME", "only methods with this name (shell pattern, any case: 'SEM_*', "
     "'CALL_MME_MACRO(3)') or this byte address (0x2b4)", .apply = add_method, .flags = VGT_OPT_REPEAT},
    {"no-fields", 0, VGT_ARG_NONE, NULL, "print method names without their decoded fields (the raw data is always shown)",
     .off = offsetof(decode_opts, no_fields)},
    {"no-events", 0, VGT_ARG_NONE, NULL, "do not print semantic events", .off = offsetof(decode_opts, no_events)},
    {"expand-macros", 0, VGT_ARG_NONE, NULL, "after each MME macro call, the call (macro, version, name, parameters, "
     "outcome), the methods it emitted, decoded (\"    => \" lines; JSON: {\"type\":\"macro_call\",...}), and the "
     "events they make (a draw or launch a macro issues: \"[macro call N]\"; JSON: \"origin\":\"macro\")",
     .off = offsetof(decode_opts, expand_macros)},
    VGT_OPT_QUIET(decode_opts, quiet),
    {0}};

const vgt_cli_spec cmd_decode_spec = {
    .verb = "decode", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = decode_options, .about = decode_about,
    .notes = "exit: 0 decoded; 1 the trace is unreadable, or the decoder met an illegal header, an entry outside the "
             "captured push buffers, a truncated segment or an unknown control entry, or the semantic decoders "
             "failed; 2 usage or I/O error (also a --submits window outside the trace, said after the output)",
};

static void print_summary(const decoder *d, const vgt_walk_stats *st)
{
    if (d->problems || d->sem_failed)
        fprintf(stderr, "vgt decode: %llu decoder problem(s) in %llu selected submission(s)%s%s\n",
                (unsigned long long)d->problems, (unsigned long long)st->selected_submits,
                d->sem_failed ? "; semantic decoding failed: " : "", d->sem_failed ? d->sem_err.msg : "");
}

int cmd_decode(int argc, char **argv)
{
    decoder d;
    memset(&d, 0, sizeof d);
    d.out = stdout;
    d.o.filter.submits = VGT_RANGE_ALL;
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_decode_spec, argc, argv, &d.o, &a);
    if (rc >= 0) return rc;
    vgt_walk_options wo = vgt_walk_defaults();
    walk_filter_apply(&cmd_decode_spec, &a, &d.o.filter, &wo);
    const char *path = a.pos[0];
    wo.deliver_unselected = 1;   /* the semantic trackers need every method of a channel */
    d.any_filter = wo.has_channel || wo.submit_first != 0 || wo.submit_last != UINT64_MAX || d.o.nmethods;
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    vgt_walk_callbacks cb = {.on_record = on_record, .on_channel = on_channel, .on_submit_begin = on_submit_begin,
                             .on_submit_end = on_submit_end, .on_entry = on_entry, .on_method = on_method,
                             .on_diag = on_diag, .on_channel_end = on_channel_end,
                             .on_state_method = on_state_method, .ctx = &d};
    vgt_walk_stats st;
    vgt_error err;
    vgt_mme_trace_config mc = {.on_call = on_macro_call, .user = &d};
    if (d.o.expand_macros && vgt_mme_trace_new(&mc, &d.mme, &err) != VGT_OK) return vgt_cli_report("decode", &err);
    /* the bar when the decode goes to a file or a pipe: on the terminal the output itself shows progress */
    vgt_progress_begin_file(&d.progress, "decode", path, d.o.quiet || isatty(1));
    vgt_status s = vgt_walk_path(path, &wo, &cb, &st, &err);   /* "-": stdin */
    vgt_progress_end(&d.progress);
    if (d.mme && s == VGT_OK && vgt_mme_trace_finish(d.mme, &d.sem_err) != VGT_OK) d.sem_failed = 1;
    int budget = s == VGT_OK && mme_budget_report("decode", d.mme);
    vgt_mme_trace_free(d.mme);
    /* a failed output stopped the walk: that is the error to report */
    if (vgt_cli_flush(stdout) != 0) return vgt_cli_check_output("decode", stdout, "standard output", VGT_EXIT_USAGE);
    if (s != VGT_OK) return vgt_cli_report("decode", &err);
    print_summary(&d, &st);
    if ((rc = walk_filter_check("decode", &d.o.filter, &st))) return rc;
    return d.problems || d.sem_failed || budget ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}
