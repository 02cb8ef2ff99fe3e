/* x86_emulate.c: decode a trapped x86-64 memory access with capstone and perform it on an alias.
 *
 * Invariants (see capture_trap.h for the path):
 *  - after vgt_trap_engine_new nothing allocates: one cs_insn is preallocated and reused under a spin
 *    lock; decoded instructions are kept in a direct-mapped cache keyed by RIP and the code bytes;
 *  - only plain data moves are emulated (MOV, MOVZX, MOVSX, MOVSXD, MOVD/MOVQ to or from XMM, MOVNTI),
 *    which is what drivers use on doorbell and timer registers (seen in their doorbell writes: `89 08`,
 *    `89 88 90 00 00 00`, `8b 06`, `8b 8a 84 00 00 00`). Anything else is refused by name, so the
 *    caller can report it rather than corrupt the program's state. */
#include <capstone/capstone.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/capture_trap.h"
#include "x86_regs.h"

#define CACHE_SLOTS 256u
#define CODE_KEY 15u

typedef struct cache_slot {
    uint64_t rip;
    uint8_t code[CODE_KEY];
    uint8_t valid;
    vgt_trap_insn insn;
} cache_slot;

struct vgt_trap_engine {
    csh cs;
    cs_insn *insn;                 /* preallocated by cs_malloc */
    atomic_flag lock;
    cache_slot cache[CACHE_SLOTS];
    atomic_uint_fast64_t decodes, hits;
};

vgt_status vgt_trap_engine_new(vgt_trap_engine **out, vgt_error *err)
{
    vgt_trap_engine *e = calloc(1, sizeof *e);
    if (!e) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "trap engine: out of memory");
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &e->cs) != CS_ERR_OK) {
        free(e);
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: capstone cannot open x86-64");
    }
    cs_option(e->cs, CS_OPT_DETAIL, CS_OPT_ON);
    e->insn = cs_malloc(e->cs);
    if (!e->insn) {
        cs_close(&e->cs);
        free(e);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "trap engine: capstone instruction buffer");
    }
    atomic_flag_clear(&e->lock);
    *out = e;
    return VGT_OK;
}

void vgt_trap_engine_free(vgt_trap_engine *e)
{
    if (!e) return;
    cs_free(e->insn, 1);
    cs_close(&e->cs);
    free(e);
}

vgt_trap_stats vgt_trap_engine_stats(const vgt_trap_engine *e)
{
    vgt_trap_stats s = { atomic_load(&((vgt_trap_engine *)e)->decodes), atomic_load(&((vgt_trap_engine *)e)->hits) };
    return s;
}

static void lock(vgt_trap_engine *e) { while (atomic_flag_test_and_set_explicit(&e->lock, memory_order_acquire)) { } }
static void unlock(vgt_trap_engine *e) { atomic_flag_clear_explicit(&e->lock, memory_order_release); }

/* The instruction ids the engine performs, and what each one does with its operands. */
typedef struct insn_row { unsigned id; uint8_t sign_extend; } insn_row;
static const insn_row MOVES[] = {
    { X86_INS_MOV, 0 }, { X86_INS_MOVABS, 0 }, { X86_INS_MOVZX, 0 }, { X86_INS_MOVSX, 1 },
    { X86_INS_MOVSXD, 1 }, { X86_INS_MOVD, 0 }, { X86_INS_MOVQ, 0 }, { X86_INS_MOVNTI, 0 },
};

static const insn_row *find_move(unsigned id)
{
    for (unsigned i = 0; i < sizeof MOVES / sizeof MOVES[0]; i++)
        if (MOVES[i].id == id) return &MOVES[i];
    return NULL;
}

static vgt_status mem_operand(const cs_x86_op *op, vgt_trap_insn *out, vgt_error *err)
{
    if (op->mem.segment != X86_REG_INVALID)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: segment-prefixed memory operand");
    out->base = (vgt_trap_reg){ .greg = -1, .xmm = -1 };
    out->index = (vgt_trap_reg){ .greg = -1, .xmm = -1 };
    if (op->mem.base == X86_REG_RIP) out->rip_relative = 1;
    else if (op->mem.base != X86_REG_INVALID && x86_reg_lookup(op->mem.base, &out->base) != 0)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: base register %u", op->mem.base);
    if (op->mem.index != X86_REG_INVALID && x86_reg_lookup(op->mem.index, &out->index) != 0)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: index register %u", op->mem.index);
    out->scale = (uint8_t)op->mem.scale;
    out->disp = op->mem.disp;
    out->size = op->size;
    if (op->size != 1 && op->size != 2 && op->size != 4 && op->size != 8)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: memory access of %u bytes", op->size);
    return VGT_OK;
}

/* Fill out from capstone's operands: [0] destination, [1] source (Intel order). */
static vgt_status classify(const cs_insn *ci, vgt_trap_insn *out, vgt_error *err)
{
    const insn_row *row = find_move(ci->id);
    const cs_x86 *x = &ci->detail->x86;
    if (!row || x->op_count != 2 || x->prefix[0] != 0)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: cannot emulate '%s %s'",
                        ci->mnemonic, ci->op_str);
    memset(out, 0, sizeof *out);
    out->length = (uint8_t)ci->size;
    out->sign_extend = row->sign_extend;
    const cs_x86_op *dst = &x->operands[0], *src = &x->operands[1];
    if (dst->type == X86_OP_MEM) {
        VGT_TRY(mem_operand(dst, out, err));
        if (src->type == X86_OP_IMM) {
            out->kind = VGT_TRAP_STORE_IMM;
            out->imm = src->imm;
            return VGT_OK;
        }
        out->kind = VGT_TRAP_STORE_REG;
        if (src->type != X86_OP_REG || x86_reg_lookup(src->reg, &out->reg) != 0)
            return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: store source of '%s %s'",
                            ci->mnemonic, ci->op_str);
        return VGT_OK;
    }
    if (src->type == X86_OP_MEM && dst->type == X86_OP_REG) {
        VGT_TRY(mem_operand(src, out, err));
        out->kind = VGT_TRAP_LOAD;
        if (x86_reg_lookup(dst->reg, &out->reg) != 0)
            return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: load destination of '%s %s'",
                            ci->mnemonic, ci->op_str);
        return VGT_OK;
    }
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "trap engine: no memory operand in '%s %s'",
                    ci->mnemonic, ci->op_str);
}

vgt_status vgt_trap_decode(vgt_trap_engine *e, uint64_t rip, const uint8_t *code, uint32_t code_len,
                           vgt_trap_insn *out, vgt_error *err)
{
    uint32_t key_len = code_len < CODE_KEY ? code_len : CODE_KEY;
    cache_slot *slot = &e->cache[(rip ^ (rip >> 8)) % CACHE_SLOTS];
    lock(e);
    if (slot->valid && slot->rip == rip && memcmp(slot->code, code, key_len) == 0) {
        *out = slot->insn;
        unlock(e);
        atomic_fetch_add(&e->hits, 1);
        return VGT_OK;
    }
    const uint8_t *p = code;
    size_t n = code_len;
    uint64_t addr = rip;
    vgt_status rc;
    if (!cs_disasm_iter(e->cs, &p, &n, &addr, e->insn))
        rc = VGT_FAIL(err, VGT_E_DECODE, rip, "trap engine: capstone cannot decode the bytes at RIP 0x%llx",
                      (unsigned long long)rip);
    else
        rc = classify(e->insn, out, err);
    if (rc == VGT_OK && key_len == CODE_KEY) {
        slot->rip = rip;
        memcpy(slot->code, code, CODE_KEY);
        slot->insn = *out;
        slot->valid = 1;
    }
    unlock(e);
    atomic_fetch_add(&e->decodes, 1);
    return rc;
}

static uint64_t reg_read(const vgt_trap_reg *r, const ucontext_t *uc)
{
    if (r->xmm >= 0) {
        const struct _libc_xmmreg *x = &uc->uc_mcontext.fpregs->_xmm[r->xmm];
        return (uint64_t)x->element[0] | ((uint64_t)x->element[1] << 32);
    }
    uint64_t v = (uint64_t)uc->uc_mcontext.gregs[r->greg] >> r->shift;
    return r->size >= 8 ? v : v & ((1ull << (8 * r->size)) - 1);
}

static void reg_write(const vgt_trap_reg *r, ucontext_t *uc, uint64_t v)
{
    if (r->xmm >= 0) {
        struct _libc_xmmreg *x = &uc->uc_mcontext.fpregs->_xmm[r->xmm];
        x->element[0] = (uint32_t)v;
        x->element[1] = (uint32_t)(v >> 32);
        x->element[2] = x->element[3] = 0;   /* MOVD/MOVQ loads zero the rest of the XMM register */
        return;
    }
    greg_t *g = &uc->uc_mcontext.gregs[r->greg];
    uint64_t old = (uint64_t)*g;
    if (r->size == 8) *g = (greg_t)v;
    else if (r->size == 4) *g = (greg_t)(uint32_t)v;   /* 32-bit destinations zero bits 63:32 */
    else {
        uint64_t mask = ((1ull << (8 * r->size)) - 1) << r->shift;
        *g = (greg_t)((old & ~mask) | ((v << r->shift) & mask));
    }
}

uint64_t vgt_trap_address(const vgt_trap_insn *in, const ucontext_t *uc)
{
    uint64_t a = (uint64_t)in->disp;
    if (in->rip_relative) a += (uint64_t)uc->uc_mcontext.gregs[REG_RIP] + in->length;
    if (in->base.greg >= 0) a += reg_read(&in->base, uc);
    if (in->index.greg >= 0) a += reg_read(&in->index, uc) * in->scale;
    return a;
}

static uint64_t trunc_bytes(uint64_t v, unsigned size) { return size >= 8 ? v : v & ((1ull << (8 * size)) - 1); }

uint64_t vgt_trap_store_value(const vgt_trap_insn *in, const ucontext_t *uc)
{
    uint64_t v = in->kind == VGT_TRAP_STORE_IMM ? (uint64_t)in->imm : reg_read(&in->reg, uc);
    return trunc_bytes(v, in->size);
}

static uint64_t sign_extend(uint64_t v, unsigned size)
{
    if (size >= 8) return v;
    uint64_t sign = 1ull << (8 * size - 1);
    return (v ^ sign) - sign;
}

uint64_t vgt_trap_emulate(const vgt_trap_insn *in, ucontext_t *uc, volatile void *target)
{
    uint64_t v;
    if (in->kind == VGT_TRAP_LOAD) {
        switch (in->size) {
        case 1: v = *(volatile uint8_t *)target; break;
        case 2: v = *(volatile uint16_t *)target; break;
        case 4: v = *(volatile uint32_t *)target; break;
        default: v = *(volatile uint64_t *)target; break;
        }
        reg_write(&in->reg, uc, in->sign_extend ? sign_extend(v, in->size) : v);
    } else {
        v = vgt_trap_store_value(in, uc);
        switch (in->size) {
        case 1: *(volatile uint8_t *)target = (uint8_t)v; break;
        case 2: *(volatile uint16_t *)target = (uint16_t)v; break;
        case 4: *(volatile uint32_t *)target = (uint32_t)v; break;
        default: *(volatile uint64_t *)target = v; break;
        }
    }
    uc->uc_mcontext.gregs[REG_RIP] += in->length;
    return v;
}

vgt_status vgt_trap_decode_at(vgt_trap_engine *e, const ucontext_t *uc, vgt_trap_insn *out, vgt_error *err)
{
    uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t page = 4096;
    uint32_t avail = (uint32_t)(page - (rip & (page - 1)));
    /* Read no further than the end of RIP's page first: the next page of code may not exist. */
    vgt_status rc = vgt_trap_decode(e, rip, (const uint8_t *)rip, avail < 15 ? avail : 15, out, err);
    if (rc == VGT_E_DECODE && avail < 15) rc = vgt_trap_decode(e, rip, (const uint8_t *)rip, 15, out, err);
    return rc;
}

vgt_status vgt_trap_handle_insn(const vgt_trap_insn *in, ucontext_t *uc, uintptr_t fake, uintptr_t alias, uint64_t len,
                                vgt_trap_store_hook hook, void *ctx, uint64_t *off_out, vgt_error *err)
{
    uint64_t ea = vgt_trap_address(in, uc);
    if (ea < fake || ea - fake > len || in->size > len - (ea - fake))
        return VGT_FAIL(err, VGT_E_FAULT, ea, "trap: %u-byte access at 0x%llx is outside the trapped range 0x%llx+0x%llx",
                        in->size, (unsigned long long)ea, (unsigned long long)fake, (unsigned long long)len);
    uint64_t off = ea - fake;
    if (in->kind != VGT_TRAP_LOAD && hook) hook(ctx, off, in->size, vgt_trap_store_value(in, uc));
    vgt_trap_emulate(in, uc, (volatile void *)(alias + off));
    if (off_out) *off_out = off;
    return VGT_OK;
}

vgt_status vgt_trap_handle(vgt_trap_engine *e, ucontext_t *uc, uintptr_t fake, uintptr_t alias, uint64_t len,
                           vgt_trap_store_hook hook, void *ctx, vgt_trap_insn *insn_out, uint64_t *off_out,
                           vgt_error *err)
{
    vgt_trap_insn in;
    VGT_TRY(vgt_trap_decode_at(e, uc, &in, err));
    VGT_TRY(vgt_trap_handle_insn(&in, uc, fake, alias, len, hook, ctx, off_out, err));
    if (insn_out) *insn_out = in;
    return VGT_OK;
}
