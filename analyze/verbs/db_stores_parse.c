/* db_stores_parse.c: the strict, bounded reader of a store-census file (db_stores.h says the shape).
 * One flat JSON object a line, keys from the table below, each exactly once. Nothing else of JSON is
 * accepted (null only as px0's "none"): a nested value, a fraction, an exponent, an escape or an unknown key is an error naming the
 * line and column. Lines are at most DB_STORES_MAX_LINE bytes, rows at most DB_STORES_MAX_ROWS. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_stores.h"
#include "vgt/grow.h"

enum field_type { F_U64, F_U32, F_I64_OR_NONE, F_U32_OR_NULL, F_U63_OR_NULL, F_NAME };

/* The keys `vgt replay --census-json` writes (replay/verbs/replay_out.c, census_write_jsonl). */
static const struct field {
    const char *key;
    enum field_type type;
    size_t off;
} fields[] = {
    {"submission", F_U64, offsetof(db_store_row, submission)},
    {"seq", F_U64, offsetof(db_store_row, seq)},
    {"channel", F_U32, offsetof(db_store_row, channel)},
    {"what", F_NAME, offsetof(db_store_row, what)},
    {"va", F_U64, offsetof(db_store_row, va)},
    {"length", F_U64, offsetof(db_store_row, length)},
    {"pages_written", F_U64, offsetof(db_store_row, pages_written)},
    {"bytes_changed", F_U64, offsetof(db_store_row, bytes_changed)},
    {"first_changed", F_I64_OR_NONE, offsetof(db_store_row, first_changed)},
    {"first_nonzero_pixel", F_I64_OR_NONE, offsetof(db_store_row, first_nonzero_pixel)},
    {"px0", F_U32_OR_NULL, offsetof(db_store_row, px0)},
    /* a census per draw: both or neither */
    {"draw", F_U63_OR_NULL, offsetof(db_store_row, draw)},
    {"draw_count", F_U32, offsetof(db_store_row, draw_count)},
    /* optional: 1 on a row read before the GPU finished the work (the replay writes it only then) */
    {"unfinished", F_U32, offsetof(db_store_row, unfinished)},
};
#define NFIELDS (sizeof fields / sizeof fields[0])
#define NREQUIRED 11u
#define ALL_FIELDS ((1u << NREQUIRED) - 1u)
#define DRAW_FIELDS (3u << NREQUIRED)
#define PAGE 4096u

typedef struct cursor {
    const char *path;
    const char *start, *p, *end;
    uint64_t line, offset;        /* line number, file offset of start */
} cursor;

/* An error at the cursor: file offset, and line and column in the message. */
#define CFAIL(c, err, code, fmt, ...)                                                                        \
    vgt_fail((err), (code), (c)->offset + (uint64_t)((c)->p - (c)->start),                                 \
             "stores file %s line %llu column %llu: " fmt, (c)->path, (unsigned long long)(c)->line,        \
             (unsigned long long)((c)->p - (c)->start + 1), __VA_ARGS__)

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r')) c->p++;
}

/* A printable rendering of the character at the cursor, for messages. */
static const char *found(const cursor *c, char *buf, size_t cap)
{
    if (c->p >= c->end) return "the end of the line";
    unsigned char ch = (unsigned char)*c->p;
    if (ch >= 0x20 && ch < 0x7f) snprintf(buf, cap, "'%c'", ch);
    else snprintf(buf, cap, "byte 0x%02x", ch);
    return buf;
}

static vgt_status expect(cursor *c, char ch, const char *where, vgt_error *err)
{
    skip_ws(c);
    char b[16];
    if (c->p >= c->end || *c->p != ch)
        return CFAIL(c, err, VGT_E_FORMAT, "expected '%c' %s, found %s", ch, where, found(c, b, sizeof b));
    c->p++;
    return VGT_OK;
}

/* A string without escapes, into buf (cap bytes with the NUL): keys and `what`. */
static vgt_status string(cursor *c, char *buf, size_t cap, const char *what, vgt_error *err)
{
    skip_ws(c);
    char b[16];
    if (c->p >= c->end || *c->p != '"')
        return CFAIL(c, err, VGT_E_FORMAT, "expected %s (a quoted string), found %s", what, found(c, b, sizeof b));
    c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != '"') {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '\\') return CFAIL(c, err, VGT_E_FORMAT, "escapes are not accepted in %s", what);
        if (ch < 0x20 || ch >= 0x7f)
            return CFAIL(c, err, VGT_E_FORMAT, "byte 0x%02x in %s (printable ASCII only)", ch, what);
        if (n + 1 >= cap)
            return CFAIL(c, err, VGT_E_LIMIT, "%s is longer than %zu characters", what, cap - 1);
        buf[n++] = (char)ch;
        c->p++;
    }
    if (c->p >= c->end) return CFAIL(c, err, VGT_E_FORMAT, "%s has no closing quote", what);
    c->p++;
    buf[n] = 0;
    return VGT_OK;
}

/* A JSON integer: -?(0|[1-9][0-9]*), no fraction or exponent; the magnitude within 64 bits. */
static vgt_status integer(cursor *c, const char *key, int *negative, uint64_t *mag, vgt_error *err)
{
    skip_ws(c);
    char b[16];
    *negative = c->p < c->end && *c->p == '-';
    if (*negative) c->p++;
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return CFAIL(c, err, VGT_E_FORMAT, "field '%s': expected an integer, found %s", key, found(c, b, sizeof b));
    const char *digits = c->p;
    uint64_t v = 0;
    for (; c->p < c->end && *c->p >= '0' && *c->p <= '9'; c->p++) {
        unsigned d = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - d) / 10u) {
            const char *e = c->p;
            while (e < c->end && *e >= '0' && *e <= '9') e++;
            int n = (int)(e - digits);
            c->p = digits;
            return CFAIL(c, err, VGT_E_LIMIT, "field '%s': %.*s%s (%d digits) is over the maximum %llu", key,
                         n < 40 ? n : 40, digits, n < 40 ? "" : "...", n, (unsigned long long)UINT64_MAX);
        }
        v = v * 10u + d;
    }
    if (*digits == '0' && c->p - digits > 1) {
        c->p = digits;
        return CFAIL(c, err, VGT_E_FORMAT, "field '%s': a leading zero is not JSON", key);
    }
    if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E'))
        return CFAIL(c, err, VGT_E_FORMAT, "field '%s': expected an integer, found a fraction or exponent", key);
    *mag = v;
    return VGT_OK;
}

/* An integer outside its field's range; the cursor goes back to the value for the column. */
static vgt_status out_of_range(cursor *c, const char *at, const struct field *f, int neg, uint64_t v, const char *why,
                               vgt_error *err)
{
    c->p = at;
    return CFAIL(c, err, neg ? VGT_E_FORMAT : VGT_E_LIMIT, "field '%s': %s%llu %s", f->key, neg ? "-" : "",
                 (unsigned long long)v, why);
}

static vgt_status value(cursor *c, const struct field *f, db_store_row *row, vgt_error *err)
{
    char *dst = (char *)row + f->off;
    if (f->type == F_NAME) {
        VGT_TRY(string(c, dst, DB_STORES_MAX_WHAT + 1, "the value of 'what'", err));
        if (!*dst) return CFAIL(c, err, VGT_E_FORMAT, "field '%s' is empty", f->key);
        return VGT_OK;
    }
    const char *at = c->p;
    if ((f->type == F_U32_OR_NULL || f->type == F_U63_OR_NULL) && c->end - c->p >= 4 && !memcmp(c->p, "null", 4)) {
        int64_t none = -1;
        c->p += 4;
        memcpy(dst, &none, sizeof none);
        return VGT_OK;
    }
    int neg = 0;
    uint64_t v = 0;   /* set by integer() on success; initialised for the compiler's flow analysis */
    VGT_TRY(integer(c, f->key, &neg, &v, err));
    if (neg && !v) neg = 0;   /* -0 is 0 */
    if (f->type == F_I64_OR_NONE) {
        if (neg && v != 1) return out_of_range(c, at, f, neg, v, "is below the minimum -1 (none)", err);
        if (v > INT64_MAX) return out_of_range(c, at, f, neg, v, "is over the maximum 9223372036854775807", err);
        int64_t s = neg ? -1 : (int64_t)v;
        memcpy(dst, &s, sizeof s);
        return VGT_OK;
    }
    if (neg) return out_of_range(c, at, f, neg, v, "is negative", err);
    if (f->type == F_U63_OR_NULL) {
        if (v > INT64_MAX) return out_of_range(c, at, f, neg, v, "is over the maximum 9223372036854775807", err);
        int64_t s = (int64_t)v;
        memcpy(dst, &s, sizeof s);
        return VGT_OK;
    }
    if (v > UINT32_MAX && f->type != F_U64) return out_of_range(c, at, f, neg, v, "is over the maximum 4294967295", err);
    if (f->type == F_U32) {
        uint32_t u = (uint32_t)v;
        memcpy(dst, &u, sizeof u);
        return VGT_OK;
    }
    if (f->type == F_U32_OR_NULL) {
        int64_t s = (int64_t)v;
        memcpy(dst, &s, sizeof s);
        return VGT_OK;
    }
    memcpy(dst, &v, sizeof v);
    return VGT_OK;
}

/* One "key": value pair; *seen collects the keys met. */
static vgt_status member(cursor *c, uint32_t *seen, db_store_row *row, vgt_error *err)
{
    char key[32];
    const char *at = c->p;
    VGT_TRY(string(c, key, sizeof key, "a key", err));
    uint32_t i = 0;
    while (i < NFIELDS && strcmp(fields[i].key, key)) i++;
    if (i == NFIELDS || (*seen & (1u << i))) {
        c->p = at;
        skip_ws(c);
        if (i == NFIELDS) return CFAIL(c, err, VGT_E_FORMAT, "unknown key \"%s\"", key);
        return CFAIL(c, err, VGT_E_FORMAT, "key \"%s\" given twice", key);
    }
    *seen |= 1u << i;
    VGT_TRY(expect(c, ':', "after a key", err));
    skip_ws(c);
    return value(c, &fields[i], row, err);
}

/* An error about a whole row. */
#define RFAIL(c, err, fmt, ...)                                                                                \
    vgt_fail((err), VGT_E_FORMAT, (c)->offset, "stores file %s line %llu: " fmt, (c)->path,                 \
             (unsigned long long)(c)->line, __VA_ARGS__)

/* A row consistent with itself: what the replay's vgt_store_diff can produce. */
static vgt_status check_row(const cursor *c, const db_store_row *r, vgt_error *err)
{
    unsigned long long va = r->va, len = r->length, pages = len / PAGE + (len % PAGE != 0);
    unsigned long long wrote = r->pages_written, bytes = r->bytes_changed;
    long long first = r->first_changed, nz = r->first_nonzero_pixel, px0 = r->px0;
    if (!len) return RFAIL(c, err, "length is 0 (va 0x%llx)", va);
    if (va > UINT64_MAX - len) return RFAIL(c, err, "va 0x%llx + length %llu runs past 2^64", va, len);
    if (bytes > len) return RFAIL(c, err, "bytes_changed %llu is over length %llu", bytes, len);
    if (wrote > pages || wrote > bytes || (bytes && !wrote))
        return RFAIL(c, err, "pages_written %llu does not fit bytes_changed %llu in %llu pages", wrote, bytes, pages);
    if ((first < 0) != (bytes == 0) || (first >= 0 && (unsigned long long)first >= len))
        return RFAIL(c, err, "first_changed %lld does not fit bytes_changed %llu in length %llu", first, bytes, len);
    if (nz >= 0 && (unsigned long long)nz >= len / 4)
        return RFAIL(c, err, "first_nonzero_pixel %lld is past the range's %llu pixels", nz, len / 4);
    /* px0 is a render target's first pixel: only its rows have one, and a non-zero one is a non-zero pixel */
    if (px0 >= 0 && strcmp(r->what, "render-target"))
        return RFAIL(c, err, "px0 %lld on a \"%s\" row (only render-target rows have a first pixel)", px0, r->what);
    if (px0 > 0 && nz < 0)
        return RFAIL(c, err, "px0 0x%08llx is not zero but first_nonzero_pixel says the range is all zero", px0);
    return VGT_OK;
}

vgt_status db_stores_parse_line(const char *path, const char *text, uint32_t len, uint64_t line, uint64_t offset,
                                 db_store_row *row, vgt_error *err)
{
    cursor c = {.path = path, .start = text, .p = text, .end = text + len, .line = line, .offset = offset};
    skip_ws(&c);
    if (c.p == c.end) return VGT_E_EOF;
    memset(row, 0, sizeof *row);
    row->line = line;
    VGT_TRY(expect(&c, '{', "at the start of a row", err));
    uint32_t seen = 0;
    skip_ws(&c);
    if (c.p < c.end && *c.p != '}') {
        for (;;) {
            VGT_TRY(member(&c, &seen, row, err));
            skip_ws(&c);
            if (c.p < c.end && *c.p == ',') { c.p++; continue; }
            break;
        }
    }
    VGT_TRY(expect(&c, '}', "after a value (or ',')", err));
    skip_ws(&c);
    char b[16];
    if (c.p != c.end)
        return CFAIL(&c, err, VGT_E_FORMAT, "expected the end of the line after the row, found %s",
                     found(&c, b, sizeof b));
    if ((seen & ALL_FIELDS) != ALL_FIELDS) {
        uint32_t i = 0;
        while (seen & (1u << i)) i++;
        return RFAIL(&c, err, "missing key \"%s\" (a row has all of %u keys)", fields[i].key, (unsigned)NREQUIRED);
    }
    if ((seen & DRAW_FIELDS) && (seen & DRAW_FIELDS) != DRAW_FIELDS)
        return RFAIL(&c, err, "key \"%s\" without \"%s\" (a census per draw gives both)",
                     fields[seen & (1u << NREQUIRED) ? NREQUIRED : NREQUIRED + 1].key,
                     fields[seen & (1u << NREQUIRED) ? NREQUIRED + 1 : NREQUIRED].key);
    row->has_draw = (seen & DRAW_FIELDS) != 0;
    if (!row->has_draw) row->draw = -1;
    if (row->has_draw && (row->draw < 0) != (row->draw_count == 0))
        return RFAIL(&c, err, "draw %lld with draw_count %u (null goes with 0, a draw with 1 or more)",
                     (long long)row->draw, row->draw_count);
    if (row->unfinished > 1) return RFAIL(&c, err, "unfinished %u (1, or the key left out)", row->unfinished);
    return check_row(&c, row, err);
}

static int row_order(const void *a, const void *b)
{
    const db_store_row *x = a, *y = b;
    if (x->submission != y->submission) return x->submission < y->submission ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static vgt_status add_row(db_stores *s, const db_store_row *row, vgt_error *err)
{
    if (s->n == DB_STORES_MAX_ROWS)
        return vgt_fail(err, VGT_E_LIMIT, VGT_NO_OFFSET, "stores file %s line %llu: more than %u rows", s->path,
                        (unsigned long long)row->line, DB_STORES_MAX_ROWS);
    if (vgt_grow(&s->rows, &s->cap, s->n + 1, 256))
        return vgt_fail(err, VGT_E_NOMEM, VGT_NO_OFFSET, "stores file %s: no memory for %llu rows", s->path,
                        (unsigned long long)(s->n + 1));
    s->rows[s->n++] = *row;
    return VGT_OK;
}

/* Every complete line of buf[0..have) (and the last one at eof); *used: bytes consumed. */
static vgt_status parse_lines(db_stores *s, const char *buf, size_t have, int eof, uint64_t *line, uint64_t *offset,
                              size_t *used, vgt_error *err)
{
    size_t at = 0;
    while (at < have) {
        const char *nl = memchr(buf + at, '\n', have - at);
        size_t len = nl ? (size_t)(nl - (buf + at)) : have - at;
        if (len > DB_STORES_MAX_LINE)
            return vgt_fail(err, VGT_E_LIMIT, *offset, "stores file %s line %llu: longer than %u bytes", s->path,
                            (unsigned long long)*line, DB_STORES_MAX_LINE);
        if (!nl && !eof) break;   /* the rest comes with the next read */
        db_store_row row;
        vgt_status rc = db_stores_parse_line(s->path, buf + at, (uint32_t)len, *line, *offset, &row, err);
        if (rc == VGT_OK) rc = add_row(s, &row, err);
        else if (rc == VGT_E_EOF) rc = VGT_OK;   /* a blank line */
        if (rc != VGT_OK) return rc;
        at += len + (nl != NULL);
        *offset += len + (nl != NULL);
        ++*line;
    }
    *used = at;
    return VGT_OK;
}

static vgt_status read_all(db_stores *s, FILE *f, vgt_error *err)
{
    char buf[16384];   /* well over DB_STORES_MAX_LINE: a line always fits */
    size_t have = 0;
    uint64_t line = 1, offset = 0;
    int eof = 0;
    while (!eof || have) {
        size_t got = fread(buf + have, 1, sizeof buf - have, f);
        if (got < sizeof buf - have) {
            if (ferror(f))
                return vgt_fail(err, VGT_E_IO, offset + have, "stores file %s: read failed: %s", s->path,
                                strerror(errno));
            eof = 1;
        }
        have += got;
        size_t used = 0;
        VGT_TRY(parse_lines(s, buf, have, eof, &line, &offset, &used, err));
        memmove(buf, buf + used, have - used);
        have -= used;
        if (eof && have)   /* cannot happen: at the end every line is parsed */
            return vgt_fail(err, VGT_E_FORMAT, offset, "stores file %s line %llu: not consumed", s->path,
                            (unsigned long long)line);
    }
    return VGT_OK;
}

vgt_status db_stores_load(db_stores *s, const char *path, vgt_error *err)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    FILE *f = fopen(path, "rb");
    if (!f) return vgt_fail(err, VGT_E_IO, VGT_NO_OFFSET, "cannot open stores file %s: %s", path, strerror(errno));
    vgt_status rc = read_all(s, f, err);
    fclose(f);
    if (rc != VGT_OK) {
        db_stores_free(s);
        return rc;
    }
    int sorted = 1;
    for (uint64_t i = 1; i < s->n && sorted; i++) sorted = s->rows[i - 1].submission <= s->rows[i].submission;
    if (!sorted) qsort(s->rows, s->n, sizeof *s->rows, row_order);
    return VGT_OK;
}

vgt_status db_stores_match(db_stores *s, uint64_t index, uint64_t seq, uint32_t channel, uint64_t *first,
                           uint64_t *count, vgt_error *err)
{
    while (s->next < s->n && s->rows[s->next].submission < index) s->next++;
    *first = s->next;
    *count = 0;
    for (uint64_t i = s->next; i < s->n && s->rows[i].submission == index; i++, ++*count) {
        const db_store_row *r = &s->rows[i];
        if (r->seq != seq || r->channel != channel)
            return vgt_fail(err, VGT_E_FORMAT, VGT_NO_OFFSET,
                            "stores file %s line %llu: submission %llu is seq %llu on channel 0x%x in the trace, the "
                            "stores file says seq %llu on channel 0x%x (made from another trace?)",
                            s->path, (unsigned long long)r->line, (unsigned long long)index, (unsigned long long)seq,
                            channel, (unsigned long long)r->seq, r->channel);
    }
    s->next += *count;
    return VGT_OK;
}

vgt_status db_stores_check_unmatched(const db_stores *s, uint64_t submissions, vgt_error *err)
{
    for (uint64_t i = 0; i < s->n; i++)
        if (s->rows[i].submission >= submissions)
            return vgt_fail(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET,
                            "stores file %s line %llu: submission %llu is not in the trace (it has %llu submissions)",
                            s->path, (unsigned long long)s->rows[i].line, (unsigned long long)s->rows[i].submission,
                            (unsigned long long)submissions);
    return VGT_OK;
}

void db_stores_free(db_stores *s)
{
    free(s->rows);
    s->rows = NULL;
    s->n = s->cap = s->next = 0;
}
