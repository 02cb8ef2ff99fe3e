/* mme_fermi_sim.c: executes Fermi-format macros (Fermi..Volta classes).
 *
 * Semantics (envytools envydis/macro.c, Mesa src/nouveau/mme/mme_fermi_sim.c, facts section 1):
 *   - 8 registers, R0 reads as zero; R1 is preloaded with the first parameter (the CALL_MME_MACRO word);
 *   - the operation computes a result, the assign op then stores it or a fetched parameter, sets the
 *     method ("maddr": address bits 11:0, increment bits 17:12) and/or sends a value;
 *   - exit (end_next) and branches have a delay slot: the next instruction runs before they take
 *     effect; a branch with no_delay ("annul") jumps at once; a branch that is taken cancels its own
 *     exit bit ("the exit happens if and only if the branch is not taken", envytools);
 *   - a branch in a delay slot is BRANCH_IN_DELAY_SLOT (envytools: "It's an error to use a branch in
 *     a delay slot"); we count every delayed branch and exit as having one, taken or not.
 * Where Mesa and envytools differ we follow envytools: LOAD_SET_MADDR stores the parameter (Mesa
 * stores the result), the increment is 6 bits (Mesa: 4).
 */
#include "mme_internal.h"

typedef struct fermi_state {
    uint32_t regs[8];
    uint32_t carry;
    int64_t ip;
    bool pending_jump;       /* a taken delayed branch waits for its slot */
    int64_t jump_target;
    bool exit_after;         /* an exit waits for its slot */
    bool slot;               /* the current instruction is a delay slot */
} fermi_state;

static uint32_t reg(const fermi_state *s, unsigned r) { return r ? s->regs[r & 7] : 0; }
static void set_reg(fermi_state *s, unsigned r, uint32_t v) { if (r) s->regs[r & 7] = v; }

static uint32_t alu_reg(fermi_state *s, unsigned op, uint32_t x, uint32_t y)
{
    uint64_t wide;
    switch (op) {
    case 0: wide = (uint64_t)x + y; break;                      /* ADD */
    case 1: wide = (uint64_t)x + y + s->carry; break;           /* ADDC */
    case 2: s->carry = y > x; return x - y;                     /* SUB, carry = borrow */
    case 3: {                                                   /* SUBB */
        uint64_t sub = (uint64_t)y + s->carry;
        s->carry = sub > x;
        return (uint32_t)(x - sub);
    }
    case 8: return x ^ y;
    case 9: return x | y;
    case 10: return x & y;
    case 11: return x & ~y;
    default: return ~(x & y);                                   /* 12 NAND; others refused by the check */
    }
    s->carry = (uint32_t)(wide >> 32);
    return (uint32_t)wide;
}

/* Bitfield extract-and-shift (Mesa eval_bfe_lsl): a position from a register above 31 gives 0. */
static uint32_t bfe_lsl(uint32_t v, uint32_t src_bit, uint32_t dst_bit, uint32_t size)
{
    if (src_bit > 31 || dst_bit > 31) return 0;
    return mme_shl((v >> src_bit) & mme_mask(size), dst_bit);
}

static uint32_t operation(mme_run *r, fermi_state *s, const vgt_mme_fermi_inst *in)
{
    uint32_t x = reg(s, in->src[0]), y = reg(s, in->src[1]);
    switch (in->op) {
    case VGT_MME_FERMI_ALU_REG: return alu_reg(s, in->alu_op, x, y);
    case VGT_MME_FERMI_ADD_IMM: return x + (uint32_t)in->imm;
    case VGT_MME_FERMI_MERGE: return mme_merge(x, y, in->dst_bit, in->size, in->src_bit);
    case VGT_MME_FERMI_BFE_LSL_IMM: return bfe_lsl(y, x, in->dst_bit, in->size);
    case VGT_MME_FERMI_BFE_LSL_REG: return bfe_lsl(y, in->src_bit, x, in->size);
    default: return mme_run_state(r, ((x + (uint32_t)in->imm) & 0xfff) << 2);   /* STATE: bits 11:0 * 4 */
    }
}

/* The assign ops as envytools describes them. */
static vgt_status assign(mme_run *r, fermi_state *s, const vgt_mme_fermi_inst *in, uint32_t res)
{
    uint32_t p;
    switch (in->assign) {
    case VGT_MME_FERMI_LOAD: VGT_TRY(mme_run_load(r, &p)); set_reg(s, in->dst, p); return VGT_OK;
    case VGT_MME_FERMI_MOVE: set_reg(s, in->dst, res); return VGT_OK;
    case VGT_MME_FERMI_MOVE_SET_MADDR: mme_run_set_mthd(r, res, 6); set_reg(s, in->dst, res); return VGT_OK;
    case VGT_MME_FERMI_LOAD_EMIT:
        VGT_TRY(mme_run_emit(r, res));
        VGT_TRY(mme_run_load(r, &p));
        set_reg(s, in->dst, p);
        return VGT_OK;
    case VGT_MME_FERMI_MOVE_EMIT: set_reg(s, in->dst, res); return mme_run_emit(r, res);
    case VGT_MME_FERMI_LOAD_SET_MADDR:
        mme_run_set_mthd(r, res, 6);
        VGT_TRY(mme_run_load(r, &p));
        set_reg(s, in->dst, p);
        return VGT_OK;
    case VGT_MME_FERMI_MOVE_SET_MADDR_LOAD_EMIT:
        mme_run_set_mthd(r, res, 6);
        set_reg(s, in->dst, res);
        VGT_TRY(mme_run_load(r, &p));
        return mme_run_emit(r, p);
    default:   /* MOVE_SET_MADDR_LOAD_EMIT_HIGH: send bits 17:12 of the result */
        mme_run_set_mthd(r, res, 6);
        set_reg(s, in->dst, res);
        return mme_run_emit(r, (res >> 12) & 0x3f);
    }
}

/* Returns the index of the next instruction in program order (before pending effects). */
static vgt_status branch(mme_run *r, fermi_state *s, const vgt_mme_fermi_inst *in, int64_t *next)
{
    if (s->slot) return mme_run_fail(r, VGT_MME_BRANCH_IN_DELAY_SLOT, "branch in the delay slot of a branch or exit");
    uint32_t v = reg(s, in->src[0]);
    bool taken = in->not_zero ? v != 0 : v == 0;
    int64_t target = s->ip + in->imm;
    if (!taken) {
        if (in->end_next) s->exit_after = true;
        return VGT_OK;
    }
    if (target < 0)
        return mme_run_fail(r, VGT_MME_INSTR_RAM_ACCESS_OUT_OF_BOUNDS, "branch to index %lld before the start",
                            (long long)target);
    if (in->no_delay) {
        *next = target;
    } else {
        s->pending_jump = true;
        s->jump_target = target;
    }
    return VGT_OK;
}

/* One instruction; *done when the macro has ended after it. */
/* why: vgt_mme_fermi_check's reason, from the decode cache */
static vgt_status step(mme_run *r, fermi_state *s, const vgt_mme_fermi_inst *in, const char *why, bool *done)
{
    if (why) return mme_run_fail(r, VGT_MME_ILLEGAL_OPCODE, "%s", why);
    bool had_jump = s->pending_jump, had_exit = s->exit_after;
    int64_t jump = s->jump_target, next = s->ip + 1;
    s->pending_jump = s->exit_after = false;
    if (in->op == VGT_MME_FERMI_BRANCH) {
        VGT_TRY(branch(r, s, in, &next));
    } else {
        VGT_TRY(assign(r, s, in, operation(r, s, in)));
        if (in->end_next) s->exit_after = true;
    }
    s->slot = (in->op == VGT_MME_FERMI_BRANCH && !in->no_delay) || s->exit_after;
    if (had_jump) next = jump;
    *done = had_exit;
    s->ip = next;
    return VGT_OK;
}

vgt_status mme_fermi_run(mme_run *r)
{
    fermi_state s = {0};
    VGT_TRY(mme_run_load(r, &s.regs[1]));   /* envytools: "$r1 is set on launch" to the call word */
    for (bool done = false; !done;) {
        const uint32_t *code;
        VGT_TRY(mme_run_fetch(r, s.ip, &code));
        const vgt_mme_decoded *d = mme_run_decode(r, code);
        vgt_mme_fermi_inst in = d->in.fermi;   /* a copy: emissions may run other code before the next decode */
        VGT_TRY(step(r, &s, &in, d->why, &done));
    }
    return VGT_OK;
}
