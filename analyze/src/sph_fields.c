/* sph_fields.c: the Shader Program Header layout as data (one row a field; vgt/sph.h says how it is used).
 *
 * Sources, transcribed as bit positions (bit 0 = bit 0 of dword 0):
 *   NVIDIA open-gpu-doc Shader-Program-Header/Shader-Program-Header.html: CommonWord0..4, the type 1
 *     (VTG) and type 2 (PS) layouts, ImapSystemValuesA/B/C, ImapColor, OmapSystemValuesA/B/C, OmapTarget,
 *     OmapSampleMask, OmapDepth (the v3 layout, 20 dwords);
 *   NVIDIA open-gpu-doc classes/3d/clc797sph.h, clcb97sph.h: the v4 layout (32 dwords) keeps those bits;
 *   Mesa src/nouveau/compiler/nak/sph.rs: the v4 additions it writes (GS passthrough 24, ISBE space
 *     sharing 25, ImapSystemValuesD, OmapSystemValuesD, interlock 610, underestimate 611, per-vertex imap
 *     672..799) and that ShaderLocalMemoryCrsSize is not written from v4 on.
 * Maps wider than 64 bits are split into 32-bit rows named after the vectors they cover. A VTG generic
 * vector has 4 bits (X Y Z W from the low bit); a PS input component has 2 (0 unused, 1 constant,
 * 2 perspective, 3 screen-linear). */
#include "vgt/sph.h"

#define ANY VGT_SPH_ANY
#define VTG VGT_SPH_ONLY_VTG
#define PS VGT_SPH_ONLY_PS
#define U VGT_SPH_UINT
#define B VGT_SPH_BOOL
#define M VGT_SPH_MASK

static const vgt_sph_field fields[] = {
    /* CommonWord0 (word 0) */
    { "sph_type", 0, 5, ANY, 3, 0, U },
    { "version", 5, 5, ANY, 3, 0, U },
    { "shader_type", 10, 4, ANY, 3, 0, U },
    { "mrt_enable", 14, 1, ANY, 3, 0, B },
    { "kills_pixels", 15, 1, ANY, 3, 0, B },
    { "does_global_store", 16, 1, ANY, 3, 0, B },
    { "sass_version", 17, 4, ANY, 3, 0, U },
    { "gs_passthrough_enable", 24, 1, VTG, 4, 0, B },
    { "isbe_space_sharing_enable", 25, 1, VTG, 4, 0, B },
    { "does_load_or_store", 26, 1, ANY, 3, 0, B },
    { "does_fp64", 27, 1, ANY, 3, 0, B },
    { "stream_out_mask", 28, 4, ANY, 3, 0, M },
    /* CommonWord1..4 */
    { "shader_local_memory_low_size", 32, 24, ANY, 3, 0, U },
    { "per_patch_attribute_count", 56, 8, ANY, 3, 0, U },
    { "shader_local_memory_high_size", 64, 24, ANY, 3, 0, U },
    { "threads_per_input_primitive", 88, 8, ANY, 3, 0, U },
    { "shader_local_memory_crs_size", 96, 24, ANY, 3, 3, U },
    { "output_topology", 120, 4, ANY, 3, 0, U },
    { "max_output_vertex_count", 128, 12, ANY, 3, 0, U },
    { "store_req_start", 140, 8, ANY, 3, 0, U },
    { "store_req_end", 152, 8, ANY, 3, 0, U },
    /* word 5: ImapSystemValuesA (4 reserved bits, then the tessellation LODs) and ImapSystemValuesB */
    { "imap_system_values_a", 160, 24, ANY, 3, 0, M },
    { "imap_tessellation_lod_left", 164, 1, ANY, 3, 0, B },
    { "imap_tessellation_lod_right", 165, 1, ANY, 3, 0, B },
    { "imap_tessellation_lod_bottom", 166, 1, ANY, 3, 0, B },
    { "imap_tessellation_lod_top", 167, 1, ANY, 3, 0, B },
    { "imap_tessellation_interior_u", 168, 1, ANY, 3, 0, B },
    { "imap_tessellation_interior_v", 169, 1, ANY, 3, 0, B },
    { "imap_primitive_id", 184, 1, ANY, 3, 0, B },
    { "imap_rt_array_index", 185, 1, ANY, 3, 0, B },
    { "imap_viewport_index", 186, 1, ANY, 3, 0, B },
    { "imap_point_size", 187, 1, ANY, 3, 0, B },
    { "imap_position", 188, 4, ANY, 3, 0, M },
    /* VTG: ImapGenericVector[32] (4 bits a vector), words 6..9 */
    { "imap_generic_vectors_0_7", 192, 32, VTG, 3, 0, M },
    { "imap_generic_vectors_8_15", 224, 32, VTG, 3, 0, M },
    { "imap_generic_vectors_16_23", 256, 32, VTG, 3, 0, M },
    { "imap_generic_vectors_24_31", 288, 32, VTG, 3, 0, M },
    /* VTG word 10: ImapColor, ImapSystemValuesC */
    { "imap_color", 320, 16, VTG, 3, 0, M },
    { "imap_system_values_c", 336, 16, VTG, 3, 0, M },
    { "imap_clip_distances", 336, 8, VTG, 3, 0, M },
    { "imap_instance_id", 350, 1, VTG, 3, 0, B },
    { "imap_vertex_id", 351, 1, VTG, 3, 0, B },
    { "imap_fixed_fnc_texture", 352, 40, VTG, 3, 0, M },
    { "imap_system_values_d", 392, 8, VTG, 4, 0, M },
    /* VTG word 12: OmapSystemValuesA/B */
    { "omap_system_values_a", 400, 24, VTG, 3, 0, M },
    { "omap_primitive_id", 424, 1, VTG, 3, 0, B },
    { "omap_rt_array_index", 425, 1, VTG, 3, 0, B },
    { "omap_viewport_index", 426, 1, VTG, 3, 0, B },
    { "omap_point_size", 427, 1, VTG, 3, 0, B },
    { "omap_position", 428, 4, VTG, 3, 0, M },
    /* VTG: OmapGenericVector[32], bits 432..559 */
    { "omap_generic_vectors_0_7", 432, 32, VTG, 3, 0, M },
    { "omap_generic_vectors_8_15", 464, 32, VTG, 3, 0, M },
    { "omap_generic_vectors_16_23", 496, 32, VTG, 3, 0, M },
    { "omap_generic_vectors_24_31", 528, 32, VTG, 3, 0, M },
    { "omap_color", 560, 16, VTG, 3, 0, M },
    /* VTG word 18: OmapSystemValuesC, OmapFixedFncTexture */
    { "omap_system_values_c", 576, 16, VTG, 3, 0, M },
    { "omap_clip_distances", 576, 8, VTG, 3, 0, M },
    { "omap_instance_id", 590, 1, VTG, 3, 0, B },
    { "omap_vertex_id", 591, 1, VTG, 3, 0, B },
    { "omap_fixed_fnc_texture", 592, 40, VTG, 3, 0, M },
    { "omap_system_values_d", 632, 8, VTG, 4, 0, M },
    /* PS: ImapGenericVector[32] (2 bits a component, 8 a vector), words 6..13 */
    { "imap_generic_vectors_0_3", 192, 32, PS, 3, 0, M },
    { "imap_generic_vectors_4_7", 224, 32, PS, 3, 0, M },
    { "imap_generic_vectors_8_11", 256, 32, PS, 3, 0, M },
    { "imap_generic_vectors_12_15", 288, 32, PS, 3, 0, M },
    { "imap_generic_vectors_16_19", 320, 32, PS, 3, 0, M },
    { "imap_generic_vectors_20_23", 352, 32, PS, 3, 0, M },
    { "imap_generic_vectors_24_27", 384, 32, PS, 3, 0, M },
    { "imap_generic_vectors_28_31", 416, 32, PS, 3, 0, M },
    { "imap_color", 448, 16, PS, 3, 0, M },
    { "imap_system_values_c", 464, 16, PS, 3, 0, M },
    { "imap_fixed_fnc_texture", 480, 64, PS, 3, 0, M },
    { "imap_fixed_fnc_texture_hi", 544, 16, PS, 3, 0, M },
    { "imap_system_values_d", 560, 16, PS, 4, 0, M },
    /* PS word 18: OmapTarget[8] R/G/B/A, then the sample mask, depth and v4 bits */
    { "omap_target", 576, 32, PS, 3, 0, M },
    { "omap_sample_mask", 608, 1, PS, 3, 0, B },
    { "omap_depth", 609, 1, PS, 3, 0, B },
    { "does_interlock", 610, 1, PS, 4, 0, B },
    { "uses_underestimate", 611, 1, PS, 4, 0, B },
    { "pervertex_imap_vectors_0_7", 672, 32, PS, 4, 0, M },
    { "pervertex_imap_vectors_8_15", 704, 32, PS, 4, 0, M },
    { "pervertex_imap_vectors_16_23", 736, 32, PS, 4, 0, M },
    { "pervertex_imap_vectors_24_31", 768, 32, PS, 4, 0, M },
};

const vgt_sph_field *vgt_sph_fields(uint32_t *count)
{
    *count = (uint32_t)(sizeof fields / sizeof fields[0]);
    return fields;
}
