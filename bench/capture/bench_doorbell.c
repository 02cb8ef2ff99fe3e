/* bench_doorbell.c: what one doorbell store costs the capture on the CPU, trapped (one SIGSEGV round trip:
 * decode, emulate, return) against patched (a jump to a trampoline that saves the registers and calls the
 * same access function), in the same run. bench/capture/doorbell.sh prints the ratio.
 *
 *   bench_doorbell [STORES]     prints: trap_ns=... patched_ns=... plain_ns=... trap_vs_patched=...
 *
 * The store is libcuda's `mov [rax],ecx` followed by a RIP-relative load (the neighbours the patch must
 * move), to a PROT_NONE stand-in page whose alias is an ordinary page; the access function does what
 * the shim's does without recording (the recording costs the same on both paths). plain_ns: the same
 * store to the alias directly, the floor. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "vgt/capture_patch.h"

uint32_t bench_glob = 7;
void bench_store(void *p, uint32_t v);
__asm__(".text\n.globl bench_store\nbench_store:\n  mov %rdi, %rax\n  mov %esi, %ecx\n"
        "  movl %ecx, (%rax)\n  movl bench_glob(%rip), %edx\n  ret\n");
/* The same code at another site, kept trapped (patching is not called for it). */
void bench_store_trapped(void *p, uint32_t v);
__asm__(".text\n.globl bench_store_trapped\nbench_store_trapped:\n  mov %rdi, %rax\n  mov %esi, %ecx\n"
        "  movl %ecx, (%rax)\n  movl bench_glob(%rip), %edx\n  ret\n");

static vgt_trap_engine *engine;
static vgt_patcher *patcher;
static uint8_t *fake, *alias;
static int patch_on;
static const uint64_t LEN = 4096;
static volatile uint64_t sink;

static void hook(void *ctx, uint64_t off, uint32_t size, uint64_t v) { (void)ctx, (void)size; sink += off + v; }

static void access_fn(void *ctx, ucontext_t *uc, const vgt_trap_insn *in)
{
    (void)ctx;
    vgt_error err;
    vgt_trap_handle_insn(in, uc, (uintptr_t)fake, (uintptr_t)alias, LEN, hook, NULL, NULL, &err);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    (void)sig, (void)si;
    vgt_trap_insn in;
    vgt_error err;
    vgt_status rc;
    if (vgt_patch_decode(patcher, engine, ucv, &in, &rc, &err)) return;
    if (rc != VGT_OK || vgt_trap_handle_insn(&in, ucv, (uintptr_t)fake, (uintptr_t)alias, LEN, hook, NULL, NULL, &err) != VGT_OK) {
        fprintf(stderr, "bench_doorbell: %s\n", err.msg);
        exit(1);
    }
    if (patch_on) vgt_patch_after_trap(patcher, ucv, &in, &err);
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
    (void)sig, (void)si;
    if (!vgt_patch_int3(patcher, ucv)) abort();
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 200000;
    vgt_error err;
    if (vgt_trap_engine_new(&engine, &err) != VGT_OK || vgt_patcher_new(&patcher, access_fn, NULL, &err) != VGT_OK) {
        fprintf(stderr, "bench_doorbell: %s\n", err.msg);
        return 2;
    }
    fake = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    alias = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
    sigaction(SIGSEGV, &sa, NULL);
    struct sigaction st = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
    sigaction(SIGTRAP, &st, NULL);

    double t0 = now();
    for (uint32_t i = 0; i < n; i++) bench_store(alias + 0x90, i);
    double plain = now() - t0;
    t0 = now();
    for (uint32_t i = 0; i < n; i++) bench_store_trapped(fake + 0x90, i);
    double trap = now() - t0;
    patch_on = 1;
    bench_store(fake + 0x90, 0);   /* the first store traps and patches the site */
    t0 = now();
    for (uint32_t i = 0; i < n; i++) bench_store(fake + 0x90, i);
    double patched = now() - t0;
    vgt_patch_stats ps = vgt_patcher_stats(patcher);
    if (ps.sites_patched != 1 || ps.calls < n) {
        fprintf(stderr, "bench_doorbell: the site was not patched (%llu sites, %llu calls)\n",
                (unsigned long long)ps.sites_patched, (unsigned long long)ps.calls);
        return 1;
    }
    printf("stores=%u trap_ns=%.1f patched_ns=%.1f plain_ns=%.1f trap_vs_patched=%.1f\n", n, trap / n * 1e9,
           patched / n * 1e9, plain / n * 1e9, trap / patched);
    return 0;
}
