/* surface.h: where a pixel of a 3D color target lies in memory (pitch and block-linear layouts), and the
 * clear value of a target in its format: what a software model needs to carry out CLEAR_SURFACE.
 *
 * Facts (NVIDIA open-gpu-doc classes/3d/clcb97.h, the same in clc597.h..clc797.h):
 *   SET_COLOR_TARGET_MEMORY: BLOCK_HEIGHT 7:4 (log2 GOBs), LAYOUT 12:12 (BLOCKLINEAR 0, PITCH 1);
 *   SET_COLOR_TARGET_WIDTH counts pixels for block-linear targets and bytes (the row pitch) for pitch ones;
 *   SET_COLOR_TARGET_FORMAT 0xCF A8R8G8B8, 0xD0 A8RL8GL8BL8, 0xD5 A8B8G8R8, 0xD6 A8BL8GL8RL8 (4 bytes a
 *   pixel; A8B8G8R8 keeps R in the lowest byte); SET_COLOR_CLEAR_VALUE(0..3) are R, G, B, A floats.
 * Block-linear: a GOB is 64 bytes x 8 rows; blocks are 1 GOB wide and 2^BLOCK_HEIGHT GOBs tall, GOB after
 * GOB down the block, blocks row-major; inside a GOB byte (x, y) is at
 *   x%16 + (y%2)*16 + ((y/2)%2)*32 + ((x/16)%2)*64 + ((y/4)%2)*128 + ((x/32)%2)*256
 * (measured on the H200 by the replay's render-target dump, replay/src/rt.c, which keeps the same facts). */
#ifndef VGT_SURFACE_H
#define VGT_SURFACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_SURFACE_MAX_DIM 16384u

typedef struct vgt_surface {
    uint64_t va;
    uint32_t width, height;   /* as SET_COLOR_TARGET_WIDTH/HEIGHT hold them */
    uint32_t memory;          /* SET_COLOR_TARGET_MEMORY */
    uint32_t format;          /* SET_COLOR_TARGET_FORMAT */
} vgt_surface;

/* Bytes a pixel of a format this module knows takes (4), 0 for any other. */
uint32_t vgt_surface_bpp(uint32_t format);
/* Pixels a row; 0 when the format is unknown or the size is over VGT_SURFACE_MAX_DIM. */
uint32_t vgt_surface_width_px(const vgt_surface *s);
/* Byte offset of pixel (x, y) from the surface's VA. */
uint64_t vgt_surface_offset(const vgt_surface *s, uint32_t x, uint32_t y);
/* Bytes from the VA to the end of the last pixel's GOB or row (0 when not describable). */
uint64_t vgt_surface_span(const vgt_surface *s);
/* The 4 bytes of one pixel holding the clear value (R, G, B, A floats, clamped to 0..1, rounded to 8
 * bits) in the surface's format. 0 when the format is not known. */
int vgt_surface_clear_pixel(uint32_t format, const uint32_t value[4], uint8_t out[4]);
/* The byte of a pixel that holds component comp (0 R, 1 G, 2 B, 3 A), -1 for an unknown format. */
int vgt_surface_component_byte(uint32_t format, unsigned comp);

#ifdef __cplusplus
}
#endif
#endif
