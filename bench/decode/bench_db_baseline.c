/* bench_db_baseline.c: the baseline of `vgt db` in bench/decode/run.sh: the same rows inserted into the
 * same schema by a program that does nothing else, with prepared statements in one transaction.
 *
 *   bench_db_baseline SRC.sqlite OUT.sqlite
 *
 * Reads every row of every table of SRC (a database `vgt db` wrote) into memory first, untimed. Then,
 * timed: a fresh OUT with the pragmas `vgt db` uses, the tables from SRC's schema, BEGIN, one prepared
 * INSERT per table bound and stepped for every row in SRC's order, the indexes and views, COMMIT, close:
 * what `vgt db` does after decoding. Prints "rows=N seconds=S rows_per_s=R". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

typedef struct value { int type; sqlite3_int64 i; double d; void *p; int n; } value;
typedef struct table { char *name, *sql; int ncol; value *v; size_t nrows, cap; } table;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(sqlite3 *db, const char *what)
{
    fprintf(stderr, "bench_db_baseline: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    exit(2);
}

static void load_table(sqlite3 *db, table *t)
{
    char q[512];
    snprintf(q, sizeof q, "SELECT * FROM \"%s\"", t->name);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) die(db, q);
    t->ncol = sqlite3_column_count(st);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (t->nrows == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 1024;
            t->v = realloc(t->v, t->cap * (size_t)t->ncol * sizeof *t->v);
            if (!t->v) die(NULL, "rows");
        }
        value *row = t->v + t->nrows++ * (size_t)t->ncol;
        for (int c = 0; c < t->ncol; c++) {
            value *v = &row[c];
            v->type = sqlite3_column_type(st, c);
            if (v->type == SQLITE_INTEGER) v->i = sqlite3_column_int64(st, c);
            else if (v->type == SQLITE_FLOAT) v->d = sqlite3_column_double(st, c);
            else if (v->type == SQLITE_TEXT || v->type == SQLITE_BLOB) {
                const void *p = v->type == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, c) : sqlite3_column_blob(st, c);
                v->n = sqlite3_column_bytes(st, c);
                v->p = malloc((size_t)v->n + 1);
                if (!v->p) die(NULL, "values");
                if (v->n) memcpy(v->p, p, (size_t)v->n);
            }
        }
    }
    sqlite3_finalize(st);
}

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "bench_db_baseline: %s: %s\n", sql, msg ? msg : "?");
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: bench_db_baseline SRC.sqlite OUT.sqlite\n"); return 2; }
    sqlite3 *src;
    if (sqlite3_open_v2(argv[1], &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) die(src, argv[1]);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(src, "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid", -1, &st,
                           NULL) != SQLITE_OK)
        die(src, "schema");
    table tables[128];
    int ntables = 0;
    char *after = NULL;          /* indexes and views, created after the load as `vgt db` does */
    size_t after_len = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0), *sql = (const char *)sqlite3_column_text(st, 2);
        if (!strcmp(type, "table") && ntables < 128) {
            tables[ntables] = (table){ strdup((const char *)sqlite3_column_text(st, 1)), strdup(sql), 0, NULL, 0, 0 };
            ntables++;
        } else {
            size_t n = strlen(sql);
            after = realloc(after, after_len + n + 3);
            if (!after) die(NULL, "schema");
            memcpy(after + after_len, sql, n);
            memcpy(after + after_len + n, ";\n", 3);
            after_len += n + 2;
        }
    }
    sqlite3_finalize(st);
    size_t rows = 0;
    for (int i = 0; i < ntables; i++) load_table(src, &tables[i]), rows += tables[i].nrows;
    sqlite3_close(src);

    unlink(argv[2]);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    double t0 = now();
    sqlite3 *db;
    if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        die(db, argv[2]);
    exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
             " PRAGMA temp_store=MEMORY; PRAGMA cache_size=-32768; PRAGMA page_size=65536;");
    for (int i = 0; i < ntables; i++) exec(db, tables[i].sql);
    exec(db, "BEGIN");
    for (int i = 0; i < ntables; i++) {
        table *t = &tables[i];
        if (!t->nrows) continue;
        char q[4096];
        int n = snprintf(q, sizeof q, "INSERT INTO \"%s\" VALUES (", t->name);
        for (int c = 0; c < t->ncol && n < (int)sizeof q - 4; c++) n += snprintf(q + n, sizeof q - (size_t)n, c ? ",?" : "?");
        snprintf(q + n, sizeof q - (size_t)n, ")");
        if (sqlite3_prepare_v3(db, q, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) die(db, q);
        for (size_t r = 0; r < t->nrows; r++) {
            const value *row = t->v + r * (size_t)t->ncol;
            for (int c = 0; c < t->ncol; c++) {
                const value *v = &row[c];
                if (v->type == SQLITE_INTEGER) sqlite3_bind_int64(st, c + 1, v->i);
                else if (v->type == SQLITE_FLOAT) sqlite3_bind_double(st, c + 1, v->d);
                else if (v->type == SQLITE_TEXT) sqlite3_bind_text(st, c + 1, v->p, v->n, SQLITE_STATIC);
                else if (v->type == SQLITE_BLOB) sqlite3_bind_blob(st, c + 1, v->p, v->n, SQLITE_STATIC);
                else sqlite3_bind_null(st, c + 1);
            }
            if (sqlite3_step(st) != SQLITE_DONE) die(db, t->name);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
    }
    if (after) exec(db, after);
    exec(db, "COMMIT");
    sqlite3_close(db);
    double s = now() - t0;
    printf("rows=%zu seconds=%.4f rows_per_s=%.0f\n", rows, s, rows / s);
    return 0;
}
