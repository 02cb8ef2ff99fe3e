/* draws_print.c: `vgt draws` output, JSON (the contract in vgt/draws.h) and text. */
#include <inttypes.h>
#include <string.h>

#include "draws_internal.h"
#include "vgt/classes.h"
#include "vgt/json.h"

const char *vgt_draw_stage_type_name(unsigned type)
{
    static const char *const n[] = { "VERTEX_CULL_BEFORE_FETCH", "VERTEX", "TESSELLATION_INIT", "TESSELLATION",
                                     "GEOMETRY", "PIXEL" };
    return type < sizeof n / sizeof n[0] ? n[type] : "?";
}

/* The enum name of a field value of a method, from the class tables ("A8B8G8R8"), or NULL. */
static const char *enum_name(uint32_t cls, const char *method, uint32_t value)
{
    uint32_t mthd;
    const vgt_method_info *mi = vgt_class_method_by_name(vgt_class_find(cls), method, &mthd);
    return mi && mi->field_count ? vgt_class_enum_name(&mi->fields[0], value) : NULL;
}

static void json_name(FILE *f, const char *key, const char *name)
{
    fprintf(f, ",\"%s\":", key);
    if (name) vgt_json_string(f, name);
    else fputs("null", f);
}

static void json_macros(FILE *f, const vgt_draw_macro *m, uint32_t n, uint32_t total)
{
    fputs(",\"macros\":[", f);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"call\":%" PRIu64 ",\"macro\":%u,\"version\":%" PRId64 ",\"hash\":\"%016" PRIx64 "\"", i ? "," : "",
                m[i].call, m[i].index, m[i].version, m[i].hash);
        json_name(f, "name", m[i].name);
        fprintf(f, ",\"seq\":%" PRIu64 ",\"entry\":%u,\"dword\":%u,\"params\":%u,\"emits\":%u,\"error\":%s,\"after_draw\":%s}",
                m[i].pos.seq, m[i].pos.entry, m[i].pos.dword, m[i].nparams, m[i].nemits, m[i].error ? "true" : "false",
                m[i].after ? "true" : "false");
    }
    fprintf(f, "],\"macros_total\":%u", total);
}

static void json_lints(FILE *f, const vgt_draw_lint *l, uint32_t n)
{
    fputs(",\"lints\":[", f);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "%s{\"code\":\"%s\",\"message\":", i ? "," : "", l[i].code);
        vgt_json_string(f, l[i].message);
        fputc('}', f);
    }
    fputc(']', f);
}

static void json_window(FILE *f, const vgt_draw_window *w)
{
    fprintf(f, ",\"window\":{\"seq\":%" PRIu64 ",\"entry\":%u,\"va\":%" PRIu64 ",\"dwords\":%u,\"bytes\":%u}", w->seq,
            w->entry, w->va, w->dwords, w->dwords * 4);
}

static void json_stage(FILE *f, const vgt_draw_stage *st)
{
    /* enabled is null when SET_PIPELINE_SHADER(j) never reached the trace (the channel's initial context) */
    fprintf(f, "{\"stage\":%u,\"type\":\"%s\",\"enabled\":%s,\"shader_set\":%s,\"register_count\":%u,\"program_va\":",
            st->stage, vgt_draw_stage_type_name(st->type), !st->shader_set ? "null" : st->enabled ? "true" : "false",
            st->shader_set ? "true" : "false", st->register_count);
    if (st->program_set) fprintf(f, "%" PRIu64, st->program_va);
    else fputs("null", f);
    fprintf(f, ",\"mapped\":%s,\"sph_bytes_known\":%u,\"sph_state\":\"%s\",\"sph\":",
            st->mapped < 0 ? "null" : st->mapped ? "true" : "false", st->known,
            st->sph_state == VGT_SPH_DECODED ? "decoded" : st->sph_state == VGT_SPH_NOT_A_HEADER ? "not_a_header"
                                                                                                 : "not_in_trace");
    if (st->sph_state == VGT_SPH_DECODED) vgt_sph_print_json(f, &st->sph);
    else fputs("null", f);
    fputc('}', f);
}

static void json_targets(FILE *f, const vgt_draw_info *d)
{
    fputs(",\"render_targets\":[", f);
    for (uint32_t i = 0; i < d->nrt; i++) {
        const vgt_draw_rt *rt = &d->rt[i];
        fprintf(f, "%s{\"slot\":%u,\"va\":%" PRIu64 ",\"width\":%u,\"height\":%u,\"format\":%u", i ? "," : "", rt->slot,
                rt->va, rt->width, rt->height, rt->format);
        json_name(f, "format_name", enum_name(d->cls, "SET_COLOR_TARGET_FORMAT", rt->format));
        fprintf(f, ",\"layout\":\"%s\",\"memory\":%u,\"third_dimension\":%u,\"array_pitch\":%u,\"layer\":%u"
                   ",\"write_mask\":%u,\"blend\":%s}",
                rt->pitch ? "pitch" : "blocklinear", rt->memory, rt->third_dimension, rt->array_pitch, rt->layer,
                rt->write_mask, rt->blend ? "true" : "false");
    }
    fprintf(f, "],\"ct_select\":{\"set\":%s,\"raw\":%u,\"target_count\":%u},\"mrt_enable\":%s",
            d->ct_select_set ? "true" : "false", d->ct_select, d->target_count, d->mrt_enable ? "true" : "false");
    fprintf(f, ",\"depth\":{\"zt_selected\":%u,\"zt_va\":%" PRIu64 ",\"format\":%u,\"width\":%u,\"height\":%u"
               ",\"depth_test\":%s,\"depth_write\":%s,\"stencil_test\":%s}",
            d->zt_selected, d->zt_va, d->zt_format, d->zt_width, d->zt_height, d->depth_test ? "true" : "false",
            d->depth_write ? "true" : "false", d->stencil_test ? "true" : "false");
    fprintf(f, ",\"viewport\":{\"set\":%s,\"scale\":[%g,%g],\"offset\":[%g,%g],\"x\":%u,\"width\":%u,\"y\":%u,\"height\":%u}",
            d->viewport_set ? "true" : "false", d->viewport_scale[0], d->viewport_scale[1], d->viewport_offset[0],
            d->viewport_offset[1], d->viewport_clip[0], d->viewport_clip[1], d->viewport_clip[2], d->viewport_clip[3]);
    fprintf(f, ",\"scissor\":{\"set\":%s,\"enable\":%s,\"xmin\":%u,\"xmax\":%u,\"ymin\":%u,\"ymax\":%u}",
            d->scissor_set ? "true" : "false", d->scissor_enable ? "true" : "false", d->scissor[0], d->scissor[1],
            d->scissor[2], d->scissor[3]);
    fprintf(f, ",\"raster_enable\":%s,\"blend_per_target\":%s,\"vertex_streams\":[", d->raster_enable ? "true" : "false",
            d->blend_per_target ? "true" : "false");
    for (uint32_t i = 0; i < d->nstreams; i++)
        fprintf(f, "%s{\"slot\":%u,\"stride\":%u,\"va\":%" PRIu64 "}", i ? "," : "", d->streams[i].slot,
                d->streams[i].stride, d->streams[i].va);
    fputs("],\"clears\":[", f);
    for (uint32_t i = 0; i < d->nclears; i++) {
        const vgt_ev_clear *c = &d->clears[i];
        fprintf(f, "%s{\"color_mask\":%u,\"depth\":%u,\"stencil\":%u,\"target\":%u,\"target_va\":%" PRIu64
                   ",\"zt_va\":%" PRIu64 "}",
                i ? "," : "", c->color_mask, c->depth, c->stencil, c->target, c->target_va, c->zt_va);
    }
    fputc(']', f);
}

void vgt_draw_print_json(FILE *f, const vgt_draw_info *d)
{
    fprintf(f, "{\"draw\":%" PRIu64 ",\"kind\":\"%s\",\"submission\":%" PRIu64 ",\"seq\":%" PRIu64, d->number,
            d->kind == VGT_DRAWREC_LAUNCH ? "launch" : "draw", d->submission, d->seq);
    json_window(f, &d->window);
    fprintf(f, ",\"entry\":%u,\"dword\":%u,\"client\":%u,\"channel\":%u,\"class\":%u,\"subch\":%u,\"origin\":\"%s\"",
            d->pos.entry, d->pos.dword, d->client, d->channel, d->cls, d->subch, vgt_event_origin_name(d->origin));
    if (d->origin == VGT_ORIGIN_MACRO) fprintf(f, ",\"macro_call\":%" PRIu64, d->macro_call);
    if (d->kind == VGT_DRAWREC_LAUNCH) {
        const vgt_ev_launch *l = &d->launch;
        fprintf(f, ",\"launch\":{\"qmd_va\":%" PRIu64 ",\"inline\":%s,\"decoded\":%s", l->qmd_va,
                l->inline_qmd ? "true" : "false", l->decoded ? "true" : "false");
        if (l->decoded)
            fprintf(f, ",\"qmd_version\":\"%s\",\"program_va\":%" PRIu64 ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u]"
                       ",\"registers\":%u,\"shared_memory\":%u",
                    vgt_qmd_version_name(l->qmd.version), l->qmd.program_va, l->qmd.grid[0], l->qmd.grid[1],
                    l->qmd.grid[2], l->qmd.block[0], l->qmd.block[1], l->qmd.block[2], l->qmd.register_count,
                    l->qmd.shared_memory);
        fputs("},\"stages\":[],\"render_targets\":[]", f);
    } else {
        const vgt_ev_draw *p = &d->draw;
        fprintf(f, ",\"primitive\":{\"kind\":\"%s\",\"topology\":\"%s\",\"first\":%u,\"count\":%u,\"instances\":%u"
                   ",\"index_size\":%u,\"index_buffer_va\":%" PRIu64 ",\"base_vertex\":%u,\"base_instance\":%u}",
                vgt_draw_kind_name(p->kind), vgt_topology_name(p->topology), p->first, p->count, p->instance_count,
                p->index_size, p->index_buffer_va, p->base_vertex, p->base_instance);
        fputs(",\"stages\":[", f);
        for (unsigned j = 0; j < VGT_DRAWS_STAGES; j++) {
            if (j) fputc(',', f);
            json_stage(f, &d->stages[j]);
        }
        fputc(']', f);
        json_targets(f, d);
    }
    json_macros(f, d->macros, d->nmacros, d->macros_total);
    json_lints(f, d->lints, d->nlints);
    fputc('}', f);
}

void vgt_draw_quiet_window_print_json(FILE *f, const vgt_draw_quiet_window *w)
{
    fprintf(f, "{\"submission\":%" PRIu64 ",\"client\":%u,\"channel\":%u,\"class\":%u", w->submission, w->client,
            w->channel, w->cls);
    json_window(f, &w->window);
    json_macros(f, w->macros, w->nmacros, w->macros_total);
    json_lints(f, w->lints, w->nlints);
    fputc('}', f);
}

/* Text: each macro index once, with how many calls it had, in order of first call. */
static void text_macros(FILE *f, const vgt_draw_macro *m, uint32_t n, uint32_t total)
{
    fprintf(f, "  macros released in the window: %u call%s", total, total == 1 ? "" : "s");
    for (uint32_t i = 0; i < n; i++) {
        int seen = 0;
        uint32_t calls = 0;
        for (uint32_t k = 0; k < n; k++) {
            if (m[k].index != m[i].index) continue;
            if (k < i) seen = 1;
            calls++;
        }
        if (seen) continue;
        fprintf(f, "%s0x%x %s", i ? ", " : ": ", m[i].index, m[i].name);
        if (calls > 1) fprintf(f, " x%u", calls);
    }
    if (n < total) fprintf(f, " (first %u listed)", n);
    fputc('\n', f);
}

static void text_lints(FILE *f, const vgt_draw_lint *l, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) fprintf(f, "  LINT %s: %s\n", l[i].code, l[i].message);
}

void vgt_draw_print_text(FILE *f, const vgt_draw_info *d)
{
    fprintf(f, "%s %" PRIu64 " submission %" PRIu64 " at %" PRIu64 ":%u:%u channel 0x%x window %u (%u bytes)%s\n",
            d->kind == VGT_DRAWREC_LAUNCH ? "launch" : "draw", d->number, d->submission, d->seq, d->pos.entry,
            d->pos.dword, d->channel, d->window.entry, d->window.dwords * 4, d->origin == VGT_ORIGIN_MACRO ? " [macro]" : "");
    if (d->kind == VGT_DRAWREC_LAUNCH) {
        const vgt_ev_launch *l = &d->launch;
        if (l->decoded)
            fprintf(f, "  qmd 0x%" PRIx64 " %s grid %ux%ux%u block %ux%ux%u program 0x%" PRIx64 "\n", l->qmd_va,
                    vgt_qmd_version_name(l->qmd.version), l->qmd.grid[0], l->qmd.grid[1], l->qmd.grid[2],
                    l->qmd.block[0], l->qmd.block[1], l->qmd.block[2], l->qmd.program_va);
        else fprintf(f, "  qmd 0x%" PRIx64 " (not decoded)\n", l->qmd_va);
    } else {
        const vgt_ev_draw *p = &d->draw;
        fprintf(f, "  %s %s first %u count %u instances %u\n", vgt_draw_kind_name(p->kind), vgt_topology_name(p->topology),
                p->first, p->count, p->instance_count);
        for (unsigned j = 0; j < VGT_DRAWS_STAGES; j++) {
            const vgt_draw_stage *st = &d->stages[j];
            if (!st->shader_set && !st->program_set) continue;
            fprintf(f, "  stage %u %s %s regs %u", j, vgt_draw_stage_type_name(st->type),
                    !st->shader_set ? "(enable never set)" : st->enabled ? "enabled" : "disabled", st->register_count);
            if (st->program_set) fprintf(f, " program 0x%" PRIx64, st->program_va);
            if (st->sph_state == VGT_SPH_DECODED) {
                char buf[256];
                vgt_sph_format(&st->sph, buf, sizeof buf);
                fprintf(f, " sph %s", buf);
            } else if (st->program_set) fprintf(f, " sph %s", st->sph_state ? "not a header" : "not in the trace");
            fputc('\n', f);
        }
        for (uint32_t i = 0; i < d->nrt; i++) {
            const char *fmt = enum_name(d->cls, "SET_COLOR_TARGET_FORMAT", d->rt[i].format);
            fprintf(f, "  target %u slot %u 0x%" PRIx64 " %ux%u %s %s write 0x%x\n", i, d->rt[i].slot, d->rt[i].va,
                    d->rt[i].width, d->rt[i].height, fmt ? fmt : "?", d->rt[i].pitch ? "pitch" : "blocklinear",
                    d->rt[i].write_mask);
        }
        if (d->viewport_set)
            fprintf(f, "  viewport %ux%u at (%u,%u)", d->viewport_clip[1], d->viewport_clip[3], d->viewport_clip[0],
                    d->viewport_clip[2]);
        if (d->scissor_set)
            fprintf(f, "  scissor%s x %u..%u y %u..%u", d->scissor_enable ? "" : " (off)", d->scissor[0], d->scissor[1],
                    d->scissor[2], d->scissor[3]);
        if (d->viewport_set || d->scissor_set) fputc('\n', f);
    }
    text_macros(f, d->macros, d->nmacros, d->macros_total);
    text_lints(f, d->lints, d->nlints);
}

void vgt_draw_quiet_window_print_text(FILE *f, const vgt_draw_quiet_window *w)
{
    fprintf(f, "window %" PRIu64 ":%u submission %" PRIu64 " channel 0x%x (%u bytes): no draw\n", w->window.seq,
            w->window.entry, w->submission, w->channel, w->window.dwords * 4);
    text_macros(f, w->macros, w->nmacros, w->macros_total);
    text_lints(f, w->lints, w->nlints);
}
