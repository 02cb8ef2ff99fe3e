/* test_capture_embed.c: the embedding API (capture.h) driven with synthetic channels and push buffers,
 * the trace read back with libvgt's reader and compared with what was fed in.
 *
 * Guest memory: a host buffer seen at GPU VA 0x2_0000_0000 (ring + push buffers + data) and a second
 * range served by a read callback at 0x3_0000_0000. Checks: CHANNEL / WORK_SUBMIT_TOKEN / ENGINE_OBJECT
 * / GPU_MAP records; a GPFIFO_SUBMIT with a main entry, a subroutine entry (LEVEL=1), a control entry
 * (no segment), an entry whose push buffer is read through the callback, and an entry at an unmapped
 * address (segment flagged truncated, submit flag set); ring wrap-around on a 4-entry channel; a
 * doorbell with an unknown token (DOORBELL record, VGT_E_NOT_FOUND); a tracker told of a submission's
 * segments before its record, in the same call; MEMORY records through both kinds of views; overlapping
 * views refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/capture.h"
#include "vgt/devcopy.h"
#include "vgt/trace.h"
#include "check.h"

#define VA0 0x200000000ull
#define VA1 0x300000000ull
#define MEM0 (1u << 20)
static uint8_t mem0[MEM0];
static uint8_t mem1[0x4000];
static unsigned callback_reads;

static uint32_t read_mem1(void *ctx, uint64_t va, void *dst, uint32_t len)
{
    (void)ctx;
    callback_reads++;
    if (va < VA1 || va - VA1 >= sizeof mem1) return 0;
    uint64_t off = va - VA1, n = sizeof mem1 - off < len ? sizeof mem1 - off : len;
    memcpy(dst, mem1 + off, n);
    return (uint32_t)n;
}

/* GPFIFO entry: VA[31:2] in word 0, VA[39:32] in word 1 bits 7:0, LEVEL bit 9, LENGTH (dwords) 30:10. */
static uint64_t entry(uint64_t va, uint32_t dwords, int sub)
{
    uint32_t w0 = (uint32_t)va & ~3u, w1 = (uint32_t)(va >> 32) & 0xffu;
    w1 |= (uint32_t)(sub ? 1 : 0) << 9 | (dwords & 0x1fffffu) << 10;
    return (uint64_t)w1 << 32 | w0;
}

static void put_entry(uint64_t ring_va, uint32_t i, uint64_t e)
{
    memcpy(mem0 + (ring_va - VA0) + 8ull * i, &e, 8);
}

/* A tracker that notes the segments of the last submission and where the writer stood. */
static struct { vgt_writer *w; unsigned calls; uint32_t nseg, length; uint64_t va, next_seq; } seen;
static void before_submit(void *ctx, const vgt_segment *segs, uint32_t nseg)
{
    (void)ctx;
    seen.calls++;
    seen.nseg = nseg;
    seen.va = nseg ? segs[0].gpu_va : 0;
    seen.length = nseg ? segs[0].length : 0;
    seen.next_seq = vgt_writer_next_seq(seen.w);
}

static void fill(uint8_t *p, uint32_t n, uint8_t seed) { for (uint32_t i = 0; i < n; i++) p[i] = (uint8_t)(seed + i * 7); }

static void feed(vgt_capture *c)
{
    vgt_error err;
    vgt_capture_view v0 = { .gpu_va = VA0, .length = MEM0, .host = mem0, .client = 1, .memory = 0x40 };
    vgt_capture_view v1 = { .gpu_va = VA1, .length = sizeof mem1, .read = read_mem1, .client = 1, .memory = 0x41 };
    CHECK_STATUS(vgt_capture_map_view(c, &v0, &err), VGT_OK, &err, "map view 0");
    CHECK_STATUS(vgt_capture_map_view(c, &v1, &err), VGT_OK, &err, "map view 1");
    vgt_capture_view bad = { .gpu_va = VA0 + 0x1000, .length = 0x1000, .host = mem0 };
    CHECK(vgt_capture_add_view(c, &bad, &err) == VGT_E_ARG && strstr(err.msg, "overlaps"), "overlap accepted: %s", err.msg);

    vgt_rec_channel ch = { .client = 1, .parent = 2, .handle = 0xbeef0100, .cls = 0xc86f, .ring_va = VA0, .entries = 1024 };
    CHECK_STATUS(vgt_capture_channel(c, &ch, &err), VGT_OK, &err, "channel");
    CHECK_STATUS(vgt_capture_engine(c, 1, 0xbeef0100, 0xbeef0200, 0xcbc0, &err), VGT_OK, &err, "engine");
    CHECK_STATUS(vgt_capture_token(c, 1, 0xbeef0100, 0xa001a, &err), VGT_OK, &err, "token");
    vgt_rec_channel small = { .client = 1, .parent = 2, .handle = 0xbeef0101, .cls = 0xc86f, .ring_va = VA0 + 0x2000, .entries = 4 };
    CHECK_STATUS(vgt_capture_channel(c, &small, &err), VGT_OK, &err, "small channel");
    CHECK_STATUS(vgt_capture_token(c, 1, 0xbeef0101, 0x3001b, &err), VGT_OK, &err, "token 2");

    fill(mem0 + 0x10000, 16, 1);       /* main push buffer: 4 dwords */
    fill(mem0 + 0x20000, 8, 50);       /* subroutine: 2 dwords */
    fill(mem1 + 0x100, 12, 90);        /* through the callback: 3 dwords */
    put_entry(VA0, 0, entry(VA0 + 0x10000, 4, 0));
    put_entry(VA0, 1, entry(VA0 + 0x20000, 2, 1));
    put_entry(VA0, 2, 0x0000000000000104ull);        /* control entry: NOP (OPCODE is word 1's; its operand's
                                                        low byte 4 is no SET_PB_SEGMENT_EXTENDED_BASE), no segment */
    put_entry(VA0, 3, entry(VA1 + 0x100, 3, 0));
    put_entry(VA0, 4, entry(0x500000000ull, 2, 0));  /* unmapped */
    put_entry(VA0, 5, entry(VA0 + 0x10004, 2, 0));   /* inside the first segment: shares it */
    CHECK_STATUS(vgt_capture_memory(c, VA0 + 0x10000, 0x2000, VGT_MEM_CHANGED, &err), VGT_OK, &err, "memory");
    CHECK_STATUS(vgt_capture_memory(c, VA1 + 0x100, 12, VGT_MEM_INITIAL, &err), VGT_OK, &err, "memory cb");
    CHECK_STATUS(vgt_capture_memory(c, 0x500000000ull, 8, VGT_MEM_CHANGED, &err), VGT_E_NOT_FOUND, &err,
                 "unmapped memory accepted");
    uint64_t seq;
    CHECK_STATUS(vgt_capture_doorbell_token(c, 0xa001a, 0, 6, &seq, &err), VGT_OK, &err, "doorbell");

    /* Ring wrap on the 4-entry channel: put 3, then 3 -> 1 (entries 3, 0). */
    fill(mem0 + 0x30000, 4, 200);
    for (uint32_t i = 0; i < 4; i++) put_entry(VA0 + 0x2000, i, entry(VA0 + 0x30000, 1, 0));
    CHECK_STATUS(vgt_capture_doorbell(c, 1, 0xbeef0101, 0, 3, NULL, &err), VGT_OK, &err, "small 1");
    /* the tracker hears of the second one's segments before its record is written, in the same call */
    uint64_t seq2;
    CHECK_STATUS(vgt_capture_doorbell(c, 1, 0xbeef0101, 3, 1, &seq2, &err), VGT_OK, &err, "small 2");
    CHECK(seen.nseg == 1 && seen.va == VA0 + 0x30000 && seen.length == 4 && seen.next_seq == seq2,
          "tracker: %u segments, the first at 0x%llx, before record %llu (the record is %llu)", seen.nseg,
          (unsigned long long)seen.va, (unsigned long long)seen.next_seq, (unsigned long long)seq2);
    CHECK_STATUS(vgt_capture_doorbell(c, 1, 0xbeef0101, 0, 9, NULL, &err), VGT_E_ARG, &err,
                 "GP_PUT past the ring accepted");   /* and nothing held: the calls below would block */
    CHECK(seen.calls == 4 && seen.nseg == 0, "a failed doorbell: %u tracker calls, %u segments", seen.calls, seen.nseg);
    CHECK_STATUS(vgt_capture_doorbell_token(c, 0x777, 0, 0, NULL, &err), VGT_E_NOT_FOUND, &err,
                 "unknown token accepted");
    uint32_t put;
    CHECK(vgt_capture_last_put(c, 1, 0xbeef0101, &put, &err) == VGT_OK && put == 1, "last put %u", put);
    vgt_capture_stats st = vgt_capture_get_stats(c);
    CHECK(st.submits == 3 && st.unknown_tokens == 1, "stats: %llu submits, %llu unknown tokens",
          (unsigned long long)st.submits, (unsigned long long)st.unknown_tokens);
    CHECK(callback_reads > 0, "the callback view was never read");
}

static int seg_is(const vgt_segment *s, uint64_t va, const uint8_t *want, uint32_t len, uint32_t flags)
{
    return s->gpu_va == va && s->length == len && s->flags == flags && memcmp(s->data, want, len) == 0;
}

static void check_submit(const vgt_record *r, int n)
{
    vgt_rec_gpfifo_submit s;
    vgt_segment segs[16];
    vgt_error err;
    CHECK_STATUS(vgt_decode_gpfifo_submit(r, &s, segs, 16, &err), VGT_OK, &err, "decode submit");
    if (n == 0) {
        CHECK(s.channel == 0xbeef0100 && s.token == 0xa001a && s.gp_put_before == 0 && s.gp_put_after == 6 &&
              s.entry_count == 6, "submit 0 header: ch 0x%x put %u..%u entries %u", s.channel, s.gp_put_before,
              s.gp_put_after, s.entry_count);
        CHECK(vgt_submit_entry(&s, 1) == entry(VA0 + 0x20000, 2, 1), "entry 1 differs");
        CHECK(s.segment_count == 4, "submit 0: %u segments, expected 4 (main, subroutine, callback, unmapped)", s.segment_count);
        CHECK(s.flags & VGT_SUBMIT_FLAG_SEGMENT_TRUNCATED, "truncated flag missing");
        if (s.segment_count == 4) {
            CHECK(seg_is(&segs[0], VA0 + 0x10000, mem0 + 0x10000, 16, 0), "segment 0 differs");
            CHECK(seg_is(&segs[1], VA0 + 0x20000, mem0 + 0x20000, 8, VGT_SEGMENT_FLAG_SUBROUTINE), "segment 1 differs");
            CHECK(seg_is(&segs[2], VA1 + 0x100, mem1 + 0x100, 12, 0), "segment 2 (callback) differs");
            CHECK(segs[3].gpu_va == 0x500000000ull && segs[3].length == 0 && (segs[3].flags & VGT_SEGMENT_FLAG_TRUNCATED),
                  "segment 3 should be empty and truncated");
        }
    } else if (n == 2) {
        CHECK(s.channel == 0xbeef0101 && s.gp_put_before == 3 && s.gp_put_after == 1 && s.entry_count == 2,
              "wrap submit: put %u..%u entries %u", s.gp_put_before, s.gp_put_after, s.entry_count);
        CHECK(s.segment_count == 1 && seg_is(&segs[0], VA0 + 0x30000, mem0 + 0x30000, 4, 0), "wrap segment differs");
    }
}

static void read_back(const char *path)
{
    vgt_reader *r;
    vgt_error err;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) { CHECK(0, "open: %s", err.msg); return; }
    vgt_record rec;
    int counts[0x50] = { 0 }, submits = 0;
    vgt_status rc;
    while ((rc = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        if (rec.type < 0x50) counts[rec.type]++;
        if (rec.type == VGT_REC_GPFIFO_SUBMIT) check_submit(&rec, submits++);
        if (rec.type == VGT_REC_MEMORY) {
            vgt_rec_memory m;
            vgt_decode_memory(&rec, &m, &err);
            const uint8_t *want = m.gpu_va >= VA1 ? mem1 + (m.gpu_va - VA1) : mem0 + (m.gpu_va - VA0);
            CHECK(memcmp(m.data, want, m.length) == 0, "MEMORY at 0x%llx differs", (unsigned long long)m.gpu_va);
        }
        if (rec.type == VGT_REC_DOORBELL) {
            vgt_rec_doorbell d;
            vgt_decode_doorbell(&rec, &d, &err);
            CHECK(d.token == 0x777 && d.channel == 0, "DOORBELL token 0x%x channel 0x%x", d.token, d.channel);
        }
    }
    CHECK(rc == VGT_E_EOF, "reader ended with %d: %s", rc, err.msg);
    CHECK(submits == 3, "%d GPFIFO_SUBMIT records, expected 3", submits);
    CHECK(counts[VGT_REC_CHANNEL] == 2 && counts[VGT_REC_WORK_SUBMIT_TOKEN] == 2 && counts[VGT_REC_ENGINE_OBJECT] == 1 &&
          counts[VGT_REC_GPU_MAP] == 2 && counts[VGT_REC_MEMORY] == 2 && counts[VGT_REC_DOORBELL] == 1,
          "record counts: channel %d token %d engine %d map %d memory %d doorbell %d", counts[VGT_REC_CHANNEL],
          counts[VGT_REC_WORK_SUBMIT_TOKEN], counts[VGT_REC_ENGINE_OBJECT], counts[VGT_REC_GPU_MAP],
          counts[VGT_REC_MEMORY], counts[VGT_REC_DOORBELL]);
    vgt_reader_close(r);
}

/* vgt_copy_from_device reads by aligned blocks: every offset and length must still copy exactly. */
static void check_copy_device(void)
{
    static uint8_t src[4096 * 2] __attribute__((aligned(4096)));
    static uint8_t dst[4096 * 2];
    for (unsigned i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 13 + 7);
    for (unsigned off = 0; off < 70; off++)
        for (unsigned len = 0; len < 600; len += (len < 140 ? 1 : 37)) {
            memset(dst, 0xee, sizeof dst);
            vgt_copy_from_device(dst + 1, src + off, len);
            int ok = memcmp(dst + 1, src + off, len) == 0 && dst[0] == 0xee && dst[1 + len] == 0xee;
            if (!ok) { CHECK(0, "copy_device off %u len %u", off, len); return; }
        }
    memset(dst, 0, sizeof dst);
    vgt_copy_from_device(dst, src + 3, sizeof src - 3);
    CHECK(memcmp(dst, src + 3, sizeof src - 3) == 0, "copy_device of %zu bytes", sizeof src - 3);
}

int main(void)
{
    check_copy_device();
    char path[] = "/tmp/test_capture_embed_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 1; }
    close(fd);
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id[] = { { "producer", "test_capture_embed" }, { "capture_mode", "embedded" } };
    if (vgt_writer_open_path(&w, path, &o, id, 2, &err) != VGT_OK) { fprintf(stderr, "FAIL writer: %s\n", err.msg); return 1; }
    vgt_capture *c;
    CHECK_STATUS(vgt_capture_open(&c, NULL, NULL, &err), VGT_E_ARG, &err, "a capture without a writer was accepted");
    seen.w = w;
    vgt_capture_tracker t = { .before_submit = before_submit };
    if (vgt_capture_open(&c, w, &(vgt_capture_options){ .tracker = &t }, &err) != VGT_OK) {
        fprintf(stderr, "FAIL open: %s\n", err.msg);
        return 1;
    }
    feed(c);
    vgt_capture_close(c);
    CHECK_STATUS(vgt_writer_close(w, &err), VGT_OK, &err, "writer close");
    read_back(path);
    unlink(path);
    return check_finish("test_capture_embed");
}
