/* classes_format.c: method names and decoded fields as text and JSON, like a register-database dumper.
 *
 *   SET_COLOR_TARGET_FORMAT(3) = V=RF32_GF32_BF32_AF32
 *   SEM_EXECUTE = OPERATION=RELEASE, ACQUIRE_SWITCH_TSG=DIS, RELEASE_WFI=EN, PAYLOAD_SIZE=64BIT, ...
 *   SET_VIEWPORT_SCALE_X(0) = V=640
 *
 * A field prints as its enum name when the value has one, else as a float (FLOAT), a signed decimal
 * (SIGNED), 0/1 (one bit) or hex. Every function writes at most size bytes, always NUL-terminates when
 * size > 0, and returns the length of the full text (snprintf style). No allocation.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vgt/classes.h"

typedef struct sbuf {
    char *p;
    size_t size;
    size_t len;    /* length of the full text, even past size */
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->len < b->size ? b->size - b->len : 0;
    int n = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) b->len += (size_t)n;
}

/* The common tokens without printf: the dumper formats millions of fields. */
static void put_mem(sbuf *b, const char *s, size_t n)
{
    if (b->len + 1 < b->size) {
        size_t room = b->size - 1 - b->len, k = n < room ? n : room;
        memcpy(b->p + b->len, s, k);
        b->p[b->len + k] = 0;
    }
    b->len += n;
}

static void put_str(sbuf *b, const char *s)
{
    put_mem(b, s, strlen(s));
}

/* "0x" and at least `digits` hex digits. */
static void put_hex(sbuf *b, uint32_t v, int digits)
{
    char t[12];
    int n = 0;
    do {
        t[sizeof t - 1 - n++] = "0123456789abcdef"[v & 15u];
        v >>= 4;
    } while (v || n < digits);
    t[sizeof t - 2 - n] = '0';
    t[sizeof t - 1 - n] = 'x';
    put_mem(b, t + sizeof t - 2 - n, (size_t)n + 2);
}

static void put_u(sbuf *b, uint32_t v)
{
    char t[12];
    int n = 0;
    do {
        t[sizeof t - 1 - n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    put_mem(b, t + sizeof t - n, (size_t)n);
}

static sbuf sbuf_init(char *buf, size_t size)
{
    sbuf b = {buf, buf ? size : 0, 0};
    if (b.size) buf[0] = 0;
    return b;
}

static float as_float(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static void put_method_name(sbuf *b, const vgt_method_info *m, uint32_t index, uint32_t mthd)
{
    if (!m) {
        put_hex(b, mthd, 4);
        return;
    }
    put_str(b, m->name);
    if (m->stride) {
        put_mem(b, "(", 1);
        put_u(b, index);
        put_mem(b, ")", 1);
    }
}

/* One field's value; json selects JSON syntax (strings quoted, numbers bare). */
static void put_field_value(sbuf *b, const vgt_class_field *f, uint32_t data, int json)
{
    uint32_t v = vgt_class_field_get(f, data);
    unsigned width = (unsigned)f->hi - f->lo + 1u;
    const char *e = vgt_class_enum_name(f, v);
    if (e) {
        if (json) put_mem(b, "\"", 1);
        put_str(b, e);
        if (json) put_mem(b, "\"", 1);
    }
    else if ((f->flags & VGT_CLASS_FIELD_FLOAT) && width == 32) {
        float x = as_float(v);
        if (isfinite(x)) put(b, "%.9g", (double)x);
        else put(b, json ? "\"%g\"" : "%g", (double)x);
    } else if ((f->flags & VGT_CLASS_FIELD_SIGNED) && width < 32 && (v >> (width - 1)))
        put(b, "%lld", (long long)v - (1ll << width));
    else if (f->flags & VGT_CLASS_FIELD_SIGNED) put(b, "%d", (int32_t)v);
    else if (json || width == 1) put_u(b, v);
    else put_hex(b, v, 1);
}

static const vgt_method_info *lookup(uint32_t cls, uint32_t mthd, uint32_t *index)
{
    *index = 0;
    return vgt_class_method(vgt_class_find(cls), mthd, index);
}

size_t vgt_method_name(uint32_t cls, uint32_t mthd, char *buf, size_t size)
{
    uint32_t index;
    sbuf b = sbuf_init(buf, size);
    const vgt_method_info *m = lookup(cls, mthd, &index);
    put_method_name(&b, m, index, mthd);
    return b.len;
}

static void put_fields(sbuf *b, const vgt_method_info *m, uint32_t data)
{
    if (!m || !m->field_count) {
        put_hex(b, data, 8);
        return;
    }
    for (uint16_t i = 0; i < m->field_count; i++) {
        if (i) put_mem(b, ", ", 2);
        put_str(b, m->fields[i].name);
        put_mem(b, "=", 1);
        put_field_value(b, &m->fields[i], data, 0);
    }
}

size_t vgt_method_format_fields(uint32_t cls, uint32_t mthd, uint32_t data, char *buf, size_t size)
{
    uint32_t index;
    sbuf b = sbuf_init(buf, size);
    put_fields(&b, lookup(cls, mthd, &index), data);
    return b.len;
}

size_t vgt_method_format(uint32_t cls, uint32_t mthd, uint32_t data, char *buf, size_t size)
{
    uint32_t index;
    sbuf b = sbuf_init(buf, size);
    const vgt_method_info *m = lookup(cls, mthd, &index);
    put_method_name(&b, m, index, mthd);
    put_mem(&b, " = ", 3);
    put_fields(&b, m, data);
    return b.len;
}

size_t vgt_method_format_json(uint32_t cls, uint32_t mthd, uint32_t data, char *buf, size_t size)
{
    uint32_t index;
    sbuf b = sbuf_init(buf, size);
    const vgt_method_info *m = lookup(cls, mthd, &index);
    if (!m) {
        put_str(&b, "{\"method\":null,\"fields\":{}}");
        return b.len;
    }
    put_str(&b, "{\"method\":\"");
    put_str(&b, m->name);
    put_mem(&b, "\"", 1);
    if (m->stride) {
        put_str(&b, ",\"index\":");
        put_u(&b, index);
    }
    put_str(&b, ",\"fields\":{");
    for (uint16_t i = 0; i < m->field_count; i++) {
        put_str(&b, i ? ",\"" : "\"");
        put_str(&b, m->fields[i].name);
        put_str(&b, "\":");
        put_field_value(&b, &m->fields[i], data, 1);
    }
    put_mem(&b, "}}", 2);
    return b.len;
}
