/* reader_impl.h (private): the reader's state, shared by reader.c (open, header, next), reader_chunk.c
 * (loading one chunk) and reader_index.c (trailer, chunk list, seeks). */
#ifndef VGT_READER_IMPL_H
#define VGT_READER_IMPL_H

#include <stdint.h>
#include <zstd.h>

#include "format.h"
#include "memcas.h"

/* A chunk's payload and decompressed records, grown as needed. */
typedef struct chunk_bufs {
    uint8_t *payload, *recs;
    size_t payload_cap, recs_cap;
} chunk_bufs;
void chunk_bufs_free(chunk_bufs *b);

typedef struct reader_ahead reader_ahead;
/* A buffer taken out of a chunk_bufs: a held chunk's records (vgt_reader_hold), or a spare one. */
typedef struct chunk_buf {
    uint8_t *p;
    size_t cap;
} chunk_buf;
struct held_chunk {
    uint64_t id;
    chunk_buf buf;
};
/* Swaps the buffer of b that view lies at (recs, or payload for a stored chunk) with repl. */
chunk_buf chunk_bufs_swap(chunk_bufs *b, const uint8_t *view, chunk_buf repl);

struct vgt_reader {
    int fd, own_fd;
    int is_file;                 /* regular file: read with pread at pos */
    int seekable;                /* regular file, not streaming: index, seeks, sizes checked vs file_size */
    vgt_reader_options opt;
    vgt_trace_info info;
    vgt_identity *ident;
    uint64_t data_start;         /* header_length: where the first chunk starts */
    uint64_t pos;                /* offset of the next chunk header to read */
    uint64_t stream_pos;         /* pipes: bytes consumed so far */
    /* the loaded chunk */
    chunk_bufs bufs;
    ZSTD_DCtx *dctx;
    reader_ahead *ahead;         /* read-ahead workers, once the read went through two chunks in order */
    int64_t cur_index;           /* the loaded chunk's index in the chunk list, -1 if unknown */
    uint32_t in_order;           /* chunks loaded one after the other in list order so far */
    chunk_header cur;
    uint64_t cur_off;
    int have_chunk;
    uint64_t last_read_ns;       /* when the last read of the input returned (vgt_reader_chunk_read_ns) */
    uint64_t chunk_read_ns;      /* ... as it was when the loaded chunk was complete */
    int cur_in_ahead;            /* the loaded chunk's buffers are the read-ahead's current slot's */
    /* holds (vgt_reader_hold): the loaded chunk's (hold_id, 0: none) and those of chunks left since, whose
     * buffers were taken out of the reader's; buffers of released chunks wait in spare for reuse */
    uint64_t hold_id, next_hold_id;
    struct held_chunk *held;
    uint32_t nheld, heldcap;
    chunk_buf spare[2];
    uint32_t nspare;
    uint32_t rec_index;
    uint64_t rec_pos;
    const uint8_t *view;         /* the records of the loaded chunk (recs, or payload when stored) */
    int fields_ok;               /* a read-ahead worker found every record's fields valid (chunk_fields_ok) */
    uint64_t expect_seq;         /* first_seq the next chunk must have */
    uint64_t submits_before;     /* GPFIFO_SUBMITs before the next chunk */
    int at_end;                  /* the records ended (trailer met or end of input) */
    vgt_error sticky;            /* a reading error, returned again by later calls */
    /* chunks met by the sequential read (for the trailer check) */
    vgt_chunk_info *seen;
    uint32_t nseen, seen_cap;
    int seen_valid;              /* 0 once a seek broke the sequence */
    /* trailer */
    int trailer_met;             /* "VGTI" met after the last chunk */
    uint64_t trailer_off;
    vgt_error trailer_err;       /* code != VGT_OK: the trailer met is bad */
    /* chunk list (index or scan) */
    vgt_chunk_info *chunks;
    uint32_t nchunks;
    int have_chunks;
    uint64_t data_end;           /* seekable with index: the index offset; else 0 (unknown) */
    /* MEMORY_CAS (header flag): the memory stream window, and the record it has seen up to */
    memcas_window cas;
    uint64_t cas_seq;            /* the sequence number of the next record the window expects */
    uint64_t cas_stop;           /* records from this sequence number on are not fed (a rebuild's end) */
    uint8_t *cas_buf;            /* the MEMORY payload a MEMORY_CAS expanded to */
    uint32_t cas_cap;
};

/* Header flag MEMORY_CAS: feed rec to the window (MEMORY), or expand it into the MEMORY record it stands
 * for (MEMORY_CAS, rec rewritten to point at r->cas_buf); after a seek, first rebuilds the window from the
 * start of the trace (reader_cas.c). */
vgt_status reader_cas_record(vgt_reader *r, vgt_record *rec, vgt_error *err);

/* Reads n bytes at off (files: pread; pipes: off must be stream_pos). *got < n only at the end. */
vgt_status reader_read_at(vgt_reader *r, void *p, uint64_t n, uint64_t off, uint64_t *got, vgt_error *err);
/* Loads the chunk at r->pos into r->cur / r->recs and checks it all (section 3 rules). VGT_E_EOF at the
 * end of the records (trailer or end of input); the trailer is then checked into r->trailer_err. */
vgt_status reader_load_chunk(vgt_reader *r, vgt_error *err);
/* Reads the chunk at off with pread and runs every check of section 3 but the sequence against the
 * previous chunk (header, payload checksum, zstd, records checksum, record walk); *view: its records.
 * *header_ok: the header parsed (h is valid) even if a later check failed. Used by the read-ahead
 * workers (nothing of the reader is written). */
vgt_status chunk_load_at(int fd, uint64_t file_size, uint64_t off, int verify, ZSTD_DCtx **dctx, chunk_bufs *b,
                         chunk_header *h, int *header_ok, const uint8_t **view, vgt_error *err);
/* Read-ahead (reader_ahead.c): workers loading chunks first, first+1, ... of r's chunk list; NULL when
 * not worth it or not possible (the reader then reads alone). */
reader_ahead *reader_ahead_start(const vgt_reader *r, uint32_t first);
void reader_ahead_stop(reader_ahead *a);
/* Takes the buffer of the records of the chunk the caller holds (the last taken) out of its slot,
 * putting repl there. */
chunk_buf reader_ahead_detach(reader_ahead *a, const uint8_t *view, chunk_buf repl);
/* Before a chunk's buffers are reused: those of a held chunk move to r->held (reader.c). */
void reader_detach_held(vgt_reader *r);
/* The index of the chunk the next take returns. */
int64_t reader_ahead_next(const reader_ahead *a);
/* The next chunk, waiting for its worker; its records stay valid until the take after it. */
vgt_status reader_ahead_take(reader_ahead *a, chunk_header *h, int *header_ok, const uint8_t **view, int *fields_ok,
                             vgt_error *err);
/* Reads and checks the trailer at off (met by the sequential read); result in r->trailer_err. */
void reader_check_trailer(vgt_reader *r, uint64_t off);
/* At open (seekable files): loads the footer and index if valid into r->chunks. */
void reader_load_index(vgt_reader *r);
/* Grows an array of chunk infos by one; NULL on no memory. */
vgt_chunk_info *reader_chunk_push(vgt_chunk_info **a, uint32_t *n, uint32_t *cap);

#endif
