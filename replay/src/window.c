/* window.c: the method window of a hardware fault. A faulted channel reports its push-buffer Get
 * pointer (USERD GET/GET_HI: the next dword the PBDMA would fetch). The submission that was running is
 * decoded again, from the snapshot of the channel's decoder taken before it (stream.c: pb_before, the
 * subchannel bindings; a copy, so the channel's one decoder is untouched), and the methods of the
 * entry holding that address, up to the dword at it, are reported with their class and method names
 * (analyze's class tables): the faulting method is among the last of them. */
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "vgt/classes.h"

#define WINDOW_BEFORE 6u   /* methods shown before the Get pointer */

typedef struct window {
    const vgt_replay *rp;
    uint64_t pb_va;
    int found;
    uint32_t entry, dword;      /* where pb_va falls */
    vgt_method last[WINDOW_BEFORE + 1];
    uint32_t nlast;
} window;

static void on_entry(void *ctx, const vgt_gp_entry *e, uint32_t index, const vgt_mpos *pos)
{
    window *w = ctx;
    if (w->found || e->is_control) return;
    uint64_t va = addr_to_replay(w->rp, e->va);   /* the backend reports where the replay put it */
    uint64_t end = va + 4ull * e->length;
    if (w->pb_va < va || w->pb_va > end) return;   /* == end: Get has moved past the entry's last dword */
    w->found = 1;
    w->entry = index;
    w->dword = (uint32_t)((w->pb_va - va) / 4);
}

static int on_method(void *ctx, const vgt_method *m)
{
    window *w = ctx;
    if (!w->found || m->pos.entry != w->entry || m->pos.dword > w->dword) return 0;
    if (w->nlast == WINDOW_BEFORE + 1) memmove(w->last, w->last + 1, WINDOW_BEFORE * sizeof w->last[0]), w->nlast--;
    w->last[w->nlast++] = *m;
    return 0;
}

static int describe(const vgt_method *m, char *buf, size_t cap)
{
    const vgt_class *c = vgt_class_find(m->cls);
    uint32_t idx = 0;
    const vgt_method_info *mi = c ? vgt_class_method(c, m->mthd, &idx) : NULL;
    char name[96];
    if (mi && mi->stride) snprintf(name, sizeof name, "%s(%u)", mi->name, idx);
    else snprintf(name, sizeof name, "%s", mi ? mi->name : "?");
    return snprintf(buf, cap, "; [%u:%u] subch %u %s 0x%04x %s = 0x%08x", m->pos.entry, m->pos.dword, m->subch,
                    c ? c->name : "?", m->mthd, name, m->data);
}

void engine_fault_window(vgt_replay *rp, uint64_t pb_va)
{
    const engine_channel *c = rp->run_chan;
    vgt_pb_state st = c->pb_before;
    window w = {.rp = rp, .pb_va = pb_va};
    vgt_pb_callbacks cb = {.method = on_method, .entry = on_entry, .ctx = &w};
    vgt_error e;
    vgt_pb_decode_submit(&st, rp->run_rec->seq, rp->run_sub, &cb, &e);
    char msg[VGT_ERROR_MSG_MAX];
    int n;
    if (!w.found)
        n = snprintf(msg, sizeof msg, "method window: push-buffer Get 0x%llx is in none of submission %lld's entries "
                     "(an earlier submission of the channel was still running)", (unsigned long long)pb_va,
                     (long long)rp->cur_index);
    else
        n = snprintf(msg, sizeof msg, "method window: push-buffer Get 0x%llx = submission %lld entry %u dword %u; last "
                     "methods fetched", (unsigned long long)pb_va, (long long)rp->cur_index, w.entry, w.dword);
    for (uint32_t i = 0; i < w.nlast && n > 0 && (size_t)n < sizeof msg; i++)
        n += describe(&w.last[i], msg + n, sizeof msg - (size_t)n);
    vgt_replay_report r = {.kind = VGT_RPT_EVENT, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .channel = rp->cur_channel, .event_kind = VGT_BEV_FAULT, .msg = msg};
    engine_report(rp, &r);
}
