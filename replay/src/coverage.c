/* coverage.c: how much of what a trace observed a --check compared, and the minimum a caller asks for
 * (`vgt replay --min-coverage`, the corpus floors). Exact integer arithmetic: a floor blessed as the
 * fraction a trace reaches is met by that trace, never missed by a rounding. */
#include <stdio.h>
#include <string.h>

#include "vgt/replay.h"

typedef struct u128 {
    uint64_t hi, lo;
} u128;

static u128 mul64(uint64_t a, uint64_t b)
{
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    return (u128){p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (uint32_t)p00};
}

static int ge128(u128 a, u128 b) { return a.hi != b.hi ? a.hi > b.hi : a.lo >= b.lo; }

/* Decimal digits only (no sign, no spaces, no hex); at most max_digits of them. */
static int parse_digits(const char *s, size_t n, uint32_t max_digits, uint64_t *v)
{
    if (!n || n > max_digits) return -1;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        *v = *v * 10 + (uint64_t)(s[i] - '0');
    }
    return 0;
}

int vgt_coverage_parse(const char *s, vgt_coverage_min *out)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(s);
    if (!n || n >= sizeof out->text) return -1;
    const char *slash = strchr(s, '/');
    if (slash) {   /* N/D: an exact fraction of the observed bytes */
        if (parse_digits(s, (size_t)(slash - s), 19, &out->num) ||
            parse_digits(slash + 1, n - (size_t)(slash - s) - 1, 19, &out->den) || !out->den || out->num > out->den)
            return -1;
        out->fraction = 1;
    } else {       /* PCT or PCT%: a percentage, 0 to 100, up to 16 decimals */
        size_t len = s[n - 1] == '%' ? n - 1 : n;
        const char *dot = memchr(s, '.', len);
        size_t ilen = dot ? (size_t)(dot - s) : len, flen = dot ? len - ilen - 1 : 0;
        uint64_t ip, fp = 0;
        if (parse_digits(s, ilen, 3, &ip) || (dot && parse_digits(dot + 1, flen, 16, &fp))) return -1;
        out->den = 100;
        for (size_t i = 0; i < flen; i++) out->den *= 10;
        out->num = ip * (out->den / 100) + fp;
        if (out->num > out->den) return -1;
    }
    snprintf(out->text, sizeof out->text, "%s", s);
    return 0;
}

int vgt_coverage_met(uint64_t compared, uint64_t observed, const vgt_coverage_min *m)
{
    if (!observed) return m->num == 0;
    return ge128(mul64(compared, m->den), mul64(m->num, observed));
}

double vgt_coverage_min_pct(const vgt_coverage_min *m) { return 100.0 * (double)m->num / (double)m->den; }

void vgt_coverage_min_text(const vgt_coverage_min *m, char *buf, size_t cap)
{
    size_t n = strlen(m->text);
    snprintf(buf, cap, "%s%s", m->text, m->fraction || (n && m->text[n - 1] == '%') ? "" : "%");
}

/* Long division of compared/observed in base 10, truncated: the first two digits after the point are
 * the percentage's integer part. Never rounds up, so 99.9999% is never shown as 100%. */
void vgt_coverage_pct(uint64_t compared, uint64_t observed, char *buf, size_t cap)
{
    enum { MIN_DECIMALS = 2, MAX_DECIMALS = 12 };
    if (!observed || !compared || compared > observed) {
        snprintf(buf, cap, "%s", !observed ? "-" : compared ? "?" : "0");
        return;
    }
    uint64_t v = compared / observed, r = compared % observed;   /* v: 1 only when all were compared */
    uint32_t digits = 0;   /* of compared/observed after the point, in v */
    while (digits < 2 + MAX_DECIMALS) {
        u128 t = mul64(r, 10), o = {0, observed};
        uint64_t digit = 0;
        while (ge128(t, o)) {   /* t < 10 * observed: at most 9 subtractions */
            t.hi -= t.lo < observed;
            t.lo -= observed;
            digit++;
        }
        r = t.lo;
        v = v * 10 + digit;
        if (++digits >= 2 + MIN_DECIMALS && v >= 10) break;   /* two significant digits */
    }
    uint32_t d = digits - 2;
    if (!v) {   /* compared, but less than the last decimal shown: never "0" */
        snprintf(buf, cap, "<0.%0*u", (int)d, 1u);
        return;
    }
    uint64_t scale = 1;
    for (uint32_t i = 0; i < d; i++) scale *= 10;
    int n = snprintf(buf, cap, "%llu.%0*llu", (unsigned long long)(v / scale), (int)d, (unsigned long long)(v % scale));
    if (n <= 0 || (size_t)n >= cap) return;
    while (n > 0 && buf[n - 1] == '0') buf[--n] = '\0';
    if (n > 0 && buf[n - 1] == '.') buf[--n] = '\0';
}
