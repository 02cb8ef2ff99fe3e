/* records_encode.c: typed encoders for every record type, from the same table as the decoders.
 *
 * A payload is the fixed part, then each blob followed by zero padding to 8, except that the last blob's
 * padding is left to the record padding (it is not counted in payload_length). The encoders hand the
 * writer a gather list, so blob bytes are copied once, straight into the chunk buffer. */
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "records.h"

static const uint8_t zeros[8];

enum { SEGMENTS_ON_STACK = 32 };

static vgt_status blob_arg(const rec_layout *l, const char *field, vgt_error *err)
{
    return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "%s: blob '%s' has a length but no bytes", l->name, field);
}

static vgt_status encode_typed(vgt_writer *w, uint16_t type, uint64_t ts, const void *p, vgt_error *err)
{
    const rec_layout *l = rec_layout_find(type);
    const uint8_t *base = p;
    uint8_t fixed[128];
    vgt_iovec parts[1 + 2 * 2];
    uint32_t np = 0;
    rec_fixed_encode(l, p, fixed);
    parts[np++] = (vgt_iovec){fixed, l->fixed};
    for (uint32_t i = 0; i < l->nfields; i++) {
        const rec_field *f = &l->fields[i];
        if (f->kind != F_BLOB && f->kind != F_TEXT) continue;
        uint32_t n;
        const void *data;
        memcpy(&n, base + l->fields[f->len_field].soff, 4);
        memcpy(&data, base + f->soff, sizeof data);
        if (n && !data) return blob_arg(l, f->name, err);
        uint32_t tail = parts[np - 1].length % 8;     /* padding of the previous blob (the fixed part has none) */
        if (tail) parts[np++] = (vgt_iovec){zeros, 8 - tail};
        parts[np++] = (vgt_iovec){data, n};
    }
    return vgt_write_recordv(w, type, 0, ts, parts, np, NULL, err);
}

#define ENCODER(fn, T, type) \
    vgt_status fn(vgt_writer *w, uint64_t ts, const T *p, vgt_error *err) { return encode_typed(w, type, ts, p, err); }
ENCODER(vgt_write_session_start, vgt_rec_session_start, VGT_REC_SESSION_START)
ENCODER(vgt_write_session_end, vgt_rec_session_end, VGT_REC_SESSION_END)
ENCODER(vgt_write_process_start, vgt_rec_process_start, VGT_REC_PROCESS_START)
ENCODER(vgt_write_process_end, vgt_rec_process_end, VGT_REC_PROCESS_END)
ENCODER(vgt_write_rm_alloc, vgt_rec_rm_alloc, VGT_REC_RM_ALLOC)
ENCODER(vgt_write_rm_free, vgt_rec_rm_free, VGT_REC_RM_FREE)
ENCODER(vgt_write_rm_control, vgt_rec_rm_control, VGT_REC_RM_CONTROL)
ENCODER(vgt_write_mem_alloc, vgt_rec_mem_alloc, VGT_REC_MEM_ALLOC)
ENCODER(vgt_write_gpu_map, vgt_rec_gpu_map, VGT_REC_GPU_MAP)
ENCODER(vgt_write_gpu_unmap, vgt_rec_gpu_unmap, VGT_REC_GPU_UNMAP)
ENCODER(vgt_write_cpu_map, vgt_rec_cpu_map, VGT_REC_CPU_MAP)
ENCODER(vgt_write_cpu_unmap, vgt_rec_cpu_unmap, VGT_REC_CPU_UNMAP)
ENCODER(vgt_write_ioctl, vgt_rec_ioctl, VGT_REC_IOCTL)
ENCODER(vgt_write_memory, vgt_rec_memory, VGT_REC_MEMORY)
ENCODER(vgt_write_channel, vgt_rec_channel, VGT_REC_CHANNEL)
ENCODER(vgt_write_engine_object, vgt_rec_engine_object, VGT_REC_ENGINE_OBJECT)
ENCODER(vgt_write_work_submit_token, vgt_rec_work_submit_token, VGT_REC_WORK_SUBMIT_TOKEN)
ENCODER(vgt_write_doorbell, vgt_rec_doorbell, VGT_REC_DOORBELL)
ENCODER(vgt_write_channel_progress, vgt_rec_channel_progress, VGT_REC_CHANNEL_PROGRESS)
ENCODER(vgt_write_semaphore, vgt_rec_semaphore, VGT_REC_SEMAPHORE)
ENCODER(vgt_write_channel_state, vgt_rec_channel_state, VGT_REC_CHANNEL_STATE)
ENCODER(vgt_write_channel_methods, vgt_rec_channel_methods, VGT_REC_CHANNEL_METHODS)
ENCODER(vgt_write_cuda_module, vgt_rec_cuda_module, VGT_REC_CUDA_MODULE)
ENCODER(vgt_write_cuda_launch, vgt_rec_cuda_launch, VGT_REC_CUDA_LAUNCH)
ENCODER(vgt_write_cuda_image, vgt_rec_cuda_image, VGT_REC_CUDA_IMAGE)
ENCODER(vgt_write_cuda_image_ref, vgt_rec_cuda_image_ref, VGT_REC_CUDA_IMAGE_REF)
ENCODER(vgt_write_cuda_load, vgt_rec_cuda_load, VGT_REC_CUDA_LOAD)
ENCODER(vgt_write_cuda_function, vgt_rec_cuda_function, VGT_REC_CUDA_FUNCTION)
ENCODER(vgt_write_cuda_kernel, vgt_rec_cuda_kernel, VGT_REC_CUDA_KERNEL)
ENCODER(vgt_write_cuda_memory, vgt_rec_cuda_memory, VGT_REC_CUDA_MEMORY)
ENCODER(vgt_write_cuda_call, vgt_rec_cuda_call, VGT_REC_CUDA_CALL)
ENCODER(vgt_write_marker, vgt_rec_marker, VGT_REC_MARKER)
ENCODER(vgt_write_diagnostic, vgt_rec_diagnostic, VGT_REC_DIAGNOSTIC)

/* GPFIFO_SUBMIT: fixed part, entries, then per segment a 16-byte header, the bytes and their padding. */
vgt_status vgt_write_gpfifo_submit(vgt_writer *w, uint64_t ts, const vgt_rec_gpfifo_submit *p, vgt_error *err)
{
    const rec_layout *l = rec_layout_find(VGT_REC_GPFIFO_SUBMIT);
    if (p->entry_count && !p->entries) return blob_arg(l, "entries", err);
    if (p->segment_count && !p->segments) return blob_arg(l, "segments", err);
    if (p->entry_count > VGT_MAX_RECORD_PAYLOAD / 8 || p->segment_count > VGT_MAX_RECORD_PAYLOAD / 16)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "GPFIFO_SUBMIT: %u entries / %u segments cannot fit a record",
                        p->entry_count, p->segment_count);
    uint8_t fixed[40];
    vgt_iovec stack_parts[2 + 3 * SEGMENTS_ON_STACK];
    uint8_t stack_heads[16 * SEGMENTS_ON_STACK];
    vgt_iovec *parts = stack_parts;
    uint8_t *heads = stack_heads;
    if (p->segment_count > SEGMENTS_ON_STACK) {
        parts = malloc(sizeof *parts * (2 + 3 * (size_t)p->segment_count));
        heads = malloc(16 * (size_t)p->segment_count);
        if (!parts || !heads) {
            if (parts != stack_parts) free(parts);
            if (heads != stack_heads) free(heads);
            return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "GPFIFO_SUBMIT: no memory for %u segments", p->segment_count);
        }
    }
    rec_fixed_encode(l, p, fixed);
    uint32_t np = 0;
    parts[np++] = (vgt_iovec){fixed, 40};
    parts[np++] = (vgt_iovec){p->entries, 8u * p->entry_count};
    vgt_status rc = VGT_OK;
    for (uint32_t i = 0; i < p->segment_count; i++) {
        const vgt_segment *s = &p->segments[i];
        if (s->length && !s->data) {
            rc = blob_arg(l, "segment data", err);
            break;
        }
        if (i && s[-1].length % 8) parts[np++] = (vgt_iovec){zeros, 8 - s[-1].length % 8};
        le_put64(heads + 16 * i, s->gpu_va);
        le_put32(heads + 16 * i + 8, s->length);
        le_put32(heads + 16 * i + 12, s->flags);
        parts[np++] = (vgt_iovec){heads + 16 * i, 16};
        parts[np++] = (vgt_iovec){s->data, s->length};
    }
    if (rc == VGT_OK) rc = vgt_write_recordv(w, VGT_REC_GPFIFO_SUBMIT, 0, ts, parts, np, NULL, err);
    if (parts != stack_parts) free(parts);
    if (heads != stack_heads) free(heads);
    return rc;
}
