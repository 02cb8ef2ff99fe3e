/* le.h (private): explicit little-endian stores and loads, and the length-checked cursor through which
 * every on-disk byte is read. Nothing here knows the format; it only refuses to read past an end. */
#ifndef VGT_LE_H
#define VGT_LE_H

#include <stdint.h>
#include <string.h>

static inline void le_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void le_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void le_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t le_get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t le_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t le_get64(const uint8_t *p) { return (uint64_t)le_get32(p) | ((uint64_t)le_get32(p + 4) << 32); }

static inline uint64_t pad8(uint64_t n) { return (n + 7u) & ~(uint64_t)7u; }

/* A read cursor over [p, p+len). Every take checks the bytes are there first; a failed take leaves the
 * cursor where it was and returns 0, so callers report the field that did not fit. */
typedef struct cursor {
    const uint8_t *p;
    uint64_t len;
    uint64_t pos;
} cursor;

static inline cursor cursor_make(const uint8_t *p, uint64_t len) { cursor c = {p, len, 0}; return c; }
static inline uint64_t cursor_left(const cursor *c) { return c->len - c->pos; }
static inline int cursor_has(const cursor *c, uint64_t n) { return n <= c->len - c->pos; }
static inline const uint8_t *cursor_take(cursor *c, uint64_t n)
{
    if (!cursor_has(c, n)) return NULL;
    const uint8_t *q = c->p + c->pos;
    c->pos += n;
    return q;
}
static inline int cursor_u32(cursor *c, uint32_t *v)
{
    const uint8_t *q = cursor_take(c, 4);
    if (!q) return 0;
    *v = le_get32(q);
    return 1;
}
static inline int cursor_u64(cursor *c, uint64_t *v)
{
    const uint8_t *q = cursor_take(c, 8);
    if (!q) return 0;
    *v = le_get64(q);
    return 1;
}

#endif
