/* census.c: `vgt census TRACE [--json] [--submits A..B] [--channel H] [--total]`: what each submission
 * asked the GPU to do, and the totals: methods per class, launches, draws, program binds, uploads and
 * copies (count and bytes), semaphore releases and acquires, reports, decoder diagnostics.
 * Launches and copies are what the tracker says they are (events.h, vgt_launch_runs_threads and
 * vgt_copy_moves_bytes): dispatches that run no threads and LAUNCH_DMAs that move no bytes are counted
 * apart, as empty dispatches and empty DMAs.
 *
 * The walker (walk.h) folds the trace into the model and decodes push buffers; a semantic tracker
 * (events.h) per channel turns methods into events, fed every submission (filters or not) so that state
 * carried across submissions (bound addresses, payloads) is right when a selected one comes.
 *
 * MME macros (mme_trace.h) run inside the same walk: each completed call's emitted methods go to the
 * channel's tracker at the call's place in the stream, so draws and launches a macro issues are counted;
 * the counts say how many events came from macros ("from_macros"). --no-macros skips that (faster, and
 * what the push buffer alone says).
 *
 * Speed: non-increasing runs (bulk LOAD_INLINE_DATA uploads, MME uploads) arrive through on_noninc_run in
 * one call per run: counted at once, given to the tracker in bulk (vgt_sem_noninc_run), and to the MME
 * trace dword by dword only where every dword matters (MME RAM loads, DMA, macro calls and their data);
 * for any other method its last value is all the shadow state keeps.
 *
 * --stores FILE adds what a replay saw each submission write (`vgt replay --census --census-json FILE`,
 * db_stores.h): the ranges it changed, pages written, bytes changed, first non-zero pixel, and in the
 * totals the submissions that did work (draws, launches) yet wrote nothing watched: the "wrote=0" wall. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_stores.h"
#include "budget_report.h"
#include "walk_filter.h"
#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/cuda.h"
#include "vgt/events.h"
#include "vgt/mme_trace.h"
#include "vgt/walk.h"

#define CENSUS_MAX_CLASSES 64u   /* distinct classes counted; more go to "other" */
#define CENSUS_MAX_STORE_TEXT 8u /* store rows listed per submission in the text output (--json: all) */

typedef struct counts {
    uint64_t methods, diags;
    uint32_t nclass;
    uint32_t cls[CENSUS_MAX_CLASSES];
    uint64_t per_class[CENSUS_MAX_CLASSES];
    uint64_t other_class;     /* methods of classes past CENSUS_MAX_CLASSES */
    uint64_t events[VGT_EV_KIND_COUNT_];
    uint64_t macro_events[VGT_EV_KIND_COUNT_];   /* of events[], those made by methods macros emitted */
    uint64_t macro_calls;
    uint64_t upload_bytes, copy_bytes, launch_threads;
    /* --stores: rows (changed ranges), their pages and bytes; render-target bytes; and submissions that
     * wrote something, wrote nothing, did work but wrote nothing, drew but changed no render target */
    uint64_t store_rows, store_pages, store_bytes, rt_bytes;
    uint64_t wrote, quiet, work_quiet, draw_no_rt;
} counts;

typedef struct census {
    int json, total_only, no_macros;
    int selected;             /* the current submission passes the filters */
    const vgt_walk_submit *cur;   /* the submission being walked (macro calls complete inside it) */
    vgt_mme_trace *mme;
    uint32_t last_class;      /* index in sub.cls of the last method's class */
    const vgt_model *model;
    counts sub, total;
    uint64_t submissions;
    int first_json;
    db_stores *stores;        /* --stores, or NULL */
    vgt_error err;            /* a tracker failure, reported after the walk */
    int failed;
    vgt_progress progress;    /* bytes of the trace read, on a terminal */
    vgt_cuda_scan cuda;       /* the CUDA API records (format 1.2): what the program asked of the driver */
} census;

static void add_class(counts *dst, uint32_t cls, uint64_t n)
{
    for (uint32_t j = 0; j < dst->nclass; j++)
        if (dst->cls[j] == cls) { dst->per_class[j] += n; return; }
    if (dst->nclass == CENSUS_MAX_CLASSES) { dst->other_class += n; return; }
    dst->cls[dst->nclass] = cls;
    dst->per_class[dst->nclass++] = n;
}

/* launch_threads saturates at UINT64_MAX (a hostile QMD's product of six 32-bit factors) */
static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static void add_counts(counts *dst, const counts *src)
{
    dst->methods += src->methods;
    dst->diags += src->diags;
    for (uint32_t i = 0; i < src->nclass; i++) add_class(dst, src->cls[i], src->per_class[i]);
    dst->other_class += src->other_class;
    for (int k = 0; k < VGT_EV_KIND_COUNT_; k++) dst->events[k] += src->events[k];
    for (int k = 0; k < VGT_EV_KIND_COUNT_; k++) dst->macro_events[k] += src->macro_events[k];
    dst->macro_calls += src->macro_calls;
    dst->upload_bytes += src->upload_bytes;
    dst->copy_bytes += src->copy_bytes;
    dst->launch_threads = sat_add(dst->launch_threads, src->launch_threads);
    dst->store_rows += src->store_rows, dst->store_pages += src->store_pages;
    dst->store_bytes += src->store_bytes, dst->rt_bytes += src->rt_bytes;
    dst->wrote += src->wrote, dst->quiet += src->quiet;
    dst->work_quiet += src->work_quiet, dst->draw_no_rt += src->draw_no_rt;
}

/* A hostile QMD's grid and block (six 32-bit factors) must not wrap the count into a small, plausible one. */
static uint64_t launch_threads(const vgt_qmd *q)
{
    const uint32_t f[6] = {q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2]};
    uint64_t n = 1;
    for (int i = 0; i < 6; i++)
        if (__builtin_mul_overflow(n, (uint64_t)f[i], &n)) {
            for (int k = i + 1; k < 6; k++)   /* a zero factor later still makes it 0 */
                if (!f[k]) return 0;
            return UINT64_MAX;
        }
    return n;
}

static void on_event(void *ctx, const vgt_event *ev)
{
    census *c = ctx;
    if (!c->selected) return;
    c->sub.events[ev->kind]++;
    if (ev->origin == VGT_ORIGIN_MACRO) c->sub.macro_events[ev->kind]++;
    if (ev->kind == VGT_EV_UPLOAD) c->sub.upload_bytes += ev->u.upload.length;
    else if (ev->kind == VGT_EV_COPY) c->sub.copy_bytes += ev->u.copy.bytes;
    else if (ev->kind == VGT_EV_LAUNCH && ev->u.launch.decoded) {
        c->sub.launch_threads = sat_add(c->sub.launch_threads, launch_threads(&ev->u.launch.qmd));
    }
}

static void on_channel(void *ctx, vgt_walk_channel *chan)
{
    census *c = ctx;
    vgt_sem_config cfg = { .on_event = on_event, .ctx = c, .mem_read = vgt_sem_model_ptr_reader,
                           .mem_ctx = (void *)&c->model };
    if (vgt_sem_attach(&chan->user, &cfg, &c->err) != VGT_OK) c->failed = 1;
}

static void on_channel_end(void *ctx, vgt_walk_channel *chan)
{
    (void)ctx;
    vgt_sem_detach(&chan->user);
}

/* The walk gives back record bytes the trackers may point at (uploads remembered in place). */
static void on_release(void *ctx, vgt_walk_channel *chan, const uint8_t *bytes, uint64_t len)
{
    (void)ctx;
    vgt_sem_reclaim(chan->user, bytes, len);
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    census *c = ctx;
    c->model = model;
    if (c->mme) vgt_mme_trace_model(c->mme, model);
    vgt_progress_set(&c->progress, rec->chunk_offset);
    if (!c->failed && vgt_cuda_scan_record(&c->cuda, rec, &c->err) != VGT_OK) c->failed = 1;
    return 0;
}

/* The CUDA calls beside the methods they caused (only for traces that hold any: the JSON of other traces
 * is unchanged). */
static void print_cuda_total(const census *c)
{
    const vgt_cuda_scan *k = &c->cuda;
    if (!vgt_cuda_scan_any(k)) return;
    if (c->json) {
        printf(",\"cuda\":{\"launches\":%" PRIu64 ",\"graph_launches\":%" PRIu64 ",\"graph_nodes\":%" PRIu64
               ",\"memory_ops\":%" PRIu64 ",\"loads\":%" PRIu64 ",\"functions\":%" PRIu64 ",\"images\":%" PRIu64
               ",\"ref_images\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"work_calls\":%" PRIu64 ",\"work_linked\":%" PRIu64
               ",\"problems\":%" PRIu64 "}",
               k->launches, k->graph_launches, k->graph_nodes, k->memory_ops, k->loads, k->functions, k->images,
               k->ref_images, k->calls, k->work_calls, k->work_linked, k->problems);
        return;
    }
    printf("  cuda: %" PRIu64 " launches, %" PRIu64 " graph launches (%" PRIu64 " nodes), %" PRIu64 " memory operations, %"
           PRIu64 " loads, %" PRIu64 " functions, %" PRIu64 " images (%" PRIu64 " referenced by file); %" PRIu64 " of %"
           PRIu64 " calls that put work on the GPU linked to submissions%s\n", k->launches, k->graph_launches,
           k->graph_nodes, k->memory_ops, k->loads, k->functions, k->images, k->ref_images, k->work_linked, k->work_calls, k->problems ? " (inconsistent: see vgt info)" : "");
}

/* A macro call completed: its emissions go to its channel's tracker (a call never spans submissions, so
 * its channel is the current submission's). */
static int on_call(void *ctx, const vgt_mme_trace_call *call)
{
    census *c = ctx;
    const vgt_walk_submit *s = c->cur;
    if (!s || !s->chan->user || call->channel != s->chan->handle || call->client != s->chan->client) return 0;
    if (c->selected) c->sub.macro_calls++;
    if (vgt_sem_macro_call(s->chan->user, call, &c->err) != VGT_OK) {
        c->failed = 1;
        return 1;
    }
    return 0;
}

/* Feed the MME trace; a failure of the trace itself (not a macro's error) ends the census. */
static int mme_feed(census *c, const vgt_walk_submit *s, const vgt_method *m)
{
    vgt_status rc = vgt_mme_trace_method(c->mme, s, m, &c->err);
    if (rc == VGT_OK) return 0;
    if (rc != VGT_E_EOF) c->failed = 1;
    return 1;
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    census *c = ctx;
    c->cur = s;
    c->selected = s->selected;
    memset(&c->sub, 0, sizeof c->sub);
    c->last_class = 0;
    return c->failed;
}

static void count_methods(census *c, uint32_t cls, uint64_t n)
{
    c->sub.methods += n;
    /* the last class seen is by far the most likely next one */
    if (c->sub.nclass && c->sub.cls[c->last_class] == cls) c->sub.per_class[c->last_class] += n;
    else {
        add_class(&c->sub, cls, n);
        for (uint32_t i = 0; i < c->sub.nclass; i++)
            if (c->sub.cls[i] == cls) c->last_class = i;
    }
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    census *c = ctx;
    if (c->selected) count_methods(c, m->cls, 1);
    if (c->mme && mme_feed(c, s, m)) return 1;   /* first: a call this method completes ran before it */
    if (s->chan->user && vgt_sem_method(s->chan->user, m, &c->err) != VGT_OK) {
        c->failed = 1;
        return 1;
    }
    return 0;
}

static int on_noninc_run(void *ctx, const vgt_walk_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    census *c = ctx;
    if (c->selected) count_methods(c, m->cls, count);
    if (c->mme && !m->is_host && vgt_mme_format_for_class(m->cls) != VGT_MME_NONE) {
        uint32_t from = vgt_mme_trace_needs_every_dword(m->mthd) ? 0 : count - 1;
        for (uint32_t i = from; i < count; i++) {
            vgt_method one = vgt_pb_run_method(m, data, i);
            if (mme_feed(c, s, &one)) return 1;
        }
    }
    vgt_status st = VGT_OK;
    if (s->chan->user)
        st = vgt_sem_noninc_run(s->chan->user, m, data, count, s->lent, &c->err);   /* on_release reclaims */
    if (st != VGT_OK) {
        c->failed = 1;
        return 1;
    }
    return 0;
}

static void on_diag(void *ctx, const vgt_walk_submit *s, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    census *c = ctx;
    if (c->selected && kind != VGT_DIAG_RUN_ACROSS_ENTRIES && kind != VGT_DIAG_END_SEGMENT) c->sub.diags++;
}

static void print_classes_text(const counts *k)
{
    char name[64];
    for (uint32_t i = 0; i < k->nclass; i++)
        printf(" %s %" PRIu64, k->cls[i] ? vgt_class_name(k->cls[i], name, sizeof name) : "unbound", k->per_class[i]);
    if (k->other_class) printf(" other %" PRIu64, k->other_class);
}

static void print_counts_json(const counts *k)
{
    printf("\"methods\":%" PRIu64 ",\"classes\":{", k->methods);
    char name[64];
    for (uint32_t i = 0; i < k->nclass; i++) {
        printf("%s", i ? "," : "");
        vgt_json_string(stdout, k->cls[i] ? vgt_class_name(k->cls[i], name, sizeof name) : "unbound");
        printf(":{\"class\":%u,\"methods\":%" PRIu64 "}", k->cls[i], k->per_class[i]);
    }
    printf("},\"other_class_methods\":%" PRIu64, k->other_class);
    printf(",\"launches\":%" PRIu64 ",\"launch_threads\":%" PRIu64 ",\"empty_dispatches\":%" PRIu64 ",\"draws\":%" PRIu64
           ",\"program_binds\":%" PRIu64 ",\"uploads\":%" PRIu64 ",\"upload_bytes\":%" PRIu64 ",\"copies\":%" PRIu64
           ",\"copy_bytes\":%" PRIu64 ",\"empty_dmas\":%" PRIu64 ",\"sem_releases\":%" PRIu64 ",\"sem_acquires\":%" PRIu64
           ",\"reports\":%" PRIu64 ",\"clears\":%" PRIu64 ",\"notifies\":%" PRIu64 ",\"diagnostics\":%" PRIu64,
           k->events[VGT_EV_LAUNCH], k->launch_threads, k->events[VGT_EV_EMPTY_DISPATCH], k->events[VGT_EV_DRAW],
           k->events[VGT_EV_PROGRAM_BIND], k->events[VGT_EV_UPLOAD], k->upload_bytes, k->events[VGT_EV_COPY], k->copy_bytes,
           k->events[VGT_EV_EMPTY_DMA], k->events[VGT_EV_SEM_RELEASE], k->events[VGT_EV_SEM_ACQUIRE],
           k->events[VGT_EV_REPORT], k->events[VGT_EV_CLEAR], k->events[VGT_EV_NOTIFY], k->diags);
    const uint64_t *e = k->macro_events;
    printf(",\"macro_calls\":%" PRIu64 ",\"from_macros\":{\"launches\":%" PRIu64 ",\"empty_dispatches\":%" PRIu64
           ",\"draws\":%" PRIu64 ",\"program_binds\":%" PRIu64 ",\"uploads\":%" PRIu64 ",\"copies\":%" PRIu64
           ",\"empty_dmas\":%" PRIu64 ",\"sem_releases\":%" PRIu64 ",\"sem_acquires\":%" PRIu64 ",\"reports\":%" PRIu64
           ",\"clears\":%" PRIu64 ",\"notifies\":%" PRIu64 "}",
           k->macro_calls, e[VGT_EV_LAUNCH], e[VGT_EV_EMPTY_DISPATCH], e[VGT_EV_DRAW], e[VGT_EV_PROGRAM_BIND],
           e[VGT_EV_UPLOAD], e[VGT_EV_COPY], e[VGT_EV_EMPTY_DMA], e[VGT_EV_SEM_RELEASE], e[VGT_EV_SEM_ACQUIRE],
           e[VGT_EV_REPORT], e[VGT_EV_CLEAR], e[VGT_EV_NOTIFY]);
}

static uint64_t macro_event_total(const counts *k)
{
    uint64_t n = 0;
    for (int i = 0; i < VGT_EV_KIND_COUNT_; i++) n += k->macro_events[i];
    return n;
}

/* " from macros: launches N draws N ..." (the non-zero kinds), after "macro calls N". */
static void print_macro_text(const counts *k)
{
    printf("macro calls %" PRIu64, k->macro_calls);
    if (!macro_event_total(k)) return;
    printf(", events from macros:");
    for (int i = 1; i < VGT_EV_KIND_COUNT_; i++)
        if (k->macro_events[i]) printf(" %s %" PRIu64, vgt_event_kind_name((vgt_event_kind)i), k->macro_events[i]);
}

/* The per-submission line names empty dispatches and empty DMAs only where there are some. */
static void print_counts_text(const counts *k)
{
    printf(" methods %" PRIu64 " launches %" PRIu64, k->methods, k->events[VGT_EV_LAUNCH]);
    if (k->events[VGT_EV_EMPTY_DISPATCH]) printf(" empty dispatches %" PRIu64, k->events[VGT_EV_EMPTY_DISPATCH]);
    printf(" draws %" PRIu64 " binds %" PRIu64 " uploads %" PRIu64 "/%" PRIu64 "B copies %" PRIu64 "/%" PRIu64 "B",
           k->events[VGT_EV_DRAW], k->events[VGT_EV_PROGRAM_BIND], k->events[VGT_EV_UPLOAD], k->upload_bytes,
           k->events[VGT_EV_COPY], k->copy_bytes);
    if (k->events[VGT_EV_EMPTY_DMA]) printf(" empty DMAs %" PRIu64, k->events[VGT_EV_EMPTY_DMA]);
    printf(" releases %" PRIu64 " acquires %" PRIu64 " reports %" PRIu64, k->events[VGT_EV_SEM_RELEASE],
           k->events[VGT_EV_SEM_ACQUIRE], k->events[VGT_EV_REPORT]);
    if (k->events[VGT_EV_CLEAR]) printf(" clears %" PRIu64, k->events[VGT_EV_CLEAR]);
    if (k->events[VGT_EV_NOTIFY]) printf(" notifies %" PRIu64, k->events[VGT_EV_NOTIFY]);
    if (k->macro_calls) printf(" "), print_macro_text(k);
    if (k->diags) printf(" diagnostics %" PRIu64, k->diags);
}

static int is_render_target(const db_store_row *r) { return !strcmp(r->what, "render-target"); }

/* The submission's store rows into its counts. */
static void count_stores(counts *k, const db_store_row *rows, uint64_t n)
{
    int rt = 0;
    for (uint64_t i = 0; i < n; i++) {
        k->store_pages += rows[i].pages_written;
        k->store_bytes += rows[i].bytes_changed;
        if (is_render_target(&rows[i])) k->rt_bytes += rows[i].bytes_changed, rt = 1;
    }
    k->store_rows = n;
    k->wrote = n != 0;
    k->quiet = n == 0;
    k->work_quiet = n == 0 && (k->events[VGT_EV_DRAW] || k->events[VGT_EV_LAUNCH]);
    k->draw_no_rt = !rt && k->events[VGT_EV_DRAW];
}

static void print_stores_json(const counts *k, const db_store_row *rows, uint64_t n)
{
    printf(",\"stores\":{\"ranges\":%" PRIu64 ",\"pages_written\":%" PRIu64 ",\"bytes_changed\":%" PRIu64
           ",\"render_target_bytes\":%" PRIu64 ",\"rows\":[", n, k->store_pages, k->store_bytes, k->rt_bytes);
    for (uint64_t i = 0; i < n; i++) {
        const db_store_row *r = &rows[i];
        printf("%s{\"what\":", i ? "," : "");
        vgt_json_string(stdout, r->what);
        printf(",\"va\":%" PRIu64 ",\"length\":%" PRIu64 ",\"pages_written\":%" PRIu64 ",\"bytes_changed\":%" PRIu64
               ",\"first_changed\":%" PRId64 ",\"first_nonzero_pixel\":%" PRId64 ",\"px0\":",
               r->va, r->length, r->pages_written, r->bytes_changed, r->first_changed, r->first_nonzero_pixel);
        if (r->px0 >= 0) printf("%" PRId64 "}", r->px0);
        else printf("null}");
    }
    printf("]}");
}

/* "  stores: 2 ranges, 2 pages, 30 bytes: observed 0x4c40000+4096 pages 1 bytes 2 first 2992 first_nonzero_px 748;
 *   render-target 0x6400000+16384 pages 4 bytes 16384 first 0 first_nonzero_px 0 px0 0xff0000ff" (px0: the
 *   value of a render target's first pixel, render-target rows only) */
static void print_stores_text(const counts *k, const db_store_row *rows, uint64_t n)
{
    if (!n) {
        printf("  stores: nothing watched was written (wrote=0)\n");
        return;
    }
    printf("  stores: %" PRIu64 " ranges, %" PRIu64 " pages, %" PRIu64 " bytes:", n, k->store_pages, k->store_bytes);
    for (uint64_t i = 0; i < n && i < CENSUS_MAX_STORE_TEXT; i++) {
        const db_store_row *r = &rows[i];
        printf("%s %s 0x%" PRIx64 "+%" PRIu64 " pages %" PRIu64 " bytes %" PRIu64 " first %" PRId64
               " first_nonzero_px %" PRId64,
               i ? ";" : "", r->what, r->va, r->length, r->pages_written, r->bytes_changed, r->first_changed,
               r->first_nonzero_pixel);
        if (r->px0 >= 0) printf(" px0 0x%08" PRIx64, (uint64_t)r->px0);
    }
    if (n > CENSUS_MAX_STORE_TEXT) printf("; %" PRIu64 " more (--json lists all)", n - CENSUS_MAX_STORE_TEXT);
    putchar('\n');
}

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    census *c = ctx;
    /* calls still collecting data end with the submission; then held draws and cut-short uploads */
    if (c->mme && vgt_mme_trace_submit_end(c->mme, s, &c->err) != VGT_OK && c->err.code != VGT_E_EOF) c->failed = 1;
    if (s->chan->user) vgt_sem_flush(s->chan->user);
    c->cur = NULL;
    uint64_t sfirst = 0, sn = 0;   /* every submission is matched, selected or not: the file must fit the trace */
    if (c->stores && !c->failed && db_stores_match(c->stores, s->index, s->seq, s->chan->handle, &sfirst, &sn, &c->err))
        c->failed = 1;
    if (!c->selected || c->failed) return c->failed;
    const db_store_row *srows = c->stores && c->stores->rows ? c->stores->rows + sfirst : NULL;   /* an empty file has none */
    if (c->stores) count_stores(&c->sub, srows, sn);
    c->submissions++;
    add_counts(&c->total, &c->sub);
    if (c->total_only) return c->failed;
    if (c->json) {
        printf("%s{\"index\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"client\":%u,\"channel\":%u,", c->first_json ? "" : ",",
               s->index, s->seq, s->chan->client, s->chan->handle);
        print_counts_json(&c->sub);
        if (c->stores) print_stores_json(&c->sub, srows, sn);
        putchar('}');
        c->first_json = 0;
    } else {
        printf("submission %" PRIu64 " seq %" PRIu64 " channel 0x%x:", s->index, s->seq, s->chan->handle);
        print_counts_text(&c->sub);
        printf("\n  classes:");
        print_classes_text(&c->sub);
        putchar('\n');
        if (c->stores) print_stores_text(&c->sub, srows, sn);
    }
    return c->failed || vgt_cli_out_failed(stdout);   /* a lost output stops the walk */
}

static void print_stores_total(const census *c)
{
    const counts *k = &c->total;
    if (c->json) {
        printf(",\"stores\":{\"file\":");
        vgt_json_string(stdout, c->stores->path);
        printf(",\"rows\":%" PRIu64 ",\"pages_written\":%" PRIu64 ",\"bytes_changed\":%" PRIu64
               ",\"render_target_bytes\":%" PRIu64 ",\"submissions_written\":%" PRIu64 ",\"submissions_quiet\":%" PRIu64
               ",\"work_without_stores\":%" PRIu64 ",\"draws_without_render_target\":%" PRIu64 "}",
               k->store_rows, k->store_pages, k->store_bytes, k->rt_bytes, k->wrote, k->quiet, k->work_quiet, k->draw_no_rt);
        return;
    }
    printf("  stores (%s): %" PRIu64 " ranges changed, %" PRIu64 " pages written, %" PRIu64 " bytes changed (%" PRIu64
           " in render targets)\n", c->stores->path, k->store_rows, k->store_pages, k->store_bytes, k->rt_bytes);
    printf("    %" PRIu64 " submissions wrote, %" PRIu64 " wrote nothing watched (%" PRIu64 " of them launched or drew:"
           " wrote=0); %" PRIu64 " drew without changing a render target\n",
           k->wrote, k->quiet, k->work_quiet, k->draw_no_rt);
}

static void print_total(const census *c, const vgt_walk_stats *st)
{
    const counts *k = &c->total;
    if (c->json) {
        printf("],\"total\":{\"submissions\":%" PRIu64 ",\"push_buffer_bytes\":%" PRIu64 ",", c->submissions, st->pb_bytes);
        print_counts_json(k);
        if (c->stores) print_stores_total(c);
        print_cuda_total(c);
        printf("}}\n");
        return;
    }
    char name[64];
    printf("total: %" PRIu64 " submissions, %" PRIu64 " methods, %" PRIu64 " push-buffer bytes\n", c->submissions,
           k->methods, st->pb_bytes);
    printf("  methods per class:\n");
    for (uint32_t i = 0; i < k->nclass; i++)
        printf("    %04X %-32s %" PRIu64 "\n", k->cls[i], k->cls[i] ? vgt_class_name(k->cls[i], name, sizeof name) : "unbound",
               k->per_class[i]);
    if (k->other_class) printf("    other classes %" PRIu64 "\n", k->other_class);
    printf("  launches %" PRIu64 " (%" PRIu64 " threads)  empty dispatches %" PRIu64 "  draws %" PRIu64
           "  program binds %" PRIu64 "\n", k->events[VGT_EV_LAUNCH], k->launch_threads, k->events[VGT_EV_EMPTY_DISPATCH],
           k->events[VGT_EV_DRAW], k->events[VGT_EV_PROGRAM_BIND]);
    printf("  uploads %" PRIu64 " (%" PRIu64 " bytes)  copies %" PRIu64 " (%" PRIu64 " bytes)  empty DMAs %" PRIu64 "\n",
           k->events[VGT_EV_UPLOAD], k->upload_bytes, k->events[VGT_EV_COPY], k->copy_bytes, k->events[VGT_EV_EMPTY_DMA]);
    printf("  semaphore releases %" PRIu64 "  acquires %" PRIu64 "  reports %" PRIu64 "\n", k->events[VGT_EV_SEM_RELEASE],
           k->events[VGT_EV_SEM_ACQUIRE], k->events[VGT_EV_REPORT]);
    if (k->events[VGT_EV_CLEAR] || k->events[VGT_EV_NOTIFY])
        printf("  clears %" PRIu64 "  notifies %" PRIu64 "\n", k->events[VGT_EV_CLEAR], k->events[VGT_EV_NOTIFY]);
    if (!c->no_macros) printf("  "), print_macro_text(k), putchar('\n');
    printf("  decoder diagnostics %" PRIu64 "\n", k->diags);
    if (c->stores) print_stores_total(c);
    print_cuda_total(c);
}

/* The walk and the output. */
static int run(census *c, const char *path, vgt_walk_options *opt, const walk_filter *filter)
{
    opt->deliver_unselected = 1;   /* trackers see every submission; counts only the selected ones */
    vgt_walk_callbacks cb = { .on_record = on_record, .on_channel = on_channel, .on_submit_begin = on_submit_begin,
                              .on_submit_end = on_submit_end, .on_method = on_method, .on_diag = on_diag,
                              .on_channel_end = on_channel_end, .on_noninc_run = on_noninc_run,
                              .on_release = on_release, .ctx = c };
    vgt_walk_stats st = { 0 };
    vgt_error err;
    if (!c->no_macros) {
        vgt_mme_trace_config mc = { .on_call = on_call, .user = c };
        if (vgt_mme_trace_new(&mc, &c->mme, &err) != VGT_OK) return vgt_cli_report("census", &err);
    }
    if (c->json) printf("{\"trace\":"), vgt_json_string(stdout, path), printf(",\"submissions\":[");
    vgt_status rc = vgt_walk_path(path, opt, &cb, &st, &err);   /* "-": stdin */
    vgt_progress_end(&c->progress);
    if (vgt_cli_out_failed(stdout)) {
        vgt_mme_trace_free(c->mme);
        return vgt_cli_check_output("census", stdout, "standard output", VGT_EXIT_USAGE);
    }
    if (rc == VGT_OK && !c->failed && c->mme && vgt_mme_trace_finish(c->mme, &c->err) != VGT_OK &&
        c->err.code != VGT_E_EOF)
        c->failed = 1;
    int budget = rc == VGT_OK && mme_budget_report("census", c->mme);
    vgt_mme_trace_free(c->mme);
    if (rc == VGT_OK && c->failed) rc = c->err.code, err = c->err;
    if (rc != VGT_OK) {
        vgt_cli_flush(stdout);
        if (c->json) printf("]}\n");
        return vgt_cli_report("census", &err);
    }
    /* a walk to the end has met every submission: rows past them name submissions the trace lacks */
    if (c->stores && opt->submit_last == UINT64_MAX && db_stores_check_unmatched(c->stores, st.submits, &err) != VGT_OK) {
        if (c->json) printf("]}\n");
        return vgt_cli_report("census", &err);
    }
    vgt_cuda_scan_finish(&c->cuda);
    print_total(c, &st);
    vgt_cuda_scan_free(&c->cuda);
    int wrc = walk_filter_check("census", filter, &st);
    return wrc ? wrc : budget ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}

typedef struct census_args {
    int json, total, no_macros, quiet;
    const char *stores;
    walk_filter filter;
} census_args;

static const vgt_cli_opt census_options[] = {
    {"json", 0, VGT_ARG_NONE, NULL, "one JSON document: {\"submissions\":[...],\"total\":{...}}",
     .off = offsetof(census_args, json)},
    {"total", 0, VGT_ARG_NONE, NULL, "only the totals", .off = offsetof(census_args, total)},
    WALK_FILTER_OPTIONS(census_args, filter, "submissions A..B (0-based GPFIFO_SUBMIT index; N, A..B, A.. or ..B); a "
                        "window outside the trace is an error (exit 2)", "only submissions to channel handle H"),
    {"no-macros", 0, VGT_ARG_NONE, NULL, "do not run macro calls: count what the push buffers say directly",
     .off = offsetof(census_args, no_macros)},
    {"stores", 0, VGT_ARG_PATH, "FILE", "what a replay saw each submission write (`vgt replay TRACE --census "
     "--census-json FILE`): ranges changed, pages written, bytes changed, first changed byte, index of the first "
     "non-zero pixel, and px0 (the value of a render target's first pixel); totals count the submissions that "
     "launched or drew but wrote nothing watched (wrote=0)", .off = offsetof(census_args, stores)},
    VGT_OPT_QUIET(census_args, quiet),
    {0}};

const vgt_cli_spec cmd_census_spec = {
    .verb = "census", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = census_options,
    .about = "TRACE may be '-' (a stream on stdin). Per submission and in total: methods per class, compute "
             "launches, draws, program binds, inline-to-memory uploads and copy-engine copies (count and bytes), "
             "semaphore releases and acquires, reports, clears (CLEAR_SURFACE) and notifies (NOTIFY), push-buffer decoder "
             "diagnostics. MME macro calls are run "
             "(vgt mme) and what they emit is counted too; \"from macros\" says how many events came from macro "
             "calls. A launch runs threads (grid and block not zero): a scheduled QMD that runs none is an empty "
             "dispatch. A copy moves bytes: a copy-engine LAUNCH_DMA that moves none (most only release a "
             "semaphore) is an empty DMA. Both are counted apart (empty_dispatches, empty_dmas).",
    .notes = "exit: 0 ok, 1 the trace could not be decoded to the end, 2 usage or I/O error (also a --submits "
             "window outside the trace)",
};

int cmd_census(int argc, char **argv)
{
    census_args ca = {.filter.submits = VGT_RANGE_ALL};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_census_spec, argc, argv, &ca, &a);
    if (rc >= 0) return rc;
    census c = { .first_json = 1, .json = ca.json, .total_only = ca.total, .no_macros = ca.no_macros };
    vgt_walk_options opt = vgt_walk_defaults();
    walk_filter_apply(&cmd_census_spec, &a, &ca.filter, &opt);
    const char *path = a.pos[0], *stores_path = ca.stores;
    db_stores stores;
    if (stores_path) {
        vgt_error err;
        if (db_stores_load(&stores, stores_path, &err) != VGT_OK) return vgt_cli_report("census", &err);
        c.stores = &stores;
    }
    /* the bar only while nothing else goes to the terminal (per-submission lines would cut through it) */
    vgt_progress_begin_file(&c.progress, "census", path, ca.quiet || (!ca.total && isatty(1)));
    int code = run(&c, path, &opt, &ca.filter);
    if (c.stores) db_stores_free(c.stores);
    return code;
}
