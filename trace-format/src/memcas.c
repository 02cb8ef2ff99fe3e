/* memcas.c: MEMORY_CAS, memory contents as copies of earlier memory contents (format 1.3; memcas.h).
 *
 * Writer: each 4 KiB block of a MEMORY record's data is looked up by content (XXH3) among the blocks of
 * the window: the same bytes recorded before become a COPY of them. Else the last block recorded on the
 * same page is tried as a base when it covers the new block's addresses, then the last block of the same
 * length anywhere (descriptors and parameter blocks written to a ring of slots): when few 32-bit words
 * differ, a COPY of the base plus word patches. Else the bytes stay a LITERAL. Adjacent ops merge. The record becomes MEMORY_CAS
 * only when that is smaller than the MEMORY record it replaces; the reader turns it back into exactly
 * that MEMORY record. Both maps are direct-mapped (a lost entry only costs compression, never
 * correctness: every match is compared byte for byte before it is used). */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "le.h"
#include "memcas.h"

#define FIXED 40u                  /* MEMORY_CAS fixed part */
#define OP_SIZE 16u
#define PATCH_SIZE 8u
#define MAP_BITS 18
#define MAP_SIZE (1u << MAP_BITS)
#define MAX_PATCHED_WORDS 64u      /* per block: beyond that a literal is as good */
enum { OP_LITERAL = 0, OP_COPY = 1 };

/* ---- the window ---- */
vgt_status memcas_window_append(memcas_window *w, const uint8_t *p, uint64_t n, vgt_error *err)
{
    if (!w->ring && !(w->ring = malloc(VGT_MEMCAS_WINDOW)))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for the %llu-byte memory window",
                        (unsigned long long)VGT_MEMCAS_WINDOW);
    if (n > VGT_MEMCAS_WINDOW) {   /* only the tail can ever be named */
        w->pos += n - VGT_MEMCAS_WINDOW;
        p += n - VGT_MEMCAS_WINDOW;
        n = VGT_MEMCAS_WINDOW;
    }
    while (n) {
        uint64_t at = w->pos % VGT_MEMCAS_WINDOW, room = VGT_MEMCAS_WINDOW - at, k = n < room ? n : room;
        memcpy(w->ring + at, p, k);
        w->pos += k, p += k, n -= k;
    }
    return VGT_OK;
}

int memcas_window_has(const memcas_window *w, uint64_t src, uint64_t n)
{
    return w->ring && src + n >= src && src + n <= w->pos && src + VGT_MEMCAS_WINDOW >= w->pos;
}

void memcas_window_copy(const memcas_window *w, uint64_t src, uint8_t *out, uint64_t n)
{
    while (n) {
        uint64_t at = src % VGT_MEMCAS_WINDOW, room = VGT_MEMCAS_WINDOW - at, k = n < room ? n : room;
        memcpy(out, w->ring + at, k);
        src += k, out += k, n -= k;
    }
}

void memcas_window_free(memcas_window *w)
{
    free(w->ring);
    w->ring = NULL;
}

static vgt_status grow(uint8_t **p, uint32_t *cap, uint64_t need, vgt_error *err)
{
    if (need <= *cap) return VGT_OK;
    if (need > VGT_MAX_RECORD_PAYLOAD + 64ull)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "MEMORY_CAS: %llu bytes, over the record limit", (unsigned long long)need);
    uint8_t *q = realloc(*p, need);
    if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %llu bytes of memory contents", (unsigned long long)need);
    *p = q;
    *cap = (uint32_t)need;
    return VGT_OK;
}

/* ---- reader ---- */
vgt_status memcas_expand(const memcas_window *w, const uint8_t *p, uint32_t len, uint8_t **out, uint32_t *cap,
                         uint32_t *out_len, uint64_t off, vgt_error *err)
{
    if (len < FIXED)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: %u bytes, shorter than its %u-byte fixed part",
                        (unsigned long long)off, len, FIXED);
    uint32_t length = le_get32(p + 8), nops = le_get32(p + 24), npatch = le_get32(p + 28), nlit = le_get32(p + 32);
    uint64_t ops_end = FIXED + (uint64_t)nops * OP_SIZE, patch_end = ops_end + (uint64_t)npatch * PATCH_SIZE;
    if (patch_end + nlit > len || length > VGT_MAX_RECORD_PAYLOAD - 24)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: %u ops, %u patches and %u literal bytes run "
                        "past its %u-byte payload", (unsigned long long)off, nops, npatch, nlit, len);
    VGT_TRY(grow(out, cap, 24ull + length, err));
    uint8_t *o = *out;
    memcpy(o, p, 24);   /* gpu_va, length, reason, memory, flags: MEMORY's fixed part */
    uint8_t *data = o + 24;
    const uint8_t *lit = p + patch_end;
    uint64_t at = 0, lit_at = 0;
    for (uint32_t i = 0; i < nops; i++) {
        const uint8_t *op = p + FIXED + (uint64_t)i * OP_SIZE;
        uint32_t kind = le_get32(op), n = le_get32(op + 4);
        uint64_t back = le_get64(op + 8), src = w->pos - back;   /* COPY: how far back from this record's data */
        if (at + n > length)
            return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: op %u runs past the %u bytes of contents",
                            (unsigned long long)off, i, length);
        if (kind == OP_LITERAL) {
            if (lit_at + n > nlit)
                return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: op %u takes more literal bytes than "
                                "the %u there are", (unsigned long long)off, i, nlit);
            memcpy(data + at, lit + lit_at, n);
            lit_at += n;
        } else if (kind == OP_COPY) {
            if (back > w->pos || !memcas_window_has(w, src, n))
                return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: op %u copies memory stream bytes "
                                "%llu..%llu, outside the window (the stream is at %llu)", (unsigned long long)off, i,
                                (unsigned long long)src, (unsigned long long)(src + n), (unsigned long long)w->pos);
            memcas_window_copy(w, src, data + at, n);
        } else {
            return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: op %u has unknown kind %u",
                            (unsigned long long)off, i, kind);
        }
        at += n;
    }
    if (at != length || lit_at != nlit)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: ops give %llu bytes and use %llu literal bytes; "
                        "the record says %u and %u", (unsigned long long)off, (unsigned long long)at,
                        (unsigned long long)lit_at, length, nlit);
    for (uint32_t i = 0; i < npatch; i++) {
        const uint8_t *pt = p + ops_end + (uint64_t)i * PATCH_SIZE;
        uint32_t po = le_get32(pt);
        if (po % 4 || (uint64_t)po + 4 > length)
            return VGT_FAIL(err, VGT_E_FORMAT, off, "MEMORY_CAS at offset %llu: patch %u at byte %u is not a whole word of "
                            "the %u bytes", (unsigned long long)off, i, po, length);
        memcpy(data + po, pt + 4, 4);
    }
    *out_len = 24 + length;
    return VGT_OK;
}

/* ---- writer ---- */
struct memcas_encoder {
    memcas_window win;
    uint64_t hkey[MAP_SIZE], hpos[MAP_SIZE];   /* block content hash -> position */
    struct { uint64_t page, va, pos; uint32_t len; } last[MAP_SIZE];   /* page -> the last block recorded there */
    struct { uint64_t pos; uint32_t len; } by_len[4096];              /* length -> the last block that long */
    uint8_t *ops, *patches, *lits, *out, base[VGT_MEMCAS_BLOCK];
    uint32_t ops_cap, patches_cap, lits_cap, out_cap;
    uint32_t nops, npatch, nlit;
    uint64_t hashes[1 + VGT_MAX_RECORD_PAYLOAD / VGT_MEMCAS_BLOCK];   /* of the record being encoded */
};

vgt_status memcas_encoder_new(memcas_encoder **e, vgt_error *err)
{
    *e = calloc(1, sizeof **e);
    return *e ? VGT_OK : VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for the memory encoder");
}

void memcas_encoder_free(memcas_encoder *e)
{
    if (!e) return;
    memcas_window_free(&e->win);
    free(e->ops), free(e->patches), free(e->lits), free(e->out);
    free(e);
}

static uint32_t page_slot(uint64_t va) { return (uint32_t)(((va >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - MAP_BITS)); }

static vgt_status add_op(memcas_encoder *e, uint32_t kind, uint32_t n, uint64_t src, vgt_error *err)
{
    if (e->nops) {   /* merge with the previous op when it continues it */
        uint8_t *last = e->ops + (uint64_t)(e->nops - 1) * OP_SIZE;
        uint32_t lk = le_get32(last), ln = le_get32(last + 4);
        if (lk == kind && (kind == OP_LITERAL || e->win.pos - le_get64(last + 8) + ln == src) && (uint64_t)ln + n < UINT32_MAX) {
            le_put32(last + 4, ln + n);
            return VGT_OK;
        }
    }
    VGT_TRY(grow(&e->ops, &e->ops_cap, (uint64_t)(e->nops + 1) * OP_SIZE, err));
    uint8_t *op = e->ops + (uint64_t)e->nops++ * OP_SIZE;
    le_put32(op, kind);
    le_put32(op + 4, n);
    le_put64(op + 8, kind == OP_COPY ? e->win.pos - src : 0);   /* the distance back: repeats compress */
    return VGT_OK;
}

/* Words of blk that differ from the base at src (up to MAX_PATCHED_WORDS + 1). */
static uint32_t differing_words(memcas_encoder *e, const uint8_t *blk, uint32_t n, uint64_t src)
{
    memcas_window_copy(&e->win, src, e->base, n);
    uint32_t d = 0;
    for (uint32_t k = 0; k + 4 <= n && d <= MAX_PATCHED_WORDS; k += 4) d += memcmp(blk + k, e->base + k, 4) != 0;
    return d;
}

vgt_status memcas_encode(memcas_encoder *e, const uint8_t *p, uint32_t len, int *use_cas, const uint8_t **out,
                         uint32_t *out_len, vgt_error *err)
{
    *use_cas = 0;
    if (len < 24) return VGT_OK;   /* malformed: left for the reader to report */
    uint64_t va = le_get64(p);
    uint32_t n = le_get32(p + 8);
    if ((uint64_t)n + 24 > len) return VGT_OK;
    const uint8_t *data = p + 24;
    e->nops = e->npatch = e->nlit = 0;
    uint64_t start = e->win.pos;
    uint64_t *hashes = e->hashes;
    uint32_t nb = 0;
    for (uint32_t o = 0; o < n; o += VGT_MEMCAS_BLOCK, nb++) {
        uint32_t bl = n - o < VGT_MEMCAS_BLOCK ? n - o : VGT_MEMCAS_BLOCK;
        const uint8_t *blk = data + o;
        uint64_t h = XXH3_64bits(blk, bl) ^ bl;
        hashes[nb] = h;
        uint32_t hs = (uint32_t)(h >> (64 - MAP_BITS));
        uint64_t src = e->hpos[hs];
        if (e->hkey[hs] == h && memcas_window_has(&e->win, src, bl)) {
            memcas_window_copy(&e->win, src, e->base, bl);
            if (!memcmp(e->base, blk, bl)) {
                VGT_TRY(add_op(e, OP_COPY, bl, src, err));
                continue;
            }
        }
        uint64_t bva = va + o;
        uint32_t ps = page_slot(bva);
        int covered = e->last[ps].page == (bva >> 12) + 1 && e->last[ps].va <= bva &&
                      bva + bl <= e->last[ps].va + e->last[ps].len;
        src = covered ? e->last[ps].pos + (bva - e->last[ps].va) : 0;
        int based = covered && bl % 4 == 0 && memcas_window_has(&e->win, src, bl) &&
                    differing_words(e, blk, bl, src) <= MAX_PATCHED_WORDS;
        if (!based && bl % 4 == 0) {
            uint32_t ls = bl % 4096;
            src = e->by_len[ls].pos;
            based = e->by_len[ls].len == bl && memcas_window_has(&e->win, src, bl) &&
                    differing_words(e, blk, bl, src) <= MAX_PATCHED_WORDS;
        }
        if (based) {
            VGT_TRY(add_op(e, OP_COPY, bl, src, err));
            for (uint32_t k = 0; k + 4 <= bl; k += 4) {
                if (!memcmp(blk + k, e->base + k, 4)) continue;
                VGT_TRY(grow(&e->patches, &e->patches_cap, (uint64_t)(e->npatch + 1) * PATCH_SIZE, err));
                uint8_t *pt = e->patches + (uint64_t)e->npatch++ * PATCH_SIZE;
                le_put32(pt, o + k);
                memcpy(pt + 4, blk + k, 4);
            }
            continue;
        }
        VGT_TRY(add_op(e, OP_LITERAL, bl, 0, err));
        VGT_TRY(grow(&e->lits, &e->lits_cap, (uint64_t)e->nlit + bl, err));
        memcpy(e->lits + e->nlit, blk, bl);
        e->nlit += bl;
    }
    /* The data joins the window; its blocks become the newest of their content and of their address. */
    VGT_TRY(memcas_window_append(&e->win, data, n, err));
    for (uint32_t b = 0, o = 0; b < nb; b++, o += VGT_MEMCAS_BLOCK) {
        uint32_t bl = n - o < VGT_MEMCAS_BLOCK ? n - o : VGT_MEMCAS_BLOCK;
        uint32_t hs = (uint32_t)(hashes[b] >> (64 - MAP_BITS));
        e->hkey[hs] = hashes[b];
        e->hpos[hs] = start + o;
        uint32_t ps = page_slot(va + o);
        e->last[ps].page = ((va + o) >> 12) + 1;   /* + 1: 0 is an empty slot */
        e->last[ps].va = va + o;
        e->last[ps].pos = start + o;
        e->last[ps].len = bl;
        e->by_len[bl % 4096].pos = start + o;
        e->by_len[bl % 4096].len = bl;
    }
    uint64_t size = FIXED + (uint64_t)e->nops * OP_SIZE + (uint64_t)e->npatch * PATCH_SIZE + e->nlit;
    if (size + 64 >= len) return VGT_OK;   /* not worth a MEMORY_CAS */
    VGT_TRY(grow(&e->out, &e->out_cap, size, err));
    uint8_t *q = e->out;
    memcpy(q, p, 24);
    le_put32(q + 24, e->nops);
    le_put32(q + 28, e->npatch);
    le_put32(q + 32, e->nlit);
    le_put32(q + 36, 0);
    q += FIXED;
    memcpy(q, e->ops, (size_t)e->nops * OP_SIZE), q += (size_t)e->nops * OP_SIZE;
    if (e->npatch) memcpy(q, e->patches, (size_t)e->npatch * PATCH_SIZE), q += (size_t)e->npatch * PATCH_SIZE;
    if (e->nlit) memcpy(q, e->lits, e->nlit);
    *use_cas = 1;
    *out = e->out;
    *out_len = (uint32_t)size;
    return VGT_OK;
}
