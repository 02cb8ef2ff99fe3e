/* qmd_v02.c: field tables of QMD V02_02 (Volta, C3C0) and V02_03 (Turing, C5C0).
 * Bit ranges from NVIDIA open-gpu-doc classes/compute/clc3c0qmd.h (NVC3C0_QMDV02_02_*) and
 * clc5c0qmd.h (NVC5C0_QMDV02_03_*). The two layouts agree on every field below except that V02_02 has
 * PROGRAM_OFFSET at 287:256 where V02_03 put PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED. */
#include "qmd_roles.h"

#define V02_COMMON                                                                                          \
    QF("QMD_MAJOR_VERSION", 583, 580, QR_MAJOR, "layout major version (2)"),                                \
    QF("QMD_VERSION", 579, 576, QR_MINOR, "layout minor version"),                                          \
    QF("CTA_RASTER_WIDTH", 415, 384, QR_GRID0, "grid width in CTAs"),                                       \
    QF("CTA_RASTER_HEIGHT", 431, 416, QR_GRID1, "grid height in CTAs"),                                     \
    QF("CTA_RASTER_DEPTH", 463, 448, QR_GRID2, "grid depth in CTAs"),                                       \
    QF("CTA_THREAD_DIMENSION0", 607, 592, QR_BLOCK0, "threads per CTA, x"),                                  \
    QF("CTA_THREAD_DIMENSION1", 623, 608, QR_BLOCK1, "threads per CTA, y"),                                  \
    QF("CTA_THREAD_DIMENSION2", 639, 624, QR_BLOCK2, "threads per CTA, z"),                                  \
    QF("PROGRAM_ADDRESS_LOWER", 1567, 1536, QR_PROG_LO, "program VA, bits 31:0"),                            \
    QF("PROGRAM_ADDRESS_UPPER", 1584, 1568, QR_PROG_HI, "program VA, bits 48:32"),                           \
    QF("SHARED_MEMORY_SIZE", 561, 544, QR_SHMEM, "shared memory per CTA, bytes"),                           \
    QF("REGISTER_COUNT_V", 656, 648, QR_REGS, "registers per thread"),                                      \
    QF("BARRIER_COUNT", 959, 955, QR_BARRIERS, "named barriers used"),                                      \
    QF("SASS_VERSION", 1023, 1016, QR_SASS, "SASS version of the program"),                                 \
    QF("SHADER_LOCAL_MEMORY_LOW_SIZE", 951, 928, QR_LMEM_LO, "local memory per thread (low), bytes"),       \
    QF("SHADER_LOCAL_MEMORY_HIGH_SIZE", 983, 960, QR_LMEM_HI, "local memory per thread (high), bytes"),     \
    QA("CONSTANT_BUFFER_VALID", 640, 640, 8, 1, 0, QR_CB_VALID, "constant buffer slot i is bound"),         \
    QA("CONSTANT_BUFFER_ADDR_LOWER", 1055, 1024, 8, 64, 0, QR_CB_ADDR_LO, "constant buffer i VA 31:0"),    \
    QA("CONSTANT_BUFFER_ADDR_UPPER", 1072, 1056, 8, 64, 0, QR_CB_ADDR_HI, "constant buffer i VA 48:32"),   \
    QA("CONSTANT_BUFFER_SIZE_SHIFTED4", 1087, 1075, 8, 64, 0, QR_CB_SIZE_SHIFTED4, "constant buffer i size >> 4"), \
    QA("SEMAPHORE_RELEASE_ENABLE", 138, 138, 2, 1, 0, QR_REL_ENABLE, "release semaphore i at grid end"),    \
    QA("RELEASE_ADDRESS_LOWER", 767, 736, 2, 96, 0, QR_REL_ADDR_LO, "release i VA 31:0"),                   \
    QA("RELEASE_ADDRESS_UPPER", 775, 768, 2, 96, 0, QR_REL_ADDR_HI, "release i VA 39:32"),                  \
    QA("RELEASE_REDUCTION_OP", 790, 788, 2, 96, 0, QR_REL_RED_OP, "0 ADD 1 MIN 2 MAX 3 INC 4 DEC 5 AND 6 OR 7 XOR"), \
    QA("RELEASE_REDUCTION_FORMAT", 793, 792, 2, 96, 0, QR_REL_RED_FORMAT, "0 unsigned 32, 1 signed 32"),    \
    QA("RELEASE_REDUCTION_ENABLE", 794, 794, 2, 96, 0, QR_REL_RED_ENABLE, "release is a reduction"),        \
    QA("RELEASE_STRUCTURE_SIZE", 799, 799, 2, 96, 0, QR_REL_STRUCT, "0 four words (timestamp), 1 one word"), \
    QA("RELEASE_PAYLOAD", 831, 800, 2, 96, 0, QR_REL_PAYLOAD_LO, "release i payload (32-bit)")

const vgt_qmd_field vgt_qmd_v02_02_fields[] = {
    V02_COMMON,
    QF("PROGRAM_OFFSET", 287, 256, QR_PROG_OFFSET, "program offset from the code base (V02_02 only)"),
};
const uint32_t vgt_qmd_v02_02_count = sizeof vgt_qmd_v02_02_fields / sizeof vgt_qmd_v02_02_fields[0];

const vgt_qmd_field vgt_qmd_v02_03_fields[] = {
    V02_COMMON,
    QF("PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED", 287, 256, QR_PREFETCH_LO_SHIFTED8, "program prefetch VA >> 8, low 32 bits"),
    QF("PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED", 1000, 992, QR_PREFETCH_HI_SHIFTED8, "program prefetch VA >> 8, high bits"),
    QF("PROGRAM_PREFETCH_SIZE", 1009, 1001, QR_PREFETCH_SIZE, "program bytes to prefetch"),
};
const uint32_t vgt_qmd_v02_03_count = sizeof vgt_qmd_v02_03_fields / sizeof vgt_qmd_v02_03_fields[0];
