/* capture_trap.h: the trap engine of the capture shim: emulate one trapped x86-64 memory access.
 *
 * The shim keeps every usermode (doorbell) page mapping PROT_NONE. A load or store to it raises SIGSEGV;
 * the handler decodes the faulting instruction with capstone, computes the effective address from the
 * interrupted registers, performs the same access on a private alias of the real page, writes a loaded
 * value back into the interrupted register, and advances RIP past the instruction. The page is never
 * unprotected, so there is no window in which another thread's access could pass untrapped.
 *
 *   SIGSEGV(si_addr) --vgt_trap_decode--> vgt_trap_insn --vgt_trap_address--> effective address
 *        --(caller: find the alias, record a doorbell)--> vgt_trap_emulate (access the alias, RIP += len)
 *
 * Async-signal safety: decoding uses one preallocated capstone instruction under a spin lock and a
 * decode cache; nothing here calls malloc after vgt_trap_engine_new. The engine works on any ucontext,
 * so CI tests it on an ordinary protected anonymous page (tests/unit/test_capture_trap.c).
 */
#ifndef VGT_CAPTURE_TRAP_H
#define VGT_CAPTURE_TRAP_H

#include <stdint.h>
#include <ucontext.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum vgt_trap_kind {
    VGT_TRAP_STORE_REG = 1,   /* mov [mem], reg  (general or XMM low bits) */
    VGT_TRAP_STORE_IMM = 2,   /* mov [mem], imm  (sign-extended to the access size) */
    VGT_TRAP_LOAD = 3,        /* mov/movzx/movsx reg, [mem] */
};

/* Where a register lives in the interrupted context. */
typedef struct vgt_trap_reg {
    int16_t greg;             /* index into uc_mcontext.gregs, or -1 */
    int16_t xmm;              /* XMM register number, or -1 */
    uint8_t size;             /* bytes of the architectural register (1, 2, 4, 8, 16) */
    uint8_t shift;            /* 8 for AH/BH/CH/DH, else 0 */
} vgt_trap_reg;

typedef struct vgt_trap_insn {
    uint8_t kind;             /* enum vgt_trap_kind */
    uint8_t size;             /* bytes accessed in memory: 1, 2, 4 or 8 */
    uint8_t length;           /* instruction bytes */
    uint8_t sign_extend;      /* loads: movsx/movsxd */
    vgt_trap_reg reg;         /* store source or load destination */
    int64_t imm;              /* VGT_TRAP_STORE_IMM */
    vgt_trap_reg base, index; /* memory operand; greg -1 when absent */
    uint8_t scale;
    uint8_t rip_relative;
    int64_t disp;
} vgt_trap_insn;

typedef struct vgt_trap_engine vgt_trap_engine;

/* Opens capstone (x86-64, detail on) and preallocates everything the signal path uses. */
vgt_status vgt_trap_engine_new(vgt_trap_engine **e, vgt_error *err);
void vgt_trap_engine_free(vgt_trap_engine *e);

/* Decode the instruction whose bytes start at code (at most code_len readable bytes; the address rip is
 * used for the decode cache and RIP-relative operands). VGT_E_UNSUPPORTED names the mnemonic of an
 * instruction the engine does not emulate; VGT_E_DECODE when capstone cannot decode the bytes. */
vgt_status vgt_trap_decode(vgt_trap_engine *e, uint64_t rip, const uint8_t *code, uint32_t code_len,
                           vgt_trap_insn *out, vgt_error *err);

/* Decode the instruction at uc's RIP (the first step of vgt_trap_handle). */
vgt_status vgt_trap_decode_at(vgt_trap_engine *e, const ucontext_t *uc, vgt_trap_insn *out, vgt_error *err);

/* Effective address of the memory operand in the interrupted context. */
uint64_t vgt_trap_address(const vgt_trap_insn *in, const ucontext_t *uc);
/* The value a store will write (truncated to in->size bytes). */
uint64_t vgt_trap_store_value(const vgt_trap_insn *in, const ucontext_t *uc);
/* Perform the access at target (the alias of the faulting address): a store writes the value, a load
 * reads and updates the destination register with x86 semantics (32-bit writes zero the upper half,
 * 8/16-bit writes keep the rest). Then RIP += length. Returns the value stored or loaded. */
uint64_t vgt_trap_emulate(const vgt_trap_insn *in, ucontext_t *uc, volatile void *target);

/* The whole trap path for one fault on a trapped range: decode the instruction at the interrupted RIP,
 * check that its effective address lies in [fake, fake+len), call hook (if any) for a store before
 * the store is performed, perform the access at the same offset of alias, advance RIP. On failure
 * nothing is changed in uc and the error names the instruction or the address. *off_out (may be NULL)
 * receives the offset accessed. */
typedef void (*vgt_trap_store_hook)(void *ctx, uint64_t offset, uint32_t size, uint64_t value);
vgt_status vgt_trap_handle(vgt_trap_engine *e, ucontext_t *uc, uintptr_t fake, uintptr_t alias, uint64_t len,
                           vgt_trap_store_hook hook, void *ctx, vgt_trap_insn *insn_out, uint64_t *off_out,
                           vgt_error *err);
/* vgt_trap_handle after its decode step, for an instruction decoded already (vgt_trap_decode_at). */
vgt_status vgt_trap_handle_insn(const vgt_trap_insn *in, ucontext_t *uc, uintptr_t fake, uintptr_t alias, uint64_t len,
                                vgt_trap_store_hook hook, void *ctx, uint64_t *off_out, vgt_error *err);

/* Decode counters (for the bench and tests). */
typedef struct vgt_trap_stats { uint64_t decodes, cache_hits; } vgt_trap_stats;
vgt_trap_stats vgt_trap_engine_stats(const vgt_trap_engine *e);

#ifdef __cplusplus
}
#endif
#endif
