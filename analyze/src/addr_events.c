/* addr_events.c: the GPU addresses a semantic event names (vgt/addr_operands.h): semaphore addresses
 * (host, report, copy), copy sources and destinations, I2M destinations, QMD addresses and the QMD's
 * program, constant-buffer, release and dependent-QMD addresses, shader program addresses, index
 * buffers. The events come from the semantic tracker (events.h), which decodes them over the class
 * tables; this file only says which of their fields are addresses. */
#include <stdio.h>

#include "vgt/addr_operands.h"

typedef struct ops {
    vgt_addr_operand *out;
    uint32_t n, max;
} ops;

static void add(ops *o, const char *what, uint64_t va, int in_qmd)
{
    if (!va || o->n == o->max) return;
    vgt_addr_operand *a = &o->out[o->n++];
    snprintf(a->what, sizeof a->what, "%s", what);
    a->va = va;
    a->in_qmd = (uint8_t)in_qmd;
}

static void launch(ops *o, const vgt_ev_launch *l)
{
    add(o, "QMD address", l->qmd_va, 0);
    if (!l->decoded) return;
    char what[sizeof o->out->what];
    add(o, "program address", l->qmd.program_va, 1);
    for (uint32_t i = 0; i < VGT_QMD_MAX_CB; i++)
        if (l->qmd.cb[i].valid) {
            snprintf(what, sizeof what, "constant buffer %u", i);
            add(o, what, l->qmd.cb[i].va, 1);
        }
    for (uint32_t i = 0; i < l->qmd.release_count && i < VGT_QMD_MAX_RELEASE; i++)
        if (l->qmd.release[i].enabled) {
            snprintf(what, sizeof what, "release %u address", i);
            add(o, what, l->qmd.release[i].va, 1);
        }
    for (uint32_t i = 0; i < VGT_QMD_MAX_DEPENDENT; i++)
        if (l->qmd.dependent[i].enabled) add(o, "dependent-QMD address", l->qmd.dependent[i].va, 1);
}

uint32_t vgt_event_addresses(const vgt_event *ev, vgt_addr_operand *out, uint32_t max)
{
    ops o = {out, 0, max};
    switch (ev->kind) {
    case VGT_EV_SEM_RELEASE:
    case VGT_EV_SEM_ACQUIRE:
    case VGT_EV_REPORT: add(&o, "semaphore address", ev->u.sem.va, 0); break;
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA:
        if (!ev->u.copy.transfer_type) break;   /* semaphore only: its offsets are stale, not operands */
        add(&o, "copy source", ev->u.copy.memset ? 0 : ev->u.copy.src_va, 0);
        add(&o, "copy destination", ev->u.copy.dst_va, 0);
        break;
    case VGT_EV_UPLOAD: add(&o, "I2M destination", ev->u.upload.dst_va, 0); break;
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH: launch(&o, &ev->u.launch); break;   /* dependents too */
    case VGT_EV_PROGRAM_BIND: add(&o, "shader program address", ev->u.program.program_va, 0); break;
    case VGT_EV_DRAW: add(&o, "index buffer address", ev->u.draw.index_buffer_va, 0); break;
    default: break;
    }
    return o.n;
}
