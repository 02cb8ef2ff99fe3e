/* range.c: numbers, sizes and windows as users write them (vgt/range.h). */
#include "vgt/range.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *vgt_range_format(const vgt_range *r, char *buf, size_t cap)
{
    if (r->first == r->last) snprintf(buf, cap, "%llu", (unsigned long long)r->first);
    else if (r->last == UINT64_MAX) snprintf(buf, cap, "%llu..", (unsigned long long)r->first);
    else if (r->first == 0) snprintf(buf, cap, "..%llu", (unsigned long long)r->last);
    else snprintf(buf, cap, "%llu..%llu", (unsigned long long)r->first, (unsigned long long)r->last);
    return buf;
}
