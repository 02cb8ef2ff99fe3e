/* cli.c: helpers shared by every verb (see include/vgt/cli.h). */
#include "vgt/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int vgt_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || !end || *end || s[0] == '-') return -1;
    *out = v;
    return 0;
}

int vgt_parse_range(const char *s, vgt_range *out)
{
    if (!s || !*s) return -1;
    const char *dots = strstr(s, "..");
    if (!dots) {
        if (vgt_parse_u64(s, &out->first)) return -1;
        out->last = out->first;
        return 0;
    }
    char left[64];
    size_t n = (size_t)(dots - s);
    if (n >= sizeof left) return -1;
    memcpy(left, s, n);
    left[n] = '\0';
    out->first = 0;
    out->last = UINT64_MAX;
    if (n && vgt_parse_u64(left, &out->first)) return -1;
    if (dots[2] && vgt_parse_u64(dots + 2, &out->last)) return -1;
    return out->first <= out->last ? 0 : -1;
}

int vgt_range_has(const vgt_range *r, uint64_t v) { return v >= r->first && v <= r->last; }

int vgt_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s || s[0] == '-') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s) return -1;
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, *end & ~0x20) : NULL;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    if (shift) end++;
    if (shift && (!strcmp(end, "iB") || !strcmp(end, "B"))) end += strlen(end);
    if (*end || v > (UINT64_MAX >> shift)) return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

int vgt_cli_same_file(const char *in, const char *out)
{
    struct stat a, b;
    if (!in || !out || stat(in, &a) != 0 || stat(out, &b) != 0) return 0;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int vgt_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    }
    return 0;
}

int vgt_cli_error(const char *verb, int exit_code, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "vgt %s: ", verb);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return exit_code;
}

int vgt_cli_report(const char *verb, const vgt_error *err)
{
    fprintf(stderr, "vgt %s: %s\n", verb, err->msg[0] ? err->msg : vgt_status_name(err->code));
    switch (err->code) {
    case VGT_E_IO: case VGT_E_ARG: case VGT_E_NOMEM: case VGT_E_VERSION: case VGT_E_UNSUPPORTED:
        return VGT_EXIT_USAGE;
    default:
        return VGT_EXIT_PROBLEM;
    }
}

/* The first error seen on each output stream: a failed write's errno is told only by the first flush
 * after it (stdio then drops the buffer), so whoever flushes first keeps it for the final report. */
static struct {
    FILE *f;
    int err;
} out_errors[4];

static void keep_error(FILE *f, int e)
{
    if (!e) return;
    for (size_t i = 0; i < sizeof out_errors / sizeof out_errors[0]; i++) {
        if (out_errors[i].f == f) return;   /* the first one stays */
        if (!out_errors[i].f) {
            out_errors[i].f = f;
            out_errors[i].err = e;
            return;
        }
    }
}

static int kept_error(FILE *f)
{
    for (size_t i = 0; i < sizeof out_errors / sizeof out_errors[0]; i++)
        if (out_errors[i].f == f) return out_errors[i].err;
    return 0;
}

int vgt_cli_flush(FILE *f)
{
    errno = 0;
    if (fflush(f) != 0) keep_error(f, errno ? errno : EIO);
    return ferror(f) ? -1 : 0;
}

int vgt_cli_out_failed(FILE *f)
{
    if (!ferror(f)) return 0;
    vgt_cli_flush(f);
    return 1;
}

int vgt_cli_check_output(const char *verb, FILE *f, const char *name, int rc)
{
    if (vgt_cli_flush(f) == 0) return rc;
    int e = kept_error(f);
    fprintf(stderr, "vgt%s%s: %s: %s\n", verb ? " " : "", verb ? verb : "", name, e ? strerror(e) : "a write failed");
    clearerr(f);   /* reported once: a later check (the dispatcher's) finds nothing new */
    return VGT_EXIT_USAGE;
}

int vgt_cli_seekable_input(const char *verb, const char **path, char *buf, size_t cap)
{
    if (strcmp(*path, "-")) return 0;
    struct stat st;
    if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) && lseek(STDIN_FILENO, 0, SEEK_CUR) == 0) {
        snprintf(buf, cap, "/proc/self/fd/%d", STDIN_FILENO);   /* reopened from its start by each pass */
        *path = buf;
        return 0;
    }
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);   /* nameless: nothing to remove, ever */
    if (fd < 0) {
        char tmpl[4096];
        snprintf(tmpl, sizeof tmpl, "%s/vgt-stdin-XXXXXX", dir);
        fd = mkostemp(tmpl, O_CLOEXEC);
        if (fd >= 0) unlink(tmpl);
    }
    if (fd < 0)
        return vgt_cli_error(verb, VGT_EXIT_USAGE, "standard input: this command reads its trace more than once and "
                             "cannot keep a copy in %s: %s", dir, strerror(errno));
    static char chunk[1 << 16];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return vgt_cli_error(verb, VGT_EXIT_USAGE, "standard input: %s", strerror(e));
        }
        if (n == 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t k = write(fd, chunk + done, (size_t)(n - done));
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                int e = k < 0 ? errno : EIO;
                close(fd);
                return vgt_cli_error(verb, VGT_EXIT_USAGE, "standard input: cannot keep a copy in %s: %s", dir,
                                     strerror(e));
            }
            done += k;
        }
    }
    snprintf(buf, cap, "/proc/self/fd/%d", fd);   /* open for the rest of the process */
    *path = buf;
    return 0;
}

void vgt_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

void vgt_json_bytes_hex(FILE *f, const uint8_t *p, uint64_t n)
{
    static const char hex[] = "0123456789abcdef";
    fputc('"', f);
    for (uint64_t i = 0; i < n; i++) {
        fputc(hex[p[i] >> 4], f);
        fputc(hex[p[i] & 15], f);
    }
    fputc('"', f);
}
