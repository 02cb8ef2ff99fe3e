/* surface.c: color-target addressing and clear values (the facts are in vgt/surface.h). */
#include <string.h>

#include "vgt/surface.h"

#define GOB_W 64u
#define GOB_H 8u
#define GOB_BYTES 512u
#define MAX_BLOCK_HEIGHT_LOG2 5u   /* THIRTYTWO_GOBS */

/* byte index of R, G, B, A in a pixel */
static const struct { uint32_t format; uint8_t r, g, b, a; } formats[] = {
    { 0xCF, 2, 1, 0, 3 }, { 0xD0, 2, 1, 0, 3 }, { 0xD5, 0, 1, 2, 3 }, { 0xD6, 0, 1, 2, 3 },
};

static int format_index(uint32_t format)
{
    for (unsigned i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].format == format) return (int)i;
    return -1;
}

uint32_t vgt_surface_bpp(uint32_t format) { return format_index(format) >= 0 ? 4 : 0; }

static int is_pitch(const vgt_surface *s) { return (s->memory >> 12) & 1; }
static uint32_t block_log2(const vgt_surface *s) { return (s->memory >> 4) & 0xf; }

uint32_t vgt_surface_width_px(const vgt_surface *s)
{
    uint32_t bpp = vgt_surface_bpp(s->format);
    uint32_t w = is_pitch(s) ? (bpp ? s->width / bpp : 0) : s->width;
    return bpp && w <= VGT_SURFACE_MAX_DIM && s->height <= VGT_SURFACE_MAX_DIM ? w : 0;
}

uint64_t vgt_surface_offset(const vgt_surface *s, uint32_t x, uint32_t y)
{
    uint32_t bpp = vgt_surface_bpp(s->format);
    uint64_t xb = (uint64_t)x * bpp;
    if (is_pitch(s)) return (uint64_t)y * s->width + xb;
    uint64_t bh = 1ull << block_log2(s);
    uint64_t gobs_per_row = ((uint64_t)vgt_surface_width_px(s) * bpp + GOB_W - 1) / GOB_W;
    uint64_t gob_y = y / GOB_H, gob_x = xb / GOB_W;
    uint64_t in_gob = xb % 16 + (y % 2) * 16 + ((y / 2) % 2) * 32 + ((xb / 16) % 2) * 64 + ((y / 4) % 2) * 128 +
                      ((xb / 32) % 2) * 256;
    return ((gob_y / bh) * gobs_per_row * bh + gob_x * bh + gob_y % bh) * GOB_BYTES + in_gob;
}

uint64_t vgt_surface_span(const vgt_surface *s)
{
    uint32_t w = vgt_surface_width_px(s), bpp = vgt_surface_bpp(s->format);
    if (!w || !s->height) return 0;
    if (is_pitch(s)) return (uint64_t)s->width * s->height;
    if (block_log2(s) > MAX_BLOCK_HEIGHT_LOG2) return 0;
    uint64_t rows_per_block = (uint64_t)GOB_H << block_log2(s);
    uint64_t block_rows = (s->height + rows_per_block - 1) / rows_per_block;
    uint64_t gobs_per_row = ((uint64_t)w * bpp + GOB_W - 1) / GOB_W;
    return block_rows * gobs_per_row * (rows_per_block / GOB_H) * GOB_BYTES;
}

static uint8_t unorm8(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    if (!(f > 0.0f)) return 0;   /* NaN and negatives clamp to 0 */
    if (f >= 1.0f) return 255;
    return (uint8_t)(f * 255.0f + 0.5f);
}

int vgt_surface_clear_pixel(uint32_t format, const uint32_t value[4], uint8_t out[4])
{
    int i = format_index(format);
    if (i < 0) return 0;
    out[formats[i].r] = unorm8(value[0]);
    out[formats[i].g] = unorm8(value[1]);
    out[formats[i].b] = unorm8(value[2]);
    out[formats[i].a] = unorm8(value[3]);
    return 1;
}

int vgt_surface_component_byte(uint32_t format, unsigned comp)
{
    int i = format_index(format);
    if (i < 0 || comp > 3) return -1;
    const uint8_t by[4] = { formats[i].r, formats[i].g, formats[i].b, formats[i].a };
    return by[comp];
}
