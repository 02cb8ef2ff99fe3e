/* launch_store.h: what the copy engine wrote, as far as the trace determines it (private to the work
 * extractor, launch_desc.c). CUDA loads a module's code and constants, and a program its inputs, with
 * copy-engine transfers from pinned staging memory: the trace records the staging bytes, not the
 * destination. The extractor applies each pitch copy and memset whose source bytes the trace knows to
 * this store, so that a launch's program and constant buffers are known where the trace determines them.
 * A MEMORY record (the CPU wrote) forgets the range: the store holds only bytes the GPU wrote last. */
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

typedef struct ld_store {
    ld_page **slot;               /* open addressing by page VA; NULL empty; (ld_page *)1 a removed page */
    uint32_t cap, n, used;
} ld_store;

void ld_store_free(ld_store *s);
/* Write len bytes at va (all known). */
void ld_store_write(ld_store *s, uint64_t va, const uint8_t *src, uint64_t len);
/* Forget [va, va+len). */
void ld_store_forget(ld_store *s, uint64_t va, uint64_t len);
/* Bytes of [va, va+len) into dst where known (others untouched), mask[i] = 1 where known (mask may be
 * NULL); returns how many were known. */
uint64_t ld_store_read(const ld_store *s, uint64_t va, uint8_t *dst, uint64_t len, uint8_t *mask);

#endif
