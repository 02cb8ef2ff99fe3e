/* writer.c: the trace writer's API. Records accumulate in the open chunk (w->cur); a full chunk
 * (chunk_target bytes of records), a flush or the close hands it on: compressed and written right here
 * with one reused ZSTD_CCtx, or by the compression threads of writer_pool.c (opt.zstd_threads > 0),
 * which compress several chunks at once and write them in order. Close writes the index and footer.
 *
 * Invariants:
 *  - Appends are serialized by w->lock; sequence numbers are assigned under it, so they are contiguous in
 *    file order whatever the calling threads.
 *  - Bytes reach the fd one whole chunk at a time. A chunk whose write fails (ENOSPC, EFBIG, EPIPE) is cut
 *    off again (regular files: ftruncate to its start), so the file stays a valid trace of the chunks
 *    written before it, and the writer refuses further records with the first error.
 *
 *   open ──▶ [filling w->cur] ──append──▶ chunk full? ──hand_off──▶ [filling w->cur]
 *                  │  flush / crash-safe or live GPFIFO_SUBMIT, live CHANNEL, ENGINE_OBJECT, GPU_MAP
 *                  │      ──hand_off, drain (+fdatasync: crash-safe)──┘
 *                  └──close──▶ hand_off, drain, write_trailer, free
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "le.h"
#include "writer_impl.h"
#include "vgt/io.h"

#define DEFAULT_CHUNK_TARGET (2u << 20)
#define MIN_CHUNK_TARGET (4u << 10)
#define MAX_THREADS 256

vgt_writer_options vgt_writer_defaults(void)
{
    vgt_writer_options o = {.codec = VGT_CODEC_ZSTD, .zstd_level = 3, .chunk_target = DEFAULT_CHUNK_TARGET,
                            .write_trailer = 1, .placement = VGT_PLACE_REPLACE};
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
    if (o->zstd_threads < 0 || o->zstd_threads > MAX_THREADS)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "zstd_threads %d outside [0, %d]", o->zstd_threads, MAX_THREADS);
    if (o->chunk_target == 0) o->chunk_target = DEFAULT_CHUNK_TARGET;
    if (o->chunk_target < MIN_CHUNK_TARGET) o->chunk_target = MIN_CHUNK_TARGET;
    if (o->chunk_target > VGT_MAX_CHUNK_RECORDS_BYTES) o->chunk_target = VGT_MAX_CHUNK_RECORDS_BYTES;
    return VGT_OK;
}

static void writer_free(vgt_writer *w)
{
    if (!w) return;
    pool_stop(w);
    if (w->out) vgt_outfile_discard(w->out);   /* not committed by close: the target stays as it was */
    free(w->out);
    if (w->own_fd && w->fd >= 0) vgt_io()->close(w->fd);
    ZSTD_freeCCtx(w->cctx);
    chunk_job_free(&w->cur);
    free(w->index);
    memcas_encoder_free(w->cas);
    free(w->flat);
    free(w->emit);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

static vgt_status setup(vgt_writer *w, const vgt_identity *ident, uint32_t nident, vgt_error *err)
{
    VGT_TRY(check_options(&w->opt, err));
    if (w->opt.zstd_threads > 0 && w->opt.codec == VGT_CODEC_ZSTD) {
        VGT_TRY(pool_start(w, err));
    } else if (w->opt.codec == VGT_CODEC_ZSTD && !(w->cctx = chunk_cctx_new(&w->opt))) {
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a zstd context");
    }
    uint8_t *hdr = NULL;
    uint32_t hlen = 0;
    if (w->opt.memory_cas) VGT_TRY(memcas_encoder_new(&w->cas, err));
    VGT_TRY(header_build(ident, nident, w->opt.memory_cas ? VGT_HEADER_FLAG_MEMORY_CAS : 0, &hdr, &hlen, err));
    vgt_status rc = io_write_all(w->fd, hdr, hlen, 0, err);
    free(hdr);
    if (rc == VGT_OK) w->file_off = hlen;
    return rc;
}

vgt_status vgt_writer_open_fd(vgt_writer **out, int fd, int own_fd, const vgt_writer_options *opt,
                              const vgt_identity *ident, uint32_t nident, vgt_error *err)
{
    *out = NULL;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (own_fd && fd >= 0) vgt_io()->close(fd);
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "writer: fd %d is not open", fd);
    }
    off_t at = S_ISREG(st.st_mode) ? vgt_io()->lseek(fd, 0, SEEK_CUR) : 0;
    if (at < 0) {
        int e = errno;
        if (own_fd) vgt_io()->close(fd);
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "writer: cannot find the position of fd %d: %s", fd, strerror(e));
    }
    if (at != 0) {   /* index offsets are file offsets: a trace file starts at offset 0 */
        if (own_fd) vgt_io()->close(fd);
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "writer: fd %d is at offset %lld, a trace file starts at offset 0", fd,
                        (long long)at);
    }
    vgt_writer *w = calloc(1, sizeof *w);
    if (!w) {
        if (own_fd) vgt_io()->close(fd);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a writer");
    }
    pthread_mutex_init(&w->lock, NULL);
    w->fd = fd;
    w->own_fd = own_fd;
    w->is_file = S_ISREG(st.st_mode);
    w->opt = opt ? *opt : vgt_writer_defaults();
    vgt_error_clear(&w->failure);
    vgt_status rc = setup(w, ident, nident, err);
    if (rc != VGT_OK) {
        writer_free(w);
        return rc;
    }
    *out = w;
    return VGT_OK;
}

vgt_status vgt_writer_open_path(vgt_writer **out, const char *path, const vgt_writer_options *opt,
                                const vgt_identity *ident, uint32_t nident, vgt_error *err)
{
    *out = NULL;
    vgt_outfile *of = malloc(sizeof *of);
    if (!of) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a writer");
    int in_place = opt && (opt->placement == VGT_PLACE_IN_PLACE || opt->crash_safe);
    vgt_status rc = vgt_outfile_open(of, path, in_place ? VGT_OUT_IN_PLACE : 0, err);
    if (rc != VGT_OK) {
        free(of);
        return rc;
    }
    rc = vgt_writer_open_fd(out, of->fd, 0, opt, ident, nident, err);
    if (rc != VGT_OK) {
        vgt_outfile_discard(of);
        free(of);
        vgt_error_prefix(err, "writing '%s'", path);
        return rc;
    }
    (*out)->out = of;
    return VGT_OK;
}

static vgt_status sticky(vgt_writer *w, vgt_status rc, const vgt_error *err)
{
    if (rc != VGT_OK && w->failure.code == VGT_OK) w->failure = *err;
    return rc;
}

/* Hands the open chunk on (compressed and written here, or queued to the pool). */
static vgt_status hand_off(vgt_writer *w, vgt_error *err)
{
    if (w->cur.count == 0) return VGT_OK;
    if (w->pool) return sticky(w, pool_submit(w, err), err);
    chunk_compress(&w->opt, w->cctx, &w->cur);
    vgt_status rc = chunk_emit(w, &w->cur, err);
    w->cur.len = w->cur.count = w->cur.submits = 0;
    return sticky(w, rc, err);
}

/* Everything handed off is on the fd (waits for the pool). */
static vgt_status drain(vgt_writer *w, vgt_error *err)
{
    VGT_TRY(hand_off(w, err));
    return w->pool ? sticky(w, pool_drain(w, err), err) : VGT_OK;
}

static vgt_status sync_file(vgt_writer *w, vgt_error *err)
{
    uint64_t t0 = w->opt.stats ? vgt_now_ns() : 0;
    int ok = !w->is_file || vgt_io()->fsync(w->fd) == 0;
    if (t0) writer_stat_add(&w->opt.stats->sync_ns, vgt_now_ns() - t0);
    if (ok) return VGT_OK;
    VGT_FAIL(err, VGT_E_IO, w->file_off, "fdatasync of the trace failed: %s", strerror(errno));
    return sticky(w, err->code, err);
}

static vgt_status refuse(const vgt_writer *w, vgt_error *err)
{
    *err = w->failure;
    vgt_error_prefix(err, "writer stopped by an earlier error");
    return w->failure.code;
}

static vgt_status room_for(vgt_writer *w, uint32_t size, vgt_error *err)
{
    if (w->cur.count && (uint64_t)w->cur.len + size > w->opt.chunk_target) VGT_TRY(hand_off(w, err));
    uint64_t need = (uint64_t)w->cur.len + size;
    if (need <= w->cur.cap) return VGT_OK;
    /* doubled from 64 KiB up to the chunk target and a record's slack: a short trace does not allocate (and
     * free) a whole 2 MiB chunk; a long one reuses the full buffer for every chunk */
    uint64_t most = w->opt.chunk_target + (64u << 10);
    if (most > VGT_MAX_CHUNK_RECORDS_BYTES) most = VGT_MAX_CHUNK_RECORDS_BYTES;
    uint64_t cap = w->cur.cap ? 2ull * w->cur.cap : 64u << 10;
    if (cap > most) cap = most;
    if (cap < need) cap = need;
    uint8_t *q = realloc(w->cur.buf, cap);
    if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a %llu-byte chunk buffer", (unsigned long long)cap);
    w->cur.buf = q;
    w->cur.cap = (uint32_t)cap;
    return VGT_OK;
}

/* Live: besides each submission, the records a replay turns into work on its backend before the
 * program's first submission (a channel to create, an engine object, an allocation to map and clear) are
 * handed on at once. Kept in the chunk until the next doorbell, the program's whole setup reached a live
 * replay only with its first submission, and the replay had to do all of that setup (on a GPU, hundreds
 * of milliseconds) then, while the program went on submitting; handed on as they happen, the replay's
 * setup runs alongside the program's own start-up. A few dozen small writes per program. */
int vgt_writer_live_hands_on(uint16_t type)
{
    return type == VGT_REC_GPFIFO_SUBMIT || type == VGT_REC_CHANNEL || type == VGT_REC_ENGINE_OBJECT ||
           type == VGT_REC_GPU_MAP;
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
    VGT_TRY(room_for(w, size, err));
    chunk_job *c = &w->cur;
    uint8_t *p = c->buf + c->len;
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
    if (c->count == 0) {
        c->first_seq = w->next_seq;
        c->first_ts = ts;
    }
    c->last_ts = ts;
    c->len += size;
    c->count++;
    if (seq) *seq = w->next_seq;
    w->next_seq++;
    if (type == VGT_REC_GPFIFO_SUBMIT) {
        c->submits++;
        if (w->opt.crash_safe || w->opt.live) VGT_TRY(drain(w, err));
        if (w->opt.crash_safe) VGT_TRY(sync_file(w, err));
    } else if (w->opt.live && vgt_writer_live_hands_on(type)) {
        VGT_TRY(drain(w, err));
    }
    return VGT_OK;
}

/* A MEMORY record through the content-addressed encoder: MEMORY_CAS when that is smaller. */
static vgt_status append_memory_locked(vgt_writer *w, uint16_t flags, uint64_t ts, const vgt_iovec *parts,
                                       uint32_t nparts, uint64_t *seq, vgt_error *err)
{
    if (w->failure.code != VGT_OK) return refuse(w, err);
    uint64_t n = 0;
    for (uint32_t i = 0; i < nparts; i++) n += parts[i].length;
    if (n > VGT_MAX_RECORD_PAYLOAD) return append_locked(w, VGT_REC_MEMORY, flags, ts, parts, nparts, seq, err);
    if (n > w->flat_cap) {
        uint8_t *q = realloc(w->flat, n);
        if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a %llu-byte MEMORY record", (unsigned long long)n);
        w->flat = q;
        w->flat_cap = (uint32_t)n;
    }
    uint64_t at = 0;
    for (uint32_t i = 0; i < nparts; i++) {
        if (parts[i].length && !parts[i].base)
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "record part %u has a length but no bytes", i);
        if (parts[i].length) memcpy(w->flat + at, parts[i].base, parts[i].length);
        at += parts[i].length;
    }
    int use;
    const uint8_t *cas;
    uint32_t cas_len;
    uint64_t t0 = w->opt.stats ? vgt_now_ns() : 0;
    vgt_status erc = memcas_encode(w->cas, w->flat, (uint32_t)n, &use, &cas, &cas_len, err);
    if (t0) writer_stat_add(&w->opt.stats->cas_ns, vgt_now_ns() - t0);
    VGT_TRY(erc);
    vgt_iovec one = {use ? cas : w->flat, use ? cas_len : (uint32_t)n};
    return append_locked(w, use ? VGT_REC_MEMORY_CAS : VGT_REC_MEMORY, flags, ts, &one, 1, seq, err);
}

vgt_status vgt_write_recordv(vgt_writer *w, uint16_t type, uint16_t flags, uint64_t ts, const vgt_iovec *parts,
                             uint32_t nparts, uint64_t *seq, vgt_error *err)
{
    vgt_error local;
    if (!err) err = &local;
    pthread_mutex_lock(&w->lock);
    vgt_status rc = w->cas && type == VGT_REC_MEMORY ? append_memory_locked(w, flags, ts, parts, nparts, seq, err)
                                                     : append_locked(w, type, flags, ts, parts, nparts, seq, err);
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
    vgt_status rc = w->failure.code != VGT_OK ? refuse(w, err) : drain(w, err);
    if (rc == VGT_OK && (sync || w->opt.crash_safe)) rc = sync_file(w, err);
    pthread_mutex_unlock(&w->lock);
    return rc;
}

void writer_say_what_stays(const vgt_writer *w, uint64_t records, vgt_error *err)
{
    size_t n = strlen(err->msg);
    if (w->out && w->out->tmp && w->opt.placement == VGT_PLACE_REPLACE)   /* the temporary goes with the failure */
        snprintf(err->msg + n, sizeof err->msg - n, "; '%s' is left as it was", w->out->path);
    else
        snprintf(err->msg + n, sizeof err->msg - n, "; the %u chunks (%llu records) before it are intact", w->nindex,
                 (unsigned long long)records);
}

static vgt_status write_trailer(vgt_writer *w, vgt_error *err)
{
    uint64_t ilen = 8 + (uint64_t)VGT_INDEX_ENTRY_SIZE * w->nindex, n = ilen + 8 + VGT_FOOTER_SIZE;
    uint8_t *b = malloc(n);
    if (!b) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for an index of %u chunks", w->nindex);
    memcpy(b, VGT_INDEX_MAGIC, 4);
    le_put32(b + 4, w->nindex);
    for (uint32_t i = 0; i < w->nindex; i++) index_entry_encode(&w->index[i], b + 8 + VGT_INDEX_ENTRY_SIZE * i);
    le_put64(b + ilen, XXH64(b, ilen, 0));
    footer f = {w->file_off, w->next_seq, w->nindex};
    footer_encode(&f, b + ilen + 8);
    vgt_status rc = io_write_all(w->fd, b, n, w->file_off, err);
    free(b);
    if (rc != VGT_OK) {
        if (w->is_file && vgt_io()->ftruncate(w->fd, (off_t)w->file_off) == 0) vgt_io()->lseek(w->fd, (off_t)w->file_off, SEEK_SET);
        vgt_error_prefix(err, "writing the trailer");
        writer_say_what_stays(w, w->next_seq, err);
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
    vgt_status rc = w->failure.code != VGT_OK ? refuse(w, err) : drain(w, err);
    vgt_writer_stats *st = w->opt.stats;
    uint64_t t0 = st ? vgt_now_ns() : 0;
    if (rc == VGT_OK && w->opt.write_trailer) rc = write_trailer(w, err);
    if (st) writer_stat_add(&st->trailer_ns, vgt_now_ns() - t0);
    if (rc == VGT_OK && w->opt.crash_safe) rc = sync_file(w, err);
    if (rc == VGT_OK && w->own_fd && vgt_io()->close(w->fd) != 0)
        rc = VGT_FAIL(err, VGT_E_IO, w->file_off, "closing the trace failed: %s", strerror(errno));
    if (w->own_fd) w->fd = -1;
    /* a path: the temporary replaces the target only when complete, or holding the valid prefix of a
     * recording (KEEP_PREFIX) */
    if (w->out && (rc == VGT_OK || w->opt.placement == VGT_PLACE_KEEP_PREFIX)) {
        vgt_error cerr;
        uint64_t t1 = st ? vgt_now_ns() : 0;
        vgt_status crc = vgt_outfile_commit(w->out, &cerr);
        if (st) writer_stat_add(&st->commit_ns, vgt_now_ns() - t1);
        if (crc != VGT_OK && rc == VGT_OK) rc = crc, *err = cerr;
        free(w->out);
        w->out = NULL;
    }
    pthread_mutex_unlock(&w->lock);
    writer_free(w);
    return rc;
}

void vgt_writer_discard(vgt_writer *w)
{
    writer_free(w);   /* the open chunk is dropped, the temporary removed (writer_free) */
}

uint64_t vgt_writer_next_seq(const vgt_writer *w)
{
    vgt_writer *mw = (vgt_writer *)w;
    pthread_mutex_lock(&mw->lock);
    uint64_t s = w->next_seq;
    pthread_mutex_unlock(&mw->lock);
    return s;
}
