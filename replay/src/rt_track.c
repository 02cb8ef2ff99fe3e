/* rt_track.c: which render targets the replayed 3D work draws into, from the decoded method stream
 * (subscriber sub_rt of the channel's stream, stream.c). Methods of a 3D class at
 * SET_COLOR_TARGET_A..MEMORY(j) (the class constants, vgt/nv/clcb97.h: six methods in a row at each
 * target's stride) update the target's state.
 * After the submission every target written during it that is complete (address, size, a format) is
 * added to the replay's list once, in order of first use: --dump-rt N picks from that list.
 * Not seen: targets set by methods an MME macro emits (the stream carries only the macro call). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv_facts.h"

#define CT_FIRST NVCB97_SET_COLOR_TARGET_A(0)
#define CT_STRIDE (NVCB97_SET_COLOR_TARGET_A(1) - NVCB97_SET_COLOR_TARGET_A(0))
#define CT_FIELDS ((NVCB97_SET_COLOR_TARGET_MEMORY(0) - CT_FIRST) / 4 + 1)   /* A, B, WIDTH, HEIGHT, FORMAT, MEMORY */
#define CT_TARGETS NVCB97_SET_COLOR_TARGET_A__SIZE

static void on_method(stream_submit *s, const vgt_method *m)
{
    engine_channel *c = s->c;
    if (m->masked || vgt_nv_class_family(m->cls) != VGT_NV_FAM_3D) return;
    if (m->mthd < CT_FIRST || m->mthd >= CT_FIRST + CT_TARGETS * CT_STRIDE) return;
    uint32_t j = (m->mthd - CT_FIRST) / CT_STRIDE, f = (m->mthd - CT_FIRST) % CT_STRIDE / 4;
    if (f >= CT_FIELDS) return;
    c->rt.ct[j][f] = m->data;
    c->rt.dirty |= (uint8_t)(1u << j);
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

static unsigned begin(stream_submit *s)
{
    s->c->rt.dirty = 0;
    return STREAM_METHODS;
}

static void end(stream_submit *s)
{
    for (uint32_t j = 0; j < CT_TARGETS; j++)
        if (s->c->rt.dirty & (1u << j)) add_target(s->rp, s->c, j, s->rec);
}

/* Render targets are followed for --list-rt / --dump-rt and for the census, which watches them. */
static int active(const vgt_replay *rp)
{
    return rp->opt.track_render_targets || rp->opt.census;
}

const stream_sub sub_rt = {.name = "rt", .active = active, .begin = begin, .method = on_method, .end = end};

uint32_t vgt_replay_rt_count(const vgt_replay *rp) { return rp->nrts; }

const vgt_rt_desc *vgt_replay_rt_at(const vgt_replay *rp, uint32_t i) { return i < rp->nrts ? &rp->rts[i] : NULL; }
