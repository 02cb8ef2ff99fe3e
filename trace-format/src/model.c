/* model.c: the trace model: folds records, in sequence order, into objects, channels, mappings and
 * memory contents (vgt/model.h). One handler per record type, chosen from a table; types without a
 * handler change nothing but the sequence number.
 *
 * Invariants:
 *  - m->next_seq is the seq of the next record to apply; a record applied out of order is refused and
 *    changes nothing. A record that fails to decode changes nothing either.
 *  - Records with a non-zero RM status describe calls that failed: they change no state.
 *  - Push-buffer segments and ring entries of a GPFIFO_SUBMIT are bytes in GPU memory at the doorbell,
 *    so they are written into the memory contents like MEMORY records.
 *  - Only push-buffer segments are written as lent bytes where the caller lends them (vgt_model_lend):
 *    push buffers are rings that later submissions soon write over, so most are never copied; MEMORY
 *    contents are not (a copy now, of bytes just read, costs less than one at the reclaim). */
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "model_impl.h"
#include "vgt/nv_abi.h"

#define DEFAULT_MEMORY_LIMIT (4ull << 30)
/* Memory classes that an RM_ALLOC may allocate (the ABI table, vgt/nv_abi.h). */
static const uint32_t memory_classes[] = {RM_CLASS_MEMORY_SYSTEM, RM_CLASS_MEMORY_LOCAL_PRIVILEGED,
                                          RM_CLASS_MEMORY_LOCAL_USER, RM_CLASS_MEMORY_SYSTEM_OS_DESCRIPTOR};

static int is_memory_class(uint32_t cls)
{
    for (size_t i = 0; i < sizeof memory_classes / sizeof memory_classes[0]; i++)
        if (memory_classes[i] == cls) return 1;
    return 0;
}

/* Where the flags word sits in the allocation parameters of the classes whose flags a replay must
 * reproduce (the ABI table: NV_CHANNEL_ALLOC_PARAMS.flags, the NVOS04_FLAGS_*; NV_CTXSHARE_ALLOCATION_
 * PARAMETERS.flags, the SUBCONTEXT_*). Channel classes are the host classes xx6F from
 * KEPLER_CHANNEL_GPFIFO_A (0xA06F) on. */
static int alloc_flags_offset(uint32_t cls)
{
    if (cls == RM_CLASS_CONTEXT_SHARE) return (int)offsetof(rm_ctxshare_alloc, flags);
    if ((cls & 0xff) == 0x6f && cls >= 0xa06f && cls <= 0xcf6f) return (int)offsetof(rm_channel_alloc, flags);
    return -1;
}

static vgt_status on_rm_alloc(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_rm_alloc a;
    VGT_TRY(vgt_decode_rm_alloc(r, &a, err));
    if (a.status) return VGT_OK;
    vgt_model_object o = {a.client, a.parent, a.handle, a.cls, r->seq, is_memory_class(a.cls), 0, 0, 0, 0};
    int at = alloc_flags_offset(a.cls);
    const uint8_t *p = a.params_out ? a.params_out : a.params_in;
    if (at >= 0 && p && a.params_length >= (uint32_t)at + 4) {
        o.alloc_flags = le_get32(p + at);
        o.has_alloc_flags = 1;
    }
    return model_object_add(m, &o, err);
}

static vgt_status on_rm_free(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_rm_free f;
    VGT_TRY(vgt_decode_rm_free(r, &f, err));
    return f.status ? VGT_OK : model_object_free(m, f.client, f.handle, err);
}

static vgt_status on_mem_alloc(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_mem_alloc a;
    VGT_TRY(vgt_decode_mem_alloc(r, &a, err));
    if (a.status) return VGT_OK;
    vgt_model_object o = {a.client, a.parent, a.handle, a.cls, r->seq, 1, a.size, a.aperture, 0, 0};
    return model_object_add(m, &o, err);
}

static vgt_status on_channel(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_channel c;
    VGT_TRY(vgt_decode_channel(r, &c, err));
    if (c.status) return VGT_OK;
    vgt_model_object o = {c.client, c.parent, c.handle, c.cls, r->seq, 0, 0, 0, 0, 0};
    const vgt_model_object *prev = vgt_model_object_find(m, c.client, c.handle);   /* its RM_ALLOC */
    if (prev && prev->cls == c.cls) {   /* the object is the RM_ALLOC's: a slice keeps that record too */
        o.alloc_seq = prev->alloc_seq;
        o.alloc_flags = prev->alloc_flags;
        o.has_alloc_flags = prev->has_alloc_flags;
    }
    VGT_TRY(model_object_add(m, &o, err));
    return model_channel_add(m, &c, r->seq, err);
}

static vgt_status on_engine_object(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_engine_object e;
    VGT_TRY(vgt_decode_engine_object(r, &e, err));
    if (e.status) return VGT_OK;
    vgt_model_object o = {e.client, e.channel, e.handle, e.cls, r->seq, 0, 0, 0, 0, 0};
    VGT_TRY(model_object_add(m, &o, err));
    vgt_model_channel *ch = model_channel_get(m, e.client, e.channel);
    if (!ch) return VGT_OK;
    for (uint32_t i = 0; i < ch->engine_count; i++)
        if (ch->engines[i].handle == e.handle) {
            ch->engines[i] = (vgt_model_engine){e.handle, e.cls, r->seq};
            return VGT_OK;
        }
    if (ch->engine_count == VGT_MODEL_MAX_ENGINES)
        return VGT_FAIL(err, VGT_E_LIMIT, r->chunk_offset, "record seq %llu: channel 0x%x already has %u engine objects",
                        (unsigned long long)r->seq, e.channel, VGT_MODEL_MAX_ENGINES);
    ch->engines[ch->engine_count++] = (vgt_model_engine){e.handle, e.cls, r->seq};
    return VGT_OK;
}

static vgt_status on_token(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_work_submit_token t;
    VGT_TRY(vgt_decode_work_submit_token(r, &t, err));
    vgt_model_channel *ch = model_channel_get(m, t.client, t.channel);
    if (ch) ch->token = t.token, ch->has_token = 1;
    return VGT_OK;
}

/* The token as RM returned it to GET_WORK_SUBMIT_TOKEN: used when no WORK_SUBMIT_TOKEN record gave one. */
static vgt_status on_rm_control(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_rm_control c;
    VGT_TRY(vgt_decode_rm_control(r, &c, err));
    if (c.cmd != RM_CTRL_CHAN_GET_WORK_TOKEN || c.status || c.params_length < sizeof(rm_work_token)) return VGT_OK;
    vgt_model_channel *ch = model_channel_get(m, c.client, c.object);
    if (ch && !ch->has_token) ch->token = le_get32(c.params_out + offsetof(rm_work_token, token)), ch->has_token = 1;
    return VGT_OK;
}

static vgt_status on_gpu_map(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_gpu_map g;
    VGT_TRY(vgt_decode_gpu_map(r, &g, err));
    if (g.status) return VGT_OK;
    vgt_model_mapping mp = {g.client, g.device, g.va_space, g.memory, g.gpu_va, g.offset, g.length, g.flags, g.source, r->seq};
    vgt_status rc = model_map_add(m, &mp, err);
    if (rc != VGT_OK) vgt_error_prefix(err, "record seq %llu", (unsigned long long)r->seq);
    return rc;
}

static vgt_status on_gpu_unmap(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_gpu_unmap u;
    VGT_TRY(vgt_decode_gpu_unmap(r, &u, err));
    if (!u.status) model_map_remove_at(m, u.gpu_va);
    return VGT_OK;
}

static vgt_status on_memory(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_memory d;
    VGT_TRY(vgt_decode_memory(r, &d, err));
    return vgt_model_mem_write(m, d.gpu_va, d.data, d.length, err);
}

static vgt_status write_ring(vgt_model *m, const vgt_model_channel *ch, const vgt_rec_gpfifo_submit *s, vgt_error *err)
{
    if (!ch || !ch->rec.ring_va || !ch->rec.entries) return VGT_OK;
    for (uint32_t i = 0; i < s->entry_count; i++) {
        uint64_t slot = ((uint64_t)s->gp_put_before + i) % ch->rec.entries;
        VGT_TRY(vgt_model_mem_write(m, ch->rec.ring_va + 8 * slot, s->entries + 8 * i, 8, err));
    }
    return VGT_OK;
}

static vgt_status on_submit(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    uint32_t need = vgt_gpfifo_submit_segment_room(r);
    if (need > m->segcap) {
        vgt_segment *q = realloc(m->segs, sizeof *q * need);
        if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for %u segments", need);
        m->segs = q;
        m->segcap = need;
    }
    vgt_rec_gpfifo_submit s;
    m->last_submit_seq = 0;
    VGT_TRY(vgt_decode_gpfifo_submit(r, &s, m->segs, m->segcap, err));
    for (uint32_t i = 0; i < s.segment_count; i++)
        VGT_TRY(model_mem_put(m, s.segments[i].gpu_va, s.segments[i].data, s.segments[i].length, 1, err));
    vgt_model_channel *ch = model_channel_get(m, s.client, s.channel);
    VGT_TRY(write_ring(m, ch, &s, err));
    if (ch) {
        ch->submit_count++;
        ch->last_gp_put = s.gp_put_after;
    }
    m->submits++;
    m->last_submit = s;
    m->last_submit_seq = r->seq + 1;
    return VGT_OK;
}

int vgt_model_last_submit(const vgt_model *m, uint64_t seq, vgt_rec_gpfifo_submit *out)
{
    if (m->last_submit_seq != seq + 1 || m->next_seq != seq + 1) return 0;
    *out = m->last_submit;
    return 1;
}

/* Format 1.1: the decoder state of a live channel; one for a channel that is not alive changes nothing. */
static vgt_status on_channel_state(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_channel_state cs;
    VGT_TRY(vgt_decode_channel_state(r, &cs, err));
    vgt_model_channel *ch = model_channel_get(m, cs.client, cs.channel);
    if (ch) ch->state = cs, ch->state_seq = r->seq, ch->has_state = 1;
    return VGT_OK;
}

/* Format 1.1: a live channel keeps a copy of its latest CHANNEL_METHODS writes (the record's payload is
 * only valid until the next read). */
static vgt_status on_channel_methods(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    vgt_rec_channel_methods cm;
    VGT_TRY(vgt_decode_channel_methods(r, &cm, err));
    vgt_model_channel *ch = model_channel_get(m, cm.client, cm.channel);
    if (!ch) return VGT_OK;
    uint8_t *copy = cm.writes_length ? malloc(cm.writes_length) : NULL;
    if (cm.writes_length && !copy)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "model: no memory for %u bytes of CHANNEL_METHODS", cm.writes_length);
    if (copy) memcpy(copy, cm.writes, cm.writes_length);
    free(ch->methods);
    ch->methods = copy;
    ch->methods_rec = cm;
    ch->methods_rec.writes = copy;
    ch->methods_seq = r->seq;
    ch->has_methods = 1;
    return VGT_OK;
}

typedef vgt_status (*apply_fn)(vgt_model *m, const vgt_record *r, vgt_error *err);
static const struct { uint16_t type; apply_fn fn; } handlers[] = {
    {VGT_REC_RM_ALLOC, on_rm_alloc},       {VGT_REC_RM_FREE, on_rm_free},
    {VGT_REC_RM_CONTROL, on_rm_control},   {VGT_REC_MEM_ALLOC, on_mem_alloc},
    {VGT_REC_GPU_MAP, on_gpu_map},         {VGT_REC_GPU_UNMAP, on_gpu_unmap},
    {VGT_REC_MEMORY, on_memory},           {VGT_REC_CHANNEL, on_channel},
    {VGT_REC_ENGINE_OBJECT, on_engine_object}, {VGT_REC_GPFIFO_SUBMIT, on_submit},
    {VGT_REC_WORK_SUBMIT_TOKEN, on_token},  {VGT_REC_CHANNEL_STATE, on_channel_state},
    {VGT_REC_CHANNEL_METHODS, on_channel_methods},
};

vgt_status vgt_model_apply(vgt_model *m, const vgt_record *r, vgt_error *err)
{
    if (r->seq != m->next_seq)
        return VGT_FAIL(err, VGT_E_SEQUENCE, r->chunk_offset, "model: record seq %llu applied when seq %llu is next",
                        (unsigned long long)r->seq, (unsigned long long)m->next_seq);
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++) {
        if (handlers[i].type != r->type) continue;
        vgt_status rc = handlers[i].fn(m, r, err);
        if (rc != VGT_OK) {
            if (err && !strstr(err->msg, "seq")) vgt_error_prefix(err, "record seq %llu", (unsigned long long)r->seq);
            return rc;
        }
        break;
    }
    m->next_seq++;
    return VGT_OK;
}

vgt_status vgt_model_new(vgt_model **out, vgt_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a model");
    (*out)->mem_limit = DEFAULT_MEMORY_LIMIT;
    (*out)->rng = 0x9e3779b97f4a7c15ull;   /* any non-zero seed: treap priorities */
    return VGT_OK;
}

void vgt_model_free(vgt_model *m)
{
    if (!m) return;
    model_objects_free(m);
    model_map_free(m);
    model_mem_free(m);
    free(m->segs);
    free(m);
}

void vgt_model_set_memory_limit(vgt_model *m, uint64_t max_memory_bytes) { m->mem_limit = max_memory_bytes; }
uint64_t vgt_model_next_seq(const vgt_model *m) { return m->next_seq; }
uint64_t vgt_model_submit_count(const vgt_model *m) { return m->submits; }
