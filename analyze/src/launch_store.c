/* launch_store.c: see launch_store.h. Pages of 4 KiB with a known-byte bitmap, in an open-addressed table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launch_store.h"

#define TOMB ((ld_page *)1)

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
    memset(s, 0, sizeof *s);
}

void ld_store_write(ld_store *s, uint64_t va, const uint8_t *src, uint64_t len)
{
    while (len) {
        uint64_t base = va & ~(uint64_t)(LD_STORE_PAGE - 1);
        uint32_t off = (uint32_t)(va - base), n = len < LD_STORE_PAGE - off ? (uint32_t)len : LD_STORE_PAGE - off;
        ld_page *p = get(s, base);
        if (!p) ld_store_forget(s, va, n);   /* full: the old bytes must not pass for the new */
        else {
            memcpy(p->bytes + off, src, n);
            for (uint32_t i = off; i < off + n; i++) p->known[i >> 3] |= (uint8_t)(1u << (i & 7));
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
        for (uint32_t i = lo; i <= hi; i++) p->known[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
}

void ld_store_forget(ld_store *s, uint64_t va, uint64_t len)
{
    if (va && len > 0 - va) len = 0 - va;   /* the range ends at 2^64: it does not wrap to page 0 */
    if (len / LD_STORE_PAGE > s->n) {
        forget_pages(s, va, len);
        return;
    }
    while (len) {
        uint64_t base = va & ~(uint64_t)(LD_STORE_PAGE - 1);
        uint32_t off = (uint32_t)(va - base), n = len < LD_STORE_PAGE - off ? (uint32_t)len : LD_STORE_PAGE - off;
        ld_page *p = find(s, base);
        if (p) for (uint32_t i = off; i < off + n; i++) p->known[i >> 3] &= (uint8_t)~(1u << (i & 7));
        va += n, len -= n;
    }
}

uint64_t ld_store_read(const ld_store *s, uint64_t va, uint8_t *dst, uint64_t len, uint8_t *mask)
{
    uint64_t known = 0;
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
    return known;
}
