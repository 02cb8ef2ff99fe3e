/* slice_derive.c: the GPU's own writes before a slice's first submission, applied to the slice's model
 * (see slice_derive.h for what is derived and what is not). */
#include "slice_derive.h"

#include <stdlib.h>
#include <string.h>

#include "vgt/events.h"
#include "vgt/grow.h"

#define MAX_COPY (64u << 20)          /* bytes of one copy derived; a larger one is counted as skipped */
#define MAX_RANGES (1u << 20)         /* merged written ranges kept; past it, writes are skipped */

/* A set of byte ranges, sorted and merged lazily. */
typedef struct range_set {
    slice_range *v;
    uint32_t n, cap;
    int merged;                       /* sorted and merged since the last add */
} range_set;

struct slice_derive {
    vgt_model *model;
    range_set written;                /* the bytes derived */
    range_set unknown;                /* bytes the GPU wrote that cannot be known: release timestamps, reports */
    uint8_t *copy_buf;
    uint32_t copy_cap;
    slice_derive_stats st;
    vgt_status status;
    vgt_error err;
};

vgt_status slice_derive_new(slice_derive **out, vgt_model *model, vgt_error *err)
{
    slice_derive *d = calloc(1, sizeof *d);
    if (!d) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory for the GPU-write tracker");
    d->model = model;
    d->written.merged = d->unknown.merged = 1;
    *out = d;
    return VGT_OK;
}

void slice_derive_free(slice_derive *d)
{
    if (!d) return;
    free(d->written.v);
    free(d->unknown.v);
    free(d->copy_buf);
    free(d);
}

static int fail(slice_derive *d, vgt_status st)
{
    if (d->status == VGT_OK) d->status = st;
    return 1;
}

/* ---- written ranges ---- */

static int cmp_range(const void *a, const void *b)
{
    const slice_range *x = a, *y = b;
    return x->va < y->va ? -1 : x->va > y->va;
}

static void merge_ranges(range_set *r)
{
    if (r->merged) return;
    qsort(r->v, r->n, sizeof *r->v, cmp_range);
    uint32_t u = 0;
    for (uint32_t i = 0; i < r->n; i++) {
        if (u && r->v[i].va <= r->v[u - 1].end) {
            if (r->v[i].end > r->v[u - 1].end) r->v[u - 1].end = r->v[i].end;
        } else {
            r->v[u++] = r->v[i];
        }
    }
    r->n = u;
    r->merged = 1;
}

/* 0 when the range is kept; 1 when the table is full (the write is then not derived). */
static int add_range(slice_derive *d, range_set *r, uint64_t va, uint64_t n)
{
    if (r->n == r->cap) {
        merge_ranges(r);
        if (r->n == MAX_RANGES) return 1;
        if (vgt_grow(&r->v, &r->cap, r->n + 1ull, 256))
            return fail(d, VGT_FAIL(&d->err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory for %u ranges", r->n + 1));
    }
    r->v[r->n++] = (slice_range){va, va + n};
    r->merged = 0;
    return 0;
}

const slice_range *slice_derive_ranges(slice_derive *d, uint32_t *count)
{
    merge_ranges(&d->written);
    *count = d->written.n;
    return d->written.v;
}

const slice_range *slice_derive_unknown(slice_derive *d, uint32_t *count)
{
    merge_ranges(&d->unknown);
    *count = d->unknown.n;
    return d->unknown.v;
}

/* ---- writes ---- */

/* Only into mapped memory: a slice holds no contents outside its mappings. 1: written. */
static int gpu_write(slice_derive *d, uint64_t va, const void *bytes, uint64_t n)
{
    const vgt_model_mapping *a = vgt_model_mapping_find(d->model, va);
    const vgt_model_mapping *b = n ? vgt_model_mapping_find(d->model, va + n - 1) : a;
    if (!n || !a || !b || va + n < va) return 0;
    if (add_range(d, &d->written, va, n)) return 0;
    vgt_status st = vgt_model_mem_write(d->model, va, bytes, n, &d->err);
    if (st != VGT_OK) return fail(d, st), 0;
    d->st.bytes += n;
    return 1;
}

static void put_le(uint8_t *p, uint64_t v, uint32_t size)
{
    for (uint32_t i = 0; i < size; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int reduce(unsigned red, int is_signed, uint32_t size, uint64_t cur, uint64_t arg, uint64_t *out)
{
    uint64_t mask = size == 8 ? UINT64_MAX : 0xFFFFFFFFull;
    int64_t sc = size == 8 ? (int64_t)cur : (int64_t)(int32_t)cur, sa = size == 8 ? (int64_t)arg : (int64_t)(int32_t)arg;
    switch (red) {
    case VGT_RED_ADD: *out = cur + arg; break;
    case VGT_RED_MIN: *out = is_signed ? (uint64_t)(sc < sa ? sc : sa) : (cur < arg ? cur : arg); break;
    case VGT_RED_MAX: *out = is_signed ? (uint64_t)(sc > sa ? sc : sa) : (cur > arg ? cur : arg); break;
    case VGT_RED_INC: *out = cur >= arg ? 0 : cur + 1; break;     /* wraps to 0 past the payload */
    case VGT_RED_DEC: *out = cur == 0 || cur > arg ? arg : cur - 1; break;
    case VGT_RED_AND: *out = cur & arg; break;
    case VGT_RED_OR: *out = cur | arg; break;
    case VGT_RED_XOR: *out = cur ^ arg; break;
    default: return 0;                                            /* float reductions: not derived */
    }
    *out &= mask;
    return 1;
}

static int derive_sem(slice_derive *d, const vgt_ev_sem *s)
{
    uint8_t b[8];
    uint32_t size = s->size == 8 ? 8 : 4;
    uint64_t v = s->payload;
    if (s->op == VGT_SEM_OP_REDUCTION) {
        uint64_t known = 0, cur = 0;
        if (vgt_model_mem_read(d->model, s->va, b, size, &known, &d->err) != VGT_OK || known != size) return 0;
        for (uint32_t i = 0; i < size; i++) cur |= (uint64_t)b[i] << (8 * i);
        if (!reduce(s->reduction, (s->flags & VGT_SEM_FLAG_SIGNED) != 0, size, cur, s->payload, &v)) return 0;
    } else if (s->op != VGT_SEM_OP_RELEASE) {
        return 0;
    }
    put_le(b, v, size);
    if (!gpu_write(d, s->va, b, size)) return 0;
    if (s->flags & VGT_SEM_FLAG_TIMESTAMP) add_range(d, &d->unknown, s->va + 8, 8);   /* four-word: time at +8 */
    if (s->op == VGT_SEM_OP_REDUCTION) d->st.reductions++;
    else d->st.releases++;
    return 1;
}

static int derive_upload(slice_derive *d, const vgt_ev_upload *u)
{
    if (!u->complete || !u->pitch_layout || !u->data || u->received < u->length || !u->line_count) return 0;
    uint64_t pitch = u->line_count > 1 ? u->pitch_out : u->line_length;
    if (u->line_count > 1 && pitch < u->line_length) return 0;
    for (uint32_t i = 0; i < u->line_count; i++)
        if (!gpu_write(d, u->dst_va + i * pitch, u->data + (uint64_t)i * u->line_length, u->line_length)) return 0;
    d->st.uploads++;
    return 1;
}

/* Read every source line first, then write: overlapping copies behave like memmove. */
static int derive_copy(slice_derive *d, const vgt_ev_copy *c)
{
    uint32_t lines = c->multi_line ? c->line_count : 1;
    uint64_t total = (uint64_t)c->line_length * lines;
    if (!c->src_pitch || !c->dst_pitch || c->remap || c->memset || c->src_physical || c->dst_physical || !total ||
        total > MAX_COPY)
        return 0;
    if (total > d->copy_cap) {
        uint8_t *b = realloc(d->copy_buf, total);
        if (!b) return fail(d, VGT_FAIL(&d->err, VGT_E_NOMEM, VGT_NO_OFFSET, "slice: no memory to copy %llu bytes",
                                        (unsigned long long)total)), 0;
        d->copy_buf = b;
        d->copy_cap = (uint32_t)total;
    }
    for (uint32_t i = 0; i < lines; i++) {
        uint64_t known = 0;
        uint8_t *dst = d->copy_buf + (uint64_t)i * c->line_length;
        if (vgt_model_mem_read(d->model, c->src_va + (uint64_t)i * c->pitch_in, dst, c->line_length, &known, &d->err) !=
                VGT_OK || known != c->line_length)
            return 0;
    }
    for (uint32_t i = 0; i < lines; i++)
        if (!gpu_write(d, c->dst_va + (uint64_t)i * c->pitch_out, d->copy_buf + (uint64_t)i * c->line_length, c->line_length))
            return 0;
    d->st.copies++;
    return 1;
}

static void on_event(void *ctx, const vgt_event *ev)
{
    slice_derive *d = ctx;
    int done = 0;
    switch (ev->kind) {
    case VGT_EV_SEM_RELEASE: done = derive_sem(d, &ev->u.sem); break;
    case VGT_EV_UPLOAD: done = derive_upload(d, &ev->u.upload); break;
    case VGT_EV_COPY: done = derive_copy(d, &ev->u.copy); break;
    case VGT_EV_EMPTY_DMA: return;                /* moves nothing (a release is a SEM_RELEASE event) */
    case VGT_EV_LAUNCH: d->st.launches++; return;
    case VGT_EV_EMPTY_DISPATCH: return;           /* runs no shaders: its releases are SEM_RELEASE events */
    case VGT_EV_REPORT:                           /* counters and timestamps: not knowable */
        add_range(d, &d->unknown, ev->u.sem.va, 16);
        break;
    default: return;                              /* acquires, binds, draws write nothing */
    }
    if (!done) d->st.skipped++;
}

/* ---- walker hooks ---- */

void slice_derive_on_channel(slice_derive *d, vgt_walk_channel *c)
{
    vgt_sem_config cfg = {.on_event = on_event, .ctx = d, .mem_read = vgt_sem_model_reader, .mem_ctx = d->model,
                          .keep_upload_bytes = 1};
    vgt_status st = vgt_sem_attach(&c->user, &cfg, &d->err);
    if (st != VGT_OK) fail(d, st);
}

void slice_derive_on_channel_end(slice_derive *d, vgt_walk_channel *c)
{
    (void)d;
    vgt_sem_detach(&c->user);
}

int slice_derive_on_method(slice_derive *d, const vgt_walk_submit *s, const vgt_method *m)
{
    if (d->status != VGT_OK || !s->chan->user) return 1;
    vgt_status st = vgt_sem_method(s->chan->user, m, &d->err);
    return st != VGT_OK ? fail(d, st) : d->status != VGT_OK;
}

int slice_derive_on_run(slice_derive *d, const vgt_walk_submit *s, const vgt_method *m, const uint8_t *data,
                        uint32_t count)
{
    if (d->status != VGT_OK || !s->chan->user) return 1;
    vgt_status st = vgt_sem_noninc_run(s->chan->user, m, data, count, 0, &d->err);
    return st != VGT_OK ? fail(d, st) : d->status != VGT_OK;
}

int slice_derive_on_submit_end(slice_derive *d, const vgt_walk_submit *s)
{
    if (s->chan->user) vgt_sem_flush(s->chan->user);
    return d->status != VGT_OK;
}

vgt_status slice_derive_status(const slice_derive *d, vgt_error *err)
{
    if (d->status != VGT_OK && err) *err = d->err;
    return d->status;
}

slice_derive_stats slice_derive_get_stats(const slice_derive *d) { return d->st; }
