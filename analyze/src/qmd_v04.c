/* qmd_v04.c: field table of QMD V04_00 (Hopper, CBC0), 96 dwords.
 * Bit ranges from NVIDIA open-gpu-doc classes/compute/clcbc0qmd.h (NVCBC0_QMDV04_00_*). Almost every
 * field moved from V03_00: grid/block/program now sit in dwords 32..39, release semaphore controls are
 * packed 16 bits per slot at 320, their addresses and payloads at 640 + 128i, and constant buffer
 * addresses are stored >> 6. Dependent QMDs: enable/action/prefetch packed 5 bits per slot at 368, their
 * pointers (VA >> 8) at 448 + 32i. */
#include "qmd_roles.h"

const vgt_qmd_field vgt_qmd_v04_00_fields[] = {
    QF("QMD_MAJOR_VERSION", 583, 580, QR_MAJOR, "layout major version (4)"),
    QF("QMD_MINOR_VERSION", 579, 576, QR_MINOR, "layout minor version"),
    QF("GRID_WIDTH", 1055, 1024, QR_GRID0, "grid width in CTAs"),
    QF("GRID_HEIGHT", 1071, 1056, QR_GRID1, "grid height in CTAs"),
    QF("GRID_DEPTH", 1103, 1088, QR_GRID2, "grid depth in CTAs"),
    QF("CTA_THREAD_DIMENSION0", 1167, 1152, QR_BLOCK0, "threads per CTA, x"),
    QF("CTA_THREAD_DIMENSION1", 1183, 1168, QR_BLOCK1, "threads per CTA, y"),
    QF("CTA_THREAD_DIMENSION2", 1199, 1184, QR_BLOCK2, "threads per CTA, z"),
    QF("PROGRAM_ADDRESS_LOWER", 1247, 1216, QR_PROG_LO, "program VA, bits 31:0"),
    QF("PROGRAM_ADDRESS_UPPER", 1272, 1248, QR_PROG_HI, "program VA, bits 56:32"),
    QF("SHARED_MEMORY_SIZE", 601, 584, QR_SHMEM, "shared memory per CTA, bytes"),
    QF("PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED", 1375, 1344, QR_PREFETCH_LO_SHIFTED8, "program prefetch VA >> 8, low 32 bits"),
    QF("PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED", 1392, 1376, QR_PREFETCH_HI_SHIFTED8, "program prefetch VA >> 8, high bits"),
    QF("PROGRAM_PREFETCH_SIZE", 1401, 1393, QR_PREFETCH_SIZE, "program bytes to prefetch"),
    QF("REGISTER_COUNT", 1208, 1200, QR_REGS, "registers per thread"),
    QF("BARRIER_COUNT", 1215, 1211, QR_BARRIERS, "named barriers used"),
    QF("SASS_VERSION", 543, 536, QR_SASS, "SASS version of the program"),
    QF("SHADER_LOCAL_MEMORY_LOW_SIZE", 535, 512, QR_LMEM_LO, "local memory per thread (low), bytes"),
    QF("SHADER_LOCAL_MEMORY_HIGH_SIZE", 567, 544, QR_LMEM_HI, "local memory per thread (high), bytes"),
    QA("CONSTANT_BUFFER_VALID", 416, 416, 8, 4, 0, QR_CB_VALID, "constant buffer slot i is bound"),
    QA("CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6", 1567, 1536, 8, 64, 0, QR_CB_ADDR_LO_SHIFTED6, "constant buffer i VA >> 6, low 32 bits"),
    QA("CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6", 1586, 1568, 8, 64, 0, QR_CB_ADDR_HI_SHIFTED6, "constant buffer i VA >> 6, high bits"),
    QA("CONSTANT_BUFFER_SIZE_SHIFTED4", 1599, 1587, 8, 64, 0, QR_CB_SIZE_SHIFTED4, "constant buffer i size >> 4"),
    QA("RELEASE_ENABLE", 320, 320, 3, 16, 0, QR_REL_ENABLE, "release semaphore i at grid end"),
    QA("RELEASE_STRUCTURE_SIZE", 322, 321, 3, 16, 0, QR_REL_STRUCT, "0 four words, 1 one word, 2 two words"),
    QA("RELEASE_REDUCTION_ENABLE", 324, 324, 3, 16, 0, QR_REL_RED_ENABLE, "release is a reduction"),
    QA("RELEASE_REDUCTION_OP", 327, 325, 3, 16, 0, QR_REL_RED_OP, "0 ADD 1 MIN 2 MAX 3 INC 4 DEC 5 AND 6 OR 7 XOR"),
    QA("RELEASE_REDUCTION_FORMAT", 329, 328, 3, 16, 0, QR_REL_RED_FORMAT, "0 unsigned 32, 1 signed 32"),
    QA("RELEASE_PAYLOAD64B", 332, 332, 3, 16, 0, QR_REL_PAYLOAD64, "64-bit payload"),
    QA("RELEASE_SEMAPHORE_ADDR_LOWER", 671, 640, 3, 128, 0, QR_REL_ADDR_LO, "release i VA 31:0"),
    QA("RELEASE_SEMAPHORE_ADDR_UPPER", 696, 672, 3, 128, 0, QR_REL_ADDR_HI, "release i VA 56:32"),
    QA("RELEASE_SEMAPHORE_PAYLOAD_LOWER", 735, 704, 3, 128, 0, QR_REL_PAYLOAD_LO, "release i payload 31:0"),
    QA("RELEASE_SEMAPHORE_PAYLOAD_UPPER", 767, 736, 3, 128, 0, QR_REL_PAYLOAD_HI, "release i payload 63:32"),
    QA("DEPENDENT_QMD_ENABLE", 368, 368, 2, 5, 0, QR_DEP_ENABLE, "act on dependent QMD i at completion"),
    QA("DEPENDENT_QMD_ACTION", 371, 369, 2, 5, 0, QR_DEP_ACTION,
       "0 INCREMENT_PUT 1 SCHEDULE 3 INVALIDATE_COPY_SCHEDULE 4 DECREMENT_DEPENDENCE"),
    QA("DEPENDENT_QMD_PREFETCH", 372, 372, 2, 5, 0, QR_DEP_PREFETCH, "prefetch dependent QMD i"),
    QA("DEPENDENT_QMD_POINTER", 479, 448, 2, 32, 0, QR_DEP_PTR_SHIFTED8, "dependent QMD i VA >> 8"),
};
const uint32_t vgt_qmd_v04_00_count = sizeof vgt_qmd_v04_00_fields / sizeof vgt_qmd_v04_00_fields[0];
