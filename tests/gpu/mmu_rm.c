/* mmu_rm.c: RM's page-table answers against the walker's format table (see mmu_rm.h). */
#include "mmu_rm.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void mismatch(mmu_rm_report *r, uint64_t va, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void mismatch(mmu_rm_report *r, uint64_t va, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->mismatches++;
    if (r->mismatch)
        r->mismatch(r->ctx, va, msg);
}

static int log2_exact(uint64_t v)
{
    if (!v || (v & (v - 1)))
        return -1;
    int s = 0;
    while (v >>= 1)
        s++;
    return s;
}

/* Big pages: 64 KiB, and 128 KiB on version 2 (vgt_mmu_walk.big_page_shift). */
static int is_big_shift(const vgt_mmu_format *f, int shift)
{
    return shift == 16 || (shift == 17 && f->version == 2);
}

int mmu_rm_leaf_level(const vgt_mmu_format *f, uint64_t page_size)
{
    int shift = log2_exact(page_size);
    if (!f || f->nlevels == 0 || shift < 0)
        return -1;
    const vgt_mmu_level *pt = &f->levels[f->nlevels - 1];
    if (shift == pt->va_lo || is_big_shift(f, shift))
        return f->nlevels - 1;
    for (int i = 0; i + 1 < f->nlevels; i++)
        if (f->levels[i].huge_pte && f->levels[i].va_lo == shift)
            return i;
    return -1;
}

/* The VA bits that index level i for a page_size page: a page table indexed for big pages starts at the
 * big page's bit (RM gives that table its own format level, bits 20:16). */
static int level_lo(const vgt_mmu_format *f, int i, uint64_t page_size)
{
    int shift = log2_exact(page_size);
    if (i == f->nlevels - 1 && is_big_shift(f, shift))
        return shift;
    return f->levels[i].va_lo;
}

void mmu_rm_pde_request(rm_pde_info *p, uint64_t va)
{
    memset(p, 0, sizeof *p);
    p->gpu_addr = va;
    p->vaspace = 0;
}

void mmu_rm_pte_request(rm_pte_info *p, uint64_t va)
{
    memset(p, 0, sizeof *p);
    p->gpu_addr = va;
    p->skip_vaspace_init = 1;
    p->vaspace = 0;
}

void mmu_rm_level_request(rm_page_level_info *p, uint32_t subdevice, uint64_t va, uint64_t page_size)
{
    memset(p, 0, sizeof *p);
    p->subdevice = subdevice;
    p->virt_address = va;
    p->page_size = page_size;
}

void mmu_rm_check_pde(const vgt_mmu_format *f, uint64_t va, const rm_pde_info *p, mmu_rm_report *r)
{
    int first = 1;
    for (unsigned b = 0; b < RM_DMA_INFO_BLOCKS; b++) {
        const rm_pde_block *k = &p->blocks[b];
        if (!k->page_size)
            continue;
        int i = mmu_rm_leaf_level(f, k->page_size);
        r->checks++;
        if (i < 0) {
            mismatch(r, va, "RM has a page table for %u KiB pages; the walker's format has no level for them",
                     k->page_size >> 10);
            continue;
        }
        const vgt_mmu_level *w = &f->levels[i];
        if (k->pte_entry_size != w->entry_size)
            mismatch(r, va, "%u KiB pages: RM's PTE is %u bytes, the walker's %s entry %u", k->page_size >> 10,
                     k->pte_entry_size, w->name, w->entry_size);
        /* RM: (NvU32)mmuFmtLevelVirtAddrMask(level) + 1, truncated to 32 bits as RM does. */
        uint32_t span = (uint32_t)((2ull << w->va_hi) - 1) + 1u;
        if (k->pde_va_space_size != span)
            mismatch(r, va, "%u KiB pages: one RM page table spans 0x%x bytes of VA, the walker's %s 0x%x",
                     k->page_size >> 10, k->pde_va_space_size, w->name, span);
        if (first) {
            /* RM fills these from the first block's level only. */
            first = 0;
            uint64_t base = va & ~((2ull << w->va_hi) - 1);
            if (p->pde_virt_addr != base)
                mismatch(r, va, "RM's page table starts at VA 0x%" PRIx64 ", the walker's %s at 0x%" PRIx64,
                         p->pde_virt_addr, w->name, base);
            if (i > 0 && p->pde_entry_size != f->levels[i - 1].entry_size)
                mismatch(r, va, "RM's PDE above the %s is %u bytes, the walker's %s entry %u", w->name,
                         p->pde_entry_size, f->levels[i - 1].name, f->levels[i - 1].entry_size);
        }
    }
    if (first) {
        r->checks++;
        mismatch(r, va, "RM lists no page table under a mapped VA");
    }
}

uint64_t mmu_rm_check_pte(const vgt_mmu_format *f, uint64_t va, int vidmem, const rm_pte_info *p, mmu_rm_report *r)
{
    uint64_t page = 0;
    uint32_t valid = 0, ap = 0;
    for (unsigned b = 0; b < RM_DMA_INFO_BLOCKS; b++) {
        const rm_pte_block *k = &p->blocks[b];
        if (!k->page_size)
            continue;
        int i = mmu_rm_leaf_level(f, k->page_size);
        r->checks++;
        if (i < 0)
            mismatch(r, va, "RM has a PTE for %" PRIu64 " KiB pages; the walker's format has no level for them",
                     k->page_size >> 10);
        else if (k->entry_size != f->levels[i].entry_size)
            mismatch(r, va, "%" PRIu64 " KiB pages: RM's PTE is %" PRIu64 " bytes, the walker's %s entry %u",
                     k->page_size >> 10, k->entry_size, f->levels[i].name, f->levels[i].entry_size);
        if (k->flags & RM_PTE_FLAG_VALID) {
            valid++;
            page = k->page_size;
            ap = (k->flags >> RM_PTE_FLAG_APERTURE_SHIFT) & RM_PTE_FLAG_APERTURE_MASK;
        }
    }
    r->checks++;
    if (valid != 1) {
        mismatch(r, va, "%u valid PTEs (one per page size RM knows), expected exactly one", valid);
        return 0;
    }
    if (vidmem ? ap != VGT_MMU_VIDMEM : ap != VGT_MMU_SYS_COHERENT && ap != VGT_MMU_SYS_NONCOHERENT)
        mismatch(r, va, "the PTE's aperture is %u for %s memory", ap, vidmem ? "video" : "system");
    return page;
}

void mmu_rm_check_levels(const vgt_mmu_format *f, uint64_t va, const rm_page_level_info *p, mmu_rm_report *r)
{
    int leaf = mmu_rm_leaf_level(f, p->page_size);
    r->checks++;
    if (leaf < 0) {
        mismatch(r, va, "RM was asked about %" PRIu64 " KiB pages; the walker's format has no level for them",
                 p->page_size >> 10);
        return;
    }
    if (p->num_levels != (uint32_t)leaf + 1)
        mismatch(r, va, "RM reports %u levels down to a %" PRIu64 " KiB page, the walker %d", p->num_levels,
                 p->page_size >> 10, leaf + 1);
    for (uint32_t i = 0; i < p->num_levels && i < RM_GMMU_FMT_MAX_LEVELS; i++) {
        const rm_mmu_fmt_level *l = &p->levels[i].level_fmt;
        r->checks++;
        if (i >= f->nlevels) {
            mismatch(r, va, "RM reports level %u, the walker's format has %u levels", i, f->nlevels);
            continue;
        }
        const vgt_mmu_level *w = &f->levels[i];
        int lo = level_lo(f, (int)i, p->page_size);
        if (l->va_bit_hi != w->va_hi || l->va_bit_lo != lo)
            mismatch(r, va, "level %u: RM indexes VA bits %u:%u, the walker's %s %u:%d", i, l->va_bit_hi,
                     l->va_bit_lo, w->name, w->va_hi, lo);
        if (l->entry_size != w->entry_size)
            mismatch(r, va, "level %u: RM's entry is %u bytes, the walker's %s entry %u", i, l->entry_size, w->name,
                     w->entry_size);
        /* The walker's index arithmetic, on its own bits. */
        uint64_t idx = (va >> lo) & ((2ull << (w->va_hi - lo)) - 1);
        if (p->levels[i].entry_index != idx)
            mismatch(r, va, "level %u: RM's entry index %u, the walker's %" PRIu64, i, p->levels[i].entry_index, idx);
    }
}
