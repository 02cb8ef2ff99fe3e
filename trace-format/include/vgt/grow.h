/* grow.h: the one way an array of ours grows: to at least `need` items, its capacity doubled from `first`
 * (or from the capacity it has), with the byte count checked for overflow. Internal to vgtrace (not an
 * installed header): every part links the base library.
 *
 *   if (vgt_grow(&s->fills, &s->capfills, s->nfills + 1, 16))
 *       return VGT_FAIL(err, VGT_E_NOMEM, pos, "...");   (the caller names what and where)
 *
 * vgt_grow(pp, capp, need, first) takes the address of the array pointer and of its capacity (uint32_t or
 * uint64_t, chosen by _Generic), and the item size from the array's type. Arrays of void * with a size
 * known only at run time call vgt_grow_u32 / vgt_grow_u64 with the item size themselves.
 *
 * Returns 0 when *capp >= need (nothing done) or the array now holds *capp >= need items; -1 when the
 * capacity or its bytes would overflow or realloc failed, and then *pp and *capp are as they were (the
 * array is never freed). The new capacity is the old one (first when 0; first 0 counts as 1) doubled until
 * it holds need, kept within the capacity's type; when the doubled capacity's bytes would overflow, exactly
 * need. Zero-sized items allocate one byte, never realloc(p, 0) (which may free p). */
#ifndef VGT_GROW_H
#define VGT_GROW_H

#include <stddef.h>
#include <stdint.h>

int vgt_grow_u32(void **p, uint32_t *cap, uint64_t need, size_t item, uint32_t first);
int vgt_grow_u64(void **p, uint64_t *cap, uint64_t need, size_t item, uint64_t first);

#define vgt_grow(pp, capp, need, first)                                                  \
    _Generic((capp), uint32_t *: vgt_grow_u32, uint64_t *: vgt_grow_u64)((void **)(pp), (capp), (need), \
                                                                         sizeof **(pp), (first))

#endif
