/* qmd.c: QMD version detection and table-driven decoding (tables in qmd_v02.c, qmd_v03.c, qmd_v04.c).
 *
 * Invariants: no read past len (vgt_qmd_bits treats missing bits as 0 and decode refuses a QMD shorter
 * than its layout); every table entry has hi - lo < 64 and lies inside the layout's size (checked by
 * tests/unit/test_qmd.c). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "qmd_roles.h"

uint64_t vgt_qmd_bits(const uint8_t *qmd, uint32_t len, unsigned hi, unsigned lo)
{
    unsigned width = hi - lo + 1, first = lo >> 3, shift = lo & 7;
    uint64_t v = 0;
    if (first + 8 <= len) {   /* the usual case, a field inside the QMD: one little-endian load */
        const uint8_t *p = qmd + first;
        v = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
            (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
    } else {
        for (unsigned k = 8; k-- > 0;)   /* 8 bytes from first, little-endian, zero past len */
            v = (v << 8) | (first + k < len ? qmd[first + k] : 0);
    }
    v >>= shift;
    if (shift + width > 64 && first + 8 < len)   /* the range spills into a ninth byte */
        v |= (uint64_t)qmd[first + 8] << (64 - shift);
    return width >= 64 ? v : v & ((UINT64_C(1) << width) - 1);
}

void vgt_qmd_set_bits(uint8_t *qmd, uint32_t len, unsigned hi, unsigned lo, uint64_t v)
{
    for (unsigned bit = lo; bit <= hi; bit++) {
        unsigned b = bit >> 3;
        if (b >= len) return;
        uint8_t mask = (uint8_t)(1u << (bit & 7));
        if ((v >> (bit - lo)) & 1) qmd[b] |= mask; else qmd[b] &= (uint8_t)~mask;
    }
}

/* Major/minor sit at the same bits in every version (583:580, 579:576). */
vgt_qmd_version vgt_qmd_detect(const uint8_t *qmd, uint32_t len)
{
    if (len < 73) return VGT_QMD_UNKNOWN;
    unsigned major = (unsigned)vgt_qmd_bits(qmd, len, 583, 580), minor = (unsigned)vgt_qmd_bits(qmd, len, 579, 576);
    if (major == 2 && minor == 2) return VGT_QMD_V02_02;
    if (major == 2 && minor == 3) return VGT_QMD_V02_03;
    if (major == 3 && minor == 0) return VGT_QMD_V03_00;
    if (major == 4 && minor == 0) return VGT_QMD_V04_00;
    return VGT_QMD_UNKNOWN;
}

const char *vgt_qmd_version_name(vgt_qmd_version v)
{
    static const char *const names[] = { "unknown", "V02_02", "V02_03", "V03_00", "V04_00" };
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "unknown";
}

uint32_t vgt_qmd_version_size(vgt_qmd_version v)
{
    switch (v) {
    case VGT_QMD_V02_02: case VGT_QMD_V02_03: case VGT_QMD_V03_00: return 256;
    case VGT_QMD_V04_00: return 384;
    default: return 0;
    }
}

const vgt_qmd_field *vgt_qmd_fields(vgt_qmd_version v, uint32_t *count)
{
    switch (v) {
    case VGT_QMD_V02_02: *count = vgt_qmd_v02_02_count; return vgt_qmd_v02_02_fields;
    case VGT_QMD_V02_03: *count = vgt_qmd_v02_03_count; return vgt_qmd_v02_03_fields;
    case VGT_QMD_V03_00: *count = vgt_qmd_v03_00_count; return vgt_qmd_v03_00_fields;
    case VGT_QMD_V04_00: *count = vgt_qmd_v04_00_count; return vgt_qmd_v04_00_fields;
    default: *count = 0; return NULL;
    }
}

static void apply_cb(vgt_qmd *q, unsigned role, unsigned i, uint64_t v)
{
    vgt_qmd_cb *cb = &q->cb[i];
    switch (role) {
    case QR_CB_VALID: cb->valid = (uint8_t)v; if (v) q->cb_valid_mask |= 1u << i; break;
    case QR_CB_ADDR_LO: cb->va = (cb->va & ~UINT64_C(0xffffffff)) | v; break;
    case QR_CB_ADDR_HI: cb->va = (cb->va & UINT64_C(0xffffffff)) | (v << 32); break;
    case QR_CB_ADDR_LO_SHIFTED6: cb->va |= v << 6; break;
    case QR_CB_ADDR_HI_SHIFTED6: cb->va |= v << 38; break;
    case QR_CB_SIZE_SHIFTED4: cb->size = (uint32_t)(v << 4); break;
    }
}

static void apply_release(vgt_qmd *q, unsigned role, unsigned i, uint64_t v)
{
    vgt_qmd_release *r = &q->release[i];
    switch (role) {
    case QR_REL_ENABLE: r->enabled = (uint8_t)v; break;
    case QR_REL_ADDR_LO: r->va |= v; break;
    case QR_REL_ADDR_HI: r->va |= v << 32; break;
    case QR_REL_PAYLOAD_LO: r->payload |= v; break;
    case QR_REL_PAYLOAD_HI: r->payload |= v << 32; break;
    case QR_REL_PAYLOAD64: r->payload64 = (uint8_t)v; break;
    case QR_REL_STRUCT: r->structure_size = (uint8_t)v; break;
    case QR_REL_RED_ENABLE: r->reduction_enable = (uint8_t)v; break;
    case QR_REL_RED_OP: r->reduction_op = (uint8_t)v; break;
    case QR_REL_RED_FORMAT: r->reduction_format = (uint8_t)v; break;
    }
}

static void apply(vgt_qmd *q, unsigned role, unsigned i, uint64_t v)
{
    uint32_t v32 = (uint32_t)v;
    if (role >= QR_CB_VALID && role <= QR_CB_SIZE_SHIFTED4) {
        if (i < VGT_QMD_MAX_CB) apply_cb(q, role, i, v);
        return;
    }
    if (role >= QR_REL_ENABLE && role <= QR_REL_RED_FORMAT) {
        if (i < VGT_QMD_MAX_RELEASE) apply_release(q, role, i, v);
        return;
    }
    if (role == QR_PREFETCH_LO_SHIFTED8) { q->program_prefetch_va |= v << 8; return; }
    if (role == QR_PREFETCH_HI_SHIFTED8) { q->program_prefetch_va |= v << 40; return; }
    if (role == QR_PREFETCH_SIZE) { q->program_prefetch_size = v32; return; }
    if (role >= QR_DEP_ENABLE) {
        if (i >= VGT_QMD_MAX_DEPENDENT) return;
        vgt_qmd_dependent *d = &q->dependent[i];
        if (role == QR_DEP_ENABLE) d->enabled = (uint8_t)v;
        else if (role == QR_DEP_ACTION) d->action = (uint8_t)v;
        else if (role == QR_DEP_PREFETCH) d->prefetch = (uint8_t)v;
        else d->va = v << 8;
        return;
    }
    switch (role) {
    case QR_MAJOR: q->major = (uint8_t)v; break;
    case QR_MINOR: q->minor = (uint8_t)v; break;
    case QR_GRID0: q->grid[0] = v32; break;
    case QR_GRID1: q->grid[1] = v32; break;
    case QR_GRID2: q->grid[2] = v32; break;
    case QR_BLOCK0: q->block[0] = v32; break;
    case QR_BLOCK1: q->block[1] = v32; break;
    case QR_BLOCK2: q->block[2] = v32; break;
    case QR_PROG_LO: q->program_va |= v; break;
    case QR_PROG_HI: q->program_va |= v << 32; break;
    case QR_PROG_OFFSET: q->program_offset = v32; break;
    case QR_SHMEM: q->shared_memory = v32; break;
    case QR_REGS: q->register_count = v32; break;
    case QR_BARRIERS: q->barrier_count = v32; break;
    case QR_SASS: q->sass_version = v32; break;
    case QR_LMEM_LO: q->local_memory_low = v32; break;
    case QR_LMEM_HI: q->local_memory_high = v32; break;
    }
}

const char *vgt_qmd_dependent_action_name(unsigned action)
{
    static const char *const n[] = { "INCREMENT_PUT", "SCHEDULE", NULL, "INVALIDATE_COPY_SCHEDULE", "DECREMENT_DEPENDENCE" };
    return action < sizeof n / sizeof n[0] && n[action] ? n[action] : "?";
}

int vgt_qmd_requires_scheduling_pcas(vgt_qmd_version v, const uint8_t *qmd, uint32_t len)
{
    switch (v) {
    case VGT_QMD_V03_00: return (int)vgt_qmd_bits(qmd, len, 140, 140);
    case VGT_QMD_V04_00: return (int)vgt_qmd_bits(qmd, len, 30, 30);
    default: return 0;
    }
}

vgt_status vgt_qmd_decode_as(vgt_qmd_version v, const uint8_t *qmd, uint32_t len, vgt_qmd *out, vgt_error *err)
{
    uint32_t n = 0;
    const vgt_qmd_field *f = vgt_qmd_fields(v, &n);
    if (!f)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "no QMD layout for version %d", (int)v);
    uint32_t size = vgt_qmd_version_size(v);
    if (len < size)
        return VGT_FAIL(err, VGT_E_TRUNCATED, len, "QMD %s needs %u bytes, only %u available",
                        vgt_qmd_version_name(v), size, len);
    memset(out, 0, sizeof *out);
    out->version = v;
    out->size = size;
    out->release_count = v == VGT_QMD_V02_02 || v == VGT_QMD_V02_03 ? 2 : 3;
    for (uint32_t k = 0; k < n; k++)
        for (unsigned i = 0; i < f[k].count; i++) {
            unsigned off = i * f[k].stride;
            apply(out, f[k].role, f[k].first + i, vgt_qmd_bits(qmd, len, f[k].hi + off, f[k].lo + off));
        }
    if (out->release_count == 2)   /* V02 payloads are 32-bit */
        for (unsigned i = 0; i < 2; i++) out->release[i].payload64 = 0;
    return VGT_OK;
}

vgt_status vgt_qmd_decode(const uint8_t *qmd, uint32_t len, vgt_qmd *out, vgt_error *err)
{
    vgt_qmd_version v = vgt_qmd_detect(qmd, len);
    if (v == VGT_QMD_UNKNOWN) {
        if (len < 73)
            return VGT_FAIL(err, VGT_E_TRUNCATED, len, "QMD of %u bytes is too short to hold its version (73 needed)", len);
        return VGT_FAIL(err, VGT_E_DECODE, 72, "QMD declares version %u.%u, expected 2.2, 2.3, 3.0 or 4.0",
                        (unsigned)vgt_qmd_bits(qmd, len, 583, 580), (unsigned)vgt_qmd_bits(qmd, len, 579, 576));
    }
    return vgt_qmd_decode_as(v, qmd, len, out, err);
}

int vgt_qmd_format_fields(vgt_qmd_version v, const uint8_t *qmd, uint32_t len, char *buf, uint32_t cap)
{
    uint32_t n = 0, total = 0;
    const vgt_qmd_field *f = vgt_qmd_fields(v, &n);
    if (cap) buf[0] = 0;
    for (uint32_t k = 0; k < n; k++)
        for (unsigned i = 0; i < f[k].count; i++) {
            unsigned off = i * f[k].stride;
            uint64_t val = vgt_qmd_bits(qmd, len, f[k].hi + off, f[k].lo + off);
            if (f[k].count > 1 && !val) continue;   /* arrays: only the elements in use */
            char name[64];
            if (f[k].count > 1) snprintf(name, sizeof name, "%s(%u)", f[k].name, f[k].first + i);
            else snprintf(name, sizeof name, "%s", f[k].name);
            uint32_t room = total < cap ? cap - total : 0;
            int w = snprintf(room ? buf + total : NULL, room, "%s%s=%s%" PRIx64, total ? ", " : "", name,
                             val > 9 ? "0x" : "", val);
            if (w > 0) total += (uint32_t)w;
        }
    return (int)total;
}
