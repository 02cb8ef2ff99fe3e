/* launches.c: `vgt launches TRACE [--json] [--launch N] [--bytes] [--submits A..B] [--channel H]`: every
 * compute launch of a trace as a self-contained description (launch_desc.h: QMD, program, constant
 * buffers with their address-bearing words, the buffers those point into, grid/block/shared memory/
 * registers/barriers, releases, the compute class state in effect), and the copy-engine work (copies,
 * memsets, semaphore-only LAUNCH_DMAs). One walk; every submission is fed to the extractor (its tracker,
 * MME and state must be right when a selected one comes), only the selected ones are printed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget_report.h"
#include "walk_filter.h"
#include "vgt/cli.h"
#include "vgt/json.h"
#include "vgt/launch_desc.h"
#include "vgt/model.h"

typedef struct launches_cli {
    int json, bytes, has_launch;
    uint64_t launch;
    int selected;                 /* the submission being walked passes the filters */
    int first;
    int found;                    /* --launch N was printed */
    int found_problem;            /* ... and cannot be rebuilt */
    const vgt_model *model;
    vgt_ldx *x;
    vgt_status rc;
    vgt_error err;
    uint64_t counts[VGT_WORK_OTHER + 1];
    uint64_t not_rebuildable;
} launches_cli;

static void on_work(void *ctx, const vgt_work *w)
{
    launches_cli *c = ctx;
    if (!c->selected) return;
    c->counts[w->kind]++;
    if (w->kind == VGT_WORK_LAUNCH && w->launch->problem[0]) c->not_rebuildable++;
    if (c->has_launch) {
        if (w->kind != VGT_WORK_LAUNCH || w->launch->index != c->launch) return;
        c->found = 1;
        c->found_problem = w->launch->problem[0] != 0;
        if (c->json) {
            printf(",\"launch\":");
            vgt_launch_desc_print_json(stdout, w->launch, VGT_LD_PRINT_BYTES);
        } else {
            vgt_launch_desc_print_text(stdout, w->launch, VGT_LD_PRINT_BYTES);
        }
        return;
    }
    unsigned flags = c->bytes ? VGT_LD_PRINT_BYTES : 0;
    int launch = w->kind == VGT_WORK_LAUNCH || w->kind == VGT_WORK_EMPTY_DISPATCH;
    if (!launch && w->kind != VGT_WORK_COPY) return;
    if (c->json) {
        printf("%s", c->first ? "" : ",");
        if (launch) vgt_launch_desc_print_json(stdout, w->launch, flags);
        else vgt_work_copy_print_json(stdout, w);
        c->first = 0;
    } else if (launch) {
        vgt_launch_desc_print_text(stdout, w->launch, flags);
    } else {
        vgt_work_copy_print_text(stdout, w);
    }
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    launches_cli *c = ctx;
    c->model = model;
    vgt_ldx_walk_record(c->x, rec, model);
    return 0;
}

static void on_channel(void *ctx, vgt_walk_channel *chan)
{
    launches_cli *c = ctx;
    if (vgt_ldx_walk_channel(c->x, chan, &c->err) != VGT_OK) c->rc = c->err.code;
}

static void on_channel_end(void *ctx, vgt_walk_channel *chan)
{
    (void)ctx;
    vgt_ldx_walk_channel_end(chan);
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    launches_cli *c = ctx;
    c->selected = s->selected;
    if (s->chan->user) vgt_ldx_submit_begin(s->chan->user, s->index, s->seq);
    return c->rc != VGT_OK;
}

static int feed(launches_cli *c, const vgt_walk_submit *s, const vgt_method *m)
{
    if (s->chan->user && vgt_ldx_method(s->chan->user, m, &c->err) != VGT_OK) c->rc = c->err.code;
    return c->rc != VGT_OK || c->found || vgt_cli_out_failed(stdout);
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m) { return feed(ctx, s, m); }
static int on_state_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m) { return feed(ctx, s, m); }

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    launches_cli *c = ctx;
    if (s->chan->user && vgt_ldx_submit_end(s->chan->user, &c->err) != VGT_OK) c->rc = c->err.code;
    return c->rc != VGT_OK || c->found || vgt_cli_out_failed(stdout);
}

typedef struct launches_args {
    int json, bytes;
    uint64_t launch;
    walk_filter filter;
} launches_args;

static const vgt_cli_opt launches_options[] = {
    {"json", 0, VGT_ARG_NONE, NULL, "one JSON document {\"trace\":...,\"work\":[{\"launch\":N,...}|{\"empty_dispatch\":N,"
     "...}|{\"dma\":N,...}],\"total\":{...}}; with --launch, {\"trace\":...,\"launch\":{...}}",
     .off = offsetof(launches_args, json)},
    {"launch", 0, VGT_ARG_U64, "N", "only launch N (0-based over the trace's launches that run threads), in full: the "
     "QMD, program and constant buffer bytes as hex", .off = offsetof(launches_args, launch), .what = "launch number"},
    {"bytes", 0, VGT_ARG_NONE, NULL, "list the program and constant buffer bytes of every launch too",
     .off = offsetof(launches_args, bytes)},
    WALK_FILTER_OPTIONS(launches_args, filter, "only the work of submissions A..B (0-based GPFIFO_SUBMIT index; N, "
                        "A..B, A.. or ..B); earlier submissions are still followed for state; a window outside the "
                        "trace is an error (exit 2)", "only submissions to channel handle H"),
    {0}};

const vgt_cli_spec cmd_launches_spec = {
    .verb = "launches", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = launches_options,
    .about = "TRACE may be '-' (a stream on stdin). Every compute launch of a trace as a self-contained description "
             "that a replayer can rebuild without the captured push buffers, whether its QMD sits in memory, was "
             "uploaded by the stream (inline-to-memory), was sent inline or was built by an MME macro: the QMD "
             "(decoded; the bits no field of the QMD tables names listed as \"unnamed\" dwords), the program (its "
             "SASS bytes from the entry point, as the trace recorded them, and their FNV-1a 64 hash), the constant "
             "buffers (among them the driver's parameter buffer) with every 64-bit word that points into a GPU "
             "mapping of the trace, the buffers those words point into (the launch reads or writes them: the "
             "direction is the program's and is not decoded) with the bytes the trace knows of them, grid, block, "
             "shared memory, registers, barriers, the release semaphores and dependent QMDs, and the compute class "
             "state in effect (its SET_* methods). Copy-engine work is listed too (copies, memsets, semaphore-only "
             "LAUNCH_DMAs: addresses, lengths, layouts, the LAUNCH_DMA word, the release). A launch whose QMD or "
             "program bytes the trace does not have says why it cannot be rebuilt (NOT REBUILDABLE; JSON "
             "\"problem\").",
    .notes = "exit: 0 ok, 1 a selected launch cannot be rebuilt (its QMD or program is not in the trace), or --launch N "
             "names no launch of the window; 2 usage or I/O error (also a --submits window outside the trace)",
};

int cmd_launches(int argc, char **argv)
{
    launches_args la = {.filter.submits = VGT_RANGE_ALL};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_launches_spec, argc, argv, &la, &a);
    if (rc >= 0) return rc;
    launches_cli c = {.json = la.json, .bytes = la.bytes, .launch = la.launch, .first = 1, .rc = VGT_OK};
    c.has_launch = vgt_cli_given(&cmd_launches_spec, &a, "launch");
    vgt_ldx_config cfg = {.on_work = on_work, .ctx = &c, .trace_read = vgt_sem_model_ptr_reader, .trace_ctx = &c.model};
    vgt_error err;
    if (vgt_ldx_new(&cfg, &c.x, &err) != VGT_OK) return vgt_cli_report("launches", &err);
    vgt_walk_options opt = vgt_walk_defaults();
    walk_filter_apply(&cmd_launches_spec, &a, &la.filter, &opt);
    opt.deliver_unselected = 1;
    vgt_walk_callbacks cb = {.on_record = on_record, .on_channel = on_channel, .on_channel_end = on_channel_end,
                             .on_submit_begin = on_submit_begin, .on_method = on_method,
                             .on_state_method = on_state_method, .on_submit_end = on_submit_end, .ctx = &c};
    const char *path = a.pos[0];
    if (c.json) printf("{\"trace\":"), vgt_json_string(stdout, path);
    if (c.json && !c.has_launch) printf(",\"work\":[");
    vgt_walk_stats wst = {0};
    vgt_status st = vgt_walk_path(path, &opt, &cb, &wst, &err);
    if (st == VGT_OK && c.rc != VGT_OK) st = c.rc, err = c.err;
    if (vgt_cli_out_failed(stdout)) {
        rc = vgt_cli_check_output("launches", stdout, "standard output", VGT_EXIT_USAGE);
    } else if (st != VGT_OK) {
        if (c.json) printf("%s}\n", c.has_launch ? "" : "]");
        rc = vgt_cli_report("launches", &err);
    } else {
        if (c.json && !c.has_launch)
            printf("],\"total\":{\"launches\":%" PRIu64 ",\"empty_dispatches\":%" PRIu64 ",\"dma\":%" PRIu64
                   ",\"uploads\":%" PRIu64 ",\"semaphores\":%" PRIu64 ",\"other\":%" PRIu64 ",\"not_rebuildable\":%" PRIu64
                   "}",
                   c.counts[VGT_WORK_LAUNCH], c.counts[VGT_WORK_EMPTY_DISPATCH], c.counts[VGT_WORK_COPY],
                   c.counts[VGT_WORK_UPLOAD], c.counts[VGT_WORK_SEMAPHORE], c.counts[VGT_WORK_OTHER], c.not_rebuildable);
        if (c.json) printf("}\n");
        else if (!c.has_launch)
            printf("total: %" PRIu64 " launches (%" PRIu64 " not rebuildable), %" PRIu64 " empty dispatches, %" PRIu64
                   " copy-engine operations, %" PRIu64 " uploads, %" PRIu64 " semaphore operations, %" PRIu64 " other\n",
                   c.counts[VGT_WORK_LAUNCH], c.not_rebuildable, c.counts[VGT_WORK_EMPTY_DISPATCH],
                   c.counts[VGT_WORK_COPY], c.counts[VGT_WORK_UPLOAD], c.counts[VGT_WORK_SEMAPHORE],
                   c.counts[VGT_WORK_OTHER]);
        rc = c.has_launch ? 0 : walk_filter_check("launches", &la.filter, &wst);
        if (!rc && c.has_launch && !c.found)
            rc = vgt_cli_error("launches", VGT_EXIT_PROBLEM, "--launch %" PRIu64 ": the window has %" PRIu64
                               " launches (0..%" PRIu64 ")", c.launch, c.counts[VGT_WORK_LAUNCH],
                               c.counts[VGT_WORK_LAUNCH] ? c.counts[VGT_WORK_LAUNCH] - 1 : 0);
        if (!rc && c.not_rebuildable && !c.has_launch) rc = VGT_EXIT_PROBLEM;
        if (!rc && c.has_launch && c.found) rc = c.found_problem ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
        char note[256];
        if (vgt_ldx_budget_note(c.x, note, sizeof note) && mme_budget_print("launches", note) && !rc) rc = VGT_EXIT_PROBLEM;
    }
    vgt_ldx_free(c.x);
    return rc;
}
