/* test_mmu_rm.c: mmu_check's comparison of RM's page-table answers with the walker (tests/gpu/mmu_rm.c),
 * on answers built here the way RM builds them.
 *
 * RM's version-3 format, transcribed independently of the walker's table: PD4 56:56, PD3 55:47, PD2
 * 46:38, PD1 37:29 (8-byte entries; a 512 MiB PTE), PD0 28:21 (16-byte dual PDE; a 2 MiB PTE), page
 * table 20:12 for 4 KiB pages and 20:16 for 64 KiB ones (8-byte PTEs) (OGKM
 * src/nvidia/src/libraries/mmu/gmmu_fmt.c, mmu_fmt.c). GET_PDE_INFO's span is (NvU32)(level mask) + 1,
 * GET_PAGE_LEVEL_INFO's entry index (va >> lo) & mask (gpu_vaspace.c).
 * Covered: the leaf level per page size, the request packing and parameter offsets, agreeing answers for
 * every page size (no mismatch), and each kind of disagreement counted once. */
#include <stddef.h>
#include <string.h>

#include "mmu_rm.h"

#include "check.h"

static const vgt_mmu_format *fmt;
static int nmsg;
static char last[256];

static void note(void *ctx, uint64_t va, const char *msg)
{
    (void)ctx;
    (void)va;
    nmsg++;
    strncpy(last, msg, sizeof last - 1);
}

static mmu_rm_report fresh(void)
{
    nmsg = 0;
    last[0] = 0;
    return (mmu_rm_report){0, 0, note, NULL};
}

/* RM's level table: hi, lo, entry size (the PT as indexed for 4 KiB pages). */
static const struct { uint8_t hi, lo, size; } rm_v3[] = {{56, 56, 8}, {55, 47, 8}, {46, 38, 8}, {37, 29, 8},
                                                        {28, 21, 16}, {20, 12, 8}};

static void test_leaf_levels(void)
{
    CHECK_EQ_U64(mmu_rm_leaf_level(fmt, 4096), 5, "4 KiB: the page table");
    CHECK_EQ_U64(mmu_rm_leaf_level(fmt, 65536), 5, "64 KiB: the page table, big-page indexed");
    CHECK_EQ_U64(mmu_rm_leaf_level(fmt, 2u << 20), 4, "2 MiB: PD0");
    CHECK_EQ_U64(mmu_rm_leaf_level(fmt, 512u << 20), 3, "512 MiB: PD1");
    CHECK(mmu_rm_leaf_level(fmt, 8192) < 0, "8 KiB: no level");
    CHECK(mmu_rm_leaf_level(fmt, 1ull << 30) < 0, "1 GiB: no level");
    CHECK(mmu_rm_leaf_level(fmt, 0) < 0, "0: no level");
    CHECK(mmu_rm_leaf_level(fmt, 131072) < 0, "128 KiB big pages are version 2 only");
    CHECK_EQ_U64(mmu_rm_leaf_level(vgt_mmu_format_get(VGT_MMU_V2_TURING), 131072), 4, "v2: 128 KiB big pages");
}

static void test_requests(void)
{
    rm_pte_info pt;
    memset(&pt, 0xa5, sizeof pt);
    mmu_rm_pte_request(&pt, 0x200001000ull);
    CHECK_EQ_U64(pt.gpu_addr, 0x200001000ull, "PTE request VA");
    CHECK_EQ_U64(pt.skip_vaspace_init, 1, "PTE request skips VA-space initialisation");
    CHECK_EQ_U64(pt.vaspace, 0, "the device's default VA space");
    CHECK_EQ_U64(pt.subdevice_id, 0, "subdevice 0");
    CHECK_EQ_U64(pt.blocks[4].flags, 0, "blocks cleared");
    CHECK_EQ_U64(offsetof(rm_pte_info, vaspace), 0xb0, "hVASpace offset");
    CHECK_EQ_U64(sizeof(rm_pte_info), 0xb8, "GET_PTE_INFO params size");

    rm_pde_info pd;
    memset(&pd, 0xa5, sizeof pd);
    mmu_rm_pde_request(&pd, 0x200400000ull);
    CHECK_EQ_U64(pd.gpu_addr, 0x200400000ull, "PDE request VA");
    CHECK_EQ_U64(pd.vaspace, 0, "the device's default VA space");
    CHECK_EQ_U64(pd.blocks[0].page_size, 0, "blocks cleared");
    CHECK_EQ_U64(offsetof(rm_pde_info, pdb_addr), 0xc0, "pdbAddr offset");
    CHECK_EQ_U64(offsetof(rm_pde_info, vaspace), 0xc8, "hVASpace offset");
    CHECK_EQ_U64(sizeof(rm_pde_info), 0xd0, "GET_PDE_INFO params size");

    rm_page_level_info li;
    memset(&li, 0xa5, sizeof li);
    mmu_rm_level_request(&li, 0xcaf00001u, 0x201000000ull, 65536);
    CHECK_EQ_U64(li.subdevice, 0xcaf00001u, "hSubDevice");
    CHECK_EQ_U64(li.virt_address, 0x201000000ull, "VA");
    CHECK_EQ_U64(li.page_size, 65536, "page size");
    CHECK_EQ_U64(li.flags, 0, "no BAR1 flag");
    CHECK_EQ_U64(li.num_levels, 0, "cleared");
    CHECK_EQ_U64(offsetof(rm_page_level_info, levels), 0x28, "levels offset");
    CHECK_EQ_U64(offsetof(rm_page_level, entry_index), 0x68, "entryIndex offset");
    CHECK_EQ_U64(sizeof(rm_page_level_info), 0x2c8, "GET_PAGE_LEVEL_INFO params size");
}

static void pde_block(rm_pde_info *p, int b, uint32_t page, uint32_t pte_size, uint32_t span)
{
    p->blocks[b].page_size = page;
    p->blocks[b].pte_entry_size = pte_size;
    p->blocks[b].pde_va_space_size = span;
}

static void test_pde(void)
{
    uint64_t va = 0x200003000ull;
    rm_pde_info p;
    mmu_rm_pde_request(&p, va);
    pde_block(&p, 0, 4096, 8, 0x200000);
    pde_block(&p, 1, 65536, 8, 0x200000);
    pde_block(&p, 2, 2u << 20, 16, 0x20000000);
    pde_block(&p, 3, 512u << 20, 8, 0);   /* 2^38 - 1 truncated to 32 bits, + 1 */
    p.pde_virt_addr = 0x200000000ull;
    p.pde_entry_size = 16;
    mmu_rm_report r = fresh();
    mmu_rm_check_pde(fmt, va, &p, &r);
    CHECK_EQ_U64(r.mismatches, 0, "RM's answer for every page size agrees: %s", last);
    CHECK_EQ_U64(r.checks, 4, "one check per page table");

    rm_pde_info bad = p;
    bad.blocks[0].pte_entry_size = 16;
    r = fresh();
    mmu_rm_check_pde(fmt, va, &bad, &r);
    CHECK_EQ_U64(r.mismatches, 1, "PTE size");
    CHECK(strstr(last, "4 KiB pages: RM's PTE is 16 bytes") != NULL, "%s", last);

    bad = p;
    bad.blocks[1].pde_va_space_size = 0x100000;
    r = fresh();
    mmu_rm_check_pde(fmt, va, &bad, &r);
    CHECK_EQ_U64(r.mismatches, 1, "span");
    CHECK(strstr(last, "64 KiB pages") && strstr(last, "0x100000"), "%s", last);

    bad = p;
    bad.pde_entry_size = 8;
    bad.pde_virt_addr = va;
    r = fresh();
    mmu_rm_check_pde(fmt, va, &bad, &r);
    CHECK_EQ_U64(r.mismatches, 2, "the first table's base VA and the PDE size above it");

    bad = p;
    bad.blocks[2].page_size = 8192;
    r = fresh();
    mmu_rm_check_pde(fmt, va, &bad, &r);
    CHECK_EQ_U64(r.mismatches, 1, "a page size the format lacks");
    CHECK(strstr(last, "8 KiB") != NULL, "%s", last);

    mmu_rm_pde_request(&bad, va);
    r = fresh();
    mmu_rm_check_pde(fmt, va, &bad, &r);
    CHECK_EQ_U64(r.mismatches, 1, "no page table under a mapped VA");

    /* Only a 2 MiB table: its base is 512 MiB aligned and the level above is PD1 (8 bytes). */
    mmu_rm_pde_request(&bad, 0x210345000ull);
    pde_block(&bad, 2, 2u << 20, 16, 0x20000000);
    bad.pde_virt_addr = 0x200000000ull;
    bad.pde_entry_size = 8;
    r = fresh();
    mmu_rm_check_pde(fmt, 0x210345000ull, &bad, &r);
    CHECK_EQ_U64(r.mismatches, 0, "a 2 MiB table alone: %s", last);
}

static void test_pte(void)
{
    uint64_t va = 0x200200000ull;
    rm_pte_info p;
    mmu_rm_pte_request(&p, va);
    p.blocks[0].page_size = 4096;
    p.blocks[0].entry_size = 8;
    p.blocks[0].flags = RM_PTE_FLAG_VALID | (0u << RM_PTE_FLAG_APERTURE_SHIFT);
    p.blocks[1].page_size = 65536;
    p.blocks[1].entry_size = 8;
    mmu_rm_report r = fresh();
    CHECK_EQ_U64(mmu_rm_check_pte(fmt, va, 1, &p, &r), 4096, "the valid PTE's page size");
    CHECK_EQ_U64(r.mismatches, 0, "video memory PTE: %s", last);

    r = fresh();
    mmu_rm_check_pte(fmt, va, 0, &p, &r);
    CHECK_EQ_U64(r.mismatches, 1, "video aperture for system memory");
    CHECK(strstr(last, "aperture is 0 for system memory") != NULL, "%s", last);

    p.blocks[0].flags = RM_PTE_FLAG_VALID | (3u << RM_PTE_FLAG_APERTURE_SHIFT);
    r = fresh();
    CHECK_EQ_U64(mmu_rm_check_pte(fmt, va, 0, &p, &r), 4096, "system non-coherent");
    CHECK_EQ_U64(r.mismatches, 0, "system memory PTE: %s", last);

    p.blocks[1].flags = RM_PTE_FLAG_VALID;
    r = fresh();
    CHECK_EQ_U64(mmu_rm_check_pte(fmt, va, 0, &p, &r), 0, "two valid PTEs: no page size");
    CHECK_EQ_U64(r.mismatches, 1, "two valid PTEs");

    p.blocks[1].flags = 0;
    p.blocks[1].entry_size = 16;
    r = fresh();
    mmu_rm_check_pte(fmt, va, 0, &p, &r);
    CHECK_EQ_U64(r.mismatches, 1, "PTE size");
}

/* GET_PAGE_LEVEL_INFO as RM fills it for va and a page of 2^shift bytes. */
static void rm_levels(rm_page_level_info *p, uint64_t va, int shift)
{
    mmu_rm_level_request(p, 1, va, 1ull << shift);
    uint32_t n = 0;
    for (unsigned i = 0; i < 6; i++) {
        unsigned lo = rm_v3[i].lo;
        if (i == 5 && shift == 16)
            lo = 16;
        p->levels[i].level_fmt.va_bit_hi = rm_v3[i].hi;
        p->levels[i].level_fmt.va_bit_lo = (uint8_t)lo;
        p->levels[i].level_fmt.entry_size = rm_v3[i].size;
        p->levels[i].entry_index = (uint32_t)((va >> lo) & ((2ull << (rm_v3[i].hi - lo)) - 1));
        n++;
        if (lo == (unsigned)shift)
            break;
    }
    p->num_levels = n;
}

static void test_levels(void)
{
    static const int shifts[] = {12, 16, 21, 29};
    for (unsigned s = 0; s < 4; s++) {
        uint64_t va = 0x1234567000ull & ~((1ull << shifts[s]) - 1);
        rm_page_level_info p;
        rm_levels(&p, va + (1ull << shifts[s]) * 3, shifts[s]);
        mmu_rm_report r = fresh();
        mmu_rm_check_levels(fmt, p.virt_address, &p, &r);
        CHECK_EQ_U64(r.mismatches, 0, "page shift %d: %s", shifts[s], last);
        CHECK_EQ_U64(r.checks, p.num_levels + 1, "page shift %d: one check per level and the count", shifts[s]);
    }

    rm_page_level_info p;
    rm_levels(&p, 0x200345000ull, 12);
    p.levels[5].entry_index++;
    mmu_rm_report r = fresh();
    mmu_rm_check_levels(fmt, p.virt_address, &p, &r);
    CHECK_EQ_U64(r.mismatches, 1, "an entry index");
    CHECK(strstr(last, "level 5: RM's entry index") != NULL, "%s", last);

    rm_levels(&p, 0x200345000ull, 12);
    p.levels[4].level_fmt.entry_size = 8;
    p.levels[2].level_fmt.va_bit_lo = 37;
    r = fresh();
    mmu_rm_check_levels(fmt, p.virt_address, &p, &r);
    CHECK(r.mismatches >= 2, "VA bits and entry size: %d", r.mismatches);

    /* A VA space whose lower levels RM does not hold (UVM's): RM stops at the root. */
    rm_levels(&p, 0x200345000ull, 12);
    p.num_levels = 1;
    r = fresh();
    mmu_rm_check_levels(fmt, p.virt_address, &p, &r);
    CHECK_EQ_U64(r.mismatches, 1, "one level where the walker has six");
    CHECK(strstr(last, "RM reports 1 levels") != NULL, "%s", last);

    mmu_rm_level_request(&p, 1, 0x200000000ull, 8192);
    r = fresh();
    mmu_rm_check_levels(fmt, p.virt_address, &p, &r);
    CHECK_EQ_U64(r.mismatches, 1, "a page size the format lacks");
}

int main(void)
{
    fmt = vgt_mmu_format_get(VGT_MMU_V3_HOPPER);
    CHECK(fmt != NULL, "the Hopper format");
    if (!fmt)
        return check_finish("test_mmu_rm");
    test_leaf_levels();
    test_requests();
    test_pde();
    test_pte();
    test_levels();
    return check_finish("test_mmu_rm");
}
