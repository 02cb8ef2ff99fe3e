/* model_hash.c: the map of vgt/u64map.h (model_hash.h names it for the model). The load factor stays under 1/2. */
#include "model_hash.h"

#include <stdlib.h>

static uint32_t slot_of(uint64_t key, uint32_t mask)
{
    key ^= key >> 33;                      /* splitmix64 finalizer */
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return (uint32_t)key & mask;
}

static int find(const u64map *m, uint64_t key, uint32_t *slot)
{
    if (!m->cap) return 0;
    uint32_t mask = m->cap - 1;
    for (uint32_t i = slot_of(key, mask);; i = (i + 1) & mask) {
        if (!m->vals[i]) {
            *slot = i;
            return 0;
        }
        if (m->keys[i] == key) {
            *slot = i;
            return 1;
        }
    }
}

int u64map_get(const u64map *m, uint64_t key, uint32_t *val)
{
    uint32_t s;
    if (!find(m, key, &s)) return 0;
    *val = m->vals[s] - 1;
    return 1;
}

static int grow(u64map *m)
{
    uint32_t ncap = m->cap ? 2 * m->cap : 64;
    u64map n = {calloc(ncap, sizeof *n.keys), calloc(ncap, sizeof *n.vals), ncap, 0};
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return -1;
    }
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->vals[i]) continue;
        uint32_t s = 0;   /* find always sets it (the table has room); -O2 cannot see that */
        find(&n, m->keys[i], &s);
        n.keys[s] = m->keys[i];
        n.vals[s] = m->vals[i];
        n.count++;
    }
    u64map_free(m);
    *m = n;
    return 0;
}

int u64map_put(u64map *m, uint64_t key, uint32_t val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m)) return -1;
    uint32_t s = 0;   /* as in grow */
    if (!find(m, key, &s)) {
        m->keys[s] = key;
        m->count++;
    }
    m->vals[s] = val + 1;
    return 0;
}

void u64map_del(u64map *m, uint64_t key)
{
    uint32_t i;
    if (!find(m, key, &i)) return;
    uint32_t mask = m->cap - 1;
    m->vals[i] = 0;
    m->count--;
    /* Backward shift: pull later entries of the probe run into the hole when their home allows it. */
    for (uint32_t j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
        uint32_t h = slot_of(m->keys[j], mask);
        int movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
        if (!movable) continue;
        m->keys[i] = m->keys[j];
        m->vals[i] = m->vals[j];
        m->vals[j] = 0;
        i = j;
    }
}

void u64map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->count = 0;
}
