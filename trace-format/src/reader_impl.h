/* reader_impl.h (private): the reader's state, shared by reader.c (open, header, next), reader_chunk.c
 * (loading one chunk) and reader_index.c (trailer, chunk list, seeks). */
#ifndef VGT_READER_IMPL_H
#define VGT_READER_IMPL_H

#include <stdint.h>
#include <zstd.h>

#include "format.h"

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
    uint8_t *payload, *recs;
    size_t payload_cap, recs_cap;
    ZSTD_DCtx *dctx;
    chunk_header cur;
    uint64_t cur_off;
    int have_chunk;
    uint32_t rec_index;
    uint64_t rec_pos;
    const uint8_t *view;         /* the records of the loaded chunk (recs, or payload when stored) */
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
};

/* Reads n bytes at off (files: pread; pipes: off must be stream_pos). *got < n only at the end. */
vgt_status reader_read_at(vgt_reader *r, void *p, uint64_t n, uint64_t off, uint64_t *got, vgt_error *err);
/* Loads the chunk at r->pos into r->cur / r->recs and checks it all (section 3 rules). VGT_E_EOF at the
 * end of the records (trailer or end of input); the trailer is then checked into r->trailer_err. */
vgt_status reader_load_chunk(vgt_reader *r, vgt_error *err);
/* Reads and checks the trailer at off (met by the sequential read); result in r->trailer_err. */
void reader_check_trailer(vgt_reader *r, uint64_t off);
/* At open (seekable files): loads the footer and index if valid into r->chunks. */
void reader_load_index(vgt_reader *r);
/* Grows an array of chunk infos by one; NULL on no memory. */
vgt_chunk_info *reader_chunk_push(vgt_chunk_info **a, uint32_t *n, uint32_t *cap);

#endif
