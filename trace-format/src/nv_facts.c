/* nv_facts.c: lookups over the generated fact tables (nv_facts_table.c, from trace-format/facts/). */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>

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

/* The address methods by (family, method), sorted: every method of every element of every operand, the
 * first in the table's order kept when two claim the same method (the scan this replaces answered so). Built
 * once: the relocation walk, the replay's stream and db ask for every method of every submission. */
typedef struct addr_key {
    uint32_t key;      /* family << 16 | method */
    uint8_t op, element, half;
} addr_key;

#define ADDR_KEYS_MAX (2u * 256u * VGT_NV_ADDR_METHOD_COUNT)   /* count is a uint8_t */
static addr_key addr_keys[ADDR_KEYS_MAX];
static uint32_t naddr_keys;
static pthread_once_t addr_keys_once = PTHREAD_ONCE_INIT;

static int addr_key_cmp(const void *a, const void *b)
{
    const addr_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    /* the table's order among equal keys: its first claim wins */
    uint32_t ox = (uint32_t)x->op << 9 | (uint32_t)x->element << 1 | (x->half ? 1u : 0u);
    uint32_t oy = (uint32_t)y->op << 9 | (uint32_t)y->element << 1 | (y->half ? 1u : 0u);
    return ox < oy ? -1 : ox > oy;
}

static void addr_keys_build(void)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < VGT_NV_ADDR_METHOD_COUNT; i++) {
        const vgt_nv_addr_method *p = &vgt_nv_addr_methods_[i];
        for (uint32_t j = 0; j < p->count; j++) {
            uint32_t off = j * p->stride, h = p->hi + off, l = p->lo + off;
            /* the scan's order within an element: the high half first */
            if (p->hi_mask && h <= 0xFFFF) addr_keys[n++] = (addr_key){(uint32_t)p->family << 16 | h, (uint8_t)i, (uint8_t)j, 0};
            if (l <= 0xFFFF) addr_keys[n++] = (addr_key){(uint32_t)p->family << 16 | l, (uint8_t)i, (uint8_t)j, 1};
        }
    }
    qsort(addr_keys, n, sizeof addr_keys[0], addr_key_cmp);
    uint32_t k = 0;   /* one per key: the first */
    for (uint32_t i = 0; i < n; i++)
        if (k == 0 || addr_keys[k - 1].key != addr_keys[i].key) addr_keys[k++] = addr_keys[i];
    naddr_keys = k;
}

int vgt_nv_addr_method_of(uint32_t cls, uint32_t mthd, const vgt_nv_addr_method **op, uint32_t *element)
{
    vgt_nv_family fam = vgt_nv_class_family(cls);
    if (fam == VGT_NV_FAM_NONE || mthd > 0xFFFF) return -1;
    pthread_once(&addr_keys_once, addr_keys_build);
    uint32_t key = (uint32_t)fam << 16 | mthd, lo = 0, hi = naddr_keys;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (addr_keys[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    if (lo == naddr_keys || addr_keys[lo].key != key) return -1;
    *op = &vgt_nv_addr_methods_[addr_keys[lo].op];
    *element = addr_keys[lo].element;
    return addr_keys[lo].half;
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
