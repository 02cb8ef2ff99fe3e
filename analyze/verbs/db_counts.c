/* db_counts.c: per (class, method address) counts kept in memory during the export and written once as
 * the `method_counts` table, so the method histogram needs no scan (or index) of `methods`.
 *
 * An open-addressing hash table, grown by doubling up to DB_MAX_METHOD_KINDS distinct pairs; a hostile
 * trace with more distinct pairs than that (SET_OBJECT can name any 16-bit class) has the excess counted
 * in one row with class -1. */
#include <stdlib.h>
#include <string.h>

#include "db_internal.h"
#include "vgt/classes.h"

#define DB_MAX_METHOD_KINDS (1u << 20)

static uint32_t hash32(uint32_t k)
{
    k ^= k >> 16; k *= 0x7feb352du; k ^= k >> 15; k *= 0x846ca68bu; k ^= k >> 16;
    return k;
}

static int grow(db_counts *h)
{
    uint32_t cap = h->cap ? 2 * h->cap : 1024;
    db_count_slot *n = calloc(cap, sizeof *n);
    if (!n) return 1;
    for (uint32_t i = 0; i < h->cap; i++) {
        if (!h->slot[i].n) continue;
        uint32_t j = hash32(h->slot[i].key) & (cap - 1);
        while (n[j].n) j = (j + 1) & (cap - 1);
        n[j] = h->slot[i];
    }
    free(h->slot);
    h->slot = n;
    h->cap = cap;
    return 0;
}

void db_count_method(db_counts *h, uint32_t cls, uint32_t mthd)
{
    uint32_t key = (cls & 0xffffu) << 14 | ((mthd >> 2) & 0x3fffu);
    if (h->last && h->last->key == key) { h->last->n++; return; }
    if (h->used * 2 >= h->cap) {
        if (h->used >= DB_MAX_METHOD_KINDS || grow(h)) { h->overflow++; return; }
    }
    uint32_t j = hash32(key) & (h->cap - 1);
    while (h->slot[j].n && h->slot[j].key != key) j = (j + 1) & (h->cap - 1);
    if (!h->slot[j].n) { h->slot[j].key = key; h->used++; }
    h->slot[j].n++;
    h->last = &h->slot[j];
}

int db_write_counts(db_ctx *c)
{
    db_counts *h = &c->counts;
    sqlite3_stmt *st = c->st[ST_COUNT];
    char buf[128];
    for (uint32_t i = 0; i < h->cap && !c->failed; i++) {
        if (!h->slot[i].n) continue;
        uint32_t cls = h->slot[i].key >> 14, mthd = (h->slot[i].key & 0x3fffu) << 2;
        sqlite3_bind_int64(st, 1, cls);
        sqlite3_bind_int64(st, 2, mthd);
        size_t n = vgt_method_name(cls, mthd, buf, sizeof buf);
        if (vgt_class_method(vgt_class_find(cls), mthd, NULL))
            sqlite3_bind_text(st, 3, buf, n < sizeof buf ? (int)n : (int)sizeof buf - 1, SQLITE_STATIC);
        else
            sqlite3_bind_null(st, 3);
        db_bind_u64(st, 4, h->slot[i].n);
        db_step(c, st, "method_counts");
    }
    if (h->overflow && !c->failed) {
        sqlite3_bind_int64(st, 1, -1);
        sqlite3_bind_null(st, 2);
        sqlite3_bind_null(st, 3);
        db_bind_u64(st, 4, h->overflow);
        db_step(c, st, "method_counts");
    }
    free(h->slot);
    memset(h, 0, sizeof *h);
    return c->failed;
}
