/* test_mme_tu104.c: the TU104 decoder, disassembler and simulator on macros built with mme_enc.h:
 * every ALU op, every predicate mode, every output source, branches, JAL, LOOP, end_next, data RAM,
 * STATE, DMA (read and FIFOed) and each hardware error class the format can raise. */
#include "mme_enc.h"

#include <stdlib.h>

#define M 0x3400u   /* SET_MME_SHADOW_SCRATCH(0): where the tests emit their results */

static const unsigned Z = VGT_MME_TU104_ZERO, IMM = VGT_MME_TU104_IMM, IMMPAIR = VGT_MME_TU104_IMMPAIR,
                      IMM32 = VGT_MME_TU104_IMM32, L0 = VGT_MME_TU104_LOAD0, L1 = VGT_MME_TU104_LOAD1;

/* A group that only selects method m with increment inc. */
static void g_mthd(enc_prog *p, uint32_t m, uint32_t inc)
{
    vgt_mme_tu104_inst in = tu_nop();
    in.alu[0].imm = tu_mthd_imm(m, inc);
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_NONE);
    tu_add(p, &in);
}

/* A group that emits the 16-bit constant v. */
static void g_emit_imm(enc_prog *p, uint16_t v)
{
    vgt_mme_tu104_inst in = tu_nop();
    in.alu[0].imm = v;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM0);
    tu_add(p, &in);
}

/* A group that emits registers a and b (through the ALUs). */
static void g_emit_regs(enc_prog *p, unsigned a, unsigned b)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, a, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, b, Z, 0);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(p, &in);
}

static void run(const enc_prog *p, const uint32_t *params, uint32_t n, sim_out *o)
{
    sim_run(VGT_MME_TU104, p, 0, params, n, NULL, 0, o);
}

static bool is_multiply(unsigned op)
{
    return op == VGT_MME_TU104_MUL || op == VGT_MME_TU104_MULU || op == VGT_MME_TU104_MULH;
}

/* ---- ALU ops computed from two parameters ---------------------------------------------------- */
static void test_binops(void)
{
    static const struct {
        unsigned op;
        uint32_t x, y;
        uint16_t imm;
        uint32_t want;
    } cases[] = {
        {VGT_MME_TU104_ADD, 5, 7, 0, 12},
        {VGT_MME_TU104_ADD, 0xffffffff, 2, 0, 1},
        {VGT_MME_TU104_SUB, 5, 7, 0, 0xfffffffe},
        {VGT_MME_TU104_MUL, (uint32_t)-3, 5, 0, (uint32_t)-15},
        {VGT_MME_TU104_MULU, 0x10000, 0x10001, 0, 0x10000},
        {VGT_MME_TU104_CLZ, 0x00010000, 0, 0, 15},
        {VGT_MME_TU104_CLZ, 0, 0, 0, 32},
        {VGT_MME_TU104_SLL, 1, 33, 0, 2},
        {VGT_MME_TU104_SRL, 0x80000000, 4, 0, 0x08000000},
        {VGT_MME_TU104_SRA, 0x80000000, 4, 0, 0xf8000000},
        {VGT_MME_TU104_AND, 0xf0f0, 0xff00, 0, 0xf000},
        {VGT_MME_TU104_NAND, 0xf0f0, 0xff00, 0, 0xffff0fff},
        {VGT_MME_TU104_OR, 0xf0f0, 0xff00, 0, 0xfff0},
        {VGT_MME_TU104_XOR, 0xf0f0, 0xff00, 0, 0x0ff0},
        /* MERGE imm: src_pos 4:0, width 9:5, dst_pos 15:10 */
        {VGT_MME_TU104_MERGE, 0xffffffff, 0x12ab, (8 << 10) | (8 << 5) | 0, 0xffffabff},
        {VGT_MME_TU104_MERGE, 0, 0xf0, (0 << 10) | (4 << 5) | 4, 0xf},
        {VGT_MME_TU104_SLT, (uint32_t)-1, 1, 0, ~0u},
        {VGT_MME_TU104_SLT, 1, (uint32_t)-1, 0, 0},
        {VGT_MME_TU104_SLTU, 0xffffffff, 1, 0, 0},
        {VGT_MME_TU104_SLTU, 1, 0xffffffff, 0, ~0u},
        {VGT_MME_TU104_SLE, 3, 3, 0, ~0u},
        {VGT_MME_TU104_SLE, (uint32_t)-4, (uint32_t)-5, 0, 0},
        {VGT_MME_TU104_SLEU, 4, 3, 0, 0},
        {VGT_MME_TU104_SLEU, 3, 0x80000000, 0, ~0u},
        {VGT_MME_TU104_SEQ, 9, 9, 0, ~0u},
        {VGT_MME_TU104_SEQ, 9, 8, 0, 0},
    };
    sim_out o = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enc_prog p = {.n = 0};
        vgt_mme_tu104_inst in = tu_nop();
        tu_alu(&in, 0, cases[i].op, 1, L0, L1, cases[i].imm);
        in.alu[1].imm = tu_mthd_imm(M, 1);
        if (is_multiply(cases[i].op)) {   /* a product reaches an output only from a later group */
            tu_add(&p, &in);
            in = tu_nop();
            tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, 1, Z, 0);
            in.alu[1].imm = tu_mthd_imm(M, 1);
        }
        tu_out(&in, 0, VGT_MME_OUT_IMM1, VGT_MME_OUT_ALU0);
        tu_add(&p, &in);
        tu_end(&p);
        uint32_t params[2] = {cases[i].x, cases[i].y}, want[2] = {M, cases[i].want};
        run(&p, params, 2, &o);
        char what[64];
        snprintf(what, sizeof what, "%s(0x%x, 0x%x)", vgt_mme_tu104_op_name(cases[i].op), cases[i].x, cases[i].y);
        expect_error(what, &o, VGT_MME_OK);
        expect_emits(what, &o, want, 1);
        CHECK(o.res.params_consumed == 2, "%s: consumed %u params", what, o.res.params_consumed);
    }
    vgt_mme_emit_list_free(&o.emits);
}

/* ADDC / SUBB / MULH take ALU0's carry, borrow or high half in the same group. A product goes to the
 * outputs through R0/R1 in the next group (mme_tu104_decode.c check_outputs()), as Mesa's mul_mulh. */
static void pair_case(unsigned op0, unsigned op1, uint32_t xhi, uint32_t yhi, uint32_t xlo, uint32_t ylo,
                      uint32_t want_lo, uint32_t want_hi)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 2, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 3, L1, Z, 0);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, op0, 0, L0, L1, tu_mthd_imm(M, 1));
    if (op1 == VGT_MME_TU104_MULH) {
        tu_alu(&in, 1, op1, 1, Z, Z, 0);
        tu_add(&p, &in);
        in = tu_nop();
        tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, 0, Z, tu_mthd_imm(M, 1));
        tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, 1, Z, 0);
    } else {
        tu_alu(&in, 1, op1, 1, 2, 3, 0);
    }
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(&p, &in);
    tu_end(&p);
    uint32_t params[4] = {xhi, yhi, xlo, ylo}, want[4] = {M, want_lo, M + 4, want_hi};
    sim_out o = {0};
    run(&p, params, 4, &o);
    char what[64];
    snprintf(what, sizeof what, "%s+%s", vgt_mme_tu104_op_name(op0), vgt_mme_tu104_op_name(op1));
    expect_clean_run(what, &o, want, 2);
}

static void test_pairs(void)
{
    pair_case(VGT_MME_TU104_ADD, VGT_MME_TU104_ADDC, 1, 2, 0xffffffff, 1, 0, 4);
    pair_case(VGT_MME_TU104_ADD, VGT_MME_TU104_ADDC, 1, 2, 3, 4, 7, 3);
    pair_case(VGT_MME_TU104_SUB, VGT_MME_TU104_SUBB, 1, 0, 0, 1, 0xffffffff, 0);
    pair_case(VGT_MME_TU104_SUB, VGT_MME_TU104_SUBB, 5, 2, 9, 4, 5, 3);
    pair_case(VGT_MME_TU104_MUL, VGT_MME_TU104_MULH, 0, 0, (uint32_t)-2, 3, (uint32_t)-6, 0xffffffff);
    pair_case(VGT_MME_TU104_MULU, VGT_MME_TU104_MULH, 0, 0, 0xffffffff, 2, 0xfffffffe, 1);
}

/* ---- sources and outputs ----------------------------------------------------------------------- */
static void test_sources_and_outputs(void)
{
    enc_prog p = {.n = 0};
    g_mthd(&p, M, 1);
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, IMM, IMM32, 0xfffe);   /* -2 + 0xfffe0005 */
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 2, IMMPAIR, Z, 5);         /* sext(imm0) = -2 */
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(&p, &in);
    in = tu_nop();
    in.alu[0].imm = 0x1234;
    in.alu[1].imm = 0x8765;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM1);
    tu_add(&p, &in);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMMHIGH0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_IMMHIGH1);
    tu_add(&p, &in);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM32);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_NONE);
    tu_add(&p, &in);
    in = tu_nop();
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD1);
    tu_add(&p, &in);
    /* mthd from a register value: ALU1 computes the method, out1 selects it */
    in = tu_nop();
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, IMM, Z, tu_mthd_imm(0x3500, 2));
    tu_out(&in, 1, VGT_MME_OUT_ALU1, VGT_MME_OUT_ALU1);
    tu_add(&p, &in);
    g_emit_imm(&p, 0x42);
    tu_end(&p);
    uint32_t params[2] = {0xaaaa5555, 0x5555aaaa};
    const uint32_t want[] = {M, 0xfffe0003, M + 4, 0xfffffffe, M + 8, 0x1234, M + 12, 0x8765, M + 16, 1,
                             M + 20, 8, M + 24, 0x12348765, M + 28, 0xaaaa5555, M + 32, 0x5555aaaa,
                             0x3500, tu_mthd_imm(0x3500, 2), 0x3508, 0x42};
    sim_out o = {0};
    run(&p, params, 2, &o);
    expect_clean_run("sources", &o, want, sizeof want / sizeof want[0] / 2);
}

/* ---- predicates: all 16 modes, register zero and non-zero -------------------------------------- */
static const char *const pred_letters[16] = {
    "UUUU", "TTTT", "FFFF", "TTUU", "FFUU", "TFUU", "TUUU", "FUUU",
    "UUTT", "UUTF", "UUTU", "UUFT", "UUFF", "UUFU", "UUUT", "UUUF",
};

/* 'U' always runs, 'T' runs when the register is zero, 'F' when it is not (Mesa mme_tu104_sim.c). */
static bool slot_runs(char letter, uint32_t v) { return letter == 'U' || (letter == 'T') == (v == 0); }

static void pred_case(unsigned mode, uint32_t v)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 5, L0, Z, tu_mthd_imm(M, 1));
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_NONE);
    tu_add(&p, &in);
    in = tu_nop();
    in.pred_mode = (uint8_t)mode;
    in.pred = 5;
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, Z, IMM, 11);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 2, Z, IMM, 22);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(&p, &in);
    g_mthd(&p, M + 0x10, 1);
    g_emit_regs(&p, 1, 2);
    tu_end(&p);
    const char *l = pred_letters[mode];
    bool r0 = slot_runs(l[0], v), r1 = slot_runs(l[1], v), o0 = slot_runs(l[2], v), o1 = slot_runs(l[3], v);
    uint32_t want[8], n = 0, m = M;
    /* an ALU that did not run leaves its previous result: group 0's ALU0 computed v, its ALU1 0 */
    if (o0) { want[2 * n] = m; want[2 * n + 1] = r0 ? 11 : v; n++; m += 4; }
    if (o1) { want[2 * n] = m; want[2 * n + 1] = r1 ? 22 : 0; n++; }
    want[2 * n] = M + 0x10; want[2 * n + 1] = r0 ? 11 : 0; n++;
    want[2 * n] = M + 0x14; want[2 * n + 1] = r1 ? 22 : 0; n++;
    sim_out o = {0};
    run(&p, &v, 1, &o);
    char what[64];
    snprintf(what, sizeof what, "pred %s with R5=%u", l, v);
    CHECK(strcmp(vgt_mme_tu104_pred_name(mode), l) == 0, "%s: name %s", what, vgt_mme_tu104_pred_name(mode));
    expect_clean_run(what, &o, want, n);
}

static void test_predicates(void)
{
    for (unsigned mode = 0; mode < 16; mode++) {
        pred_case(mode, 0);
        pred_case(mode, 7);
    }
}

/* A predicated-off group still pops its parameters (Mesa load_params runs before the predicate). */
static void test_pred_load(void)
{
    enc_prog p = {.n = 0};
    g_mthd(&p, M, 1);
    vgt_mme_tu104_inst in = tu_nop();
    in.pred_mode = 2;   /* FFFF on ZERO: nothing runs */
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, 0);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, L0, Z, 0);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_add(&p, &in);
    tu_end(&p);
    uint32_t params[2] = {10, 20}, want[2] = {M, 20};
    sim_out o = {0};
    run(&p, params, 2, &o);
    expect_clean_run("predicated load", &o, want, 1);
}

/* ---- control flow ------------------------------------------------------------------------------ */
static bool cmp(unsigned op, uint32_t x, uint32_t y)
{
    switch (op) {
    case VGT_MME_TU104_BLT: return (int32_t)x < (int32_t)y;
    case VGT_MME_TU104_BLTU: return x < y;
    case VGT_MME_TU104_BLE: return (int32_t)x <= (int32_t)y;
    case VGT_MME_TU104_BLEU: return x <= y;
    default: return x == y;
    }
}

static void branch_case(unsigned op, uint32_t x, uint32_t y, unsigned expect_bit)
{
    enc_prog p = {.n = 0};
    g_mthd(&p, M, 1);
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, op, Z, L0, L1, (uint16_t)(expect_bit << 15 | 2));
    tu_add(&p, &in);
    g_emit_imm(&p, 0xdead);
    g_emit_imm(&p, 0xbeef);
    tu_end(&p);
    bool taken = cmp(op, x, y) == (expect_bit != 0);
    uint32_t params[2] = {x, y};
    const uint32_t both[4] = {M, 0xdead, M + 4, 0xbeef}, skip[2] = {M, 0xbeef};
    sim_out o = {0};
    run(&p, params, 2, &o);
    char what[80];
    snprintf(what, sizeof what, "%s(0x%x, 0x%x) ?%c", vgt_mme_tu104_op_name(op), x, y, expect_bit ? 'T' : 'F');
    expect_error(what, &o, VGT_MME_OK);
    if (taken) expect_emits(what, &o, skip, 1);
    else expect_emits(what, &o, both, 2);
    vgt_mme_emit_list_free(&o.emits);
}

static void test_branches(void)
{
    static const uint32_t xy[][2] = {{1, 2}, {2, 1}, {3, 3}, {(uint32_t)-1, 1}, {1, (uint32_t)-1}};
    for (unsigned op = VGT_MME_TU104_BLT; op <= VGT_MME_TU104_BEQ; op++)
        for (size_t i = 0; i < sizeof xy / sizeof xy[0]; i++)
            for (unsigned e = 0; e < 2; e++) branch_case(op, xy[i][0], xy[i][1], e);
}

/* A backward branch counting R1 down: emits 2, 1, 0. */
static void test_backward_branch(void)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, tu_mthd_imm(M, 1));
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_NONE);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_SUB, 1, 1, IMM, 1);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, 1, Z, (uint16_t)(0u << 15 | ((uint32_t)-1 & 0x1fff)));
    tu_add(&p, &in);
    tu_end(&p);
    uint32_t param = 3, want[6] = {M, 2, M + 4, 1, M + 8, 0};
    sim_out o = {0};
    run(&p, &param, 1, &o);
    expect_clean_run("backward branch", &o, want, 3);
}

/* Branch offset 0x1000 exits after the group's outputs; nothing after runs. */
static void test_branch_exit(void)
{
    enc_prog p = {.n = 0};
    g_mthd(&p, M, 1);
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, Z, Z, 0x8000 | 0x1000);
    in.alu[1].imm = 0x77;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM1);
    tu_add(&p, &in);
    g_emit_imm(&p, 0x88);
    tu_end(&p);
    const uint32_t want[2] = {M, 0x77};
    sim_out o = {0};
    run(&p, NULL, 0, &o);
    expect_error("branch exit", &o, VGT_MME_OK);
    expect_emits("branch exit", &o, want, 1);
    CHECK(o.res.instructions == 2, "branch exit: %llu instructions", (unsigned long long)o.res.instructions);
    vgt_mme_emit_list_free(&o.emits);
}

static void test_jal(void)
{
    enc_prog p = {.n = 0};
    g_mthd(&p, M, 1);                                  /* 0 */
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_JAL, Z, Z, Z, 0x8000 | 3);
    tu_add(&p, &in);                                   /* 1 -> 4 */
    g_emit_imm(&p, 1);                                 /* 2 */
    g_emit_imm(&p, 2);                                 /* 3 */
    g_emit_imm(&p, 3);                                 /* 4 */
    tu_end(&p);
    const uint32_t want[2] = {M, 3};
    sim_out o = {0};
    run(&p, NULL, 0, &o);
    expect_clean_run("JAL", &o, want, 1);
}

static void loop_case(uint32_t count, uint32_t runs)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, tu_mthd_imm(M, 0));
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_NONE);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_LOOP, Z, 1, Z, 3);   /* body: the next two groups */
    tu_add(&p, &in);
    g_emit_imm(&p, 0xa);
    g_emit_imm(&p, 0xb);
    g_emit_imm(&p, 0xc);
    tu_end(&p);
    uint32_t want[64], n = 0;
    for (uint32_t i = 0; i < runs; i++) {
        want[2 * n] = M; want[2 * n + 1] = 0xa; n++;
        want[2 * n] = M; want[2 * n + 1] = 0xb; n++;
    }
    want[2 * n] = M; want[2 * n + 1] = 0xc; n++;
    sim_out o = {0};
    run(&p, &count, 1, &o);
    char what[32];
    snprintf(what, sizeof what, "LOOP x%u", count);
    expect_clean_run(what, &o, want, n);
}

static void test_loop(void)
{
    loop_case(3, 3);
    loop_case(1, 1);
    loop_case(0, 1);   /* the body runs max(x, 1) times */
}

/* end_next: the group after it runs, the one after that does not; a branch in the end_next group
 * chooses which group that is. */
static void test_end_next(void)
{
    enc_prog p = {.n = 0};
    g_mthd(&p, M, 1);
    vgt_mme_tu104_inst in = tu_nop();
    in.end_next = true;
    in.alu[0].imm = 1;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM0);
    tu_add(&p, &in);
    g_emit_imm(&p, 2);
    g_emit_imm(&p, 3);
    const uint32_t want[4] = {M, 1, M + 4, 2};
    sim_out o = {0};
    run(&p, NULL, 0, &o);
    expect_error("end_next", &o, VGT_MME_OK);
    expect_emits("end_next", &o, want, 2);

    p.n = 0;
    g_mthd(&p, M, 1);
    in = tu_nop();
    in.end_next = true;
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, Z, Z, 0x8000 | 2);
    tu_add(&p, &in);
    g_emit_imm(&p, 2);
    g_emit_imm(&p, 3);
    g_emit_imm(&p, 4);
    tu_end(&p);
    /* a taken branch cancels its group's end_next (measured on an H200, see test_loop_end_next): the macro
     * goes on from the target to the end */
    const uint32_t want2[4] = {M, 3, M + 4, 4};
    run(&p, NULL, 0, &o);
    expect_clean_run("end_next + taken branch", &o, want2, 2);

    /* the same branch not taken: end_next holds, one more group runs */
    p.n = 0;
    g_mthd(&p, M, 1);
    in = tu_nop();
    in.end_next = true;
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, Z, Z, 2);   /* ?F: 0 == 0 is true, not taken */
    tu_add(&p, &in);
    g_emit_imm(&p, 2);
    g_emit_imm(&p, 3);
    g_emit_imm(&p, 4);
    tu_end(&p);
    const uint32_t want3[2] = {M, 2};
    run(&p, NULL, 0, &o);
    expect_clean_run("end_next + branch not taken", &o, want3, 1);
}

/* The loop form of NVIDIA's driver: the loop-closing branch carries end_next. Measured on an H200 with
 * tests/gpu/mme_agree.sh (rows b14_loop and b14_loop_ctl, 2026-12-02): markers [0,0,0,0,3,0x77,0]: the
 * branch ran the body 3 times (taken twice, its end_next ignored), fell through, the group after it wrote
 * 0x77 and the macro ended there (the 0x99 group after that did not run). Bit 14 changes nothing. */
static void test_loop_end_next(void)
{
    for (int flag = 0; flag < 2; flag++) {
        enc_prog p = {.n = 0};
        vgt_mme_tu104_inst in = tu_nop();
        tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, Z, IMM, 3);   /* R1 = 3 */
        tu_alu(&in, 1, VGT_MME_TU104_ADD, 0, Z, Z, 0);     /* R0 = 0 */
        tu_add(&p, &in);
        in = tu_nop();                                      /* loop: R0 += 1 */
        tu_alu(&in, 0, VGT_MME_TU104_ADD, 0, 0, IMM, 1);
        tu_add(&p, &in);
        in = tu_nop();                                      /* M = R0 */
        tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, 0, Z, tu_mthd_imm(M, 0));
        tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
        tu_add(&p, &in);
        in = tu_nop();                                      /* BEQ R0, R1 ?F -> loop, end_next */
        tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, 0, 1, (uint16_t)((flag ? 0x4000u : 0) | (0x2000u - 2u)));
        in.end_next = true;
        tu_add(&p, &in);
        in = tu_nop();                                      /* M + 4 = 0x77: the group after the branch */
        in.alu[0].imm = tu_mthd_imm(M + 4, 0);
        in.alu[1].imm = 0x77;
        tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
        tu_add(&p, &in);
        in = tu_nop();                                      /* 0x99: runs only if end_next were ignored */
        in.alu[0].imm = tu_mthd_imm(M + 8, 0);
        in.alu[1].imm = 0x99;
        tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
        in.end_next = true;
        tu_add(&p, &in);
        in = tu_nop();
        tu_add(&p, &in);
        const uint32_t want[8] = {M, 1, M, 2, M, 3, M + 4, 0x77};
        sim_out o = {0};
        run(&p, NULL, 0, &o);
        expect_clean_run(flag ? "loop closing branch with end_next, bit 14" : "loop closing branch with end_next", &o,
                         want, 4);
    }
}

/* ---- data RAM and STATE ------------------------------------------------------------------------- */
static void test_data_ram(void)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_DWRITE, Z, IMM, L0, 5);
    tu_alu(&in, 1, VGT_MME_TU104_DWRITE, Z, IMM, L1, 8);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_DREAD, 1, IMM, Z, 8);
    tu_alu(&in, 1, VGT_MME_TU104_DREAD, 2, IMM, Z, 5);
    tu_add(&p, &in);
    g_mthd(&p, M, 1);
    g_emit_regs(&p, 1, 2);
    tu_end(&p);
    uint32_t params[2] = {(uint32_t)-10, 5}, want[4] = {M, 5, M + 4, (uint32_t)-10};
    vgt_mme_machine *m = calloc(1, sizeof *m);
    sim_out o = {0};
    sim_run(VGT_MME_TU104, &p, 0, params, 2, m, 0, &o);
    expect_error("DREAD/DWRITE", &o, VGT_MME_OK);
    expect_emits("DREAD/DWRITE", &o, want, 2);
    CHECK(m->data_ram[5] == (uint32_t)-10 && m->data_ram[8] == 5, "data RAM kept %u/%u", m->data_ram[5], m->data_ram[8]);

    p.n = 0;
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_DREAD, 1, IMM32, Z, 0);
    in.alu[1].imm = VGT_MME_DATA_RAM_WORDS;
    tu_add(&p, &in);
    tu_end(&p);
    sim_run(VGT_MME_TU104, &p, 0, NULL, 0, m, 0, &o);
    expect_error("DREAD out of bounds", &o, VGT_MME_DATA_RAM_ACCESS_OUT_OF_BOUNDS);
    CHECK(o.res.pc == 0, "DREAD out of bounds at pc %u", o.res.pc);
    free(m);
    vgt_mme_emit_list_free(&o.emits);
}

static void test_state(void)
{
    shadow_scratch[3] = 0x1234;
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_STATE, 1, IMM, Z, 0x3400 / 4 + 3);
    tu_alu(&in, 1, VGT_MME_TU104_STATE, 2, IMM, L0, 0x100);   /* method (0x100 + 0x10) * 4 */
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 1, VGT_MME_TU104_STATE, 2, IMM, L0, 0x100);
    tu_add(&p, &in);
    g_mthd(&p, M + 0x40, 1);
    g_emit_regs(&p, 1, 2);
    tu_end(&p);
    uint32_t param = 0x10, want[4] = {M + 0x40, 0x1234, M + 0x44, 0x440 ^ 0x5a5a0000u};
    sim_out o = {0};
    run(&p, &param, 1, &o);
    expect_error("two STATE in one group", &o, VGT_MME_ILLEGAL_OPCODE);

    p.n = 0;
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_STATE, 1, IMM, Z, 0x3400 / 4 + 3);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 1, VGT_MME_TU104_STATE, 2, IMM, L0, 0x100);
    tu_add(&p, &in);
    g_mthd(&p, M + 0x40, 1);
    g_emit_regs(&p, 1, 2);
    tu_end(&p);
    run(&p, &param, 1, &o);
    expect_clean_run("STATE", &o, want, 2);
}

/* EXTENDED has no visible effect of its own (the load barrier) and must not disturb the flow. */
static void test_extended(void)
{
    enc_prog p = {.n = 0};
    g_mthd(&p, M, 1);
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_EXTENDED, Z, IMM32, IMM, 0);
    in.alu[0].imm = 0x0000;
    in.alu[1].imm = 0x1000;   /* IMM32 = 0x00001000 */
    tu_alu(&in, 0, VGT_MME_TU104_EXTENDED, Z, IMM32, IMMPAIR, 0);
    in.alu[1].imm = 0x1000;
    tu_add(&p, &in);
    g_emit_imm(&p, 9);
    tu_end(&p);
    const uint32_t want[2] = {M, 9};
    sim_out o = {0};
    run(&p, NULL, 0, &o);
    expect_clean_run("EXTENDED", &o, want, 1);
}

/* ---- DMA -------------------------------------------------------------------------------------- */
/* Emits SET_MME_MEM_ADDRESS_A/B = va and SET_MME_DATA_RAM_ADDRESS = ram (0x550, 0x554, 0x558 with
 * increment 1); va's bits 31:16 must be zero (the test's immediates are 16 bits). */
static void g_dma_setup(enc_prog *p, uint64_t va, uint16_t ram)
{
    g_mthd(p, VGT_MME_M_SET_MEM_ADDRESS_A, 1);
    vgt_mme_tu104_inst in = tu_nop();
    in.alu[0].imm = (uint16_t)(va >> 32);
    in.alu[1].imm = (uint16_t)va;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM1);
    tu_add(p, &in);
    g_emit_imm(p, ram);
}

static void g_dma_len(enc_prog *p, uint32_t method, uint16_t len)
{
    g_mthd(p, method, 0);
    g_emit_imm(p, len);
}

static void test_dma_read(void)
{
    for (uint32_t i = 0; i < MEM_WORDS; i++) mem_words[i] = 1000 + i;
    enc_prog p = {.n = 0};
    g_dma_setup(&p, MEM_BASE + 0x100, 10);   /* word 64 of the fake memory -> data RAM word 10 */
    g_dma_len(&p, VGT_MME_M_DMA_READ, 4);
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_DREAD, 1, IMM, Z, 12);
    tu_add(&p, &in);
    g_mthd(&p, M, 1);
    g_emit_regs(&p, 1, Z);
    tu_end(&p);
    const uint32_t want[] = {0x550, 0x1234, 0x554, 0x100, 0x558, 10, 0x55c, 4, M, 1066, M + 4, 0};
    sim_out o = {0};
    vgt_mme_machine *m = calloc(1, sizeof *m);
    sim_run(VGT_MME_TU104, &p, 0, NULL, 0, m, 0, &o);
    expect_error("DMA read", &o, VGT_MME_OK);
    expect_emits("DMA read", &o, want, sizeof want / sizeof want[0] / 2);
    CHECK(m->data_ram[10] == 1064 && m->data_ram[13] == 1067, "DMA read data RAM %u..%u", m->data_ram[10],
          m->data_ram[13]);
    free(m);
    vgt_mme_emit_list_free(&o.emits);
}

/* NVK's indirect pattern (facts section 1): address, READ_FIFOED(n), EXTENDED barrier, then loads
 * return the memory words; the call word was loaded before. */
static void test_dma_fifoed(void)
{
    for (uint32_t i = 0; i < MEM_WORDS; i++) mem_words[i] = 1000 + i;
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 3, L0, Z, 0);
    tu_add(&p, &in);
    g_dma_setup(&p, MEM_BASE + 0x20, 0);
    g_dma_len(&p, VGT_MME_M_DMA_READ_FIFOED, 3);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_EXTENDED, Z, IMM32, IMMPAIR, 0);
    in.alu[1].imm = 0x1000;
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 2, L1, Z, 0);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 4, L0, Z, 0);
    tu_add(&p, &in);
    g_mthd(&p, M, 1);
    g_emit_regs(&p, 3, 1);
    g_emit_regs(&p, 2, 4);
    tu_end(&p);
    uint32_t param = 7;
    const uint32_t want[] = {M, 7, M + 4, 1008, M + 8, 1009, M + 12, 1010};
    sim_out o = {0};
    run(&p, &param, 1, &o);
    expect_error("READ_FIFOED", &o, VGT_MME_OK);
    CHECK(o.emits.n == 4 + 4, "READ_FIFOED: %u emits", o.emits.n);
    if (o.emits.n == 8) {
        vgt_mme_emit_list tail = {.v = o.emits.v + 4, .n = 4};
        sim_out t = o;
        t.emits = tail;
        expect_emits("READ_FIFOED loads", &t, want, 4);
    }
    CHECK(o.res.fifo_words_read == 3 && o.res.fifo_words_consumed == 3 && o.res.params_consumed == 1,
          "READ_FIFOED counts %u/%u/%u", o.res.fifo_words_read, o.res.fifo_words_consumed, o.res.params_consumed);

    /* FIFOed words come before call parameters not yet loaded (Mesa's hardware test dma_read_fifoed). */
    p.n = 0;
    g_dma_setup(&p, MEM_BASE + 0x20, 0);
    g_dma_len(&p, VGT_MME_M_DMA_READ_FIFOED, 1);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, tu_mthd_imm(M, 1));
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
    tu_add(&p, &in);
    tu_end(&p);
    run(&p, &param, 1, &o);
    expect_error("READ_FIFOED before the call word (the call word is discarded at exit)", &o, VGT_MME_OK);
    CHECK(o.res.params_consumed == 0 && o.res.params_total == 1, "READ_FIFOED priority: %u of %u parameters loaded",
          o.res.params_consumed, o.res.params_total);
    CHECK(o.emits.n >= 1 && o.emits.v[o.emits.n - 1].value == 1008, "READ_FIFOED priority: last emit %u",
          o.emits.n ? o.emits.v[o.emits.n - 1].value : 0);
    vgt_mme_emit_list_free(&o.emits);
}

static void dma_error_case(const char *what, uint64_t va, uint16_t ram, uint32_t method, uint16_t len,
                           int fifo_config, vgt_mme_error want)
{
    enc_prog p = {.n = 0};
    if (fifo_config >= 0) g_dma_len(&p, VGT_MME_M_SET_DATA_FIFO_CONFIG, (uint16_t)fifo_config);
    g_dma_setup(&p, va, ram);
    g_dma_len(&p, method, len);
    tu_end(&p);
    sim_out o = {0};
    run(&p, NULL, 0, &o);
    expect_error(what, &o, want);
    vgt_mme_emit_list_free(&o.emits);
}

static void test_dma_errors(void)
{
    dma_error_case("DMA read unmapped", MEM_BASE + 0xff00, 0, VGT_MME_M_DMA_READ, 4, -1,
                   VGT_MME_DMA_DRAM_ACCESS_OUT_OF_BOUNDS);
    dma_error_case("DMA read past data RAM", MEM_BASE, 0xbff, VGT_MME_M_DMA_READ, 2, -1,
                   VGT_MME_DATA_RAM_ACCESS_OUT_OF_BOUNDS);
    dma_error_case("FIFOED unmapped", 0x1000, 0, VGT_MME_M_DMA_READ_FIFOED, 2, -1,
                   VGT_MME_DMA_DRAM_ACCESS_OUT_OF_BOUNDS);
    dma_error_case("FIFOED over 16 KB", MEM_BASE, 0, VGT_MME_M_DMA_READ_FIFOED, 4097, -1,
                   VGT_MME_DMA_READ_FIFOED_OVERFLOW);
    dma_error_case("FIFOED over 4 KB", MEM_BASE, 0, VGT_MME_M_DMA_READ_FIFOED, 1025, 1,
                   VGT_MME_DMA_READ_FIFOED_OVERFLOW);
    dma_error_case("FIFOED within 4 KB", MEM_BASE, 0, VGT_MME_M_DMA_READ_FIFOED, 1024, 1, VGT_MME_OK);
    dma_error_case("FIFOED with 0 KB", MEM_BASE, 0, VGT_MME_M_DMA_READ_FIFOED, 1, 0,
                   VGT_MME_DMA_ILLEGAL_FIFO_CONFIG);

    /* resizing the FIFO while FIFOed words wait */
    enc_prog p = {.n = 0};
    g_dma_setup(&p, MEM_BASE, 0);
    g_dma_len(&p, VGT_MME_M_DMA_READ_FIFOED, 2);
    g_dma_len(&p, VGT_MME_M_SET_DATA_FIFO_CONFIG, 2);
    tu_end(&p);
    sim_out o = {0};
    run(&p, NULL, 0, &o);
    expect_error("FIFO resized when non-idle", &o, VGT_MME_DMA_FIFO_RESIZED_WHEN_NONIDLE);
    vgt_mme_emit_list_free(&o.emits);

    /* MME_DMA_SYNC stores its value in the data RAM at SET_MME_DATA_RAM_ADDRESS */
    vgt_mme_machine *m = calloc(1, sizeof *m);
    vgt_mme_sim_io io = {.read_mem = fake_read_mem};
    CHECK(vgt_mme_machine_write(m, VGT_MME_M_SET_DATA_RAM_ADDRESS, 7, &io, NULL) == VGT_MME_OK, "push-buffer DMA");
    CHECK(vgt_mme_machine_write(m, VGT_MME_M_DMA_SYNC, 0xabc, &io, NULL) == VGT_MME_OK, "DMA_SYNC");
    CHECK(m->data_ram[7] == 0xabc, "DMA_SYNC stored %u", m->data_ram[7]);
    CHECK(vgt_mme_machine_write(m, VGT_MME_M_DMA_READ_FIFOED, 1, &io, NULL) == VGT_MME_DMA_READ_FIFOED_FROM_PB,
          "READ_FIFOED from the push buffer");
    free(m);
}

/* ---- decoder: the word order and field positions -------------------------------------------------- */
static void test_decode(void)
{
    vgt_mme_tu104_inst in = tu_nop(), out;
    uint32_t w[3];
    memset(&in, 0, sizeof in);
    in.end_next = true;
    enc_tu104(&in, w);
    CHECK(w[0] == 0 && w[1] == 0 && w[2] == 1, "end_next is bit 0 of the last word: %08x %08x %08x", w[0], w[1], w[2]);
    memset(&in, 0, sizeof in);
    in.out[1].emit = 0xf;
    enc_tu104(&in, w);
    CHECK(w[0] == 0xf0000000 && w[1] == 0 && w[2] == 0, "out1 emit is 95:92 of the first word: %08x", w[0]);
    memset(&in, 0, sizeof in);
    in.alu[0].imm = 0xffff;
    enc_tu104(&in, w);
    CHECK(w[2] == 0xc0000000 && w[1] == 0x3fff && w[0] == 0, "imm0 is 45:30: %08x %08x %08x", w[0], w[1], w[2]);
    srand(1);
    for (int i = 0; i < 1000; i++) {
        uint32_t code[3] = {(uint32_t)rand() ^ (uint32_t)rand() << 16, (uint32_t)rand() ^ (uint32_t)rand() << 16,
                            (uint32_t)rand() ^ (uint32_t)rand() << 16};
        vgt_mme_tu104_decode(code, &out);
        enc_tu104(&out, w);
        CHECK(w[0] == code[0] && w[1] == code[1] && w[2] == code[2], "round trip %08x %08x %08x", code[0], code[1],
              code[2]);
    }
}

/* ---- disassembler ------------------------------------------------------------------------------ */
static void expect_line(const enc_prog *p, uint32_t index, const char *want)
{
    char line[512];
    vgt_mme_disasm_line(VGT_MME_TU104, p->code, p->n, 0, index * 3, 0, line, sizeof line);
    CHECK(strcmp(line, want) == 0, "disasm %u:\n  got  \"%s\"\n  want \"%s\"", index, line, want);
}

static void test_disasm(void)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, 0);
    in.alu[1].imm = tu_mthd_imm(M, 1);
    tu_out(&in, 0, VGT_MME_OUT_IMM1, VGT_MME_OUT_ALU0);
    tu_add(&p, &in);
    in = tu_nop();
    in.pred_mode = 5;
    in.pred = 3;
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, 1, IMM, 0x8000 | 0x1000);
    tu_alu(&in, 1, VGT_MME_TU104_MERGE, 2, 2, L0, (8 << 10) | (8 << 5) | 0);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_LOOP, Z, 4, Z, 3);
    tu_alu(&in, 1, VGT_MME_TU104_STATE, 5, IMM, Z, 0xd00);
    in.end_next = true;
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADDC, 1, 2, 3, 0);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_BLT, Z, 1, 2, (uint16_t)(0 << 15 | ((uint32_t)-4 & 0x1fff)));
    tu_alu(&in, 1, VGT_MME_TU104_JAL, Z, Z, Z, 0x8000 | 7);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_DWRITE, Z, IMM, L1, 5);
    tu_alu(&in, 1, VGT_MME_TU104_DREAD, 7, IMMPAIR, Z, 0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM32);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD0);
    tu_add(&p, &in);
    expect_line(&p, 0, "0000: ADD R1, LOAD0, ZERO ; - ; mthd(IMM1=0x3400+1) emit(ALU0) ; -");
    expect_line(&p, 1, "0001: @TFUU R3 ; BEQ R1, #-28672 ?T -> exit ; MERGE R2, R2, LOAD0 <8,8,0> ; - ; -");
    expect_line(&p, 2, "0002: LOOP R4 x[0003..0004] ; STATE R5, #3328+ZERO (method 0x3400) ; - ; - ; end_next");
    expect_line(&p, 3, "0003: ADDC R1, R2, R3 ; - ; - ; - ; ILLEGAL(ADDC/SUBB/MULH are only valid in ALU1)");
    expect_line(&p, 4, "0004: BLT R1, R2 ?F -> 0000 ; JAL ZERO -> 000b ; - ; -");
    expect_line(&p, 5, "0005: DWRITE [#5], LOAD1 ; DREAD R7, [#5(pair)] ; emit(LOAD0) ; emit(IMM32=0x50000)");
    /* every op shows its name (ADD with a real destination, so it is not the "-" no-op) */
    for (unsigned op = 0; op < 32; op++) {
        enc_prog q = {.n = 0};
        in = tu_nop();
        tu_alu(&in, 1, op, 1, 2, 3, 0);
        tu_add(&q, &in);
        char l[512];
        vgt_mme_disasm_line(VGT_MME_TU104, q.code, q.n, 0, 0, 0, l, sizeof l);
        CHECK(strstr(l, vgt_mme_tu104_op_name(op)) != NULL, "op %u not named in \"%s\"", op, l);
    }
    char line[64];
    CHECK(vgt_mme_disasm_line(VGT_MME_TU104, p.code, p.n, 0, p.n - 2, 0, line, sizeof line) == 0,
          "a partial group is not disassembled");
    size_t n = vgt_mme_disasm_line(VGT_MME_TU104, p.code, p.n, 0, 3, 0, line, 16);
    CHECK(n == 15 && strlen(line) == 15, "truncated line length %zu", n);
    vgt_error err;
    FILE *f = tmpfile();
    CHECK(f && vgt_mme_disasm(VGT_MME_TU104, p.code, p.n, 0, 0, VGT_MME_DISASM_RAW, f, &err) == VGT_OK,
          "disasm to a FILE");
    if (f) fclose(f);
}

/* Bit 14 (and 13) of a branch immediate: NVIDIA's driver sets bit 14 on branches (76 in the corpus, never on an
 * exit); the target is ip + sext(imm[12:0]) either way (Mesa mme_tu104_sim.c reads the same 13 bits; with a 12-bit
 * PC, bits 13 and 14 as offset bits would add multiples of 4096 groups). A forward taken branch over one marker,
 * with and without the bit, runs the same groups. [tests/gpu/mme_agree.c b14_* rows check it on the hardware] */
static void test_branch_bit14(void)
{
    for (int flag = 0; flag < 3; flag++) {
        enc_prog p = {.n = 0};
        vgt_mme_tu104_inst in = tu_nop();
        uint16_t extra = flag == 1 ? 0x4000u : flag == 2 ? 0x6000u : 0;
        tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, Z, Z, (uint16_t)(0x8000u | extra | 2u));   /* taken: -> group 2 */
        tu_add(&p, &in);
        in = tu_nop();
        tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, Z, Z, tu_mthd_imm(0x2000, 0));
        in.alu[1].imm = 1;
        tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);   /* skipped */
        tu_add(&p, &in);
        in = tu_nop();
        in.alu[0].imm = tu_mthd_imm(0x2004, 0);
        in.alu[1].imm = 2;
        tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
        tu_add(&p, &in);
        tu_end(&p);
        sim_out o = {0};
        run(&p, NULL, 0, &o);
        static const uint32_t want[] = {0x2004, 2};
        expect_clean_run(flag == 0 ? "branch without bit 14" : flag == 1 ? "branch with bit 14" : "bits 14 and 13", &o,
                         want, 1);
    }
}

int main(void)
{
    test_branch_bit14();
    test_loop_end_next();
    test_binops();
    test_pairs();
    test_sources_and_outputs();
    test_predicates();
    test_pred_load();
    test_branches();
    test_backward_branch();
    test_branch_exit();
    test_jal();
    test_loop();
    test_end_next();
    test_data_ram();
    test_state();
    test_extended();
    test_dma_read();
    test_dma_fifoed();
    test_dma_errors();
    test_decode();
    test_disasm();
    return check_finish("test_mme_tu104");
}
