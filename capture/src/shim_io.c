/* shim_io.c: every write(2) the shim itself makes (the trace writer's chunks, its stderr lines) goes
 * through here (the library is linked with -Wl,--wrap=write; the program's own writes are untouched).
 *
 * Why: a write to the stream's pipe after `vgt record` died raises SIGPIPE, and one past a file size
 * limit raises SIGXFSZ; either would kill the program for a capture problem. Both signals are blocked in
 * this thread around the write, and the one the write itself raised (thread-directed, only when the
 * write failed with EPIPE or EFBIG) is taken back with sigtimedwait, unless the same signal was already
 * pending before: that one is the program's and stays. The write then just fails, and the writer
 * reports it (records_lost, one stderr line). */
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
    sigset_t block, old, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    sigaddset(&block, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    sigpending(&pending);
    int had_pipe = sigismember(&pending, SIGPIPE), had_xfsz = sigismember(&pending, SIGXFSZ);
    ssize_t r = __real_write(fd, buf, n);
    int e = errno;
    if (r < 0 && ((e == EPIPE && !had_pipe) || (e == EFBIG && !had_xfsz))) {
        sigset_t mine;
        sigemptyset(&mine);
        sigaddset(&mine, e == EPIPE ? SIGPIPE : SIGXFSZ);
        struct timespec zero = { 0, 0 };
        sigtimedwait(&mine, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return r;
}
