/* addr_qmd.c: the address fields of a QMD (vgt/addr_operands.h), read and rewritten in place (the
 * replay's lane-1 relocations). A QMD names its program,
 * its constant buffers, its release semaphores and its dependent QMDs by GPU VA; the field positions
 * come from analyze's QMD field tables (vgt_qmd_fields: open-gpu-doc clc3c0qmd.h .. clcbc0qmd.h, per
 * version), found here by the names the facts give (trace-format/facts/addresses.txt, vgt_nv_addr_qmd):
 * a LOWER/UPPER pair (the CB address of V04_00 is stored >> 6) or a single pointer stored >> 8. The
 * caller decides where the bytes are (a QMD uploaded by I2M or sent inline in a push buffer, or one in
 * memory). */
#include <string.h>

#include "vgt/addr_operands.h"
#include "vgt/nv_facts.h"
#include "vgt/qmd.h"

/* The QMD address fields: the facts' table. */
#define NADDRS VGT_NV_ADDR_QMD_COUNT
#define addrs(a) vgt_nv_addr_qmd_at(a)

static const vgt_qmd_field *field(const vgt_qmd_field *t, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n && name; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

static unsigned bit(const vgt_qmd_field *f, uint32_t j, unsigned which) { return which + j * f->stride; }

uint32_t vgt_qmd_relocate(vgt_qmd_translate_fn translate, const void *ctx, uint8_t *qmd, uint32_t len,
                          vgt_qmd_fix *fix, uint32_t max)
{
    vgt_qmd_version v = len >= 73 ? vgt_qmd_detect(qmd, len) : VGT_QMD_UNKNOWN;
    uint32_t n = 0, count = 0;
    const vgt_qmd_field *t = vgt_qmd_fields(v, &count);
    if (!t || vgt_qmd_version_size(v) > len) return 0;
    for (uint32_t a = 0; a < NADDRS; a++) {
        const vgt_qmd_field *lo = field(t, count, addrs(a)->lower), *hi = field(t, count, addrs(a)->upper);
        if (!lo || (addrs(a)->upper && !hi)) continue;
        for (uint32_t j = 0; j < lo->count && n < max; j++) {
            uint64_t raw = vgt_qmd_bits(qmd, len, bit(lo, j, lo->hi), bit(lo, j, lo->lo));
            unsigned hi_bits = hi ? hi->hi - hi->lo + 1 : 0;
            if (hi) raw |= vgt_qmd_bits(qmd, len, bit(hi, j, hi->hi), bit(hi, j, hi->lo)) << (lo->hi - lo->lo + 1);
            uint64_t va = raw << addrs(a)->shift, to = va ? translate(ctx, va) : va;
            if (to == va) continue;
            uint64_t nv = to >> addrs(a)->shift;
            unsigned lo_bits = lo->hi - lo->lo + 1;
            vgt_qmd_set_bits(qmd, len, bit(lo, j, lo->hi), bit(lo, j, lo->lo), nv & ((1ull << lo_bits) - 1));
            if (hi) vgt_qmd_set_bits(qmd, len, bit(hi, j, hi->hi), bit(hi, j, hi->lo), (nv >> lo_bits) & ((1ull << hi_bits) - 1));
            fix[n++] = (vgt_qmd_fix){.what = addrs(a)->what, .element = lo->first + j, .from = va, .to = to,
                                 .dword = bit(lo, j, lo->lo) / 32};
        }
    }
    return n;
}
