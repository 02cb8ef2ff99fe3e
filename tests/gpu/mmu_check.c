/* mmu_check.c: the page-table walker's facts (analyze/include/vgt/mmu.h) against what RM reports for our
 * own VA space on the GPU. Run on the H200 (CI builds it but has no GPU; it exits 2 there).
 *
 *   mmu_check [TRACE]    every GPU_MAP of TRACE (sysmem or vidmem as its MEM_ALLOC says) is allocated at
 *                        its captured VA, as a replay does; without TRACE a built-in set (4 KiB to 6 MiB,
 *                        system and video memory) is used
 *
 * For each mapping, at its first and last page and at every 2 MiB inside (at most 64 VAs), it asks RM
 * three controls (layouts and who may call them: trace-format/facts/rm_abi.txt) and compares the answers
 * with the walker's format table (tests/gpu/mmu_rm.c):
 *  - NV0080_CTRL_CMD_DMA_GET_PDE_INFO (device, hVASpace 0): the page tables under the VA per page size:
 *    PTE size, the VA one table spans, the entry size of the level above;
 *  - NV0080_CTRL_CMD_DMA_GET_PTE_INFO (device, hVASpace 0): the PTE per page size; exactly one valid,
 *    in the allocation's aperture;
 *  - NV90F1_CTRL_CMD_VASPACE_GET_PAGE_LEVEL_INFO (our FERMI_VASPACE_A object): every level's VA bits,
 *    entry size and entry index.
 * Which VA space: the gpu backend maps each allocation twice, into the UVM-owned FERMI_VASPACE_A (UVM
 * keeps its page tables; RM holds only the root UVM gave it) and, through NV01_MEMORY_VIRTUAL, into the
 * device's default VA space, whose tables RM builds with the same format. The device controls ask the
 * latter (hVASpace 0). The VA space control can only be sent to a VA space object, and ours is UVM's.
 *
 * A control RM refuses to this client before running it (vgt_gpu_rm_refusal: kernel-only, test-only,
 * not supported) is a finding, not a failure: it is asked once, named with RM's status and the reason,
 * and the others go on. On the H200 (driver 580.159.04, GSP firmware) GET_PTE_INFO answers
 * NV_ERR_TEST_ONLY_CODE_NOT_ENABLED and GET_PAGE_LEVEL_INFO is kernel-only (rm_abi.txt says why).
 * Exit: 0 when every comparison made agrees (or RM refuses every control: "not available from user
 * space"), 1 on a mismatch, a failed control or nothing compared, 2 without a GPU.
 * Reading the page tables themselves (to run the walker end to end over RM's tables) needs a CPU mapping
 * of arbitrary physical memory, which an unprivileged client does not get; the physical addresses RM
 * returns are printed for that later step. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "gpu_internal.h"
#include "mmu_rm.h"
#include "vgt/mmu.h"
#include "vgt/trace.h"

struct mapping { int vid; uint64_t va, size; };

/* One control mmu_check asks, and what became of it. */
typedef struct query {
    const char *name;
    uint32_t cmd;
    const char *target;      /* the object it is sent to, for messages */
    int answered;
    uint32_t refused;        /* RM's status when it refused the control to this client; 0 otherwise */
} query;

static query q_pde = {"NV0080_CTRL_CMD_DMA_GET_PDE_INFO", RM_CTRL_DEV_DMA_GET_PDE_INFO, "device", 0, 0};
static query q_pte = {"NV0080_CTRL_CMD_DMA_GET_PTE_INFO", RM_CTRL_DEV_DMA_GET_PTE_INFO, "device", 0, 0};
static query q_lvl = {"NV90F1_CTRL_CMD_VASPACE_GET_PAGE_LEVEL_INFO", RM_CTRL_VASPACE_GET_PAGE_LEVEL_INFO,
                      "FERMI_VASPACE_A", 0, 0};

static int failures;

static void print_mismatch(void *ctx, uint64_t va, const char *msg)
{
    (void)ctx;
    printf("  MISMATCH va 0x%" PRIx64 ": %s\n", va, msg);
}

static mmu_rm_report report = {0, 0, print_mismatch, NULL};

/* Runs q unless RM refused it already; 1 when RM answered. */
static int ask(vgt_gpu *g, query *q, uint32_t object, void *params, uint32_t size, uint64_t va)
{
    if (q->refused)
        return 0;
    uint32_t st = 0;
    vgt_error err;
    if (rm_control_status(g, object, q->cmd, params, size, q->name, &st, &err) == VGT_OK) {
        q->answered++;
        return 1;
    }
    if (!q->answered && vgt_gpu_rm_refusal(st)) {
        q->refused = st;
        printf("  %s refused: RM status 0x%x %s\n", q->name, st, vgt_gpu_rm_status_name(st));
        return 0;
    }
    printf("  va 0x%" PRIx64 ": %s\n", va, err.msg);
    failures++;
    return 0;
}

static void check_va(vgt_gpu *g, const vgt_mmu_format *f, const struct mapping *m, uint64_t va)
{
    printf("  va 0x%" PRIx64 ":", va);
    fflush(stdout);
    rm_pde_info pd;
    mmu_rm_pde_request(&pd, va);
    if (ask(g, &q_pde, g->device, &pd, sizeof pd, va)) {
        printf(" PDB %u:0x%" PRIx64 ", tables:", pd.pde_addr_space, pd.pdb_addr);
        for (unsigned b = 0; b < RM_DMA_INFO_BLOCKS; b++)
            if (pd.blocks[b].page_size)
                printf(" [%u K: %u:0x%" PRIx64 " x%u span 0x%x]", pd.blocks[b].page_size >> 10,
                       pd.blocks[b].pte_addr_space, pd.blocks[b].pte_phys_addr, pd.blocks[b].pte_entry_size,
                       pd.blocks[b].pde_va_space_size);
        printf("\n");
        mmu_rm_check_pde(f, va, &pd, &report);
    } else {
        printf("\n");
    }

    uint64_t page = 0;
    rm_pte_info pt;
    mmu_rm_pte_request(&pt, va);
    if (ask(g, &q_pte, g->device, &pt, sizeof pt, va))
        page = mmu_rm_check_pte(f, va, m->vid, &pt, &report);

    rm_page_level_info li;
    mmu_rm_level_request(&li, g->subdevice, va, page ? page : 4096);
    if (ask(g, &q_lvl, g->vaspace, &li, sizeof li, va)) {
        printf("    %" PRIu64 " K page, %u levels:", li.page_size >> 10, li.num_levels);
        for (uint32_t i = 0; i < li.num_levels && i < RM_GMMU_FMT_MAX_LEVELS; i++) {
            const rm_page_level *l = &li.levels[i];
            printf(" [%u:%u x%u @%u:0x%" PRIx64 " #%u]", l->level_fmt.va_bit_hi, l->level_fmt.va_bit_lo,
                   l->level_fmt.entry_size, l->aperture, l->phys_address, l->entry_index);
        }
        printf("\n");
        mmu_rm_check_levels(f, va, &li, &report);
    }
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
    printf("mmu_check: %d mappings, walker format: %s, driver: %s\n", nmaps, f->name, vgt_gpu_info_get(g)->driver);
    for (int i = 0; i < nmaps; i++) {
        vgt_gpu_mem *mem;
        if (vgt_gpu_mem_find(g, maps[i].va, maps[i].size)) continue;   /* overlaps one already checked */
        if (vgt_gpu_mem_alloc(g, maps[i].vid ? VGT_GPU_VIDMEM : VGT_GPU_SYSMEM, maps[i].va, maps[i].size, &mem, &err) != VGT_OK) {
            printf("mapping %d (0x%" PRIx64 ", %" PRIu64 " bytes): not allocated: %s\n", i, maps[i].va, maps[i].size, err.msg);
            failures++;
            continue;
        }
        printf("mapping %d: %s 0x%" PRIx64 " + 0x%" PRIx64 "\n", i, maps[i].vid ? "vidmem" : "sysmem", maps[i].va, maps[i].size);
        int samples = 0;
        for (uint64_t va = maps[i].va; va < maps[i].va + maps[i].size && samples < 63; va = (va + (2u << 20)) & ~((2ull << 20) - 1), samples++)
            check_va(g, f, &maps[i], va);
        if (maps[i].size > 4096)
            check_va(g, f, &maps[i], maps[i].va + maps[i].size - 4096);
    }
    vgt_gpu_close(g);

    const query *qs[] = {&q_pde, &q_pte, &q_lvl};
    int refused = 0;
    for (int i = 0; i < 3; i++) {
        const query *q = qs[i];
        if (q->refused) {
            refused++;
            printf("mmu_check: not available from user space: %s (cmd 0x%08x, sent to the %s): RM status 0x%x %s: %s\n",
                   q->name, q->cmd, q->target, q->refused, vgt_gpu_rm_status_name(q->refused),
                   vgt_gpu_rm_refusal(q->refused));
        } else {
            printf("mmu_check: %s: %d answers\n", q->name, q->answered);
        }
    }
    printf("mmu_check: %d checks, %d mismatches, %d failed calls\n", report.checks, report.mismatches, failures);
    if (report.mismatches || failures)
        return 1;
    if (!report.checks && refused < 3) {
        printf("mmu_check: nothing was compared\n");
        return 1;
    }
    return 0;
}
