/* x86_patch.h (private): the pieces of the store-site patcher (capture_patch.h): relocating the
 * instructions a jump displaces (x86_reloc.c) and emitting the trampoline's code (x86_stub.c). */
#ifndef VGT_CAPTURE_X86_PATCH_H
#define VGT_CAPTURE_X86_PATCH_H

#include <capstone/capstone.h>
#include <stdint.h>

#include "vgt/capture_patch.h"

#define PATCH_JMP_LEN 5u          /* e9 rel32 */
#define PATCH_MAX_DISPLACED 32u   /* the store plus the instructions after it that the jump covers */
#define PATCH_TAIL_MAX 128u       /* relocated instructions + the jump back */

/* Relocate the instructions of code (the bytes at site; code_len of them readable) that follow the
 * store (store_len bytes) until at least PATCH_JMP_LEN bytes are covered, for execution at out_addr.
 * *displaced: bytes of the site the jump covers; *out_len: bytes written to out (the jump back not
 * included). VGT_E_UNSUPPORTED names the instruction that cannot move (a branch, call, return, ...). */
vgt_status patch_relocate(csh cs, cs_insn *ci, uint64_t site, const uint8_t *code, uint32_t code_len,
                          uint32_t store_len, uint8_t *out, uint64_t out_addr, uint32_t *displaced,
                          uint32_t *out_len, vgt_error *err);

/* Linear sweep of the code in [win_addr, win_addr + win_len): VGT_E_UNSUPPORTED when a relative branch
 * or call targets (site, site + len), the inside of the displaced range. */
vgt_status patch_check_targets(csh cs, cs_insn *ci, uint64_t win_addr, const uint8_t *win, uint32_t win_len,
                               uint64_t site, uint32_t len, vgt_error *err);

/* The trampoline's entry (save, call dispatch(frame, arg), restore) at p; returns its length.
 * xsave_size 0: fxsave (512 bytes) instead of xsave; compact: xsavec instead of xsave. */
uint32_t patch_emit_entry(uint8_t *p, uint64_t arg, uint64_t dispatch, uint32_t xsave_size, int compact);
/* A jump from `from` (where p will execute) to `to`: e9 rel32 when it reaches, else jmp [rip+0] + the
 * address (14 bytes). Returns its length. */
uint32_t patch_emit_jmp(uint8_t *p, uint64_t from, uint64_t to);

/* The frame the entry pushes, from its lowest address (the dispatch function's first argument). */
enum { FR_R15, FR_R14, FR_R13, FR_R12, FR_R11, FR_R10, FR_R9, FR_R8, FR_RDI, FR_RSI, FR_RBP, FR_RBX,
       FR_RDX, FR_RCX, FR_RAX, FR_RFLAGS, FR_COUNT };
#define PATCH_RED_ZONE 128u        /* skipped below the program's RSP before anything is pushed */

#endif
