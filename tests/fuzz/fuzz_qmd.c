/* fuzz_qmd.c: libFuzzer target for the QMD decoder (analyze/src/qmd*.c, vgt/qmd.h): any bytes, any length,
 * decoded by version detection and as every version, every field formatted, bit reads and writes at
 * input-chosen positions. Nothing may be read outside the buffer. Seeds: QMDs cut from the corpus traces. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/qmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) return 0;
    uint8_t *q = malloc(size ? size : 1);   /* exactly size bytes: ASan sees an over-read */
    if (!q) return 0;
    memcpy(q, data, size);
    vgt_qmd out;
    vgt_error err;
    char buf[8192];
    vgt_qmd_decode(q, (uint32_t)size, &out, &err);
    for (int v = 0; v < 8; v++) {
        if (!vgt_qmd_version_size((vgt_qmd_version)v)) continue;
        vgt_qmd_decode_as((vgt_qmd_version)v, q, (uint32_t)size, &out, &err);
        vgt_qmd_format_fields((vgt_qmd_version)v, q, (uint32_t)size, buf, sizeof buf);
        uint32_t n = 0;
        vgt_qmd_fields((vgt_qmd_version)v, &n);
    }
    if (size >= 2) {
        unsigned hi = data[0] * 8u + 7u, lo = data[1] * 8u;
        if (hi >= lo && hi - lo < 64) {
            uint64_t b = vgt_qmd_bits(q, (uint32_t)size, hi, lo);
            vgt_qmd_set_bits(q, (uint32_t)size, hi, lo, ~b);
        }
    }
    free(q);
    return 0;
}
