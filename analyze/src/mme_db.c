/* mme_db.c: MME macros of a trace as SQLite tables (documented in docs/sqlite-schema.md): macros (every
 * version: where, hash, name, body and disassembly), macro_calls (every call: position, version, outcome),
 * macro_call_params (each call's parameters) and macro_emits (each emitted method, named and decoded).
 *
 * vgt_mme_db_fill() runs its own walk (vgt_mme_trace_run); calls are written as they complete, the
 * macros after the walk (their call counts and names are known only then), the indexes last. The caller
 * owns the transaction; prepared statements, no SQL text built from data. */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "vgt/classes.h"
#include "vgt/mme_trace.h"

static const char *const schema_sql =
    "CREATE TABLE macros(version INTEGER PRIMARY KEY, client INTEGER, channel INTEGER, channel_alloc_seq INTEGER,"
    " class INTEGER, class_name TEXT, format TEXT, macro INTEGER, start INTEGER, start_dword INTEGER,"
    " dwords INTEGER, hash TEXT, name TEXT, named_from TEXT, first_submission INTEGER, first_seq INTEGER,"
    " calls INTEGER, call_errors INTEGER, emits INTEGER, categories INTEGER, static_categories INTEGER,"
    " code BLOB, disassembly TEXT);\n"
    "CREATE TABLE macro_calls(call INTEGER PRIMARY KEY, submission INTEGER, seq INTEGER, entry INTEGER,"
    " dword INTEGER, client INTEGER, channel INTEGER, subch INTEGER, class INTEGER, macro INTEGER, version INTEGER,"
    " hash TEXT, kind TEXT, nparams INTEGER, params_truncated INTEGER, nemits INTEGER, instructions INTEGER,"
    " status TEXT, error TEXT, pc INTEGER, message TEXT);\n"
    "CREATE TABLE macro_call_params(call INTEGER, idx INTEGER, value INTEGER, PRIMARY KEY(call, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE macro_emits(call INTEGER, idx INTEGER, submission INTEGER, channel INTEGER, class INTEGER,"
    " address INTEGER, method TEXT, value INTEGER, fields TEXT, PRIMARY KEY(call, idx)) WITHOUT ROWID;\n";

/* Created by the fill once the rows are in: one sorted build is cheaper than keeping the indexes (one of
 * them on method names) in order through every insert. */
static const char *const index_sql =
    "CREATE INDEX macro_calls_by_submission ON macro_calls(submission);\n"
    "CREATE INDEX macro_calls_by_macro ON macro_calls(macro, version);\n"
    "CREATE INDEX macro_emits_by_method ON macro_emits(method);\n"
    "CREATE INDEX macros_by_hash ON macros(hash);\n";

enum { Q_MACRO, Q_CALL, Q_PARAM, Q_EMIT, Q_COUNT_ };
static const char *const insert_sql[Q_COUNT_] = {
    "INSERT INTO macros VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23)",
    "INSERT INTO macro_calls VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21)",
    "INSERT INTO macro_call_params VALUES(?1,?2,?3)",
    "INSERT INTO macro_emits VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)",
};

typedef struct db_fill {
    sqlite3 *db;
    sqlite3_stmt *st[Q_COUNT_];
    uint64_t calls;
    vgt_status rc;
    vgt_error err;
} db_fill;

static vgt_status sql_fail(sqlite3 *db, vgt_error *err, const char *what)
{
    return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "sqlite: %s: %s", what, sqlite3_errmsg(db));
}

vgt_status vgt_mme_db_schema(sqlite3 *db, vgt_error *err)
{
    if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) return sql_fail(db, err, "creating the MME tables");
    return VGT_OK;
}

static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }

static void bind_hash(sqlite3_stmt *st, int i, uint64_t h)
{
    char buf[17];
    snprintf(buf, sizeof buf, "%016" PRIx64, h);
    sqlite3_bind_text(st, i, buf, 16, SQLITE_TRANSIENT);
}

static int step(db_fill *f, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc == SQLITE_DONE) return 0;
    f->rc = sql_fail(f->db, &f->err, what);
    return 1;
}

static int call_row(db_fill *f, const vgt_mme_trace_call *c)
{
    sqlite3_stmt *st = f->st[Q_CALL];
    bind_u64(st, 1, c->id);
    bind_u64(st, 2, c->submission);
    bind_u64(st, 3, c->seq);
    sqlite3_bind_int64(st, 4, c->pos.entry);
    sqlite3_bind_int64(st, 5, c->pos.dword);
    sqlite3_bind_int64(st, 6, c->client);
    sqlite3_bind_int64(st, 7, c->channel);
    sqlite3_bind_int64(st, 8, c->subch);
    sqlite3_bind_int64(st, 9, c->cls);
    sqlite3_bind_int64(st, 10, c->index);
    if (c->macro) {
        sqlite3_bind_int64(st, 11, c->macro->id);
        bind_hash(st, 12, c->macro->hash);
    }
    sqlite3_bind_text(st, 13, c->macro ? vgt_mme_macro_name(c->categories, 1) : "unbound", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 14, c->nparams);
    sqlite3_bind_int(st, 15, c->params_truncated);
    sqlite3_bind_int64(st, 16, c->nemits);
    bind_u64(st, 17, c->result.instructions);
    sqlite3_bind_text(st, 18, vgt_status_name(c->status), -1, SQLITE_STATIC);
    if (c->status != VGT_OK) {
        const char *what = c->status == VGT_E_DECODE ? vgt_mme_error_name(c->result.error) : vgt_status_name(c->status);
        sqlite3_bind_text(st, 19, what, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 20, c->result.pc);
        sqlite3_bind_text(st, 21, c->message, -1, SQLITE_TRANSIENT);
    }
    return step(f, st, "macro_calls");
}

static int param_rows(db_fill *f, const vgt_mme_trace_call *c)
{
    sqlite3_stmt *st = f->st[Q_PARAM];
    for (uint32_t i = 0; i < c->nparams; i++) {
        bind_u64(st, 1, c->id);
        sqlite3_bind_int64(st, 2, i);
        sqlite3_bind_int64(st, 3, c->params[i]);
        if (step(f, st, "macro_call_params")) return 1;
    }
    return 0;
}

static int emit_rows(db_fill *f, const vgt_mme_trace_call *c)
{
    sqlite3_stmt *st = f->st[Q_EMIT];
    char name[128], fields[512];
    for (uint32_t i = 0; i < c->nemits; i++) {
        const vgt_mme_emit *e = &c->emits[i];
        bind_u64(st, 1, c->id);
        sqlite3_bind_int64(st, 2, i);
        bind_u64(st, 3, c->submission);
        sqlite3_bind_int64(st, 4, c->channel);
        sqlite3_bind_int64(st, 5, c->cls);
        sqlite3_bind_int64(st, 6, e->method);
        if (vgt_class_method(vgt_class_find(c->cls), e->method, NULL)) {
            vgt_method_name(c->cls, e->method, name, sizeof name);
            sqlite3_bind_text(st, 7, name, -1, SQLITE_TRANSIENT);
            size_t n = vgt_method_format_fields(c->cls, e->method, e->value, fields, sizeof fields);
            sqlite3_bind_text(st, 9, fields, n < sizeof fields ? (int)n : (int)sizeof fields - 1, SQLITE_TRANSIENT);
        }
        sqlite3_bind_int64(st, 8, e->value);
        if (step(f, st, "macro_emits")) return 1;
    }
    return 0;
}

static int on_call(void *user, const vgt_mme_trace_call *c)
{
    db_fill *f = user;
    if (!c->selected) return 0;
    f->calls++;
    return call_row(f, c) || param_rows(f, c) || emit_rows(f, c);
}

/* The body's disassembly, one line per instruction, into a growing sqlite string. */
static char *disassembly(const vgt_mme_trace_macro *v)
{
    sqlite3_str *s = sqlite3_str_new(NULL);
    char line[512];
    uint32_t step_dw = vgt_mme_inst_dwords(v->fmt);
    for (uint32_t at = 0; step_dw && at + step_dw <= v->dwords; at += step_dw) {
        vgt_mme_disasm_line(v->fmt, v->code, v->dwords, 0, at, 0, line, sizeof line);
        sqlite3_str_appendf(s, "%s\n", line);
    }
    return sqlite3_str_finish(s);
}

static int macro_row(db_fill *f, const vgt_mme_trace_macro *v)
{
    sqlite3_stmt *st = f->st[Q_MACRO];
    char cls[64];
    const char *from;
    sqlite3_bind_int64(st, 1, v->id);
    sqlite3_bind_int64(st, 2, v->client);
    sqlite3_bind_int64(st, 3, v->channel);
    if (v->channel_alloc_seq != UINT64_MAX) bind_u64(st, 4, v->channel_alloc_seq);
    sqlite3_bind_int64(st, 5, v->cls);
    sqlite3_bind_text(st, 6, vgt_class_name(v->cls, cls, sizeof cls), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 7, vgt_mme_format_name(v->fmt), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, v->index);
    sqlite3_bind_int64(st, 9, v->start);
    sqlite3_bind_int64(st, 10, v->start_dword);
    sqlite3_bind_int64(st, 11, v->dwords);
    bind_hash(st, 12, v->hash);
    sqlite3_bind_text(st, 13, vgt_mme_trace_macro_name(v, &from), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 14, from, -1, SQLITE_STATIC);
    bind_u64(st, 15, v->first_submission);
    bind_u64(st, 16, v->first_seq);
    bind_u64(st, 17, v->calls);
    bind_u64(st, 18, v->call_errors);
    bind_u64(st, 19, v->emits);
    sqlite3_bind_int64(st, 20, v->categories);
    sqlite3_bind_int64(st, 21, v->static_categories);
    uint8_t *le = sqlite3_malloc64((uint64_t)v->dwords * 4u + 1u);   /* the body as uploaded: little-endian dwords */
    for (uint32_t i = 0; le && i < v->dwords; i++)
        for (int b = 0; b < 4; b++) le[4 * i + b] = (uint8_t)(v->code[i] >> (8 * b));
    if (le) sqlite3_bind_blob64(st, 22, le, (uint64_t)v->dwords * 4u, sqlite3_free);
    char *text = disassembly(v);
    if (text) sqlite3_bind_text(st, 23, text, -1, sqlite3_free);
    return step(f, st, "macros");
}

static void finalize(db_fill *f)
{
    for (int i = 0; i < Q_COUNT_; i++) sqlite3_finalize(f->st[i]);
}

vgt_status vgt_mme_db_fill(sqlite3 *db, const char *path, const vgt_walk_options *opt, uint64_t *calls_out,
                           char *budget_note, size_t note_size, vgt_error *err)
{
    db_fill f = {.db = db};
    for (int i = 0; i < Q_COUNT_; i++)
        if (sqlite3_prepare_v2(db, insert_sql[i], -1, &f.st[i], NULL) != SQLITE_OK) {
            vgt_status rc = sql_fail(db, err, "preparing the MME inserts");
            finalize(&f);
            return rc;
        }
    vgt_mme_trace_config cfg = {.on_call = on_call, .user = &f};
    vgt_mme_trace *t = NULL;
    vgt_status rc = vgt_mme_trace_new(&cfg, &t, err);
    if (rc == VGT_OK) rc = vgt_mme_trace_run(t, path, opt, NULL, err);
    if (rc == VGT_OK && f.rc != VGT_OK) {
        rc = f.rc;
        if (err) *err = f.err;
    }
    for (uint32_t i = 0; rc == VGT_OK && i < vgt_mme_trace_macro_count(t); i++)
        if (macro_row(&f, vgt_mme_trace_macro_at(t, i))) {
            rc = f.rc;
            if (err) *err = f.err;
        }
    if (rc == VGT_OK && sqlite3_exec(db, index_sql, NULL, NULL, NULL) != SQLITE_OK)
        rc = sql_fail(db, err, "indexing the MME tables");
    if (calls_out) *calls_out = f.calls;
    if (budget_note && note_size) {
        budget_note[0] = 0;
        if (t) vgt_mme_trace_budget_note(t, budget_note, note_size);
    }
    vgt_mme_trace_free(t);
    finalize(&f);
    return rc;
}
