/* slice.c: `vgt slice IN OUT --submits A..B`: a smaller trace that replays submissions A..B on its own.
 *
 * Pass 1 walks every record before submission A with the trace walker (vgt/walk.h): it folds them into
 * the trace model (model.h) and decodes every submission's push buffers, so that at A each channel's
 * decoder state (SET_OBJECT bindings, subdevice masks, extended base) is known, and the writes the GPU
 * itself made there (semaphore releases, uploads, copies: slice_derive.h) are applied to the model. It also
 * notes which
 * original records created what is still alive at A: RM objects and memory objects (RM_ALLOC, MEM_ALLOC),
 * channels (CHANNEL), engine objects (ENGINE_OBJECT), GPU mappings (GPU_MAP), and, tracked here because
 * the model does not keep them, CPU mappings (CPU_MAP) and work-submit tokens (WORK_SUBMIT_TOKEN, or the
 * GET_WORK_SUBMIT_TOKEN control that returned one). Pass 2 writes, renumbered from 0:
 *
 *   SESSION_START (if any)  the kept records, in their original order
 *   MEMORY (reason initial) the model's memory contents at A, page runs up to RUN_MAX bytes; runs the GPU
 *                           wrote (derived, not captured) flagged VGT_MEM_FLAG_DERIVED
 *   DIAGNOSTIC (info)       what was derived and what could not be (launch outputs, ...)
 *   CHANNEL_STATE           per live channel with decoder state at A (format 1.1), after the channel's
 *                           records; a DIAGNOSTIC before it when a method run was pending there
 *   CHANNEL_METHODS         right after it, the engine state of the classes bound at A (format 1.1): the
 *                           MME program and the latest value of every pure state method (slice_methods.h)
 *   every record from submission A to submission B, then the records that report B's results
 *   (observed MEMORY, SEMAPHORE, DOORBELL) up to the next other record; observed MEMORY records leave
 *   out the bytes the GPU wrote before A that cannot be derived (timestamps, reports: a replay of the
 *   slice cannot have them)
 *
 * The identity block is copied, with `sliced_from` and `slice_submits` set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/classes.h"
#include "vgt/cli.h"
#include "vgt/cuda.h"
#include "vgt/grow.h"
#include "vgt/model.h"
#include "vgt/nv_abi.h"
#include "vgt/trace.h"
#include "vgt/walk.h"

#include "slice_derive.h"
#include "slice_methods.h"

#define RUN_MAX (1u << 20)                 /* bytes per synthesized MEMORY record */
#define MAX_TRACKED (1u << 20)             /* CPU mappings / tokens remembered in pass 1 */
#define MAX_IDENTITY_OUT (VGT_MAX_IDENTITY_ENTRIES + 2u)
#define MAX_CHANNEL_STATES VGT_WALK_MAX_CHANNELS

typedef struct tracked {
    uint32_t client, handle;   /* CPU_MAP: memory handle; token: channel handle */
    uint64_t key;              /* CPU_MAP: cpu address; token: unused */
    uint64_t seq;
} tracked;

typedef struct tracked_set {
    tracked *v;
    uint32_t n, cap;
} tracked_set;

/* A channel's decoder state at A, as the walker left it. */
typedef struct chan_state {
    uint32_t client, handle;
    uint64_t alloc_seq, state_seq;
    vgt_pb_state pb;
} chan_state;

typedef struct slice_plan {
    char budget_note[256];     /* an MME budget ran out deriving the engine state (exit 1) */
    const char *in, *out;
    const char *in_name;       /* IN as given ("-": stdin, read from a copy at in) */
    vgt_range submits;
    vgt_writer_options wo;
    vgt_model *model;
    tracked_set cpu_maps, tokens;
    uint64_t session_seq;      /* UINT64_MAX: none */
    uint64_t first_seq;        /* seq of submission A */
    uint64_t ts_before;        /* ts given to the synthesized MEMORY records */
    uint64_t *keep;            /* sorted seqs of the records to copy */
    uint32_t nkeep;
    chan_state *chans;         /* every channel the walker decoded before A */
    uint32_t nchans, capchans;
    uint64_t submits_seen;     /* pass 1: GPFIFO_SUBMIT records met */
    uint64_t submits_total;    /* the submissions IN has, once known to be fewer than --submits names */
    int found_first;           /* pass 1 stopped at submission A */
    vgt_status cb_status;      /* pass 1: a failure inside a walker callback */
    slice_derive *derive;      /* the GPU's writes before A */
    slice_methods *methods;    /* the engines' state before A */
    uint64_t *cuda;            /* CUDA records before A that the slice's calls rely on: images, loads, lookups,
                                  device allocations, graph instantiations and their nodes (format 1.2) */
    uint32_t ncuda, capcuda;
    vgt_error *err;
    vgt_progress progress;     /* on a terminal: IN read twice, pass 1 then pass 2 (total 2 x IN's size) */
    uint64_t progress_base;    /* bytes of the passes before this one */
} slice_plan;

/* ---- pass 1 bookkeeping the model does not do ---- */

static vgt_status track_put(tracked_set *s, tracked t, int replace_same_handle, vgt_error *err)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->v[i].client == t.client && s->v[i].handle == t.handle && (replace_same_handle || s->v[i].key == t.key)) {
            s->v[i] = t;
            return VGT_OK;
        }
    if (s->n == MAX_TRACKED)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "slice: more than %u live CPU mappings or tokens",
                        MAX_TRACKED);
    if (vgt_grow(&s->v, &s->cap, s->n + 1ull, 64))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: out of memory");
    s->v[s->n++] = t;
    return VGT_OK;
}

static void track_drop(tracked_set *s, uint32_t client, uint32_t handle, uint64_t key)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->v[i].client == client && s->v[i].handle == handle && s->v[i].key == key) {
            s->v[i] = s->v[--s->n];
            return;
        }
}

/* The CUDA records a later call may name (an image, a module, a function, an allocation, a graph). */
static int cuda_defines(const vgt_record *r)
{
    if (r->type == VGT_REC_CUDA_IMAGE || r->type == VGT_REC_CUDA_IMAGE_REF) return 1;
    vgt_cuda_call_head h;
    if (!vgt_rec_is_cuda_api(r->type) || vgt_cuda_decode_head(r, &h, NULL) != VGT_OK || h.result != 0) return 0;
    if (r->type == VGT_REC_CUDA_LOAD || r->type == VGT_REC_CUDA_FUNCTION) return 1;
    if (h.api == VGT_CUDA_GRAPH_INSTANTIATE) return 1;
    vgt_rec_cuda_memory m;
    return r->type == VGT_REC_CUDA_MEMORY && vgt_decode_cuda_memory(r, &m, NULL) == VGT_OK && m.op == VGT_CUDA_OP_ALLOC;
}

static vgt_status track(slice_plan *p, const vgt_record *r, vgt_error *err)
{
    if (cuda_defines(r)) {
        if (vgt_grow(&p->cuda, &p->capcuda, p->ncuda + 1ull, 64))
            return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: out of memory");
        p->cuda[p->ncuda++] = r->seq;
        return VGT_OK;
    }
    switch (r->type) {
    case VGT_REC_SESSION_START:
        if (p->session_seq == UINT64_MAX) p->session_seq = r->seq;
        return VGT_OK;
    case VGT_REC_CPU_MAP: {
        vgt_rec_cpu_map m;
        VGT_TRY(vgt_decode_cpu_map(r, &m, err));
        return track_put(&p->cpu_maps, (tracked){m.client, m.memory, m.cpu_address, r->seq}, 0, err);
    }
    case VGT_REC_CPU_UNMAP: {
        vgt_rec_cpu_unmap u;
        VGT_TRY(vgt_decode_cpu_unmap(r, &u, err));
        track_drop(&p->cpu_maps, u.client, u.memory, u.cpu_address);
        return VGT_OK;
    }
    case VGT_REC_WORK_SUBMIT_TOKEN: {
        vgt_rec_work_submit_token t;
        VGT_TRY(vgt_decode_work_submit_token(r, &t, err));
        return track_put(&p->tokens, (tracked){t.client, t.channel, 0, r->seq}, 1, err);
    }
    case VGT_REC_RM_CONTROL: {
        vgt_rec_rm_control c;
        VGT_TRY(vgt_decode_rm_control(r, &c, err));
        if (c.cmd != RM_CTRL_CHAN_GET_WORK_TOKEN || c.status != 0) return VGT_OK;
        return track_put(&p->tokens, (tracked){c.client, c.object, 0, r->seq}, 1, err);
    }
    default:
        return VGT_OK;
    }
}

/* The range must name existing submissions (the chunk headers or the index count them). */
static vgt_status check_range(slice_plan *p, vgt_reader *r, vgt_error *err)
{
    const vgt_chunk_info *chunks;
    uint32_t n;
    VGT_TRY(vgt_reader_chunks(r, &chunks, &n, err));
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += chunks[i].submit_count;
    uint64_t last = p->submits.last == UINT64_MAX ? p->submits.first : p->submits.last;
    p->submits_total = total;
    if (last >= total)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "%s has %llu submissions; submission %llu does not exist",
                        p->in, (unsigned long long)total, (unsigned long long)last);
    return VGT_OK;
}

/* ---- pass 1: walk everything before submission A ---- */

static int before_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    (void)model;
    slice_plan *p = ctx;
    vgt_progress_set(&p->progress, rec->chunk_offset);
    if (rec->type == VGT_REC_GPFIFO_SUBMIT && p->submits_seen++ == p->submits.first) {
        p->first_seq = rec->seq;
        p->found_first = 1;
        return 1;
    }
    p->ts_before = rec->ts;
    p->cb_status = track(p, rec, p->err);
    return p->cb_status != VGT_OK;
}

static void on_channel(void *ctx, vgt_walk_channel *c) { slice_derive_on_channel(((slice_plan *)ctx)->derive, c); }
static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    slice_plan *p = ctx;
    return slice_methods_on_method(p->methods, s, m) || slice_derive_on_method(p->derive, s, m);
}
/* A NON_INC run in bulk: the engines see each dword as a write of the same method (MME uploads). */
static int on_run(void *ctx, const vgt_walk_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    slice_plan *p = ctx;
    vgt_method one = *m;
    for (uint32_t i = 0; i < count; i++) {
        one.data = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 | (uint32_t)data[4 * i + 2] << 16 |
                   (uint32_t)data[4 * i + 3] << 24;
        if (slice_methods_on_method(p->methods, s, &one)) return 1;
        one.first = 0;
        one.pos.dword++;
    }
    return slice_derive_on_run(p->derive, s, m, data, count);
}
/* The input's own state preamble (a slice of a slice): the engines' state as the writes leave it. */
static int on_state_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    return slice_methods_on_method(((slice_plan *)ctx)->methods, s, m);
}
static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    return slice_derive_on_submit_end(((slice_plan *)ctx)->derive, s);
}

/* Called for every channel when the walk ends: keep its decoder state. */
static void keep_channel(void *ctx, vgt_walk_channel *c)
{
    slice_plan *p = ctx;
    slice_derive_on_channel_end(p->derive, c);
    if (p->cb_status != VGT_OK) return;
    if (p->nchans == MAX_CHANNEL_STATES || vgt_grow(&p->chans, &p->capchans, p->nchans + 1ull, 16)) {
        p->cb_status = VGT_FAIL(p->err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory for %u channel states",
                                p->nchans + 1);
        return;
    }
    p->chans[p->nchans++] = (chan_state){c->client, c->handle, c->alloc_seq, c->state_seq, c->pb};
}

static vgt_status fold_prefix(slice_plan *p, vgt_error *err)
{
    vgt_reader *r;
    VGT_TRY(vgt_reader_open_path(&r, p->in, NULL, err));
    vgt_status st = check_range(p, r, err);
    if (st == VGT_OK) {
        vgt_walk_options wo = vgt_walk_defaults();
        wo.model = p->model;
        vgt_walk_callbacks cb = {.on_record_before = before_record, .on_channel = on_channel,
                                 .on_method = on_method, .on_noninc_run = on_run, .on_submit_end = on_submit_end,
                                 .on_channel_end = keep_channel, .on_state_method = on_state_method, .ctx = p};
        p->err = err;
        st = slice_derive_new(&p->derive, p->model, err);
        if (st == VGT_OK) st = slice_methods_new(&p->methods, p->model, err);
        if (st == VGT_OK) st = vgt_walk_reader(r, &wo, &cb, NULL, err);
        if (st == VGT_OK) st = p->cb_status;
        if (st == VGT_OK) st = slice_methods_status(p->methods, err);
        if (st == VGT_OK) st = slice_derive_status(p->derive, err);
    }
    if (st == VGT_OK && !p->found_first) p->submits_total = p->submits_seen;
    if (st == VGT_OK && !p->found_first)
        st = VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "%s has %llu submissions; submission %llu does not exist",
                      p->in, (unsigned long long)p->submits_seen, (unsigned long long)p->submits.first);
    vgt_reader_close(r);
    return st;
}

/* ---- the records to copy ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static vgt_status plan_keep(slice_plan *p, vgt_error *err)
{
    const vgt_model *m = p->model;
    uint64_t cap = 1ull + vgt_model_object_count(m) + vgt_model_mapping_count(m) + p->cpu_maps.n + p->tokens.n + p->ncuda;
    for (uint32_t i = 0; i < vgt_model_channel_count(m); i++) cap += 1u + vgt_model_channel_at(m, i)->engine_count;
    p->keep = malloc(cap * sizeof *p->keep);
    if (!p->keep) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: out of memory");
    uint32_t n = 0;
    if (p->session_seq != UINT64_MAX) p->keep[n++] = p->session_seq;
    for (uint32_t i = 0; i < vgt_model_object_count(m); i++) p->keep[n++] = vgt_model_object_at(m, i)->alloc_seq;
    for (uint32_t i = 0; i < vgt_model_channel_count(m); i++) {
        const vgt_model_channel *c = vgt_model_channel_at(m, i);
        p->keep[n++] = c->alloc_seq;
        for (uint32_t e = 0; e < c->engine_count; e++) p->keep[n++] = c->engines[e].alloc_seq;
    }
    for (uint32_t i = 0; i < vgt_model_mapping_count(m); i++) p->keep[n++] = vgt_model_mapping_at(m, i)->map_seq;
    for (uint32_t i = 0; i < p->cpu_maps.n; i++)
        if (vgt_model_object_find(m, p->cpu_maps.v[i].client, p->cpu_maps.v[i].handle)) p->keep[n++] = p->cpu_maps.v[i].seq;
    for (uint32_t i = 0; i < p->tokens.n; i++)
        if (vgt_model_channel_find(m, p->tokens.v[i].client, p->tokens.v[i].handle)) p->keep[n++] = p->tokens.v[i].seq;
    for (uint32_t i = 0; i < p->ncuda; i++) p->keep[n++] = p->cuda[i];
    qsort(p->keep, n, sizeof *p->keep, cmp_u64);
    uint32_t u = 0;
    for (uint32_t i = 0; i < n; i++)
        if (p->keep[i] < p->first_seq && (u == 0 || p->keep[u - 1] != p->keep[i])) p->keep[u++] = p->keep[i];
    p->nkeep = u;
    return VGT_OK;
}

/* ---- memory at A as MEMORY records ---- */

typedef struct mem_out {
    vgt_writer *w;
    const vgt_model *m;
    uint64_t ts;
    const slice_range *derived;   /* sorted, merged */
    uint32_t nderived;
    uint8_t *run;
    uint64_t run_va;
    uint32_t run_len, run_mem, run_flags;
    vgt_status st;
    vgt_error *err;
} mem_out;

static uint32_t memory_handle(const vgt_model *m, uint64_t va)
{
    const vgt_model_mapping *map = vgt_model_mapping_find(m, va);
    return map ? map->memory : 0;
}

static int run_flush(mem_out *o)
{
    if (o->run_len && o->st == VGT_OK) {
        vgt_rec_memory r = {.gpu_va = o->run_va, .length = o->run_len, .reason = VGT_MEM_INITIAL,
                            .memory = o->run_mem, .flags = o->run_flags, .data = o->run};
        o->st = vgt_write_memory(o->w, o->ts, &r, o->err);
    }
    o->run_len = 0;
    return o->st != VGT_OK;
}

/* Append bytes [va, va+n) to the current run, starting a new run where they do not continue it. */
static int run_add(mem_out *o, uint64_t va, const uint8_t *bytes, uint32_t n, uint32_t flags)
{
    uint32_t mem = memory_handle(o->m, va);
    if (o->run_len && (o->run_va + o->run_len != va || o->run_len + n > RUN_MAX || mem != o->run_mem ||
                       flags != o->run_flags) && run_flush(o))
        return 1;
    if (!o->run_len) {
        o->run_va = va;
        o->run_mem = mem;
        o->run_flags = flags;
    }
    memcpy(o->run + o->run_len, bytes, n);
    o->run_len += n;
    return 0;
}

/* First derived range that ends after va (binary search), or nderived. */
static uint32_t derived_from(const mem_out *o, uint64_t va)
{
    uint32_t lo = 0, hi = o->nderived;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (o->derived[mid].end <= va) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Known bytes, split where derived ranges begin and end. */
static int known_add(mem_out *o, uint64_t va, const uint8_t *bytes, uint32_t n)
{
    uint32_t k = derived_from(o, va);
    while (n) {
        const slice_range *r = k < o->nderived ? &o->derived[k] : NULL;
        int inside = r && r->va <= va;
        uint64_t stop = inside ? r->end : r ? r->va : va + n;
        uint32_t take = stop - va < n ? (uint32_t)(stop - va) : n;
        if (run_add(o, va, bytes, take, inside ? VGT_MEM_FLAG_DERIVED : 0)) return 1;
        va += take, bytes += take, n -= take;
        if (inside && va == r->end) k++;
    }
    return 0;
}

static int page_out(void *ctx, uint64_t va, const uint8_t *bytes, const uint8_t *known)
{
    mem_out *o = ctx;
    if (!known) return known_add(o, va, bytes, VGT_MODEL_PAGE_SIZE);
    for (uint32_t i = 0; i < VGT_MODEL_PAGE_SIZE;) {   /* runs of known bytes only */
        if (!known[i]) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j < VGT_MODEL_PAGE_SIZE && known[j]) j++;
        if (known_add(o, va + i, bytes + i, j - i)) return 1;
        i = j;
    }
    return 0;
}

static vgt_status write_memory(slice_plan *p, vgt_writer *w, vgt_error *err)
{
    mem_out o = {.w = w, .m = p->model, .ts = p->ts_before, .run = malloc(RUN_MAX), .err = err};
    o.derived = slice_derive_ranges(p->derive, &o.nderived);
    if (!o.run) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: out of memory");
    vgt_status st = vgt_model_mem_foreach(p->model, page_out, &o, err);
    if (st == VGT_OK) run_flush(&o);
    free(o.run);
    return st != VGT_OK ? st : o.st;
}

/* ---- decoder state at A as CHANNEL_STATE records (docs/trace-format.md, 0x0027) ---- */

static const chan_state *walked_channel(const slice_plan *p, const vgt_model_channel *mc)
{
    for (uint32_t i = 0; i < p->nchans; i++)
        if (p->chans[i].client == mc->rec.client && p->chans[i].handle == mc->rec.handle &&
            p->chans[i].alloc_seq == mc->alloc_seq)
            return &p->chans[i];
    return NULL;
}

/* A pending run is not carried (a slice starts at a header): say what is lost, where it came from. */
static vgt_status write_run_diag(slice_plan *p, vgt_writer *w, const chan_state *c, vgt_error *err)
{
    const vgt_pb_state *pb = &c->pb;
    char name[96], text[640];
    uint32_t cls = vgt_nv_is_host_method(pb->run_mthd) ? pb->channel_class : pb->subch_class[pb->run_subch & 7u];   /* host methods */
    vgt_method_name(cls, pb->run_mthd, name, sizeof name);
    int n = snprintf(text, sizeof text,
                     "slice: channel 0x%x (client 0x%x) had a method run (%s header) pending at submission %llu: %u "
                     "of %u dwords still expected, the next for method 0x%x (%s) on subchannel %u; header at seq "
                     "%llu entry %u dword %u of %s. The run is not carried: the slice decodes its first dword as a "
                     "header",
                     c->handle, c->client, vgt_hdr_kind_name(pb->run_kind), (unsigned long long)p->submits.first,
                     pb->run_remaining, pb->run_count, pb->run_mthd, name, pb->run_subch,
                     (unsigned long long)pb->run_header.seq, pb->run_header.entry, pb->run_header.dword, p->in);
    vgt_rec_diagnostic d = {.severity = 1, .code = VGT_E_DECODE, .length = n < (int)sizeof text ? (uint32_t)n : sizeof text - 1,
                            .text = text};
    return vgt_write_diagnostic(w, p->ts_before, &d, err);
}

/* What the slice derived of the GPU's writes before A, and what it could not (an info DIAGNOSTIC). */
static vgt_status write_derive_note(slice_plan *p, vgt_writer *w, vgt_error *err)
{
    slice_derive_stats s = slice_derive_get_stats(p->derive);
    if (!s.releases && !s.reductions && !s.uploads && !s.copies && !s.launches && !s.skipped) return VGT_OK;
    char text[400];
    int n = snprintf(text, sizeof text,
                     "slice: GPU writes of the %llu submissions before %llu derived into the initial memory "
                     "(MEMORY flag DERIVED): %llu semaphore releases, %llu reductions, %llu uploads, %llu copies, "
                     "%llu bytes; not derived: outputs of %llu launches (shaders are not executed), %llu other "
                     "writes (unknown source bytes, block-linear or remapped layouts, reports, unmapped targets)",
                     (unsigned long long)p->submits.first, (unsigned long long)p->submits.first,
                     (unsigned long long)s.releases, (unsigned long long)s.reductions, (unsigned long long)s.uploads,
                     (unsigned long long)s.copies, (unsigned long long)s.bytes, (unsigned long long)s.launches,
                     (unsigned long long)s.skipped);
    vgt_rec_diagnostic d = {.severity = 0, .code = 0, .length = n < (int)sizeof text ? (uint32_t)n : sizeof text - 1,
                            .text = text};
    return vgt_write_diagnostic(w, p->ts_before, &d, err);
}

static vgt_status write_channel_states(slice_plan *p, vgt_writer *w, vgt_error *err)
{
    for (uint32_t i = 0; i < vgt_model_channel_count(p->model); i++) {
        const vgt_model_channel *mc = vgt_model_channel_at(p->model, i);
        const chan_state *c = walked_channel(p, mc);
        vgt_rec_channel_state cs;
        if (mc->has_state && (!c || c->state_seq != mc->state_seq)) {
            cs = mc->state;   /* the input's own CHANNEL_STATE, no submission of the channel since */
            cs.flags &= ~VGT_CHANNEL_STATE_RUN_PENDING;
        } else if (c) {
            cs = (vgt_rec_channel_state){.client = c->client, .channel = c->handle,
                                         .subdevice_mask = c->pb.subdevice_mask,
                                         .extended_base = c->pb.extended_base,
                                         .stored_subdevice_mask = c->pb.stored_subdevice_mask};
            memcpy(cs.subch_class, c->pb.subch_class, sizeof cs.subch_class);
            if (c->pb.run_remaining) {
                cs.flags |= VGT_CHANNEL_STATE_RUN_PENDING;
                VGT_TRY(write_run_diag(p, w, c, err));
            }
        } else {
            continue;   /* no submission before A and no state: the channel starts empty anyway */
        }
        VGT_TRY(vgt_write_channel_state(w, p->ts_before, &cs, err));
        /* the engines' state of the classes bound here, run before the channel's next submission */
        VGT_TRY(slice_methods_write(p->methods, w, p->ts_before, mc->rec.client, mc->rec.handle, mc->alloc_seq,
                                    cs.subch_class, NULL, err));
    }
    return VGT_OK;
}

/* ---- pass 2 ---- */

static int reports_results(const vgt_record *r)
{
    if (r->type == VGT_REC_SEMAPHORE || r->type == VGT_REC_DOORBELL) return 1;
    if (r->type != VGT_REC_MEMORY) return 0;
    vgt_rec_memory m;
    vgt_error e;
    return vgt_decode_memory(r, &m, &e) == VGT_OK && m.reason == VGT_MEM_OBSERVED;
}

/* A record as it is, except a CUDA API record (format 1.2), whose submission counters are renumbered from
 * the slice's first submission (vgt_cuda_rebase_head). */
static vgt_status write_as_is(slice_plan *p, vgt_writer *w, const vgt_record *rec, vgt_error *err)
{
    if (!vgt_rec_is_cuda_api(rec->type) || rec->length < 32)
        return vgt_write_record(w, rec->type, rec->flags, rec->ts, rec->payload, rec->length, NULL, err);
    uint8_t *copy = malloc(rec->length);
    if (!copy) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: out of memory for a %u-byte record", rec->length);
    memcpy(copy, rec->payload, rec->length);
    vgt_cuda_rebase_head(copy, rec->length, p->submits.first);
    vgt_status st = vgt_write_record(w, rec->type, rec->flags, rec->ts, copy, rec->length, NULL, err);
    free(copy);
    return st;
}

/* An observed MEMORY record without the bytes the GPU wrote before A that cannot be known (timestamps,
 * reports: slice_derive_unknown): each piece between them is a record of its own. Other records as they
 * are. */
static vgt_status copy_record(slice_plan *p, vgt_writer *w, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_memory m;
    uint32_t n = 0;
    const slice_range *u = slice_derive_unknown(p->derive, &n);
    if (!n || rec->type != VGT_REC_MEMORY || vgt_decode_memory(rec, &m, err) != VGT_OK || m.reason != VGT_MEM_OBSERVED)
        return write_as_is(p, w, rec, err);
    uint64_t va = m.gpu_va, end = m.gpu_va + m.length;
    for (uint32_t i = 0; i < n && va < end; i++) {
        if (u[i].end <= va || u[i].va >= end) continue;
        if (u[i].va > va) {
            vgt_rec_memory piece = m;
            piece.gpu_va = va;
            piece.length = (uint32_t)(u[i].va - va);
            piece.data = m.data + (va - m.gpu_va);
            VGT_TRY(vgt_write_memory(w, rec->ts, &piece, err));
        }
        va = u[i].end;
    }
    if (va >= end) return VGT_OK;
    vgt_rec_memory rest = m;
    rest.gpu_va = va;
    rest.length = (uint32_t)(end - va);
    rest.data = m.data + (va - m.gpu_va);
    return vgt_write_memory(w, rec->ts, &rest, err);
}

static vgt_status copy_records(slice_plan *p, vgt_writer *w, vgt_error *err)
{
    vgt_reader *r;
    VGT_TRY(vgt_reader_open_path(&r, p->in, NULL, err));
    vgt_record rec;
    vgt_status st;
    uint32_t k = 0;
    uint64_t submits = p->submits.first;
    int prologue_done = 0, after_last = 0;
    p->progress_base = p->progress.total / 2;
    while ((st = vgt_reader_next(r, &rec, err)) == VGT_OK) {
        vgt_progress_set(&p->progress, p->progress_base + rec.chunk_offset);
        if (rec.seq < p->first_seq) {
            if (k < p->nkeep && p->keep[k] == rec.seq) {
                k++;
                if ((st = write_as_is(p, w, &rec, err))) break;
            }
            continue;
        }
        if (!prologue_done && ((st = write_memory(p, w, err)) != VGT_OK || (st = write_derive_note(p, w, err)) != VGT_OK ||
                               (st = write_channel_states(p, w, err)) != VGT_OK))
            break;
        prologue_done = 1;
        int is_submit = rec.type == VGT_REC_GPFIFO_SUBMIT;
        if (after_last && (is_submit || !reports_results(&rec))) break;
        if ((st = copy_record(p, w, &rec, err))) break;
        if (is_submit && submits++ == p->submits.last) after_last = 1;
    }
    vgt_reader_close(r);
    return st == VGT_E_EOF || st == VGT_OK ? VGT_OK : st;
}

/* The input's identity with sliced_from / slice_submits set (replacing those of an earlier slice). */
static vgt_status open_output(slice_plan *p, vgt_writer **w, vgt_error *err)
{
    vgt_reader *r;
    VGT_TRY(vgt_reader_open_path(&r, p->in, NULL, err));
    const vgt_trace_info *info = vgt_reader_info(r);
    vgt_identity *id = calloc(info->identity_count + 2u, sizeof *id);
    if (!id) {
        vgt_reader_close(r);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: out of memory");
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < info->identity_count; i++)
        if (strcmp(info->identity[i].key, "sliced_from") && strcmp(info->identity[i].key, "slice_submits"))
            id[n++] = info->identity[i];
    char range[64];
    if (p->submits.last == UINT64_MAX) snprintf(range, sizeof range, "%llu..", (unsigned long long)p->submits.first);
    else snprintf(range, sizeof range, "%llu..%llu", (unsigned long long)p->submits.first,
                  (unsigned long long)p->submits.last);
    id[n++] = (vgt_identity){"sliced_from", p->in_name};
    id[n++] = (vgt_identity){"slice_submits", range};
    vgt_status st = vgt_writer_open_path(w, p->out, &p->wo, id, n, err);
    free(id);
    vgt_reader_close(r);
    return st;
}

static vgt_status slice(slice_plan *p, vgt_error *err)
{
    VGT_TRY(vgt_model_new(&p->model, err));
    vgt_status st = fold_prefix(p, err);
    if (st == VGT_OK) st = plan_keep(p, err);
    vgt_writer *w = NULL;
    if (st == VGT_OK) st = open_output(p, &w, err);
    if (st == VGT_OK) st = copy_records(p, w, err);
    if (w && st != VGT_OK) vgt_writer_discard(w);   /* OUT stays as it was */
    else if (w) {
        vgt_error cerr;
        if (vgt_writer_close(w, &cerr) != VGT_OK) {
            st = cerr.code;
            *err = cerr;
        }
    }
    if (st == VGT_OK && p->methods && slice_methods_budget_note(p->methods, p->budget_note, sizeof p->budget_note))
        fprintf(stderr, "vgt slice: %s; the engine state written may lack what they would have set\n", p->budget_note);
    vgt_model_free(p->model);
    slice_derive_free(p->derive);
    slice_methods_free(p->methods);
    free(p->chans);
    free(p->keep);
    free(p->cuda);
    free(p->cpu_maps.v);
    free(p->tokens.v);
    return st;
}

typedef struct slice_args {
    vgt_range submits;
    uint64_t level, chunk_size;
    int quiet;
} slice_args;

static const vgt_cli_opt slice_options[] = {
    VGT_OPT_SUBMITS_FLAGS(slice_args, submits, "the submissions to keep (0-based; A.. runs to the end); a window "
                          "outside the trace is an error (exit 2)", VGT_OPT_REQUIRED),
    {"level", 0, VGT_ARG_U64, "L", "zstd level of OUT (default 3)", .off = offsetof(slice_args, level), .max = 22},
    {"chunk-size", 0, VGT_ARG_SIZE, "BYTES", "bytes of records per chunk of OUT (default 2 MiB)",
     .off = offsetof(slice_args, chunk_size), .max = VGT_MAX_CHUNK_RECORDS_BYTES, .what = "chunk size"},
    VGT_OPT_QUIET(slice_args, quiet),
    {0}};

const vgt_cli_spec cmd_slice_spec = {
    .verb = "slice", .args = "IN OUT", .min_args = 2, .max_args = 2, .opts = slice_options,
    .about = "Write the GPFIFO submissions A..B (0-based; A.. runs to the end) of IN as a trace that replays on its "
             "own: the objects, channels, engine objects, tokens and mappings alive at A (their original records), "
             "the memory contents at A (MEMORY records, reason initial; the bytes the GPU itself wrote before A, "
             "derived from the dropped submissions' semaphore releases, uploads and copies, carry the DERIVED flag, "
             "and an info DIAGNOSTIC says what could not be derived), each channel's push-buffer decoder state at A "
             "(CHANNEL_STATE records of format 1.1: subchannel bindings, subdevice masks, extended base; a DIAGNOSTIC "
             "when a method run was pending there) and engine state at A (CHANNEL_METHODS records: the MME program "
             "and the latest value of every pure state method of the bound classes, replayed before the channel's "
             "next submission), then every record from submission A to B and the observed results that follow B. "
             "Sequence numbers start at 0; the identity gains sliced_from and slice_submits. IN may be '-' (standard "
             "input, kept in a temporary file: it is read three times), OUT '-' (standard output); OUT is replaced "
             "only once complete.",
};

int cmd_slice(int argc, char **argv)
{
    slice_plan p = {.session_seq = UINT64_MAX, .wo = vgt_writer_defaults()};
    slice_args sa = {.level = (uint64_t)p.wo.zstd_level, .chunk_size = p.wo.chunk_target};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_slice_spec, argc, argv, &sa, &a);
    if (rc >= 0) return rc;
    p.in = a.pos[0];
    p.out = a.pos[1];
    p.submits = sa.submits;
    p.wo.zstd_level = (int)sa.level;
    p.wo.chunk_target = (uint32_t)sa.chunk_size;
    if (vgt_cli_same_file(p.in, p.out))
        return vgt_cli_error("slice", VGT_EXIT_USAGE, "OUT '%s' is the input file itself: writing it would destroy IN "
                             "before it is read; slice into another file", p.out);
    p.in_name = p.in;
    char spool[64];
    if (vgt_cli_seekable_input("slice", &p.in, spool, sizeof spool)) return VGT_EXIT_USAGE;
    vgt_error err;
    vgt_error_clear(&err);
    vgt_progress_begin_file(&p.progress, "slice", p.in, sa.quiet);
    p.progress.total *= 2;
    vgt_status sst = slice(&p, &err);
    vgt_progress_end(&p.progress);
    if (sst != VGT_OK) {
        if (err.code == VGT_E_NOT_FOUND &&
            (rc = vgt_cli_window_check("slice", "--submits", &p.submits, p.submits_total, "submissions")))
            return rc;
        if (err.code == VGT_E_NOT_FOUND) return vgt_cli_error("slice", VGT_EXIT_USAGE, "%s", err.msg);
        return vgt_cli_report("slice", &err);
    }
    return p.budget_note[0] ? VGT_EXIT_PROBLEM : VGT_EXIT_OK;
}
