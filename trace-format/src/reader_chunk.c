/* reader_chunk.c: loading one chunk: header, payload, checksums, decompression, record walk
 * (docs/trace-format.md section 3). The chunk becomes current only when every check passed. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <xxhash.h>
#include <zstd.h>

#include "reader_impl.h"

/* A streaming reader of a regular file follows a file still being written: the end of what is there
 * now is not an error, just "nothing more yet". */
static int following(const vgt_reader *r) { return r->is_file && !r->seekable; }

static vgt_status not_yet(void) { return VGT_E_EOF; }

/* Grows a chunk buffer to at least need bytes. Chunks of one trace differ a little in size: a quarter more
 * than asked keeps the next, slightly larger chunk from freeing and allocating again (each new buffer of
 * megabytes is returned to the system and its pages faulted in afresh; pages never touched cost nothing).
 * Buffers of 2 MiB and more are asked for as transparent huge pages: a first touch of 4 KiB pages costs
 * 2-3 us each (a chunk's 640 of them about 1.5 ms, as much as decompressing it), a 2 MiB page about a
 * tenth of that per 4 KiB; where the system gives none, the buffer is ordinary memory. */
#define HUGE_PAGE ((size_t)2 << 20)

static void *chunk_alloc(size_t *want)
{
#ifdef MADV_HUGEPAGE
    if (*want >= HUGE_PAGE) {
        size_t n = (*want + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
        void *p = NULL;
        if (posix_memalign(&p, HUGE_PAGE, n) == 0) {
            madvise(p, n, MADV_HUGEPAGE);   /* advice only: refused, the pages are small ones */
            *want = n;
            return p;
        }
    }
#endif
    return malloc(*want);
}

static vgt_status ensure(uint8_t **p, size_t *cap, size_t need, uint64_t off, vgt_error *err)
{
    if (need <= *cap) return VGT_OK;
    free(*p);
    size_t want = need + need / 4;
    *p = chunk_alloc(&want);
    *cap = *p ? want : 0;
    if (!*p) return VGT_FAIL(err, VGT_E_NOMEM, off, "no memory for %zu bytes of chunk data", need);
    return VGT_OK;
}

void chunk_bufs_free(chunk_bufs *b)
{
    free(b->payload);
    free(b->recs);
    memset(b, 0, sizeof *b);
}

chunk_buf chunk_bufs_swap(chunk_bufs *b, const uint8_t *view, chunk_buf repl)
{
    uint8_t **p = view == b->payload ? &b->payload : &b->recs;
    size_t *cap = view == b->payload ? &b->payload_cap : &b->recs_cap;
    chunk_buf out = {*p, *cap};
    *p = repl.p;
    *cap = repl.cap;
    return out;
}

static vgt_status read_payload(vgt_reader *r, const chunk_header *h, uint64_t off, vgt_error *err)
{
    struct stat st;   /* a followed file: nothing is allocated for a chunk that has not fully arrived */
    if (following(r) && fstat(r->fd, &st) == 0 && off + VGT_CHUNK_HEADER_SIZE + h->compressed_length > (uint64_t)st.st_size)
        return not_yet();
    VGT_TRY(ensure(&r->bufs.payload, &r->bufs.payload_cap, h->compressed_length ? h->compressed_length : 1, off, err));
    uint64_t got;
    VGT_TRY(reader_read_at(r, r->bufs.payload, h->compressed_length, off + VGT_CHUNK_HEADER_SIZE, &got, err));
    if (got == h->compressed_length) return VGT_OK;
    if (following(r)) return not_yet();
    return VGT_FAIL(err, VGT_E_TRUNCATED, off,
                    "chunk at offset %llu: the input ends %llu bytes into its %u-byte payload", (unsigned long long)off,
                    (unsigned long long)got, h->compressed_length);
}

/* *dctx is created by the first compressed chunk: a trace of stored chunks never needs one (the context is
 * about 100 KB, allocated and freed for every reader opened). */
static vgt_status decompress(chunk_bufs *b, ZSTD_DCtx **dctx, const chunk_header *h, uint64_t off, const uint8_t **view,
                             vgt_error *err)
{
    if (h->codec == VGT_CODEC_STORED) {
        *view = b->payload;
        return VGT_OK;
    }
    if (!*dctx) {
        if (!(*dctx = ZSTD_createDCtx())) return VGT_FAIL(err, VGT_E_NOMEM, off, "no memory for a zstd context");
        /* Chunks hold at most 64 MiB of records: no frame needs a larger window. */
        ZSTD_DCtx_setParameter(*dctx, ZSTD_d_windowLogMax, 26);
    }
    size_t frame = ZSTD_findFrameCompressedSize(b->payload, h->compressed_length);
    if (ZSTD_isError(frame) || frame != h->compressed_length)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk at offset %llu: payload is not exactly one zstd frame of %u bytes (%s)",
                        (unsigned long long)off, h->compressed_length,
                        ZSTD_isError(frame) ? ZSTD_getErrorName(frame) : "the frame has a different length");
    unsigned long long content = ZSTD_getFrameContentSize(b->payload, h->compressed_length);
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != h->uncompressed_length)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk at offset %llu: zstd frame holds %llu bytes, header says %u",
                        (unsigned long long)off, content, h->uncompressed_length);
    VGT_TRY(ensure(&b->recs, &b->recs_cap, h->uncompressed_length, off, err));
    size_t n = ZSTD_decompressDCtx(*dctx, b->recs, h->uncompressed_length, b->payload, h->compressed_length);
    if (ZSTD_isError(n) || n != h->uncompressed_length)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk at offset %llu: zstd decompression %s%s (expected %u bytes, got %zu)",
                        (unsigned long long)off, ZSTD_isError(n) ? "failed: " : "gave the wrong length",
                        ZSTD_isError(n) ? ZSTD_getErrorName(n) : "", h->uncompressed_length, ZSTD_isError(n) ? 0 : n);
    *view = b->recs;
    return VGT_OK;
}

static vgt_status check_sum(const char *what, uint64_t want, const uint8_t *p, uint32_t n, uint64_t off, vgt_error *err)
{
    uint64_t got = XXH64(p, n, 0);
    if (got == want) return VGT_OK;
    return VGT_FAIL(err, VGT_E_CHECKSUM, off, "chunk at offset %llu: %s checksum 0x%016llx, computed 0x%016llx",
                    (unsigned long long)off, what, (unsigned long long)want, (unsigned long long)got);
}

/* What every chunk goes through once its payload is in b (section 3's checks after the header). */
static vgt_status chunk_decode(chunk_bufs *b, ZSTD_DCtx **dctx, const chunk_header *h, uint64_t off, int verify,
                               const uint8_t **view, vgt_error *err)
{
    if (verify) VGT_TRY(check_sum("payload", h->payload_xxh64, b->payload, h->compressed_length, off, err));
    VGT_TRY(decompress(b, dctx, h, off, view, err));
    if (verify) VGT_TRY(check_sum("records", h->records_xxh64, *view, h->uncompressed_length, off, err));
    return chunk_records_check(*view, h, off, err);
}

vgt_status chunk_load_at(int fd, uint64_t file_size, uint64_t off, int verify, ZSTD_DCtx **dctx, chunk_bufs *b,
                         chunk_header *h, int *header_ok, const uint8_t **view, vgt_error *err)
{
    uint8_t hb[VGT_CHUNK_HEADER_SIZE];
    uint64_t got;
    *header_ok = 0;
    VGT_TRY(io_pread_full(fd, hb, sizeof hb, off, &got, err));
    if (got < sizeof hb)
        return VGT_FAIL(err, VGT_E_TRUNCATED, off, "chunk header at offset %llu: the input ends after %llu of its %u bytes",
                        (unsigned long long)off, (unsigned long long)got, VGT_CHUNK_HEADER_SIZE);
    VGT_TRY(chunk_header_parse(hb, off, file_size, h, err));
    *header_ok = 1;
    VGT_TRY(ensure(&b->payload, &b->payload_cap, h->compressed_length ? h->compressed_length : 1, off, err));
    VGT_TRY(io_pread_full(fd, b->payload, h->compressed_length, off + VGT_CHUNK_HEADER_SIZE, &got, err));
    if (got != h->compressed_length)
        return VGT_FAIL(err, VGT_E_TRUNCATED, off, "chunk at offset %llu: the input ends %llu bytes into its %u-byte payload",
                        (unsigned long long)off, (unsigned long long)got, h->compressed_length);
    return chunk_decode(b, dctx, h, off, verify, view, err);
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

/* The index of the chunk at file offset off in the chunk list, or -1. */
static int64_t chunk_index_at(const vgt_reader *r, uint64_t off)
{
    if (!r->have_chunks) return -1;
    uint32_t lo = 0, hi = r->nchunks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (r->chunks[mid].offset < off) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->nchunks && r->chunks[lo].offset == off ? (int64_t)lo : -1;
}

static vgt_status check_seq(const vgt_reader *r, const chunk_header *h, uint64_t off, vgt_error *err)
{
    if (h->first_seq == r->expect_seq) return VGT_OK;
    return VGT_FAIL(err, VGT_E_SEQUENCE, off,
                    "chunk at offset %llu: first_seq %llu, expected %llu (the previous chunk's first_seq + record_count)",
                    (unsigned long long)off, (unsigned long long)h->first_seq, (unsigned long long)r->expect_seq);
}

/* The chunk at off from the read-ahead workers (reader_ahead.c), in the sequential reader's check order. */
static vgt_status load_ahead(vgt_reader *r, uint64_t off, chunk_header *h, vgt_error *err)
{
    int header_ok;
    vgt_error werr;
    vgt_status rc = reader_ahead_take(r->ahead, h, &header_ok, &r->view, &r->fields_ok, &werr);
    if (header_ok) VGT_TRY(check_seq(r, h, off, err));
    if (rc != VGT_OK && err) *err = werr;
    return rc;
}

vgt_status reader_load_chunk(vgt_reader *r, vgt_error *err)
{
    uint64_t off = r->pos;
    chunk_header h;
    reader_detach_held(r);   /* first: every path below may reuse the loaded chunk's buffers */
    r->have_chunk = 0;
    r->fields_ok = 0;
    int64_t idx = r->seekable ? chunk_index_at(r, off) : -1;
    if (r->ahead && (idx < 0 || idx != reader_ahead_next(r->ahead))) {   /* a seek elsewhere: start over there */
        reader_ahead_stop(r->ahead);
        r->ahead = NULL;
        r->in_order = 0;
    }
    if (!r->ahead && idx >= 0 && r->in_order >= 1) r->ahead = reader_ahead_start(r, (uint32_t)idx);
    r->cur_in_ahead = r->ahead != NULL;
    if (r->ahead) {
        VGT_TRY(load_ahead(r, off, &h, err));
    } else {
        VGT_TRY(read_chunk_header(r, off, &h, err));
        VGT_TRY(check_seq(r, &h, off, err));
        VGT_TRY(read_payload(r, &h, off, err));
        VGT_TRY(chunk_decode(&r->bufs, &r->dctx, &h, off, r->opt.verify_checksums, &r->view, err));
    }
    VGT_TRY(remember_seen(r, &h, off, err));
    r->in_order = idx >= 0 && idx == r->cur_index + 1 ? r->in_order + 1 : 1;
    r->cur_index = idx;
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
