/* mme_format.c: which MME format a class uses, format sizes, and the hardware error classes. */
#include "mme_internal.h"

vgt_mme_format vgt_mme_format_for_class(uint32_t cls)
{
    /* The ranges of trace-format/facts/families.txt (Mesa: TU104 from TURING_A 0xC597, Fermi from FERMI_A). */
    return (vgt_mme_format)vgt_nv_mme_for_class(cls);
}

const char *vgt_mme_format_name(vgt_mme_format fmt)
{
    switch (fmt) {
    case VGT_MME_TU104: return "tu104";
    case VGT_MME_FERMI: return "fermi";
    default: return "none";
    }
}

uint32_t vgt_mme_iram_dwords(vgt_mme_format fmt)
{
    switch (fmt) {
    case VGT_MME_TU104: return VGT_MME_TU104_IRAM_DWORDS;
    case VGT_MME_FERMI: return VGT_MME_FERMI_IRAM_DWORDS;
    default: return 0;
    }
}

uint32_t vgt_mme_inst_dwords(vgt_mme_format fmt)
{
    switch (fmt) {
    case VGT_MME_TU104: return 3;
    case VGT_MME_FERMI: return 1;
    default: return 0;
    }
}

uint32_t vgt_mme_pointer_dword(vgt_mme_format fmt, uint32_t v)
{
    /* TU104 pointers count 96-bit groups [inferred from NVIDIA driver traces, see vgt/mme.h "Units"] */
    uint64_t d = (uint64_t)v * vgt_mme_inst_dwords(fmt);
    return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

/* Name and NV_PGRAPH_PRI_MME_HWW_ESR bit of each class (open-gpu-doc
 * manuals/turing/tu104/pri_mme.ref.txt; the same bits in ga100). */
static const struct {
    const char *name;
    int esr_bit;
} error_table[VGT_MME_ERROR_COUNT_] = {
    [VGT_MME_OK] = {"OK", -1},
    [VGT_MME_MISSING_MACRO_DATA] = {"MISSING_MACRO_DATA", 0},
    [VGT_MME_EXTRA_MACRO_DATA] = {"EXTRA_MACRO_DATA", 1},
    [VGT_MME_ILLEGAL_OPCODE] = {"ILLEGAL_OPCODE", 2},
    [VGT_MME_BRANCH_IN_DELAY_SLOT] = {"BRANCH_IN_DELAY_SLOT", 3},
    [VGT_MME_MAX_INSTR_LIMIT] = {"MAX_INSTR_LIMIT", 4},
    [VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS] = {"INSTR_RAM_ACCESS_OUT_OF_BOUNDS", 5},
    [VGT_MME_DATA_RAM_ACCESS_OUT_OF_BOUNDS] = {"DATA_RAM_ACCESS_OUT_OF_BOUNDS", 6},
    [VGT_MME_ILLEGAL_MME_METHOD] = {"ILLEGAL_MME_METHOD", 7},
    [VGT_MME_DMA_DRAM_ACCESS_OUT_OF_BOUNDS] = {"DMA_DRAM_ACCESS_OUT_OF_BOUNDS", 16},
    [VGT_MME_DMA_READ_FIFOED_FROM_PB] = {"DMA_READ_FIFOED_FROM_PB", 17},
    [VGT_MME_DMA_ILLEGAL_FIFO_CONFIG] = {"DMA_ILLEGAL_FIFO_CONFIG", 18},
    [VGT_MME_DMA_READ_FIFOED_OVERFLOW] = {"DMA_READ_FIFOED_OVERFLOW", 19},
    [VGT_MME_DMA_FIFO_RESIZED_WHEN_NONIDLE] = {"DMA_FIFO_RESIZED_WHEN_NONIDLE", 20},
};

const char *vgt_mme_error_name(vgt_mme_error e)
{
    if ((unsigned)e < VGT_MME_ERROR_COUNT_) return error_table[e].name;
    return "UNKNOWN_MME_ERROR";
}

int vgt_mme_error_esr_bit(vgt_mme_error e)
{
    if ((unsigned)e < VGT_MME_ERROR_COUNT_) return error_table[e].esr_bit;
    return -1;
}
