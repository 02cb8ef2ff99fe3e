/* shim_hooks.c: the libc entry points the shim interposes. Each one calls the real function and, for
 * NVIDIA device nodes only, tells the rest of the shim what happened. Everything else passes through
 * with one table lookup. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

static int open_mode_needed(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

static int after_open(int fd, const char *path)
{
    SHIM_SPAN(span);
    if (fd >= 0 && shim_node_of_path(path) != SHIM_NODE_NONE) {
        shim_activate();
        shim_fd_opened(fd, path);
    }
    else if (fd >= 0 && shim_fd_node(fd) != SHIM_NODE_NONE) shim_fd_closed(fd);   /* stale entry */
    SHIM_SPAN_END(span, SHIM_PROF_OPEN);
    return fd;
}

#define OPEN_BODY(real, ...)                                                  \
    shim_libc_resolve();                                                      \
    mode_t mode = 0;                                                          \
    if (open_mode_needed(flags)) {                                            \
        va_list ap;                                                           \
        va_start(ap, flags);                                                  \
        mode = va_arg(ap, mode_t);                                            \
        va_end(ap);                                                           \
    }                                                                         \
    return after_open(real(__VA_ARGS__, flags, mode), path)

SHIM_EXPORT int open(const char *path, int flags, ...) { OPEN_BODY(g_libc.open, path); }
SHIM_EXPORT int open64(const char *path, int flags, ...) { OPEN_BODY(g_libc.open64, path); }
SHIM_EXPORT int openat(int dirfd, const char *path, int flags, ...) { OPEN_BODY(g_libc.openat, dirfd, path); }
SHIM_EXPORT int openat64(int dirfd, const char *path, int flags, ...) { OPEN_BODY(g_libc.openat64, dirfd, path); }
/* _FORTIFY_SOURCE callers (no O_CREAT by contract). */
SHIM_EXPORT int __open_2(const char *path, int flags) { return open(path, flags); }
SHIM_EXPORT int __open64_2(const char *path, int flags) { return open64(path, flags); }
SHIM_EXPORT int __openat_2(int dirfd, const char *path, int flags) { return openat(dirfd, path, flags); }

SHIM_EXPORT int close(int fd)
{
    shim_libc_resolve();
    if (fd >= 0 && fd == shim_out_fd() && !shim_foreign()) return 0;   /* the trace stream is ours: keep it open */
    int rc = g_libc.close(fd);
    if (shim_fd_node(fd) != SHIM_NODE_NONE) {
        SHIM_SPAN(span);
        shim_fd_closed(fd);
        SHIM_SPAN_END(span, SHIM_PROF_CLOSE);
    }
    return rc;
}

SHIM_EXPORT int dup(int fd)
{
    shim_libc_resolve();
    int nfd = g_libc.dup(fd);
    if (nfd >= 0) shim_fd_dup(fd, nfd);
    return nfd;
}

SHIM_EXPORT int dup2(int fd, int fd2)
{
    shim_libc_resolve();
    int nfd = g_libc.dup2(fd, fd2);
    if (nfd >= 0) shim_fd_dup(fd, nfd);
    return nfd;
}

SHIM_EXPORT int dup3(int fd, int fd2, int flags)
{
    shim_libc_resolve();
    int nfd = g_libc.dup3(fd, fd2, flags);
    if (nfd >= 0) shim_fd_dup(fd, nfd);
    return nfd;
}

SHIM_EXPORT int ioctl(int fd, unsigned long request, ...)
{
    shim_libc_resolve();
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    int node = shim_fd_node(fd);
    if (node == SHIM_NODE_NONE || !g_shim.active || shim_foreign()) return g_libc.ioctl(fd, request, arg);
    if (node == SHIM_NODE_UVM) return shim_uvm_ioctl(fd, request, arg);
    return shim_rm_ioctl(fd, node, request, arg);
}

static void *do_mmap(void *(*real)(void *, size_t, int, int, int, off_t), void *addr, size_t len, int prot, int flags,
                     int fd, off_t off)
{
    int node = shim_fd_node(fd);
    if (node == SHIM_NODE_NONE || !g_shim.active || shim_foreign()) return real(addr, len, prot, flags, fd, off);
    SHIM_SPAN(span);
    shim_pending_map pm = { 0 };
    int has = node != SHIM_NODE_UVM && shim_fd_take_pending(fd, &pm);
    int usermode = has && (vgt_capture_object_flags(g_shim.cap, pm.client, pm.memory) & VGT_CAPTURE_OBJ_USERMODE);
    SHIM_SPAN(call);
    void *p = usermode ? shim_trap_map(addr, len, prot, flags, fd, off) : real(addr, len, prot, flags, fd, off);
    SHIM_SPAN_END(call, SHIM_PROF_REAL);
    if (p == MAP_FAILED) {
        SHIM_SPAN_END(span, SHIM_PROF_MMAP);
        return p;
    }
    int saved = errno;
    vgt_rec_cpu_map c = { .client = has ? pm.client : 0, .device = has ? pm.device : 0, .memory = has ? pm.memory : 0,
                          .flags = has ? pm.flags : (uint32_t)prot, .offset = has ? pm.offset : (uint64_t)off,
                          .length = len, .cpu_address = (uint64_t)(uintptr_t)p };
    vgt_error err;
    /* The usermode page is no memory the GPU reads; UVM-managed memory is not read by the shim (reading it
     * would migrate it to the CPU): neither becomes a view. */
    if (vgt_capture_cpu_map(g_shim.cap, &c, has && !usermode, &err) != VGT_OK) shim_write_failed(&err);
    SHIM_SPAN_END(span, SHIM_PROF_MMAP);
    errno = saved;
    return p;
}

SHIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    shim_libc_resolve();
    return do_mmap(g_libc.mmap, addr, len, prot, flags, fd, off);
}

SHIM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    shim_libc_resolve();
    return do_mmap(g_libc.mmap64, addr, len, prot, flags, fd, off);
}

SHIM_EXPORT int munmap(void *addr, size_t len)
{
    shim_libc_resolve();
    /* The program's own memory (most munmaps: malloc, the loader) is nothing the capture knows: passed
     * on before any system call or lock of the capture's (shim_foreign's getpid, the registry's mutex). */
    if (!g_shim.active || !(shim_trap_owns(addr) || vgt_capture_cpu_may_cover(g_shim.cap, (uint64_t)(uintptr_t)addr, len)) ||
        shim_foreign())
        return g_libc.munmap(addr, len);
    SHIM_SPAN(span);
    if (shim_trap_unmap(addr, len)) {
        SHIM_SPAN_END(span, SHIM_PROF_MUNMAP);
        return 0;
    }
    vgt_error err;
    if (vgt_capture_cpu_unmap(g_shim.cap, (uint64_t)(uintptr_t)addr, len, &err) != VGT_OK) shim_write_failed(&err);
    SHIM_SPAN_END(span, SHIM_PROF_MUNMAP);
    return g_libc.munmap(addr, len);
}

SHIM_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    shim_libc_resolve();
    int handled = 0;
    int rc = shim_foreign() ? 0 : shim_sigaction_hook(sig, act, old, &handled);
    return handled ? rc : g_libc.sigaction(sig, act, old);
}

/* signal(), bsd_signal(), sysv_signal() and sigset() reach the kernel through glibc's internal
 * __sigaction, not through the sigaction symbol above: once the shim's SIGSEGV handler is in, a program
 * calling signal(SIGSEGV, h) would replace it, and its next doorbell store (or write to a tracked page)
 * would reach h or kill it. For SIGSEGV each becomes the sigaction call it stands for (glibc's flags and
 * mask), made through the hook above; every other signal goes to the real function. */
static __sighandler_t segv_disposition(__sighandler_t h, int flags)
{
    struct sigaction act = { .sa_handler = h, .sa_flags = flags }, old;
    sigemptyset(&act.sa_mask);
    if (!(flags & SA_NODEFER)) sigaddset(&act.sa_mask, SIGSEGV);
    return sigaction(SIGSEGV, &act, &old) == 0 ? old.sa_handler : SIG_ERR;
}

static int segv_set(int sig, __sighandler_t h) { return sig == SIGSEGV && h != SIG_ERR && h != SIG_HOLD; }

SHIM_EXPORT __sighandler_t signal(int sig, __sighandler_t h)
{
    shim_libc_resolve();
    return segv_set(sig, h) ? segv_disposition(h, SA_RESTART) : g_libc.signal(sig, h);
}

SHIM_EXPORT __sighandler_t bsd_signal(int sig, __sighandler_t h) { return signal(sig, h); }

SHIM_EXPORT __sighandler_t sysv_signal(int sig, __sighandler_t h)
{
    shim_libc_resolve();
    return segv_set(sig, h) ? segv_disposition(h, SA_RESETHAND | SA_NODEFER) : g_libc.sysv_signal(sig, h);
}

/* sigset: the disposition, then the signal unblocked; SIG_HOLD (block only) needs no hook. */
SHIM_EXPORT __sighandler_t sigset(int sig, __sighandler_t h)
{
    shim_libc_resolve();
    if (!segv_set(sig, h)) return g_libc.sigset(sig, h);
    struct sigaction act = { .sa_handler = h }, old;
    sigemptyset(&act.sa_mask);
    if (sigaction(SIGSEGV, &act, &old) != 0) return SIG_ERR;
    sigset_t one, before;
    sigemptyset(&one);
    sigaddset(&one, SIGSEGV);
    if (pthread_sigmask(SIG_UNBLOCK, &one, &before) != 0) return SIG_ERR;
    return sigismember(&before, SIGSEGV) ? SIG_HOLD : old.sa_handler;
}

SHIM_EXPORT void exit(int status)
{
    shim_libc_resolve();
    if (!shim_foreign()) g_shim.exit_status = status;
    g_libc.exit(status);
}

SHIM_EXPORT void _exit(int status)
{
    shim_libc_resolve();
    if (!shim_foreign()) {   /* a vfork child's _exit must not finish its parent's capture */
        g_shim.exit_status = status;
        shim_finish(status);
    }
    g_libc._exit(status);
}

/* fcntl(F_DUPFD / F_DUPFD_CLOEXEC) duplicates like dup: the new fd is the same NVIDIA node. The third
 * argument is an int or a pointer depending on cmd; both travel in one register, read as a long. */
static int do_fcntl(int (*real)(int, int, ...), int fd, int cmd, long arg)
{
    int rc = real(fd, cmd, arg);
    if (rc >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) shim_fd_dup(fd, rc);
    return rc;
}

SHIM_EXPORT int fcntl(int fd, int cmd, ...)
{
    shim_libc_resolve();
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return do_fcntl(g_libc.fcntl, fd, cmd, arg);
}

SHIM_EXPORT int fcntl64(int fd, int cmd, ...)
{
    shim_libc_resolve();
    va_list ap;
    va_start(ap, cmd);
    long arg = va_arg(ap, long);
    va_end(ap);
    return do_fcntl(g_libc.fcntl64 ? g_libc.fcntl64 : g_libc.fcntl, fd, cmd, arg);
}

/* mremap of a CPU map of GPU memory: the old map goes (CPU_UNMAP, observed contents) and the moved one
 * comes (CPU_MAP, a new view with its initial contents), exactly as munmap + mmap would say. A usermode
 * stand-in moves with its trap. */
SHIM_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    shim_libc_resolve();
    void *new_addr = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_addr = va_arg(ap, void *);
        va_end(ap);
    }
    if (!g_shim.active || shim_foreign()) return g_libc.mremap(old, old_len, new_len, flags, new_addr);
    SHIM_SPAN(span);
    void *moved = shim_trap_remap(old, old_len, new_len, flags, new_addr);
    if (moved) {
        SHIM_SPAN_END(span, SHIM_PROF_MREMAP);
        return moved;
    }
    vgt_rec_cpu_map m;
    vgt_error err;
    int known = vgt_capture_cpu_map_at(g_shim.cap, (uint64_t)(uintptr_t)old, &m, &err) == VGT_OK;
    if (known && old_len && vgt_capture_cpu_unmap(g_shim.cap, (uint64_t)(uintptr_t)old, old_len, &err) != VGT_OK)
        shim_write_failed(&err);
    SHIM_SPAN(call);
    void *p = g_libc.mremap(old, old_len, new_len, flags, new_addr);
    SHIM_SPAN_END(call, SHIM_PROF_REAL);
    if (!known) {
        SHIM_SPAN_END(span, SHIM_PROF_MREMAP);
        return p;
    }
    int saved = errno;
    if (p != MAP_FAILED || old_len) {
        /* On failure the old map stands as it was: say so again. */
        uint64_t at = (uint64_t)(uintptr_t)(p == MAP_FAILED ? old : p), len = p == MAP_FAILED ? m.length : new_len;
        vgt_rec_cpu_map c = { .client = m.client, .device = m.device, .memory = m.memory, .offset = m.offset,
                              .length = len, .cpu_address = at };
        if (vgt_capture_cpu_map(g_shim.cap, &c, 1, &err) != VGT_OK) shim_write_failed(&err);
    }
    SHIM_SPAN_END(span, SHIM_PROF_MREMAP);
    errno = saved;
    return p;
}

/* exec replaces the image without running destructors: finish the capture first (PROCESS_END, the last
 * records flushed). If the exec fails the program goes on uncaptured. The new image loads the shim
 * again and follows the rules for new processes (shim_init.c). */
static void before_exec(void) { shim_finish(-1); }   /* a no-op in a vfork child (shim_foreign) */

SHIM_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    shim_libc_resolve();
    before_exec();
    return g_libc.execve(path, argv, envp);
}

SHIM_EXPORT int execv(const char *path, char *const argv[])
{
    extern char **environ;
    return execve(path, argv, environ);
}

SHIM_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    shim_libc_resolve();
    before_exec();
    return g_libc.execvpe(file, argv, envp);
}

SHIM_EXPORT int execvp(const char *file, char *const argv[])
{
    extern char **environ;
    return execvpe(file, argv, environ);
}

SHIM_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    shim_libc_resolve();
    before_exec();
    return g_libc.fexecve(fd, argv, envp);
}

/* execl, execlp, execle: their arguments gathered into an argv (at most EXECL_MAX, as a bound). */
#define EXECL_MAX 4096

/* argv[0] = first, then the variadic char * arguments up to and including the terminating NULL.
 * 0, or -1 with errno E2BIG when no NULL comes within EXECL_MAX. The va_list goes by pointer so that
 * execle can read its envp after the NULL. */
static int gather_args(const char *first, va_list *ap, char **argv)
{
    int n = 1;
    argv[0] = (char *)first;
    while (argv[n - 1] && n < EXECL_MAX) argv[n++] = va_arg(*ap, char *);
    if (argv[n - 1]) { errno = E2BIG; return -1; }
    return 0;
}

SHIM_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX];
    va_list ap;
    va_start(ap, arg);
    int rc = gather_args(arg, &ap, argv);
    va_end(ap);
    return rc ? -1 : execv(path, argv);
}

SHIM_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *argv[EXECL_MAX];
    va_list ap;
    va_start(ap, arg);
    int rc = gather_args(arg, &ap, argv);
    va_end(ap);
    return rc ? -1 : execvp(file, argv);
}

SHIM_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *argv[EXECL_MAX];
    va_list ap;
    va_start(ap, arg);
    int rc = gather_args(arg, &ap, argv);
    char **envp = rc ? NULL : va_arg(ap, char **);
    va_end(ap);
    return rc ? -1 : execve(path, argv, envp);
}
