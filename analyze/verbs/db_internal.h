/* db_internal.h: private to `vgt db`: the export context, its prepared statements, and the row writers
 * (db_schema.c: schema and statements; db_rows.c: records; db_events.c: semantic events; db_stores.c: the
 * store census of a replay, --stores). */
#ifndef VGT_DB_INTERNAL_H
#define VGT_DB_INTERNAL_H

#include <sqlite3.h>
#include <stdint.h>

#include "db_stores.h"
#include "vgt/cli.h"
#include "vgt/events.h"
#include "vgt/walk.h"

#define DB_SCHEMA_VERSION 5   /* 2: the stores table (--stores); 3: empty_dispatches, empty_dmas, stores.px0;
                                 4: draw_state, draw_stages, sph, draw_lints, window_lints, window_macros;
                                 CLEAR and NOTIFY events; 5: the CUDA API tables (cuda_api, cuda_modules,
                                 cuda_functions, cuda_launches, cuda_images) and views */

/* One prepared INSERT per table; order matches db_insert_sql[] in db_schema.c. */
enum db_stmt {
    ST_META, ST_IDENTITY, ST_RECORD, ST_OBJECT, ST_FREE, ST_CHANNEL, ST_ENGINE, ST_MAPPING, ST_UNMAP, ST_MEMORY,
    ST_SUBMISSION, ST_ENTRY, ST_METHOD, ST_EVENT, ST_LAUNCH, ST_EMPTY_DISPATCH, ST_UPLOAD, ST_COPY, ST_EMPTY_DMA,
    ST_SEMAPHORE, ST_DRAW, ST_BIND, ST_CLEAR, ST_NOTIFY, ST_DIAG, ST_COUNT, ST_STORE,
    ST_CUDA_API, ST_CUDA_MODULE, ST_CUDA_FUNCTION, ST_CUDA_LAUNCH, ST_CUDA_IMAGE, ST_COUNT_
};

/* Methods per (class, address), see db_counts.c. */
typedef struct db_count_slot { uint32_t key; uint64_t n; } db_count_slot;
typedef struct db_counts {
    db_count_slot *slot, *last;
    uint32_t cap, used;
    uint64_t overflow;        /* methods of pairs past the table's maximum */
} db_counts;

typedef struct db_ctx {
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT_];
    int with_bytes;           /* memory record and upload bytes as BLOBs */
    int with_fields;          /* decoded field text for every method */
    int index_methods;        /* also index methods by (class, address) */
    int from_template;        /* the schema was copied whole (db_schema.c): nothing more to create */
    db_counts counts;
    const vgt_model *model;
    /* the submission being written */
    uint64_t submission;      /* index */
    uint64_t seq;
    uint32_t channel;
    uint64_t method_rows, event_rows, submission_rows;
    uint64_t sub_methods;
    int selected;             /* the current submission passes --submits/--channel */
    const vgt_walk_submit *cur;   /* the submission being walked: macro calls complete inside it */
    struct vgt_mme_trace *mme;    /* macro calls run in this walk, their emissions fed to the trackers */
    uint32_t name_cls;        /* class of the last method named, and its table */
    const struct vgt_class *name_class;
    db_stores *stores;        /* --stores: rows loaded, matched to submissions as they come (NULL: none) */
    uint64_t store_rows;
    uint64_t cuda_submits;    /* GPFIFO_SUBMIT records seen (the CUDA link rule's "the trace has a next one") */
    int failed;
    vgt_error err;
    char msg[256];
    vgt_progress progress;   /* bytes of the trace read, on a terminal */
} db_ctx;

extern const char *const db_insert_sql[ST_COUNT_];
/* Create tables (drop nothing: the output file is created fresh). */
/* db_io.c: SQLite's file I/O through the I/O table (vgt/io.h); once, before the database is opened. */
void db_route_io(void);

/* The pragmas, the tables and the insert statements, in the one transaction. trace_bytes (the trace's file size)
 * picks the page size; a small trace's schema may be copied whole, late tables, indexes and views included
 * (c->from_template). */
int db_create_schema(db_ctx *c, uint64_t trace_bytes);
/* The MME and draw tables (vgt_mme_db_schema, db_draws_schema), before their walks. */
int db_create_late_tables(db_ctx *c);
/* Indexes and views, after the data (faster than maintaining indexes during the load). */
int db_create_indexes(db_ctx *c);

/* sqlite failure: record the message in c->err, return 1. */
int db_fail(db_ctx *c, const char *what);
/* Step and reset a bound statement; 0 ok, 1 failed. */
int db_step(db_ctx *c, sqlite3_stmt *st, const char *what);

void db_count_method(db_counts *h, uint32_t cls, uint32_t mthd);
/* Write `method_counts` and free the table. */
int db_write_counts(db_ctx *c);

/* The stores rows of submission s (checked against it; written when s is selected). 0 ok, 1 failed. */
int db_store_rows(db_ctx *c, const vgt_walk_submit *s);

/* Rows for non-submission records (identity, objects, channels, mappings, memory, ...). */
int db_record_rows(db_ctx *c, const vgt_record *rec);
/* db_cuda.c: rows for the CUDA API records (format 1.2), and after the walk the links the whole trace
 * decides (a deferred link past the last submission, function names, the QMD each launch left). */
int db_cuda_rows(db_ctx *c, const vgt_record *rec);
int db_cuda_finish(db_ctx *c);
/* Rows for one semantic event of the current submission. */
void db_event_rows(void *ctx, const vgt_event *ev);

static inline void db_bind_u64(sqlite3_stmt *st, int i, uint64_t v) { sqlite3_bind_int64(st, i, (sqlite3_int64)v); }

#endif
