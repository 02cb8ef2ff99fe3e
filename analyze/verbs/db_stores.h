/* db_stores.h: the store census of a replay, read back in (`vgt db --stores FILE`, `vgt census --stores
 * FILE`). `vgt replay TRACE --census --census-json FILE` writes one JSON object a line, one per watched
 * range a submission changed (replay/include/vgt/replay.h, vgt_store_row):
 *
 *   {"submission":0,"seq":424,"channel":3203334400,"what":"observed","va":68943872,"length":4096,
 *    "pages_written":1,"bytes_changed":1,"first_changed":2992,"first_nonzero_pixel":748,"px0":null}
 *
 * A census per draw (`vgt replay --census-per-draw`) adds "draw":N,"draw_count":K to every row: the draws
 * and launches N .. N+K-1 (as `vgt draws` numbers them) of the piece of the submission the row was read
 * after; "draw":null,"draw_count":0 for the work before, between or after them. Both keys or neither.
 *
 * "unfinished":1, on a row only: the range was read before the GPU finished the work (its wait timed out
 * or the channel faulted), so the row's counts say nothing about what the work stores. The census per draw
 * then keeps a draw's render-target rows even when nothing changed (bytes_changed 0).
 *
 * px0 is the value of a render target's first pixel after the submission (an integer, the little-endian
 * 32-bit word at the target's VA), null on rows of other ranges; first_nonzero_pixel is an index.
 *
 * The layering (analyze never calls replay) makes the file the interface. db_stores_parse.c reads it with a
 * strict parser of exactly this flat shape: every key once, no other key, integers only (no fraction,
 * exponent or leading zero; px0 may be null), `what` a plain string without escapes; every number within its field's range
 * and every row consistent with itself (bytes changed within the range, pages within its page count).
 * Errors name the file, the line and the column, with the expected-versus-found values.
 *
 * Rows are matched to the trace's submissions as the walk reaches them (db_stores_match): a row whose seq
 * or channel differs from the trace's submission of that index means the file was made from another
 * trace, and is an error. Only changed ranges have rows: a submission without rows wrote nothing the
 * census watched ("wrote=0" to a team hunting a stage that never stores). */
#ifndef VGT_DB_STORES_H
#define VGT_DB_STORES_H

#include <stdint.h>

#include "vgt/error.h"

#define DB_STORES_MAX_LINE 1024u          /* bytes in one line (a row the replay writes is under 320) */
#define DB_STORES_MAX_ROWS (1u << 20)     /* the replay keeps at most this many (CENSUS_MAX_ROWS, replay/src/census.c) */
#define DB_STORES_MAX_WHAT 31u            /* characters of `what` ("observed", "render-target") */

typedef struct db_store_row {
    uint64_t submission;          /* 0-based GPFIFO_SUBMIT index */
    uint64_t seq;                 /* its record sequence number */
    uint32_t channel;             /* its channel handle */
    char what[DB_STORES_MAX_WHAT + 1];
    uint64_t va, length;          /* the watched range */
    uint64_t pages_written;       /* 4 KiB pages with a changed byte */
    uint64_t bytes_changed;
    int64_t first_changed;        /* offset of the first changed byte in the range, -1 none */
    int64_t first_nonzero_pixel;  /* index of the first non-zero 4-byte word after the submission, -1 none */
    int64_t px0;                  /* render targets: value of the first pixel after the submission, -1 none (null) */
    uint8_t has_draw;             /* a census per draw: draw and draw_count were given */
    int64_t draw;                 /* the first draw of the row's piece, -1 none (null) */
    uint32_t draw_count;
    uint32_t unfinished;          /* 1: read before the GPU finished the work (optional key, else 0) */
    uint64_t line;                /* 1-based line of the file */
} db_store_row;

typedef struct db_stores {
    const char *path;
    db_store_row *rows;           /* sorted by submission, then line */
    uint64_t n, cap;
    uint64_t next;                /* the first row not yet matched to a submission */
} db_stores;

/* Read and check the whole file. On failure *s holds nothing (freed). */
vgt_status db_stores_load(db_stores *s, const char *path, vgt_error *err);
/* Parse one line (without its newline) into *row; line and offset (of the line's first byte) are for the
 * messages. VGT_E_EOF for a blank line. */
vgt_status db_stores_parse_line(const char *path, const char *text, uint32_t len, uint64_t line, uint64_t offset,
                                 db_store_row *row, vgt_error *err);
/* The rows of the submission (index, seq, channel) the walk has reached: *first and *count. Submissions
 * come in increasing index order. VGT_E_FORMAT when a row of that index names another seq or channel. */
vgt_status db_stores_match(db_stores *s, uint64_t index, uint64_t seq, uint32_t channel, uint64_t *first,
                           uint64_t *count, vgt_error *err);
/* After a walk that reached the end of the trace (submissions: how many it had): VGT_E_NOT_FOUND when rows
 * name submissions the trace does not have. */
vgt_status db_stores_check_unmatched(const db_stores *s, uint64_t submissions, vgt_error *err);
void db_stores_free(db_stores *s);

#endif
