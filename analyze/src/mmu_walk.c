/* mmu_walk.c: GPU page-table walks, versions 2 and 3 of NVIDIA's MMU format (see vgt/mmu.h for the
 * sources). The formats are data (levels below); the entry layouts are the two decoders pde_* / pte_*.
 * No libc: a kernel-module device model can compile this file as it is. */
#include "vgt/mmu.h"

/* Levels: name, VA bits, entry size, huge PTE allowed.
 * Version 2: uvm_turing_mmu.c (PDE3 48:47, PDE2 46:38, PDE1 37:29, PDE0 28:21 dual or 2M PTE, PTE
 * 20:16/20:12); uvm_ampere_mmu.c adds "PDE1 (or 512M PTE)". Version 3: uvm_hopper_mmu.c (PDE4 56:56,
 * PDE3 55:47, PDE2 46:38, PDE1 37:29 or 512M PTE, PDE0 28:21 dual or 2M PTE, PTE 20:16/20:12). */
static const vgt_mmu_format formats[] = {
    {VGT_MMU_V2_TURING, "version 2 (Pascal, Volta, Turing)", 2, 49, 5,
     {{"PD3", 48, 47, 8, 0}, {"PD2", 46, 38, 8, 0}, {"PD1", 37, 29, 8, 0}, {"PD0", 28, 21, 16, 1},
      {"PT", 20, 12, 8, 0}}},
    {VGT_MMU_V2_AMPERE, "version 2 (Ampere, Ada)", 2, 49, 5,
     {{"PD3", 48, 47, 8, 0}, {"PD2", 46, 38, 8, 0}, {"PD1", 37, 29, 8, 1}, {"PD0", 28, 21, 16, 1},
      {"PT", 20, 12, 8, 0}}},
    {VGT_MMU_V3_HOPPER, "version 3 (Hopper, Blackwell)", 3, 57, 6,
     {{"PD4", 56, 56, 8, 0}, {"PD3", 55, 47, 8, 0}, {"PD2", 46, 38, 8, 0}, {"PD1", 37, 29, 8, 1},
      {"PD0", 28, 21, 16, 1}, {"PT", 20, 12, 8, 0}}},
};

/* Chips and architectures to formats (Pascal GP10x through Blackwell GB20x). */
static const struct { const char *name; int id; } names[] = {
    {"pascal", VGT_MMU_V2_TURING}, {"volta", VGT_MMU_V2_TURING}, {"turing", VGT_MMU_V2_TURING},
    {"ampere", VGT_MMU_V2_AMPERE}, {"ada", VGT_MMU_V2_AMPERE}, {"hopper", VGT_MMU_V3_HOPPER},
    {"blackwell", VGT_MMU_V3_HOPPER}, {"gp", VGT_MMU_V2_TURING}, {"gv", VGT_MMU_V2_TURING},
    {"tu", VGT_MMU_V2_TURING}, {"ga", VGT_MMU_V2_AMPERE}, {"ad", VGT_MMU_V2_AMPERE},
    {"gh", VGT_MMU_V3_HOPPER}, {"gb", VGT_MMU_V3_HOPPER},
};

const vgt_mmu_format *vgt_mmu_format_get(int id)
{
    for (unsigned i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].id == id) return &formats[i];
    return 0;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

const vgt_mmu_format *vgt_mmu_format_for(const char *s)
{
    if (!s) return 0;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *n = names[i].name;
        unsigned k = 0;
        while (n[k] && lower(s[k]) == n[k]) k++;
        if (n[k]) continue;
        /* an architecture name matches whole; a chip prefix ("tu", "gh") wants a digit after it */
        if (!s[k] || (k == 2 && s[k] >= '0' && s[k] <= '9')) return vgt_mmu_format_get(names[i].id);
    }
    return 0;
}

const char *vgt_mmu_fault_name(int fault)
{
    static const char *const n[] = {"OK", "NOT_PRESENT", "SPARSE", "READ", "VA_RANGE", "BAD_ENTRY", "ARG"};
    return fault >= 0 && fault < (int)(sizeof n / sizeof n[0]) ? n[fault] : "?";
}

static uint64_t bits(uint64_t v, unsigned hi, unsigned lo) { return (v >> lo) & ((2ull << (hi - lo)) - 1); }

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* A pointer to the next table: its aperture (a PDE's 1 video, 2/3 system; 0 none) and address. */
typedef struct next_table {
    int present;
    int aperture;            /* enum vgt_mmu_aperture */
    uint64_t pa;
} next_table;

static int pde_aperture(uint64_t ap)
{
    return ap == 1 ? VGT_MMU_VIDMEM : ap == 2 ? VGT_MMU_SYS_COHERENT : VGT_MMU_SYS_NONCOHERENT;
}

/* Single PDE. v2: APERTURE 2:1, ADDRESS_SYS 53:8 / ADDRESS_VID 32:8, shifted by 12 (dev_mmu.ref.txt
 * NV_MMU_VER2_PDE). v3: APERTURE 2:1, ADDRESS 51:12, shift 12 (dev_mmu.h NV_MMU_VER3_PDE). */
static next_table pde_single(int version, uint64_t e)
{
    next_table t = {0, 0, 0};
    uint64_t ap = bits(e, 2, 1);
    if (!ap) return t;
    t.present = 1;
    t.aperture = pde_aperture(ap);
    if (version == 2) t.pa = (ap == 1 ? bits(e, 32, 8) : bits(e, 53, 8)) << 12;
    else t.pa = bits(e, 51, 12) << 12;
    return t;
}

/* Dual PDE, big half (bits 63:0). v2: APERTURE_BIG 2:1, ADDRESS_BIG_SYS 53:4 / _VID 32:4, shifted by 8.
 * v3: APERTURE_BIG 2:1, ADDRESS_BIG 51:8, shifted by 8. */
static next_table pde_big(int version, uint64_t e)
{
    next_table t = {0, 0, 0};
    uint64_t ap = bits(e, 2, 1);
    if (!ap) return t;
    t.present = 1;
    t.aperture = pde_aperture(ap);
    if (version == 2) t.pa = (ap == 1 ? bits(e, 32, 4) : bits(e, 53, 4)) << 8;
    else t.pa = bits(e, 51, 8) << 8;
    return t;
}

/* Dual PDE, small half (bits 127:64, given as its own u64). v2: APERTURE_SMALL 66:65, ADDRESS_SMALL_SYS
 * 117:72 / _VID 96:72, shifted by 12. v3: APERTURE_SMALL 66:65, ADDRESS_SMALL 115:76, shifted by 12. */
static next_table pde_small(int version, uint64_t hi)
{
    next_table t = {0, 0, 0};
    uint64_t ap = bits(hi, 2, 1);
    if (!ap) return t;
    t.present = 1;
    t.aperture = pde_aperture(ap);
    if (version == 2) t.pa = (ap == 1 ? bits(hi, 32, 8) : bits(hi, 53, 8)) << 12;
    else t.pa = bits(hi, 51, 12) << 12;
    return t;
}

/* A PTE (any level). v2 (NV_MMU_VER2_PTE): VALID 0, APERTURE 2:1, VOL 3, PRIVILEGE 5, READ_ONLY 6,
 * ATOMIC_DISABLE 7, ADDRESS_SYS 53:8 / ADDRESS_VID 32:8 with peer 35:33, shifted by 12, KIND 63:56.
 * v3 (NV_MMU_VER3_PTE): VALID 0, APERTURE 2:1, PCF 7:3 (for a valid PTE: bit 0 uncached, 1 privilege,
 * 2 read-only, 3 no atomics, 4 access counting off; for an invalid one: 1 SPARSE, 3 NO_VALID_4KB_PAGE),
 * KIND 11:8, ADDRESS 51:12 / ADDRESS_VID 39:12, PEER_ID 63:61. Returns 1 when valid. */
static int pte_decode(int version, uint64_t e, vgt_mmu_result *r, uint64_t va, uint64_t page_size)
{
    r->pte = e;
    if (!(e & 1)) {
        if (version == 3) {
            uint64_t pcf = bits(e, 7, 3);
            r->fault = pcf == 1 || pcf == 3 ? VGT_MMU_FAULT_SPARSE : VGT_MMU_FAULT_NOT_PRESENT;
        } else {
            r->fault = VGT_MMU_FAULT_NOT_PRESENT;
        }
        return 0;
    }
    r->aperture = (uint8_t)bits(e, 2, 1);
    uint64_t base;
    if (version == 2) {
        r->is_volatile = (uint8_t)bits(e, 3, 3);
        r->privileged = (uint8_t)bits(e, 5, 5);
        r->read_only = (uint8_t)bits(e, 6, 6);
        r->atomic_disable = (uint8_t)bits(e, 7, 7);
        r->kind = (uint8_t)bits(e, 63, 56);
        if (r->aperture == VGT_MMU_VIDMEM || r->aperture == VGT_MMU_PEER) {
            base = bits(e, 32, 8) << 12;
            r->peer_id = r->aperture == VGT_MMU_PEER ? (uint8_t)bits(e, 35, 33) : 0;
        } else {
            base = bits(e, 53, 8) << 12;
        }
    } else {
        uint64_t pcf = bits(e, 7, 3);
        r->is_volatile = pcf & 1;
        r->privileged = (pcf >> 1) & 1;
        r->read_only = (pcf >> 2) & 1;
        r->atomic_disable = (pcf >> 3) & 1;
        r->kind = (uint8_t)bits(e, 11, 8);
        if (r->aperture == VGT_MMU_VIDMEM) {
            base = bits(e, 39, 12) << 12;
        } else {
            base = bits(e, 51, 12) << 12;
            r->peer_id = r->aperture == VGT_MMU_PEER ? (uint8_t)bits(e, 63, 61) : 0;
        }
    }
    r->page_size = page_size;
    /* a large page's PTE holds its base: the VA's offset within the page comes from the VA */
    r->pa = (base & ~(page_size - 1)) + (va & (page_size - 1));
    r->fault = VGT_MMU_OK;
    return 1;
}

static int read_entry(const vgt_mmu_walk *w, int aperture, uint64_t pa, uint8_t *buf, uint32_t len,
                      vgt_mmu_result *r)
{
    r->entry_pa = pa;
    if (aperture == VGT_MMU_PEER) return r->fault = VGT_MMU_FAULT_BAD_ENTRY, 0;
    if (w->read(w->ctx, aperture, pa, buf, len)) return r->fault = VGT_MMU_FAULT_READ, 0;
    return 1;
}

int vgt_mmu_translate(const vgt_mmu_walk *w, uint64_t va, vgt_mmu_result *r)
{
    vgt_mmu_result zero = {0};
    *r = zero;
    const vgt_mmu_format *f = w ? w->fmt : 0;
    uint32_t big_shift = w && w->big_page_shift ? w->big_page_shift : 16;
    if (!f || !w->read || (big_shift != 16 && !(big_shift == 17 && f->version == 2)))
        return r->fault = VGT_MMU_FAULT_ARG;
    if (va >> f->va_bits) return r->fault = VGT_MMU_FAULT_VA_RANGE;
    int aperture = w->root_aperture;
    uint64_t table = w->root;
    for (uint8_t i = 0; i + 1 < f->nlevels; i++) {
        const vgt_mmu_level *l = &f->levels[i];
        uint8_t buf[16];
        r->level = i;
        uint64_t idx = bits(va, l->va_hi, l->va_lo);
        if (!read_entry(w, aperture, table + idx * l->entry_size, buf, l->entry_size, r)) return r->fault;
        uint64_t e = le64(buf);
        if (e & 1) {   /* IS_PTE: a huge page, where the format has one */
            if (!l->huge_pte) return r->pte = e, r->fault = VGT_MMU_FAULT_BAD_ENTRY;
            pte_decode(f->version, e, r, va, 1ull << l->va_lo);
            return r->fault;
        }
        if (l->entry_size == 8) {
            next_table t = pde_single(f->version, e);
            if (!t.present) return r->pte = e, r->fault = VGT_MMU_FAULT_NOT_PRESENT;
            aperture = t.aperture, table = t.pa;
            continue;
        }
        /* the dual PDE: the big-page table first, then the small one */
        const vgt_mmu_level *pt = &f->levels[i + 1];
        next_table big = pde_big(f->version, e), small = pde_small(f->version, le64(buf + 8));
        r->level = (uint8_t)(i + 1);
        if (big.present) {
            uint64_t bidx = bits(va, pt->va_hi, big_shift);
            if (!read_entry(w, big.aperture, big.pa + bidx * 8, buf, 8, r)) return r->fault;
            uint64_t be = le64(buf);
            if (pte_decode(f->version, be, r, va, 1ull << big_shift)) return r->big = 1, VGT_MMU_OK;
            if (r->fault == VGT_MMU_FAULT_SPARSE || !small.present) return r->fault;
        }
        if (!small.present) return r->pte = e, r->fault = VGT_MMU_FAULT_NOT_PRESENT;
        uint64_t sidx = bits(va, pt->va_hi, pt->va_lo);
        if (!read_entry(w, small.aperture, small.pa + sidx * 8, buf, 8, r)) return r->fault;
        r->big = 0;
        pte_decode(f->version, le64(buf), r, va, 1ull << pt->va_lo);
        return r->fault;
    }
    return r->fault = VGT_MMU_FAULT_BAD_ENTRY;   /* a format whose last directory is not dual: none */
}
