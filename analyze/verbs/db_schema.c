/* db_schema.c: the SQLite schema of `vgt db` (documented in docs/sqlite-schema.md; keep both in step and
 * bump DB_SCHEMA_VERSION on any change), its indexes and views, and the INSERT statements.
 * 64-bit values (VAs, payloads) are stored as SQLite INTEGER, i.e. two's complement for values >= 2^63. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "db_draws.h"
#include "db_internal.h"
#include "vgt/mme_trace.h"

static const char *const schema_sql =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE identity(key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE records(seq INTEGER PRIMARY KEY, type INTEGER, type_name TEXT, ts INTEGER, flags INTEGER, length INTEGER);\n"
    "CREATE TABLE objects(seq INTEGER PRIMARY KEY, kind TEXT, client INTEGER, parent INTEGER, handle INTEGER,"
    " class INTEGER, class_name TEXT, size INTEGER, aperture INTEGER, status INTEGER);\n"
    "CREATE TABLE object_frees(seq INTEGER PRIMARY KEY, client INTEGER, parent INTEGER, handle INTEGER, status INTEGER);\n"
    "CREATE TABLE channels(seq INTEGER PRIMARY KEY, client INTEGER, parent INTEGER, handle INTEGER, class INTEGER,"
    " class_name TEXT, ring_va INTEGER, entries INTEGER, userd_memory INTEGER, userd_offset INTEGER, userd_gpu_va INTEGER,"
    " engine_type INTEGER, va_space INTEGER, context_share INTEGER, status INTEGER);\n"
    "CREATE TABLE engine_objects(seq INTEGER PRIMARY KEY, client INTEGER, channel INTEGER, handle INTEGER, class INTEGER,"
    " class_name TEXT, status INTEGER);\n"
    "CREATE TABLE mappings(seq INTEGER PRIMARY KEY, client INTEGER, device INTEGER, va_space INTEGER, memory INTEGER,"
    " gpu_va INTEGER, offset INTEGER, length INTEGER, flags INTEGER, source INTEGER, status INTEGER);\n"
    "CREATE TABLE unmappings(seq INTEGER PRIMARY KEY, client INTEGER, device INTEGER, va_space INTEGER, memory INTEGER,"
    " gpu_va INTEGER, length INTEGER, source INTEGER, status INTEGER);\n"
    "CREATE TABLE memory(seq INTEGER PRIMARY KEY, gpu_va INTEGER, length INTEGER, reason INTEGER, reason_name TEXT,"
    " memory INTEGER, flags INTEGER, data BLOB);\n"
    "CREATE TABLE submissions(submission INTEGER PRIMARY KEY, seq INTEGER UNIQUE, ts INTEGER, client INTEGER,"
    " channel INTEGER, token INTEGER, flags INTEGER, entry_count INTEGER, segment_count INTEGER, gp_put_before INTEGER,"
    " gp_put_after INTEGER, methods INTEGER);\n"
    "CREATE TABLE gpfifo_entries(submission INTEGER, entry INTEGER, seq INTEGER, raw INTEGER, va INTEGER,"
    " length INTEGER, level INTEGER, sync INTEGER, is_control INTEGER, opcode INTEGER, operand INTEGER,"
    " PRIMARY KEY(submission, entry)) WITHOUT ROWID;\n"
    /* Clustered on the stream position (rows arrive in that order, so the b-tree only appends, and no
     * separate index by submission is needed); id is the row's number in stream order. */
    "CREATE TABLE methods(submission INTEGER, entry INTEGER, dword INTEGER, id INTEGER, seq INTEGER,"
    " channel INTEGER, subch INTEGER, class INTEGER, method TEXT, address INTEGER, value INTEGER, fields TEXT,"
    " PRIMARY KEY(submission, entry, dword, id)) WITHOUT ROWID;\n"
    "CREATE TABLE events(id INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, entry INTEGER, dword INTEGER,"
    " channel INTEGER, subch INTEGER, class INTEGER, kind TEXT, text TEXT, origin TEXT, macro_call INTEGER);\n"
    /* launches run threads; empty_dispatches (the same columns) are scheduled QMDs that run none */
    "CREATE TABLE launches(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, qmd_va INTEGER,"
    " inline INTEGER, qmd_known INTEGER, qmd_version TEXT, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,"
    " block_x INTEGER, block_y INTEGER, block_z INTEGER, program_va INTEGER, shared_memory INTEGER, registers INTEGER,"
    " barriers INTEGER, cb_valid_mask INTEGER, cb0_va INTEGER, cb0_size INTEGER);\n"
    "CREATE TABLE empty_dispatches(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER,"
    " qmd_va INTEGER,"
    " inline INTEGER, qmd_known INTEGER, qmd_version TEXT, grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,"
    " block_x INTEGER, block_y INTEGER, block_z INTEGER, program_va INTEGER, shared_memory INTEGER, registers INTEGER,"
    " barriers INTEGER, cb_valid_mask INTEGER, cb0_va INTEGER, cb0_size INTEGER);\n"
    "CREATE TABLE uploads(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, dst_va INTEGER,"
    " length INTEGER, line_length INTEGER, line_count INTEGER, pitch_out INTEGER, pitch INTEGER, complete INTEGER,"
    " data BLOB);\n"
    /* copies move bytes; empty_dmas (the same columns) are LAUNCH_DMAs that move none */
    "CREATE TABLE copies(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, src_va INTEGER,"
    " dst_va INTEGER, bytes INTEGER, line_length INTEGER, line_count INTEGER, pitch_in INTEGER, pitch_out INTEGER,"
    " src_pitch INTEGER, dst_pitch INTEGER, multi_line INTEGER, remap INTEGER, memset INTEGER, remap_const_a INTEGER,"
    " semaphore_type INTEGER, sem_va INTEGER, sem_payload INTEGER);\n"
    "CREATE TABLE empty_dmas(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, src_va INTEGER,"
    " dst_va INTEGER, bytes INTEGER, line_length INTEGER, line_count INTEGER, pitch_in INTEGER, pitch_out INTEGER,"
    " src_pitch INTEGER, dst_pitch INTEGER, multi_line INTEGER, remap INTEGER, memset INTEGER, remap_const_a INTEGER,"
    " semaphore_type INTEGER, sem_va INTEGER, sem_payload INTEGER);\n"
    "CREATE TABLE semaphores(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, kind TEXT,"
    " source TEXT, op TEXT, va INTEGER, payload INTEGER, size INTEGER, reduction TEXT, flags INTEGER, report INTEGER);\n"
    "CREATE TABLE draws(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, kind TEXT,"
    " topology TEXT, first INTEGER, count INTEGER, instances INTEGER, index_size INTEGER, index_buffer_va INTEGER,"
    " base_vertex INTEGER, base_instance INTEGER);\n"
    "CREATE TABLE program_binds(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER,"
    " stage INTEGER, type INTEGER, enabled INTEGER, program_va INTEGER, registers INTEGER);\n"
    "CREATE TABLE clears(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER,"
    " color_mask INTEGER, depth INTEGER, stencil INTEGER, target INTEGER, target_va INTEGER, target_format INTEGER,"
    " width INTEGER, height INTEGER, memory INTEGER, bytes INTEGER, zt_va INTEGER, raw INTEGER);\n"
    "CREATE TABLE notifies(event INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, channel INTEGER, va INTEGER,"
    " type INTEGER);\n"
    "CREATE TABLE method_counts(class INTEGER, address INTEGER, method TEXT, n INTEGER);\n"
    "CREATE TABLE diagnostics(id INTEGER PRIMARY KEY, seq INTEGER, submission INTEGER, entry INTEGER, dword INTEGER,"
    " kind TEXT, message TEXT);\n"
    /* the store census of a replay (`vgt replay --census-json`), loaded with --stores; else empty. draw,
     * draw_count: a census per draw (`--census-per-draw`), the draws and launches of the row's piece (draw
     * NULL: the work around them; both NULL: a census per submission) */
    "CREATE TABLE stores(id INTEGER PRIMARY KEY, submission INTEGER, seq INTEGER, channel INTEGER, what TEXT,"
    " va INTEGER, length INTEGER, pages_written INTEGER, bytes_changed INTEGER, first_changed INTEGER,"
    " first_nonzero_pixel INTEGER, px0 INTEGER, draw INTEGER, draw_count INTEGER);\n"
    /* the CUDA driver API (format 1.2): every call, and by kind; first_submission / submission_count: the
     * submissions the call caused (docs/trace-format.md "Linking") */
    "CREATE TABLE cuda_api(seq INTEGER PRIMARY KEY, type TEXT, api TEXT, api_number INTEGER, result INTEGER,"
    " thread INTEGER, flags INTEGER, submits_before INTEGER, submits_after INTEGER, first_submission INTEGER,"
    " submission_count INTEGER, deferred INTEGER, object INTEGER, op TEXT, dst INTEGER, src INTEGER, size INTEGER,"
    " stream INTEGER);\n"
    "CREATE TABLE cuda_modules(seq INTEGER PRIMARY KEY, api TEXT, handle INTEGER, image_hash INTEGER, path TEXT,"
    " result INTEGER);\n"
    "CREATE TABLE cuda_functions(seq INTEGER PRIMARY KEY, api TEXT, function INTEGER, owner INTEGER, name TEXT,"
    " result INTEGER);\n"
    "CREATE TABLE cuda_launches(seq INTEGER PRIMARY KEY, api TEXT, function INTEGER, name TEXT, stream INTEGER,"
    " grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER, block_z INTEGER,"
    " shared_bytes INTEGER, params_length INTEGER, flags INTEGER, graph_exec INTEGER, node_index INTEGER,"
    " first_submission INTEGER, submission_count INTEGER, deferred INTEGER, qmd_va INTEGER, params BLOB);\n"
    "CREATE TABLE cuda_images(seq INTEGER PRIMARY KEY, hash INTEGER, kind TEXT, length INTEGER, data BLOB,"
    " referenced INTEGER, path TEXT, file_offset INTEGER, entries TEXT);\n";

static const char *const index_sql =
    "CREATE INDEX events_by_submission ON events(submission);\n"
    "CREATE INDEX launches_by_submission ON launches(submission);\n"
    "CREATE INDEX empty_dispatches_by_submission ON empty_dispatches(submission);\n"
    "CREATE INDEX semaphores_by_va ON semaphores(va);\n"
    "CREATE INDEX semaphores_by_submission ON semaphores(submission);\n"
    "CREATE INDEX uploads_by_dst ON uploads(dst_va);\n"
    "CREATE INDEX copies_by_dst ON copies(dst_va);\n"
    "CREATE INDEX draws_by_submission ON draws(submission);\n"
    "CREATE INDEX memory_by_va ON memory(gpu_va);\n"
    "CREATE INDEX mappings_by_va ON mappings(gpu_va);\n"
    "CREATE INDEX submissions_by_channel ON submissions(client, channel);\n"
    /* views for the common questions (docs/forensics.md) */
    "CREATE VIEW submission_summary AS SELECT s.submission, s.seq, s.channel, s.methods,"
    " (SELECT count(*) FROM launches l WHERE l.submission = s.submission) AS launches,"
    " (SELECT count(*) FROM empty_dispatches l WHERE l.submission = s.submission) AS empty_dispatches,"
    " (SELECT count(*) FROM draws d WHERE d.submission = s.submission) AS draws,"
    " (SELECT count(*) FROM uploads u WHERE u.submission = s.submission) AS uploads,"
    " (SELECT count(*) FROM copies c WHERE c.submission = s.submission) AS copies,"
    " (SELECT count(*) FROM empty_dmas c WHERE c.submission = s.submission) AS empty_dmas,"
    " (SELECT count(*) FROM semaphores m WHERE m.submission = s.submission AND m.kind = 'release') AS releases,"
    " (SELECT count(*) FROM semaphores m WHERE m.submission = s.submission AND m.kind = 'acquire') AS acquires"
    " FROM submissions s;\n"
    "CREATE VIEW compute_submissions AS SELECT submission, count(*) AS launches, sum(grid_x * grid_y * grid_z) AS ctas"
    " FROM launches GROUP BY submission;\n"
    "CREATE VIEW writes AS"
    " SELECT submission, seq, 'upload' AS how, dst_va AS va, length AS bytes FROM uploads"
    " UNION ALL SELECT submission, seq, CASE WHEN memset THEN 'memset' ELSE 'copy' END, dst_va, bytes FROM copies"
    " UNION ALL SELECT submission, seq, 'semaphore:' || source, va, size FROM semaphores WHERE kind IN ('release', 'report')"
    " UNION ALL SELECT submission, seq, 'clear', target_va, bytes FROM clears WHERE color_mask != 0 AND target_format != 0"
    /* a depth or stencil clear writes the zeta target, whose size the state does not carry */
    " UNION ALL SELECT submission, seq, 'clear:zeta', zt_va, NULL FROM clears WHERE (depth != 0 OR stencil != 0)"
    " AND zt_va != 0"
    " UNION ALL SELECT submission, seq, 'notify', va, 16 FROM notifies;\n"
    "CREATE VIEW semaphore_releases AS SELECT submission, seq, source, op, va, payload, size, reduction FROM semaphores"
    " WHERE kind = 'release';\n"
    "CREATE VIEW method_histogram AS SELECT class, method, n FROM method_counts;\n"
    "CREATE INDEX stores_by_submission ON stores(submission);\n"
    /* per submission: what the census saw it write (only submissions with at least one changed range) */
    "CREATE VIEW submission_stores AS SELECT submission, seq, channel, count(*) AS ranges,"
    " sum(pages_written) AS pages_written, sum(bytes_changed) AS bytes_changed,"
    " sum(CASE WHEN what = 'render-target' THEN bytes_changed ELSE 0 END) AS render_target_bytes,"
    " min(CASE WHEN what = 'render-target' THEN first_nonzero_pixel END) AS render_target_first_nonzero_px,"
    " (SELECT t.px0 FROM stores t WHERE t.submission = stores.submission AND t.what = 'render-target'"
    " ORDER BY t.id LIMIT 1) AS render_target_px0"
    " FROM stores GROUP BY submission;\n"
    /* which CUDA call caused which submissions and GPFIFO entries */
    "CREATE VIEW cuda_api_submissions AS SELECT a.seq AS api_seq, a.api, a.thread, a.deferred, s.submission,"
    " s.seq AS submission_seq, s.channel, s.entry_count FROM cuda_api a JOIN submissions s"
    " ON s.submission >= a.first_submission AND s.submission < a.first_submission + a.submission_count;\n"
    "CREATE VIEW cuda_api_entries AS SELECT a.seq AS api_seq, a.api, e.submission, e.entry, e.raw, e.va, e.length,"
    " e.is_control FROM cuda_api a JOIN gpfifo_entries e"
    " ON e.submission >= a.first_submission AND e.submission < a.first_submission + a.submission_count;\n";

const char *const db_insert_sql[ST_COUNT_] = {
    [ST_META] = "INSERT OR REPLACE INTO meta VALUES(?,?)",
    [ST_IDENTITY] = "INSERT OR REPLACE INTO identity VALUES(?,?)",
    [ST_RECORD] = "INSERT INTO records VALUES(?,?,?,?,?,?)",
    [ST_OBJECT] = "INSERT INTO objects VALUES(?,?,?,?,?,?,?,?,?,?)",
    [ST_FREE] = "INSERT INTO object_frees VALUES(?,?,?,?,?)",
    [ST_CHANNEL] = "INSERT INTO channels VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_ENGINE] = "INSERT INTO engine_objects VALUES(?,?,?,?,?,?,?)",
    [ST_MAPPING] = "INSERT INTO mappings VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    [ST_UNMAP] = "INSERT INTO unmappings VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_MEMORY] = "INSERT INTO memory VALUES(?,?,?,?,?,?,?,?)",
    [ST_SUBMISSION] = "INSERT INTO submissions VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_ENTRY] = "INSERT INTO gpfifo_entries VALUES(?,?,?,?,?,?,?,?,?,?,?)",
    [ST_METHOD] = "INSERT INTO methods VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_EVENT] = "INSERT INTO events VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_LAUNCH] = "INSERT INTO launches VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_EMPTY_DISPATCH] = "INSERT INTO empty_dispatches VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_UPLOAD] = "INSERT INTO uploads VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_COPY] = "INSERT INTO copies VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_EMPTY_DMA] = "INSERT INTO empty_dmas VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_SEMAPHORE] = "INSERT INTO semaphores VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_DRAW] = "INSERT INTO draws VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_BIND] = "INSERT INTO program_binds VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_CLEAR] = "INSERT INTO clears VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_NOTIFY] = "INSERT INTO notifies VALUES(?,?,?,?,?,?)",
    [ST_DIAG] = "INSERT INTO diagnostics VALUES(NULL,?,?,?,?,?,?)",
    [ST_COUNT] = "INSERT INTO method_counts VALUES(?,?,?,?)",
    [ST_STORE] = "INSERT INTO stores VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_CUDA_API] = "INSERT INTO cuda_api VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_CUDA_MODULE] = "INSERT INTO cuda_modules VALUES(?,?,?,?,?,?)",
    [ST_CUDA_FUNCTION] = "INSERT INTO cuda_functions VALUES(?,?,?,?,?,?)",
    [ST_CUDA_LAUNCH] = "INSERT INTO cuda_launches VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,NULL,?)",
    [ST_CUDA_IMAGE] = "INSERT INTO cuda_images VALUES(?,?,?,?,?,?,?,?,?)",
};

int db_fail(db_ctx *c, const char *what)
{
    int se = sqlite3_system_errno(c->db);   /* the operating system's cause, when there is one */
    if (!c->failed)
        vgt_fail(&c->err, VGT_E_IO, VGT_NO_OFFSET, "sqlite: %s: %s%s%s", what, sqlite3_errmsg(c->db), se ? ": " : "",
                 se ? strerror(se) : "");
    c->failed = 1;
    return 1;
}

int db_step(db_ctx *c, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return db_fail(c, what);
    return 0;
}

static int exec(db_ctx *c, const char *sql, const char *what)
{
    char *msg = NULL;
    if (sqlite3_exec(c->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        if (!c->failed) vgt_fail(&c->err, VGT_E_IO, VGT_NO_OFFSET, "sqlite: %s: %s", what, msg ? msg : "?");
        c->failed = 1;
        sqlite3_free(msg);
        return 1;
    }
    return 0;
}

/* 64 KiB pages for large traces (millions of rows: shallower trees, fewer pages to write); 4 KiB, SQLite's
 * default, for small ones: every table and index has a root page of its own from the start, and with 64 KiB
 * pages an export of a small trace wrote (and first zeroed) 3.5 MB of nearly empty pages. */
#define DB_LARGE_TRACE_BYTES (16u << 20)

/* The empty database of a small export (every table, the MME and draw tables, indexes and views), kept in
 * memory from the second small export of a process on and copied into each later one: creating some 70
 * objects costs SQLite a parse, a write of the schema table and a parse back of each, which a process that
 * exports many small traces (the test suites, the fuzzer) paid per export (most of it, for a small trace).
 * A copy is one page write per page, and the schema is parsed once when the first insert is prepared. The
 * first export of a process creates its schema itself, as a one-export process always does: the copy saves
 * nothing there. Large traces' databases (64 KiB pages, indexes after the rows) never use it. */
static struct {
    pthread_mutex_t lock;
    sqlite3 *db;
    int small_exports;   /* small exports begun in this process */
    int broken;          /* the template could not be built: never again */
} tmpl = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static int build_template(void)
{
    sqlite3 *db = NULL;
    vgt_error e;
    int ok = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) ==
                 SQLITE_OK &&
             sqlite3_exec(db, "PRAGMA page_size=4096; BEGIN", NULL, NULL, NULL) == SQLITE_OK &&
             sqlite3_exec(db, schema_sql, NULL, NULL, NULL) == SQLITE_OK && vgt_mme_db_schema(db, &e) == VGT_OK &&
             db_draws_schema(db, &e) == VGT_OK && sqlite3_exec(db, index_sql, NULL, NULL, NULL) == SQLITE_OK &&
             sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok) {
        sqlite3_close(db);
        return 0;
    }
    tmpl.db = db;
    return 1;
}

/* 1: c->db now holds the whole empty schema; 0: create it; -1: the copy failed (c->err says why). */
static int copy_template(db_ctx *c)
{
    pthread_mutex_lock(&tmpl.lock);
    int r = 0;
    if (tmpl.small_exports++ && !tmpl.db && !tmpl.broken && !build_template()) tmpl.broken = 1;
    if (tmpl.db) {
        sqlite3_backup *b = sqlite3_backup_init(c->db, "main", tmpl.db, "main");
        int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
        if (b && sqlite3_backup_finish(b) != SQLITE_OK && rc == SQLITE_DONE) rc = SQLITE_ERROR;
        r = rc == SQLITE_DONE ? 1 : (db_fail(c, "copying the schema"), -1);
    }
    pthread_mutex_unlock(&tmpl.lock);
    return r;
}

int db_create_schema(db_ctx *c, uint64_t trace_bytes)
{
    /* One writer, a fresh file, and a failure means a bad output anyway: no journal, no syncs. */
    char pragmas[256];
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
             " PRAGMA temp_store=MEMORY; PRAGMA cache_size=-32768; PRAGMA page_size=%u;",
             trace_bytes >= DB_LARGE_TRACE_BYTES ? 65536u : 4096u);
    if (exec(c, pragmas, "pragmas")) return 1;
    if (trace_bytes < DB_LARGE_TRACE_BYTES) {
        int r = copy_template(c);
        if (r < 0) return 1;
        c->from_template = r;
    }
    /* the tables inside the one transaction too: in autocommit each CREATE would be a commit of its own,
     * writing the schema page and the new root page to the file again */
    if (exec(c, "BEGIN", "begin") || (!c->from_template && exec(c, schema_sql, "creating tables"))) return 1;
    for (int i = 0; i < ST_COUNT_; i++)
        if (sqlite3_prepare_v3(c->db, db_insert_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &c->st[i], NULL) != SQLITE_OK)
            return db_fail(c, db_insert_sql[i]);
    return 0;
}

int db_create_late_tables(db_ctx *c)
{
    if (c->from_template) return 0;
    vgt_error e;
    if (vgt_mme_db_schema(c->db, &e) != VGT_OK || db_draws_schema(c->db, &e) != VGT_OK) {
        if (!c->failed) c->err = e;
        c->failed = 1;
        return 1;
    }
    return 0;
}

int db_create_indexes(db_ctx *c)
{
    if (!c->from_template && exec(c, index_sql, "creating indexes and views")) return 1;
    if (c->index_methods && exec(c, "CREATE INDEX methods_by_class ON methods(class, address);", "indexing methods"))
        return 1;
    return 0;
}
