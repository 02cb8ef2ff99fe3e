/* draws.c: vgt_draws_run, the walk behind `vgt draws` and the db's draw_state table (vgt/draws.h).
 *
 *   walker --on_method--> MME trace --on_call: emissions--+
 *      |                                                 v
 *      +----------------------------------------> semantic tracker (per channel)
 *                                                  | on_method: every method -> 3D shadow (per subchannel)
 *                                                  | on_draw_issued: shadow -> pending vgt_draw_info
 *                                                  | on_event DRAW: pending + counts -> submission's records
 *                                                  | on_event LAUNCH / CLEAR -> records / clears
 *   on_submit_end: calls complete, held draw flushed -> each record gets its window's calls and the
 *   submission's earlier clears, is linted and delivered; macro-only windows are checked for an uploaded
 *   draw macro that was not called.
 *
 * Invariants: every submission is decoded and every macro run, selected or not (state carries over);
 * records and windows are kept for selected submissions only; a call never spans submissions, so at
 * the submission's end every window's calls are known. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "draws_internal.h"
#include "vgt/classes.h"
#include "vgt/grow.h"
#include "vgt/mme_trace.h"

typedef struct draws_run draws_run;

typedef struct dchan {
    draws_run *run;
    vgt_walk_channel *wc;
    vgt_sem_tracker *sem;
    draws_shadow *shadow[8];  /* per subchannel, 3D objects only */
    int have_pending;
    vgt_draw_info pending;
} dchan;

typedef struct call_rec {
    vgt_draw_macro m;
    uint32_t cls, client, channel;
    uint8_t draws;            /* the call's emissions issue a draw */
} call_rec;

typedef struct clear_rec {
    vgt_mpos pos;
    uint32_t client, channel;
    vgt_ev_clear c;
} clear_rec;

struct draws_run {
    vgt_draws_config cfg;
    const vgt_model *model;
    vgt_mme_trace *mme;
    const vgt_walk_submit *cur;
    int selected;
    /* the current submission's records, calls, clears and windows (grown, reused) */
    vgt_draw_info *recs;
    uint32_t nrec, caprec;
    call_rec *calls;
    uint32_t ncall, capcall;
    clear_rec *clears;
    uint32_t nclear, capclear;
    vgt_draw_window *win;
    uint8_t *prepared;        /* per window: it bound a program, a color target with a format, or cleared */
    uint32_t nwin, capwin;
    uint64_t number;
    vgt_draw_quiet_window quiet;
    sem_overlay shared;       /* what every channel's uploads and copies wrote (see draws_read_state) */
    vgt_error err;
    int failed, stopped;
};

static int nomem(draws_run *r, const char *what)
{
    VGT_FAIL(&r->err, VGT_E_NOMEM, VGT_NO_OFFSET, "allocating %s for vgt draws", what);
    r->failed = 1;
    return 1;
}

static vgt_draw_info *new_record(draws_run *r)
{
    if (vgt_grow(&r->recs, &r->caprec, r->nrec + 1ull, 16)) { nomem(r, "draw records"); return NULL; }
    return &r->recs[r->nrec++];
}

static void head(dchan *ch, vgt_draw_info *d, const vgt_event *ev, unsigned kind)
{
    memset(d, 0, sizeof *d);
    const vgt_walk_submit *s = ch->run->cur;
    d->kind = (uint8_t)kind;
    d->submission = s ? s->index : 0;
    d->seq = ev->pos.seq;
    d->pos = ev->pos;
    d->client = ch->wc->client;
    d->channel = ch->wc->handle;
    d->cls = ev->cls;
    d->subch = ev->subch;
    d->origin = ev->origin;
    d->macro_call = ev->macro_call;
}

static void on_draw_issued(void *ctx, const vgt_event *ev)
{
    dchan *ch = ctx;
    draws_run *r = ch->run;
    ch->have_pending = 0;
    if (!r->selected || r->failed) return;
    head(ch, &ch->pending, ev, VGT_DRAWREC_DRAW);
    draws_shadow *sh = ch->shadow[ev->subch & 7];
    if (sh && draws_read_state(sh, ch->sem, &r->shared, r->model, &ch->pending, &r->err) != VGT_OK) {
        r->failed = 1;
        return;
    }
    ch->have_pending = 1;
}

static void mark_prepared(draws_run *r, uint32_t entry)
{
    if (entry < r->nwin) r->prepared[entry] = 1;
}

/* A small upload or contiguous copy: its bytes as this channel's tracker knows them after it, into the
 * shared overlay (a hole when not all known). Every submission, selected or not. */
static void share_write(draws_run *r, dchan *ch, uint64_t va, uint64_t len)
{
    if (!len) return;
    uint8_t buf[VGT_SEM_OVERLAY_MAX_WRITE];
    uint64_t known = 0;
    vgt_error ignored;
    if (len <= sizeof buf && vgt_sem_mem_read(ch->sem, va, buf, len, &known, &ignored) == VGT_OK && known == len)
        sem_overlay_write(&r->shared, va, buf, len);
    else sem_overlay_hole(&r->shared, va, len);
}

static void on_event(void *ctx, const vgt_event *ev)
{
    dchan *ch = ctx;
    draws_run *r = ch->run;
    if (ev->kind == VGT_EV_UPLOAD && ev->u.upload.pitch_layout &&
        (ev->u.upload.line_count <= 1 || ev->u.upload.pitch_out == ev->u.upload.line_length))
        share_write(r, ch, ev->u.upload.dst_va, ev->u.upload.length);
    else if (ev->kind == VGT_EV_COPY && ev->u.copy.dst_pitch && !ev->u.copy.dst_physical &&
             (!ev->u.copy.multi_line || ev->u.copy.line_count <= 1 ||
              (uint64_t)ev->u.copy.pitch_out * ev->u.copy.line_count == ev->u.copy.bytes))
        share_write(r, ch, ev->u.copy.dst_va, ev->u.copy.bytes);
    if (!r->selected || r->failed) return;
    if (ev->kind == VGT_EV_PROGRAM_BIND || ev->kind == VGT_EV_CLEAR) mark_prepared(r, ev->pos.entry);
    if (ev->kind == VGT_EV_DRAW && ch->have_pending) {
        vgt_draw_info *d = new_record(r);
        if (!d) return;
        *d = ch->pending;
        d->draw = ev->u.draw;
        ch->have_pending = 0;
    } else if (ev->kind == VGT_EV_LAUNCH && !r->cfg.no_launches) {
        vgt_draw_info *d = new_record(r);
        if (!d) return;
        head(ch, d, ev, VGT_DRAWREC_LAUNCH);
        d->launch = ev->u.launch;
        d->launch.qmd_bytes = NULL;
        d->launch.qmd_length = 0;
    } else if (ev->kind == VGT_EV_CLEAR) {
        if (vgt_grow(&r->clears, &r->capclear, r->nclear + 1ull, 16)) { nomem(r, "clears"); return; }
        clear_rec *c = &r->clears[r->nclear++];
        c->pos = ev->pos;
        c->client = ch->wc->client;
        c->channel = ch->wc->handle;
        c->c = ev->u.clear;
    }
}

/* Every method of the channel: 3D ones land in the subchannel's shadow. */
static void on_sem_method(void *ctx, const vgt_method *m)
{
    dchan *ch = ctx;
    if ((m->cls & 0xff) != 0x97 || m->is_host) return;   /* ..97: 3D classes */
    unsigned sc = m->subch & 7;
    draws_shadow *sh = ch->shadow[sc];
    if (!sh || sh->cls != m->cls) {
        if (!sh && !(sh = malloc(sizeof *sh))) { nomem(ch->run, "a method shadow"); return; }
        memset(sh, 0, sizeof *sh);
        sh->cls = m->cls;
        ch->shadow[sc] = sh;
    }
    draws_shadow_set(sh, m->mthd, m->data);
    /* a color target given a format prepares a draw (check_quiet_window) */
    if (m->data && ch->run->selected) {
        uint32_t idx;
        const vgt_method_info *mi = vgt_class_method(vgt_class_find(m->cls), m->mthd, &idx);
        if (mi && !strcmp(mi->name, "SET_COLOR_TARGET_FORMAT")) mark_prepared(ch->run, m->pos.entry);
    }
}

static void chan_free(dchan *ch)
{
    if (!ch) return;
    vgt_sem_free(ch->sem);
    for (unsigned i = 0; i < 8; i++) free(ch->shadow[i]);
    free(ch);
}

static void on_channel(void *ctx, vgt_walk_channel *wc)
{
    draws_run *r = ctx;
    chan_free(wc->user);   /* re-allocated: start over */
    wc->user = NULL;
    dchan *ch = calloc(1, sizeof *ch);
    if (!ch) { nomem(r, "channel state"); return; }
    ch->run = r;
    ch->wc = wc;
    vgt_sem_config cfg = { .on_event = on_event, .ctx = ch, .mem_read = vgt_sem_model_ptr_reader,
                           .mem_ctx = (void *)&r->model, .on_draw_issued = on_draw_issued,
                           .on_method = on_sem_method };
    if (vgt_sem_new(&ch->sem, &cfg, &r->err) != VGT_OK) {
        free(ch);
        r->failed = 1;
        return;
    }
    wc->user = ch;
}

static void on_channel_end(void *ctx, vgt_walk_channel *wc)
{
    (void)ctx;
    chan_free(wc->user);
    wc->user = NULL;
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    (void)rec;
    draws_run *r = ctx;
    r->model = model;
    vgt_mme_trace_model(r->mme, model);
    return 0;
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    draws_run *r = ctx;
    r->cur = s;
    r->selected = s->selected;
    r->nrec = r->ncall = r->nclear = r->nwin = 0;
    return r->failed;
}

static void on_entry(void *ctx, const vgt_walk_submit *s, const vgt_gp_entry *e, uint32_t index)
{
    draws_run *r = ctx;
    if (!r->selected) return;
    while (r->nwin <= index) {
        uint32_t cap = r->capwin;
        if (vgt_grow(&r->win, &r->capwin, r->nwin + 1ull, 16)) { nomem(r, "windows"); return; }
        if (r->capwin != cap) {   /* keep prepared[] as long as win[] */
            uint8_t *p = realloc(r->prepared, r->capwin);
            if (!p) { nomem(r, "windows"); return; }
            r->prepared = p;
        }
        r->prepared[r->nwin] = 0;
        r->win[r->nwin++] = (vgt_draw_window){ 0 };
    }
    r->win[index] = (vgt_draw_window){ .seq = s->seq, .entry = index, .va = e->va, .dwords = e->length };
}


static int on_call(void *ctx, const vgt_mme_trace_call *call)
{
    draws_run *r = ctx;
    const vgt_walk_submit *s = r->cur;
    if (!s || !s->chan->user || call->channel != s->chan->handle || call->client != s->chan->client) return 0;
    dchan *ch = s->chan->user;
    if (r->selected) {
        if (vgt_grow(&r->calls, &r->capcall, r->ncall + 1ull, 16)) return nomem(r, "macro calls");
        call_rec *c = &r->calls[r->ncall++];
        memset(c, 0, sizeof *c);
        c->m.call = call->id;
        c->m.index = call->index;
        c->m.version = call->macro ? (int64_t)call->macro->id : -1;
        c->m.hash = call->macro ? call->macro->hash : 0;
        c->m.name = call->macro ? vgt_mme_trace_macro_name(call->macro, NULL) : "unbound";
        c->m.pos = call->pos;
        c->m.categories = call->categories;
        c->m.nemits = call->nemits;
        c->m.nparams = call->nparams;
        c->m.error = call->status != VGT_OK;
        c->cls = call->cls;
        c->client = call->client;
        c->channel = call->channel;
        c->draws = (call->categories & VGT_MME_EMIT_DRAW) != 0;
    }
    if (vgt_sem_macro_call(ch->sem, call, &r->err) != VGT_OK) {
        r->failed = 1;
        return 1;
    }
    return 0;
}

static int mme_feed(draws_run *r, const vgt_walk_submit *s, const vgt_method *m)
{
    vgt_status rc = vgt_mme_trace_method(r->mme, s, m, &r->err);
    if (rc == VGT_OK) return 0;
    if (rc != VGT_E_EOF) r->failed = 1;
    return 1;
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    draws_run *r = ctx;
    if (mme_feed(r, s, m)) return 1;   /* first: a call this method completes ran before it */
    dchan *ch = s->chan->user;
    if (ch && vgt_sem_method(ch->sem, m, &r->err) != VGT_OK) r->failed = 1;
    return r->failed;
}

static int on_noninc_run(void *ctx, const vgt_walk_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    draws_run *r = ctx;
    if (!m->is_host && vgt_mme_format_for_class(m->cls) != VGT_MME_NONE) {
        uint32_t from = vgt_mme_trace_needs_every_dword(m->mthd) ? 0 : count - 1;
        for (uint32_t i = from; i < count; i++) {
            vgt_method one = vgt_pb_run_method(m, data, i);
            if (mme_feed(r, s, &one)) return 1;
        }
    }
    dchan *ch = s->chan->user;
    if (ch && vgt_sem_noninc_run(ch->sem, m, data, count, 0, &r->err) != VGT_OK) r->failed = 1;
    return r->failed;
}

static int pos_before(const vgt_mpos *a, const vgt_mpos *b)
{
    if (a->seq != b->seq) return a->seq < b->seq;
    if (a->entry != b->entry) return a->entry < b->entry;
    return a->dword <= b->dword;
}

static void attach_calls(const draws_run *r, uint32_t entry, uint32_t client, uint32_t channel, const vgt_mpos *at,
                         vgt_draw_macro *out, uint32_t *nout, uint32_t *total)
{
    *nout = *total = 0;
    for (uint32_t i = 0; i < r->ncall; i++) {
        const call_rec *c = &r->calls[i];
        if (c->m.pos.entry != entry || c->client != client || c->channel != channel) continue;
        (*total)++;
        if (*nout == VGT_DRAWS_MAX_MACROS) continue;
        out[*nout] = c->m;
        out[*nout].after = at && c->m.pos.dword > at->dword;
        (*nout)++;
    }
}

static void finish_record(draws_run *r, vgt_draw_info *d)
{
    d->number = r->number++;
    if (d->pos.entry < r->nwin) d->window = r->win[d->pos.entry];
    else d->window = (vgt_draw_window){ .seq = d->seq, .entry = d->pos.entry };
    attach_calls(r, d->pos.entry, d->client, d->channel, &d->pos, d->macros, &d->nmacros, &d->macros_total);
    if (d->kind != VGT_DRAWREC_DRAW) return;
    /* the submission's clears on this channel up to the draw, the latest VGT_DRAWS_MAX_CLEARS */
    for (uint32_t i = 0; i < r->nclear; i++) {
        const clear_rec *c = &r->clears[i];
        if (c->client != d->client || c->channel != d->channel || !pos_before(&c->pos, &d->pos)) continue;
        if (d->nclears == VGT_DRAWS_MAX_CLEARS) {
            memmove(d->clears, d->clears + 1, (VGT_DRAWS_MAX_CLEARS - 1) * sizeof d->clears[0]);
            d->nclears--;
        }
        d->clears[d->nclears++] = c->c;
    }
    draws_lint(d);
}

/* A window of a submission that drew nothing, which prepared a draw (bound a program or a color target
 * with a format, or cleared) and released macro calls, none of which drew, while macros that draw were
 * uploaded to that object and not called: the draw that was meant to follow never ran. Windows that
 * only set up state (no program, target or clear) are not reported. */
static void check_quiet_window(draws_run *r, const vgt_walk_submit *s, uint32_t entry)
{
    vgt_draw_quiet_window *w = &r->quiet;
    memset(w, 0, sizeof *w);
    if (!r->prepared[entry]) return;
    for (uint32_t i = 0; i < r->nrec; i++)
        if (r->recs[i].kind == VGT_DRAWREC_DRAW) return;   /* the submission drew */
    uint32_t cls = 0;
    for (uint32_t i = 0; i < r->ncall; i++)
        if (r->calls[i].m.pos.entry == entry) {
            if (r->calls[i].draws) return;   /* a macro drew in this window */
            cls = r->calls[i].cls;
        }
    if (!cls) return;
    for (uint32_t i = 0; i < r->nrec; i++)
        if (r->recs[i].pos.entry == entry && r->recs[i].kind == VGT_DRAWREC_DRAW) return;
    attach_calls(r, entry, s->chan->client, s->chan->handle, NULL, w->macros, &w->nmacros, &w->macros_total);
    uint32_t n = vgt_mme_trace_macro_count(r->mme);
    char list[160] = "";
    size_t len = 0;
    unsigned found = 0;
    for (uint32_t i = 0; i < n; i++) {
        const vgt_mme_trace_macro *v = vgt_mme_trace_macro_at(r->mme, i);
        if (v->channel != s->chan->handle || v->client != s->chan->client || v->cls != cls) continue;
        if (v->first_seq > s->seq || strcmp(vgt_mme_trace_macro_name(v, NULL), "draw") != 0) continue;
        int called = 0;
        for (uint32_t k = 0; k < w->nmacros; k++)
            if (w->macros[k].index == v->index) called = 1;
        if (called) continue;
        found++;
        if (len < sizeof list - 16) len += (size_t)snprintf(list + len, sizeof list - len, "%s0x%x", found > 1 ? ", " : "", v->index);
    }
    if (!found) return;
    w->submission = s->index;
    w->client = s->chan->client;
    w->channel = s->chan->handle;
    w->cls = cls;
    w->window = entry < r->nwin ? r->win[entry] : (vgt_draw_window){ .seq = s->seq, .entry = entry };
    char called[160] = "";
    size_t cl = 0;
    for (uint32_t k = 0; k < w->nmacros && cl < sizeof called - 16; k++)
        cl += (size_t)snprintf(called + cl, sizeof called - cl, "%s0x%x", k ? "/" : "", w->macros[k].index);
    draws_lint_add(w->lints, &w->nlints, "draw_macro_not_called",
                   "window %" PRIu64 ":%u (%u bytes) released macros %s but no draw; draw macro%s %s uploaded, not called",
                   w->window.seq, entry, w->window.dwords * 4, called, found > 1 ? "s" : "", list);
    if (r->cfg.on_window && r->cfg.on_window(r->cfg.ctx, w)) r->stopped = 1;
}

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    draws_run *r = ctx;
    if (vgt_mme_trace_submit_end(r->mme, s, &r->err) != VGT_OK && r->err.code != VGT_E_EOF) r->failed = 1;
    dchan *ch = s->chan->user;
    if (ch) vgt_sem_flush(ch->sem);
    r->cur = NULL;
    if (!r->selected || r->failed) return r->failed;
    for (uint32_t i = 0; i < r->nrec && !r->stopped; i++) {
        finish_record(r, &r->recs[i]);
        if (r->cfg.on_draw(r->cfg.ctx, &r->recs[i])) r->stopped = 1;
    }
    for (uint32_t e = 0; e < r->nwin && !r->stopped; e++) check_quiet_window(r, s, e);
    return r->failed || r->stopped;
}

vgt_status vgt_draws_run(const char *path, const vgt_walk_options *opt, const vgt_draws_config *cfg, vgt_error *err)
{
    if (!cfg || !cfg->on_draw) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "vgt_draws_run needs an on_draw callback");
    draws_run *r = calloc(1, sizeof *r);
    if (!r) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "allocating the draws walk");
    r->cfg = *cfg;
    r->shared.cap = VGT_SEM_OVERLAY_BYTES;
    vgt_mme_trace_config mc = { .on_call = on_call, .user = r };
    vgt_status rc = vgt_mme_trace_new(&mc, &r->mme, err);
    if (rc != VGT_OK) { free(r); return rc; }
    vgt_walk_options o = *opt;
    o.deliver_unselected = 1;   /* macros and state must follow every submission */
    vgt_walk_callbacks cb = { .on_record = on_record, .on_channel = on_channel, .on_submit_begin = on_submit_begin,
                              .on_submit_end = on_submit_end, .on_entry = on_entry, .on_method = on_method,
                              .on_noninc_run = on_noninc_run, .on_channel_end = on_channel_end, .ctx = r };
    rc = vgt_walk_path(path, &o, &cb, cfg->stats, err);
    if (rc == VGT_OK && !r->failed && !r->stopped && vgt_mme_trace_finish(r->mme, &r->err) != VGT_OK &&
        r->err.code != VGT_E_EOF)
        r->failed = 1;
    if (rc == VGT_OK && r->failed) rc = r->err.code, *err = r->err;
    if (cfg->budget_note && cfg->budget_note_size) vgt_mme_trace_budget_note(r->mme, cfg->budget_note, cfg->budget_note_size);
    vgt_mme_trace_free(r->mme);
    free(r->recs);
    free(r->calls);
    free(r->clears);
    free(r->win);
    free(r->prepared);
    sem_overlay_free(&r->shared);
    free(r);
    return rc;
}
