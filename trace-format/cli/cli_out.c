/* cli_out.c: what a verb says and how its output streams end (vgt/cli.h): errors on stderr, and
 * output that could not be written reported once. */
#include "vgt/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
