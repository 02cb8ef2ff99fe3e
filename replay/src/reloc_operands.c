/* reloc_operands.c: which operands a relocation would have to rewrite (planning, reloc_internal.h). When a
 * mapping cannot go to its captured VA (reloc.c: it overlaps a mapping of another VA space, is not page
 * aligned, or --relocate moves it), every address-bearing operand of the trace's submissions that points
 * into it must be rewritten when the mapping moves. They are found through the semantic tracker
 * (analyze's events.h, over the class tables) and analyze's list of the addresses each event names
 * (vgt/addr_operands.h): semaphore addresses (host, report, copy), copy sources and destinations, I2M
 * destinations, QMD addresses and the QMD's program, constant-buffer, release and dependent-QMD
 * addresses, shader program addresses, index buffers; and render targets from SET_COLOR_TARGET_A/B(j)
 * (clcb97.h). Each becomes a note naming the submission, the method position and the operand.
 * Operands that MME macros build at run time are found by reloc_macros.c (NOT_REWRITABLE notes: the
 * replay warns). One walk (analyze's walker: one decoder per channel, fed the planned records) feeds
 * both; it runs only when some mapping moves. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/addr_operands.h"
#include "vgt/events.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv_facts.h"
#include "vgt/replay.h"
#include "vgt/walk.h"
#include "reloc_internal.h"

typedef struct op_channel {
    vgt_sem_tracker *sem;
    uint32_t ct_hi[NVCB97_SET_COLOR_TARGET_A__SIZE];   /* SET_COLOR_TARGET_A(j) */
} op_channel;

struct reloc_operands {
    vgt_reloc_plan *p;
    const vgt_reloc_range *conflicts;   /* the plan's moving mappings */
    uint32_t nconflicts;
    uint64_t submit_index;
    vgt_walk_callbacks cb;
    vgt_walker *walk;
    reloc_macros *macros;
    vgt_status rc;               /* the first failure of a callback */
    vgt_error err;
};
typedef struct reloc_operands op_scan;

static void add_note(vgt_reloc_plan *p, int kind, uint64_t seq, uint64_t va, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void add_note(vgt_reloc_plan *p, int kind, uint64_t seq, uint64_t va, const char *fmt, ...)
{
    vgt_reloc_note n = {.kind = kind, .seq = seq, .va = va, .len = 0};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n.msg, sizeof n.msg, fmt, ap);
    va_end(ap);
    reloc_note_add(p, &n);
}

/* An operand in the push buffer: a note when it points into a conflicting mapping (the replay rewrites
 * it, reloc_patch.c). */
static void check(op_scan *s, const vgt_mpos *pos, const char *what, uint64_t va)
{
    if (!va) return;
    for (uint32_t i = 0; i < s->nconflicts; i++) {
        const vgt_reloc_range *c = &s->conflicts[i];
        if (va < c->va || va >= c->va + c->len) continue;
        add_note(s->p, VGT_RELOC_OPERAND, pos->seq, va,
                 "submission %llu (seq %llu) entry %u dword %u: %s 0x%llx points into GPU_MAP seq %llu "
                 "(0x%llx+0x%llx) that moves; rewritten with the mapping's new VA",
                 (unsigned long long)s->submit_index, (unsigned long long)pos->seq, pos->entry, pos->dword, what,
                 (unsigned long long)va, (unsigned long long)c->seq, (unsigned long long)c->va,
                 (unsigned long long)c->len);
        return;
    }
}

/* An address inside a QMD. The scan knows a QMD's bytes only from the stream (an I2M upload or an inline
 * QMD: no memory reader is configured), and there the replay rewrites its fields (reloc_patch.c); a QMD
 * in memory is warned about by the replay itself when it is launched. */
static void check_qmd_field(op_scan *s, const vgt_mpos *pos, const vgt_ev_launch *l, const char *what, uint64_t va)
{
    if (!va) return;
    for (uint32_t i = 0; i < s->nconflicts; i++) {
        const vgt_reloc_range *c = &s->conflicts[i];
        if (va < c->va || va >= c->va + c->len) continue;
        add_note(s->p, VGT_RELOC_OPERAND, pos->seq, va,
                 "submission %llu (seq %llu) entry %u dword %u: %s 0x%llx in the %s QMD at 0x%llx points into GPU_MAP "
                 "seq %llu (0x%llx+0x%llx) that moves; rewritten in the QMD's data dwords",
                 (unsigned long long)s->submit_index, (unsigned long long)pos->seq, pos->entry, pos->dword, what,
                 (unsigned long long)va, l->inline_qmd ? "inline" : "fetched", (unsigned long long)l->qmd_va,
                 (unsigned long long)c->seq, (unsigned long long)c->va, (unsigned long long)c->len);
        return;
    }
}

static void on_event(void *ctx, const vgt_event *ev)
{
    op_scan *s = ctx;
    vgt_addr_operand ops[VGT_ADDR_MAX_EVENT_OPERANDS];
    uint32_t n = vgt_event_addresses(ev, ops, VGT_ADDR_MAX_EVENT_OPERANDS);
    for (uint32_t i = 0; i < n; i++)
        if (ops[i].in_qmd) check_qmd_field(s, &ev->pos, &ev->u.launch, ops[i].what, ops[i].va);
        else check(s, &ev->pos, ops[i].what, ops[i].va);
}

static void on_channel(void *ctx, vgt_walk_channel *chan)
{
    op_scan *s = ctx;
    op_channel *c = chan->user;
    if (!c && !(c = chan->user = calloc(1, sizeof *c))) return;
    if (c->sem) vgt_sem_reset(c->sem);   /* re-allocated under the same handle */
    memset(c->ct_hi, 0, sizeof c->ct_hi);
    vgt_sem_config cfg = {.on_event = on_event, .ctx = s};
    vgt_error e;
    if (!c->sem && vgt_sem_new(&c->sem, &cfg, &e) != VGT_OK) c->sem = NULL;
}

static void on_channel_end(void *ctx, vgt_walk_channel *chan)
{
    (void)ctx;
    op_channel *c = chan->user;
    if (c && c->sem) vgt_sem_free(c->sem);
    free(c);
    chan->user = NULL;
}

static int failed(op_scan *s, vgt_status rc)
{
    if (rc == VGT_OK || s->rc != VGT_OK) return s->rc != VGT_OK;
    s->rc = rc;
    return 1;
}

static int on_method(void *ctx, const vgt_walk_submit *ws, const vgt_method *m)
{
    op_scan *s = ctx;
    op_channel *c = ws->chan->user;
    vgt_error e;
    if (c && c->sem && vgt_sem_method(c->sem, m, &e) != VGT_OK) {
        vgt_sem_free(c->sem);
        c->sem = NULL;
    }
    /* render targets: SET_COLOR_TARGET_A(j) (the high bits), SET_COLOR_TARGET_B(j) (bits 31:0): the facts'
     * address operand */
    const vgt_nv_addr_method *op;
    uint32_t j;
    int half = c ? vgt_nv_addr_method_of(m->cls, m->mthd, &op, &j) : -1;
    if (half >= 0 && op->role == VGT_NV_ADDR_RENDER_TARGET && j < NVCB97_SET_COLOR_TARGET_A__SIZE) {
        if (half == 0) c->ct_hi[j] = m->data;
        else check(s, &m->pos, "render target address", vgt_nv_addr_method_value(op, c->ct_hi[j], m->data));
    }
    return failed(s, vgt_mme_trace_method(reloc_macros_trace(s->macros), ws, m, &s->err));
}

static int on_state_method(void *ctx, const vgt_walk_submit *ws, const vgt_method *m)
{
    op_scan *s = ctx;   /* a state preamble (CHANNEL_METHODS): the MME program of a cut-out channel */
    return failed(s, vgt_mme_trace_method(reloc_macros_trace(s->macros), ws, m, &s->err));
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *ws)
{
    ((op_scan *)ctx)->submit_index = ws->index;
    return 0;
}

static int on_submit_end(void *ctx, const vgt_walk_submit *ws)
{
    op_scan *s = ctx;
    op_channel *c = ws->chan->user;
    if (c && c->sem) vgt_sem_flush(c->sem);
    return failed(s, vgt_mme_trace_submit_end(reloc_macros_trace(s->macros), ws, &s->err));
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    (void)rec;
    vgt_mme_trace_model(reloc_macros_trace(((op_scan *)ctx)->macros), model);   /* MME DMA reads */
    return 0;
}

vgt_status reloc_operands_begin(reloc_operands **out, vgt_reloc_plan *p, uint64_t model_memory_limit, vgt_error *err)
{
    *out = NULL;
    op_scan *s = calloc(1, sizeof *s);
    if (!s) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "reloc: out of memory for the operand walk");
    s->p = p, s->conflicts = p->moving, s->nconflicts = p->nmoving;
    s->cb = (vgt_walk_callbacks){.on_record = on_record, .on_channel = on_channel, .on_submit_begin = on_submit_begin,
                                 .on_submit_end = on_submit_end, .on_method = on_method,
                                 .on_channel_end = on_channel_end, .on_state_method = on_state_method, .ctx = s};
    vgt_walk_options wo = vgt_walk_defaults();
    wo.deliver_unselected = 1;
    wo.model_memory_limit = model_memory_limit;
    vgt_status rc = reloc_macros_new(&s->macros, p, p->moving, p->nmoving, err);
    if (rc == VGT_OK) rc = vgt_walker_new(&s->walk, &wo, &s->cb, err);
    if (rc != VGT_OK) {
        reloc_macros_free(s->macros);
        free(s);
        return rc;
    }
    *out = s;
    return VGT_OK;
}

vgt_status reloc_operands_record(reloc_operands *s, const vgt_record *rec, vgt_error *err)
{
    vgt_status rc = vgt_walker_record(s->walk, rec, err);
    if (s->rc != VGT_OK && s->rc != VGT_E_EOF) {
        if (err) *err = s->err;
        return s->rc;
    }
    return rc == VGT_E_EOF ? VGT_OK : rc;
}

vgt_status reloc_operands_end(reloc_operands *s, vgt_status so_far, vgt_error *err)
{
    vgt_status rc = so_far;
    vgt_walker_free(s->walk, NULL);
    if (rc == VGT_OK) {
        rc = vgt_mme_trace_finish(reloc_macros_trace(s->macros), err);   /* calls still collecting parameters */
        if (rc == VGT_E_EOF) rc = VGT_OK;
    }
    reloc_macros_free(s->macros);
    free(s);
    return rc;
}
