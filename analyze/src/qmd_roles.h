/* qmd_roles.h: what each QMD field-table entry fills in a vgt_qmd (private to the QMD decoder).
 * The tables themselves (qmd_v02.c, qmd_v03.c, qmd_v04.c) are data; qmd.c applies them. */
#ifndef VGT_QMD_ROLES_H
#define VGT_QMD_ROLES_H

#include "vgt/qmd.h"

enum qmd_role {
    QR_MAJOR = 1, QR_MINOR,
    QR_GRID0, QR_GRID1, QR_GRID2,
    QR_BLOCK0, QR_BLOCK1, QR_BLOCK2,
    QR_PROG_LO, QR_PROG_HI, QR_PROG_OFFSET,
    QR_SHMEM, QR_REGS, QR_BARRIERS, QR_SASS, QR_LMEM_LO, QR_LMEM_HI,
    QR_CB_VALID, QR_CB_ADDR_LO, QR_CB_ADDR_HI, QR_CB_ADDR_LO_SHIFTED6, QR_CB_ADDR_HI_SHIFTED6, QR_CB_SIZE_SHIFTED4,
    QR_REL_ENABLE, QR_REL_ADDR_LO, QR_REL_ADDR_HI, QR_REL_PAYLOAD_LO, QR_REL_PAYLOAD_HI, QR_REL_PAYLOAD64,
    QR_REL_STRUCT, QR_REL_RED_ENABLE, QR_REL_RED_OP, QR_REL_RED_FORMAT,
    QR_DEP_ENABLE, QR_DEP_ACTION, QR_DEP_PREFETCH, QR_DEP_PTR_SHIFTED8,
    QR_PREFETCH_LO_SHIFTED8, QR_PREFETCH_HI_SHIFTED8, QR_PREFETCH_SIZE,
};

/* F: scalar; A: array of n at lo + i*stride starting at element first. */
#define QF(name, hi, lo, role, meaning) { name, hi, lo, 1, 0, 0, role, meaning }
#define QA(name, hi, lo, n, stride, first, role, meaning) { name, hi, lo, n, stride, first, role, meaning }

extern const vgt_qmd_field vgt_qmd_v02_02_fields[];
extern const uint32_t vgt_qmd_v02_02_count;
extern const vgt_qmd_field vgt_qmd_v02_03_fields[];
extern const uint32_t vgt_qmd_v02_03_count;
extern const vgt_qmd_field vgt_qmd_v03_00_fields[];
extern const uint32_t vgt_qmd_v03_00_count;
extern const vgt_qmd_field vgt_qmd_v04_00_fields[];
extern const uint32_t vgt_qmd_v04_00_count;

#endif
