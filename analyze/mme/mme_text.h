/* mme_text.h: a bounded text builder for the disassemblers (always NUL-terminated, never overruns). */
#ifndef VGT_MME_TEXT_H
#define VGT_MME_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct mme_text {
    char *buf;
    size_t cap, len;
} mme_text;

static inline void mme_text_put(mme_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void mme_text_put(mme_text *t, const char *fmt, ...)
{
    if (t->cap == 0 || t->len >= t->cap - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    t->len += (size_t)n < t->cap - t->len ? (size_t)n : t->cap - t->len - 1;
}

size_t mme_tu104_line(const uint32_t *code, uint32_t index, unsigned flags, mme_text *t);
size_t mme_fermi_line(uint32_t word, uint32_t index, unsigned flags, mme_text *t);

#endif
