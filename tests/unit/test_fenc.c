/* test_fenc.c: the freestanding encoder (capture/freestanding/vgt_fenc.h) against the library.
 *  - every record it writes is byte-for-byte the record the library's typed encoder puts in a chunk
 *    (stored chunks read back: header fields, payload bytes, zero padding), with odd blob lengths and
 *    more segments than one batch;
 *  - the stream header and identity block are laid out as docs/trace-format.md section 10 says;
 *  - a sink that refuses a record: VGT_FENC_FULL, nothing written, no sequence number used, counted lost;
 *  - calls out of order and oversize payloads are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/trace.h"
#include "vgt_fenc.h"

#include "check.h"

static uint8_t pb[20][301];
static uint64_t ents[40];
static uint8_t params_in[13], params_out[13], mem[77];

static void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++) p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* The same records both ways: through the encoder (fe) and through the library writer (w). */
static void write_both(vgt_fenc *fe, vgt_writer *w)
{
    vgt_error err;
    uint64_t ts = 5000;
    fill(params_in, sizeof params_in, 1), fill(params_out, sizeof params_out, 2), fill(mem, sizeof mem, 3);
    for (int i = 0; i < 20; i++) fill(pb[i], sizeof pb[i], 10 + i);
    for (int i = 0; i < 40; i++) ents[i] = 0x0123456789abcdefull * (i + 1);

    vgt_frec_object o = {1, 2, 3, 0xc597, 0, sizeof params_in, params_in, params_out};
    CHECK_EQ_U64(vgt_fenc_object(fe, ts, &o), VGT_FENC_OK, "object");
    vgt_rec_rm_alloc a = {1, 2, 3, 0xc597, 0, sizeof params_in, params_in, params_out};
    vgt_write_rm_alloc(w, ts++, &a, &err);

    vgt_frec_map m = {1, 2, 0x99, 0x42, 0x200000000ull, 0x1000, 0x300000, 7, 3, 0};
    CHECK_EQ_U64(vgt_fenc_map(fe, ts, &m), VGT_FENC_OK, "map");
    vgt_rec_gpu_map gm = {1, 2, 0x99, 0x42, 0x200000000ull, 0x1000, 0x300000, 7, 3, 0};
    vgt_write_gpu_map(w, ts++, &gm, &err);

    vgt_frec_unmap um = {1, 2, 0x99, 0x42, 0x200000000ull, 0x300000, 3, 0};
    vgt_fenc_unmap(fe, ts, &um);
    vgt_rec_gpu_unmap gum = {1, 2, 0x99, 0x42, 0x200000000ull, 0x300000, 3, 0};
    vgt_write_gpu_unmap(w, ts++, &gum, &err);

    vgt_frec_channel c = {1, 2, 0xbeef, 0xc46f, 0x100000, 1024, 5, 0x10, 0x20000, 1, 0x99, 0, 0, 0};
    vgt_fenc_channel(fe, ts, &c);
    vgt_rec_channel rc = {1, 2, 0xbeef, 0xc46f, 0x100000, 1024, 5, 0x10, 0x20000, 1, 0x99, 0, 0, 0};
    vgt_write_channel(w, ts++, &rc, &err);

    vgt_frec_engine_object eo = {1, 0xbeef, 0xbef0, 0xc597, 0};
    vgt_fenc_engine_object(fe, ts, &eo);
    vgt_rec_engine_object reo = {1, 0xbeef, 0xbef0, 0xc597, 0};
    vgt_write_engine_object(w, ts++, &reo, &err);

    vgt_fenc_work_submit_token(fe, ts, 1, 0xbeef, 77);
    vgt_rec_work_submit_token tok = {1, 0xbeef, 77};
    vgt_write_work_submit_token(w, ts++, &tok, &err);

    /* submissions: no segment, one, and more than a batch with odd lengths */
    for (uint32_t nseg = 0; nseg <= 20; nseg += 10) {
        vgt_frec_segment fs[20];
        vgt_segment ls[20];
        uint8_t eb[40 * 8];
        for (uint32_t i = 0; i < nseg; i++) {
            uint32_t len = 301 - i * 3;
            fs[i] = (vgt_frec_segment){0x100000000ull + i * 0x1000, len, i & 1, pb[i]};
            ls[i] = (vgt_segment){0x100000000ull + i * 0x1000, len, i & 1, pb[i]};
        }
        uint32_t ne = 7 + nseg * 3 / 2;   /* 37 entries at the end: more than one batch of 32 */
        for (uint32_t i = 0; i < ne; i++)
            for (int b = 0; b < 8; b++) eb[8 * i + b] = (uint8_t)(ents[i] >> (8 * b));
        vgt_frec_submit s = {1, 0xbeef, 77, 0, 0xffffffffu, 3, 0xffffffffu, 3 + ne, ne, nseg};
        CHECK_EQ_U64(vgt_fenc_submit(fe, ts, &s, ents, fs), VGT_FENC_OK, "submit of %u segments", nseg);
        vgt_rec_gpfifo_submit ls_ = {1, 0xbeef, 77, 0, 0xffffffffu, 3, 0xffffffffu, 3 + ne, ne, nseg, eb, ls};
        vgt_write_gpfifo_submit(w, ts++, &ls_, &err);
    }

    vgt_fenc_memory(fe, ts, 0x200001000ull, mem, sizeof mem, 1, 0x42, 0);
    vgt_rec_memory rm = {0x200001000ull, sizeof mem, 1, 0x42, 0, mem};
    vgt_write_memory(w, ts++, &rm, &err);

    vgt_fenc_doorbell(fe, ts, 77, 0xbeef, 0x90, 0);
    vgt_rec_doorbell db = {77, 0xbeef, 0x90, 0};
    vgt_write_doorbell(w, ts++, &db, &err);

    vgt_fenc_semaphore(fe, ts, 0x200002000ull, 0x1234567890ull, 8, 1);
    vgt_rec_semaphore sem = {0x200002000ull, 0x1234567890ull, 8, 1};
    vgt_write_semaphore(w, ts++, &sem, &err);

    vgt_fenc_marker(fe, ts, "guest frame 1", 13);
    vgt_rec_marker mk = {13, 0, "guest frame 1"};
    vgt_write_marker(w, ts++, &mk, &err);

    vgt_fenc_diagnostic(fe, ts, 1, 12, "odd", 3);
    vgt_rec_diagnostic dg = {1, 12, 3, "odd"};
    vgt_write_diagnostic(w, ts++, &dg, &err);

    vgt_frec_free fr = {1, 2, 3, 0};
    vgt_fenc_free(fe, ts, &fr);
    vgt_rec_rm_free rf = {1, 2, 3, 0};
    vgt_write_rm_free(w, ts++, &rf, &err);

    /* a record of a type this encoder has no function for, through the generic call */
    uint8_t pe[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0};
    vgt_fenc_part part = {pe, sizeof pe};
    vgt_fenc_record(fe, VGT_REC_CPU_MAP, ts, &part, 0);   /* no parts: an empty payload */
    vgt_write_record(w, VGT_REC_CPU_MAP, 0, ts++, NULL, 0, NULL, &err);
    vgt_fenc_record(fe, VGT_REC_WORK_SUBMIT_TOKEN, ts, &part, 1);
    vgt_write_record(w, VGT_REC_WORK_SUBMIT_TOKEN, 0, ts++, pe, sizeof pe, NULL, &err);
}

static uint32_t g32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t g64(const uint8_t *p) { return g32(p) | (uint64_t)g32(p + 4) << 32; }

static void test_bytes_agree(void)
{
    static uint8_t buf[1 << 20];
    vgt_fenc_buffer b;
    vgt_fenc e;
    vgt_fenc_buffer_init(&b, buf, sizeof buf);
    vgt_fenc_init(&e, vgt_fenc_buffer_sink, &b);
    const vgt_fenc_identity id[] = {{"producer", "test_fenc"}, {"chip", "TU104"}};
    CHECK_EQ_U64(vgt_fenc_begin(&e, id, 2), VGT_FENC_OK, "begin");

    char path[] = "/tmp/vgt_test_fenc_XXXXXX";
    int fd = mkstemp(path);
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    o.codec = VGT_CODEC_STORED;
    CHECK_STATUS(vgt_writer_open_fd(&w, fd, 1, &o, NULL, 0, &err), VGT_OK, &err, "open");
    write_both(&e, w);
    CHECK_STATUS(vgt_writer_close(w, &err), VGT_OK, &err, "close");
    CHECK_EQ_U64(vgt_fenc_end(&e, 99999), VGT_FENC_OK, "end");

    /* stream header: magic, version 1.0, records of format 1.1, identity block as in section 2 */
    CHECK(!memcmp(buf, "VGTSTRM", 8), "magic");
    CHECK_EQ_U64(g32(buf + 8), 1, "major 1 minor 0");
    CHECK_EQ_U64(g32(buf + 16), 1 | 1 << 16, "format 1.1");
    uint32_t idlen = g32(buf + 20);
    CHECK_EQ_U64(idlen, 32 + 24, "identity block: two entries, each padded to 8 ('producer'+'test_fenc', 'chip'+'TU104')");
    CHECK_EQ_U64(g32(buf + 32), 8, "first key length");
    CHECK(!memcmp(buf + 40, "producertest_fenc", 17), "first entry");
    CHECK(!memcmp(buf + 32 + 32 + 8, "chipTU104", 9), "second entry");

    vgt_reader *r;
    CHECK_STATUS(vgt_reader_open_path(&r, path, NULL, &err), VGT_OK, &err, "reopen");
    uint64_t pos = 32 + idlen, n = 0;
    vgt_record rec;
    while (vgt_reader_next(r, &rec, &err) == VGT_OK) {
        const uint8_t *h = buf + pos;
        CHECK_EQ_U64(h[0] | h[1] << 8, rec.type, "type of record %llu", (unsigned long long)rec.seq);
        CHECK_EQ_U64(g32(h + 4), rec.length, "length of record %llu (%s)", (unsigned long long)rec.seq,
                     vgt_rec_type_name(rec.type));
        CHECK_EQ_U64(g64(h + 8), rec.seq, "seq");
        CHECK_EQ_U64(g64(h + 16), rec.ts, "ts of record %llu", (unsigned long long)rec.seq);
        CHECK(!memcmp(h + 24, rec.payload, rec.length), "payload bytes of record %llu (%s)",
              (unsigned long long)rec.seq, vgt_rec_type_name(rec.type));
        uint32_t padded = (rec.length + 7) & ~7u;
        for (uint32_t i = rec.length; i < padded; i++) CHECK(h[24 + i] == 0, "padding of record %llu", (unsigned long long)rec.seq);
        pos += 24 + padded;
        n++;
    }
    vgt_reader_close(r);
    unlink(path);
    CHECK_EQ_U64(n, 17, "records compared");
    CHECK_EQ_U64(e.next_seq, 17, "sequence numbers used");
    /* the END mark closes the stream */
    CHECK_EQ_U64(g32(buf + pos) & 0xffff, 0xffff, "END mark type");
    CHECK_EQ_U64(g32(buf + pos + 4), 0, "END mark has no payload");
    CHECK_EQ_U64(g64(buf + pos + 8), 17, "END mark carries the next sequence number");
    CHECK_EQ_U64(pos + 24, b.used, "nothing after the END mark");
    CHECK_EQ_U64(vgt_fenc_marker(&e, 1, "x", 1), VGT_FENC_ARG, "no record after END");
}

static void test_full_sink(void)
{
    static uint8_t small[32 + 8 + 48 + 100];
    vgt_fenc_buffer b;
    vgt_fenc e;
    vgt_fenc_buffer_init(&b, small, sizeof small);
    vgt_fenc_init(&e, vgt_fenc_buffer_sink, &b);
    CHECK_EQ_U64(vgt_fenc_marker(&e, 1, "x", 1), VGT_FENC_ARG, "a record before begin");
    CHECK_EQ_U64(vgt_fenc_begin(&e, NULL, 0), VGT_FENC_OK, "begin");
    CHECK_EQ_U64(vgt_fenc_marker(&e, 1, "hello", 5), VGT_FENC_OK, "fits: 24 + 8 + 8 bytes");
    uint32_t used = b.used;
    CHECK_EQ_U64(vgt_fenc_memory(&e, 2, 0x1000, mem, 77, 0, 0, 0), VGT_FENC_FULL, "does not fit");
    CHECK_EQ_U64(b.used, used, "nothing of a refused record is written");
    CHECK_EQ_U64(e.records_lost, 1, "counted lost");
    CHECK_EQ_U64(e.next_seq, 1, "its sequence number is not used");
    vgt_fenc_buffer_reset(&b);
    CHECK_EQ_U64(vgt_fenc_memory(&e, 2, 0x1000, mem, 77, 0, 0, 0), VGT_FENC_OK, "fits after a drain");
    CHECK_EQ_U64(g64(small + 8), 1, "the next record takes the next sequence number");
    CHECK_EQ_U64(vgt_fenc_memory(&e, 2, 0x1000, NULL, 8, 0, 0, 0), VGT_FENC_ARG, "a blob with no bytes");
    CHECK_EQ_U64(vgt_fenc_memory(&e, 2, 0x1000, mem, VGT_FENC_MAX_PAYLOAD, 0, 0, 0), VGT_FENC_ARG, "over the payload limit");
    const vgt_fenc_identity bad[] = {{"", "x"}};
    vgt_fenc e2;
    vgt_fenc_init(&e2, vgt_fenc_buffer_sink, &b);
    CHECK_EQ_U64(vgt_fenc_begin(&e2, bad, 1), VGT_FENC_ARG, "an empty identity key");
}

int main(void)
{
    test_bytes_agree();
    test_full_sink();
    return check_finish("test_fenc");
}
