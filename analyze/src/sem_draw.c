/* sem_draw.c: 3D draws (NVIDIA open-gpu-doc classes/3d/clc597.h, clc797.h, clcb97.h).
 *
 * Shapes recognised:
 *   BEGIN (OP 15:0 topology, INSTANCE_ID 27:26: FIRST 0, SUBSEQUENT 1, UNCHANGED 2)
 *     SET_VERTEX_ARRAY_START + DRAW_VERTEX_ARRAY (count)           -> one draw per DRAW_VERTEX_ARRAY
 *     SET_INDEX_BUFFER_F (first) + DRAW_INDEX_BUFFER (count)       -> one indexed draw each
 *     DRAW_INLINE_INDEX / 2X16 / 4X8 (1, 2, 4 indices per method)  -> one draw at END
 *   END
 *   DRAW_VERTEX_ARRAY_BEGIN_END_A (start) / _B (count), DRAW_INDEX_BUFFER_BEGIN_END_A (first) / _B (count)
 *   DRAW_VERTEX_ARRAY_BEGIN_END_INSTANCE_FIRST/SUBSEQUENT, DRAW_INDEX_BUFFER{32,16,8}_BEGIN_END_INSTANCE_
 *     FIRST/SUBSEQUENT: START/FIRST 15:0, COUNT 27:16, TOPOLOGY 31:28
 *   DRAW_ZERO_INDEX (count), DRAW_AUTO (byte count)
 * Index size from SET_INDEX_BUFFER_E INDEX_SIZE 1:0 (1, 2, 4 bytes); index buffer VA from
 * SET_INDEX_BUFFER_A (upper) / _B (lower).
 * Topology: the OP / TOPOLOGY of the begin methods (BEGIN, SET_DRAW_CONTROL_A TOPOLOGY 3:0 for the
 * *_BEGIN_END_A/B pair, the packed TOPOLOGY), unless SET_PRIMITIVE_TOPOLOGY_CONTROL OVERRIDE (bit 0) is
 * USE_SEPARATE_TOPOLOGY_STATE: then SET_PRIMITIVE_TOPOLOGY V, mapped to the same numbering (the Vulkan
 * driver draws that way: corpus/vk_triangle.vgt). *_BEGIN_END_A/B draws SET_DRAW_CONTROL_B INSTANCE_COUNT
 * instances when SET_DRAW_CONTROL_A INSTANCE_ITERATE_ENABLE (bit 9) is set, else one [inference from
 * the field names]; SET_DRAW_CONTROL_A INSTANCE_ID 6:5 SUBSEQUENT continues the held draw's instances.
 * Instancing: a draw issued as a SUBSEQUENT instance of a held draw with the same shape increments that
 * draw's instance_count instead of making a new one (the NVIDIA and Mesa drivers instance by repeating
 * BEGIN with INSTANCE_ID SUBSEQUENT). */
#include "sem_internal.h"

static int same_shape(const vgt_ev_draw *a, const vgt_ev_draw *b)
{
    return a->kind == b->kind && a->topology == b->topology && a->first == b->first && a->count == b->count &&
           a->index_size == b->index_size && a->index_buffer_va == b->index_buffer_va;
}

/* SET_PRIMITIVE_TOPOLOGY V (POINTLIST 1 .. PATCHLIST 0xE, LEGACY_* 0x1001..0x101B) as a BEGIN OP value. */
static uint32_t separate_topology(uint32_t v, uint32_t fallback)
{
    static const struct { uint16_t v; uint8_t op; } map[] = {
        { 0x1, 0 }, { 0x2, 1 }, { 0x3, 3 }, { 0x4, 4 }, { 0x5, 5 }, { 0xa, 10 }, { 0xb, 11 }, { 0xc, 12 },
        { 0xd, 13 }, { 0xe, 14 },
        { 0x1001, 0 }, { 0x1002, 1 }, { 0x1003, 4 }, { 0x100f, 1 }, { 0x1010, 3 }, { 0x1011, 3 }, { 0x1012, 4 },
        { 0x1013, 5 }, { 0x1014, 5 }, { 0x1015, 6 }, { 0x1016, 6 }, { 0x1017, 6 }, { 0x1018, 1 }, { 0x101a, 4 },
        { 0x101b, 1 },
    };
    for (unsigned i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].v == (v & 0xffff)) return map[i].op;
    return fallback;
}

static uint32_t topology_of(const draw_state *s, uint32_t in_begin)
{
    return s->topo_override & 1 ? separate_topology(s->topology, in_begin) : in_begin;
}

static void offer(vgt_sem_tracker *t, const vgt_method *m, vgt_ev_draw *d, int subsequent)
{
    if (t->draw_pending && subsequent && same_shape(&t->pending.u.draw, d)) {
        t->pending.u.draw.instance_count++;
        t->pending.pos = m->pos;
        return;
    }
    sem_flush_draw(t);
    sem_event_init(t, &t->pending, VGT_EV_DRAW, m);
    d->instance_count = 1;
    t->pending.u.draw = *d;
    t->draw_pending = 1;
    if (t->cfg.on_draw_issued) t->cfg.on_draw_issued(t->cfg.ctx, &t->pending);
}

static void base(const draw_state *s, vgt_ev_draw *d, unsigned kind, uint32_t topology, uint32_t first, uint32_t count)
{
    *d = (vgt_ev_draw){ 0 };
    d->kind = (uint8_t)kind;
    d->topology = topology;
    d->first = first;
    d->count = count;
    d->base_vertex = s->base_vertex;
    d->base_instance = s->base_instance;
    if (kind == VGT_DRAW_INDEXED || kind == VGT_DRAW_INLINE_INDEX) {
        static const uint8_t sizes[4] = { 1, 2, 4, 0 };
        d->index_size = kind == VGT_DRAW_INDEXED ? sizes[s->ib_e & 3] : 0;
        d->index_buffer_va = kind == VGT_DRAW_INDEXED ? ((uint64_t)(s->ib_a & 0x1ffffffu) << 32) | s->ib_b : 0;
    }
}

/* The *_BEGIN_END_INSTANCE_* packed form: START 15:0, COUNT 27:16, TOPOLOGY 31:28. */
static void packed(vgt_sem_tracker *t, draw_state *s, const vgt_method *m, unsigned kind, unsigned index_size,
                   int subsequent)
{
    vgt_ev_draw d;
    base(s, &d, kind, topology_of(s, m->data >> 28), m->data & 0xffff, (m->data >> 16) & 0xfff);
    if (index_size) d.index_size = (uint8_t)index_size;
    offer(t, m, &d, subsequent);
}

/* DRAW_{VERTEX_ARRAY,INDEX_BUFFER}_BEGIN_END_B: one draw shaped by SET_DRAW_CONTROL_A/B. */
static void begin_end(vgt_sem_tracker *t, const draw_state *s, const vgt_method *m, unsigned kind, uint32_t first)
{
    vgt_ev_draw d;
    base(s, &d, kind, topology_of(s, s->draw_ctl_a & 0xf), first, m->data);
    uint32_t instances = (s->draw_ctl_a >> 9) & 1 ? s->draw_ctl_b : 1;
    int subsequent = ((s->draw_ctl_a >> 5) & 3) == 1;
    offer(t, m, &d, subsequent);
    if (instances > 1) {
        t->pending.u.draw.instance_count += instances - 1;
    }
}

static void begin(draw_state *s, uint32_t data)
{
    unsigned id = (data >> 26) & 3;
    s->in_begin = 1;
    s->begin = data;
    s->inline_count = 0;
    s->inline_seen = 0;
    if (id == 0) s->instance = 0;
    else if (id == 1) s->instance++;
}

void sem_draw(vgt_sem_tracker *t, sub_state *sub, unsigned role, const vgt_method *m)
{
    draw_state *s = &sub->draw;
    uint32_t topo = topology_of(s, s->begin & 0xffff);
    vgt_ev_draw d;
    switch (role) {
    case R_BEGIN: begin(s, m->data); break;
    case R_END:
        if (s->in_begin && s->inline_seen) {
            base(s, &d, VGT_DRAW_INLINE_INDEX, topo, 0, s->inline_count);
            offer(t, m, &d, s->instance > 0);
        }
        s->in_begin = 0;
        break;
    case R_VA_START: s->va_start = m->data; break;
    case R_DRAW_VA: base(s, &d, VGT_DRAW_ARRAYS, topo, s->va_start, m->data); offer(t, m, &d, s->instance > 0); break;
    case R_DRAW_IB: base(s, &d, VGT_DRAW_INDEXED, topo, s->ib_first, m->data); offer(t, m, &d, s->instance > 0); break;
    case R_VA_BE_A: s->va_be_a = m->data; break;
    case R_VA_BE_B: begin_end(t, s, m, VGT_DRAW_ARRAYS, s->va_be_a); break;
    case R_IB_BE_A: s->ib_be_a = m->data; break;
    case R_IB_BE_B: begin_end(t, s, m, VGT_DRAW_INDEXED, s->ib_be_a); break;
    case R_DRAW_CTL_A: s->draw_ctl_a = m->data; break;
    case R_DRAW_CTL_B: s->draw_ctl_b = m->data; break;
    case R_TOPO_CONTROL: s->topo_override = m->data; break;
    case R_TOPOLOGY: s->topology = m->data; break;
    case R_VA_INST_FIRST: packed(t, s, m, VGT_DRAW_ARRAYS, 0, 0); break;
    case R_VA_INST_SUBSEQ: packed(t, s, m, VGT_DRAW_ARRAYS, 0, 1); break;
    case R_IB_INST_FIRST: case R_IB_INST_SUBSEQ: {
        /* the array index of the method picks 32, 16 or 8-bit indices */
        unsigned idx = ((m->mthd - (role == R_IB_INST_FIRST ? 0x17e4u : 0x17f0u)) >> 2) & 3;
        static const unsigned sizes[3] = { 4, 2, 1 };
        packed(t, s, m, VGT_DRAW_INDEXED, idx < 3 ? sizes[idx] : 4, role == R_IB_INST_SUBSEQ);
        break;
    }
    case R_IB_A: s->ib_a = m->data; break;
    case R_IB_B: s->ib_b = m->data; break;
    case R_IB_E: s->ib_e = m->data; break;
    case R_IB_F: s->ib_first = m->data; break;
    case R_INLINE_INDEX: s->inline_count += 1; s->inline_seen = 1; break;
    case R_INLINE_INDEX2X16: s->inline_count += 2; s->inline_seen = 1; break;
    case R_INLINE_INDEX4X8: s->inline_count += 4; s->inline_seen = 1; break;
    case R_DRAW_ZERO_INDEX: base(s, &d, VGT_DRAW_ZERO_INDEX, topo, 0, m->data); offer(t, m, &d, s->instance > 0); break;
    case R_DRAW_AUTO: base(s, &d, VGT_DRAW_AUTO, topo, 0, m->data); offer(t, m, &d, s->instance > 0); break;
    case R_BASE_VERTEX: s->base_vertex = m->data; break;
    case R_BASE_INSTANCE: s->base_instance = m->data; break;
    }
}

/* SET_PIPELINE_SHADER(j) 0x2000+64j (ENABLE 0, TYPE 7:4), SET_PIPELINE_REGISTER_COUNT(j) 0x200c+64j,
 * SET_PIPELINE_PROGRAM_ADDRESS_A(j) 0x2014+64j (upper), _B(j) 0x2018+64j (lower). The bind is reported
 * when the lower half is written (drivers write A then B). */
void sem_program(vgt_sem_tracker *t, sub_state *sub, unsigned role, unsigned index, const vgt_method *m)
{
    if (index >= 6) return;
    pipe_state *p = &sub->draw.pipe[index];
    switch (role) {
    case R_PIPE_SHADER: p->shader = m->data; break;
    case R_PIPE_REGCOUNT: p->regcount = m->data; break;
    case R_PIPE_ADDR_A: p->addr_a = m->data; break;
    case R_PIPE_ADDR_B: {
        p->addr_b = m->data;
        vgt_event ev;
        sem_event_init(t, &ev, VGT_EV_PROGRAM_BIND, m);
        ev.u.program.stage = index;
        ev.u.program.type = (p->shader >> 4) & 0xf;
        ev.u.program.enabled = p->shader & 1;
        ev.u.program.register_count = p->regcount;
        ev.u.program.program_va = ((uint64_t)(p->addr_a & 0x1ffffffu) << 32) | p->addr_b;
        sem_emit(t, &ev);
        break;
    }
    }
}
