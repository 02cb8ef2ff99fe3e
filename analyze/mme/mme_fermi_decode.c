/* mme_fermi_decode.c: the Fermi-format (Fermi..Volta) 32-bit MME instruction: fields, names, legality.
 *
 * Fields (facts section 1; envytools envydis/macro.c; Mesa src/nouveau/mme/mme_fermi.c):
 *   op 3:0, assign 6:4, end_next ("exit") 7, dst 10:8, src0 13:11, src1 16:14, alu_op 21:17,
 *   imm 31:14 (18-bit signed), bitfield src_bit 21:17 / size 26:22 / dst_bit 31:27,
 *   branch: not_zero 4, no_delay ("annul") 5.
 * envytools matches the opcode on bits 2:0 only; we read 3:0 as Mesa does and treat 8..15 as
 * illegal [what the hardware does with bit 3 is unconfirmed].
 */
#include "mme_internal.h"

static uint32_t bits(uint32_t w, unsigned hi, unsigned lo) { return mme_bits(&w, hi, lo); }

void vgt_mme_fermi_decode(uint32_t w, vgt_mme_fermi_inst *out)
{
    out->op = (uint8_t)bits(w, 3, 0);
    out->assign = (uint8_t)bits(w, 6, 4);
    out->end_next = bits(w, 7, 7) != 0;
    out->dst = (uint8_t)bits(w, 10, 8);
    out->src[0] = (uint8_t)bits(w, 13, 11);
    out->src[1] = (uint8_t)bits(w, 16, 14);
    out->alu_op = (uint8_t)bits(w, 21, 17);
    out->imm = mme_sext(bits(w, 31, 14), 18);
    out->src_bit = (uint8_t)bits(w, 21, 17);
    out->size = (uint8_t)bits(w, 26, 22);
    out->dst_bit = (uint8_t)bits(w, 31, 27);
    out->not_zero = bits(w, 4, 4) != 0;
    out->no_delay = bits(w, 5, 5) != 0;
}

static const char *const op_names[16] = {
    "ALU_REG", "ADD_IMM", "MERGE", "BFE_LSL_IMM", "BFE_LSL_REG", "STATE", "UNK6", "BRANCH",
    "OP8?", "OP9?", "OP10?", "OP11?", "OP12?", "OP13?", "OP14?", "OP15?",
};
/* ALU_REG operations; NULL = reserved (Mesa mme_fermi.h: 4..7 and 13..31 are RESERVED). */
static const char *const alu_names[32] = {
    [0] = "ADD", [1] = "ADDC", [2] = "SUB", [3] = "SUBB",
    [8] = "XOR", [9] = "OR", [10] = "AND", [11] = "AND_NOT", [12] = "NAND",
};
static const char *const assign_names[8] = {
    "LOAD", "MOVE", "MOVE_SET_MADDR", "LOAD_EMIT", "MOVE_EMIT", "LOAD_SET_MADDR",
    "MOVE_SET_MADDR_LOAD_EMIT", "MOVE_SET_MADDR_LOAD_EMIT_HIGH",
};

const char *vgt_mme_fermi_op_name(unsigned op) { return op < 16 ? op_names[op] : "OP?"; }
const char *vgt_mme_fermi_alu_name(unsigned a) { return a < 32 && alu_names[a] ? alu_names[a] : "RESERVED"; }
const char *vgt_mme_fermi_assign_name(unsigned a) { return a < 8 ? assign_names[a] : "ASSIGN?"; }

vgt_mme_error vgt_mme_fermi_check(const vgt_mme_fermi_inst *in, const char **why)
{
    const char *w = NULL;
    if (in->op > VGT_MME_FERMI_BRANCH)
        w = "opcode bit 3 set";
    else if (in->op == VGT_MME_FERMI_UNK6)
        w = "opcode 6 is unknown";   /* envytools has no encoding for it, Mesa leaves it unreversed */
    else if (in->op == VGT_MME_FERMI_ALU_REG && !(in->alu_op < 32 && alu_names[in->alu_op]))
        w = "reserved ALU operation";
    if (why) *why = w;
    return w ? VGT_MME_ILLEGAL_OPCODE : VGT_MME_OK;
}
