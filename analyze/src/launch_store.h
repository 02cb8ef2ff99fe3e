/* launch_store.h: what the copy engine wrote, as far as the trace determines it (private to the work
 * extractor, launch_desc.c). CUDA loads a module's code and constants, and a program its inputs, with
 * copy-engine transfers from pinned staging memory: the trace records the staging bytes, not the
 * destination. The extractor applies each pitch copy and memset whose source bytes the trace knows to
 * this store, so that a launch's program and constant buffers are known where the trace determines them.
 * A MEMORY record (the CPU wrote) forgets the range: the store holds only bytes the GPU wrote last.
 * A long fill (LD_STORE_FILL_MIN bytes or more: CUDA clears a fresh 72 MB allocation with one memset) is
 * kept as one extent of its repeated element, not as pages: written out byte by byte it cost the live
 * replay ~470 ms of one submission on the H200. Extents and the pages' known bytes never overlap: a write
 * or a forget cuts the extents under it, a fill forgets the pages under it. */
#ifndef VGT_LAUNCH_STORE_H
#define VGT_LAUNCH_STORE_H

#include <stdint.h>

#define LD_STORE_PAGE 4096u
#define LD_STORE_MAX_PAGES (1u << 18)   /* 1 GiB of copied bytes; past it writes are dropped (unknown) */

typedef struct ld_page {
    uint64_t va;
    uint8_t bytes[LD_STORE_PAGE];
    uint8_t known[LD_STORE_PAGE / 8];
} ld_page;

#define LD_STORE_FILL_MIN (64u * 1024)   /* shorter fills are written into pages like copies */
#define LD_STORE_MAX_FILLS 4096u        /* extents held; past it a long fill is forgotten (unknown) */
#define LD_STORE_FILL_ELEM 16u          /* a copy-engine fill's element: up to 4 components of 4 bytes */

typedef struct ld_fill {
    uint64_t va, last;            /* [va, last]: inclusive, so that an extent may end at 2^64 */
    uint64_t origin;              /* where the fill began: byte a is elem[(a - origin) % esize] */
    uint8_t elem[LD_STORE_FILL_ELEM];
    uint32_t esize;
} ld_fill;

typedef struct ld_store {
    ld_page **slot;               /* open addressing by page VA; NULL empty; (ld_page *)1 a removed page */
    uint32_t cap, n, used;
    ld_fill *fills;               /* disjoint, sorted by va */
    uint32_t nfills, capfills;
} ld_store;

void ld_store_free(ld_store *s);
/* Write len bytes at va (all known). */
void ld_store_write(ld_store *s, uint64_t va, const uint8_t *src, uint64_t len);
/* Fill [va, va+len) with the esize-byte element elem repeated from va (1 <= esize <= LD_STORE_FILL_ELEM). */
void ld_store_fill(ld_store *s, uint64_t va, uint64_t len, const uint8_t *elem, uint32_t esize);
/* Forget [va, va+len). */
void ld_store_forget(ld_store *s, uint64_t va, uint64_t len);
/* Bytes of [va, va+len) into dst where known (others untouched), mask[i] = 1 where known (mask may be
 * NULL); returns how many were known. */
uint64_t ld_store_read(const ld_store *s, uint64_t va, uint8_t *dst, uint64_t len, uint8_t *mask);

#endif
