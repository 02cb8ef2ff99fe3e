/* sem_clear.c: CLEAR_SURFACE and NOTIFY as events (NVIDIA open-gpu-doc classes/3d/clc597.h, clc797.h,
 * clcb97.h; classes/compute/clc5c0.h .. clcbc0.h for NOTIFY).
 *
 * CLEAR_SURFACE: Z_ENABLE 0, STENCIL_ENABLE 1, R/G/B/A_ENABLE 2..5, MRT_SELECT 9:6, RT_ARRAY_INDEX 25:10.
 * MRT_SELECT names the n-th target of SET_CT_SELECT (TARGETn at 6+3n:4+3n), whose address is
 * SET_COLOR_TARGET_A(j) (upper) : SET_COLOR_TARGET_B(j) (lower) and format SET_COLOR_TARGET_FORMAT(j).
 * The NVIDIA drivers clear from macros (corpus/vk_triangle.vgt: macro 0x3b emits CLEAR_SURFACE), so
 * the event carries the macro origin like any other.
 * NOTIFY: TYPE 31:0 (WRITE_ONLY 0, WRITE_THEN_AWAKEN 1) at SET_NOTIFY_A (ADDRESS_UPPER) : SET_NOTIFY_B. */
#include <string.h>

#include "sem_internal.h"

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
        c->depth = m->data & 1;
        c->stencil = (m->data >> 1) & 1;
        c->color_mask = (uint8_t)((m->data >> 2) & 0xf);
        c->mrt_select = (m->data >> 6) & 0xf;
        c->rt_array_index = (m->data >> 10) & 0xffff;
        c->target = c->mrt_select < 8 ? (s->ct_select >> (4 + 3 * c->mrt_select)) & 7 : c->mrt_select;
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
