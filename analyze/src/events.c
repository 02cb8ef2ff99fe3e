/* events.c: the semantic tracker: per-channel state, dispatch of methods to the decoders (sem_*.c)
 * through the method tables (events_table.c), and in-order event delivery.
 *
 *   vgt_sem_method(m) --family of m->cls--> lookup[family][m->mthd >> 2] --role--> sem_<area>()
 *                                                                           |
 *                          sem_emit(): deliver a held draw first, then ev --+--> cfg.on_event
 *
 * Invariants: events reach on_event in the order of the methods that complete them; a held draw (kept
 * for merging with its SUBSEQUENT instances) is delivered before any later event and at vgt_sem_flush.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sem_internal.h"

static sem_cell lookup[FAM_COUNT_][SEM_MTHD_SLOTS];
static pthread_once_t lookup_once = PTHREAD_ONCE_INIT;

static void lookup_build(void)
{
    for (uint32_t k = 0; k < vgt_sem_method_table_count; k++) {
        const sem_method_spec *s = &vgt_sem_method_table[k];
        for (unsigned i = 0; i < s->count; i++) {
            unsigned slot = (s->mthd + i * s->stride) >> 2;
            if (slot < SEM_MTHD_SLOTS && i < 256) {
                lookup[s->family][slot].role = s->role;
                lookup[s->family][slot].index = (uint8_t)(s->first + i);
                lookup[s->family][slot].min_class = s->min_class;
            }
        }
    }
}

/* A class's family: the facts' (trace-format/facts/: the class tables and families.txt). */
static unsigned family_of(uint32_t cls) { return vgt_nv_class_family(cls); }

vgt_status vgt_sem_new(vgt_sem_tracker **out, const vgt_sem_config *cfg, vgt_error *err)
{
    *out = NULL;
    if (!cfg || !cfg->on_event)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "semantic tracker needs an on_event callback");
    pthread_once(&lookup_once, lookup_build);
    vgt_sem_tracker *t = calloc(1, sizeof *t);
    if (!t) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "allocating a semantic tracker (%zu bytes)", sizeof *t);
    t->cfg = *cfg;
    t->last_cls = UINT32_MAX;
    t->hot_mthd = UINT32_MAX;   /* no method address is this */
    if (!t->cfg.max_upload || t->cfg.max_upload > VGT_SEM_MAX_UPLOAD) t->cfg.max_upload = VGT_SEM_MAX_UPLOAD;
    t->overlay.disabled = cfg->no_overlay;
    t->overlay.cap = cfg->overlay_bytes ? cfg->overlay_bytes : VGT_SEM_OVERLAY_BYTES;
    if (t->overlay.cap < VGT_SEM_OVERLAY_MAX_WRITE) t->overlay.cap = VGT_SEM_OVERLAY_MAX_WRITE;
    *out = t;
    return VGT_OK;
}

void vgt_sem_free(vgt_sem_tracker *t)
{
    if (!t) return;
    for (unsigned i = 0; i < 8; i++) free(t->i2m[i].store);
    sem_overlay_free(&t->overlay);
    free(t);
}

vgt_status vgt_sem_attach(void **slot, const vgt_sem_config *cfg, vgt_error *err)
{
    if (*slot) {
        vgt_sem_reset(*slot);
        return VGT_OK;
    }
    vgt_sem_tracker *t = NULL;
    vgt_status st = vgt_sem_new(&t, cfg, err);
    *slot = t;
    return st;
}

void vgt_sem_detach(void **slot)
{
    vgt_sem_free(*slot);
    *slot = NULL;
}

void vgt_sem_reset(vgt_sem_tracker *t)
{
    for (unsigned i = 0; i < 8; i++) {
        uint8_t *store = t->i2m[i].store;
        uint64_t cap = t->i2m[i].cap;
        memset(&t->i2m[i], 0, sizeof t->i2m[i]);
        t->i2m[i].store = store;
        t->i2m[i].cap = cap;
        memset(&t->sub[i], 0, sizeof t->sub[i]);
    }
    memset(&t->host, 0, sizeof t->host);
    t->draw_pending = 0;
    t->origin = VGT_ORIGIN_STREAM;
    t->macro_call = 0;
    sem_overlay_reset(&t->overlay);   /* a new channel incarnation: what the old one wrote is not known to hold */
}

void vgt_sem_skip_launches(vgt_sem_tracker *t, int skip) { t->skip_launches = skip != 0; }

void sem_event_init(const vgt_sem_tracker *t, vgt_event *ev, vgt_event_kind kind, const vgt_method *m)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->pos = m->pos;
    ev->cls = m->cls;
    ev->subch = m->subch;
    ev->origin = t->origin;
    ev->macro_call = t->macro_call;
}

void vgt_sem_begin_macro(vgt_sem_tracker *t, uint64_t call_id)
{
    t->origin = VGT_ORIGIN_MACRO;
    t->macro_call = call_id;
}

void vgt_sem_end_macro(vgt_sem_tracker *t)
{
    t->origin = VGT_ORIGIN_STREAM;
    t->macro_call = 0;
}

void sem_flush_draw(vgt_sem_tracker *t)
{
    if (!t->draw_pending) return;
    t->draw_pending = 0;
    t->cfg.on_event(t->cfg.ctx, &t->pending);
}

void sem_emit(vgt_sem_tracker *t, const vgt_event *ev)
{
    sem_flush_draw(t);
    t->cfg.on_event(t->cfg.ctx, ev);
}

static vgt_status dispatch(vgt_sem_tracker *t, unsigned role, unsigned index, const vgt_method *m, vgt_error *err)
{
    sub_state *s = &t->sub[m->subch & 7];
    if (role <= R_SEMA_D) { sem_host(t, role, m); return VGT_OK; }
    if (role <= R_I2M_DATA) return sem_i2m(t, &t->i2m[m->subch & 7], role, m, err);
    if (role <= R_REPX_EXECUTE) { sem_report(t, s, role, m); return VGT_OK; }
    if (role <= R_INLINE_QMD_DATA) return sem_launch(t, s, role, index, m, err);
    if (role <= R_BASE_INSTANCE) { sem_draw(t, s, role, m); return VGT_OK; }
    if (role <= R_PIPE_ADDR_B) { sem_program(t, s, role, index, m); return VGT_OK; }
    if (role <= R_NOTIFY) { sem_clear(t, s, role, index, m); return VGT_OK; }
    sem_copy(t, s, role, m);
    return VGT_OK;
}

/* The lookup cell of a method (role R_NONE: not listened to). */
static sem_cell cell_of(vgt_sem_tracker *t, const vgt_method *m)
{
    static const sem_cell none;
    const sem_cell *tab;
    if (m->is_host) tab = lookup[FAM_HOST];
    else {
        if (m->cls != t->last_cls) {
            unsigned fam = family_of(m->cls);
            t->last_cls = m->cls;
            t->last_tab = fam == FAM_NONE ? NULL : lookup[fam];
        }
        tab = t->last_tab;
        if (!tab) return none;
    }
    unsigned slot = m->mthd >> 2;
    return slot < SEM_MTHD_SLOTS ? tab[slot] : none;
}

/* Everything but the LOAD_INLINE_DATA fast path; kept out of line so the fast path needs no frame. */
static __attribute__((noinline)) vgt_status method_slow(vgt_sem_tracker *t, const vgt_method *m, vgt_error *err)
{
    if (m->masked) return VGT_OK;   /* the subdevice mask excludes the GPU we model: it ignores the method */
    if (t->cfg.on_method) t->cfg.on_method(t->cfg.ctx, m);
    sem_cell c = cell_of(t, m);
    if (c.role == R_NONE) return VGT_OK;
    if (c.role == R_I2M_DATA) {
        t->hot_cls = m->cls;
        t->hot_mthd = m->mthd;
        sem_i2m_data(t, &t->i2m[m->subch & 7], m);
        return VGT_OK;
    }
    if (c.min_class && (m->cls & 0xffff) < c.min_class) return VGT_OK;
    return dispatch(t, c.role, c.index, m, err);
}

vgt_status vgt_sem_method(vgt_sem_tracker *t, const vgt_method *m, vgt_error *err)
{
    /* Bulk push buffers are mostly LOAD_INLINE_DATA runs: the last such (class, method) skips the lookup. */
    if (m->mthd == t->hot_mthd && m->cls == t->hot_cls && !m->masked) {
        i2m_state *s = &t->i2m[m->subch & 7];
        if (s->active && s->received + 4 < s->expected) {   /* not the last dword: all 4 bytes are data */
            if (s->buf) {
                if (s->npieces) sem_i2m_gather(s);
                uint8_t *p = s->buf + s->received;
                p[0] = (uint8_t)m->data; p[1] = (uint8_t)(m->data >> 8);
                p[2] = (uint8_t)(m->data >> 16); p[3] = (uint8_t)(m->data >> 24);
            }
            s->received += 4;
            return VGT_OK;
        }
    }
    return method_slow(t, m, err);   /* everything else, including the last dword of a transfer */
}

static vgt_status run(vgt_sem_tracker *t, const vgt_method *m, const uint8_t *data, uint32_t count, vgt_error *err)
{
    sem_cell c = cell_of(t, m);
    if (c.role == R_NONE && !t->cfg.on_method) return VGT_OK;   /* a state shadow wants every value */
    if (c.role == R_I2M_DATA) {   /* the bulk case: one copy; dwords past the transfer have nowhere to go */
        t->hot_cls = m->cls;
        t->hot_mthd = m->mthd;
        sem_i2m_bulk(t, &t->i2m[m->subch & 7], m, data, count);
        return VGT_OK;
    }
    for (uint32_t i = 0; i < count; i++) {
        vgt_method one = vgt_pb_run_method(m, data, i);
        VGT_TRY(vgt_sem_method(t, &one, err));
    }
    return VGT_OK;
}

vgt_status vgt_sem_noninc_run(vgt_sem_tracker *t, const vgt_method *m, const uint8_t *data, uint32_t count,
                              int lent, vgt_error *err)
{
    if (!count || m->masked) return VGT_OK;
    t->run_lent = lent != 0;   /* read where an upload's bytes are kept (sem_i2m.c), for this run only */
    vgt_status st = run(t, m, data, count, err);
    t->run_lent = 0;
    return st;
}

void vgt_sem_reclaim(vgt_sem_tracker *t, const uint8_t *bytes, uint64_t len)
{
    if (!t) return;
    sem_overlay_reclaim(&t->overlay, bytes, len);
    for (unsigned i = 0; i < 8; i++)   /* an upload still waiting for data: its lent runs copied now */
        if (t->i2m[i].npieces) sem_i2m_gather(&t->i2m[i]);
}

int vgt_sem_is_inline_data(vgt_sem_tracker *t, const vgt_method *m)
{
    return !m->masked && cell_of(t, m).role == R_I2M_DATA;
}

vgt_status sem_mem_read(vgt_sem_tracker *t, uint64_t va, uint8_t *dst, uint32_t len, uint32_t *known, vgt_error *err)
{
    uint64_t k = 0;
    VGT_TRY(vgt_sem_mem_read(t, va, dst, len, &k, err));
    *known = (uint32_t)(k > len ? len : k);
    return VGT_OK;
}

/* cfg.mem_read, with "not mapped" read as unknown bytes */
static vgt_status backing_read(vgt_sem_tracker *t, uint64_t va, uint8_t *dst, uint64_t len, uint64_t *known,
                               vgt_error *err)
{
    *known = 0;
    memset(dst, 0, len);
    if (!t->cfg.mem_read || !len) return VGT_OK;
    uint64_t k = 0;
    vgt_status rc = t->cfg.mem_read(t->cfg.mem_ctx, va, dst, len, &k, err);
    if (rc == VGT_E_NOT_FOUND || rc == VGT_E_FAULT) { memset(dst, 0, len); return VGT_OK; }
    if (rc != VGT_OK) return rc;
    *known = k > len ? len : k;
    return VGT_OK;
}

/* One piece of at most SEM_OVERLAY_READ bytes: overlay bytes, then each undecided or hidden run from memory. */
static vgt_status read_piece(vgt_sem_tracker *t, uint64_t va, uint8_t *dst, uint32_t len, uint64_t *known,
                             vgt_error *err)
{
    uint8_t state[SEM_OVERLAY_READ];
    uint32_t decided = sem_overlay_lookup(&t->overlay, va, len, dst, state);
    if (!decided) return backing_read(t, va, dst, len, known, err);
    if (decided == len && !memchr(state, 2, len)) {   /* all from the overlay (a QMD just uploaded) */
        *known = len;
        return VGT_OK;
    }
    uint64_t k = 0;
    for (uint32_t i = 0; i < len;) {
        if (state[i] == 1) { k++; i++; continue; }
        uint32_t j = i;
        while (j < len && state[j] != 1) j++;
        uint64_t kr = 0;
        VGT_TRY(backing_read(t, va + i, dst + i, j - i, &kr, err));
        k += kr;
        i = j;
    }
    *known = k;
    return VGT_OK;
}

vgt_status vgt_sem_mem_read(vgt_sem_tracker *t, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    *known = 0;
    const sem_overlay *o = &t->overlay;
    if (!o->n || va >= o->hi || va + len <= o->lo) return backing_read(t, va, dst, len, known, err);
    for (uint64_t done = 0; done < len;) {
        uint32_t n = len - done < SEM_OVERLAY_READ ? (uint32_t)(len - done) : SEM_OVERLAY_READ;
        uint64_t k = 0;
        VGT_TRY(read_piece(t, va + done, (uint8_t *)dst + done, n, &k, err));
        *known += k;
        done += n;
    }
    return VGT_OK;
}

void vgt_sem_flush(vgt_sem_tracker *t)
{
    sem_flush_draw(t);
    for (unsigned i = 0; i < 8; i++) sem_i2m_flush(t, &t->i2m[i], i);
}
