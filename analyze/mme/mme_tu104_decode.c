/* mme_tu104_decode.c: the TU104 ("MME64") instruction group: field layout, name tables, legality.
 *
 * Layout (NVIDIA open-gpu-doc MME-MacroMethodExpander/tu104/MME64Group_init.cpp; facts section 1):
 * a 96-bit group uploaded as three dwords, the high word first, so bit vector word 0 = code[2].
 */
#include "mme_internal.h"

/* One field of the 96-bit group: bits hi:lo. */
typedef struct field {
    uint8_t hi, lo;
} field;

static const field F_END_NEXT = {0, 0}, F_PRED_MODE = {4, 1}, F_PRED = {9, 5};
static const field F_ALU[2][5] = {
    /* op, dst, src0, src1, imm */
    {{14, 10}, {19, 15}, {24, 20}, {29, 25}, {45, 30}},
    {{50, 46}, {55, 51}, {60, 56}, {65, 61}, {81, 66}},
};
static const field F_OUT[2][2] = {
    /* mthd (3 bits), emit (4 bits) */
    {{84, 82}, {88, 85}},
    {{91, 89}, {95, 92}},
};

static uint32_t get(const uint32_t b[3], field f) { return mme_bits(b, f.hi, f.lo); }

void vgt_mme_tu104_decode(const uint32_t code[3], vgt_mme_tu104_inst *out)
{
    const uint32_t b[3] = {code[2], code[1], code[0]};   /* "sent with the high bits first" */
    out->end_next = get(b, F_END_NEXT) != 0;
    out->pred_mode = (uint8_t)get(b, F_PRED_MODE);
    out->pred = (uint8_t)get(b, F_PRED);
    for (int i = 0; i < 2; i++) {
        out->alu[i].op = (uint8_t)get(b, F_ALU[i][0]);
        out->alu[i].dst = (uint8_t)get(b, F_ALU[i][1]);
        out->alu[i].src[0] = (uint8_t)get(b, F_ALU[i][2]);
        out->alu[i].src[1] = (uint8_t)get(b, F_ALU[i][3]);
        out->alu[i].imm = (uint16_t)get(b, F_ALU[i][4]);
        out->out[i].mthd = (uint8_t)get(b, F_OUT[i][0]);
        out->out[i].emit = (uint8_t)get(b, F_OUT[i][1]);
    }
}

/* ---- name tables (tu104/op.h, reg.h, pred.h, out.h) ---------------------------------------------- */
static const char *const op_names[32] = {
    "ADD", "ADDC", "SUB", "SUBB", "MUL", "MULH", "MULU", "EXTENDED",
    "CLZ", "SLL", "SRL", "SRA", "AND", "NAND", "OR", "XOR",
    "MERGE", "SLT", "SLTU", "SLE", "SLEU", "SEQ", "STATE", "LOOP",
    "JAL", "BLT", "BLTU", "BLE", "BLEU", "BEQ", "DREAD", "DWRITE",
};
static const char *const reg_names[32] = {
    "R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11",
    "R12", "R13", "R14", "R15", "R16", "R17", "R18", "R19", "R20", "R21", "R22", "R23",
    "ZERO", "IMM", "IMMPAIR", "IMM32", "LOAD0", "LOAD1", "REG30?", "REG31?",
};
/* Letters apply to ALU0, ALU1, OUT0, OUT1 in that order. */
static const char *const pred_names[16] = {
    "UUUU", "TTTT", "FFFF", "TTUU", "FFUU", "TFUU", "TUUU", "FUUU",
    "UUTT", "UUTF", "UUTU", "UUFT", "UUFF", "UUFU", "UUUT", "UUUF",
};
static const char *const out_names[16] = {
    "NONE", "ALU0", "ALU1", "LOAD0", "LOAD1", "IMM0", "IMM1", "RESERVED",
    "IMMHIGH0", "IMMHIGH1", "IMM32", "OUT11?", "OUT12?", "OUT13?", "OUT14?", "OUT15?",
};

const char *vgt_mme_tu104_op_name(unsigned op) { return op < 32 ? op_names[op] : "OP?"; }
const char *vgt_mme_tu104_reg_name(unsigned reg) { return reg < 32 ? reg_names[reg] : "REG?"; }
const char *vgt_mme_tu104_pred_name(unsigned mode) { return mode < 16 ? pred_names[mode] : "PRED?"; }
const char *vgt_mme_tu104_out_name(unsigned src) { return src < 16 ? out_names[src] : "OUT?"; }

/* ---- legality ----------------------------------------------------------------------------------- */
/* any_pred: count the predicate field even under UUUU, as Mesa's sim does when deciding to load. */
static bool uses_reg(const vgt_mme_tu104_inst *in, unsigned reg, bool any_pred)
{
    if ((any_pred || in->pred_mode != 0) && in->pred == reg) return true;
    for (int i = 0; i < 2; i++)
        if (in->alu[i].src[0] == reg || in->alu[i].src[1] == reg) return true;
    return false;
}

static bool uses_out(const vgt_mme_tu104_inst *in, unsigned src)
{
    for (int i = 0; i < 2; i++)
        if (in->out[i].mthd == src || in->out[i].emit == src) return true;
    return false;
}

static const char *check_alu(const vgt_mme_tu104_inst *in, int i)
{
    const vgt_mme_tu104_alu *a = &in->alu[i];
    if (a->src[0] > VGT_MME_TU104_LOAD1 || a->src[1] > VGT_MME_TU104_LOAD1) return "source register 30/31 is undefined";
    /* Mesa mme_tu104_sim.c store_reg(): only R0..R23 and ZERO can be written. */
    if (a->dst > VGT_MME_TU104_ZERO) return "destination is not R0..R23 or ZERO";
    /* Facts section 1: ADDC/SUBB/MULH only in ALU1, they pair with ALU0's carry/borrow/high half. */
    if (i == 0 && (a->op == VGT_MME_TU104_ADDC || a->op == VGT_MME_TU104_SUBB || a->op == VGT_MME_TU104_MULH))
        return "ADDC/SUBB/MULH are only valid in ALU1";
    return NULL;
}

static bool is_multiply(unsigned op)
{
    return op == VGT_MME_TU104_MUL || op == VGT_MME_TU104_MULU || op == VGT_MME_TU104_MULH;
}

/* An output may not read the result of a multiply in its own group; the product reaches the outputs
 * only through a register, in a later group [inferred, no primary source states it]:
 *   - on the H200 (HOPPER_A, tests/gpu/gpu_selftest.c, 2026-11-30) three macros whose only difference
 *     from a passing one is MUL instead of ADD in an ALU whose result OUT1 emits raised MME
 *     ILLEGAL_OPCODE (ESR 0x404490 = 0x80000004);
 *   - the NVIDIA driver's own Hopper macros (corpus/vk_triangle.vgt, vk_compute.vgt, gl_egl.vgt: 12
 *     distinct MUL/MULU groups) never output a product in its group: they write a register and emit
 *     it later through ADD ZERO, Rn, ZERO;
 *   - Mesa's hardware-checked tests (src/nouveau/mme/tests/mme_tu104_sim_hw_test.cpp: mul, mul_imm,
 *     mul_mulh, mulu_mulh) store every product from a later group too.
 * MULU and MULH read the same multiplier and are treated alike [unconfirmed]. */
static const char *check_outputs(const vgt_mme_tu104_inst *in)
{
    for (int i = 0; i < 2; i++) {
        if (in->out[i].mthd == VGT_MME_OUT_RESERVED) return "output method source RESERVED";
        if (in->out[i].emit == VGT_MME_OUT_RESERVED || in->out[i].emit > VGT_MME_OUT_IMM32)
            return "undefined output emit source";
    }
    for (int a = 0; a < 2; a++)
        if (is_multiply(in->alu[a].op) && uses_out(in, VGT_MME_OUT_ALU0 + (unsigned)a))
            return a ? "an output reads ALU1's multiply result in its own group"
                     : "an output reads ALU0's multiply result in its own group";
    return NULL;
}

static const char *check_inst(const vgt_mme_tu104_inst *in)
{
    for (int i = 0; i < 2; i++) {
        const char *why = check_alu(in, i);
        if (why) return why;
    }
    const char *why = check_outputs(in);
    if (why) return why;
    if (in->pred_mode != 0 && in->pred > VGT_MME_TU104_LOAD1) return "predicate register 30/31 is undefined";
    /* Mesa load_reg(): IMM and IMMPAIR name an ALU's own immediate; a predicate has none. */
    if (in->pred_mode != 0 && (in->pred == VGT_MME_TU104_IMM || in->pred == VGT_MME_TU104_IMMPAIR))
        return "predicate register IMM/IMMPAIR has no immediate";
    /* Both ALUs may not write one register [inferred, no primary source states it]: on the H200
     * (tests/gpu/mme_agree.sh, 2026-12-02) every submission that ran a data-RAM zeroing macro whose first
     * group was "ADD R1, LOAD0, ZERO ; ADD R1, ZERO, #0xc00" raised MME ILLEGAL_OPCODE (ESR 0x404490 =
     * 0x80000004), nine of nine, while the submissions without it (same upload, same probe macro) ran
     * clean; its other groups are forms of NVIDIA's driver (LOOP Rn over one group, DWRITE [Rn] next to
     * ADD Rn, Rn, #k). The driver's Hopper macros in the corpus never write one register from both ALUs
     * (23,150 groups), and Mesa's builder never pairs two ALUs with the same destination
     * (mme_tu104_alus_have_dependency()). */
    if (in->alu[0].dst < VGT_MME_TU104_ZERO && in->alu[0].dst == in->alu[1].dst) return "both ALUs write one register";
    /* Mesa mme_tu104_sim.c: "both ALUs may not be STATE" (a hardware rule). */
    if (in->alu[0].op == VGT_MME_TU104_STATE && in->alu[1].op == VGT_MME_TU104_STATE) return "both ALUs are STATE";
    /* Facts section 1, rule 1: LOAD1 pops a second parameter, only valid with LOAD0. */
    bool load1 = uses_reg(in, VGT_MME_TU104_LOAD1, true) || uses_out(in, VGT_MME_OUT_LOAD1);
    bool load0 = uses_reg(in, VGT_MME_TU104_LOAD0, true) || uses_out(in, VGT_MME_OUT_LOAD0);
    if (load1 && !load0) return "LOAD1 without LOAD0";
    return NULL;
}

vgt_mme_error vgt_mme_tu104_check(const vgt_mme_tu104_inst *in, const char **why)
{
    const char *w = check_inst(in);
    if (why) *why = w;
    return w ? VGT_MME_ILLEGAL_OPCODE : VGT_MME_OK;
}

/* Facts section 1, rule 1 (Mesa mme_tu104_sim.c load_params): LOAD0 referenced anywhere in the
 * group (sources, predicate field, outputs) pops one parameter, LOAD1 a second; predicates do not
 * stop the pops. */
unsigned mme_tu104_loads(const vgt_mme_tu104_inst *in)
{
    unsigned n = 0;
    if (uses_reg(in, VGT_MME_TU104_LOAD0, true) || uses_out(in, VGT_MME_OUT_LOAD0)) n++;
    if (uses_reg(in, VGT_MME_TU104_LOAD1, true) || uses_out(in, VGT_MME_OUT_LOAD1)) n++;
    return n;
}
