/* fault.c: fault injection for tests, through the I/O table (vgt/io.h). The `vgt` command installs it when
 * VGT_TEST_FAULT is set, before any verb runs:
 *
 *   VGT_TEST_FAULT=OP:N:KIND    OP one of open mkstemp read pread write pwrite fsync ftruncate lseek rename
 *                               unlink close; N the call of OP to fail (1 = the first); KIND one of
 *                               ENOSPC, EIO, EPIPE   that call and every later call of OP fail so (a full
 *                                                    disk stays full; a broken pipe stays broken)
 *                               EINTR                that call alone fails with EINTR (callers retry)
 *                               SHORT                that call alone transfers half of what was asked (read,
 *                                                    pread, write, pwrite)
 *
 * When the process ends without reaching call N, it says so on stderr ("VGT_TEST_FAULT: write call 9 not
 * reached (8 calls)"): a test walks N up from 1 until then and has met every call site in order.
 * Only tests set it; it changes nothing otherwise. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/cli.h"
#include "vgt/io.h"

enum { K_PERSIST, K_EINTR, K_SHORT };

static struct {
    char op[16];
    unsigned long long n, calls;
    int kind, err, hit;
} F;

/* Atomic: the reader's read-ahead workers (reader_ahead.c) read through the table beside the caller, and
 * each call must count once. */
static int fire(const char *op)
{
    if (strcmp(op, F.op)) return 0;
    unsigned long long call = __atomic_add_fetch(&F.calls, 1, __ATOMIC_RELAXED);
    if (call < F.n) return 0;
    if (F.kind != K_PERSIST && call != F.n) return 0;
    __atomic_store_n(&F.hit, 1, __ATOMIC_RELAXED);
    return 1;
}

static int fail(void)
{
    errno = F.kind == K_EINTR ? EINTR : F.err;
    return -1;
}

/* For the entries that transfer bytes: -1 with errno, or the halved length (SHORT). */
static int cut(const char *op, size_t *n)
{
    if (!fire(op)) return 0;
    if (F.kind == K_SHORT) {
        *n = *n > 1 ? *n / 2 : *n;
        return 0;
    }
    return -1;
}

#define SYS vgt_io_system
static int f_open(const char *p, int fl, mode_t m) { return fire("open") ? fail() : SYS.open(p, fl, m); }
static int f_mkstemp(char *t, int s, int fl) { return fire("mkstemp") ? fail() : SYS.mkstemp(t, s, fl); }
static ssize_t f_read(int fd, void *b, size_t n) { return cut("read", &n) ? fail() : SYS.read(fd, b, n); }
static ssize_t f_pread(int fd, void *b, size_t n, off_t o) { return cut("pread", &n) ? fail() : SYS.pread(fd, b, n, o); }
static ssize_t f_write(int fd, const void *b, size_t n) { return cut("write", &n) ? fail() : SYS.write(fd, b, n); }
static ssize_t f_pwrite(int fd, const void *b, size_t n, off_t o)
{
    return cut("pwrite", &n) ? fail() : SYS.pwrite(fd, b, n, o);
}
static int f_fsync(int fd) { return fire("fsync") ? fail() : SYS.fsync(fd); }
static int f_ftruncate(int fd, off_t l) { return fire("ftruncate") ? fail() : SYS.ftruncate(fd, l); }
static off_t f_lseek(int fd, off_t o, int w) { return fire("lseek") ? fail() : SYS.lseek(fd, o, w); }
static int f_rename(const char *a, const char *b) { return fire("rename") ? fail() : SYS.rename(a, b); }
static int f_unlink(const char *p) { return fire("unlink") ? fail() : SYS.unlink(p); }
static int f_close(int fd)
{
    if (!fire("close")) return SYS.close(fd);
    SYS.close(fd);   /* as Linux does: the descriptor is gone even when close reports an error */
    return fail();
}

static const vgt_io_ops faulty = {
    .open = f_open, .mkstemp = f_mkstemp, .read = f_read, .pread = f_pread, .write = f_write, .pwrite = f_pwrite, .fsync = f_fsync,
    .ftruncate = f_ftruncate, .lseek = f_lseek, .rename = f_rename, .unlink = f_unlink, .close = f_close,
};

static void report(void)
{
    if (!__atomic_load_n(&F.hit, __ATOMIC_RELAXED))
        fprintf(stderr, "VGT_TEST_FAULT: %s call %llu not reached (%llu calls)\n", F.op, F.n,
                __atomic_load_n(&F.calls, __ATOMIC_RELAXED));
}

int vgt_cli_fault_setup(void)
{
    const char *spec = getenv("VGT_TEST_FAULT");
    if (!spec || !*spec) return 0;
    char kind[16];
    if (sscanf(spec, "%15[a-z]:%llu:%15[A-Z]", F.op, &F.n, kind) != 3 || !F.n) {
        fprintf(stderr, "vgt: VGT_TEST_FAULT='%s': expected OP:N:KIND\n", spec);
        return -1;
    }
    static const struct { const char *name; int kind, err; } kinds[] = {
        {"ENOSPC", K_PERSIST, ENOSPC}, {"EIO", K_PERSIST, EIO}, {"EPIPE", K_PERSIST, EPIPE},
        {"EINTR", K_EINTR, EINTR}, {"SHORT", K_SHORT, 0},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kind, kinds[i].name)) {
            F.kind = kinds[i].kind;
            F.err = kinds[i].err;
            vgt_io_set(&faulty);
            atexit(report);
            return 0;
        }
    fprintf(stderr, "vgt: VGT_TEST_FAULT: unknown kind '%s'\n", kind);
    return -1;
}
