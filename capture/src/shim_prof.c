/* shim_prof.c: VGT_CAPTURE_PROFILE's accounting by hook family (shim.h): calls and exclusive time.
 *
 * Exclusive time: each thread keeps the sum of the span times ended in it (inner, thread-local, initial
 * exec: no allocation on first use, so a signal handler may touch it). A span ending takes out of its
 * duration what ended inside it (inner - inner0) and adds only its own share to inner, so an enclosing
 * span (a trap around a submission, an mmap around a view's initial read, a signal handler that
 * interrupted a hook) never counts the same nanosecond twice. Counters are atomics: spans end on any
 * thread and in signal handlers. */
#include <stdatomic.h>
#include <stdio.h>

#include "shim.h"

int g_shim_prof;

static const char *const prof_names[SHIM_PROF_FAMILIES] = {
    "open", "close", "ioctl_alloc", "ioctl_control", "ioctl_free", "ioctl_map", "ioctl_memory", "ioctl_other",
    "ioctl_uvm", "mmap", "munmap", "mremap", "trap", "patched", "patch_install", "write_fault", "cuda", "cuda_proc",
    "dlsym", "register", "submit", "activate", "real",
};
static _Atomic uint64_t prof_calls[SHIM_PROF_FAMILIES], prof_ns[SHIM_PROF_FAMILIES];
static __thread __attribute__((tls_model("initial-exec"))) uint64_t inner;

void shim_span_begin(shim_span *s)
{
    s->t0 = vgt_now_ns();
    s->inner0 = inner;
}

void shim_span_end(shim_span *s, int family)
{
    uint64_t d = vgt_now_ns() - s->t0, nested = inner - s->inner0;
    uint64_t own = d > nested ? d - nested : 0;
    inner += own;
    atomic_fetch_add_explicit(&prof_calls[family], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&prof_ns[family], own, memory_order_relaxed);
}

void shim_prof_print(int pid, const char *tail, FILE *f)
{
    char line[2048];
    int at = snprintf(line, sizeof line, "vgt-capture: hooks pid=%d ms", pid);
    uint64_t total = 0;
    for (int i = 0; i < SHIM_PROF_FAMILIES && at > 0 && (size_t)at < sizeof line; i++) {
        uint64_t n = atomic_load(&prof_calls[i]), t = atomic_load(&prof_ns[i]);
        if (i != SHIM_PROF_REAL) total += t;
        if (n) at += snprintf(line + at, sizeof line - (size_t)at, " %s_n=%llu %s=%.2f", prof_names[i], (unsigned long long)n,
                              prof_names[i], (double)t / 1e6);
    }
    if (at > 0 && (size_t)at < sizeof line)
        snprintf(line + at, sizeof line - (size_t)at, " hooks_total=%.2f%s", (double)total / 1e6, tail ? tail : "");
    fprintf(f, "%s\n", line);
}
