/* chunk.c: chunk headers and the check of a chunk's decompressed records (docs/trace-format.md
 * sections 3 and 4). Everything here names the chunk header's file offset in its errors. */
#include <string.h>
#include <xxhash.h>

#include "format.h"
#include "le.h"

void chunk_header_encode(const chunk_header *h, uint8_t out[VGT_CHUNK_HEADER_SIZE])
{
    memcpy(out, VGT_CHUNK_MAGIC, 4);
    le_put16(out + 4, h->codec);
    le_put16(out + 6, VGT_CHUNK_HEADER_SIZE);
    le_put32(out + 8, h->compressed_length);
    le_put32(out + 12, h->uncompressed_length);
    le_put64(out + 16, h->first_seq);
    le_put32(out + 24, h->record_count);
    le_put32(out + 28, h->submit_count);
    le_put64(out + 32, h->first_ts);
    le_put64(out + 40, h->last_ts);
    le_put64(out + 48, h->payload_xxh64);
    le_put64(out + 56, h->records_xxh64);
    le_put32(out + 64, h->flags);
    le_put32(out + 68, XXH32(out, 68, 0));
}

vgt_status chunk_header_parse(const uint8_t in[VGT_CHUNK_HEADER_SIZE], uint64_t off, uint64_t file_size,
                              chunk_header *h, vgt_error *err)
{
    if (memcmp(in, VGT_CHUNK_MAGIC, 4))
        return VGT_FAIL(err, VGT_E_FORMAT, off, "no chunk magic \"VGTC\" at offset %llu (found %02x %02x %02x %02x)",
                        (unsigned long long)off, in[0], in[1], in[2], in[3]);
    uint32_t want = le_get32(in + 68), got = XXH32(in, 68, 0);
    if (want != got)
        return VGT_FAIL(err, VGT_E_CHECKSUM, off, "chunk header at offset %llu: header checksum 0x%08x, computed 0x%08x",
                        (unsigned long long)off, want, got);
    h->codec = le_get16(in + 4);
    h->header_size = le_get16(in + 6);
    h->compressed_length = le_get32(in + 8);
    h->uncompressed_length = le_get32(in + 12);
    h->first_seq = le_get64(in + 16);
    h->record_count = le_get32(in + 24);
    h->submit_count = le_get32(in + 28);
    h->first_ts = le_get64(in + 32);
    h->last_ts = le_get64(in + 40);
    h->payload_xxh64 = le_get64(in + 48);
    h->records_xxh64 = le_get64(in + 56);
    h->flags = le_get32(in + 64);
    if (h->codec != VGT_CODEC_STORED && h->codec != VGT_CODEC_ZSTD)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, off, "chunk header at offset %llu: unknown codec %u (known: 0 stored, 1 zstd)",
                        (unsigned long long)off, h->codec);
    if (h->header_size != VGT_CHUNK_HEADER_SIZE)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk header at offset %llu: header_size %u, expected %u",
                        (unsigned long long)off, h->header_size, VGT_CHUNK_HEADER_SIZE);
    if (h->compressed_length > VGT_MAX_CHUNK_PAYLOAD)
        return VGT_FAIL(err, VGT_E_LIMIT, off, "chunk header at offset %llu: compressed_length %u over the limit %u",
                        (unsigned long long)off, h->compressed_length, VGT_MAX_CHUNK_PAYLOAD);
    if (h->uncompressed_length < VGT_RECORD_HEADER_SIZE || h->uncompressed_length > VGT_MAX_CHUNK_RECORDS_BYTES)
        return VGT_FAIL(err, VGT_E_LIMIT, off,
                        "chunk header at offset %llu: uncompressed_length %u outside [%u, %u]", (unsigned long long)off,
                        h->uncompressed_length, VGT_RECORD_HEADER_SIZE, VGT_MAX_CHUNK_RECORDS_BYTES);
    if (h->codec == VGT_CODEC_STORED && h->compressed_length != h->uncompressed_length)
        return VGT_FAIL(err, VGT_E_FORMAT, off,
                        "stored chunk at offset %llu: compressed_length %u differs from uncompressed_length %u",
                        (unsigned long long)off, h->compressed_length, h->uncompressed_length);
    if (h->record_count == 0 || h->record_count > h->uncompressed_length / VGT_RECORD_HEADER_SIZE)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk header at offset %llu: record_count %u impossible for %u bytes",
                        (unsigned long long)off, h->record_count, h->uncompressed_length);
    if (h->submit_count > h->record_count)
        return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk header at offset %llu: submit_count %u over record_count %u",
                        (unsigned long long)off, h->submit_count, h->record_count);
    uint64_t end = off + VGT_CHUNK_HEADER_SIZE + h->compressed_length;
    if (file_size && end > file_size)
        return VGT_FAIL(err, VGT_E_TRUNCATED, off,
                        "chunk at offset %llu: its %u payload bytes end at %llu, past the end of the file (%llu bytes)",
                        (unsigned long long)off, h->compressed_length, (unsigned long long)end,
                        (unsigned long long)file_size);
    return VGT_OK;
}

static vgt_status record_problem(uint64_t off, vgt_status code, uint32_t i, uint64_t at, const char *what,
                                 unsigned long long expected, unsigned long long found, vgt_error *err)
{
    return VGT_FAIL(err, code, off,
                    "chunk at offset %llu, record %u (at byte %llu of its records): %s: expected %llu, found %llu",
                    (unsigned long long)off, i, (unsigned long long)at, what, expected, found);
}

vgt_status chunk_records_check(const uint8_t *recs, const chunk_header *h, uint64_t off, vgt_error *err)
{
    uint64_t pos = 0, seq = h->first_seq, last_ts = 0, len = h->uncompressed_length;
    uint32_t n = 0, submits = 0;
    while (pos < len) {
        if (len - pos < VGT_RECORD_HEADER_SIZE)
            return record_problem(off, VGT_E_FORMAT, n, pos, "bytes for a record header", VGT_RECORD_HEADER_SIZE,
                                  len - pos, err);
        const uint8_t *r = recs + pos;
        uint16_t type = le_get16(r);
        uint32_t plen = le_get32(r + 4);
        uint64_t rseq = le_get64(r + 8);
        if (type == 0 || type == 0xFFFF)
            return VGT_FAIL(err, VGT_E_FORMAT, off, "chunk at offset %llu, record %u (at byte %llu of its records): "
                            "invalid record type 0x%04x", (unsigned long long)off, n, (unsigned long long)pos, type);
        if (plen > VGT_MAX_RECORD_PAYLOAD || pad8(plen) > len - pos - VGT_RECORD_HEADER_SIZE)
            return record_problem(off, VGT_E_FORMAT, n, pos, "payload_length at most the bytes left",
                                  len - pos - VGT_RECORD_HEADER_SIZE, plen, err);
        if (rseq != seq) return record_problem(off, VGT_E_SEQUENCE, n, pos, "sequence number", seq, rseq, err);
        if (n == 0 && le_get64(r + 16) != h->first_ts)
            return record_problem(off, VGT_E_FORMAT, n, pos, "first_ts of the header", h->first_ts, le_get64(r + 16), err);
        last_ts = le_get64(r + 16);
        submits += type == VGT_REC_GPFIFO_SUBMIT;
        n++;
        seq++;
        pos += VGT_RECORD_HEADER_SIZE + pad8(plen);
        if (n > h->record_count) break;
    }
    if (n != h->record_count)
        return record_problem(off, VGT_E_FORMAT, n, pos, "record_count of the header", h->record_count, n, err);
    if (submits != h->submit_count)
        return record_problem(off, VGT_E_FORMAT, n, pos, "submit_count of the header", h->submit_count, submits, err);
    if (last_ts != h->last_ts)
        return record_problem(off, VGT_E_FORMAT, n - 1, pos, "last_ts of the header", h->last_ts, last_ts, err);
    return VGT_OK;
}

int chunk_fields_ok(const uint8_t *recs, const chunk_header *h)
{
    uint64_t pos = 0;
    for (uint32_t i = 0; i < h->record_count; i++) {
        const uint8_t *p = recs + pos;
        vgt_record rec = {.type = le_get16(p), .flags = le_get16(p + 2), .length = le_get32(p + 4),
                          .seq = le_get64(p + 8), .ts = le_get64(p + 16), .payload = p + VGT_RECORD_HEADER_SIZE};
        if (vgt_rec_type_name(rec.type) && vgt_record_fields(&rec, NULL, NULL, NULL) != VGT_OK) return 0;
        pos += VGT_RECORD_HEADER_SIZE + pad8(rec.length);
    }
    return 1;
}

vgt_chunk_info chunk_info_make(const chunk_header *h, uint64_t off, uint64_t first_submit)
{
    return (vgt_chunk_info){off, h->first_seq, h->first_ts, h->last_ts, first_submit, h->record_count,
                            h->submit_count, h->codec, h->compressed_length, h->uncompressed_length};
}
