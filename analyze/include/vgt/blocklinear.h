/* blocklinear.h: NVIDIA's block-linear memory layout (Fermi and later, the sector order of Maxwell and
 * later): where byte (x, y, z) of a surface lies from the surface's start. The 3D class's render targets
 * (vgt/surface.h) and the copy engine's block-linear sides use it. Pure functions (blocklinear.c, which
 * names its sources). */
#ifndef VGT_BLOCKLINEAR_H
#define VGT_BLOCKLINEAR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_BL_GOB_WIDTH 64u        /* bytes */
#define VGT_BL_GOB_HEIGHT 8u        /* rows */
#define VGT_BL_GOB_BYTES 512u
#define VGT_BL_MAX_BLOCK_LOG2 5u    /* blocks of at most 32 GOBs in height or depth */
/* The largest surface these functions address (the copy engine's 57-bit VAs): offsets stay far from
 * overflowing 64 bits, whatever the dimensions a trace gives. */
#define VGT_BL_MAX_SPAN (1ull << 57)

typedef struct vgt_bl_surface {
    uint64_t width;           /* bytes in a row */
    uint32_t height;          /* rows */
    uint32_t depth;           /* slices */
    uint32_t block_height_log2;   /* a block is 1 GOB wide, 2^this GOBs tall ... */
    uint32_t block_depth_log2;    /* ... and 2^this GOBs deep */
} vgt_bl_surface;

/* Where byte (x, y) of a GOB (x < 64, y < 8) lies in it. */
uint32_t vgt_bl_gob_offset(uint32_t x, uint32_t y);
/* Bytes the surface spans from its start: whole blocks in every direction. 0 when it is empty, a block
 * size is over VGT_BL_MAX_BLOCK_LOG2 or the span would be over VGT_BL_MAX_SPAN. */
uint64_t vgt_bl_span(const vgt_bl_surface *s);
/* Where byte x of row y of slice z lies from the surface's start (call only when vgt_bl_span is not 0,
 * with x < width, y < height, z < depth: the offset is then below the span). */
uint64_t vgt_bl_offset(const vgt_bl_surface *s, uint64_t x, uint32_t y, uint32_t z);
/* How many bytes from byte x of a row are contiguous in memory (the rest of its 16-byte run). */
static inline uint32_t vgt_bl_run(uint64_t x) { return 16u - (uint32_t)(x % 16u); }

#ifdef __cplusplus
}
#endif
#endif
