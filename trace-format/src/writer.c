/* writer.c: the trace writer. Records accumulate in a chunk buffer; a full chunk (chunk_target bytes of
 * records), a flush or the close compresses it with one reused ZSTD_CCtx, checksums it and writes header
 * and payload; close writes the index and footer.
 *
 * Invariants:
 *  - Appends are serialized by w->lock; sequence numbers are assigned under it, so they are contiguous in
 *    file order whatever the calling threads.
 *  - Bytes reach the fd one whole chunk at a time. A chunk whose write fails (ENOSPC, EPIPE) is cut off
 *    again (regular files: ftruncate to its start), so the file stays a valid trace of the chunks written
 *    before it, and the writer refuses further records with the first error.
 *
 *   open ──▶ [accumulating] ──append──▶ chunk full? ──close_chunk──▶ [accumulating]
 *                  │  flush / crash-safe GPFIFO_SUBMIT ──close_chunk (+fdatasync)──┘
 *                  └──close──▶ close_chunk, write_trailer, free
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "format.h"
#include "le.h"

#define DEFAULT_CHUNK_TARGET (2u << 20)
#define MIN_CHUNK_TARGET (4u << 10)

struct vgt_writer {
    pthread_mutex_t lock;
    int fd, own_fd, is_file;
    vgt_writer_options opt;
    uint64_t file_off;                 /* bytes written so far */
    uint8_t *buf;                      /* records of the open chunk */
    uint32_t len, cap;
    uint32_t count, submits;
    uint64_t first_seq, first_ts, last_ts;
    uint64_t next_seq, total_submits;
    ZSTD_CCtx *cctx;
    uint8_t *cbuf;
    size_t ccap;
    vgt_chunk_info *index;
    uint32_t nindex, index_cap;
    vgt_error failure;                 /* code != VGT_OK once a write failed: sticky */
};

vgt_writer_options vgt_writer_defaults(void)
{
    vgt_writer_options o = {VGT_CODEC_ZSTD, 3, 0, DEFAULT_CHUNK_TARGET, 0, 1};
    return o;
}

uint64_t vgt_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t vgt_wall_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static vgt_status check_options(vgt_writer_options *o, vgt_error *err)
{
    if (o->codec != VGT_CODEC_STORED && o->codec != VGT_CODEC_ZSTD)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "codec %d: expected 0 (stored) or 1 (zstd)", o->codec);
    if (o->codec == VGT_CODEC_ZSTD && (o->zstd_level < ZSTD_minCLevel() || o->zstd_level > ZSTD_maxCLevel()))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "zstd level %d outside [%d, %d]", o->zstd_level, ZSTD_minCLevel(),
                        ZSTD_maxCLevel());
    if (o->zstd_threads < 0 || o->zstd_threads > 256)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "zstd_threads %d outside [0, 256]", o->zstd_threads);
    if (o->chunk_target == 0) o->chunk_target = DEFAULT_CHUNK_TARGET;
    if (o->chunk_target < MIN_CHUNK_TARGET) o->chunk_target = MIN_CHUNK_TARGET;
    if (o->chunk_target > VGT_MAX_CHUNK_RECORDS_BYTES) o->chunk_target = VGT_MAX_CHUNK_RECORDS_BYTES;
    return VGT_OK;
}

static vgt_status setup_zstd(vgt_writer *w, vgt_error *err)
{
    if (w->opt.codec != VGT_CODEC_ZSTD) return VGT_OK;
    w->cctx = ZSTD_createCCtx();
    if (!w->cctx) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a zstd context");
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->opt.zstd_level);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0);     /* the chunk header carries xxh64s */
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
    if (w->opt.zstd_threads > 0 && ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_nbWorkers, w->opt.zstd_threads)))
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "this libzstd was built without multithreading");
    return VGT_OK;
}

static void writer_free(vgt_writer *w)
{
    if (!w) return;
    if (w->own_fd && w->fd >= 0) close(w->fd);
    ZSTD_freeCCtx(w->cctx);
    free(w->buf);
    free(w->cbuf);
    free(w->index);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

vgt_status vgt_writer_open_fd(vgt_writer **out, int fd, int own_fd, const vgt_writer_options *opt,
                              const vgt_identity *ident, uint32_t nident, vgt_error *err)
{
    *out = NULL;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (own_fd && fd >= 0) close(fd);
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "writer: fd %d is not open", fd);
    }
    vgt_writer *w = calloc(1, sizeof *w);
    if (!w) {
        if (own_fd) close(fd);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a writer");
    }
    pthread_mutex_init(&w->lock, NULL);
    w->fd = fd;
    w->own_fd = own_fd;
    w->is_file = S_ISREG(st.st_mode);
    w->opt = opt ? *opt : vgt_writer_defaults();
    vgt_error_clear(&w->failure);
    uint8_t *hdr = NULL;
    uint32_t hlen = 0;
    vgt_status rc = check_options(&w->opt, err);
    if (rc == VGT_OK) rc = setup_zstd(w, err);
    if (rc == VGT_OK) {
        w->cap = w->opt.chunk_target + (64u << 10) < VGT_MAX_CHUNK_RECORDS_BYTES ? w->opt.chunk_target + (64u << 10)
                                                                                 : VGT_MAX_CHUNK_RECORDS_BYTES;
        w->buf = malloc(w->cap);
        if (!w->buf) rc = VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a %u-byte chunk buffer", w->cap);
    }
    if (rc == VGT_OK) rc = header_build(ident, nident, &hdr, &hlen, err);
    if (rc == VGT_OK) rc = io_write_all(fd, hdr, hlen, 0, err);
    free(hdr);
    if (rc != VGT_OK) {
        writer_free(w);
        return rc;
    }
    w->file_off = hlen;
    *out = w;
    return VGT_OK;
}

vgt_status vgt_writer_open_path(vgt_writer **out, const char *path, const vgt_writer_options *opt,
                                const vgt_identity *ident, uint32_t nident, vgt_error *err)
{
    *out = NULL;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot create '%s': %s", path, strerror(errno));
    vgt_status rc = vgt_writer_open_fd(out, fd, 1, opt, ident, nident, err);
    if (rc != VGT_OK) vgt_error_prefix(err, "writing '%s'", path);
    return rc;
}

static vgt_status grow(uint8_t **p, size_t *cap, size_t need, vgt_error *err)
{
    if (need <= *cap) return VGT_OK;
    uint8_t *q = realloc(*p, need);
    if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a %zu-byte chunk buffer", need);
    *p = q;
    *cap = need;
    return VGT_OK;
}

/* Compresses the open chunk into w->cbuf after room for its header; falls back to stored when zstd does
 * not make it smaller. Returns the header filled but for the codec-independent counters. */
static vgt_status compress_chunk(vgt_writer *w, chunk_header *h, const uint8_t **payload, vgt_error *err)
{
    h->codec = VGT_CODEC_STORED;
    h->compressed_length = w->len;
    *payload = w->buf;
    if (w->opt.codec == VGT_CODEC_ZSTD) {
        size_t bound = ZSTD_compressBound(w->len);
        VGT_TRY(grow(&w->cbuf, &w->ccap, bound, err));
        size_t n = ZSTD_compress2(w->cctx, w->cbuf, w->ccap, w->buf, w->len);
        if (ZSTD_isError(n))
            return VGT_FAIL(err, VGT_E_NOMEM, w->file_off, "zstd could not compress a chunk of %u bytes: %s", w->len,
                            ZSTD_getErrorName(n));
        if (n < w->len) {
            h->codec = VGT_CODEC_ZSTD;
            h->compressed_length = (uint32_t)n;
            *payload = w->cbuf;
        }
    }
    h->payload_xxh64 = XXH64(*payload, h->compressed_length, 0);
    h->records_xxh64 = h->codec == VGT_CODEC_STORED ? h->payload_xxh64 : XXH64(w->buf, w->len, 0);
    return VGT_OK;
}

static vgt_status fail_write(vgt_writer *w, uint64_t start, vgt_error *err)
{
    /* Cut the partial chunk off so that what is on disk stays a valid (trailer-less) trace. */
    if (w->is_file && ftruncate(w->fd, (off_t)start) == 0) lseek(w->fd, (off_t)start, SEEK_SET);
    vgt_error_prefix(err, "writing chunk %u (records %llu..%llu)", w->nindex, (unsigned long long)w->first_seq,
                     (unsigned long long)(w->first_seq + w->count - 1));
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, "; the %u chunks (%llu records) before it are intact", w->nindex,
             (unsigned long long)w->first_seq);
    w->failure = *err;
    return err->code;
}

static vgt_status add_index(vgt_writer *w, const chunk_header *h, uint64_t off, vgt_error *err)
{
    if (w->nindex == w->index_cap) {
        uint32_t ncap = w->index_cap ? 2 * w->index_cap : 64;
        vgt_chunk_info *q = realloc(w->index, sizeof *q * ncap);
        if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u index entries", ncap);
        w->index = q;
        w->index_cap = ncap;
    }
    vgt_chunk_info *c = &w->index[w->nindex++];
    memset(c, 0, sizeof *c);
    c->offset = off;
    c->first_seq = h->first_seq;
    c->first_ts = h->first_ts;
    c->last_ts = h->last_ts;
    c->first_submit = w->total_submits;
    c->record_count = h->record_count;
    c->submit_count = h->submit_count;
    c->codec = h->codec;
    c->compressed_length = h->compressed_length;
    c->uncompressed_length = h->uncompressed_length;
    return VGT_OK;
}

static vgt_status close_chunk(vgt_writer *w, vgt_error *err)
{
    if (w->count == 0) return VGT_OK;
    chunk_header h = {0};
    const uint8_t *payload;
    h.uncompressed_length = w->len;
    h.first_seq = w->first_seq;
    h.record_count = w->count;
    h.submit_count = w->submits;
    h.first_ts = w->first_ts;
    h.last_ts = w->last_ts;
    VGT_TRY(compress_chunk(w, &h, &payload, err));
    uint8_t hb[VGT_CHUNK_HEADER_SIZE];
    chunk_header_encode(&h, hb);
    uint64_t start = w->file_off;
    if (io_write_all(w->fd, hb, sizeof hb, start, err) != VGT_OK ||
        io_write_all(w->fd, payload, h.compressed_length, start + sizeof hb, err) != VGT_OK)
        return fail_write(w, start, err);
    VGT_TRY(add_index(w, &h, start, err));
    w->file_off = start + sizeof hb + h.compressed_length;
    w->total_submits += w->submits;
    w->len = w->count = w->submits = 0;
    return VGT_OK;
}

static vgt_status sync_file(vgt_writer *w, vgt_error *err)
{
    if (!w->is_file || fdatasync(w->fd) == 0) return VGT_OK;
    VGT_FAIL(err, VGT_E_IO, w->file_off, "fdatasync of the trace failed: %s", strerror(errno));
    w->failure = *err;
    return err->code;
}

static vgt_status refuse(const vgt_writer *w, vgt_error *err)
{
    if (err) {
        *err = w->failure;
        vgt_error_prefix(err, "writer stopped by an earlier error");
    }
    return w->failure.code;
}

static vgt_status append_locked(vgt_writer *w, uint16_t type, uint16_t flags, uint64_t ts, const vgt_iovec *parts,
                                uint32_t nparts, uint64_t *seq, vgt_error *err)
{
    if (w->failure.code != VGT_OK) return refuse(w, err);
    if (type == 0 || type == 0xFFFF)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "record type 0x%04x is invalid", type);
    uint64_t plen = 0;
    for (uint32_t i = 0; i < nparts; i++) {
        if (parts[i].length && !parts[i].base)
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "record part %u has a length but no bytes", i);
        plen += parts[i].length;
    }
    if (plen > VGT_MAX_RECORD_PAYLOAD)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "%s payload of %llu bytes, over the limit %u",
                        vgt_rec_type_name(type) ? vgt_rec_type_name(type) : "record", (unsigned long long)plen,
                        VGT_MAX_RECORD_PAYLOAD);
    uint32_t size = VGT_RECORD_HEADER_SIZE + (uint32_t)pad8(plen);
    if (w->count && (uint64_t)w->len + size > w->opt.chunk_target) VGT_TRY(close_chunk(w, err));
    size_t cap = w->cap;
    VGT_TRY(grow(&w->buf, &cap, (size_t)w->len + size, err));
    w->cap = (uint32_t)cap;
    uint8_t *p = w->buf + w->len;
    le_put16(p, type);
    le_put16(p + 2, flags);
    le_put32(p + 4, (uint32_t)plen);
    le_put64(p + 8, w->next_seq);
    le_put64(p + 16, ts);
    p += VGT_RECORD_HEADER_SIZE;
    for (uint32_t i = 0; i < nparts; i++) {
        if (parts[i].length) memcpy(p, parts[i].base, parts[i].length);
        p += parts[i].length;
    }
    memset(p, 0, pad8(plen) - plen);
    if (w->count == 0) {
        w->first_seq = w->next_seq;
        w->first_ts = ts;
    }
    w->last_ts = ts;
    w->len += size;
    w->count++;
    if (seq) *seq = w->next_seq;
    w->next_seq++;
    if (type == VGT_REC_GPFIFO_SUBMIT) {
        w->submits++;
        if (w->opt.crash_safe) {
            VGT_TRY(close_chunk(w, err));
            VGT_TRY(sync_file(w, err));
        }
    }
    return VGT_OK;
}

vgt_status vgt_write_recordv(vgt_writer *w, uint16_t type, uint16_t flags, uint64_t ts, const vgt_iovec *parts,
                             uint32_t nparts, uint64_t *seq, vgt_error *err)
{
    vgt_error local;
    if (!err) err = &local;
    pthread_mutex_lock(&w->lock);
    vgt_status rc = append_locked(w, type, flags, ts, parts, nparts, seq, err);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

vgt_status vgt_write_record(vgt_writer *w, uint16_t type, uint16_t flags, uint64_t ts, const void *payload,
                            uint32_t length, uint64_t *seq, vgt_error *err)
{
    vgt_iovec part = {payload, length};
    return vgt_write_recordv(w, type, flags, ts, &part, 1, seq, err);
}

vgt_status vgt_writer_flush(vgt_writer *w, int sync, vgt_error *err)
{
    vgt_error local;
    if (!err) err = &local;
    pthread_mutex_lock(&w->lock);
    vgt_status rc = w->failure.code != VGT_OK ? refuse(w, err) : close_chunk(w, err);
    if (rc == VGT_OK && (sync || w->opt.crash_safe)) rc = sync_file(w, err);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

static vgt_status write_trailer(vgt_writer *w, vgt_error *err)
{
    uint64_t n = 8 + (uint64_t)VGT_INDEX_ENTRY_SIZE * w->nindex + 8 + VGT_FOOTER_SIZE;
    uint8_t *b = malloc(n);
    if (!b) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for an index of %u chunks", w->nindex);
    memcpy(b, VGT_INDEX_MAGIC, 4);
    le_put32(b + 4, w->nindex);
    for (uint32_t i = 0; i < w->nindex; i++) index_entry_encode(&w->index[i], b + 8 + VGT_INDEX_ENTRY_SIZE * i);
    uint64_t ilen = 8 + (uint64_t)VGT_INDEX_ENTRY_SIZE * w->nindex;
    le_put64(b + ilen, XXH64(b, ilen, 0));
    footer f = {w->file_off, w->next_seq, w->nindex};
    footer_encode(&f, b + ilen + 8);
    vgt_status rc = io_write_all(w->fd, b, n, w->file_off, err);
    free(b);
    if (rc != VGT_OK) {
        if (w->is_file && ftruncate(w->fd, (off_t)w->file_off) == 0) lseek(w->fd, (off_t)w->file_off, SEEK_SET);
        vgt_error_prefix(err, "writing the trailer (the %u chunks before it are intact)", w->nindex);
        return rc;
    }
    w->file_off += n;
    return VGT_OK;
}

vgt_status vgt_writer_close(vgt_writer *w, vgt_error *err)
{
    if (!w) return VGT_OK;
    vgt_error local;
    if (!err) err = &local;
    pthread_mutex_lock(&w->lock);
    vgt_status rc = w->failure.code != VGT_OK ? refuse(w, err) : close_chunk(w, err);
    if (rc == VGT_OK && w->opt.write_trailer) rc = write_trailer(w, err);
    if (rc == VGT_OK && w->opt.crash_safe) rc = sync_file(w, err);
    if (rc == VGT_OK && w->own_fd && close(w->fd) != 0)
        rc = VGT_FAIL(err, VGT_E_IO, w->file_off, "closing the trace failed: %s", strerror(errno));
    if (w->own_fd) w->fd = -1;
    pthread_mutex_unlock(&w->lock);
    writer_free(w);
    return rc;
}

uint64_t vgt_writer_next_seq(const vgt_writer *w)
{
    vgt_writer *mw = (vgt_writer *)w;
    pthread_mutex_lock(&mw->lock);
    uint64_t s = w->next_seq;
    pthread_mutex_unlock(&mw->lock);
    return s;
}
