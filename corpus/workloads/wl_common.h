/* wl_common.h - tiny helpers shared by the vgtrace corpus workloads:
 * FNV-1a 64 hashing and a dependency-free PNG writer (stored deflate blocks). */
#ifndef WL_COMMON_H
#define WL_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t wl_fnv1a64(const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) { h ^= p[i]; h *= 0x100000001b3ULL; }
    return h;
}

static inline uint32_t wl_crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static inline void wl_put_be32(unsigned char *b, uint32_t v)
{
    b[0] = (unsigned char)(v >> 24); b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);  b[3] = (unsigned char)v;
}

/* Writes one PNG chunk: length, type, data, CRC32(type+data). */
static inline int wl_png_chunk(FILE *f, const char *type, const unsigned char *data, uint32_t len)
{
    unsigned char b[4];
    wl_put_be32(b, len);
    if (fwrite(b, 1, 4, f) != 4 || fwrite(type, 1, 4, f) != 4) return -1;
    if (len && fwrite(data, 1, len, f) != len) return -1;
    uint32_t crc = wl_crc32_update(0, (const unsigned char *)type, 4);
    crc = wl_crc32_update(crc, data, len);
    wl_put_be32(b, crc);
    return fwrite(b, 1, 4, f) == 4 ? 0 : -1;
}

/* Writes an 8-bit RGBA image (rows top to bottom, tightly packed) as PNG.
 * The zlib stream uses stored (uncompressed) deflate blocks. Returns 0 on success. */
static inline int wl_write_png_rgba(const char *path, const unsigned char *rgba, uint32_t w, uint32_t h)
{
    size_t row = (size_t)w * 4 + 1, raw_len = row * h;
    size_t nblocks = raw_len / 65535 + 1;
    size_t z_len = 2 + raw_len + nblocks * 5 + 4;
    unsigned char *raw = (unsigned char *)malloc(raw_len);
    unsigned char *z = (unsigned char *)malloc(z_len);
    if (!raw || !z) { free(raw); free(z); return -1; }
    for (uint32_t y = 0; y < h; y++) {
        raw[y * row] = 0; /* filter: none */
        memcpy(raw + y * row + 1, rgba + (size_t)y * w * 4, (size_t)w * 4);
    }
    size_t o = 0;
    z[o++] = 0x78; z[o++] = 0x01;
    size_t pos = 0;
    do {
        size_t n = raw_len - pos; if (n > 65535) n = 65535;
        int last = (pos + n == raw_len);
        z[o++] = (unsigned char)(last ? 1 : 0);
        z[o++] = (unsigned char)(n & 0xff); z[o++] = (unsigned char)(n >> 8);
        z[o++] = (unsigned char)(~n & 0xff); z[o++] = (unsigned char)((~n >> 8) & 0xff);
        memcpy(z + o, raw + pos, n); o += n; pos += n;
    } while (pos < raw_len);
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < raw_len; i++) { a = (a + raw[i]) % 65521u; b = (b + a) % 65521u; }
    wl_put_be32(z + o, (b << 16) | a); o += 4;

    unsigned char ihdr[13];
    wl_put_be32(ihdr, w); wl_put_be32(ihdr + 4, h);
    ihdr[8] = 8; ihdr[9] = 6; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    int rc = -1;
    FILE *f = fopen(path, "wb");
    if (f) {
        if (fwrite(sig, 1, 8, f) == 8 && wl_png_chunk(f, "IHDR", ihdr, 13) == 0 &&
            wl_png_chunk(f, "IDAT", z, (uint32_t)o) == 0 && wl_png_chunk(f, "IEND", NULL, 0) == 0)
            rc = 0;
        if (fclose(f) != 0) rc = -1;
    }
    free(raw); free(z);
    return rc;
}
#endif
