/* cli.c: helpers shared by every verb (see include/vgt/cli.h). */
#include "vgt/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
