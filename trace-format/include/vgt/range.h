/* range.h: the one parser of numbers, sizes and windows "A..B" that every verb and library shares.
 * Pure functions: they print nothing and keep no state. */
#ifndef VGT_RANGE_H
#define VGT_RANGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An inclusive range "A..B", "A.." (to the end), "..B", or "N" (A == B == N). Numbers may be hex (0x). */
typedef struct vgt_range {
    uint64_t first;
    uint64_t last;   /* UINT64_MAX when open */
} vgt_range;

#define VGT_RANGE_ALL ((vgt_range){0, UINT64_MAX})

int vgt_parse_range(const char *s, vgt_range *out);      /* 0 on success, -1 on a malformed range */
int vgt_parse_u64(const char *s, uint64_t *out);         /* decimal or 0x hex; 0 on success */
int vgt_range_has(const vgt_range *r, uint64_t v);
/* The range as a user writes it: "N", "A..B", "A.." or "..B"; returns buf. */
const char *vgt_range_format(const vgt_range *r, char *buf, size_t cap);
/* A byte count: decimal or 0x hex, optionally followed by K, M, G or T (binary multiples, with an
 * optional "B" or "iB"): "4096", "64K", "2MiB". 0 on success, -1 on a malformed or overflowing size. */
int vgt_parse_size(const char *s, uint64_t *out);

#ifdef __cplusplus
}
#endif
#endif
