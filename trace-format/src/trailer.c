/* trailer.c: index entries and the footer (docs/trace-format.md section 6). */
#include <string.h>
#include <xxhash.h>

#include "format.h"
#include "le.h"

void index_entry_encode(const vgt_chunk_info *c, uint8_t out[VGT_INDEX_ENTRY_SIZE])
{
    le_put64(out, c->offset);
    le_put64(out + 8, c->first_seq);
    le_put64(out + 16, c->first_ts);
    le_put64(out + 24, c->last_ts);
    le_put64(out + 32, c->first_submit);
    le_put32(out + 40, c->record_count);
    le_put32(out + 44, c->submit_count);
}

void index_entry_decode(const uint8_t in[VGT_INDEX_ENTRY_SIZE], vgt_chunk_info *c)
{
    memset(c, 0, sizeof *c);
    c->offset = le_get64(in);
    c->first_seq = le_get64(in + 8);
    c->first_ts = le_get64(in + 16);
    c->last_ts = le_get64(in + 24);
    c->first_submit = le_get64(in + 32);
    c->record_count = le_get32(in + 40);
    c->submit_count = le_get32(in + 44);
}

void footer_encode(const footer *f, uint8_t out[VGT_FOOTER_SIZE])
{
    le_put64(out, f->index_offset);
    le_put64(out + 8, f->record_count);
    le_put32(out + 16, f->chunk_count);
    le_put32(out + 20, XXH32(out, 20, 0));
    memcpy(out + 24, VGT_FOOTER_MAGIC, 8);
}

vgt_status footer_parse(const uint8_t in[VGT_FOOTER_SIZE], uint64_t off, footer *f, vgt_error *err)
{
    if (memcmp(in + 24, VGT_FOOTER_MAGIC, 8))
        return VGT_FAIL(err, VGT_E_FORMAT, off + 24, "no footer magic \"VGTFOOT\\0\" at offset %llu",
                        (unsigned long long)(off + 24));
    uint32_t want = le_get32(in + 20), got = XXH32(in, 20, 0);
    if (want != got)
        return VGT_FAIL(err, VGT_E_CHECKSUM, off, "footer at offset %llu: checksum 0x%08x, computed 0x%08x",
                        (unsigned long long)off, want, got);
    f->index_offset = le_get64(in);
    f->record_count = le_get64(in + 8);
    f->chunk_count = le_get32(in + 16);
    return VGT_OK;
}
