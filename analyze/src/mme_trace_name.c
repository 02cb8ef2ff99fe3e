/* mme_trace_name.c: what a macro emits, and the name it gets for it. Both are tables: method names (from
 * the class tables, so every 3D/compute generation is covered by name) map to a category, and the first
 * naming rule whose required categories a macro emitted gives its name.
 *
 * Method names per NVIDIA open-gpu-doc classes/3d/clc597.h, clcb97.h and classes/compute/clcbc0.h, as
 * transcribed into the .cls tables of trace-format/facts/classes. */
#include <string.h>

#include "vgt/classes.h"
#include "vgt/mme_trace.h"

typedef struct name_rule {
    const char *name;
    int prefix;            /* 1: name is a prefix, 0: the whole name */
    uint32_t category;
} name_rule;

/* First match wins: the specific names before the catch-all SET_ prefix. */
static const name_rule method_rules[] = {
    {"BEGIN", 0, VGT_MME_EMIT_DRAW},
    {"END", 0, VGT_MME_EMIT_DRAW},
    {"DRAW_", 1, VGT_MME_EMIT_DRAW},
    {"CLEAR_SURFACE", 1, VGT_MME_EMIT_CLEAR},
    {"LAUNCH", 0, VGT_MME_EMIT_LAUNCH},            /* compute classes before Hopper */
    {"SEND_PCAS_", 1, VGT_MME_EMIT_LAUNCH},
    {"SEND_SIGNALING_PCAS", 1, VGT_MME_EMIT_LAUNCH},
    {"LOAD_CONSTANT_BUFFER", 1, VGT_MME_EMIT_CB_LOAD},
    {"BIND_GROUP_CONSTANT_BUFFER", 1, VGT_MME_EMIT_CB_BIND},
    {"LAUNCH_DMA", 0, VGT_MME_EMIT_INLINE},
    {"LOAD_INLINE_DATA", 0, VGT_MME_EMIT_INLINE},
    {"SET_REPORT_SEMAPHORE_D", 0, VGT_MME_EMIT_REPORT},
    {"REPORT_SEMAPHORE_EXECUTE", 0, VGT_MME_EMIT_REPORT},
    {"NO_OPERATION", 0, VGT_MME_EMIT_SYNC},
    {"WAIT_FOR_IDLE", 0, VGT_MME_EMIT_SYNC},
    {"SET_FALCON", 1, VGT_MME_EMIT_FALCON},
    {"SET_", 1, VGT_MME_EMIT_SET},
};

uint32_t vgt_mme_emit_category(uint32_t cls, uint32_t method)
{
    const vgt_method_info *mi = vgt_class_method(vgt_class_find(cls), method, NULL);
    if (!mi) return VGT_MME_EMIT_UNKNOWN;
    for (size_t i = 0; i < sizeof method_rules / sizeof method_rules[0]; i++) {
        const name_rule *r = &method_rules[i];
        if (r->prefix ? !strncmp(mi->name, r->name, strlen(r->name)) : !strcmp(mi->name, r->name))
            return r->category;
    }
    return VGT_MME_EMIT_OTHER;
}

typedef struct macro_rule {
    const char *name;
    uint32_t need;         /* the macro emitted at least one of these */
    uint32_t allowed;      /* and nothing outside these and SYNC (0: anything else allowed) */
} macro_rule;

/* A macro that draws also sets state; what it is for is the most consequential thing it emits. */
static const macro_rule macro_rules[] = {
    {"draw", VGT_MME_EMIT_DRAW, 0},
    {"clear", VGT_MME_EMIT_CLEAR, 0},
    {"launch", VGT_MME_EMIT_LAUNCH, 0},
    {"constant-buffer update", VGT_MME_EMIT_CB_LOAD, 0},
    {"inline upload", VGT_MME_EMIT_INLINE, 0},
    {"report", VGT_MME_EMIT_REPORT, 0},
    {"firmware method", VGT_MME_EMIT_FALCON, VGT_MME_EMIT_FALCON | VGT_MME_EMIT_SET},
    {"constant-buffer bind", VGT_MME_EMIT_CB_BIND, VGT_MME_EMIT_CB_BIND | VGT_MME_EMIT_SET},
    {"state setter", VGT_MME_EMIT_SET, VGT_MME_EMIT_SET},
    {"sync", VGT_MME_EMIT_SYNC, VGT_MME_EMIT_SYNC},
};

const char *vgt_mme_macro_name(uint32_t categories, uint64_t calls)
{
    if (!calls) return "not called";
    if (!categories) return "no emission";
    for (size_t i = 0; i < sizeof macro_rules / sizeof macro_rules[0]; i++) {
        const macro_rule *r = &macro_rules[i];
        if ((categories & r->need) && (!r->allowed || !(categories & ~(r->allowed | VGT_MME_EMIT_SYNC)))) return r->name;
    }
    return "mixed";
}

const char *vgt_mme_trace_macro_name(const vgt_mme_trace_macro *v, const char **from)
{
    const char *src = "calls";
    const char *name = vgt_mme_macro_name(v->categories, v->calls);
    if (!v->calls) {
        src = v->static_categories ? "code" : "none";
        if (v->static_categories) name = vgt_mme_macro_name(v->static_categories, 1);
    }
    if (from) *from = src;
    return name;
}
