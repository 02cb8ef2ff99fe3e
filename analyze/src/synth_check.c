/* synth_check.c: a synthesized stream decoded back (push-buffer decoder, semantic tracker; QMDs read from
 * the plan's own memory, nothing else known) and compared, event by event, with the work it was built
 * from (synth.h). Only a plan that passes is submitted: bad SASS or an illegal QMD raises an engine
 * exception, and on the H200 one leaves later Vulkan draws unable to finish until the machine restarts. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "synth_internal.h"
#include "vgt/grow.h"

typedef struct check_ctx {
    const vgt_synth_plan *plan;
    vgt_sem_tracker *sem;
    vgt_event *got;
    uint64_t *hash;           /* uploads: FNV-1a of their bytes */
    uint32_t n, cap;
    int nomem;
} check_ctx;

static uint64_t fnv1a64(const uint8_t *p, uint64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The plan's memory: blobs only. */
static vgt_status plan_read(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    (void)err;
    const vgt_synth_plan *p = ctx;
    uint8_t *d = dst;
    memset(d, 0, len);
    *known = 0;
    for (uint32_t i = 0; i < p->nblobs; i++) {
        const vgt_synth_blob *b = &p->blobs[i];
        uint64_t lo = va > b->va ? va : b->va, hi = va + len < b->va + b->len ? va + len : b->va + b->len;
        if (lo >= hi) continue;
        memcpy(d + (lo - va), p->bytes + b->off + (lo - b->va), hi - lo);
        *known += hi - lo;
    }
    return VGT_OK;
}

static void on_event(void *ctx, const vgt_event *ev)
{
    check_ctx *c = ctx;
    if (c->n == c->cap) {   /* got[] and hash[] share cap: the smaller of the two grown */
        uint32_t gcap = c->cap, hcap = c->cap;
        if (vgt_grow(&c->got, &gcap, c->n + 1ull, 64) || vgt_grow(&c->hash, &hcap, c->n + 1ull, 64)) {
            c->nomem = 1;
            return;
        }
        c->cap = gcap < hcap ? gcap : hcap;
    }
    c->got[c->n] = *ev;
    c->hash[c->n] = ev->kind == VGT_EV_UPLOAD && ev->u.upload.data ? fnv1a64(ev->u.upload.data, ev->u.upload.length) : 0;
    c->n++;
}

static int on_method(void *ctx, const vgt_method *m)
{
    check_ctx *c = ctx;
    vgt_error e;
    if (vgt_sem_method(c->sem, m, &e) != VGT_OK) c->nomem = 1;
    return 0;
}

/* "" when got is what e says, else what differs. */
static const char *differs(const vgt_synth_expect *x, const vgt_event *g, uint64_t ghash, uint64_t xhash)
{
    const vgt_event *e = &x->ev;
    static char why[160];
    const char *d = NULL;
    if (g->kind != e->kind) {
        snprintf(why, sizeof why, "decoded %s where %s was built", vgt_event_kind_name(g->kind), vgt_event_kind_name(e->kind));
        return why;
    }
    switch (e->kind) {
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH:
        if (!g->u.launch.decoded || !g->u.launch.qmd_known) return "the QMD does not decode from the plan's memory";
        if (g->u.launch.qmd_va != e->u.launch.qmd_va) return "the launch names another QMD";
        if (!vgt_qmd_equal(&g->u.launch.qmd, &e->u.launch.qmd, &d)) {
            snprintf(why, sizeof why, "the QMD decodes with another %s", d);
            return why;
        }
        return "";
    case VGT_EV_UPLOAD:
        if (g->u.upload.dst_va != e->u.upload.dst_va || g->u.upload.length != e->u.upload.length ||
            g->u.upload.line_count != e->u.upload.line_count)
            return "the upload goes elsewhere or is another size";
        if (ghash != xhash) return "the upload carries other bytes";
        return "";
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA:
        if (e->kind == VGT_EV_COPY && (g->u.copy.src_va != e->u.copy.src_va || g->u.copy.dst_va != e->u.copy.dst_va ||
                                       g->u.copy.bytes != e->u.copy.bytes))
            return "the copy has other addresses or length";
        if (g->u.copy.semaphore_type != e->u.copy.semaphore_type ||
            (e->u.copy.semaphore_type && (g->u.copy.sem_va != e->u.copy.sem_va || g->u.copy.sem_payload != e->u.copy.sem_payload)))
            return "the copy releases another semaphore";
        if (g->u.copy.remap != e->u.copy.remap || g->u.copy.memset != e->u.copy.memset) return "the copy remaps otherwise";
        return "";
    case VGT_EV_SEM_RELEASE: case VGT_EV_SEM_ACQUIRE: case VGT_EV_REPORT:
        if (g->u.sem.source != e->u.sem.source || g->u.sem.va != e->u.sem.va) return "the semaphore has another address";
        if (g->u.sem.payload != e->u.sem.payload) return "the semaphore has another payload";
        if (e->u.sem.op && g->u.sem.op != e->u.sem.op) return "the semaphore does another operation";
        return "";
    case VGT_EV_NOTIFY:
        if (g->u.notify.va != e->u.notify.va) return "the notification goes elsewhere";
        if (g->u.notify.type != e->u.notify.type) return "the notification is of another type";
        return "";
    default:
        return "";
    }
}

vgt_status vgt_synth_check(vgt_synth *s, vgt_error *err)
{
    const vgt_synth_plan *p = &s->plan;
    uint32_t ndw = 0;
    const uint32_t *dw = vgt_synth_pushbuf(s, &ndw, err);
    if (!dw) return err->code;
    check_ctx c = {.plan = p};
    vgt_sem_config cfg = {.on_event = on_event, .ctx = &c, .mem_read = plan_read, .mem_ctx = (void *)p,
                          .keep_upload_bytes = 1, .no_overlay = 1};
    VGT_TRY(vgt_sem_new(&c.sem, &cfg, err));
    vgt_pb_state pb = s->check_pb;
    vgt_pb_callbacks cb = {.method = on_method, .ctx = &c};
    vgt_mpos pos = {0};
    vgt_status rc = vgt_pb_decode(&pb, (const uint8_t *)dw, ndw * 4, pos, &cb, err);
    vgt_sem_flush(c.sem);
    if (rc == VGT_OK && c.nomem) rc = VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "synthesized stream check: out of memory");
    if (rc == VGT_OK && pb.methods == 0 && p->nruns)
        rc = VGT_FAIL(err, VGT_E_DECODE, VGT_NO_OFFSET, "the synthesized stream decodes to no methods");
    for (uint32_t i = 0; rc == VGT_OK && i < p->nexpect; i++) {
        const vgt_synth_expect *x = &p->expect[i];
        if (i >= c.n) {
            rc = VGT_FAIL(err, VGT_E_DECODE, VGT_NO_OFFSET, "work %" PRIu64 ": the synthesized stream decodes to no %s",
                          x->work, vgt_event_kind_name(x->ev.kind));
            break;
        }
        uint64_t xhash = 0;
        if (x->ev.kind == VGT_EV_UPLOAD) xhash = x->data_hash;
        const char *why = differs(x, &c.got[i], c.hash[i], xhash);
        if (why[0])
            rc = VGT_FAIL(err, VGT_E_DECODE, VGT_NO_OFFSET, "work %" PRIu64 " (%s): %s", x->work,
                          vgt_event_kind_name(x->ev.kind), why);
    }
    if (rc == VGT_OK && c.n > p->nexpect)
        rc = VGT_FAIL(err, VGT_E_DECODE, VGT_NO_OFFSET, "the synthesized stream decodes to %u events, %u were built",
                      c.n, p->nexpect);
    vgt_sem_free(c.sem);
    free(c.got);
    free(c.hash);
    if (rc != VGT_OK) return rc;
    s->check_pb = pb;          /* the stream will run: its bindings and state are the channel's now */
    s->committed = s->pending;
    for (uint32_t i = 0; i < s->nnodes; i++) s->nodes[i].committed = 1;   /* and the graph nodes it sends */
    return VGT_OK;
}
