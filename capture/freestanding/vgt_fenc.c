/* vgt_fenc.c: the freestanding record encoder (see vgt_fenc.h). No libc: every store is explicit, and
 * nothing here may make the compiler call memcpy/memset (the build checks the object has no undefined
 * symbol), so copies are byte loops over small sizes and the big bytes go to the sink by reference.
 *
 * Byte-exact agreement with the library's encoders (trace-format/src/records_encode.c) is checked by
 * tests/unit/test_fenc.c, which encodes the same records both ways and compares the bytes. */
#include "vgt_fenc.h"

/* The largest fixed part this file writes (CHANNEL: 72 bytes) plus the record header. */
#define FIXED_MAX 80u
#define SEG_BATCH 8u

static const uint8_t zeros[8];

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t pad8(uint32_t n) { return (n + 7u) & ~7u; }

/* A fixed part being laid out: fields are appended back to back, as the spec's tables list them. */
typedef struct fixed {
    uint8_t b[VGT_FENC_RECORD_HEADER + FIXED_MAX];
    uint32_t n;   /* bytes of payload laid out so far (after the record header) */
} fixed;
static void f32(fixed *f, uint32_t v) { put32(f->b + VGT_FENC_RECORD_HEADER + f->n, v); f->n += 4; }
static void f64(fixed *f, uint64_t v) { put64(f->b + VGT_FENC_RECORD_HEADER + f->n, v); f->n += 8; }

void vgt_fenc_buffer_init(vgt_fenc_buffer *b, void *buf, uint32_t cap)
{
    b->buf = buf;
    b->cap = cap;
    b->used = 0;
}

void vgt_fenc_buffer_reset(vgt_fenc_buffer *b) { b->used = 0; }

int vgt_fenc_buffer_sink(void *ctx, const vgt_fenc_part *parts, uint32_t nparts, uint32_t offset, uint32_t total)
{
    vgt_fenc_buffer *b = ctx;
    if (offset == 0 && total > b->cap - b->used) return 1;
    for (uint32_t i = 0; i < nparts; i++) {
        const uint8_t *p = parts[i].p;
        for (uint32_t k = 0; k < parts[i].n; k++) b->buf[b->used + k] = p ? p[k] : 0;
        b->used += parts[i].n;
    }
    return 0;
}

void vgt_fenc_init(vgt_fenc *e, vgt_fenc_sink_fn sink, void *ctx)
{
    e->sink = sink;
    e->ctx = ctx;
    e->next_seq = 0;
    e->records_lost = 0;
    e->state = 0;
}

static uint32_t cstrlen(const char *s)
{
    uint32_t n = 0;
    while (s[n]) n++;
    return n;
}

int vgt_fenc_begin(vgt_fenc *e, const vgt_fenc_identity *ident, uint32_t nident)
{
    if (e->state != 0 || nident > 4096u) return VGT_FENC_ARG;
    uint32_t id_len = 0;
    for (uint32_t i = 0; i < nident; i++) {
        uint32_t k = cstrlen(ident[i].key), v = cstrlen(ident[i].value);
        if (k == 0 || k > 255u || v > (64u << 10)) return VGT_FENC_ARG;
        id_len += pad8(8u + k + v);
        if (id_len > VGT_FENC_MAX_IDENTITY) return VGT_FENC_ARG;
    }
    uint8_t h[VGT_FENC_HEADER_SIZE];
    const char *magic = VGT_FENC_MAGIC;
    for (int i = 0; i < 8; i++) h[i] = (uint8_t)magic[i];
    put32(h + 8, VGT_FENC_STREAM_MAJOR | VGT_FENC_STREAM_MINOR << 16);
    put32(h + 12, 0);                       /* flags */
    put32(h + 16, 1u | 1u << 16);           /* the records are those of trace format 1.1 */
    put32(h + 20, id_len);
    put64(h + 24, 0);
    uint32_t total = VGT_FENC_HEADER_SIZE + id_len;
    vgt_fenc_part part = {h, VGT_FENC_HEADER_SIZE};
    if (e->sink(e->ctx, &part, 1, 0, total)) return VGT_FENC_FULL;
    uint32_t off = VGT_FENC_HEADER_SIZE;
    for (uint32_t i = 0; i < nident; i++) {
        uint32_t k = cstrlen(ident[i].key), v = cstrlen(ident[i].value);
        uint8_t lens[8];
        put32(lens, k);
        put32(lens + 4, v);
        uint32_t tail = pad8(8u + k + v) - (8u + k + v);
        vgt_fenc_part p[4] = {{lens, 8}, {ident[i].key, k}, {ident[i].value, v}, {zeros, tail}};
        e->sink(e->ctx, p, 4, off, total);
        off += 8u + k + v + tail;
    }
    e->state = 1;
    return VGT_FENC_OK;
}

/* Writes one record: f holds the fixed part (f->n bytes after the header room); blobs follow, each padded
 * to 8 except the last, whose padding is the record padding. */
static int emit(vgt_fenc *e, uint16_t type, uint64_t ts, fixed *f, const vgt_fenc_part *blobs, uint32_t nblobs)
{
    if (e->state != 1) return VGT_FENC_ARG;
    uint64_t len = f->n;
    for (uint32_t i = 0; i < nblobs; i++) {
        if (blobs[i].n && !blobs[i].p) return VGT_FENC_ARG;
        if (i) len = pad8((uint32_t)len);
        len += blobs[i].n;
        if (len > VGT_FENC_MAX_PAYLOAD) return VGT_FENC_ARG;
    }
    uint8_t *h = f->b;
    h[0] = (uint8_t)type;
    h[1] = (uint8_t)(type >> 8);
    h[2] = h[3] = 0;
    put32(h + 4, (uint32_t)len);
    put64(h + 8, e->next_seq);
    put64(h + 16, ts);
    uint32_t total = VGT_FENC_RECORD_HEADER + pad8((uint32_t)len);
    /* at most two blobs (RM_ALLOC): header and fixed part, blob, padding, blob, record padding */
    vgt_fenc_part parts[6];
    uint32_t np = 0, done = VGT_FENC_RECORD_HEADER + f->n;
    if (nblobs > 2) return VGT_FENC_ARG;
    parts[np++] = (vgt_fenc_part){f->b, done};
    for (uint32_t i = 0; i < nblobs; i++) {
        uint32_t gap = i && blobs[i - 1].n % 8 ? 8 - blobs[i - 1].n % 8 : 0;
        if (gap) parts[np++] = (vgt_fenc_part){zeros, gap};
        parts[np++] = blobs[i];
        done += gap + blobs[i].n;
    }
    if (total > done) parts[np++] = (vgt_fenc_part){zeros, total - done};
    if (e->sink(e->ctx, parts, np, 0, total)) return e->records_lost++, VGT_FENC_FULL;
    e->next_seq++;
    return VGT_FENC_OK;
}

static void fixed_init(fixed *f) { f->n = 0; }

int vgt_fenc_end(vgt_fenc *e, uint64_t ts)
{
    if (e->state != 1) return VGT_FENC_ARG;
    uint8_t h[VGT_FENC_RECORD_HEADER];
    h[0] = h[1] = 0xFF;
    h[2] = h[3] = 0;
    put32(h + 4, 0);
    put64(h + 8, e->next_seq);
    put64(h + 16, ts);
    vgt_fenc_part p = {h, sizeof h};
    if (e->sink(e->ctx, &p, 1, 0, sizeof h)) return VGT_FENC_FULL;
    e->state = 2;
    return VGT_FENC_OK;
}

int vgt_fenc_object(vgt_fenc *e, uint64_t ts, const vgt_frec_object *o)
{
    fixed f;
    fixed_init(&f);
    f32(&f, o->client), f32(&f, o->parent), f32(&f, o->handle), f32(&f, o->cls), f32(&f, o->status);
    f32(&f, o->params_length);
    vgt_fenc_part b[2] = {{o->params_in, o->params_length}, {o->params_out, o->params_length}};
    return emit(e, VGT_FENC_REC_RM_ALLOC, ts, &f, b, 2);
}

int vgt_fenc_free(vgt_fenc *e, uint64_t ts, const vgt_frec_free *x)
{
    fixed f;
    fixed_init(&f);
    f32(&f, x->client), f32(&f, x->parent), f32(&f, x->handle), f32(&f, x->status);
    return emit(e, VGT_FENC_REC_RM_FREE, ts, &f, 0, 0);
}

int vgt_fenc_map(vgt_fenc *e, uint64_t ts, const vgt_frec_map *m)
{
    fixed f;
    fixed_init(&f);
    f32(&f, m->client), f32(&f, m->device), f32(&f, m->va_space), f32(&f, m->memory);
    f64(&f, m->gpu_va), f64(&f, m->offset), f64(&f, m->length);
    f32(&f, m->flags), f32(&f, m->source), f32(&f, m->status), f32(&f, 0);
    return emit(e, VGT_FENC_REC_GPU_MAP, ts, &f, 0, 0);
}

int vgt_fenc_unmap(vgt_fenc *e, uint64_t ts, const vgt_frec_unmap *m)
{
    fixed f;
    fixed_init(&f);
    f32(&f, m->client), f32(&f, m->device), f32(&f, m->va_space), f32(&f, m->memory);
    f64(&f, m->gpu_va), f64(&f, m->length), f32(&f, m->source), f32(&f, m->status);
    return emit(e, VGT_FENC_REC_GPU_UNMAP, ts, &f, 0, 0);
}

int vgt_fenc_channel(vgt_fenc *e, uint64_t ts, const vgt_frec_channel *c)
{
    fixed f;
    fixed_init(&f);
    f32(&f, c->client), f32(&f, c->parent), f32(&f, c->handle), f32(&f, c->cls);
    f64(&f, c->ring_va), f32(&f, c->entries), f32(&f, c->userd_memory);
    f64(&f, c->userd_offset), f64(&f, c->userd_gpu_va);
    f32(&f, c->engine_type), f32(&f, c->va_space), f32(&f, c->context_share), f32(&f, c->error_notifier);
    f32(&f, c->status), f32(&f, 0);
    return emit(e, VGT_FENC_REC_CHANNEL, ts, &f, 0, 0);
}

int vgt_fenc_engine_object(vgt_fenc *e, uint64_t ts, const vgt_frec_engine_object *o)
{
    fixed f;
    fixed_init(&f);
    f32(&f, o->client), f32(&f, o->channel), f32(&f, o->handle), f32(&f, o->cls), f32(&f, o->status), f32(&f, 0);
    return emit(e, VGT_FENC_REC_ENGINE_OBJECT, ts, &f, 0, 0);
}

int vgt_fenc_work_submit_token(vgt_fenc *e, uint64_t ts, uint32_t client, uint32_t channel, uint32_t token)
{
    fixed f;
    fixed_init(&f);
    f32(&f, client), f32(&f, channel), f32(&f, token), f32(&f, 0);
    return emit(e, VGT_FENC_REC_WORK_SUBMIT_TOKEN, ts, &f, 0, 0);
}

int vgt_fenc_submit(vgt_fenc *e, uint64_t ts, const vgt_frec_submit *s, const uint64_t *entries,
                    const vgt_frec_segment *segs)
{
    if (e->state != 1) return VGT_FENC_ARG;
    if ((s->entry_count && !entries) || (s->segment_count && !segs)) return VGT_FENC_ARG;
    /* The payload length first: the fixed part, the entries, then 16 bytes and the data of each segment,
     * every segment's data padded to 8 but the last's. */
    uint64_t len = 40u + 8ull * s->entry_count;
    for (uint32_t i = 0; i < s->segment_count; i++) {
        if (segs[i].length && !segs[i].data) return VGT_FENC_ARG;
        if (i) len = (len + 7u) & ~7ull;
        len += 16u + segs[i].length;
        if (len > VGT_FENC_MAX_PAYLOAD) return VGT_FENC_ARG;
    }
    if (len > VGT_FENC_MAX_PAYLOAD) return VGT_FENC_ARG;
    fixed f;
    fixed_init(&f);
    f32(&f, s->client), f32(&f, s->channel), f32(&f, s->token), f32(&f, s->flags);
    f32(&f, s->gp_get_before), f32(&f, s->gp_put_before), f32(&f, s->gp_get_after), f32(&f, s->gp_put_after);
    f32(&f, s->entry_count), f32(&f, s->segment_count);
    uint8_t *h = f.b;
    h[0] = (uint8_t)VGT_FENC_REC_GPFIFO_SUBMIT;
    h[1] = (uint8_t)(VGT_FENC_REC_GPFIFO_SUBMIT >> 8);
    h[2] = h[3] = 0;
    put32(h + 4, (uint32_t)len);
    put64(h + 8, e->next_seq);
    put64(h + 16, ts);
    uint32_t total = VGT_FENC_RECORD_HEADER + pad8((uint32_t)len), off = 0;
    vgt_fenc_part p = {f.b, VGT_FENC_RECORD_HEADER + f.n};
    if (e->sink(e->ctx, &p, 1, 0, total)) return e->records_lost++, VGT_FENC_FULL;
    off = p.n;
    /* Entries, little-endian, a batch at a time through a small buffer (the caller's are host order). */
    uint8_t eb[8 * 32];
    for (uint32_t i = 0; i < s->entry_count;) {
        uint32_t n = s->entry_count - i < 32u ? s->entry_count - i : 32u;
        for (uint32_t k = 0; k < n; k++) put64(eb + 8 * k, entries[i + k]);
        p = (vgt_fenc_part){eb, 8 * n};
        e->sink(e->ctx, &p, 1, off, total);
        off += 8 * n;
        i += n;
    }
    uint8_t heads[16 * SEG_BATCH];
    vgt_fenc_part parts[3 * SEG_BATCH];
    for (uint32_t i = 0; i < s->segment_count;) {
        uint32_t np = 0;
        for (uint32_t k = 0; k < SEG_BATCH && i < s->segment_count; k++, i++) {
            if (i && segs[i - 1].length % 8) {
                parts[np++] = (vgt_fenc_part){zeros, 8 - segs[i - 1].length % 8};
                off += 8 - segs[i - 1].length % 8;
            }
            put64(heads + 16 * k, segs[i].gpu_va);
            put32(heads + 16 * k + 8, segs[i].length);
            put32(heads + 16 * k + 12, segs[i].flags);
            parts[np++] = (vgt_fenc_part){heads + 16 * k, 16};
            parts[np++] = (vgt_fenc_part){segs[i].data, segs[i].length};
            off += 16 + segs[i].length;
        }
        uint32_t start = off;
        for (uint32_t k = 0; k < np; k++) start -= parts[k].n;
        e->sink(e->ctx, parts, np, start, total);
    }
    if (total > off) {
        p = (vgt_fenc_part){zeros, total - off};
        e->sink(e->ctx, &p, 1, off, total);
    }
    e->next_seq++;
    return VGT_FENC_OK;
}

int vgt_fenc_memory(vgt_fenc *e, uint64_t ts, uint64_t gpu_va, const void *data, uint32_t length,
                    uint32_t reason, uint32_t memory, uint32_t flags)
{
    fixed f;
    fixed_init(&f);
    f64(&f, gpu_va), f32(&f, length), f32(&f, reason), f32(&f, memory), f32(&f, flags);
    vgt_fenc_part b = {data, length};
    return emit(e, VGT_FENC_REC_MEMORY, ts, &f, &b, 1);
}

int vgt_fenc_doorbell(vgt_fenc *e, uint64_t ts, uint32_t token, uint32_t channel, uint32_t offset, uint32_t flags)
{
    fixed f;
    fixed_init(&f);
    f32(&f, token), f32(&f, channel), f32(&f, offset), f32(&f, flags);
    return emit(e, VGT_FENC_REC_DOORBELL, ts, &f, 0, 0);
}

int vgt_fenc_semaphore(vgt_fenc *e, uint64_t ts, uint64_t gpu_va, uint64_t value, uint32_t size, uint32_t flags)
{
    fixed f;
    fixed_init(&f);
    f64(&f, gpu_va), f64(&f, value), f32(&f, size), f32(&f, flags);
    return emit(e, VGT_FENC_REC_SEMAPHORE, ts, &f, 0, 0);
}

int vgt_fenc_marker(vgt_fenc *e, uint64_t ts, const char *text, uint32_t length)
{
    fixed f;
    fixed_init(&f);
    f32(&f, length), f32(&f, 0);
    vgt_fenc_part b = {text, length};
    return emit(e, VGT_FENC_REC_MARKER, ts, &f, &b, 1);
}

int vgt_fenc_diagnostic(vgt_fenc *e, uint64_t ts, uint32_t severity, uint32_t code, const char *text, uint32_t length)
{
    fixed f;
    fixed_init(&f);
    f32(&f, severity), f32(&f, code), f32(&f, length), f32(&f, 0);
    vgt_fenc_part b = {text, length};
    return emit(e, VGT_FENC_REC_DIAGNOSTIC, ts, &f, &b, 1);
}

int vgt_fenc_record(vgt_fenc *e, uint16_t type, uint64_t ts, const vgt_fenc_part *payload, uint32_t nparts)
{
    if (e->state != 1 || type == 0 || type == VGT_FENC_END_TYPE) return VGT_FENC_ARG;
    uint64_t len = 0;
    for (uint32_t i = 0; i < nparts; i++) {
        if (payload[i].n && !payload[i].p) return VGT_FENC_ARG;
        len += payload[i].n;
    }
    if (len > VGT_FENC_MAX_PAYLOAD) return VGT_FENC_ARG;
    uint8_t h[VGT_FENC_RECORD_HEADER];
    h[0] = (uint8_t)type;
    h[1] = (uint8_t)(type >> 8);
    h[2] = h[3] = 0;
    put32(h + 4, (uint32_t)len);
    put64(h + 8, e->next_seq);
    put64(h + 16, ts);
    uint32_t total = VGT_FENC_RECORD_HEADER + pad8((uint32_t)len);
    vgt_fenc_part p = {h, sizeof h};
    if (e->sink(e->ctx, &p, 1, 0, total)) return e->records_lost++, VGT_FENC_FULL;
    uint32_t off = sizeof h;
    if (nparts) e->sink(e->ctx, payload, nparts, off, total);
    off += (uint32_t)len;
    if (total > off) {
        p = (vgt_fenc_part){zeros, total - off};
        e->sink(e->ctx, &p, 1, off, total);
    }
    e->next_seq++;
    return VGT_FENC_OK;
}
