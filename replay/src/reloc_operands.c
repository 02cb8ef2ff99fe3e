/* reloc_operands.c: which operands a relocation would have to rewrite. When a mapping cannot go to its
 * captured VA (reloc.c: it overlaps a mapping of another VA space, or is not page aligned), every
 * address-bearing operand of the trace's submissions that points into it must be rewritten if the
 * mapping moves. They are found through the semantic tracker (analyze's events.h, over the class
 * tables): semaphore addresses (host, report, copy), copy sources and destinations, I2M destinations,
 * QMD addresses and the QMD's program, constant-buffer, release and dependent-QMD addresses, shader
 * program addresses, index buffers; and render targets from SET_COLOR_TARGET_A/B(j) (clcb97.h). Each
 * becomes a note naming the submission, the method position and the operand. Operands that MME
 * macros build at run time are found by reloc_macros.c (NOT_REWRITABLE notes: the replay warns). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/events.h"
#include "vgt/nv_facts.h"
#include "vgt/pushbuf.h"
#include "vgt/replay.h"
#include "reloc_internal.h"
#include "submit_segs.h"

#define MAX_CHANNELS 256u

typedef struct op_channel {
    uint32_t client, handle, cls;
    vgt_pb_state pb;
    vgt_sem_tracker *sem;
    uint32_t ct_hi[8];           /* SET_COLOR_TARGET_A(j) */
} op_channel;

typedef struct op_scan {
    vgt_reloc_plan *p;
    const vgt_reloc_range *conflicts;   /* the plan's moving mappings */
    uint32_t nconflicts;
    op_channel *chans;
    uint32_t nchans;
    uint64_t submit_index;
    replay_segs segs;
} op_scan;

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

static void check_launch(op_scan *s, const vgt_event *ev)
{
    const vgt_ev_launch *l = &ev->u.launch;
    check(s, &ev->pos, "QMD address", l->qmd_va);
    if (!l->decoded) return;
    char what[64];
    check_qmd_field(s, &ev->pos, l, "program address", l->qmd.program_va);
    for (uint32_t i = 0; i < VGT_QMD_MAX_CB; i++)
        if (l->qmd.cb[i].valid) {
            snprintf(what, sizeof what, "constant buffer %u", i);
            check_qmd_field(s, &ev->pos, l, what, l->qmd.cb[i].va);
        }
    for (uint32_t i = 0; i < l->qmd.release_count && i < VGT_QMD_MAX_RELEASE; i++)
        if (l->qmd.release[i].enabled) {
            snprintf(what, sizeof what, "release %u address", i);
            check_qmd_field(s, &ev->pos, l, what, l->qmd.release[i].va);
        }
    for (uint32_t i = 0; i < VGT_QMD_MAX_DEPENDENT; i++)
        if (l->qmd.dependent[i].enabled) check_qmd_field(s, &ev->pos, l, "dependent-QMD address", l->qmd.dependent[i].va);
}

static void on_event(void *ctx, const vgt_event *ev)
{
    op_scan *s = ctx;
    switch (ev->kind) {
    case VGT_EV_SEM_RELEASE:
    case VGT_EV_SEM_ACQUIRE:
    case VGT_EV_REPORT: check(s, &ev->pos, "semaphore address", ev->u.sem.va); break;
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA:
        if (!ev->u.copy.transfer_type) break;   /* semaphore only: its offsets are stale, not operands */
        check(s, &ev->pos, "copy source", ev->u.copy.memset ? 0 : ev->u.copy.src_va);
        check(s, &ev->pos, "copy destination", ev->u.copy.dst_va);
        break;
    case VGT_EV_UPLOAD: check(s, &ev->pos, "I2M destination", ev->u.upload.dst_va); break;
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH: check_launch(s, ev); break;   /* dependents too */
    case VGT_EV_PROGRAM_BIND: check(s, &ev->pos, "shader program address", ev->u.program.program_va); break;
    case VGT_EV_DRAW: check(s, &ev->pos, "index buffer address", ev->u.draw.index_buffer_va); break;
    default: break;
    }
}

typedef struct method_ctx {
    op_scan *s;
    op_channel *c;
} method_ctx;

static int on_method(void *ctx, const vgt_method *m)
{
    method_ctx *mc = ctx;
    vgt_error e;
    if (mc->c->sem && vgt_sem_method(mc->c->sem, m, &e) != VGT_OK) {
        vgt_sem_free(mc->c->sem);
        mc->c->sem = NULL;
    }
    /* render targets: SET_COLOR_TARGET_A(j) (the high bits), SET_COLOR_TARGET_B(j) (bits 31:0): the facts'
     * address operand */
    const vgt_nv_addr_method *op;
    uint32_t j;
    int half = vgt_nv_addr_method_of(m->cls, m->mthd, &op, &j);
    if (half >= 0 && op->role == VGT_NV_ADDR_RENDER_TARGET) {
        if (half == 0) mc->c->ct_hi[j] = m->data;
        else check(mc->s, &m->pos, "render target address", vgt_nv_addr_method_value(op, mc->c->ct_hi[j], m->data));
    }
    return 0;
}

static op_channel *channel_of(op_scan *s, uint32_t client, uint32_t handle)
{
    for (uint32_t i = 0; i < s->nchans; i++)
        if (s->chans[i].client == client && s->chans[i].handle == handle) return &s->chans[i];
    return NULL;
}

static vgt_status on_channel(op_scan *s, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_channel c;
    VGT_TRY(vgt_decode_channel(rec, &c, err));
    if (c.status || channel_of(s, c.client, c.handle) || s->nchans == MAX_CHANNELS) return VGT_OK;
    op_channel *oc = &s->chans[s->nchans++];
    memset(oc, 0, sizeof *oc);
    oc->client = c.client, oc->handle = c.handle, oc->cls = c.cls;
    vgt_pb_state_init(&oc->pb, c.cls);
    vgt_sem_config cfg = {.on_event = on_event, .ctx = s};
    if (vgt_sem_new(&oc->sem, &cfg, err) != VGT_OK) oc->sem = NULL;
    return VGT_OK;
}

static vgt_status on_submit(op_scan *s, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_gpfifo_submit sub;
    VGT_TRY(replay_decode_submit(&s->segs, rec, &sub, "reloc", err));
    op_channel *c = channel_of(s, sub.client, sub.channel);
    if (c) {
        method_ctx mc = {s, c};
        vgt_pb_callbacks cb = {.method = on_method, .ctx = &mc};
        vgt_error e;
        vgt_pb_decode_submit(&c->pb, rec->seq, &sub, &cb, &e);   /* diagnostics are the decoder's business */
        if (c->sem) vgt_sem_flush(c->sem);
    }
    s->submit_index++;
    return VGT_OK;
}

vgt_status vgt_reloc_find_operands(const char *path, vgt_reloc_plan *p, vgt_error *err)
{
    op_scan s = {.p = p, .conflicts = p->moving, .nconflicts = p->nmoving};
    if (!s.nconflicts) return VGT_OK;
    if (!(s.chans = calloc(MAX_CHANNELS, sizeof *s.chans)))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "reloc: out of memory for channel state");
    vgt_reader *r;
    vgt_status rc = vgt_reader_open_path(&r, path, NULL, err);
    if (rc == VGT_OK) {
        vgt_record rec;
        while ((rc = vgt_reader_next(r, &rec, err)) == VGT_OK) {
            if (rec.type == VGT_REC_CHANNEL) rc = on_channel(&s, &rec, err);
            else if (rec.type == VGT_REC_GPFIFO_SUBMIT) rc = on_submit(&s, &rec, err);
            if (rc != VGT_OK) break;
        }
        if (rc == VGT_E_EOF) rc = VGT_OK;
        vgt_reader_close(r);
    }
    if (rc == VGT_OK) rc = reloc_find_macro_operands(path, p, s.conflicts, s.nconflicts, err);
    for (uint32_t i = 0; i < s.nchans; i++)
        if (s.chans[i].sem) vgt_sem_free(s.chans[i].sem);
    free(s.chans);
    free(s.segs.segs);
    return rc;
}
