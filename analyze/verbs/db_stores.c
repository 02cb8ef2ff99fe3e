/* db_stores.c: `vgt db --stores FILE`: the store census of a replay (db_stores.h) as the `stores` table,
 * one row per range a submission changed. Rows are matched to the trace's submissions as the walk reaches
 * them, so a file made from another trace is refused; rows are written for the selected submissions only,
 * like every other per-submission table. "None" (-1 in the file, or px0 null) is NULL in the table. */
#include "db_internal.h"

static void bind_or_null(sqlite3_stmt *st, int col, int64_t v)
{
    if (v < 0) sqlite3_bind_null(st, col);
    else sqlite3_bind_int64(st, col, v);
}

int db_store_rows(db_ctx *c, const vgt_walk_submit *s)
{
    if (!c->stores || c->failed) return c->failed;
    uint64_t first, n;
    if (db_stores_match(c->stores, s->index, s->seq, s->chan->handle, &first, &n, &c->err) != VGT_OK)
        return c->failed = 1;
    if (!s->selected) return 0;
    sqlite3_stmt *st = c->st[ST_STORE];
    for (uint64_t i = first; i < first + n; i++) {
        const db_store_row *r = &c->stores->rows[i];
        db_bind_u64(st, 1, r->submission);
        db_bind_u64(st, 2, r->seq);
        sqlite3_bind_int64(st, 3, r->channel);
        sqlite3_bind_text(st, 4, r->what, -1, SQLITE_STATIC);
        db_bind_u64(st, 5, r->va);
        db_bind_u64(st, 6, r->length);
        db_bind_u64(st, 7, r->pages_written);
        db_bind_u64(st, 8, r->bytes_changed);
        bind_or_null(st, 9, r->first_changed);
        bind_or_null(st, 10, r->first_nonzero_pixel);
        bind_or_null(st, 11, r->px0);
        bind_or_null(st, 12, r->has_draw ? r->draw : -1);
        if (r->has_draw) sqlite3_bind_int64(st, 13, r->draw_count);
        else sqlite3_bind_null(st, 13);
        if (db_step(c, st, "stores")) return 1;
        c->store_rows++;
    }
    return 0;
}
