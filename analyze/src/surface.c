/* surface.c: render-target surfaces as the 3D class describes them: where a pixel lies, the surface turned
 * into RGBA8 rows (vgt/surface.h; png.c writes them as PNG files), and a clear value in a target's format.
 *
 * Facts (the class constants, vgt/nv/clcb97.h, the same in the Turing..Ada 3D classes):
 *   SET_COLOR_TARGET_MEMORY: BLOCK_HEIGHT (log2 GOBs), LAYOUT (BLOCKLINEAR, PITCH); the 8-bit RGBA
 *   SET_COLOR_TARGET_FORMAT values A8R8G8B8, A8RL8GL8BL8, A8B8G8R8, A8BL8GL8RL8 (names read from the most
 *   significant byte: A8B8G8R8 keeps R in the lowest byte, i.e. bytes R,G,B,A in memory).
 * Block-linear surfaces: the GOB and block layout of vgt/blocklinear.h (blocks 1 GOB deep).
 * Clear values: SET_COLOR_CLEAR_VALUE(0..3) hold R, G, B, A as floats; an 8-bit UNORM target stores each
 * clamped to 0..1, times 255, rounded to nearest.
 */
#include <stddef.h>
#include <string.h>

#include "vgt/blocklinear.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv_facts.h"
#include "vgt/surface.h"

_Static_assert(NVCB97_SET_COLOR_TARGET_MEMORY_BLOCK_HEIGHT_THIRTYTWO_GOBS == VGT_BL_MAX_BLOCK_LOG2,
               "the 3D class's largest block height is blocklinear.h's");

typedef struct rt_format {
    uint32_t value;
    const char *name;
    uint8_t r, g, b, a;            /* byte index of each channel in a pixel */
} rt_format;

static const rt_format formats[] = {
    {NVCB97_SET_COLOR_TARGET_FORMAT_V_A8R8G8B8, "A8R8G8B8", 2, 1, 0, 3},
    {NVCB97_SET_COLOR_TARGET_FORMAT_V_A8RL8GL8BL8, "A8RL8GL8BL8", 2, 1, 0, 3},
    {NVCB97_SET_COLOR_TARGET_FORMAT_V_A8B8G8R8, "A8B8G8R8", 0, 1, 2, 3},
    {NVCB97_SET_COLOR_TARGET_FORMAT_V_A8BL8GL8RL8, "A8BL8GL8RL8", 0, 1, 2, 3},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

static const rt_format *format_find(uint32_t v)
{
    for (size_t i = 0; i < NFORMATS; i++)
        if (formats[i].value == v) return &formats[i];
    return NULL;
}

uint32_t vgt_rt_format_bpp(uint32_t format) { return format_find(format) ? 4 : 0; }

const char *vgt_rt_format_name(uint32_t format)
{
    const rt_format *f = format_find(format);
    return f ? f->name : "unsupported";
}

static int is_pitch(const vgt_rt_desc *d)
{
    return VGT_NV_GET(d->memory, NVCB97_SET_COLOR_TARGET_MEMORY_LAYOUT) == NVCB97_SET_COLOR_TARGET_MEMORY_LAYOUT_PITCH;
}
static uint32_t block_log2(const vgt_rt_desc *d) { return VGT_NV_GET(d->memory, NVCB97_SET_COLOR_TARGET_MEMORY_BLOCK_HEIGHT); }

/* Pixels per row: block-linear WIDTH counts pixels; pitch WIDTH is the row pitch in bytes. */
uint32_t vgt_rt_width_px(const vgt_rt_desc *d)
{
    uint32_t bpp = vgt_rt_format_bpp(d->format);
    uint32_t w = is_pitch(d) ? (bpp ? d->width / bpp : 0) : d->width;
    return bpp && w <= VGT_RT_MAX_DIM && d->height <= VGT_RT_MAX_DIM ? w : 0;
}

static vgt_bl_surface bl_surface(uint32_t width_bytes, uint32_t height, uint32_t bh_log2)
{
    return (vgt_bl_surface){.width = width_bytes, .height = height, .depth = 1, .block_height_log2 = bh_log2};
}

uint64_t vgt_rt_gob_offset(uint32_t x, uint32_t y, uint32_t width_bytes, uint32_t bh_log2)
{
    vgt_bl_surface s = bl_surface(width_bytes, y + 1, bh_log2);
    return vgt_bl_offset(&s, x, y, 0);
}

uint64_t vgt_rt_span(const vgt_rt_desc *d)
{
    uint32_t bpp = vgt_rt_format_bpp(d->format);
    uint32_t w = vgt_rt_width_px(d);
    if (!w || !d->height) return 0;
    if (is_pitch(d)) return (uint64_t)d->width * d->height;
    vgt_bl_surface s = bl_surface(w * bpp, d->height, block_log2(d));
    return vgt_bl_span(&s);
}

uint64_t vgt_rt_pixel_offset(const vgt_rt_desc *d, uint32_t x, uint32_t y)
{
    uint32_t bpp = vgt_rt_format_bpp(d->format);
    if (is_pitch(d)) return (uint64_t)y * d->width + (uint64_t)x * bpp;
    return vgt_rt_gob_offset(x * bpp, y, vgt_rt_width_px(d) * bpp, block_log2(d));
}

vgt_status vgt_rt_linearize(const vgt_rt_desc *d, const uint8_t *surface, uint64_t len, uint8_t *rgba, vgt_error *err)
{
    const rt_format *f = format_find(d->format);
    uint64_t span = vgt_rt_span(d);
    if (!f || !span)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, d->va, "render target at VA 0x%llx: format 0x%x, %ux%u, memory 0x%x "
                        "cannot be converted (8-bit RGBA/BGRA formats, dimensions 1..%u, block height <= 32 GOBs)",
                        (unsigned long long)d->va, d->format, d->width, d->height, d->memory, VGT_RT_MAX_DIM);
    if (len < span)
        return VGT_FAIL(err, VGT_E_ARG, d->va, "render target at VA 0x%llx spans %llu bytes; %llu given",
                        (unsigned long long)d->va, (unsigned long long)span, (unsigned long long)len);
    uint32_t w = vgt_rt_width_px(d);
    for (uint32_t y = 0; y < d->height; y++)
        for (uint32_t x = 0; x < w; x++) {
            const uint8_t *p = surface + vgt_rt_pixel_offset(d, x, y);
            uint8_t *o = rgba + ((uint64_t)y * w + x) * 4;
            o[0] = p[f->r], o[1] = p[f->g], o[2] = p[f->b], o[3] = p[f->a];
        }
    return VGT_OK;
}

static uint8_t unorm8(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    if (!(f > 0.0f)) return 0;   /* NaN and negatives clamp to 0 */
    if (f >= 1.0f) return 255;
    return (uint8_t)(f * 255.0f + 0.5f);
}

int vgt_rt_clear_pixel(uint32_t format, const uint32_t value[4], uint8_t out[4])
{
    const rt_format *f = format_find(format);
    if (!f) return 0;
    out[f->r] = unorm8(value[0]);
    out[f->g] = unorm8(value[1]);
    out[f->b] = unorm8(value[2]);
    out[f->a] = unorm8(value[3]);
    return 1;
}

int vgt_rt_component_byte(uint32_t format, unsigned comp)
{
    const rt_format *f = format_find(format);
    if (!f || comp > 3) return -1;
    const uint8_t by[4] = {f->r, f->g, f->b, f->a};
    return by[comp];
}

uint64_t vgt_fnv1a64(const void *data, uint64_t n)
{
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a 64 offset basis and prime (RFC draft of Fowler/Noll/Vo) */
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
