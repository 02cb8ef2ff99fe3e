/* mmu_rm.h: what RM's page-table controls answer for a VA, compared with the walker's format table
 * (vgt/mmu.h). Pure: mmu_check (tests/gpu/mmu_check.c) sends the requests these functions fill and
 * hands the answers back; tests/unit/test_mmu_rm.c feeds them answers built as RM builds them.
 *
 * The controls and their parameter blocks are in trace-format/facts/rm_abi.txt:
 *  - NV0080_CTRL_CMD_DMA_GET_PDE_INFO (device): per page size with a page table under the VA, the
 *    table's PTE size and the VA one table spans, and the entry size of the level above it;
 *  - NV0080_CTRL_CMD_DMA_GET_PTE_INFO (device): per page size the PTE (valid bit, aperture);
 *  - NV90F1_CTRL_CMD_VASPACE_GET_PAGE_LEVEL_INFO (FERMI_VASPACE_A object): every level down to the VA's
 *    page (VA bits, entry size, entry index).
 * RM computes these from its own format tables (OGKM src/nvidia/src/kernel/mem_mgr/gpu_vaspace.c:
 * gvaspaceGetPageTableInfo, gvaspaceGetPteInfo, gvaspaceGetPageLevelInfo); the walker's table must
 * give the same numbers. */
#ifndef VGT_TESTS_MMU_RM_H
#define VGT_TESTS_MMU_RM_H

#include <stdint.h>

#include "vgt/mmu.h"
#include "vgt/nv_abi.h"

typedef struct mmu_rm_report {
    int checks, mismatches;
    /* Called once per mismatch with a sentence; may be NULL. */
    void (*mismatch)(void *ctx, uint64_t va, const char *msg);
    void *ctx;
} mmu_rm_report;

/* The walker level that holds the PTE of a page_size page: the page table for 4 KiB and the big page
 * (64 or 128 KiB), the level that may hold a PTE mapping 2^va_lo bytes otherwise; -1 when none. */
int mmu_rm_leaf_level(const vgt_mmu_format *f, uint64_t page_size);

/* Requests. PDE and PTE info ask the device's default VA space (vaspace 0): the one RM_MAP_MEMORY_DMA
 * through NV01_MEMORY_VIRTUAL maps into and whose page tables RM itself keeps. PTE info skips VA-space
 * initialisation (an empty answer rather than an error where RM has no table). */
void mmu_rm_pde_request(rm_pde_info *p, uint64_t va);
void mmu_rm_pte_request(rm_pte_info *p, uint64_t va);
void mmu_rm_level_request(rm_page_level_info *p, uint32_t subdevice, uint64_t va, uint64_t page_size);

/* Comparisons; each adds its checks and mismatches to r. */
void mmu_rm_check_pde(const vgt_mmu_format *f, uint64_t va, const rm_pde_info *p, mmu_rm_report *r);
/* vidmem: the mapping's memory is video memory (else system memory). Returns the page size of the one
 * valid PTE, 0 when there is not exactly one. */
uint64_t mmu_rm_check_pte(const vgt_mmu_format *f, uint64_t va, int vidmem, const rm_pte_info *p, mmu_rm_report *r);
void mmu_rm_check_levels(const vgt_mmu_format *f, uint64_t va, const rm_page_level_info *p, mmu_rm_report *r);

#endif
