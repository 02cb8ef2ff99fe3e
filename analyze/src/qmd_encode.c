/* qmd_encode.c: QMDs written from a vgt_qmd, with the decoder's own field tables (qmd_v02.c, qmd_v03.c,
 * qmd_v04.c), so that encoder and decoder cannot disagree about a bit range: each table entry's value is
 * taken from the member the decoder fills from it (the role), shifted back the way the layout stores it.
 * Facts: NVIDIA open-gpu-doc classes/compute/clc3c0qmd.h, clc5c0qmd.h, clc6c0qmd.h, clcbc0qmd.h (the
 * tables cite them). Tests: tests/unit/test_qmd_encode.c (round trips for every version, and QMDs built
 * from those headers' bit ranges written out independently of the tables). */
#include <stdio.h>
#include <string.h>

#include "qmd_roles.h"

/* The stored value of one table entry (element i) taken from q, and the bits the layout drops: a value
 * with dropped bits set cannot be encoded exactly. */
static uint64_t field_value(const vgt_qmd *q, unsigned role, unsigned i, uint64_t *lost)
{
    *lost = 0;
    const vgt_qmd_cb *cb = i < VGT_QMD_MAX_CB ? &q->cb[i] : NULL;
    const vgt_qmd_release *r = i < VGT_QMD_MAX_RELEASE ? &q->release[i] : NULL;
    const vgt_qmd_dependent *d = i < VGT_QMD_MAX_DEPENDENT ? &q->dependent[i] : NULL;
    switch (role) {
    case QR_MAJOR: return q->major;
    case QR_MINOR: return q->minor;
    case QR_GRID0: return q->grid[0];
    case QR_GRID1: return q->grid[1];
    case QR_GRID2: return q->grid[2];
    case QR_BLOCK0: return q->block[0];
    case QR_BLOCK1: return q->block[1];
    case QR_BLOCK2: return q->block[2];
    case QR_PROG_LO: return q->program_va & 0xffffffffu;
    case QR_PROG_HI: return q->program_va >> 32;
    case QR_PROG_OFFSET: return q->program_offset;
    case QR_SHMEM: return q->shared_memory;
    case QR_REGS: return q->register_count;
    case QR_BARRIERS: return q->barrier_count;
    case QR_SASS: return q->sass_version;
    case QR_LMEM_LO: return q->local_memory_low;
    case QR_LMEM_HI: return q->local_memory_high;
    case QR_CB_VALID: return cb ? cb->valid : 0;
    case QR_CB_ADDR_LO: return cb ? cb->va & 0xffffffffu : 0;
    case QR_CB_ADDR_HI: return cb ? cb->va >> 32 : 0;
    case QR_CB_ADDR_LO_SHIFTED6: if (cb) *lost = cb->va & 63; return cb ? (cb->va >> 6) & 0xffffffffu : 0;
    case QR_CB_ADDR_HI_SHIFTED6: return cb ? cb->va >> 38 : 0;
    case QR_CB_SIZE_SHIFTED4: if (cb) *lost = cb->size & 15; return cb ? cb->size >> 4 : 0;
    case QR_REL_ENABLE: return r ? r->enabled : 0;
    case QR_REL_ADDR_LO: return r ? r->va & 0xffffffffu : 0;
    case QR_REL_ADDR_HI: return r ? r->va >> 32 : 0;
    case QR_REL_PAYLOAD_LO: return r ? r->payload & 0xffffffffu : 0;
    case QR_REL_PAYLOAD_HI: return r ? r->payload >> 32 : 0;
    case QR_REL_PAYLOAD64: return r ? r->payload64 : 0;
    case QR_REL_STRUCT: return r ? r->structure_size : 0;
    case QR_REL_RED_ENABLE: return r ? r->reduction_enable : 0;
    case QR_REL_RED_OP: return r ? r->reduction_op : 0;
    case QR_REL_RED_FORMAT: return r ? r->reduction_format : 0;
    case QR_DEP_ENABLE: return d ? d->enabled : 0;
    case QR_DEP_ACTION: return d ? d->action : 0;
    case QR_DEP_PREFETCH: return d ? d->prefetch : 0;
    case QR_DEP_PTR_SHIFTED8: if (d) *lost = d->va & 0xff; return d ? d->va >> 8 : 0;
    case QR_PREFETCH_LO_SHIFTED8: *lost = q->program_prefetch_va & 0xff; return (q->program_prefetch_va >> 8) & 0xffffffffu;
    case QR_PREFETCH_HI_SHIFTED8: return q->program_prefetch_va >> 40;
    case QR_PREFETCH_SIZE: return q->program_prefetch_size;
    default: return 0;
    }
}

static void clear_fields(vgt_qmd_version v, uint8_t *q, uint32_t len)
{
    uint32_t n = 0;
    const vgt_qmd_field *f = vgt_qmd_fields(v, &n);
    for (uint32_t k = 0; k < n; k++)
        for (unsigned i = 0; i < f[k].count; i++)
            vgt_qmd_set_bits(q, len, f[k].hi + i * f[k].stride, f[k].lo + i * f[k].stride, 0);
}

void vgt_qmd_unnamed(vgt_qmd_version v, const uint8_t *qmd, uint32_t len, uint8_t *out)
{
    uint32_t size = vgt_qmd_version_size(v);
    memset(out, 0, size);
    memcpy(out, qmd, len < size ? len : size);
    clear_fields(v, out, size);
}

vgt_status vgt_qmd_encode(vgt_qmd_version v, const vgt_qmd *q, const uint8_t *unnamed, uint8_t *out, uint32_t len,
                          vgt_error *err)
{
    uint32_t n = 0, size = vgt_qmd_version_size(v);
    const vgt_qmd_field *f = vgt_qmd_fields(v, &n);
    if (!f) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "no QMD layout for version %d", (int)v);
    if (len < size)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "QMD %s needs %u bytes, the buffer has %u",
                        vgt_qmd_version_name(v), size, len);
    vgt_qmd w = *q;
    /* the version is the layout's, whatever q says; q may leave major/minor at 0 */
    w.major = (uint8_t)(v == VGT_QMD_V04_00 ? 4 : v == VGT_QMD_V03_00 ? 3 : 2);
    w.minor = (uint8_t)(v == VGT_QMD_V02_02 ? 2 : v == VGT_QMD_V02_03 ? 3 : 0);
    if ((q->major || q->minor) && (q->major != w.major || q->minor != w.minor))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "QMD declares %u.%u but is encoded as %s", q->major, q->minor,
                        vgt_qmd_version_name(v));
    uint32_t releases = v == VGT_QMD_V02_02 || v == VGT_QMD_V02_03 ? 2 : 3;
    for (unsigned i = 0; i < VGT_QMD_MAX_RELEASE; i++) {
        const vgt_qmd_release *r = &q->release[i];
        if (i >= releases && r->enabled)
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "release %u: QMD %s has %u release slots", i,
                            vgt_qmd_version_name(v), releases);
        if (releases == 2 && (r->payload >> 32))
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "release %u: payload 0x%llx does not fit the 32 bits of QMD %s",
                            i, (unsigned long long)r->payload, vgt_qmd_version_name(v));
    }
    uint8_t buf[VGT_QMD_MAX_BYTES];
    if (unnamed) {
        memcpy(buf, unnamed, size);
        clear_fields(v, buf, size);   /* only bits no field names come from there */
    } else {
        memset(buf, 0, size);
    }
    /* values too wide for their field: the top halves (…_HI, …_UPPER) hold what the low halves leave */
    for (uint32_t k = 0; k < n; k++)
        for (unsigned i = 0; i < f[k].count; i++) {
            unsigned hi = f[k].hi + i * f[k].stride, lo = f[k].lo + i * f[k].stride, width = hi - lo + 1;
            uint64_t lost, val = field_value(&w, f[k].role, f[k].first + i, &lost);
            if (lost || (width < 64 && (val >> width)))
                return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET,
                                "QMD %s field %s(%u) (bits %u:%u) cannot hold 0x%llx%s", vgt_qmd_version_name(v),
                                f[k].name, f[k].first + i, hi, lo, (unsigned long long)val,
                                lost ? " exactly (the layout drops its low bits)" : "");
            vgt_qmd_set_bits(buf, size, hi, lo, val);
        }
    memcpy(out, buf, size);
    return VGT_OK;
}

/* member by member: the structs have padding */
static int release_equal(const vgt_qmd_release *a, const vgt_qmd_release *b)
{
    return a->enabled == b->enabled && a->payload64 == b->payload64 && a->structure_size == b->structure_size &&
           a->reduction_enable == b->reduction_enable && a->reduction_op == b->reduction_op &&
           a->reduction_format == b->reduction_format && a->va == b->va && a->payload == b->payload;
}

static int dependent_equal(const vgt_qmd_dependent *a, const vgt_qmd_dependent *b)
{
    return a->enabled == b->enabled && a->action == b->action && a->prefetch == b->prefetch && a->va == b->va;
}

int vgt_qmd_equal(const vgt_qmd *a, const vgt_qmd *b, const char **what)
{
    static char name[48];
    const char *w = NULL;
#define DIFF(cond, label) do { if (!w && (cond)) w = label; } while (0)
    DIFF(a->version != b->version || a->major != b->major || a->minor != b->minor, "version");
    DIFF(memcmp(a->grid, b->grid, sizeof a->grid), "grid");
    DIFF(memcmp(a->block, b->block, sizeof a->block), "block");
    DIFF(a->program_va != b->program_va || a->program_offset != b->program_offset, "program");
    DIFF(a->shared_memory != b->shared_memory, "shared_memory");
    DIFF(a->register_count != b->register_count, "register_count");
    DIFF(a->barrier_count != b->barrier_count, "barrier_count");
    DIFF(a->sass_version != b->sass_version, "sass_version");
    DIFF(a->local_memory_low != b->local_memory_low || a->local_memory_high != b->local_memory_high, "local_memory");
    DIFF(a->program_prefetch_va != b->program_prefetch_va || a->program_prefetch_size != b->program_prefetch_size,
         "program_prefetch");
    DIFF(a->cb_valid_mask != b->cb_valid_mask, "cb_valid_mask");
    for (unsigned i = 0; !w && i < VGT_QMD_MAX_CB; i++)
        if (a->cb[i].valid != b->cb[i].valid || a->cb[i].va != b->cb[i].va || a->cb[i].size != b->cb[i].size) {
            snprintf(name, sizeof name, "cb[%u]", i);
            w = name;
        }
    for (unsigned i = 0; !w && i < VGT_QMD_MAX_RELEASE; i++)
        if (!release_equal(&a->release[i], &b->release[i])) {
            snprintf(name, sizeof name, "release[%u]", i);
            w = name;
        }
    for (unsigned i = 0; !w && i < VGT_QMD_MAX_DEPENDENT; i++)
        if (!dependent_equal(&a->dependent[i], &b->dependent[i])) {
            snprintf(name, sizeof name, "dependent[%u]", i);
            w = name;
        }
#undef DIFF
    if (what) *what = w;
    return w == NULL;
}
