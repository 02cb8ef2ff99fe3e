/* shim_libc.c: the real libc entry points behind the interposed ones, resolved once with
 * dlsym(RTLD_NEXT). Kept in one table so tests and fault injection can swap an entry (style guide §6). */
#include <dlfcn.h>

#include "shim.h"

shim_libc g_libc;

#define RESOLVE(field, name) g_libc.field = (__typeof__(g_libc.field))dlsym(RTLD_NEXT, name)

void shim_libc_resolve(void)
{
    if (g_libc.ioctl) return;
    RESOLVE(open, "open");
    RESOLVE(open64, "open64");
    RESOLVE(openat, "openat");
    RESOLVE(openat64, "openat64");
    RESOLVE(close, "close");
    RESOLVE(dup, "dup");
    RESOLVE(dup2, "dup2");
    RESOLVE(dup3, "dup3");
    RESOLVE(mmap, "mmap");
    RESOLVE(mmap64, "mmap64");
    RESOLVE(munmap, "munmap");
    RESOLVE(mprotect, "mprotect");
    RESOLVE(sigaction, "sigaction");
    RESOLVE(signal, "signal");
    RESOLVE(sysv_signal, "sysv_signal");
    RESOLVE(sigset, "sigset");
    RESOLVE(exit, "exit");
    RESOLVE(_exit, "_exit");
    RESOLVE(fcntl, "fcntl");
    RESOLVE(fcntl64, "fcntl64");
    RESOLVE(mremap, "mremap");
    RESOLVE(execve, "execve");
    RESOLVE(execvpe, "execvpe");
    RESOLVE(fexecve, "fexecve");
    RESOLVE(ioctl, "ioctl");   /* last: its presence means the table is complete */
}
