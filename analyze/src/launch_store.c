/* launch_store.c: see launch_store.h. Pages of 4 KiB with a known-byte bitmap, in an open-addressed table;
 * long fills as extents in a sorted array. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launch_store.h"
#include "vgt/grow.h"

#define TOMB ((ld_page *)1)

/* known bits [off, off+n) of a page set or cleared: whole bitmap bytes at once in the middle */
static void mark_known(ld_page *p, uint32_t off, uint32_t n, int set)
{
    uint32_t i = off, end = off + n;
    for (; i < end && (i & 7); i++)
        p->known[i >> 3] = set ? (uint8_t)(p->known[i >> 3] | (1u << (i & 7))) : (uint8_t)(p->known[i >> 3] & ~(1u << (i & 7)));
    if (end - i >= 8) {
        memset(p->known + (i >> 3), set ? 0xff : 0, (end - i) >> 3);
        i += (end - i) & ~7u;
    }
    for (; i < end; i++)
        p->known[i >> 3] = set ? (uint8_t)(p->known[i >> 3] | (1u << (i & 7))) : (uint8_t)(p->known[i >> 3] & ~(1u << (i & 7)));
}

/* ---- fill extents ---- */

/* the first extent ending at or after va */
static uint32_t fill_first(const ld_store *s, uint64_t va)
{
    uint32_t lo = 0, hi = s->nfills;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->fills[mid].last < va) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int fill_insert_at(ld_store *s, uint32_t at, const ld_fill *f)
{
    if (s->nfills == LD_STORE_MAX_FILLS) return 0;
    if (vgt_grow(&s->fills, &s->capfills, s->nfills + 1ull, 16)) return 0;
    memmove(s->fills + at + 1, s->fills + at, (s->nfills - at) * sizeof *s->fills);
    s->fills[at] = *f;
    s->nfills++;
    return 1;
}

/* [va, last] cut out of every extent (a part that cannot be kept when the array is full is forgotten) */
static void fill_cut(ld_store *s, uint64_t va, uint64_t last)
{
    uint32_t i = fill_first(s, va);
    while (i < s->nfills && s->fills[i].va <= last) {
        ld_fill *f = &s->fills[i];
        if (f->va < va && f->last > last) {   /* the cut is inside: two pieces */
            ld_fill tail = *f;
            tail.va = last + 1;
            f->last = va - 1;
            fill_insert_at(s, i + 1, &tail);
            return;
        }
        if (f->va < va) f->last = va - 1, i++;
        else if (f->last > last) { f->va = last + 1; return; }
        else {
            memmove(f, f + 1, (s->nfills - i - 1) * sizeof *f);
            s->nfills--;
        }
    }
}

/* the extents' bytes of [va, va+len) into dst, mask 1 there; returns how many */
static uint64_t fill_read(const ld_store *s, uint64_t va, uint8_t *dst, uint64_t len, uint8_t *mask)
{
    uint64_t known = 0, last = va + (len - 1) < va ? UINT64_MAX : va + (len - 1);   /* extents stop at 2^64 */
    for (uint32_t i = fill_first(s, va); i < s->nfills && s->fills[i].va <= last; i++) {
        const ld_fill *f = &s->fills[i];
        uint64_t a = f->va > va ? f->va : va, b = f->last < last ? f->last : last;
        uint32_t phase = (uint32_t)((a - f->origin) % f->esize);
        for (uint64_t x = a;; x++) {
            dst[x - va] = f->elem[phase];
            if (mask) mask[x - va] = 1;
            phase = phase + 1 == f->esize ? 0 : phase + 1;
            if (x == b) break;
        }
        known += b - a + 1;
    }
    return known;
}

static uint32_t hash(uint64_t page, uint32_t cap) { return (uint32_t)((page * 0x9E3779B97F4A7C15ull) >> 40) & (cap - 1); }

static ld_page *find(const ld_store *s, uint64_t va)
{
    if (!s->cap) return NULL;
    for (uint32_t j = hash(va / LD_STORE_PAGE, s->cap);; j = (j + 1) & (s->cap - 1)) {
        ld_page *p = s->slot[j];
        if (!p) return NULL;
        if (p != TOMB && p->va == va) return p;
    }
}

static int grow(ld_store *s)
{
    uint32_t cap = s->cap ? s->cap * 2 : 1024;
    ld_page **n = calloc(cap, sizeof *n);
    if (!n) return 0;
    for (uint32_t i = 0; i < s->cap; i++) {
        ld_page *p = s->slot[i];
        if (!p || p == TOMB) continue;
        uint32_t j = hash(p->va / LD_STORE_PAGE, cap);
        while (n[j]) j = (j + 1) & (cap - 1);
        n[j] = p;
    }
    free(s->slot);
    s->slot = n, s->cap = cap, s->used = s->n;
    return 1;
}

static ld_page *get(ld_store *s, uint64_t va)
{
    ld_page *p = find(s, va);
    if (p) return p;
    if (s->n >= LD_STORE_MAX_PAGES) return NULL;
    if ((s->used + 1) * 2 > s->cap && !grow(s)) return NULL;
    if (!(p = calloc(1, sizeof *p))) return NULL;
    p->va = va;
    uint32_t j = hash(va / LD_STORE_PAGE, s->cap);
    while (s->slot[j] && s->slot[j] != TOMB) j = (j + 1) & (s->cap - 1);
    if (!s->slot[j]) s->used++;
    s->slot[j] = p;
    s->n++;
    return p;
}

void ld_store_free(ld_store *s)
{
    for (uint32_t i = 0; i < s->cap; i++)
        if (s->slot[i] && s->slot[i] != TOMB) free(s->slot[i]);
    free(s->slot);
    free(s->fills);
    memset(s, 0, sizeof *s);
}

void ld_store_write(ld_store *s, uint64_t va, const uint8_t *src, uint64_t len)
{
    if (va && len > 0 - va) len = 0 - va;   /* the range ends at 2^64 */
    if (len && s->nfills) fill_cut(s, va, va + (len - 1));
    while (len) {
        uint64_t base = va & ~(uint64_t)(LD_STORE_PAGE - 1);
        uint32_t off = (uint32_t)(va - base), n = len < LD_STORE_PAGE - off ? (uint32_t)len : LD_STORE_PAGE - off;
        ld_page *p = get(s, base);
        if (!p) ld_store_forget(s, va, n);   /* full: the old bytes must not pass for the new */
        else {
            memcpy(p->bytes + off, src, n);
            mark_known(p, off, n, 1);
        }
        va += n, src += n, len -= n;
    }
}

/* forget_pages: the range's bytes forgotten page by page through the table, for a range longer than the store
 * holds pages (an upload's length comes from the trace: walking 2^40 bytes a page at a time never ends). */
static void forget_pages(ld_store *s, uint64_t va, uint64_t len)
{
    uint64_t last = len - 1 > UINT64_MAX - va ? UINT64_MAX : va + (len - 1);   /* inclusive: no wrap at 2^64 */
    for (uint32_t j = 0; j < s->cap; j++) {
        ld_page *p = s->slot[j];
        if (!p || p == TOMB) continue;
        uint64_t plast = p->va + (LD_STORE_PAGE - 1);
        if (plast < va || p->va > last) continue;
        uint32_t lo = p->va >= va ? 0 : (uint32_t)(va - p->va);
        uint32_t hi = plast <= last ? LD_STORE_PAGE - 1 : (uint32_t)(last - p->va);
        mark_known(p, lo, hi - lo + 1, 0);
    }
}

void ld_store_forget(ld_store *s, uint64_t va, uint64_t len)
{
    if (va && len > 0 - va) len = 0 - va;   /* the range ends at 2^64: it does not wrap to page 0 */
    if (!len) return;
    if (s->nfills) fill_cut(s, va, va + (len - 1));
    if (len / LD_STORE_PAGE > s->n) {
        forget_pages(s, va, len);
        return;
    }
    while (len) {
        uint64_t base = va & ~(uint64_t)(LD_STORE_PAGE - 1);
        uint32_t off = (uint32_t)(va - base), n = len < LD_STORE_PAGE - off ? (uint32_t)len : LD_STORE_PAGE - off;
        ld_page *p = find(s, base);
        if (p) mark_known(p, off, n, 0);
        va += n, len -= n;
    }
}

void ld_store_fill(ld_store *s, uint64_t va, uint64_t len, const uint8_t *elem, uint32_t esize)
{
    if (va && len > 0 - va) len = 0 - va;   /* the range ends at 2^64 */
    if (!len || !esize || esize > LD_STORE_FILL_ELEM) return;
    if (len < LD_STORE_FILL_MIN) {   /* short: into pages, a page's worth at a time */
        uint8_t buf[LD_STORE_PAGE];
        for (uint64_t done = 0; done < len;) {
            uint64_t n = len - done < LD_STORE_PAGE ? len - done : LD_STORE_PAGE;
            for (uint64_t i = 0; i < n; i++) buf[i] = elem[(done + i) % esize];
            ld_store_write(s, va + done, buf, n);
            done += n;
        }
        return;
    }
    ld_store_forget(s, va, len);   /* the pages' bytes and the extents under it */
    ld_fill f = {.va = va, .last = va + (len - 1), .origin = va, .esize = esize};
    memcpy(f.elem, elem, esize);
    fill_insert_at(s, fill_first(s, va), &f);   /* full: the range stays forgotten */
}

uint64_t ld_store_read(const ld_store *s, uint64_t va, uint8_t *dst, uint64_t len, uint8_t *mask)
{
    uint64_t known = 0, va0 = va, len0 = len;
    uint8_t *dst0 = dst, *mask0 = mask;
    while (len) {
        uint64_t base = va & ~(uint64_t)(LD_STORE_PAGE - 1);
        uint32_t off = (uint32_t)(va - base), n = len < LD_STORE_PAGE - off ? (uint32_t)len : LD_STORE_PAGE - off;
        const ld_page *p = find(s, base);
        if (!p) {
            if (mask) memset(mask, 0, n);
        } else {
            for (uint32_t i = 0; i < n;) {
                uint32_t at = off + i;
                uint8_t k = p->known[at >> 3];
                if (!(at & 7) && i + 8 <= n && (k == 0xff || k == 0)) {   /* eight bytes at once */
                    if (k) memcpy(dst + i, p->bytes + at, 8), known += 8;
                    if (mask) memset(mask + i, k ? 1 : 0, 8);
                    i += 8;
                    continue;
                }
                int b = (k >> (at & 7)) & 1;
                if (b) dst[i] = p->bytes[at], known++;
                if (mask) mask[i] = (uint8_t)b;
                i++;
            }
        }
        va += n, dst += n, len -= n;
        if (mask) mask += n;
    }
    /* the extents hold none of the pages' known bytes: what they have adds up */
    if (s->nfills && len0) known += fill_read(s, va0, dst0, len0, mask0);
    return known;
}
