/* volatile.c: bytes the GPU writes that differ from run to run (timestamps, report counters), found in the
 * decoded stream. A backend without a write log compares observed memory whole (--check): these bytes are
 * left out (check.c). Subscriber sub_volatile of the channel's stream (stream.c): the semantic tracker's
 * semaphore and report events, and the NOTIFY methods of the 3D and compute classes. */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/nv_facts.h"

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
static void on_event(stream_submit *s, const vgt_event *ev)
{
    if (ev->kind != VGT_EV_SEM_RELEASE && ev->kind != VGT_EV_REPORT) return;
    const vgt_ev_sem *m = &ev->u.sem;
    if (m->op == VGT_SEM_OP_REPORT_ONLY) add_volatile(s->rp, m->va, 16);
    else if (m->flags & VGT_SEM_FLAG_TIMESTAMP) add_volatile(s->rp, m->va + 8, 8);
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
_Static_assert(NVCBC0_SET_NOTIFY_A == NOTIFY_A && NVCBC0_SET_NOTIFY_B == NOTIFY_B && NVCBC0_NOTIFY == NOTIFY_GO,
               "the 3D and compute classes place NOTIFY alike");

static void on_method(stream_submit *s, const vgt_method *m)
{
    engine_channel *c = s->c;
    if (m->masked) return;
    vgt_nv_family f = vgt_nv_class_family(m->cls);
    uint32_t k = f == VGT_NV_FAM_3D ? 0 : f == VGT_NV_FAM_COMPUTE ? 1 : 2;
    if (k == 2) return;
    if (m->mthd == NOTIFY_A) c->rt.notify[k][0] = m->data;
    else if (m->mthd == NOTIFY_B) c->rt.notify[k][1] = m->data;
    else if (m->mthd == NOTIFY_GO) {
        uint64_t va = (uint64_t)VGT_NV_GET(c->rt.notify[k][0], NVCB97_SET_NOTIFY_A_ADDRESS_UPPER) << 32 | c->rt.notify[k][1];
        if (va) add_volatile(s->rp, va, 8);
    }
}

/* A run: only a run of a notify method does anything (each write, as on_method). */
static void on_run(stream_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    if (m->masked || (m->mthd != NOTIFY_A && m->mthd != NOTIFY_B && m->mthd != NOTIFY_GO)) return;
    for (uint32_t i = 0; i < count; i++) {
        vgt_method one = vgt_pb_run_method(m, data, i);
        on_method(s, &one);
    }
}

static unsigned begin(stream_submit *s)
{
    (void)s;
    return STREAM_METHODS;
}

/* Volatile ranges matter only to checks without a write log. */
static int active(const vgt_replay *rp)
{
    return rp->opt.check && !(rp->ops->caps() & VGT_CAP_WRITE_LOG);
}

const stream_sub sub_volatile = {.name = "volatile", .active = active, .begin = begin, .method = on_method,
                                 .run = on_run, .event = on_event};
