/* db_draws.h: the draw tables of `vgt db` (db_draws.c; docs/sqlite-schema.md "draw_state"). */
#ifndef VGT_DB_DRAWS_H
#define VGT_DB_DRAWS_H

#include <sqlite3.h>
#include <stdint.h>

#include "vgt/error.h"
#include "vgt/walk.h"

/* Create draw_state, draw_stages, sph, draw_lints, window_lints and the window_macros view (which reads
 * macro_calls and gpfifo_entries: create those first). */
vgt_status db_draws_schema(sqlite3 *db, vgt_error *err);
/* Walk the trace at path (opt's filters: rows for the selected submissions) and fill the tables. The
 * caller owns the transaction. rows (may be NULL) receives the number of draw_state rows. */
vgt_status db_draws_fill(sqlite3 *db, const char *path, const vgt_walk_options *opt, uint64_t *rows, vgt_error *err);

#endif
