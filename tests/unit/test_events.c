/* test_events.c: the semantic tracker on hand-built method streams, one per event kind.
 * Method offsets and field encodings are those of NVIDIA open-gpu-doc's class headers (cited in
 * analyze/src/events_table.c and the sem_*.c files); expected events are written out here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/events.h"
#include "check.h"

#define MAX_EV 64
typedef struct sink {
    int n;
    vgt_event ev[MAX_EV];
    uint8_t upload[MAX_EV][64];
    char text[MAX_EV][512];
} sink;

static void on_event(void *ctx, const vgt_event *ev)
{
    sink *s = ctx;
    if (s->n >= MAX_EV) return;
    s->ev[s->n] = *ev;
    if (ev->kind == VGT_EV_UPLOAD && ev->u.upload.data) {
        uint64_t n = ev->u.upload.length < 64 ? ev->u.upload.length : 64;
        memcpy(s->upload[s->n], ev->u.upload.data, n);
    }
    vgt_event_format(ev, s->text[s->n], sizeof s->text[0]);
    if (ev->kind == VGT_EV_LAUNCH || ev->kind == VGT_EV_EMPTY_DISPATCH)
        s->ev[s->n].u.launch.qmd_bytes = NULL;   /* not valid after the callback */
    if (ev->kind == VGT_EV_UPLOAD) s->ev[s->n].u.upload.data = NULL;
    s->n++;
}

/* A tiny GPU memory for launches by address. */
typedef struct mem { uint64_t va; uint8_t bytes[512]; } mem;
static vgt_status mem_read(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    mem *m = ctx;
    memset(dst, 0, len);
    *known = 0;
    if (va < m->va || va >= m->va + sizeof m->bytes) return VGT_OK;
    uint64_t off = va - m->va, n = sizeof m->bytes - off < len ? sizeof m->bytes - off : len;
    memcpy(dst, m->bytes + off, n);
    *known = n;
    return VGT_OK;
}

static vgt_sem_tracker *tracker(sink *s, mem *m)
{
    memset(s, 0, sizeof *s);
    vgt_sem_config cfg = { 0 };
    cfg.on_event = on_event;
    cfg.ctx = s;
    cfg.keep_upload_bytes = 1;
    if (m) { cfg.mem_read = mem_read; cfg.mem_ctx = m; }
    vgt_sem_tracker *t = NULL;
    vgt_error err;
    if (vgt_sem_new(&t, &cfg, &err) != VGT_OK) { fprintf(stderr, "vgt_sem_new: %s\n", err.msg); exit(1); }
    return t;
}

static uint32_t dword_no;
static void feed(vgt_sem_tracker *t, uint32_t cls, uint32_t subch, uint32_t mthd, uint32_t data)
{
    vgt_method m = { 0 };
    m.cls = cls; m.subch = subch; m.mthd = mthd; m.data = data;
    m.is_host = mthd < 0x100;
    m.kind = VGT_HDR_INC;
    m.pos.seq = 7; m.pos.entry = 1; m.pos.dword = dword_no++;
    vgt_error err;
    CHECK_STATUS(vgt_sem_method(t, &m, &err), VGT_OK, &err, "vgt_sem_method 0x%x", mthd);
}

static void test_host_semaphores(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, NULL);
    uint32_t host = 0xC86F;
    feed(t, host, 0, 0x5c, 0x00001002);   /* SEM_ADDR_LO: bits 1:0 are not address */
    feed(t, host, 0, 0x60, 0x7f);
    feed(t, host, 0, 0x64, 5);
    feed(t, host, 0, 0x68, 0);
    feed(t, host, 0, 0x6c, 0x03100001);   /* RELEASE, RELEASE_WFI, 64-bit, timestamp */
    feed(t, host, 3, 0x6c, 0x01000003);   /* ACQ_CIRC_GEQ 64-bit, on another subchannel: same host state */
    feed(t, host, 0, 0x6c, 0x80000006u | (5u << 27));   /* REDUCTION IADD unsigned, 32-bit */
    feed(t, 0xC46F, 0, 0x10, 0x12); feed(t, 0xC46F, 0, 0x14, 0x3000); feed(t, 0xC46F, 0, 0x18, 9);
    feed(t, 0xC46F, 0, 0x1c, 0x01000001);   /* SEMAPHORED ACQUIRE (one-hot 1) */
    CHECK(s.n == 4, "4 events, got %d", s.n);
    const vgt_ev_sem *r = &s.ev[0].u.sem;
    CHECK(s.ev[0].kind == VGT_EV_SEM_RELEASE && r->op == VGT_SEM_OP_RELEASE && r->va == UINT64_C(0x7f00001000) &&
          r->payload == 5 && r->size == 8 && r->flags == (VGT_SEM_FLAG_WFI | VGT_SEM_FLAG_TIMESTAMP) &&
          r->source == VGT_SEM_SRC_HOST, "release: %s", s.text[0]);
    CHECK(s.ev[1].kind == VGT_EV_SEM_ACQUIRE && s.ev[1].u.sem.op == VGT_SEM_OP_ACQ_CIRC_GEQ && s.ev[1].u.sem.size == 8,
          "acquire: %s", s.text[1]);
    CHECK(s.ev[2].kind == VGT_EV_SEM_RELEASE && s.ev[2].u.sem.op == VGT_SEM_OP_REDUCTION &&
          s.ev[2].u.sem.reduction == VGT_RED_ADD && !(s.ev[2].u.sem.flags & VGT_SEM_FLAG_SIGNED) &&
          s.ev[2].u.sem.size == 4 && s.ev[2].u.sem.payload == 5, "reduction: %s", s.text[2]);
    CHECK(s.ev[3].kind == VGT_EV_SEM_ACQUIRE && s.ev[3].u.sem.va == UINT64_C(0x1200003000) && s.ev[3].u.sem.payload == 9,
          "SEMAPHORED acquire: %s", s.text[3]);
    CHECK(strstr(s.text[0], "SEM_RELEASE host RELEASE va=0x7f00001000 payload=0x5 size=8") != NULL, "text: %s", s.text[0]);
    vgt_sem_free(t);
}

static void test_upload(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, NULL);
    uint32_t cc = 0xCBC0;
    feed(t, cc, 1, 0x180, 10); feed(t, cc, 1, 0x184, 1);
    feed(t, cc, 1, 0x188, 0x7f); feed(t, cc, 1, 0x18c, 0x2000);
    feed(t, cc, 1, 0x1b0, 0x1);   /* pitch, no completion */
    feed(t, cc, 1, 0x1b4, 0x03020100); feed(t, cc, 1, 0x1b4, 0x07060504);
    CHECK_EQ_U64(s.n, 0, "no upload before the last dword");
    feed(t, cc, 1, 0x1b4, 0xeeff0908);
    CHECK(s.n == 1 && s.ev[0].kind == VGT_EV_UPLOAD, "one upload, got %d", s.n);
    const vgt_ev_upload *u = &s.ev[0].u.upload;
    CHECK(u->dst_va == UINT64_C(0x7f00002000) && u->length == 10 && u->complete && u->pitch_layout, "upload: %s", s.text[0]);
    for (unsigned i = 0; i < 10; i++) CHECK(s.upload[0][i] == i, "upload byte %u = %u", i, s.upload[0][i]);
    /* a transfer cut short by the end of the submission */
    feed(t, 0xA140, 2, 0x180, 16); feed(t, 0xA140, 2, 0x184, 1); feed(t, 0xA140, 2, 0x1b0, 0x21);
    feed(t, 0xA140, 2, 0x1b4, 1);
    vgt_sem_flush(t);
    CHECK(s.n == 2 && !s.ev[1].u.upload.complete && s.ev[1].u.upload.received == 4 && s.ev[1].u.upload.completion == 2,
          "incomplete upload: %s", s.text[1]);
    vgt_sem_free(t);
}

static void v04_qmd(uint8_t *q)
{
    memset(q, 0, 384);
    vgt_qmd_set_bits(q, 384, 583, 580, 4);
    vgt_qmd_set_bits(q, 384, 1055, 1024, 1024);     /* GRID_WIDTH */
    vgt_qmd_set_bits(q, 384, 1071, 1056, 1);        /* GRID_HEIGHT */
    vgt_qmd_set_bits(q, 384, 1103, 1088, 1);        /* GRID_DEPTH */
    vgt_qmd_set_bits(q, 384, 1167, 1152, 64);       /* CTA_THREAD_DIMENSION0 */
    vgt_qmd_set_bits(q, 384, 1183, 1168, 1);        /* CTA_THREAD_DIMENSION1 */
    vgt_qmd_set_bits(q, 384, 1199, 1184, 1);        /* CTA_THREAD_DIMENSION2 */
    vgt_qmd_set_bits(q, 384, 1247, 1216, 0x5000);   /* PROGRAM_ADDRESS_LOWER */
    vgt_qmd_set_bits(q, 384, 1272, 1248, 0x7f);
    vgt_qmd_set_bits(q, 384, 320, 320, 1);          /* RELEASE_ENABLE(0) */
    vgt_qmd_set_bits(q, 384, 322, 321, 1);          /* one word */
    vgt_qmd_set_bits(q, 384, 671, 640, 0x9000);
    vgt_qmd_set_bits(q, 384, 735, 704, 42);
}

static void test_inline_launch(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, NULL);
    uint8_t q[384];
    v04_qmd(q);
    feed(t, 0xCBC0, 1, 0x318, (1u << 30) | 0x1);     /* 384-byte inline, address upper */
    feed(t, 0xCBC0, 1, 0x31c, 0x00200000);           /* QMD at 0x1_0020_0000_00 >> 8 */
    for (unsigned i = 0; i < 96; i++) {
        uint32_t d = q[4 * i] | (uint32_t)q[4 * i + 1] << 8 | (uint32_t)q[4 * i + 2] << 16 | (uint32_t)q[4 * i + 3] << 24;
        feed(t, 0xCBC0, 1, 0x320 + 4 * i, d);
        if (i == 94) CHECK(s.n == 0, "no launch before dword 95");
    }
    CHECK(s.n == 2, "LAUNCH + its release, got %d", s.n);
    const vgt_ev_launch *l = &s.ev[0].u.launch;
    CHECK(s.ev[0].kind == VGT_EV_LAUNCH && l->inline_qmd && l->decoded && l->qmd_known &&
          l->qmd_va == UINT64_C(0x10020000000) && l->qmd.grid[0] == 1024 && l->qmd.block[0] == 64 &&
          l->qmd.program_va == UINT64_C(0x7f00005000), "inline launch: %s", s.text[0]);
    CHECK(s.ev[1].kind == VGT_EV_SEM_RELEASE && s.ev[1].u.sem.source == VGT_SEM_SRC_QMD &&
          s.ev[1].u.sem.va == 0x9000 && s.ev[1].u.sem.payload == 42 && s.ev[1].u.sem.size == 4,
          "qmd release: %s", s.text[1]);
    CHECK(strstr(s.text[0], "LAUNCH qmd=0x10020000000 inline V04_00 grid=1024x1x1 block=64x1x1 prog=0x7f00005000") != NULL,
          "text: %s", s.text[0]);
    vgt_sem_free(t);
}

static void test_launch_by_address(void)
{
    mem m = { .va = 0x7f0000100 };
    uint8_t *q = m.bytes;
    vgt_qmd_set_bits(q, 384, 583, 580, 2); vgt_qmd_set_bits(q, 384, 579, 576, 3);   /* V02_03 */
    vgt_qmd_set_bits(q, 384, 415, 384, 7); vgt_qmd_set_bits(q, 384, 607, 592, 32);   /* grid 7x1x1, block 32x1x1 */
    vgt_qmd_set_bits(q, 384, 431, 416, 1); vgt_qmd_set_bits(q, 384, 463, 448, 1);
    vgt_qmd_set_bits(q, 384, 623, 608, 1); vgt_qmd_set_bits(q, 384, 639, 624, 1);
    sink s; vgt_sem_tracker *t = tracker(&s, &m);
    feed(t, 0xC5C0, 1, 0x2b4, (uint32_t)(m.va >> 8));
    CHECK_EQ_U64(s.n, 0, "SEND_PCAS_A alone does not launch");
    feed(t, 0xC5C0, 1, 0x2bc, 0x1);   /* INVALIDATE only */
    CHECK_EQ_U64(s.n, 0, "an invalidate does not launch");
    feed(t, 0xC5C0, 1, 0x2bc, 0x3);   /* INVALIDATE | SCHEDULE */
    CHECK(s.n == 1 && s.ev[0].u.launch.decoded && s.ev[0].u.launch.qmd.version == VGT_QMD_V02_03 &&
          s.ev[0].u.launch.qmd.grid[0] == 7 && s.ev[0].u.launch.qmd.block[0] == 32 && !s.ev[0].u.launch.inline_qmd &&
          s.ev[0].u.launch.qmd_va == m.va, "launch by address: %s", s.text[0]);
    /* V04 through SEND_SIGNALING_PCAS2_B PREFETCH_SCHEDULE */
    v04_qmd(m.bytes);
    feed(t, 0xCBC0, 2, 0x2b4, (uint32_t)(m.va >> 8));
    feed(t, 0xCBC0, 2, 0x2c0, 0x9);
    CHECK(s.n == 3 && s.ev[1].u.launch.qmd.version == VGT_QMD_V04_00 && s.ev[2].kind == VGT_EV_SEM_RELEASE,
          "PCAS2 launch: %d events", s.n);
    vgt_sem_free(t);
    /* no memory: reported, not decoded */
    t = tracker(&s, NULL);
    feed(t, 0xCBC0, 2, 0x2b4, 0x1234);
    feed(t, 0xCBC0, 2, 0x2c0, 0x2);
    CHECK(s.n == 1 && !s.ev[0].u.launch.decoded && !s.ev[0].u.launch.qmd_known && s.ev[0].u.launch.qmd_va == 0x123400,
          "unknown QMD: %s", s.text[0]);
    vgt_sem_free(t);
}

static void test_copy(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, NULL);
    uint32_t ce = 0xC8B5;
    feed(t, ce, 4, 0x400, 0x1); feed(t, ce, 4, 0x404, 0x1000);
    feed(t, ce, 4, 0x408, 0x2); feed(t, ce, 4, 0x40c, 0x3000);
    feed(t, ce, 4, 0x418, 4096); feed(t, ce, 4, 0x41c, 1);
    feed(t, ce, 4, 0x300, 0x182);   /* non-pipelined, src and dst pitch */
    CHECK(s.n == 1 && s.ev[0].kind == VGT_EV_COPY, "copy, got %d", s.n);
    const vgt_ev_copy *c = &s.ev[0].u.copy;
    CHECK(c->src_va == UINT64_C(0x100001000) && c->dst_va == UINT64_C(0x200003000) && c->bytes == 4096 &&
          c->src_pitch && c->dst_pitch && !c->remap && !c->semaphore_type, "copy: %s", s.text[0]);
    /* memset: DST_X = CONST_A, 4-byte components, one component; multi-line 2 x 256; release 64-bit */
    feed(t, ce, 4, 0x700, 0xdeadbeef); feed(t, ce, 4, 0x708, 0x4 | (3u << 16));
    feed(t, ce, 4, 0x418, 256); feed(t, ce, 4, 0x41c, 2);
    feed(t, ce, 4, 0x240, 0x7f); feed(t, ce, 4, 0x244, 0x8000); feed(t, ce, 4, 0x248, 11); feed(t, ce, 4, 0x24c, 1);
    feed(t, ce, 4, 0x300, 0x182 | (1u << 9) | (1u << 10) | (1u << 3) | (1u << 27));
    CHECK(s.n == 3, "memset + release, got %d", s.n);
    c = &s.ev[1].u.copy;
    CHECK(c->memset && c->remap && c->bytes == 2 * 256 * 4 && c->semaphore_type == 1, "memset: %s", s.text[1]);
    CHECK(s.ev[2].kind == VGT_EV_SEM_RELEASE && s.ev[2].u.sem.source == VGT_SEM_SRC_COPY &&
          s.ev[2].u.sem.va == UINT64_C(0x7f00008000) && s.ev[2].u.sem.payload == UINT64_C(0x10000000b) &&
          s.ev[2].u.sem.size == 8, "copy release: %s", s.text[2]);
    vgt_sem_free(t);
}

/* What counts: a scheduled QMD with a zero grid or block is an EMPTY_DISPATCH (its releases still
 * follow), one whose bytes are unknown a LAUNCH; a LAUNCH_DMA that moves no bytes (DATA_TRANSFER_TYPE
 * NONE, or a size of 0) an EMPTY_DMA (its release still follows). */
static void test_counts_rules(void)
{
    mem m = { .va = 0x7f0000100 };
    uint8_t *q = m.bytes;
    v04_qmd(q);
    vgt_qmd_set_bits(q, 384, 1071, 1056, 0);        /* GRID_HEIGHT 0: 1024x0x1 CTAs is none */
    sink s; vgt_sem_tracker *t = tracker(&s, &m);
    feed(t, 0xCBC0, 1, 0x2b4, (uint32_t)(m.va >> 8));
    feed(t, 0xCBC0, 1, 0x2c0, 0x2);
    CHECK(s.n == 2 && s.ev[0].kind == VGT_EV_EMPTY_DISPATCH && s.ev[1].kind == VGT_EV_SEM_RELEASE &&
          !vgt_launch_runs_threads(&s.ev[0].u.launch), "zero grid: %s", s.text[0]);
    CHECK(strstr(s.text[0], "EMPTY_DISPATCH qmd=0x7f0000100 by-address V04_00 grid=1024x0x1") == s.text[0], "text: %s",
          s.text[0]);
    v04_qmd(q);
    vgt_qmd_set_bits(q, 384, 1199, 1184, 0);        /* CTA_THREAD_DIMENSION2 0: no threads per CTA */
    feed(t, 0xCBC0, 1, 0x2b4, (uint32_t)(m.va >> 8));
    feed(t, 0xCBC0, 1, 0x2c0, 0x2);
    CHECK(s.n == 4 && s.ev[2].kind == VGT_EV_EMPTY_DISPATCH, "zero block: %s", s.text[2]);
    v04_qmd(q);
    feed(t, 0xCBC0, 1, 0x2b4, (uint32_t)(m.va >> 8));
    feed(t, 0xCBC0, 1, 0x2c0, 0x2);
    CHECK(s.n == 6 && s.ev[4].kind == VGT_EV_LAUNCH && vgt_launch_runs_threads(&s.ev[4].u.launch), "1024x1x1: %s",
          s.text[4]);
    feed(t, 0xCBC0, 1, 0x2b4, 0x1234);              /* a QMD nobody knows may run threads */
    feed(t, 0xCBC0, 1, 0x2c0, 0x2);
    CHECK(s.n == 7 && s.ev[6].kind == VGT_EV_LAUNCH && !s.ev[6].u.launch.decoded, "unknown QMD: %s", s.text[6]);
    vgt_sem_free(t);

    t = tracker(&s, NULL);
    uint32_t ce = 0xC8B5;
    feed(t, ce, 4, 0x400, 0x1); feed(t, ce, 4, 0x404, 0x1000);
    feed(t, ce, 4, 0x408, 0x2); feed(t, ce, 4, 0x40c, 0x3000);
    feed(t, ce, 4, 0x418, 4096); feed(t, ce, 4, 0x41c, 1);
    feed(t, ce, 4, 0x240, 0x7f); feed(t, ce, 4, 0x244, 0x8000); feed(t, ce, 4, 0x248, 11);
    feed(t, ce, 4, 0x300, 0x180 | (1u << 3));       /* DATA_TRANSFER_TYPE NONE, one-word release */
    CHECK(s.n == 2 && s.ev[0].kind == VGT_EV_EMPTY_DMA && s.ev[0].u.copy.bytes == 0 &&
          s.ev[1].kind == VGT_EV_SEM_RELEASE && s.ev[1].u.sem.payload == 11, "semaphore only: %s", s.text[0]);
    CHECK(strncmp(s.text[0], "EMPTY_DMA src=", 14) == 0, "text: %s", s.text[0]);
    feed(t, ce, 4, 0x418, 0);
    feed(t, ce, 4, 0x300, 0x182);                   /* NON_PIPELINED, LINE_LENGTH_IN 0 */
    CHECK(s.n == 3 && s.ev[2].kind == VGT_EV_EMPTY_DMA && s.ev[2].u.copy.transfer_type == 2, "0 bytes: %s", s.text[2]);
    feed(t, ce, 4, 0x418, 16);
    feed(t, ce, 4, 0x300, 0x182);
    CHECK(s.n == 4 && s.ev[3].kind == VGT_EV_COPY && vgt_copy_moves_bytes(&s.ev[3].u.copy), "16 bytes: %s", s.text[3]);
    vgt_sem_free(t);
}

static void test_reports(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, NULL);
    feed(t, 0xCB97, 0, 0x1b00, 0x7f); feed(t, 0xCB97, 0, 0x1b04, 0x100); feed(t, 0xCB97, 0, 0x1b08, 3);
    feed(t, 0xCB97, 0, 0x1b0c, 1u << 28);                  /* RELEASE, one word */
    feed(t, 0xCB97, 0, 0x1b0c, 2u | (0x14u << 23));        /* REPORT_ONLY, TIMESTAMP, four words */
    feed(t, 0xCBC0, 1, 0x158, 1); feed(t, 0xCBC0, 1, 0x15c, 2); feed(t, 0xCBC0, 1, 0x160, 0x40); feed(t, 0xCBC0, 1, 0x164, 0x7f);
    feed(t, 0xCBC0, 1, 0x168, (1u << 12) | (1u << 3));     /* RELEASE, one word, 64-bit payload */
    feed(t, 0xC6C0, 1, 0x168, 0);                          /* Ampere A compute has no REPORT_SEMAPHORE_EXECUTE */
    CHECK(s.n == 3, "3 report events, got %d", s.n);
    CHECK(s.ev[0].kind == VGT_EV_SEM_RELEASE && s.ev[0].u.sem.va == UINT64_C(0x7f00000100) && s.ev[0].u.sem.payload == 3 &&
          !(s.ev[0].u.sem.flags & VGT_SEM_FLAG_TIMESTAMP), "report release: %s", s.text[0]);
    CHECK(s.ev[1].kind == VGT_EV_REPORT && s.ev[1].u.sem.report == 0x14 && (s.ev[1].u.sem.flags & VGT_SEM_FLAG_TIMESTAMP),
          "report timestamp: %s", s.text[1]);
    CHECK(s.ev[2].kind == VGT_EV_SEM_RELEASE && s.ev[2].u.sem.size == 8 && s.ev[2].u.sem.payload == UINT64_C(0x200000001) &&
          s.ev[2].u.sem.va == UINT64_C(0x7f00000040), "execute release: %s", s.text[2]);
    vgt_sem_free(t);
}

static void test_program_and_draws(void)
{
    sink s; vgt_sem_tracker *t = tracker(&s, NULL);
    uint32_t g = 0xCB97;
    feed(t, g, 0, 0x2000 + 64, 0x11); feed(t, g, 0, 0x200c + 64, 32);
    feed(t, g, 0, 0x2014 + 64, 0x7f); feed(t, g, 0, 0x2018 + 64, 0x1000);
    CHECK(s.n == 1 && s.ev[0].kind == VGT_EV_PROGRAM_BIND && s.ev[0].u.program.stage == 1 && s.ev[0].u.program.type == 1 &&
          s.ev[0].u.program.enabled && s.ev[0].u.program.register_count == 32 &&
          s.ev[0].u.program.program_va == UINT64_C(0x7f00001000), "bind: %s", s.text[0]);
    /* two instances of one triangle draw */
    for (int inst = 0; inst < 2; inst++) {
        feed(t, g, 0, 0x1618, 4u | (inst ? 1u << 26 : 0));
        feed(t, g, 0, 0x0d74, 0); feed(t, g, 0, 0x0d78, 3);
        feed(t, g, 0, 0x1614, 0);
    }
    CHECK(s.n == 1, "draw held for merging, got %d", s.n);
    /* a semaphore release after the draw: the draw is delivered first */
    feed(t, 0xC56F, 0, 0x5c, 0x40); feed(t, 0xC56F, 0, 0x6c, 1);
    CHECK(s.n == 3 && s.ev[1].kind == VGT_EV_DRAW && s.ev[2].kind == VGT_EV_SEM_RELEASE, "order: %d events", s.n);
    const vgt_ev_draw *d = &s.ev[1].u.draw;
    CHECK(d->kind == VGT_DRAW_ARRAYS && d->topology == 4 && d->first == 0 && d->count == 3 && d->instance_count == 2,
          "instanced draw: %s", s.text[1]);
    /* indexed: 32-bit indices at 0x7f_0000_4000, first 6, count 36 */
    feed(t, g, 0, 0x17c8, 0x7f); feed(t, g, 0, 0x17cc, 0x4000); feed(t, g, 0, 0x17d8, 2);
    feed(t, g, 0, 0x1618, 4); feed(t, g, 0, 0x17dc, 6); feed(t, g, 0, 0x17e0, 36); feed(t, g, 0, 0x1614, 0);
    /* inline indices: 2 x INDEX2X16 on LINES */
    feed(t, g, 0, 0x1618, 1); feed(t, g, 0, 0x15f0, 0x00010000); feed(t, g, 0, 0x15f0, 0x00030002); feed(t, g, 0, 0x1614, 0);
    /* packed one-method draw: TRIANGLE_STRIP, 4 vertices from 0; then 16-bit indexed packed */
    feed(t, g, 0, 0x1214, (5u << 28) | (4u << 16));
    feed(t, g, 0, 0x17e8, (4u << 28) | (6u << 16) | 2u);
    vgt_sem_flush(t);
    CHECK(s.n == 7, "7 events, got %d", s.n);
    d = &s.ev[3].u.draw;
    CHECK(d->kind == VGT_DRAW_INDEXED && d->first == 6 && d->count == 36 && d->index_size == 4 &&
          d->index_buffer_va == UINT64_C(0x7f00004000) && d->instance_count == 1, "indexed: %s", s.text[3]);
    d = &s.ev[4].u.draw;
    CHECK(d->kind == VGT_DRAW_INLINE_INDEX && d->count == 4 && d->topology == 1, "inline: %s", s.text[4]);
    d = &s.ev[5].u.draw;
    CHECK(d->kind == VGT_DRAW_ARRAYS && d->topology == 5 && d->count == 4, "packed: %s", s.text[5]);
    d = &s.ev[6].u.draw;
    CHECK(d->kind == VGT_DRAW_INDEXED && d->index_size == 2 && d->first == 2 && d->count == 6, "packed indexed: %s", s.text[6]);
    vgt_sem_free(t);
}

static int count_sink;
static void count_event(void *ctx, const vgt_event *ev) { (void)ctx; (void)ev; count_sink++; }

/* Arbitrary methods on every family: never crash, never fail. */
static void test_noise(void)
{
    vgt_sem_config cfg = { 0 };
    cfg.on_event = count_event;
    cfg.keep_upload_bytes = 1;
    cfg.max_upload = 1 << 16;
    vgt_sem_tracker *t = NULL;
    vgt_error err;
    CHECK_STATUS(vgt_sem_new(&t, &cfg, &err), VGT_OK, &err, "new");
    static const uint32_t classes[] = { 0xC86F, 0xCBC0, 0xCB97, 0xC8B5, 0xA140, 0xC5C0, 0xC597, 0x902D, 0 };
    srand(11);
    for (int i = 0; i < 200000; i++) {
        vgt_method m = { 0 };
        m.cls = classes[(unsigned)rand() % 9];
        m.subch = (unsigned)rand() % 8;
        m.mthd = ((unsigned)rand() % 0x4400) & ~3u;
        if (rand() % 4 == 0) m.mthd = 0x318 + 4 * ((unsigned)rand() % 100);
        m.data = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
        m.is_host = m.mthd < 0x100;
        if (vgt_sem_method(t, &m, &err) != VGT_OK) { CHECK(0, "noise method failed: %s", err.msg); break; }
        if (i % 5000 == 0) vgt_sem_flush(t);
    }
    vgt_sem_free(t);
    CHECK(count_sink > 0, "noise produced no events at all");
}

/* An upload over cfg.max_upload is reported with its length, its bytes dropped. */
static void test_upload_limit(void)
{
    sink s;
    memset(&s, 0, sizeof s);
    vgt_sem_config cfg = { .on_event = on_event, .ctx = &s, .keep_upload_bytes = 1, .max_upload = 8 };
    vgt_sem_tracker *t = NULL;
    vgt_error err;
    CHECK_STATUS(vgt_sem_new(&t, &cfg, &err), VGT_OK, &err, "new");
    feed(t, 0xCB97, 2, 0x180, 16); feed(t, 0xCB97, 2, 0x184, 1); feed(t, 0xCB97, 2, 0x1b0, 1);
    for (int i = 0; i < 4; i++) feed(t, 0xCB97, 2, 0x1b4, 0xffffffffu);
    feed(t, 0xCB97, 2, 0x180, 4); feed(t, 0xCB97, 2, 0x1b0, 1); feed(t, 0xCB97, 2, 0x1b4, 0x04030201);
    CHECK(s.n == 2 && s.ev[0].u.upload.complete && s.ev[0].u.upload.length == 16 && s.ev[0].u.upload.received == 16,
          "big upload: %s", s.text[0]);
    CHECK(s.ev[1].u.upload.length == 4 && s.upload[1][0] == 1 && s.upload[1][3] == 4, "small upload after: %s", s.text[1]);
    /* data outside any transfer, and masked methods, are ignored */
    feed(t, 0xCB97, 2, 0x1b4, 1);
    vgt_method m = { .cls = 0xC86F, .mthd = 0x6c, .data = 1, .is_host = 1, .masked = 1 };
    CHECK(vgt_sem_method(t, &m, &err) == VGT_OK && s.n == 2, "masked or stray methods made events: %d", s.n);
    vgt_sem_free(t);
}

/* Counting only (no bytes kept): the fast path. Two back-to-back uploads on two subchannels, interleaved. */
static void test_upload_counting(void)
{
    sink s;
    memset(&s, 0, sizeof s);
    vgt_sem_config cfg = { .on_event = on_event, .ctx = &s };
    vgt_sem_tracker *t = NULL;
    vgt_error err;
    CHECK_STATUS(vgt_sem_new(&t, &cfg, &err), VGT_OK, &err, "new");
    for (uint32_t sc = 2; sc <= 3; sc++) {
        feed(t, 0xA140, sc, 0x180, 40 + sc); feed(t, 0xA140, sc, 0x184, 1); feed(t, 0xA140, sc, 0x1b0, 1);
    }
    for (int i = 0; i < 10; i++) { feed(t, 0xA140, 2, 0x1b4, 0); feed(t, 0xA140, 3, 0x1b4, 0); }
    CHECK(s.n == 0, "no upload before the last dword, got %d", s.n);
    feed(t, 0xA140, 2, 0x1b4, 0);   /* 44 bytes: the 11th dword completes subchannel 2's 42 bytes */
    CHECK(s.n == 1 && s.ev[0].subch == 2 && s.ev[0].u.upload.length == 42 && s.ev[0].u.upload.received == 44 &&
          !s.ev[0].u.upload.data && s.ev[0].pos.dword == dword_no - 1, "first upload: %s", s.text[0]);
    feed(t, 0xA140, 3, 0x1b4, 0);
    CHECK(s.n == 2 && s.ev[1].subch == 3 && s.ev[1].u.upload.length == 43, "second upload: %s", s.text[1]);
    feed(t, 0xA140, 3, 0x1b4, 0);   /* stray data after the transfer: ignored */
    CHECK_EQ_U64(s.n, 2, "stray data made an event");
    vgt_sem_free(t);
}

int main(void)
{
    test_upload_counting();
    test_upload_limit();
    test_host_semaphores();
    test_upload();
    test_inline_launch();
    test_launch_by_address();
    test_copy();
    test_counts_rules();
    test_reports();
    test_program_and_draws();
    test_noise();
    return check_finish("test_events");
}
