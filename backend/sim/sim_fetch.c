/* sim_fetch.c: the sim's front end: GPFIFO entries fetched from sim memory, decoded by analyze's
 * push-buffer decoder (vgt_pb_decode, one decoder state per channel), methods handed to sim_exec.c in
 * stream order, and the queue of a channel blocked on an acquire.
 *
 * Channel states (a channel is RUNNING or BLOCKED; every transition names its function):
 *
 *              sim_submit() -> fetch_entry() -> method_cb()       sim_exec.c on_acquire(): not satisfied
 *   RUNNING -------------------------------------------> RUNNING ------------------------------------+
 *      ^        (methods execute as they are decoded)             (c->acq holds the acquire; every    |
 *      |                                                           later method is queued)            v
 *      |   run_channel(): sim_retry_acquire() passes, the queue drains                             BLOCKED
 *      +----------------------------------------------------------------------------------------------+
 *
 *   BLOCKED --sim_submit() on this channel--> BLOCKED (its methods are appended to the queue)
 *   BLOCKED --sim_run_blocked(), after any submit or host write--> run_channel() retries the acquire
 *   BLOCKED --sim_idle() with no channel able to progress--> reported "can never be satisfied in sim"
 *
 * A GPFIFO entry's LEVEL (main or subroutine) does not change how it is fetched: each entry names its
 * own push-buffer range. Control entries (length 0) are counted; SET_PB_SEGMENT_EXTENDED_BASE sets VA
 * bits 63:40 for the entries after it (NVIDIA open-gpu-doc classes/host/clc86f.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

void sim_event(vgt_backend *b, int kind, const vgt_method *m, const char *fmt, ...)
{
    if (kind == VGT_BEV_DIAG) b->ctr.diagnostics++;
    if (!b->ev_fn) return;
    char msg[VGT_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    vgt_backend_event ev = {.kind = kind, .channel = b->cur ? b->cur->id : 0, .seq = m ? m->pos.seq : b->seq,
                            .entry = m ? m->pos.entry : 0, .dword = m ? m->pos.dword : 0, .msg = msg};
    b->ev_fn(b->ev_ctx, &ev);
}

void sim_fault(vgt_backend *b, const vgt_method *m, const vgt_error *e)
{
    b->ctr.faults++;
    if (b->first_fault == VGT_OK) {
        b->first_fault = e->code ? e->code : VGT_E_FAULT;
        b->first_fault_err = *e;
        if (m)
            vgt_error_prefix(&b->first_fault_err, "submission seq %llu entry %u dword %u (method 0x%04x)",
                             (unsigned long long)m->pos.seq, m->pos.entry, m->pos.dword, m->mthd);
    }
    sim_event(b, VGT_BEV_FAULT, m, "%s", e->msg);
}

int sim_queue_insert(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed)
{
    if (c->qtail == c->qcap) {
        uint64_t max = b->cfg.max_queued_methods, nc = c->qcap ? c->qcap * 2 : 256;
        if (nc > max) nc = max;
        sim_qitem *nq = c->qtail < nc ? realloc(c->queue, nc * sizeof *nq) : NULL;
        if (!nq) {
            b->limit_hit = 1;
            sim_event(b, VGT_BEV_LIMIT, m, "channel 0x%x: more than %llu methods wait behind a blocked acquire; dropped",
                      c->handle, (unsigned long long)max);
            return -1;
        }
        c->queue = nq;
        c->qcap = nc;
    }
    if (c->qins < c->qhead || c->qins > c->qtail) c->qins = c->qtail;
    memmove(c->queue + c->qins + 1, c->queue + c->qins, (c->qtail - c->qins) * sizeof *c->queue);
    c->queue[c->qins] = (sim_qitem){*m, (uint8_t)fed, (uint8_t)b->state_only};
    c->qins++;
    c->qtail++;
    return 0;
}

/* RUNNING: execute now; BLOCKED: append behind the acquire. */
static int method_cb(void *ctx, const vgt_method *m)
{
    vgt_backend *b = ctx;
    sim_channel *c = b->cur;
    if (++b->methods_this_submit > b->cfg.max_methods_per_submit) {
        b->limit_hit = 1;
        return 1;
    }
    c->qins = c->qtail;
    if (sim_blocked(c)) sim_queue_insert(b, c, m, 0);
    else sim_exec_method(b, c, m, 0);
    b->cur = c;
    return 0;
}

/* A non-increasing run: inline data of a running channel at once (sim_exec_inline_run), anything else
 * dword by dword through method_cb, exactly as without the bulk path. */
static int run_cb(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    vgt_backend *b = ctx;
    sim_channel *c = b->cur;
    if (!sim_blocked(c) && b->methods_this_submit + count <= b->cfg.max_methods_per_submit) {
        c->qins = c->qtail;
        if (sim_exec_inline_run(b, c, m, data, count)) {
            b->methods_this_submit += count;
            b->cur = c;
            return 0;
        }
    }
    for (uint32_t i = 0; i < count; i++) {
        vgt_method one = vgt_pb_run_method(m, data, i);
        if (method_cb(ctx, &one)) return 1;
    }
    return 0;
}

static void diag_cb(void *ctx, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    vgt_backend *b = ctx;
    vgt_method m = {.pos = *pos};
    if (kind == VGT_DIAG_RUN_ACROSS_ENTRIES) return;   /* informational */
    sim_event(b, VGT_BEV_DIAG, &m, "%s", msg);
}

static void fetch_entry(vgt_backend *b, sim_channel *c, uint64_t raw, uint32_t index)
{
    vgt_gp_entry e;
    vgt_gp_entry_decode(raw, &e);
    b->ctr.entries++;
    vgt_method at = {.pos = {b->seq, index, 0}};
    if (e.is_control) {
        b->ctr.control_entries++;
        if (e.opcode == 4) c->ext_base = e.operand;   /* SET_PB_SEGMENT_EXTENDED_BASE */
        return;
    }
    uint64_t va = e.va + (c->ext_base << 40);
    uint64_t len = (uint64_t)e.length * 4;
    if (len > VGT_BACKEND_MAX_ENTRY_BYTES) {
        sim_event(b, VGT_BEV_LIMIT, &at, "GPFIFO entry %u: %llu bytes is over the limit of %u", index,
                  (unsigned long long)len, VGT_BACKEND_MAX_ENTRY_BYTES);
        return;
    }
    if (len > b->fetch_cap) {
        uint8_t *nb = realloc(b->fetch_buf, len);
        if (!nb) {
            sim_event(b, VGT_BEV_LIMIT, &at, "GPFIFO entry %u: no memory for %llu bytes", index, (unsigned long long)len);
            return;
        }
        b->fetch_buf = nb;
        b->fetch_cap = (uint32_t)len;
    }
    vgt_error err;
    if (sim_mem_read(sim_vas_mem(b, c->vas), va, b->fetch_buf, len, "GPFIFO fetch", &err) != VGT_OK) {
        vgt_error_prefix(&err, "GPFIFO entry %u (push buffer at VA 0x%llx, %u dwords)", index, (unsigned long long)va,
                         e.length);
        sim_fault(b, &at, &err);
        return;
    }
    b->ctr.pushbuf_bytes += len;
    vgt_pb_callbacks cb = {.method = method_cb, .diag = diag_cb, .ctx = b, .noninc_run = run_cb};
    if (vgt_pb_decode(&c->pb, b->fetch_buf, (uint32_t)len, at.pos, &cb, &err) != VGT_OK)
        sim_event(b, VGT_BEV_DIAG, &at, "GPFIFO entry %u: %s", index, err.msg);
}

/* Drain a blocked channel's queue as far as it goes. Returns the number of methods completed. */
static uint64_t run_channel(vgt_backend *b, sim_channel *c)
{
    uint64_t done = 0;
    int saved = b->state_only;
    b->state_only = 0;
    if (!sim_retry_acquire(b, c)) {
        b->state_only = saved;
        return 0;
    }
    done++;
    while (c->qhead < c->qtail && !c->acq.active) {
        sim_qitem it = c->queue[c->qhead++];
        c->qins = c->qhead;
        b->cur = c;
        b->state_only = it.state_only;
        int blocked = sim_exec_method(b, c, &it.m, it.fed);
        b->state_only = 0;
        if (blocked) break;
        done++;
    }
    if (c->qhead == c->qtail) c->qhead = c->qtail = c->qins = 0;
    if (!sim_blocked(c)) {
        if (c->blocked_reported) {
            c->blocked_reported = 0;
            sim_event(b, VGT_BEV_UNBLOCKED, NULL, "channel 0x%x resumed", c->handle);
        }
        sim_end_of_submission(b, c);
    }
    b->state_only = saved;
    return done;
}

void sim_run_blocked(vgt_backend *b)
{
    for (int progress = 1; progress;) {
        progress = 0;
        for (uint32_t i = 0; i < b->nchans; i++)
            if (sim_blocked(b->chans[i]) && run_channel(b, b->chans[i])) progress = 1;
    }
}

vgt_status sim_submit(vgt_backend *b, uint32_t ch, const uint64_t *entries, uint32_t count, uint32_t flags,
                      vgt_error *err)
{
    if (ch >= b->nchans) return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "sim: no channel %u", ch);
    sim_channel *c = b->chans[ch];
    b->state_only = (flags & VGT_SUBMIT_STATE_ONLY) != 0;
    b->methods_this_submit = 0;
    b->limit_hit = 0;
    b->first_fault = VGT_OK;
    b->ctr.submits++;
    vgt_mme_budget_next_submission(&b->mme_budget);
    for (uint32_t i = 0; i < count && !b->limit_hit; i++) {
        b->cur = c;
        fetch_entry(b, c, entries[i], i);
    }
    b->cur = c;
    if (!sim_blocked(c)) sim_end_of_submission(b, c);
    b->state_only = 0;
    sim_run_blocked(b);
    b->ctr.macro_refused = b->mme_budget.refused;
    if (b->mme_budget.refused && !b->mme_budget_said) {   /* once: the summary counts the rest */
        char note[256];
        vgt_mme_budget_note(&b->mme_budget, note, sizeof note);
        b->mme_budget_said = 1;
        sim_event(b, VGT_BEV_UNSUPPORTED, NULL, "%s", note);
    }
    if (b->limit_hit)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET,
                        "sim: submission seq %llu on channel 0x%x cut short at %llu methods (limit %llu)",
                        (unsigned long long)b->seq, c->handle, (unsigned long long)b->methods_this_submit,
                        (unsigned long long)b->cfg.max_methods_per_submit);
    if (b->first_fault != VGT_OK) {
        if (err) *err = b->first_fault_err;
        return b->first_fault;
    }
    return VGT_OK;
}

vgt_status sim_idle(vgt_backend *b, uint64_t timeout_ns, vgt_error *err)
{
    sim_run_blocked(b);
    char msg[VGT_ERROR_MSG_MAX] = "";
    size_t used = 0;
    uint32_t stuck = 0;
    for (uint32_t i = 0; i < b->nchans; i++) {
        const sim_channel *c = b->chans[i];
        if (!sim_blocked(c)) continue;
        stuck++;
        if (used < sizeof msg)
            used += (size_t)snprintf(msg + used, sizeof msg - used, "%schannel 0x%x (%llu methods waiting): %s",
                                     stuck > 1 ? "; " : "", c->handle, (unsigned long long)(c->qtail - c->qhead),
                                     c->blocked_on);
    }
    if (!stuck) return VGT_OK;
    return VGT_FAIL(err, VGT_E_TIMEOUT, VGT_NO_OFFSET,
                    "%u channel(s) wait on an acquire that can never be satisfied in sim: %s", stuck, msg);
}

void sim_channel_free(sim_channel *c)
{
    if (!c) return;
    for (int i = 0; i < 8; i++) sim_obj_reset(&c->subch[i]);
    vgt_sem_free(c->sem);
    vgt_mme_tracker_destroy(c->mme);
    free(c->queue);
    free(c);
}
