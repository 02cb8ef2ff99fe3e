/* fuzz_trap.c: libFuzzer target for the x86 doorbell-store emulator (capture/trap, vgt/capture_trap.h):
 * random instruction bytes and random register states. The input is [15 code bytes][flags u32][23 general
 * registers][16 XMM registers]; registers whose flag bit is set point into the trapped range (so memory
 * operands reach it), the rest keep the input's value. The instruction is decoded (from an exact-size copy
 * and from a page, as the SIGSEGV path reads it) and, when it is a store or load the engine emulates,
 * executed against an alias buffer: it must never touch memory outside [alias, alias + len) nor fail to
 * advance RIP by the instruction's length. Seeds: the stores compilers emit for doorbells (tests/fuzz/
 * corpus_trap, from tests/unit/test_capture_trap.c's instruction list). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "vgt/capture_trap.h"

#define TRAP_LEN 0x1000u

static vgt_trap_engine *engine;

static void hook(void *ctx, uint64_t off, uint32_t size, uint64_t value)
{
    (void)value;
    if (off + size > TRAP_LEN) abort();   /* the engine promised the range check */
    (*(uint64_t *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vgt_error err;
    if (!engine && vgt_trap_engine_new(&engine, &err) != VGT_OK) abort();
    if (size < 1) return 0;
    size_t code_n = size < 15 ? size : 15;
    /* decode from an exact-size buffer: nothing past it may be read */
    uint8_t *exact = malloc(code_n);
    memcpy(exact, data, code_n);
    vgt_trap_insn in;
    vgt_trap_decode(engine, 0x400000 + code_n, exact, (uint32_t)code_n, &in, &err);
    free(exact);

    static uint8_t page[8192] __attribute__((aligned(4096)));
    static uint8_t alias[TRAP_LEN + 64];
    static struct _libc_fpstate fp;
    memset(page, 0x90, sizeof page);   /* NOPs after the instruction */
    memcpy(page, data, code_n);
    const uint8_t *p = data + code_n;
    size_t n = size - code_n;
    uint32_t flags = 0;
    if (n >= 4) memcpy(&flags, p, 4), p += 4, n -= 4;
    uintptr_t fake = (uintptr_t)0x7f0000000000ull;
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    for (int r = 0; r < NGREG; r++) {
        uint64_t v = 0;
        if (n >= 8) memcpy(&v, p, 8), p += 8, n -= 8;
        if (r < 32 && (flags >> r & 1)) v = fake + (v & (TRAP_LEN - 1));
        uc.uc_mcontext.gregs[r] = (greg_t)v;
    }
    memset(&fp, 0, sizeof fp);
    for (int x = 0; x < 16 && n >= 16; x++) memcpy(&fp._xmm[x], p, 16), p += 16, n -= 16;
    uc.uc_mcontext.fpregs = &fp;
    uintptr_t rip = (uintptr_t)page;
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)rip;
    uint64_t stores = 0, off = 0;
    memset(alias, 0, sizeof alias);
    if (vgt_trap_handle(engine, &uc, fake, (uintptr_t)alias, TRAP_LEN, hook, &stores, &in, &off, &err) == VGT_OK) {
        if ((uintptr_t)uc.uc_mcontext.gregs[REG_RIP] != rip + in.length || in.length == 0 || in.length > 15) abort();
        if (off + in.size > TRAP_LEN) abort();
        for (size_t i = TRAP_LEN; i < sizeof alias; i++)
            if (alias[i]) abort();   /* written past the range */
    } else if ((uintptr_t)uc.uc_mcontext.gregs[REG_RIP] != rip) {
        abort();   /* a failure changes nothing */
    }
    return 0;
}
