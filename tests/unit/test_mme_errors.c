/* test_mme_errors.c: each hardware error class of the TU104 simulator with the pc it is reported at,
 * the argument checks, callback failures, and the error-class tables. (Fermi's classes are in
 * test_mme_fermi.c, the DMA classes in test_mme_tu104.c.) */
#include "mme_enc.h"

static const unsigned Z = VGT_MME_TU104_ZERO, L0 = VGT_MME_TU104_LOAD0,
                      L1 = VGT_MME_TU104_LOAD1;

static void error_case(const char *what, const enc_prog *p, uint32_t start, const uint32_t *params, uint32_t n,
                       uint64_t limit, vgt_mme_error want, uint32_t want_pc)
{
    sim_out o = {0};
    sim_run(VGT_MME_TU104, p, start, params, n, NULL, limit, &o);
    expect_error(what, &o, want);
    CHECK(o.res.pc == want_pc, "%s: pc %u, want %u", what, o.res.pc, want_pc);
    CHECK(o.res.pc_dword == start + 3 * want_pc, "%s: pc_dword %u", what, o.res.pc_dword);
    CHECK(strstr(o.err.msg, vgt_mme_error_name(want)) != NULL, "%s: message \"%s\" does not name the class", what,
          o.err.msg);
    vgt_mme_emit_list_free(&o.emits);
}

/* One group with the given ALU0, then a clean end. */
static void one_group(enc_prog *p, unsigned op, unsigned dst, unsigned s0, unsigned s1, uint16_t imm)
{
    p->n = 0;
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, op, dst, s0, s1, imm);
    tu_add(p, &in);
    tu_end(p);
}

static void test_params(void)
{
    enc_prog p = {.n = 0};
    uint32_t params[3] = {1, 2, 3};
    one_group(&p, VGT_MME_TU104_ADD, 1, L0, L1, 0);
    error_case("missing data", &p, 0, params, 1, 0, VGT_MME_MISSING_MACRO_DATA, 0);
    sim_out o = {0};
    /* TU104: parameters left at exit are discarded with the call (NVIDIA's Hopper driver calls a guard macro
     * with 21 parameters that consumes 4; the hardware runs it cleanly) */
    sim_run(VGT_MME_TU104, &p, 0, params, 3, NULL, 0, &o);
    expect_error("extra data (TU104: discarded)", &o, VGT_MME_OK);
    CHECK(o.res.params_consumed == 2 && o.res.params_total == 3 && o.res.instructions == 3,
          "extra data: consumed %u of %u in %llu instructions", o.res.params_consumed, o.res.params_total,
          (unsigned long long)o.res.instructions);
    vgt_mme_emit_list_free(&o.emits);
    o = (sim_out){0};
    sim_run(VGT_MME_TU104, &p, 0, params, 2, NULL, 0, &o);
    expect_error("exact data", &o, VGT_MME_OK);
    CHECK(o.res.params_consumed == 2 && o.res.params_total == 2 && o.res.instructions == 3,
          "exact data: consumed %u of %u in %llu instructions", o.res.params_consumed, o.res.params_total,
          (unsigned long long)o.res.instructions);
    vgt_mme_emit_list_free(&o.emits);
}

static void test_illegal(void)
{
    enc_prog p = {.n = 0};
    one_group(&p, VGT_MME_TU104_ADDC, 1, Z, Z, 0);
    error_case("ADDC in ALU0", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    one_group(&p, VGT_MME_TU104_SUBB, 1, Z, Z, 0);
    error_case("SUBB in ALU0", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    one_group(&p, VGT_MME_TU104_MULH, 1, Z, Z, 0);
    error_case("MULH in ALU0", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    one_group(&p, VGT_MME_TU104_ADD, 1, 30, Z, 0);
    error_case("source register 30", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    one_group(&p, VGT_MME_TU104_ADD, VGT_MME_TU104_IMM32, Z, Z, 0);
    error_case("destination IMM32", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    one_group(&p, VGT_MME_TU104_ADD, 1, L1, Z, 0);
    error_case("LOAD1 without LOAD0", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);

    vgt_mme_tu104_inst in = tu_nop();
    tu_out(&in, 0, VGT_MME_OUT_NONE, 12);
    p.n = 0;
    tu_add(&p, &in);
    error_case("emit source 12", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    in = tu_nop();
    tu_out(&in, 1, VGT_MME_OUT_RESERVED, VGT_MME_OUT_NONE);
    p.n = 0;
    tu_add(&p, &in);
    error_case("method source RESERVED", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    in = tu_nop();
    in.pred_mode = 1;
    in.pred = VGT_MME_TU104_IMM;
    p.n = 0;
    vgt_mme_tu104_inst nop = tu_nop();   /* an all-zero group would write R0 from both ALUs */
    tu_add(&p, &nop);
    tu_add(&p, &in);
    error_case("predicate on IMM", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_OPCODE, 1);

    /* both ALUs write one register (the H200's 2026-12-02 exceptions: mme_tu104_decode.c check_inst) */
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 1, Z, VGT_MME_TU104_IMM, 0xc00);
    p.n = 0;
    tu_add(&p, &in);
    uint32_t word = 0;
    error_case("both ALUs write R1", &p, 0, &word, 1, 0, VGT_MME_ILLEGAL_OPCODE, 0);
    /* the driver's forms stay legal: both ALUs into ZERO, or into two registers */
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, Z, VGT_MME_TU104_IMM, 1);
    const char *why = NULL;
    CHECK(vgt_mme_tu104_check(&in, &why) == VGT_MME_OK, "both ALUs into ZERO: %s", why ? why : "-");
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 2, Z, VGT_MME_TU104_IMM, 1);
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, 0);
    CHECK(vgt_mme_tu104_check(&in, &why) == VGT_MME_OK, "R1 and R2: %s", why ? why : "-");
}

/* A multiply's result may not feed an output of its own group (mme_tu104_decode.c check_outputs(): the
 * H200 raised ILLEGAL_OPCODE for exactly this form). Case: the multiply's ALU, its op, the output
 * (0/1) and which part (mthd or emit) reads it, and whether the group is legal. */
static void multiply_output_case(const char *what, int alu, unsigned op, int out, int as_mthd, unsigned src,
                                 vgt_mme_error want)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    uint32_t params[2] = {6, 7};
    tu_alu(&in, alu, op, 2, L0, L1, 0);
    if (op == VGT_MME_TU104_MULH) {   /* MULH pairs with ALU0's MUL and reads no sources */
        tu_alu(&in, 0, VGT_MME_TU104_MUL, 3, L0, L1, 0);
        tu_alu(&in, 1, VGT_MME_TU104_MULH, 2, Z, Z, 0);
    }
    tu_out(&in, out, as_mthd ? src : VGT_MME_OUT_NONE, as_mthd ? VGT_MME_OUT_NONE : src);
    tu_add(&p, &in);
    tu_end(&p);
    if (want != VGT_MME_OK) {
        error_case(what, &p, 0, params, 2, 0, want, 0);
    } else {
        sim_out o = {0};
        sim_run(VGT_MME_TU104, &p, 0, params, 2, NULL, 0, &o);
        expect_error(what, &o, VGT_MME_OK);
        vgt_mme_emit_list_free(&o.emits);
    }
    const char *why = NULL;
    vgt_mme_tu104_inst dec;
    vgt_mme_tu104_decode(p.code, &dec);
    vgt_mme_error e = vgt_mme_tu104_check(&dec, &why);
    CHECK(e == want, "%s: check says %s (%s)", what, vgt_mme_error_name(e), why ? why : "-");
    if (want != VGT_MME_OK)
        CHECK(why && strstr(why, "multiply result in its own group"), "%s: cause \"%s\"", what, why ? why : "");
}

static void test_multiply_outputs(void)
{
    const unsigned A0 = VGT_MME_OUT_ALU0, A1 = VGT_MME_OUT_ALU1;
    /* the H200's failing form: OUT1 emits ALU0 = MUL */
    multiply_output_case("MUL in ALU0, OUT1 emits it", 0, VGT_MME_TU104_MUL, 1, 0, A0, VGT_MME_ILLEGAL_OPCODE);
    multiply_output_case("MUL in ALU0, OUT0 emits it", 0, VGT_MME_TU104_MUL, 0, 0, A0, VGT_MME_ILLEGAL_OPCODE);
    multiply_output_case("MUL in ALU0, OUT0 method from it", 0, VGT_MME_TU104_MUL, 0, 1, A0, VGT_MME_ILLEGAL_OPCODE);
    multiply_output_case("MULU in ALU1, OUT1 emits it", 1, VGT_MME_TU104_MULU, 1, 0, A1, VGT_MME_ILLEGAL_OPCODE);
    multiply_output_case("MULH in ALU1, OUT0 emits it", 1, VGT_MME_TU104_MULH, 0, 0, A1, VGT_MME_ILLEGAL_OPCODE);
    multiply_output_case("MULH pair, OUT1 emits the MUL", 1, VGT_MME_TU104_MULH, 1, 0, A0, VGT_MME_ILLEGAL_OPCODE);
    /* legal: the outputs read the other ALU or nothing multiplied */
    multiply_output_case("MUL in ALU0, OUT1 emits ALU1", 0, VGT_MME_TU104_MUL, 1, 0, A1, VGT_MME_OK);
    multiply_output_case("MUL in ALU1, OUT0 emits ALU0", 1, VGT_MME_TU104_MUL, 0, 0, A0, VGT_MME_OK);
    multiply_output_case("MUL in ALU0, OUT0 emits LOAD0", 0, VGT_MME_TU104_MUL, 0, 0, VGT_MME_OUT_LOAD0, VGT_MME_OK);
    multiply_output_case("ADD in ALU0, OUT1 emits it", 0, VGT_MME_TU104_ADD, 1, 0, A0, VGT_MME_OK);

    /* the legal form of the failing macro: the product through R2, emitted by the next group */
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_MUL, 2, L0, L1, tu_mthd_imm(0x3400, 1));
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_NONE);
    tu_add(&p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, 2, Z, 0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_add(&p, &in);
    tu_end(&p);
    uint32_t params[2] = {(uint32_t)-6, 7}, want[2] = {0x3400, (uint32_t)-42};
    sim_out o = {0};
    sim_run(VGT_MME_TU104, &p, 0, params, 2, NULL, 0, &o);
    expect_clean_run("product emitted from the next group", &o, want, 1);
}

static void test_control_errors(void)
{
    enc_prog p = {.n = 0};
    one_group(&p, VGT_MME_TU104_BEQ, Z, Z, Z, 0x8000);   /* branch to itself */
    error_case("instruction limit", &p, 0, NULL, 0, 5000, VGT_MME_MAX_INSTR_LIMIT, 0);
    sim_out o = {0};
    sim_run(VGT_MME_TU104, &p, 0, NULL, 0, NULL, 5000, &o);
    CHECK(o.res.instructions == 5000, "limit: %llu instructions", (unsigned long long)o.res.instructions);
    vgt_mme_emit_list_free(&o.emits);

    p.n = 0;
    vgt_mme_tu104_inst in = tu_nop();
    tu_add(&p, &in);
    tu_add(&p, &in);
    error_case("run off the RAM", &p, 0, NULL, 0, 0, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, 2);
    error_case("start beyond the RAM", &p, 6, NULL, 0, 0, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, 0);
    error_case("start inside the last group", &p, 4, NULL, 0, 0, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, 0);
    one_group(&p, VGT_MME_TU104_BEQ, Z, Z, Z, (uint16_t)(0x8000 | ((uint32_t)-3 & 0x1fff)));
    error_case("branch before the start", &p, 0, NULL, 0, 0, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, 0);
    one_group(&p, VGT_MME_TU104_JAL, Z, Z, Z, 0x8000 | 0x7fff);
    error_case("JAL beyond the RAM", &p, 0, NULL, 0, 0, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, 0x7fff);

    /* a macro may not send the MME's own upload and call methods [our reading] */
    static const uint32_t bad[] = {0x0114, 0x0118, 0x011c, 0x0120, 0x3800, 0x3804, 0x3ff8};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p.n = 0;
        in = tu_nop();
        in.alu[0].imm = tu_mthd_imm(bad[i], 0);
        tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM0);
        tu_add(&p, &in);
        tu_end(&p);
        error_case("emit an MME method", &p, 0, NULL, 0, 0, VGT_MME_ILLEGAL_MME_METHOD, 0);
    }
}

static vgt_status failing_emit(void *user, uint32_t m, uint32_t v)
{
    (void)user, (void)m, (void)v;
    return VGT_E_BACKEND;
}

static void test_run_failures(void)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM0);
    tu_add(&p, &in);
    tu_end(&p);
    vgt_mme_sim_io io = {.emit = failing_emit};
    vgt_mme_result res;
    vgt_error err;
    vgt_status rc = vgt_mme_sim_run(NULL, VGT_MME_TU104, p.code, p.n, 0, NULL, 0, &io, NULL, &res, &err);
    CHECK(rc == VGT_E_BACKEND && res.error == VGT_MME_OK && strstr(err.msg, "emit"), "a failing emit: %s %s",
          vgt_status_name(rc), err.msg);
    rc = vgt_mme_sim_run(NULL, VGT_MME_NONE, p.code, p.n, 0, NULL, 0, NULL, NULL, &res, &err);
    CHECK(rc == VGT_E_ARG, "format NONE: %s", vgt_status_name(rc));
    rc = vgt_mme_sim_run(NULL, VGT_MME_TU104, NULL, 6, 0, NULL, 0, NULL, NULL, &res, &err);
    CHECK(rc == VGT_E_ARG, "NULL code: %s", vgt_status_name(rc));
    rc = vgt_mme_sim_run(NULL, VGT_MME_TU104, p.code, p.n, 0, NULL, 3, NULL, NULL, &res, &err);
    CHECK(rc == VGT_E_ARG, "NULL params: %s", vgt_status_name(rc));
    rc = vgt_mme_sim_run(NULL, VGT_MME_TU104, p.code, p.n, 0, NULL, 0, NULL, NULL, NULL, NULL);
    CHECK(rc == VGT_OK, "no io, result or error: %s", vgt_status_name(rc));
    /* the config caps the RAM: a smaller instruction RAM than the code given */
    vgt_mme_sim_config cfg = {.iram_dwords = 3};
    rc = vgt_mme_sim_run(&cfg, VGT_MME_TU104, p.code, p.n, 0, NULL, 0, NULL, NULL, &res, &err);
    CHECK(rc == VGT_E_DECODE && res.error == VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, "capped RAM: %s",
          vgt_mme_error_name(res.error));
}

static vgt_status sum_emit(void *user, uint32_t m, uint32_t v)
{
    *(uint64_t *)user += (uint64_t)m * 1000 + v;
    return m == 0xdead ? VGT_E_BACKEND : VGT_OK;
}

/* The emission list: bounded, dispatched in order, stops at the first failure. */
static void test_emit_list(void)
{
    vgt_mme_emit_list l = {.max = 3};
    CHECK(vgt_mme_emit_list_push(&l, 1, 10) == VGT_OK && vgt_mme_emit_list_push(&l, 2, 20) == VGT_OK &&
              vgt_mme_emit_list_push(&l, 3, 30) == VGT_OK,
          "push");
    CHECK(vgt_mme_emit_list_push(&l, 4, 40) == VGT_E_LIMIT && l.n == 3, "the fourth push is over the limit");
    uint64_t sum = 0;
    CHECK(vgt_mme_emit_list_dispatch(&l, sum_emit, &sum) == VGT_OK && sum == 6060, "dispatch sum %llu",
          (unsigned long long)sum);
    vgt_mme_emit_list_clear(&l);
    vgt_mme_emit_list_push(&l, 0xdead, 0);
    vgt_mme_emit_list_push(&l, 5, 0);
    sum = 0;
    CHECK(vgt_mme_emit_list_dispatch(&l, sum_emit, &sum) == VGT_E_BACKEND && sum == 0xdead * 1000ull,
          "dispatch stops at a failure");
    vgt_mme_emit_list_free(&l);
    CHECK(l.v == NULL && l.n == 0 && l.cap == 0, "free");

    /* a macro emitting more than the list takes ends with VGT_E_LIMIT, not a hardware class */
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM1);
    for (int i = 0; i < 4; i++) tu_add(&p, &in);
    tu_end(&p);
    vgt_mme_emit_list small = {.max = 5};
    vgt_mme_sim_io io = {.emit = vgt_mme_emit_list_push, .user = &small};
    vgt_mme_result res;
    vgt_error err;
    vgt_status rc = vgt_mme_sim_run(NULL, VGT_MME_TU104, p.code, p.n, 0, NULL, 0, &io, NULL, &res, &err);
    CHECK(rc == VGT_E_LIMIT && res.error == VGT_MME_OK && small.n == 5 && res.emits == 5 && res.pc == 2, "emit limit: %s at pc %u: %s",
          vgt_status_name(rc), res.pc, err.msg);
    vgt_mme_emit_list_free(&small);
}

static void test_tables(void)
{
    CHECK_EQ_U64(vgt_mme_format_for_class(0xC597), VGT_MME_TU104, "TURING_A");
    CHECK_EQ_U64(vgt_mme_format_for_class(0xCB97), VGT_MME_TU104, "HOPPER_A");
    CHECK_EQ_U64(vgt_mme_format_for_class(0xCBC0), VGT_MME_TU104, "HOPPER_COMPUTE_A");
    CHECK_EQ_U64(vgt_mme_format_for_class(0xC397), VGT_MME_FERMI, "VOLTA_A");
    CHECK_EQ_U64(vgt_mme_format_for_class(0x9097), VGT_MME_FERMI, "FERMI_A");
    CHECK_EQ_U64(vgt_mme_format_for_class(0x8297), VGT_MME_NONE, "TESLA");
    CHECK(vgt_mme_error_esr_bit(VGT_MME_MISSING_MACRO_DATA) == 0 && vgt_mme_error_esr_bit(VGT_MME_OK) == -1,
          "ESR bits");
    CHECK_EQ_U64(vgt_mme_error_esr_bit(VGT_MME_DMA_FIFO_RESIZED_WHEN_NONIDLE), 20, "ESR bit 20");
    for (int e = 0; e < VGT_MME_ERROR_COUNT_; e++)
        CHECK(vgt_mme_error_name((vgt_mme_error)e)[0] != '\0', "name of %d", e);
    CHECK(strcmp(vgt_mme_error_name((vgt_mme_error)99), "UNKNOWN_MME_ERROR") == 0, "unknown name");
    CHECK(strcmp(vgt_mme_tu104_op_name(31), "DWRITE") == 0 && strcmp(vgt_mme_tu104_reg_name(27), "IMM32") == 0 &&
          strcmp(vgt_mme_tu104_out_name(10), "IMM32") == 0 && strcmp(vgt_mme_tu104_op_name(99), "OP?") == 0,
          "TU104 names");
}

int main(void)
{
    test_params();
    test_illegal();
    test_multiply_outputs();
    test_control_errors();
    test_run_failures();
    test_emit_list();
    test_tables();
    return check_finish("test_mme_errors");
}
