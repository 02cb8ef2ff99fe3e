/* live_count.c: subscriber `count` of the channels' decoded streams (stream.c): per channel, the launches
 * and draws the semantic tracker finds and the MME macro calls of the push buffer, for the live counters
 * `vgt record --replay` and `vgt replay --live` show (options.channel_counters). The engine counts the
 * submissions and faults itself (engine.c). What macros emit is not seen here (the stream carries only
 * the call), as in every subscriber. */
#include <stdlib.h>

#include "engine.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/nv_facts.h"

#define MACRO_FIRST NVCB97_CALL_MME_MACRO(0)
#define MACRO_STRIDE (NVCB97_CALL_MME_MACRO(1) - NVCB97_CALL_MME_MACRO(0))
#define MACRO_END (MACRO_FIRST + NVCB97_CALL_MME_MACRO__SIZE * MACRO_STRIDE)
_Static_assert(NVCBC0_CALL_MME_MACRO(0) == NVCB97_CALL_MME_MACRO(0) &&
               NVCBC0_CALL_MME_MACRO(1) == NVCB97_CALL_MME_MACRO(1), "3D and compute share the macro call methods");

static int active(const vgt_replay *rp) { return rp->opt.channel_counters; }

static unsigned begin(stream_submit *s)
{
    (void)s;
    return STREAM_METHODS;
}

/* A write of m calls a macro: CALL_MME_MACRO(i) of a 3D or compute class. */
static int is_macro_call(const vgt_method *m)
{
    if (m->masked || m->mthd < MACRO_FIRST || m->mthd >= MACRO_END || (m->mthd - MACRO_FIRST) % MACRO_STRIDE) return 0;
    int fam = vgt_nv_class_family(m->cls);
    return fam == VGT_NV_FAM_3D || fam == VGT_NV_FAM_COMPUTE;
}

static void method(stream_submit *s, const vgt_method *m)
{
    if (is_macro_call(m)) s->c->cnt.macro_calls++;
}

/* A run of one method: each write of a run of macro calls is a call; any other run, nothing. */
static void run(stream_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    (void)data;
    if (is_macro_call(m)) s->c->cnt.macro_calls += count;
}

/* The engine's trackers read no memory (stream.c): a QMD launched by address from memory the trace
 * wrote is not known to them, and a launch whose QMD is unknown arrives as an empty dispatch. It is a
 * launch all the same (the GPU ran what the QMD says); only a QMD known to run no threads is empty. */
static void event(stream_submit *s, const vgt_event *ev)
{
    if (ev->kind == VGT_EV_LAUNCH || (ev->kind == VGT_EV_EMPTY_DISPATCH && !ev->u.launch.qmd_known)) s->c->cnt.launches++;
    else if (ev->kind == VGT_EV_DRAW) s->c->cnt.draws++;
}

const stream_sub sub_count = {.name = "count", .active = active, .begin = begin, .method = method, .run = run,
                              .event = event};
