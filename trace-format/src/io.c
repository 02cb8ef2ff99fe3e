/* io.c: whole reads and writes on file descriptors, retrying EINTR and short transfers; errors carry
 * strerror(errno) and the offset. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "vgt/io.h"

vgt_status io_write_all(int fd, const void *p, uint64_t n, uint64_t off, vgt_error *err)
{
    const uint8_t *b = p;
    uint64_t done = 0;
    while (done < n) {
        ssize_t k = vgt_io()->write(fd, b + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return VGT_FAIL(err, VGT_E_IO, off + done, "write of %llu bytes at offset %llu failed after %llu: %s",
                            (unsigned long long)n, (unsigned long long)off, (unsigned long long)done,
                            k < 0 ? strerror(errno) : "nothing written");
        done += (uint64_t)k;
    }
    return VGT_OK;
}

/* The read loop of both entry points: read(2) at the current position, or pread(2) at off when
 * positioned; off names the place in errors either way. Stops early only at the end of the input. */
static vgt_status read_loop(int fd, void *p, uint64_t n, uint64_t off, int positioned, uint64_t *got, vgt_error *err)
{
    uint8_t *b = p;
    uint64_t done = 0;
    while (done < n) {
        ssize_t k = positioned ? vgt_io()->pread(fd, b + done, n - done, (off_t)(off + done))
                               : vgt_io()->read(fd, b + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0)
            return VGT_FAIL(err, VGT_E_IO, off + done, "read at offset %llu failed: %s", (unsigned long long)(off + done),
                            strerror(errno));
        if (k == 0) break;
        done += (uint64_t)k;
    }
    *got = done;
    return VGT_OK;
}

vgt_status io_read_full(int fd, void *p, uint64_t n, uint64_t *got, uint64_t off, vgt_error *err)
{
    return read_loop(fd, p, n, off, 0, got, err);
}

vgt_status io_pread_full(int fd, void *p, uint64_t n, uint64_t off, uint64_t *got, vgt_error *err)
{
    return read_loop(fd, p, n, off, 1, got, err);
}
