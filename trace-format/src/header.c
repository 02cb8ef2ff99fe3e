/* header.c: the file header and its identity block (docs/trace-format.md section 2). */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "format.h"
#include "le.h"

static uint64_t entry_size(uint64_t klen, uint64_t vlen) { return pad8(8 + klen + vlen); }
static int utf8_valid(const uint8_t *p, uint64_t n);

static vgt_status check_identity(const vgt_identity *ident, uint32_t n, uint64_t *total, vgt_error *err)
{
    if (n > VGT_MAX_IDENTITY_ENTRIES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "%u identity entries, over the limit of %u", n,
                        VGT_MAX_IDENTITY_ENTRIES);
    uint64_t t = VGT_FILE_HEADER_FIXED + 8;
    for (uint32_t i = 0; i < n; i++) {
        if (!ident[i].key || !ident[i].value || !ident[i].key[0])
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "identity entry %u has no key or no value", i);
        size_t kl = strlen(ident[i].key), vl = strlen(ident[i].value);
        if (kl > VGT_MAX_IDENTITY_KEY || vl > VGT_MAX_IDENTITY_VALUE)
            return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET,
                            "identity '%.64s': key of %zu bytes (max %u) or value of %zu bytes (max %u)", ident[i].key,
                            kl, VGT_MAX_IDENTITY_KEY, vl, VGT_MAX_IDENTITY_VALUE);
        if (!utf8_valid((const uint8_t *)ident[i].key, kl) || !utf8_valid((const uint8_t *)ident[i].value, vl))
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "identity '%.64s': key or value is not UTF-8", ident[i].key);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(ident[j].key, ident[i].key))
                return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "identity key '%s' given twice", ident[i].key);
        t += entry_size(kl, vl);
    }
    if (t > VGT_MAX_HEADER_LENGTH)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "identity block makes a header of %llu bytes, over %u",
                        (unsigned long long)t, VGT_MAX_HEADER_LENGTH);
    *total = t;
    return VGT_OK;
}

vgt_status header_build(const vgt_identity *ident, uint32_t nident, uint32_t flags, uint8_t **out, uint32_t *len,
                        vgt_error *err)
{
    uint64_t total = 0;
    VGT_TRY(check_identity(ident, nident, &total, err));
    uint8_t *p = calloc(1, total);
    if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a %llu-byte header", (unsigned long long)total);
    memcpy(p, VGT_FILE_MAGIC, 8);
    le_put16(p + 8, VGT_FORMAT_MAJOR);
    le_put16(p + 10, VGT_FORMAT_MINOR);
    le_put32(p + 12, flags);
    le_put32(p + 16, (uint32_t)total);
    le_put32(p + 20, nident);
    uint64_t off = VGT_FILE_HEADER_FIXED;
    for (uint32_t i = 0; i < nident; i++) {
        uint32_t kl = (uint32_t)strlen(ident[i].key), vl = (uint32_t)strlen(ident[i].value);
        le_put32(p + off, kl);
        le_put32(p + off + 4, vl);
        memcpy(p + off + 8, ident[i].key, kl);
        memcpy(p + off + 8 + kl, ident[i].value, vl);
        off += entry_size(kl, vl);
    }
    le_put64(p + total - 8, XXH64(p, total - 8, 0));
    *out = p;
    *len = (uint32_t)total;
    return VGT_OK;
}

vgt_status header_parse_fixed(const uint8_t *p, uint64_t file_size, file_header *h, vgt_error *err)
{
    if (memcmp(p, VGT_FILE_MAGIC, 8))
        return VGT_FAIL(err, VGT_E_FORMAT, 0, "not a .vgt trace: the magic at offset 0 is not \"VGTRACE\\0\"");
    h->major = le_get16(p + 8);
    h->minor = le_get16(p + 10);
    h->flags = le_get32(p + 12);
    h->header_length = le_get32(p + 16);
    h->identity_count = le_get32(p + 20);
    if (h->major != VGT_FORMAT_MAJOR)
        return VGT_FAIL(err, VGT_E_VERSION, 8, "format major version %u; this reader knows major %u only", h->major,
                        VGT_FORMAT_MAJOR);
    if (h->header_length < VGT_MIN_HEADER_LENGTH || h->header_length > VGT_MAX_HEADER_LENGTH || h->header_length % 8)
        return VGT_FAIL(err, VGT_E_FORMAT, 16,
                        "header_length %u is not a multiple of 8 between %u and %u", h->header_length,
                        VGT_MIN_HEADER_LENGTH, VGT_MAX_HEADER_LENGTH);
    if (file_size && h->header_length > file_size)
        return VGT_FAIL(err, VGT_E_TRUNCATED, 16, "header_length %u is past the end of the %llu-byte file",
                        h->header_length, (unsigned long long)file_size);
    if (h->identity_count > VGT_MAX_IDENTITY_ENTRIES || h->identity_count > (h->header_length - 40) / 8)
        return VGT_FAIL(err, VGT_E_LIMIT, 20, "identity_count %u is over the limit (%u, and %u fit in the header)",
                        h->identity_count, VGT_MAX_IDENTITY_ENTRIES, (h->header_length - 40) / 8);
    return VGT_OK;
}

static int has_nul(const uint8_t *p, uint32_t n) { return memchr(p, 0, n) != NULL; }

/* Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_valid(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n;) {
        uint8_t c = p[i];
        uint32_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (!len || len > n - i) return 0;
        for (uint32_t k = 1; k < len; k++)
            if ((p[i + k] & 0xc0) != 0x80) return 0;
        if (len == 3 && ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0))) return 0;
        if (len == 4 && ((c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90))) return 0;
        i += len;
    }
    return 1;
}

vgt_status header_parse_identity(const uint8_t *p, const file_header *h, vgt_identity **ident, vgt_error *err)
{
    uint32_t hl = h->header_length, n = h->identity_count;
    uint64_t want = le_get64(p + hl - 8), got = XXH64(p, hl - 8, 0);
    if (want != got)
        return VGT_FAIL(err, VGT_E_CHECKSUM, hl - 8, "file header checksum 0x%016llx, computed 0x%016llx",
                        (unsigned long long)want, (unsigned long long)got);
    /* Flags are judged once the checksum says they are what the writer wrote. */
    if (h->flags & ~VGT_KNOWN_HEADER_FLAGS)
        return VGT_FAIL(err, VGT_E_VERSION, 12,
                        "unknown header flags 0x%08x (bits this reader does not know: 0x%08x); a newer format "
                        "feature is required to read this file", h->flags, h->flags & ~VGT_KNOWN_HEADER_FLAGS);
    /* One block: the array, then each key and value with its NUL; the header size bounds it. */
    vgt_identity *id = malloc(sizeof *id * (size_t)n + hl + 2u * n + 1);
    if (!id) return VGT_FAIL(err, VGT_E_NOMEM, 0, "no memory for %u identity entries", n);
    char *strs = (char *)(id + n);
    cursor c = cursor_make(p + VGT_FILE_HEADER_FIXED, hl - 8 - VGT_FILE_HEADER_FIXED);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t at = VGT_FILE_HEADER_FIXED + c.pos;
        uint32_t kl, vl;
        if (!cursor_u32(&c, &kl) || !cursor_u32(&c, &vl) || kl > VGT_MAX_IDENTITY_KEY || vl > VGT_MAX_IDENTITY_VALUE ||
            !cursor_has(&c, pad8((uint64_t)kl + vl))) {
            free(id);
            return VGT_FAIL(err, VGT_E_FORMAT, at,
                            "identity entry %u at offset %llu does not fit the header or is over the key/value limits "
                            "(%u/%u bytes)", i, (unsigned long long)at, VGT_MAX_IDENTITY_KEY, VGT_MAX_IDENTITY_VALUE);
        }
        const uint8_t *k = cursor_take(&c, kl), *v = cursor_take(&c, vl);
        c.pos += pad8((uint64_t)kl + vl) - kl - vl;
        if (!kl || has_nul(k, kl) || has_nul(v, vl) || !utf8_valid(k, kl) || !utf8_valid(v, vl)) {
            free(id);
            return VGT_FAIL(err, VGT_E_FORMAT, at,
                            "identity entry %u at offset %llu has an empty key, a NUL byte or bytes that are not UTF-8", i,
                            (unsigned long long)at);
        }
        memcpy(strs, k, kl);
        strs[kl] = 0;
        id[i].key = strs;
        strs += kl + 1;
        memcpy(strs, v, vl);
        strs[vl] = 0;
        id[i].value = strs;
        strs += vl + 1;
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(id[j].key, id[i].key)) {
                VGT_FAIL(err, VGT_E_FORMAT, at, "identity key '%.64s' appears twice (again at offset %llu)", id[i].key,
                         (unsigned long long)at);
                free(id);
                return VGT_E_FORMAT;
            }
    }
    if (cursor_left(&c)) {
        free(id);
        return VGT_FAIL(err, VGT_E_FORMAT, VGT_FILE_HEADER_FIXED + c.pos,
                        "%llu bytes left after the %u identity entries at offset %llu; entries must fill the header",
                        (unsigned long long)cursor_left(&c), n, (unsigned long long)(VGT_FILE_HEADER_FIXED + c.pos));
    }
    *ident = id;
    return VGT_OK;
}
