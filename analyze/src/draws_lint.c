/* draws_lint.c: why a draw may have stored nothing, each reason with its evidence (vgt/draws.h lists
 * them). A lint fires only on state the trace shows: state never written is not taken for zero.
 *
 * Facts behind the rules (NVIDIA open-gpu-doc Shader-Program-Header.html, classes/3d/clcb97.h): a pixel
 * shader writes a color target component only when its SPH OmapTarget bit is set; SET_CT_WRITE(n) masks
 * the components written to the n-th selected target; SET_CT_SELECT TARGET_COUNT targets are bound, each
 * written only when its SET_COLOR_TARGET_FORMAT is not DISABLED (0); an enabled scissor passes only
 * pixels in [XMIN, XMAX) x [YMIN, YMAX). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "draws_internal.h"

static const char *const lint_names[] = {
    "stage_disabled", "sph_no_outputs", "no_render_target", "write_mask_zero", "viewport_zero", "scissor_zero",
    "clear_target_mismatch", "program_unmapped", "program_never_written", "zero_count", "draw_macro_not_called",
    NULL,
};

const char *const *vgt_draws_lint_names(void)
{
    return lint_names;
}

void draws_lint_add(vgt_draw_lint *lints, uint32_t *n, const char *code, const char *fmt, ...)
{
    if (*n >= VGT_DRAWS_MAX_LINTS) return;
    vgt_draw_lint *l = &lints[(*n)++];
    l->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->message, sizeof l->message, fmt, ap);
    va_end(ap);
}

#define ADD(d, code, ...) draws_lint_add((d)->lints, &(d)->nlints, code, __VA_ARGS__)

/* Targets that can be written: selected, with a format. */
static uint32_t live_targets(const vgt_draw_info *d)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->nrt; i++) n += d->rt[i].format != 0;
    return n;
}

static void lint_stages(vgt_draw_info *d)
{
    const vgt_draw_stage *vs0 = &d->stages[0], *vs = &d->stages[1], *ps = &d->stages[5];
    if (vs0->shader_set && vs->shader_set && !vs0->enabled && !vs->enabled)
        ADD(d, "stage_disabled", "no vertex stage enabled: SET_PIPELINE_SHADER(0) TYPE=%u ENABLE=0, "
            "SET_PIPELINE_SHADER(1) TYPE=%u ENABLE=0", vs0->type, vs->type);
    if (!d->raster_enable)
        ADD(d, "stage_disabled", "rasterization disabled (SET_RASTER_ENABLE V=0): no fragment reaches the pixel stage");
    if (ps->shader_set && !ps->enabled && live_targets(d))
        ADD(d, "stage_disabled", "pixel stage disabled (SET_PIPELINE_SHADER(5) ENABLE=0) with %u color target%s bound",
            live_targets(d), live_targets(d) == 1 ? "" : "s");
    for (unsigned j = 0; j < VGT_DRAWS_STAGES; j++) {
        const vgt_draw_stage *st = &d->stages[j];
        if (!st->enabled || !st->program_set) continue;
        if (st->sph_state == VGT_SPH_DECODED && vgt_sph_no_outputs(&st->sph)) {
            if (st->sph.ps)
                /* KillsPixels beside no output is what a shader that discards every fragment compiles to
                 * (corpus/vk_nostore.vgt, gl_nostore.vgt): the writes after the discard are gone */
                ADD(d, "sph_no_outputs", "stage %u (PIXEL) SPH at 0x%" PRIx64 " word 18 OmapTarget=0x%x, depth=%u, "
                    "sample mask=%u, global store=%u, KillsPixels=%u: the pixel shader writes nothing%s", j,
                    st->program_va, st->sph.omap_target, st->sph.omap_depth, st->sph.omap_sample_mask,
                    st->sph.does_global_store, st->sph.kills_pixels,
                    st->sph.kills_pixels ? " and discards (kills) its fragments" : "");
            else
                ADD(d, "sph_no_outputs", "stage %u (%s) SPH at 0x%" PRIx64 " declares no position, generic, clip or "
                    "stream output and no global store", j, vgt_sph_shader_type_name(st->sph.shader_type), st->program_va);
        }
        if (st->mapped == 0)
            ADD(d, "program_unmapped", "stage %u program 0x%" PRIx64 " is in no mapping at the draw", j, st->program_va);
        else if (st->known == 0 && st->mapped == 1)
            ADD(d, "program_never_written", "stage %u program 0x%" PRIx64 " is mapped but the trace never holds its "
                "header bytes (no upload, copy or captured memory)", j, st->program_va);
    }
}

static void lint_targets(vgt_draw_info *d)
{
    uint32_t live = live_targets(d);
    int zt = d->zt_selected && d->zt_format != 0;
    if (d->ct_select_set && !live && !zt) {
        if (!d->target_count) ADD(d, "no_render_target", "SET_CT_SELECT TARGET_COUNT=0 and no depth target");
        else ADD(d, "no_render_target", "%u color target%s selected, all with SET_COLOR_TARGET_FORMAT=DISABLED, "
                 "and no depth target", d->target_count, d->target_count == 1 ? "" : "s");
    }
    uint32_t masked = 0;
    for (uint32_t i = 0; i < d->nrt; i++) masked += d->rt[i].format != 0 && d->rt[i].write_mask == 0;
    if (live && masked == live)
        ADD(d, "write_mask_zero", "every bound color target has SET_CT_WRITE R/G/B/A=0 (%u target%s)", live,
            live == 1 ? "" : "s");
    /* a clear earlier in the submission hit a target the draw does not bind */
    for (uint32_t i = 0; i < d->nclears; i++) {
        const vgt_ev_clear *c = &d->clears[i];
        if (!c->color_mask || !c->target_va || !live) continue;
        int hit = 0;
        for (uint32_t k = 0; k < d->nrt; k++) hit |= d->rt[k].format && d->rt[k].va == c->target_va;
        if (!hit) {
            ADD(d, "clear_target_mismatch", "a clear hit color target 0x%" PRIx64 " (slot %u) but the draw writes "
                "0x%" PRIx64 "", c->target_va, c->target, d->rt[0].va);
            break;
        }
    }
}

static void lint_viewport(vgt_draw_info *d)
{
    if (d->viewport_set && (d->viewport_clip[1] == 0 || d->viewport_clip[3] == 0))
        ADD(d, "viewport_zero", "viewport 0 clip is %ux%u at (%u,%u)", d->viewport_clip[1], d->viewport_clip[3],
            d->viewport_clip[0], d->viewport_clip[2]);
    if (d->scissor_set && d->scissor_enable && (d->scissor[1] <= d->scissor[0] || d->scissor[3] <= d->scissor[2]))
        ADD(d, "scissor_zero", "scissor 0 is enabled and empty: x %u..%u, y %u..%u", d->scissor[0], d->scissor[1],
            d->scissor[2], d->scissor[3]);
}

void draws_lint(vgt_draw_info *d)
{
    if (d->draw.count == 0 && d->draw.kind != VGT_DRAW_AUTO)
        ADD(d, "zero_count", "%s draw with count 0", vgt_draw_kind_name(d->draw.kind));
    else if (d->draw.instance_count == 0)
        ADD(d, "zero_count", "draw with 0 instances");
    lint_stages(d);
    lint_targets(d);
    lint_viewport(d);
}
