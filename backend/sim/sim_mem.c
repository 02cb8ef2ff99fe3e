/* sim_mem.c: the sim's memory: a sorted list of disjoint mapped ranges (reference-counted, so that two
 * mappings of one VA range nest) and a sparse store of 4 KiB pages keyed by page number, allocated on
 * first write. Reads of mapped, never-written bytes give 0 (and are not known). Every access is checked
 * against the mapped ranges first; the page store is bounded by max_pages.
 *
 * Each page carries two bits per byte, "known" and "produced" (sim.h says what they mean); a page's
 * bits are valid only while its generation equals the memory's, so that sim_mem_invalidate (a shader
 * ran) is O(1). GPU writes are also appended to a write log (coalesced). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "vgt/grow.h"

void sim_mem_init(sim_mem *m, uint64_t max_bytes)
{
    memset(m, 0, sizeof *m);
    m->max_pages = max_bytes / SIM_PAGE_SIZE;
    m->hit = UINT32_MAX;
    m->gen = 1;
    m->next_private = SIM_PRIVATE_KEY;
}

void sim_mem_invalidate(sim_mem *m) { m->gen++; }

/* Bring a page's bits to the current generation: after an invalidation nothing is known. */
static sim_page *page_sync(const sim_mem *m, sim_page *p)
{
    if (p && p->gen != m->gen) {
        memset(p->known, 0, sizeof p->known);
        memset(p->produced, 0, sizeof p->produced);
        p->gen = m->gen;
    }
    return p;
}

void sim_mem_free(sim_mem *m)
{
    for (uint32_t i = 0; i < m->cap_slots; i++) free(m->slots[i]);
    free(m->slots);
    free(m->ranges);
    free(m->log);
    free(m->aliases);
    memset(m, 0, sizeof *m);
}

/* ---- mapped ranges ---- */

/* Index of the last range with va <= addr, or -1. */
static int64_t range_floor(const sim_mem *m, uint64_t addr)
{
    int64_t lo = 0, hi = (int64_t)m->nranges - 1, best = -1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (m->ranges[mid].va <= addr) {
            best = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return best;
}

vgt_status sim_mem_check(const sim_mem *m, uint64_t va, uint64_t len, const char *what, vgt_error *err)
{
    if (len == 0) return VGT_OK;
    const sim_range *hit = m->hit < m->nranges ? &m->ranges[m->hit] : NULL;
    if (hit && va >= hit->va && va + len <= hit->end && va + len > va) return VGT_OK;   /* the common case */
    if (va + len < va)
        return VGT_FAIL(err, VGT_E_FAULT, VGT_NO_OFFSET, "%s: %llu bytes at VA 0x%llx wrap around the address space",
                        what, (unsigned long long)len, (unsigned long long)va);
    uint64_t p = va, end = va + len;
    int64_t i = range_floor(m, p);
    while (p < end) {
        if (i < 0 || i >= (int64_t)m->nranges || m->ranges[i].end <= p || m->ranges[i].va > p)
            return VGT_FAIL(err, VGT_E_FAULT, VGT_NO_OFFSET,
                            "%s: %llu bytes at VA 0x%llx: VA 0x%llx is not mapped (fault)", what,
                            (unsigned long long)len, (unsigned long long)va, (unsigned long long)p);
        if (p == va && va + len <= m->ranges[i].end) ((sim_mem *)m)->hit = (uint32_t)i;   /* cache, not state */
        p = m->ranges[i].end;
        i++;
    }
    return VGT_OK;
}

typedef struct range_vec {
    sim_range *v;
    uint32_t n, cap;
} range_vec;

static int range_push(range_vec *o, uint64_t va, uint64_t end, uint32_t refs, uint32_t aperture)
{
    if (va >= end || refs == 0) return 0;
    if (o->n && o->v[o->n - 1].end == va && o->v[o->n - 1].refs == refs && o->v[o->n - 1].aperture == aperture) {
        o->v[o->n - 1].end = end;   /* coalesce neighbours with the same state */
        return 0;
    }
    /* doubled from 16, so never past VGT_BACKEND_MAX_MAP_RANGES (a power of two) */
    if (o->n == VGT_BACKEND_MAX_MAP_RANGES || vgt_grow(&o->v, &o->cap, o->n + 1ull, 16)) return -1;
    o->v[o->n++] = (sim_range){va, end, refs, aperture};
    return 0;
}

/* Rebuild the range list with [a, b) adjusted by delta (+1 map, -1 unmap); gaps get refs 1 when mapping. */
static vgt_status ranges_adjust(sim_mem *m, uint64_t a, uint64_t b, int delta, uint32_t aperture, vgt_error *err)
{
    range_vec o = {0};
    uint64_t p = a;
    int bad = 0;
    for (uint32_t i = 0; i < m->nranges && !bad; i++) {
        const sim_range r = m->ranges[i];
        if (r.end <= a || r.va >= b) {
            if (r.va >= b && p < b && delta > 0) bad |= range_push(&o, p, b, 1, aperture), p = b;
            bad |= range_push(&o, r.va, r.end, r.refs, r.aperture);
            continue;
        }
        if (r.va < a) bad |= range_push(&o, r.va, a, r.refs, r.aperture);
        uint64_t s = r.va > a ? r.va : a, e = r.end < b ? r.end : b;
        if (p < s && delta > 0) bad |= range_push(&o, p, s, 1, aperture);
        bad |= range_push(&o, s, e, (uint32_t)((int64_t)r.refs + delta), r.aperture);
        p = e;
        if (r.end > b) bad |= range_push(&o, b, r.end, r.refs, r.aperture);
    }
    if (p < b && delta > 0 && !bad) bad |= range_push(&o, p, b, 1, aperture);
    if (bad) {
        free(o.v);
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "sim: more than %u mapped ranges", VGT_BACKEND_MAX_MAP_RANGES);
    }
    free(m->ranges);
    m->ranges = o.v;
    m->nranges = o.n;
    m->cap_ranges = o.cap;
    m->hit = UINT32_MAX;
    return VGT_OK;
}

vgt_status sim_mem_map(sim_mem *m, uint64_t va, uint64_t size, uint32_t aperture, vgt_error *err)
{
    if (size == 0 || va + size < va)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "sim: cannot map %llu bytes at VA 0x%llx",
                        (unsigned long long)size, (unsigned long long)va);
    return ranges_adjust(m, va, va + size, +1, aperture, err);
}

vgt_status sim_mem_unmap(sim_mem *m, uint64_t va, uint64_t size, vgt_error *err)
{
    VGT_TRY(sim_mem_check(m, va, size, "sim: unmap", err));
    VGT_TRY(ranges_adjust(m, va, va + size, -1, 0, err));
    if (m->naliases) sim_alias_unmapped(m, va, size);
    return VGT_OK;
}

int sim_mem_any_mapped(const sim_mem *m, uint64_t va, uint64_t end)
{
    int64_t i = range_floor(m, va);
    if (i >= 0 && m->ranges[i].end > va) return 1;
    return (uint64_t)(i + 1) < m->nranges && m->ranges[i + 1].va < end;
}

/* ---- page store ---- */

static uint32_t slot_of(uint64_t pfn, uint32_t cap)
{
    uint64_t h = pfn * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (cap - 1);
}

static sim_page *page_find(sim_mem *m, uint64_t pfn)
{
    if (m->last && m->last->pfn == pfn) return m->last;
    if (!m->cap_slots) return NULL;
    for (uint32_t i = slot_of(pfn, m->cap_slots);; i = (i + 1) & (m->cap_slots - 1)) {
        sim_page *p = m->slots[i];
        if (!p) return NULL;
        if (p->pfn == pfn) return m->last = p;
    }
}

static int page_grow(sim_mem *m)
{
    uint32_t nc = m->cap_slots ? m->cap_slots * 2 : 1024;
    sim_page **ns = calloc(nc, sizeof *ns);
    if (!ns) return -1;
    for (uint32_t i = 0; i < m->cap_slots; i++) {
        sim_page *p = m->slots[i];
        if (!p) continue;
        uint32_t j = slot_of(p->pfn, nc);
        while (ns[j]) j = (j + 1) & (nc - 1);
        ns[j] = p;
    }
    free(m->slots);
    m->slots = ns;
    m->cap_slots = nc;
    return 0;
}

/* Linear probing: removal shifts later members of the probe chain back (no tombstones). */
static void page_remove(sim_mem *m, sim_page *p)
{
    uint32_t mask = m->cap_slots - 1, i = slot_of(p->pfn, m->cap_slots);
    while (m->slots[i] != p) i = (i + 1) & mask;
    m->slots[i] = NULL;
    for (uint32_t j = (i + 1) & mask; m->slots[j]; j = (j + 1) & mask) {
        uint32_t h = slot_of(m->slots[j]->pfn, m->cap_slots);
        int stays = i < j ? (h > i && h <= j) : (h > i || h <= j);
        if (stays) continue;
        m->slots[i] = m->slots[j];
        m->slots[j] = NULL;
        i = j;
    }
    m->npages--;
    if (m->last == p) m->last = NULL;
}

static void page_rekey(sim_mem *m, sim_page *p, uint64_t to)
{
    page_remove(m, p);
    p->pfn = to;
    uint32_t i = slot_of(to, m->cap_slots);
    while (m->slots[i]) i = (i + 1) & (m->cap_slots - 1);
    m->slots[i] = p;
    m->npages++;
}

void sim_pages_rekey(sim_mem *m, uint64_t k0, uint64_t k1, uint64_t base)
{
    if (k1 - k0 <= m->npages) {   /* a small range: look its pages up */
        for (uint64_t k = k0; k < k1; k++) {
            sim_page *p = page_find(m, k);
            if (p) page_rekey(m, p, base + (k - k0));
        }
        return;
    }
    /* a large one: collect the stored pages in it first (rekeying moves slots under a scan) */
    sim_page **hit = malloc((size_t)(m->npages ? m->npages : 1) * sizeof *hit);
    uint32_t n = 0;
    if (!hit) return;   /* no memory: the pages stay at their VA (the alias then shares a remap's pages) */
    for (uint32_t i = 0; i < m->cap_slots; i++)
        if (m->slots[i] && m->slots[i]->pfn >= k0 && m->slots[i]->pfn < k1) hit[n++] = m->slots[i];
    for (uint32_t i = 0; i < n; i++) page_rekey(m, hit[i], base + (hit[i]->pfn - k0));
    free(hit);
}

static sim_page *page_get(sim_mem *m, uint64_t pfn, vgt_error *err)
{
    sim_page *p = page_find(m, pfn);
    if (p) return p;
    if (m->npages >= m->max_pages) {
        VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "sim: memory limit of %llu pages (%llu MiB) reached writing VA 0x%llx",
                 (unsigned long long)m->max_pages, (unsigned long long)(m->max_pages >> 8),
                 (unsigned long long)(pfn << SIM_PAGE_SHIFT));
        return NULL;
    }
    if ((m->npages + 1) * 2 > m->cap_slots && page_grow(m)) {
        VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "sim: out of memory growing the page table");
        return NULL;
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "sim: out of memory for a page");
        return NULL;
    }
    p->pfn = pfn;
    p->gen = m->gen;
    uint32_t i = slot_of(pfn, m->cap_slots);
    while (m->slots[i]) i = (i + 1) & (m->cap_slots - 1);
    m->slots[i] = p;
    m->npages++;
    return m->last = p;
}

vgt_status sim_mem_read(sim_mem *m, uint64_t va, void *dst, uint64_t len, const char *what, vgt_error *err)
{
    VGT_TRY(sim_mem_check(m, va, len, what, err));
    uint8_t *d = dst;
    while (len) {
        uint64_t off = va & (SIM_PAGE_SIZE - 1), n = SIM_PAGE_SIZE - off;
        if (n > len) n = len;
        const sim_page *p = page_find(m, sim_page_key(m, va));
        if (p) memcpy(d, p->data + off, n);
        else memset(d, 0, n);
        d += n, va += n, len -= n;
    }
    return VGT_OK;
}

static void log_write(sim_mem *m, uint64_t va, uint64_t len)
{
    if (m->nlog) {
        vgt_backend_write *w = &m->log[m->nlog - 1];
        if (va <= w->va + w->len && va + len >= w->va) {   /* overlapping or adjacent: coalesce */
            uint64_t s = w->va < va ? w->va : va, e = w->va + w->len > va + len ? w->va + w->len : va + len;
            w->va = s, w->len = e - s;
            return;
        }
    }
    if (m->nlog == m->cap_log && (m->nlog >= SIM_WRITE_LOG_MAX || vgt_grow(&m->log, &m->cap_log, m->nlog + 1ull, 64))) {
        /* full: widen the last entry rather than lose the write */
        vgt_backend_write *w = &m->log[m->nlog - 1];
        uint64_t s = w->va < va ? w->va : va, e = w->va + w->len > va + len ? w->va + w->len : va + len;
        w->va = s, w->len = e - s;
        return;
    }
    m->log[m->nlog++] = (vgt_backend_write){va, len};
}

/* Set or clear the produced bits of bytes [off, off+n) of a page: bit by bit at the ends, whole bytes
 * of the bitmap in between. */
static void mark(uint8_t *bits, uint64_t off, uint64_t n, int set)
{
    uint64_t i = off, end = off + n;
    for (; i < end && (i & 7); i++) {
        if (set) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        else bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
    if (end - i >= 8) {
        memset(bits + (i >> 3), set ? 0xFF : 0, (end - i) >> 3);
        i += (end - i) & ~7ull;
    }
    for (; i < end; i++) {
        if (set) bits[i >> 3] |= (uint8_t)(1u << (i & 7));
        else bits[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
}

vgt_status sim_mem_write(sim_mem *m, uint64_t va, const void *src, uint64_t len, int kind, const char *what,
                         vgt_error *err)
{
    VGT_TRY(sim_mem_check(m, va, len, what, err));
    if (kind != SIM_HOST && len) log_write(m, va, len);
    const uint8_t *s = src;
    while (len) {
        uint64_t off = va & (SIM_PAGE_SIZE - 1), n = SIM_PAGE_SIZE - off;
        if (n > len) n = len;
        sim_page *p = page_sync(m, page_get(m, sim_page_key(m, va), err));
        if (!p) return err ? err->code : VGT_E_NOMEM;
        memcpy(p->data + off, s, n);
        mark(p->known, off, n, kind != SIM_GPU_VOLATILE);
        mark(p->produced, off, n, kind == SIM_GPU);
        s += n, va += n, len -= n;
    }
    return VGT_OK;
}

int sim_mem_stored(sim_mem *m, uint64_t va, uint64_t len)
{
    if (!m->npages || !len) return 0;
    uint64_t end = va + len < va ? UINT64_MAX : va + len;
    for (uint64_t p = va & ~(uint64_t)(SIM_PAGE_SIZE - 1); p < end; p += SIM_PAGE_SIZE) {
        if (page_find(m, sim_page_key(m, p))) return 1;
        if (p + SIM_PAGE_SIZE < p) break;
    }
    return 0;
}

vgt_status sim_mem_note_write(sim_mem *m, uint64_t va, uint64_t len, const char *what, vgt_error *err)
{
    VGT_TRY(sim_mem_check(m, va, len, what, err));
    if (len) log_write(m, va, len);
    return VGT_OK;
}

vgt_status sim_mem_write_masked(sim_mem *m, uint64_t va, const void *src, uint64_t len, const uint8_t *known_mask,
                                const char *what, vgt_error *err)
{
    VGT_TRY(sim_mem_write(m, va, src, len, SIM_GPU, what, err));
    for (uint64_t i = 0; i < len; i++) {
        if (known_mask[i]) continue;
        sim_page *p = page_find(m, sim_page_key(m, va + i));
        uint64_t off = (va + i) & (SIM_PAGE_SIZE - 1);
        p->known[off >> 3] &= (uint8_t)~(1u << (off & 7));
        p->produced[off >> 3] &= (uint8_t)~(1u << (off & 7));
    }
    return VGT_OK;
}

static vgt_status bits_of(sim_mem *m, uint64_t va, uint64_t len, uint8_t *mask, int produced, vgt_error *err)
{
    VGT_TRY(sim_mem_check(m, va, len, produced ? "sim: produced" : "sim: known", err));
    for (uint64_t i = 0; i < len;) {
        uint64_t a = va + i, off = a & (SIM_PAGE_SIZE - 1), n = SIM_PAGE_SIZE - off;
        if (n > len - i) n = len - i;
        const sim_page *p = page_sync(m, page_find(m, sim_page_key(m, a)));
        const uint8_t *bits = p ? (produced ? p->produced : p->known) : NULL;
        for (uint64_t k = 0; k < n; k++, off++) mask[i + k] = bits ? (bits[off >> 3] >> (off & 7)) & 1 : 0;
        i += n;
    }
    return VGT_OK;
}

vgt_status sim_mem_produced(sim_mem *m, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err)
{
    return bits_of(m, va, len, mask, 1, err);
}

vgt_status sim_mem_known(sim_mem *m, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err)
{
    return bits_of(m, va, len, mask, 0, err);
}

