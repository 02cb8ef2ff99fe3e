/* surface.h: render-target surfaces as the 3D class describes them (SET_COLOR_TARGET_A/B, WIDTH, HEIGHT,
 * FORMAT, MEMORY): formats, the bytes a surface spans, where a pixel lies (pitch and block-linear, the GOB
 * layout), the surface turned into RGBA8 rows (the replay's render-target dump; png.h writes them as a
 * file) and a clear value in a target's format (what a software model needs to carry out CLEAR_SURFACE).
 * Pure functions over bytes (surface.c). */
#ifndef VGT_SURFACE_H
#define VGT_SURFACE_H

#include <stdint.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vgt_rt_desc {
    uint64_t va;                      /* SET_COLOR_TARGET_A:B */
    uint32_t width, height;           /* pixels (pitch layout: width is the pitch in bytes) */
    uint32_t format;                  /* SET_COLOR_TARGET_FORMAT */
    uint32_t memory;                  /* SET_COLOR_TARGET_MEMORY: BLOCK_HEIGHT 7:4, LAYOUT 12 (1 = pitch) */
    uint32_t target;                  /* j of SET_COLOR_TARGET_*(j) */
    int64_t submit_index;             /* the submission that first bound it */
    uint64_t seq;
} vgt_rt_desc;

#define VGT_RT_MAX_DIM 16384u

/* Bytes per pixel of a color-target format (4 for the 8-bit RGBA/BGRA formats), 0 when not supported. */
uint32_t vgt_rt_format_bpp(uint32_t format);
const char *vgt_rt_format_name(uint32_t format);
/* Pixels a row (pitch layout: WIDTH / bytes per pixel); 0 when the format is not supported or a
 * dimension is over VGT_RT_MAX_DIM. */
uint32_t vgt_rt_width_px(const vgt_rt_desc *d);
/* Bytes the surface spans from its VA (block-linear: whole blocks). 0 when the description is unusable. */
uint64_t vgt_rt_span(const vgt_rt_desc *d);
/* The byte offset of pixel (x, y) from the surface's VA, in its layout (call only when vgt_rt_span is
 * not 0). */
uint64_t vgt_rt_pixel_offset(const vgt_rt_desc *d, uint32_t x, uint32_t y);
/* Surface bytes (vgt_rt_span of them) -> width*height RGBA8 pixels, rows top-down. Block-linear surfaces
 * are de-swizzled per the GOB layout (64 bytes x 8 rows, 512 bytes; blocks of 2^BLOCK_HEIGHT GOBs). */
vgt_status vgt_rt_linearize(const vgt_rt_desc *d, const uint8_t *surface, uint64_t len, uint8_t *rgba, vgt_error *err);
/* The byte offset of (x_bytes, y) in a block-linear surface whose rows are width_bytes wide. */
uint64_t vgt_rt_gob_offset(uint32_t x_bytes, uint32_t y, uint32_t width_bytes, uint32_t block_height_log2);
/* The 4 bytes of one pixel holding a clear value (SET_COLOR_CLEAR_VALUE(0..3): R, G, B, A floats, clamped
 * to 0..1 and rounded to 8 bits) in the format. 0 when the format is not supported. */
int vgt_rt_clear_pixel(uint32_t format, const uint32_t value[4], uint8_t out[4]);
/* The byte of a pixel that holds component comp (0 R, 1 G, 2 B, 3 A); -1 for an unsupported format. */
int vgt_rt_component_byte(uint32_t format, unsigned comp);
/* FNV-1a 64 (the corpus workloads hash their pixels with it). */
uint64_t vgt_fnv1a64(const void *data, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif
