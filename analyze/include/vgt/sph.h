/* sph.h: the Shader Program Header (SPH) of 3D programs, Turing to Hopper (and the older v3 layout).
 *
 * Each 3D program starts with its SPH: SET_PIPELINE_PROGRAM_ADDRESS_A/B(j) points at it and the SASS
 * follows. SPH version 3 is 20 dwords (80 bytes); version 4 (Turing and later) is 32 dwords (128 bytes).
 * Two header types: 1 = VTG (vertex, tessellation, geometry), 2 = PS (pixel). Compute programs have no
 * SPH (the QMD describes them).
 *
 * The layout lives in one data table (analyze/src/sph_fields.c): every documented field as a bit range
 * over the header's dwords (bit 0 = bit 0 of dword 0, little-endian), the header type it applies to and
 * the first version that has it. Facts: NVIDIA open-gpu-doc Shader-Program-Header/Shader-Program-Header.html
 * (v3 layout and field meanings), classes/3d/clc797sph.h and clcb97sph.h (v4); Mesa
 * src/nouveau/compiler/nak/sph.rs (the v4 fields it writes: ImapSystemValuesD, OmapSystemValuesD,
 * interlock, underestimate, per-vertex imap). Transcribed as numbers into our own table.
 *
 * What the three dwords users ask about carry (SPH words are dwords of the header):
 *   word 5  (bits 160..191)  both types: ImapSystemValuesA (tessellation LODs) and ImapSystemValuesB
 *                            (primitive id, RT array index, viewport index, point size, position XYZW)
 *   word 10 (bits 320..351)  VTG: ImapColor and ImapSystemValuesC (clip distances, instance/vertex id);
 *                            PS: the interpolation modes of input vectors 16..19 (2 bits a component)
 *   word 18 (bits 576..607)  VTG: OmapSystemValuesC (clip distances, instance/vertex id) and the first
 *                            fixed-function texture outputs; PS: OmapTarget, the R/G/B/A write bits of
 *                            the eight color targets: 0 means the pixel shader writes no color at all
 *
 *     vgt_sph s;
 *     if (vgt_sph_decode(bytes, len, &s) == VGT_OK && s.ps && !s.omap_target) puts("writes no color");
 */
#ifndef VGT_SPH_H
#define VGT_SPH_H

#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_SPH_V3_BYTES 80u
#define VGT_SPH_V4_BYTES 128u
#define VGT_SPH_MAX_BYTES 128u
#define VGT_SPH_MAX_WORDS 32u

enum { VGT_SPH_TYPE_VTG = 1, VGT_SPH_TYPE_PS = 2 };
/* ShaderType 13:10 */
enum { VGT_SPH_VERTEX = 1, VGT_SPH_TESS_INIT = 2, VGT_SPH_TESS = 3, VGT_SPH_GEOMETRY = 4, VGT_SPH_PIXEL = 5 };

/* Where a table field applies. */
enum { VGT_SPH_ANY = 0, VGT_SPH_ONLY_VTG = 1, VGT_SPH_ONLY_PS = 2 };
/* How a field is shown: a number, a flag, a mask printed in hex. */
enum { VGT_SPH_UINT = 0, VGT_SPH_BOOL = 1, VGT_SPH_MASK = 2 };

typedef struct vgt_sph_field {
    const char *name;         /* snake_case, the JSON key and the db column's field name */
    uint16_t lo, width;       /* bits lo .. lo+width-1 of the header; width <= 64 (wider maps are split) */
    uint8_t applies;          /* VGT_SPH_ANY / _ONLY_VTG / _ONLY_PS */
    uint8_t min_version;      /* 3, or 4 for fields of the 32-dword layout */
    uint8_t max_version;      /* 0: no upper bound; 3: the field left the layout in v4 */
    uint8_t show;             /* VGT_SPH_UINT / _BOOL / _MASK */
} vgt_sph_field;

/* The table, in bit order within each type (sph_fields.c). */
const vgt_sph_field *vgt_sph_fields(uint32_t *count);

typedef struct vgt_sph {
    uint32_t words[VGT_SPH_MAX_WORDS];
    uint32_t nwords;          /* 20 (v3) or 32 (v4) */
    uint8_t sph_type;         /* 1 VTG, 2 PS */
    uint8_t version;          /* 3 or 4 */
    uint8_t shader_type;      /* VGT_SPH_VERTEX .. VGT_SPH_PIXEL */
    uint8_t ps;               /* sph_type == PS */
    /* what the lints and the db use most */
    uint8_t does_global_store, does_load_or_store, kills_pixels, mrt_enable;
    uint8_t stream_out_mask;
    uint32_t omap_target;     /* PS: word 18, 4 bits a target (R G B A from the low bit) */
    uint8_t omap_depth, omap_sample_mask;   /* PS */
    uint32_t omap_generic[4]; /* VTG: OmapGenericVector[32], 4 bits a vector */
    uint32_t omap_sysvals_ab; /* VTG: word 12 (OmapSystemValuesA/B; position XYZW = bits 28..31) */
    uint32_t omap_sysvals_c;  /* VTG: 16 bits (clip distances 0..7, instance id 14, vertex id 15) */
} vgt_sph;

/* Decode len bytes at an SPH. VGT_OK with *s filled when SphType is 1 or 2, Version 3 or 4 and
 * ShaderType 1..5 and enough bytes are there for the version; VGT_E_DECODE otherwise (s->words, nwords,
 * sph_type, version, shader_type still hold what was read, for the message). */
vgt_status vgt_sph_decode(const uint8_t *bytes, uint32_t len, vgt_sph *s);
/* Bits lo..lo+width-1 (width <= 64) of a decoded header; bits past nwords read as 0. */
uint64_t vgt_sph_bits(const vgt_sph *s, unsigned lo, unsigned width);
/* Does the field exist in this header (type and version)? */
int vgt_sph_has_field(const vgt_sph *s, const vgt_sph_field *f);
/* The stage declares no outputs: PS writes no color target, depth or sample mask; VTG writes no
 * position, generic vector, clip distance or stream output; in both cases no global store either. */
int vgt_sph_no_outputs(const vgt_sph *s);
/* Components a VTG stage outputs (generic vectors and position) / color components a PS writes. */
uint32_t vgt_sph_output_components(const vgt_sph *s);

const char *vgt_sph_type_name(unsigned sph_type);       /* "VTG", "PS", "?" */
const char *vgt_sph_shader_type_name(unsigned t);       /* "VERTEX" .. "PIXEL", "?" */

/* One JSON object, no newline: {"version":4,"sph_type":"VTG","shader_type":"VERTEX", every field the
 * header has (table order), "no_outputs":..., "words":[...]} */
void vgt_sph_print_json(FILE *f, const vgt_sph *s);
/* One line, no newline: "v4 PS PIXEL omap_target=0xf global_store=0 kills=0 ..." */
int vgt_sph_format(const vgt_sph *s, char *buf, uint32_t cap);

#ifdef __cplusplus
}
#endif
#endif
