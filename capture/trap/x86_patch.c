/* x86_patch.c: the store-site patcher (capture_patch.h has the design; x86_reloc.c moves instructions,
 * x86_stub.c writes the trampoline's code).
 *
 * Invariants:
 *  - a site's slot is filled once (site address, then state with release order) and never reused, so
 *    the signal paths find sites without a lock; building and writing happen under one spin lock;
 *  - the trap path's decode never reads a site while its jump is being written: `gen` is odd during the
 *    writes, and a decode that saw gen change is retried (a seqlock), so it sees either the store or a
 *    site already known as patched (and is sent to its trampoline);
 *  - nothing on these paths allocates after vgt_patcher_new: trampolines come from mmap, code bytes from
 *    process_vm_readv into the patcher's buffer (it fails instead of faulting on an unreadable page). */
#include <cpuid.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "x86_patch.h"

#define MAX_SITES 64
#define PAGE 4096ull
#define TRAMP_BYTES 4096u
#define REACH 0x7fff0000ll          /* what a rel32 jump or displacement reaches, with margin */

enum { SITE_FREE = 0, SITE_PATCHING = 1, SITE_PATCHED = 2, SITE_REFUSED = 3 };

typedef struct patch_site {
    _Atomic int state;
    _Atomic uint64_t site;
    uint32_t displaced;
    vgt_trap_insn insn;
    uint64_t entry, tail;
    struct vgt_patcher *owner;
} patch_site;

struct vgt_patcher {
    vgt_patch_access_fn fn;
    void *ctx;
    csh cs;
    cs_insn *ci;
    atomic_flag lock;
    _Atomic uint64_t gen;            /* odd while a jump is being written */
    uint32_t xsave_size;             /* 0: fxsave */
    int xsavec;                      /* save with XSAVEC */
    int sync_core;                   /* membarrier SYNC_CORE registered */
    int full_reported;
    patch_site sites[MAX_SITES];
    uint8_t win[3 * PAGE];           /* the code around a site: the page before, its page, the next one */
    _Atomic uint64_t patched, refused, calls;
};

static void lock(vgt_patcher *p) { while (atomic_flag_test_and_set_explicit(&p->lock, memory_order_acquire)) { } }
static void unlock(vgt_patcher *p) { atomic_flag_clear_explicit(&p->lock, memory_order_release); }

/* Bytes of extended state xsave writes with every enabled component, or 0 when only fxsave is there;
 * *compact: XSAVEC is there (it skips components in their initial state: most of the time the whole
 * AVX-512 state, which makes the save and restore several times cheaper). */
static uint32_t xsave_area_size(int *compact)
{
    unsigned a, b, c, d;
    *compact = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 26)) || !(c & (1u << 27))) return 0;   /* XSAVE, OSXSAVE */
    if (!__get_cpuid_count(0xd, 0, &a, &b, &c, &d) || b < 576) return 0;
    uint32_t size = b;
    if (__get_cpuid_count(0xd, 1, &a, &b, &c, &d)) *compact = (a >> 1) & 1;
    return size;
}

vgt_status vgt_patcher_new(vgt_patcher **out, vgt_patch_access_fn fn, void *ctx, vgt_error *err)
{
    vgt_patcher *p = calloc(1, sizeof *p);
    if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "patcher: out of memory");
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &p->cs) != CS_ERR_OK) {
        free(p);
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patcher: capstone cannot open x86-64");
    }
    cs_option(p->cs, CS_OPT_DETAIL, CS_OPT_ON);
    p->ci = cs_malloc(p->cs);
    if (!p->ci) {
        cs_close(&p->cs);
        free(p);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "patcher: capstone instruction buffer");
    }
    p->fn = fn;
    p->ctx = ctx;
    p->xsave_size = xsave_area_size(&p->xsavec);
    p->sync_core = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0;
    atomic_flag_clear(&p->lock);
    *out = p;
    return VGT_OK;
}

void vgt_patcher_prepare(void)
{
    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
}

void vgt_patcher_free(vgt_patcher *p)
{
    if (!p) return;
    cs_free(p->ci, 1);
    cs_close(&p->cs);
    free(p);
}

vgt_patch_stats vgt_patcher_stats(const vgt_patcher *p)
{
    vgt_patcher *q = (vgt_patcher *)p;
    return (vgt_patch_stats){ atomic_load(&q->patched), atomic_load(&q->refused), atomic_load(&q->calls) };
}

static patch_site *find(vgt_patcher *p, uint64_t site)
{
    for (int i = 0; i < MAX_SITES; i++) {
        patch_site *s = &p->sites[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) == SITE_FREE) return NULL;   /* filled in order */
        if (atomic_load_explicit(&s->site, memory_order_relaxed) == site) return s;
    }
    return NULL;
}

static int redirect(vgt_patcher *p, ucontext_t *uc, uint64_t rip)
{
    patch_site *s = find(p, rip);
    if (!s) return 0;
    int st = atomic_load_explicit(&s->state, memory_order_acquire);
    if (st != SITE_PATCHING && st != SITE_PATCHED) return 0;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s->entry;
    return 1;
}

int vgt_patch_int3(vgt_patcher *p, ucontext_t *uc)
{
    return p && redirect(p, uc, (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1);
}

int vgt_patch_decode(vgt_patcher *p, vgt_trap_engine *e, ucontext_t *uc, vgt_trap_insn *in, vgt_status *rc,
                     vgt_error *err)
{
    for (;;) {
        uint64_t g = atomic_load_explicit(&p->gen, memory_order_acquire);
        if (g & 1) continue;   /* a jump is being written (microseconds) */
        if (redirect(p, uc, (uint64_t)uc->uc_mcontext.gregs[REG_RIP])) return 1;
        *rc = vgt_trap_decode_at(e, uc, in, err);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&p->gen, memory_order_relaxed) == g) return 0;
    }
}

/* The patched path: called by the trampoline with the frame it pushed. */
static void dispatch(uint64_t *frame, patch_site *s)
{
    static const int GREG[FR_RFLAGS] = { REG_R15, REG_R14, REG_R13, REG_R12, REG_R11, REG_R10, REG_R9, REG_R8,
                                         REG_RDI, REG_RSI, REG_RBP, REG_RBX, REG_RDX, REG_RCX, REG_RAX };
    int saved_errno = errno;   /* the program's errno at the store survives the capture's calls */
    vgt_patcher *p = s->owner;
    ucontext_t uc;
    memset(&uc.uc_mcontext, 0, sizeof uc.uc_mcontext);
    for (int i = 0; i < FR_RFLAGS; i++) uc.uc_mcontext.gregs[GREG[i]] = (greg_t)frame[i];
    uc.uc_mcontext.gregs[REG_EFL] = (greg_t)frame[FR_RFLAGS];
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)((uint64_t)(frame + FR_COUNT) + PATCH_RED_ZONE);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)atomic_load_explicit(&s->site, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
    p->fn(p->ctx, &uc, &s->insn);
    for (int i = 0; i < FR_RFLAGS; i++) frame[i] = (uint64_t)uc.uc_mcontext.gregs[GREG[i]];   /* a load's result */
    errno = saved_errno;
}

static void sync_cores(vgt_patcher *p)
{
    if (p->sync_core) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
    else atomic_thread_fence(memory_order_seq_cst);
}

/* Code bytes at [addr, addr+len) into buf, stopping at the first unreadable byte; returns the count. */
static uint32_t read_code(uint64_t addr, uint8_t *buf, uint32_t len)
{
    struct iovec local = { buf, len }, remote = { (void *)addr, len };
    ssize_t n = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1ul, &remote, 1ul, 0ul);
    return n < 0 ? 0 : (uint32_t)n;
}

/* A page for one trampoline within reach of site (rel32 both ways), or NULL. */
static uint8_t *alloc_near(uint64_t site)
{
    uint64_t base = site & ~0xffffull;
    for (uint64_t k = 1; k <= 16384; k++) {        /* +-1 GiB in 64 KiB steps */
        for (int up = 0; up < 2; up++) {
            uint64_t h = up ? base + k * 0x10000 : base - k * 0x10000;
            void *m = mmap((void *)h, TRAMP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                           -1, 0);
            if (m == MAP_FAILED) continue;
            int64_t d = (int64_t)((uint64_t)m - site);
            if (d > -REACH && d < REACH) return m;   /* an old kernel may take the flag as a hint only */
            munmap(m, TRAMP_BYTES);
        }
    }
    return NULL;
}

static int patchable_kind(const vgt_trap_insn *in)
{
    if (in->kind == VGT_TRAP_STORE_IMM) return 1;
    if (in->reg.greg < 0 || in->reg.greg == REG_RIP) return 0;   /* XMM registers are not in the frame */
    return in->kind == VGT_TRAP_STORE_REG || (in->kind == VGT_TRAP_LOAD && in->reg.greg != REG_RSP);
}

/* Write `jmp entry` over the site, text_poke style (the header says why this order). */
static vgt_status poke(vgt_patcher *p, uint64_t site, uint32_t displaced, uint64_t entry, vgt_error *err)
{
    uint8_t jmp[PATCH_JMP_LEN];
    if (patch_emit_jmp(jmp, site, entry) != PATCH_JMP_LEN)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: trampoline out of reach of 0x%llx", (unsigned long long)site);
    uint64_t first = site & ~(PAGE - 1), last = (site + displaced - 1) & ~(PAGE - 1);
    size_t span = (size_t)(last - first + PAGE);
    /* Never drop PROT_EXEC, even briefly: other threads may be running code on these pages. */
    if (mprotect((void *)first, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: cannot make the code at 0x%llx writable: %s",
                        (unsigned long long)site, strerror(errno));
    volatile uint8_t *b = (volatile uint8_t *)site;
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_acq_rel);   /* odd: decoders wait */
    b[0] = 0xcc;
    sync_cores(p);
    for (uint32_t i = 1; i < displaced; i++) b[i] = i < PATCH_JMP_LEN ? jmp[i] : 0xcc;
    sync_cores(p);
    b[0] = jmp[0];
    sync_cores(p);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_acq_rel);
    mprotect((void *)first, span, PROT_READ | PROT_EXEC);
    return VGT_OK;
}

static vgt_status build(vgt_patcher *p, patch_site *s, uint64_t site, const vgt_trap_insn *in, vgt_error *err)
{
    if (!patchable_kind(in))
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: the access at 0x%llx uses a register the trampoline "
                        "does not carry", (unsigned long long)site);
    /* The code around the site: the page before it (for branches into the range from above), its page and
     * the next one, as far as they are readable. */
    uint64_t pg = site & ~(PAGE - 1);
    uint32_t before = read_code(pg - PAGE, p->win, PAGE) == PAGE ? (uint32_t)PAGE : 0;
    uint8_t *w = p->win + before;
    uint32_t got = read_code(pg, w, 2 * PAGE);
    if (got < PAGE) {   /* no process_vm_readv: the site's own page, which is being executed */
        memcpy(w, (const void *)pg, PAGE);
        got = PAGE;
        before = 0;
        w = p->win;
    }
    uint32_t at = (uint32_t)(site - pg);
    uint8_t tail[PATCH_TAIL_MAX];
    uint32_t displaced, tail_len;
    uint8_t *tramp = alloc_near(site);
    if (!tramp)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: no free address within 2 GiB of 0x%llx for a trampoline",
                        (unsigned long long)site);
    uint32_t entry_len = patch_emit_entry(tramp, (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)dispatch, p->xsave_size,
                                          p->xsavec);
    uint64_t tail_addr = (uint64_t)(uintptr_t)tramp + entry_len;
    vgt_status rc = patch_relocate(p->cs, p->ci, site, w + at, got - at, in->length, tail, tail_addr, &displaced,
                                   &tail_len, err);
    if (rc == VGT_OK && displaced > PATCH_MAX_DISPLACED)
        rc = VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: displaced range too long");
    if (rc == VGT_OK)
        rc = patch_check_targets(p->cs, p->ci, pg - before, p->win, before + got, site, displaced, err);
    if (rc != VGT_OK) {
        munmap(tramp, TRAMP_BYTES);
        return rc;
    }
    memcpy(tramp + entry_len, tail, tail_len);
    patch_emit_jmp(tramp + entry_len + tail_len, tail_addr + tail_len, site + displaced);
    if (mprotect(tramp, TRAMP_BYTES, PROT_READ | PROT_EXEC) != 0) {
        munmap(tramp, TRAMP_BYTES);
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "patch: mprotect of the trampoline: %s", strerror(errno));
    }
    s->insn = *in;
    s->displaced = displaced;
    s->entry = (uint64_t)(uintptr_t)tramp;
    s->tail = tail_addr;
    s->owner = p;
    atomic_store_explicit(&s->site, site, memory_order_relaxed);
    atomic_store_explicit(&s->state, SITE_PATCHING, memory_order_release);   /* int3 hits find it from now */
    rc = poke(p, site, displaced, s->entry, err);
    if (rc != VGT_OK) {
        atomic_store_explicit(&s->state, SITE_REFUSED, memory_order_release);   /* the trampoline stays: a thread may be in it */
        return rc;
    }
    atomic_store_explicit(&s->state, SITE_PATCHED, memory_order_release);
    return VGT_OK;
}

vgt_status vgt_patch_after_trap(vgt_patcher *p, ucontext_t *uc, const vgt_trap_insn *in, vgt_error *err)
{
    uint64_t site = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - in->length;
    lock(p);
    patch_site *s = find(p, site);
    vgt_status rc = VGT_OK;
    if (s) {
        int st = atomic_load(&s->state);
        if (st == SITE_PATCHED || st == SITE_PATCHING) uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s->tail;
        else rc = VGT_E_UNSUPPORTED;
        unlock(p);
        if (rc != VGT_OK && err) { err->code = rc; err->msg[0] = 0; }
        return rc;
    }
    for (int i = 0; i < MAX_SITES && !s; i++)
        if (atomic_load(&p->sites[i].state) == SITE_FREE) s = &p->sites[i];
    if (!s) {
        int first = !p->full_reported;
        p->full_reported = 1;
        unlock(p);
        if (first) return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "patch: more than %d store sites; the rest stay trapped", MAX_SITES);
        if (err) { err->code = VGT_E_LIMIT; err->msg[0] = 0; }
        return VGT_E_UNSUPPORTED;
    }
    rc = build(p, s, site, in, err);
    if (rc == VGT_OK) {
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)s->tail;
        atomic_fetch_add(&p->patched, 1);
    } else {
        if (atomic_load(&s->state) == SITE_FREE) {
            atomic_store_explicit(&s->site, site, memory_order_relaxed);
            atomic_store_explicit(&s->state, SITE_REFUSED, memory_order_release);
        }
        atomic_fetch_add(&p->refused, 1);
        rc = VGT_E_UNSUPPORTED;
    }
    unlock(p);
    return rc;
}
