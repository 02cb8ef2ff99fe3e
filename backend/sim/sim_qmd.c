/* sim_qmd.c: when a scheduled QMD runs, and what its completion does: its release semaphores, then the
 * actions on its dependent QMDs.
 *
 * Facts (NVIDIA open-gpu-doc classes/compute/clcbc0qmd.h, V03_00 and V04_00):
 *  - REQUIRE_SCHEDULING_PCAS: the QMD does not run on its scheduling PCAS alone; it runs when, in
 *    addition, a QMD that completes schedules it (DEPENDENT_QMD ACTION SCHEDULE or
 *    INVALIDATE_COPY_SCHEDULE). Once sent with its PCAS it stays armed: CUDA graphs on Hopper send each
 *    kernel node's QMD once (upload, PCAS), and every launch of the graph schedules only its first,
 *    CTA-less QMD, whose completion schedules the next node, and so on (corpus/cuda_graph.vgt: the graph's
 *    last node releases ADD 1 on the stream's progress semaphore at every launch, after the driver wrote
 *    the counter's base with an inline-to-memory upload that follows the PCAS in the stream).
 *  - A QMD without REQUIRE_SCHEDULING_PCAS that a completing QMD schedules also has a PCAS of its own in
 *    the stream (CUDA streams: each kernel's QMD is sent, and a CTA-less QMD schedules it): it runs there.
 *  - DECREMENT_DEPENDENCE lowers a QMD's hardware dependence counter; the sim completes a QMD the moment
 *    it runs, so a dependence on it is always met: nothing to do.
 *  - INCREMENT_PUT feeds a queue QMD (IS_QUEUE): not modelled, reported.
 * The sim runs a QMD at once (shaders are not executed): its releases, then its dependents, depth first.
 * So the releases of a node that waits for its predecessors happen when the first QMD of the chain
 * runs, never at the node's own PCAS (which would put them before stream writes the hardware sees first).
 * An armed QMD whose bytes an upload rewrites is disarmed: the driver reuses the memory for another QMD,
 * which it sends with a PCAS of its own. */
#include <stdio.h>
#include <string.h>

#include "sim.h"

#define SIM_QMD_MAX_DEPTH 64u   /* a chain longer than this (or a cycle) is reported, not followed */

static sim_qmd_slot *slot_find(vgt_backend *b, uint32_t vas, uint64_t va)
{
    for (uint32_t i = 0; i < b->nqmds; i++)
        if (b->qmds[i].va == va && b->qmds[i].vas == vas) return &b->qmds[i];
    return NULL;
}

/* The slot of (vas, va), created (the oldest one reused when the table is full). */
static sim_qmd_slot *slot_get(vgt_backend *b, uint32_t vas, uint64_t va)
{
    sim_qmd_slot *s = slot_find(b, vas, va);
    if (s) return s;
    if (b->nqmds < SIM_QMD_SLOTS) s = &b->qmds[b->nqmds++];
    else s = &b->qmds[b->qmd_evict++ % SIM_QMD_SLOTS];
    *s = (sim_qmd_slot){.va = va, .vas = vas};
    return s;
}

static void run_qmd(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_qmd *q, unsigned depth);

/* A completing QMD acts on the QMD at va. */
static void schedule_dependent(vgt_backend *b, sim_channel *c, const vgt_method *m, uint64_t va, unsigned depth)
{
    if (depth > SIM_QMD_MAX_DEPTH) {
        sim_not_modelled(b, m, "QMD at VA 0x%llx: dependent QMDs chained deeper than %u (a cycle?) not followed",
                         (unsigned long long)va, SIM_QMD_MAX_DEPTH);
        return;
    }
    uint8_t bytes[VGT_QMD_MAX_BYTES];
    vgt_error e;
    vgt_qmd q;
    /* The data, known or not: the launch that started the chain made every byte "unknown" (its shaders may
     * write anywhere), but the QMD the driver uploaded is still there. */
    if (sim_mem_read(sim_vas_mem(b, c->vas), va, bytes, sizeof bytes, "dependent QMD", &e) != VGT_OK) {
        sim_fault(b, m, &e);
        return;
    }
    vgt_qmd_version v = vgt_qmd_detect(bytes, sizeof bytes);
    if (v == VGT_QMD_UNKNOWN || vgt_qmd_decode_as(v, bytes, sizeof bytes, &q, NULL) != VGT_OK) {
        sim_not_modelled(b, m, "dependent QMD at VA 0x%llx has an unknown version; its releases are not written",
                         (unsigned long long)va);
        return;
    }
    /* A QMD without REQUIRE_SCHEDULING_PCAS runs on its own PCAS, which the stream sends (CUDA streams on
     * Hopper: a CTA-less QMD schedules the next kernel's QMD, which has its PCAS too): running it here as
     * well would write its releases twice. */
    if (!vgt_qmd_requires_scheduling_pcas(v, bytes, sizeof bytes)) return;
    sim_qmd_slot *s = slot_get(b, c->vas, va);
    if (!s->armed) {   /* runs when its PCAS comes */
        s->pending = 1;
        return;
    }
    b->ctr.qmd_dependent_runs++;
    run_qmd(b, c, m, &q, depth + 1);
}

static void run_qmd(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_qmd *q, unsigned depth)
{
    for (unsigned i = 0; i < q->release_count && i < VGT_QMD_MAX_RELEASE; i++) {
        if (!q->release[i].enabled) continue;
        vgt_ev_sem s;
        vgt_ev_sem_from_qmd_release(&q->release[i], i, &s);
        sim_apply_release(b, m, &s);
    }
    for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++) {
        const vgt_qmd_dependent *d = &q->dependent[i];
        if (!d->enabled) continue;
        switch (d->action) {
        case VGT_QMD_DEP_SCHEDULE:
        case VGT_QMD_DEP_INVALIDATE_COPY_SCHEDULE: schedule_dependent(b, c, m, d->va, depth); break;
        case VGT_QMD_DEP_DECREMENT_DEPENDENCE: break;   /* met at once: see the top of the file */
        default:
            sim_not_modelled(b, m, "dependent QMD action %s on the QMD at VA 0x%llx",
                             vgt_qmd_dependent_action_name(d->action), (unsigned long long)d->va);
            break;
        }
    }
}

void sim_qmd_scheduled(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_launch *l)
{
    if (!l->decoded || !l->qmd_known) return;   /* reported by the caller */
    if (!l->inline_qmd && vgt_qmd_requires_scheduling_pcas(l->qmd.version, l->qmd_bytes, l->qmd_length)) {
        sim_qmd_slot *s = slot_get(b, c->vas, l->qmd_va);
        s->armed = 1;
        if (!s->pending) {   /* waits for a QMD that completes before it */
            b->ctr.qmd_armed++;
            return;
        }
        s->pending = 0;
    }
    run_qmd(b, c, m, &l->qmd, 0);
}

void sim_qmd_written(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t len)
{
    for (uint32_t i = 0; i < b->nqmds; i++) {
        sim_qmd_slot *s = &b->qmds[i];
        if (s->vas == vas && s->va < va + len && va < s->va + VGT_QMD_MAX_BYTES) s->armed = s->pending = 0;
    }
}
