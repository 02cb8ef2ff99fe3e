/* mme_enc.h: a tiny MME encoder for the unit tests: builds TU104 groups and Fermi words from the
 * decoded structs of vgt/mme.h, with the field layout written out independently of the decoder
 * (so a decoder bug does not hide in a round trip), plus a few shorthand constructors. */
#ifndef VGT_TEST_MME_ENC_H
#define VGT_TEST_MME_ENC_H

#include <stdint.h>
#include <string.h>

#include "vgt/mme.h"

/* Set bits hi:lo of a little-endian vector of 32-bit words. */
static inline void enc_put(uint32_t *b, unsigned hi, unsigned lo, uint32_t v)
{
    for (unsigned i = lo; i <= hi; i++) {
        uint32_t bit = (v >> (i - lo)) & 1;
        b[i / 32] = (b[i / 32] & ~(1u << (i % 32))) | bit << (i % 32);
    }
}

/* TU104: fields per open-gpu-doc MME64Group_init.cpp; out[0] is the high word (sent first). */
static inline void enc_tu104(const vgt_mme_tu104_inst *in, uint32_t out[3])
{
    uint32_t b[3] = {0, 0, 0};
    enc_put(b, 0, 0, in->end_next);
    enc_put(b, 4, 1, in->pred_mode);
    enc_put(b, 9, 5, in->pred);
    static const unsigned base[2] = {10, 46}, imm_lo[2] = {30, 66};
    for (int i = 0; i < 2; i++) {
        enc_put(b, base[i] + 4, base[i], in->alu[i].op);
        enc_put(b, base[i] + 9, base[i] + 5, in->alu[i].dst);
        enc_put(b, base[i] + 14, base[i] + 10, in->alu[i].src[0]);
        enc_put(b, base[i] + 19, base[i] + 15, in->alu[i].src[1]);
        enc_put(b, imm_lo[i] + 15, imm_lo[i], in->alu[i].imm);
    }
    enc_put(b, 84, 82, in->out[0].mthd);
    enc_put(b, 88, 85, in->out[0].emit);
    enc_put(b, 91, 89, in->out[1].mthd);
    enc_put(b, 95, 92, in->out[1].emit);
    out[0] = b[2];
    out[1] = b[1];
    out[2] = b[0];
}

/* A group that does nothing: both ALUs ADD ZERO, ZERO, ZERO, no outputs. */
static inline vgt_mme_tu104_inst tu_nop(void)
{
    vgt_mme_tu104_inst in;
    memset(&in, 0, sizeof in);
    for (int i = 0; i < 2; i++) {
        in.alu[i].op = VGT_MME_TU104_ADD;
        in.alu[i].dst = in.alu[i].src[0] = in.alu[i].src[1] = VGT_MME_TU104_ZERO;
    }
    in.pred = VGT_MME_TU104_ZERO;
    return in;
}

static inline void tu_alu(vgt_mme_tu104_inst *in, int i, unsigned op, unsigned dst, unsigned s0, unsigned s1, uint16_t imm)
{
    in->alu[i].op = (uint8_t)op;
    in->alu[i].dst = (uint8_t)dst;
    in->alu[i].src[0] = (uint8_t)s0;
    in->alu[i].src[1] = (uint8_t)s1;
    in->alu[i].imm = imm;
}

static inline void tu_out(vgt_mme_tu104_inst *in, int i, unsigned mthd, unsigned emit)
{
    in->out[i].mthd = (uint8_t)mthd;
    in->out[i].emit = (uint8_t)emit;
}

/* The immediate that selects method byte address m with increment inc (facts: (v & 0xfff) << 2). */
static inline uint16_t tu_mthd_imm(uint32_t m, uint32_t inc) { return (uint16_t)((m >> 2) | (inc << 12)); }

/* A program under construction. */
typedef struct enc_prog {
    uint32_t code[0x3000];
    uint32_t n;   /* dwords */
} enc_prog;

static inline uint32_t tu_add(enc_prog *p, const vgt_mme_tu104_inst *in)
{
    uint32_t at = p->n / 3;
    enc_tu104(in, p->code + p->n);
    p->n += 3;
    return at;
}

/* End the program: the last group gets end_next, then one more no-op group runs. */
static inline void tu_end(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    in.end_next = true;
    tu_add(p, &in);
    in = tu_nop();
    tu_add(p, &in);
}

/* The program's length in instructions: the unit of LOAD_MME_INSTRUCTION_RAM_POINTER and of start
 * addresses (vgt/mme.h "Units": TU104 3-dword groups, Fermi dwords). */
static inline uint32_t enc_insts(vgt_mme_format fmt, const enc_prog *p) { return p->n / vgt_mme_inst_dwords(fmt); }

/* Upload p at instruction `at` through class cls of a channel's tracker and bind macro j to it, as
 * the NVIDIA driver does (corpus/gl_egl.vgt): start-address pointer and entry, then the instruction RAM
 * pointer and the body. */
static inline vgt_status enc_upload(vgt_mme_tracker *t, uint32_t cls, uint32_t at, const enc_prog *p, uint32_t j,
                                    vgt_error *err)
{
    VGT_TRY(vgt_mme_tracker_feed_class(t, cls, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, j, err));
    VGT_TRY(vgt_mme_tracker_feed_class(t, cls, VGT_MME_M_LOAD_START_ADDRESS_RAM, at, err));
    VGT_TRY(vgt_mme_tracker_feed_class(t, cls, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, at, err));
    for (uint32_t i = 0; i < p->n; i++)
        VGT_TRY(vgt_mme_tracker_feed_class(t, cls, VGT_MME_M_LOAD_INSTRUCTION_RAM, p->code[i], err));
    return VGT_OK;
}

/* Fermi: fields per envytools envydis/macro.c and Mesa mme_fermi.c. */
static inline uint32_t enc_fermi(const vgt_mme_fermi_inst *in)
{
    uint32_t w = 0;
    enc_put(&w, 3, 0, in->op);
    enc_put(&w, 7, 7, in->end_next);
    enc_put(&w, 10, 8, in->dst);
    enc_put(&w, 13, 11, in->src[0]);
    if (in->op == VGT_MME_FERMI_BRANCH) {
        enc_put(&w, 4, 4, in->not_zero);
        enc_put(&w, 5, 5, in->no_delay);
        enc_put(&w, 31, 14, (uint32_t)in->imm);
        return w;
    }
    enc_put(&w, 6, 4, in->assign);
    if (in->op == VGT_MME_FERMI_ADD_IMM || in->op == VGT_MME_FERMI_STATE) {
        enc_put(&w, 31, 14, (uint32_t)in->imm);
        return w;
    }
    enc_put(&w, 16, 14, in->src[1]);
    if (in->op == VGT_MME_FERMI_ALU_REG) {
        enc_put(&w, 21, 17, in->alu_op);
        return w;
    }
    enc_put(&w, 21, 17, in->src_bit);
    enc_put(&w, 26, 22, in->size);
    enc_put(&w, 31, 27, in->dst_bit);
    return w;
}

static inline uint32_t fe_alu(unsigned alu_op, unsigned assign, unsigned dst, unsigned a, unsigned b)
{
    vgt_mme_fermi_inst in = {.op = VGT_MME_FERMI_ALU_REG, .alu_op = (uint8_t)alu_op, .assign = (uint8_t)assign,
                             .dst = (uint8_t)dst, .src = {(uint8_t)a, (uint8_t)b}};
    return enc_fermi(&in);
}

static inline uint32_t fe_imm(unsigned op, unsigned assign, unsigned dst, unsigned a, int32_t imm)
{
    vgt_mme_fermi_inst in = {.op = (uint8_t)op, .assign = (uint8_t)assign, .dst = (uint8_t)dst,
                             .src = {(uint8_t)a, 0}, .imm = imm};
    return enc_fermi(&in);
}

static inline uint32_t fe_bits(unsigned op, unsigned assign, unsigned dst, unsigned a, unsigned b, unsigned src_bit,
                               unsigned size, unsigned dst_bit)
{
    vgt_mme_fermi_inst in = {.op = (uint8_t)op, .assign = (uint8_t)assign, .dst = (uint8_t)dst,
                             .src = {(uint8_t)a, (uint8_t)b}, .src_bit = (uint8_t)src_bit,
                             .size = (uint8_t)size, .dst_bit = (uint8_t)dst_bit};
    return enc_fermi(&in);
}

static inline uint32_t fe_branch(bool not_zero, bool no_delay, unsigned a, int32_t offset)
{
    vgt_mme_fermi_inst in = {.op = VGT_MME_FERMI_BRANCH, .not_zero = not_zero, .no_delay = no_delay,
                             .src = {(uint8_t)a, 0}, .imm = offset};
    return enc_fermi(&in);
}

static inline uint32_t fe_exit(uint32_t w) { return w | 0x80u; }

/* ADD_IMM with MOVE into R0: a no-op. */
static inline uint32_t fe_nop(void) { return fe_imm(VGT_MME_FERMI_ADD_IMM, VGT_MME_FERMI_MOVE, 0, 0, 0); }

/* ---- test harness shared by tests/unit/test_mme_*.c ----------------------------------------------- */
#include "check.h"   /* CHECK and the failure count */

/* Fake GPU memory for DMA: MEM_WORDS words at MEM_BASE; reads elsewhere fail. */
#define MEM_BASE 0x123400000000ull
#define MEM_WORDS 8192u
static uint32_t mem_words[MEM_WORDS];

static inline vgt_status fake_read_mem(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    (void)user;
    if (va < MEM_BASE || va - MEM_BASE > 4ull * MEM_WORDS || len > 4ull * MEM_WORDS - (va - MEM_BASE))
        return vgt_fail(err, VGT_E_FAULT, va, "address 0x%llx+%zu is not mapped", (unsigned long long)va, len);
    memcpy(dst, (const unsigned char *)mem_words + (va - MEM_BASE), len);
    return VGT_OK;
}

/* A shadow state for STATE: scratch[i] answers method 0x3400 + 4i, other methods read m ^ 0x5a5a0000. */
static uint32_t shadow_scratch[256];
static inline uint32_t fake_state(void *user, uint32_t m)
{
    (void)user;
    if (m >= 0x3400 && m < 0x3800) return shadow_scratch[(m - 0x3400) / 4];
    return m ^ 0x5a5a0000u;
}

/* One simulator run with the fake memory and state, collecting emissions into *out. */
typedef struct sim_out {
    vgt_status rc;
    vgt_mme_result res;
    vgt_error err;
    vgt_mme_emit_list emits;
} sim_out;

static inline void sim_run(vgt_mme_format fmt, const enc_prog *p, uint32_t start, const uint32_t *params, uint32_t n,
                           vgt_mme_machine *m, uint64_t max_instr, sim_out *o)
{
    vgt_mme_emit_list_free(&o->emits);
    memset(o, 0, sizeof *o);
    vgt_mme_sim_io io = {.emit = vgt_mme_emit_list_push, .state = fake_state, .read_mem = fake_read_mem,
                         .user = &o->emits};
    /* the emit list is io.user; state/read_mem ignore user */
    vgt_mme_sim_config cfg = {.max_instructions = max_instr};
    vgt_error_clear(&o->err);
    o->rc = vgt_mme_sim_run(&cfg, fmt, p->code, p->n, start, params, n, &io, m, &o->res, &o->err);
}

/* Expect exactly these (method, value) pairs. */
static inline void expect_emits(const char *what, const sim_out *o, const uint32_t *pairs, uint32_t npairs)
{
    CHECK(o->emits.n == npairs, "%s: %u emits, expected %u (rc %s, %s)", what, o->emits.n, npairs,
          vgt_status_name(o->rc), o->err.msg);
    for (uint32_t i = 0; i < npairs && i < o->emits.n; i++)
        CHECK(o->emits.v[i].method == pairs[2 * i] && o->emits.v[i].value == pairs[2 * i + 1],
              "%s: emit %u is (0x%04x, 0x%08x), expected (0x%04x, 0x%08x)", what, i, o->emits.v[i].method,
              o->emits.v[i].value, pairs[2 * i], pairs[2 * i + 1]);
}

static inline void expect_error(const char *what, const sim_out *o, vgt_mme_error e)
{
    if (e == VGT_MME_OK)
        CHECK(o->rc == VGT_OK && o->res.error == VGT_MME_OK, "%s: expected success, got %s / %s: %s", what,
              vgt_status_name(o->rc), vgt_mme_error_name(o->res.error), o->err.msg);
    else
        CHECK(o->rc == VGT_E_DECODE && o->res.error == e, "%s: expected %s, got %s / %s: %s", what,
              vgt_mme_error_name(e), vgt_status_name(o->rc), vgt_mme_error_name(o->res.error), o->err.msg);
}

/* The common ending of a case: a clean exit with exactly these emissions, then the list freed. */
static inline void expect_clean_run(const char *what, sim_out *o, const uint32_t *pairs, uint32_t npairs)
{
    expect_error(what, o, VGT_MME_OK);
    expect_emits(what, o, pairs, npairs);
    vgt_mme_emit_list_free(&o->emits);
}

/* A TU104 group from raw fields, both ALUs ADD into ZERO (no register changes): src0 LOAD0 / LOAD1 for
 * the first `loads` ALUs (else ZERO), immediates imm0/imm1, out0 method source m0 emitting e0, out1 m1
 * emitting e1 (output sources: IMM0 5, LOAD0 3, LOAD1 4, IMM32 10; registers ZERO 24, LOAD0 28, LOAD1
 * 29; fields as in enc_tu104). */
static inline void enc_tu104_raw(uint32_t out[3], int end_next, uint16_t imm0, uint16_t imm1, unsigned m0,
                                 unsigned e0, unsigned m1, unsigned e1, int loads)
{
    uint32_t b[3] = {0, 0, 0};
    enc_put(b, 0, 0, (uint32_t)end_next);
    enc_put(b, 9, 5, 24);   /* predicate register ZERO, mode UUUU */
    for (int i = 0; i < 2; i++) {
        unsigned base = i ? 46 : 10;
        enc_put(b, base + 4, base, 0);                                    /* ADD */
        enc_put(b, base + 9, base + 5, 24);                               /* dst ZERO */
        enc_put(b, base + 14, base + 10, i < loads ? (i ? 29u : 28u) : 24u);
        enc_put(b, base + 19, base + 15, 24);
    }
    enc_put(b, 45, 30, imm0);
    enc_put(b, 81, 66, imm1);
    enc_put(b, 84, 82, m0);
    enc_put(b, 88, 85, e0);
    enc_put(b, 91, 89, m1);
    enc_put(b, 95, 92, e1);
    out[0] = b[2], out[1] = b[1], out[2] = b[0];
}

/* A 4-group macro that releases a report semaphore from its parameters: SET_REPORT_SEMAPHORE_A/B
 * (0x1b00, 0x1b04) from the first two, C (0x1b08) from the third, D (0x1b0c) = 0x1000_0000 (a one-word
 * release). */
static inline void enc_report_release_macro(uint32_t code[12])
{
    enc_tu104_raw(code, 0, (uint16_t)(0x1b00 >> 2 | 1u << 12), 0, 5, 3, 0, 4, 2);
    enc_tu104_raw(code + 3, 0, 0x1000, 0x0000, 0, 3, 0, 10, 1);
    enc_tu104_raw(code + 6, 1, 0, 0, 0, 0, 0, 0, 0);
    enc_tu104_raw(code + 9, 0, 0, 0, 0, 0, 0, 0, 0);
}

#endif
