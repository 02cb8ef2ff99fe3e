/* engine.c: the replay engine (see include/vgt/replay.h).
 *
 * Every record is first folded into the trace model (vgt_model_apply), which is the one owner of
 * "what existed at sequence N"; the engine then turns the record into backend operations, reading the
 * details it needs (a channel's class and ring, a memory object's aperture) back from the model.
 *
 * Per channel the engine goes through these states (the function that makes each transition):
 *
 *   (none) --on_channel(): CHANNEL record, backend channel_create--> CREATED
 *   CREATED --on_engine_object(): ENGINE_OBJECT, backend object_create--> CREATED (objects bound)
 *   CREATED --on_submit(): GPFIFO_SUBMIT inside --submits--> the lane runs it, checks open --> RUNNING
 *   CREATED/RUNNING --on_submit(): before --submits--> the lane runs it unchecked, or with
 *            prefix_state_only submit(STATE_ONLY): bindings and macros tracked, no work --> RUNNING
 *   any --on_submit(): past --submits--> done (vgt_replay_done: reading may stop)
 *   RUNNING --(backend) acquire not satisfied--> BLOCKED --(another channel's release, a host MEMORY
 *            write: the backend retries)--> RUNNING
 *   any --vgt_replay_finish(): backend idle--> DONE, or reported as never finishing
 *
 * The checks of a submission are open from its run until the next GPFIFO_SUBMIT (check.c): the
 * MEMORY and SEMAPHORE records in between are compared with what the backend produced.
 *
 * From trace to the replayed doorbell:
 *
 *   record --(plan.c: held back, planned; then in order)--> vgt_model_apply --> on_<record>()
 *     GPFIFO_SUBMIT --> stream_decode (stream.c: the channel's one decoder and semantic tracker -->
 *       subscribers: reloc, volatile, mme_guard, rt) --> [census before] --> lane (lanes.c: segments
 *       written, entries rewritten) --> backend submit (the GPFIFO entries, the doorbell) --> wait -->
 *       [census after] --> checks of the records that follow (check.c)
 *
 * The backend opens once the plan is made (plan.c chooses its reserved range), at vgt_replay_open when
 * nothing needs planning. A live replay on hardware plans only when asked (plan.c): it opens the backend
 * at vgt_replay_open, so that the program's setup (channels, objects, mappings) is replayed as it is
 * recorded, during the program's own start-up, and the first submission costs what the others do.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "vgt/cuda.h"
#include "vgt/grow.h"

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

vgt_replay_options vgt_replay_defaults(void)
{
    vgt_replay_options o;
    memset(&o, 0, sizeof o);
    o.lane = VGT_LANE_AUTO;
    o.submits.first = 0;
    o.submits.last = UINT64_MAX;
    return o;
}

void engine_report(vgt_replay *rp, vgt_replay_report *r)
{
    if (rp->opt.report) rp->opt.report(rp->opt.report_ctx, r);
}

/* A report of this kind about the current submission, its message formatted. */
__attribute__((format(printf, 3, 0))) static void engine_say(vgt_replay *rp, int kind, const char *fmt, va_list ap)
{
    char msg[VGT_ERROR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    vgt_replay_report r = {.kind = kind, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .channel = rp->cur_channel, .msg = msg};
    engine_report(rp, &r);
}

void engine_warn(vgt_replay *rp, const char *fmt, ...)
{
    rp->sum.warnings++;
    va_list ap;
    va_start(ap, fmt);
    engine_say(rp, VGT_RPT_WARNING, fmt, ap);
    va_end(ap);
}

void engine_note(vgt_replay *rp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    engine_say(rp, VGT_RPT_RELOCATION, fmt, ap);
    va_end(ap);
}

static void on_backend_event(void *ctx, const vgt_backend_event *ev);

/* The caller's relocation inputs are copied: the caller may free them once the replay is open. */
static vgt_status copy_reloc_options(vgt_replay *rp, vgt_error *err)
{
    const vgt_replay_options *o = &rp->opt;
    if (o->nrelocate) {
        if (!(rp->relocate = malloc((size_t)o->nrelocate * sizeof *rp->relocate)))
            return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory for %u relocations", o->nrelocate);
        memcpy(rp->relocate, o->relocate, (size_t)o->nrelocate * sizeof *rp->relocate);
    }
    rp->opt.relocate = rp->relocate;
    return VGT_OK;
}

vgt_status engine_start(vgt_replay *rp, vgt_error *err)
{
    if (rp->started) return VGT_OK;
    VGT_TRY(rp->ops->open(&rp->be, &rp->opt.backend_cfg, err));
    rp->started = 1;
    if (rp->ops->set_event_handler) rp->ops->set_event_handler(rp->be, on_backend_event, rp);
    return rp->ops->vaspace_create(rp->be, &rp->vas, err);
}

static void on_backend_event(void *ctx, const vgt_backend_event *ev)
{
    vgt_replay *rp = ctx;
    vgt_replay_report r = {.kind = VGT_RPT_EVENT, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .channel = rp->cur_channel, .event_kind = ev->kind, .msg = ev->msg};
    engine_report(rp, &r);
    if (ev->kind == VGT_BEV_FAULT) {
        int64_t ci = rp->run_chan ? rp->run_chan - rp->chans : -1;
        for (uint32_t i = 0; ci < 0 && i < rp->nchans; i++)
            if (rp->chans[i].handle == rp->cur_channel) ci = i;
        if (ci >= 0) rp->chans[ci].cnt.faults++;
    }
    if (ev->kind == VGT_BEV_FAULT && ev->pb_va && rp->run_sub) engine_fault_window(rp, ev->pb_va);
}

vgt_status vgt_replay_open(vgt_replay **out, const vgt_replay_options *o, vgt_error *err)
{
    *out = NULL;
    vgt_replay *rp = calloc(1, sizeof *rp);
    if (!rp) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory");
    rp->opt = o ? *o : vgt_replay_defaults();
    rp->ops = rp->opt.backend ? rp->opt.backend : vgt_backend_auto(NULL, 0);
    rp->cur_index = -1;
    rp->received_seq = UINT64_MAX;
    rp->sum.live = rp->opt.live;
    rp->wait_demand = rp->sum.wait_demand = rp->opt.wait_demand && (rp->ops->caps() & VGT_CAP_ASYNC) && !rp->opt.no_wait;
    vgt_status rc = rp->ops->probe(err);
    if (rc != VGT_OK) goto fail;
    uint32_t caps = rp->ops->caps();
    rp->lane = rp->opt.lane == VGT_LANE_AUTO ? lane_auto(caps) : lane_find(rp->opt.lane);
    if (!rp->lane || !(caps & rp->lane->cap) || !rp->lane->run) {
        rc = VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "lane %s is not implemented by backend %s",
                      rp->lane ? rp->lane->name : vgt_lane_name(rp->opt.lane), rp->ops->name);
        goto fail;
    }
    if ((rc = copy_reloc_options(rp, err)) != VGT_OK) goto fail;
    if ((rc = vgt_model_new(&rp->model, err)) != VGT_OK) goto fail;
    if (rp->opt.model_memory_limit) vgt_model_set_memory_limit(rp->model, rp->opt.model_memory_limit);
    stream_start(rp);
    vgt_mme_budget_init(&rp->mme_guard_budget, 0, 0, 0);
    if (plan_wanted(rp)) rp->planning = 1;   /* the backend opens once the plan is made */
    else if ((rc = engine_start(rp, err)) != VGT_OK) goto fail;
    rp->sum.backend = rp->ops->name;
    rp->sum.lane = rp->lane->name;
    rp->sum.limits_note = rp->ops->limits_note;
    rp->sum.work_counted = (rp->ops->caps() & VGT_CAP_DECODES) != 0;
    *out = rp;
    return VGT_OK;
fail:
    vgt_replay_close(rp);
    return rc;
}

void vgt_replay_close(vgt_replay *rp)
{
    if (!rp) return;
    if (rp->lane && rp->lane->close) rp->lane->close(rp);
    if (rp->be) rp->ops->close(rp->be);
    if (rp->model) vgt_model_free(rp->model);
    for (uint32_t i = 0; i < rp->nchans; i++) stream_channel_free(&rp->chans[i]);
    lane_synth_free(rp);
    sked_guard_free(rp);
    plan_free(rp);
    free(rp->patch_cur.entry_va);
    free(rp->moves);
    for (uint32_t i = 0; i < rp->nstate; i++) free(rp->state[i].text);
    free(rp->state);
    free(rp->mapped_mem);
    free(rp->relocate);
    free(rp->avoid);
    free(rp->cnt_out);
    free(rp->pbcopy);
    free(rp->seg_off);
    census_free(rp);
    draw_cuts_free(rp);
    free(rp->volat);
    free(rp->pb_pages);
    free(rp->co_ranges);
    free(rp->chans);
    vgt_u64map_free(&rp->chan_ix);
    free(rp->segs.segs);
    free(rp->wlog);
    free(rp->mask);
    free(rp->buf);
    free(rp->prev);
    free(rp);
}

/* ---- records that rebuild state ---- */

/* Hashed (rp->chan_ix): a trace with 100,000 channels looks one up per submission. */
static int64_t channel_index(const vgt_replay *rp, uint32_t client, uint32_t handle)
{
    uint32_t i;
    return vgt_u64map_get(&rp->chan_ix, vgt_u64map_handle_key(client, handle), &i) ? (int64_t)i : -1;
}

static vgt_status on_channel(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_channel c;
    VGT_TRY(vgt_decode_channel(rec, &c, err));
    if (c.status != 0 || channel_index(rp, c.client, c.handle) >= 0) return VGT_OK;
    const vgt_model_channel *mc = vgt_model_channel_find(rp->model, c.client, c.handle);
    if (!mc) return VGT_OK;
    capture_only_note_channel(rp, &mc->rec);
    vgt_backend_channel_desc d = {.vas = rp->vas, .cls = mc->rec.cls, .ring_va = mc->rec.ring_va,
                                  .entries = mc->rec.entries, .handle = mc->rec.handle};
    const vgt_model_object *grp = vgt_model_object_find(rp->model, c.client, c.parent);
    if (grp && grp->cls == VGT_CLASS_CHANNEL_GROUP) {   /* CUDA: up to 8 channels in one TSG; Vulkan: 2 */
        d.group_client = c.client;
        d.group = c.parent;
        d.context_share = mc->rec.context_share;   /* Vulkan: one per channel (own VEID); CUDA: one per group */
        const vgt_model_object *share = vgt_model_object_find(rp->model, c.client, d.context_share);
        if (share && share->has_alloc_flags) {
            d.share_flags = share->alloc_flags;
            d.has_share_flags = 1;
        }
    }
    const vgt_model_object *self = vgt_model_object_find(rp->model, c.client, c.handle);
    if (self && self->has_alloc_flags) {
        d.alloc_flags = self->alloc_flags;
        d.has_alloc_flags = 1;
    }
    uint32_t id;
    vgt_error e;
    if (rp->ops->channel_create(rp->be, &d, &id, &e) != VGT_OK) {
        engine_warn(rp, "channel 0x%x (class 0x%04x, seq %llu) not created: %s", c.handle, c.cls,
                    (unsigned long long)rec->seq, e.msg);
        return VGT_OK;
    }
    if (vgt_grow(&rp->chans, &rp->cap_chans, rp->nchans + 1ull, 8))
        return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "replay: out of memory at seq %llu", (unsigned long long)rec->seq);
    if (vgt_u64map_put(&rp->chan_ix, vgt_u64map_handle_key(c.client, c.handle), rp->nchans))
        return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "replay: out of memory at seq %llu", (unsigned long long)rec->seq);
    rp->chans[rp->nchans++] = (engine_channel){.client = c.client, .handle = c.handle, .id = id, .cls = mc->rec.cls,
                                               .cnt = {.client = c.client, .handle = c.handle}};
    return VGT_OK;
}

/* A trace cut out of a longer one resumes each channel's decoder from its CHANNEL_STATE (format 1.1). */
static vgt_status on_channel_state(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_channel_state cs;
    VGT_TRY(vgt_decode_channel_state(rec, &cs, err));
    int64_t i = channel_index(rp, cs.client, cs.channel);
    if (i < 0) return VGT_OK;   /* the model ignores it too: not a live channel */
    stream_channel_free(&rp->chans[i]);   /* the channel's decoder starts again from the model's state */
    if (!rp->ops->channel_state) {
        engine_warn(rp, "CHANNEL_STATE at seq %llu: backend %s cannot resume channel 0x%x's subchannel bindings",
                    (unsigned long long)rec->seq, rp->ops->name, cs.channel);
        return VGT_OK;
    }
    return rp->ops->channel_state(rp->be, rp->chans[i].id, &cs, err);
}

/* ... and restores its engines' state from its CHANNEL_METHODS (format 1.1): the MME program and class
 * state, executed as if pushed before the channel's next submission but not counted as submitted work. */
static vgt_status on_channel_methods(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_channel_methods cm;
    VGT_TRY(vgt_decode_channel_methods(rec, &cm, err));
    int64_t i = channel_index(rp, cm.client, cm.channel);
    uint32_t n = vgt_channel_methods_count(&cm);
    if (i < 0 || !n) return VGT_OK;   /* not a live channel: the model ignores it too */
    if (!rp->ops->channel_methods) {
        engine_warn(rp, "CHANNEL_METHODS at seq %llu: backend %s cannot restore channel 0x%x's engine state (%u writes)",
                    (unsigned long long)rec->seq, rp->ops->name, cm.channel, n);
        return VGT_OK;
    }
    vgt_state_method *m = malloc((size_t)n * sizeof *m);   /* n <= VGT_MAX_RECORD_PAYLOAD / 8: the decoder checked */
    if (!m) return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "replay: no memory for %u state writes at seq %llu", n,
                            (unsigned long long)rec->seq);
    for (uint32_t k = 0; k < n; k++) m[k] = vgt_channel_method_at(&cm, k);
    if (mme_guard_state(rp, &rp->chans[i], m, n)) {   /* the restore calls a macro that raises an exception */
        free(m);
        return engine_refuse(rp, &rp->chans[i]);
    }
    if (rp->ops->set_context) rp->ops->set_context(rp->be, rec->seq);
    vgt_status st = rp->ops->channel_methods(rp->be, rp->chans[i].id, m, n, err);
    free(m);
    return st;
}

static vgt_status on_engine_object(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_engine_object o;
    VGT_TRY(vgt_decode_engine_object(rec, &o, err));
    if (o.status != 0) return VGT_OK;
    int64_t i = channel_index(rp, o.client, o.channel);
    if (i < 0) {
        engine_warn(rp, "engine object 0x%x (class 0x%04x, seq %llu) names channel 0x%x, which was never created",
                    o.handle, o.cls, (unsigned long long)rec->seq, o.channel);
        return VGT_OK;
    }
    vgt_error e;
    if (rp->ops->object_create(rp->be, rp->chans[i].id, o.cls, o.handle, &e) != VGT_OK)
        engine_warn(rp, "engine object 0x%x at seq %llu: %s", o.handle, (unsigned long long)rec->seq, e.msg);
    return VGT_OK;
}

/* 1 when the memory object was mapped before (a set of keys, open addressing; grows at half full).
 * Remembers it otherwise. Only such a mapping can be an alias: the search below is skipped for all
 * the others. On no memory, answers 1 (search: slower, never wrong). */
static int mapped_before(vgt_replay *rp, uint32_t client, uint32_t memory)
{
    uint64_t key = (uint64_t)client << 32 | memory | 1ull << 63;   /* never 0 */
    if ((rp->nmapped_mem + 1) * 2 > rp->cap_mapped_mem) {
        uint32_t nc = rp->cap_mapped_mem ? rp->cap_mapped_mem * 2 : 256;
        uint64_t *n = calloc(nc, sizeof *n);
        if (!n) return 1;
        for (uint32_t i = 0; i < rp->cap_mapped_mem; i++) {
            if (!rp->mapped_mem[i]) continue;
            uint32_t j = (uint32_t)(rp->mapped_mem[i] * 0x9E3779B97F4A7C15ull >> 40) & (nc - 1);
            while (n[j]) j = (j + 1) & (nc - 1);
            n[j] = rp->mapped_mem[i];
        }
        free(rp->mapped_mem);
        rp->mapped_mem = n;
        rp->cap_mapped_mem = nc;
    }
    uint32_t j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & (rp->cap_mapped_mem - 1);
    for (; rp->mapped_mem[j]; j = (j + 1) & (rp->cap_mapped_mem - 1))
        if (rp->mapped_mem[j] == key) return 1;
    rp->mapped_mem[j] = key;
    rp->nmapped_mem++;
    return 0;
}

/* The live mapping of the same memory object (another GPU_MAP of it) that covers the bytes g maps. */
static const vgt_model_mapping *alias_source(vgt_replay *rp, const vgt_rec_gpu_map *g, uint64_t seq)
{
    if (!g->memory || !mapped_before(rp, g->client, g->memory)) return NULL;
    for (uint32_t i = 0, n = vgt_model_mapping_count(rp->model); i < n; i++) {
        const vgt_model_mapping *m = vgt_model_mapping_at(rp->model, i);
        if (m->map_seq == seq || m->client != g->client || m->memory != g->memory || m->gpu_va == g->gpu_va) continue;
        if (m->offset <= g->offset && g->offset + g->length <= m->offset + m->length) return m;
    }
    return NULL;
}

/* A memory object mapped a second time: the backend maps the new VA onto the first mapping's storage,
 * so that writes through either VA are seen through both. 1 when done; 0: map separate storage (with a
 * warning when the object was mapped before). */
static int map_as_alias(vgt_replay *rp, const vgt_rec_gpu_map *g, uint64_t seq, const addr_place_out *at)
{
    const vgt_model_mapping *src = alias_source(rp, g, seq);
    if (!src) return 0;
    uint64_t src_va = addr_to_replay(rp, src->gpu_va + (g->offset - src->offset));
    vgt_error e;
    vgt_error_clear(&e);
    if (!rp->ops->map_alias) VGT_FAIL(&e, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend %s cannot alias", rp->ops->name);
    else if (rp->ops->map_alias(rp->be, rp->vas, at->va, g->length, src_va, &e) == VGT_OK) {
        rp->sum.aliases++;
        engine_note(rp, "GPU_MAP seq %llu: memory 0x%x (offset 0x%llx, 0x%llx bytes) at 0x%llx is an alias of its "
                    "mapping at 0x%llx (GPU_MAP seq %llu): one storage", (unsigned long long)seq, g->memory,
                    (unsigned long long)g->offset, (unsigned long long)g->length, (unsigned long long)at->va,
                    (unsigned long long)src_va, (unsigned long long)src->map_seq);
        return 1;
    }
    rp->sum.aliases_unreproduced++;
    engine_warn(rp, "GPU_MAP seq %llu: memory 0x%x at 0x%llx is also mapped at 0x%llx (GPU_MAP seq %llu) but the alias "
                "is not reproduced (%s): separate storage, so writes through one VA are not seen through the other",
                (unsigned long long)seq, g->memory, (unsigned long long)at->va, (unsigned long long)src_va,
                (unsigned long long)src->map_seq, e.msg);
    return 0;
}

static vgt_status on_gpu_map(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_gpu_map g;
    VGT_TRY(vgt_decode_gpu_map(rec, &g, err));
    if (g.status != 0 || g.length == 0) return VGT_OK;
    addr_place_out at;
    VGT_TRY(addr_place(rp, &g, rec->seq, &at, err));
    if (map_as_alias(rp, &g, rec->seq, &at)) return VGT_OK;
    const vgt_model_object *mo = vgt_model_object_find(rp->model, g.client, g.memory);
    vgt_error e;
    if (rp->ops->map(rp->be, rp->vas, at.map_va, at.map_len, mo ? mo->aperture : VGT_APERTURE_UNKNOWN, &e) != VGT_OK)
        engine_warn(rp, "GPU_MAP at seq %llu (VA 0x%llx, %llu bytes%s) not replayed: %s", (unsigned long long)rec->seq,
                    (unsigned long long)g.gpu_va, (unsigned long long)g.length, at.moved ? ", relocated" : "", e.msg);
    return VGT_OK;
}

static uint64_t submit_timeout_ms(const vgt_replay *rp)
{
    return rp->opt.submit_timeout_ms ? rp->opt.submit_timeout_ms : VGT_REPLAY_DEFAULT_SUBMIT_TIMEOUT_MS;
}

/* The captured program unmapped memory only once its GPU work was done; the replay may still be running
 * that work (--no-wait, or a submission reported blocked), and unmapping under it faults the GPU: the
 * H200 bench run of vadd with --no-wait took an MMU fault (Xid 31, GPCCLIENT_T1 FAULT_PDE VIRT_READ at
 * 0x7fef8e800000, the range GPU_UNMAP seq 3950 removes) while every waited replay of it was clean. So
 * an asynchronous backend is drained first (a faulted channel counts as finished: the second call skips
 * it); 0 when work still runs. */
static int settle_before_unmap(vgt_replay *rp)
{
    if (!rp->unsettled || !(rp->ops->caps() & VGT_CAP_ASYNC) || !rp->ops->idle) return 1;
    vgt_error e;
    vgt_status rc = VGT_E_FAULT;
    for (int i = 0; i < 2 && rc == VGT_E_FAULT; i++) rc = rp->ops->idle(rp->be, submit_timeout_ms(rp) * 1000000ull, &e);
    if (rc == VGT_OK) rp->unsettled = 0, rp->ninflight = 0;
    return rc == VGT_OK;
}

static vgt_status on_gpu_unmap(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_gpu_unmap g;
    VGT_TRY(vgt_decode_gpu_unmap(rec, &g, err));
    if (g.status != 0 || g.length == 0) return VGT_OK;
    if (!settle_before_unmap(rp)) {
        engine_warn(rp, "GPU_UNMAP at seq %llu (VA 0x%llx, %llu bytes) left mapped: GPU work submitted before it is "
                    "still running after %llu ms, and unmapping under it would fault", (unsigned long long)rec->seq,
                    (unsigned long long)g.gpu_va, (unsigned long long)g.length,
                    (unsigned long long)submit_timeout_ms(rp));
        return VGT_OK;
    }
    vgt_error e;
    uint64_t va = addr_to_replay(rp, g.gpu_va), len = g.length;
    const addr_move *mv = addr_move_find(rp, g.gpu_va);
    if (mv && mv->va == g.gpu_va) {   /* what addr_place mapped: page aligned around the range */
        va = mv->new_va & ~0xfffull;
        len = ((mv->new_va & 0xfff) + g.length + 0xfff) & ~0xfffull;
    }
    if (rp->ops->unmap(rp->be, rp->vas, va, len, &e) != VGT_OK)
        engine_warn(rp, "GPU_UNMAP at seq %llu: %s", (unsigned long long)rec->seq, e.msg);
    addr_unmapped(rp, g.gpu_va, g.length);
    return VGT_OK;
}

/* The drivers unmap a range before mapping it (RM answers NV_OK when nothing is mapped there): such an
 * unmap has nothing to undo on the backend. Asked before the model applies the record. */
static int unmaps_nothing(const vgt_replay *rp, const vgt_record *rec)
{
    vgt_rec_gpu_unmap g;
    if (rec->type != VGT_REC_GPU_UNMAP || vgt_decode_gpu_unmap(rec, &g, NULL) != VGT_OK) return 0;
    return !vgt_model_mapping_find(rp->model, g.gpu_va);
}

/* MEMORY: initial and changed contents are host writes (checked first, in vgt_replay_record, against
 * what the last submission wrote); observed contents are only compared, never written. */
static vgt_status on_memory(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_memory m;
    VGT_TRY(vgt_decode_memory(rec, &m, err));
    if (m.reason == VGT_MEM_OBSERVED && rp->opt.census && m.length) census_watch(rp, m.gpu_va, m.length, "observed");
    if (m.reason == VGT_MEM_OBSERVED) state_note(rp, 0, m.gpu_va, m.length, rec->seq);
    if (m.reason == VGT_MEM_OBSERVED || m.length == 0) return VGT_OK;
    engine_settle(rp, SETTLE_WRITE);   /* the CPU wrote once the work before had finished with the bytes */
    lane_synth_memory(rp, m.gpu_va, m.length);
    vgt_error e;
    if (rp->ops->mem_write(rp->be, rp->vas, addr_to_replay(rp, m.gpu_va), m.data, m.length, &e) != VGT_OK)
        engine_warn(rp, "MEMORY at seq %llu (VA 0x%llx, %u bytes) not written: %s", (unsigned long long)rec->seq,
                    (unsigned long long)m.gpu_va, m.length, e.msg);
    return VGT_OK;
}

/* The CUDA API calls after which the captured program's host had waited for the GPU: the record is
 * written when the call returned. Asynchronous copies and memsets, and calls made into a stream being
 * captured or as a graph's nodes, wait for nothing. */
static int cuda_call_waited(const vgt_record *rec, const vgt_cuda_call_head *h)
{
    switch (h->api) {
    case VGT_CUDA_CTX_SYNCHRONIZE:
    case VGT_CUDA_STREAM_SYNCHRONIZE:
    case VGT_CUDA_EVENT_SYNCHRONIZE:
    case VGT_CUDA_MEM_FREE:   /* the runtime's cudaFree synchronizes the device first */
        return rec->type == VGT_REC_CUDA_CALL || rec->type == VGT_REC_CUDA_MEMORY;
    case VGT_CUDA_MEMCPY:
    case VGT_CUDA_MEMCPY_HTOD:
    case VGT_CUDA_MEMCPY_DTOH:
    case VGT_CUDA_MEMCPY_DTOD:
    case VGT_CUDA_MEMSET_D8:
    case VGT_CUDA_MEMSET_D16:
    case VGT_CUDA_MEMSET_D32:
        return rec->type == VGT_REC_CUDA_MEMORY &&
               !(h->flags & (VGT_CUDA_MEM_ASYNC | VGT_CUDA_MEM_GRAPH_NODE | VGT_CUDA_MEM_STREAM_CAPTURE));
    default:
        return 0;
    }
}

/* A CUDA API record: where the program waited for the GPU, the replay waits too (engine_settle). */
static vgt_status on_cuda_api(vgt_replay *rp, const vgt_record *rec)
{
    vgt_cuda_call_head h;
    if (!rp->wait_demand || !rp->unsettled || vgt_cuda_decode_head(rec, &h, NULL) != VGT_OK) return VGT_OK;
    if (cuda_call_waited(rec, &h)) engine_settle(rp, SETTLE_SYNC);
    return VGT_OK;
}

static vgt_status on_semaphore(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_semaphore s;
    VGT_TRY(vgt_decode_semaphore(rec, &s, err));
    if (rp->opt.check) check_semaphore(rp, rec, &s);
    state_note(rp, 1, s.gpu_va, s.size, rec->seq);
    return VGT_OK;
}

/* ---- submissions ---- */

static vgt_status decode_submit(vgt_replay *rp, const vgt_record *rec, vgt_rec_gpfifo_submit *sub, vgt_error *err)
{
    return replay_decode_submit(&rp->segs, rec, sub, "replay", err);
}

/* An asynchronous backend (the GPU) runs the submission after submit returns: wait for it, with a
 * timeout, before the checks and the census read memory. A submission still running then (an acquire
 * that a later submission releases, or long work) is reported and waited for again later; a fault has
 * already been reported by the backend's event. */
void engine_wait_submission(vgt_replay *rp)
{
    if (!(rp->ops->caps() & VGT_CAP_ASYNC) || rp->opt.no_wait || !rp->ops->idle) return;
    uint64_t ms = submit_timeout_ms(rp);
    vgt_error e;
    vgt_error_clear(&e);
    uint64_t t0 = mono_ns();
    vgt_status rc = rp->ops->idle(rp->be, ms * 1000000ull, &e);
    uint64_t dt = mono_ns() - t0;
    rp->waited_acc += dt;
    rp->sum.waits++;
    rp->sum.wait_ns += dt;
    rp->ninflight = 0;   /* every push buffer written before was fetched (or its channel is stuck) */
    if (rc == VGT_OK) rp->unsettled = 0;
    rp->unfinished = rc != VGT_OK;   /* what the census reads next is not the work's result */
    if (rc == VGT_OK || rc == VGT_E_FAULT) return;
    char msg[VGT_ERROR_MSG_MAX + 64];
    snprintf(msg, sizeof msg, "not finished after %llu ms: %s", (unsigned long long)ms, e.msg);
    vgt_replay_report r = {.kind = VGT_RPT_EVENT, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .channel = rp->cur_channel, .event_kind = VGT_BEV_BLOCKED, .msg = msg};
    engine_report(rp, &r);
}

/* Waits on demand (options.wait_demand): the engine submits without waiting and lets the GPU lag behind
 * the trace; it waits for all submitted work to finish (one idle, every channel) only where the replay
 * would otherwise differ from the capture. The rules, each with where it is applied:
 *  - reading memory (a check, the census, vgt_replay_read): SETTLE_CHECK, SETTLE_CENSUS;
 *  - a host write (MEMORY initial/changed, on_memory, also when --check compared the record first; a QMD
 *    rewritten by reloc_patch.c): SETTLE_WRITE. Conservative: the captured CPU wrote once the GPU was done
 *    with the bytes, and the replay cannot tell which pending work reads them (a launch reads its QMD,
 *    constants and code through pointers). Host writes come in bursts (module loads, uploads between
 *    submissions): one wait covers the burst, as nothing is submitted in between;
 *  - a push-buffer segment written (engine_pb_write): precise. A segment is only read by the submission
 *    whose GPFIFO entries point at it, so only a write over a range written since the last wait (and so
 *    possibly not fetched yet) waits, SETTLE_PB_REUSE; past ENGINE_INFLIGHT_MAX scattered ranges, the
 *    cheap fallback: wait and start the list again;
 *  - where the captured program waited for the GPU (on_cuda_api: cuCtxSynchronize, cuStreamSynchronize,
 *    cuEventSynchronize, the synchronous copies and memsets, cuMemFree): SETTLE_SYNC. Work submitted after
 *    such a point may rely on it alone: CUDA puts cudaMemcpy after cudaDeviceSynchronize on its copy
 *    channel with no semaphore acquire (the host already waited), and without this wait the H200 ran that
 *    copy of many_launches' result while the last of its 10,000 launches were still queued on the compute
 *    channel (the check found 4079 of 4096 bytes different, 2 runs of 4). The API record is written when
 *    the call returned, before any submission the program made after it;
 *  - unmapping (settle_before_unmap) and the end (vgt_replay_finish) wait whatever the mode.
 * A wait is counted once, under the why that asked for it first. These rules assume the GPU is the
 * replay's alone: with another process's work beside it, the H200 ran dependent launches of two
 * submissions in flight together out of order, so the CLI asks for this mode only with --wait demand. */
void engine_settle(vgt_replay *rp, settle_why why)
{
    if (!rp->wait_demand || !rp->unsettled) return;
    uint64_t *count[] = {&rp->sum.waits_for_check, &rp->sum.waits_for_write, &rp->sum.waits_for_census,
                         &rp->sum.waits_for_pb_reuse, &rp->sum.waits_for_sync};
    (*count[why])++;
    engine_wait_submission(rp);
}

void engine_pb_write(vgt_replay *rp, uint64_t va, uint64_t len)
{
    if (!rp->wait_demand || !len) return;
    uint64_t lo = va, hi = va + len;
    for (uint32_t i = 0; rp->unsettled && i < rp->ninflight; i++)
        if (lo < rp->inflight[i].hi && rp->inflight[i].lo < hi) {
            engine_settle(rp, SETTLE_PB_REUSE);   /* the ring of push buffers came round */
            break;
        }
    /* push buffers are mostly written one after the other: extend the last range when this one touches it */
    if (rp->ninflight && lo <= rp->inflight[rp->ninflight - 1].hi && hi >= rp->inflight[rp->ninflight - 1].lo) {
        if (lo < rp->inflight[rp->ninflight - 1].lo) rp->inflight[rp->ninflight - 1].lo = lo;
        if (hi > rp->inflight[rp->ninflight - 1].hi) rp->inflight[rp->ninflight - 1].hi = hi;
        return;
    }
    if (rp->ninflight == ENGINE_INFLIGHT_MAX) engine_settle(rp, SETTLE_PB_REUSE);   /* too scattered to follow */
    if (rp->ninflight == ENGINE_INFLIGHT_MAX) rp->ninflight = 0;   /* nothing was submitted since: nothing in flight */
    rp->inflight[rp->ninflight].lo = lo, rp->inflight[rp->ninflight].hi = hi;
    rp->ninflight++;
}

/* A submission a guard keeps off the GPU: reported, counted, not run. exception: what running it would
 * raise (both kinds leave the GPU unable to finish other programs' draws). */
vgt_status engine_refuse_as(vgt_replay *rp, const char *why, const char *exception, int event_kind)
{
    char msg[512 + 160];
    snprintf(msg, sizeof msg, "not submitted: %.511s (%s leaves the GPU unable to finish other programs' draws; "
             "force to run it)", why, exception);
    rp->sum.refused++;
    vgt_replay_report r = {.kind = VGT_RPT_EVENT, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .channel = rp->cur_channel, .event_kind = event_kind, .msg = msg};
    engine_report(rp, &r);
    return VGT_OK;
}

/* The MME guard's refusal (mme_guard.c). */
vgt_status engine_refuse(vgt_replay *rp, engine_channel *c)
{
    return engine_refuse_as(rp, c->mme_refuse, "an MME exception", VGT_BEV_MACRO);
}

/* Run one submission on its lane, with the render-target tracking, the wait and the census around it. */
static vgt_status run_submission(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub,
                                 engine_channel *c, vgt_error *err)
{
    /* the MME guard's finding (mme_guard.c), in this submission's decode; the synth and auto lanes decide
     * themselves (a synthesized submission runs no macro) */
    if (c->mme_refuse[0] && rp->lane->lane == VGT_LANE_VERBATIM) return engine_refuse(rp, c);
    if (rp->opt.census) VGT_TRY(census_before(rp, err));
    rp->run_rec = rec, rp->run_sub = sub, rp->run_chan = c;
    c->cnt.submissions++;
    uint64_t t_lane = rp->opt.on_submitted ? mono_ns() : 0;
    vgt_status rc = rp->lane->run(rp, rec, sub, c->id, err);
    if (rp->opt.on_submitted && rc == VGT_OK) {   /* the doorbell is rung: before the wait */
        uint64_t got = rp->read_ns && rp->read_ns <= rp->received_ns ? rp->read_ns : rp->received_ns;
        vgt_replay_submitted t = {.submit_index = rp->cur_index, .seq = rec->seq, .channel = sub->channel,
                                  .capture_ts = rec->ts, .read_ns = got, .received_ns = rp->received_ns,
                                  .submit_ns = t_lane, .doorbell_ns = mono_ns(), .waited_ns = rp->waited_acc};
        rp->waited_acc = 0;
        rp->opt.on_submitted(rp->opt.report_ctx, &t);
    }
    rp->unsettled = 1;
    if (rc == VGT_OK && !rp->wait_demand) engine_wait_submission(rp);
    rp->run_rec = NULL, rp->run_sub = NULL, rp->run_chan = NULL;
    VGT_TRY(rc);
    if (rp->opt.census) VGT_TRY(census_after(rp, 0, err));
    return VGT_OK;
}

static vgt_status on_submit(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    /* a record held back for the plan reached the engine long ago: it counts from when it is replayed */
    if (rp->opt.on_submitted && rp->received_seq != rec->seq) rp->received_ns = mono_ns(), rp->read_ns = 0;
    vgt_rec_gpfifo_submit sub;
    VGT_TRY(decode_submit(rp, rec, &sub, err));
    check_close_submission(rp);
    capture_only_note_submit(rp, &sub);
    int64_t index = (int64_t)vgt_model_submit_count(rp->model) - 1;
    if (rp->opt.submits.last != UINT64_MAX && (uint64_t)index > rp->opt.submits.last) {
        rp->done = 1;   /* past --submits: the caller may stop reading */
        return VGT_OK;
    }
    rp->sum.submissions++;
    if (!rp->t0_ns && rp->ops->prepare) rp->ops->prepare(rp->be);   /* channel setup: before the clock */
    if (!rp->t0_ns) rp->t0_ns = mono_ns(), rp->first_ts = rec->ts;
    rp->last_ts = rec->ts;
    rp->cur_index = index;
    rp->cur_seq = rec->seq;
    rp->cur_channel = sub.channel;
    rp->cur_replayed = 0;
    int64_t ci = channel_index(rp, sub.client, sub.channel);
    if (ci < 0) {
        engine_warn(rp, "submission %lld (seq %llu) is on channel 0x%x, which was never created; skipped",
                    (long long)index, (unsigned long long)rec->seq, sub.channel);
        return VGT_OK;
    }
    uint32_t ch = rp->chans[ci].id;
    if (rp->ops->set_context) rp->ops->set_context(rp->be, rec->seq);
    VGT_TRY(stream_decode(rp, &rp->chans[ci], rec, &sub, err));   /* once, for every subscriber */
    if (!vgt_range_has(&rp->opt.submits, (uint64_t)index)) {
        /* before --submits: run unchecked so that the window starts from the state this prefix leaves,
         * or (prefix_state_only) only keep subchannel bindings and macros right */
        rp->sum.submissions_prefix++;
        if (rp->opt.prefix_state_only) return lane_state_only(rp, rec, &sub, ch, err);
        return run_submission(rp, rec, &sub, &rp->chans[ci], err);
    }
    if (rp->ops->write_log_reset) rp->ops->write_log_reset(rp->be);
    VGT_TRY(run_submission(rp, rec, &sub, &rp->chans[ci], err));
    rp->cur_replayed = 1;
    rp->sum.submissions_replayed++;
    if (rp->opt.check) VGT_TRY(check_take_write_log(rp, err));
    return VGT_OK;
}

vgt_status vgt_replay_record(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    if (rp->done) return VGT_OK;
    /* latency: when the record reached the engine (a record held back for the plan keeps this time) */
    if (rp->opt.on_submitted && rec->type == VGT_REC_GPFIFO_SUBMIT)
        rp->received_ns = mono_ns(), rp->received_seq = rec->seq, rp->read_ns = rp->next_read_ns;
    rp->next_read_ns = 0;
    if (!rec->fields_checked && vgt_rec_type_name(rec->type)) VGT_TRY(vgt_record_fields(rec, NULL, NULL, err));   /* none passes unread */
    if (rp->planning) {
        int held;
        VGT_TRY(plan_hold(rp, rec, &held, err));
        if (held) return VGT_OK;
    }
    return engine_record(rp, rec, err);
}

vgt_status engine_record(vgt_replay *rp, const vgt_record *rec, vgt_error *err)
{
    if (rp->done) return VGT_OK;
    if (rp->lane->record) {   /* lane 3 replays the API records; the RM-level ones are the captured driver's */
        rp->sum.records++;
        return rp->lane->record(rp, rec, err);
    }
    if (rec->type == VGT_REC_MEMORY && rp->opt.check) {
        /* before the model takes the record: the check wants the contents it replaces */
        vgt_rec_memory m;
        VGT_TRY(vgt_decode_memory(rec, &m, err));
        check_memory(rp, rec, &m);
    }
    int nothing_mapped = unmaps_nothing(rp, rec);
    VGT_TRY(vgt_model_apply(rp->model, rec, err));
    rp->sum.records++;
    switch (rec->type) {
    case VGT_REC_CHANNEL: return on_channel(rp, rec, err);
    case VGT_REC_ENGINE_OBJECT: return on_engine_object(rp, rec, err);
    case VGT_REC_CHANNEL_STATE: return on_channel_state(rp, rec, err);
    case VGT_REC_CHANNEL_METHODS: return on_channel_methods(rp, rec, err);
    case VGT_REC_GPU_MAP: return on_gpu_map(rp, rec, err);
    case VGT_REC_GPU_UNMAP: return nothing_mapped ? VGT_OK : on_gpu_unmap(rp, rec, err);
    case VGT_REC_MEMORY: return on_memory(rp, rec, err);
    case VGT_REC_SEMAPHORE: return on_semaphore(rp, rec, err);
    case VGT_REC_GPFIFO_SUBMIT: return on_submit(rp, rec, err);
    case VGT_REC_CUDA_CALL:
    case VGT_REC_CUDA_MEMORY: return on_cuda_api(rp, rec);
    default: return VGT_OK;   /* RM objects, ioctls, markers: the model has them; nothing to execute */
    }
}

/* What marks a trace as one no driver produced, and so one that faults a GPU on purpose or by accident:
 * a synthetic trace (placeholder shader code) or a derived one (a real trace edited to provoke a lint, as
 * corpus/derive/ writes: a program moved to an unmapped VA raises an engine exception). NULL: neither. */
static const char *trace_mark(const vgt_reader *r)
{
    const char *mode = vgt_reader_identity(r, "capture_mode");
    if (mode && !strcmp(mode, "synthetic"))
        return "the trace is synthetic (capture_mode=synthetic): its shader code is placeholder bytes";
    if (vgt_reader_identity(r, "derived_from"))
        return "the trace is derived (identity derived_from): it was edited to provoke a fault on purpose";
    return NULL;
}

vgt_status vgt_replay_admit(const vgt_reader *r, const vgt_backend_ops *ops, int force, vgt_error *err)
{
    const char *why = trace_mark(r);
    if (!why || !(ops->caps() & VGT_CAP_ASYNC) || force) return VGT_OK;
    return vgt_fail(err, VGT_E_ARG, VGT_NO_OFFSET, "%s, and on a GPU it raises engine exceptions that can leave the GPU unable "
                    "to finish other programs' draws; refusing to run it on backend %s (force to insist)", why,
                    ops->name);
}

/* The library's own guard (callers that skip vgt_replay_admit): a marked trace never reaches a hardware
 * backend unless the caller insists (options.force), and then with a warning. */
static vgt_status admit_trace(vgt_replay *rp, const vgt_reader *r, vgt_error *err)
{
    VGT_TRY(vgt_replay_admit(r, rp->ops, rp->opt.force, err));
    if (trace_mark(r) && (rp->ops->caps() & VGT_CAP_ASYNC))
        engine_warn(rp, "running a %s trace on backend %s as forced: expect engine exceptions",
                    vgt_reader_identity(r, "derived_from") ? "derived" : "synthetic", rp->ops->name);
    return VGT_OK;
}

vgt_status vgt_replay_run(vgt_replay *rp, vgt_reader *r, vgt_error *err)
{
    vgt_record rec;
    vgt_status rc;
    VGT_TRY(admit_trace(rp, r, err));
    while (!rp->done && (rc = vgt_reader_next(r, &rec, err)) == VGT_OK) {
        if (rp->opt.progress) rp->opt.progress(rp->opt.progress_ctx, &rec);
        if (rp->opt.on_submitted) rp->next_read_ns = vgt_reader_chunk_read_ns(r);
        VGT_TRY(vgt_replay_record(rp, &rec, err));
    }
    if (rp->done) return VGT_OK;
    if (rc == VGT_E_EOF) return plan_close(rp, err);
    /* a broken trace: what was held back is planned and replayed first, as a replay without a plan would
     * have replayed it before meeting the error */
    vgt_error e;
    plan_close(rp, &e);
    return rc;
}

int vgt_replay_done(const vgt_replay *rp) { return rp->done; }

vgt_status vgt_replay_finish(vgt_replay *rp, vgt_error *err)
{
    VGT_TRY(plan_close(rp, err));   /* records fed by vgt_replay_record and still held back */
    if (rp->lane->finish) VGT_TRY(rp->lane->finish(rp, err));
    check_close_submission(rp);
    vgt_status rc = rp->be && rp->ops->idle ? rp->ops->idle(rp->be, 0, err) : VGT_OK;
    rp->sum.blocked = rc == VGT_E_TIMEOUT;
    if (rp->t0_ns) rp->t1_ns = mono_ns();
    if (rp->be && rp->ops->counters) rp->ops->counters(rp->be, &rp->sum.ctr);
    return rc;
}

const vgt_replay_summary *vgt_replay_summary_get(vgt_replay *rp)
{
    if (rp->be && rp->ops->counters) rp->ops->counters(rp->be, &rp->sum.ctr);
    rp->sum.capture_span_ns = rp->last_ts - rp->first_ts;
    rp->sum.replay_span_ns = rp->t1_ns > rp->t0_ns ? rp->t1_ns - rp->t0_ns : 0;
    const census_state *c = &rp->census;
    rp->sum.census_ranges = c->n;
    rp->sum.census_bytes = c->bytes;
    rp->sum.census_skipped_bytes = c->skipped_bytes;
    rp->sum.census_rows = c->nrows;
    rp->sum.census_rows_dropped = c->dropped_rows;
    rp->sum.census_quiet = c->quiet_submissions;
    rp->sum.census_pieces = c->pieces;
    rp->sum.census_draws = c->draws;
    rp->sum.census_draws_quiet = c->draws_quiet;
    rp->sum.census_draws_unfinished = c->draws_unfinished;
    return &rp->sum;
}

vgt_status vgt_replay_read(vgt_replay *rp, uint64_t va, void *dst, uint64_t len, vgt_error *err)
{
    if (!rp->be) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "replay: nothing replayed yet (the backend is not open)");
    engine_settle(rp, SETTLE_CHECK);
    return rp->ops->mem_read(rp->be, rp->vas, addr_to_replay(rp, va), dst, len, err);
}

uint64_t vgt_replay_translate(const vgt_replay *rp, uint64_t va) { return addr_to_replay(rp, va); }

vgt_status vgt_replay_dump_state(vgt_replay *rp, FILE *f, vgt_error *err) { return state_write(rp, f, err); }

const vgt_replay_channel_count *vgt_replay_channels(vgt_replay *rp, uint32_t *count)
{
    *count = 0;
    if (rp->nchans > rp->cap_cnt_out) {
        vgt_replay_channel_count *n = realloc(rp->cnt_out, rp->nchans * sizeof *n);
        if (!n) return NULL;
        rp->cnt_out = n;
        rp->cap_cnt_out = rp->nchans;
    }
    for (uint32_t i = 0; i < rp->nchans; i++) rp->cnt_out[i] = rp->chans[i].cnt;
    *count = rp->nchans;
    return rp->cnt_out;
}

int vgt_replay_summary_failed(const vgt_replay_summary *s)
{
    return s->checks_failed || s->faults || s->blocked || s->ctr.faults || s->refused || s->synth_refused ||
           s->cuda_graphs_not_run;
}
