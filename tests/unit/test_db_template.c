/* test_db_template.c: `vgt db` in a process that exports more than once copies a kept empty schema into
 * each small export after the first (analyze/verbs/db_schema.c); the databases must be the ones a fresh
 * process writes: the same tables, indexes and views (same SQL), the same rows, and sound. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int cmd_db(int, char **);

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
    return h;
}

/* Every schema object's type, name and SQL, and per table its row count and a hash of its rows, as one
 * text (sorted by type and name: the copy creates the objects in another order). */
static char *dump(const char *path)
{
    sqlite3 *db;
    CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK, "open %s", path);
    size_t cap = 1 << 20, n = 0;
    char *out = calloc(1, cap);
    sqlite3_stmt *st, *rows;
    sqlite3_prepare_v2(db, "SELECT type, name, sql FROM sqlite_master WHERE sql NOT NULL ORDER BY type, name", -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW && n + 8192 < cap) {
        const char *type = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);
        n += (size_t)snprintf(out + n, cap - n, "%s %s: %.4000s\n", type, name, (const char *)sqlite3_column_text(st, 2));
        if (strcmp(type, "table") != 0) continue;
        char q[256];
        snprintf(q, sizeof q, "SELECT * FROM \"%s\"", name);
        CHECK(sqlite3_prepare_v2(db, q, -1, &rows, NULL) == SQLITE_OK, "%s", q);
        uint64_t h = 0xcbf29ce484222325ull, nrows = 0;
        while (sqlite3_step(rows) == SQLITE_ROW) {
            nrows++;
            /* meta's values name the output file and the time: not the database's content */
            int ncol = strcmp(name, "meta") == 0 ? 1 : sqlite3_column_count(rows);
            for (int i = 0; i < ncol; i++) {
                const void *t = sqlite3_column_blob(rows, i);
                h = fnv(h, t ? t : "", (size_t)sqlite3_column_bytes(rows, i));
                h = fnv(h, "|", 1);
            }
        }
        sqlite3_finalize(rows);
        n += (size_t)snprintf(out + n, cap - n, "  %llu rows, %016llx\n", (unsigned long long)nrows, (unsigned long long)h);
    }
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0, "%s is sound", path);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static int export(const char *trace, const char *out, const char *extra)
{
    char *argv[] = {"db", (char *)trace, "-o", (char *)out, "-q", (char *)extra, NULL};
    return cmd_db(extra ? 6 : 5, argv);
}

int main(void)
{
    const char *trace = "corpus/gl_nostore.vgt";
    char dir[] = "/tmp/test_db_template.XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    char first[128], second[128], third[128];
    snprintf(first, sizeof first, "%s/first.db", dir);
    snprintf(second, sizeof second, "%s/second.db", dir);
    snprintf(third, sizeof third, "%s/third.db", dir);
    CHECK_EQ_U64(export(trace, first, NULL), 0, "first export (schema created)");
    CHECK_EQ_U64(export(trace, second, NULL), 0, "second export (schema copied)");
    CHECK_EQ_U64(export(trace, third, "--index-methods"), 0, "third export, --index-methods (copied, one more index)");
    char *a = dump(first), *b = dump(second), *c = dump(third);
    CHECK(strlen(a) > 5000 && strstr(a, "table methods") && strstr(a, "rows") && strstr(a, "table draw_state") && strstr(a, "table macro_calls") && strstr(a, "view writes"),
          "the first export has every table and view (%zu bytes of dump)", strlen(a));
    CHECK(strcmp(a, b) == 0, "the copied schema's database is the created one's");
    CHECK(strstr(c, "index methods_by_class") != NULL, "--index-methods adds its index to a copied schema");
    unlink(first), unlink(second), unlink(third), rmdir(dir);
    free(a), free(b), free(c);
    return check_finish("test_db_template");
}
