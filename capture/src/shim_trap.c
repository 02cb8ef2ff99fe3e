/* shim_trap.c: doorbell-synchronous submissions.
 *
 * Every mapping of a usermode object (HOPPER_USERMODE_A 0xC661 and its siblings) is split in two: the
 * real device mapping, kept at an address only the shim knows (the alias), and an anonymous PROT_NONE
 * stand-in at the address the program gets. Each access of the program to the stand-in faults:
 *
 *   program: mov [rax+0x90], ecx --SIGSEGV--> on_segv --find_trap--> emulate
 *       emulate: vgt_trap_decode (capstone) -> effective address -> offset in the page
 *         offset 0x90, 4-byte store (NOTIFY_CHANNEL_PENDING; nvidia-rm-userspace.md §2):
 *             vgt_capture_doorbell_store(token): the capture's registry finds the channel, reads GP_PUT
 *             from its USERD, the tracker records changed memory, GPFIFO_SUBMIT is written
 *         then vgt_trap_emulate: the access is performed on the alias (the store reaches the real
 *         doorbell only now, after the record), RIP += length
 *       any other access (the timer at 0x80/0x84): performed on the alias, nothing recorded
 *   on_segv, not a stand-in: write tracking (shim_mem_write_fault) or the program's own handler.
 *
 * The stand-in is never unprotected, so several threads may ring doorbells at once: each one's store is
 * emulated in its own handler invocation.
 *
 * Patching (capture_patch.h; on unless VGT_CAPTURE_PATCH=0): the first trap at a store site also patches
 * the site into a jump to a trampoline that calls patched_access directly, which does what the trap
 * does (the same on_store hook, the same access on the alias) without a signal. A site the patcher
 * refuses stays trapped: the trap is always the fallback, and both paths write the same records. An instruction the engine cannot emulate gets the real
 * mapping moved over the stand-in (mremap): the program goes on, that page is no longer trapped, and a
 * DIAGNOSTIC says so. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"
#include "vgt/capture_patch.h"

#define MAX_TRAPS 64
#define DOORBELL_OFFSET 0x90u

typedef struct trap_page {
    _Atomic uintptr_t fake;     /* stand-in address, 0 when the slot is free */
    uintptr_t alias;
    size_t len;
} trap_page;

static trap_page traps[MAX_TRAPS];
static struct sigaction app_segv;          /* the program's SIGSEGV disposition, for chaining */
static struct sigaction app_trap;          /* and SIGTRAP's (the patcher's int3 window) */
static int installed;
static _Atomic uint64_t doorbells, timer_loads;
static vgt_patcher *patcher;
static char first_refusal[200];            /* why the first refused site stays trapped (stats line) */

static trap_page *find_trap(uintptr_t a)
{
    for (int i = 0; i < MAX_TRAPS; i++) {
        uintptr_t f = atomic_load_explicit(&traps[i].fake, memory_order_acquire);
        if (f && a >= f && a - f < traps[i].len) return &traps[i];
    }
    return NULL;
}

void *shim_trap_map(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    void *real = g_libc.mmap(NULL, len, prot, flags & ~(MAP_FIXED | MAP_FIXED_NOREPLACE), fd, off);
    if (real == MAP_FAILED) return real;
    int fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
    void *fake = g_libc.mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
    trap_page *slot = NULL;
    for (int i = 0; i < MAX_TRAPS && !slot; i++)
        if (!atomic_load(&traps[i].fake)) slot = &traps[i];
    if (fake == MAP_FAILED || !slot || !installed) {
        shim_problem(1, VGT_E_UNSUPPORTED, "usermode page at %p not trapped (%s): its doorbells are not recorded",
                     real, fake == MAP_FAILED ? strerror(errno) : !slot ? "too many usermode mappings" : "no handler");
        if (fake != MAP_FAILED) g_libc.munmap(fake, len);
        if (!fixed) return real;
        /* The program asked for that address: move the real mapping there. */
        void *moved = g_libc.mremap(real, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, addr);
        return moved;
    }
    slot->alias = (uintptr_t)real;
    slot->len = len;
    atomic_store_explicit(&slot->fake, (uintptr_t)fake, memory_order_release);
    return fake;
}

int shim_trap_owns(const void *addr)
{
    trap_page *t = find_trap((uintptr_t)addr);
    return t && (uintptr_t)addr == atomic_load(&t->fake);
}

int shim_trap_unmap(void *addr, size_t len)
{
    trap_page *t = find_trap((uintptr_t)addr);
    if (!t || (uintptr_t)addr != atomic_load(&t->fake)) return 0;
    uintptr_t fake = atomic_exchange(&t->fake, 0);
    g_libc.munmap((void *)t->alias, t->len);
    g_libc.munmap((void *)fake, len > t->len ? len : t->len);
    return 1;
}

void *shim_trap_remap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
    trap_page *t = find_trap((uintptr_t)old);
    if (!t || (uintptr_t)old != atomic_load(&t->fake)) return NULL;
    if (new_len != t->len || old_len != t->len) {   /* a usermode page never changes size */
        errno = EINVAL;
        return MAP_FAILED;
    }
    /* Move the stand-in; the alias (the real page) stays where only the shim knows it. */
    void *moved = g_libc.mremap(old, old_len, new_len, flags, new_addr);
    if (moved != MAP_FAILED) atomic_store(&t->fake, (uintptr_t)moved);
    return moved;
}

/* Give up trapping one page: the real mapping replaces the stand-in (same address, real device page). */
static void untrap(trap_page *t)
{
    uintptr_t fake = atomic_exchange(&t->fake, 0);
    if (!fake) return;
    if (g_libc.mremap((void *)t->alias, t->len, t->len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)fake) == MAP_FAILED)
        shim_problem(2, VGT_E_FAULT, "cannot restore the usermode page at 0x%lx: %s", (unsigned long)fake, strerror(errno));
}

/* A doorbell store of token: one call on the capture, which records the submission it announces (token
 * -> channel -> USERD GP_PUT -> changed memory -> GPFIFO_SUBMIT) under its mutex and returns holding
 * nothing. Runs in the signal handler; shim.h says why taking that mutex here cannot deadlock. Problems
 * are reported after the call, outside the capture. */
static void doorbell(uint32_t token)
{
    SHIM_SPAN(span);
    uint64_t t0 = vgt_now_ns();
    atomic_fetch_add(&doorbells, 1);
    vgt_capture *cap = g_shim.cap;
    if (g_shim.active && cap) {
        vgt_capture_doorbell_info info;
        vgt_error err;
        vgt_status rc = vgt_capture_doorbell_store(cap, token, &info, &err);
        int write_failed = rc != VGT_OK && (err.code == VGT_E_IO || err.code == VGT_E_NOMEM);
        if (write_failed) shim_write_failed(&err);
        if (info.unknown_token) {
            if (shim_first_time(0x1000000000ull | token))
                shim_problem(1, VGT_E_NOT_FOUND, "doorbell with token 0x%x that no recorded channel owns (reported once)", token);
        } else if (info.no_userd) {
            if (shim_first_time(0x2000000000ull | info.channel))
                shim_problem(1, VGT_E_NOT_FOUND, "channel 0x%x: USERD (memory 0x%x + 0x%llx) is not CPU-mapped; GP_PUT "
                             "unknown (reported once)", info.channel, info.userd_memory, (unsigned long long)info.userd_offset);
        } else if (rc != VGT_OK && !write_failed && shim_first_time(0x3000000000ull | info.channel)) {
            shim_problem(1, err.code, "%s (reported once per channel)", err.msg);
        }
    }
    atomic_fetch_add(&g_shim_time.submit_ns, vgt_now_ns() - t0);
    SHIM_SPAN_END(span, SHIM_PROF_SUBMIT);
}

static void on_store(void *ctx, uint64_t off, uint32_t size, uint64_t value)
{
    (void)ctx;
    if (off == DOORBELL_OFFSET && size == 4) doorbell((uint32_t)value);
}

static int emulate_timed(trap_page *t, ucontext_t *uc);

static int emulate(trap_page *t, ucontext_t *uc)
{
    SHIM_SPAN(span);
    uint64_t t0 = vgt_now_ns();
    int handled = emulate_timed(t, uc);
    SHIM_TIME_ADD(trap_ns, t0);
    SHIM_SPAN_END(span, SHIM_PROF_TRAP);
    return handled;
}

static int emulate_timed(trap_page *t, ucontext_t *uc)
{
    vgt_trap_insn in;
    vgt_error err;
    vgt_status rc;
    uintptr_t fake = atomic_load(&t->fake);
    if (patcher) {
        if (vgt_patch_decode(patcher, g_shim.trap, uc, &in, &rc, &err)) return 1;   /* a patched site: its trampoline */
    } else {
        rc = vgt_trap_decode_at(g_shim.trap, uc, &in, &err);
    }
    if (rc == VGT_OK) rc = vgt_trap_handle_insn(&in, uc, fake, t->alias, t->len, on_store, NULL, NULL, &err);
    if (rc != VGT_OK) {
        shim_problem(2, err.code, "%s at RIP 0x%lx; the usermode page is no longer trapped", err.msg,
                     (unsigned long)uc->uc_mcontext.gregs[REG_RIP]);
        untrap(t);   /* the instruction re-executes on the real page */
        return 1;
    }
    if (in.kind == VGT_TRAP_LOAD) atomic_fetch_add(&timer_loads, 1);
    /* Refusals are no records (the capture writes the same records either way): the stats line says why. */
    SHIM_SPAN(install);
    if (patcher && vgt_patch_after_trap(patcher, uc, &in, &err) != VGT_OK && err.msg[0] && !first_refusal[0])
        snprintf(first_refusal, sizeof first_refusal, "%.190s", err.msg);
    if (patcher) SHIM_SPAN_END(install, SHIM_PROF_PATCH_INSTALL);
    return 1;
}

/* The patched path (capture_patch.h): what the trap path does, called from the site's trampoline. An
 * access that no longer lands in a trapped page (the page was untrapped) is performed as written. */
static void patched_access(void *ctx, ucontext_t *uc, const vgt_trap_insn *in)
{
    (void)ctx;
    SHIM_SPAN(span);
    uint64_t t0 = vgt_now_ns();
    uint64_t ea = vgt_trap_address(in, uc);
    trap_page *t = find_trap(ea);
    vgt_error err;
    if (!t || vgt_trap_handle_insn(in, uc, atomic_load(&t->fake), t->alias, t->len, on_store, NULL, NULL, &err) != VGT_OK)
        vgt_trap_emulate(in, uc, (volatile void *)(uintptr_t)ea);
    if (in->kind == VGT_TRAP_LOAD) atomic_fetch_add(&timer_loads, 1);
    SHIM_TIME_ADD(patched_ns, t0);
    SHIM_SPAN_END(span, SHIM_PROF_PATCHED);
}

static void chain(int sig, siginfo_t *si, void *uc)
{
    const struct sigaction *app = sig == SIGTRAP ? &app_trap : &app_segv;
    if (app->sa_flags & SA_SIGINFO) {
        if (app->sa_sigaction) { app->sa_sigaction(sig, si, uc); return; }
    } else if (app->sa_handler != SIG_DFL && app->sa_handler != SIG_IGN) {
        app->sa_handler(sig);
        return;
    }
    /* Default action: restore it; the faulting instruction re-executes and the kernel ends the process
     * exactly as it would have without the shim. */
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    g_libc.sigaction(sig, &dfl, NULL);
    if (sig == SIGTRAP) raise(SIGTRAP);   /* an int3 does not re-execute */
}

/* An int3 of a site whose jump is being written (microseconds): the thread goes to the trampoline. */
static void on_trap(int sig, siginfo_t *si, void *ucv)
{
    int saved = errno;
    if (!vgt_patch_int3(patcher, ucv)) chain(sig, si, ucv);
    errno = saved;
}

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    int saved = errno;
    trap_page *t = find_trap((uintptr_t)si->si_addr);
    ucontext_t *uc = ucv;
    int write = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;   /* x86 page-fault error code: W/R bit */
    if (t ? emulate(t, uc) : (write && shim_mem_write_fault(si->si_addr))) {
        errno = saved;
        return;
    }
    chain(sig, si, ucv);
    errno = saved;
}

int shim_trap_install(void)
{
    if (installed) return 0;   /* a forked child starting its own capture keeps the inherited handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (g_libc.sigaction(SIGSEGV, &sa, &app_segv) != 0) return -1;
    installed = 1;
    const char *env = getenv("VGT_CAPTURE_PATCH");
    vgt_error err;
    if (!(env && !strcmp(env, "0")) && vgt_patcher_new(&patcher, patched_access, NULL, &err) == VGT_OK) {
        sa.sa_sigaction = on_trap;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        if (g_libc.sigaction(SIGTRAP, &sa, &app_trap) != 0) {   /* no int3 window handler: no patching */
            vgt_patcher_free(patcher);
            patcher = NULL;
        }
    }
    return 0;
}

int shim_sigaction_hook(int sig, const struct sigaction *act, struct sigaction *old, int *handled)
{
    *handled = 0;
    if (!installed || (sig != SIGSEGV && !(sig == SIGTRAP && patcher))) return 0;
    struct sigaction *app = sig == SIGSEGV ? &app_segv : &app_trap;
    *handled = 1;
    if (old) *old = *app;
    if (act) *app = *act;
    return 0;
}

uint64_t shim_trap_doorbells(void) { return atomic_load(&doorbells); }

void shim_trap_patch_stats(char *buf, size_t n)
{
    vgt_patch_stats ps = patcher ? vgt_patcher_stats(patcher) : (vgt_patch_stats){0};
    snprintf(buf, n, "patch=%s sites_patched=%llu sites_refused=%llu patched_calls=%llu%s%s", patcher ? "on" : "off",
             (unsigned long long)ps.sites_patched, (unsigned long long)ps.sites_refused, (unsigned long long)ps.calls,
             first_refusal[0] ? " first_refusal: " : "", first_refusal);
}
