/* test_mme_hostile.c: random and mutated macros, parameters and method streams must end with a
 * result or an error class, never a crash, a hang or a read outside the buffers (run under ASan with
 * -DVGT_SANITIZE=ON). Checks the result's invariants on every run. Fixed seeds: reproducible. */
#include "mme_enc.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static vgt_status count_emit(void *user, uint32_t m, uint32_t v)
{
    (void)m, (void)v;
    (*(uint64_t *)user)++;
    return VGT_OK;
}

/* Memory that answers every third address range with a failure, the rest with noise. */
static vgt_status noisy_mem(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    (void)user;
    if ((va >> 12) % 3 == 0) return vgt_fail(err, VGT_E_FAULT, va, "unmapped 0x%llx", (unsigned long long)va);
    unsigned char *d = dst;
    for (size_t i = 0; i < len; i++) d[i] = (unsigned char)(va + i * 7);
    return VGT_OK;
}

static void check_run(vgt_mme_format fmt, const uint32_t *code, uint32_t n, uint32_t start, const uint32_t *params,
                      uint32_t np, uint64_t limit, vgt_mme_machine *m)
{
    uint64_t emits = 0;
    vgt_mme_sim_io io = {.emit = count_emit, .state = fake_state, .read_mem = noisy_mem, .user = &emits};
    vgt_mme_sim_config cfg = {.max_instructions = limit};
    vgt_mme_result res;
    vgt_error err;
    vgt_error_clear(&err);
    vgt_status rc = vgt_mme_sim_run(&cfg, fmt, code, n, start, params, np, &io, m, &res, &err);
    CHECK(rc == VGT_OK || rc == VGT_E_DECODE, "%s: status %s: %s", vgt_mme_format_name(fmt), vgt_status_name(rc), err.msg);
    CHECK((rc == VGT_OK) == (res.error == VGT_MME_OK), "status %s with class %s", vgt_status_name(rc),
          vgt_mme_error_name(res.error));
    CHECK(res.instructions <= limit, "%llu instructions over the limit", (unsigned long long)res.instructions);
    CHECK(res.emits == emits, "%u emits counted, %llu seen", res.emits, (unsigned long long)emits);
    CHECK(res.params_consumed <= np, "consumed %u of %u", res.params_consumed, np);
    CHECK(res.fifo_words_consumed <= res.fifo_words_read, "FIFO %u of %u", res.fifo_words_consumed, res.fifo_words_read);
    CHECK(rc == VGT_OK || err.msg[0], "an error without a message");
    char line[512];
    for (uint32_t at = start; at < n && at < start + 64; at += vgt_mme_inst_dwords(fmt))
        vgt_mme_disasm_line(fmt, code, n, start, at, VGT_MME_DISASM_RAW, line, sizeof line);
    vgt_mme_body_hash(fmt, code, n, start, NULL);
}

static void random_macros(vgt_mme_format fmt, int rounds)
{
    vgt_mme_machine *m = calloc(1, sizeof *m);
    uint32_t *code = malloc(0x3000 * sizeof *code);
    uint32_t params[64];
    for (int r = 0; r < rounds; r++) {
        uint32_t n = 1 + rnd() % 300, np = rnd() % 64;
        for (uint32_t i = 0; i < n; i++) code[i] = rnd() ^ rnd() << 16;
        for (uint32_t i = 0; i < np; i++) params[i] = rnd() % 4 ? rnd() % 16 : rnd();
        /* make exits and DMA methods likelier than pure noise would */
        if (fmt == VGT_MME_TU104)
            for (uint32_t i = 2; i < n; i += 3) code[i] |= rnd() % 4 == 0;
        check_run(fmt, code, n, rnd() % 4 == 0 ? rnd() % (n + 2) : 0, params, np, 1 + rnd() % 20000, m);
    }
    free(code);
    free(m);
}

/* Random instructions drawn from the legal encodings, so that runs go deep instead of stopping at
 * the first ILLEGAL_OPCODE. */
static vgt_mme_tu104_inst random_tu104(void)
{
    static const uint8_t outs[] = {0, 1, 2, 3, 4, 5, 6, 8, 9, 10};
    vgt_mme_tu104_inst in = tu_nop();
    in.end_next = rnd() % 16 == 0;
    in.pred_mode = rnd() % 3 ? 0 : (uint8_t)(rnd() % 16);
    in.pred = (uint8_t)(rnd() % 24);
    for (int i = 0; i < 2; i++) {
        unsigned op = rnd() % 32;
        if (i == 0 && (op == VGT_MME_TU104_ADDC || op == VGT_MME_TU104_SUBB || op == VGT_MME_TU104_MULH)) op = 0;
        if (i == 1 && op == VGT_MME_TU104_STATE) op = VGT_MME_TU104_ADD;
        tu_alu(&in, i, op, rnd() % 25, rnd() % 28, rnd() % 28, (uint16_t)rnd());
        if (op >= VGT_MME_TU104_BLT && op <= VGT_MME_TU104_BEQ && rnd() % 2)   /* short branches */
            in.alu[i].imm = (uint16_t)((in.alu[i].imm & 0x8000) | ((rnd() % 9 - 4) & 0x1fff));
        if (op == VGT_MME_TU104_LOOP || op == VGT_MME_TU104_JAL) in.alu[i].imm = (uint16_t)(0x8000 | rnd() % 8);
        in.out[i].mthd = outs[rnd() % 7];
        in.out[i].emit = outs[rnd() % 10];
    }
    if (rnd() % 4 == 0) in.alu[0].src[0] = VGT_MME_TU104_LOAD0;
    /* a multiply's result reaches the outputs only from a later group (vgt_mme_tu104_check()) */
    for (int a = 0; a < 2; a++) {
        unsigned op = in.alu[a].op, src = VGT_MME_OUT_ALU0 + (unsigned)a;
        if (op != VGT_MME_TU104_MUL && op != VGT_MME_TU104_MULU && op != VGT_MME_TU104_MULH) continue;
        for (int o = 0; o < 2; o++) {
            if (in.out[o].mthd == src) in.out[o].mthd = VGT_MME_OUT_NONE;
            if (in.out[o].emit == src) in.out[o].emit = VGT_MME_OUT_NONE;
        }
    }
    return in;
}

static uint32_t random_fermi(void)
{
    static const uint8_t ops[] = {0, 1, 2, 3, 4, 5, 7}, alu[] = {0, 1, 2, 3, 8, 9, 10, 11, 12};
    vgt_mme_fermi_inst in = {.op = ops[rnd() % 7], .assign = (uint8_t)(rnd() % 8), .end_next = rnd() % 16 == 0,
                             .dst = (uint8_t)(rnd() % 8), .src = {(uint8_t)(rnd() % 8), (uint8_t)(rnd() % 8)},
                             .alu_op = alu[rnd() % 9], .imm = (int32_t)(rnd() % 64) - 32,
                             .src_bit = (uint8_t)(rnd() % 32), .size = (uint8_t)(rnd() % 32),
                             .dst_bit = (uint8_t)(rnd() % 32), .not_zero = rnd() % 2, .no_delay = rnd() % 2};
    return enc_fermi(&in);
}

static void legal_macros(vgt_mme_format fmt, int rounds)
{
    vgt_mme_machine *m = calloc(1, sizeof *m);
    enc_prog *p = malloc(sizeof *p);
    uint32_t params[256];
    for (int r = 0; r < rounds; r++) {
        uint32_t insts = 1 + rnd() % 40, np = rnd() % 256;
        p->n = 0;
        for (uint32_t i = 0; i < insts; i++) {
            if (fmt == VGT_MME_TU104) {
                vgt_mme_tu104_inst in = random_tu104();
                tu_add(p, &in);
            } else {
                p->code[p->n++] = random_fermi();
            }
        }
        for (uint32_t i = 0; i < np; i++) params[i] = rnd() % 4 ? rnd() % 8 : rnd();
        check_run(fmt, p->code, p->n, 0, params, np, 1 + rnd() % 50000, m);
    }
    free(p);
    free(m);
}

/* The decoded-instruction cache changes no result: macros run on one long-lived machine (its cache warm,
 * the instruction RAM rewritten in place between calls, more distinct instructions than cache slots so
 * that slots are replaced) behave exactly as on a machine with the same architectural state and an
 * empty cache: same status, message, result, emitted stream and machine state after. */
static vgt_status hash_emit(void *user, uint32_t m, uint32_t v)
{
    uint64_t *h = user;
    *h = (*h ^ ((uint64_t)m << 32 | v)) * 0x100000001b3ull;
    return VGT_OK;
}

static void cache_differential(vgt_mme_format fmt, int rounds)
{
    vgt_mme_machine *warm = calloc(1, sizeof *warm);
    enc_prog *p = calloc(1, sizeof *p);
    uint32_t params[64];
    for (int r = 0; r < rounds; r++) {
        /* rewrite a random stretch of the RAM in place: addresses the cache has seen get new words */
        uint32_t insts = 1 + rnd() % 40, at = (rnd() % 8) * 40, keep = rnd() % 3;
        for (uint32_t i = 0; i < insts; i++) {
            if (fmt == VGT_MME_TU104) {
                vgt_mme_tu104_inst in = random_tu104();
                uint32_t *c = p->code + 3 * (at + i);
                enc_tu104(&in, c);
                /* groups that differ in one dword only share cache slots often: the whole key is compared */
                if (keep) c[0] = p->code[0], c[keep] = p->code[keep];
            } else {
                p->code[at + i] = random_fermi();
            }
        }
        uint32_t step = vgt_mme_inst_dwords(fmt), n = 8 * 40 * step, np = rnd() % 64;
        for (uint32_t i = 0; i < np; i++) params[i] = rnd() % 4 ? rnd() % 8 : rnd();
        vgt_mme_machine *fresh = calloc(1, sizeof *fresh);
        memcpy(fresh, warm, offsetof(vgt_mme_machine, decoded));   /* the architectural state, no cache */
        vgt_mme_result res[2];
        vgt_error err[2];
        uint64_t h[2] = {0, 0};
        vgt_status rc[2];
        vgt_mme_machine *ms[2] = {warm, fresh};
        uint64_t limit = 1 + rnd() % 5000;
        for (int k = 0; k < 2; k++) {
            vgt_mme_sim_io io = {.emit = hash_emit, .state = fake_state, .read_mem = noisy_mem, .user = &h[k]};
            vgt_mme_sim_config cfg = {.max_instructions = limit};
            vgt_error_clear(&err[k]);
            rc[k] = vgt_mme_sim_run(&cfg, fmt, p->code, n, at * step, params, np, &io, ms[k], &res[k], &err[k]);
        }
        CHECK(rc[0] == rc[1] && strcmp(err[0].msg, err[1].msg) == 0, "%s round %d: '%s' vs '%s'",
              vgt_mme_format_name(fmt), r, err[0].msg, err[1].msg);
        CHECK(memcmp(&res[0], &res[1], sizeof res[0]) == 0 && h[0] == h[1], "%s round %d: results differ",
              vgt_mme_format_name(fmt), r);
        CHECK(memcmp(warm, fresh, offsetof(vgt_mme_machine, decoded)) == 0, "%s round %d: machine states differ",
              vgt_mme_format_name(fmt), r);
        free(fresh);
    }
    free(p);
    free(warm);
}

/* Mutations of a real-looking TU104 macro with loops, DMA and branches. */
static void mutated_macros(int rounds)
{
    enc_prog base = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, VGT_MME_TU104_LOAD0, VGT_MME_TU104_ZERO, tu_mthd_imm(0x550, 1));
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
    tu_add(&base, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_LOOP, VGT_MME_TU104_ZERO, 1, VGT_MME_TU104_ZERO, 3);
    tu_add(&base, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_DWRITE, VGT_MME_TU104_ZERO, 1, VGT_MME_TU104_LOAD0, 0);
    tu_alu(&in, 1, VGT_MME_TU104_STATE, 2, VGT_MME_TU104_IMM, 1, 0xd00);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(&base, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_BLT, VGT_MME_TU104_ZERO, 1, VGT_MME_TU104_IMM, 0x8000 | 0x1ffe);
    tu_out(&in, 1, VGT_MME_OUT_IMM1, VGT_MME_OUT_LOAD0);
    tu_add(&base, &in);
    tu_end(&base);
    enc_prog p;
    uint32_t params[8];
    for (int r = 0; r < rounds; r++) {
        p = base;
        for (int k = rnd() % 4; k >= 0; k--) p.code[rnd() % p.n] ^= 1u << (rnd() % 32);
        for (int i = 0; i < 8; i++) params[i] = rnd() % 8;
        check_run(VGT_MME_TU104, p.code, p.n, 0, params, 1 + rnd() % 8, 100000, NULL);
    }
}

/* A random method stream into trackers of both formats. */
static vgt_status drop_call(void *user, const vgt_mme_call *c, vgt_error *err)
{
    (void)err;
    (*(uint64_t *)user)++;
    CHECK(c->nemits == c->result->emits || c->status != VGT_OK, "call emits %u vs %u", c->nemits, c->result->emits);
    return VGT_OK;
}

static void random_streams(uint32_t cls, int writes)
{
    uint64_t calls = 0;
    vgt_mme_tracker_config cfg = {.cls = cls, .on_call = drop_call, .user = &calls, .read_mem = noisy_mem,
                                  .sim = {.max_instructions = 4096}, .max_call_params = 256};
    vgt_mme_tracker *t;
    vgt_error err;
    if (vgt_mme_tracker_create(&cfg, &t, &err) != VGT_OK) {
        CHECK(0, "create: %s", err.msg);
        return;
    }
    static const uint32_t methods[] = {0x114, 0x118, 0x118, 0x118, 0x11c, 0x120, 0x124, 0x550, 0x554, 0x558,
                                       0x55c, 0x560, 0x570, 0x574, 0x3400, 0x3800, 0x3804, 0x3808, 0x380c, 0x1000};
    for (int i = 0; i < writes; i++) {
        uint32_t m = methods[rnd() % (sizeof methods / sizeof methods[0])];
        if (m == 0x3400 || m == 0x1000) m += 4 * (rnd() % 64);
        uint32_t v = rnd() % 3 ? rnd() % 64 : rnd() ^ rnd() << 16;
        if (m == 0x114) v = rnd() % 0x3100;
        CHECK_STATUS(vgt_mme_tracker_feed(t, m, v, &err), VGT_OK, &err, "feed");
    }
    CHECK_STATUS(vgt_mme_tracker_flush(t, &err), VGT_OK, &err, "flush");
    CHECK_EQ_U64(vgt_mme_tracker_stats_get(t)->calls, calls, "calls");
    vgt_mme_tracker_destroy(t);
}

int main(void)
{
    random_macros(VGT_MME_TU104, 3000);
    random_macros(VGT_MME_FERMI, 3000);
    mutated_macros(3000);
    cache_differential(VGT_MME_TU104, 3000);
    cache_differential(VGT_MME_FERMI, 3000);
    legal_macros(VGT_MME_TU104, 5000);
    legal_macros(VGT_MME_FERMI, 5000);
    random_streams(0xC597, 200000);
    random_streams(0x9097, 200000);
    /* a macro that never exits runs into the default limit, not forever */
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, VGT_MME_TU104_ZERO, VGT_MME_TU104_ZERO, VGT_MME_TU104_ZERO, 0x8000);
    tu_add(&p, &in);
    vgt_mme_result res;
    vgt_status rc = vgt_mme_sim_run(NULL, VGT_MME_TU104, p.code, p.n, 0, NULL, 0, NULL, NULL, &res, NULL);
    CHECK(rc == VGT_E_DECODE && res.error == VGT_MME_MAX_INSTR_LIMIT &&
              res.instructions == VGT_MME_DEFAULT_MAX_INSTRUCTIONS,
          "default limit: %s after %llu", vgt_mme_error_name(res.error), (unsigned long long)res.instructions);
    return check_finish("test_mme_hostile");
}
