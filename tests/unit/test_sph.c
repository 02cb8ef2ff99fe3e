/* test_sph.c: Shader Program Header decoding (vgt/sph.h).
 *
 * Headers are built here bit by bit from the documented layout, transcribed independently of the
 * decoder's table (NVIDIA open-gpu-doc Shader-Program-Header.html: SphType 4:0, Version 9:5, ShaderType
 * 13:10, MrtEnable 14, KillsPixels 15, DoesGlobalStore 16, DoesLoadOrStore 26, StreamOutMask 31:28,
 * ImapSystemValuesB 184..191, VTG ImapSystemValuesC 336..351, OmapSystemValuesB 424..431 (position
 * 428..431), OmapGenericVector 432..559, OmapSystemValuesC 576..591; PS OmapTarget 576..607, OmapSampleMask
 * 608, OmapDepth 609), so a wrong row in the table fails here. Also checks the table itself, and the
 * real headers of the corpus when present (vk_triangle: a v4 vertex and a v4 pixel shader). */
#include <string.h>

#include "check.h"
#include "vgt/sph.h"

static void set_bits(uint8_t *b, unsigned lo, unsigned width, uint64_t v)
{
    for (unsigned i = 0; i < width; i++) {
        unsigned bit = lo + i;
        if ((v >> i) & 1) b[bit >> 3] |= (uint8_t)(1u << (bit & 7));
        else b[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
    }
}

static void header(uint8_t *b, unsigned type, unsigned version, unsigned shader)
{
    memset(b, 0, VGT_SPH_MAX_BYTES);
    set_bits(b, 0, 5, type);
    set_bits(b, 5, 5, version);
    set_bits(b, 10, 4, shader);
}

static uint64_t field_of(const vgt_sph *s, const char *name)
{
    uint32_t n;
    const vgt_sph_field *t = vgt_sph_fields(&n);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name) && vgt_sph_has_field(s, &t[i])) return vgt_sph_bits(s, t[i].lo, t[i].width);
    return UINT64_MAX;
}

static void test_table(void)
{
    uint32_t n;
    const vgt_sph_field *t = vgt_sph_fields(&n);
    CHECK(n > 60, "%u fields", n);
    for (uint32_t i = 0; i < n; i++) {
        CHECK(t[i].width >= 1 && t[i].width <= 64, "%s width %u", t[i].name, t[i].width);
        CHECK(t[i].lo + t[i].width <= VGT_SPH_MAX_WORDS * 32, "%s past the header", t[i].name);
        CHECK(t[i].min_version == 3 || t[i].min_version == 4, "%s min version %u", t[i].name, t[i].min_version);
        if (t[i].min_version == 3 && t[i].max_version != 3)
            CHECK(t[i].lo + t[i].width <= VGT_SPH_V3_BYTES * 8 || t[i].min_version == 4,
                  "%s is a v3 field past the v3 layout", t[i].name);
        for (uint32_t k = i + 1; k < n; k++)
            CHECK(strcmp(t[i].name, t[k].name) || (t[i].applies && t[k].applies && t[i].applies != t[k].applies),
                  "%s twice for one header type", t[i].name);
    }
}

static void test_pixel(void)
{
    uint8_t b[VGT_SPH_MAX_BYTES];
    header(b, 2, 4, 5);
    set_bits(b, 14, 1, 1);            /* MrtEnable */
    set_bits(b, 15, 1, 1);            /* KillsPixels */
    set_bits(b, 191, 1, 1);           /* ImapPositionW */
    set_bits(b, 576, 4, 0xf);         /* OmapTarget[0] RGBA */
    set_bits(b, 584, 4, 0x3);         /* OmapTarget[2] RG */
    set_bits(b, 609, 1, 1);           /* OmapDepth */
    vgt_sph s;
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_OK, "v4 PS decodes");
    CHECK(s.ps && s.version == 4 && s.shader_type == VGT_SPH_PIXEL && s.nwords == 32, "type %u v%u shader %u",
          s.sph_type, s.version, s.shader_type);
    CHECK(s.omap_target == 0x30f, "omap_target 0x%x", s.omap_target);
    CHECK(s.words[18] == 0x30f, "word 18 is OmapTarget: 0x%x", s.words[18]);
    CHECK(s.words[5] == 0x80000000u && field_of(&s, "imap_position") == 8, "word 5 0x%x", s.words[5]);
    CHECK(s.omap_depth && !s.omap_sample_mask && s.kills_pixels && s.mrt_enable, "flags");
    CHECK(vgt_sph_output_components(&s) == 6, "6 color components, got %u", vgt_sph_output_components(&s));
    CHECK(!vgt_sph_no_outputs(&s), "outputs");
    CHECK(field_of(&s, "does_interlock") == 0 && field_of(&s, "omap_generic_vectors_0_7") == UINT64_MAX,
          "v4 PS fields present, VTG ones absent");
    /* nothing written: no color, depth, sample mask or global store */
    set_bits(b, 576, 32, 0);
    set_bits(b, 609, 1, 0);
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_OK && vgt_sph_no_outputs(&s), "PS with no outputs");
    set_bits(b, 16, 1, 1);            /* DoesGlobalStore: stores through memory */
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_OK && !vgt_sph_no_outputs(&s) && s.does_global_store, "global store");
}

static void test_vertex(void)
{
    uint8_t b[VGT_SPH_MAX_BYTES];
    header(b, 1, 4, 1);
    set_bits(b, 26, 1, 1);            /* DoesLoadOrStore */
    set_bits(b, 351, 1, 1);           /* ImapVertexId (word 10) */
    set_bits(b, 428, 4, 0xf);         /* OmapPosition XYZW */
    set_bits(b, 432 + 4, 4, 0x7);     /* OmapGenericVector[1] XYZ */
    set_bits(b, 576, 2, 0x3);         /* OmapClipDistance0/1 (word 18) */
    vgt_sph s;
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_OK, "v4 VTG decodes");
    CHECK(!s.ps && s.shader_type == VGT_SPH_VERTEX && s.does_load_or_store, "vertex");
    CHECK(s.words[10] == 0x80000000u && field_of(&s, "imap_vertex_id") == 1, "word 10 0x%x", s.words[10]);
    CHECK(field_of(&s, "omap_position") == 0xf && field_of(&s, "omap_generic_vectors_0_7") == 0x70, "omaps");
    CHECK(s.words[18] == 0x3 && field_of(&s, "omap_clip_distances") == 0x3, "word 18 0x%x", s.words[18]);
    CHECK(vgt_sph_output_components(&s) == 7, "7 components, got %u", vgt_sph_output_components(&s));
    CHECK(!vgt_sph_no_outputs(&s), "outputs");
    memset(b + 50, 0, sizeof b - 50);  /* no omap at all (bits 400 and up) */
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_OK && vgt_sph_no_outputs(&s), "VTG with no outputs");
    set_bits(b, 28, 4, 1);             /* StreamOutMask: transform feedback is an output */
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_OK && !vgt_sph_no_outputs(&s), "stream out");
}

static void test_v3_and_errors(void)
{
    uint8_t b[VGT_SPH_MAX_BYTES];
    vgt_sph s;
    header(b, 1, 3, 4);               /* a v3 geometry header: 20 dwords are enough */
    set_bits(b, 128, 12, 256);        /* MaxOutputVertexCount */
    set_bits(b, 120, 4, 7);           /* OutputTopology TRIANGLESTRIP */
    CHECK(vgt_sph_decode(b, VGT_SPH_V3_BYTES, &s) == VGT_OK && s.nwords == 20, "v3 from 80 bytes");
    CHECK(field_of(&s, "max_output_vertex_count") == 256 && field_of(&s, "output_topology") == 7, "GS fields");
    CHECK(field_of(&s, "shader_local_memory_crs_size") == 0 && field_of(&s, "imap_system_values_d") == UINT64_MAX,
          "v3 has the CRS size and no v4 fields");
    header(b, 2, 4, 5);
    CHECK(vgt_sph_decode(b, VGT_SPH_V3_BYTES, &s) == VGT_E_DECODE, "a v4 header needs 128 bytes");
    header(b, 3, 4, 1);
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_E_DECODE, "SphType 3");
    header(b, 1, 5, 1);
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_E_DECODE, "version 5");
    header(b, 1, 4, 5);
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_E_DECODE, "a VTG header of a pixel shader");
    header(b, 2, 4, 0);
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_E_DECODE, "shader type 0");
    CHECK(vgt_sph_decode(b, 0, &s) == VGT_E_DECODE, "no bytes");
    memset(b, 0xff, sizeof b);        /* SASS, not a header */
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_E_DECODE, "all ones");
}

/* The real headers of corpus/vk_triangle.vgt (copied to 0xdefdfebc00 and 0xdefdfeba00): the leading dwords
 * as the NVIDIA Vulkan driver wrote them. */
static void test_real_words(void)
{
    static const uint32_t ps_w0 = 0x00005482;   /* type 2, v4, PIXEL, MrtEnable */
    uint8_t b[VGT_SPH_MAX_BYTES] = { 0 };
    memcpy(b, &ps_w0, 4);
    set_bits(b, 191, 1, 1);
    set_bits(b, 576, 4, 0xf);
    vgt_sph s;
    CHECK(vgt_sph_decode(b, sizeof b, &s) == VGT_OK && s.ps && s.version == 4 && s.mrt_enable && s.omap_target == 0xf,
          "vk_triangle's pixel header word 0");
    char text[256];
    vgt_sph_format(&s, text, sizeof text);
    CHECK(strstr(text, "omap_target=0xf") != NULL, "%s", text);
}

int main(void)
{
    test_table();
    test_pixel();
    test_vertex();
    test_v3_and_errors();
    test_real_words();
    return check_finish("test_sph");
}
