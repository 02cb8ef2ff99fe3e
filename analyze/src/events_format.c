/* events_format.c: names, the one-line text form and the JSON form of semantic events (vgt decode
 * prints the text in line; census and db use the names; the db keeps the text). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "vgt/json.h"
#include "vgt/events.h"

#define NAME_OF(table, i) ((unsigned)(i) < sizeof(table) / sizeof(table[0]) && table[i] ? table[i] : "?")

const char *vgt_event_kind_name(vgt_event_kind k)
{
    static const char *const n[] = { NULL, "LAUNCH", "UPLOAD", "COPY", "SEM_RELEASE", "SEM_ACQUIRE", "REPORT",
                                     "PROGRAM_BIND", "DRAW", "EMPTY_DISPATCH", "EMPTY_DMA", "CLEAR",
                                     "NOTIFY" };
    return NAME_OF(n, k);
}

const char *vgt_sem_op_name(unsigned op)
{
    static const char *const n[] = { NULL, "RELEASE", "ACQUIRE", "ACQ_STRICT_GEQ", "ACQ_CIRC_GEQ", "ACQ_AND",
                                     "ACQ_NOR", "REDUCTION", "REPORT_ONLY", "TRAP" };
    return NAME_OF(n, op);
}

const char *vgt_sem_red_name(unsigned red)
{
    static const char *const n[] = { "NONE", "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "FADD", "FMIN", "FMAX" };
    return NAME_OF(n, red);
}

const char *vgt_sem_source_name(unsigned src)
{
    static const char *const n[] = { NULL, "host", "report", "copy", "qmd" };
    return NAME_OF(n, src);
}

/* BEGIN OP / TOPOLOGY values (classes/3d/clcb97.h BEGIN_OP_*). */
const char *vgt_topology_name(unsigned topo)
{
    static const char *const n[] = { "POINTS", "LINES", "LINE_LOOP", "LINE_STRIP", "TRIANGLES", "TRIANGLE_STRIP",
                                     "TRIANGLE_FAN", "QUADS", "QUAD_STRIP", "POLYGON", "LINELIST_ADJCY",
                                     "LINESTRIP_ADJCY", "TRIANGLELIST_ADJCY", "TRIANGLESTRIP_ADJCY", "PATCH" };
    return NAME_OF(n, topo);
}

const char *vgt_draw_kind_name(unsigned kind)
{
    static const char *const n[] = { NULL, "arrays", "indexed", "inline_index", "auto", "zero_index" };
    return NAME_OF(n, kind);
}

const char *vgt_event_origin_name(unsigned origin)
{
    static const char *const n[] = { "stream", "macro" };
    return NAME_OF(n, origin);
}

/* Appends to a fixed buffer, remembering the full length like snprintf. */
typedef struct out { char *buf; uint32_t cap; uint32_t len; } out;

__attribute__((format(printf, 2, 3))) static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    uint32_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (uint32_t)n;
}

static void text_launch(out *o, const vgt_ev_launch *l)
{
    put(o, " qmd=0x%" PRIx64 " %s", l->qmd_va, l->inline_qmd ? "inline" : "by-address");
    if (!l->decoded) { put(o, " qmd-unknown"); return; }
    const vgt_qmd *q = &l->qmd;
    put(o, " %s grid=%ux%ux%u block=%ux%ux%u prog=0x%" PRIx64 " smem=%u regs=%u barriers=%u",
        vgt_qmd_version_name(q->version), q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2],
        q->program_va, q->shared_memory, q->register_count, q->barrier_count);
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++)
        if (q->cb[i].valid) put(o, " cb%u=0x%" PRIx64 "+%u", i, q->cb[i].va, q->cb[i].size);
    for (unsigned i = 0; i < q->release_count; i++)
        if (q->release[i].enabled)
            put(o, " release%u=0x%" PRIx64 ":=%" PRIu64 "%s", i, q->release[i].va, q->release[i].payload,
                q->release[i].payload64 ? "/64" : "");
    for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++)
        if (q->dependent[i].enabled)
            put(o, " dep%u=0x%" PRIx64 ":%s%s", i, q->dependent[i].va, vgt_qmd_dependent_action_name(q->dependent[i].action),
                q->dependent[i].prefetch ? "/prefetch" : "");
    if (!l->qmd_known) put(o, " (qmd bytes partly unknown)");
}

static void text_sem(out *o, const vgt_ev_sem *s)
{
    put(o, " %s %s va=0x%" PRIx64 " payload=0x%" PRIx64 " size=%u", vgt_sem_source_name(s->source),
        vgt_sem_op_name(s->op), s->va, s->payload, s->size);
    if (s->reduction) put(o, " red=%s%s", vgt_sem_red_name(s->reduction), s->flags & VGT_SEM_FLAG_SIGNED ? "/signed" : "");
    if (s->report) put(o, " report=%u", s->report);
    if (s->flags & VGT_SEM_FLAG_WFI) put(o, " wfi");
    if (s->flags & VGT_SEM_FLAG_TIMESTAMP) put(o, " timestamp");
    if (s->flags & VGT_SEM_FLAG_SWITCH_TSG) put(o, " switch-tsg");
    if (s->flags & VGT_SEM_FLAG_AWAKEN) put(o, " awaken");
}

static void text_body(out *o, const vgt_event *ev)
{
    switch (ev->kind) {
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH: text_launch(o, &ev->u.launch); break;
    case VGT_EV_UPLOAD: {
        const vgt_ev_upload *u = &ev->u.upload;
        put(o, " dst=0x%" PRIx64 " bytes=%" PRIu64 " lines=%ux%u pitch_out=%u layout=%s%s%s", u->dst_va, u->length,
            u->line_length, u->line_count, u->pitch_out, u->pitch_layout ? "pitch" : "blocklinear",
            u->completion == 2 ? " release-semaphore" : u->completion == 1 ? " flush" : "",
            u->complete ? "" : " (incomplete)");
        break;
    }
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA: {
        const vgt_ev_copy *c = &ev->u.copy;
        if (c->memset) put(o, " memset dst=0x%" PRIx64 " const=0x%x", c->dst_va, c->remap_const_a);
        else put(o, " src=0x%" PRIx64 " dst=0x%" PRIx64, c->src_va, c->dst_va);
        put(o, " bytes=%" PRIu64 " line=%u", c->bytes, c->line_length);
        if (c->multi_line) put(o, "x%u pitch=%u/%u", c->line_count, c->pitch_in, c->pitch_out);
        put(o, " layout=%s->%s", c->src_pitch ? "pitch" : "blocklinear", c->dst_pitch ? "pitch" : "blocklinear");
        if (c->remap) put(o, " remap=0x%x", c->remap_components);
        if (c->semaphore_type) put(o, " sem=0x%" PRIx64 ":=%" PRIu64, c->sem_va, c->sem_payload);
        break;
    }
    case VGT_EV_SEM_RELEASE: case VGT_EV_SEM_ACQUIRE: case VGT_EV_REPORT: text_sem(o, &ev->u.sem); break;
    case VGT_EV_PROGRAM_BIND: {
        static const char *const types[] = { "VERTEX_CULL_BEFORE_FETCH", "VERTEX", "TESSELLATION_INIT",
                                             "TESSELLATION", "GEOMETRY", "PIXEL" };
        const vgt_ev_program *p = &ev->u.program;
        put(o, " stage=%u %s%s prog=0x%" PRIx64 " regs=%u", p->stage, NAME_OF(types, p->type),
            p->enabled ? "" : " (disabled)", p->program_va, p->register_count);
        break;
    }
    case VGT_EV_DRAW: {
        const vgt_ev_draw *d = &ev->u.draw;
        put(o, " %s %s first=%u count=%u instances=%u", vgt_draw_kind_name(d->kind), vgt_topology_name(d->topology),
            d->first, d->count, d->instance_count);
        if (d->kind == VGT_DRAW_INDEXED) put(o, " ib=0x%" PRIx64 " index_size=%u", d->index_buffer_va, d->index_size);
        if (d->base_vertex || d->base_instance) put(o, " base_vertex=%u base_instance=%u", d->base_vertex, d->base_instance);
        break;
    }
    case VGT_EV_CLEAR: {
        const vgt_ev_clear *c = &ev->u.clear;
        static const char comp[] = "RGBA";
        char mask[5] = { 0 };
        unsigned n = 0;
        for (unsigned i = 0; i < 4; i++)
            if (c->color_mask >> i & 1) mask[n++] = comp[i];
        put(o, " color=%s", n ? mask : "none");
        if (c->color_mask) put(o, " target=%u va=0x%" PRIx64 " format=0x%x", c->target, c->target_va, c->target_format);
        if (c->depth || c->stencil) put(o, "%s%s zt=0x%" PRIx64, c->depth ? " depth" : "", c->stencil ? " stencil" : "", c->zt_va);
        if (c->rt_array_index) put(o, " layer=%u", c->rt_array_index);
        break;
    }
    case VGT_EV_NOTIFY: put(o, " va=0x%" PRIx64 " type=%s", ev->u.notify.va, ev->u.notify.type ? "WRITE_THEN_AWAKEN" : "WRITE_ONLY"); break;
    default: break;
    }
}

int vgt_event_format(const vgt_event *ev, char *buf, uint32_t cap)
{
    out o = { buf, cap, 0 };
    if (cap) buf[0] = 0;
    put(&o, "%s", vgt_event_kind_name(ev->kind));
    text_body(&o, ev);
    if (ev->origin == VGT_ORIGIN_MACRO) put(&o, " [macro call %" PRIu64 "]", ev->macro_call);
    return (int)o.len;
}

static void json_launch(FILE *f, const vgt_ev_launch *l)
{
    fprintf(f, ",\"qmd_va\":%" PRIu64 ",\"inline\":%u,\"qmd_known\":%u", l->qmd_va, l->inline_qmd, l->qmd_known);
    if (!l->decoded) return;
    const vgt_qmd *q = &l->qmd;
    fprintf(f, ",\"qmd_version\":\"%s\",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"program_va\":%" PRIu64
               ",\"shared_memory\":%u,\"registers\":%u,\"barriers\":%u,\"sass_version\":%u,\"cb\":[",
            vgt_qmd_version_name(q->version), q->grid[0], q->grid[1], q->grid[2], q->block[0], q->block[1], q->block[2],
            q->program_va, q->shared_memory, q->register_count, q->barrier_count, q->sass_version);
    int first = 1;
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++)
        if (q->cb[i].valid) {
            fprintf(f, "%s{\"slot\":%u,\"va\":%" PRIu64 ",\"size\":%u}", first ? "" : ",", i, q->cb[i].va, q->cb[i].size);
            first = 0;
        }
    fputs("],\"releases\":[", f);
    first = 1;
    for (unsigned i = 0; i < q->release_count; i++)
        if (q->release[i].enabled) {
            fprintf(f, "%s{\"slot\":%u,\"va\":%" PRIu64 ",\"payload\":%" PRIu64 ",\"payload64\":%u}", first ? "" : ",",
                    i, q->release[i].va, q->release[i].payload, q->release[i].payload64);
            first = 0;
        }
    fputs("],\"dependents\":[", f);
    first = 1;
    for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++)
        if (q->dependent[i].enabled) {
            fprintf(f, "%s{\"slot\":%u,\"va\":%" PRIu64 ",\"action\":\"%s\",\"prefetch\":%u}", first ? "" : ",", i,
                    q->dependent[i].va, vgt_qmd_dependent_action_name(q->dependent[i].action), q->dependent[i].prefetch);
            first = 0;
        }
    fputc(']', f);
}

static void json_body(FILE *f, const vgt_event *ev)
{
    switch (ev->kind) {
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH: json_launch(f, &ev->u.launch); break;
    case VGT_EV_UPLOAD: {
        const vgt_ev_upload *u = &ev->u.upload;
        fprintf(f, ",\"dst_va\":%" PRIu64 ",\"length\":%" PRIu64 ",\"line_length\":%u,\"line_count\":%u,\"pitch_out\":%u"
                   ",\"pitch\":%u,\"completion\":%u,\"complete\":%u", u->dst_va, u->length, u->line_length,
                u->line_count, u->pitch_out, u->pitch_layout, u->completion, u->complete);
        if (u->data) {
            fputs(",\"data\":", f);   /* vgt_json_bytes_hex writes its own quotes */
            vgt_json_bytes_hex(f, u->data, u->received < u->length ? u->received : u->length);
        }
        break;
    }
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA: {
        const vgt_ev_copy *c = &ev->u.copy;
        fprintf(f, ",\"src_va\":%" PRIu64 ",\"dst_va\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"line_length\":%u,\"line_count\":%u"
                   ",\"pitch_in\":%u,\"pitch_out\":%u,\"src_pitch\":%u,\"dst_pitch\":%u,\"multi_line\":%u,\"remap\":%u"
                   ",\"memset\":%u,\"remap_const_a\":%u,\"remap_const_b\":%u,\"remap_components\":%u,\"semaphore_type\":%u",
                c->src_va, c->dst_va, c->bytes, c->line_length, c->line_count, c->pitch_in, c->pitch_out, c->src_pitch,
                c->dst_pitch, c->multi_line, c->remap, c->memset, c->remap_const_a, c->remap_const_b,
                c->remap_components, c->semaphore_type);
        if (c->semaphore_type) fprintf(f, ",\"sem_va\":%" PRIu64 ",\"sem_payload\":%" PRIu64, c->sem_va, c->sem_payload);
        break;
    }
    case VGT_EV_SEM_RELEASE: case VGT_EV_SEM_ACQUIRE: case VGT_EV_REPORT: {
        const vgt_ev_sem *s = &ev->u.sem;
        fprintf(f, ",\"source\":\"%s\",\"op\":\"%s\",\"va\":%" PRIu64 ",\"payload\":%" PRIu64 ",\"size\":%u"
                   ",\"reduction\":\"%s\",\"flags\":%u,\"report\":%u",
                vgt_sem_source_name(s->source), vgt_sem_op_name(s->op), s->va, s->payload, s->size,
                vgt_sem_red_name(s->reduction), s->flags, s->report);
        break;
    }
    case VGT_EV_PROGRAM_BIND: {
        const vgt_ev_program *p = &ev->u.program;
        fprintf(f, ",\"stage\":%u,\"type\":%u,\"enabled\":%u,\"program_va\":%" PRIu64 ",\"registers\":%u", p->stage,
                p->type, p->enabled, p->program_va, p->register_count);
        break;
    }
    case VGT_EV_DRAW: {
        const vgt_ev_draw *d = &ev->u.draw;
        fprintf(f, ",\"kind\":\"%s\",\"topology\":\"%s\",\"first\":%u,\"count\":%u,\"instances\":%u,\"indexed\":%u"
                   ",\"index_size\":%u,\"index_buffer_va\":%" PRIu64 ",\"base_vertex\":%u,\"base_instance\":%u",
                vgt_draw_kind_name(d->kind), vgt_topology_name(d->topology), d->first, d->count, d->instance_count,
                d->kind == VGT_DRAW_INDEXED, d->index_size, d->index_buffer_va, d->base_vertex, d->base_instance);
        break;
    }
    case VGT_EV_CLEAR: {
        const vgt_ev_clear *c = &ev->u.clear;
        fprintf(f, ",\"color_mask\":%u,\"depth\":%u,\"stencil\":%u,\"mrt_select\":%u,\"target\":%u,\"target_va\":%" PRIu64
                   ",\"target_format\":%u,\"zt_va\":%" PRIu64 ",\"rt_array_index\":%u,\"raw\":%u",
                c->color_mask, c->depth, c->stencil, c->mrt_select, c->target, c->target_va, c->target_format, c->zt_va,
                c->rt_array_index, c->raw);
        break;
    }
    case VGT_EV_NOTIFY:
        fprintf(f, ",\"va\":%" PRIu64 ",\"type\":%u", ev->u.notify.va, ev->u.notify.type);
        break;
    default: break;
    }
}

void vgt_event_print_json(FILE *f, const vgt_event *ev)
{
    fprintf(f, "{\"event\":\"%s\",\"seq\":%" PRIu64 ",\"entry\":%u,\"dword\":%u,\"class\":%u,\"subch\":%u",
            vgt_event_kind_name(ev->kind), ev->pos.seq, ev->pos.entry, ev->pos.dword, ev->cls, ev->subch);
    if (ev->origin == VGT_ORIGIN_MACRO) fprintf(f, ",\"origin\":\"macro\",\"macro_call\":%" PRIu64, ev->macro_call);
    json_body(f, ev);
    fputc('}', f);
}
