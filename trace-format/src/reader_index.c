/* reader_index.c: the trailer (index block and footer, docs/trace-format.md section 6), the chunk list
 * (from the index, else by a scan of chunk headers) and the seeks built on it. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "le.h"
#include "reader_impl.h"
#include "vgt/grow.h"

#define MAX_INDEX_ENTRIES (1u << 26)   /* 4.5 PB of 64 MiB chunks: only a bound for streams */

vgt_chunk_info *reader_chunk_push(vgt_chunk_info **a, uint32_t *n, uint32_t *cap)
{
    if (vgt_grow(a, cap, *n + 1ull, 64)) return NULL;
    vgt_chunk_info *c = &(*a)[(*n)++];
    memset(c, 0, sizeof *c);
    return c;
}

/* Reads the rest of the trailer at off, whose first 8 bytes (magic and entry count n) were read into
 * head: the n entries, the index checksum and the footer. Checks both checksums and that the footer
 * points back at off. On success *entries is malloc'd. Files and streams take the same path (a stream
 * is at off + 8). */
static vgt_status read_trailer(vgt_reader *r, uint64_t off, const uint8_t head[8], uint32_t n,
                               vgt_chunk_info **entries, footer *f, vgt_error *err)
{
    uint64_t ilen = 8 + (uint64_t)VGT_INDEX_ENTRY_SIZE * n, blen = ilen + 8 + VGT_FOOTER_SIZE, got;
    uint8_t *b = malloc(blen);
    if (!b) return VGT_FAIL(err, VGT_E_NOMEM, off, "no memory for an index of %u entries", n);
    memcpy(b, head, 8);
    vgt_status rc = reader_read_at(r, b + 8, blen - 8, off + 8, &got, err);
    if (rc == VGT_OK && got < blen - 8)
        rc = VGT_FAIL(err, VGT_E_TRUNCATED, off + 8 + got, "trailer at offset %llu: the input ends after %llu of its %llu bytes",
                      (unsigned long long)off, (unsigned long long)(8 + got), (unsigned long long)blen);
    if (rc == VGT_OK && le_get64(b + ilen) != XXH64(b, ilen, 0))
        rc = VGT_FAIL(err, VGT_E_CHECKSUM, off + ilen, "index at offset %llu: checksum 0x%016llx, computed 0x%016llx",
                      (unsigned long long)off, (unsigned long long)le_get64(b + ilen),
                      (unsigned long long)XXH64(b, ilen, 0));
    if (rc == VGT_OK) rc = footer_parse(b + ilen + 8, off + ilen + 8, f, err);
    if (rc == VGT_OK && (f->index_offset != off || f->chunk_count != n))
        rc = VGT_FAIL(err, VGT_E_FORMAT, off + ilen + 8,
                      "footer at offset %llu: index_offset %llu and chunk_count %u, but the index is at %llu with %u entries",
                      (unsigned long long)(off + ilen + 8), (unsigned long long)f->index_offset, f->chunk_count,
                      (unsigned long long)off, n);
    vgt_chunk_info *e = NULL;
    if (rc == VGT_OK && n && !(e = malloc(sizeof *e * n))) rc = VGT_FAIL(err, VGT_E_NOMEM, off, "no memory for the index");
    for (uint32_t i = 0; rc == VGT_OK && i < n; i++) index_entry_decode(b + 8 + VGT_INDEX_ENTRY_SIZE * i, &e[i]);
    free(b);
    if (rc != VGT_OK) {
        free(e);
        return rc;
    }
    *entries = e;
    return VGT_OK;
}

static uint64_t current_size(const vgt_reader *r)
{
    struct stat st;
    if (r->seekable) return r->info.file_size;
    if (r->is_file && fstat(r->fd, &st) == 0) return (uint64_t)st.st_size;
    return 0;
}

/* The first difference between an index entry and the chunk it describes, or 0. */
static int entry_differs(const vgt_chunk_info *a, const vgt_chunk_info *b, const char **field, uint64_t *x, uint64_t *y)
{
#define CMP(f) if (a->f != b->f) { *field = #f; *x = a->f; *y = b->f; return 1; }
    CMP(offset) CMP(first_seq) CMP(first_ts) CMP(last_ts) CMP(first_submit) CMP(record_count) CMP(submit_count)
#undef CMP
    return 0;
}

static vgt_status check_against_seen(vgt_reader *r, uint64_t off, const vgt_chunk_info *e, uint32_t n,
                                     const footer *f, vgt_error *err)
{
    if (f->record_count != r->expect_seq)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "footer: record_count %llu, but the chunks hold %llu records",
                        (unsigned long long)f->record_count, (unsigned long long)r->expect_seq);
    if (!r->seen_valid) return VGT_OK;
    if (n != r->nseen)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "index at offset %llu lists %u chunks, the trace has %u",
                        (unsigned long long)off, n, r->nseen);
    for (uint32_t i = 0; i < n; i++) {
        const char *field;
        uint64_t x, y;
        if (entry_differs(&e[i], &r->seen[i], &field, &x, &y))
            return VGT_FAIL(err, VGT_E_FORMAT, off + 8 + (uint64_t)VGT_INDEX_ENTRY_SIZE * i,
                            "index entry %u at offset %llu: %s is %llu, the chunk at offset %llu has %llu", i,
                            (unsigned long long)(off + 8 + (uint64_t)VGT_INDEX_ENTRY_SIZE * i), field,
                            (unsigned long long)x, (unsigned long long)r->seen[i].offset, (unsigned long long)y);
    }
    return VGT_OK;
}

static vgt_status check_trailer(vgt_reader *r, uint64_t off, vgt_error *err)
{
    uint8_t h[8];
    uint64_t got;
    memcpy(h, VGT_INDEX_MAGIC, 4);   /* the caller read and matched the magic (a stream is at off + 4) */
    VGT_TRY(reader_read_at(r, h + 4, 4, off + 4, &got, err));
    if (got < 4)
        return VGT_FAIL(err, VGT_E_TRUNCATED, off, "index at offset %llu: the input ends after %llu of its first 8 bytes",
                        (unsigned long long)off, (unsigned long long)(4 + got));
    uint32_t n = le_get32(h + 4);
    uint64_t size = current_size(r), want = 8 + (uint64_t)VGT_INDEX_ENTRY_SIZE * n + 8 + VGT_FOOTER_SIZE;
    if (size && off + want != size)
        return VGT_FAIL(err, VGT_E_FORMAT, off + 4,
                        "index at offset %llu: %u entries make a trailer of %llu bytes, but %llu bytes are left in the file",
                        (unsigned long long)off, n, (unsigned long long)want, (unsigned long long)(size - off));
    if (!size && (n > MAX_INDEX_ENTRIES || (r->seen_valid && n != r->nseen)))
        return VGT_FAIL(err, VGT_E_FORMAT, off + 4, "index at offset %llu lists %u chunks, the stream had %u",
                        (unsigned long long)off, n, r->nseen);
    vgt_chunk_info *e = NULL;
    footer f;
    vgt_status rc = read_trailer(r, off, h, n, &e, &f, err);
    if (rc == VGT_OK) rc = check_against_seen(r, off, e, n, &f, err);
    free(e);
    return rc;
}

void reader_check_trailer(vgt_reader *r, uint64_t off)
{
    r->trailer_met = 1;
    r->trailer_off = off;
    vgt_error_clear(&r->trailer_err);
    check_trailer(r, off, &r->trailer_err);
}

vgt_status vgt_reader_trailer_check(vgt_reader *r, int *has_trailer, vgt_error *err)
{
    if (!r->at_end)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "the trailer is checked once every record was read");
    if (has_trailer) *has_trailer = r->trailer_met;
    if (r->trailer_err.code != VGT_OK) {
        if (err) *err = r->trailer_err;
        return r->trailer_err.code;
    }
    return VGT_OK;
}

/* Entries in file order, contiguous sequence numbers from 0, cumulative submit counts, inside the data. */
static int index_sane(const vgt_chunk_info *e, uint32_t n, uint64_t data_start, uint64_t data_end)
{
    uint64_t seq = 0, submits = 0, off = data_start;
    for (uint32_t i = 0; i < n; i++) {
        if (e[i].offset != off && !(i && e[i].offset > off)) return 0;
        if (e[i].offset + VGT_CHUNK_HEADER_SIZE > data_end || e[i].first_seq != seq || e[i].first_submit != submits ||
            e[i].record_count == 0 || e[i].submit_count > e[i].record_count)
            return 0;
        off = e[i].offset + VGT_CHUNK_HEADER_SIZE + VGT_RECORD_HEADER_SIZE;
        seq += e[i].record_count;
        submits += e[i].submit_count;
    }
    return 1;
}

void reader_load_index(vgt_reader *r)
{
    uint64_t size = r->info.file_size, start = r->data_start;
    if (size < start + 16 + VGT_FOOTER_SIZE) return;
    uint8_t fb[VGT_FOOTER_SIZE], h[8];
    uint64_t got;
    footer f;
    vgt_error e;
    if (reader_read_at(r, fb, sizeof fb, size - VGT_FOOTER_SIZE, &got, &e) != VGT_OK || got != sizeof fb) return;
    if (footer_parse(fb, size - VGT_FOOTER_SIZE, &f, &e) != VGT_OK) return;
    if (f.index_offset < start || f.index_offset > size - VGT_FOOTER_SIZE - 16) return;
    uint64_t n = f.chunk_count;
    if (f.index_offset + 8 + VGT_INDEX_ENTRY_SIZE * n + 8 + VGT_FOOTER_SIZE != size) return;
    if (reader_read_at(r, h, 8, f.index_offset, &got, &e) != VGT_OK || got != 8) return;
    if (memcmp(h, VGT_INDEX_MAGIC, 4) || le_get32(h + 4) != n) return;
    vgt_chunk_info *entries = NULL;
    if (read_trailer(r, f.index_offset, h, (uint32_t)n, &entries, &f, &e) != VGT_OK) return;
    if (!index_sane(entries, (uint32_t)n, start, f.index_offset)) {
        free(entries);
        return;
    }
    r->chunks = entries;
    r->nchunks = (uint32_t)n;
    r->have_chunks = 1;
    r->info.has_index = 1;
    r->data_end = f.index_offset;
}

/* No index: walk the chunk headers (not their payloads) from the first chunk. */
static vgt_status scan_chunks(vgt_reader *r, vgt_error *err)
{
    uint64_t off = r->data_start, submits = 0, seq = 0, got;
    uint32_t cap = 0;
    uint8_t hb[VGT_CHUNK_HEADER_SIZE];
    free(r->chunks);
    r->chunks = NULL;
    r->nchunks = 0;
    for (;;) {
        VGT_TRY(reader_read_at(r, hb, sizeof hb, off, &got, err));
        if (got == 0 || (got >= 4 && !memcmp(hb, VGT_INDEX_MAGIC, 4))) break;
        if (got < sizeof hb)
            return VGT_FAIL(err, VGT_E_TRUNCATED, off, "chunk header at offset %llu: the file ends after %llu of its %u bytes",
                            (unsigned long long)off, (unsigned long long)got, VGT_CHUNK_HEADER_SIZE);
        chunk_header h;
        VGT_TRY(chunk_header_parse(hb, off, r->info.file_size, &h, err));
        if (h.first_seq != seq)
            return VGT_FAIL(err, VGT_E_SEQUENCE, off, "chunk at offset %llu: first_seq %llu, expected %llu",
                            (unsigned long long)off, (unsigned long long)h.first_seq, (unsigned long long)seq);
        vgt_chunk_info *c = reader_chunk_push(&r->chunks, &r->nchunks, &cap);
        if (!c) return VGT_FAIL(err, VGT_E_NOMEM, off, "no memory for the list of chunks");
        *c = chunk_info_make(&h, off, submits);
        seq += h.record_count;
        submits += h.submit_count;
        off += VGT_CHUNK_HEADER_SIZE + h.compressed_length;
    }
    r->have_chunks = 1;
    return VGT_OK;
}

vgt_status vgt_reader_chunks(vgt_reader *r, const vgt_chunk_info **chunks, uint32_t *count, vgt_error *err)
{
    if (!r->have_chunks) {
        if (!r->seekable)
            return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "a stream has no chunk list (it cannot be scanned ahead)");
        VGT_TRY(scan_chunks(r, err));
    }
    *chunks = r->chunks;
    *count = r->nchunks;
    return VGT_OK;
}

/* Loads chunk i of the list and makes it current, positioned at its first record. */
static vgt_status enter_chunk(vgt_reader *r, uint32_t i, vgt_error *err)
{
    const vgt_chunk_info *c = &r->chunks[i];
    r->pos = c->offset;
    r->expect_seq = c->first_seq;
    r->submits_before = c->first_submit;
    r->at_end = 0;
    r->seen_valid = 0;
    vgt_error_clear(&r->sticky);
    vgt_status rc = reader_load_chunk(r, err);
    if (rc == VGT_E_EOF) rc = VGT_FAIL(err, VGT_E_FORMAT, c->offset, "index entry %u points at offset %llu, where no chunk is", i,
                                       (unsigned long long)c->offset);
    if (rc != VGT_OK && err) r->sticky = *err;
    return rc;
}

typedef int (*rec_pred)(const vgt_record *rec, uint64_t key, uint64_t *state);

/* Inside the current chunk, stops before the first record that satisfies pred. */
static vgt_status skip_to(vgt_reader *r, rec_pred pred, uint64_t key, uint64_t state)
{
    while (r->rec_index < r->cur.record_count) {
        const uint8_t *p = r->view + r->rec_pos;
        vgt_record rec = {le_get16(p), le_get16(p + 2), le_get32(p + 4), le_get64(p + 8), le_get64(p + 16),
                          p + VGT_RECORD_HEADER_SIZE, r->cur_off, 0};
        if (pred(&rec, key, &state)) return VGT_OK;
        r->rec_pos += VGT_RECORD_HEADER_SIZE + pad8(rec.length);
        r->rec_index++;
    }
    return VGT_OK;
}

static vgt_status need_seekable(vgt_reader *r, vgt_error *err)
{
    if (!r->seekable) return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "seeking needs a trace file (this is a stream)");
    const vgt_chunk_info *c;
    uint32_t n;
    return vgt_reader_chunks(r, &c, &n, err);
}

static int at_seq(const vgt_record *rec, uint64_t key, uint64_t *state) { return rec->seq >= key; }
static int at_time(const vgt_record *rec, uint64_t key, uint64_t *state) { return rec->ts >= key; }
static int at_submit(const vgt_record *rec, uint64_t key, uint64_t *state)
{
    if (rec->type != VGT_REC_GPFIFO_SUBMIT) return 0;
    return (*state)++ == key;
}

vgt_status vgt_reader_seek_seq(vgt_reader *r, uint64_t seq, vgt_error *err)
{
    VGT_TRY(need_seekable(r, err));
    uint32_t lo = 0, hi = r->nchunks;
    while (lo < hi) {   /* first chunk whose range ends after seq */
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->chunks[mid].first_seq + r->chunks[mid].record_count <= seq) lo = mid + 1;
        else hi = mid;
    }
    if (lo == r->nchunks)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "no record with sequence number %llu (the trace has %llu)",
                        (unsigned long long)seq,
                        (unsigned long long)(r->nchunks ? r->chunks[r->nchunks - 1].first_seq + r->chunks[r->nchunks - 1].record_count : 0));
    VGT_TRY(enter_chunk(r, lo, err));
    return skip_to(r, at_seq, seq, 0);
}

vgt_status vgt_reader_seek_time(vgt_reader *r, uint64_t ts, vgt_error *err)
{
    VGT_TRY(need_seekable(r, err));
    for (uint32_t i = 0; i < r->nchunks; i++) {
        if (r->chunks[i].last_ts < ts && r->chunks[i].first_ts < ts) continue;
        VGT_TRY(enter_chunk(r, i, err));
        VGT_TRY(skip_to(r, at_time, ts, 0));
        if (r->rec_index < r->cur.record_count) return VGT_OK;
    }
    return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "no record at or after time %llu ns", (unsigned long long)ts);
}

vgt_status vgt_reader_seek_submit(vgt_reader *r, uint64_t n, vgt_error *err)
{
    VGT_TRY(need_seekable(r, err));
    for (uint32_t i = 0; i < r->nchunks; i++) {
        const vgt_chunk_info *c = &r->chunks[i];
        if (n >= c->first_submit + c->submit_count) continue;
        VGT_TRY(enter_chunk(r, i, err));
        return skip_to(r, at_submit, n - c->first_submit, 0);
    }
    return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "no GPFIFO_SUBMIT number %llu in the trace", (unsigned long long)n);
}

vgt_status vgt_reader_chunk_header(vgt_reader *r, uint64_t offset, vgt_chunk_info *out, vgt_error *err)
{
    if (!r->seekable) return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "a stream cannot read chunk headers ahead");
    uint8_t hb[VGT_CHUNK_HEADER_SIZE];
    uint64_t got;
    chunk_header h;
    VGT_TRY(reader_read_at(r, hb, sizeof hb, offset, &got, err));
    if (got < sizeof hb)
        return VGT_FAIL(err, VGT_E_TRUNCATED, offset, "chunk header at offset %llu: the file ends after %llu of its %u bytes",
                        (unsigned long long)offset, (unsigned long long)got, VGT_CHUNK_HEADER_SIZE);
    VGT_TRY(chunk_header_parse(hb, offset, r->info.file_size, &h, err));
    *out = (vgt_chunk_info){offset, h.first_seq, h.first_ts, h.last_ts, 0, h.record_count, h.submit_count,
                            h.codec, h.compressed_length, h.uncompressed_length};
    return VGT_OK;
}
