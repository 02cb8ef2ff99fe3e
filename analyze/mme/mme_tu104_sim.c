/* mme_tu104_sim.c: executes TU104 instruction groups.
 *
 * Semantics (facts section 1; Mesa src/nouveau/mme/mme_tu104_sim.c, checked against hardware there):
 *   1. the group pops its parameters first (LOAD0, then LOAD1), whatever the predicate says;
 *   2. predicate mask bit i is set when letter i != (Rp != 0 ? 'T' : 'F'), so 'U' always runs and
 *      'T' runs when Rp == 0 (the facts' pitfall: the letters read inverted);
 *   3. ALU0, ALU1, OUT0, OUT1 in that order; an output sees both ALU results of the group;
 *   4. a branch taken with offset 0x1000 (13-bit -4096) exits after the group; end_next lets one more
 *      group run, then stops; LOOP repeats [ip+1 .. ip+imm-1] max(x,1) times in total;
 *   5. a conditional branch that is taken cancels the end_next of its own group: execution goes on at the
 *      target as if the flag were clear; only when the branch falls through does end_next end the macro.
 *      Measured on an H200 with tests/gpu/mme_agree.sh (rows b14_loop, b14_loop_ctl, 2026-12-02): a loop
 *      closing with BEQ ?F -> loop and end_next ran 3 iterations, then the group after the branch, then
 *      stopped; Mesa's simulator (and ours before) ran the target once and stopped. NVIDIA's driver puts
 *      end_next on its loop-closing branches in this form.
 *      Such a loop can also wait on an outside agent: the driver's firmware-method macro spins
 *      "STATE R0, SCRATCH(0) ; BEQ R0, #1 ?F -> back, end_next" until the firmware writes the scratch
 *      register, which the simulator does not model (the iteration count is the firmware's). When the
 *      branch is taken again with the registers, carry, current method and parameter position all as they
 *      were the last time it was taken, nothing in the simulator can end the loop: the macro ends there
 *      (the emissions of one pass, as before this rule) [not modelled: the number of passes].
 * State not named by the facts: registers start at 0; ALU results, carry and the current method
 * persist across groups (a predicated-off ALU leaves its previous result for the outputs).
 */
#include <string.h>

#include "mme_internal.h"

typedef struct tu_state {
    uint32_t regs[24];
    uint32_t load[2];
    uint32_t alu_res[2];
    uint32_t carry;          /* carry of ADD, borrow of SUB, high half of MUL/MULU */
    int64_t ip, next_ip;
    bool stop;
    bool taken;              /* this group's conditional branch was taken (rule 5) */
    struct {                 /* the machine when an end_next branch was last taken (rule 5's spin) */
        int64_t ip;
        uint32_t regs[24], carry, mthd, next_param, fifo_head;
    } spin;
    uint32_t loop_count;
    int64_t loop_start, loop_end;
} tu_state;

static uint32_t src_value(const tu_state *s, const vgt_mme_tu104_inst *in, int alu, unsigned reg)
{
    if (reg < 24) return s->regs[reg];
    switch (reg) {
    case VGT_MME_TU104_IMM: return (uint32_t)(int32_t)(int16_t)in->alu[alu].imm;       /* sign-extended */
    case VGT_MME_TU104_IMMPAIR: return (uint32_t)(int32_t)(int16_t)in->alu[1 - alu].imm;
    case VGT_MME_TU104_IMM32: return (uint32_t)in->alu[0].imm << 16 | in->alu[1].imm;
    case VGT_MME_TU104_LOAD0: return s->load[0];
    case VGT_MME_TU104_LOAD1: return s->load[1];
    default: return 0;   /* ZERO; 30/31 were refused by vgt_mme_tu104_check() */
    }
}

/* The predicate register: IMM/IMMPAIR were refused by the check, so alu index 0 is never used. */
static uint8_t pred_mask(const tu_state *s, const vgt_mme_tu104_inst *in)
{
    if (in->pred_mode == 0) return 0xf;
    const char *letters = vgt_mme_tu104_pred_name(in->pred_mode);
    char want = src_value(s, in, 0, in->pred) ? 'T' : 'F';
    uint8_t mask = 0;
    for (int i = 0; i < 4; i++)
        if (letters[i] != want) mask |= (uint8_t)(1u << i);
    return mask;
}

static bool compare(unsigned op, uint32_t x, uint32_t y)
{
    switch (op) {
    case VGT_MME_TU104_SLT: case VGT_MME_TU104_BLT: return (int32_t)x < (int32_t)y;
    case VGT_MME_TU104_SLTU: case VGT_MME_TU104_BLTU: return x < y;
    case VGT_MME_TU104_SLE: case VGT_MME_TU104_BLE: return (int32_t)x <= (int32_t)y;
    case VGT_MME_TU104_SLEU: case VGT_MME_TU104_BLEU: return x <= y;
    default: return x == y;   /* SEQ, BEQ */
    }
}

static uint32_t arith(tu_state *s, unsigned op, uint32_t x, uint32_t y)
{
    uint64_t wide;
    switch (op) {
    case VGT_MME_TU104_ADD: wide = (uint64_t)x + y; s->carry = (uint32_t)(wide >> 32); return (uint32_t)wide;
    case VGT_MME_TU104_ADDC: return x + y + s->carry;
    case VGT_MME_TU104_SUB: s->carry = y > x; return x - y;
    case VGT_MME_TU104_SUBB: return x - y - s->carry;
    case VGT_MME_TU104_MUL:   /* signed 32x32 -> 64, high half kept for MULH */
        wide = (uint64_t)((int64_t)(int32_t)x * (int64_t)(int32_t)y);
        s->carry = (uint32_t)(wide >> 32);
        return (uint32_t)wide;
    case VGT_MME_TU104_MULH: return s->carry;
    case VGT_MME_TU104_MULU: wide = (uint64_t)x * y; s->carry = (uint32_t)(wide >> 32); return (uint32_t)wide;
    case VGT_MME_TU104_CLZ: return x ? (uint32_t)__builtin_clz(x) : 32;
    case VGT_MME_TU104_SLL: return x << (y & 31);
    case VGT_MME_TU104_SRL: return x >> (y & 31);
    case VGT_MME_TU104_SRA: return (uint32_t)((int32_t)x >> (y & 31));
    case VGT_MME_TU104_AND: return x & y;
    case VGT_MME_TU104_NAND: return ~(x & y);
    case VGT_MME_TU104_OR: return x | y;
    case VGT_MME_TU104_XOR: return x ^ y;
    default: return compare(op, x, y) ? ~0u : 0u;   /* SLT..SEQ */
    }
}

/* Branches BLT..BEQ: taken when the comparison equals imm bit 15; target ip + sext13(imm); a 13-bit
 * offset of 0x1000 exits. JAL: ip + imm[14:0], writes 0 (Mesa) [a link value is unconfirmed]. */
static vgt_status control(mme_run *r, tu_state *s, unsigned op, uint16_t imm, uint32_t x, uint32_t y)
{
    if (op == VGT_MME_TU104_JAL) {
        s->next_ip = s->ip + (imm & 0x7fff);
        return VGT_OK;
    }
    if (op == VGT_MME_TU104_LOOP) {
        s->loop_count = (x ? x : 1) - 1;
        s->loop_start = s->ip;
        s->loop_end = s->ip + imm - 1;
        return VGT_OK;
    }
    if (compare(op, x, y) != ((imm >> 15) & 1)) return VGT_OK;
    if ((imm & 0x1fff) == 0x1000) {
        s->stop = true;
        return VGT_OK;
    }
    s->next_ip = s->ip + mme_sext(imm, 13);
    s->taken = true;
    if (s->next_ip < 0)
        return mme_run_fail(r, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, "branch to index %lld before the start",
                            (long long)s->next_ip);
    return VGT_OK;
}

static vgt_status data_ram(mme_run *r, unsigned op, uint32_t x, uint32_t y, uint32_t *res)
{
    if (x >= VGT_MME_DATA_RAM_WORDS)
        return mme_run_fail(r, VGT_MME_DATA_RAM_ACCESS_OUT_OF_BOUNDS, "%s at data RAM word %u, RAM has %u",
                            vgt_mme_tu104_op_name(op), x, VGT_MME_DATA_RAM_WORDS);
    if (op == VGT_MME_TU104_DREAD)
        *res = r->m->data_ram[x];
    else
        r->m->data_ram[x] = y;
    return VGT_OK;
}

static vgt_status alu(mme_run *r, tu_state *s, const vgt_mme_tu104_inst *in, int i)
{
    const vgt_mme_tu104_alu *a = &in->alu[i];
    uint32_t x = src_value(s, in, i, a->src[0]), y = src_value(s, in, i, a->src[1]), res = 0;
    switch (a->op) {
    case VGT_MME_TU104_MERGE:   /* imm: src_pos 4:0, width 9:5, dst_pos 15:10 */
        res = mme_merge(x, y, (a->imm >> 10) & 0x3f, (a->imm >> 5) & 0x1f, a->imm & 0x1f);
        break;
    case VGT_MME_TU104_STATE:   /* shadow of method (x + y) * 4, 12-bit word index */
        res = mme_run_state(r, ((x + y) & 0xfff) << 2);
        break;
    case VGT_MME_TU104_EXTENDED:   /* (0x1000, 1) is the READ_FIFOED load barrier; DMA is synchronous here */
        break;
    case VGT_MME_TU104_LOOP: case VGT_MME_TU104_JAL: case VGT_MME_TU104_BLT: case VGT_MME_TU104_BLTU:
    case VGT_MME_TU104_BLE: case VGT_MME_TU104_BLEU: case VGT_MME_TU104_BEQ:
        VGT_TRY(control(r, s, a->op, a->imm, x, y));
        break;
    case VGT_MME_TU104_DREAD: case VGT_MME_TU104_DWRITE:
        VGT_TRY(data_ram(r, a->op, x, y, &res));
        break;
    default:
        res = arith(s, a->op, x, y);
        break;
    }
    s->alu_res[i] = res;
    if (a->dst < 24) s->regs[a->dst] = res;
    return VGT_OK;
}

static uint32_t out_value(const tu_state *s, const vgt_mme_tu104_inst *in, unsigned src)
{
    switch (src) {
    case VGT_MME_OUT_ALU0: return s->alu_res[0];
    case VGT_MME_OUT_ALU1: return s->alu_res[1];
    case VGT_MME_OUT_LOAD0: return s->load[0];
    case VGT_MME_OUT_LOAD1: return s->load[1];
    case VGT_MME_OUT_IMM0: return in->alu[0].imm;
    case VGT_MME_OUT_IMM1: return in->alu[1].imm;
    case VGT_MME_OUT_IMMHIGH0: return in->alu[0].imm >> 12;
    case VGT_MME_OUT_IMMHIGH1: return in->alu[1].imm >> 12;
    default: return (uint32_t)in->alu[0].imm << 16 | in->alu[1].imm;   /* IMM32 */
    }
}

static vgt_status output(mme_run *r, const tu_state *s, const vgt_mme_tu104_inst *in, int i)
{
    if (in->out[i].mthd != VGT_MME_OUT_NONE) mme_run_set_mthd(r, out_value(s, in, in->out[i].mthd), 4);
    if (in->out[i].emit != VGT_MME_OUT_NONE) return mme_run_emit(r, out_value(s, in, in->out[i].emit));
    return VGT_OK;
}

/* why and loads: vgt_mme_tu104_check's reason and mme_tu104_loads, from the decode cache */
static vgt_status group(mme_run *r, tu_state *s, const vgt_mme_tu104_inst *in, const char *why, unsigned loads)
{
    if (why) return mme_run_fail(r, VGT_MME_ILLEGAL_OPCODE, "%s", why);
    for (unsigned i = 0; i < loads; i++) VGT_TRY(mme_run_load(r, &s->load[i]));
    uint8_t mask = pred_mask(s, in);
    for (int i = 0; i < 2; i++)
        if (mask & (1u << i)) VGT_TRY(alu(r, s, in, i));
    for (int i = 0; i < 2; i++)
        if (mask & (4u << i)) VGT_TRY(output(r, s, in, i));
    return VGT_OK;
}

/* Rule 5's spin: true when this end_next branch was taken before with the same machine state (the loop
 * cannot end in the simulator); else records the state. */
static bool spin_again(const mme_run *r, tu_state *s)
{
    bool same = s->spin.ip == s->ip && s->spin.carry == s->carry && s->spin.mthd == r->mthd &&
                s->spin.next_param == r->next_param && s->spin.fifo_head == r->fifo_head &&
                !memcmp(s->spin.regs, s->regs, sizeof s->regs);
    s->spin.ip = s->ip;
    s->spin.carry = s->carry;
    s->spin.mthd = r->mthd;
    s->spin.next_param = r->next_param;
    s->spin.fifo_head = r->fifo_head;
    memcpy(s->spin.regs, s->regs, sizeof s->regs);
    return same;
}

vgt_status mme_tu104_run(mme_run *r)
{
    tu_state s = {0};
    s.spin.ip = -1;
    bool end_next = false;
    for (;;) {
        const uint32_t *code;
        VGT_TRY(mme_run_fetch(r, s.ip, &code));
        const vgt_mme_decoded *d = mme_run_decode(r, code);
        vgt_mme_tu104_inst in = d->in.tu104;   /* a copy: emissions may run other code before the next decode */
        const char *why = d->why;
        unsigned loads = d->loads;
        s.next_ip = s.ip + 1;
        s.taken = false;
        VGT_TRY(group(r, &s, &in, why, loads));
        if (end_next || s.stop) return VGT_OK;
        end_next = in.end_next && !s.taken;   /* rule 5 */
        if (in.end_next && s.taken && spin_again(r, &s)) return VGT_OK;
        if (s.loop_count > 0 && s.ip == s.loop_end) {
            s.loop_count--;
            s.next_ip = s.loop_start + 1;
        }
        s.ip = s.next_ip;
    }
}
