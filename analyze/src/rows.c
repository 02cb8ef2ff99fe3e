/* rows.c: vgt/rows.h: one walk, a semantic tracker per channel and the MME trace, rows in batches.
 * The composition is `vgt db`'s (methods fed to the MME trace first, a completed call's emissions to its
 * channel's tracker, trackers flushed at each submission's end), so the counts agree with the db. */
#include "vgt/rows.h"

#include <stdlib.h>
#include <string.h>

#include "vgt/events.h"
#include "vgt/grow.h"
#include "vgt/mme_trace.h"
#include "vgt/walk.h"

#define DEFAULT_BATCH 65536u

static const uint32_t row_sizes[VGT_ROWS_TABLE_COUNT_] = {
    sizeof(vgt_row_submit), sizeof(vgt_row_entry), sizeof(vgt_row_method), sizeof(vgt_row_event),
    sizeof(vgt_row_macro_call)};

uint32_t vgt_rows_size(int table) { return table >= 0 && table < VGT_ROWS_TABLE_COUNT_ ? row_sizes[table] : 0; }

typedef struct rows_buf {
    uint8_t *p;
    uint32_t n;
} rows_buf;

typedef struct rows_ctx {
    const vgt_rows_sink *sink;
    uint32_t cap;
    rows_buf buf[VGT_ROWS_TABLE_COUNT_];
    const vgt_model *model;
    vgt_mme_trace *mme;
    const vgt_walk_submit *cur;
    vgt_row_submit sub;       /* the submission being walked */
    vgt_rows_stats st;
    int stopped, failed;
    vgt_error err;
} rows_ctx;

static int flush_table(rows_ctx *c, int t)
{
    rows_buf *b = &c->buf[t];
    if (!b->n || c->stopped) return c->stopped;
    if (c->sink->batch(c->sink->ctx, t, b->p, b->n)) c->stopped = 1;
    b->n = 0;
    return c->stopped;
}

/* The next free row of table t (flushing a full batch first), or NULL when the table is not wanted or
 * the walk is stopping. */
static void *next_row(rows_ctx *c, int t)
{
    if (!(c->sink->tables & (1u << t)) || c->stopped || c->failed) return NULL;
    rows_buf *b = &c->buf[t];
    if (b->n == c->cap && flush_table(c, t)) return NULL;
    void *row = b->p + (size_t)b->n * row_sizes[t];
    memset(row, 0, row_sizes[t]);
    b->n++;
    return row;
}

static void event_fields(vgt_row_event *r, const vgt_event *ev)
{
    switch (ev->kind) {
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH: {
        const vgt_ev_launch *l = &ev->u.launch;
        r->va = l->qmd_va;
        r->a[6] = l->inline_qmd;
        r->a[7] = l->qmd_known;
        if (l->decoded) {
            for (int i = 0; i < 3; i++) r->a[i] = l->qmd.grid[i], r->a[3 + i] = l->qmd.block[i];
            r->va2 = l->qmd.program_va;
            r->a[8] = l->qmd.shared_memory;
            r->a[9] = l->qmd.register_count;
        }
        break;
    }
    case VGT_EV_DRAW: {
        const vgt_ev_draw *d = &ev->u.draw;
        r->va = d->index_buffer_va;
        r->a[0] = d->kind, r->a[1] = d->topology, r->a[2] = d->first, r->a[3] = d->count;
        r->a[4] = d->instance_count, r->a[5] = d->index_size, r->a[6] = d->base_vertex, r->a[7] = d->base_instance;
        break;
    }
    case VGT_EV_SEM_RELEASE: case VGT_EV_SEM_ACQUIRE: case VGT_EV_REPORT: {
        const vgt_ev_sem *s = &ev->u.sem;
        r->va = s->va, r->va2 = s->payload;
        r->a[0] = s->source, r->a[1] = s->op, r->a[2] = s->size, r->a[3] = s->reduction, r->a[4] = s->flags;
        r->a[5] = s->report;
        break;
    }
    case VGT_EV_UPLOAD: {
        const vgt_ev_upload *u = &ev->u.upload;
        r->va = u->dst_va, r->va2 = u->length;
        r->a[0] = u->line_length, r->a[1] = u->line_count, r->a[2] = u->complete;
        break;
    }
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA: {
        const vgt_ev_copy *k = &ev->u.copy;
        r->va = k->dst_va, r->va2 = k->src_va;
        r->a[0] = (uint32_t)k->bytes, r->a[1] = k->line_count, r->a[2] = k->line_length, r->a[3] = k->memset;
        r->a[4] = k->semaphore_type;
        break;
    }
    case VGT_EV_PROGRAM_BIND: {
        const vgt_ev_program *p = &ev->u.program;
        r->va = p->program_va;
        r->a[0] = p->stage, r->a[1] = p->type, r->a[2] = p->enabled, r->a[3] = p->register_count;
        break;
    }
    default:
        break;
    }
}

static void on_event(void *ctx, const vgt_event *ev)
{
    rows_ctx *c = ctx;
    if (ev->kind == VGT_EV_LAUNCH) c->sub.launches++;
    else if (ev->kind == VGT_EV_DRAW) c->sub.draws++;
    else if (ev->kind == VGT_EV_SEM_RELEASE) c->sub.sem_releases++;
    uint64_t id = c->st.events++;
    vgt_row_event *r = next_row(c, VGT_ROWS_EVENTS);
    if (!r) return;
    r->id = id;
    r->submission = c->sub.submission;
    r->seq = ev->pos.seq;
    r->macro_call = ev->macro_call;
    r->kind = ev->kind;
    r->origin = ev->origin;
    r->channel = (uint32_t)c->sub.channel;
    r->cls = ev->cls;
    r->subch = ev->subch;
    r->entry = ev->pos.entry;
    r->dword = ev->pos.dword;
    event_fields(r, ev);
}

static void on_channel(void *ctx, vgt_walk_channel *chan)
{
    rows_ctx *c = ctx;
    vgt_sem_config cfg = {.on_event = on_event, .ctx = c, .mem_read = vgt_sem_model_ptr_reader,
                          .mem_ctx = (void *)&c->model};
    if (vgt_sem_attach(&chan->user, &cfg, &c->err) != VGT_OK) c->failed = 1;
}

static void on_channel_end(void *ctx, vgt_walk_channel *chan)
{
    (void)ctx;
    vgt_sem_detach(&chan->user);
}

static int on_call(void *ctx, const vgt_mme_trace_call *call)
{
    rows_ctx *c = ctx;
    const vgt_walk_submit *s = c->cur;
    c->st.macro_calls++;
    c->sub.macro_calls++;
    vgt_row_macro_call *r = next_row(c, VGT_ROWS_MACRO_CALLS);
    if (r) {
        r->id = call->id;
        r->submission = call->submission;
        r->seq = call->seq;
        r->hash = call->macro ? call->macro->hash : 0;
        r->instructions = call->result.instructions;
        r->channel = call->channel, r->cls = call->cls, r->subch = call->subch;
        r->entry = call->pos.entry, r->dword = call->pos.dword;
        r->index = call->index;
        r->version = call->macro ? call->macro->id : UINT32_MAX;
        r->nparams = call->nparams, r->nemits = call->nemits;
        r->status = (uint32_t)call->status;
        r->categories = call->categories;
    }
    if (!s || !s->chan->user || call->channel != s->chan->handle || call->client != s->chan->client) return c->stopped;
    if (vgt_sem_macro_call(s->chan->user, call, &c->err) != VGT_OK) c->failed = 1;
    return c->failed || c->stopped;
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    rows_ctx *c = ctx;
    c->model = model;
    c->st.records++;
    if (c->mme) vgt_mme_trace_model(c->mme, model);
    if (c->sink->progress) c->sink->progress(c->sink->ctx, rec->chunk_offset);
    return c->failed || c->stopped;
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    rows_ctx *c = ctx;
    c->cur = s;
    const vgt_rec_gpfifo_submit *g = s->sub;
    c->sub = (vgt_row_submit){.submission = s->index, .seq = s->seq, .ts = s->rec->ts, .client = g->client,
                              .channel = g->channel, .channel_class = s->chan->cls, .entry_count = g->entry_count,
                              .segment_count = g->segment_count};
    return c->failed || c->stopped;
}

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    rows_ctx *c = ctx;
    if (c->mme && vgt_mme_trace_submit_end(c->mme, s, &c->err) != VGT_OK) c->failed = 1;
    if (s->chan->user) vgt_sem_flush(s->chan->user);
    c->cur = NULL;
    c->st.submissions++;
    vgt_row_submit *r = next_row(c, VGT_ROWS_SUBMITS);
    if (r) *r = c->sub;
    return c->failed || c->stopped;
}

static void on_entry(void *ctx, const vgt_walk_submit *s, const vgt_gp_entry *e, uint32_t index)
{
    rows_ctx *c = ctx;
    c->st.entries++;
    c->sub.pb_bytes += (uint64_t)e->length * 4u;
    vgt_row_entry *r = next_row(c, VGT_ROWS_ENTRIES);
    if (!r) return;
    *r = (vgt_row_entry){.submission = s->index, .entry = index, .seq = s->seq, .ts = s->rec->ts, .raw = e->raw,
                         .va = e->va, .length = e->length, .level = e->level, .is_control = e->is_control,
                         .opcode = e->opcode};
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    rows_ctx *c = ctx;
    /* first: a macro call this method completes ran before it */
    if (c->mme && vgt_mme_trace_method(c->mme, s, m, &c->err) != VGT_OK) return c->failed = 1;
    c->st.methods++;
    c->sub.methods++;
    vgt_row_method *r = next_row(c, VGT_ROWS_METHODS);
    if (r) {
        r->submission = s->index;
        r->seq = m->pos.seq;
        r->channel = s->chan->handle;
        r->cls = m->cls, r->mthd = m->mthd, r->data = m->data;
        r->entry = m->pos.entry, r->dword = m->pos.dword, r->subch = m->subch;
        r->flags = m->kind | (m->is_host ? VGT_ROW_METHOD_HOST : 0) | (m->first ? VGT_ROW_METHOD_FIRST : 0) |
                   (m->masked ? VGT_ROW_METHOD_MASKED : 0);
    }
    if (s->chan->user && vgt_sem_method(s->chan->user, m, &c->err) != VGT_OK) c->failed = 1;
    return c->failed || c->stopped;
}

vgt_status vgt_rows_walk(const char *path, const vgt_rows_sink *sink, vgt_rows_stats *stats, vgt_error *err)
{
    if (!path || !sink || !sink->batch) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "rows: no path or no batch callback");
    rows_ctx c;
    memset(&c, 0, sizeof c);
    c.sink = sink;
    c.cap = sink->batch_rows ? sink->batch_rows : DEFAULT_BATCH;
    vgt_status rc = VGT_OK;
    for (int t = 0; t < VGT_ROWS_TABLE_COUNT_ && rc == VGT_OK; t++)
        if ((sink->tables & (1u << t)) && !(c.buf[t].p = malloc((size_t)c.cap * row_sizes[t])))
            rc = VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "rows: no memory for %u rows of table %d", c.cap, t);
    vgt_mme_trace_config mc = {.on_call = on_call, .user = &c};
    if (rc == VGT_OK) rc = vgt_mme_trace_new(&mc, &c.mme, err);
    if (rc == VGT_OK) {
        vgt_walk_options opt = vgt_walk_defaults();
        vgt_walk_callbacks cb = {.on_record = on_record, .on_channel = on_channel, .on_submit_begin = on_submit_begin,
                                 .on_submit_end = on_submit_end, .on_entry = on_entry, .on_method = on_method,
                                 .on_channel_end = on_channel_end, .ctx = &c};
        rc = vgt_walk_path(path, &opt, &cb, NULL, err);
        if (rc == VGT_OK && !c.failed && !c.stopped && vgt_mme_trace_finish(c.mme, &c.err) != VGT_OK &&
            c.err.code != VGT_E_EOF)
            c.failed = 1;
        if (rc == VGT_OK && c.failed) {
            rc = c.err.code;
            if (err) *err = c.err;
        }
    }
    if (c.mme) {
        c.st.macro_calls_refused = vgt_mme_trace_stats_get(c.mme)->calls_refused;
        vgt_mme_trace_budget_note(c.mme, c.st.mme_budget_note, sizeof c.st.mme_budget_note);
    }
    vgt_mme_trace_free(c.mme);
    for (int t = 0; t < VGT_ROWS_TABLE_COUNT_; t++) {
        if (rc == VGT_OK && c.buf[t].p) flush_table(&c, t);
        free(c.buf[t].p);
    }
    if (stats) *stats = c.st;
    return rc;
}

/* ---- vgt_rows_load: every row in memory ---- */

typedef struct load_ctx {
    vgt_rows_all *all;
    void (*progress)(void *ctx, uint64_t chunk_offset);
    void *ctx;
    int nomem;
} load_ctx;

static int load_batch(void *ctx, int table, const void *rows, uint32_t n)
{
    load_ctx *l = ctx;
    vgt_rows_all *a = l->all;
    uint64_t need = a->count[table] + n, size = row_sizes[table];
    if (vgt_grow_u64(&a->rows[table], &a->cap_[table], need, size, 1024)) return l->nomem = 1;
    memcpy((uint8_t *)a->rows[table] + a->count[table] * size, rows, (size_t)n * size);
    a->count[table] = need;
    return 0;
}

static void load_progress(void *ctx, uint64_t off)
{
    load_ctx *l = ctx;
    if (l->progress) l->progress(l->ctx, off);
}

vgt_status vgt_rows_load(const char *path, unsigned tables, vgt_rows_all *all, void (*progress)(void *ctx, uint64_t chunk_offset),
                         void *ctx, vgt_error *err)
{
    memset(all, 0, sizeof *all);
    load_ctx l = {.all = all, .progress = progress, .ctx = ctx};
    vgt_rows_sink sink = {.batch = load_batch, .ctx = &l, .tables = tables, .progress = load_progress};
    vgt_status rc = vgt_rows_walk(path, &sink, &all->stats, err);
    if (rc == VGT_OK && l.nomem) rc = VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "rows: no memory for the tables of %s", path);
    return rc;
}

void vgt_rows_free(vgt_rows_all *all)
{
    for (int t = 0; t < VGT_ROWS_TABLE_COUNT_; t++) free(all->rows[t]);
    memset(all, 0, sizeof *all);
}
