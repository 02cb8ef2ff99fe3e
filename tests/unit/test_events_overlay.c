/* test_events_overlay.c: the semantic tracker's stream-write overlay (QMDs uploaded in-stream, as libcuda
 * does), its bulk entry point, lent runs remembered in place until reclaimed, macro origin and the draw
 * topology rules, on hand-built method streams.
 * Offsets (NVIDIA open-gpu-doc classes/compute/clcbc0.h, classes/3d/clcb97.h, classes/dma-copy/clc8b5.h):
 * I2M LINE_LENGTH_IN 0x180, LINE_COUNT 0x184, OFFSET_OUT_UPPER 0x188, OFFSET_OUT 0x18c, LAUNCH_DMA 0x1b0
 * (bit 0 pitch), LOAD_INLINE_DATA 0x1b4; SEND_PCAS_A 0x2b4 (QMD VA >> 8), SEND_SIGNALING_PCAS2_B 0x2c0
 * (PCAS_ACTION 9 = PREFETCH_SCHEDULE); QMD V04_00 bit ranges from clcbc0qmd.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/events.h"
#include "vgt/pushbuf.h"
#include "check.h"

#define MAX_EV 32
typedef struct sink { int n; vgt_event ev[MAX_EV]; char text[MAX_EV][512]; } sink;

static void on_event(void *ctx, const vgt_event *ev)
{
    sink *s = ctx;
    if (s->n >= MAX_EV) return;
    s->ev[s->n] = *ev;
    vgt_event_format(ev, s->text[s->n], sizeof s->text[0]);
    if (ev->kind == VGT_EV_LAUNCH || ev->kind == VGT_EV_EMPTY_DISPATCH)
        s->ev[s->n].u.launch.qmd_bytes = NULL;   /* not valid after the callback */
    s->n++;
}

/* A memory that knows nothing: every QMD byte must come from the stream. */
static vgt_status no_mem(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    (void)ctx; (void)va; (void)err;
    memset(dst, 0, len);
    *known = 0;
    return VGT_OK;
}

static vgt_sem_tracker *tracker(sink *s, int keep)
{
    memset(s, 0, sizeof *s);
    vgt_sem_config cfg = { .on_event = on_event, .ctx = s, .mem_read = no_mem, .keep_upload_bytes = keep };
    vgt_sem_tracker *t = NULL;
    vgt_error err;
    if (vgt_sem_new(&t, &cfg, &err) != VGT_OK) { fprintf(stderr, "vgt_sem_new: %s\n", err.msg); exit(1); }
    return t;
}

static uint32_t dword_no;
static vgt_method meth(uint32_t cls, uint32_t subch, uint32_t mthd, uint32_t data)
{
    vgt_method m = { .subch = subch, .cls = cls, .mthd = mthd, .data = data, .kind = VGT_HDR_INC };
    m.is_host = mthd < 0x100;
    m.pos.seq = 9; m.pos.dword = dword_no++;
    return m;
}

static void feed(vgt_sem_tracker *t, uint32_t cls, uint32_t subch, uint32_t mthd, uint32_t data)
{
    vgt_method m = meth(cls, subch, mthd, data);
    vgt_error err;
    CHECK_STATUS(vgt_sem_method(t, &m, &err), VGT_OK, &err, "method 0x%x", mthd);
}

static void qmd_v04(uint8_t *q, uint32_t grid, uint32_t block, uint64_t prog, uint64_t rel_va, uint32_t payload)
{
    memset(q, 0, 384);
    vgt_qmd_set_bits(q, 384, 583, 580, 4);            /* QMD_MAJOR_VERSION 4 */
    vgt_qmd_set_bits(q, 384, 1055, 1024, grid);       /* GRID_WIDTH */
    vgt_qmd_set_bits(q, 384, 1071, 1056, 1);          /* GRID_HEIGHT */
    vgt_qmd_set_bits(q, 384, 1103, 1088, 1);          /* GRID_DEPTH */
    vgt_qmd_set_bits(q, 384, 1167, 1152, block);      /* CTA_THREAD_DIMENSION0 */
    vgt_qmd_set_bits(q, 384, 1183, 1168, 1);          /* CTA_THREAD_DIMENSION1 */
    vgt_qmd_set_bits(q, 384, 1199, 1184, 1);          /* CTA_THREAD_DIMENSION2 */
    vgt_qmd_set_bits(q, 384, 1247, 1216, prog & 0xffffffffu);
    vgt_qmd_set_bits(q, 384, 1272, 1248, prog >> 32);
    vgt_qmd_set_bits(q, 384, 320, 320, 1);            /* RELEASE_ENABLE(0) */
    vgt_qmd_set_bits(q, 384, 322, 321, 1);            /* one word */
    vgt_qmd_set_bits(q, 384, 671, 640, rel_va & 0xffffffffu);
    vgt_qmd_set_bits(q, 384, 696, 672, rel_va >> 32);
    vgt_qmd_set_bits(q, 384, 735, 704, payload);
}

static uint32_t le32(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The methods that start an I2M upload of len bytes to va on the compute subchannel (class cls, sc). */
static void upload_start(vgt_sem_tracker *t, uint32_t cls, uint32_t sc, uint64_t va, uint32_t len)
{
    feed(t, cls, sc, 0x188, (uint32_t)(va >> 32));
    feed(t, cls, sc, 0x18c, (uint32_t)va);
    feed(t, cls, sc, 0x180, len);
    feed(t, cls, sc, 0x184, 1);
    feed(t, cls, sc, 0x1b0, 0x41);   /* pitch, SYSMEMBAR_DISABLE: what libcuda writes (corpus/vadd.vgt) */
}

/* I2M upload of len bytes to va on the compute subchannel: dword by dword, or one non-increasing run. */
static void upload(vgt_sem_tracker *t, uint64_t va, const uint8_t *bytes, uint32_t len, int bulk)
{
    const uint32_t cls = 0xCBC0, sc = 1;
    upload_start(t, cls, sc, va, len);
    uint32_t n = (len + 3) / 4;
    uint8_t padded[1024] = { 0 };
    memcpy(padded, bytes, len);
    if (bulk) {
        vgt_method m = meth(cls, sc, 0x1b4, le32(padded));
        m.kind = VGT_HDR_NONINC;
        dword_no += n - 1;
        vgt_error err;
        CHECK_STATUS(vgt_sem_noninc_run(t, &m, padded, n, 0, &err), VGT_OK, &err, "bulk run of %u dwords", n);
    } else {
        for (uint32_t i = 0; i < n; i++) feed(t, cls, sc, 0x1b4, le32(padded + 4 * i));
    }
}

/* The same upload as lent runs of the caller's bytes (len a multiple of 4), runs dwords each (0: one run):
 * remembered in place, in one piece or several. */
static void upload_lent(vgt_sem_tracker *t, uint64_t va, const uint8_t *bytes, uint32_t len, uint32_t runs)
{
    const uint32_t cls = 0xCBC0, sc = 1;
    upload_start(t, cls, sc, va, len);
    for (uint32_t at = 0; at < len / 4;) {
        uint32_t n = runs && len / 4 - at > runs ? runs : len / 4 - at;
        vgt_method m = meth(cls, sc, 0x1b4, le32(bytes + 4 * at));
        m.kind = VGT_HDR_NONINC;
        dword_no += n - 1;
        vgt_error err;
        CHECK_STATUS(vgt_sem_noninc_run(t, &m, bytes + 4 * at, n, 1, &err), VGT_OK, &err, "lent run of %u dwords", n);
        at += n;
    }
}

static void launch(vgt_sem_tracker *t, uint64_t qmd_va)
{
    feed(t, 0xCBC0, 1, 0x2b4, (uint32_t)(qmd_va >> 8));
    feed(t, 0xCBC0, 1, 0x2c0, 0x9);
}

static void test_qmd_uploaded_in_stream(int bulk)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);   /* census settings: upload bytes not kept */
    uint8_t q[384];
    const uint64_t qva = 0x204e0c000ull;
    qmd_v04(q, 4096, 256, 0x7f4f637a0000ull, 0x204637f34ull, 6);
    upload(t, qva, q, 384, bulk);
    CHECK(s.n == 1 && s.ev[0].kind == VGT_EV_UPLOAD && s.ev[0].u.upload.length == 384, "upload first: %d events", s.n);
    CHECK(s.ev[0].pos.dword == dword_no - 1, "upload completed by its last dword: %u vs %u", s.ev[0].pos.dword, dword_no - 1);
    launch(t, qva);
    CHECK(s.n == 3, "launch + its QMD release: %d events", s.n);
    const vgt_ev_launch *l = &s.ev[1].u.launch;
    CHECK(s.ev[1].kind == VGT_EV_LAUNCH && l->decoded && l->qmd_known && l->qmd.version == VGT_QMD_V04_00,
          "QMD from the stream: %s", s.text[1]);
    CHECK(l->qmd.grid[0] == 4096 && l->qmd.grid[1] == 1 && l->qmd.block[0] == 256 &&
          l->qmd.program_va == 0x7f4f637a0000ull, "grid/block/program: %s", s.text[1]);
    CHECK(s.ev[2].kind == VGT_EV_SEM_RELEASE && s.ev[2].u.sem.source == VGT_SEM_SRC_QMD &&
          s.ev[2].u.sem.va == 0x204637f34ull && s.ev[2].u.sem.payload == 6, "release: %s", s.text[2]);

    /* newest wins: a second upload over the same QMD changes the grid */
    qmd_v04(q, 7, 32, 0x1000, 0x2000, 1);
    upload(t, qva, q, 384, bulk);
    launch(t, qva);
    CHECK(s.n == 6 && s.ev[4].u.launch.decoded && s.ev[4].u.launch.qmd.grid[0] == 7 && s.ev[4].u.launch.qmd.block[0] == 32,
          "re-uploaded QMD: %s", s.text[4]);

    /* a partial overwrite: only the grid dword (bits 1055:1024, bytes 128..131) */
    uint8_t g[4] = { 9, 0, 0, 0 };
    upload(t, qva + 128, g, 4, bulk);
    launch(t, qva);
    CHECK(s.n == 9 && s.ev[7].u.launch.qmd.grid[0] == 9 && s.ev[7].u.launch.qmd.block[0] == 32 && s.ev[7].u.launch.qmd_known,
          "patched QMD: %s", s.text[7]);

    /* a block-linear upload over it: its bytes are not known; the QMD reads as unknown, not stale */
    feed(t, 0xCBC0, 1, 0x188, (uint32_t)(qva >> 32)); feed(t, 0xCBC0, 1, 0x18c, (uint32_t)qva);
    feed(t, 0xCBC0, 1, 0x180, 16); feed(t, 0xCBC0, 1, 0x184, 1);
    feed(t, 0xCBC0, 1, 0x1b0, 0x40);   /* DST_MEMORY_LAYOUT block-linear */
    for (int i = 0; i < 4; i++) feed(t, 0xCBC0, 1, 0x1b4, 0);
    launch(t, qva);
    CHECK(s.n >= 11 && s.ev[10].kind == VGT_EV_LAUNCH && !s.ev[10].u.launch.qmd_known, "hole hides the old QMD: %s",
          s.text[10]);
    vgt_sem_free(t);

    /* without the overlay the same stream leaves the QMD unknown (the corpus before this change) */
    memset(&s, 0, sizeof s);
    vgt_sem_config cfg = { .on_event = on_event, .ctx = &s, .mem_read = no_mem, .no_overlay = 1 };
    vgt_error err;
    CHECK_STATUS(vgt_sem_new(&t, &cfg, &err), VGT_OK, &err, "new");
    qmd_v04(q, 4096, 256, 0x7f4f637a0000ull, 0x204637f34ull, 6);
    upload(t, qva, q, 384, bulk);
    launch(t, qva);
    CHECK(s.n == 2 && !s.ev[1].u.launch.decoded, "no overlay: %s", s.text[1]);
    vgt_sem_free(t);
}

/* Many writes past the overlay's bounds: old bytes are forgotten, recent ones still read back. */
static void test_overlay_bounds(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);
    uint8_t buf[1024];
    for (uint32_t i = 0; i < 3000; i++) {   /* 3000 x 1 KiB through a 1 MiB overlay */
        memset(buf, (int)(i & 0xff), sizeof buf);
        upload(t, 0x100000000ull + 1024ull * i, buf, sizeof buf, 1);
    }
    uint8_t got[8];
    uint64_t known = 0;
    vgt_error err;
    CHECK(vgt_sem_mem_read(t, 0x100000000ull + 1024ull * 2999 + 100, got, 8, &known, &err) == VGT_OK && known == 8 &&
          got[0] == (2999 & 0xff), "newest bytes kept: known %llu byte 0x%x", (unsigned long long)known, got[0]);
    CHECK(vgt_sem_mem_read(t, 0x100000000ull, got, 8, &known, &err) == VGT_OK && known == 0, "oldest forgotten: %llu",
          (unsigned long long)known);
    /* a read across a known/unknown boundary counts only the known bytes */
    CHECK(vgt_sem_mem_read(t, 0x100000000ull + 1024ull * 3000 - 4, got, 8, &known, &err) == VGT_OK && known == 4,
          "boundary: %llu", (unsigned long long)known);
    vgt_sem_free(t);
}

/* Uploads of lent runs (vgt_sem_noninc_run with lent 1) read as copied ones, point at the caller's bytes until
 * vgt_sem_reclaim names them, and read the same once those bytes are reclaimed, overwritten and freed. */
static int same_reads(vgt_sem_tracker *a, vgt_sem_tracker *b, uint64_t va, uint32_t len)
{
    uint8_t x[512], y[512];
    vgt_error err;
    for (uint32_t at = 0; at < len; at += 256) {
        uint64_t ka = 0, kb = 0;
        if (vgt_sem_mem_read(a, va + at, x, 256, &ka, &err) != VGT_OK || vgt_sem_mem_read(b, va + at, y, 256, &kb, &err) != VGT_OK ||
            ka != kb || memcmp(x, y, 256))
            return 0;
    }
    return 1;
}

static void test_lent_runs(void)
{
    enum { N = 40, LEN = 1000 };
    const uint64_t base = 0x200000000ull;
    sink s1, s2;
    vgt_sem_tracker *lent = tracker(&s1, 0), *copied = tracker(&s2, 0);
    uint8_t *bufs[N];
    for (int i = 0; i < N; i++) {   /* overlapping: each upload hides part of the one before */
        bufs[i] = malloc(LEN);
        if (!bufs[i]) return;
        for (int k = 0; k < LEN; k++) bufs[i][k] = (uint8_t)(i * 31 + k);
        upload_lent(lent, base + 600ull * i, bufs[i], LEN, i % 3 == 0 ? 0 : i % 3 == 1 ? 64 : 3);   /* 1, 4 or 84 runs */
        upload(copied, base + 600ull * i, bufs[i], LEN, 1);
    }
    CHECK(same_reads(lent, copied, base, 600 * N + LEN), "lent uploads read as copied ones");
    uint8_t got[4];
    uint64_t known = 0;
    vgt_error err;
    bufs[N - 1][LEN - 1] ^= 0xff;   /* pointed at, not copied: the change shows */
    CHECK(vgt_sem_mem_read(lent, base + 600ull * (N - 1) + LEN - 1, got, 1, &known, &err) == VGT_OK && known == 1 &&
              got[0] == bufs[N - 1][LEN - 1], "the newest upload is the caller's bytes");
    bufs[N - 1][LEN - 1] ^= 0xff;
    for (int i = 0; i < N; i++) {   /* given back oldest first, as a walk does */
        vgt_sem_reclaim(lent, bufs[i], LEN);
        memset(bufs[i], 0xee, LEN);
        free(bufs[i]);
        CHECK(same_reads(lent, copied, base, 600 * N + LEN), "after %d reclaimed", i + 1);
    }
    /* an upload whose first runs' bytes go before its last run came: copied at the reclaim */
    sink s3;
    vgt_sem_tracker *t3 = tracker(&s3, 0);
    uint8_t *first = malloc(512), second[512];
    if (!first) return;
    for (int k = 0; k < 512; k++) first[k] = (uint8_t)(k ^ 0x5a), second[k] = (uint8_t)(k * 3);
    const uint32_t cls = 0xCBC0, sc = 1;
    feed(t3, cls, sc, 0x188, 0x3);
    feed(t3, cls, sc, 0x18c, 0);
    feed(t3, cls, sc, 0x180, 1024);
    feed(t3, cls, sc, 0x184, 1);
    feed(t3, cls, sc, 0x1b0, 0x41);
    vgt_method m = meth(cls, sc, 0x1b4, le32(first));
    m.kind = VGT_HDR_NONINC;
    CHECK_STATUS(vgt_sem_noninc_run(t3, &m, first, 128, 1, &err), VGT_OK, &err, "first half");
    vgt_sem_reclaim(t3, first, 512);
    memset(first, 0xee, 512);
    free(first);
    m = meth(cls, sc, 0x1b4, le32(second));
    m.kind = VGT_HDR_NONINC;
    CHECK_STATUS(vgt_sem_noninc_run(t3, &m, second, 128, 1, &err), VGT_OK, &err, "second half");
    CHECK(s3.n == 1 && s3.ev[0].kind == VGT_EV_UPLOAD && s3.ev[0].u.upload.complete, "one complete upload");
    uint8_t all[1024];
    CHECK(vgt_sem_mem_read(t3, 0x300000000ull, all, 1024, &known, &err) == VGT_OK && known == 1024, "known");
    int ok = 1;
    for (int k = 0; k < 512; k++) ok &= all[k] == (uint8_t)(k ^ 0x5a) && all[512 + k] == (uint8_t)(k * 3);
    CHECK(ok, "the first half copied when its bytes went, the second in place");
    vgt_sem_free(t3);
    vgt_sem_free(lent);
    vgt_sem_free(copied);
}

/* Copy-engine fill and copy of overlay bytes (C8B5: OFFSET_IN 0x400/0x404, OUT 0x408/0x40c, LINE_LENGTH_IN 0x418,
 * SET_REMAP_CONST_A 0x700, SET_REMAP_COMPONENTS 0x708, LAUNCH_DMA 0x300: pitch 7/8, REMAP 10). */
static void test_copy_into_overlay(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);
    uint8_t q[384];
    qmd_v04(q, 33, 64, 0x5000, 0, 0);
    upload(t, 0x7000000000ull, q, 384, 0);
    const uint32_t ce = 0xC8B5;
    feed(t, ce, 4, 0x400, 0x70); feed(t, ce, 4, 0x404, 0);          /* from the uploaded QMD */
    feed(t, ce, 4, 0x408, 0x71); feed(t, ce, 4, 0x40c, 0);
    feed(t, ce, 4, 0x418, 384);
    feed(t, ce, 4, 0x300, 2u | (1u << 7) | (1u << 8));   /* NON_PIPELINED: a transfer (NONE moves nothing) */
    launch(t, 0x7100000000ull);
    CHECK(s.n >= 3 && s.ev[2].kind == VGT_EV_LAUNCH && s.ev[2].u.launch.decoded && s.ev[2].u.launch.qmd.grid[0] == 33,
          "QMD copied by the copy engine: %s", s.ev[2].kind == VGT_EV_LAUNCH ? s.text[2] : "?");
    /* a 4-byte fill of 0x11111111 at the copy's grid dword */
    feed(t, ce, 4, 0x408, 0x71); feed(t, ce, 4, 0x40c, 128);
    feed(t, ce, 4, 0x418, 1);
    feed(t, ce, 4, 0x700, 0x11111111);
    feed(t, ce, 4, 0x708, (3u << 16) | 4u);   /* COMPONENT_SIZE four bytes, one component, DST_X = CONST_A */
    feed(t, ce, 4, 0x300, 2u | (1u << 7) | (1u << 8) | (1u << 10));
    launch(t, 0x7100000000ull);
    int last = s.n - 1;
    while (last > 0 && s.ev[last].kind != VGT_EV_LAUNCH) last--;
    CHECK(s.ev[last].kind == VGT_EV_LAUNCH && s.ev[last].u.launch.qmd.grid[0] == 0x11111111, "filled grid: %s",
          s.text[last]);
    vgt_sem_free(t);
}

/* A copy's destination hides what the overlay held wherever the copy may have written: a block-linear
 * destination anywhere in its surface (SET_DST_BLOCK_SIZE 0x70c, SET_DST_WIDTH/HEIGHT/DEPTH 0x710-0x718,
 * DST_ORIGIN_X/Y 0x74c/0x750: here a rectangle at X 64, the surface's second GOB column, i.e. its second
 * block at byte 1024), and a pitch destination walked upwards by a negative PITCH_OUT (0x414). */
static int qmd_known_after(sink *s, vgt_sem_tracker *t, uint64_t qva)
{
    launch(t, qva);
    int last = s->n - 1;
    while (last > 0 && s->ev[last].kind != VGT_EV_LAUNCH) last--;
    return s->ev[last].kind == VGT_EV_LAUNCH && s->ev[last].u.launch.qmd_known;
}

static void test_copy_hides_what_it_may_write(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);
    const uint32_t ce = 0xC8B5;
    uint8_t q[384];
    qmd_v04(q, 5, 32, 0x5000, 0, 0);
    const uint64_t surf = 0x7200000000ull;
    upload(t, surf + 1024, q, 384, 0);
    CHECK(qmd_known_after(&s, t, surf + 1024), "the uploaded QMD is known");
    feed(t, ce, 4, 0x70c, 1u << 4 | 1u << 12);    /* blocks 2 GOBs tall, GOB_HEIGHT_FERMI_8 */
    feed(t, ce, 4, 0x710, 128); feed(t, ce, 4, 0x714, 16); feed(t, ce, 4, 0x718, 1);
    feed(t, ce, 4, 0x74c, 64); feed(t, ce, 4, 0x750, 0);
    feed(t, ce, 4, 0x400, 0x70); feed(t, ce, 4, 0x404, 0);
    feed(t, ce, 4, 0x408, 0x72); feed(t, ce, 4, 0x40c, 0);
    feed(t, ce, 4, 0x418, 16); feed(t, ce, 4, 0x41c, 1);
    feed(t, ce, 4, 0x300, 2u | (1u << 7));        /* pitch source, block-linear destination */
    CHECK(!qmd_known_after(&s, t, surf + 1024), "a block-linear copy into the surface left the QMD known");

    const uint64_t rows = 0x7300000000ull;
    upload(t, rows, q, 384, 0);
    CHECK(qmd_known_after(&s, t, rows), "the second uploaded QMD is known");
    feed(t, ce, 4, 0x408, 0x73); feed(t, ce, 4, 0x40c, 3 * 256);   /* the last of 4 rows of 256 bytes */
    feed(t, ce, 4, 0x410, 64); feed(t, ce, 4, 0x414, (uint32_t)-256);
    feed(t, ce, 4, 0x418, 64); feed(t, ce, 4, 0x41c, 4);
    feed(t, ce, 4, 0x300, 2u | (1u << 7) | (1u << 8) | (1u << 9));
    CHECK(!qmd_known_after(&s, t, rows), "a copy walking upwards over the QMD left it known");
    vgt_sem_free(t);
}

/* The bulk entry point gives the same events as dword-by-dword feeding, for any method. */
static void test_bulk_equals_single(void)
{
    sink a, b;
    vgt_sem_tracker *ta = tracker(&a, 1), *tb = tracker(&b, 1);
    uint8_t data[64];
    for (int i = 0; i < 64; i++) data[i] = (uint8_t)(i * 7);
    /* an upload of 30 bytes, then more LOAD_INLINE_DATA than it needs in the same run */
    for (int k = 0; k < 2; k++) {
        vgt_sem_tracker *t = k ? tb : ta;
        dword_no = 0;
        feed(t, 0xA140, 2, 0x188, 0); feed(t, 0xA140, 2, 0x18c, 0x1000); feed(t, 0xA140, 2, 0x180, 30);
        feed(t, 0xA140, 2, 0x184, 1); feed(t, 0xA140, 2, 0x1b0, 1);
        if (k) {
            vgt_method m = meth(0xA140, 2, 0x1b4, le32(data));
            vgt_error err;
            CHECK_STATUS(vgt_sem_noninc_run(t, &m, data, 16, 0, &err), VGT_OK, &err, "bulk");
        } else {
            for (int i = 0; i < 16; i++) feed(t, 0xA140, 2, 0x1b4, le32(data + 4 * i));
        }
        /* a host SEM_EXECUTE run (release) through the bulk path of a non-upload method */
        feed(t, 0xC86F, 0, 0x5c, 0x2000); feed(t, 0xC86F, 0, 0x60, 0x70); feed(t, 0xC86F, 0, 0x64, 5);
        uint8_t rel[8] = { 1, 0, 0, 0, 1, 0, 0, 0 };   /* SEM_EXECUTE OPERATION RELEASE, twice */
        vgt_method m = meth(0xC86F, 0, 0x6c, 1);
        m.pos.dword = 100;
        vgt_error err;
        if (k) CHECK(vgt_sem_noninc_run(t, &m, rel, 2, 0, &err) == VGT_OK, "bulk host");
        else { vgt_sem_method(t, &m, &err); m.pos.dword = 101; vgt_sem_method(t, &m, &err); }
        vgt_sem_flush(t);
    }
    CHECK(a.n == b.n && a.n == 3, "same event count: %d vs %d", a.n, b.n);
    for (int i = 0; i < a.n && i < b.n; i++)
        CHECK(!strcmp(a.text[i], b.text[i]) && a.ev[i].pos.dword == b.ev[i].pos.dword, "event %d: '%s' @%u vs '%s' @%u", i,
              a.text[i], a.ev[i].pos.dword, b.text[i], b.ev[i].pos.dword);
    vgt_sem_free(ta);
    vgt_sem_free(tb);
}

/* Macro origin, and the topology of *_BEGIN_END draws (SET_DRAW_CONTROL_A 0x260 / _B 0x264,
 * SET_PRIMITIVE_TOPOLOGY_CONTROL 0x1948, SET_PRIMITIVE_TOPOLOGY 0x1970, DRAW_VERTEX_ARRAY_BEGIN_END_A/B
 * 0x270/0x274) as the Vulkan driver issues them (corpus/vk_triangle.vgt). */
static void test_macro_draw_topology(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);
    const uint32_t g = 0xCB97;
    feed(t, g, 0, 0x260, 0x600);   /* TOPOLOGY POINTS, INSTANCE_ITERATE_ENABLE, IGNORE_GLOBAL_BASE_VERTEX_INDEX */
    feed(t, g, 0, 0x264, 1);
    feed(t, g, 0, 0x270, 0); feed(t, g, 0, 0x274, 3);
    vgt_sem_flush(t);
    CHECK(s.n == 1 && s.ev[0].u.draw.topology == 0 && s.ev[0].u.draw.count == 3 && s.ev[0].origin == VGT_ORIGIN_STREAM,
          "topology from SET_DRAW_CONTROL_A: %s", s.text[0]);
    feed(t, g, 0, 0x1948, 1);      /* USE_SEPARATE_TOPOLOGY_STATE */
    vgt_sem_begin_macro(t, 77);
    feed(t, g, 0, 0x1970, 4);      /* TRIANGLELIST */
    feed(t, g, 0, 0x264, 5);
    feed(t, g, 0, 0x270, 0); feed(t, g, 0, 0x274, 3);
    vgt_sem_end_macro(t);
    vgt_sem_flush(t);
    CHECK(s.n == 2 && s.ev[1].u.draw.topology == 4 && s.ev[1].u.draw.instance_count == 5 &&
          s.ev[1].origin == VGT_ORIGIN_MACRO && s.ev[1].macro_call == 77 && strstr(s.text[1], "[macro call 77]"),
          "separate topology, instances, macro origin: %s", s.text[1]);
    feed(t, g, 0, 0x1618, 0x1);    /* BEGIN OP LINES: the separate state still rules */
    feed(t, g, 0, 0xd74, 0); feed(t, g, 0, 0xd78, 6);
    feed(t, g, 0, 0x1614, 0);
    vgt_sem_flush(t);
    CHECK(s.n == 3 && s.ev[2].u.draw.topology == 4 && s.ev[2].origin == VGT_ORIGIN_STREAM, "BEGIN under override: %s",
          s.text[2]);
    vgt_sem_free(t);
}

/* A push buffer decoded with and without the bulk path (pushbuf noninc_run -> vgt_sem_noninc_run) gives
 * the same events at the same positions. Headers (dev_ram / clc86f.h): SEC_OP 31:29 (1 INC, 3 NONINC,
 * 5 ONEINC), COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 = method >> 2. */
typedef struct pbctx { vgt_sem_tracker *t; int bulk_calls; } pbctx;
static int pb_method(void *ctx, const vgt_method *m)
{
    vgt_error err;
    return vgt_sem_method(((pbctx *)ctx)->t, m, &err) != VGT_OK;
}
static int pb_run(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    vgt_error err;
    ((pbctx *)ctx)->bulk_calls++;
    return vgt_sem_noninc_run(((pbctx *)ctx)->t, m, data, count, 0, &err) != VGT_OK;
}

static uint32_t hdr(unsigned sec, unsigned count, unsigned subch, unsigned mthd)
{
    return (uint32_t)sec << 29 | (uint32_t)count << 16 | (uint32_t)subch << 13 | (mthd >> 2);
}

static void test_pushbuf_bulk_path(void)
{
    uint32_t pb[512];
    unsigned n = 0;
    uint8_t q[384];
    qmd_v04(q, 12, 96, 0x9000, 0x8000, 3);
    pb[n++] = hdr(1, 1, 1, 0); pb[n++] = 0xCBC0;                       /* SET_OBJECT compute on subchannel 1 */
    pb[n++] = hdr(1, 4, 1, 0x180); pb[n++] = 384; pb[n++] = 1; pb[n++] = 0x2; pb[n++] = 0x4e0c000;
    pb[n++] = hdr(5, 97, 1, 0x1b0); pb[n++] = 0x41;                    /* ONEINC: LAUNCH_DMA, then the QMD */
    for (unsigned i = 0; i < 96; i++) pb[n++] = le32(q + 4 * i);
    pb[n++] = hdr(1, 1, 1, 0x2b4); pb[n++] = 0x204e0c0;               /* SEND_PCAS_A */
    pb[n++] = hdr(1, 1, 1, 0x2c0); pb[n++] = 0x9;                     /* SEND_SIGNALING_PCAS2_B */
    pb[n++] = hdr(1, 4, 1, 0x180); pb[n++] = 10; pb[n++] = 1; pb[n++] = 0x2; pb[n++] = 0x1000;
    pb[n++] = hdr(1, 1, 1, 0x1b0); pb[n++] = 0x41;
    pb[n++] = hdr(3, 5, 1, 0x1b4);                                      /* NONINC: 3 dwords of data + 2 extra */
    for (unsigned i = 0; i < 5; i++) pb[n++] = 0x01020304u * (i + 1);
    uint8_t bytes[sizeof pb];
    for (unsigned i = 0; i < n; i++) { bytes[4 * i] = (uint8_t)pb[i]; bytes[4 * i + 1] = (uint8_t)(pb[i] >> 8);
                                       bytes[4 * i + 2] = (uint8_t)(pb[i] >> 16); bytes[4 * i + 3] = (uint8_t)(pb[i] >> 24); }
    sink a, b;
    pbctx ca = { tracker(&a, 1), 0 }, cbk = { tracker(&b, 1), 0 };
    for (int k = 0; k < 2; k++) {
        pbctx *c = k ? &cbk : &ca;
        vgt_pb_state st;
        vgt_pb_state_init(&st, 0xC86F);
        vgt_pb_callbacks cb = { .method = pb_method, .ctx = c, .noninc_run = k ? pb_run : NULL };
        vgt_error err;
        vgt_mpos pos = { 5, 0, 0 };
        CHECK_STATUS(vgt_pb_decode(&st, bytes, 4 * n, pos, &cb, &err), VGT_OK, &err, "decode");
        vgt_sem_flush(c->t);
    }
    CHECK(cbk.bulk_calls == 2, "the ONEINC tail and the NONINC run went in bulk: %d calls", cbk.bulk_calls);
    CHECK(a.n == 4 && b.n == 4, "events: %d / %d", a.n, b.n);
    for (int i = 0; i < a.n && i < b.n; i++)
        CHECK(!strcmp(a.text[i], b.text[i]) && a.ev[i].pos.dword == b.ev[i].pos.dword, "event %d: '%s' @%u vs '%s' @%u",
              i, a.text[i], a.ev[i].pos.dword, b.text[i], b.ev[i].pos.dword);
    CHECK(b.n > 1 && b.ev[1].kind == VGT_EV_LAUNCH && b.ev[1].u.launch.qmd.grid[0] == 12, "launch: %s", b.text[1]);
    vgt_sem_free(ca.t);
    vgt_sem_free(cbk.t);
}

/* Hostile streams concentrated on what the overlay and the bulk path see (I2M, copy, launch methods,
 * small and huge sizes, runs of any length): never a crash, an over-read or a failure (run under ASan in
 * a sanitizer build). Reads through vgt_sem_mem_read at random places must count no more than asked. */
static void test_overlay_noise(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);
    static const uint32_t mthds[] = { 0x180, 0x184, 0x188, 0x18c, 0x190, 0x1b0, 0x1b4, 0x2b4, 0x2c0, 0x318, 0x31c,
                                      0x320, 0x400, 0x404, 0x408, 0x40c, 0x410, 0x414, 0x418, 0x41c, 0x300, 0x700,
                                      0x708 };
    static const uint32_t classes[] = { 0xCBC0, 0xA140, 0xC8B5, 0xCB97 };
    uint8_t run[4096];
    srand(5);
    for (int i = 0; i < 100000; i++) {
        vgt_method m = meth(classes[(unsigned)rand() % 4], (unsigned)rand() % 8, mthds[(unsigned)rand() % 23], 0);
        unsigned r = (unsigned)rand() % 8;
        m.data = r == 0 ? (uint32_t)rand() : r < 4 ? (unsigned)rand() % 64 : r < 6 ? 0x41 : 0x7f000000u + (unsigned)rand() % 4096;
        if (m.mthd == 0x1b4 && rand() % 2) {
            uint32_t n = 1 + (unsigned)rand() % 1024;
            for (uint32_t k = 0; k < 4 * n; k++) run[k] = (uint8_t)rand();
            vgt_error err;
            if (vgt_sem_noninc_run(t, &m, run, n, 0, &err) != VGT_OK) { CHECK(0, "bulk failed: %s", err.msg); break; }
        } else {
            vgt_error err;
            if (vgt_sem_method(t, &m, &err) != VGT_OK) { CHECK(0, "method failed: %s", err.msg); break; }
        }
        if (i % 1000 == 0) {
            uint8_t got[700];
            uint64_t known = 0;
            uint32_t len = 1 + (unsigned)rand() % sizeof got;
            vgt_error err;
            CHECK(vgt_sem_mem_read(t, 0x7f000000u + (unsigned)rand() % 8192, got, len, &known, &err) == VGT_OK &&
                  known <= len, "read: known %llu of %u", (unsigned long long)known, len);
            vgt_sem_flush(t);
            s.n = 0;
        }
    }
    vgt_sem_free(t);
}

/* A pitched upload whose lines overlap (PITCH_OUT 0x190 below LINE_LENGTH_IN): line i lands at
 * OFFSET_OUT + i * PITCH_OUT, so with pitch 0 every line rewrites the same bytes and the last one stays;
 * the bytes past the first line were never written. Same for a pitch between 0 and the line length. */
static void test_overlapping_lines(void)
{
    const uint32_t cls = 0xCBC0, sc = 1;
    const uint64_t va = 0x30000000ull;
    for (uint32_t pitch = 0; pitch <= 4; pitch += 4) {
        sink s; vgt_sem_tracker *t = tracker(&s, 0);
        feed(t, cls, sc, 0x188, 0); feed(t, cls, sc, 0x18c, (uint32_t)va);
        feed(t, cls, sc, 0x180, 8); feed(t, cls, sc, 0x184, 2); feed(t, cls, sc, 0x190, pitch);
        feed(t, cls, sc, 0x1b0, 0x41);   /* pitch layout */
        uint8_t data[16];
        for (int i = 0; i < 16; i++) data[i] = (uint8_t)(i + 1);
        for (int i = 0; i < 4; i++) feed(t, cls, sc, 0x1b4, le32(data + 4 * i));
        CHECK(s.n == 1 && s.ev[0].kind == VGT_EV_UPLOAD && s.ev[0].u.upload.complete, "pitch %u: upload: %d events",
              pitch, s.n);
        uint8_t got[16]; uint64_t known = 0; vgt_error err;
        CHECK_STATUS(vgt_sem_mem_read(t, va, got, sizeof got, &known, &err), VGT_OK, &err, "read back");
        /* line 0 at va, line 1 at va + pitch over it: bytes 0..pitch-1 from line 0, then line 1 */
        uint8_t want[16] = {0};
        memcpy(want, data, 8);
        memcpy(want + pitch, data + 8, 8);
        CHECK(known == pitch + 8, "pitch %u: %llu bytes known, expected %u", pitch, (unsigned long long)known, pitch + 8);
        CHECK(memcmp(got, want, pitch + 8) == 0, "pitch %u: bytes %02x %02x .. %02x, expected %02x %02x .. %02x", pitch,
              got[0], got[1], got[pitch + 7], want[0], want[1], want[pitch + 7]);
        vgt_sem_free(t);
    }
}

/* LAUNCH_DMA with DATA_TRANSFER_TYPE NONE (1:0 = 0, clc8b5.h) moves no bytes: it only releases its
 * semaphore. The offsets and line length left from an earlier copy must not make it a copy of those
 * bytes (bytes written 0), nor hide what the stream wrote at the stale destination. libcuda sends one
 * after most copies (corpus/vadd.vgt: 115 of 218 LAUNCH_DMA). */
static void test_copy_without_transfer(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);
    uint8_t q[384];
    qmd_v04(q, 21, 64, 0x5000, 0, 0);
    const uint64_t qva = 0x7200000000ull;
    const uint32_t ce = 0xC8B5;
    feed(t, ce, 4, 0x400, 0x73); feed(t, ce, 4, 0x404, 0);
    feed(t, ce, 4, 0x408, 0x72); feed(t, ce, 4, 0x40c, 0);   /* a stale destination: the QMD below */
    feed(t, ce, 4, 0x418, 4096);
    upload(t, qva, q, 384, 0);
    feed(t, ce, 4, 0x240, 0x74); feed(t, ce, 4, 0x244, 0x10); feed(t, ce, 4, 0x248, 5);
    feed(t, ce, 4, 0x300, (1u << 2) | (1u << 3) | (1u << 7) | (1u << 8));   /* NONE, flush, release one word */
    CHECK(s.n == 3 && s.ev[1].kind == VGT_EV_EMPTY_DMA && s.ev[2].kind == VGT_EV_SEM_RELEASE,
          "empty DMA + release: %d events", s.n);
    CHECK(s.ev[1].u.copy.transfer_type == 0 && s.ev[1].u.copy.bytes == 0, "no bytes moved: %s", s.text[1]);
    CHECK(s.ev[2].u.sem.va == 0x7400000010ull && s.ev[2].u.sem.payload == 5, "release: %s", s.text[2]);
    launch(t, qva);
    CHECK(s.n >= 4 && s.ev[3].kind == VGT_EV_LAUNCH && s.ev[3].u.launch.qmd_known && s.ev[3].u.launch.qmd.grid[0] == 21,
          "QMD under a semaphore-only LAUNCH_DMA's stale destination: %s", s.n >= 4 ? s.text[3] : "?");
    vgt_sem_free(t);
}

/* vgt_sem_skip_launches (the replay's quiet work extractor): launches deliver nothing and read nothing, and
 * the tracker's state moves as it would: an inline QMD still lands in the overlay (a later launch by address
 * of it finds its bytes), a skipped launch by address consumes its SEND_PCAS_A (a signal after it launches
 * nothing), uploads are still delivered. */
static void test_skip_launches(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, 0);
    uint8_t q[384];
    const uint64_t qva = 0x204e0c000ull, iva = 0x7f00200000ull;
    qmd_v04(q, 7, 32, 0x7f4f637a0000ull, 0x204637f34ull, 5);
    vgt_sem_skip_launches(t, 1);
    upload(t, qva, q, 384, 1);
    launch(t, qva);
    CHECK(s.n == 1 && s.ev[0].kind == VGT_EV_UPLOAD, "skipped: the upload only, %d events", s.n);
    qmd_v04(q, 9, 64, 0x7f4f637a0000ull, 0x204637f38ull, 6);
    feed(t, 0xCBC0, 1, 0x318, (1u << 30) | (uint32_t)(iva >> 40));   /* 384-byte inline QMD at iva */
    feed(t, 0xCBC0, 1, 0x31c, (uint32_t)(iva >> 8));
    for (unsigned i = 0; i < 96; i++) feed(t, 0xCBC0, 1, 0x320 + 4 * i, le32(q + 4 * i));
    CHECK_EQ_U64(s.n, 1, "a skipped inline launch delivers nothing");
    uint8_t back[384];
    uint64_t known = 0;
    vgt_error err;
    CHECK_STATUS(vgt_sem_mem_read(t, iva, back, sizeof back, &known, &err), VGT_OK, &err, "read the inline QMD back");
    CHECK(known == 384 && !memcmp(back, q, 384), "the skipped inline QMD is in the overlay: %llu bytes known",
          (unsigned long long)known);
    vgt_sem_skip_launches(t, 0);
    feed(t, 0xCBC0, 1, 0x2c0, 0x9);
    CHECK_EQ_U64(s.n, 1, "the skipped launch took its SEND_PCAS_A with it");
    launch(t, iva);
    CHECK(s.n == 3 && s.ev[1].kind == VGT_EV_LAUNCH && s.ev[1].u.launch.decoded && s.ev[1].u.launch.qmd_known &&
              s.ev[1].u.launch.qmd.grid[0] == 9 && s.ev[1].u.launch.qmd.block[0] == 64 && s.ev[2].kind == VGT_EV_SEM_RELEASE,
          "delivered again, the QMD from the overlay: %d events, %s", s.n, s.text[1]);
    vgt_sem_free(t);
}

int main(void)
{
    test_skip_launches();
    test_copy_without_transfer();
    test_overlapping_lines();
    test_overlay_noise();
    test_pushbuf_bulk_path();
    test_qmd_uploaded_in_stream(0);
    test_qmd_uploaded_in_stream(1);
    test_overlay_bounds();
    test_lent_runs();
    test_copy_into_overlay();
    test_copy_hides_what_it_may_write();
    test_bulk_equals_single();
    test_macro_draw_topology();
    return check_finish("test_events_overlay");
}
