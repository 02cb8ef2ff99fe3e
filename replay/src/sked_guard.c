/* sked_guard.c: keep compute launches that would fail the SKED local-memory check off the GPU.
 *
 * Why: on the H200 a launch whose QMD asks for local memory (SHADER_LOCAL_MEMORY_LOW/HIGH_SIZE) that its
 * context was not given raises Xid 13 "SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE failed" on the compute class,
 * and a graphics exception leaves the GPU unable to finish other programs' Vulkan draws until the machine
 * restarts (backend/gpu/README.md, "Engine exceptions"). Local memory is the context's: the channels of a
 * group (one TSG) share what any of them set with SET_SHADER_LOCAL_MEMORY_A/B (base) and
 * SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B (bytes per TPC).
 *
 * The rule. NVIDIA does not publish SKED's comparison. What is public is how a driver sizes the area for
 * a per-thread size (Mesa's NVK, nvk_slm_area: bytes per warp = align(bytes per thread x 32, 0x200),
 * bytes per TPC = align(bytes per warp x max warps per SM x SMs per TPC, 0x8000), and that per-TPC size
 * goes to NON_THROTTLED_A/B), and the captured CUDA driver agrees on Hopper (64 warps per SM, 2 SMs per
 * TPC): 1600 bytes per thread, NON_THROTTLED_B 0x640000. So a launch is refused when it needs local
 * memory (LOW + HIGH > 0) and its context has no base or no size, or when that size is smaller than the
 * per-TPC size the launch's per-thread demand needs by this sizing (the largest warp and SM counts:
 * conservative for GPUs with fewer warps per SM). options.force lets it through.
 *
 * It subscribes to the decoded stream (the captured submission's local-memory methods and launches, in
 * order); what is checked is what is submitted: the captured stream on the verbatim lane, the plan's
 * stream on the synth lane (whose QMDs are read from the plan's own memory). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/grow.h"
#include "vgt/synth.h"

#define SKED_WARP_LANES 32u
#define SKED_MAX_WARPS_PER_SM 64u
#define SKED_SMS_PER_TPC 2u

typedef struct sked_ctx {
    uint32_t client, handle;      /* the group (TSG) or, outside any, the channel */
    uint32_t base_hi, base_lo, size_hi, size_lo;
} sked_ctx;

struct sked_guard {
    sked_ctx *ctx;
    uint32_t n, cap;
    vgt_u64map ix;                /* client:handle -> index in ctx (a hostile trace has 100,000 channels) */
};

typedef struct sked_op {
    uint8_t launch;               /* 1 a launch (lo, hi, where), 0 a method (mthd role, data) */
    uint8_t role;
    uint32_t data, lo, hi;
    uint64_t qmd_va;
    vgt_mpos pos;
} sked_op;

struct sked_chan {
    sked_op *ops;
    uint32_t n, cap;
    int overflow;                 /* no memory for one: the submission is not vouched for */
};

static int active(const vgt_replay *rp) { return mme_guard_active(rp); }

static sked_ctx *ctx_of(vgt_replay *rp, const engine_channel *c)
{
    if (!rp->sked && !(rp->sked = calloc(1, sizeof *rp->sked))) return NULL;
    struct sked_guard *g = rp->sked;
    uint32_t client = c->client, handle = c->handle;
    const vgt_model_channel *mc = vgt_model_channel_find(rp->model, c->client, c->handle);
    const vgt_model_object *grp = mc ? vgt_model_object_find(rp->model, mc->rec.client, mc->rec.parent) : NULL;
    if (grp && grp->cls == VGT_CLASS_CHANNEL_GROUP) client = mc->rec.client, handle = mc->rec.parent;
    uint64_t key = vgt_u64map_handle_key(client, handle);
    uint32_t i;
    if (vgt_u64map_get(&g->ix, key, &i)) return &g->ctx[i];
    if (vgt_grow(&g->ctx, &g->cap, g->n + 1ull, 8)) return NULL;
    if (vgt_u64map_put(&g->ix, key, g->n) < 0) return NULL;
    g->ctx[g->n] = (sked_ctx){.client = client, .handle = handle};
    return &g->ctx[g->n++];
}

/* Bytes per TPC a per-thread demand needs (the sizing above). */
static uint64_t needed_per_tpc(uint64_t per_thread)
{
    uint64_t warp = (per_thread * SKED_WARP_LANES + 0x1ff) & ~0x1ffull;
    return (warp * SKED_MAX_WARPS_PER_SM * SKED_SMS_PER_TPC + 0x7fff) & ~0x7fffull;
}

int sked_guard_violates(uint32_t lo, uint32_t hi, uint64_t base, uint64_t size, char *why, size_t n)
{
    uint64_t demand = (uint64_t)lo + hi;
    if (!demand) return 0;
    uint64_t need = needed_per_tpc(demand);
    if (base && size >= need) return 0;
    snprintf(why, n, "SHADER_LOCAL_MEMORY_LOW_SIZE %" PRIu32 " + HIGH_SIZE %" PRIu32 " bytes per thread need "
             "0x%" PRIx64 " bytes per TPC; the context has SET_SHADER_LOCAL_MEMORY_A/B 0x%" PRIx64
             ", NON_THROTTLED_A/B 0x%" PRIx64 "%s", lo, hi, need, base, size,
             !base ? " (no local memory base)" : !size ? " (no local memory size)" : "");
    return 1;
}

/* One op on a copy of the context; 1 (and why) when a launch would fail the check. */
static int apply(sked_ctx *x, const sked_op *o, const char *lane, char *why, size_t n)
{
    if (!o->launch) {
        switch (o->role) {
        case VGT_LMEM_BASE_UPPER: x->base_hi = o->data; break;
        case VGT_LMEM_BASE_LOWER: x->base_lo = o->data; break;
        case VGT_LMEM_SIZE_UPPER: x->size_hi = o->data; break;
        case VGT_LMEM_SIZE_LOWER: x->size_lo = o->data; break;
        default: break;
        }
        return 0;
    }
    char rule[300];
    uint64_t base = (uint64_t)(x->base_hi & NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER_MASK) << 32 | x->base_lo;
    uint64_t size = (uint64_t)(x->size_hi & NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER_MASK) << 32 | x->size_lo;
    if (!sked_guard_violates(o->lo, o->hi, base, size, rule, sizeof rule)) return 0;
    snprintf(why, n, "%s launch of the QMD at 0x%" PRIx64 " (%" PRIu64 ":%u:%u): %s; the GPU raises "
             "SKEDCHECK05_LOCAL_MEMORY_TOTAL_SIZE", lane, o->qmd_va, o->pos.seq, o->pos.entry, o->pos.dword, rule);
    return 1;
}

static int run_ops(vgt_replay *rp, engine_channel *c, const sked_op *ops, uint32_t n, const char *lane)
{
    c->sked_refuse[0] = 0;
    if (!active(rp)) return 0;
    sked_ctx *x = ctx_of(rp, c);
    if (!x) {
        snprintf(c->sked_refuse, sizeof c->sked_refuse, "no memory to follow the channel's local memory");
        return 1;
    }
    sked_ctx t = *x;
    for (uint32_t i = 0; i < n; i++)
        if (apply(&t, &ops[i], lane, c->sked_refuse, sizeof c->sked_refuse)) return 1;
    *x = t;
    return 0;
}

int sked_guard_verbatim(vgt_replay *rp, engine_channel *c)
{
    struct sked_chan *k = c->sked;
    if (k && k->overflow) {
        snprintf(c->sked_refuse, sizeof c->sked_refuse, "no memory to follow the submission's local memory");
        return active(rp);
    }
    return run_ops(rp, c, k ? k->ops : NULL, k ? k->n : 0, "captured");
}

static int push(struct sked_chan *k, const sked_op *o)
{
    if (vgt_grow(&k->ops, &k->cap, k->n + 1ull, 16)) return 0;
    k->ops[k->n++] = *o;
    return 1;
}

int sked_guard_plan(vgt_replay *rp, engine_channel *c, const vgt_synth_plan *p)
{
    if (!active(rp)) return 0;
    struct sked_chan k = {0};
    int bad = 0;
    for (uint32_t i = 0; i < p->nruns && !bad; i++) {
        const vgt_synth_run *r = &p->runs[i];
        for (uint32_t j = 0; j < r->count && !bad; j++) {
            uint32_t mthd = r->noninc ? r->mthd : r->mthd + 4 * j, data = p->dw[r->first + j];
            sked_op o = {.pos = {.seq = rp->cur_seq, .entry = i, .dword = j}};
            vgt_lmem_role role = vgt_lmem_method_role(r->cls, mthd);
            if (role != VGT_LMEM_NONE) {
                o.role = (uint8_t)role, o.data = data;
                bad = !push(&k, &o);
                continue;
            }
            if (vgt_nv_class_family(r->cls) != VGT_NV_FAM_COMPUTE || mthd != NVCBC0_SEND_PCAS_A) continue;
            /* the QMD the launch names, from the plan's memory */
            o.launch = 1, o.qmd_va = (uint64_t)data << 8;
            const vgt_synth_blob *b = NULL;
            for (uint32_t m = 0; m < p->nblobs && !b; m++)
                if (p->blobs[m].va == o.qmd_va) b = &p->blobs[m];
            vgt_qmd q;
            vgt_error e;
            if (!b || vgt_qmd_decode(p->bytes + b->off, (uint32_t)b->len, &q, &e) != VGT_OK) {
                snprintf(c->sked_refuse, sizeof c->sked_refuse, "synthesized launch of a QMD at 0x%" PRIx64
                         " not in the plan's memory: its local memory is not known", o.qmd_va);
                free(k.ops);
                return 1;
            }
            o.lo = q.local_memory_low, o.hi = q.local_memory_high;
            bad = !push(&k, &o);
        }
    }
    if (bad) {
        free(k.ops);
        snprintf(c->sked_refuse, sizeof c->sked_refuse, "no memory to follow the plan's local memory");
        return 1;
    }
    int rc = run_ops(rp, c, k.ops, k.n, "synthesized");
    free(k.ops);
    return rc;
}

vgt_status sked_refuse(vgt_replay *rp, engine_channel *c)
{
    return engine_refuse_as(rp, c->sked_refuse, "a graphics exception", VGT_BEV_UNSUPPORTED);
}

void sked_guard_free(vgt_replay *rp)
{
    if (!rp->sked) return;
    free(rp->sked->ctx);
    vgt_u64map_free(&rp->sked->ix);
    free(rp->sked);
    rp->sked = NULL;
}

/* ---- the subscriber: the captured submission's ops ---- */

static unsigned begin(stream_submit *s)
{
    engine_channel *c = s->c;
    if (!c->sked && !(c->sked = calloc(1, sizeof *c->sked))) return 0;
    c->sked->n = 0, c->sked->overflow = 0;
    return STREAM_METHODS;
}

static void method(stream_submit *s, const vgt_method *m)
{
    struct sked_chan *k = s->c->sked;
    if (!k || m->masked || m->is_host) return;
    vgt_lmem_role role = vgt_lmem_method_role(m->cls, m->mthd);
    if (role == VGT_LMEM_NONE) return;
    sked_op o = {.role = (uint8_t)role, .data = m->data, .pos = m->pos};
    if (!push(k, &o)) k->overflow = 1;
}

/* A run of one method: nothing unless that method is a local-memory one (each write, as method). */
static void run(stream_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    if (m->masked || m->is_host || vgt_lmem_method_role(m->cls, m->mthd) == VGT_LMEM_NONE) return;
    for (uint32_t i = 0; i < count; i++) {
        vgt_method one = vgt_pb_run_method(m, data, i);
        method(s, &one);
    }
}

static void event(stream_submit *s, const vgt_event *ev)
{
    struct sked_chan *k = s->c->sked;
    if (!k || ev->kind != VGT_EV_LAUNCH) return;
    const vgt_qmd *q = &ev->u.launch.qmd;
    sked_op o = {.launch = 1, .lo = q->local_memory_low, .hi = q->local_memory_high, .qmd_va = ev->u.launch.qmd_va,
                 .pos = ev->pos};
    if (!push(k, &o)) k->overflow = 1;
}

static void channel_free(engine_channel *c)
{
    if (c->sked) free(c->sked->ops);
    free(c->sked);
    c->sked = NULL;
    c->sked_refuse[0] = 0;
}

const stream_sub sub_sked_guard = {.name = "sked_guard", .active = active, .begin = begin, .method = method,
                                   .run = run, .event = event, .channel_free = channel_free};
