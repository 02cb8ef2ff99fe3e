/* format.h (private): the fixed structures of a .vgt file (docs/trace-format.md sections 2, 3 and 6),
 * encoded and parsed in one place. Parsers check magic, checksums and limits and name the file offset
 * they were given in every error. */
#ifndef VGT_FORMAT_H
#define VGT_FORMAT_H

#include <stdint.h>

#include "vgt/trace.h"

static const uint8_t VGT_FILE_MAGIC[8] = {'V', 'G', 'T', 'R', 'A', 'C', 'E', 0};
static const uint8_t VGT_CHUNK_MAGIC[4] = {'V', 'G', 'T', 'C'};
static const uint8_t VGT_INDEX_MAGIC[4] = {'V', 'G', 'T', 'I'};
static const uint8_t VGT_FOOTER_MAGIC[8] = {'V', 'G', 'T', 'F', 'O', 'O', 'T', 0};

#define VGT_KNOWN_HEADER_FLAGS VGT_HEADER_FLAG_MEMORY_CAS
#define VGT_MIN_HEADER_LENGTH 40u

/* ---- file header (header.c) ---- */
typedef struct file_header {
    uint16_t major, minor;
    uint32_t flags, header_length, identity_count;
} file_header;

/* Builds the whole header (fixed part, identity entries, checksum) into a malloc'd buffer. */
vgt_status header_build(const vgt_identity *ident, uint32_t nident, uint32_t flags, uint8_t **out, uint32_t *len,
                        vgt_error *err);
/* Checks the 32 fixed bytes but the flags (magic, major, lengths, limits); file_size 0 when unknown. */
vgt_status header_parse_fixed(const uint8_t *p, uint64_t file_size, file_header *h, vgt_error *err);
/* Checks the checksum, then the flags, then the identity entries of the whole header (h->header_length bytes). On success
 * *ident is one malloc'd block holding the array and its strings (free(*ident) frees all). */
vgt_status header_parse_identity(const uint8_t *p, const file_header *h, vgt_identity **ident, vgt_error *err);

/* ---- chunk header (chunk.c) ---- */
typedef struct chunk_header {
    uint16_t codec, header_size;
    uint32_t compressed_length, uncompressed_length;
    uint64_t first_seq;
    uint32_t record_count, submit_count;
    uint64_t first_ts, last_ts;
    uint64_t payload_xxh64, records_xxh64;
    uint32_t flags;
} chunk_header;

void chunk_header_encode(const chunk_header *h, uint8_t out[VGT_CHUNK_HEADER_SIZE]);
/* Checks magic, header checksum, codec, header_size, the length limits and, when file_size is not 0,
 * that the payload ends within the file. off is the header's file offset. */
vgt_status chunk_header_parse(const uint8_t in[VGT_CHUNK_HEADER_SIZE], uint64_t off, uint64_t file_size,
                              chunk_header *h, vgt_error *err);
/* Walks the decompressed records of a chunk: each header within the bytes, payload lengths within limits,
 * sequence numbers contiguous from h->first_seq, valid types, and count, submit count and first/last
 * timestamps equal to the header's. off: the chunk's file offset, for messages. */
vgt_status chunk_records_check(const uint8_t *recs, const chunk_header *h, uint64_t off, vgt_error *err);
/* 1 when every record of a known type in the chunk's records (already through chunk_records_check) passes
 * vgt_record_fields: the read-ahead workers run it so that the caller's walk need not (0: check each). */
int chunk_fields_ok(const uint8_t *recs, const chunk_header *h);
/* The chunk list's entry for the chunk whose header h stands at file offset off; first_submit counts the
 * GPFIFO_SUBMIT records of all chunks before it. One builder for the writer's index and the reader's lists. */
vgt_chunk_info chunk_info_make(const chunk_header *h, uint64_t off, uint64_t first_submit);

/* ---- trailer (trailer.c) ---- */
typedef struct footer {
    uint64_t index_offset, record_count;
    uint32_t chunk_count;
} footer;

void index_entry_encode(const vgt_chunk_info *c, uint8_t out[VGT_INDEX_ENTRY_SIZE]);
void index_entry_decode(const uint8_t in[VGT_INDEX_ENTRY_SIZE], vgt_chunk_info *c);
void footer_encode(const footer *f, uint8_t out[VGT_FOOTER_SIZE]);
/* Checks magic and checksum. off: the footer's file offset. */
vgt_status footer_parse(const uint8_t in[VGT_FOOTER_SIZE], uint64_t off, footer *f, vgt_error *err);

/* ---- I/O helpers (io.c) ---- */
/* Write all n bytes (EINTR and short writes retried). */
vgt_status io_write_all(int fd, const void *p, uint64_t n, uint64_t off, vgt_error *err);
/* Read up to n bytes; *got < n only at the end of the input. */
vgt_status io_read_full(int fd, void *p, uint64_t n, uint64_t *got, uint64_t off, vgt_error *err);
vgt_status io_pread_full(int fd, void *p, uint64_t n, uint64_t off, uint64_t *got, vgt_error *err);

#endif
