/* cli_input.c: the inputs of verbs (vgt/cli.h): the same file as input and output, standard input (or a
 * FIFO) kept in a nameless temporary for verbs that read their trace more than once, and a file still
 * being written followed to its end for those verbs. */
#include "vgt/cli.h"
#include "vgt/io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vgt/trace.h"

int vgt_cli_same_file(const char *in, const char *out)
{
    struct stat a, b;
    if (!in || !out || stat(in, &a) != 0 || stat(out, &b) != 0) return 0;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int spool(const char *verb, int in, const char *name, const char **path, char *buf, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int fd = vgt_io()->open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);   /* nameless: nothing to remove, ever */
    if (fd < 0) {
        char tmpl[4096];
        snprintf(tmpl, sizeof tmpl, "%s/vgt-stdin-XXXXXX", dir);
        fd = mkostemp(tmpl, O_CLOEXEC);
        if (fd >= 0) unlink(tmpl);
    }
    if (fd < 0)
        return vgt_cli_error(verb, VGT_EXIT_USAGE, "%s: this command reads its trace more than once and cannot keep a "
                             "copy in %s: %s", name, dir, strerror(errno));
    static char chunk[1 << 16];
    for (;;) {
        ssize_t n = vgt_io()->read(in, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            vgt_io()->close(fd);
            return vgt_cli_error(verb, VGT_EXIT_USAGE, "%s: %s", name, strerror(e));
        }
        if (n == 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t k = vgt_io()->write(fd, chunk + done, (size_t)(n - done));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                int e = k < 0 ? errno : EIO;
                vgt_io()->close(fd);
                return vgt_cli_error(verb, VGT_EXIT_USAGE, "%s: cannot keep a copy in %s: %s", name, dir, strerror(e));
            }
            done += k;
        }
    }
    snprintf(buf, cap, "/proc/self/fd/%d", fd);   /* open for the rest of the process */
    *path = buf;
    return 0;
}


int vgt_cli_seekable_input(const char *verb, const char **path, char *buf, size_t cap)
{
    struct stat st;
    int in = STDIN_FILENO;
    const char *name = "standard input";
    if (strcmp(*path, "-")) {   /* a FIFO or a device reads once too: kept like standard input */
        if (stat(*path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return 0;
        name = *path;
        if ((in = open(*path, O_RDONLY | O_CLOEXEC)) < 0)
            return vgt_cli_error(verb, VGT_EXIT_USAGE, "cannot open '%s': %s", *path, strerror(errno));
    } else if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) && lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
        snprintf(buf, cap, "/proc/self/fd/%d", STDIN_FILENO);   /* reopened from its start by each pass */
        *path = buf;
        return 0;
    }
    int rc = spool(verb, in, name, path, buf, cap);
    if (in != STDIN_FILENO) close(in);
    return rc;
}

int vgt_cli_follow_to_end(const char *verb, const char *path)
{
    vgt_reader_options ro = {.streaming = 1, .verify_checksums = 0, .follow = 1};   /* the passes verify */
    vgt_reader *r;
    vgt_error err;
    if (vgt_reader_open_path(&r, path, &ro, &err) != VGT_OK) return vgt_cli_report(verb, &err);
    vgt_record rec;
    while (vgt_reader_next(r, &rec, &err) == VGT_OK) { }
    vgt_reader_close(r);   /* a trace broken midway: the passes meet the same problem and report it */
    return VGT_EXIT_OK;
}
