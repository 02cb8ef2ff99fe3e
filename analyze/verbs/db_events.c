/* db_events.c: rows of `vgt db` for semantic events: one `events` row each (kind, one-line text, origin:
 * "stream" or "macro" with the macro call's id, the mme_calls.id of the call that emitted it), and
 * a row in the kind's own table (launches, empty_dispatches, uploads, copies, empty_dmas, semaphores, draws,
 * program_binds, clears, notifies) keyed by the events row id. An empty dispatch's row has a launch's columns, an empty
 * DMA's a copy's. */
#include "db_internal.h"
#include "vgt/surface.h"

static void common(db_ctx *c, sqlite3_stmt *st, sqlite3_int64 id, const vgt_event *ev)
{
    sqlite3_bind_int64(st, 1, id);
    db_bind_u64(st, 2, ev->pos.seq);
    db_bind_u64(st, 3, c->submission);
    sqlite3_bind_int64(st, 4, c->channel);
}

static void row_launch(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    const vgt_ev_launch *l = &ev->u.launch;
    int empty = ev->kind == VGT_EV_EMPTY_DISPATCH;
    sqlite3_stmt *st = c->st[empty ? ST_EMPTY_DISPATCH : ST_LAUNCH];
    common(c, st, id, ev);
    db_bind_u64(st, 5, l->qmd_va);
    sqlite3_bind_int(st, 6, l->inline_qmd);
    sqlite3_bind_int(st, 7, l->qmd_known);
    if (!l->decoded) {
        for (int i = 8; i <= 21; i++) sqlite3_bind_null(st, i);
    } else {
        const vgt_qmd *q = &l->qmd;
        sqlite3_bind_text(st, 8, vgt_qmd_version_name(q->version), -1, SQLITE_STATIC);
        for (int i = 0; i < 3; i++) {
            sqlite3_bind_int64(st, 9 + i, q->grid[i]);
            sqlite3_bind_int64(st, 12 + i, q->block[i]);
        }
        db_bind_u64(st, 15, q->program_va);
        sqlite3_bind_int64(st, 16, q->shared_memory);
        sqlite3_bind_int64(st, 17, q->register_count);
        sqlite3_bind_int64(st, 18, q->barrier_count);
        sqlite3_bind_int64(st, 19, q->cb_valid_mask);
        db_bind_u64(st, 20, q->cb[0].va);
        sqlite3_bind_int64(st, 21, q->cb[0].size);
    }
    db_step(c, st, empty ? "empty_dispatches" : "launches");
}

static void row_upload(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    const vgt_ev_upload *u = &ev->u.upload;
    sqlite3_stmt *st = c->st[ST_UPLOAD];
    common(c, st, id, ev);
    db_bind_u64(st, 5, u->dst_va);
    db_bind_u64(st, 6, u->length);
    sqlite3_bind_int64(st, 7, u->line_length);
    sqlite3_bind_int64(st, 8, u->line_count);
    sqlite3_bind_int64(st, 9, u->pitch_out);
    sqlite3_bind_int(st, 10, u->pitch_layout);
    sqlite3_bind_int(st, 11, u->complete);
    if (u->data && c->with_bytes) sqlite3_bind_blob64(st, 12, u->data, u->received < u->length ? u->received : u->length, SQLITE_STATIC);
    else sqlite3_bind_null(st, 12);
    db_step(c, st, "uploads");
}

static void row_copy(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    const vgt_ev_copy *k = &ev->u.copy;
    int empty = ev->kind == VGT_EV_EMPTY_DMA;
    sqlite3_stmt *st = c->st[empty ? ST_EMPTY_DMA : ST_COPY];
    common(c, st, id, ev);
    db_bind_u64(st, 5, k->src_va); db_bind_u64(st, 6, k->dst_va); db_bind_u64(st, 7, k->bytes);
    sqlite3_bind_int64(st, 8, k->line_length); sqlite3_bind_int64(st, 9, k->line_count);
    sqlite3_bind_int64(st, 10, k->pitch_in); sqlite3_bind_int64(st, 11, k->pitch_out);
    sqlite3_bind_int(st, 12, k->src_pitch); sqlite3_bind_int(st, 13, k->dst_pitch);
    sqlite3_bind_int(st, 14, k->multi_line); sqlite3_bind_int(st, 15, k->remap); sqlite3_bind_int(st, 16, k->memset);
    sqlite3_bind_int64(st, 17, k->remap_const_a); sqlite3_bind_int(st, 18, k->semaphore_type);
    if (k->semaphore_type) { db_bind_u64(st, 19, k->sem_va); db_bind_u64(st, 20, k->sem_payload); }
    else { sqlite3_bind_null(st, 19); sqlite3_bind_null(st, 20); }
    db_step(c, st, empty ? "empty_dmas" : "copies");
}

static void row_sem(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    const vgt_ev_sem *s = &ev->u.sem;
    const char *kind = ev->kind == VGT_EV_SEM_RELEASE ? "release" : ev->kind == VGT_EV_SEM_ACQUIRE ? "acquire" : "report";
    sqlite3_stmt *st = c->st[ST_SEMAPHORE];
    common(c, st, id, ev);
    sqlite3_bind_text(st, 5, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, vgt_sem_source_name(s->source), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, vgt_sem_op_name(s->op), -1, SQLITE_STATIC);
    db_bind_u64(st, 8, s->va); db_bind_u64(st, 9, s->payload); sqlite3_bind_int(st, 10, s->size);
    sqlite3_bind_text(st, 11, vgt_sem_red_name(s->reduction), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 12, s->flags); sqlite3_bind_int64(st, 13, s->report);
    db_step(c, st, "semaphores");
}

static void row_draw(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    const vgt_ev_draw *d = &ev->u.draw;
    sqlite3_stmt *st = c->st[ST_DRAW];
    common(c, st, id, ev);
    sqlite3_bind_text(st, 5, vgt_draw_kind_name(d->kind), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, vgt_topology_name(d->topology), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, d->first); sqlite3_bind_int64(st, 8, d->count); sqlite3_bind_int64(st, 9, d->instance_count);
    sqlite3_bind_int(st, 10, d->index_size); db_bind_u64(st, 11, d->index_buffer_va);
    sqlite3_bind_int64(st, 12, d->base_vertex); sqlite3_bind_int64(st, 13, d->base_instance);
    db_step(c, st, "draws");
}

/* bytes: the target's footprint (vgt/surface.h), NULL when its layout or format is not one it describes */
static void row_clear(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    const vgt_ev_clear *k = &ev->u.clear;
    sqlite3_stmt *st = c->st[ST_CLEAR];
    common(c, st, id, ev);
    sqlite3_bind_int(st, 5, k->color_mask);
    sqlite3_bind_int(st, 6, k->depth);
    sqlite3_bind_int(st, 7, k->stencil);
    sqlite3_bind_int64(st, 8, k->target);
    db_bind_u64(st, 9, k->target_va);
    sqlite3_bind_int64(st, 10, k->target_format);
    sqlite3_bind_int64(st, 11, k->target_width);
    sqlite3_bind_int64(st, 12, k->target_height);
    sqlite3_bind_int64(st, 13, k->target_memory);
    vgt_rt_desc s = {.va = k->target_va, .width = k->target_width, .height = k->target_height,
                     .memory = k->target_memory, .format = k->target_format};
    uint64_t span = vgt_rt_span(&s);
    if (span) db_bind_u64(st, 14, span);
    if (k->depth || k->stencil) db_bind_u64(st, 15, k->zt_va);
    sqlite3_bind_int64(st, 16, k->raw);
    db_step(c, st, "clears");
}

static void row_notify(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    sqlite3_stmt *st = c->st[ST_NOTIFY];
    common(c, st, id, ev);
    db_bind_u64(st, 5, ev->u.notify.va);
    sqlite3_bind_int64(st, 6, ev->u.notify.type);
    db_step(c, st, "notifies");
}

static void row_bind(db_ctx *c, sqlite3_int64 id, const vgt_event *ev)
{
    const vgt_ev_program *p = &ev->u.program;
    sqlite3_stmt *st = c->st[ST_BIND];
    common(c, st, id, ev);
    sqlite3_bind_int64(st, 5, p->stage); sqlite3_bind_int64(st, 6, p->type); sqlite3_bind_int(st, 7, p->enabled);
    db_bind_u64(st, 8, p->program_va); sqlite3_bind_int64(st, 9, p->register_count);
    db_step(c, st, "program_binds");
}

void db_event_rows(void *ctx, const vgt_event *ev)
{
    db_ctx *c = ctx;
    if (c->failed || !c->selected) return;
    char text[1024];
    vgt_event_format(ev, text, sizeof text);
    sqlite3_stmt *st = c->st[ST_EVENT];
    db_bind_u64(st, 1, ev->pos.seq);
    db_bind_u64(st, 2, c->submission);
    sqlite3_bind_int64(st, 3, ev->pos.entry);
    sqlite3_bind_int64(st, 4, ev->pos.dword);
    sqlite3_bind_int64(st, 5, c->channel);
    sqlite3_bind_int64(st, 6, ev->subch);
    sqlite3_bind_int64(st, 7, ev->cls);
    sqlite3_bind_text(st, 8, vgt_event_kind_name(ev->kind), -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, text, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 10, vgt_event_origin_name(ev->origin), -1, SQLITE_STATIC);
    if (ev->origin == VGT_ORIGIN_MACRO) db_bind_u64(st, 11, ev->macro_call);
    else sqlite3_bind_null(st, 11);
    if (db_step(c, st, "events")) return;
    sqlite3_int64 id = sqlite3_last_insert_rowid(c->db);
    c->event_rows++;
    switch (ev->kind) {
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH: row_launch(c, id, ev); break;
    case VGT_EV_UPLOAD: row_upload(c, id, ev); break;
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA: row_copy(c, id, ev); break;
    case VGT_EV_SEM_RELEASE: case VGT_EV_SEM_ACQUIRE: case VGT_EV_REPORT: row_sem(c, id, ev); break;
    case VGT_EV_DRAW: row_draw(c, id, ev); break;
    case VGT_EV_PROGRAM_BIND: row_bind(c, id, ev); break;
    case VGT_EV_CLEAR: row_clear(c, id, ev); break;
    case VGT_EV_NOTIFY: row_notify(c, id, ev); break;
    default: break;
    }
}
