/* test_format_reader_errors.c: crafted bad files, each with the exact error the reader must give
 * (status code and offset), in the manner of libpcap's bad-file corpus. The checksums of each mutation
 * are recomputed, so that the check under test is the one that fires:
 *  - file header: magic, major, unknown flags (named), header_length, identity_count, a duplicate key;
 *  - chunk: unknown codec, a payload of two zstd frames, a frame whose content size disagrees, a stored
 *    chunk whose records do not fill it;
 *  - trailer: an index entry that disagrees with its chunk, bytes after the footer;
 *  - a file cut while it is being read (as `vgt repack T T` once did): a truncation, not a clean end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "vgt/trace.h"

#include "check.h"

static char path[256];
static uint8_t *orig;
static size_t orig_len;
static uint32_t hlen;          /* header_length */
static uint64_t chunk0;        /* offset of the first chunk, = hlen */

static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static void write_file(const uint8_t *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(2);
    }
}

/* The original: stored chunks of 3 markers each, a trailer. */
static void make_original(void)
{
    vgt_writer_options o = vgt_writer_defaults();
    o.codec = VGT_CODEC_STORED;
    o.chunk_target = 4096;
    vgt_identity id[] = {{"producer", "test_format_reader_errors"}, {"chip", "GH100"}};
    vgt_writer *w;
    vgt_error e;
    if (vgt_writer_open_path(&w, path, &o, id, 2, &e) != VGT_OK) exit(2);
    for (int i = 0; i < 6; i++) {
        vgt_rec_marker m = {5, 0, "hello"};
        vgt_write_marker(w, 100 + i, &m, &e);
        if (i % 3 == 2) vgt_writer_flush(w, 0, &e);
    }
    vgt_writer_close(w, &e);
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    orig_len = (size_t)ftell(f);
    rewind(f);
    orig = malloc(orig_len);
    if (fread(orig, 1, orig_len, f) != orig_len) exit(2);
    fclose(f);
    hlen = get32(orig + 16);
    chunk0 = hlen;
}

static void fix_header(uint8_t *d) { put64(d + hlen - 8, XXH64(d, hlen - 8, 0)); }
static void fix_chunk_header(uint8_t *d, uint64_t off) { put32(d + off + 68, XXH32(d + off, 68, 0)); }

/* Opens the file and reads to the end; returns the first failing status and its offset and message. */
static vgt_status read_all(vgt_error *e, int check_trailer)
{
    vgt_reader *r;
    vgt_status rc = vgt_reader_open_path(&r, path, NULL, e);
    if (rc != VGT_OK) return rc;
    vgt_record rec;
    while ((rc = vgt_reader_next(r, &rec, e)) == VGT_OK) {}
    if (rc == VGT_E_EOF) rc = check_trailer ? vgt_reader_trailer_check(r, NULL, e) : VGT_OK;
    vgt_reader_close(r);
    return rc;
}

static void expect(const uint8_t *d, size_t n, vgt_status code, uint64_t offset, const char *word, const char *what)
{
    write_file(d, n);
    vgt_error e;
    vgt_error_clear(&e);
    vgt_status rc = read_all(&e, 1);
    CHECK(rc == code, "%s: status %s, expected %s (%s)", what, vgt_status_name(rc), vgt_status_name(code), e.msg);
    CHECK(offset == VGT_NO_OFFSET || e.offset == offset, "%s: offset %llu, expected %llu (%s)", what,
          (unsigned long long)e.offset, (unsigned long long)offset, e.msg);
    CHECK(!word || strstr(e.msg, word), "%s: message lacks '%s': %s", what, word, e.msg);
}

static void test_header(void)
{
    uint8_t *d = malloc(orig_len);
    memcpy(d, orig, orig_len);
    d[0] = 'X';
    expect(d, orig_len, VGT_E_FORMAT, 0, "magic", "bad magic");
    memcpy(d, orig, orig_len);
    d[8] = 2;
    fix_header(d);
    expect(d, orig_len, VGT_E_VERSION, 8, "major version 2", "major 2");
    memcpy(d, orig, orig_len);
    put32(d + 12, 0x4);
    fix_header(d);
    expect(d, orig_len, VGT_E_VERSION, 12, "0x00000004", "unknown flag");
    memcpy(d, orig, orig_len);
    put32(d + 12, 0x4);                          /* a flipped flag bit without the checksum: a checksum error */
    expect(d, orig_len, VGT_E_CHECKSUM, hlen - 8, "checksum", "flag bit flipped");
    memcpy(d, orig, orig_len);
    put32(d + 16, 12);
    expect(d, orig_len, VGT_E_FORMAT, 16, "header_length 12", "header_length too small");
    memcpy(d, orig, orig_len);
    put32(d + 16, (uint32_t)(orig_len + 8) & ~7u);
    expect(d, orig_len, VGT_E_TRUNCATED, 16, "past the end", "header_length past the file");
    memcpy(d, orig, orig_len);
    put32(d + 20, 5000);
    expect(d, orig_len, VGT_E_LIMIT, 20, "identity_count 5000", "too many identity entries");
    memcpy(d, orig, orig_len);
    /* The first entry "producer" becomes key "chip" (the second entry's key) with "ucer" moved into its
     * value: same entry size, a duplicate key. */
    memcpy(d + 32 + 8, "chip", 4);
    uint32_t kl = get32(d + 32);
    if (kl == 8) {
        put32(d + 32, 4);
        put32(d + 36, get32(d + 36) + 4);
        fix_header(d);
        expect(d, orig_len, VGT_E_FORMAT, VGT_NO_OFFSET, "appears twice", "duplicate identity key");
    } else {
        CHECK(0, "first identity key has length %u, expected 8", kl);
    }
    free(d);
}

static void test_chunks(void)
{
    uint8_t *d = malloc(orig_len + 256);
    memcpy(d, orig, orig_len);
    put32(d + chunk0 + 4, 7);                     /* codec 7, header checksum fixed */
    fix_chunk_header(d, chunk0);
    expect(d, orig_len, VGT_E_UNSUPPORTED, chunk0, "unknown codec 7", "unknown codec");

    /* Rebuild the first (stored) chunk as zstd: two frames, then one frame with a lying content size. */
    uint32_t ulen = get32(orig + chunk0 + 12);
    const uint8_t *recs = orig + chunk0 + 72;
    size_t rest = orig_len - (chunk0 + 72 + ulen);
    uint8_t frames[1024];
    size_t a = ZSTD_compress(frames, sizeof frames, recs, ulen / 2, 1);
    size_t b = ZSTD_compress(frames + a, sizeof frames - a, recs + ulen / 2, ulen - ulen / 2, 1);
    uint8_t *z = malloc(orig_len + 2048);
    size_t clen = a + b;
    memcpy(z, orig, chunk0 + 72);
    memcpy(z + chunk0 + 72, frames, clen);
    memcpy(z + chunk0 + 72 + clen, orig + chunk0 + 72 + ulen, rest);
    put32(z + chunk0 + 4, 1);                     /* codec zstd: u16 codec then u16 header_size 72 */
    z[chunk0 + 6] = 72;
    z[chunk0 + 7] = 0;
    put32(z + chunk0 + 8, (uint32_t)clen);
    put64(z + chunk0 + 48, XXH64(frames, clen, 0));
    fix_chunk_header(z, chunk0);
    /* the trailer's offsets no longer match: only the reading is checked here */
    write_file(z, chunk0 + 72 + clen + rest);
    vgt_error e;
    vgt_status rc = read_all(&e, 0);
    CHECK(rc == VGT_E_FORMAT && e.offset == chunk0 && strstr(e.msg, "one zstd frame"), "two frames: %s %s",
          vgt_status_name(rc), e.msg);

    uint8_t one[1024];
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setPledgedSrcSize(cc, ulen);
    size_t n = ZSTD_compress2(cc, one, sizeof one, recs, ulen);
    ZSTD_freeCCtx(cc);
    memcpy(z + chunk0 + 72, one, n);
    memcpy(z + chunk0 + 72 + n, orig + chunk0 + 72 + ulen, rest);
    put32(z + chunk0 + 8, (uint32_t)n);
    put32(z + chunk0 + 12, ulen + 8);             /* header claims 8 bytes more than the frame holds */
    put64(z + chunk0 + 48, XXH64(one, n, 0));
    fix_chunk_header(z, chunk0);
    write_file(z, chunk0 + 72 + n + rest);
    rc = read_all(&e, 0);
    CHECK(rc == VGT_E_FORMAT && e.offset == chunk0 && strstr(e.msg, "zstd frame holds"), "content size: %s %s",
          vgt_status_name(rc), e.msg);

    /* stored chunk whose last record's length points past the records: payload and record checksums fixed */
    memcpy(d, orig, orig_len);
    put32(d + chunk0 + 72 + 4, 4000);             /* first record's payload_length */
    put64(d + chunk0 + 48, XXH64(d + chunk0 + 72, ulen, 0));
    put64(d + chunk0 + 56, XXH64(d + chunk0 + 72, ulen, 0));
    fix_chunk_header(d, chunk0);
    expect(d, orig_len, VGT_E_FORMAT, chunk0, "payload_length", "record past the chunk");
    free(z);
    free(d);
}

static void test_trailer(void)
{
    uint8_t *d = malloc(orig_len + 16);
    memcpy(d, orig, orig_len);
    uint64_t ioff = 0;
    for (int i = 0; i < 8; i++) ioff |= (uint64_t)orig[orig_len - 32 + i] << (8 * i);
    uint32_t n = get32(orig + ioff + 4);
    CHECK(n == 2, "two chunks expected, the index lists %u", n);
    put64(d + ioff + 8 + 48 + 16, 12345);         /* entry 1's first_ts */
    put64(d + ioff + 8 + 48 * n, XXH64(d + ioff, 8 + 48 * n, 0));
    expect(d, orig_len, VGT_E_FORMAT, ioff + 8 + 48, "first_ts", "index entry disagrees");
    memcpy(d, orig, orig_len);
    memcpy(d + orig_len, "JUNKJUNK", 8);
    expect(d, orig_len + 8, VGT_E_FORMAT, ioff + 4, "bytes are left", "bytes after the footer");
    free(d);
}

/* The reader opened the whole file (index and all); then the file is cut back to its header before
 * the records are read. The missing chunks must be reported where the file now ends, not as the end of a
 * trace that holds no records. */
static void test_cut_while_reading(void)
{
    write_file(orig, orig_len);
    vgt_reader *r;
    vgt_error e;
    vgt_error_clear(&e);
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        CHECK(0, "open of the original failed: %s", e.msg);
        return;
    }
    CHECK(truncate(path, (off_t)hlen) == 0, "cannot cut %s", path);
    vgt_record rec;
    CHECK_STATUS(vgt_reader_next(r, &rec, &e), VGT_E_TRUNCATED, &e, "first record of a file cut to its header");
    CHECK_EQ_U64(e.offset, chunk0, "offset of the cut: %s", e.msg);
    CHECK(strstr(e.msg, "when it was opened") != NULL, "message names the cut: %s", e.msg);
    vgt_reader_close(r);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/vgt-test-reader-errors-%d.vgt", (int)getpid());
    make_original();
    test_header();
    test_chunks();
    test_trailer();
    test_cut_while_reading();
    remove(path);
    free(orig);
    return check_finish("test_format_reader_errors");
}
