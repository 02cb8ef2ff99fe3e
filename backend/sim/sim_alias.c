/* sim_alias.c: one memory object mapped at two VAs (backend.h map_alias). The sim's pages are keyed by
 * VA page number; an alias window makes the pages of its range resolve to the source's keys instead
 * (sim_page_key), so both VAs read and write the same bytes, with the same known/produced bits.
 *
 * Lifetimes: unmapping the alias removes its window. Unmapping the source while a window still uses
 * its storage moves those pages to private keys (above every VA page number) and points the windows
 * there, so the alias keeps its bytes and a later mapping at the source VA starts fresh. */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define PAGE_MASK ((uint64_t)SIM_PAGE_SIZE - 1)

static uint64_t page_down(uint64_t v) { return v & ~PAGE_MASK; }
static uint64_t page_up(uint64_t v) { return (v + PAGE_MASK) & ~PAGE_MASK; }

static int push_window(sim_mem *m, uint64_t va, uint64_t end, uint64_t key)
{
    if (va >= end) return 0;
    if (m->naliases == SIM_MAX_ALIASES) return -1;
    sim_alias *n = realloc(m->aliases, (size_t)(m->naliases + 1) * sizeof *n);
    if (!n) return -1;
    m->aliases = n;
    m->aliases[m->naliases++] = (sim_alias){va, end, key};
    return 0;
}

/* The source must resolve to consecutive storage keys: inside one window, or in none. O(windows). */
static int source_linear(const sim_mem *m, uint64_t src, uint64_t size, uint64_t *key)
{
    uint64_t first = page_down(src), last = page_down(src + size - 1);
    *key = sim_page_key(m, first);
    for (uint32_t i = 0; i < m->naliases; i++) {
        const sim_alias *w = &m->aliases[i];
        if (w->end <= first || w->va > last) continue;
        if (w->va > first || w->end <= last) return 0;   /* a window boundary inside the source */
    }
    return 1;
}

vgt_status sim_mem_map_alias(sim_mem *m, uint64_t va, uint64_t size, uint64_t src, vgt_error *err)
{
    if (!size || va + size < va || src + size < src)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "sim: cannot alias %llu bytes at VA 0x%llx", (unsigned long long)size,
                        (unsigned long long)va);
    if ((va ^ src) & PAGE_MASK)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "sim: alias VA 0x%llx and source VA 0x%llx differ in their offset "
                        "within a 4 KiB page", (unsigned long long)va, (unsigned long long)src);
    VGT_TRY(sim_mem_check(m, src, size, "sim: alias source", err));
    uint64_t lo = page_down(va), hi = page_up(va + size);
    if (sim_mem_any_mapped(m, lo, hi))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "sim: alias 0x%llx+0x%llx overlaps a mapped range",
                        (unsigned long long)va, (unsigned long long)size);
    uint64_t key;
    if (!source_linear(m, page_down(src), hi - lo, &key))
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "sim: the source 0x%llx+0x%llx spans storage of "
                        "different mappings", (unsigned long long)src, (unsigned long long)size);
    if (push_window(m, lo, hi, key))
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "sim: more than %u alias windows", SIM_MAX_ALIASES);
    vgt_status st = sim_mem_map(m, lo, hi - lo, VGT_APERTURE_UNKNOWN, err);
    if (st != VGT_OK) m->naliases--;
    return st;
}

/* Cut window i at VA cut (page aligned, strictly inside): the part above becomes a new window. */
static int split(sim_mem *m, uint32_t i, uint64_t cut)
{
    sim_alias w = m->aliases[i];
    if (cut <= w.va || cut >= w.end) return 0;
    if (push_window(m, cut, w.end, w.key + ((cut - w.va) >> SIM_PAGE_SHIFT))) return -1;
    m->aliases[i].end = cut;
    return 0;
}

/* Remove the parts of windows over [lo, hi). */
static void drop_windows(sim_mem *m, uint64_t lo, uint64_t hi)
{
    for (uint32_t i = 0; i < m->naliases; i++) {
        sim_alias *w = &m->aliases[i];
        if (w->end <= lo || w->va >= hi) continue;
        if (w->va < lo && split(m, i, lo)) continue;   /* no memory: the window stays whole */
        if (m->aliases[i].va >= lo && m->aliases[i].end > hi && split(m, i, hi)) continue;
        if (m->aliases[i].va >= lo && m->aliases[i].end <= hi) m->aliases[i--] = m->aliases[--m->naliases];
    }
}

/* Storage keys [k0, k1) lose their VA: windows using them move to fresh private keys, and so do the
 * pages (each page at most once, whatever number of windows share it). */
static void detach(sim_mem *m, uint64_t k0, uint64_t k1)
{
    int used = 0;
    for (uint32_t i = 0; i < m->naliases; i++) {
        sim_alias *w = &m->aliases[i];
        uint64_t n = (w->end - w->va) >> SIM_PAGE_SHIFT;
        if (w->key >= k1 || w->key + n <= k0) continue;
        if (w->key < k0 && split(m, i, w->va + ((k0 - w->key) << SIM_PAGE_SHIFT))) continue;
        w = &m->aliases[i];
        n = (w->end - w->va) >> SIM_PAGE_SHIFT;
        if (w->key >= k0 && w->key + n > k1 && split(m, i, w->va + ((k1 - w->key) << SIM_PAGE_SHIFT))) continue;
        w = &m->aliases[i];
        if (w->key >= k0 && w->key < k1) used = 1;
    }
    if (!used) return;
    uint64_t base = m->next_private;
    m->next_private += k1 - k0;
    for (uint32_t i = 0; i < m->naliases; i++)
        if (m->aliases[i].key >= k0 && m->aliases[i].key < k1) m->aliases[i].key = base + (m->aliases[i].key - k0);
    sim_pages_rekey(m, k0, k1, base);
}

void sim_alias_unmapped(sim_mem *m, uint64_t va, uint64_t size)
{
    uint64_t lo = page_down(va), hi = page_up(va + size);
    if (sim_mem_any_mapped(m, lo, hi)) return;   /* still mapped (nested mappings): nothing lost yet */
    uint64_t k0 = lo >> SIM_PAGE_SHIFT, k1 = hi >> SIM_PAGE_SHIFT;
    int own_keys = 1;
    for (uint32_t i = 0; i < m->naliases; i++)
        if (m->aliases[i].va < hi && m->aliases[i].end > lo) own_keys = 0;
    drop_windows(m, lo, hi);
    if (own_keys) detach(m, k0, k1);   /* the VA's own pages (not a window's) may back aliases */
}
