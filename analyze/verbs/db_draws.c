/* db_draws.c: the draw tables of `vgt db` (docs/sqlite-schema.md): draw_state (one row per draw and
 * compute launch, the pipeline state as of the draw, vgt/draws.h), draw_stages, sph (the decoded shader
 * program header of every stage whose header bytes the trace holds), draw_lints, window_lints, and the
 * window_macros view (the macro calls each push window released). Filled by a walk of its own
 * (vgt_draws_run), like the MME tables. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_draws.h"
#include "vgt/classes.h"
#include "vgt/draws.h"

static const char schema_sql[] =
    "CREATE TABLE draw_state(draw INTEGER PRIMARY KEY, kind TEXT, submission INTEGER, seq INTEGER, entry INTEGER,"
    " dword INTEGER, client INTEGER, channel INTEGER, class INTEGER, origin TEXT, macro_call INTEGER,"
    " window_entry INTEGER, window_va INTEGER, window_bytes INTEGER,"
    " primitive TEXT, topology TEXT, first INTEGER, count INTEGER, instances INTEGER, index_size INTEGER,"
    " index_buffer_va INTEGER, vs_enabled INTEGER, vs_program_va INTEGER, ps_enabled INTEGER, ps_program_va INTEGER,"
    " target_count INTEGER, rt0_va INTEGER, rt0_format INTEGER, rt0_format_name TEXT, rt0_width INTEGER,"
    " rt0_height INTEGER, rt0_layout TEXT, rt0_write_mask INTEGER, zt_selected INTEGER, zt_va INTEGER,"
    " depth_test INTEGER, depth_write INTEGER, stencil_test INTEGER, viewport_width INTEGER, viewport_height INTEGER,"
    " scissor_enable INTEGER, scissor_xmin INTEGER, scissor_xmax INTEGER, scissor_ymin INTEGER, scissor_ymax INTEGER,"
    " raster_enable INTEGER, vertex_streams INTEGER, launch_qmd_va INTEGER, launch_program_va INTEGER,"
    " macros TEXT, macros_total INTEGER, clears INTEGER, lints TEXT, nlints INTEGER, json TEXT);\n"
    "CREATE TABLE draw_stages(draw INTEGER, stage INTEGER, type TEXT, shader_set INTEGER, enabled INTEGER,"
    " register_count INTEGER, program_va INTEGER, mapped INTEGER, sph_bytes_known INTEGER, sph_state TEXT,"
    " PRIMARY KEY(draw, stage)) WITHOUT ROWID;\n"
    "CREATE TABLE sph(draw INTEGER, stage INTEGER, program_va INTEGER, version INTEGER, sph_type TEXT,"
    " shader_type TEXT, does_global_store INTEGER, does_load_or_store INTEGER, kills_pixels INTEGER,"
    " mrt_enable INTEGER, stream_out_mask INTEGER, omap_target INTEGER, omap_depth INTEGER, omap_sample_mask INTEGER,"
    " output_components INTEGER, no_outputs INTEGER, word5 INTEGER, word10 INTEGER, word18 INTEGER, words TEXT,"
    " fields TEXT, PRIMARY KEY(draw, stage)) WITHOUT ROWID;\n"
    "CREATE TABLE draw_lints(draw INTEGER, idx INTEGER, code TEXT, message TEXT, PRIMARY KEY(draw, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE window_lints(submission INTEGER, seq INTEGER, entry INTEGER, window_bytes INTEGER, channel INTEGER,"
    " class INTEGER, macros TEXT, code TEXT, message TEXT);\n"
    "CREATE VIEW window_macros AS SELECT c.submission, c.seq, c.entry, e.length * 4 AS window_bytes, c.channel,"
    " count(*) AS calls, group_concat(printf('0x%x', c.macro), ',') AS macros"
    " FROM (SELECT * FROM macro_calls ORDER BY call) c LEFT JOIN gpfifo_entries e ON e.seq = c.seq AND e.entry = c.entry"
    " GROUP BY c.seq, c.entry, c.channel;\n";

enum { Q_DRAW, Q_STAGE, Q_SPH, Q_LINT, Q_WINDOW, Q_COUNT_ };
static const char *const insert_sql[Q_COUNT_] = {
    ("INSERT INTO draw_state VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
     "?,?,?,?,?,?,?,?,?,?,?)"),   /* one statement over two lines */
    "INSERT INTO draw_stages VALUES(?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO sph VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO draw_lints VALUES(?,?,?,?)",
    "INSERT INTO window_lints VALUES(?,?,?,?,?,?,?,?,?)",
};

typedef struct fill {
    sqlite3 *db;
    sqlite3_stmt *st[Q_COUNT_];
    vgt_error err;
    int failed;
    uint64_t rows;
} fill;

static int sql_fail(fill *f, const char *what)
{
    vgt_fail(&f->err, VGT_E_IO, VGT_NO_OFFSET, "sqlite: %s: %s", what, sqlite3_errmsg(f->db));
    f->failed = 1;
    return 1;
}

static int step(fill *f, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : sql_fail(f, what);
}

static void u64(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }

/* A printed value as a TEXT binding (the JSON of a record, a header's fields). */
typedef void (*print_fn)(FILE *f, const void *p);
static void bind_printed(sqlite3_stmt *st, int i, print_fn fn, const void *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return;
    fn(m, p);
    if (fclose(m) == 0 && buf) sqlite3_bind_text(st, i, buf, (int)len, free);
    else free(buf);
}

static void print_draw(FILE *f, const void *p) { vgt_draw_print_json(f, p); }
static void print_sph(FILE *f, const void *p) { vgt_sph_print_json(f, p); }

/* "0x32,0x0,0x39": the macro indices a window released, in order */
static void macro_list(const vgt_draw_macro *m, uint32_t n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n && len + 12 < cap; i++) len += (size_t)snprintf(buf + len, cap - len, "%s0x%x", i ? "," : "", m[i].index);
}

static int stage_rows(fill *f, const vgt_draw_info *d)
{
    for (unsigned j = 0; j < VGT_DRAWS_STAGES; j++) {
        const vgt_draw_stage *s = &d->stages[j];
        sqlite3_stmt *st = f->st[Q_STAGE];
        u64(st, 1, d->number);
        sqlite3_bind_int(st, 2, (int)j);
        sqlite3_bind_text(st, 3, vgt_draw_stage_type_name(s->type), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 4, s->shader_set);
        if (s->shader_set) sqlite3_bind_int(st, 5, s->enabled);
        sqlite3_bind_int64(st, 6, s->register_count);
        if (s->program_set) u64(st, 7, s->program_va);
        if (s->mapped >= 0) sqlite3_bind_int(st, 8, s->mapped);
        sqlite3_bind_int64(st, 9, s->known);
        sqlite3_bind_text(st, 10, s->sph_state == VGT_SPH_DECODED ? "decoded" : s->sph_state ? "not_a_header" : "not_in_trace",
                          -1, SQLITE_STATIC);
        if (step(f, st, "draw_stages")) return 1;
        if (s->sph_state != VGT_SPH_DECODED) continue;
        const vgt_sph *h = &s->sph;
        st = f->st[Q_SPH];
        u64(st, 1, d->number);
        sqlite3_bind_int(st, 2, (int)j);
        u64(st, 3, s->program_va);
        sqlite3_bind_int(st, 4, h->version);
        sqlite3_bind_text(st, 5, vgt_sph_type_name(h->sph_type), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, vgt_sph_shader_type_name(h->shader_type), -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 7, h->does_global_store);
        sqlite3_bind_int(st, 8, h->does_load_or_store);
        sqlite3_bind_int(st, 9, h->kills_pixels);
        sqlite3_bind_int(st, 10, h->mrt_enable);
        sqlite3_bind_int(st, 11, h->stream_out_mask);
        if (h->ps) {
            sqlite3_bind_int64(st, 12, h->omap_target);
            sqlite3_bind_int(st, 13, h->omap_depth);
            sqlite3_bind_int(st, 14, h->omap_sample_mask);
        }
        sqlite3_bind_int64(st, 15, vgt_sph_output_components(h));
        sqlite3_bind_int(st, 16, vgt_sph_no_outputs(h));
        sqlite3_bind_int64(st, 17, h->words[5]);
        sqlite3_bind_int64(st, 18, h->words[10]);
        sqlite3_bind_int64(st, 19, h->words[18]);
        char words[VGT_SPH_MAX_WORDS * 11 + 1];
        size_t len = 0;
        for (uint32_t w = 0; w < h->nwords; w++) len += (size_t)snprintf(words + len, sizeof words - len, "%s%08x", w ? " " : "", h->words[w]);
        sqlite3_bind_text(st, 20, words, (int)len, SQLITE_TRANSIENT);
        bind_printed(st, 21, print_sph, h);
        if (step(f, st, "sph")) return 1;
    }
    return 0;
}

static int on_draw(void *ctx, const vgt_draw_info *d)
{
    fill *f = ctx;
    sqlite3_stmt *st = f->st[Q_DRAW];
    int draw = d->kind == VGT_DRAWREC_DRAW;
    u64(st, 1, d->number);
    sqlite3_bind_text(st, 2, draw ? "draw" : "launch", -1, SQLITE_STATIC);
    u64(st, 3, d->submission);
    u64(st, 4, d->seq);
    sqlite3_bind_int64(st, 5, d->pos.entry);
    sqlite3_bind_int64(st, 6, d->pos.dword);
    sqlite3_bind_int64(st, 7, d->client);
    sqlite3_bind_int64(st, 8, d->channel);
    sqlite3_bind_int64(st, 9, d->cls);
    sqlite3_bind_text(st, 10, vgt_event_origin_name(d->origin), -1, SQLITE_STATIC);
    if (d->origin == VGT_ORIGIN_MACRO) u64(st, 11, d->macro_call);
    sqlite3_bind_int64(st, 12, d->window.entry);
    u64(st, 13, d->window.va);
    sqlite3_bind_int64(st, 14, (sqlite3_int64)d->window.dwords * 4);
    if (draw) {
        const vgt_ev_draw *p = &d->draw;
        sqlite3_bind_text(st, 15, vgt_draw_kind_name(p->kind), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 16, vgt_topology_name(p->topology), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 17, p->first);
        sqlite3_bind_int64(st, 18, p->count);
        sqlite3_bind_int64(st, 19, p->instance_count);
        sqlite3_bind_int64(st, 20, p->index_size);
        u64(st, 21, p->index_buffer_va);
        const vgt_draw_stage *vs = &d->stages[1], *ps = &d->stages[5];
        if (vs->shader_set) sqlite3_bind_int(st, 22, vs->enabled);
        if (vs->program_set) u64(st, 23, vs->program_va);
        if (ps->shader_set) sqlite3_bind_int(st, 24, ps->enabled);
        if (ps->program_set) u64(st, 25, ps->program_va);
        sqlite3_bind_int64(st, 26, d->target_count);
        if (d->nrt) {
            const vgt_draw_rt *rt = &d->rt[0];
            u64(st, 27, rt->va);
            sqlite3_bind_int64(st, 28, rt->format);
            uint32_t mthd;
            const vgt_method_info *mi = vgt_class_method_by_name(vgt_class_find(d->cls), "SET_COLOR_TARGET_FORMAT", &mthd);
            const char *fname = mi && mi->field_count ? vgt_class_enum_name(&mi->fields[0], rt->format) : NULL;
            if (fname) sqlite3_bind_text(st, 29, fname, -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 30, rt->width);
            sqlite3_bind_int64(st, 31, rt->height);
            sqlite3_bind_text(st, 32, rt->pitch ? "pitch" : "blocklinear", -1, SQLITE_STATIC);
            sqlite3_bind_int(st, 33, rt->write_mask);
        }
        sqlite3_bind_int(st, 34, d->zt_selected);
        u64(st, 35, d->zt_va);
        sqlite3_bind_int(st, 36, d->depth_test);
        sqlite3_bind_int(st, 37, d->depth_write);
        sqlite3_bind_int(st, 38, d->stencil_test);
        if (d->viewport_set) {
            sqlite3_bind_int64(st, 39, d->viewport_clip[1]);
            sqlite3_bind_int64(st, 40, d->viewport_clip[3]);
        }
        if (d->scissor_set) {
            sqlite3_bind_int(st, 41, d->scissor_enable);
            for (int k = 0; k < 4; k++) sqlite3_bind_int64(st, 42 + k, d->scissor[k]);
        }
        sqlite3_bind_int(st, 46, d->raster_enable);
        sqlite3_bind_int64(st, 47, d->nstreams);
    } else {
        u64(st, 48, d->launch.qmd_va);
        if (d->launch.decoded) u64(st, 49, d->launch.qmd.program_va);
    }
    char list[VGT_DRAWS_MAX_MACROS * 6 + 1];
    macro_list(d->macros, d->nmacros, list, sizeof list);
    sqlite3_bind_text(st, 50, list, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 51, d->macros_total);
    sqlite3_bind_int64(st, 52, d->nclears);
    char codes[VGT_DRAWS_MAX_LINTS * 32] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < d->nlints && len + 32 < sizeof codes; i++)
        len += (size_t)snprintf(codes + len, sizeof codes - len, "%s%s", i ? "," : "", d->lints[i].code);
    sqlite3_bind_text(st, 53, codes, (int)len, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 54, d->nlints);
    bind_printed(st, 55, print_draw, d);
    if (step(f, st, "draw_state")) return 1;
    f->rows++;
    if (draw && stage_rows(f, d)) return 1;
    for (uint32_t i = 0; i < d->nlints; i++) {
        st = f->st[Q_LINT];
        u64(st, 1, d->number);
        sqlite3_bind_int(st, 2, (int)i);
        sqlite3_bind_text(st, 3, d->lints[i].code, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, d->lints[i].message, -1, SQLITE_TRANSIENT);
        if (step(f, st, "draw_lints")) return 1;
    }
    return 0;
}

static int on_window(void *ctx, const vgt_draw_quiet_window *w)
{
    fill *f = ctx;
    char list[VGT_DRAWS_MAX_MACROS * 6 + 1];
    macro_list(w->macros, w->nmacros, list, sizeof list);
    for (uint32_t i = 0; i < w->nlints; i++) {
        sqlite3_stmt *st = f->st[Q_WINDOW];
        u64(st, 1, w->submission);
        u64(st, 2, w->window.seq);
        sqlite3_bind_int64(st, 3, w->window.entry);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)w->window.dwords * 4);
        sqlite3_bind_int64(st, 5, w->channel);
        sqlite3_bind_int64(st, 6, w->cls);
        sqlite3_bind_text(st, 7, list, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 8, w->lints[i].code, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 9, w->lints[i].message, -1, SQLITE_TRANSIENT);
        if (step(f, st, "window_lints")) return 1;
    }
    return 0;
}

vgt_status db_draws_schema(sqlite3 *db, vgt_error *err)
{
    if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK)
        return vgt_fail(err, VGT_E_IO, VGT_NO_OFFSET, "sqlite: creating the draw tables: %s", sqlite3_errmsg(db));
    return VGT_OK;
}

vgt_status db_draws_fill(sqlite3 *db, const char *path, const vgt_walk_options *opt, uint64_t *rows, vgt_error *err)
{
    fill f = { .db = db };
    for (int i = 0; i < Q_COUNT_ && !f.failed; i++)
        if (sqlite3_prepare_v2(db, insert_sql[i], -1, &f.st[i], NULL) != SQLITE_OK) sql_fail(&f, "preparing a draw insert");
    vgt_status rc = VGT_OK;
    if (!f.failed) {
        vgt_draws_config cfg = { .on_draw = on_draw, .on_window = on_window, .ctx = &f };
        rc = vgt_draws_run(path, opt, &cfg, err);
    }
    for (int i = 0; i < Q_COUNT_; i++) sqlite3_finalize(f.st[i]);
    if (rc != VGT_OK) return rc;
    if (f.failed) { *err = f.err; return f.err.code; }
    if (rows) *rows = f.rows;
    return VGT_OK;
}
