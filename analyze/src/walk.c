/* walk.c: the trace walker (vgt/walk.h). Reads records in order, applies each to the model, and decodes
 * each GPFIFO_SUBMIT with the decoder state of its channel, forwarding to the caller's callbacks.
 *
 *   record --vgt_model_apply--> model --on_record--> [GPFIFO_SUBMIT?] --walk_submit-->
 *       channel_for (state per channel, reset on re-allocation) --vgt_pb_decode_submit--> on_entry/on_method
 *   [CHANNEL_METHODS?] --walk_state_methods--> on_state_method (format 1.1 state preamble, no decoder)
 *
 * The same walk is offered fed one record at a time (vgt_walker_record), for callers that hold the
 * records themselves (the replay engine's planning pre-pass over the records it buffered).
 *
 * Unselected submissions are decoded with the state-keeping path only (no user callbacks) unless the
 * caller asked for them (deliver_unselected).
 *
 * A walk over a reader holds its last chunks (vgt_reader_hold) and lends their bytes to the model
 * (vgt_model_lend), so that the model points at push-buffer bytes instead of copying them: by the time
 * the oldest chunk is given back (what still points into it is copied then: vgt_model_reclaim, and the
 * callbacks' on_release), most were overwritten in the model by later submissions to the same memory.
 * Callbacks may keep pointers into a submission's bytes too while vgt_walk_submit.lent says so.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/grow.h"
#include "vgt/u64map.h"
#include "vgt/walk.h"

typedef struct walker {
    const vgt_walk_options *opt;  /* &own_opt */
    vgt_walk_options own_opt;
    const vgt_walk_callbacks *cb;
    vgt_model *model;
    vgt_walk_channel **chans;     /* individually allocated: pointers stay valid for the walk */
    uint32_t nchans, capchans, last_chan;
    vgt_u64map chan_ix;           /* client:handle -> index in chans: a lookup per submission stays O(1) */
    vgt_segment *segs;
    uint32_t capsegs;
    vgt_walk_submit cur;
    int deliver;                  /* user callbacks on for the current submission */
    int stop;
    vgt_walk_stats st;
    vgt_reader *reader;           /* a walk over a reader: its chunks held and lent to the model, oldest first */
    struct walk_loan {
        uint64_t id;
        const uint8_t *bytes;
        uint64_t len;
    } loans[8];
    uint32_t nloans;
    uint64_t held;                /* bytes of the chunks held */
    int cur_lent;                 /* the chunk of the current record is lent (vgt_walk_submit.lent) */
    uint64_t lent_off;            /* chunk_offset of the chunk lent last (or tried: lent_any) */
    int lent_any;
    int ended;                    /* the channels ended: no on_release any more */
} walker;

/* Chunks held: up to 8 and 32 MiB of records. 8 chunks of the default 2 MiB outlive a push-buffer pool
 * of 4 MiB per channel written in turn by two channels (vgt synth's traces): fewer left most segments to
 * be copied at the reclaim. The bytes bound keeps a trace of large chunks (up to 64 MiB) within a verb's
 * memory budget: then only the chunk being read is held. */
#define WALK_LOANS (sizeof ((walker *)0)->loans / sizeof ((walker *)0)->loans[0])
#define WALK_LOAN_BYTES (32ull << 20)

vgt_walk_options vgt_walk_defaults(void)
{
    vgt_walk_options o;
    memset(&o, 0, sizeof o);
    o.submit_last = UINT64_MAX;
    o.verify_checksums = 1;
    return o;
}

/* ---- pushbuf callbacks: count, then forward when delivering ---- */

static int tramp_method(void *ctx, const vgt_method *m)
{
    walker *w = ctx;
    if (w->cb->on_method(w->cb->ctx, &w->cur, m)) w->stop = 1;
    return w->stop;
}

static int tramp_run(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    walker *w = ctx;
    if (w->cb->on_noninc_run(w->cb->ctx, &w->cur, m, data, count)) w->stop = 1;
    return w->stop;
}

static void tramp_entry(void *ctx, const vgt_gp_entry *e, uint32_t index, const vgt_mpos *pos)
{
    walker *w = ctx;
    w->st.entries++;
    if (!e->is_control) w->st.pb_bytes += (uint64_t)e->length * 4u;
    if (w->deliver && w->cb->on_entry) w->cb->on_entry(w->cb->ctx, &w->cur, e, index);
}

static void tramp_diag(void *ctx, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    walker *w = ctx;
    w->st.diags++;
    if (w->deliver && w->cb->on_diag) w->cb->on_diag(w->cb->ctx, &w->cur, kind, pos, msg);
}

/* ---- channels ---- */

/* Format 1.1 CHANNEL_STATE (docs/trace-format.md, 0x0027): bindings, masks and base as the record gives
 * them, with no method run pending (a run is never carried). Applied once per record. */
static void channel_adopt_state(vgt_walk_channel *c, const vgt_model_channel *mc)
{
    if (!mc || !mc->has_state || mc->state_seq == c->state_seq) return;
    vgt_pb_state_adopt(&c->pb, c->cls, &mc->state);
    c->state_seq = mc->state_seq;
}

static void channel_reset(walker *w, vgt_walk_channel *c, const vgt_model_channel *mc)
{
    c->cls = mc ? mc->rec.cls : 0;
    c->alloc_seq = mc ? mc->alloc_seq : UINT64_MAX;
    c->submits = 0;
    c->state_seq = UINT64_MAX;
    vgt_pb_state_init(&c->pb, c->cls);
    channel_adopt_state(c, mc);
    if (w->cb->on_channel) w->cb->on_channel(w->cb->ctx, c);
}

static vgt_status channel_for(walker *w, uint32_t client, uint32_t handle, vgt_walk_channel **out, vgt_error *err)
{
    const vgt_model_channel *mc = vgt_model_channel_find(w->model, client, handle);
    uint64_t alloc_seq = mc ? mc->alloc_seq : UINT64_MAX;
    vgt_walk_channel *c = NULL;
    if (w->last_chan < w->nchans && w->chans[w->last_chan]->client == client && w->chans[w->last_chan]->handle == handle)
        c = w->chans[w->last_chan];
    uint32_t ix;
    if (!c && vgt_u64map_get(&w->chan_ix, vgt_u64map_handle_key(client, handle), &ix)) {
        c = w->chans[ix];
        w->last_chan = ix;
    }
    if (c) {
        if (c->alloc_seq != alloc_seq) channel_reset(w, c, mc);   /* the handle was re-allocated */
        else channel_adopt_state(c, mc);                           /* a CHANNEL_STATE since the last submission */
        *out = c;
        return VGT_OK;
    }
    if (w->nchans >= VGT_WALK_MAX_CHANNELS)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "more than %u channels in one trace", VGT_WALK_MAX_CHANNELS);
    if (vgt_grow(&w->chans, &w->capchans, w->nchans + 1ull, 8))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u channels", w->nchans + 1);
    c = calloc(1, sizeof *c);
    if (!c || vgt_u64map_put(&w->chan_ix, vgt_u64map_handle_key(client, handle), w->nchans)) {
        free(c);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a channel");
    }
    c->client = client;
    c->handle = handle;
    w->last_chan = w->nchans;
    w->chans[w->nchans++] = c;
    channel_reset(w, c, mc);
    *out = c;
    return VGT_OK;
}

/* ---- submissions ---- */

static vgt_status grow_segments(walker *w, const vgt_record *r, vgt_error *err)
{
    uint32_t need = vgt_gpfifo_submit_segment_room(r);   /* bounded by the record's length */
    if (vgt_grow(&w->segs, &w->capsegs, need, 16))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u segments", need);
    return VGT_OK;
}

static int is_selected(const walker *w, uint64_t index, uint32_t channel)
{
    if (index < w->opt->submit_first || index > w->opt->submit_last) return 0;
    return !w->opt->has_channel || w->opt->channel == channel;
}

static vgt_status walk_submit(walker *w, const vgt_record *r, vgt_error *err)
{
    vgt_rec_gpfifo_submit sub;
    if (!vgt_model_last_submit(w->model, r->seq, &sub)) {   /* the model decoded it already, as a rule */
        VGT_TRY(grow_segments(w, r, err));
        VGT_TRY(vgt_decode_gpfifo_submit(r, &sub, w->segs, w->capsegs, err));
    }
    vgt_walk_channel *c = NULL;
    VGT_TRY(channel_for(w, sub.client, sub.channel, &c, err));
    const vgt_walk_callbacks *cb = w->cb;
    uint64_t index = w->st.submits++;
    int selected = is_selected(w, index, sub.channel);
    w->st.selected_submits += (uint64_t)selected;
    w->deliver = selected || w->opt->deliver_unselected;
    w->cur = (vgt_walk_submit){index, r->seq, r, &sub, c, selected, 0, w->cur_lent};
    c->submits++;
    if (w->deliver && cb->on_submit_begin && cb->on_submit_begin(cb->ctx, &w->cur)) {
        w->stop = 1;
        return VGT_OK;
    }
    vgt_pb_callbacks pcb = {.method = w->deliver && cb->on_method ? tramp_method : NULL,
                            .entry = tramp_entry,
                            .diag = tramp_diag,
                            .ctx = w,
                            .noninc_run = w->deliver && cb->on_noninc_run ? tramp_run : NULL};
    uint64_t before = c->pb.methods;
    vgt_status rc = vgt_pb_decode_submit(&c->pb, r->seq, &sub, &pcb, err);
    w->st.methods += c->pb.methods - before;
    if (rc != VGT_OK) return rc;
    if (!w->stop && w->deliver && cb->on_submit_end && cb->on_submit_end(cb->ctx, &w->cur)) w->stop = 1;
    if (index >= w->opt->submit_last) w->stop = 1;
    return VGT_OK;
}

/* ---- state preamble (format 1.1 CHANNEL_METHODS, docs/trace-format.md 0x0028) ---- */

/* Its writes go to on_state_method with the channel's bindings as the decoder holds them now (the
 * CHANNEL_STATE before it already adopted by channel_for). They pass no push-buffer decoder: they carry
 * no headers, and the host methods that change decoder state are never among them. */
static vgt_status walk_state_methods(walker *w, const vgt_record *r, vgt_error *err)
{
    vgt_rec_channel_methods cm;
    VGT_TRY(vgt_decode_channel_methods(r, &cm, err));
    if (!vgt_model_channel_find(w->model, cm.client, cm.channel)) return VGT_OK;   /* not alive: ignored */
    vgt_walk_channel *c = NULL;
    VGT_TRY(channel_for(w, cm.client, cm.channel, &c, err));
    uint32_t n = vgt_channel_methods_count(&cm);
    w->st.state_methods += n;
    uint64_t index = w->st.submits;
    int selected = is_selected(w, index, cm.channel);
    if (!w->cb->on_state_method || !(selected || w->opt->deliver_unselected)) return VGT_OK;
    vgt_walk_submit s = {index, r->seq, r, NULL, c, selected, 1, 0};   /* its writes are values: none lent */
    for (uint32_t i = 0; i < n && !w->stop; i++) {
        vgt_state_method sm = vgt_channel_method_at(&cm, i);
        vgt_method m = {.subch = sm.subch, .mthd = sm.method, .data = sm.value, .first = 1,
                        .is_host = vgt_nv_is_host_method(sm.method), .pos = {r->seq, 0, i}};
        m.cls = m.is_host ? c->pb.channel_class : c->pb.subch_class[sm.subch];
        if (w->cb->on_state_method(w->cb->ctx, &s, &m)) w->stop = 1;
    }
    return VGT_OK;
}

/* One record: the model first, then the caller's on_record, then the submission or state preamble.
 * Returns VGT_E_EOF once a callback asked to stop (the record may have been applied). */
static vgt_status walk_record(walker *w, const vgt_record *rec, vgt_error *err)
{
    if (w->stop) return VGT_E_EOF;
    if (w->cb->on_record_before && w->cb->on_record_before(w->cb->ctx, rec, w->model)) return w->stop = 1, VGT_E_EOF;
    w->st.records++;
    /* every record of a known type is checked, also one nothing here uses: a malformed record never
     * passes a verb silently */
    if (!rec->fields_checked && vgt_rec_type_name(rec->type)) VGT_TRY(vgt_record_fields(rec, NULL, NULL, err));
    VGT_TRY(vgt_model_apply(w->model, rec, err));
    if (w->cb->on_record && w->cb->on_record(w->cb->ctx, rec, w->model)) return w->stop = 1, VGT_E_EOF;
    if (rec->type == VGT_REC_GPFIFO_SUBMIT) VGT_TRY(walk_submit(w, rec, err));
    else if (rec->type == VGT_REC_CHANNEL_METHODS) VGT_TRY(walk_state_methods(w, rec, err));
    return w->stop ? VGT_E_EOF : VGT_OK;
}

/* Gives back the oldest chunk: the model copies what it still points at (copy: 0 when the model goes
 * anyway), then the reader may reuse its buffers. */
static void give_back_oldest(walker *w, int copy)
{
    const struct walk_loan *l = &w->loans[0];
    if (w->cb->on_release && !w->ended)
        for (uint32_t i = 0; i < w->nchans; i++) w->cb->on_release(w->cb->ctx, w->chans[i], l->bytes, l->len);
    if (copy) vgt_model_reclaim(w->model, l->id);
    vgt_reader_release(w->reader, l->id);
    w->held -= l->len;
    memmove(w->loans, w->loans + 1, sizeof w->loans[0] * --w->nloans);
}

/* A record of a chunk not lent yet: hold it and lend it to the model; the oldest go while past WALK_LOANS
 * chunks or WALK_LOAN_BYTES. Nothing held (no memory) only means copies. */
static void lend_chunk(walker *w, const vgt_record *rec)
{
    uint64_t id, len;
    const uint8_t *bytes;
    w->lent_off = rec->chunk_offset;
    w->lent_any = 1;
    w->cur_lent = 0;
    if (vgt_reader_hold(w->reader, &id, &bytes, &len, NULL) != VGT_OK) {
        vgt_model_lend(w->model, 0, NULL, 0);   /* ends the previous loan's new pointers */
        return;
    }
    if (!vgt_model_lend(w->model, id, bytes, len)) {
        vgt_reader_release(w->reader, id);
        return;
    }
    while (w->nloans && (w->nloans == WALK_LOANS || w->held + len > WALK_LOAN_BYTES)) give_back_oldest(w, 1);
    w->held += len;
    w->loans[w->nloans++] = (struct walk_loan){id, bytes, len};
    w->cur_lent = 1;
}

static vgt_status walk_loop(walker *w, vgt_reader *r, vgt_error *err)
{
    vgt_record rec;
    vgt_status rc = VGT_OK;
    w->reader = r;
    while ((rc = vgt_reader_next(r, &rec, err)) == VGT_OK) {
        if (!w->lent_any || rec.chunk_offset != w->lent_off) lend_chunk(w, &rec);
        if ((rc = walk_record(w, &rec, err)) != VGT_OK) break;
    }
    if (w->stop) return VGT_OK;
    return rc == VGT_E_EOF ? VGT_OK : rc;
}

static void walker_free(walker *w)
{
    w->ended = 1;
    for (uint32_t i = 0; i < w->nchans; i++) {
        if (w->cb->on_channel_end) w->cb->on_channel_end(w->cb->ctx, w->chans[i]);
        free(w->chans[i]);
    }
    free(w->chans);
    vgt_u64map_free(&w->chan_ix);
    free(w->segs);
    int own = w->model != w->opt->model;
    if (own) vgt_model_free(w->model);   /* pointers to lent bytes go with it, uncopied */
    while (w->nloans) give_back_oldest(w, !own);   /* the caller's model keeps its bytes */
}

static const vgt_walk_callbacks no_callbacks;

static vgt_status walker_init(walker *w, const vgt_walk_options *opt, const vgt_walk_callbacks *cb, vgt_error *err)
{
    memset(w, 0, sizeof *w);
    w->own_opt = opt ? *opt : vgt_walk_defaults();
    w->opt = &w->own_opt;
    w->cb = cb ? cb : &no_callbacks;
    if (w->opt->model) w->model = w->opt->model;
    else VGT_TRY(vgt_model_new(&w->model, err));
    if (w->opt->model_memory_limit) vgt_model_set_memory_limit(w->model, w->opt->model_memory_limit);
    return VGT_OK;
}

vgt_status vgt_walk_reader(vgt_reader *r, const vgt_walk_options *opt, const vgt_walk_callbacks *cb,
                           vgt_walk_stats *stats, vgt_error *err)
{
    walker w;
    VGT_TRY(walker_init(&w, opt, cb, err));
    vgt_status rc = walk_loop(&w, r, err);
    walker_free(&w);
    if (stats) *stats = w.st;
    return rc;
}

vgt_status vgt_walk_path(const char *path, const vgt_walk_options *opt, const vgt_walk_callbacks *cb,
                         vgt_walk_stats *stats, vgt_error *err)
{
    vgt_walk_options defaults = vgt_walk_defaults();
    if (!opt) opt = &defaults;
    vgt_reader_options ro = {.streaming = opt->streaming || opt->follow, .verify_checksums = opt->verify_checksums,
                             .follow = opt->follow};
    vgt_reader *r;
    int std_in = !strcmp(path, "-");   /* a stream on stdin (a pipe from a capture), read without seeking */
    if (std_in) ro.streaming = 1;
    vgt_status orc = std_in ? vgt_reader_open_fd(&r, STDIN_FILENO, 0, &ro, err) : vgt_reader_open_path(&r, path, &ro, err);
    if (orc != VGT_OK) {
        if (std_in) vgt_error_prefix(err, "standard input");
        return orc;
    }
    vgt_status rc = vgt_walk_reader(r, opt, cb, stats, err);
    vgt_reader_close(r);
    return rc;
}

/* ---- the same walk, fed one record at a time ---- */

struct vgt_walker {
    walker w;
};

vgt_status vgt_walker_new(vgt_walker **out, const vgt_walk_options *opt, const vgt_walk_callbacks *cb, vgt_error *err)
{
    *out = NULL;
    vgt_walker *k = malloc(sizeof *k);
    if (!k) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a walker");
    vgt_status rc = walker_init(&k->w, opt, cb, err);
    if (rc != VGT_OK) {
        free(k);
        return rc;
    }
    *out = k;
    return VGT_OK;
}

vgt_status vgt_walker_record(vgt_walker *k, const vgt_record *rec, vgt_error *err)
{
    return walk_record(&k->w, rec, err);
}

void vgt_walker_free(vgt_walker *k, vgt_walk_stats *stats)
{
    if (!k) return;
    walker_free(&k->w);
    if (stats) *stats = k->w.st;
    free(k);
}
