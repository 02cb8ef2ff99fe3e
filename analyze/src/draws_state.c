/* draws_state.c: a 3D object's method shadow read into a draw's pipeline state (vgt/draws.h).
 *
 * Methods and fields are found by name in the class tables of the object's class (vgt/classes.h: the
 * facts' one home), once per class; a class that lacks one leaves that state unset. Values never written
 * are reported as unset (the *_set flags), never as zero, so that lints do not fire on state the trace
 * does not show (a slice, a trace started late). */
#include <string.h>

#include "draws_internal.h"
#include "vgt/classes.h"

enum {
    S_SHADER, S_REGCOUNT, S_ADDR_A, S_ADDR_B,
    S_CT_A, S_CT_B, S_CT_WIDTH, S_CT_HEIGHT, S_CT_FORMAT, S_CT_MEMORY, S_CT_THIRD, S_CT_PITCH, S_CT_LAYER,
    S_CT_SELECT, S_CT_WRITE, S_CT_MRT, S_BLEND, S_BLEND_PER_TARGET,
    S_ZT_SELECT, S_ZT_A, S_ZT_B, S_ZT_FORMAT, S_ZT_SIZE_A, S_ZT_SIZE_B, S_DEPTH_TEST, S_DEPTH_WRITE, S_STENCIL,
    S_VP_SCALE_X, S_VP_SCALE_Y, S_VP_OFFSET_X, S_VP_OFFSET_Y, S_VP_CLIP_H, S_VP_CLIP_V,
    S_SC_ENABLE, S_SC_H, S_SC_V, S_RASTER, S_VS_FORMAT, S_VS_LOC_A, S_VS_LOC_B,
    S_COUNT_
};

static const char *const method_names[S_COUNT_] = {
    "SET_PIPELINE_SHADER", "SET_PIPELINE_REGISTER_COUNT", "SET_PIPELINE_PROGRAM_ADDRESS_A",
    "SET_PIPELINE_PROGRAM_ADDRESS_B",
    "SET_COLOR_TARGET_A", "SET_COLOR_TARGET_B", "SET_COLOR_TARGET_WIDTH", "SET_COLOR_TARGET_HEIGHT",
    "SET_COLOR_TARGET_FORMAT", "SET_COLOR_TARGET_MEMORY", "SET_COLOR_TARGET_THIRD_DIMENSION",
    "SET_COLOR_TARGET_ARRAY_PITCH", "SET_COLOR_TARGET_LAYER",
    "SET_CT_SELECT", "SET_CT_WRITE", "SET_CT_MRT_ENABLE", "SET_BLEND", "SET_BLEND_STATE_PER_TARGET",
    "SET_ZT_SELECT", "SET_ZT_A", "SET_ZT_B", "SET_ZT_FORMAT", "SET_ZT_SIZE_A", "SET_ZT_SIZE_B", "SET_DEPTH_TEST",
    "SET_DEPTH_WRITE", "SET_STENCIL_TEST",
    "SET_VIEWPORT_SCALE_X", "SET_VIEWPORT_SCALE_Y", "SET_VIEWPORT_OFFSET_X", "SET_VIEWPORT_OFFSET_Y",
    "SET_VIEWPORT_CLIP_HORIZONTAL", "SET_VIEWPORT_CLIP_VERTICAL",
    "SET_SCISSOR_ENABLE", "SET_SCISSOR_HORIZONTAL", "SET_SCISSOR_VERTICAL", "SET_RASTER_ENABLE",
    "SET_VERTEX_STREAM_A_FORMAT", "SET_VERTEX_STREAM_A_LOCATION_A", "SET_VERTEX_STREAM_A_LOCATION_B",
};

typedef struct resolved {
    uint32_t cls;
    const vgt_method_info *info[S_COUNT_];
} resolved;

/* Classes seen so far (a trace has a handful of 3D classes). Filled once per class; the walk is single
 * threaded, and a full table only means re-resolving. */
#define RESOLVED_MAX 8u
static resolved cache[RESOLVED_MAX];
static uint32_t cache_n;

static const resolved *resolve(uint32_t cls)
{
    for (uint32_t i = 0; i < cache_n; i++)
        if (cache[i].cls == cls) return &cache[i];
    resolved *r = &cache[cache_n < RESOLVED_MAX ? cache_n++ : RESOLVED_MAX - 1];
    memset(r, 0, sizeof *r);
    r->cls = cls;
    const vgt_class *c = vgt_class_find(cls);
    for (unsigned k = 0; k < S_COUNT_; k++) {
        uint32_t mthd = 0;
        r->info[k] = c ? vgt_class_method_by_name(c, method_names[k], &mthd) : NULL;
    }
    return r;
}

typedef struct reader {
    const draws_shadow *sh;
    const resolved *r;
} reader;

/* The value of method k element idx; 0 when the class lacks it or it was never written (returns 0). */
static int get(const reader *rd, unsigned k, unsigned idx, uint32_t *v)
{
    *v = 0;
    const vgt_method_info *mi = rd->r->info[k];
    if (!mi || idx >= mi->count) return 0;
    uint32_t slot = (mi->offset + idx * mi->stride) >> 2;
    if (slot >= DRAWS_SLOTS || !(rd->sh->written[slot >> 3] >> (slot & 7) & 1)) return 0;
    *v = rd->sh->value[slot];
    return 1;
}

/* A field of method k by name (the class table's bit range); 0 when the table lacks it. */
static uint32_t field(const reader *rd, unsigned k, const char *name, uint32_t data)
{
    const vgt_method_info *mi = rd->r->info[k];
    for (uint32_t i = 0; mi && i < mi->field_count; i++)
        if (!strcmp(mi->fields[i].name, name)) return vgt_class_field_get(&mi->fields[i], data);
    return 0;
}

static uint64_t addr(uint32_t upper, uint32_t lower)
{
    return ((uint64_t)(upper & 0x1ffffffu) << 32) | lower;
}

static float as_float(uint32_t v)
{
    float f;
    memcpy(&f, &v, sizeof f);
    return f;
}

/* The header bytes at va: the shared stream writes first, the channel's view for the rest. */
static vgt_status read_header(vgt_sem_tracker *sem, const sem_overlay *shared, uint64_t va, uint8_t *bytes,
                              uint32_t *known, vgt_error *err)
{
    uint64_t k = 0;
    VGT_TRY(vgt_sem_mem_read(sem, va, bytes, VGT_SPH_MAX_BYTES, &k, err));
    uint8_t from_shared[VGT_SPH_MAX_BYTES], state[VGT_SPH_MAX_BYTES];
    uint32_t s = shared ? sem_overlay_lookup(shared, va, VGT_SPH_MAX_BYTES, from_shared, state) : 0, n = 0;
    for (uint32_t i = 0; s && i < VGT_SPH_MAX_BYTES; i++)
        if (state[i] == 1) bytes[i] = from_shared[i], n++;
    *known = (uint32_t)(k > n ? k : n);
    return VGT_OK;
}

static vgt_status read_stage(const reader *rd, vgt_sem_tracker *sem, const sem_overlay *shared,
                             const vgt_model *model, unsigned j, vgt_draw_stage *st, vgt_error *err)
{
    uint32_t v, a = 0, b = 0;
    memset(st, 0, sizeof *st);
    st->stage = (uint8_t)j;
    st->type = (uint8_t)j;    /* never written: the stage's own type (TYPE values follow the stage index) */
    st->mapped = -1;
    if (get(rd, S_SHADER, j, &v)) {
        st->shader_set = 1;
        st->enabled = (uint8_t)field(rd, S_SHADER, "ENABLE", v);
        st->type = (uint8_t)field(rd, S_SHADER, "TYPE", v);
    }
    if (get(rd, S_REGCOUNT, j, &v)) st->register_count = v;
    get(rd, S_ADDR_A, j, &a);
    st->program_set = (uint8_t)get(rd, S_ADDR_B, j, &b);
    if (!st->program_set) return VGT_OK;
    st->program_va = addr(a, b);
    if (model && vgt_model_mapping_count(model))
        st->mapped = vgt_model_mapping_find(model, st->program_va) != NULL;
    uint8_t bytes[VGT_SPH_MAX_BYTES];
    uint32_t known = 0;
    VGT_TRY(read_header(sem, shared, st->program_va, bytes, &known, err));
    st->known = known;
    /* a header is decoded only from bytes the trace holds: at least the v3 layout's, and the v4 layout's
     * when the version says 4 */
    if (known < VGT_SPH_V3_BYTES) return VGT_OK;
    vgt_status rc = vgt_sph_decode(bytes, (uint32_t)(known < sizeof bytes ? known : sizeof bytes), &st->sph);
    st->sph_state = rc == VGT_OK ? VGT_SPH_DECODED : VGT_SPH_NOT_A_HEADER;
    if (rc != VGT_OK && st->sph.version == 4 && known < VGT_SPH_V4_BYTES) st->sph_state = VGT_SPH_NOT_IN_TRACE;
    return VGT_OK;
}

static void read_targets(const reader *rd, vgt_draw_info *d)
{
    uint32_t v;
    d->ct_select_set = (uint8_t)get(rd, S_CT_SELECT, 0, &d->ct_select);
    d->target_count = d->ct_select_set ? field(rd, S_CT_SELECT, "TARGET_COUNT", d->ct_select) : 0;
    d->mrt_enable = get(rd, S_CT_MRT, 0, &v) ? (uint8_t)(v & 1) : 1;
    static const char *const tn[8] = { "TARGET0", "TARGET1", "TARGET2", "TARGET3",
                                       "TARGET4", "TARGET5", "TARGET6", "TARGET7" };
    for (uint32_t n = 0; n < d->target_count && n < 8; n++) {
        vgt_draw_rt *rt = &d->rt[d->nrt++];
        uint32_t j = field(rd, S_CT_SELECT, tn[n], d->ct_select), a = 0, b = 0;
        rt->slot = (uint8_t)j;
        get(rd, S_CT_A, j, &a);
        get(rd, S_CT_B, j, &b);
        rt->va = addr(a, b);
        get(rd, S_CT_WIDTH, j, &rt->width);
        get(rd, S_CT_HEIGHT, j, &rt->height);
        get(rd, S_CT_FORMAT, j, &rt->format);
        if (get(rd, S_CT_MEMORY, j, &rt->memory)) rt->pitch = (uint8_t)field(rd, S_CT_MEMORY, "LAYOUT", rt->memory);
        get(rd, S_CT_THIRD, j, &rt->third_dimension);
        get(rd, S_CT_PITCH, j, &rt->array_pitch);
        get(rd, S_CT_LAYER, j, &rt->layer);
        /* SET_CT_WRITE(n) and SET_BLEND(n) are per selected target */
        if (get(rd, S_CT_WRITE, n, &v))
            rt->write_mask = (uint8_t)(field(rd, S_CT_WRITE, "R_ENABLE", v) | field(rd, S_CT_WRITE, "G_ENABLE", v) << 1 |
                                       field(rd, S_CT_WRITE, "B_ENABLE", v) << 2 | field(rd, S_CT_WRITE, "A_ENABLE", v) << 3);
        else rt->write_mask = 0xf;
        if (get(rd, S_BLEND, n, &v)) rt->blend = (uint8_t)field(rd, S_BLEND, "ENABLE", v);
    }
    if (get(rd, S_ZT_SELECT, 0, &v)) d->zt_selected = (uint8_t)field(rd, S_ZT_SELECT, "TARGET_COUNT", v);
    uint32_t a = 0, b = 0;
    get(rd, S_ZT_A, 0, &a);
    get(rd, S_ZT_B, 0, &b);
    d->zt_va = addr(a, b);
    get(rd, S_ZT_FORMAT, 0, &d->zt_format);
    if (get(rd, S_ZT_SIZE_A, 0, &v)) d->zt_width = field(rd, S_ZT_SIZE_A, "WIDTH", v);
    if (get(rd, S_ZT_SIZE_B, 0, &v)) d->zt_height = field(rd, S_ZT_SIZE_B, "HEIGHT", v);
    if (get(rd, S_DEPTH_TEST, 0, &v)) d->depth_test = (uint8_t)(v & 1);
    if (get(rd, S_DEPTH_WRITE, 0, &v)) d->depth_write = (uint8_t)(v & 1);
    if (get(rd, S_STENCIL, 0, &v)) d->stencil_test = (uint8_t)(v & 1);
    if (get(rd, S_BLEND_PER_TARGET, 0, &v)) d->blend_per_target = (uint8_t)(v & 1);
}

static void read_viewport(const reader *rd, vgt_draw_info *d)
{
    uint32_t v, h = 0, vv = 0;
    if (get(rd, S_VP_SCALE_X, 0, &v)) d->viewport_scale[0] = as_float(v);
    if (get(rd, S_VP_SCALE_Y, 0, &v)) d->viewport_scale[1] = as_float(v);
    if (get(rd, S_VP_OFFSET_X, 0, &v)) d->viewport_offset[0] = as_float(v);
    if (get(rd, S_VP_OFFSET_Y, 0, &v)) d->viewport_offset[1] = as_float(v);
    int hs = get(rd, S_VP_CLIP_H, 0, &h), vs = get(rd, S_VP_CLIP_V, 0, &vv);
    d->viewport_set = (uint8_t)(hs && vs);
    d->viewport_clip[0] = field(rd, S_VP_CLIP_H, "X0", h);
    d->viewport_clip[1] = field(rd, S_VP_CLIP_H, "WIDTH", h);
    d->viewport_clip[2] = field(rd, S_VP_CLIP_V, "Y0", vv);
    d->viewport_clip[3] = field(rd, S_VP_CLIP_V, "HEIGHT", vv);
    if (get(rd, S_SC_ENABLE, 0, &v)) d->scissor_enable = (uint8_t)(v & 1);
    hs = get(rd, S_SC_H, 0, &h);
    vs = get(rd, S_SC_V, 0, &vv);
    d->scissor_set = (uint8_t)(hs && vs);
    d->scissor[0] = field(rd, S_SC_H, "XMIN", h);
    d->scissor[1] = field(rd, S_SC_H, "XMAX", h);
    d->scissor[2] = field(rd, S_SC_V, "YMIN", vv);
    d->scissor[3] = field(rd, S_SC_V, "YMAX", vv);
    d->raster_enable = get(rd, S_RASTER, 0, &v) ? (uint8_t)(v & 1) : 1;
}

static void read_streams(const reader *rd, vgt_draw_info *d)
{
    const vgt_method_info *mi = rd->r->info[S_VS_FORMAT];
    uint32_t count = mi ? mi->count : 0;
    for (uint32_t j = 0; j < count && d->nstreams < VGT_DRAWS_MAX_STREAMS; j++) {
        uint32_t f, a = 0, b = 0;
        if (!get(rd, S_VS_FORMAT, j, &f) || !field(rd, S_VS_FORMAT, "ENABLE", f)) continue;
        get(rd, S_VS_LOC_A, j, &a);
        get(rd, S_VS_LOC_B, j, &b);
        d->streams[d->nstreams].slot = (uint8_t)j;
        d->streams[d->nstreams].stride = field(rd, S_VS_FORMAT, "STRIDE", f);
        d->streams[d->nstreams].va = addr(a, b);
        d->nstreams++;
    }
}

vgt_status draws_read_state(const draws_shadow *sh, vgt_sem_tracker *sem, const sem_overlay *shared,
                            const vgt_model *model, vgt_draw_info *d, vgt_error *err)
{
    reader rd = { sh, resolve(sh->cls) };
    for (unsigned j = 0; j < VGT_DRAWS_STAGES; j++)
        VGT_TRY(read_stage(&rd, sem, shared, model, j, &d->stages[j], err));
    read_targets(&rd, d);
    read_viewport(&rd, d);
    read_streams(&rd, d);
    return VGT_OK;
}
