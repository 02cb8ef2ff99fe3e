/* test_capture_gpget.c: completion forensics. A hand-built USERD page (a host buffer the capture knows as
 * the CPU mapping of the channel's USERD memory) holds GP_GET and GP_PUT; doorbells go through
 * vgt_capture_doorbell_store as the shim's trap does. The trace read back must carry each GP_GET read in
 * gp_get_before and a CHANNEL_PROGRESS at the end, and vgt/gp_check.h must find the PUT wrap, the GET
 * wrap and the GET past PUT the test staged on a 4-entry ring, and nothing on the clean doorbells. A
 * device model's path (vgt_capture_doorbell with a GP_GET it read itself, vgt_capture_progress) is
 * checked the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/capture.h"
#include "vgt/gp_check.h"
#include "vgt/nv_abi.h"
#include "vgt/trace.h"
#include "check.h"

#define VA0 0x200000000ull
#define RING 4u
#define USERD_MEM 0x60u
#define USERD_OFF 0x200u
static uint8_t mem0[0x10000];
static uint8_t userd_page[0x1000] __attribute__((aligned(4096)));

static void set_userd(uint32_t get, uint32_t put)
{
    memcpy(userd_page + USERD_OFF + USERD_GP_GET, &get, 4);
    memcpy(userd_page + USERD_OFF + USERD_GP_PUT, &put, 4);
}

/* ring entries 0..3 each run 1 dword of push buffer at VA0 + 0x1000 */
static void fill_ring(void)
{
    uint64_t va = VA0 + 0x1000;
    uint64_t e = (uint64_t)(((uint32_t)(va >> 32) & 0xffu) | 1u << 10) << 32 | ((uint32_t)va & ~3u);
    for (uint32_t i = 0; i < RING; i++) memcpy(mem0 + 8ull * i, &e, 8);
}

static void store(vgt_capture *c, uint32_t get, uint32_t put)
{
    vgt_error err;
    vgt_capture_doorbell_info info;
    set_userd(get, put);
    CHECK_STATUS(vgt_capture_doorbell_store(c, 0x5, &info, &err), VGT_OK, &err, "doorbell store get %u put %u", get, put);
}

static void feed(vgt_capture *c)
{
    vgt_error err;
    vgt_capture_view v0 = { .gpu_va = VA0, .length = sizeof mem0, .host = mem0, .client = 1, .memory = 0x40 };
    CHECK_STATUS(vgt_capture_map_view(c, &v0, &err), VGT_OK, &err, "view");
    vgt_rec_mem_alloc m = { .client = 1, .parent = 2, .handle = USERD_MEM, .cls = 0x3e, .size = sizeof userd_page };
    CHECK_STATUS(vgt_capture_mem_alloc(c, &m, 0, &err), VGT_OK, &err, "USERD memory");
    vgt_rec_cpu_map cm = { .client = 1, .device = 2, .memory = USERD_MEM, .length = sizeof userd_page,
                           .cpu_address = (uint64_t)(uintptr_t)userd_page };
    CHECK_STATUS(vgt_capture_cpu_map(c, &cm, 1, &err), VGT_OK, &err, "USERD CPU mapping");
    vgt_rec_channel ch = { .client = 1, .parent = 2, .handle = 0xbeef0100, .cls = 0xc86f, .ring_va = VA0,
                           .entries = RING, .userd_memory = USERD_MEM, .userd_offset = USERD_OFF };
    CHECK_STATUS(vgt_capture_channel(c, &ch, &err), VGT_OK, &err, "channel");
    CHECK_STATUS(vgt_capture_token(c, 1, 0xbeef0100, 0x5, &err), VGT_OK, &err, "token");
    /* a second channel driven as a device model drives it: GP_GET given, progress given */
    vgt_rec_channel dm = { .client = 1, .parent = 2, .handle = 0xbeef0200, .cls = 0xc56f, .ring_va = VA0,
                           .entries = RING };
    CHECK_STATUS(vgt_capture_channel(c, &dm, &err), VGT_OK, &err, "device-model channel");
    fill_ring();

    store(c, 0, 2);   /* entries 0, 1; nothing fetched yet */
    store(c, 2, 1);   /* entries 2, 3: PUT wraps; the GPU fetched 0, 1 */
    store(c, 0, 2);   /* entries 0, 1; GET 2 -> 0: the GPU fetched across the end */
    store(c, 3, 3);   /* entry 2; GET 3 is past the last PUT (2): an entry no submission wrote */
    set_userd(3, 3);  /* what the end of the capture reads: every entry fetched */

    CHECK_STATUS(vgt_capture_doorbell(c, 1, 0xbeef0200, 0, 3, NULL, &err), VGT_OK, &err, "model doorbell 1");
    CHECK_STATUS(vgt_capture_doorbell(c, 1, 0xbeef0200, 3, 1, NULL, &err), VGT_OK, &err, "model doorbell 2");
    CHECK_STATUS(vgt_capture_progress(c, 1, 0xbeef0200, 3, 1, &err), VGT_OK, &err, "model progress");
    CHECK_STATUS(vgt_capture_progress(c, 1, 0x999, 0, 0, &err), VGT_E_NOT_FOUND, &err, "progress of no channel");
}

static void read_back(const char *path)
{
    vgt_reader *r;
    vgt_error err;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) { CHECK(0, "open: %s", err.msg); return; }
    vgt_gp_check *g;
    CHECK_STATUS(vgt_gp_check_open(&g, &err), VGT_OK, &err, "gp check");
    static const uint32_t want_get[] = { 0, 2, 0, 3, 0, 3 };
    vgt_gp_event all[16];
    int nall = 0, submits = 0, progress = 0;
    vgt_record rec;
    vgt_status rc;
    while ((rc = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        vgt_gp_event ev[VGT_GP_MAX_EVENTS];
        int n;
        CHECK_STATUS(vgt_gp_check_feed(g, &rec, ev, &n, &err), VGT_OK, &err, "feed seq %llu", (unsigned long long)rec.seq);
        for (int i = 0; i < n && nall < 16; i++) all[nall++] = ev[i];
        if (rec.type == VGT_REC_GPFIFO_SUBMIT) {
            vgt_rec_gpfifo_submit s;
            vgt_segment segs[8];
            CHECK_STATUS(vgt_decode_gpfifo_submit(&rec, &s, segs, 8, &err), VGT_OK, &err, "decode");
            if (submits < 6)
                CHECK(s.gp_get_before == want_get[submits], "submit %d: gp_get_before %u, USERD said %u", submits,
                      s.gp_get_before, want_get[submits]);
            submits++;
        }
        if (rec.type == VGT_REC_CHANNEL_PROGRESS) {
            vgt_rec_channel_progress p;
            CHECK_STATUS(vgt_decode_channel_progress(&rec, &p, &err), VGT_OK, &err, "progress");
            CHECK(p.flags == VGT_PROGRESS_FLAG_END, "progress flags %u", p.flags);
            if (p.channel == 0xbeef0100) CHECK(p.gp_get == 3 && p.gp_put == 3, "end read GET %u PUT %u", p.gp_get, p.gp_put);
            progress++;
        }
    }
    CHECK(rc == VGT_E_EOF, "reader: %s", err.msg);
    CHECK(submits == 6 && progress == 2, "%d submits, %d CHANNEL_PROGRESS", submits, progress);
    /* USERD channel: PUT_WRAP at its 2nd submission, GET_WRAP at the 3rd, GET_PAST_PUT at the 4th; the
     * device model's: PUT_WRAP at its 2nd; its progress (GET 3, entries 3 and 0 outstanding) passes */
    static const vgt_gp_event_kind want[] = { VGT_GP_PUT_WRAP, VGT_GP_GET_WRAP, VGT_GP_GET_PAST_PUT, VGT_GP_PUT_WRAP };
    CHECK(nall == 4, "%d ring events, expected 4", nall);
    for (int i = 0; i < nall && i < 4; i++) {
        char line[320];
        vgt_gp_event_text(&all[i], line, sizeof line);
        CHECK(all[i].kind == want[i], "event %d: %s", i, line);
    }
    if (nall >= 3) {
        CHECK(all[2].get == 3 && all[2].put == 2 && all[2].prev_get == 0 && all[2].channel == 0xbeef0100,
              "GET past PUT: get %u put %u prev %u", all[2].get, all[2].put, all[2].prev_get);
        char line[320];
        vgt_gp_event_text(&all[2], line, sizeof line);
        CHECK(strstr(line, "GET_PAST_PUT: GP_GET 3 is beyond the last recorded GP_PUT 2") != NULL, "text: %s", line);
    }
    const vgt_gp_stats *st = vgt_gp_check_stats(g);
    CHECK(st->submits == 6 && st->get_read == 6 && st->progress == 2 && st->fetched_all == 1 && st->put_wraps == 2 &&
          st->get_wraps == 1 && st->get_past_put == 1, "stats: submits %llu read %llu progress %llu fetched_all %llu "
          "put_wraps %llu get_wraps %llu past %llu", (unsigned long long)st->submits, (unsigned long long)st->get_read,
          (unsigned long long)st->progress, (unsigned long long)st->fetched_all, (unsigned long long)st->put_wraps,
          (unsigned long long)st->get_wraps, (unsigned long long)st->get_past_put);
    vgt_gp_check_close(g);
    vgt_reader_close(r);
}

int main(void)
{
    char path[] = "/tmp/test_capture_gpget_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 1; }
    close(fd);
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id[] = { { "producer", "test_capture_gpget" } };
    if (vgt_writer_open_path(&w, path, &o, id, 1, &err) != VGT_OK) { fprintf(stderr, "FAIL writer: %s\n", err.msg); return 1; }
    vgt_capture *c;
    if (vgt_capture_open(&c, w, NULL, &err) != VGT_OK) { fprintf(stderr, "FAIL open: %s\n", err.msg); return 1; }
    feed(c);
    vgt_capture_finish(c);
    vgt_capture_stats st = vgt_capture_get_stats(c);
    CHECK(st.progress_records == 2, "%llu CHANNEL_PROGRESS records counted", (unsigned long long)st.progress_records);
    vgt_capture_close(c);
    CHECK_STATUS(vgt_writer_close(w, &err), VGT_OK, &err, "writer close");
    read_back(path);
    unlink(path);
    return check_finish("test_capture_gpget");
}
