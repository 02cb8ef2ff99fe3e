/* report.c: `vgt report TRACE -o FILE.html`: one self-contained page about a trace that works offline
 * (no script or style from elsewhere; plots are inline SVG, images are PNG data URIs):
 *   identity; submissions over time; methods per class; launches and draws per submission; the MME macros;
 *   the store census and each render target as an image, from a replay (sim by default, --backend gpu on
 *   a machine with the GPU).
 * The trace's tables come from one walk of the rows API (vgt/rows.h: the decoders of `vgt db`); the census
 * and the render targets from the replay engine with the census on (what `vgt replay --census` does). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_out.h"
#include "vgt/backend.h"
#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/grow.h"
#include "vgt/mme_trace.h"
#include "vgt/outfile.h"
#include "vgt/replay.h"
#include "vgt/rows.h"

#define MAX_CLASSES 64
#define MAX_MACROS 4096
#define MAX_STORE_ROWS 200      /* table rows shown; the plot has them all */
#define PLOT_W 960
#define PLOT_H 240

typedef struct report_args {
    const char *out, *backend;
    int quiet, no_replay, follow;
} report_args;

static const vgt_cli_opt report_options[] = {
    {"output", 'o', VGT_ARG_PATH, "FILE.html", "the page to write ('-': standard output); replaced only once complete",
     .off = offsetof(report_args, out), .flags = VGT_OPT_REQUIRED},
    {"backend", 0, VGT_ARG_STRING, "NAME", "the replay that gives the store census and the render targets: sim "
     "(default) or gpu", .off = offsetof(report_args, backend)},
    {"no-replay", 0, VGT_ARG_NONE, NULL, "no replay: the page has no store census and no render targets",
     .off = offsetof(report_args, no_replay)},
    VGT_OPT_QUIET(report_args, quiet),
    VGT_OPT_FOLLOW(report_args, follow),
    {0}};

const vgt_cli_spec cmd_report_spec = {
    .verb = "report", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = report_options,
    .about = "Write one self-contained HTML page about a trace that works offline (inline SVG plots, images as PNG "
             "data): its identity, submissions over time, methods per class, launches and draws per submission, the "
             "MME macros, and, from a replay (sim unless --backend gpu), the store census (what each submission "
             "wrote, px0 of each render target) and each render target as an image. On sim, shaders are not run: "
             "render targets show what sim produced (clears, copies), not rasterized pixels; memory the replay never "
             "wrote is zero, which shows as transparent (the page's checkerboard).",
    .notes = "exit: 0 ok, 1 the trace could not be read to the end, 2 usage or I/O error",
};

/* ---- what the walk gathers ---- */

typedef struct macro_agg {
    uint32_t channel, cls, index, version, categories;
    uint64_t hash, calls, emits, instructions, errors;
} macro_agg;

typedef struct gather {
    vgt_row_submit *subs;
    uint64_t nsubs, capsubs;
    uint32_t cls[MAX_CLASSES];
    uint64_t per_class[MAX_CLASSES], other_class;
    uint32_t nclass;
    macro_agg *macros;
    uint32_t nmacros;
    uint64_t macros_dropped;
    int nomem;
    vgt_progress *progress;
} gather;

static void count_class(gather *g, uint32_t cls)
{
    for (uint32_t i = 0; i < g->nclass; i++)
        if (g->cls[i] == cls) { g->per_class[i]++; return; }
    if (g->nclass == MAX_CLASSES) { g->other_class++; return; }
    g->cls[g->nclass] = cls;
    g->per_class[g->nclass++] = 1;
}

static void count_call(gather *g, const vgt_row_macro_call *c)
{
    macro_agg *m = NULL;
    for (uint32_t i = 0; i < g->nmacros && !m; i++)
        if (g->macros[i].channel == c->channel && g->macros[i].cls == c->cls && g->macros[i].version == c->version &&
            g->macros[i].index == c->index)
            m = &g->macros[i];
    if (!m) {
        if (g->nmacros == MAX_MACROS) { g->macros_dropped++; return; }
        m = &g->macros[g->nmacros++];
        *m = (macro_agg){.channel = c->channel, .cls = c->cls, .index = c->index, .version = c->version, .hash = c->hash};
    }
    m->calls++;
    m->emits += c->nemits;
    m->instructions += c->instructions;
    m->categories |= c->categories;
    if (c->status) m->errors++;
}

static int on_batch(void *ctx, int table, const void *rows, uint32_t n)
{
    gather *g = ctx;
    if (table == VGT_ROWS_METHODS) {
        const vgt_row_method *m = rows;
        for (uint32_t i = 0; i < n; i++) count_class(g, m[i].cls);
    } else if (table == VGT_ROWS_MACRO_CALLS) {
        const vgt_row_macro_call *c = rows;
        for (uint32_t i = 0; i < n; i++) count_call(g, &c[i]);
    } else if (table == VGT_ROWS_SUBMITS) {
        if (vgt_grow(&g->subs, &g->capsubs, g->nsubs + n, 1024)) return g->nomem = 1;
        memcpy(g->subs + g->nsubs, rows, (size_t)n * sizeof *g->subs);
        g->nsubs += n;
    }
    return 0;
}

static void on_progress(void *ctx, uint64_t off) { vgt_progress_set(((gather *)ctx)->progress, off); }

/* ---- HTML pieces ---- */

static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void base64(FILE *f, const uint8_t *p, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        fputc(tab[v >> 18 & 63], f);
        fputc(tab[v >> 12 & 63], f);
        fputc(i + 1 < n ? tab[v >> 6 & 63] : '=', f);
        fputc(i + 2 < n ? tab[v & 63] : '=', f);
    }
}

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
                                      "#ff9da7", "#9c755f", "#bab0ac"};
#define NPALETTE (sizeof palette / sizeof palette[0])

static void svg_open(FILE *f, const char *id, const char *title, int w, int h)
{
    fprintf(f, "<svg id=\"%s\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" role=\"img\"><title>", id, w, h, w, h);
    esc(f, title);
    fprintf(f, "</title><rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbfb\" stroke=\"#ddd\"/>\n", w, h);
}

static void axis_label(FILE *f, double x, double y, const char *anchor, const char *text)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"%s\" fill=\"#444\">", x, y, anchor);
    esc(f, text);
    fputs("</text>\n", f);
}

/* Submissions over time: a bar per submission at its time, height log10(methods + 1), a colour per channel. */
static void plot_time(FILE *f, const gather *g)
{
    const int L = 50, R = 200, T = 14, B = 30, w = PLOT_W, h = PLOT_H;   /* the legend in the right margin */
    svg_open(f, "plot-submissions-time", "submissions over time (methods per submission, log scale)", w, h);
    if (!g->nsubs) { axis_label(f, w / 2.0, h / 2.0, "middle", "no submissions"); fputs("</svg>\n", f); return; }
    uint64_t t0 = g->subs[0].ts, t1 = g->subs[0].ts, maxm = 1;
    uint64_t chans[NPALETTE] = {0};
    uint32_t nch = 0;
    for (uint64_t i = 0; i < g->nsubs; i++) {
        if (g->subs[i].ts < t0) t0 = g->subs[i].ts;
        if (g->subs[i].ts > t1) t1 = g->subs[i].ts;
        if (g->subs[i].methods > maxm) maxm = g->subs[i].methods;
    }
    double span = t1 > t0 ? (double)(t1 - t0) : 1, top = 0;
    for (double m = (double)maxm + 1; m >= 10; m /= 10) top += 1;
    top += 1;
    for (uint64_t i = 0; i < g->nsubs; i++) {
        const vgt_row_submit *s = &g->subs[i];
        uint32_t c = 0;
        while (c < nch && chans[c] != s->channel) c++;
        if (c == nch && nch < NPALETTE) chans[nch++] = s->channel;
        double lg = 0;
        for (double m = (double)s->methods + 1; m >= 10; m /= 10) lg += 1;
        lg += ((double)s->methods + 1) > 1 ? 0.5 : 0;   /* a visible stub for small submissions */
        double x = L + (w - L - R) * (double)(s->ts - t0) / span, y = h - B - (h - T - B) * lg / top;
        fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"2\" height=\"%.1f\" fill=\"%s\"><title>"
                   "submission %" PRIu64 ": %" PRIu64 " methods, channel 0x%" PRIx64 ", %.3f ms</title></rect>\n",
                x, y, h - B - y, palette[c % NPALETTE], s->submission, s->methods, s->channel, (double)(s->ts - t0) / 1e6);
    }
    char lab[64];
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", L, h - B, w - R, h - B);
    axis_label(f, L, h - 10, "start", "0 ms");
    snprintf(lab, sizeof lab, "%.3f ms", span / 1e6);
    axis_label(f, w - R, h - 10, "end", lab);
    snprintf(lab, sizeof lab, "1e%.0f methods", top);
    axis_label(f, 4, T + 8, "start", lab);
    for (uint32_t c = 0; c < nch; c++) {
        snprintf(lab, sizeof lab, "channel 0x%" PRIx64, chans[c]);
        fprintf(f, "<rect x=\"%d\" y=\"%u\" width=\"10\" height=\"10\" fill=\"%s\"/>", w - R + 20, T + 14 * c, palette[c]);
        axis_label(f, w - R + 35, T + 9 + 14 * c, "start", lab);
    }
    fputs("</svg>\n", f);
}

/* Methods per class: horizontal bars, longest first. */
static void plot_classes(FILE *f, const gather *g)
{
    uint32_t order[MAX_CLASSES];
    for (uint32_t i = 0; i < g->nclass; i++) order[i] = i;
    for (uint32_t i = 1; i < g->nclass; i++)
        for (uint32_t j = i; j > 0 && g->per_class[order[j]] > g->per_class[order[j - 1]]; j--) {
            uint32_t t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    const int L = 260, R = 90, row = 22;
    int h = 10 + row * (int)(g->nclass ? g->nclass : 1);
    svg_open(f, "plot-methods-per-class", "methods per class", PLOT_W, h);
    uint64_t max = 1;
    for (uint32_t i = 0; i < g->nclass; i++) if (g->per_class[i] > max) max = g->per_class[i];
    for (uint32_t k = 0; k < g->nclass; k++) {
        uint32_t i = order[k];
        char name[64], lab[96];
        snprintf(lab, sizeof lab, "%04X %s", g->cls[i], g->cls[i] ? vgt_class_name(g->cls[i], name, sizeof name) : "unbound");
        double bw = (PLOT_W - L - R) * (double)g->per_class[i] / (double)max;
        if (bw < 1) bw = 1;
        axis_label(f, L - 6, 5 + row * k + 15, "end", lab);
        fprintf(f, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%" PRIu64
                   "</title></rect>\n", L, 5 + row * (int)k + 3, bw, row - 6, palette[k % NPALETTE], g->per_class[i]);
        snprintf(lab, sizeof lab, "%" PRIu64, g->per_class[i]);
        axis_label(f, L + bw + 4, 5 + row * k + 15, "start", lab);
    }
    fputs("</svg>\n", f);
}

/* Launches and draws per submission: two series of bars over the submission index (binned when there are
 * more submissions than pixels). */
static void plot_work(FILE *f, const gather *g)
{
    const int L = 50, R = 180, T = 14, B = 30, w = PLOT_W, h = PLOT_H;   /* the legend in the right margin */
    svg_open(f, "plot-launches-draws", "launches and draws per submission", w, h);
    uint64_t n = g->nsubs, bins = n < (uint64_t)(w - L - R) / 2 ? n : (uint64_t)(w - L - R) / 2, max = 1;
    if (!bins) { axis_label(f, w / 2.0, h / 2.0, "middle", "no submissions"); fputs("</svg>\n", f); return; }
    uint64_t *la = calloc(bins, sizeof *la), *dr = calloc(bins, sizeof *dr);
    if (!la || !dr) { free(la); free(dr); fputs("</svg>\n", f); return; }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t b = i * bins / n;
        la[b] += g->subs[i].launches;
        dr[b] += g->subs[i].draws;
    }
    for (uint64_t b = 0; b < bins; b++) if (la[b] + dr[b] > max) max = la[b] + dr[b];
    double bw = (double)(w - L - R) / (double)bins;
    for (uint64_t b = 0; b < bins; b++) {
        double x = L + bw * (double)b, hl = (h - T - B) * (double)la[b] / (double)max, hd = (h - T - B) * (double)dr[b] / (double)max;
        uint64_t first = (b * n + bins - 1) / bins;
        if (la[b])
            fprintf(f, "<rect class=\"bar launches\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>"
                       "from submission %" PRIu64 ": %" PRIu64 " launches</title></rect>\n",
                    x, h - B - hl, bw > 2 ? bw - 1 : bw, hl, palette[0], first, la[b]);
        if (dr[b])
            fprintf(f, "<rect class=\"bar draws\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>"
                       "from submission %" PRIu64 ": %" PRIu64 " draws</title></rect>\n",
                    x, h - B - hl - hd, bw > 2 ? bw - 1 : bw, hd, palette[1], first, dr[b]);
    }
    char lab[64];
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n", L, h - B, w - R, h - B);
    axis_label(f, L, h - 10, "start", "submission 0");
    snprintf(lab, sizeof lab, "submission %" PRIu64, n - 1);
    axis_label(f, w - R, h - 10, "end", lab);
    snprintf(lab, sizeof lab, "%" PRIu64, max);
    axis_label(f, 4, T + 8, "start", lab);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>", w - R + 20, T, palette[0]);
    axis_label(f, w - R + 35, T + 9, "start", "launches");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>", w - R + 20, T + 14, palette[1]);
    axis_label(f, w - R + 35, T + 23, "start", "draws");
    fputs("</svg>\n", f);
    free(la);
    free(dr);
}

static void section_macros(FILE *f, const gather *g)
{
    fputs("<h2 id=\"macros\">MME macros</h2>\n", f);
    if (!g->nmacros) { fputs("<p>No MME macro calls.</p>\n", f); return; }
    fputs("<table class=\"macros\"><tr><th>channel</th><th>class</th><th>macro</th><th>version</th><th>hash</th>"
          "<th>name (by what it emits)</th><th>calls</th><th>emitted methods</th><th>instructions</th><th>errors</th></tr>\n", f);
    for (uint32_t i = 0; i < g->nmacros; i++) {
        const macro_agg *m = &g->macros[i];
        char cname[64];
        fprintf(f, "<tr><td>0x%08x</td><td>%s</td><td>0x%x</td><td>%s%d</td><td><code>%016" PRIx64 "</code></td><td>%s</td>"
                   "<td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n",
                m->channel, vgt_class_name(m->cls, cname, sizeof cname), m->index, m->version == UINT32_MAX ? "unbound " : "",
                m->version == UINT32_MAX ? -1 : (int)m->version, m->hash, vgt_mme_macro_name(m->categories, m->calls),
                m->calls, m->emits, m->instructions, m->errors);
    }
    fputs("</table>\n", f);
    if (g->macros_dropped) fprintf(f, "<p>%" PRIu64 " calls of further macro versions not shown.</p>\n", g->macros_dropped);
}

/* ---- the replay: store census and render targets ---- */

static void store_plot(FILE *f, const vgt_store_row *rows, uint64_t n, uint64_t nsubs)
{
    const int L = 50, R = 10, T = 14, B = 30, w = PLOT_W, h = PLOT_H;
    svg_open(f, "plot-store-census", "bytes changed per submission (replay store census)", w, h);
    uint64_t bins = nsubs < (uint64_t)(w - L - R) / 2 ? nsubs : (uint64_t)(w - L - R) / 2, max = 1;
    uint64_t *by = bins ? calloc(bins, sizeof *by) : NULL;
    if (!by) { axis_label(f, w / 2.0, h / 2.0, "middle", "no submissions"); fputs("</svg>\n", f); return; }
    for (uint64_t i = 0; i < n; i++)
        if (rows[i].submit_index >= 0 && (uint64_t)rows[i].submit_index < nsubs)
            by[(uint64_t)rows[i].submit_index * bins / nsubs] += rows[i].bytes_changed;
    for (uint64_t b = 0; b < bins; b++) if (by[b] > max) max = by[b];
    double bw = (double)(w - L - R) / (double)bins;
    for (uint64_t b = 0; b < bins; b++) {
        double bh = (h - T - B) * (double)by[b] / (double)max;
        fprintf(f, "<rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>from "
                   "submission %" PRIu64 ": %" PRIu64 " bytes changed</title></rect>\n", by[b] ? "" : " quiet",
                L + bw * (double)b, h - B - (by[b] ? bh : 2), bw > 2 ? bw - 1 : bw, by[b] ? bh : 2,
                by[b] ? palette[2] : palette[3], (b * nsubs + bins - 1) / bins, by[b]);
    }
    char lab[64];
    axis_label(f, L, h - 10, "start", "submission 0");
    snprintf(lab, sizeof lab, "submission %" PRIu64, nsubs - 1);
    axis_label(f, w - R, h - 10, "end", lab);
    snprintf(lab, sizeof lab, "%" PRIu64 " bytes", max);
    axis_label(f, 4, T + 8, "start", lab);
    fputs("</svg>\n", f);
    free(by);
}

static void section_census(FILE *f, vgt_replay *rp, const gather *g)
{
    uint64_t n = 0;
    const vgt_store_row *rows = vgt_replay_stores(rp, &n);
    fputs("<h2 id=\"stores\">Store census</h2>\n<p>What each submission wrote in the replay, read back around it: "
          "the ranges the trace observes and the render targets (<code>px0</code>: the value of a target's first "
          "pixel after the submission, 0 is black). A submission that launched or drew and changed nothing watched "
          "is the wall: <code>wrote=0</code>.</p>\n", f);
    store_plot(f, rows, n, g->nsubs);
    /* the wall: submissions with work and no store row */
    uint64_t walls = 0;
    fputs("<p class=\"walls\">", f);
    for (uint64_t i = 0, r = 0; i < g->nsubs; i++) {
        const vgt_row_submit *s = &g->subs[i];
        while (r < n && rows[r].submit_index >= 0 && (uint64_t)rows[r].submit_index < s->submission) r++;
        int wrote = r < n && rows[r].submit_index >= 0 && (uint64_t)rows[r].submit_index == s->submission;
        if (!wrote && (s->launches || s->draws)) {
            fprintf(f, "%ssubmission %" PRIu64 " (%" PRIu64 " launches, %" PRIu64 " draws): wrote=0", walls ? "; " : "Wall: ",
                    s->submission, s->launches, s->draws);
            walls++;
        }
    }
    if (!walls) fputs("Every submission that launched or drew changed a watched byte.", f);
    fputs("</p>\n<table class=\"stores\"><tr><th>submission</th><th>channel</th><th>range</th><th>VA</th><th>bytes</th>"
          "<th>pages written</th><th>bytes changed</th><th>first changed</th><th>px0</th></tr>\n", f);
    for (uint64_t i = 0; i < n && i < MAX_STORE_ROWS; i++) {
        const vgt_store_row *s = &rows[i];
        fprintf(f, "<tr><td>%" PRId64 "</td><td>0x%08x</td><td>%s</td><td>0x%" PRIx64 "</td><td>%" PRIu64 "</td><td>%" PRIu64
                   "</td><td>%" PRIu64 "</td><td>%" PRId64 "</td><td>",
                s->submit_index, s->channel, s->what, s->va, s->len, s->pages_written, s->bytes_changed, s->first_changed);
        if (s->px0 >= 0) fprintf(f, "0x%08" PRIx64, (uint64_t)s->px0);
        else fputs("-", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (n > MAX_STORE_ROWS) fprintf(f, "<p>%" PRIu64 " more rows: <code>vgt replay TRACE --census</code>.</p>\n", n - MAX_STORE_ROWS);
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint8_t *b = NULL;
    uint64_t cap = 0;
    size_t n = 0;
    int nomem = 0;
    for (size_t k;; n += k) {   /* each read has room for one byte at least: the file ends when it gets none */
        if (vgt_grow(&b, &cap, n + 1ull, 1 << 16)) { nomem = 1; break; }
        if (!(k = fread(b + n, 1, cap - n, f))) break;
    }
    fclose(f);
    if (nomem) { free(b); return -1; }
    *buf = b;
    *len = n;
    return 0;
}

static void section_targets(FILE *f, vgt_replay *rp, const char *backend)
{
    uint32_t n = vgt_replay_rt_count(rp);
    fprintf(f, "<h2 id=\"render-targets\">Render targets</h2>\n<p>%u render target(s) bound (decoded SET_COLOR_TARGET_* "
               "state), as the %s replay left them.</p>\n<div class=\"targets\">\n", n, backend);
    char tmpl[] = "/tmp/vgt-report-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0) close(fd);
    for (uint32_t i = 0; i < n && fd >= 0; i++) {
        const vgt_rt_desc *d = vgt_replay_rt_at(rp, i);
        char *line = NULL;
        size_t linelen = 0;
        FILE *mem = open_memstream(&line, &linelen);
        rt_dump_req req = {.index = i, .path = tmpl};
        int rc = mem ? rt_dump_write(rp, &req, mem) : VGT_EXIT_USAGE;
        if (mem) fclose(mem);
        uint8_t *png = NULL;
        size_t plen = 0;
        fprintf(f, "<figure class=\"render-target\"><figcaption>target %u: VA 0x%" PRIx64 " %ux%u %s, first bound by "
                   "submission %" PRId64 "</figcaption>", i, d->va, d->width, d->height, vgt_rt_format_name(d->format),
                d->submit_index);
        if (rc == VGT_EXIT_OK && read_file(tmpl, &png, &plen) == 0) {
            fprintf(f, "<img class=\"rt\" alt=\"render target %u\" src=\"data:image/png;base64,", i);
            base64(f, png, plen);
            fputs("\"/>", f);
            free(png);
        } else {
            fputs("<p>not converted (format or size this build does not convert)</p>", f);
        }
        if (line && *line) {   /* rt_dump_write's line names the temporary PNG: say where it went instead */
            char *at = strstr(line, tmpl);
            fputs("<pre>", f);
            if (at) {
                *at = '\0';
                esc(f, line);
                fputs("the image above", f);
                esc(f, at + strlen(tmpl));
            } else {
                esc(f, line);
            }
            fputs("</pre>", f);
        }
        free(line);
        fputs("</figure>\n", f);
    }
    if (fd >= 0) unlink(tmpl);
    fputs("</div>\n", f);
}

typedef struct replay_run {
    vgt_replay *rp;
} replay_run;

static void on_replay_progress(void *ctx, const vgt_record *rec) { vgt_progress_set(ctx, rec->chunk_offset); }

static vgt_status run_replay(replay_run *rr, const char *path, const vgt_backend_ops *be, vgt_progress *p, vgt_error *err)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = be;
    o.census = 1;
    o.track_render_targets = 1;
    o.progress = on_replay_progress;
    o.progress_ctx = p;
    /* the census makes the engine plan: it watches the ranges the trace observes from the first submission */
    vgt_reader *r;
    VGT_TRY(vgt_reader_open_path(&r, path, NULL, err));
    vgt_status st = vgt_replay_open(&rr->rp, &o, err);
    if (st == VGT_OK) {
        st = vgt_replay_run(rr->rp, r, err);
        vgt_error ferr;
        if (st == VGT_OK) vgt_replay_finish(rr->rp, &ferr);   /* channels never finished: reported on the page */
    }
    vgt_reader_close(r);
    return st;
}

static void identity(FILE *f, const char *name, vgt_reader *r, const gather *g, uint64_t records)
{
    const vgt_trace_info *ti = vgt_reader_info(r);
    fputs("<h2 id=\"identity\">Identity</h2>\n<table class=\"identity\">\n", f);
    fputs("<tr><th>trace</th><td>", f);
    esc(f, name);
    fprintf(f, "</td></tr>\n<tr><th>format</th><td>%u.%u</td></tr>\n<tr><th>file size</th><td>%" PRIu64 " bytes</td></tr>\n"
               "<tr><th>records</th><td>%" PRIu64 "</td></tr>\n<tr><th>submissions</th><td>%" PRIu64 "</td></tr>\n",
            ti->major, ti->minor, ti->file_size, records, g->nsubs);
    for (uint32_t i = 0; i < ti->identity_count; i++) {
        fputs("<tr><th>", f);
        esc(f, ti->identity[i].key);
        fputs("</th><td>", f);
        esc(f, ti->identity[i].value);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

static const char *const style =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1000px}h1{font-size:22px}h2{font-size:17px;"
    "margin-top:28px;border-bottom:1px solid #ddd}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid "
    "#ddd;padding:2px 6px;text-align:left}th{background:#f3f3f3}svg.plot{display:block;margin:8px 0}"
    "figure.render-target{display:inline-block;margin:8px;vertical-align:top}img.rt{image-rendering:pixelated;"
    "width:256px;border:1px solid #888;background:repeating-conic-gradient(#ccc 0 25%,#fff 0 50%) 0 0/16px 16px}"
    "pre{font-size:11px;white-space:pre-wrap;max-width:480px}.walls{font-weight:bold}";

int cmd_report(int argc, char **argv)
{
    report_args ra = {0};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_report_spec, argc, argv, &ra, &a);
    if (rc >= 0) return rc;
    const char *path = a.pos[0], *name = a.pos[0];
    char spool[64];
    if (vgt_cli_seekable_input("report", &path, spool, sizeof spool)) return VGT_EXIT_USAGE;   /* read more than once */
    if (ra.follow && path == a.pos[0] && (rc = vgt_cli_follow_to_end("report", path))) return rc;
    const vgt_backend_ops *be = vgt_backend_find(ra.backend ? ra.backend : "sim");
    if (!be) return vgt_cli_error("report", VGT_EXIT_USAGE, "--backend %s: no such backend (sim, gpu)", ra.backend);
    vgt_error err;
    if (!ra.no_replay && be->probe && be->probe(&err) != VGT_OK)
        return vgt_cli_error("report", VGT_EXIT_USAGE, "--backend %s cannot run here: %s", be->name, err.msg);
    vgt_progress p;
    gather g = {.progress = &p};
    g.macros = calloc(MAX_MACROS, sizeof *g.macros);
    if (!g.macros) return vgt_cli_error("report", VGT_EXIT_USAGE, "out of memory");
    vgt_rows_sink sink = {.batch = on_batch, .ctx = &g, .progress = on_progress,
                          .tables = (1u << VGT_ROWS_SUBMITS) | (1u << VGT_ROWS_METHODS) | (1u << VGT_ROWS_MACRO_CALLS)};
    vgt_rows_stats stats;
    vgt_progress_begin_file(&p, "report", path, ra.quiet);
    vgt_status st = vgt_rows_walk(path, &sink, &stats, &err);
    if (st == VGT_OK && g.nomem) st = vgt_fail(&err, VGT_E_NOMEM, VGT_NO_OFFSET, "out of memory for the submissions");
    replay_run rr = {0};
    vgt_error rerr;
    vgt_status rst = VGT_OK;
    if (st == VGT_OK && !ra.no_replay) {
        vgt_progress_end(&p);
        vgt_progress_begin_file(&p, "report", path, ra.quiet);   /* the replay: a second pass */
        rst = run_replay(&rr, path, be, &p, &rerr);
    }
    vgt_progress_end(&p);
    vgt_reader *r = NULL;
    if (st == VGT_OK) st = vgt_reader_open_path(&r, path, NULL, &err);
    vgt_outfile of;
    FILE *f = NULL;
    if (st == VGT_OK && (vgt_outfile_open(&of, ra.out, 0, &err) != VGT_OK || !(f = vgt_outfile_stdio(&of, &err))))
        st = err.code;
    if (st != VGT_OK) {
        if (rr.rp) vgt_replay_close(rr.rp);
        vgt_reader_close(r);
        free(g.subs), free(g.macros);
        return vgt_cli_report("report", &err);
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>vgt report: ", f);
    esc(f, name);
    fprintf(f, "</title><style>%s</style></head>\n<body>\n<h1>vgt report: ", style);
    esc(f, name);
    fputs("</h1>\n<p><a href=\"#identity\">identity</a> &middot; <a href=\"#submissions\">submissions</a> &middot; "
          "<a href=\"#classes\">methods per class</a> &middot; <a href=\"#work\">launches and draws</a> &middot; "
          "<a href=\"#macros\">MME macros</a> &middot; <a href=\"#stores\">store census</a> &middot; "
          "<a href=\"#render-targets\">render targets</a></p>\n", f);
    identity(f, name, r, &g, stats.records);
    fprintf(f, "<h2 id=\"submissions\">Submissions over time</h2>\n<p>%" PRIu64 " submissions at their capture (CPU) "
               "time; bar height: methods (log scale); colour: channel.</p>\n", g.nsubs);
    plot_time(f, &g);
    fprintf(f, "<h2 id=\"classes\">Methods per class</h2>\n<p>%" PRIu64 " methods.</p>\n", stats.methods);
    plot_classes(f, &g);
    uint64_t launches = 0, draws = 0;
    for (uint64_t i = 0; i < g.nsubs; i++) launches += g.subs[i].launches, draws += g.subs[i].draws;
    fprintf(f, "<h2 id=\"work\">Launches and draws per submission</h2>\n<p>%" PRIu64 " launches, %" PRIu64 " draws.</p>\n",
            launches, draws);
    plot_work(f, &g);
    section_macros(f, &g);
    if (stats.mme_budget_note[0]) {   /* the rows those calls would have made are missing from the plots */
        fputs("<p>Not all macro calls ran: ", f);
        esc(f, stats.mme_budget_note);
        fputs(".</p>\n", f);
    }
    if (ra.no_replay) {
        fputs("<h2 id=\"stores\">Store census</h2><p>Not replayed (--no-replay).</p>\n<h2 id=\"render-targets\">Render "
              "targets</h2><p>Not replayed (--no-replay).</p>\n", f);
    } else if (rst != VGT_OK || !rr.rp) {
        fputs("<h2 id=\"stores\">Store census</h2><p>The replay failed: ", f);
        esc(f, rerr.msg);
        fputs("</p>\n", f);
    } else {
        const vgt_replay_summary *s = vgt_replay_summary_get(rr.rp);
        section_census(f, rr.rp, &g);
        section_targets(f, rr.rp, be->name);
        fprintf(f, "<p>Replay on %s: %" PRIu64 " submissions, %" PRIu64 " faults%s%s.</p>\n", be->name,
                s->submissions_replayed, s->faults, s->limits_note ? "; " : "", s->limits_note ? s->limits_note : "");
    }
    /* marks, for whoever checks the page in a browser, how many plots have bars and how many images decoded */
    fputs("<p><small>Written by vgt report; this page needs nothing from the network.</small></p>\n<script>\n"
          "window.addEventListener('load', function () {\n"
          "  var imgs = document.querySelectorAll('img.rt'), ok = 0;\n"
          "  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;\n"
          "  var plots = document.querySelectorAll('svg.plot'), drawn = 0;\n"
          "  for (var j = 0; j < plots.length; j++) if (plots[j].querySelector('rect.bar')) drawn++;\n"
          "  document.body.setAttribute('data-images-decoded', ok);\n"
          "  document.body.setAttribute('data-plots-drawn', drawn);\n"
          "});\n</script>\n</body></html>\n", f);
    if (rr.rp) vgt_replay_close(rr.rp);
    vgt_reader_close(r);
    free(g.subs), free(g.macros);
    if (vgt_outfile_commit(&of, &err) != VGT_OK) return vgt_cli_report("report", &err);
    if (stats.mme_budget_note[0]) fprintf(stderr, "vgt report: %s\n", stats.mme_budget_note);
    return (rst != VGT_OK && !ra.no_replay) || stats.mme_budget_note[0] ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}
