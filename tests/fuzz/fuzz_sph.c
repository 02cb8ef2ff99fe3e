/* fuzz_sph.c: libFuzzer target for the shader program header decoder (analyze/src/sph.c, vgt/sph.h): any
 * bytes, any length, decoded; a header that decodes is printed as JSON and as a line (also into a buffer
 * too small for it), every table field it has read, its outputs counted; bit reads at input-chosen
 * positions, past the header's words too. Nothing may be read outside the buffer. Seeds: the program
 * headers of the corpus traces' draws (tests/fuzz/make_seeds.py). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/sph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w"))) abort();
    if (size > 4096) return 0;
    uint8_t *b = malloc(size ? size : 1);   /* exactly size bytes: ASan sees an over-read */
    if (!b) return 0;
    memcpy(b, data, size);
    vgt_sph s;
    if (vgt_sph_decode(b, (uint32_t)size, &s) == VGT_OK) {
        char line[4096], small[24];
        vgt_sph_format(&s, line, sizeof line);
        vgt_sph_format(&s, small, sizeof small);
        vgt_sph_print_json(null, &s);
        uint32_t n = 0;
        const vgt_sph_field *f = vgt_sph_fields(&n);
        for (uint32_t i = 0; i < n; i++)
            if (vgt_sph_has_field(&s, &f[i])) (void)vgt_sph_bits(&s, f[i].lo, f[i].width);
        (void)vgt_sph_no_outputs(&s);
        (void)vgt_sph_output_components(&s);
        (void)vgt_sph_type_name(s.sph_type);
        (void)vgt_sph_shader_type_name(s.shader_type);
    }
    /* what a failed decode leaves is still a header to read bits of (its words, nwords as read) */
    if (size >= 2) (void)vgt_sph_bits(&s, data[0] * 5u, data[1] % 65u);
    free(b);
    return 0;
}
