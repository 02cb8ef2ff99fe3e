/* png.h: write 8-bit RGBA pixels as a PNG file (png.c: deflated with zlib). */
#ifndef VGT_PNG_H
#define VGT_PNG_H

#include <stdint.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_PNG_MAX_DIM 16384u        /* pixels on each side */

/* w*h pixels, rows top-down, 4 bytes each (R, G, B, A). */
vgt_status vgt_png_write_rgba(const char *path, const uint8_t *rgba, uint32_t w, uint32_t h, vgt_error *err);

#ifdef __cplusplus
}
#endif
#endif
