/* draws.c: `vgt draws TRACE [--json] [--draw N] [--submits A..B] [--channel H] [--no-launches]`: every draw
 * and compute launch with the pipeline state it ran with, its stages' shader program headers, the macro
 * calls its push window released, and the lints that say why it may have stored nothing (vgt/draws.h).
 * Windows that released macro calls and drew nothing while a draw macro was uploaded are listed too. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/cli.h"
#include "vgt/draws.h"

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
    if (o->nwin == o->capwin) {
        uint32_t cap = o->capwin ? o->capwin * 2 : 8;
        vgt_draw_quiet_window *p = realloc(o->win, cap * sizeof *p);
        if (!p) { o->nomem = 1; return 1; }
        o->win = p;
        o->capwin = cap;
    }
    o->win[o->nwin++] = *w;
    return 0;
}

static int usage(FILE *f)
{
    fprintf(f,
            "usage: vgt draws TRACE [--json] [--draw N] [--submits A..B] [--channel H] [--no-launches]\n"
            "TRACE may be '-' (a stream on stdin).\n"
            "Every draw and compute launch with the state the GPU ran it with: per stage (SET_PIPELINE_SHADER,\n"
            "REGISTER_COUNT, PROGRAM_ADDRESS as of the draw, macros' writes included) and its shader program\n"
            "header decoded from the bytes the trace holds; render targets (format, size, layout, CT_SELECT,\n"
            "write masks), depth, viewport 0 and scissor 0, blend, vertex streams, counts; the macro calls its\n"
            "push window released; the clears before it. Lints say why a draw may have stored nothing:\n"
            "  stage_disabled, sph_no_outputs, no_render_target, write_mask_zero, viewport_zero, scissor_zero,\n"
            "  clear_target_mismatch, program_unmapped, program_never_written, zero_count; and for a window\n"
            "  that released macro calls but drew nothing: draw_macro_not_called.\n"
            "  --json            one JSON document {\"trace\":..,\"draws\":[{\"draw\",\"submission\",\"seq\",\"window\",\n"
            "                    \"stages\":[{\"stage\",\"enabled\",\"program_va\",\"sph\"}],\"render_targets\",\"macros\",\n"
            "                    \"lints\":[{\"code\",\"message\"}],...}],\"windows\":[...],\"total\":{...}}\n"
            "  --draw N          only the N-th record (0-based, draws and launches counted together)\n"
            "  --submits A..B    only submissions A..B (0-based GPFIFO_SUBMIT index; also --submit)\n"
            "  --channel H       only submissions to channel handle H\n"
            "  --no-launches     draws only\n"
            "exit: 0 no lint fired, 1 a lint fired or the trace could not be decoded to the end, 2 usage or I/O error\n");
    return f == stdout ? VGT_EXIT_OK : VGT_EXIT_USAGE;
}

int cmd_draws(int argc, char **argv)
{
    if (vgt_wants_help(argc, argv)) return usage(stdout);
    draws_out o = { .first_draw = 1 };
    vgt_draws_config cfg = { .on_draw = on_draw, .on_window = on_window, .ctx = &o };
    vgt_walk_options opt = vgt_walk_defaults();
    const char *path = NULL;
    int f;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) o.json = 1;
        else if (!strcmp(a, "--no-launches")) cfg.no_launches = 1;
        else if (!strcmp(a, "--draw")) {
            char *end = NULL;
            if (i + 1 >= argc || !*(a = argv[++i]) || (o.draw = strtoull(a, &end, 0), *end))
                return vgt_cli_error("draws", VGT_EXIT_USAGE, "bad --draw '%s' (a record number)", i < argc ? argv[i] : "");
            o.has_draw = 1;
        } else if (!strcmp(a, "--submits")) {
            argv[i] = (char *)"--submit";   /* the walker's filter, under the name this verb documents */
            if (vgt_walk_filter_arg("draws", argc, argv, &i, &opt) < 0) return VGT_EXIT_USAGE;
        } else if ((f = vgt_walk_filter_arg("draws", argc, argv, &i, &opt)) != 0) {
            if (f < 0) return VGT_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) return vgt_cli_error("draws", VGT_EXIT_USAGE, "unknown option '%s'", a);
        else if (!path) path = a;
        else return vgt_cli_error("draws", VGT_EXIT_USAGE, "more than one trace given ('%s')", a);
    }
    if (!path) { usage(stderr); return VGT_EXIT_USAGE; }
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
    if (o.has_draw && !o.draws && !o.launches)
        return vgt_cli_error("draws", VGT_EXIT_PROBLEM, "no record %" PRIu64 " in the trace", o.draw);
    return o.linted || o.windows ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}
