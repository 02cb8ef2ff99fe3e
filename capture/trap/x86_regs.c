/* x86_regs.c: where each capstone x86 register lives in a Linux x86-64 ucontext (data, not code).
 * Register numbering: capstone's x86_reg; greg indices: glibc <sys/ucontext.h> REG_*. */
#include <capstone/capstone.h>
#include <sys/ucontext.h>

#include "x86_regs.h"

typedef struct reg_row { x86_reg id; int16_t greg; uint8_t size, shift; } reg_row;

#define R64(n, g) { X86_REG_##n, REG_##g, 8, 0 }
#define R32(n, g) { X86_REG_##n, REG_##g, 4, 0 }
#define R16(n, g) { X86_REG_##n, REG_##g, 2, 0 }
#define R8(n, g)  { X86_REG_##n, REG_##g, 1, 0 }
#define R8H(n, g) { X86_REG_##n, REG_##g, 1, 8 }

static const reg_row GPR_ROWS[] = {
    R64(RAX, RAX), R64(RBX, RBX), R64(RCX, RCX), R64(RDX, RDX), R64(RSI, RSI), R64(RDI, RDI),
    R64(RBP, RBP), R64(RSP, RSP), R64(RIP, RIP), R64(R8, R8), R64(R9, R9), R64(R10, R10), R64(R11, R11),
    R64(R12, R12), R64(R13, R13), R64(R14, R14), R64(R15, R15),
    R32(EAX, RAX), R32(EBX, RBX), R32(ECX, RCX), R32(EDX, RDX), R32(ESI, RSI), R32(EDI, RDI),
    R32(EBP, RBP), R32(ESP, RSP), R32(EIP, RIP), R32(R8D, R8), R32(R9D, R9), R32(R10D, R10), R32(R11D, R11),
    R32(R12D, R12), R32(R13D, R13), R32(R14D, R14), R32(R15D, R15),
    R16(AX, RAX), R16(BX, RBX), R16(CX, RCX), R16(DX, RDX), R16(SI, RSI), R16(DI, RDI),
    R16(BP, RBP), R16(SP, RSP), R16(R8W, R8), R16(R9W, R9), R16(R10W, R10), R16(R11W, R11),
    R16(R12W, R12), R16(R13W, R13), R16(R14W, R14), R16(R15W, R15),
    R8(AL, RAX), R8(BL, RBX), R8(CL, RCX), R8(DL, RDX), R8(SIL, RSI), R8(DIL, RDI),
    R8(BPL, RBP), R8(SPL, RSP), R8(R8B, R8), R8(R9B, R9), R8(R10B, R10), R8(R11B, R11),
    R8(R12B, R12), R8(R13B, R13), R8(R14B, R14), R8(R15B, R15),
    R8H(AH, RAX), R8H(BH, RBX), R8H(CH, RCX), R8H(DH, RDX),
};

static const x86_reg XMM_IDS[16] = {
    X86_REG_XMM0, X86_REG_XMM1, X86_REG_XMM2, X86_REG_XMM3, X86_REG_XMM4, X86_REG_XMM5, X86_REG_XMM6,
    X86_REG_XMM7, X86_REG_XMM8, X86_REG_XMM9, X86_REG_XMM10, X86_REG_XMM11, X86_REG_XMM12, X86_REG_XMM13,
    X86_REG_XMM14, X86_REG_XMM15,
};

int x86_reg_lookup(unsigned id, vgt_trap_reg *out)
{
    for (unsigned i = 0; i < sizeof GPR_ROWS / sizeof GPR_ROWS[0]; i++) {
        if ((unsigned)GPR_ROWS[i].id != id) continue;
        *out = (vgt_trap_reg){ .greg = GPR_ROWS[i].greg, .xmm = -1, .size = GPR_ROWS[i].size,
                               .shift = GPR_ROWS[i].shift };
        return 0;
    }
    for (int i = 0; i < 16; i++) {
        if ((unsigned)XMM_IDS[i] != id) continue;
        *out = (vgt_trap_reg){ .greg = -1, .xmm = (int16_t)i, .size = 16, .shift = 0 };
        return 0;
    }
    return -1;
}
