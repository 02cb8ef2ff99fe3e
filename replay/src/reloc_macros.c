/* reloc_macros.c: address operands that MME macros build at run time (planning, reloc_internal.h). The
 * push buffer carries only CALL_MME_MACRO and its parameters, so a relocation cannot rewrite what a macro
 * emits: each address a macro call assembles (an address method pair of vgt/addr_operands.h, or a
 * one-method address, that a macro emits: the high half as macros last emitted it, 0 when none did) that
 * points into a mapping that moves becomes a NOT_REWRITABLE note, which the replay reports as a warning;
 * so does every address field of an inline QMD a macro emits (LOAD_INLINE_QMD_DATA, as NVIDIA's Vulkan
 * driver dispatches). The calls come from analyze's MME trace (mme_trace.h), which runs every macro on
 * the MME simulator; the planner's operand walk (reloc_operands.c) feeds it the planned records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reloc_internal.h"
#include "vgt/addr_operands.h"
#include "vgt/mme_trace.h"
#include "vgt/nv/clc7c0.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/grow.h"
#include "vgt/nv_facts.h"

#define MAX_MACRO_CHANNELS 256u

typedef struct macro_channel {
    uint32_t client, channel;
    uint32_t half[VGT_ADDR_PAIR_SLOTS][2];   /* values macros emitted, per pair slot: [0] high, [1] low */
    uint8_t set[VGT_ADDR_PAIR_SLOTS][2];
    uint8_t qmd[384];              /* the inline QMD macros emit (LOAD_INLINE_QMD_DATA(i)) */
} macro_channel;

struct reloc_macros {
    vgt_reloc_plan *p;
    const vgt_reloc_range *moving;
    uint32_t nmoving;
    macro_channel *chans;          /* grown as channels are met, up to MAX_MACRO_CHANNELS */
    uint32_t nchans, cap;
    vgt_mme_trace *trace;
};
typedef struct reloc_macros macro_scan;

static macro_channel *channel_of(macro_scan *s, uint32_t client, uint32_t channel)
{
    for (uint32_t i = 0; i < s->nchans; i++)
        if (s->chans[i].client == client && s->chans[i].channel == channel) return &s->chans[i];
    /* doubled from 4, so never past MAX_MACRO_CHANNELS (a power of two) */
    if (s->nchans == MAX_MACRO_CHANNELS || vgt_grow(&s->chans, &s->cap, s->nchans + 1ull, 4)) return NULL;
    macro_channel *c = &s->chans[s->nchans++];
    memset(c, 0, sizeof *c);
    c->client = client, c->channel = channel;
    return c;
}

static const vgt_reloc_range *moving_range(const macro_scan *s, uint64_t va)
{
    for (uint32_t i = 0; i < s->nmoving; i++)
        if (va >= s->moving[i].va && va - s->moving[i].va < s->moving[i].len) return &s->moving[i];
    return NULL;
}

static void add_note(vgt_reloc_plan *p, const vgt_mme_trace_call *call, const char *what, uint64_t va,
                     const vgt_reloc_range *r)
{
    vgt_reloc_note note = {.kind = VGT_RELOC_NOT_REWRITABLE, .seq = call->seq, .va = va}, *n = &note;
    snprintf(n->msg, sizeof n->msg,
             "submission %llu (seq %llu) entry %u dword %u: MME macro %u (call %llu, class 0x%04x) builds %s 0x%llx, which "
             "points into GPU_MAP seq %llu (0x%llx+0x%llx) that moves: a macro's operands cannot be rewritten",
             (unsigned long long)call->submission, (unsigned long long)call->seq, call->pos.entry, call->pos.dword,
             call->index, (unsigned long long)call->id, call->cls, what, (unsigned long long)va,
             (unsigned long long)r->seq, (unsigned long long)r->va, (unsigned long long)r->len);
    reloc_note_add(p, n);
}

/* The planner's translation: a moving VA goes "elsewhere" (only whether it moves matters here). */
static uint64_t moves(const void *ctx, uint64_t va) { return moving_range(ctx, va) ? va ^ 1 : va; }

#define M_INLINE_QMD_DATA NVCBC0_LOAD_INLINE_QMD_DATA(0)   /* LOAD_INLINE_QMD_DATA(i), compute classes */

static void inline_qmd(macro_scan *s, macro_channel *c, const vgt_mme_trace_call *call, uint32_t mthd, uint32_t v)
{
    uint32_t i = (mthd - M_INLINE_QMD_DATA) / 4;
    if (vgt_nv_class_family(call->cls) != VGT_NV_FAM_COMPUTE || mthd < M_INLINE_QMD_DATA || i >= sizeof c->qmd / 4) return;
    for (int b = 0; b < 4; b++) c->qmd[4 * i + b] = (uint8_t)(v >> (8 * b));
    if (i != NVC7C0_LOAD_INLINE_QMD_DATA__SIZE - 1 && i != NVCBC0_LOAD_INLINE_QMD_DATA__SIZE - 1) return;
    uint8_t q[sizeof c->qmd];
    memcpy(q, c->qmd, sizeof q);
    vgt_qmd_fix fix[VGT_QMD_MAX_FIXES];
    uint32_t n = vgt_qmd_relocate(moves, s, q, 4 * (i + 1), fix, VGT_QMD_MAX_FIXES);
    char what[96];
    for (uint32_t k = 0; k < n; k++) {
        snprintf(what, sizeof what, "an inline QMD whose %s %u is", fix[k].what, fix[k].element);
        add_note(s->p, call, what, fix[k].from, moving_range(s, fix[k].from));
    }
}

static int on_call(void *user, const vgt_mme_trace_call *call)
{
    macro_scan *s = user;
    macro_channel *c = channel_of(s, call->client, call->channel);
    if (!c) return 0;
    for (uint32_t i = 0; i < call->nemits; i++) {
        const vgt_addr_pair *pair;
        uint32_t slot;
        inline_qmd(s, c, call, call->emits[i].method, call->emits[i].value);
        int half = vgt_addr_pair_of(call->cls, call->emits[i].method, &pair, &slot);
        if (half < 0 || slot >= VGT_ADDR_PAIR_SLOTS) continue;
        c->half[slot][half] = call->emits[i].value;
        c->set[slot][half] = 1;
        if (half != 1) continue;   /* judged when the low half (or the one method) is emitted */
        uint64_t va = vgt_addr_pair_address(pair, c->set[slot][0] ? c->half[slot][0] : 0, c->half[slot][1]);
        const vgt_reloc_range *r = va ? moving_range(s, va) : NULL;
        if (r) add_note(s->p, call, pair->name, va, r);
    }
    return 0;
}

vgt_status reloc_macros_new(reloc_macros **out, vgt_reloc_plan *p, const vgt_reloc_range *moving, uint32_t n,
                            vgt_error *err)
{
    *out = NULL;
    macro_scan *s = calloc(1, sizeof *s);
    if (!s) {
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "reloc: out of memory for macro state");
    }
    s->p = p, s->moving = moving, s->nmoving = n;
    vgt_mme_trace_config cfg = {.on_call = on_call, .user = s};
    vgt_status rc = vgt_mme_trace_new(&cfg, &s->trace, err);
    if (rc != VGT_OK) {
        reloc_macros_free(s);
        return rc;
    }
    *out = s;
    return VGT_OK;
}

vgt_mme_trace *reloc_macros_trace(reloc_macros *m) { return m->trace; }

void reloc_macros_free(reloc_macros *m)
{
    if (!m) return;
    if (m->trace) vgt_mme_trace_free(m->trace);
    free(m->chans);
    free(m);
}
