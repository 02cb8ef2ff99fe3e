/* reader_cas.c: the reader's side of MEMORY_CAS (format 1.3; memcas.h): every MEMORY record's data joins
 * the memory stream window, and every MEMORY_CAS record is handed out as the MEMORY record it stands
 * for (same sequence number, time, flags and contents), so no consumer sees the difference.
 *
 * The window must have seen every record before the one handed out. Reading in order it has; after a
 * seek (or at a first read that starts past the beginning) it is rebuilt by a second reader on the same
 * file that reads from the start up to the record asked for, and taken over. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "le.h"
#include "reader_impl.h"

static vgt_status rebuild(vgt_reader *r, uint64_t seq, vgt_error *err)
{
    memcas_window_free(&r->cas);
    r->cas = (memcas_window){0};
    r->cas_seq = 0;
    if (seq == 0) return VGT_OK;
    if (!r->seekable)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "a stream holding MEMORY_CAS records cannot be read from "
                        "record %llu: its memory window starts at the first record", (unsigned long long)seq);
    int fd = dup(r->fd);
    vgt_reader *sub;
    vgt_reader_options o = r->opt;
    if (fd < 0 || vgt_reader_open_fd(&sub, fd, 1, &o, err) != VGT_OK) {
        if (fd < 0) return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "cannot reopen the trace to rebuild its memory window");
        return VGT_E_IO;
    }
    sub->cas_stop = seq;   /* records from seq on are not fed: seq is the next one this reader hands out */
    vgt_record rec;
    vgt_status rc;
    while ((rc = vgt_reader_next(sub, &rec, err)) == VGT_OK && rec.seq + 1 < seq) {}
    if (rc == VGT_OK) {
        r->cas = sub->cas;
        sub->cas = (memcas_window){0};
        r->cas_seq = seq;
    } else if (rc == VGT_E_EOF) {
        rc = VGT_FAIL(err, VGT_E_FORMAT, VGT_NO_OFFSET, "rebuilding the memory window: the trace ends before record %llu",
                      (unsigned long long)seq);
    }
    vgt_reader_close(sub);
    return rc;
}

vgt_status reader_cas_record(vgt_reader *r, vgt_record *rec, vgt_error *err)
{
    if (rec->seq >= r->cas_stop) return VGT_OK;
    if (rec->seq != r->cas_seq) VGT_TRY(rebuild(r, rec->seq, err));
    r->cas_seq = rec->seq + 1;
    uint64_t off = rec->chunk_offset;
    if (rec->type == VGT_REC_MEMORY_CAS) {
        uint32_t n;
        VGT_TRY(memcas_expand(&r->cas, rec->payload, rec->length, &r->cas_buf, &r->cas_cap, &n, off, err));
        rec->type = VGT_REC_MEMORY;
        rec->payload = r->cas_buf;
        rec->length = n;
    }
    if (rec->type != VGT_REC_MEMORY || rec->length < 24) return VGT_OK;
    uint32_t n = le_get32(rec->payload + 8);
    if ((uint64_t)n + 24 > rec->length) return VGT_OK;   /* malformed: its decoder says so */
    return memcas_window_append(&r->cas, rec->payload + 24, n, err);
}
