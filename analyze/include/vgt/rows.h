/* rows.h: a trace as flat tables of fixed-layout rows, delivered in batches: submissions, GPFIFO entries,
 * methods, semantic events (launches, draws, semaphores, ...) and MME macro calls.
 *
 * This is the form for other languages and for tools that want tables, not callbacks per method: the
 * Python package (trace-format/python, through ctypes: one call per batch of rows, read as a numpy record
 * array without a copy), `vgt timeline` and `vgt report`. It is one walk (walk.h) with a semantic tracker
 * per channel (events.h) and the MME trace (mme_trace.h) feeding the trackers what macros emit, the same
 * composition as `vgt db`, so its counts are the db's counts.
 *
 *     static int on_batch(void *ctx, int table, const void *rows, uint32_t n) {
 *         if (table == VGT_ROWS_EVENTS) for (uint32_t i = 0; i < n; i++) { const vgt_row_event *e = ...; }
 *         return 0;
 *     }
 *     vgt_rows_sink sink = {.batch = on_batch, .ctx = &mine, .tables = VGT_ROWS_ALL};
 *     vgt_rows_walk("t.vgt", &sink, &err);
 *
 * Stability: every row is plain little-endian integers, naturally aligned, without pointers; a row type
 * only ever grows at its end, and vgt_rows_size() says how large this library's rows are, so a caller
 * built against an older header reads the fields it knows. Rows of one table arrive in trace order;
 * a table's batch is delivered when full and at the end of the walk.
 */
#ifndef VGT_ROWS_H
#define VGT_ROWS_H

#include <stdint.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tables (stable numbers). */
enum vgt_rows_table {
    VGT_ROWS_SUBMITS = 0,
    VGT_ROWS_ENTRIES = 1,
    VGT_ROWS_METHODS = 2,
    VGT_ROWS_EVENTS = 3,
    VGT_ROWS_MACRO_CALLS = 4,
    VGT_ROWS_TABLE_COUNT_
};
#define VGT_ROWS_ALL ((1u << VGT_ROWS_TABLE_COUNT_) - 1u)

/* One GPFIFO_SUBMIT. */
typedef struct vgt_row_submit {
    uint64_t submission;      /* 0-based GPFIFO_SUBMIT index */
    uint64_t seq, ts;         /* the record's sequence number and timestamp (capture CPU time, ns) */
    uint64_t client, channel, channel_class;
    uint64_t entry_count, segment_count;
    uint64_t methods;         /* methods decoded from its push buffers */
    uint64_t pb_bytes;        /* bytes of its GPFIFO entries (length x 4) */
    uint64_t launches, draws, sem_releases, macro_calls;   /* its events (LAUNCH, DRAW, SEM_RELEASE) and calls */
} vgt_row_submit;

/* One GPFIFO entry of a submission. */
typedef struct vgt_row_entry {
    uint64_t submission, entry, seq, ts;
    uint64_t raw, va;         /* va: push-buffer GPU VA with the extended base applied */
    uint64_t length;          /* dwords; 0: a control entry */
    uint64_t level, is_control, opcode;
} vgt_row_entry;

#define VGT_ROW_METHOD_HOST 0x100u    /* flags: a host (channel) method */
#define VGT_ROW_METHOD_FIRST 0x200u   /* flags: the first method of its header */
#define VGT_ROW_METHOD_MASKED 0x400u  /* flags: excluded by the subdevice mask */

/* One method (pushbuf.h vgt_method). */
typedef struct vgt_row_method {
    uint64_t submission, seq;
    uint32_t channel, cls, mthd, data;   /* class bound to the subchannel; mthd: byte address */
    uint32_t entry, dword, subch;
    uint32_t flags;           /* bits 7:0 the header kind (enum vgt_hdr_kind), VGT_ROW_METHOD_* */
} vgt_row_method;

/* One semantic event (events.h). The kind-specific fields are named by kind:
 *   LAUNCH, EMPTY_DISPATCH: va = QMD VA, va2 = program VA, a[0..2] grid, a[3..5] block, a[6] inline,
 *                           a[7] qmd_known, a[8] shared memory bytes, a[9] registers
 *   DRAW:                   va = index buffer VA, a[0] draw kind, a[1] topology, a[2] first, a[3] count,
 *                           a[4] instances, a[5] index size, a[6] base vertex, a[7] base instance
 *   SEM_RELEASE, SEM_ACQUIRE, REPORT: va = semaphore VA, va2 = payload, a[0] source, a[1] op, a[2] size,
 *                           a[3] reduction, a[4] flags, a[5] report
 *   UPLOAD:                 va = destination, va2 = bytes, a[0] line length, a[1] lines, a[2] complete
 *   COPY, EMPTY_DMA:        va = destination, va2 = source, a[0] bytes (low 32 bits), a[1] lines,
 *                           a[2] line length, a[3] memset, a[4] semaphore type
 *   PROGRAM_BIND:           va = program VA, a[0] stage, a[1] type, a[2] enabled, a[3] registers */
typedef struct vgt_row_event {
    uint64_t id;              /* 0, 1, 2 ... in trace order */
    uint64_t submission, seq;
    uint64_t macro_call;      /* origin macro: the call's id; else 0 */
    uint64_t va, va2;
    uint32_t kind;            /* enum vgt_event_kind */
    uint32_t origin;          /* enum vgt_event_origin */
    uint32_t channel, cls, subch, entry, dword;
    uint32_t a[10];
    uint32_t pad_;
} vgt_row_event;

/* One completed MME macro call (mme_trace.h). */
typedef struct vgt_row_macro_call {
    uint64_t id, submission, seq;
    uint64_t hash;            /* the body's hash (0 when the macro was never bound) */
    uint64_t instructions;
    uint32_t channel, cls, subch, entry, dword;
    uint32_t index;           /* j of CALL_MME_MACRO(j) */
    uint32_t version;         /* the registry's macro id; UINT32_MAX when unbound */
    uint32_t nparams, nemits;
    uint32_t status;          /* vgt_status of the run: 0 clean */
    uint32_t categories;      /* VGT_MME_EMIT_* of its emissions */
    uint32_t pad_;
} vgt_row_macro_call;

typedef struct vgt_rows_sink {
    /* rows: n rows of `table`, each vgt_rows_size(table) bytes, valid during the call. Non-zero stops the walk. */
    int (*batch)(void *ctx, int table, const void *rows, uint32_t n);
    void *ctx;
    unsigned tables;          /* bit (1u << table) for each table wanted (methods are the big one) */
    uint32_t batch_rows;      /* rows per batch; 0: 65536 */
    /* optional: called per record with its chunk's file offset (progress) */
    void (*progress)(void *ctx, uint64_t chunk_offset);
} vgt_rows_sink;

typedef struct vgt_rows_stats {
    uint64_t records, submissions, entries, methods, events, macro_calls;
    /* macro calls not run because an MME budget was spent (vgt/mme.h vgt_mme_budget: the rows those calls
     * would have made are missing), and what the budget says ("" when none was refused) */
    uint64_t macro_calls_refused;
    char mme_budget_note[256];
} vgt_rows_stats;

/* Walk the trace at path ("-": standard input) and deliver its rows. stats may be NULL. */
vgt_status vgt_rows_walk(const char *path, const vgt_rows_sink *sink, vgt_rows_stats *stats, vgt_error *err);
/* Bytes of one row of a table in this library (0 for an unknown table). */
uint32_t vgt_rows_size(int table);

/* Every row of the wanted tables in memory, for tools that look at a whole trace at once (timeline,
 * report): rows[t] holds count[t] rows of vgt_rows_size(t) bytes (cast to the table's row type).
 * progress (may be NULL) as in vgt_rows_sink, with ctx. Free with vgt_rows_free, also after a failure. */
typedef struct vgt_rows_all {
    void *rows[VGT_ROWS_TABLE_COUNT_];
    uint64_t count[VGT_ROWS_TABLE_COUNT_];
    uint64_t cap_[VGT_ROWS_TABLE_COUNT_];
    vgt_rows_stats stats;
} vgt_rows_all;
vgt_status vgt_rows_load(const char *path, unsigned tables, vgt_rows_all *all, void (*progress)(void *ctx, uint64_t chunk_offset),
                         void *ctx, vgt_error *err);
void vgt_rows_free(vgt_rows_all *all);

#ifdef __cplusplus
}
#endif
#endif
