/* writer_chunk.c: one chunk from records to bytes on the fd: compression, checksums, header, write,
 * index entry. Compression may run on any thread; emitting is done by one thread at a time, in order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "writer_impl.h"

#define EMIT_JOIN_MAX (64u << 10)   /* payloads up to this size are written with their header in one call */
#include "vgt/grow.h"
#include "vgt/io.h"

ZSTD_CCtx *chunk_cctx_new(const vgt_writer_options *o)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    if (!c) return NULL;
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, o->zstd_level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 0);     /* the chunk header carries xxh64s */
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
    return c;
}

static void compress_chunk(const vgt_writer_options *o, ZSTD_CCtx *cctx, chunk_job *j);

void writer_stat_add(uint64_t *field, uint64_t v) { __atomic_fetch_add(field, v, __ATOMIC_RELAXED); }

void chunk_compress(const vgt_writer_options *o, ZSTD_CCtx *cctx, chunk_job *j)
{
    if (!o->stats) { compress_chunk(o, cctx, j); return; }
    uint64_t t0 = vgt_now_ns();
    compress_chunk(o, cctx, j);
    writer_stat_add(&o->stats->compress_ns, vgt_now_ns() - t0);   /* pool threads compress at once */
}

static void compress_chunk(const vgt_writer_options *o, ZSTD_CCtx *cctx, chunk_job *j)
{
    chunk_header *h = &j->h;
    memset(h, 0, sizeof *h);
    vgt_error_clear(&j->err);
    h->codec = VGT_CODEC_STORED;
    h->compressed_length = h->uncompressed_length = j->len;
    h->first_seq = j->first_seq;
    h->record_count = j->count;
    h->submit_count = j->submits;
    h->first_ts = j->first_ts;
    h->last_ts = j->last_ts;
    j->payload = j->buf;
    if (o->codec == VGT_CODEC_ZSTD) {
        size_t bound = ZSTD_compressBound(j->len);
        if (bound > j->ccap) {
            free(j->cbuf);
            j->cbuf = malloc(bound);
            j->ccap = j->cbuf ? bound : 0;
        }
        size_t n = j->cbuf ? ZSTD_compress2(cctx, j->cbuf, j->ccap, j->buf, j->len) : 0;
        if (!j->cbuf || ZSTD_isError(n)) {
            VGT_FAIL(&j->err, VGT_E_NOMEM, VGT_NO_OFFSET, "zstd could not compress a chunk of %u bytes: %s", j->len,
                     j->cbuf ? ZSTD_getErrorName(n) : "no memory");
            return;
        }
        if (n < j->len) {
            h->codec = VGT_CODEC_ZSTD;
            h->compressed_length = (uint32_t)n;
            j->payload = j->cbuf;
        }
    }
    h->records_xxh64 = XXH64(j->buf, j->len, 0);
    h->payload_xxh64 = h->codec == VGT_CODEC_STORED ? h->records_xxh64 : XXH64(j->payload, h->compressed_length, 0);
}

static vgt_status fail_write(vgt_writer *w, const chunk_job *j, uint64_t start, vgt_error *err)
{
    /* Cut the partial chunk off so that what is on disk stays a valid (trailer-less) trace. */
    if (w->is_file && vgt_io()->ftruncate(w->fd, (off_t)start) == 0) vgt_io()->lseek(w->fd, (off_t)start, SEEK_SET);
    vgt_error_prefix(err, "writing chunk %u (records %llu..%llu)", w->nindex, (unsigned long long)j->first_seq,
                     (unsigned long long)(j->first_seq + j->count - 1));
    writer_say_what_stays(w, j->first_seq, err);
    return err->code;
}

static vgt_status add_index(vgt_writer *w, const chunk_header *h, uint64_t off, vgt_error *err)
{
    if (vgt_grow(&w->index, &w->index_cap, w->nindex + 1ull, 64))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u index entries", w->nindex + 1);
    w->index[w->nindex++] = chunk_info_make(h, off, w->total_submits);
    return VGT_OK;
}

static vgt_status emit_chunk(vgt_writer *w, chunk_job *j, vgt_error *err);

vgt_status chunk_emit(vgt_writer *w, chunk_job *j, vgt_error *err)
{
    vgt_writer_stats *st = w->opt.stats;
    if (!st) return emit_chunk(w, j, err);
    uint64_t t0 = vgt_now_ns();
    vgt_status rc = emit_chunk(w, j, err);
    writer_stat_add(&st->write_ns, vgt_now_ns() - t0);
    if (rc == VGT_OK) {
        writer_stat_add(&st->chunks, 1);
        writer_stat_add(&st->records_bytes, j->h.uncompressed_length);
        writer_stat_add(&st->stored_bytes, VGT_CHUNK_HEADER_SIZE + j->h.compressed_length);
    }
    return rc;
}

static vgt_status emit_chunk(vgt_writer *w, chunk_job *j, vgt_error *err)
{
    if (j->err.code != VGT_OK) {
        *err = j->err;
        return err->code;
    }
    uint8_t hb[VGT_CHUNK_HEADER_SIZE];
    chunk_header_encode(&j->h, hb);
    uint64_t start = w->file_off;
    uint32_t n = VGT_CHUNK_HEADER_SIZE + j->h.compressed_length;
    if (j->h.compressed_length <= EMIT_JOIN_MAX && n > w->emit_cap) {
        uint8_t *q = realloc(w->emit, n);
        if (q) w->emit = q, w->emit_cap = n;
    }
    if (j->h.compressed_length <= EMIT_JOIN_MAX && n <= w->emit_cap) {
        /* a live stream's chunk per submission: one write, so the reader at the other end of the pipe
         * wakes once for the whole chunk rather than for its header and again for its payload */
        memcpy(w->emit, hb, sizeof hb);
        memcpy(w->emit + sizeof hb, j->payload, j->h.compressed_length);
        if (io_write_all(w->fd, w->emit, n, start, err) != VGT_OK) return fail_write(w, j, start, err);
    } else if (io_write_all(w->fd, hb, sizeof hb, start, err) != VGT_OK ||
               io_write_all(w->fd, j->payload, j->h.compressed_length, start + sizeof hb, err) != VGT_OK)
        return fail_write(w, j, start, err);
    VGT_TRY(add_index(w, &j->h, start, err));
    w->file_off = start + sizeof hb + j->h.compressed_length;
    w->total_submits += j->submits;
    return VGT_OK;
}

void chunk_job_free(chunk_job *j)
{
    free(j->buf);
    free(j->cbuf);
    j->buf = j->cbuf = NULL;
    j->cap = 0;
    j->ccap = 0;
}
