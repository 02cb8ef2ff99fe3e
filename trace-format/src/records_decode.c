/* records_decode.c: payload decoding for every record type, through one table-driven parser.
 *
 * The parser reads the fixed part (which must be all there), then each blob by the length its fixed
 * field gives, then the blob's padding (as much of it as the payload holds: the last blob's padding is
 * the record padding, outside payload_length). Bytes left after that are a newer minor's additions and
 * are ignored (docs/trace-format.md section 4). The same parser feeds the typed decoders, which fill a
 * vgt_rec_* struct, and vgt_record_fields, which reports each field to a callback. */
#include <string.h>

#include "le.h"
#include "records.h"

/* Large enough and aligned for every vgt_rec_* struct. */
typedef union any_rec {
    vgt_rec_session_start a; vgt_rec_session_end b; vgt_rec_process_start c; vgt_rec_process_end d;
    vgt_rec_rm_alloc e; vgt_rec_rm_free f; vgt_rec_rm_control g; vgt_rec_mem_alloc h; vgt_rec_gpu_map i;
    vgt_rec_gpu_unmap j; vgt_rec_cpu_map k; vgt_rec_cpu_unmap l; vgt_rec_ioctl m; vgt_rec_memory n;
    vgt_rec_channel o; vgt_rec_engine_object p; vgt_rec_gpfifo_submit q; vgt_rec_work_submit_token r;
    vgt_rec_doorbell s; vgt_rec_semaphore t; vgt_rec_cuda_module u; vgt_rec_cuda_launch v; vgt_rec_marker w;
    vgt_rec_diagnostic x; vgt_rec_channel_state y; vgt_rec_channel_methods z;
    vgt_rec_cuda_image c1; vgt_rec_cuda_load c2; vgt_rec_cuda_function c3; vgt_rec_cuda_kernel c4;
    vgt_rec_cuda_memory c5; vgt_rec_cuda_call c6; vgt_rec_cuda_image_ref c7;
} any_rec;

typedef struct walk {
    vgt_field_fn fn;          /* NULL: no callback */
    void *ctx;
    int stopped;
    vgt_segment *seg;         /* GPFIFO_SUBMIT: caller's segment array, or NULL (count only) */
    uint32_t max_seg;
} walk;

static int emit(walk *w, const char *name, int kind, uint64_t value, uint32_t aux, const uint8_t *b, uint32_t n)
{
    if (!w->fn || w->stopped) return 0;
    vgt_field f = {name, kind, value, aux, b, n};
    w->stopped = w->fn(w->ctx, &f) != 0;
    return w->stopped;
}

static vgt_status malformed(const vgt_record *r, const rec_layout *l, const char *field, uint64_t need,
                            uint64_t at, vgt_error *err)
{
    return VGT_FAIL(err, VGT_E_FORMAT, r->chunk_offset,
                    "record seq %llu (%s): field '%s' needs %llu bytes at payload offset %llu but the payload "
                    "has %u bytes (in the chunk at offset %llu)",
                    (unsigned long long)r->seq, l->name, field, (unsigned long long)need,
                    (unsigned long long)at, r->length, (unsigned long long)r->chunk_offset);
}

static void emit_fixed(walk *w, const rec_layout *l, const void *st)
{
    const uint8_t *base = st;
    for (uint32_t i = 0; i < l->nfields && !w->stopped; i++) {
        const rec_field *f = &l->fields[i];
        uint32_t v32;
        uint64_t v64;
        switch (f->kind) {
        case F_U32: case F_X32:
            memcpy(&v32, base + f->soff, 4);
            emit(w, f->name, f->kind == F_U32 ? VGT_FIELD_U32 : VGT_FIELD_X32, v32, 0, NULL, 0);
            break;
        case F_S32:
            memcpy(&v32, base + f->soff, 4);
            emit(w, f->name, VGT_FIELD_S32, (uint64_t)(int64_t)(int32_t)v32, 0, NULL, 0);
            break;
        case F_U64: case F_X64:
            memcpy(&v64, base + f->soff, 8);
            emit(w, f->name, f->kind == F_U64 ? VGT_FIELD_U64 : VGT_FIELD_X64, v64, 0, NULL, 0);
            break;
        default:
            break;
        }
    }
}

/* Takes n bytes and then up to pad8(n)-n bytes of padding. */
static const uint8_t *take_padded(cursor *c, uint64_t n)
{
    const uint8_t *p = cursor_take(c, n);
    if (!p) return NULL;
    uint64_t pad = pad8(n) - n;
    c->pos += pad < cursor_left(c) ? pad : cursor_left(c);
    return p;
}

static vgt_status parse_blobs(const vgt_record *r, const rec_layout *l, void *st, cursor *c, walk *w,
                              vgt_error *err)
{
    uint8_t *base = st;
    for (uint32_t i = 0; i < l->nfields; i++) {
        const rec_field *f = &l->fields[i];
        if (f->kind != F_BLOB && f->kind != F_TEXT) continue;
        uint32_t n;
        memcpy(&n, base + l->fields[f->len_field].soff, 4);
        uint64_t at = c->pos;
        const uint8_t *p = take_padded(c, n);
        if (!p) return malformed(r, l, f->name, n, at, err);
        memcpy(base + f->soff, &p, sizeof p);
        emit(w, f->name, f->kind == F_BLOB ? VGT_FIELD_BLOB : VGT_FIELD_TEXT, 0, 0, p, n);
    }
    return VGT_OK;
}

static vgt_status parse_gpfifo_tail(const vgt_record *r, const rec_layout *l, vgt_rec_gpfifo_submit *s,
                                    cursor *c, walk *w, vgt_error *err)
{
    uint64_t at = c->pos;
    s->entries = cursor_take(c, 8ull * s->entry_count);
    if (!s->entries) return malformed(r, l, "entries", 8ull * s->entry_count, at, err);
    emit(w, "entries", VGT_FIELD_ENTRIES, s->entry_count, 0, s->entries, 8u * s->entry_count);
    if (w->seg && s->segment_count > w->max_seg)
        return VGT_FAIL(err, VGT_E_LIMIT, r->chunk_offset,
                        "record seq %llu (GPFIFO_SUBMIT): %u segments, more than the %u the caller has room for",
                        (unsigned long long)r->seq, s->segment_count, w->max_seg);
    for (uint32_t i = 0; i < s->segment_count; i++) {
        vgt_segment sg;
        at = c->pos;
        const uint8_t *h = cursor_take(c, 16);
        if (!h) return malformed(r, l, "segment header", 16, at, err);
        sg.gpu_va = le_get64(h);
        sg.length = le_get32(h + 8);
        sg.flags = le_get32(h + 12);
        at = c->pos;
        sg.data = take_padded(c, sg.length);
        if (!sg.data) return malformed(r, l, "segment data", sg.length, at, err);
        if (w->seg) w->seg[i] = sg;
        emit(w, "segment", VGT_FIELD_SEGMENT, sg.gpu_va, sg.flags, sg.data, sg.length);
    }
    s->segments = w->seg;
    return VGT_OK;
}

static vgt_status parse(const vgt_record *r, const rec_layout *l, void *st, walk *w, vgt_error *err)
{
    if (r->length && !r->payload) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "record without payload bytes");
    cursor c = cursor_make(r->payload, r->length);
    const uint8_t *fixed = cursor_take(&c, l->fixed);
    if (!fixed)
        return VGT_FAIL(err, VGT_E_FORMAT, r->chunk_offset,
                        "record seq %llu (%s): payload of %u bytes is shorter than its fixed part of %u bytes "
                        "(in the chunk at offset %llu)",
                        (unsigned long long)r->seq, l->name, r->length, l->fixed,
                        (unsigned long long)r->chunk_offset);
    rec_fixed_decode(l, fixed, st);
    emit_fixed(w, l, st);
    if (l->gpfifo_tail) return parse_gpfifo_tail(r, l, st, &c, w, err);
    return parse_blobs(r, l, st, &c, w, err);
}

static vgt_status decode_typed(const vgt_record *r, uint16_t type, void *out, size_t size, vgt_segment *seg,
                               uint32_t max_seg, vgt_error *err)
{
    const rec_layout *l = rec_layout_find(type);
    if (r->type != type)
        return VGT_FAIL(err, VGT_E_ARG, r->chunk_offset, "record seq %llu is a %s (0x%04x), not a %s",
                        (unsigned long long)r->seq, vgt_rec_type_name(r->type) ? vgt_rec_type_name(r->type) : "?",
                        r->type, l->name);
    memset(out, 0, size);
    walk w = {NULL, NULL, 0, seg, max_seg};
    return parse(r, l, out, &w, err);
}

vgt_status vgt_record_fields(const vgt_record *r, vgt_field_fn fn, void *ctx, vgt_error *err)
{
    const rec_layout *l = rec_layout_find(r->type);
    if (!l)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, r->chunk_offset, "record seq %llu has type 0x%04x, not a type of format 1.%u",
                        (unsigned long long)r->seq, r->type, VGT_FORMAT_MINOR);
    any_rec st;
    memset(&st, 0, sizeof st);
    walk w = {fn, ctx, 0, NULL, 0};
    return parse(r, l, &st, &w, err);
}

#define DECODER(fn, T, type) \
    vgt_status fn(const vgt_record *r, T *o, vgt_error *err) { return decode_typed(r, type, o, sizeof *o, NULL, 0, err); }
DECODER(vgt_decode_session_start, vgt_rec_session_start, VGT_REC_SESSION_START)
DECODER(vgt_decode_session_end, vgt_rec_session_end, VGT_REC_SESSION_END)
DECODER(vgt_decode_process_start, vgt_rec_process_start, VGT_REC_PROCESS_START)
DECODER(vgt_decode_process_end, vgt_rec_process_end, VGT_REC_PROCESS_END)
DECODER(vgt_decode_rm_alloc, vgt_rec_rm_alloc, VGT_REC_RM_ALLOC)
DECODER(vgt_decode_rm_free, vgt_rec_rm_free, VGT_REC_RM_FREE)
DECODER(vgt_decode_rm_control, vgt_rec_rm_control, VGT_REC_RM_CONTROL)
DECODER(vgt_decode_mem_alloc, vgt_rec_mem_alloc, VGT_REC_MEM_ALLOC)
DECODER(vgt_decode_gpu_map, vgt_rec_gpu_map, VGT_REC_GPU_MAP)
DECODER(vgt_decode_gpu_unmap, vgt_rec_gpu_unmap, VGT_REC_GPU_UNMAP)
DECODER(vgt_decode_cpu_map, vgt_rec_cpu_map, VGT_REC_CPU_MAP)
DECODER(vgt_decode_cpu_unmap, vgt_rec_cpu_unmap, VGT_REC_CPU_UNMAP)
DECODER(vgt_decode_ioctl, vgt_rec_ioctl, VGT_REC_IOCTL)
DECODER(vgt_decode_memory, vgt_rec_memory, VGT_REC_MEMORY)
DECODER(vgt_decode_channel, vgt_rec_channel, VGT_REC_CHANNEL)
DECODER(vgt_decode_engine_object, vgt_rec_engine_object, VGT_REC_ENGINE_OBJECT)
DECODER(vgt_decode_work_submit_token, vgt_rec_work_submit_token, VGT_REC_WORK_SUBMIT_TOKEN)
DECODER(vgt_decode_doorbell, vgt_rec_doorbell, VGT_REC_DOORBELL)
DECODER(vgt_decode_channel_progress, vgt_rec_channel_progress, VGT_REC_CHANNEL_PROGRESS)
DECODER(vgt_decode_semaphore, vgt_rec_semaphore, VGT_REC_SEMAPHORE)
DECODER(vgt_decode_channel_state, vgt_rec_channel_state, VGT_REC_CHANNEL_STATE)

/* CHANNEL_METHODS: the generic parse, then each write checked (docs/trace-format.md, 0x0028). */
vgt_status vgt_decode_channel_methods(const vgt_record *r, vgt_rec_channel_methods *o, vgt_error *err)
{
    VGT_TRY(decode_typed(r, VGT_REC_CHANNEL_METHODS, o, sizeof *o, NULL, 0, err));
    if (o->writes_length % VGT_CHANNEL_METHOD_SIZE)
        return VGT_FAIL(err, VGT_E_FORMAT, r->chunk_offset,
                        "record seq %llu (CHANNEL_METHODS): writes_length %u is not a multiple of %u",
                        (unsigned long long)r->seq, o->writes_length, VGT_CHANNEL_METHOD_SIZE);
    for (uint32_t i = 0; i < vgt_channel_methods_count(o); i++) {
        vgt_state_method m = vgt_channel_method_at(o, i);
        if (m.subch >= VGT_SUBCHANNELS || m.method > VGT_MAX_METHOD_ADDRESS || m.method % 4)
            return VGT_FAIL(err, VGT_E_FORMAT, r->chunk_offset,
                            "record seq %llu (CHANNEL_METHODS): write %u names subchannel %u method 0x%x; expected "
                            "subchannel 0..7 and a method address 0..0x%x that is a multiple of 4",
                            (unsigned long long)r->seq, i, m.subch, m.method, VGT_MAX_METHOD_ADDRESS);
    }
    return VGT_OK;
}

DECODER(vgt_decode_cuda_module, vgt_rec_cuda_module, VGT_REC_CUDA_MODULE)
DECODER(vgt_decode_cuda_launch, vgt_rec_cuda_launch, VGT_REC_CUDA_LAUNCH)
DECODER(vgt_decode_cuda_image, vgt_rec_cuda_image, VGT_REC_CUDA_IMAGE)
vgt_status vgt_decode_cuda_image_ref(const vgt_record *r, vgt_rec_cuda_image_ref *o, vgt_error *err)
{
    VGT_TRY(decode_typed(r, VGT_REC_CUDA_IMAGE_REF, o, sizeof *o, NULL, 0, err));
    if (o->entries_length % VGT_CUDA_FATBIN_ENTRY_SIZE)
        return VGT_FAIL(err, VGT_E_FORMAT, r->chunk_offset,
                        "record seq %llu (CUDA_IMAGE_REF): entries_length %u is not a multiple of %u",
                        (unsigned long long)r->seq, o->entries_length, VGT_CUDA_FATBIN_ENTRY_SIZE);
    return VGT_OK;
}
DECODER(vgt_decode_cuda_load, vgt_rec_cuda_load, VGT_REC_CUDA_LOAD)
DECODER(vgt_decode_cuda_function, vgt_rec_cuda_function, VGT_REC_CUDA_FUNCTION)
DECODER(vgt_decode_cuda_memory, vgt_rec_cuda_memory, VGT_REC_CUDA_MEMORY)
DECODER(vgt_decode_cuda_call, vgt_rec_cuda_call, VGT_REC_CUDA_CALL)

vgt_status vgt_decode_cuda_kernel(const vgt_record *r, vgt_rec_cuda_kernel *o, vgt_error *err)
{
    VGT_TRY(decode_typed(r, VGT_REC_CUDA_KERNEL, o, sizeof *o, NULL, 0, err));
    if (o->layout_length % 8)
        return VGT_FAIL(err, VGT_E_FORMAT, r->chunk_offset,
                        "record seq %llu (CUDA_KERNEL): layout_length %u is not a multiple of 8",
                        (unsigned long long)r->seq, o->layout_length);
    return VGT_OK;
}
DECODER(vgt_decode_marker, vgt_rec_marker, VGT_REC_MARKER)
DECODER(vgt_decode_diagnostic, vgt_rec_diagnostic, VGT_REC_DIAGNOSTIC)

vgt_status vgt_decode_gpfifo_submit(const vgt_record *r, vgt_rec_gpfifo_submit *o, vgt_segment *seg,
                                    uint32_t max_segments, vgt_error *err)
{
    if (!seg && max_segments) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "segment array is NULL");
    vgt_segment none;
    return decode_typed(r, VGT_REC_GPFIFO_SUBMIT, o, sizeof *o, seg ? seg : &none, max_segments, err);
}

uint32_t vgt_gpfifo_submit_segment_room(const vgt_record *r)
{
    uint32_t declared = r->length >= 40 ? le_get32(r->payload + 36) : 0;   /* segment_count */
    uint32_t bound = r->length / VGT_SEGMENT_HEADER_BYTES + 1;
    return declared < bound ? declared : bound;
}
