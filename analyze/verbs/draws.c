/* draws.c: `vgt draws TRACE [--json] [--draw N] [--submits A..B] [--channel H] [--no-launches]`: every draw
 * and compute launch with the pipeline state it ran with, its stages' shader program headers, the macro
 * calls its push window released, and the lints that say why it may have stored nothing (vgt/draws.h).
 * Windows that released macro calls and drew nothing while a draw macro was uploaded are listed too. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget_report.h"
#include "walk_filter.h"
#include "vgt/cli.h"
#include "vgt/draws.h"
#include "vgt/grow.h"

typedef struct draws_out {
    int json, first_draw;
    int has_draw;
    uint64_t draw;            /* --draw N */
    uint64_t draws, launches, linted, windows;
    /* windows are printed after the draws in JSON: kept until then */
    vgt_draw_quiet_window *win;
    uint32_t nwin, capwin;
    int nomem;
} draws_out;

static int on_draw(void *ctx, const vgt_draw_info *d)
{
    draws_out *o = ctx;
    if (o->has_draw && d->number != o->draw) return d->number > o->draw;   /* past it: stop the walk */
    if (d->kind == VGT_DRAWREC_LAUNCH) o->launches++;
    else o->draws++;
    o->linted += d->nlints != 0;
    if (o->json) {
        fputs(o->first_draw ? "" : ",", stdout);
        vgt_draw_print_json(stdout, d);
        o->first_draw = 0;
    } else vgt_draw_print_text(stdout, d);
    return 0;
}

static int on_window(void *ctx, const vgt_draw_quiet_window *w)
{
    draws_out *o = ctx;
    if (o->has_draw) return 0;
    o->windows++;
    if (!o->json) { vgt_draw_quiet_window_print_text(stdout, w); return 0; }
    if (vgt_grow(&o->win, &o->capwin, o->nwin + 1ull, 8)) { o->nomem = 1; return 1; }
    o->win[o->nwin++] = *w;
    return 0;
}

typedef struct draws_args {
    int json, no_launches;
    uint64_t draw;
    walk_filter filter;
} draws_args;

static const vgt_cli_opt draws_options[] = {
    {"json", 0, VGT_ARG_NONE, NULL, "one JSON document {\"trace\":..,\"draws\":[{\"draw\",\"submission\",\"seq\","
     "\"window\",\"stages\":[{\"stage\",\"enabled\",\"program_va\",\"sph\"}],\"render_targets\",\"macros\","
     "\"lints\":[{\"code\",\"message\"}],...}],\"windows\":[...],\"total\":{...}}", .off = offsetof(draws_args, json)},
    {"draw", 0, VGT_ARG_U64, "N", "only the N-th record (0-based, draws and launches counted together)",
     .off = offsetof(draws_args, draw), .what = "record number"},
    WALK_FILTER_OPTIONS(draws_args, filter, "only submissions A..B (0-based GPFIFO_SUBMIT index; N, A..B, A.. or ..B); "
                        "a window outside the trace is an error (exit 2)", "only submissions to channel handle H"),
    {"no-launches", 0, VGT_ARG_NONE, NULL, "draws only", .off = offsetof(draws_args, no_launches)},
    {0}};

const vgt_cli_spec cmd_draws_spec = {
    .verb = "draws", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = draws_options,
    .about = "TRACE may be '-' (a stream on stdin). Every draw and compute launch with the state the GPU ran it "
             "with: per stage (SET_PIPELINE_SHADER, REGISTER_COUNT, PROGRAM_ADDRESS as of the draw, macros' writes "
             "included) and its shader program header decoded from the bytes the trace holds; render targets "
             "(format, size, layout, CT_SELECT, write masks), depth, viewport 0 and scissor 0, blend, vertex "
             "streams, counts; the macro calls its push window released; the clears before it.\n\n"
             "Lints say why a draw may have stored nothing: stage_disabled, sph_no_outputs, no_render_target, "
             "write_mask_zero, viewport_zero, scissor_zero, clear_target_mismatch, program_unmapped, "
             "program_never_written, zero_count; and for a window that released macro calls but drew nothing: "
             "draw_macro_not_called.",
    .notes = "exit: 0 no lint fired, 1 a lint fired, an MME budget ran out (macro calls not run) or the trace could "
             "not be decoded to the end, 2 usage or I/O error (also a --submits window outside the trace)",
};

int cmd_draws(int argc, char **argv)
{
    draws_args da = {.filter.submits = VGT_RANGE_ALL};
    vgt_cli_args a;
    int prc = vgt_cli_parse(&cmd_draws_spec, argc, argv, &da, &a);
    if (prc >= 0) return prc;
    draws_out o = {.first_draw = 1, .json = da.json, .draw = da.draw,
                   .has_draw = vgt_cli_given(&cmd_draws_spec, &a, "draw")};
    vgt_walk_stats st = {0};
    char note[256] = "";
    vgt_draws_config cfg = {.on_draw = on_draw, .on_window = on_window, .ctx = &o, .no_launches = da.no_launches,
                            .stats = &st, .budget_note = note, .budget_note_size = sizeof note};
    vgt_walk_options opt = vgt_walk_defaults();
    walk_filter_apply(&cmd_draws_spec, &a, &da.filter, &opt);
    const char *path = a.pos[0];
    if (o.json) printf("{\"trace\":"), vgt_json_string(stdout, path), printf(",\"draws\":[");
    vgt_error err;
    vgt_status rc = vgt_draws_run(path, &opt, &cfg, &err);
    if (o.json) {
        printf("],\"windows\":[");
        for (uint32_t i = 0; i < o.nwin; i++) {
            if (i) putchar(',');
            vgt_draw_quiet_window_print_json(stdout, &o.win[i]);
        }
        printf("],\"total\":{\"draws\":%" PRIu64 ",\"launches\":%" PRIu64 ",\"linted\":%" PRIu64 ",\"windows\":%" PRIu64 "}}\n",
               o.draws, o.launches, o.linted, o.windows);
    } else printf("total: %" PRIu64 " draws, %" PRIu64 " launches, %" PRIu64 " with lints, %" PRIu64 " windows without a draw\n",
                  o.draws, o.launches, o.linted, o.windows);
    free(o.win);
    if (o.nomem) return vgt_cli_error("draws", VGT_EXIT_USAGE, "out of memory keeping windows");
    if (rc != VGT_OK) return vgt_cli_report("draws", &err);
    int budget = mme_budget_print("draws", note);   /* draws those macro calls would have made are not seen */
    int found = o.draws || o.launches;
    /* a walk --draw stopped early has not seen the whole window: the check is for walks to the end */
    if (!(o.has_draw && found)) {
        int wrc = walk_filter_check("draws", &da.filter, &st);
        if (wrc) return wrc;
    }
    if (o.has_draw && !found) return vgt_cli_error("draws", VGT_EXIT_PROBLEM, "no record %" PRIu64 " in the trace", o.draw);
    return o.linted || o.windows || budget ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}
