/* mmu.h: the GPU page-table walker: translate a GPU VA to a physical address and aperture by reading a
 * VA space's page tables through a physical-read callback. For device models (which see a guest's page
 * directory base and its memory) and for checking our own VA space against RM.
 *
 * Facts, transcribed into the format table of mmu_walk.c with their sources:
 *  - version 2 (Pascal, Volta, Turing, Ampere, Ada): 49-bit VA, PD3 48:47, PD2 46:38, PD1 37:29,
 *    PD0 28:21 (16-byte dual PDE: big and small page table, or a 2 MiB PTE), PT 20:16 (64 KiB pages) or
 *    20:12 (4 KiB). A 512 MiB PTE at PD1 from Ampere on (GA100+). Entry fields per NVIDIA open-gpu-doc
 *    manuals/turing/tu104/dev_mmu.ref.txt (NV_MMU_VER2_PDE / _DUAL_PDE / _PTE) and open-gpu-kernel-modules
 *    kernel-open/nvidia-uvm/uvm_turing_mmu.c, uvm_ampere_mmu.c (levels and page sizes).
 *  - version 3 (Hopper, Blackwell): 57-bit VA, PD4 56:56, PD3 55:47, PD2 46:38, PD1 37:29 (or a 512 MiB
 *    PTE), PD0 28:21 (dual PDE or a 2 MiB PTE), PT 20:16 / 20:12: five directory levels and the page
 *    table. Entry fields per open-gpu-kernel-modules src/common/inc/swref/published/hopper/gh100/dev_mmu.h
 *    (NV_MMU_VER3_*) and kernel-open/nvidia-uvm/uvm_hopper_mmu.c (levels, PCF use).
 *
 * In a dual PDE the big-page table is consulted first: a valid big PTE maps the 64 KiB page; an invalid
 * one sends the walk to the small-page table, except that a version-3 big PTE whose PCF says SPARSE or
 * NO_VALID_4KB_PAGE ends it (the small PTEs below it are ignored, uvm_hopper_mmu.c). "Volatile" is the
 * version-2 VOL bit and the version-3 PCF "uncached" bit (PCF bit 0 of a valid entry).
 *
 * Pure: no allocation, no I/O but the callback, no libc; callable from a kernel module. */
#ifndef VGT_MMU_H
#define VGT_MMU_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Where a page table or page lives. The values are the PTE aperture field's (dev_mmu: 0 video memory,
 * 1 peer, 2 system coherent, 3 system non-coherent); a PDE uses 1..3 for video and system memory and 0
 * for "no table". */
enum vgt_mmu_aperture {
    VGT_MMU_VIDMEM = 0,
    VGT_MMU_PEER = 1,
    VGT_MMU_SYS_COHERENT = 2,
    VGT_MMU_SYS_NONCOHERENT = 3,
};

enum vgt_mmu_format_id {
    VGT_MMU_V2_TURING = 1,   /* version 2 without the 512 MiB PTE: Pascal, Volta, Turing */
    VGT_MMU_V2_AMPERE = 2,   /* version 2 with the 512 MiB PTE at PD1: Ampere, Ada */
    VGT_MMU_V3_HOPPER = 3,   /* version 3: Hopper, Blackwell */
};

#define VGT_MMU_MAX_LEVELS 6

typedef struct vgt_mmu_level {
    const char *name;        /* "PD3", ..., "PT" */
    uint8_t va_hi, va_lo;    /* the VA bits that index this level (the PT's are the small-page ones) */
    uint8_t entry_size;      /* 8, or 16 for the dual PDE */
    uint8_t huge_pte;        /* a PTE may sit here, mapping 2^va_lo bytes */
} vgt_mmu_level;

typedef struct vgt_mmu_format {
    int id;                  /* enum vgt_mmu_format_id */
    const char *name;
    uint8_t version;         /* 2 or 3: the entry layouts */
    uint8_t va_bits;
    uint8_t nlevels;         /* levels including the page table */
    vgt_mmu_level levels[VGT_MMU_MAX_LEVELS];
} vgt_mmu_format;

/* NULL for an unknown id. */
const vgt_mmu_format *vgt_mmu_format_get(int id);
/* By chip ("TU104", "GA100", "GH100", any case) or architecture ("turing", "ampere", "hopper", ...), as
 * in a trace's identity; NULL when unknown. */
const vgt_mmu_format *vgt_mmu_format_for(const char *chip_or_arch);

/* Read len (8 or 16) bytes of physical memory; return 0 on success, non-zero when the address cannot be
 * read (the walk then fails with VGT_MMU_FAULT_READ). */
typedef int (*vgt_mmu_read_fn)(void *ctx, int aperture, uint64_t pa, void *dst, uint32_t len);

enum vgt_mmu_fault {
    VGT_MMU_OK = 0,
    VGT_MMU_FAULT_NOT_PRESENT = 1,   /* a PDE with no table, or an invalid PTE */
    VGT_MMU_FAULT_SPARSE = 2,        /* an invalid PTE marked sparse / no valid 4 KiB page (version 3) */
    VGT_MMU_FAULT_READ = 3,          /* the callback could not read a table */
    VGT_MMU_FAULT_VA_RANGE = 4,      /* the VA has bits above the format's VA width */
    VGT_MMU_FAULT_BAD_ENTRY = 5,     /* a PTE at a level that cannot hold one, or a table in peer memory */
    VGT_MMU_FAULT_ARG = 6,           /* no format, no callback, or a big page size other than 64/128 KiB */
};

typedef struct vgt_mmu_result {
    int fault;               /* enum vgt_mmu_fault */
    uint8_t level;           /* the level that holds the PTE, or where the walk stopped */
    uint8_t aperture;        /* enum vgt_mmu_aperture of the page */
    uint8_t is_volatile;     /* VOL (v2) / PCF uncached (v3) of the PTE */
    uint8_t read_only, privileged, atomic_disable;
    uint8_t kind;            /* the PTE's KIND field */
    uint8_t peer_id;         /* for the peer aperture */
    uint8_t big;             /* mapped through the big-page table */
    uint64_t pa;             /* physical address of va */
    uint64_t page_size;      /* bytes of the page that maps va */
    uint64_t pte;            /* the PTE as read */
    uint64_t entry_pa;       /* where it was read */
} vgt_mmu_result;

typedef struct vgt_mmu_walk {
    const vgt_mmu_format *fmt;
    uint64_t root;           /* page-directory base (the top level's table), 4 KiB aligned */
    int root_aperture;       /* VGT_MMU_VIDMEM, VGT_MMU_SYS_COHERENT or VGT_MMU_SYS_NONCOHERENT */
    uint32_t big_page_shift; /* 16 (64 KiB, default when 0) or 17 (128 KiB, version 2 only) */
    vgt_mmu_read_fn read;
    void *ctx;
} vgt_mmu_walk;

/* Translate va. Returns the fault (VGT_MMU_OK = 0 on success) and fills *out either way. */
int vgt_mmu_translate(const vgt_mmu_walk *w, uint64_t va, vgt_mmu_result *out);
const char *vgt_mmu_fault_name(int fault);   /* "NOT_PRESENT", ...; never NULL */

#ifdef __cplusplus
}
#endif
#endif
