/* reader_chunk.c: loading one chunk: header, payload, checksums, decompression, record walk
 * (docs/trace-format.md section 3). The chunk becomes current only when every check passed. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <xxhash.h>
#include <zstd.h>

#include "reader_impl.h"

/* A streaming reader of a regular file follows a file still being written: the end of what is there
 * now is not an error, just "nothing more yet". */
static int following(const vgt_reader *r) { return r->is_file && !r->seekable; }

static vgt_status not_yet(void) { return VGT_E_EOF; }

static vgt_status ensure(uint8_t **p, size_t *cap, size_t need, uint64_t off, vgt_error *err)
{
    if (need <= *cap) return VGT_OK;
    free(*p);
    *p = malloc(need);
    *cap = *p ? need : 0;
    if (!*p) return VGT_FAIL(err, VGT_E_NOMEM, off, "no memory for %zu bytes of chunk data", need);
    return VGT_OK;
}

static vgt_status read_payload(vgt_reader *r, const chunk_header *h, uint64_t off, vgt_error *err)
{
    struct stat st;   /* a followed file: nothing is allocated for a chunk that has not fully arrived */
    if (following(r) && fstat(r->fd, &st) == 0 && off + VGT_CHUNK_HEADER_SIZE + h->compressed_length > (uint64_t)st.st_size)
        return not_yet();
    VGT_TRY(ensure(&r->payload, &r->payload_cap, h->compressed_length ? h->compressed_length : 1, off, err));
    uint64_t got;
    VGT_TRY(reader_read_at(r, r->payload, h->compressed_length, off + VGT_CHUNK_HEADER_SIZE, &got, err));
    if (got == h->compressed_length) return VGT_OK;
    if (following(r)) return not_yet();
    return VGT_FAIL(err, VGT_E_TRUNCATED, off,
                    "chunk at offset %llu: the input ends %llu bytes into its %u-byte payload", (unsigned long long)off,
                    (unsigned long long)got, h->compressed_length);
}

static vgt_status decompress(vgt_reader *r, const chunk_header *h, uint64_t off, vgt_error *err)
{
    if (h->codec == VGT_CODEC_STORED) {
        r->view = r->payload;
        return VGT_OK;
    }
    size_t frame = ZSTD_findFrameCompressedSize(r->payload, h->compressed_length);
    if (ZSTD_isError(frame) || frame != h->compressed_length)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk at offset %llu: payload is not exactly one zstd frame of %u bytes (%s)",
                        (unsigned long long)off, h->compressed_length,
                        ZSTD_isError(frame) ? ZSTD_getErrorName(frame) : "the frame has a different length");
    unsigned long long content = ZSTD_getFrameContentSize(r->payload, h->compressed_length);
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != h->uncompressed_length)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk at offset %llu: zstd frame holds %llu bytes, header says %u",
                        (unsigned long long)off, content, h->uncompressed_length);
    VGT_TRY(ensure(&r->recs, &r->recs_cap, h->uncompressed_length, off, err));
    size_t n = ZSTD_decompressDCtx(r->dctx, r->recs, h->uncompressed_length, r->payload, h->compressed_length);
    if (ZSTD_isError(n) || n != h->uncompressed_length)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk at offset %llu: zstd decompression %s%s (expected %u bytes, got %zu)",
                        (unsigned long long)off, ZSTD_isError(n) ? "failed: " : "gave the wrong length",
                        ZSTD_isError(n) ? ZSTD_getErrorName(n) : "", h->uncompressed_length, ZSTD_isError(n) ? 0 : n);
    r->view = r->recs;
    return VGT_OK;
}

static vgt_status check_sum(const char *what, uint64_t want, const uint8_t *p, uint32_t n, uint64_t off, vgt_error *err)
{
    uint64_t got = XXH64(p, n, 0);
    if (got == want) return VGT_OK;
    return VGT_FAIL(err, VGT_E_CHECKSUM, off, "chunk at offset %llu: %s checksum 0x%016llx, computed 0x%016llx",
                    (unsigned long long)off, what, (unsigned long long)want, (unsigned long long)got);
}

static vgt_status remember_seen(vgt_reader *r, const chunk_header *h, uint64_t off, vgt_error *err)
{
    if (!r->seen_valid) return VGT_OK;
    vgt_chunk_info *c = reader_chunk_push(&r->seen, &r->nseen, &r->seen_cap);
    if (!c) return VGT_FAIL(err, VGT_E_NOMEM, off, "no memory for the list of chunks");
    *c = chunk_info_make(h, off, r->submits_before);
    return VGT_OK;
}

/* Reads the chunk header at off; VGT_E_EOF (with r->at_end set unless following) at the end. */
static vgt_status read_chunk_header(vgt_reader *r, uint64_t off, chunk_header *h, vgt_error *err)
{
    uint8_t hb[VGT_CHUNK_HEADER_SIZE];
    uint64_t got;
    VGT_TRY(reader_read_at(r, hb, 4, off, &got, err));
    if (got == 0) {
        if (following(r)) return not_yet();
        /* A file that ends before the size it had at open was cut while being read (for example, opened
         * for writing by another program): its lost records are not a clean end. */
        if (r->seekable && off < r->info.file_size)
            return VGT_FAIL(err, VGT_E_TRUNCATED, off,
                            "the file ends at offset %llu, but it had %llu bytes when it was opened (it was cut "
                            "while being read)", (unsigned long long)off, (unsigned long long)r->info.file_size);
        r->at_end = 1;
        return VGT_E_EOF;
    }
    if (got == 4 && !memcmp(hb, VGT_INDEX_MAGIC, 4)) {
        reader_check_trailer(r, off);
        r->at_end = 1;
        return VGT_E_EOF;
    }
    if (got == 4) {
        uint64_t more;
        VGT_TRY(reader_read_at(r, hb + 4, sizeof hb - 4, off + 4, &more, err));
        got += more;
    }
    if (got < sizeof hb) {
        if (following(r)) return not_yet();
        return VGT_FAIL(err, VGT_E_TRUNCATED, off, "chunk header at offset %llu: the input ends after %llu of its %u bytes",
                        (unsigned long long)off, (unsigned long long)got, VGT_CHUNK_HEADER_SIZE);
    }
    return chunk_header_parse(hb, off, r->info.file_size, h, err);
}

vgt_status reader_load_chunk(vgt_reader *r, vgt_error *err)
{
    uint64_t off = r->pos;
    chunk_header h;
    r->have_chunk = 0;
    VGT_TRY(read_chunk_header(r, off, &h, err));
    if (h.first_seq != r->expect_seq)
        return VGT_FAIL(err, VGT_E_SEQUENCE, off,
                        "chunk at offset %llu: first_seq %llu, expected %llu (the previous chunk's first_seq + record_count)",
                        (unsigned long long)off, (unsigned long long)h.first_seq, (unsigned long long)r->expect_seq);
    VGT_TRY(read_payload(r, &h, off, err));
    if (r->opt.verify_checksums) VGT_TRY(check_sum("payload", h.payload_xxh64, r->payload, h.compressed_length, off, err));
    VGT_TRY(decompress(r, &h, off, err));
    if (r->opt.verify_checksums) VGT_TRY(check_sum("records", h.records_xxh64, r->view, h.uncompressed_length, off, err));
    VGT_TRY(chunk_records_check(r->view, &h, off, err));
    VGT_TRY(remember_seen(r, &h, off, err));
    r->cur = h;
    r->cur_off = off;
    r->have_chunk = 1;
    r->rec_index = 0;
    r->rec_pos = 0;
    r->pos = off + VGT_CHUNK_HEADER_SIZE + h.compressed_length;
    r->expect_seq = h.first_seq + h.record_count;
    r->submits_before += h.submit_count;
    return VGT_OK;
}
