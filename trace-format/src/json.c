/* json.c: JSON text helpers (vgt/json.h). */
#include "vgt/json.h"

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
