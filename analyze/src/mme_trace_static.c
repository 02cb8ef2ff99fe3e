/* mme_trace_static.c: what a macro body can emit, known without running it: the methods it selects with
 * constants. TU104: an output whose method source is an immediate (IMM0/1, IMMHIGH0/1, IMM32; the method
 * is (v & 0xfff) << 2, as vgt_mme_disasm prints it). Fermi: MOVE_SET_MADDR / MOVE_SET_MADDR_LOAD_EMIT of
 * ADD_IMM from R0 (R0 reads as zero), method (imm & 0xfff) << 2 (envytools envydis/macro.c). Methods
 * computed from parameters or state are not seen: the result is a lower bound. */
#include "vgt/mme_trace.h"

static uint32_t tu104_out_const(const vgt_mme_tu104_inst *in, unsigned src, uint32_t *v)
{
    switch (src) {
    case VGT_MME_OUT_IMM0: case VGT_MME_OUT_IMM1: *v = in->alu[src - VGT_MME_OUT_IMM0].imm; return 1;
    case VGT_MME_OUT_IMMHIGH0: case VGT_MME_OUT_IMMHIGH1: *v = in->alu[src - VGT_MME_OUT_IMMHIGH0].imm >> 12u; return 1;
    case VGT_MME_OUT_IMM32: *v = (uint32_t)in->alu[0].imm << 16 | in->alu[1].imm; return 1;
    default: return 0;
    }
}

static uint32_t tu104_categories(uint32_t cls, const uint32_t *code, uint32_t ndwords)
{
    uint32_t cats = 0;
    for (uint32_t at = 0; at + 3 <= ndwords; at += 3) {
        vgt_mme_tu104_inst in;
        vgt_mme_tu104_decode(code + at, &in);
        for (int i = 0; i < 2; i++) {
            uint32_t v;
            if (in.out[i].mthd != VGT_MME_OUT_NONE && tu104_out_const(&in, in.out[i].mthd, &v))
                cats |= vgt_mme_emit_category(cls, (v & 0xfffu) << 2);
        }
    }
    return cats;
}

static uint32_t fermi_categories(uint32_t cls, const uint32_t *code, uint32_t ndwords)
{
    uint32_t cats = 0;
    for (uint32_t at = 0; at < ndwords; at++) {
        vgt_mme_fermi_inst in;
        vgt_mme_fermi_decode(code[at], &in);
        bool sets_maddr = in.assign == VGT_MME_FERMI_MOVE_SET_MADDR || in.assign == VGT_MME_FERMI_MOVE_SET_MADDR_LOAD_EMIT;
        if (in.op == VGT_MME_FERMI_ADD_IMM && sets_maddr && in.src[0] == 0)
            cats |= vgt_mme_emit_category(cls, ((uint32_t)in.imm & 0xfffu) << 2);
    }
    return cats;
}

uint32_t vgt_mme_static_categories(vgt_mme_format fmt, uint32_t cls, const uint32_t *code, uint32_t ndwords)
{
    if (!code) return 0;
    if (fmt == VGT_MME_TU104) return tu104_categories(cls, code, ndwords);
    if (fmt == VGT_MME_FERMI) return fermi_categories(cls, code, ndwords);
    return 0;
}
