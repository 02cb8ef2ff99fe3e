/* mmu_check.c: the page-table walker's facts (analyze/include/vgt/mmu.h) against what RM reports for our
 * own VA space on the GPU. Run on the H200 (CI builds it but has no GPU; it exits 2 there).
 *
 *   mmu_check [TRACE]    every GPU_MAP of TRACE (sysmem or vidmem as its MEM_ALLOC says) is allocated at
 *                        its captured VA, as a replay does; without TRACE a built-in set (4 KiB to 6 MiB,
 *                        system and video memory) is used
 *
 * For each mapping, at its first and last page and at every 2 MiB inside (at most 64 VAs), it asks RM:
 *  - NV90F1_CTRL_CMD_VASPACE_GET_PAGE_LEVEL_INFO (0x90f10102, on the FERMI_VASPACE_A object): per level
 *    the level's format (VA bits hi:lo, entry size), the physical address and aperture of the level
 *    instance and the entry index of the VA. The walker's format table must give the same levels, VA bits
 *    and entry sizes, and its index arithmetic the same entry indices.
 *  - NV0080_CTRL_CMD_DMA_GET_PTE_INFO (0x801801, on the device): per page size a PTE block (page size,
 *    entry size, kind, flags with VALID 0:0 and APERTURE 6:3). Exactly one valid block is expected; its
 *    aperture must be the allocation's (video memory for vidmem, a system aperture for sysmem).
 * Reading the page tables themselves (to run the walker end to end over RM's tables) needs a CPU mapping
 * of arbitrary physical video and system memory, which an unprivileged client does not get: the table
 * contents are not compared here (the physical addresses RM returns are printed for that later step).
 *
 * Parameter layouts (open-gpu-kernel-modules, 580 series): ctrl/ctrl90f1.h
 * NV90F1_CTRL_VASPACE_GET_PAGE_LEVEL_INFO_PARAMS { hSubDevice, subDeviceId, virtAddress, pageSize, flags,
 * numLevels, levels[GMMU_FMT_MAX_LEVELS = 6] } with NV_CTRL_VASPACE_PAGE_LEVEL { pFmt, levelFmt,
 * sublevelFmt[MMU_FMT_MAX_SUB_LEVELS = 2], physAddress, aperture, size, entryIndex } and mmu_fmt_types.h
 * MMU_FMT_LEVEL { u8 virtAddrBitLo, virtAddrBitHi, entrySize, bPageTable, numSubLevels; u32
 * pageLevelIdTag; pointer subLevels }; ctrl/ctrl0080/ctrl0080dma.h NV0080_CTRL_DMA_GET_PTE_INFO_PARAMS
 * { gpuAddr, subDeviceId, skipVASpaceInit, pteBlocks[5] { pageSize, pteEntrySize, comptagLine, kind,
 * pteFlags }, hVASpace }. Older drivers (515) lack flags, pageLevelIdTag and entryIndex: the sizes below
 * are checked against what RM accepts (a wrong size is refused with NV_ERR_INVALID_PARAM_STRUCT). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_internal.h"
#include "vgt/mmu.h"
#include "vgt/trace.h"

#define CMD_GET_PAGE_LEVEL_INFO 0x90f10102u
#define CMD_GET_PTE_INFO 0x801801u

typedef struct {
    uint8_t va_lo, va_hi, entry_size, is_page_table, nsub, pad[3];
    uint32_t level_id_tag, pad2;
    uint64_t sublevels;
} rm_fmt_level;

typedef struct {
    uint64_t fmt;
    rm_fmt_level level, sublevel[2];
    uint64_t phys;
    uint32_t aperture, pad;
    uint64_t size;
    uint32_t entry_index, pad2;
} rm_page_level;

typedef struct {
    uint32_t subdevice, subdevice_id;
    uint64_t va, page_size, flags;
    uint32_t nlevels, pad;
    rm_page_level levels[6];
} rm_page_level_info;

typedef struct {
    uint64_t page_size, entry_size;
    uint32_t comptag_line, kind, flags, pad;
} rm_pte_block;

typedef struct {
    uint64_t va;
    uint32_t subdevice_id;
    uint8_t skip_init, pad[3];
    rm_pte_block blocks[5];
    uint32_t vaspace, pad2;
} rm_pte_info;

_Static_assert(sizeof(rm_fmt_level) == 24, "MMU_FMT_LEVEL: 24 bytes on x86-64");
_Static_assert(sizeof(rm_page_level) == 112, "NV_CTRL_VASPACE_PAGE_LEVEL");
_Static_assert(sizeof(rm_page_level_info) == 40 + 6 * 112, "GET_PAGE_LEVEL_INFO params");
_Static_assert(sizeof(rm_pte_info) == 16 + 5 * 32 + 8, "GET_PTE_INFO params");

struct mapping { int vid; uint64_t va, size; };

static int failures, checks;

static void fail(const char *fmt, uint64_t va, long a, long b)
{
    failures++;
    printf("  MISMATCH va 0x%" PRIx64 ": ", va);
    printf(fmt, a, b);
    printf("\n");
}

static void check_va(vgt_gpu *g, const vgt_mmu_format *f, const struct mapping *m, uint64_t va)
{
    vgt_error err;
    rm_pte_info pi;
    memset(&pi, 0, sizeof pi);
    pi.va = va;
    pi.vaspace = g->vaspace;
    if (rm_control(g, g->device, CMD_GET_PTE_INFO, &pi, sizeof pi, "NV0080_CTRL_CMD_DMA_GET_PTE_INFO", &err) != VGT_OK) {
        printf("  va 0x%" PRIx64 ": %s\n", va, err.msg);
        failures++;
        return;
    }
    uint64_t page = 0;
    uint32_t ap = 0, valid = 0;
    for (int i = 0; i < 5; i++)
        if (pi.blocks[i].page_size && (pi.blocks[i].flags & 1)) {
            valid++;
            page = pi.blocks[i].page_size;
            ap = (pi.blocks[i].flags >> 3) & 0xf;
        }
    checks++;
    if (valid != 1) fail("%ld valid PTE blocks, expected %ld", va, valid, 1);
    if (m->vid ? ap != 0 : ap != 2 && ap != 3) fail("PTE aperture %ld for a %s allocation", va, ap, m->vid);

    rm_page_level_info li;
    memset(&li, 0, sizeof li);
    li.subdevice = g->subdevice;
    li.va = va;
    li.page_size = page ? page : 4096;
    if (rm_control(g, g->vaspace, CMD_GET_PAGE_LEVEL_INFO, &li, sizeof li, "NV90F1_CTRL_CMD_VASPACE_GET_PAGE_LEVEL_INFO",
                   &err) != VGT_OK) {
        printf("  va 0x%" PRIx64 ": %s\n", va, err.msg);
        failures++;
        return;
    }
    printf("  va 0x%" PRIx64 " page %" PRIu64 " K, %u levels:", va, li.page_size >> 10, li.nlevels);
    for (uint32_t i = 0; i < li.nlevels && i < 6; i++) {
        const rm_page_level *l = &li.levels[i];
        printf(" [%u:%u x%u @%u:0x%" PRIx64 " #%u]", l->level.va_hi, l->level.va_lo, l->level.entry_size, l->aperture,
               l->phys, l->entry_index);
        /* the walker's level i; RM's leaf for a big page indexes 20:16 where our table lists the 4K PT */
        if (i >= f->nlevels) { fail("RM reports level %ld, the format has %ld", va, i, f->nlevels); continue; }
        const vgt_mmu_level *w = &f->levels[i];
        uint32_t lo = i + 1 == f->nlevels && li.page_size > 4096 && li.page_size < (1u << 21) ? 16 : w->va_lo;
        checks++;
        if (l->level.va_hi != w->va_hi) fail("VA bit hi %ld, walker %ld", va, l->level.va_hi, w->va_hi);
        if (l->level.va_lo != lo && !(l->level.va_lo > lo && w->huge_pte)) fail("VA bit lo %ld, walker %ld", va, l->level.va_lo, lo);
        if (l->level.entry_size != w->entry_size) fail("entry size %ld, walker %ld", va, l->level.entry_size, w->entry_size);
        uint64_t idx = (va >> l->level.va_lo) & ((2ull << (l->level.va_hi - l->level.va_lo)) - 1);
        if (l->entry_index != idx) fail("entry index %ld, walker's arithmetic %ld", va, l->entry_index, (long)idx);
    }
    printf("\n");
}

static int load_trace(const char *path, struct mapping **out, int *n)
{
    vgt_reader *r;
    vgt_error err;
    vgt_record rec;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) return fprintf(stderr, "%s\n", err.msg), -1;
    uint32_t vid_handles[4096], nvid = 0;
    *n = 0;
    *out = NULL;
    while (vgt_reader_next(r, &rec, &err) == VGT_OK) {
        if (rec.type == VGT_REC_MEM_ALLOC) {
            vgt_rec_mem_alloc a;
            if (vgt_decode_mem_alloc(&rec, &a, &err) == VGT_OK && a.aperture == VGT_APERTURE_VIDMEM && nvid < 4096)
                vid_handles[nvid++] = a.handle;
        } else if (rec.type == VGT_REC_GPU_MAP) {
            vgt_rec_gpu_map m;
            if (vgt_decode_gpu_map(&rec, &m, &err) != VGT_OK || m.status) continue;
            int vid = 0;
            for (uint32_t i = 0; i < nvid; i++) vid |= vid_handles[i] == m.memory;
            *out = realloc(*out, sizeof **out * (*n + 1));
            (*out)[(*n)++] = (struct mapping){vid, m.gpu_va & ~0xfffull, (m.length + (m.gpu_va & 0xfff) + 0xfff) & ~0xfffull};
        }
    }
    vgt_reader_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    static struct mapping builtin[] = {{0, 0x200000000ull, 4096}, {1, 0x200200000ull, 65536}, {1, 0x200400000ull, 2u << 20},
                                       {0, 0x200800000ull, 6u << 20}, {1, 0x201000000ull, 6u << 20}};
    struct mapping *maps = builtin;
    int nmaps = sizeof builtin / sizeof builtin[0];
    if (argc > 1 && load_trace(argv[1], &maps, &nmaps)) return 2;
    vgt_gpu *g;
    vgt_error err;
    vgt_gpu_options o = {0};
    if (vgt_gpu_open(&o, &g, &err) != VGT_OK) return fprintf(stderr, "mmu_check: %s\n", err.msg), 2;
    const vgt_mmu_format *f = vgt_mmu_format_get(VGT_MMU_V3_HOPPER);
    printf("mmu_check: %d mappings, walker format: %s\n", nmaps, f->name);
    for (int i = 0; i < nmaps; i++) {
        vgt_gpu_mem *mem;
        if (vgt_gpu_mem_find(g, maps[i].va, maps[i].size)) continue;   /* overlaps one already checked */
        if (vgt_gpu_mem_alloc(g, maps[i].vid ? VGT_GPU_VIDMEM : VGT_GPU_SYSMEM, maps[i].va, maps[i].size, &mem, &err) != VGT_OK) {
            printf("mapping %d (0x%" PRIx64 ", %" PRIu64 " bytes): not allocated: %s\n", i, maps[i].va, maps[i].size, err.msg);
            continue;
        }
        printf("mapping %d: %s 0x%" PRIx64 " + 0x%" PRIx64 "\n", i, maps[i].vid ? "vidmem" : "sysmem", maps[i].va, maps[i].size);
        int samples = 0;
        for (uint64_t va = maps[i].va; va < maps[i].va + maps[i].size && samples < 63; va = (va + (2u << 20)) & ~((2ull << 20) - 1), samples++)
            check_va(g, f, &maps[i], va);
        check_va(g, f, &maps[i], maps[i].va + maps[i].size - 4096);
    }
    vgt_gpu_close(g);
    printf("mmu_check: %d checks, %d mismatches\n", checks, failures);
    return failures ? 1 : 0;
}
