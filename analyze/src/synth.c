/* synth.c: building a fresh method stream and its memory from work descriptions (synth.h). The check that
 * the stream decodes back to the same work is synth_check.c. */
#include <stdlib.h>
#include <string.h>

#include "synth_internal.h"
#include "vgt/grow.h"
#include "vgt/classes.h"
#include "vgt/nv/clc86f.h"
#include "vgt/nv/clc8b5.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/nv_facts.h"

vgt_status vgt_synth_new(const vgt_synth_config *cfg, vgt_synth **out, vgt_error *err)
{
    *out = NULL;
    if (!cfg || !cfg->alloc) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "synthesizer: an allocator is required");
    vgt_synth *s = calloc(1, sizeof *s);
    if (!s) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "synthesizer: out of memory");
    s->cfg = *cfg;
    vgt_pb_state_init(&s->check_pb, cfg->host_cls);
    *out = s;
    return VGT_OK;
}

void vgt_synth_free(vgt_synth *s)
{
    if (!s) return;
    vgt_synth_plan *p = &s->plan;
    free(p->runs), free(p->dw), free(p->blobs), free(p->bytes), free(p->expect);
    free(s->pb);
    free(s->nodes);
    if (s->check_sem) vgt_sem_free(s->check_sem);
    free(s);
}

void vgt_synth_begin(vgt_synth *s)
{
    vgt_synth_plan *p = &s->plan;
    p->nruns = 0, p->ndw = 0, p->nblobs = 0, p->nbytes = 0, p->nexpect = 0;
    p->works = p->launches = p->ordering_only = 0;
    s->pending = s->committed;
    s->broken = 0;
    s->nheld = 0;
    uint32_t n = 0;   /* nodes of a plan that was not checked never ran */
    for (uint32_t i = 0; i < s->nnodes; i++)
        if (s->nodes[i].committed) s->nodes[n++] = s->nodes[i];
    s->nnodes = n;
}

const vgt_synth_plan *vgt_synth_plan_get(const vgt_synth *s) { return &s->plan; }

void vgt_synth_forget_memory(vgt_synth *s)
{
    s->ncache = 0;
    if (!s->cfg.alloc_keep) s->nnodes = 0;   /* the nodes' copies were in that memory */
}

void vgt_synth_forget_state(vgt_synth *s)
{
    memset(&s->committed, 0, sizeof s->committed);
    vgt_pb_state_init(&s->check_pb, s->cfg.host_cls);
}

static vgt_status nomem(vgt_synth *s, vgt_error *err)
{
    s->broken = 1;
    return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "synthesizer: out of memory");
}

/* ---- methods ---- */

static vgt_status run(vgt_synth *s, unsigned subch, uint32_t cls, uint32_t mthd, const uint32_t *v, uint32_t n,
                      int noninc, vgt_error *err)
{
    vgt_synth_plan *p = &s->plan;
    if (vgt_grow(&p->runs, &p->cap_runs, p->nruns + 1ull, 64) || vgt_grow(&p->dw, &p->cap_dw, p->ndw + n, 64))
        return nomem(s, err);
    p->runs[p->nruns++] = (vgt_synth_run){.subch = (uint8_t)subch, .noninc = (uint8_t)noninc, .cls = cls, .mthd = mthd,
                                          .count = n, .first = p->ndw, .work = s->cur_work};
    memcpy(p->dw + p->ndw, v, (size_t)n * 4);
    p->ndw += n;
    return VGT_OK;
}

static vgt_status m1(vgt_synth *s, unsigned subch, uint32_t cls, uint32_t mthd, uint32_t v, vgt_error *err)
{
    return run(s, subch, cls, mthd, &v, 1, 0, err);
}

/* The class on a subchannel: SET_OBJECT when this channel has another one there. */
static vgt_status bind(vgt_synth *s, unsigned subch, uint32_t cls, vgt_error *err)
{
    if (subch > 7) return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "subchannel %u", subch);
    if (s->pending.bound[subch] == cls) return VGT_OK;
    VGT_TRY(m1(s, subch, s->cfg.host_cls, NVC86F_SET_OBJECT, VGT_NV_SET(NVC86F_SET_OBJECT_NVCLASS, cls), err));
    s->plan.runs[s->plan.nruns - 1].set_object = 1;
    s->pending.bound[subch] = cls;
    if (vgt_nv_class_family(cls) == VGT_NV_FAM_COMPUTE && s->pending.state_cls != cls) {
        s->pending.state_cls = cls;   /* a new object: its state is the class's reset state */
        memset(s->pending.state_set, 0, sizeof s->pending.state_set);
    }
    return VGT_OK;
}

static vgt_status expect(vgt_synth *s, const vgt_event *ev)
{
    vgt_synth_plan *p = &s->plan;
    if (vgt_grow(&p->expect, &p->cap_expect, p->nexpect + 1ull, 64)) return VGT_E_NOMEM;
    vgt_synth_expect *e = &p->expect[p->nexpect++];
    e->ev = *ev;
    e->work = s->cur_work;
    if (ev->kind == VGT_EV_LAUNCH || ev->kind == VGT_EV_EMPTY_DISPATCH) e->ev.u.launch.qmd_bytes = NULL;
    e->data_hash = 0;
    if (ev->kind == VGT_EV_UPLOAD) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (uint64_t i = 0; ev->u.upload.data && i < ev->u.upload.length; i++) h = (h ^ ev->u.upload.data[i]) * 0x100000001b3ull;
        e->data_hash = h;
        e->ev.u.upload.data = NULL;
    }
    return VGT_OK;
}

/* ---- memory ---- */

/* bytes the stream needs at va (already allocated) */
static vgt_status place_blob(vgt_synth *s, const void *bytes, uint64_t len, uint64_t va, const char *what, vgt_error *err)
{
    vgt_synth_plan *p = &s->plan;
    if (vgt_grow(&p->blobs, &p->cap_blobs, p->nblobs + 1ull, 64) || vgt_grow(&p->bytes, &p->cap_bytes, p->nbytes + len, 64))
        return nomem(s, err);
    vgt_synth_blob *b = &p->blobs[p->nblobs++];
    b->va = va, b->len = len, b->off = p->nbytes;
    snprintf(b->what, sizeof b->what, "%s", what);
    memcpy(p->bytes + p->nbytes, bytes, len);
    p->nbytes += len;
    return VGT_OK;
}

/* Memory of the plan: the kept kind while a graph node is built (s->keep). */
static uint64_t salloc(vgt_synth *s, uint64_t len, uint64_t align)
{
    vgt_synth_alloc_fn fn = s->keep && s->cfg.alloc_keep ? s->cfg.alloc_keep : s->cfg.alloc;
    return fn(s->cfg.ctx, len, align);
}

static vgt_status blob(vgt_synth *s, const void *bytes, uint64_t len, uint64_t align, const char *what, uint64_t *va,
                       vgt_error *err)
{
    *va = salloc(s, len, align);
    if (!*va) {
        s->broken = 1;
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "synthesizer: no memory left for the %s (%llu bytes)", what,
                        (unsigned long long)len);
    }
    return place_blob(s, bytes, len, *va, what, err);
}

static uint64_t fnv1a64(const uint8_t *p, uint64_t n, uint64_t h)
{
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Contents copied once: the same bytes (programs, constant banks that do not change) at the same VA. A node's
 * (s->keep) are its own: the cache's copies go when the allocator is reset. */
static vgt_status cached_blob(vgt_synth *s, const uint8_t *bytes, uint64_t len, const char *what, uint64_t *va,
                              vgt_error *err)
{
    if (s->keep) return blob(s, bytes, len, 256, what, va, err);
    uint64_t h = fnv1a64(bytes, len, 0xcbf29ce484222325ull);
    for (uint32_t i = 0; i < s->ncache; i++)
        if (s->cache[i].hash == h && s->cache[i].len == len) {
            *va = s->cache[i].va;
            return VGT_OK;
        }
    VGT_TRY(blob(s, bytes, len, 256, what, va, err));
    if (s->ncache < SYNTH_CACHE) s->cache[s->ncache++] = (synth_cache){h, len, *va};
    return VGT_OK;
}

/* ---- work ---- */

static vgt_status unsupported(vgt_synth *s, vgt_error *err, const char *what)
{
    s->broken = 1;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "%s", what);
}

/* Names looked up once per class (every method of every submission asks). */
static _Thread_local struct {
    uint32_t cls;
    uint8_t role[SYNTH_STATE_SLOTS];
} lmem_cache;

vgt_lmem_role vgt_lmem_method_role(uint32_t cls, uint32_t mthd)
{
    if (mthd >= SYNTH_STATE_SLOTS * 4 || (mthd & 3) || vgt_nv_class_family(cls) != VGT_NV_FAM_COMPUTE) return VGT_LMEM_NONE;
    if (lmem_cache.cls != cls) {
        static const struct { const char *name; vgt_lmem_role role; } known[] = {
            {"SET_SHADER_LOCAL_MEMORY_A", VGT_LMEM_BASE_UPPER},
            {"SET_SHADER_LOCAL_MEMORY_B", VGT_LMEM_BASE_LOWER},
            {"SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A", VGT_LMEM_SIZE_UPPER},
            {"SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B", VGT_LMEM_SIZE_LOWER},
        };
        static const char prefix[] = "SET_SHADER_LOCAL_MEMORY";
        char name[96];
        memset(lmem_cache.role, 0, sizeof lmem_cache.role);
        for (uint32_t i = 0; i < SYNTH_STATE_SLOTS; i++) {
            if (!vgt_method_name(cls, i * 4, name, sizeof name) || strncmp(name, prefix, sizeof prefix - 1)) continue;
            lmem_cache.role[i] = VGT_LMEM_OTHER;
            for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
                if (!strcmp(name, known[k].name)) lmem_cache.role[i] = (uint8_t)known[k].role;
        }
        lmem_cache.cls = cls;
    }
    return (vgt_lmem_role)lmem_cache.role[mthd / 4];
}

int vgt_synth_is_context_state(uint32_t cls, uint32_t mthd) { return vgt_lmem_method_role(cls, mthd) != VGT_LMEM_NONE; }

vgt_status vgt_synth_context_state(vgt_synth *s, unsigned subch, uint32_t cls, uint32_t mthd, uint32_t value,
                                   vgt_error *err)
{
    if (s->broken) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "synthesizer: the plan already failed");
    if (!vgt_synth_is_context_state(cls, mthd))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "method 0x%x of class 0x%x is not context state", mthd, cls);
    VGT_TRY(bind(s, subch, cls, err));
    return m1(s, subch, cls, mthd, value, err);
}

/* The compute state the launch ran with, where this channel's differs (context state excepted when the
 * caller puts it where the captured driver sent it). */
static vgt_status launch_state(vgt_synth *s, const vgt_launch_desc *d, vgt_error *err)
{
    synth_state *st = &s->pending;
    for (uint32_t i = 0; i < d->nstate; i++) {
        uint32_t slot = d->state[i].method / 4;
        if (slot >= SYNTH_STATE_SLOTS) continue;
        if (s->cfg.context_state_in_stream && vgt_synth_is_context_state(d->cls, d->state[i].method)) continue;
        if (st->state_set[slot] && st->state_val[slot] == d->state[i].value) continue;
        VGT_TRY(m1(s, d->subch, d->cls, d->state[i].method, d->state[i].value, err));
        st->state_set[slot] = 1, st->state_val[slot] = d->state[i].value;
    }
    return VGT_OK;
}

/* Where a captured address goes: into a relocated constant buffer, the program or the QMD; else unchanged. */
static uint64_t relocate(const synth_launch *r, uint64_t v)
{
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++)
        if (r->cb_len[i] && v >= r->cb_old[i] && v < r->cb_old[i] + r->cb_len[i]) return r->cb_new[i] + (v - r->cb_old[i]);
    if (v >= r->prog_old && v < r->prog_old + r->prog_len) return r->prog_new + (v - r->prog_old);
    if (v >= r->qmd_old && v < r->qmd_old + r->qmd_len) return r->qmd_new + (v - r->qmd_old);
    return v;
}

/* The held empty dispatch at captured QMD VA qmd_va ordered the stream: its methods and expected events leave
 * the plan (a SET_OBJECT stays: the bindings the plan tracks assume it). */
static void drop_held(vgt_synth *s, uint64_t qmd_va)
{
    vgt_synth_plan *p = &s->plan;
    for (uint32_t h = 0; h < s->nheld; h++) {
        if (s->held[h].qmd_va != qmd_va) continue;
        uint64_t wk = s->held[h].work;
        uint32_t n = 0;
        for (uint32_t i = 0; i < p->nruns; i++)
            if (p->runs[i].work != wk || p->runs[i].set_object) p->runs[n++] = p->runs[i];
        p->nruns = n, n = 0;
        for (uint32_t i = 0; i < p->nexpect; i++)
            if (p->expect[i].work != wk) p->expect[n++] = p->expect[i];
        p->nexpect = n;
        p->ordering_only++;
        s->held[h] = s->held[--s->nheld];
        h--;
    }
}

/* Two QMD layouts of one major version (V02_02 and V02_03): a class that runs one runs the other. */
static int same_major(vgt_qmd_version a, vgt_qmd_version b)
{
    return (a == VGT_QMD_V02_02 || a == VGT_QMD_V02_03) && (b == VGT_QMD_V02_02 || b == VGT_QMD_V02_03);
}

static vgt_status synth_launch_build(vgt_synth *s, const vgt_work *w, vgt_qmd_version v, uint32_t qsize, int node,
                                     vgt_error *err);

/* ---- graph nodes ---- */

/* The node rebuilt for the captured QMD at va (the latest), or NULL. */
static const synth_node *node_find(const vgt_synth *s, uint64_t va)
{
    for (uint32_t i = s->nnodes; i-- > 0;)
        if (s->nodes[i].old_va == va) return &s->nodes[i];
    return NULL;
}

/* [va, va+len) of the captured memory is written (an upload) or holds another QMD now: the nodes there end. */
static void nodes_end(vgt_synth *s, uint64_t va, uint64_t len)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->nnodes; i++)
        if (!(s->nodes[i].old_va < va + len && va < s->nodes[i].old_va + s->nodes[i].len)) s->nodes[n++] = s->nodes[i];
    s->nnodes = n;
}

static vgt_status node_add(vgt_synth *s, uint64_t old_va, uint64_t new_va, uint32_t len, vgt_error *err)
{
    if (vgt_grow(&s->nodes, &s->cap_nodes, s->nnodes + 1ull, 64)) return nomem(s, err);
    s->nodes[s->nnodes++] = (synth_node){.old_va = old_va, .new_va = new_va, .len = len};
    return VGT_OK;
}

/* A dependent that names a rebuilt node goes to the node's copy: the captured QMD was never sent with its
 * PCAS in the synthesized stream, so the chain would stop there. */
static void dependents_to_nodes(const vgt_synth *s, vgt_qmd *q)
{
    for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++) {
        if (!q->dependent[i].enabled) continue;
        const synth_node *n = node_find(s, q->dependent[i].va);
        if (n) q->dependent[i].va = n->new_va;
    }
}

static vgt_status synth_launch_work(vgt_synth *s, const vgt_work *w, vgt_error *err)
{
    const vgt_launch_desc *d = w->launch;
    if (d->problem[0]) {
        s->broken = 1;
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "launch %llu: %s", (unsigned long long)d->index, d->problem);
    }
    vgt_qmd_version v = (vgt_qmd_version)vgt_nv_class_qmd(d->cls);
    /* the QMD's own layout where the class takes it: a class the facts know by family only, or a layout of
     * the class's major version (TURING_COMPUTE_A's is V02_03 and it runs V02_02 QMDs too: a Turing guest's
     * launches keep the guest's layout) */
    if (v == VGT_QMD_UNKNOWN || (d->version != VGT_QMD_UNKNOWN && same_major(d->version, v))) v = d->version;
    uint32_t qsize = vgt_qmd_version_size(v);
    /* a QMD that waits for a scheduling QMD (a graph's kernel node) runs when the chain reaches it, maybe in
     * a later submission: it keeps its dependents, and its memory is kept */
    int node = !d->empty && !w->ev->u.launch.inline_qmd &&
               vgt_qmd_requires_scheduling_pcas(d->version, d->qmd_bytes, d->qmd_size);
    if (!w->ev->u.launch.inline_qmd) nodes_end(s, d->qmd_va, d->qmd_size ? d->qmd_size : VGT_QMD_MAX_BYTES);
    s->keep = node;
    vgt_status rc = synth_launch_build(s, w, v, qsize, node, err);
    s->keep = 0;
    return rc;
}

static vgt_status synth_launch_build(vgt_synth *s, const vgt_work *w, vgt_qmd_version v, uint32_t qsize, int node,
                                     vgt_error *err)
{
    const vgt_launch_desc *d = w->launch;
    char what[64];
    synth_launch r = {.prog_old = d->program_va, .prog_len = d->program_len, .qmd_old = d->qmd_va, .qmd_len = d->qmd_size};
    /* the QMD's place first: the driver's constant bank holds its address */
    r.qmd_len = d->qmd_size;
    r.qmd_new = salloc(s, qsize, 256);
    if (!r.qmd_new || (r.qmd_new >> 40)) {
        s->broken = 1;
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "launch %llu: no memory below 2^40 for its QMD",
                        (unsigned long long)d->index);
    }
    snprintf(what, sizeof what, "program of launch %llu", (unsigned long long)d->index);
    if (!d->empty) VGT_TRY(cached_blob(s, d->program, d->program_len, what, &r.prog_new, err));
    /* constant buffers: one copy per distinct (VA, size) of the launch (CUDA binds its driver bank twice);
     * unmapped ones (a valid slot at VA 0) stay as they are. A bank with no pointer into what moves (the
     * program, the QMD, the launch's banks) keeps its bytes, so a copy made for an earlier launch serves
     * (a module's constants); the others are copied per launch. Every VA first, for the pointers between
     * them; then the bytes with their pointers relocated. */
    int write[VGT_QMD_MAX_CB] = {0};
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++) {
        const vgt_ld_cb *cb = &d->cb[i];
        r.cb_old[i] = cb->va, r.cb_len[i] = d->cb[i].valid && cb->mapped ? cb->size : 0;
    }
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++) {
        const vgt_ld_cb *cb = &d->cb[i];
        if (!r.cb_len[i]) continue;
        for (unsigned j = 0; j < i && !r.cb_new[i]; j++)
            if (r.cb_len[j] && r.cb_old[j] == cb->va && r.cb_len[j] == cb->size) r.cb_new[i] = r.cb_new[j];
        if (r.cb_new[i]) continue;
        int keeps = 1;
        for (uint32_t k = 0; k < d->naddrs && keeps; k++) {
            if (d->addrs[k].cb != i) continue;
            uint64_t a = d->addrs[k].value;
            if ((a >= r.prog_old && a < r.prog_old + r.prog_len) || (a >= r.qmd_old && a < r.qmd_old + r.qmd_len)) keeps = 0;
            for (unsigned j = 0; j < VGT_QMD_MAX_CB && keeps; j++)
                if (r.cb_len[j] && a >= r.cb_old[j] && a < r.cb_old[j] + r.cb_len[j]) keeps = 0;
        }
        uint32_t n = cb->size < VGT_LD_CB_MAX ? cb->size : VGT_LD_CB_MAX;
        keeps = keeps && !s->keep;   /* a node's banks are its own (cached_blob) */
        uint64_t h = keeps ? fnv1a64(cb->bytes, n, 0xcbf29ce484222325ull) : 0;
        for (uint32_t c = 0; keeps && c < s->ncache && !r.cb_new[i]; c++)
            if (s->cache[c].hash == h && s->cache[c].len == n) r.cb_new[i] = s->cache[c].va;
        if (r.cb_new[i]) continue;
        write[i] = 1;
        r.cb_new[i] = salloc(s, cb->size, 256);
        if (!r.cb_new[i]) {
            s->broken = 1;
            return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "launch %llu: no memory for constant buffer %u",
                            (unsigned long long)d->index, i);
        }
        if (keeps && s->ncache < SYNTH_CACHE) s->cache[s->ncache++] = (synth_cache){h, n, r.cb_new[i]};
    }
    uint8_t *tmp = malloc(VGT_LD_CB_MAX);
    if (!tmp) return nomem(s, err);
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++) {
        if (!write[i]) continue;
        const vgt_ld_cb *cb = &d->cb[i];
        uint32_t n = cb->size < VGT_LD_CB_MAX ? cb->size : VGT_LD_CB_MAX;
        memcpy(tmp, cb->bytes, n);
        for (uint32_t k = 0; k < d->naddrs; k++) {
            if (d->addrs[k].cb != i) continue;
            uint64_t nv = relocate(&r, d->addrs[k].value);
            memcpy(tmp + d->addrs[k].offset, &nv, 8);
        }
        snprintf(what, sizeof what, "constant buffer %u of launch %llu", i, (unsigned long long)d->index);
        vgt_status rc = place_blob(s, tmp, n, r.cb_new[i], what, err);
        if (rc != VGT_OK) {
            free(tmp);
            return rc;
        }
    }
    free(tmp);
    /* the fresh QMD: relocated addresses, no dependents (the stream orders the launches) */
    vgt_qmd q = d->qmd;
    q.version = v, q.major = q.minor = 0;
    if (!d->empty) q.program_va = r.prog_new - q.program_offset;
    if (q.program_prefetch_va) q.program_prefetch_va = relocate(&r, q.program_prefetch_va);   /* prefetch the copy */
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++)
        if (r.cb_len[i]) q.cb[i].va = r.cb_new[i];
    /* an empty dispatch is rebuilt for what it schedules, a node for the next node: their dependents stay */
    if (!d->empty && !node) memset(q.dependent, 0, sizeof q.dependent);
    dependents_to_nodes(s, &q);
    uint8_t qmd[VGT_QMD_MAX_BYTES];
    vgt_error e;
    if (vgt_qmd_encode(v, &q, v == d->version ? d->unnamed : NULL, qmd, sizeof qmd, &e) != VGT_OK) {
        s->broken = 1;
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "launch %llu: %s", (unsigned long long)d->index, e.msg);
    }
    /* decoded again, it must be the launch that was meant (the full stream is checked in vgt_synth_check) */
    vgt_qmd back;
    const char *diff = NULL;
    if (vgt_qmd_decode(qmd, qsize, &back, &e) != VGT_OK || (q.major = back.major, q.minor = back.minor, 0) ||
        !vgt_qmd_equal(&back, &q, &diff)) {
        s->broken = 1;
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "launch %llu: the encoded QMD decodes differently (%s)",
                        (unsigned long long)d->index, diff ? diff : e.msg);
    }
    snprintf(what, sizeof what, "QMD of launch %llu", (unsigned long long)d->index);
    VGT_TRY(place_blob(s, qmd, qsize, r.qmd_new, what, err));
    if (node) VGT_TRY(node_add(s, d->qmd_va, r.qmd_new, d->qmd_size, err));
    /* the stream */
    VGT_TRY(bind(s, d->subch, d->cls, err));
    VGT_TRY(launch_state(s, d, err));
    /* the program and constant buffers were written by the host, maybe where an earlier launch's were: the
     * SMs' instruction, data and constant caches must not hold the old bytes (CUDA invalidates the same way
     * after it uploads code) */
    VGT_TRY(m1(s, d->subch, d->cls, NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI,
               VGT_NV_DEF(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION, TRUE) |
                   VGT_NV_DEF(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA, TRUE) |
                   VGT_NV_DEF(NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT, TRUE), err));
    VGT_TRY(m1(s, d->subch, d->cls, NVCBC0_SEND_PCAS_A, (uint32_t)(r.qmd_new >> 8), err));
    if ((d->cls & 0xffff) >= 0xC6C0)
        VGT_TRY(m1(s, d->subch, d->cls, NVCBC0_SEND_SIGNALING_PCAS2_B,
                   VGT_NV_DEF(NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION, INVALIDATE_PREFETCH_COPY_SCHEDULE), err));
    else   /* Turing: INVALIDATE and SCHEDULE bits */
        VGT_TRY(m1(s, d->subch, d->cls, NVCBC0_SEND_SIGNALING_PCAS_B, 3u, err));
    /* what decoding it back must give: the launch, then its releases */
    vgt_event ev = *w->ev;
    ev.kind = d->empty ? VGT_EV_EMPTY_DISPATCH : VGT_EV_LAUNCH;
    ev.u.launch.qmd = back;
    ev.u.launch.qmd_va = r.qmd_new;
    ev.u.launch.inline_qmd = 0;
    if (expect(s, &ev) != VGT_OK) return nomem(s, err);
    for (unsigned i = 0; i < back.release_count && i < VGT_QMD_MAX_RELEASE; i++) {
        if (!back.release[i].enabled) continue;
        vgt_event rel = {.kind = VGT_EV_SEM_RELEASE};
        rel.u.sem.source = VGT_SEM_SRC_QMD, rel.u.sem.va = back.release[i].va;
        rel.u.sem.payload = back.release[i].payload64 ? back.release[i].payload : (uint32_t)back.release[i].payload;
        if (expect(s, &rel) != VGT_OK) return nomem(s, err);
    }
    if (d->empty) return VGT_OK;
    s->plan.launches++;
    /* an empty dispatch of this plan whose dependence this launch decrements ordered the stream: out again */
    for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++)
        if (d->qmd.dependent[i].enabled && d->qmd.dependent[i].action == 4)
            drop_held(s, d->qmd.dependent[i].va);
    return VGT_OK;
}

static vgt_status synth_upload(vgt_synth *s, const vgt_work *w, vgt_error *err)
{
    const vgt_ev_upload *u = &w->ev->u.upload;
    if (!u->pitch_layout) return unsupported(s, err, "a block-linear inline-to-memory upload");
    if (!u->complete || !u->data || u->received < u->length) return unsupported(s, err, "an upload whose bytes were not all captured");
    if (u->completion == 2) return unsupported(s, err, "an upload that releases a semaphore");
    /* the driver reuses a node's memory for another QMD (it sends that one with a PCAS of its own) */
    nodes_end(s, u->dst_va, u->line_count > 1 ? (uint64_t)u->pitch_out * (u->line_count - 1) + u->line_length : u->line_length);
    unsigned sc = w->ev->subch;
    uint32_t cls = w->ev->cls;
    VGT_TRY(bind(s, sc, cls, err));
    uint32_t hdr[5] = {u->line_length, u->line_count, (uint32_t)(u->dst_va >> 32), (uint32_t)u->dst_va, u->pitch_out};
    VGT_TRY(run(s, sc, cls, NVCBC0_LINE_LENGTH_IN, hdr, 4, 0, err));   /* LINE_LENGTH_IN, LINE_COUNT, OFFSET_OUT_UPPER, OFFSET_OUT */
    if (u->line_count > 1) VGT_TRY(m1(s, sc, cls, NVCBC0_PITCH_OUT, u->pitch_out, err));
    VGT_TRY(m1(s, sc, cls, NVCBC0_LAUNCH_DMA, u->raw, err));
    uint64_t n = (u->length + 3) / 4;
    uint32_t *data = calloc(n ? n : 1, 4);
    if (!data) return nomem(s, err);
    memcpy(data, u->data, u->length);
    for (uint64_t done = 0; done < n; done += VGT_NV_MH_MAX_COUNT) {
        uint32_t k = n - done < VGT_NV_MH_MAX_COUNT ? (uint32_t)(n - done) : VGT_NV_MH_MAX_COUNT;
        vgt_status rc = run(s, sc, cls, NVCBC0_LOAD_INLINE_DATA, data + done, k, 1, err);
        if (rc != VGT_OK) {
            free(data);
            return rc;
        }
    }
    free(data);
    return expect(s, w->ev) == VGT_OK ? VGT_OK : nomem(s, err);
}

static vgt_status synth_copy(vgt_synth *s, const vgt_work *w, vgt_error *err)
{
    const vgt_ev_copy *k = &w->ev->u.copy;
    int transfer = w->ev->kind == VGT_EV_COPY;
    if (k->src_physical || k->dst_physical) return unsupported(s, err, "a copy between physical addresses");
    if (transfer && (!k->dst_pitch || (!k->src_pitch && !k->memset)))
        return unsupported(s, err, "a block-linear copy (its surface parameters are not described)");
    if (k->semaphore_type == 3) return unsupported(s, err, "a copy that raises a conditional interrupt");
    unsigned sc = w->ev->subch;
    uint32_t cls = w->ev->cls;
    VGT_TRY(bind(s, sc, cls, err));
    if (transfer) {
        uint32_t off[4] = {(uint32_t)(k->src_va >> 32), (uint32_t)k->src_va, (uint32_t)(k->dst_va >> 32), (uint32_t)k->dst_va};
        VGT_TRY(run(s, sc, cls, NVC8B5_OFFSET_IN_UPPER, off, 4, 0, err));   /* OFFSET_IN_UPPER .. OFFSET_OUT_LOWER */
        uint32_t lines[4] = {k->pitch_in, k->pitch_out, k->line_length, k->line_count};
        VGT_TRY(run(s, sc, cls, NVC8B5_PITCH_IN, lines, 4, 0, err));        /* PITCH_IN, PITCH_OUT, LINE_LENGTH_IN, LINE_COUNT */
        if (k->remap) {
            uint32_t rm[3] = {k->remap_const_a, k->remap_const_b, k->remap_components};
            VGT_TRY(run(s, sc, cls, NVC8B5_SET_REMAP_CONST_A, rm, 3, 0, err));
        }
    }
    if (k->semaphore_type) {
        uint32_t sem[3] = {(uint32_t)(k->sem_va >> 32), (uint32_t)k->sem_va, (uint32_t)k->sem_payload};
        VGT_TRY(run(s, sc, cls, NVC8B5_SET_SEMAPHORE_A, sem, 3, 0, err));   /* SET_SEMAPHORE_A, _B, _PAYLOAD */
        if (k->sem_payload >> 32) VGT_TRY(m1(s, sc, cls, NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER, (uint32_t)(k->sem_payload >> 32), err));
    }
    VGT_TRY(m1(s, sc, cls, NVC8B5_LAUNCH_DMA, k->raw, err));
    if (expect(s, w->ev) != VGT_OK) return nomem(s, err);
    if (k->semaphore_type) {
        vgt_event rel = {.kind = VGT_EV_SEM_RELEASE};
        rel.u.sem.source = VGT_SEM_SRC_COPY, rel.u.sem.va = k->sem_va, rel.u.sem.payload = k->sem_payload;
        if (expect(s, &rel) != VGT_OK) return nomem(s, err);
    }
    return VGT_OK;
}

/* NOTIFY of the 3D and compute classes: the notification (a timestamp, then a status word) written at
 * SET_NOTIFY_A (upper) : SET_NOTIFY_B; Vulkan's query and event code uses it. */
static vgt_status synth_notify(vgt_synth *s, const vgt_event *ev, vgt_error *err)
{
    _Static_assert(NVCBC0_SET_NOTIFY_A == NVCB97_SET_NOTIFY_A && NVCBC0_SET_NOTIFY_B == NVCB97_SET_NOTIFY_B &&
                       NVCBC0_NOTIFY == NVCB97_NOTIFY && NVCB97_NOTIFY == NVCB97_SET_NOTIFY_A + 8,
                   "the 3D and compute classes place NOTIFY alike, after SET_NOTIFY_A and _B");
    const vgt_ev_notify *n = &ev->u.notify;
    /* On the H200 a NOTIFY rebuilt on the 3D class of the lane's own channel raised Xid 25 on HOPPER_A and
     * left the GPU unable to finish Vulkan draws (backend/gpu/README.md, "Engine exceptions"); rebuilt on
     * the channel's inline-to-memory object instead, it did the same: only the compute class's is rebuilt;
     * a 3D one leaves its submission to the captured push buffers. */
    if (vgt_nv_class_family(ev->cls) != VGT_NV_FAM_COMPUTE)
        return unsupported(s, err, "a NOTIFY on a class other than compute");
    VGT_TRY(bind(s, ev->subch, ev->cls, err));
    uint32_t v[3] = {VGT_NV_SET(NVCB97_SET_NOTIFY_A_ADDRESS_UPPER, (uint32_t)(n->va >> 32)), (uint32_t)n->va, n->type};
    VGT_TRY(run(s, ev->subch, ev->cls, NVCB97_SET_NOTIFY_A, v, 3, 0, err));   /* SET_NOTIFY_A, _B, NOTIFY */
    return expect(s, ev) == VGT_OK ? VGT_OK : nomem(s, err);
}

static vgt_status synth_semaphore(vgt_synth *s, const vgt_work *w, vgt_error *err)
{
    const vgt_event *ev = w->ev;
    if (ev->kind == VGT_EV_NOTIFY) return synth_notify(s, ev, err);
    const vgt_ev_sem *m = &ev->u.sem;
    if (m->source == VGT_SEM_SRC_HOST) {
        if (w->method == NVC86F_SEM_EXECUTE) {
            uint32_t v[5] = {(uint32_t)m->va, (uint32_t)(m->va >> 32), (uint32_t)m->payload, (uint32_t)(m->payload >> 32), m->raw};
            VGT_TRY(run(s, 0, s->cfg.host_cls, NVC86F_SEM_ADDR_LO, v, 5, 0, err));   /* SEM_ADDR_LO .. SEM_EXECUTE */
        } else if (w->method == NVC86F_SEMAPHORED && !(m->payload >> 32)) {
            uint32_t v[4] = {(uint32_t)(m->va >> 32), (uint32_t)m->va, (uint32_t)m->payload, m->raw};
            VGT_TRY(run(s, 0, s->cfg.host_cls, NVC86F_SEMAPHOREA, v, 4, 0, err));    /* SEMAPHOREA .. SEMAPHORED */
        } else {
            return unsupported(s, err, "a host semaphore of an unknown form");
        }
    } else if (m->source == VGT_SEM_SRC_REPORT) {
        unsigned sc = ev->subch;
        uint32_t cls = ev->cls;
        VGT_TRY(bind(s, sc, cls, err));
        if (w->method == NVCBC0_REPORT_SEMAPHORE_EXECUTE) {
            uint32_t v[5] = {(uint32_t)m->payload, (uint32_t)(m->payload >> 32), (uint32_t)m->va, (uint32_t)(m->va >> 32), m->raw};
            VGT_TRY(run(s, sc, cls, NVCBC0_SET_REPORT_SEMAPHORE_PAYLOAD_LOWER, v, 5, 0, err));   /* .. REPORT_SEMAPHORE_EXECUTE */
        } else if (w->method == NVCB97_SET_REPORT_SEMAPHORE_D) {
            uint32_t v[4] = {(uint32_t)(m->va >> 32), (uint32_t)m->va, (uint32_t)m->payload, m->raw};
            VGT_TRY(run(s, sc, cls, NVCB97_SET_REPORT_SEMAPHORE_A, v, 4, 0, err));   /* _A .. _D */
        } else {
            return unsupported(s, err, "a report semaphore of an unknown form");
        }
    } else {
        return unsupported(s, err, "a semaphore of an unknown source");
    }
    return expect(s, ev) == VGT_OK ? VGT_OK : nomem(s, err);
}

vgt_status vgt_synth_work(vgt_synth *s, const vgt_work *w, vgt_error *err)
{
    if (s->broken) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "synthesizer: the plan already failed");
    s->cur_work = w->index;
    s->plan.works++;
    switch (w->kind) {
    case VGT_WORK_LAUNCH: return synth_launch_work(s, w, err);
    case VGT_WORK_EMPTY_DISPATCH: {
        const vgt_qmd *q = &w->launch->qmd;
        int schedules = 0;
        for (unsigned i = 0; i < q->release_count && i < VGT_QMD_MAX_RELEASE; i++)
            if (q->release[i].enabled) return unsupported(s, err, "an empty dispatch that releases a semaphore");
        for (unsigned i = 0; i < VGT_QMD_MAX_DEPENDENT; i++)
            schedules |= q->dependent[i].enabled && q->dependent[i].action == 1;
        if (!schedules) {
            s->plan.ordering_only++;   /* nothing it starts: the stream's order does the rest */
            return VGT_OK;
        }
        /* it schedules a QMD: rebuilt with that dependent, unless a launch of this plan turns out to
         * decrement its dependence (drop_held); a graph launch's node chain starts this way */
        if (s->nheld == SYNTH_HELD) return unsupported(s, err, "too many empty dispatches in one submission");
        VGT_TRY(synth_launch_work(s, w, err));
        s->held[s->nheld].work = w->index, s->held[s->nheld].qmd_va = w->launch->qmd_va;
        s->nheld++;
        return VGT_OK;
    }
    case VGT_WORK_UPLOAD: return synth_upload(s, w, err);
    case VGT_WORK_COPY: return synth_copy(s, w, err);
    case VGT_WORK_SEMAPHORE: return synth_semaphore(s, w, err);
    default: return unsupported(s, err, w->ev->kind == VGT_EV_DRAW ? "a draw" : "3D work");
    }
}

const uint32_t *vgt_synth_pushbuf(vgt_synth *s, uint32_t *n, vgt_error *err)
{
    const vgt_synth_plan *p = &s->plan;
    uint64_t need = p->ndw + 2ull * p->nruns + 16;
    if (vgt_grow(&s->pb, &s->cap_pb, need, 64)) {
        VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "synthesizer: out of memory for the push buffer");
        return NULL;
    }
    vgt_pbw w;
    vgt_pbw_init(&w, s->pb, (uint32_t)s->cap_pb);
    for (uint32_t i = 0; i < p->nruns; i++) {
        const vgt_synth_run *r = &p->runs[i];
        if (r->noninc) vgt_pbw_non_inc(&w, r->subch, r->mthd, p->dw + r->first, r->count);
        else vgt_pbw_inc(&w, r->subch, r->mthd, p->dw + r->first, r->count);
    }
    if (vgt_pbw_check(&w, err) != VGT_OK) return NULL;
    *n = w.n;
    return s->pb;
}
