/* test_mmu_walk.c: the GPU page-table walker (analyze/src/mmu_walk.c) on page tables built by hand.
 *
 * Every entry below is assembled here from the field positions of the public manuals, independently of
 * the walker's decoders: version 2 from open-gpu-doc manuals/turing/tu104/dev_mmu.ref.txt (NV_MMU_VER2_*),
 * version 3 from open-gpu-kernel-modules hopper/gh100/dev_mmu.h (NV_MMU_VER3_*), levels from
 * nvidia-uvm's uvm_turing_mmu.c / uvm_ampere_mmu.c / uvm_hopper_mmu.c.
 * Covered: 4 KiB pages through every level, 64 KiB big pages, 2 MiB and 512 MiB PTEs, tables in video
 * and system memory, the aperture, volatile (VOL / PCF uncached), read-only and privilege bits, big
 * table before small, version-3 sparse big PTEs hiding the small table, invalid entries, a VA over the
 * format's width, a table the callback cannot read, and format lookup by chip and architecture. */
#include <stdlib.h>
#include <string.h>

#include "vgt/mmu.h"

#include "check.h"

/* Physical memory: 4 KiB pages created on first write, per aperture. */
#define MAXPAGES 256
static struct page { int ap; uint64_t base; uint8_t b[4096]; } pages[MAXPAGES];
static int npages;
static uint64_t unreadable = ~0ull;

static struct page *page_at(int ap, uint64_t pa, int create)
{
    for (int i = 0; i < npages; i++)
        if (pages[i].ap == ap && pages[i].base == (pa & ~4095ull)) return &pages[i];
    if (!create || npages == MAXPAGES) return NULL;
    struct page *p = &pages[npages++];
    p->ap = ap, p->base = pa & ~4095ull;
    memset(p->b, 0, sizeof p->b);
    return p;
}

static void put64(int ap, uint64_t pa, uint64_t v)
{
    struct page *p = page_at(ap, pa, 1);
    for (int i = 0; i < 8; i++) p->b[(pa & 4095) + i] = (uint8_t)(v >> (8 * i));
}

static int phys_read(void *ctx, int ap, uint64_t pa, void *dst, uint32_t len)
{
    (void)ctx;
    if ((pa & ~4095ull) == unreadable) return -1;
    struct page *p = page_at(ap, pa, 0);
    if (p) memcpy(dst, p->b + (pa & 4095), len);
    else memset(dst, 0, len);   /* untouched memory reads as zero: invalid entries */
    return 0;
}

static void reset(void) { npages = 0; unreadable = ~0ull; }

/* ---- entries by hand (field positions from the manuals) ---- */
enum { PDE_VID = 1, PDE_SYS = 2, PDE_SYS_NC = 3 };
enum { PTE_VID = 0, PTE_PEER = 1, PTE_SYS = 2, PTE_SYS_NC = 3 };

/* v2 PDE: APERTURE 2:1, VOL 3:3, ADDRESS_SYS 53:8 (ADDRESS_VID 32:8), address >> 12 */
static uint64_t v2_pde(int ap, uint64_t pa) { return (uint64_t)ap << 1 | (pa >> 12) << 8; }
/* v2 dual PDE big half: APERTURE_BIG 2:1, ADDRESS_BIG 53:4, address >> 8 */
static uint64_t v2_big(int ap, uint64_t pa) { return (uint64_t)ap << 1 | (pa >> 8) << 4; }
/* v2 dual PDE small half (bits 127:64 as their own u64): APERTURE_SMALL 66:65, ADDRESS_SMALL 117:72 */
static uint64_t v2_small(int ap, uint64_t pa) { return (uint64_t)ap << 1 | (pa >> 12) << 8; }
/* v2 PTE: VALID 0, APERTURE 2:1, VOL 3, PRIVILEGE 5, READ_ONLY 6, ADDRESS 53:8 (>> 12), KIND 63:56 */
static uint64_t v2_pte(int ap, uint64_t pa, int vol, int ro, uint8_t kind)
{
    return 1 | (uint64_t)ap << 1 | (uint64_t)vol << 3 | (uint64_t)ro << 6 | (pa >> 12) << 8 | (uint64_t)kind << 56;
}
/* v3 PDE: IS_PTE 0 (0), APERTURE 2:1, PCF 5:3, ADDRESS 51:12 */
static uint64_t v3_pde(int ap, uint64_t pa) { return (uint64_t)ap << 1 | (pa & 0x000ffffffffff000ull); }
/* v3 dual PDE: big APERTURE 2:1, ADDRESS_BIG 51:8 (>> 8); small APERTURE 66:65, ADDRESS_SMALL 115:76 */
static uint64_t v3_big(int ap, uint64_t pa) { return (uint64_t)ap << 1 | ((pa >> 8) << 8 & 0x000fffffffffff00ull); }
static uint64_t v3_small(int ap, uint64_t pa) { return (uint64_t)ap << 1 | (pa & 0x000ffffffffff000ull); }
/* v3 PTE: VALID 0, APERTURE 2:1, PCF 7:3, KIND 11:8, ADDRESS 51:12 (VID 39:12) */
static uint64_t v3_pte(int ap, uint64_t pa, unsigned pcf, unsigned kind)
{
    return 1 | (uint64_t)ap << 1 | (uint64_t)pcf << 3 | (uint64_t)kind << 8 | (pa & 0x000ffffffffff000ull);
}

static vgt_mmu_walk walker(int fmt, uint64_t root, int ap)
{
    vgt_mmu_walk w = {vgt_mmu_format_get(fmt), root, ap, 0, phys_read, NULL};
    return w;
}

static uint64_t idx(uint64_t va, int hi, int lo) { return (va >> lo) & ((2ull << (hi - lo)) - 1); }

static void test_v2(void)
{
    reset();
    /* VA with bits in every index: PD3 48:47 = 1, PD2 = 0x155, PD1 = 0x0aa, PD0 = 0x12, PT = 0x1f3 */
    uint64_t va = 1ull << 47 | 0x155ull << 38 | 0xaaull << 29 | 0x12ull << 21 | 0x1f3ull << 12 | 0x678;
    uint64_t pd3 = 0x10000, pd2 = 0x11000, pd1 = 0x12000, pd0 = 0x13000, pt = 0x14000;
    put64(PDE_SYS, 0, 0);
    put64(2, pd3 + 8 * idx(va, 48, 47), v2_pde(PDE_SYS, pd2));
    put64(2, pd2 + 8 * idx(va, 46, 38), v2_pde(PDE_SYS, pd1));
    put64(2, pd1 + 8 * idx(va, 37, 29), v2_pde(PDE_SYS, pd0));
    put64(2, pd0 + 16 * idx(va, 28, 21) + 8, v2_small(PDE_SYS, pt));       /* small half only */
    put64(2, pt + 8 * idx(va, 20, 12), v2_pte(PTE_VID, 0x1456789000ull, 1, 1, 6));
    vgt_mmu_walk w = walker(VGT_MMU_V2_TURING, pd3, VGT_MMU_SYS_COHERENT);
    vgt_mmu_result r;
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_OK, "v2 4K: %s", vgt_mmu_fault_name(r.fault));
    /* video memory: ADDRESS_VID 32:8 holds address bits 36:12 (128 GiB of video memory) */
    CHECK_EQ_U64(r.pa, 0x1456789678ull, "v2 4K pa");
    CHECK_EQ_U64(r.aperture, VGT_MMU_VIDMEM, "v2 4K aperture");
    CHECK_EQ_U64(r.page_size, 4096, "v2 4K size");
    CHECK(r.is_volatile && r.read_only && !r.privileged && !r.big, "v2 4K bits: VOL, RO");
    CHECK_EQ_U64(r.kind, 6, "v2 kind");
    CHECK_EQ_U64(r.level, 4, "v2 PTE level");
    CHECK_EQ_U64(r.entry_pa, pt + 8 * 0x1f3, "v2 PTE address");

    /* the next 4K page: no PTE */
    CHECK_EQ_U64(vgt_mmu_translate(&w, va + 0x1000, &r), VGT_MMU_FAULT_NOT_PRESENT, "v2 invalid PTE");
    /* a PD2 slot with no table */
    CHECK_EQ_U64(vgt_mmu_translate(&w, va ^ (1ull << 38), &r), VGT_MMU_FAULT_NOT_PRESENT, "v2 missing PD1");
    CHECK_EQ_U64(r.level, 1, "the walk stopped at PD2");
    CHECK_EQ_U64(vgt_mmu_translate(&w, 1ull << 49, &r), VGT_MMU_FAULT_VA_RANGE, "v2 VA over 49 bits");

    /* 64K big page: a big table in video memory next to the small table, at PD0 index 0x13 */
    uint64_t va64 = (va & ~((1ull << 21) - 1)) + (1ull << 21) + 0x5abcd;   /* PD0 0x13, big index 5 */
    uint64_t bigpt = 0x200;   /* 256-byte aligned: ADDRESS_BIG is shifted by 8 */
    put64(2, pd0 + 16 * 0x13, v2_big(PDE_VID, bigpt));
    put64(2, pd0 + 16 * 0x13 + 8, v2_small(PDE_SYS, pt + 0x1000 * 0));
    put64(VGT_MMU_VIDMEM, bigpt + 8 * 5, v2_pte(PTE_SYS, 0x7777770000ull, 0, 0, 0));
    CHECK_EQ_U64(vgt_mmu_translate(&w, va64, &r), VGT_MMU_OK, "v2 64K: %s", vgt_mmu_fault_name(r.fault));
    CHECK_EQ_U64(r.pa, 0x7777770000ull + 0xabcd, "v2 64K pa");
    CHECK(r.big && r.page_size == 65536 && r.aperture == VGT_MMU_SYS_COHERENT && !r.is_volatile, "v2 64K attrs");
    /* big PTE invalid: the small table answers (its PTE at index 0x5a of the same PT page is empty) */
    put64(2, pt + 8 * idx(va64, 20, 12), v2_pte(PTE_SYS_NC, 0x1000, 0, 0, 0));
    put64(VGT_MMU_VIDMEM, bigpt + 8 * 5, 0);
    CHECK_EQ_U64(vgt_mmu_translate(&w, va64, &r), VGT_MMU_OK, "v2 small behind an invalid big PTE");
    CHECK(!r.big && r.page_size == 4096 && r.aperture == VGT_MMU_SYS_NONCOHERENT && r.pa == 0x1bcd, "v2 small attrs");

    /* 128 KiB big pages: the big table is indexed by VA 20:17 */
    put64(VGT_MMU_VIDMEM, bigpt + 8 * 2, v2_pte(PTE_VID, 0x40000, 0, 0, 0));
    w.big_page_shift = 17;
    CHECK_EQ_U64(vgt_mmu_translate(&w, va64, &r), VGT_MMU_OK, "v2 128K");
    CHECK(r.big && r.page_size == 131072 && r.pa == 0x40000 + (va64 & 0x1ffff), "v2 128K pa");
    w.big_page_shift = 0;

    /* 2 MiB PTE at PD0 (IS_PTE), in the low half */
    uint64_t va2m = (va & ~((1ull << 21) - 1)) + (2ull << 21) + 0x123456;
    put64(2, pd0 + 16 * 0x14, v2_pte(PTE_SYS, 0x40000000ull, 0, 0, 0));
    CHECK_EQ_U64(vgt_mmu_translate(&w, va2m, &r), VGT_MMU_OK, "v2 2M");
    CHECK(r.page_size == (2u << 20) && r.pa == 0x40123456ull && r.level == 3, "v2 2M pa and level");

    /* a PTE at PD1: Turing has none (BAD_ENTRY), Ampere maps 512 MiB */
    uint64_t va512 = va ^ (1ull << 29);
    put64(2, pd1 + 8 * idx(va512, 37, 29), v2_pte(PTE_VID, 0x60000000ull, 0, 0, 0));
    CHECK_EQ_U64(vgt_mmu_translate(&w, va512, &r), VGT_MMU_FAULT_BAD_ENTRY, "Turing: no 512M PTE");
    w.fmt = vgt_mmu_format_get(VGT_MMU_V2_AMPERE);
    CHECK_EQ_U64(vgt_mmu_translate(&w, va512, &r), VGT_MMU_OK, "Ampere: 512M PTE");
    CHECK(r.page_size == (512u << 20) && r.pa == 0x60000000ull + (va512 & ((512u << 20) - 1)), "Ampere 512M pa");

    /* a table the callback cannot read */
    unreadable = pt;
    w.fmt = vgt_mmu_format_get(VGT_MMU_V2_TURING);
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_FAULT_READ, "unreadable PT");
    CHECK_EQ_U64(r.entry_pa, pt + 8 * 0x1f3, "names the entry it could not read");
}

static void test_v3(void)
{
    reset();
    /* 57-bit VA: PD4 56 = 1, PD3 55:47 = 0x1ab, PD2 = 0x0cd, PD1 = 0x0ef, PD0 = 0x21, PT = 0x0c3 */
    uint64_t va = 1ull << 56 | 0x1abull << 47 | 0xcdull << 38 | 0xefull << 29 | 0x21ull << 21 | 0xc3ull << 12 | 0x9a;
    uint64_t pd4 = 0x2000000000ull, pd3 = 0x2000001000ull, pd2 = 0x2000002000ull, pd1 = 0x2000003000ull,
             pd0 = 0x2000004000ull, pt = 0x3000;
    put64(PDE_SYS, pd4 + 8 * 1, v3_pde(PDE_SYS, pd3));
    put64(2, pd3 + 8 * 0x1ab, v3_pde(PDE_SYS, pd2));
    put64(2, pd2 + 8 * 0xcd, v3_pde(PDE_SYS, pd1));
    put64(2, pd1 + 8 * 0xef, v3_pde(PDE_SYS, pd0));
    put64(2, pd0 + 16 * 0x21 + 8, v3_small(PDE_VID, pt));
    /* PCF 0x15 = REGULAR_RO_ATOMIC_UNCACHED_ACD: uncached (volatile), read-only, access counting off */
    put64(VGT_MMU_VIDMEM, pt + 8 * 0xc3, v3_pte(PTE_SYS, 0xbcdef12345000ull, 0x15, 6));
    vgt_mmu_walk w = walker(VGT_MMU_V3_HOPPER, pd4, VGT_MMU_SYS_COHERENT);
    vgt_mmu_result r;
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_OK, "v3 4K: %s", vgt_mmu_fault_name(r.fault));
    CHECK_EQ_U64(r.pa, 0xbcdef1234509aull, "v3 4K pa (sysmem address 51:12)");
    CHECK(r.aperture == VGT_MMU_SYS_COHERENT && r.is_volatile && r.read_only && !r.privileged && !r.atomic_disable,
          "v3 PCF bits");
    CHECK_EQ_U64(r.kind, 6, "v3 kind 11:8");
    CHECK_EQ_U64(r.level, 5, "v3 PT is the sixth level");
    CHECK_EQ_U64(vgt_mmu_translate(&w, va & ~(1ull << 56), &r), VGT_MMU_FAULT_NOT_PRESENT, "v3 other PD4 half");
    CHECK_EQ_U64(r.level, 0, "stopped at PD4");
    CHECK_EQ_U64(vgt_mmu_translate(&w, 1ull << 57, &r), VGT_MMU_FAULT_VA_RANGE, "v3 VA over 57 bits");

    /* video memory PTE: ADDRESS_VID 39:12; cached, privileged (PCF 2) */
    put64(VGT_MMU_VIDMEM, pt + 8 * 0xc4, v3_pte(PTE_VID, 0xfedcba000ull, 2, 0));
    CHECK_EQ_U64(vgt_mmu_translate(&w, va + 0x1000, &r), VGT_MMU_OK, "v3 vidmem");
    CHECK(r.pa == 0xfedcba09aull && r.aperture == VGT_MMU_VIDMEM && !r.is_volatile && r.privileged, "v3 vidmem attrs");

    /* 64K big page (VA 20:16 = 0x0c) in the big table, which comes first */
    uint64_t bigpt = 0x5100;
    put64(2, pd0 + 16 * 0x21, v3_big(PDE_SYS, bigpt));
    put64(2, bigpt + 8 * 0x0c, v3_pte(PTE_VID, 0x120000ull, 8, 0));   /* RW, no atomics, cached */
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_OK, "v3 64K");
    CHECK(r.big && r.page_size == 65536 && r.pa == 0x120000ull + (va & 0xffff) && r.atomic_disable, "v3 64K attrs");
    /* invalid big PTE with PCF 0 (INVALID): the small table answers */
    put64(2, bigpt + 8 * 0x0c, 0);
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_OK, "v3 small behind an invalid big PTE");
    CHECK(!r.big && r.pa == 0xbcdef1234509aull, "v3 small answered");
    /* PCF NO_VALID_4KB_PAGE (3) and SPARSE (1) on the invalid big PTE hide the small table */
    put64(2, bigpt + 8 * 0x0c, 3u << 3);
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_FAULT_SPARSE, "v3 NO_VALID_4KB_PAGE");
    put64(2, bigpt + 8 * 0x0c, 1u << 3);
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_FAULT_SPARSE, "v3 SPARSE");

    /* 2 MiB PTE at PD0 and 512 MiB PTE at PD1 */
    put64(2, pd0 + 16 * 0x22, v3_pte(PTE_VID, 0x80000000ull, 1, 0));
    CHECK_EQ_U64(vgt_mmu_translate(&w, va + (1ull << 21), &r), VGT_MMU_OK, "v3 2M");
    CHECK(r.page_size == (2u << 20) && r.pa == 0x80000000ull + ((va + (1ull << 21)) & 0x1fffff) && r.is_volatile,
          "v3 2M attrs");
    uint64_t va512 = va + (1ull << 29);
    put64(2, pd1 + 8 * 0xf0, v3_pte(PTE_SYS_NC, 0x1e0000000ull, 0, 0));
    CHECK_EQ_U64(vgt_mmu_translate(&w, va512, &r), VGT_MMU_OK, "v3 512M");
    CHECK(r.page_size == (512u << 20) && r.pa == 0x1e0000000ull + (va512 & ((512u << 20) - 1)) &&
          r.aperture == VGT_MMU_SYS_NONCOHERENT && r.level == 3, "v3 512M attrs");
    /* PTE at PD2: none in this format */
    put64(2, pd2 + 8 * 0xce, v3_pte(PTE_VID, 0, 0, 0));
    CHECK_EQ_U64(vgt_mmu_translate(&w, va + (1ull << 38), &r), VGT_MMU_FAULT_BAD_ENTRY, "v3 PTE at PD2");
    /* 128K big pages exist in version 2 only */
    w.big_page_shift = 17;
    CHECK_EQ_U64(vgt_mmu_translate(&w, va, &r), VGT_MMU_FAULT_ARG, "v3 has no 128K big pages");
}

static void test_formats(void)
{
    CHECK(vgt_mmu_format_for("TU104") == vgt_mmu_format_get(VGT_MMU_V2_TURING), "TU104");
    CHECK(vgt_mmu_format_for("turing") == vgt_mmu_format_get(VGT_MMU_V2_TURING), "turing");
    CHECK(vgt_mmu_format_for("GA100") == vgt_mmu_format_get(VGT_MMU_V2_AMPERE), "GA100");
    CHECK(vgt_mmu_format_for("GH100") == vgt_mmu_format_get(VGT_MMU_V3_HOPPER), "GH100");
    CHECK(vgt_mmu_format_for("hopper") == vgt_mmu_format_get(VGT_MMU_V3_HOPPER), "hopper");
    CHECK(!vgt_mmu_format_for("kepler") && !vgt_mmu_format_for("GK110") && !vgt_mmu_format_for("tux"), "unknown");
    const vgt_mmu_format *h = vgt_mmu_format_get(VGT_MMU_V3_HOPPER);
    CHECK(h->va_bits == 57 && h->nlevels == 6, "Hopper: 57-bit VA, five directory levels and the PT");
    const vgt_mmu_format *t = vgt_mmu_format_get(VGT_MMU_V2_TURING);
    CHECK(t->va_bits == 49 && t->nlevels == 5, "Turing: 49-bit VA, four directory levels and the PT");
}

int main(void)
{
    test_v2();
    test_v3();
    test_formats();
    return check_finish("test_mmu_walk");
}
