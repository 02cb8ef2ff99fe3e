/* rt.c: render-target surfaces as the 3D class describes them, turned into RGBA8 rows and PNG files.
 *
 * Facts (NVIDIA open-gpu-doc classes/3d/clcb97.h, the same in clc597.h..clc797.h):
 *   SET_COLOR_TARGET_MEMORY: BLOCK_WIDTH 3:0, BLOCK_HEIGHT 7:4 (log2 GOBs), BLOCK_DEPTH 11:8,
 *   LAYOUT 12:12 (BLOCKLINEAR 0, PITCH 1). SET_COLOR_TARGET_FORMAT values: 0xCF A8R8G8B8, 0xD0
 *   A8RL8GL8BL8, 0xD5 A8B8G8R8, 0xD6 A8BL8GL8RL8 (names read from the most significant byte: A8B8G8R8
 *   keeps R in the lowest byte, i.e. bytes R,G,B,A in memory).
 * Block-linear layout: a GOB is 64 bytes x 8 rows = 512 bytes; blocks are 1 GOB wide and 2^BLOCK_HEIGHT
 * GOBs tall, stored GOB after GOB down the block, blocks row-major. Inside a GOB the offset of byte
 * (x, y) takes its bits from x0-3, y0, y1, x4, y2, x5 (low to high):
 *   x%16 + (y%2)*16 + ((y/2)%2)*32 + ((x/16)%2)*64 + ((y/4)%2)*128 + ((x/32)%2)*256.
 * Measured on the H200 (2026-11-30, tests/gpu/run.sh): the GL corpus trace's render target replayed and
 * de-swizzled with this layout equals the capture's glReadPixels image in all 4096 pixels; the layout
 * commonly quoted for Tegra X1 (x4 before y1) reproduced only 3272 of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vgt/outfile.h"
#include "vgt/replay.h"

#define GOB_W 64u
#define GOB_H 8u
#define GOB_BYTES 512u
#define MAX_BLOCK_HEIGHT_LOG2 5u   /* THIRTYTWO_GOBS */

typedef struct rt_format {
    uint32_t value;
    const char *name;
    uint8_t r, g, b, a;            /* byte index of each channel in a pixel */
} rt_format;

static const rt_format formats[] = {
    {0xCF, "A8R8G8B8", 2, 1, 0, 3},
    {0xD0, "A8RL8GL8BL8", 2, 1, 0, 3},
    {0xD5, "A8B8G8R8", 0, 1, 2, 3},
    {0xD6, "A8BL8GL8RL8", 0, 1, 2, 3},
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

static int is_pitch(const vgt_rt_desc *d) { return (d->memory >> 12) & 1; }
static uint32_t block_log2(const vgt_rt_desc *d) { return (d->memory >> 4) & 0xf; }

/* Pixels per row: block-linear WIDTH counts pixels; pitch WIDTH is the row pitch in bytes. */
static uint32_t width_px(const vgt_rt_desc *d)
{
    uint32_t bpp = vgt_rt_format_bpp(d->format);
    return is_pitch(d) ? (bpp ? d->width / bpp : 0) : d->width;
}

uint64_t vgt_rt_gob_offset(uint32_t x, uint32_t y, uint32_t width_bytes, uint32_t bh_log2)
{
    uint64_t bh = 1ull << bh_log2;
    uint64_t gobs_per_row = (width_bytes + GOB_W - 1) / GOB_W;
    uint64_t gob_y = y / GOB_H, gob_x = x / GOB_W;
    uint64_t block_row = gob_y / bh, gob_in_block = gob_y % bh;
    uint64_t in_gob = x % 16 + (y % 2) * 16 + ((y / 2) % 2) * 32 + ((x / 16) % 2) * 64 + ((y / 4) % 2) * 128 +
                      ((x / 32) % 2) * 256;
    return (block_row * gobs_per_row * bh + gob_x * bh + gob_in_block) * GOB_BYTES + in_gob;
}

uint64_t vgt_rt_span(const vgt_rt_desc *d)
{
    uint32_t bpp = vgt_rt_format_bpp(d->format);
    uint32_t w = width_px(d);
    if (!bpp || !w || !d->height || w > VGT_RT_MAX_DIM || d->height > VGT_RT_MAX_DIM) return 0;
    if (is_pitch(d)) return (uint64_t)d->width * d->height;
    if (block_log2(d) > MAX_BLOCK_HEIGHT_LOG2) return 0;
    uint64_t rows_per_block = (uint64_t)GOB_H << block_log2(d);
    uint64_t block_rows = (d->height + rows_per_block - 1) / rows_per_block;
    uint64_t gobs_per_row = ((uint64_t)w * bpp + GOB_W - 1) / GOB_W;
    return block_rows * gobs_per_row * (rows_per_block / GOB_H) * GOB_BYTES;
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
    uint32_t w = width_px(d), bpp = 4;
    for (uint32_t y = 0; y < d->height; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint64_t off = is_pitch(d) ? (uint64_t)y * d->width + (uint64_t)x * bpp
                                       : vgt_rt_gob_offset(x * bpp, y, w * bpp, block_log2(d));
            const uint8_t *p = surface + off;
            uint8_t *o = rgba + ((uint64_t)y * w + x) * 4;
            o[0] = p[f->r], o[1] = p[f->g], o[2] = p[f->b], o[3] = p[f->a];
        }
    return VGT_OK;
}

uint64_t vgt_fnv1a64(const void *data, uint64_t n)
{
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a 64 offset basis and prime (RFC draft of Fowler/Noll/Vo) */
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* ---- PNG: signature, IHDR, one IDAT (zlib), IEND (RFC 2083, RFC 1950/1951) ---- */

static uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static int write_chunk(FILE *f, const char *type, const uint8_t *data, uint32_t len)
{
    uint8_t hdr[8];
    put_be32(hdr, len);
    memcpy(hdr + 4, type, 4);
    uint32_t crc = crc32_update(0, hdr + 4, 4);
    if (len) crc = crc32_update(crc, data, len);
    uint8_t tail[4];
    put_be32(tail, crc);
    return fwrite(hdr, 1, 8, f) == 8 && (!len || fwrite(data, 1, len, f) == len) && fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

/* The zlib stream (RFC 1950, deflated by zlib) of the filtered rows: filter byte 0 (None) each, which
 * render targets (large runs of one colour) compress well with. */
static uint8_t *zlib_rows(const uint8_t *rgba, uint32_t w, uint32_t h, uint32_t *out_len)
{
    uint64_t raw_len = (uint64_t)h * (1 + (uint64_t)w * 4);
    uLong bound = compressBound((uLong)raw_len);
    if (bound > UINT32_MAX) return NULL;
    uint8_t *raw = malloc(raw_len ? raw_len : 1), *z = malloc(bound);
    if (!raw || !z) {
        free(raw);
        free(z);
        return NULL;
    }
    for (uint32_t y = 0; y < h; y++) {
        raw[(uint64_t)y * (1 + w * 4ull)] = 0;
        memcpy(raw + (uint64_t)y * (1 + w * 4ull) + 1, rgba + (uint64_t)y * w * 4, (size_t)w * 4);
    }
    uLongf zlen = bound;
    int zrc = compress2(z, &zlen, raw, (uLong)raw_len, Z_BEST_COMPRESSION);
    free(raw);
    if (zrc != Z_OK) {
        free(z);
        return NULL;
    }
    *out_len = (uint32_t)zlen;
    return z;
}

vgt_status vgt_png_write_rgba(const char *path, const uint8_t *rgba, uint32_t w, uint32_t h, vgt_error *err)
{
    if (!w || !h || w > VGT_RT_MAX_DIM || h > VGT_RT_MAX_DIM)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "PNG %s: %ux%u is not 1..%u on each side", path, w, h,
                        VGT_RT_MAX_DIM);
    uint32_t zlen = 0;
    uint8_t *z = zlib_rows(rgba, w, h, &zlen);
    if (!z) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "PNG %s: out of memory for %ux%u", path, w, h);
    uint8_t ihdr[13];
    put_be32(ihdr, w);
    put_be32(ihdr + 4, h);
    ihdr[8] = 8, ihdr[9] = 6, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0;   /* 8-bit RGBA, deflate, no interlace */
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    /* beside PATH, renamed over it once complete; a device or FIFO is written to (vgt/outfile.h) */
    vgt_outfile of;
    vgt_status rc = vgt_outfile_open(&of, path, VGT_OUT_NO_STDOUT, err);
    FILE *f = rc == VGT_OK ? vgt_outfile_stdio(&of, err) : NULL;
    if (!f) {
        if (rc == VGT_OK) vgt_outfile_discard(&of);
        free(z);
        vgt_error_prefix(err, "PNG");
        return err ? err->code : VGT_E_IO;
    }
    int bad = fwrite(sig, 1, 8, f) != 8 || write_chunk(f, "IHDR", ihdr, 13) || write_chunk(f, "IDAT", z, zlen) ||
              write_chunk(f, "IEND", NULL, 0);
    free(z);
    if (bad) {
        int saved = errno;
        vgt_outfile_discard(&of);
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "PNG %s: cannot write: %s", path, strerror(saved));
    }
    rc = vgt_outfile_commit(&of, err);
    if (rc != VGT_OK) vgt_error_prefix(err, "PNG");
    return rc;
}
