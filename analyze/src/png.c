/* png.c: PNG files of 8-bit RGBA pixels (vgt/png.h): signature, IHDR, one IDAT deflated by zlib, IEND
 * (RFC 2083, RFC 1950/1951). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "vgt/outfile.h"
#include "vgt/png.h"

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
    if (!w || !h || w > VGT_PNG_MAX_DIM || h > VGT_PNG_MAX_DIM)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "PNG %s: %ux%u is not 1..%u on each side", path, w, h,
                        VGT_PNG_MAX_DIM);
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
