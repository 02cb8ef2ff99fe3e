/* mme_fermi_disasm.c: one Fermi-format instruction as one line of text; the syntax is documented in
 * vgt/mme.h above vgt_mme_disasm_line(). Operand roles follow envytools envydis/macro.c. */
#include "mme_internal.h"
#include "mme_text.h"

static void put_operation(mme_text *t, const vgt_mme_fermi_inst *in, uint32_t index)
{
    unsigned a = in->src[0], b = in->src[1];
    switch (in->op) {
    case VGT_MME_FERMI_ALU_REG: mme_text_put(t, "%s R%u, R%u", vgt_mme_fermi_alu_name(in->alu_op), a, b); return;
    case VGT_MME_FERMI_ADD_IMM: mme_text_put(t, "ADD_IMM R%u, #%d", a, (int)in->imm); return;
    case VGT_MME_FERMI_MERGE:
        mme_text_put(t, "MERGE R%u, R%u <%u,%u,%u>", a, b, in->dst_bit, in->size, in->src_bit);
        return;
    case VGT_MME_FERMI_BFE_LSL_IMM:
        mme_text_put(t, "BFE_LSL_IMM R%u, R%u <%u,%u>", a, b, in->size, in->dst_bit);
        return;
    case VGT_MME_FERMI_BFE_LSL_REG:
        mme_text_put(t, "BFE_LSL_REG R%u, R%u <%u,%u>", a, b, in->src_bit, in->size);
        return;
    case VGT_MME_FERMI_STATE:
        mme_text_put(t, "STATE R%u+#%d", a, (int)in->imm);
        if (a == 0) mme_text_put(t, " (method 0x%04x)", ((uint32_t)in->imm & 0xfff) << 2);
        return;
    case VGT_MME_FERMI_BRANCH:
        mme_text_put(t, "%s%s R%u -> %04llx", in->not_zero ? "BNZ" : "BZ", in->no_delay ? ".ND" : "", a,
                     (unsigned long long)((int64_t)index + in->imm) & 0xffffffffull);
        return;
    default: mme_text_put(t, "%s", vgt_mme_fermi_op_name(in->op)); return;
    }
}

size_t mme_fermi_line(uint32_t word, uint32_t index, unsigned flags, mme_text *t)
{
    vgt_mme_fermi_inst in;
    vgt_mme_fermi_decode(word, &in);
    mme_text_put(t, "%04x:", index);
    if (flags & VGT_MME_DISASM_RAW) mme_text_put(t, " [%08x]", word);
    mme_text_put(t, " ");
    put_operation(t, &in, index);
    if (in.op != VGT_MME_FERMI_BRANCH) mme_text_put(t, " ; %s -> R%u", vgt_mme_fermi_assign_name(in.assign), in.dst);
    if (in.end_next) mme_text_put(t, " ; exit");
    const char *why;
    if (vgt_mme_fermi_check(&in, &why) != VGT_MME_OK) mme_text_put(t, " ; ILLEGAL(%s)", why);
    return t->len;
}
