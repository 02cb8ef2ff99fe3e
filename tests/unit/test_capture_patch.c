/* test_capture_patch.c: doorbell store sites patched into direct calls (capture_patch.h), on the CPU.
 *
 * A PROT_NONE anonymous page stands in for the usermode page and a second page plays the real one, as
 * in test_capture_trap.c. The store sequences below are written in assembly so that their bytes are the
 * ones the patcher must handle: the 2-byte `mov [rax],ecx` of libcuda followed by a RIP-relative load
 * (relocated), a store whose neighbour is a jump (refused), a store inside a loop whose branch targets
 * the displaced range (refused), 6- and 7-byte stores and a load that need no neighbours.
 *
 * Phase 1 runs the workload on four threads with the trap path only; phase 2 runs it again with the
 * patcher: the first trap at each site patches it while the other threads keep trapping and storing.
 * Both phases must log the same stores per thread (offset, size, value) in the same order, leave the
 * same results in registers (flags, the red zone, an XMM register and the RIP-relative load survive the
 * trampoline), and phase 2 must take far fewer faults. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vgt/capture_patch.h"
#include "check.h"

uint32_t glob_word = 0xc0ffee11u;

/* void seq_a(void *p, uint32_t v, uint64_t out[4]): store + RIP-relative load in the displaced range;
 * out = the loaded word, ZF (set before the store), the red-zone qword, the XMM3 qword after the store. */
void seq_a(void *p, uint32_t v, uint64_t *out);
/* uint32_t seq_b(void *p, uint32_t v, uint32_t n): store, then a loop whose branch targets the range. */
uint32_t seq_b(void *p, uint32_t v, uint32_t n);
/* void seq_c(void *p, uint32_t v): store followed by a 2-byte jump (cannot move). */
void seq_c(void *p, uint32_t v);
/* void seq_d(void *p, uint32_t v): mov [rdi+0x90], esi (6 bytes, no neighbours needed). */
void seq_d(void *p, uint32_t v);
/* uint32_t seq_e(void *p): mov eax, [rdi+0x84] (a timer-style load). */
uint32_t seq_e(void *p);
/* void seq_f(void *p): mov dword [rdi+0x10], 0x77 (store of an immediate). */
void seq_f(void *p);
extern const uint8_t seq_a_site[], seq_b_site[], seq_c_site[], seq_d_site[];

__asm__(".text\n"
        ".globl seq_a\n.globl seq_a_site\nseq_a:\n"
        "  mov %rdi, %rax\n  mov %esi, %ecx\n  mov %rdx, %r8\n"
        "  movabs $0x5a5a5a5a5a5a5a5a, %r11\n  mov %r11, -8(%rsp)\n  movq %r11, %xmm3\n"
        "  cmp %rax, %rax\n"
        "seq_a_site:\n  movl %ecx, (%rax)\n  movl glob_word(%rip), %r9d\n"
        "  setz %r10b\n  mov -8(%rsp), %r11\n  movq %xmm3, %rdi\n"
        "  mov %r9, 0(%r8)\n  movzbl %r10b, %r10d\n  mov %r10, 8(%r8)\n  mov %r11, 16(%r8)\n  mov %rdi, 24(%r8)\n"
        "  ret\n"
        ".globl seq_b\n.globl seq_b_site\nseq_b:\n"
        "  mov %rdi, %rax\n  mov %esi, %ecx\n  mov %edx, %r8d\n  xor %edx, %edx\n"
        "seq_b_site:\n  movl %ecx, (%rax)\n"
        "1:\n  lea 1(%rdx), %edx\n  dec %r8d\n  jnz 1b\n  mov %edx, %eax\n  ret\n"
        ".globl seq_c\n.globl seq_c_site\nseq_c:\n"
        "  mov %rdi, %rax\n  mov %esi, %ecx\n"
        "seq_c_site:\n  movl %ecx, (%rax)\n  jmp 2f\n  int3\n2:\n  ret\n"
        ".globl seq_d\n.globl seq_d_site\nseq_d:\n"
        "seq_d_site:\n  movl %esi, 0x90(%rdi)\n  ret\n"
        ".globl seq_e\nseq_e:\n  movl 0x84(%rdi), %eax\n  ret\n"
        ".globl seq_f\nseq_f:\n  movl $0x77, 0x10(%rdi)\n  ret\n");

static vgt_trap_engine *engine;
static vgt_patcher *patcher;
static int patching;                 /* phase 2 */
static uint8_t *fake, *alias;
static const uint64_t LEN = 0x10000;
static _Atomic uint64_t segvs, unhandled, refusals;

#define THREADS 4
#define ITER 3000
#define LOG_MAX (ITER * 8)

typedef struct store_log { uint64_t n, e[LOG_MAX][3]; } store_log;
static store_log logs[2][THREADS];
static __thread store_log *my_log;

static void on_store(void *ctx, uint64_t off, uint32_t size, uint64_t value)
{
    (void)ctx;
    if (my_log && my_log->n < LOG_MAX) {
        uint64_t *e = my_log->e[my_log->n++];
        e[0] = off, e[1] = size, e[2] = value;
    }
}

/* The patched path: the same access the trap path performs, in ordinary context. */
static void access_fn(void *ctx, ucontext_t *uc, const vgt_trap_insn *in)
{
    (void)ctx;
    vgt_error err;
    if (vgt_trap_handle_insn(in, uc, (uintptr_t)fake, (uintptr_t)alias, LEN, on_store, NULL, NULL, &err) != VGT_OK)
        atomic_fetch_add(&unhandled, 1);
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    ucontext_t *uc = ucv;
    vgt_error err;
    vgt_trap_insn in;
    vgt_status rc = VGT_E_FAULT;
    atomic_fetch_add(&segvs, 1);
    if ((uint8_t *)si->si_addr >= fake && (uint8_t *)si->si_addr < fake + LEN) {
        if (patching) {
            if (vgt_patch_decode(patcher, engine, uc, &in, &rc, &err)) return;
        } else {
            rc = vgt_trap_decode_at(engine, uc, &in, &err);
        }
        if (rc == VGT_OK)
            rc = vgt_trap_handle_insn(&in, uc, (uintptr_t)fake, (uintptr_t)alias, LEN, on_store, NULL, NULL, &err);
        if (rc == VGT_OK) {
            if (patching && vgt_patch_after_trap(patcher, uc, &in, &err) != VGT_OK && err.msg[0]) {
                atomic_fetch_add(&refusals, 1);
                if (getenv("TRAP_DEBUG")) fprintf(stderr, "refused: %s\n", err.msg);
            }
            return;
        }
    }
    if (getenv("TRAP_DEBUG")) fprintf(stderr, "unhandled fault at %p: %s\n", si->si_addr, err.msg);
    atomic_fetch_add(&unhandled, 1);
    signal(SIGSEGV, SIG_DFL);
}

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
    (void)sig, (void)si;
    if (vgt_patch_int3(patcher, ucv)) return;
    atomic_fetch_add(&unhandled, 1);
    signal(SIGTRAP, SIG_DFL);
}

typedef struct job { int phase; uintptr_t id; int bad; } job;

static void *worker(void *arg)
{
    job *j = arg;
    my_log = &logs[j->phase][j->id];
    uint8_t *slot = fake + 0x1000 + 0x100 * j->id;
    for (uint32_t i = 0; i < ITER; i++) {
        uint32_t v = (uint32_t)(j->id << 24 | i);
        uint64_t out[4] = {0};
        seq_a(slot, v, out);
        if (out[0] != glob_word || out[1] != 1 || out[2] != 0x5a5a5a5a5a5a5a5aull || out[3] != 0x5a5a5a5a5a5a5a5aull)
            j->bad++;
        if (seq_b(slot + 4, v + 1, 3) != 3) j->bad++;
        seq_c(slot + 8, v + 2);
        seq_d(slot, v + 3);                 /* offset 0x90 within the slot */
        uint32_t t = v ^ 0x55aa55aau;
        memcpy(alias + 0x1000 + 0x100 * j->id + 0x84, &t, 4);
        if (seq_e(slot) != t) j->bad++;
        seq_f(slot);
    }
    return NULL;
}

static void run_phase(int phase)
{
    pthread_t th[THREADS];
    job jobs[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++) {
        jobs[i] = (job){ phase, i, 0 };
        pthread_create(&th[i], NULL, worker, &jobs[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        CHECK(jobs[i].bad == 0, "phase %d thread %d: %d wrong results (registers, flags or the RIP-relative load)",
              phase, i, jobs[i].bad);
    }
}

int main(void)
{
    vgt_error err;
    if (vgt_trap_engine_new(&engine, &err) != VGT_OK || vgt_patcher_new(&patcher, access_fn, NULL, &err) != VGT_OK) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    fake = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    alias = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fake == MAP_FAILED || alias == MAP_FAILED) { perror("mmap"); return 1; }
    struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
    sigaction(SIGSEGV, &sa, NULL);
    struct sigaction st = { .sa_sigaction = on_trap, .sa_flags = SA_SIGINFO };
    sigaction(SIGTRAP, &st, NULL);

    run_phase(0);
    uint64_t trap_faults = atomic_exchange(&segvs, 0);
    patching = 1;
    run_phase(1);
    uint64_t patch_faults = atomic_load(&segvs);

    CHECK(atomic_load(&unhandled) == 0, "%llu faults were not handled", (unsigned long long)atomic_load(&unhandled));
    for (int t = 0; t < THREADS; t++) {
        CHECK_EQ_U64(logs[1][t].n, logs[0][t].n, "thread %d: stores logged with patching vs trapping", t);
        CHECK(logs[0][t].n == (uint64_t)ITER * 5, "thread %d: %llu stores logged, want %u", t,
              (unsigned long long)logs[0][t].n, ITER * 5);
        CHECK(memcmp(logs[0][t].e, logs[1][t].e, sizeof logs[0][t].e[0] * logs[0][t].n) == 0,
              "thread %d: the patched path logged other stores than the trap path", t);
    }
    vgt_patch_stats ps = vgt_patcher_stats(patcher);
    CHECK_EQ_U64(ps.sites_patched, 4, "sites patched (seq_a, seq_d, seq_e, seq_f)");
    CHECK_EQ_U64(ps.sites_refused, 2, "sites refused (a jump after the store; a branch into the range)");
    CHECK_EQ_U64(atomic_load(&refusals), 2, "refusals reported once per site");
    CHECK(ps.calls > 0, "no access went through a trampoline");
    CHECK(seq_a_site[0] == 0xe9 && seq_d_site[0] == 0xe9, "patched sites begin with a jump: %02x %02x", seq_a_site[0],
          seq_d_site[0]);
    CHECK(seq_b_site[0] == 0x89 && seq_c_site[0] == 0x89, "refused sites keep the store: %02x %02x", seq_b_site[0],
          seq_c_site[0]);
    /* Trapping: 6 faults per iteration; patched: the refused sites (2 per iteration) and the first traps. */
    CHECK_EQ_U64(trap_faults, (uint64_t)THREADS * ITER * 6, "faults of the trap-only phase");
    CHECK(patch_faults < (uint64_t)THREADS * ITER * 2 + 64, "patched phase: %llu faults (trap-only: %llu)",
          (unsigned long long)patch_faults, (unsigned long long)trap_faults);
    printf("test_capture_patch: faults %llu trapped, %llu patched; %llu trampoline calls\n",
           (unsigned long long)trap_faults, (unsigned long long)patch_faults, (unsigned long long)ps.calls);
    return check_finish("test_capture_patch");
}
