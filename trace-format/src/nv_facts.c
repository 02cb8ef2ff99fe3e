/* nv_facts.c: lookups over the generated fact tables (nv_facts_table.c, from trace-format/facts/). */
#include <stdatomic.h>
#include <stddef.h>

#include "vgt/nv_facts.h"

extern const vgt_nv_class vgt_nv_classes_[VGT_NV_CLASS_COUNT];
extern const vgt_nv_mme_range vgt_nv_mme_ranges_[];
extern const uint32_t vgt_nv_mme_range_count_;
extern const char *const vgt_nv_addr_role_names_[VGT_NV_ADDR_ROLE_COUNT_];
extern const vgt_nv_addr_method vgt_nv_addr_methods_[VGT_NV_ADDR_METHOD_COUNT];
extern const vgt_nv_addr_qmd vgt_nv_addr_qmd_[VGT_NV_ADDR_QMD_COUNT];

uint32_t vgt_nv_class_count(void) { return VGT_NV_CLASS_COUNT; }

const vgt_nv_class *vgt_nv_class_at(uint32_t i) { return i < VGT_NV_CLASS_COUNT ? &vgt_nv_classes_[i] : NULL; }

/* Asked for every method a push buffer holds (the family of its class, by each of the replay's
 * subscribers), nearly always for the class asked last: the last answer is kept as vgt_nv_mme_for_class
 * keeps its own (class in the high half, table index + 1 in the low, 0 for a class not in the table). */
static _Atomic uint64_t class_last;

const vgt_nv_class *vgt_nv_class_info(uint32_t cls)
{
    uint64_t last = atomic_load_explicit(&class_last, memory_order_relaxed);
    if (last && (uint32_t)(last >> 32) == cls) {
        uint32_t i = (uint32_t)last;
        return i ? &vgt_nv_classes_[i - 1] : NULL;
    }
    const vgt_nv_class *found = NULL;
    uint32_t lo = 0, hi = VGT_NV_CLASS_COUNT;
    while (lo < hi) {   /* sorted by id */
        uint32_t mid = lo + (hi - lo) / 2;
        if (vgt_nv_classes_[mid].id == cls) {
            found = &vgt_nv_classes_[mid];
            break;
        }
        if (vgt_nv_classes_[mid].id < cls) lo = mid + 1;
        else hi = mid;
    }
    uint32_t index = found ? (uint32_t)(found - vgt_nv_classes_) + 1u : 0u;
    atomic_store_explicit(&class_last, (uint64_t)cls << 32 | index, memory_order_relaxed);
    return found;
}

vgt_nv_family vgt_nv_class_family(uint32_t cls)
{
    const vgt_nv_class *c = vgt_nv_class_info(cls);
    return c ? (vgt_nv_family)c->family : VGT_NV_FAM_NONE;
}

const char *vgt_nv_family_name(vgt_nv_family f)
{
    static const char *const names[VGT_NV_FAM_COUNT_] = {"unknown", "host", "3d", "compute", "copy", "i2m", "2d"};
    return (unsigned)f < VGT_NV_FAM_COUNT_ ? names[f] : "unknown";
}

unsigned vgt_nv_class_qmd(uint32_t cls)
{
    const vgt_nv_class *c = vgt_nv_class_info(cls);
    return c ? c->qmd : VGT_NV_QMD_NONE;
}

unsigned vgt_nv_class_mme(uint32_t cls)
{
    const vgt_nv_class *c = vgt_nv_class_info(cls);
    return c ? c->mme : VGT_NV_MME_NONE;
}

/* Asked for every method a push buffer holds, nearly always for the class asked last: the last answer is
 * kept (class in the high half, answer + 1 in the low; 0 none), one atomic word so that threads asking at
 * once each see a whole pair. */
static _Atomic uint64_t mme_last;

unsigned vgt_nv_mme_for_class(uint32_t cls)
{
    uint64_t last = atomic_load_explicit(&mme_last, memory_order_relaxed);
    if (last && (uint32_t)(last >> 32) == cls) return (unsigned)(uint32_t)last - 1;
    unsigned mme = VGT_NV_MME_NONE;
    for (uint32_t i = 0; i < vgt_nv_mme_range_count_; i++)
        if (cls >= vgt_nv_mme_ranges_[i].first && cls <= vgt_nv_mme_ranges_[i].last) {
            mme = vgt_nv_mme_ranges_[i].mme;
            break;
        }
    atomic_store_explicit(&mme_last, (uint64_t)cls << 32 | (mme + 1u), memory_order_relaxed);
    return mme;
}

const vgt_nv_addr_method *vgt_nv_addr_method_at(uint32_t i)
{
    return i < VGT_NV_ADDR_METHOD_COUNT ? &vgt_nv_addr_methods_[i] : NULL;
}

const vgt_nv_addr_qmd *vgt_nv_addr_qmd_at(uint32_t i) { return i < VGT_NV_ADDR_QMD_COUNT ? &vgt_nv_addr_qmd_[i] : NULL; }

const char *vgt_nv_addr_role_name(unsigned role)
{
    return role < VGT_NV_ADDR_ROLE_COUNT_ ? vgt_nv_addr_role_names_[role] : "NONE";
}

int vgt_nv_addr_method_of(uint32_t cls, uint32_t mthd, const vgt_nv_addr_method **op, uint32_t *element)
{
    vgt_nv_family fam = vgt_nv_class_family(cls);
    if (fam == VGT_NV_FAM_NONE) return -1;
    for (uint32_t i = 0; i < VGT_NV_ADDR_METHOD_COUNT; i++) {
        const vgt_nv_addr_method *p = &vgt_nv_addr_methods_[i];
        if (p->family != fam) continue;
        for (uint32_t j = 0; j < p->count; j++) {
            uint32_t off = j * p->stride;
            int half = p->hi_mask && mthd == p->hi + off ? 0 : mthd == p->lo + off ? 1 : -1;
            if (half < 0) continue;
            *op = p;
            *element = j;
            return half;
        }
    }
    return -1;
}

uint64_t vgt_nv_addr_method_value(const vgt_nv_addr_method *op, uint32_t hi, uint32_t lo)
{
    uint64_t v = op->hi_mask ? (uint64_t)(hi & op->hi_mask) << 32 | lo : lo;
    return v << op->shift;
}

void vgt_nv_addr_method_encode(const vgt_nv_addr_method *op, uint64_t va, uint32_t old_hi, uint32_t *hi, uint32_t *lo)
{
    uint64_t v = va >> op->shift;
    *lo = (uint32_t)v;
    *hi = op->hi_mask ? (old_hi & ~op->hi_mask) | ((uint32_t)(v >> 32) & op->hi_mask) : 0;
}
