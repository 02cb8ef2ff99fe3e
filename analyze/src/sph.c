/* sph.c: Shader Program Header decoding over the field table (sph_fields.c; vgt/sph.h has the facts).
 *
 * Invariants: nothing is read past len; a header is accepted only when its type, version and shader type
 * are ones the documents define and len holds the whole layout of that version (20 or 32 dwords). */
#include <inttypes.h>
#include <string.h>

#include "vgt/sph.h"

uint64_t vgt_sph_bits(const vgt_sph *s, unsigned lo, unsigned width)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < width && i < 64; i++) {
        unsigned bit = lo + i, w = bit >> 5;
        if (w < s->nwords && ((s->words[w] >> (bit & 31)) & 1)) v |= UINT64_C(1) << i;
    }
    return v;
}

int vgt_sph_has_field(const vgt_sph *s, const vgt_sph_field *f)
{
    if (f->applies == VGT_SPH_ONLY_VTG && s->ps) return 0;
    if (f->applies == VGT_SPH_ONLY_PS && !s->ps) return 0;
    if (s->version < f->min_version) return 0;
    if (f->max_version && s->version > f->max_version) return 0;
    return (unsigned)f->lo + f->width <= s->nwords * 32u;
}

/* The value of the named field of this header's type, 0 when absent. */
static uint64_t field(const vgt_sph *s, const char *name)
{
    uint32_t n;
    const vgt_sph_field *t = vgt_sph_fields(&n);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name) && vgt_sph_has_field(s, &t[i])) return vgt_sph_bits(s, t[i].lo, t[i].width);
    return 0;
}

vgt_status vgt_sph_decode(const uint8_t *bytes, uint32_t len, vgt_sph *s)
{
    memset(s, 0, sizeof *s);
    uint32_t n = len / 4 < VGT_SPH_MAX_WORDS ? len / 4 : VGT_SPH_MAX_WORDS;
    for (uint32_t i = 0; i < n; i++)
        s->words[i] = (uint32_t)bytes[4 * i] | (uint32_t)bytes[4 * i + 1] << 8 | (uint32_t)bytes[4 * i + 2] << 16 |
                      (uint32_t)bytes[4 * i + 3] << 24;
    s->nwords = n;
    if (n == 0) return VGT_E_DECODE;
    s->sph_type = s->words[0] & 0x1f;
    s->version = (s->words[0] >> 5) & 0x1f;
    s->shader_type = (s->words[0] >> 10) & 0xf;
    s->ps = s->sph_type == VGT_SPH_TYPE_PS;
    uint32_t need = s->version == 4 ? VGT_SPH_V4_BYTES / 4 : VGT_SPH_V3_BYTES / 4;
    if ((s->sph_type != VGT_SPH_TYPE_VTG && !s->ps) || (s->version != 3 && s->version != 4) ||
        s->shader_type < VGT_SPH_VERTEX || s->shader_type > VGT_SPH_PIXEL || n < need)
        return VGT_E_DECODE;
    /* a PS header describes the pixel stage, a VTG header any other: a mismatch is not a header */
    if (s->ps != (s->shader_type == VGT_SPH_PIXEL)) return VGT_E_DECODE;
    s->nwords = need;
    s->does_global_store = (uint8_t)field(s, "does_global_store");
    s->does_load_or_store = (uint8_t)field(s, "does_load_or_store");
    s->kills_pixels = (uint8_t)field(s, "kills_pixels");
    s->mrt_enable = (uint8_t)field(s, "mrt_enable");
    s->stream_out_mask = (uint8_t)field(s, "stream_out_mask");
    if (s->ps) {
        s->omap_target = (uint32_t)field(s, "omap_target");
        s->omap_depth = (uint8_t)field(s, "omap_depth");
        s->omap_sample_mask = (uint8_t)field(s, "omap_sample_mask");
    } else {
        s->omap_generic[0] = (uint32_t)field(s, "omap_generic_vectors_0_7");
        s->omap_generic[1] = (uint32_t)field(s, "omap_generic_vectors_8_15");
        s->omap_generic[2] = (uint32_t)field(s, "omap_generic_vectors_16_23");
        s->omap_generic[3] = (uint32_t)field(s, "omap_generic_vectors_24_31");
        s->omap_sysvals_ab = (uint32_t)vgt_sph_bits(s, 400, 32);
        s->omap_sysvals_c = (uint32_t)field(s, "omap_system_values_c");
    }
    return VGT_OK;
}

static unsigned popcount32(uint32_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1) n++;
    return n;
}

uint32_t vgt_sph_output_components(const vgt_sph *s)
{
    if (s->ps) return popcount32(s->omap_target);
    uint32_t n = popcount32(s->omap_sysvals_ab >> 28);   /* position X Y Z W */
    for (unsigned i = 0; i < 4; i++) n += popcount32(s->omap_generic[i]);
    return n;
}

int vgt_sph_no_outputs(const vgt_sph *s)
{
    if (s->does_global_store) return 0;
    if (s->ps) return !s->omap_target && !s->omap_depth && !s->omap_sample_mask;
    return !s->omap_sysvals_ab && !s->omap_sysvals_c && !s->stream_out_mask && !s->omap_generic[0] &&
           !s->omap_generic[1] && !s->omap_generic[2] && !s->omap_generic[3];
}

const char *vgt_sph_type_name(unsigned t)
{
    return t == VGT_SPH_TYPE_VTG ? "VTG" : t == VGT_SPH_TYPE_PS ? "PS" : "?";
}

const char *vgt_sph_shader_type_name(unsigned t)
{
    static const char *const names[] = { "?", "VERTEX", "TESSELLATION_INIT", "TESSELLATION", "GEOMETRY", "PIXEL" };
    return t < sizeof names / sizeof names[0] ? names[t] : "?";
}

void vgt_sph_print_json(FILE *f, const vgt_sph *s)
{
    fprintf(f, "{\"version\":%u,\"sph_type\":\"%s\",\"shader_type\":\"%s\"", s->version, vgt_sph_type_name(s->sph_type),
            vgt_sph_shader_type_name(s->shader_type));
    uint32_t n;
    const vgt_sph_field *t = vgt_sph_fields(&n);
    for (uint32_t i = 0; i < n; i++) {
        if (!vgt_sph_has_field(s, &t[i])) continue;
        if (!strcmp(t[i].name, "sph_type") || !strcmp(t[i].name, "version") || !strcmp(t[i].name, "shader_type"))
            continue;
        uint64_t v = vgt_sph_bits(s, t[i].lo, t[i].width);
        if (t[i].show == VGT_SPH_BOOL) fprintf(f, ",\"%s\":%s", t[i].name, v ? "true" : "false");
        else if (t[i].show == VGT_SPH_MASK) fprintf(f, ",\"%s\":\"0x%" PRIx64 "\"", t[i].name, v);
        else fprintf(f, ",\"%s\":%" PRIu64, t[i].name, v);
    }
    fprintf(f, ",\"output_components\":%u,\"no_outputs\":%s,\"words\":[", vgt_sph_output_components(s),
            vgt_sph_no_outputs(s) ? "true" : "false");
    for (uint32_t i = 0; i < s->nwords; i++) fprintf(f, "%s\"0x%08x\"", i ? "," : "", s->words[i]);
    fputs("]}", f);
}

int vgt_sph_format(const vgt_sph *s, char *buf, uint32_t cap)
{
    if (s->ps)
        return snprintf(buf, cap, "v%u PS %s omap_target=0x%x depth=%u sample_mask=%u kills=%u global_store=%u mrt=%u",
                        s->version, vgt_sph_shader_type_name(s->shader_type), s->omap_target, s->omap_depth,
                        s->omap_sample_mask, s->kills_pixels, s->does_global_store, s->mrt_enable);
    return snprintf(buf, cap, "v%u VTG %s outputs=%u position=0x%x global_store=%u stream_out=0x%x", s->version,
                    vgt_sph_shader_type_name(s->shader_type), vgt_sph_output_components(s),
                    (s->omap_sysvals_ab >> 28) & 0xf, s->does_global_store, s->stream_out_mask);
}
