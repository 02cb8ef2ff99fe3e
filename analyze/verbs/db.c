/* db.c: `vgt db TRACE -o OUT.sqlite [--with-bytes] [--no-fields]`: the whole trace as an SQLite database
 * for forensic queries (schema: docs/sqlite-schema.md; worked queries: docs/forensics.md).
 *
 * One walk (walk.h) over the trace: every record becomes a `records` row (and a row in its own table),
 * every submission, GPFIFO entry and method a row, and a semantic tracker per channel (events.h) adds
 * events, launches, uploads, copies, semaphores, draws and program binds; MME macro calls run in the same
 * walk (mme_trace.h) and what they emit reaches the trackers too (events.origin 'macro'). All inside one transaction with
 * prepared statements; indexes and views are created after the load. The file is written as a temporary
 * beside OUT (vgt/outfile.h) and renamed over OUT only when complete, so a failed export never leaves a
 * plausible-looking database; OUT must be a regular file (or absent): a database cannot be streamed.
 * --stores FILE adds the store census of a replay of the trace (`vgt replay --census-json`, db_stores.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_draws.h"
#include "db_internal.h"
#include "budget_report.h"
#include "walk_filter.h"
#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/mme_trace.h"
#include "vgt/outfile.h"

static void on_channel(void *ctx, vgt_walk_channel *chan)
{
    db_ctx *c = ctx;
    vgt_sem_config cfg = { .on_event = db_event_rows, .ctx = c, .mem_read = vgt_sem_model_ptr_reader,
                           .mem_ctx = (void *)&c->model, .keep_upload_bytes = c->with_bytes };
    if (vgt_sem_attach(&chan->user, &cfg, &c->err) != VGT_OK) c->failed = 1;
}

static void on_channel_end(void *ctx, vgt_walk_channel *chan)
{
    (void)ctx;
    vgt_sem_detach(&chan->user);
}

/* A macro call completed: its emissions go to the tracker of its channel, the current submission's. */
static int on_call(void *ctx, const vgt_mme_trace_call *call)
{
    db_ctx *c = ctx;
    const vgt_walk_submit *s = c->cur;
    if (!s || !s->chan->user || call->channel != s->chan->handle || call->client != s->chan->client) return 0;
    if (vgt_sem_macro_call(s->chan->user, call, &c->err) != VGT_OK) c->failed = 1;
    return c->failed;
}

static int mme_feed(db_ctx *c, const vgt_walk_submit *s, const vgt_method *m)
{
    if (!c->mme) return 0;
    vgt_status rc = vgt_mme_trace_method(c->mme, s, m, &c->err);
    if (rc != VGT_OK) c->failed = 1;
    return c->failed;
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    db_ctx *c = ctx;
    c->model = model;
    if (c->mme) vgt_mme_trace_model(c->mme, model);
    if (rec->type == VGT_REC_GPFIFO_SUBMIT) c->seq = rec->seq;
    vgt_progress_set(&c->progress, rec->chunk_offset);
    return db_record_rows(c, rec) || c->failed;
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    db_ctx *c = ctx;
    c->cur = s;
    c->selected = s->selected;
    c->submission = s->index;
    c->channel = s->chan->handle;
    c->sub_methods = 0;
    return c->failed;
}

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    db_ctx *c = ctx;
    /* calls still collecting data end with the submission; then held draws and cut-short uploads */
    if (c->mme && vgt_mme_trace_submit_end(c->mme, s, &c->err) != VGT_OK) c->failed = 1;
    if (s->chan->user) vgt_sem_flush(s->chan->user);
    c->cur = NULL;
    if (db_store_rows(c, s) || !s->selected) return c->failed;
    const vgt_rec_gpfifo_submit *g = s->sub;
    sqlite3_stmt *st = c->st[ST_SUBMISSION];
    db_bind_u64(st, 1, s->index);
    db_bind_u64(st, 2, s->seq);
    db_bind_u64(st, 3, s->rec->ts);
    sqlite3_bind_int64(st, 4, g->client);
    sqlite3_bind_int64(st, 5, g->channel);
    sqlite3_bind_int64(st, 6, g->token);
    sqlite3_bind_int64(st, 7, g->flags);
    sqlite3_bind_int64(st, 8, g->entry_count);
    sqlite3_bind_int64(st, 9, g->segment_count);
    sqlite3_bind_int64(st, 10, g->gp_put_before);
    sqlite3_bind_int64(st, 11, g->gp_put_after);
    db_bind_u64(st, 12, c->sub_methods);
    c->submission_rows++;
    return db_step(c, st, "submissions") || c->failed;
}

static void on_entry(void *ctx, const vgt_walk_submit *s, const vgt_gp_entry *e, uint32_t index)
{
    db_ctx *c = ctx;
    if (c->failed || !s->selected) return;
    sqlite3_stmt *st = c->st[ST_ENTRY];
    db_bind_u64(st, 1, s->index);
    sqlite3_bind_int64(st, 2, index);
    db_bind_u64(st, 3, s->seq);
    db_bind_u64(st, 4, e->raw);
    db_bind_u64(st, 5, e->va);
    sqlite3_bind_int64(st, 6, e->length);
    sqlite3_bind_int(st, 7, e->level);
    sqlite3_bind_int(st, 8, e->sync);
    sqlite3_bind_int(st, 9, e->is_control);
    sqlite3_bind_int(st, 10, e->opcode);
    sqlite3_bind_int64(st, 11, e->operand);
    db_step(c, st, "gpfifo_entries");
}

/* A method whose only field is the whole 32-bit integer value: its fields text would repeat `value`. */
static int value_only(const vgt_method_info *mi)
{
    return mi && mi->field_count == 1 && mi->fields[0].hi == 31 && mi->fields[0].lo == 0 &&
           mi->fields[0].enum_count == 0 && !(mi->fields[0].flags & VGT_CLASS_FIELD_FLOAT);
}

/* The method's name: static table text for scalars, "NAME(i)" for array elements (written into buf, which
 * must live until the statement is stepped), NULL when unknown. Returns the method's table entry. */
static const vgt_method_info *bind_method_name(db_ctx *c, sqlite3_stmt *st, int col, uint32_t cls, uint32_t mthd,
                                               char *buf, size_t cap)
{
    if (cls != c->name_cls) { c->name_class = vgt_class_find(cls); c->name_cls = cls; }
    uint32_t index = 0;
    const vgt_method_info *mi = vgt_class_method(c->name_class, mthd, &index);
    if (!mi) { sqlite3_bind_null(st, col); return NULL; }
    if (mi->count <= 1) { sqlite3_bind_text(st, col, mi->name, -1, SQLITE_STATIC); return mi; }
    size_t n = strlen(mi->name);
    if (n + 16 > cap) { sqlite3_bind_text(st, col, mi->name, (int)n, SQLITE_STATIC); return mi; }
    memcpy(buf, mi->name, n);
    char digits[12];
    int k = 0;
    do digits[k++] = (char)('0' + index % 10); while ((index /= 10) && k < 11);
    buf[n++] = '(';
    while (k) buf[n++] = digits[--k];
    buf[n++] = ')';
    sqlite3_bind_text(st, col, buf, (int)n, SQLITE_STATIC);
    return mi;
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    db_ctx *c = ctx;
    if (mme_feed(c, s, m)) return 1;   /* first: a macro call this method completes ran before it */
    if (!s->selected) {   /* outside the window: keep the trackers' state right, write nothing */
        if (s->chan->user && vgt_sem_method(s->chan->user, m, &c->err) != VGT_OK) return c->failed = 1;
        return c->failed;
    }
    sqlite3_stmt *st = c->st[ST_METHOD];
    char name[128], fields[512];   /* bound SQLITE_STATIC: they must outlive the step below */
    db_bind_u64(st, 1, s->index);
    sqlite3_bind_int64(st, 2, m->pos.entry);
    sqlite3_bind_int64(st, 3, m->pos.dword);
    db_bind_u64(st, 4, c->method_rows);
    db_bind_u64(st, 5, m->pos.seq);
    sqlite3_bind_int64(st, 6, c->channel);
    sqlite3_bind_int(st, 7, (int)m->subch);
    sqlite3_bind_int64(st, 8, m->cls);
    const vgt_method_info *mi = bind_method_name(c, st, 9, m->cls, m->mthd, name, sizeof name);
    sqlite3_bind_int64(st, 10, m->mthd);
    sqlite3_bind_int64(st, 11, m->data);
    if (c->with_fields && !value_only(mi)) {
        size_t n = vgt_method_format_fields(m->cls, m->mthd, m->data, fields, sizeof fields);
        sqlite3_bind_text(st, 12, fields, n < sizeof fields ? (int)n : (int)sizeof fields - 1, SQLITE_STATIC);
    } else {
        sqlite3_bind_null(st, 12);
    }
    if (db_step(c, st, "methods")) return 1;
    db_count_method(&c->counts, m->cls, m->mthd);
    c->method_rows++;
    c->sub_methods++;
    if (s->chan->user && vgt_sem_method(s->chan->user, m, &c->err) != VGT_OK) return c->failed = 1;
    return c->failed;
}

static void on_diag(void *ctx, const vgt_walk_submit *s, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    db_ctx *c = ctx;
    if (c->failed || !s->selected) return;
    sqlite3_stmt *st = c->st[ST_DIAG];
    db_bind_u64(st, 1, pos->seq);
    db_bind_u64(st, 2, s->index);
    sqlite3_bind_int64(st, 3, pos->entry);
    sqlite3_bind_int64(st, 4, pos->dword);
    sqlite3_bind_text(st, 5, vgt_diag_kind_name(kind), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, msg, -1, SQLITE_TRANSIENT);
    db_step(c, st, "diagnostics");
}

static int write_meta(db_ctx *c, const char *trace)
{
    char num[32];
    snprintf(num, sizeof num, "%d", DB_SCHEMA_VERSION);
    const char *kv[][2] = { { "schema_version", num }, { "tool", "vgt db" }, { "trace", trace },
                            { "with_bytes", c->with_bytes ? "1" : "0" }, { "with_fields", c->with_fields ? "1" : "0" },
                            { "stores", c->stores ? c->stores->path : NULL } };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        if (!kv[i][1]) continue;
        sqlite3_bind_text(c->st[ST_META], 1, kv[i][0], -1, SQLITE_STATIC);
        sqlite3_bind_text(c->st[ST_META], 2, kv[i][1], -1, SQLITE_TRANSIENT);
        if (db_step(c, c->st[ST_META], "meta")) return 1;
    }
    return 0;
}

static int write_identity(db_ctx *c, const char *trace)
{
    vgt_reader *r = NULL;
    vgt_error err;
    if (vgt_reader_open_path(&r, trace, NULL, &err) != VGT_OK) { c->err = err; return c->failed = 1; }
    const vgt_trace_info *ti = vgt_reader_info(r);
    for (uint32_t i = 0; i < ti->identity_count && !c->failed; i++) {
        sqlite3_bind_text(c->st[ST_IDENTITY], 1, ti->identity[i].key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(c->st[ST_IDENTITY], 2, ti->identity[i].value, -1, SQLITE_TRANSIENT);
        db_step(c, c->st[ST_IDENTITY], "identity");
    }
    vgt_reader_close(r);
    return c->failed;
}

typedef struct db_args {
    const char *out, *stores;
    int with_bytes, no_fields, index_methods, no_macros, quiet;
    walk_filter filter;
} db_args;

static const vgt_cli_opt db_options[] = {
    {"output", 'o', VGT_ARG_PATH, "OUT", "the database to write: a regular file, replaced only once complete",
     .off = offsetof(db_args, out), .flags = VGT_OPT_REQUIRED},
    {"with-bytes", 0, VGT_ARG_NONE, NULL, "keep memory-record and upload bytes as BLOBs (default: lengths only)",
     .off = offsetof(db_args, with_bytes)},
    {"no-fields", 0, VGT_ARG_NONE, NULL, "leave methods.fields NULL (faster, smaller); it is NULL anyway for methods "
     "whose only field is the whole value (LOAD_INLINE_DATA, ...)", .off = offsetof(db_args, no_fields)},
    {"index-methods", 0, VGT_ARG_NONE, NULL, "also index methods by (class, address) (slower export, fast lookups by "
     "method)", .off = offsetof(db_args, index_methods)},
    WALK_FILTER_OPTIONS(db_args, filter, "submissions, entries, methods and events only for submissions A..B (0-based "
                        "GPFIFO_SUBMIT index; N, A..B, A.. or ..B); the other records, up to the last selected "
                        "submission, are exported in full; a window outside the trace is an error (exit 2)",
                        "submissions, entries, methods and events only for channel handle H"),
    {"no-macros", 0, VGT_ARG_NONE, NULL, "do not feed what MME macro calls emit to the semantic decoders (events then "
     "come from push-buffer methods only; by default events.origin says 'stream' or 'macro')",
     .off = offsetof(db_args, no_macros)},
    {"stores", 0, VGT_ARG_PATH, "FILE", "the store census of a replay of this trace (`vgt replay TRACE --census "
     "--census-json FILE`) as the stores table: per submission, the watched ranges it changed (pages written, bytes "
     "changed, first non-zero pixel); rows must match the trace's submissions (seq, channel)",
     .off = offsetof(db_args, stores)},
    {"quiet", 'q', VGT_ARG_NONE, NULL, "no summary line, no progress line on a terminal", .off = offsetof(db_args, quiet)},
    {0}};

const vgt_cli_spec cmd_db_spec = {
    .verb = "db", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = db_options,
    .about = "Export a trace to SQLite: identity, objects, channels, mappings, memory records, submissions, GPFIFO "
             "entries, every method (name, address, value, decoded fields), and the semantic events: launches, "
             "uploads, copies, semaphores, draws, program binds, clears and notifiers, and per draw the pipeline state, shader "
             "program headers and lints (vgt draws). Schema: docs/sqlite-schema.md; example queries: "
             "docs/forensics.md. TRACE may be '-' (standard input, kept in a temporary file: it is read more than "
             "once).",
    .notes = "exit: 0 ok, 1 the trace could not be exported to the end, 2 usage or I/O error (also a --submits "
             "window outside the trace: nothing is written then)",
};

static int finish(db_ctx *c, int ok)
{
    for (int i = 0; i < ST_COUNT_; i++) sqlite3_finalize(c->st[i]);
    if (ok && sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) ok = 0, db_fail(c, "commit");
    if (sqlite3_close(c->db) != SQLITE_OK && ok) ok = 0, vgt_fail(&c->err, VGT_E_IO, VGT_NO_OFFSET, "sqlite: close failed");
    return ok;
}

/* The export itself: a temporary beside OUT, schema, the walk, indexes, then the rename. path is what
 * is read (a copy of stdin for "-"), name what the user gave. */
static int export(db_ctx *c, const char *path, const char *name, const char *out, vgt_walk_options *opt,
                  const walk_filter *filter, int no_macros, int quiet)
{
    vgt_outfile of;
    vgt_error oerr;
    if (vgt_outfile_open(&of, out, VGT_OUT_NEED_FILE | VGT_OUT_NO_FD, &oerr) != VGT_OK) return vgt_cli_report("db", &oerr);
    const char *tmp = vgt_outfile_write_path(&of);
    /* before SQLite initialises: no memory statistics (a global mutex per allocation); may fail harmlessly
     * when something already initialised SQLite */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    db_route_io();
    if (sqlite3_open_v2(tmp, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        int se = sqlite3_system_errno(c->db);
        int rc = vgt_cli_error("db", VGT_EXIT_USAGE, "cannot create '%s': %s%s%s", out, sqlite3_errmsg(c->db),
                               se ? ": " : "", se ? strerror(se) : "");
        sqlite3_close(c->db);
        vgt_outfile_discard(&of);
        return rc;
    }
    struct stat sb;
    uint64_t trace_bytes = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    int ok = !db_create_schema(c, trace_bytes) && !write_meta(c, name) && !write_identity(c, path);
    vgt_walk_stats st = { 0 };
    vgt_error err;
    vgt_status rc = VGT_OK;
    int window = 0;   /* --submits outside the trace: reported, nothing written */
    int budget = 0;   /* an MME budget ran out: the database is written, the exit says a problem */
    if (ok) {
        opt->deliver_unselected = 1;   /* trackers see every submission; rows only for the selected ones */
        vgt_walk_callbacks cb = { .on_record = on_record, .on_channel = on_channel, .on_submit_begin = on_submit_begin,
                                  .on_submit_end = on_submit_end, .on_entry = on_entry, .on_method = on_method,
                                  .on_diag = on_diag, .on_channel_end = on_channel_end, .ctx = c };
        vgt_mme_trace_config mc = { .on_call = on_call, .user = c };
        if (!no_macros && vgt_mme_trace_new(&mc, &c->mme, &err) != VGT_OK) rc = err.code;
        vgt_progress_begin_file(&c->progress, "db", path, quiet);
        if (rc == VGT_OK) rc = vgt_walk_path(path, opt, &cb, &st, &err);
        vgt_progress_end(&c->progress);
        if (rc == VGT_OK && (window = walk_filter_check("db", filter, &st))) ok = 0;
        if (rc == VGT_OK && !c->failed && c->mme && vgt_mme_trace_finish(c->mme, &c->err) != VGT_OK) c->failed = 1;
        budget = rc == VGT_OK && mme_budget_report("db", c->mme);
        vgt_mme_trace_free(c->mme);
        c->mme = NULL;
        ok = ok && rc == VGT_OK && !c->failed && !db_write_counts(c);
        /* a walk to the end has met every submission: rows past them name submissions the trace lacks */
        if (ok && c->stores && opt->submit_last == UINT64_MAX &&
            db_stores_check_unmatched(c->stores, st.submits, &c->err) != VGT_OK)
            ok = 0;
        /* MME macros, calls, parameters and emissions (docs/sqlite-schema.md): a second walk */
        char note[256] = "";
        if (ok && (db_create_late_tables(c) || vgt_mme_db_fill(c->db, path, opt, NULL, note, sizeof note, &c->err) != VGT_OK))
            ok = 0;
        /* the fill also runs the state preambles the first walk skips */
        if (ok && !budget) budget = mme_budget_print("db", note);
        /* the pipeline state of every draw, shader program headers, lints (db_draws.c): a third walk */
        if (ok && db_draws_fill(c->db, path, opt, NULL, &c->err) != VGT_OK)
            ok = 0;
        /* the CUDA links last: they look launches up by submission, through its index (without it, a scan
         * of launches per CUDA launch: quadratic) */
        ok = ok && !db_create_indexes(c) && !db_cuda_finish(c);
    }
    free(c->counts.slot);   /* when the walk failed before the counts were written */
    ok = finish(c, ok);
    if (!ok) {
        vgt_outfile_discard(&of);   /* OUT stays as it was */
        if (window) return window;
        if (rc != VGT_OK) return vgt_cli_report("db", &err);
        return vgt_cli_report("db", &c->err);
    }
    if (vgt_outfile_commit(&of, &oerr) != VGT_OK) return vgt_cli_report("db", &oerr);
    if (!quiet)
        printf("wrote %s: %" PRIu64 " records, %" PRIu64 " submissions, %" PRIu64 " methods, %" PRIu64 " events%s", out,
               st.records, c->submission_rows, c->method_rows, c->event_rows, c->stores ? ", " : "\n");
    if (!quiet && c->stores) printf("%" PRIu64 " store rows\n", c->store_rows);
    return budget ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}

int cmd_db(int argc, char **argv)
{
    db_args da = {.filter.submits = VGT_RANGE_ALL};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_db_spec, argc, argv, &da, &a);
    if (rc >= 0) return rc;
    db_ctx c = { .with_fields = !da.no_fields, .with_bytes = da.with_bytes, .index_methods = da.index_methods,
                 .name_cls = UINT32_MAX };
    vgt_walk_options opt = vgt_walk_defaults();
    walk_filter_apply(&cmd_db_spec, &a, &da.filter, &opt);
    const char *path = a.pos[0], *out = da.out, *stores_path = da.stores;
    db_stores stores;
    if (stores_path) {   /* before anything is written: a bad file leaves no output */
        vgt_error e;
        if (db_stores_load(&stores, stores_path, &e) != VGT_OK) return vgt_cli_report("db", &e);
        c.stores = &stores;
    }
    const char *name = path;
    char spool[64];
    if (vgt_cli_seekable_input("db", &path, spool, sizeof spool)) {   /* read three times: stdin is kept */
        if (c.stores) db_stores_free(c.stores);
        return VGT_EXIT_USAGE;
    }
    int code = export(&c, path, name, out, &opt, &da.filter, da.no_macros, da.quiet);
    if (c.stores) db_stores_free(c.stores);
    return code;
}
