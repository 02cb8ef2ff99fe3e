/* capture_patch.h: patching trapped doorbell store sites into direct calls.
 *
 * The trap engine (capture_trap.h) costs one SIGSEGV round trip per doorbell. The patcher removes it for
 * every store site it can patch safely: the first trap at a site builds a trampoline near it, and the
 * site's first 5 bytes become `jmp trampoline`. The trampoline saves every register and the extended
 * state, calls the access function with a context whose registers are those of the thread at the store
 * (RIP = the site), restores them, runs the instructions the jump displaced (relocated), and jumps back:
 *
 *   site:        jmp T ; int3 ...                       (5 bytes + the rest of the displaced range)
 *   T (entry):   lea rsp,[rsp-128] ; pushfq ; push 15 GPRs ; xsave ; call dispatch(frame, site)
 *                xrstor ; pop ; popfq ; lea rsp,[rsp+128]
 *   T (tail):    the instructions after the store, relocated (RIP-relative operands adjusted)
 *                jmp site + displaced length
 *
 * libcuda's doorbell store is `mov [rax],ecx` (2 bytes): the jump needs 5, so the instructions after it
 * move into the trampoline. A site is refused (it stays trapped, which is always correct) when the
 * displaced range holds a branch, a call, a return, or an operand the relocation cannot express, when a
 * relative branch found near the site targets the inside of the range, when the store is not a
 * general-register or immediate move, or when no trampoline can be placed within +-2 GiB.
 *
 * Threads: no thread can ever be inside the displaced range after its first instruction (the store
 * always traps until the site is patched, and every trap at a site the patcher accepted resumes in the
 * trampoline's tail, never at the site), so only byte 0 is contended. The jump is written as text_poke
 * does: int3 at byte 0, core sync, bytes 1..4, core sync, the jump opcode at byte 0, core sync (membarrier
 * SYNC_CORE where the kernel has it). A thread meeting the int3 meanwhile is moved to the trampoline's
 * entry by vgt_patch_int3 (the caller's SIGTRAP handler). The code pages are made writable with
 * mprotect(RWX) for the writes and set back to RX: removing execute permission even briefly would fault
 * other threads running on the same pages.
 *
 * Signal safety: everything the trap path calls (vgt_patch_after_trap, vgt_patch_int3) uses only
 * preallocated memory and system calls (mmap, mprotect, membarrier, process_vm_readv). */
#ifndef VGT_CAPTURE_PATCH_H
#define VGT_CAPTURE_PATCH_H

#include <stdint.h>
#include <ucontext.h>

#include "vgt/capture_trap.h"
#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vgt_patcher vgt_patcher;

/* The patched path's access: called in ordinary context (not a signal handler) with uc holding the
 * thread's general registers at the store (REG_RIP = the site, REG_RSP as the program had it; no fpregs)
 * and in the decoded instruction. It performs the access (for a load, it writes the destination register
 * into uc); RIP changes are ignored. */
typedef void (*vgt_patch_access_fn)(void *ctx, ucontext_t *uc, const vgt_trap_insn *in);

vgt_status vgt_patcher_new(vgt_patcher **out, vgt_patch_access_fn fn, void *ctx, vgt_error *err);
/* The process's registration for core-serializing membarriers, which vgt_patcher_new needs: call it while
 * the process has a single thread (a constructor). The kernel makes a process with more threads wait for
 * an RCU grace period (tens of ms; measured 25 ms on a 2-core VM, and the 54 ms `activate` of a CUDA
 * program on the H200) and does it once: registered early, vgt_patcher_new's own call returns at once. */
void vgt_patcher_prepare(void);
/* Frees the patcher's bookkeeping; trampolines stay mapped (patched code may still jump there). */
void vgt_patcher_free(vgt_patcher *p);

/* After the trap path emulated instruction in (uc's RIP already advanced past it): patch its site, or
 * find it patched. VGT_OK: the site is patched and uc's RIP now points at the trampoline's copy of the
 * instructions after the store (so this thread never runs the displaced range at the site).
 * VGT_E_UNSUPPORTED: the site was refused, this time (err says why) or before (err->msg empty); uc is
 * unchanged and the site stays trapped. */
vgt_status vgt_patch_after_trap(vgt_patcher *p, ucontext_t *uc, const vgt_trap_insn *in, vgt_error *err);

/* The trap path's decode when a patcher runs: never reads a site while its jump is being written.
 * Returns 1 when uc's RIP is a patched site (RIP is moved to its trampoline's entry, which performs the
 * access: nothing more to do), else 0 with *rc and *in (or err) from vgt_trap_decode_at. */
int vgt_patch_decode(vgt_patcher *p, vgt_trap_engine *e, ucontext_t *uc, vgt_trap_insn *in, vgt_status *rc,
                     vgt_error *err);

/* For the caller's SIGTRAP handler: 1 when the int3 at RIP-1 is a site being patched (RIP is moved to
 * its trampoline's entry, which performs the store), 0 otherwise (not ours: chain). */
int vgt_patch_int3(vgt_patcher *p, ucontext_t *uc);

typedef struct vgt_patch_stats {
    uint64_t sites_patched, sites_refused, calls;   /* calls: accesses through trampolines */
} vgt_patch_stats;
vgt_patch_stats vgt_patcher_stats(const vgt_patcher *p);

#ifdef __cplusplus
}
#endif
#endif
