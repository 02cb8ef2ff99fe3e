/* reader.c: opening a trace (path or fd, file or stream), the file header, and sequential reading.
 *
 * Invariants:
 *  - Every size read from the input is checked against its named limit and, for files, against the file
 *    size before anything is allocated for it.
 *  - A chunk's records are handed out only after the whole chunk was checked (checksums, decompression,
 *    record walk), so a caller never sees half of a broken chunk.
 *  - After an error, later calls return the same error (no resynchronization guesses).
 *
 *   open ──▶ header ──▶ [between chunks] ──reader_load_chunk──▶ [in chunk] ──next──▶ ... ──▶ [end]
 *                            ▲   seek_* (files) ──────────────────┘  "VGTI" or end of input ──┘
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "le.h"
#include "reader_impl.h"
#include "vgt/grow.h"
#include "vgt/io.h"

vgt_status reader_read_at(vgt_reader *r, void *p, uint64_t n, uint64_t off, uint64_t *got, vgt_error *err)
{
    if (r->is_file) {
        VGT_TRY(io_pread_full(r->fd, p, n, off, got, err));
        r->last_read_ns = vgt_now_ns();
        return VGT_OK;
    }
    if (off != r->stream_pos)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, off, "a stream cannot go back to offset %llu (it is at %llu)",
                        (unsigned long long)off, (unsigned long long)r->stream_pos);
    VGT_TRY(io_read_full(r->fd, p, n, got, off, err));
    r->last_read_ns = vgt_now_ns();   /* a blocking read of a pipe returns when the writer's bytes arrived */
    r->stream_pos += *got;
    return VGT_OK;
}

static vgt_status read_header(vgt_reader *r, vgt_error *err)
{
    uint8_t fixed[VGT_FILE_HEADER_FIXED];
    uint64_t got;
    VGT_TRY(reader_read_at(r, fixed, sizeof fixed, 0, &got, err));
    /* what there is of it is the start of a header (an empty file too: a writer may not have written yet) */
    if (got < sizeof fixed && !memcmp(fixed, VGT_FILE_MAGIC, got < 8 ? got : 8))
        return VGT_FAIL(err, VGT_E_TRUNCATED, got, "the input ends after %llu bytes, inside the %u-byte file header",
                        (unsigned long long)got, VGT_FILE_HEADER_FIXED);
    if (got < sizeof fixed)
        return VGT_FAIL(err, VGT_E_FORMAT, got, "not a .vgt trace: the input ends after %llu bytes, inside the %u-byte "
                        "file header, and they are not one", (unsigned long long)got, VGT_FILE_HEADER_FIXED);
    file_header h;
    VGT_TRY(header_parse_fixed(fixed, r->info.file_size, &h, err));
    uint8_t *all = malloc(h.header_length);
    if (!all) return VGT_FAIL(err, VGT_E_NOMEM, 0, "no memory for a %u-byte header", h.header_length);
    memcpy(all, fixed, sizeof fixed);
    vgt_status rc = reader_read_at(r, all + sizeof fixed, h.header_length - sizeof fixed, sizeof fixed, &got, err);
    if (rc == VGT_OK && got < h.header_length - sizeof fixed)
        rc = VGT_FAIL(err, VGT_E_TRUNCATED, sizeof fixed + got, "the input ends at offset %llu, inside the %u-byte file header",
                      (unsigned long long)(sizeof fixed + got), h.header_length);
    if (rc == VGT_OK) rc = header_parse_identity(all, &h, &r->ident, err);
    free(all);
    VGT_TRY(rc);
    r->info.major = h.major;
    r->info.minor = h.minor;
    r->info.header_flags = h.flags;
    r->info.identity_count = h.identity_count;
    r->info.identity = r->ident;
    r->pos = r->data_start = h.header_length;
    return VGT_OK;
}

vgt_status vgt_reader_open_fd(vgt_reader **out, int fd, int own_fd, const vgt_reader_options *opt, vgt_error *err)
{
    *out = NULL;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (own_fd && fd >= 0) vgt_io()->close(fd);
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "reader: fd %d is not open", fd);
    }
    vgt_reader *r = calloc(1, sizeof *r);
    if (!r) {
        if (own_fd) vgt_io()->close(fd);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a reader");
    }
    r->fd = fd;
    r->own_fd = own_fd;
    r->opt.streaming = opt ? opt->streaming : 0;
    r->opt.verify_checksums = opt ? opt->verify_checksums : 1;
    r->opt.read_ahead = opt ? opt->read_ahead : 0;
    r->cur_index = -1;
    r->cas_stop = UINT64_MAX;
    r->opt.follow = opt ? opt->follow : 0;
    r->opt.follow_poll_us = opt && opt->follow_poll_us ? opt->follow_poll_us : 2000;
    r->is_file = S_ISREG(st.st_mode);
    r->seekable = r->is_file && !r->opt.streaming;
    r->info.file_size = r->seekable ? (uint64_t)st.st_size : 0;
    r->seen_valid = 1;
    vgt_error_clear(&r->sticky);
    vgt_error_clear(&r->trailer_err);
    vgt_status rc = read_header(r, err);   /* the zstd context comes with the first compressed chunk */
    if (rc != VGT_OK) {
        vgt_reader_close(r);
        return rc;
    }
    if (r->seekable) reader_load_index(r);
    *out = r;
    return VGT_OK;
}

vgt_status vgt_reader_open_path(vgt_reader **out, const char *path, const vgt_reader_options *opt, vgt_error *err)
{
    *out = NULL;
    int fd = vgt_io()->open(path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot open '%s': %s", path, strerror(errno));
    vgt_status rc = vgt_reader_open_fd(out, fd, 1, opt, err);
    if (rc != VGT_OK) vgt_error_prefix(err, "%s", path);
    return rc;
}

void vgt_reader_close(vgt_reader *r)
{
    if (!r) return;
    reader_ahead_stop(r->ahead);   /* before the close: no worker reads the descriptor any more */
    if (r->own_fd && r->fd >= 0) vgt_io()->close(r->fd);
    ZSTD_freeDCtx(r->dctx);
    free(r->ident);
    chunk_bufs_free(&r->bufs);
    for (uint32_t i = 0; i < r->nheld; i++) free(r->held[i].buf.p);
    free(r->held);
    for (uint32_t i = 0; i < r->nspare; i++) free(r->spare[i].p);
    memcas_window_free(&r->cas);
    free(r->cas_buf);
    free(r->seen);
    free(r->chunks);
    free(r);
}

const vgt_trace_info *vgt_reader_info(const vgt_reader *r) { return &r->info; }

const char *vgt_reader_identity(const vgt_reader *r, const char *key)
{
    for (uint32_t i = 0; i < r->info.identity_count; i++)
        if (!strcmp(r->ident[i].key, key)) return r->ident[i].value;
    return NULL;
}

vgt_status vgt_reader_next(vgt_reader *r, vgt_record *rec, vgt_error *err)
{
    if (r->sticky.code != VGT_OK) {
        if (err) *err = r->sticky;
        return r->sticky.code;
    }
    while (!r->have_chunk || r->rec_index == r->cur.record_count) {
        if (r->at_end) return VGT_FAIL(err, VGT_E_EOF, VGT_NO_OFFSET, "end of the trace");
        vgt_error local;
        vgt_error_clear(&local);
        vgt_status rc = reader_load_chunk(r, &local);
        if (rc == VGT_E_EOF && !r->at_end && r->opt.follow) {   /* a followed file: wait for the writer */
            struct timespec t = {0, (long)r->opt.follow_poll_us * 1000L};
            nanosleep(&t, NULL);
            continue;
        }
        if (rc == VGT_E_EOF) return VGT_FAIL(err, VGT_E_EOF, VGT_NO_OFFSET, "end of the trace");
        if (rc != VGT_OK) {
            r->sticky = local;
            if (err) *err = local;
            return rc;
        }
        r->chunk_read_ns = r->last_read_ns;
    }
    const uint8_t *p = r->view + r->rec_pos;
    rec->type = le_get16(p);
    rec->flags = le_get16(p + 2);
    rec->length = le_get32(p + 4);
    rec->seq = le_get64(p + 8);
    rec->ts = le_get64(p + 16);
    rec->payload = p + VGT_RECORD_HEADER_SIZE;
    rec->chunk_offset = r->cur_off;
    rec->fields_checked = r->fields_ok;
    r->rec_pos += VGT_RECORD_HEADER_SIZE + pad8(rec->length);
    r->rec_index++;
    if (r->info.header_flags & VGT_HEADER_FLAG_MEMORY_CAS) {
        vgt_error local;
        vgt_status rc = reader_cas_record(r, rec, &local);
        if (rc != VGT_OK) {
            r->sticky = local;
            if (err) *err = local;
            return rc;
        }
    }
    return VGT_OK;
}

/* ---- holding chunks ---- */

vgt_status vgt_reader_hold(vgt_reader *r, uint64_t *id, const uint8_t **bytes, uint64_t *len, vgt_error *err)
{
    if (!r->have_chunk) return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "no chunk was read yet to hold");
    /* room now: leaving the chunk (reader_detach_held) cannot fail */
    if (vgt_grow(&r->held, &r->heldcap, r->nheld + 1ull, 8))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory to hold a chunk");
    if (!r->hold_id) r->hold_id = ++r->next_hold_id;
    *id = r->hold_id;
    *bytes = r->view;
    *len = r->cur.uncompressed_length;
    return VGT_OK;
}

void reader_detach_held(vgt_reader *r)
{
    if (!r->hold_id) return;
    chunk_buf repl = {NULL, 0};
    if (r->nspare) repl = r->spare[--r->nspare];
    struct held_chunk *h = &r->held[r->nheld++];   /* room made by vgt_reader_hold */
    h->id = r->hold_id;
    h->buf = r->cur_in_ahead && r->ahead ? reader_ahead_detach(r->ahead, r->view, repl)
                                         : chunk_bufs_swap(&r->bufs, r->view, repl);
    r->hold_id = 0;
}

void vgt_reader_release(vgt_reader *r, uint64_t id)
{
    if (!id) return;
    if (id == r->hold_id) {   /* still the loaded chunk: nothing was moved */
        r->hold_id = 0;
        return;
    }
    for (uint32_t i = 0; i < r->nheld; i++) {
        if (r->held[i].id != id) continue;
        if (r->nspare < sizeof r->spare / sizeof r->spare[0]) r->spare[r->nspare++] = r->held[i].buf;
        else free(r->held[i].buf.p);
        r->held[i] = r->held[--r->nheld];
        return;
    }
}

uint64_t vgt_reader_valid_end(const vgt_reader *r)
{
    return r->pos;     /* advanced past a chunk only once the whole chunk checked out */
}

vgt_status vgt_reader_current_chunk(const vgt_reader *r, vgt_chunk_info *out, vgt_error *err)
{
    if (!r->have_chunk) return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "no chunk was read yet");
    *out = (vgt_chunk_info){r->cur_off, r->cur.first_seq, r->cur.first_ts, r->cur.last_ts,
                            r->submits_before - r->cur.submit_count, r->cur.record_count, r->cur.submit_count,
                            r->cur.codec, r->cur.compressed_length, r->cur.uncompressed_length};
    return VGT_OK;
}

int vgt_reader_at_end(const vgt_reader *r) { return r->at_end; }

uint64_t vgt_reader_chunk_read_ns(const vgt_reader *r) { return r->chunk_read_ns; }

uint64_t vgt_reader_input_bytes(const vgt_reader *r)
{
    if (r->seekable) return r->info.file_size;
    if (r->is_file) {   /* a followed file: what is there now */
        struct stat st;
        return fstat(r->fd, &st) == 0 ? (uint64_t)st.st_size : r->pos;
    }
    return r->stream_pos;
}
