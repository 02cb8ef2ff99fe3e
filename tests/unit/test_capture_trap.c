/* test_capture_trap.c: the capture shim's trap engine on the CPU (CI has no GPU).
 *
 * An ordinary anonymous page stands in for the usermode page: it is PROT_NONE, and a second page (the
 * alias) plays the real device page. A SIGSEGV handler routes every fault through vgt_trap_handle, the
 * same path the shim takes: capstone decode, effective address, the access performed on the alias,
 * RIP advanced. The test checks that stores of several encodings land in the alias with the right
 * width, that loads return the alias's values into the right registers with x86 semantics, that the
 * store hook sees doorbell stores, and that four threads trapping at once all get exact results. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vgt/capture_trap.h"
#include "check.h"

static vgt_trap_engine *engine;
static uint8_t *fake, *alias;
static const uint64_t LEN = 0x10000;
static _Atomic uint64_t doorbell_sum, doorbell_count, unhandled;

static void on_store(void *ctx, uint64_t off, uint32_t size, uint64_t value)
{
    (void)ctx;
    if (off == 0x90 && size == 4) { atomic_fetch_add(&doorbell_sum, value); atomic_fetch_add(&doorbell_count, 1); }
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    vgt_error err;
    if ((uint8_t *)si->si_addr >= fake && (uint8_t *)si->si_addr < fake + LEN &&
        vgt_trap_handle(engine, ucv, (uintptr_t)fake, (uintptr_t)alias, LEN, on_store, NULL, NULL, NULL, &err) == VGT_OK)
        return;
    if (getenv("TRAP_DEBUG")) fprintf(stderr, "unhandled fault at %p: %s\n", si->si_addr, err.msg);
    atomic_fetch_add(&unhandled, 1);
    signal(SIGSEGV, SIG_DFL);   /* a real crash: let it happen */
}

/* Each helper pins the encoding the drivers use (as disassembled from their doorbell writes) with fixed
 * registers. */
static void st32_rax_ecx(void *p, uint32_t v) { __asm__ volatile("movl %%ecx, (%%rax)" ::"a"(p), "c"(v) : "memory"); }
static void st32_disp(void *base, uint32_t v) { __asm__ volatile("movl %%ecx, 0x90(%%rax)" ::"a"(base), "c"(v) : "memory"); }
static void st64_disp8(void *base, uint64_t v) { __asm__ volatile("movq %%rdx, 8(%%rax)" ::"a"(base), "d"(v) : "memory"); }
static void st32_imm(void *base) { __asm__ volatile("movl $0x12345678, 0x10(%%rax)" ::"a"(base) : "memory"); }
static void st64_imm_sib(void *base, uint64_t idx) { __asm__ volatile("movq $-2, 0x20(%%rax,%%rcx,8)" ::"a"(base), "c"(idx) : "memory"); }
static void st8_r(void *base, uint8_t v) { __asm__ volatile("movb %%dl, 0x30(%%rax)" ::"a"(base), "d"(v) : "memory"); }
static void st8_ah(void *base, uint32_t v) { __asm__ volatile("movb %%ah, 0x31(%%rbx)" ::"b"(base), "a"(v) : "memory"); }
static void st16_r9(void *base, uint16_t v)
{
    __asm__ volatile("movq %0, %%r8\n\tmovzwl %1, %%r9d\n\tmovw %%r9w, 0x32(%%r8)" ::"r"(base), "r"(v) : "memory", "r8", "r9");
}
static void st64_xmm(void *base, uint64_t v)
{
    __asm__ volatile("movq %1, %%xmm1\n\tmovq %%xmm1, 0x40(%0)" ::"r"(base), "r"(v) : "memory", "xmm1");
}
static uint32_t ld32_rsi(void *p) { uint32_t v; __asm__ volatile("movl (%%rsi), %%eax" : "=a"(v) : "S"(p) : "memory"); return v; }
static uint32_t ld32_disp(void *base) { uint32_t v; __asm__ volatile("movl 0x84(%%rdx), %%ecx" : "=c"(v) : "d"(base) : "memory"); return v; }
static uint64_t ld32_zero_upper(void *base)
{
    uint64_t v = ~0ull;
    __asm__ volatile("movl 0x80(%1), %k0" : "+r"(v) : "r"(base) : "memory");
    return v;
}
static uint64_t ld64(void *base) { uint64_t v; __asm__ volatile("movq 0x48(%1), %0" : "=r"(v) : "r"(base) : "memory"); return v; }
static uint64_t ld8_keep(void *base)
{
    uint64_t v = 0x1111111111111111ull;
    __asm__ volatile("movb 0x50(%1), %b0" : "+q"(v) : "r"(base) : "memory");
    return v;
}
static uint32_t ldzx8(void *base) { uint32_t v; __asm__ volatile("movzbl 0x51(%1), %0" : "=r"(v) : "r"(base) : "memory"); return v; }
static int64_t ldsx32(void *base) { int64_t v; __asm__ volatile("movslq 0x54(%1), %0" : "=r"(v) : "r"(base) : "memory"); return v; }

static uint64_t rd(uint64_t off, unsigned size) { uint64_t v = 0; memcpy(&v, alias + off, size); return v; }

static void single_thread_cases(void)
{
    st32_rax_ecx(fake + 0x100, 0xa001a);
    CHECK(rd(0x100, 4) == 0xa001a, "mov [rax], ecx: alias holds 0x%llx", (unsigned long long)rd(0x100, 4));
    st32_disp(fake, 0x30016);
    CHECK(rd(0x90, 4) == 0x30016, "mov [rax+0x90], ecx: 0x%llx", (unsigned long long)rd(0x90, 4));
    CHECK(atomic_load(&doorbell_count) == 1 && atomic_load(&doorbell_sum) == 0x30016, "doorbell hook saw %llu stores",
          (unsigned long long)atomic_load(&doorbell_count));
    st64_disp8(fake, 0x1122334455667788ull);
    CHECK(rd(8, 8) == 0x1122334455667788ull, "mov [rax+8], rdx: 0x%llx", (unsigned long long)rd(8, 8));
    st32_imm(fake);
    CHECK(rd(0x10, 4) == 0x12345678, "mov dword [rax+0x10], imm: 0x%llx", (unsigned long long)rd(0x10, 4));
    st64_imm_sib(fake, 3);
    CHECK(rd(0x38, 8) == ~1ull, "mov qword [rax+rcx*8+0x20], -2: 0x%llx", (unsigned long long)rd(0x38, 8));
    memset(alias + 0x30, 0, 8);
    st8_r(fake, 0xab);
    st8_ah(fake, 0xcd00);
    st16_r9(fake, 0xbeef);
    CHECK(rd(0x30, 1) == 0xab && rd(0x31, 1) == 0xcd && rd(0x32, 2) == 0xbeef && rd(0x34, 1) == 0,
          "byte/word stores: 30=%llx 31=%llx 32=%llx", (unsigned long long)rd(0x30, 1), (unsigned long long)rd(0x31, 1),
          (unsigned long long)rd(0x32, 2));
    st64_xmm(fake, 0x0102030405060708ull);
    CHECK(rd(0x40, 8) == 0x0102030405060708ull, "movq [mem], xmm1: 0x%llx", (unsigned long long)rd(0x40, 8));

    uint32_t t = 0xdeadbeef;
    memcpy(alias + 0x84, &t, 4);
    CHECK_EQ_U64(ld32_disp(fake), 0xdeadbeef, "mov ecx, [rdx+0x84]");
    memcpy(alias + 0x200, &t, 4);
    CHECK_EQ_U64(ld32_rsi(fake + 0x200), 0xdeadbeef, "mov eax, [rsi]");
    t = 0x80000001;
    memcpy(alias + 0x80, &t, 4);
    CHECK_EQ_U64(ld32_zero_upper(fake), 0x80000001ull, "32-bit load must zero bits 63:32");
    uint64_t q = 0xfedcba9876543210ull;
    memcpy(alias + 0x48, &q, 8);
    CHECK_EQ_U64(ld64(fake), q, "mov r64, [mem]");
    alias[0x50] = 0x7f;
    CHECK(ld8_keep(fake) == 0x111111111111117full, "8-bit load must keep bits 63:8: 0x%llx",
          (unsigned long long)ld8_keep(fake));
    alias[0x51] = 0xf0;
    CHECK_EQ_U64(ldzx8(fake), 0xf0, "movzx");
    int32_t neg = -5;
    memcpy(alias + 0x54, &neg, 4);
    CHECK_EQ_U64(ldsx32(fake), -5, "movsxd");
}

#define THREADS 4
#define ITER 2000

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint8_t *slot = fake + 0x1000 + 0x100 * id;
    for (uint32_t i = 0; i < ITER; i++) {
        uint32_t v = (uint32_t)(id << 24 | i);
        st32_rax_ecx(slot, v);
        if (ld32_rsi(slot) != v) return (void *)1;
        st32_disp(fake + 0x2000 + 0x100 * id, (uint32_t)id + 1);   /* same encoding as the doorbell, other offset */
    }
    return NULL;
}

static void threaded_case(void)
{
    uint64_t before = atomic_load(&doorbell_count);
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += r != NULL;
    }
    CHECK(bad == 0, "%d threads read back a value other than the one they stored", bad);
    for (uint32_t id = 0; id < THREADS; id++)
        CHECK(rd(0x1000 + 0x100 * id, 4) == (id << 24 | (ITER - 1)), "thread %u's last store is missing", id);
    /* Those stores hit offset 0x2090+0x100*id, not the doorbell at 0x90: */
    CHECK(atomic_load(&doorbell_count) == before, "stores elsewhere were taken for doorbells");
}

static void refusal_case(void)
{
    /* An instruction the engine does not emulate is refused by name, not guessed at. */
    uint8_t code[] = { 0xf0, 0x0f, 0xc1, 0x08 };   /* lock xadd [rax], ecx */
    vgt_trap_insn in;
    vgt_error err;
    vgt_status rc = vgt_trap_decode(engine, 0x1000, code, sizeof code, &in, &err);
    CHECK(rc == VGT_E_UNSUPPORTED && strstr(err.msg, "xadd"), "lock xadd: rc %d, '%s'", rc, err.msg);
    uint8_t junk[] = { 0x0f, 0xff };
    rc = vgt_trap_decode(engine, 0x2000, junk, sizeof junk, &in, &err);
    CHECK(rc == VGT_E_DECODE || rc == VGT_E_UNSUPPORTED, "undefined opcode: rc %d", rc);
}

int main(void)
{
    vgt_error err;
    if (vgt_trap_engine_new(&engine, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    fake = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    alias = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fake == MAP_FAILED || alias == MAP_FAILED) { perror("mmap"); return 1; }
    struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_NODEFER };
    sigaction(SIGSEGV, &sa, NULL);

    single_thread_cases();
    threaded_case();
    refusal_case();
    CHECK(atomic_load(&unhandled) == 0, "%llu faults were not handled", (unsigned long long)atomic_load(&unhandled));
    vgt_trap_stats st = vgt_trap_engine_stats(engine);
    CHECK(st.cache_hits > 0, "the decode cache was never hit (%llu decodes)", (unsigned long long)st.decodes);
    vgt_trap_engine_free(engine);
    printf("test_capture_trap: %llu decodes, %llu cache hits\n", (unsigned long long)st.decodes,
           (unsigned long long)st.cache_hits);
    return check_finish("test_capture_trap");
}
