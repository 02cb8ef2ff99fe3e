/* io.h: every file and stream operation of the trace reader (its read-ahead workers too) and writer, the
 * output policy (outfile.h), the verbs' input spooling, ingest and record's relay goes through one table,
 * as SQLite routes its system calls through its VFS: tests swap the table to inject ENOSPC, EIO, short
 * writes, EINTR and EPIPE at any call (tests/py/test_faults.py), and an embedding program may route the I/O
 * elsewhere.
 *
 * The entries have the POSIX signatures and errno conventions. vgt_io() is the table in use;
 * vgt_io_set(NULL) puts the system's back. Set it before any I/O starts (it is not synchronized); its
 * entries are called from several threads at once (the read-ahead workers beside their caller).
 * A signal handler's unlink (outfile.c) stays a raw system call: it must be async-signal-safe. */
#ifndef VGT_IO_H
#define VGT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vgt_io_ops {
    int (*open)(const char *path, int flags, mode_t mode);
    int (*mkstemp)(char *tmpl, int suffix_len, int flags);   /* mkostemps(3) */
    ssize_t (*read)(int fd, void *buf, size_t n);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    ssize_t (*write)(int fd, const void *buf, size_t n);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);   /* SQLite's (the db verb) */
    int (*fsync)(int fd);                                     /* fdatasync(2) */
    int (*ftruncate)(int fd, off_t len);
    off_t (*lseek)(int fd, off_t off, int whence);
    int (*rename)(const char *from, const char *to);
    int (*unlink)(const char *path);
    int (*close)(int fd);
} vgt_io_ops;

extern const vgt_io_ops vgt_io_system;
const vgt_io_ops *vgt_io(void);
void vgt_io_set(const vgt_io_ops *ops);

#ifdef __cplusplus
}
#endif
#endif
