/* draws.h: the pipeline state of every draw and compute launch, as the GPU saw it when the draw ran, with
 * the shader program headers of its stages and the reasons it may have stored nothing (lints).
 *
 * How: one walk (walk.h) with the MME trace (mme_trace.h) and a semantic tracker (events.h) per channel.
 * Every method a channel's 3D object receives, pushed or emitted by a macro, lands in a shadow of that
 * object's method values; when the tracker says a draw was issued (on_draw_issued), the shadow is read
 * into a vgt_draw_info: per stage SET_PIPELINE_SHADER / REGISTER_COUNT / PROGRAM_ADDRESS as of that
 * moment (not as of the program address write), render targets, depth, viewport, scissor, blend, vertex
 * streams. The SPH of each stage is read from memory as the stream left it (the tracker's overlay of
 * uploads and copies, then the trace model's captured memory) and decoded (sph.h).
 *
 * Windows: a draw's window is the push it came from (its GPFIFO entry: seq, entry, VA, dwords). Records
 * are delivered at the end of their submission, when every macro call of their windows has completed:
 * each carries the calls its window released (all of them, before and after the draw) and the clears
 * of its submission that came before it.
 *
 * Lints (code, message with the evidence), vgt_draws_lint_names():
 *   stage_disabled       no vertex stage enabled, the pixel stage disabled while color targets are bound, or
 *                        rasterization disabled (SET_RASTER_ENABLE 0: Vulkan rasterizerDiscardEnable, GL
 *                        GL_RASTERIZER_DISCARD)
 *   sph_no_outputs       an enabled stage's SPH declares no outputs (PS: OmapTarget, depth, sample mask all
 *                        0; VTG: no position, generic vector, clip distance or stream output) and no global
 *                        store. A PS that also has KillsPixels is a shader that discards every fragment
 *                        (the message says so); Vulkan compiles a pipeline whose color write mask is 0
 *                        into a PS without outputs too, so write_mask_zero comes with it there
 *   no_render_target     no color target selected with a format and no depth target
 *   write_mask_zero      every bound color target has SET_CT_WRITE R/G/B/A all 0
 *   viewport_zero        viewport 0 has a zero width or height (clip rectangle or scale)
 *   scissor_zero         scissor 0 is enabled and empty
 *   clear_target_mismatch  a clear of this submission hit a color target the draw does not bind
 *   program_unmapped     an enabled stage's program address lies in no mapping (when the trace has any)
 *   program_never_written  the program is mapped, but the trace never holds a byte of its header
 *   zero_count           the vertex/index count or the instance count is 0
 * and for windows (vgt_draws_window_fn): draw_macro_not_called, a window that released macro calls but no
 * draw while a macro that draws was uploaded to that object and not called.
 *
 * Facts: method offsets and fields come from the class tables (vgt/classes.h) by name; the SPH layout
 * from sph.h. */
#ifndef VGT_DRAWS_H
#define VGT_DRAWS_H

#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"
#include "vgt/events.h"
#include "vgt/sph.h"
#include "vgt/walk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_DRAWS_MAX_MACROS 64u    /* macro calls kept per window (macros_total counts them all) */
#define VGT_DRAWS_MAX_CLEARS 16u    /* clears kept per draw (the latest ones) */
#define VGT_DRAWS_MAX_LINTS 16u
#define VGT_DRAWS_MAX_STREAMS 16u
#define VGT_DRAWS_STAGES 6u
#define VGT_DRAWS_LINT_TEXT 240u

enum { VGT_DRAWREC_DRAW = 1, VGT_DRAWREC_LAUNCH = 2 };
/* sph_state of a stage */
enum { VGT_SPH_NOT_IN_TRACE = 0, VGT_SPH_DECODED = 1, VGT_SPH_NOT_A_HEADER = 2 };

typedef struct vgt_draw_stage {
    uint8_t stage;            /* j of SET_PIPELINE_*(j) */
    uint8_t shader_set;       /* SET_PIPELINE_SHADER(j) was written on this channel */
    uint8_t enabled, type;    /* its ENABLE 0 and TYPE 7:4 (0 VERTEX_CULL_BEFORE_FETCH .. 5 PIXEL) */
    uint32_t register_count;  /* SET_PIPELINE_REGISTER_COUNT(j) */
    uint8_t program_set;      /* SET_PIPELINE_PROGRAM_ADDRESS_B(j) was written */
    uint64_t program_va;      /* SET_PIPELINE_PROGRAM_ADDRESS_A(j):B(j): the SPH */
    int8_t mapped;            /* 1 in a mapping, 0 in none, -1 the trace has no mappings to say */
    uint32_t known;           /* header bytes the trace holds (0..128) */
    uint8_t sph_state;        /* VGT_SPH_NOT_IN_TRACE / _DECODED / _NOT_A_HEADER */
    vgt_sph sph;              /* sph_state DECODED */
} vgt_draw_stage;

typedef struct vgt_draw_rt {
    uint8_t slot;             /* color target j (SET_CT_SELECT TARGETn) */
    uint64_t va;              /* SET_COLOR_TARGET_A(j):B(j) */
    uint32_t width, height, format, memory, third_dimension, array_pitch, layer;
    uint8_t pitch;            /* SET_COLOR_TARGET_MEMORY LAYOUT: 1 pitch, 0 block-linear */
    uint8_t write_mask;       /* SET_CT_WRITE(n) R G B A as bits 0..3 (15 when never written) */
    uint8_t blend;            /* SET_BLEND(n) enable */
} vgt_draw_rt;

typedef struct vgt_draw_macro {
    uint64_t call;            /* vgt_mme_trace_call.id */
    uint32_t index;           /* j of CALL_MME_MACRO(j) */
    int64_t version;          /* registry id of the body that ran, -1 when unbound */
    uint64_t hash;
    const char *name;         /* vgt_mme_trace_macro_name (static text) */
    vgt_mpos pos;
    uint32_t categories, nemits, nparams;
    uint8_t error;            /* the call ended with a simulator error */
    uint8_t after;            /* released after the draw (later in the window) */
} vgt_draw_macro;

typedef struct vgt_draw_lint {
    const char *code;         /* one of the names above (static text) */
    char message[VGT_DRAWS_LINT_TEXT];
} vgt_draw_lint;

typedef struct vgt_draw_window {
    uint64_t seq;             /* the submission record */
    uint32_t entry;           /* GPFIFO entry index in it */
    uint64_t va;              /* the push buffer's GPU VA */
    uint32_t dwords;          /* its length (bytes = 4 * dwords) */
} vgt_draw_window;

typedef struct vgt_draw_info {
    uint64_t number;          /* 0, 1, ... over draws and launches delivered */
    uint8_t kind;             /* VGT_DRAWREC_DRAW / _LAUNCH */
    uint64_t submission, seq; /* submission index and record seq */
    vgt_mpos pos;             /* the method that issued it (a macro's: the CALL_MME_MACRO) */
    uint32_t client, channel, cls, subch;
    uint8_t origin;           /* vgt_event_origin */
    uint64_t macro_call;
    vgt_draw_window window;
    vgt_ev_draw draw;         /* kind DRAW */
    vgt_ev_launch launch;     /* kind LAUNCH (qmd_bytes NULL) */
    vgt_draw_stage stages[VGT_DRAWS_STAGES];
    /* render targets */
    uint8_t ct_select_set;    /* SET_CT_SELECT written */
    uint32_t ct_select, target_count;
    uint8_t mrt_enable;       /* SET_CT_MRT_ENABLE (1 when never written) */
    uint32_t nrt;             /* the selected targets, in order */
    vgt_draw_rt rt[8];
    uint8_t zt_selected;      /* SET_ZT_SELECT TARGET_COUNT */
    uint64_t zt_va;
    uint32_t zt_format, zt_width, zt_height;
    uint8_t depth_test, depth_write, stencil_test;
    /* viewport 0 and scissor 0 */
    uint8_t viewport_set;     /* SET_VIEWPORT_CLIP_HORIZONTAL/VERTICAL(0) written */
    float viewport_scale[2], viewport_offset[2];
    uint32_t viewport_clip[4];   /* x0, width, y0, height */
    uint8_t scissor_set, scissor_enable;
    uint32_t scissor[4];      /* xmin, xmax, ymin, ymax */
    uint8_t raster_enable;    /* SET_RASTER_ENABLE (1 when never written) */
    uint8_t blend_per_target;
    /* vertex streams */
    uint32_t nstreams;
    struct { uint8_t slot; uint32_t stride; uint64_t va; } streams[VGT_DRAWS_MAX_STREAMS];
    /* the window's macro calls and the submission's clears before the draw */
    uint32_t nmacros, macros_total;
    vgt_draw_macro macros[VGT_DRAWS_MAX_MACROS];
    uint32_t nclears;
    vgt_ev_clear clears[VGT_DRAWS_MAX_CLEARS];
    uint32_t nlints;
    vgt_draw_lint lints[VGT_DRAWS_MAX_LINTS];
} vgt_draw_info;

/* A window that released macro calls and no draw (only those with lints are delivered). */
typedef struct vgt_draw_quiet_window {
    uint64_t submission;
    uint32_t client, channel, cls;
    vgt_draw_window window;
    uint32_t nmacros, macros_total;
    vgt_draw_macro macros[VGT_DRAWS_MAX_MACROS];
    uint32_t nlints;
    vgt_draw_lint lints[VGT_DRAWS_MAX_LINTS];
} vgt_draw_quiet_window;

typedef int (*vgt_draws_fn)(void *ctx, const vgt_draw_info *d);              /* non-zero: stop */
typedef int (*vgt_draws_window_fn)(void *ctx, const vgt_draw_quiet_window *w); /* non-zero: stop */

typedef struct vgt_draws_config {
    vgt_draws_fn on_draw;             /* required */
    vgt_draws_window_fn on_window;    /* optional */
    void *ctx;
    int no_launches;                  /* 1: draws only */
    vgt_walk_stats *stats;            /* optional: the walk's counts (submissions seen, ...) */
    /* optional: what the MME budget says (vgt_mme_trace_budget_note: macro calls over it are not run, and
     * the draws they would have made are not seen); "" when no call was refused */
    char *budget_note;
    size_t budget_note_size;
} vgt_draws_config;

/* Walk the trace ("-": stdin) and deliver every draw (and launch) of the submissions opt selects. Every
 * submission is decoded, selected or not, so state carried across submissions is right. */
vgt_status vgt_draws_run(const char *path, const vgt_walk_options *opt, const vgt_draws_config *cfg, vgt_error *err);

/* The lint codes, in the order above (NULL-terminated). */
const char *const *vgt_draws_lint_names(void);
const char *vgt_draw_stage_type_name(unsigned type);   /* SET_PIPELINE_SHADER TYPE: "VERTEX" .. "PIXEL" */

/* One JSON object per record (no newline), the `vgt draws --json` contract:
 * {"draw":N,"kind":"draw"|"launch","submission":..,"seq":..,"window":{...},"stages":[{"stage","enabled",
 * "program_va","sph":{...}|null,...}],"render_targets":[...],"macros":[...],"lints":[{"code","message"}],...} */
void vgt_draw_print_json(FILE *f, const vgt_draw_info *d);
void vgt_draw_quiet_window_print_json(FILE *f, const vgt_draw_quiet_window *w);
/* Text: a few lines per record. */
void vgt_draw_print_text(FILE *f, const vgt_draw_info *d);
void vgt_draw_quiet_window_print_text(FILE *f, const vgt_draw_quiet_window *w);

#ifdef __cplusplus
}
#endif
#endif
