/* cuda_hook.c: how callers reach the CUDA wrappers (cuda_cap.h), and the call bookkeeping.
 *
 * Three roads lead a program to a driver entry point, and each must end in our wrapper:
 *  1. the exported symbol: a program linked against libcuda resolves cuLaunchKernel to the shim's, which
 *     is loaded first (LD_PRELOAD);
 *  2. dlsym(handle, "cuLaunchKernel") on a handle of libcuda (Triton's launcher, the runtime's bootstrap):
 *     the shim's dlsym answers names of the table with the wrapper, remembering the driver's address;
 *  3. cuGetProcAddress / cuGetProcAddress_v2, which the CUDA runtime uses for every driver function
 *     (since CUDA 11.3): the address the driver returns is compared with the exported addresses of the
 *     entry points we wrap (the driver hands out its exported functions), and the matching wrapper is
 *     returned instead. The name alone is not enough: "cuGraphInstantiate" at version 12000 is
 *     cuGraphInstantiateWithFlags, "cuMemcpyHtoD" is _v2 or _v2_ptds depending on the flags.
 * dlsym itself must keep the caller's identity for RTLD_NEXT: the hook is a few instructions of assembly
 * that call the table lookup and then jump (not call) to libc's dlsym, so libc sees the original return
 * address. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cuda_cap.h"
#include "cuda_syms.h"

#define CU_DEFINE_REAL(s) __attribute__((visibility("hidden"))) void *cu_real_##s;
CU_SYMS(CU_DEFINE_REAL)
#undef CU_DEFINE_REAL

/* The wrappers' addresses, whatever their types (defined in cuda_launch.c and cuda_mem.c). */
#define CU_DECLARE_WRAPPER(s) void s(void);
CU_SYMS(CU_DECLARE_WRAPPER)
#undef CU_DECLARE_WRAPPER

typedef struct cu_sym {
    const char *name;
    void *wrapper;
    void **real;
    void *exported;               /* libcuda's address of the name, once looked up (cu_sym_lookup) */
    int looked_up;
} cu_sym;

#define CU_ENTRY(s) {#s, (void *)s, &cu_real_##s, NULL, 0},
static cu_sym syms[] = { CU_SYMS(CU_ENTRY) };
#undef CU_ENTRY
#define NSYMS (sizeof syms / sizeof syms[0])

/* libc's dlsym (dlvsym is not interposed) */
__attribute__((visibility("hidden"))) void *(*vgt_cuda_real_dlsym)(void *, const char *);

static void resolve_dlsym(void)
{
    if (vgt_cuda_real_dlsym) return;
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    __atomic_store_n(&vgt_cuda_real_dlsym, (void *(*)(void *, const char *))p, __ATOMIC_RELEASE);
}

static void *libcuda(void)
{
    static void *h;
    void *cur = __atomic_load_n(&h, __ATOMIC_ACQUIRE);
    if (cur) return cur;
    cur = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (cur) __atomic_store_n(&h, cur, __ATOMIC_RELEASE);
    return cur;
}

/* libcuda's own definition of name: the next one after the shim, else the loaded libcuda's. */
static void *driver_sym(const char *name)
{
    resolve_dlsym();
    if (!vgt_cuda_real_dlsym) return NULL;
    void *p = vgt_cuda_real_dlsym(RTLD_NEXT, name);
    if (!p && libcuda()) p = vgt_cuda_real_dlsym(libcuda(), name);
    return p;
}

void *cu_real(void **slot, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (p) return p;
    p = driver_sym(name);
    if (p) __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    return p;
}

void *cu_lib_sym(const char *name) { return driver_sym(name); }

static cu_sym *sym_by_name(const char *name)
{
    if (!name || name[0] != 'c' || name[1] != 'u') return NULL;
    for (size_t i = 0; i < NSYMS; i++)
        if (!strcmp(syms[i].name, name)) return &syms[i];
    return NULL;
}

/* dlsym(handle, name) for a name of the table on an explicit handle: the wrapper, the driver's address
 * kept as the real one. NULL: not ours (the assembly then jumps to libc's dlsym). */
static void *dlsym_hook(void *handle, const char *name);

__attribute__((visibility("hidden"))) void *vgt_cuda_dlsym_hook(void *handle, const char *name)
{
    SHIM_SPAN(span);
    void *p = dlsym_hook(handle, name);
    SHIM_SPAN_END(span, SHIM_PROF_DLSYM);
    return p;
}

static void *dlsym_hook(void *handle, const char *name)
{
    resolve_dlsym();
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT || !vgt_cuda_real_dlsym) return NULL;
    cu_sym *s = sym_by_name(name);
    if (!s) return NULL;
    void *p = vgt_cuda_real_dlsym(handle, name);
    if (!p || p == s->wrapper) return NULL;
    void *expected = NULL;
    __atomic_compare_exchange_n(s->real, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return s->wrapper;
}

/* The dlsym every caller reaches: ask the table, else continue in libc's dlsym as if called directly. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    push %rdi\n"
        "    push %rsi\n"
        "    sub $8, %rsp\n"
        "    call vgt_cuda_dlsym_hook\n"
        "    add $8, %rsp\n"
        "    pop %rsi\n"
        "    pop %rdi\n"
        "    test %rax, %rax\n"
        "    jz 1f\n"
        "    ret\n"
        "1:  jmp *vgt_cuda_real_dlsym(%rip)\n"
        ".size dlsym, .-dlsym\n");

/* cuGetProcAddress answered p for symbol: our wrapper when p is the exported address of an entry point
 * we wrap. */
static void *proc_hook(const char *symbol, void *p);

void *cu_proc_hook(const char *symbol, void *p)
{
    SHIM_SPAN(span);
    void *q = proc_hook(symbol, p);
    SHIM_SPAN_END(span, SHIM_PROF_CUDA_PROC);
    return q;
}

static void *proc_hook(const char *symbol, void *p)
{
    if (!p || !symbol || symbol[0] != 'c' || symbol[1] != 'u') return p;
    for (size_t i = 0; i < NSYMS; i++) {
        cu_sym *s = &syms[i];
        if (p == s->wrapper) return p;
        if (!__atomic_load_n(&s->looked_up, __ATOMIC_ACQUIRE)) {
            void *e = driver_sym(s->name);
            if (e == s->wrapper) e = NULL;
            s->exported = e;
            __atomic_store_n(&s->looked_up, 1, __ATOMIC_RELEASE);
        }
        if (s->exported == p) {
            void *expected = NULL;
            __atomic_compare_exchange_n(s->real, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
            return s->wrapper;
        }
    }
    /* a name we wrap for which the driver returned an address no exported symbol has: not captured */
    size_t n = strlen(symbol);
    for (size_t i = 0; i < NSYMS; i++)
        if (!strncmp(syms[i].name, symbol, n) && (syms[i].name[n] == 0 || syms[i].name[n] == '_') &&
            shim_first_time(0xC0DA000000000000ull ^ (uint64_t)(uintptr_t)p)) {
            shim_problem(1, VGT_E_UNSUPPORTED, "cuGetProcAddress(\"%s\") returned %p, which is no exported entry "
                         "point of libcuda that the capture wraps: its calls are not recorded", symbol, p);
            break;
        }
    return p;
}

/* ---- the call bookkeeping ---- */

static __thread int depth;        /* > 0: inside a wrapped call (libcuda calling an entry point again) */

static uint32_t gettid_u32(void) { return (uint32_t)syscall(SYS_gettid); }

void cu_begin(cu_call *c, uint32_t api, uint32_t flags)
{
    memset(c, 0, sizeof *c);
    if (g_shim_prof) shim_span_begin(&c->span);
    c->rec = depth++ == 0 && g_shim.active && g_shim.cap && !shim_foreign();
    c->head.api = api;
    c->head.flags = flags;
    if (c->rec) {
        c->head.thread = gettid_u32();
        c->head.submits_before = vgt_capture_submits(g_shim.cap);
    }
    if (g_shim_prof) shim_span_begin(&c->real);
}

void cu_call_done(cu_call *c) { SHIM_SPAN_END(c->span, SHIM_PROF_CUDA); }

void cu_end(cu_call *c, CUresult r)
{
    SHIM_SPAN_END(c->real, SHIM_PROF_REAL);
    depth--;
    c->head.result = r;
    /* cuInit is the call that starts the capture (its first open of /dev/nvidiactl) */
    if (!c->rec && c->head.api == VGT_CUDA_INIT && depth == 0 && g_shim.active && g_shim.cap && !shim_foreign()) {
        c->rec = 1;
        c->head.thread = gettid_u32();
    }
    if (c->rec) c->head.submits_after = vgt_capture_submits(g_shim.cap);
}

void cu_write(uint16_t type, const void *rec)
{
    if (g_shim.active && g_shim.cap) shim_record(type, rec);
}

uint64_t cu_data_max(void)
{
    static uint64_t v;
    if (!v) {
        const char *e = getenv("VGT_CAPTURE_CUDA_DATA_MAX");
        uint64_t n = e && *e ? strtoull(e, NULL, 0) : 16ull << 20;
        v = n > (48ull << 20) ? 48ull << 20 : n ? n : 1;
    }
    return v;
}
