/* db_io.c: SQLite's file I/O through the I/O table (vgt/io.h), by its unix VFS's system-call overrides
 * (sqlite3_vfs.xSetSystemCall), so that the database is tested against ENOSPC, EIO and short writes like
 * every other output: opening, writing, truncating, closing and removing. Its reads stay the system's:
 * SQLite reads back only the file it is writing, and reads the trace's I/O table routes are the trace's.
 * SQLite's fsync is not among its overridable calls. */
#include <sqlite3.h>

#include "db_internal.h"
#include "vgt/io.h"

static int io_open(const char *p, int flags, int mode) { return vgt_io()->open(p, flags, (mode_t)mode); }
static int io_close(int fd) { return vgt_io()->close(fd); }
static ssize_t io_write(int fd, const void *b, size_t n) { return vgt_io()->write(fd, b, n); }
static ssize_t io_pwrite(int fd, const void *b, size_t n, off_t o) { return vgt_io()->pwrite(fd, b, n, o); }
static int io_ftruncate(int fd, off_t l) { return vgt_io()->ftruncate(fd, l); }
static int io_unlink(const char *p) { return vgt_io()->unlink(p); }

void db_route_io(void)
{
    static int done;
    sqlite3_vfs *v = sqlite3_vfs_find(NULL);
    if (done || !v || v->iVersion < 3 || !v->xSetSystemCall) return;
    done = 1;
    static const struct { const char *name; sqlite3_syscall_ptr fn; } calls[] = {
        {"open", (sqlite3_syscall_ptr)io_open},        {"close", (sqlite3_syscall_ptr)io_close},
        {"write", (sqlite3_syscall_ptr)io_write},
        {"pwrite", (sqlite3_syscall_ptr)io_pwrite},    {"pwrite64", (sqlite3_syscall_ptr)io_pwrite},
        {"ftruncate", (sqlite3_syscall_ptr)io_ftruncate}, {"unlink", (sqlite3_syscall_ptr)io_unlink},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) v->xSetSystemCall(v, calls[i].name, calls[i].fn);
}
