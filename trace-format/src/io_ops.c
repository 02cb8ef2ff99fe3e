/* io_ops.c: the I/O table (vgt/io.h) and the system's entries. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "vgt/io.h"

static int sys_open(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }
static int sys_mkstemp(char *tmpl, int suffix_len, int flags) { return mkostemps(tmpl, suffix_len, flags); }
static int sys_fsync(int fd) { return fdatasync(fd); }

const vgt_io_ops vgt_io_system = {
    .open = sys_open, .mkstemp = sys_mkstemp, .read = read, .pread = pread, .write = write, .pwrite = pwrite, .fsync = sys_fsync,
    .ftruncate = ftruncate, .lseek = lseek, .rename = rename, .unlink = unlink, .close = close,
};

static const vgt_io_ops *current = &vgt_io_system;

const vgt_io_ops *vgt_io(void) { return current; }
void vgt_io_set(const vgt_io_ops *ops) { current = ops ? ops : &vgt_io_system; }
