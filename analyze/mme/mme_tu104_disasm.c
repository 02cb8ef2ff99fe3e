/* mme_tu104_disasm.c: one TU104 instruction group as one line of text; the syntax is documented in
 * vgt/mme.h above vgt_mme_disasm_line(). Branch, JAL and LOOP targets are shown as instruction
 * indices, computed with the simulator's rules (mme_tu104_sim.c). */
#include "mme_internal.h"
#include "mme_text.h"

static bool is_const(unsigned reg)
{
    return reg == VGT_MME_TU104_ZERO || reg == VGT_MME_TU104_IMM || reg == VGT_MME_TU104_IMMPAIR ||
           reg == VGT_MME_TU104_IMM32;
}

static uint32_t const_value(const vgt_mme_tu104_inst *in, int alu, unsigned reg)
{
    switch (reg) {
    case VGT_MME_TU104_IMM: return (uint32_t)(int32_t)(int16_t)in->alu[alu].imm;
    case VGT_MME_TU104_IMMPAIR: return (uint32_t)(int32_t)(int16_t)in->alu[1 - alu].imm;
    case VGT_MME_TU104_IMM32: return (uint32_t)in->alu[0].imm << 16 | in->alu[1].imm;
    default: return 0;
    }
}

static void put_src(mme_text *t, const vgt_mme_tu104_inst *in, int alu, unsigned reg)
{
    if (reg == VGT_MME_TU104_IMM)
        mme_text_put(t, "#%d", (int)(int16_t)in->alu[alu].imm);
    else if (reg == VGT_MME_TU104_IMMPAIR)
        mme_text_put(t, "#%d(pair)", (int)(int16_t)in->alu[1 - alu].imm);
    else if (reg == VGT_MME_TU104_IMM32)
        mme_text_put(t, "#0x%08x", const_value(in, alu, reg));
    else
        mme_text_put(t, "%s", vgt_mme_tu104_reg_name(reg));
}

static void put_branch(mme_text *t, const vgt_mme_tu104_inst *in, int i, uint32_t index)
{
    const vgt_mme_tu104_alu *a = &in->alu[i];
    mme_text_put(t, "%s ", vgt_mme_tu104_op_name(a->op));
    put_src(t, in, i, a->src[0]);
    mme_text_put(t, ", ");
    put_src(t, in, i, a->src[1]);
    mme_text_put(t, " ?%c -> ", (a->imm >> 15) & 1 ? 'T' : 'F');
    if ((a->imm & 0x1fff) == 0x1000)
        mme_text_put(t, "exit");
    else
        mme_text_put(t, "%04llx", (unsigned long long)((int64_t)index + mme_sext(a->imm, 13)) & 0xffffffffull);
}

static void put_special(mme_text *t, const vgt_mme_tu104_inst *in, int i, uint32_t index)
{
    const vgt_mme_tu104_alu *a = &in->alu[i];
    const char *d = vgt_mme_tu104_reg_name(a->dst);
    switch (a->op) {
    case VGT_MME_TU104_MERGE:
        mme_text_put(t, "MERGE %s, ", d);
        put_src(t, in, i, a->src[0]);
        mme_text_put(t, ", ");
        put_src(t, in, i, a->src[1]);
        mme_text_put(t, " <%u,%u,%u>", (a->imm >> 10) & 0x3f, (a->imm >> 5) & 0x1f, a->imm & 0x1f);
        return;
    case VGT_MME_TU104_STATE:
        mme_text_put(t, "STATE %s, ", d);
        put_src(t, in, i, a->src[0]);
        mme_text_put(t, "+");
        put_src(t, in, i, a->src[1]);
        if (is_const(a->src[0]) && is_const(a->src[1]))
            mme_text_put(t, " (method 0x%04x)",
                         ((const_value(in, i, a->src[0]) + const_value(in, i, a->src[1])) & 0xfff) << 2);
        return;
    case VGT_MME_TU104_JAL: mme_text_put(t, "JAL %s -> %04x", d, index + (a->imm & 0x7fff)); return;
    case VGT_MME_TU104_LOOP:
        mme_text_put(t, "LOOP ");
        put_src(t, in, i, a->src[0]);
        mme_text_put(t, " x[%04x..%04llx]", index + 1,
                     (unsigned long long)((int64_t)index + a->imm - 1) & 0xffffffffull);
        return;
    case VGT_MME_TU104_DREAD:
        mme_text_put(t, "DREAD %s, [", d);
        put_src(t, in, i, a->src[0]);
        mme_text_put(t, "]");
        return;
    case VGT_MME_TU104_DWRITE:
        mme_text_put(t, "DWRITE [");
        put_src(t, in, i, a->src[0]);
        mme_text_put(t, "], ");
        put_src(t, in, i, a->src[1]);
        return;
    default: put_branch(t, in, i, index); return;
    }
}

static void put_alu(mme_text *t, const vgt_mme_tu104_inst *in, int i, uint32_t index)
{
    const vgt_mme_tu104_alu *a = &in->alu[i];
    if (a->op == VGT_MME_TU104_ADD && a->dst == VGT_MME_TU104_ZERO && a->src[0] == VGT_MME_TU104_ZERO &&
        a->src[1] == VGT_MME_TU104_ZERO) {
        mme_text_put(t, "-");
        return;
    }
    if (a->op == VGT_MME_TU104_MERGE || a->op >= VGT_MME_TU104_STATE) {
        put_special(t, in, i, index);
        return;
    }
    mme_text_put(t, "%s %s", vgt_mme_tu104_op_name(a->op), vgt_mme_tu104_reg_name(a->dst));
    if (a->op == VGT_MME_TU104_MULH) return;   /* reads ALU0's high half, no sources */
    mme_text_put(t, ", ");
    put_src(t, in, i, a->src[0]);
    mme_text_put(t, ", ");
    put_src(t, in, i, a->src[1]);
}

static void put_out_src(mme_text *t, const vgt_mme_tu104_inst *in, unsigned src, bool as_method)
{
    uint32_t v;
    switch (src) {
    case VGT_MME_OUT_IMM0: case VGT_MME_OUT_IMM1: v = in->alu[src - VGT_MME_OUT_IMM0].imm; break;
    case VGT_MME_OUT_IMMHIGH0: case VGT_MME_OUT_IMMHIGH1: v = in->alu[src - VGT_MME_OUT_IMMHIGH0].imm >> 12; break;
    case VGT_MME_OUT_IMM32: v = (uint32_t)in->alu[0].imm << 16 | in->alu[1].imm; break;
    default: mme_text_put(t, "%s", vgt_mme_tu104_out_name(src)); return;
    }
    if (as_method)
        mme_text_put(t, "%s=0x%04x+%u", vgt_mme_tu104_out_name(src), (v & 0xfff) << 2, (v >> 12) & 0xf);
    else
        mme_text_put(t, "%s=0x%x", vgt_mme_tu104_out_name(src), v);
}

static void put_out(mme_text *t, const vgt_mme_tu104_inst *in, int i)
{
    unsigned m = in->out[i].mthd, e = in->out[i].emit;
    if (m == VGT_MME_OUT_NONE && e == VGT_MME_OUT_NONE) {
        mme_text_put(t, "-");
        return;
    }
    if (m != VGT_MME_OUT_NONE) {
        mme_text_put(t, "mthd(");
        put_out_src(t, in, m, true);
        mme_text_put(t, ")%s", e != VGT_MME_OUT_NONE ? " " : "");
    }
    if (e != VGT_MME_OUT_NONE) {
        mme_text_put(t, "emit(");
        put_out_src(t, in, e, false);
        mme_text_put(t, ")");
    }
}

size_t mme_tu104_line(const uint32_t *code, uint32_t index, unsigned flags, mme_text *t)
{
    vgt_mme_tu104_inst in;
    vgt_mme_tu104_decode(code, &in);
    mme_text_put(t, "%04x:", index);
    if (flags & VGT_MME_DISASM_RAW) mme_text_put(t, " [%08x %08x %08x]", code[0], code[1], code[2]);
    mme_text_put(t, " ");
    if (in.pred_mode)
        mme_text_put(t, "@%s %s ; ", vgt_mme_tu104_pred_name(in.pred_mode), vgt_mme_tu104_reg_name(in.pred));
    put_alu(t, &in, 0, index);
    mme_text_put(t, " ; ");
    put_alu(t, &in, 1, index);
    mme_text_put(t, " ; ");
    put_out(t, &in, 0);
    mme_text_put(t, " ; ");
    put_out(t, &in, 1);
    if (in.end_next) mme_text_put(t, " ; end_next");
    const char *why;
    if (vgt_mme_tu104_check(&in, &why) != VGT_MME_OK) mme_text_put(t, " ; ILLEGAL(%s)", why);
    return t->len;
}
