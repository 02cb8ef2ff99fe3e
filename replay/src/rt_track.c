/* rt_track.c: which render targets the replayed 3D work draws into, from the decoded method stream.
 * Each channel keeps its own decoder state (subchannel bindings persist across submissions); methods of
 * a 3D class at SET_COLOR_TARGET_A..MEMORY(j) (the class constants, vgt/nv/clcb97.h: six methods in a row
 * at each target's stride) update the target's state.
 * After the submission every target written during it that is complete (address, size, a format) is
 * added to the replay's list once, in order of first use: --dump-rt N picks from that list.
 * Not seen: targets set by methods an MME macro emits (the stream carries only the macro call). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/events.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/nv_facts.h"

/* The stream is decoded for render targets, the census, and (on backends without a write log, where
 * --check compares observed memory whole) for the bytes that differ from run to run. */
int engine_needs_stream(const vgt_replay *rp)
{
    return rp->opt.track_render_targets || rp->opt.census || mme_guard_active(rp) ||
           (rp->opt.check && !(rp->ops->caps() & VGT_CAP_WRITE_LOG));
}

typedef struct track_ctx {
    vgt_replay *rp;
    engine_channel *c;
} track_ctx;

static void add_volatile(vgt_replay *rp, uint64_t va, uint64_t len)
{
    for (uint32_t i = 0; i < rp->nvolat; i++)
        if (rp->volat[i].va == va && rp->volat[i].len == len) return;
    if (rp->nvolat == VOLATILE_MAX) {
        rp->volat_dropped++;
        return;
    }
    if (!rp->volat && !(rp->volat = malloc(VOLATILE_MAX * sizeof *rp->volat))) {
        rp->volat_dropped++;
        return;
    }
    rp->volat[rp->nvolat++] = (volatile_range){va, len};
}

/* Four-word semaphore structures carry a timestamp in their upper 8 bytes (clc86f.h SEM_EXECUTE
 * RELEASE_TIMESTAMP, clcb97.h SET_REPORT_SEMAPHORE_D STRUCTURE_SIZE FOUR_WORDS, clc8b5.h
 * SEMAPHORE_TYPE RELEASE_FOUR_WORD_SEMAPHORE); a report-only write is a counter and a timestamp. */
static void on_event(void *ctx, const vgt_event *ev)
{
    vgt_replay *rp = ctx;
    if (ev->kind != VGT_EV_SEM_RELEASE && ev->kind != VGT_EV_REPORT) return;
    const vgt_ev_sem *s = &ev->u.sem;
    if (s->op == VGT_SEM_OP_REPORT_ONLY) add_volatile(rp, s->va, 16);
    else if (s->flags & VGT_SEM_FLAG_TIMESTAMP) add_volatile(rp, s->va + 8, 8);
}

void volatile_unmask(const vgt_replay *rp, uint64_t va, uint64_t len, uint8_t *mask)
{
    for (uint32_t i = 0; i < rp->nvolat; i++) {
        uint64_t s = rp->volat[i].va > va ? rp->volat[i].va : va;
        uint64_t e = rp->volat[i].va + rp->volat[i].len < va + len ? rp->volat[i].va + rp->volat[i].len : va + len;
        if (s < e) memset(mask + (s - va), 0, e - s);
    }
}

/* NOTIFY of the 3D and compute classes writes a 16-byte notification at SET_NOTIFY_A/B whose first 8
 * bytes are a timestamp (the same offsets in both: vgt/nv/clcb97.h, clcbc0.h; the notification layout:
 * nvtypes.h NvNotification, nanoseconds[2] first). Vulkan's query/event code uses it (vk_compute:
 * 0x56f0010 differed only in those bytes). */
#define NOTIFY_A NVCB97_SET_NOTIFY_A
#define NOTIFY_B NVCB97_SET_NOTIFY_B
#define NOTIFY_GO NVCB97_NOTIFY
#define CLASS_3D(cls) (vgt_nv_class_family(cls) == VGT_NV_FAM_3D)
#define CLASS_COMPUTE(cls) (vgt_nv_class_family(cls) == VGT_NV_FAM_COMPUTE)

static void track_notify(vgt_replay *rp, engine_channel *c, const vgt_method *m)
{
    uint32_t k = CLASS_3D(m->cls) ? 0 : CLASS_COMPUTE(m->cls) ? 1 : 2;
    if (k == 2) return;
    if (m->mthd == NOTIFY_A) c->rt.notify[k][0] = m->data;
    else if (m->mthd == NOTIFY_B) c->rt.notify[k][1] = m->data;
    else if (m->mthd == NOTIFY_GO) {
        uint64_t va = (uint64_t)VGT_NV_GET(c->rt.notify[k][0], NVCB97_SET_NOTIFY_A_ADDRESS_UPPER) << 32 | c->rt.notify[k][1];
        if (va) add_volatile(rp, va, 8);
    }
}

#define CT_FIRST NVCB97_SET_COLOR_TARGET_A(0)
#define CT_STRIDE (NVCB97_SET_COLOR_TARGET_A(1) - NVCB97_SET_COLOR_TARGET_A(0))
#define CT_FIELDS ((NVCB97_SET_COLOR_TARGET_MEMORY(0) - CT_FIRST) / 4 + 1)   /* A, B, WIDTH, HEIGHT, FORMAT, MEMORY */
#define CT_TARGETS NVCB97_SET_COLOR_TARGET_A__SIZE

/* Volatile ranges matter only to checks without a write log (the semantic tracker runs then too). */
static int rp_checks_volatile(const vgt_replay *rp)
{
    return rp->opt.check && !(rp->ops->caps() & VGT_CAP_WRITE_LOG);
}

static int on_method(void *ctx, const vgt_method *m)
{
    track_ctx *t = ctx;
    engine_channel *c = t->c;
    vgt_error e;
    if (c->sem && vgt_sem_method(c->sem, m, &e) != VGT_OK) {
        vgt_sem_free(c->sem);   /* a tracker that failed once stays off for this channel */
        c->sem = NULL;
    }
    if (m->masked) return 0;
    if (mme_guard_active(t->rp)) mme_guard_method(c, m);
    if (rp_checks_volatile(t->rp)) track_notify(t->rp, c, m);
    if (!CLASS_3D(m->cls)) return 0;
    if (m->mthd < CT_FIRST || m->mthd >= CT_FIRST + CT_TARGETS * CT_STRIDE) return 0;
    uint32_t j = (m->mthd - CT_FIRST) / CT_STRIDE, f = (m->mthd - CT_FIRST) % CT_STRIDE / 4;
    if (f >= CT_FIELDS) return 0;
    c->rt.ct[j][f] = m->data;
    c->rt.dirty |= (uint8_t)(1u << j);
    return 0;
}

/* A target's address from SET_COLOR_TARGET_A/B: the facts' address operand (addresses.txt). */
static uint64_t ct_address(uint32_t a, uint32_t b)
{
    const vgt_nv_addr_method *op;
    uint32_t el;
    if (vgt_nv_addr_method_of(NVCB97_CLASS, NVCB97_SET_COLOR_TARGET_B(0), &op, &el) != 1) return 0;
    return vgt_nv_addr_method_value(op, a, b);
}

static void add_target(vgt_replay *rp, const engine_channel *c, uint32_t j, const vgt_record *rec)
{
    const uint32_t *ct = c->rt.ct[j];
    vgt_rt_desc d = {.va = ct_address(ct[0], ct[1]), .width = ct[2], .height = ct[3],
                     .format = ct[4], .memory = ct[5], .target = j, .submit_index = rp->cur_index, .seq = rec->seq};
    if (!d.va || !d.width || !d.height || !d.format) return;
    for (uint32_t i = 0; i < rp->nrts; i++) {
        const vgt_rt_desc *o = &rp->rts[i];
        if (o->va == d.va && o->width == d.width && o->height == d.height && o->format == d.format &&
            o->memory == d.memory)
            return;
    }
    if (rp->nrts == VGT_RT_MAX) return;
    rp->rts[rp->nrts++] = d;
    uint64_t span = vgt_rt_span(&d);
    if (rp->opt.census && span) census_watch(rp, d.va, span, "render-target");
}

vgt_status rt_track_submit(vgt_replay *rp, engine_channel *c, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub,
                           vgt_error *err)
{
    if (!c->pb) {
        c->pb = calloc(1, sizeof *c->pb);
        if (!c->pb) return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "replay: out of memory for decoder state");
        const vgt_model_channel *mc = vgt_model_channel_find(rp->model, c->client, c->handle);
        if (mc && mc->has_state) vgt_pb_state_adopt(c->pb, c->cls, &mc->state);
        else vgt_pb_state_init(c->pb, c->cls);
    }
    c->pb_before = *c->pb;
    if (!c->sem && rp->opt.check && !(rp->ops->caps() & VGT_CAP_WRITE_LOG)) {
        vgt_sem_config cfg = {.on_event = on_event, .ctx = rp};
        vgt_error e;
        if (vgt_sem_new(&c->sem, &cfg, &e) != VGT_OK) c->sem = NULL;
    }
    c->rt.dirty = 0;
    track_ctx t = {rp, c};
    vgt_pb_callbacks cb = {.method = on_method, .ctx = &t};
    vgt_error e;
    if (vgt_pb_decode_submit(c->pb, rec->seq, sub, &cb, &e) != VGT_OK)
        engine_warn(rp, "render-target tracking: submission %lld not decoded: %s", (long long)rp->cur_index, e.msg);
    for (uint32_t j = 0; j < CT_TARGETS; j++)
        if (c->rt.dirty & (1u << j)) add_target(rp, c, j, rec);
    return VGT_OK;
}

void rt_track_free(engine_channel *c)
{
    free(c->pb);
    c->pb = NULL;
    if (c->sem) vgt_sem_free(c->sem);
    c->sem = NULL;
    mme_guard_free(c);
}

uint32_t vgt_replay_rt_count(const vgt_replay *rp) { return rp->nrts; }

const vgt_rt_desc *vgt_replay_rt_at(const vgt_replay *rp, uint32_t i) { return i < rp->nrts ? &rp->rts[i] : NULL; }
