/* test_blocklinear.c: the block-linear layout (vgt/blocklinear.h) at positions worked out by hand from the
 * documented layout: a GOB is 64 bytes x 8 rows whose offset bits are, low to high, x0-x3 y0 y1 x4 y2 x5;
 * a block is 1 GOB wide, 2^h GOBs tall, 2^d deep, its GOBs down its height then through its depth; blocks
 * along a row, then rows, then layers of blocks; edges padded to whole blocks. */
#include <stdlib.h>
#include <string.h>

#include "vgt/blocklinear.h"

#include "check.h"

static void test_gob(void)
{
    CHECK_EQ_U64(vgt_bl_gob_offset(0, 0), 0, "origin");
    CHECK_EQ_U64(vgt_bl_gob_offset(15, 0), 15, "a 16-byte run stays in order");
    CHECK_EQ_U64(vgt_bl_gob_offset(0, 1), 16, "y0 is bit 4");
    CHECK_EQ_U64(vgt_bl_gob_offset(0, 2), 32, "y1 is bit 5");
    CHECK_EQ_U64(vgt_bl_gob_offset(16, 0), 64, "x4 is bit 6");
    CHECK_EQ_U64(vgt_bl_gob_offset(0, 4), 128, "y2 is bit 7");
    CHECK_EQ_U64(vgt_bl_gob_offset(32, 0), 256, "x5 is bit 8");
    CHECK_EQ_U64(vgt_bl_gob_offset(17, 3), 1 + 16 + 32 + 64, "(17, 3)");
    CHECK_EQ_U64(vgt_bl_gob_offset(63, 7), 511, "last byte");
    /* a permutation of the 512 bytes */
    uint8_t seen[512] = {0};
    int dup = 0;
    for (uint32_t y = 0; y < 8; y++)
        for (uint32_t x = 0; x < 64; x++) dup |= seen[vgt_bl_gob_offset(x, y)]++;
    CHECK(!dup, "two bytes of a GOB at one offset");
}

static void test_blocks(void)
{
    /* 2 GOBs wide (128 bytes), blocks 2 GOBs tall (16 rows), 32 rows: 2 rows of 2 blocks of 1 KiB */
    vgt_bl_surface s = {.width = 128, .height = 32, .depth = 1, .block_height_log2 = 1};
    CHECK_EQ_U64(vgt_bl_span(&s), 4096, "span");
    /* (70, 9): GOB column 1, GOB row 1 -> block 1 (1024), its second GOB (512), in the GOB (6, 1) = 6 + 16 */
    CHECK_EQ_U64(vgt_bl_offset(&s, 70, 9, 0), 1024 + 512 + 22, "(70, 9)");
    /* (0, 16): the second row of blocks: block 2 */
    CHECK_EQ_U64(vgt_bl_offset(&s, 0, 16, 0), 2048, "(0, 16)");
    /* (127, 31): block 3, second GOB, GOB byte (63, 7) */
    CHECK_EQ_U64(vgt_bl_offset(&s, 127, 31, 0), 3072 + 512 + 511, "(127, 31)");

    /* partial blocks at the edges: 100 bytes and 20 rows pad to 2 GOBs across and 2 blocks of 16 rows down */
    vgt_bl_surface p = {.width = 100, .height = 20, .depth = 1, .block_height_log2 = 1};
    CHECK_EQ_U64(vgt_bl_span(&p), 4096, "padded span");
    CHECK_EQ_U64(vgt_bl_offset(&p, 99, 19, 0), 3072 + 0 + vgt_bl_gob_offset(35, 3), "last byte of a partial block");

    /* 3D: blocks 1 GOB tall and 2 deep; 4 slices are 2 layers of blocks of 1 KiB */
    vgt_bl_surface d = {.width = 64, .height = 8, .depth = 4, .block_depth_log2 = 1};
    CHECK_EQ_U64(vgt_bl_span(&d), 2048, "3D span");
    CHECK_EQ_U64(vgt_bl_offset(&d, 0, 0, 1), 512, "slice 1: the block's second GOB");
    CHECK_EQ_U64(vgt_bl_offset(&d, 0, 0, 2), 1024, "slice 2: the next layer of blocks");
    CHECK_EQ_U64(vgt_bl_offset(&d, 5, 1, 3), 1536 + 5 + 16, "slice 3");

    /* GOBs of a block go down its height before its depth: 2 tall, 2 deep */
    vgt_bl_surface hd = {.width = 64, .height = 16, .depth = 2, .block_height_log2 = 1, .block_depth_log2 = 1};
    CHECK_EQ_U64(vgt_bl_offset(&hd, 0, 8, 0), 512, "second GOB down");
    CHECK_EQ_U64(vgt_bl_offset(&hd, 0, 0, 1), 1024, "slice 1 after the block's height");

    /* every byte of a padded surface at its own offset inside the span */
    uint64_t span = vgt_bl_span(&p);
    uint8_t *seen = calloc(span, 1);
    int bad = 0;
    for (uint32_t y = 0; y < p.height; y++)
        for (uint32_t x = 0; x < p.width; x++) {
            uint64_t o = vgt_bl_offset(&p, x, y, 0);
            bad |= o >= span || seen[o]++;
        }
    CHECK(!bad, "offsets outside the span or shared");
    free(seen);
}

static void test_refused(void)
{
    vgt_bl_surface s = {.width = 64, .height = 8, .depth = 1, .block_height_log2 = 6};
    CHECK_EQ_U64(vgt_bl_span(&s), 0, "blocks of 64 GOBs");
    s.block_height_log2 = 0;
    s.block_depth_log2 = 6;
    CHECK_EQ_U64(vgt_bl_span(&s), 0, "blocks 64 GOBs deep");
    vgt_bl_surface z = {.width = 0, .height = 8, .depth = 1};
    CHECK_EQ_U64(vgt_bl_span(&z), 0, "no width");
    z.width = 64, z.height = 0;
    CHECK_EQ_U64(vgt_bl_span(&z), 0, "no height");
    z.height = 8, z.depth = 0;
    CHECK_EQ_U64(vgt_bl_span(&z), 0, "no depth");
    /* the largest dimensions a copy can name: over 2^57 bytes, refused rather than wrapped */
    vgt_bl_surface huge = {.width = 0xffffffffull * 16, .height = 0xffffffffu, .depth = 0xffffffffu,
                           .block_height_log2 = 5, .block_depth_log2 = 5};
    CHECK_EQ_U64(vgt_bl_span(&huge), 0, "a span past 2^57");
    vgt_bl_surface big = {.width = 1u << 20, .height = 1u << 16, .depth = 1};   /* 64 GiB: allowed */
    CHECK_EQ_U64(vgt_bl_span(&big), 1ull << 36, "a large surface");
}

int main(void)
{
    test_gob();
    test_blocks();
    test_refused();
    return check_finish("test_blocklinear");
}
