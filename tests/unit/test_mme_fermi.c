/* test_mme_fermi.c: the Fermi-format decoder, disassembler and simulator: every operation, ALU op
 * and assign op, branches with and without delay slot, exit, and the error classes of the format. */
#include "mme_enc.h"

#define M 0x3400u

enum { ADD_IMM = VGT_MME_FERMI_ADD_IMM, MOVE = VGT_MME_FERMI_MOVE, MOVE_EMIT = VGT_MME_FERMI_MOVE_EMIT,
       LOAD = VGT_MME_FERMI_LOAD, MOVE_SET_MADDR = VGT_MME_FERMI_MOVE_SET_MADDR };

static void put(enc_prog *p, uint32_t w) { p->code[p->n++] = w; }
/* maddr = m with increment inc */
static void f_mthd(enc_prog *p, uint32_t m, uint32_t inc) { put(p, fe_imm(ADD_IMM, MOVE_SET_MADDR, 0, 0, (int32_t)((m >> 2) | inc << 12))); }
static void f_emit_reg(enc_prog *p, unsigned r) { put(p, fe_alu(0, MOVE_EMIT, 0, r, 0)); }
static void f_emit_imm(enc_prog *p, int32_t v) { put(p, fe_imm(ADD_IMM, MOVE_EMIT, 0, 0, v)); }
static void f_load(enc_prog *p, unsigned r) { put(p, fe_imm(ADD_IMM, LOAD, r, 0, 0)); }
static void f_end(enc_prog *p)
{
    put(p, fe_exit(fe_nop()));
    put(p, fe_nop());
}

static void run(const enc_prog *p, const uint32_t *params, uint32_t n, sim_out *o)
{
    sim_run(VGT_MME_FERMI, p, 0, params, n, NULL, 0, o);
}

static void test_alu_ops(void)
{
    static const struct {
        unsigned op;
        uint32_t x, y, want;
    } cases[] = {
        {0, 5, 7, 12}, {2, 5, 7, 0xfffffffe}, {8, 0xf0f0, 0xff00, 0x0ff0}, {9, 0xf0f0, 0xff00, 0xfff0},
        {10, 0xf0f0, 0xff00, 0xf000}, {11, 0xf0f0, 0xff00, 0x00f0}, {12, 0xf0f0, 0xff00, 0xffff0fff},
    };
    sim_out o = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enc_prog p = {.n = 0};
        f_mthd(&p, M, 1);
        f_load(&p, 2);
        put(&p, fe_alu(cases[i].op, MOVE_EMIT, 3, 1, 2));
        f_end(&p);
        uint32_t params[2] = {cases[i].x, cases[i].y}, want[2] = {M, cases[i].want};
        run(&p, params, 2, &o);
        char what[48];
        snprintf(what, sizeof what, "Fermi %s", vgt_mme_fermi_alu_name(cases[i].op));
        expect_error(what, &o, VGT_MME_OK);
        expect_emits(what, &o, want, 1);
    }
    /* 64-bit add and subtract through the carry */
    enc_prog p = {.n = 0};
    f_mthd(&p, M, 1);
    f_load(&p, 2);
    f_load(&p, 3);
    f_load(&p, 4);
    put(&p, fe_alu(0, MOVE_EMIT, 5, 1, 2));
    put(&p, fe_alu(1, MOVE_EMIT, 6, 3, 4));
    put(&p, fe_alu(2, MOVE_EMIT, 5, 1, 2));
    put(&p, fe_alu(3, MOVE_EMIT, 6, 3, 4));
    f_end(&p);
    uint32_t params[4] = {0xffffffff, 1, 1, 2};   /* x = 0x1_ffffffff, y = 0x2_00000001 */
    const uint32_t want[8] = {M, 0, M + 4, 4, M + 8, 0xfffffffe, M + 12, 0xffffffff};
    run(&p, params, 4, &o);
    expect_clean_run("Fermi ADDC/SUBB", &o, want, 4);
}

static void test_operations(void)
{
    shadow_scratch[5] = 0xcafe;
    enc_prog p = {.n = 0};
    f_mthd(&p, M, 1);
    f_load(&p, 2);                                                                 /* R2 = 0x12ab */
    put(&p, fe_imm(ADD_IMM, MOVE_EMIT, 0, 1, -3));                                 /* R1 - 3 */
    put(&p, fe_bits(VGT_MME_FERMI_MERGE, MOVE_EMIT, 0, 1, 2, 0, 8, 8));            /* merge 8 bits at 8 */
    put(&p, fe_imm(ADD_IMM, MOVE, 3, 0, 4));                                        /* R3 = 4 */
    put(&p, fe_bits(VGT_MME_FERMI_BFE_LSL_IMM, MOVE_EMIT, 0, 3, 2, 0, 8, 16));     /* (R2 >> R3 & 0xff) << 16 */
    put(&p, fe_bits(VGT_MME_FERMI_BFE_LSL_REG, MOVE_EMIT, 0, 3, 2, 8, 4, 0));      /* (R2 >> 8 & 0xf) << R3 */
    put(&p, fe_imm(VGT_MME_FERMI_STATE, MOVE_EMIT, 0, 0, 0x3400 / 4 + 5));
    put(&p, fe_imm(ADD_IMM, MOVE, 3, 0, 40));                                       /* R3 = 40: shift out */
    put(&p, fe_bits(VGT_MME_FERMI_BFE_LSL_IMM, MOVE_EMIT, 0, 3, 2, 0, 8, 0));
    f_end(&p);
    uint32_t params[2] = {0xffff0000, 0x12ab};
    const uint32_t want[] = {M, 0xfffefffd, M + 4, 0xffffab00, M + 8, 0x002a0000, M + 12, 0x20, M + 16, 0xcafe,
                             M + 20, 0};
    sim_out o = {0};
    run(&p, params, 2, &o);
    expect_clean_run("Fermi operations", &o, want, sizeof want / sizeof want[0] / 2);
}

/* Every assign op on the result 0x5000 + R1 (R1 = 0x10): stores, maddr, sends (envytools macro.c). */
static void assign_case(unsigned assign, const uint32_t *want, uint32_t nwant, uint32_t want_r2)
{
    enc_prog p = {.n = 0};
    f_mthd(&p, M, 1);
    put(&p, fe_imm(ADD_IMM, assign, 2, 1, 0x5cf0));
    f_mthd(&p, 0x3600, 0);
    f_emit_reg(&p, 2);
    f_end(&p);
    uint32_t params[2] = {0x10, 0x777};
    sim_out o = {0};
    run(&p, params, (assign == LOAD || assign == VGT_MME_FERMI_LOAD_EMIT || assign == VGT_MME_FERMI_LOAD_SET_MADDR ||
                     assign == VGT_MME_FERMI_MOVE_SET_MADDR_LOAD_EMIT) ? 2 : 1, &o);
    char what[64];
    snprintf(what, sizeof what, "assign %s", vgt_mme_fermi_assign_name(assign));
    expect_error(what, &o, VGT_MME_OK);
    expect_emits(what, &o, want, nwant);
    CHECK(o.emits.n >= 1 && o.emits.v[o.emits.n - 1].value == want_r2, "%s: R2 = 0x%x, want 0x%x", what,
          o.emits.n ? o.emits.v[o.emits.n - 1].value : 0, want_r2);
    vgt_mme_emit_list_free(&o.emits);
}

static void test_assign_ops(void)
{
    /* result = R1 + imm = 0x10 + 0x5cf0 = 0x5d00: method 0x3400, increment 5 */
    const uint32_t res = 0x5d00, m = (res & 0xfff) << 2;
    const uint32_t load[] = {0x3600, 0x777};
    assign_case(LOAD, load, 1, 0x777);
    const uint32_t move[] = {0x3600, res};
    assign_case(MOVE, move, 1, res);
    assign_case(MOVE_SET_MADDR, move, 1, res);
    const uint32_t load_emit[] = {M, res, 0x3600, 0x777};
    assign_case(VGT_MME_FERMI_LOAD_EMIT, load_emit, 2, 0x777);
    const uint32_t move_emit[] = {M, res, 0x3600, res};
    assign_case(VGT_MME_FERMI_MOVE_EMIT, move_emit, 2, res);
    assign_case(VGT_MME_FERMI_LOAD_SET_MADDR, load, 1, 0x777);
    const uint32_t maddr_load_emit[] = {m, 0x777, 0x3600, res};
    assign_case(VGT_MME_FERMI_MOVE_SET_MADDR_LOAD_EMIT, maddr_load_emit, 2, res);
    const uint32_t maddr_high[] = {m, (res >> 12) & 0x3f, 0x3600, res};
    assign_case(VGT_MME_FERMI_MOVE_SET_MADDR_LOAD_EMIT_HIGH, maddr_high, 2, res);
}

/* The increment is 6 bits (17:12) in the Fermi format (envytools). */
static void test_increment(void)
{
    enc_prog p = {.n = 0};
    f_mthd(&p, M, 33);
    f_emit_imm(&p, 1);
    f_emit_imm(&p, 2);
    f_end(&p);
    uint32_t param = 0;
    const uint32_t want[4] = {M, 1, M + 33 * 4, 2};
    sim_out o = {0};
    run(&p, &param, 1, &o);
    expect_clean_run("increment", &o, want, 2);
}

static void branch_case(bool not_zero, bool no_delay, bool exit_bit, uint32_t r1)
{
    enc_prog p = {.n = 0};
    f_mthd(&p, M, 1);                                   /* 0 */
    uint32_t b = fe_branch(not_zero, no_delay, 1, 3);   /* 1 -> 4 */
    put(&p, exit_bit ? fe_exit(b) : b);
    f_emit_imm(&p, 1);                                  /* 2: delay slot */
    f_emit_imm(&p, 2);                                  /* 3 */
    f_emit_imm(&p, 3);                                  /* 4 */
    f_end(&p);
    bool taken = not_zero ? r1 != 0 : r1 == 0;
    uint32_t want[6], n = 0, m = M;
    if (!(taken && no_delay)) { want[2 * n] = m; want[2 * n + 1] = 1; n++; m += 4; }
    if (!taken && exit_bit) {
        /* not taken with exit: the exit happens after the delay slot */
    } else {
        if (!taken) { want[2 * n] = m; want[2 * n + 1] = 2; n++; m += 4; }
        want[2 * n] = m; want[2 * n + 1] = 3; n++;
    }
    sim_out o = {0};
    run(&p, &r1, 1, &o);
    char what[64];
    snprintf(what, sizeof what, "%s%s%s R1=%u", not_zero ? "BNZ" : "BZ", no_delay ? ".ND" : "", exit_bit ? "+exit" : "", r1);
    expect_clean_run(what, &o, want, n);
}

static void test_branches(void)
{
    for (int nz = 0; nz < 2; nz++)
        for (int nd = 0; nd < 2; nd++)
            for (int ex = 0; ex < 2; ex++) {
                branch_case(nz, nd, ex, 0);
                branch_case(nz, nd, ex, 9);
            }
}

/* A counted loop with a backward delayed branch; exit's delay slot runs, the next does not. */
static void test_loop_and_exit(void)
{
    enc_prog p = {.n = 0};
    f_mthd(&p, M, 1);
    put(&p, fe_imm(ADD_IMM, MOVE_EMIT, 1, 1, -1));   /* 1: R1 -= 1, send */
    put(&p, fe_branch(true, false, 1, -1));          /* 2: BNZ R1 -> 1 */
    put(&p, fe_nop());                               /* 3: delay slot */
    put(&p, fe_exit(fe_imm(ADD_IMM, MOVE_EMIT, 0, 0, 0x55)));
    f_emit_imm(&p, 0x66);                            /* delay slot of the exit: runs */
    f_emit_imm(&p, 0x77);                            /* does not run */
    uint32_t param = 3;
    const uint32_t want[] = {M, 2, M + 4, 1, M + 8, 0, M + 12, 0x55, M + 16, 0x66};
    sim_out o = {0};
    run(&p, &param, 1, &o);
    expect_clean_run("Fermi loop", &o, want, 5);
}

static void error_case(const char *what, const enc_prog *p, const uint32_t *params, uint32_t n, uint64_t limit,
                       vgt_mme_error want, uint32_t want_pc)
{
    sim_out o = {0};
    sim_run(VGT_MME_FERMI, p, 0, params, n, NULL, limit, &o);
    expect_error(what, &o, want);
    CHECK(o.res.pc == want_pc, "%s: pc %u, want %u", what, o.res.pc, want_pc);
    CHECK(o.err.msg[0] != '\0' && strstr(o.err.msg, vgt_mme_error_name(want)), "%s: message \"%s\"", what, o.err.msg);
    vgt_mme_emit_list_free(&o.emits);
}

static void test_errors(void)
{
    uint32_t params[3] = {1, 2, 3};
    enc_prog p = {.n = 0};
    f_load(&p, 2);
    f_end(&p);
    error_case("Fermi missing data", &p, params, 1, 0, VGT_MME_MISSING_MACRO_DATA, 0);
    error_case("Fermi no call word", &p, params, 0, 0, VGT_MME_MISSING_MACRO_DATA, 0);
    error_case("Fermi extra data", &p, params, 3, 0, VGT_MME_EXTRA_MACRO_DATA, 2);
    p.n = 0;
    put(&p, fe_branch(false, false, 0, 2));
    put(&p, fe_branch(false, false, 0, 2));
    f_end(&p);
    error_case("branch in delay slot", &p, params, 1, 0, VGT_MME_BRANCH_IN_DELAY_SLOT, 1);
    p.n = 0;
    put(&p, fe_exit(fe_nop()));
    put(&p, fe_branch(false, true, 0, 2));
    f_end(&p);
    error_case("branch in exit's delay slot", &p, params, 1, 0, VGT_MME_BRANCH_IN_DELAY_SLOT, 1);
    p.n = 0;
    put(&p, fe_nop());
    put(&p, 6);   /* op UNK6 */
    f_end(&p);
    error_case("op 6", &p, params, 1, 0, VGT_MME_ILLEGAL_OPCODE, 1);
    p.code[1] = 8;   /* op bit 3 */
    error_case("op 8", &p, params, 1, 0, VGT_MME_ILLEGAL_OPCODE, 1);
    p.code[1] = fe_alu(5, MOVE, 1, 1, 1);
    error_case("reserved ALU op", &p, params, 1, 0, VGT_MME_ILLEGAL_OPCODE, 1);
    p.n = 0;
    put(&p, fe_branch(false, true, 0, 0));   /* BZ.ND R0 -> itself */
    error_case("instruction limit", &p, params, 1, 1000, VGT_MME_MAX_INSTR_LIMIT, 0);
    p.n = 0;
    put(&p, fe_nop());
    put(&p, fe_nop());
    error_case("run off the RAM", &p, params, 1, 0, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, 2);
    p.n = 0;
    put(&p, fe_branch(false, true, 0, -5));
    error_case("branch before the start", &p, params, 1, 0, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, 0);
    p.n = 0;
    f_mthd(&p, 0x3800, 0);
    f_emit_imm(&p, 1);
    f_end(&p);
    error_case("emit CALL_MME_MACRO", &p, params, 1, 0, VGT_MME_ILLEGAL_MME_METHOD, 1);
}

static void expect_line(const enc_prog *p, uint32_t at, const char *want)
{
    char line[256];
    vgt_mme_disasm_line(VGT_MME_FERMI, p->code, p->n, 0, at, 0, line, sizeof line);
    CHECK(strcmp(line, want) == 0, "disasm %u:\n  got  \"%s\"\n  want \"%s\"", at, line, want);
}

static void test_disasm(void)
{
    enc_prog p = {.n = 0};
    put(&p, fe_alu(8, MOVE_EMIT, 3, 1, 2));
    put(&p, fe_exit(fe_imm(ADD_IMM, LOAD, 4, 5, -4)));
    put(&p, fe_bits(VGT_MME_FERMI_MERGE, MOVE, 1, 1, 2, 0, 8, 16));
    put(&p, fe_branch(true, true, 2, -3));
    put(&p, fe_imm(VGT_MME_FERMI_STATE, MOVE, 2, 0, 0xd00));
    put(&p, fe_alu(20, MOVE, 1, 1, 1));
    expect_line(&p, 0, "0000: XOR R1, R2 ; MOVE_EMIT -> R3");
    expect_line(&p, 1, "0001: ADD_IMM R5, #-4 ; LOAD -> R4 ; exit");
    expect_line(&p, 2, "0002: MERGE R1, R2 <16,8,0> ; MOVE -> R1");
    expect_line(&p, 3, "0003: BNZ.ND R2 -> 0000");
    expect_line(&p, 4, "0004: STATE R0+#3328 (method 0x3400) ; MOVE -> R2");
    expect_line(&p, 5, "0005: RESERVED R1, R1 ; MOVE -> R1 ; ILLEGAL(reserved ALU operation)");
    for (unsigned a = 0; a < 8; a++) {
        enc_prog q = {.n = 1, .code = {fe_imm(ADD_IMM, a, 1, 1, 0)}};
        char l[256];
        vgt_mme_disasm_line(VGT_MME_FERMI, q.code, q.n, 0, 0, 0, l, sizeof l);
        CHECK(strstr(l, vgt_mme_fermi_assign_name(a)) != NULL, "assign %u not named in \"%s\"", a, l);
    }
    enc_prog q = {.n = 1, .code = {6}};
    char l[256];
    vgt_mme_disasm_line(VGT_MME_FERMI, q.code, q.n, 0, 0, VGT_MME_DISASM_RAW, l, sizeof l);
    CHECK(strcmp(l, "0000: [00000006] UNK6 ; LOAD -> R0 ; ILLEGAL(opcode 6 is unknown)") == 0, "UNK6: \"%s\"", l);
}

int main(void)
{
    test_alu_ops();
    test_operations();
    test_assign_ops();
    test_increment();
    test_branches();
    test_loop_and_exit();
    test_errors();
    test_disasm();
    return check_finish("test_mme_fermi");
}
