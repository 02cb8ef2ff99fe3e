/* sem_clear.c: CLEAR_SURFACE and NOTIFY as events. Fields are the generated constants of the class tables
 * (vgt/nv/clcb97.h; the same in every 3D class, and NOTIFY in every compute class: tests/unit/test_facts.c).
 *
 * CLEAR_SURFACE: Z_ENABLE, STENCIL_ENABLE, R/G/B/A_ENABLE (bits 2..5: the color mask), MRT_SELECT,
 * RT_ARRAY_INDEX. MRT_SELECT names the n-th target of SET_CT_SELECT (TARGETn, 3 bits each from TARGET0),
 * whose address is SET_COLOR_TARGET_A(j) (upper) : SET_COLOR_TARGET_B(j) (lower) and format
 * SET_COLOR_TARGET_FORMAT(j). The NVIDIA drivers clear from macros (corpus/vk_triangle.vgt: macro 0x3b
 * emits CLEAR_SURFACE), so the event carries the macro origin like any other.
 * NOTIFY: TYPE (WRITE_ONLY, WRITE_THEN_AWAKEN) at SET_NOTIFY_A (ADDRESS_UPPER) : SET_NOTIFY_B. */
#include <string.h>

#include "sem_internal.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv_facts.h"

static uint64_t addr(uint32_t upper, uint32_t lower)
{
    return ((uint64_t)(upper & 0x1ffffffu) << 32) | lower;
}

void sem_clear(vgt_sem_tracker *t, sub_state *sub, unsigned role, unsigned index, const vgt_method *m)
{
    draw_state *s = &sub->draw;
    vgt_event ev;
    switch (role) {
    case R_CT_A: if (index < 8) s->ct_a[index] = m->data; break;
    case R_CT_B: if (index < 8) s->ct_b[index] = m->data; break;
    case R_CT_FORMAT: if (index < 8) s->ct_format[index] = m->data; break;
    case R_CT_WIDTH: if (index < 8) s->ct_width[index] = m->data; break;
    case R_CT_HEIGHT: if (index < 8) s->ct_height[index] = m->data; break;
    case R_CT_MEMORY: if (index < 8) s->ct_memory[index] = m->data; break;
    case R_CLEAR_VALUE: if (index < 4) s->clear_value[index] = m->data; break;
    case R_CT_SELECT: s->ct_select = m->data; break;
    case R_ZT_A: s->zt_a = m->data; break;
    case R_ZT_B: s->zt_b = m->data; break;
    case R_NOTIFY_A: s->notify_a = m->data; break;
    case R_NOTIFY_B: s->notify_b = m->data; break;
    case R_CLEAR: {
        sem_event_init(t, &ev, VGT_EV_CLEAR, m);
        vgt_ev_clear *c = &ev.u.clear;
        c->raw = m->data;
        c->depth = VGT_NV_GET(m->data, NVCB97_CLEAR_SURFACE_Z_ENABLE);
        c->stencil = VGT_NV_GET(m->data, NVCB97_CLEAR_SURFACE_STENCIL_ENABLE);
        /* R, G, B, A_ENABLE are consecutive bits: the mask has R in bit 0 */
        c->color_mask = (uint8_t)((m->data >> NVCB97_CLEAR_SURFACE_R_ENABLE_SHIFT) & 0xf);
        c->mrt_select = VGT_NV_GET(m->data, NVCB97_CLEAR_SURFACE_MRT_SELECT);
        c->rt_array_index = VGT_NV_GET(m->data, NVCB97_CLEAR_SURFACE_RT_ARRAY_INDEX);
        /* TARGETn of SET_CT_SELECT: as wide as TARGET0, one after another */
        c->target = c->mrt_select < NVCB97_SET_COLOR_TARGET_A__SIZE
                        ? VGT_NV_GET(s->ct_select >> (c->mrt_select * (NVCB97_SET_CT_SELECT_TARGET1_SHIFT -
                                                                       NVCB97_SET_CT_SELECT_TARGET0_SHIFT)),
                                     NVCB97_SET_CT_SELECT_TARGET0)
                        : c->mrt_select;
        if (c->target < 8) {
            c->target_va = addr(s->ct_a[c->target], s->ct_b[c->target]);
            c->target_format = s->ct_format[c->target];
            c->target_width = s->ct_width[c->target];
            c->target_height = s->ct_height[c->target];
            c->target_memory = s->ct_memory[c->target];
        }
        memcpy(c->clear_value, s->clear_value, sizeof c->clear_value);
        if (c->depth || c->stencil) c->zt_va = addr(s->zt_a, s->zt_b);
        sem_emit(t, &ev);
        break;
    }
    case R_NOTIFY:
        sem_event_init(t, &ev, VGT_EV_NOTIFY, m);
        ev.u.notify.va = addr(s->notify_a, s->notify_b);
        ev.u.notify.type = m->data;
        sem_emit(t, &ev);
        break;
    }
}
