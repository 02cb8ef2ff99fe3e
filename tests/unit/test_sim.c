/* test_sim.c: the sim backend, one operation per test, through the backend operation table only
 * (the same bodies can run against any backend that has the capability). Push buffers are hand-built
 * from the class headers' facts (method offsets and fields: NVIDIA open-gpu-doc clc56f.h, clcbc0.h,
 * clcb97.h, clc8b5.h, cla140.h, clcbc0qmd.h); each test checks memory read back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/backend.h"
#include "vgt/qmd.h"

#include "check.h"
#include "mme_enc.h"

/* ---- harness ---- */
#define PB_VA 0x100000ull
#define DATA_VA 0x200000ull
#define MAP_LEN 0x100000ull
enum { SC_COMPUTE = 0, SC_COPY = 1, SC_I2M = 2, SC_3D = 3 };

typedef struct h {
    const vgt_backend_ops *ops;
    vgt_backend *b;
    uint32_t vas, ch, ch2;
    uint32_t pb[4096];
    uint32_t n;
    uint64_t pb_va;           /* where the next push buffer goes */
    int events[16];
    char last_event[VGT_ERROR_MSG_MAX];
} h;

static void on_event(void *ctx, const vgt_backend_event *ev)
{
    h *t = ctx;
    if (ev->kind >= 0 && ev->kind < 16) t->events[ev->kind]++;
    snprintf(t->last_event, sizeof t->last_event, "%s", ev->msg);
}

/* Method header (NVIDIA open-gpu-doc, the host class's dma-pusher format): SEC_OP 31:29, COUNT 28:16,
 * SUBCHANNEL 15:13, ADDRESS 11:0 = method >> 2. */
static uint32_t hdr(uint32_t op, uint32_t count, uint32_t subch, uint32_t mthd)
{
    return op << 29 | count << 16 | subch << 13 | mthd >> 2;
}

static void inc(h *t, uint32_t subch, uint32_t mthd, const uint32_t *v, uint32_t n)
{
    t->pb[t->n++] = hdr(1, n, subch, mthd);
    for (uint32_t i = 0; i < n; i++) t->pb[t->n++] = v[i];
}

static void m1(h *t, uint32_t subch, uint32_t mthd, uint32_t v) { inc(t, subch, mthd, &v, 1); }

static void noninc(h *t, uint32_t subch, uint32_t mthd, const uint32_t *v, uint32_t n)
{
    t->pb[t->n++] = hdr(3, n, subch, mthd);
    for (uint32_t i = 0; i < n; i++) t->pb[t->n++] = v[i];
}

/* GPFIFO entry: word0 GET 31:2 (VA 31:2); word1 GET_HI 7:0 (VA 39:32), LEVEL bit 9, LENGTH 30:10. */
static uint64_t gp_entry(uint64_t va, uint32_t dwords, int subroutine)
{
    uint32_t w0 = (uint32_t)va & ~3u, w1 = (uint32_t)(va >> 32) & 0xFF;
    w1 |= (uint32_t)subroutine << 9 | dwords << 10;
    return (uint64_t)w1 << 32 | w0;
}

static void setup(h *t)
{
    memset(t, 0, sizeof *t);
    vgt_error err;
    t->ops = &vgt_backend_sim;
    vgt_backend_config cfg = {.max_memory_bytes = 64u << 20};
    if (t->ops->open(&t->b, &cfg, &err) != VGT_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        exit(1);
    }
    t->ops->set_event_handler(t->b, on_event, t);
    t->ops->vaspace_create(t->b, &t->vas, &err);
    CHECK(t->ops->map(t->b, t->vas, PB_VA, MAP_LEN, 2, &err) == VGT_OK, "%s", err.msg);
    CHECK(t->ops->map(t->b, t->vas, DATA_VA, MAP_LEN, 1, &err) == VGT_OK, "%s", err.msg);
    vgt_backend_channel_desc d = {.vas = t->vas, .cls = 0xC86F, .entries = 1024, .handle = 0xC0};
    CHECK(t->ops->channel_create(t->b, &d, &t->ch, &err) == VGT_OK, "%s", err.msg);
    d.handle = 0xC1;
    CHECK(t->ops->channel_create(t->b, &d, &t->ch2, &err) == VGT_OK, "%s", err.msg);
    t->pb_va = PB_VA;
}

static void teardown(h *t) { t->ops->close(t->b); }

/* Bind the usual classes (SET_OBJECT, method 0) on the given channel's subchannels. */
static void bind_all(h *t)
{
    m1(t, SC_COMPUTE, 0, 0xCBC0);
    m1(t, SC_COPY, 0, 0xC8B5);
    m1(t, SC_I2M, 0, 0xA140);
    m1(t, SC_3D, 0, 0xCB97);
}

/* Write the push buffer built so far into sim memory and submit it as one entry. */
static vgt_status flush_on(h *t, uint32_t ch, vgt_error *err)
{
    vgt_error e;
    CHECK(t->ops->mem_write(t->b, t->vas, t->pb_va, t->pb, 4ull * t->n, &e) == VGT_OK, "%s", e.msg);
    uint64_t ent = gp_entry(t->pb_va, t->n, 0);
    t->pb_va += 4ull * t->n;
    t->n = 0;
    return t->ops->submit(t->b, ch, &ent, 1, 0, err);
}

static void flush(h *t)
{
    vgt_error err;
    vgt_status rc = flush_on(t, t->ch, &err);
    CHECK(rc == VGT_OK, "submit: %s", err.msg);
}

static uint64_t rd(h *t, uint64_t va, uint32_t size)
{
    uint8_t b[8] = {0};
    vgt_error err;
    CHECK(t->ops->mem_read(t->b, t->vas, va, b, size, &err) == VGT_OK, "%s", err.msg);
    uint64_t v = 0;
    for (uint32_t i = size; i-- > 0;) v = v << 8 | b[i];
    return v;
}

static void wr32(h *t, uint64_t va, uint32_t v)
{
    vgt_error err;
    CHECK(t->ops->mem_write(t->b, t->vas, va, &v, 4, &err) == VGT_OK, "%s", err.msg);
}

static vgt_backend_counters ctr(h *t)
{
    vgt_backend_counters c;
    t->ops->counters(t->b, &c);
    return c;
}

/* Host semaphore (C86F): SEM_ADDR_LO 0x5c, SEM_ADDR_HI 0x60, PAYLOAD_LO 0x64, PAYLOAD_HI 0x68,
 * SEM_EXECUTE 0x6c: OPERATION 2:0, PAYLOAD_SIZE 24, RELEASE_TIMESTAMP 25, REDUCTION 30:27, FORMAT 31. */
static void host_sem(h *t, uint64_t va, uint64_t payload, uint32_t exec)
{
    uint32_t v[5] = {(uint32_t)va, (uint32_t)(va >> 32), (uint32_t)payload, (uint32_t)(payload >> 32), exec};
    inc(t, 0, 0x5c, v, 5);
}

/* ---- tests ---- */

static void test_host_release(void)
{
    h t;
    setup(&t);
    host_sem(&t, DATA_VA, 0x12345678, 1);                           /* RELEASE, 32-bit */
    host_sem(&t, DATA_VA + 0x10, 0x1122334455667788ull, 1 | 1u << 24); /* RELEASE, 64-bit */
    host_sem(&t, DATA_VA + 0x20, 7, 1 | 1u << 25);                 /* RELEASE with timestamp */
    flush(&t);
    CHECK(rd(&t, DATA_VA, 4) == 0x12345678, "got 0x%llx", (unsigned long long)rd(&t, DATA_VA, 4));
    CHECK(rd(&t, DATA_VA + 4, 4) == 0, "32-bit release wrote past 4 bytes");
    CHECK(rd(&t, DATA_VA + 0x10, 8) == 0x1122334455667788ull, "got 0x%llx", (unsigned long long)rd(&t, DATA_VA + 0x10, 8));
    CHECK(rd(&t, DATA_VA + 0x28, 8) != 0, "no timestamp written at +8");
    uint8_t mask[16];
    vgt_error err;
    CHECK(t.ops->produced(t.b, t.vas, DATA_VA + 0x20, 16, mask, &err) == VGT_OK, "%s", err.msg);
    CHECK(mask[0] && mask[3] && !mask[8] && !mask[15], "payload produced, timestamp not");
    uint32_t n;
    const vgt_backend_write *w = t.ops->write_log(t.b, &n);
    CHECK(n >= 1 && w[0].va == DATA_VA, "write log starts at the first release");
    CHECK(ctr(&t).sem_releases == 3, "%llu releases", (unsigned long long)ctr(&t).sem_releases);
    /* a host write clears "produced" */
    wr32(&t, DATA_VA, 5);
    CHECK(t.ops->produced(t.b, t.vas, DATA_VA, 4, mask, &err) == VGT_OK && !mask[0], "host write left produced set");
    teardown(&t);
}

/* acquire on channel A; the release comes from channel B later: A blocks, then resumes. */
static void test_host_acquire_blocks_then_resumes(void)
{
    h t;
    setup(&t);
    host_sem(&t, DATA_VA, 5, 0);                 /* ACQUIRE: wait for == 5 */
    host_sem(&t, DATA_VA + 0x40, 1, 1);          /* then release a marker */
    flush(&t);
    CHECK(rd(&t, DATA_VA + 0x40, 4) == 0, "ran past an unsatisfied acquire");
    CHECK(t.events[VGT_BEV_BLOCKED] == 1, "blocked event %d", t.events[VGT_BEV_BLOCKED]);
    vgt_error err;
    CHECK(t.ops->idle(t.b, 0, &err) == VGT_E_TIMEOUT, "idle with a blocked channel");
    CHECK(strstr(err.msg, "can never be satisfied in sim") && strstr(err.msg, "0x200000"), "message: %s", err.msg);
    host_sem(&t, DATA_VA, 5, 1);                 /* channel B releases 5 */
    vgt_status rc = flush_on(&t, t.ch2, &err);
    CHECK(rc == VGT_OK, "%s", err.msg);
    CHECK(rd(&t, DATA_VA + 0x40, 4) == 1, "channel A did not resume");
    CHECK(t.ops->idle(t.b, 0, &err) == VGT_OK, "%s", err.msg);
    CHECK(ctr(&t).sem_acquires == 1, "acquires %llu", (unsigned long long)ctr(&t).sem_acquires);
    teardown(&t);
}

/* Every comparison: satisfied ones pass through, a host write releases the last one. */
static void test_host_acquire_comparisons(void)
{
    h t;
    setup(&t);
    wr32(&t, DATA_VA, 1);
    host_sem(&t, DATA_VA, 1, 2);                 /* ACQ_STRICT_GEQ 1 >= 1 */
    host_sem(&t, DATA_VA, 0xFFFFFFFF, 3);        /* ACQ_CIRC_GEQ: 1 - 0xffffffff = 2 >= 0 */
    host_sem(&t, DATA_VA, 3, 4);                 /* ACQ_AND 1 & 3 */
    host_sem(&t, DATA_VA, 2, 5);                 /* ACQ_NOR ~(1 | 2) != 0 */
    host_sem(&t, DATA_VA + 4, 1, 1);
    host_sem(&t, DATA_VA, 8, 2);                 /* ACQ_STRICT_GEQ 1 >= 8: blocks */
    host_sem(&t, DATA_VA + 8, 1, 1);
    flush(&t);
    CHECK(rd(&t, DATA_VA + 4, 4) == 1, "a satisfied comparison blocked");
    CHECK(rd(&t, DATA_VA + 8, 4) == 0, "GEQ 8 did not block");
    wr32(&t, DATA_VA, 9);                        /* a host write satisfies it */
    CHECK(rd(&t, DATA_VA + 8, 4) == 1, "host write did not resume the channel");
    teardown(&t);
}

static void test_host_reductions(void)
{
    h t;
    setup(&t);
    wr32(&t, DATA_VA, 10);
    wr32(&t, DATA_VA + 4, 3);
    wr32(&t, DATA_VA + 8, 0);
    wr32(&t, DATA_VA + 12, (uint32_t)-5);
    host_sem(&t, DATA_VA, 5, 6 | 5u << 27 | 1u << 31);       /* IADD unsigned: 15 */
    host_sem(&t, DATA_VA + 4, 3, 6 | 6u << 27 | 1u << 31);   /* INC at the limit wraps to 0 */
    host_sem(&t, DATA_VA + 8, 9, 6 | 7u << 27 | 1u << 31);   /* DEC at 0 wraps to the payload */
    host_sem(&t, DATA_VA + 12, 2, 6 | 0u << 27);             /* IMIN signed: -5 stays */
    flush(&t);
    CHECK(rd(&t, DATA_VA, 4) == 15, "IADD %llu", (unsigned long long)rd(&t, DATA_VA, 4));
    CHECK(rd(&t, DATA_VA + 4, 4) == 0, "INC %llu", (unsigned long long)rd(&t, DATA_VA + 4, 4));
    CHECK(rd(&t, DATA_VA + 8, 4) == 9, "DEC %llu", (unsigned long long)rd(&t, DATA_VA + 8, 4));
    CHECK(rd(&t, DATA_VA + 12, 4) == (uint32_t)-5, "IMIN signed %llx", (unsigned long long)rd(&t, DATA_VA + 12, 4));
    CHECK(ctr(&t).sem_reductions == 4, "reductions %llu", (unsigned long long)ctr(&t).sem_reductions);
    teardown(&t);
}

/* I2M (A140 and the same methods in CBC0): LINE_LENGTH_IN 0x180, LINE_COUNT 0x184, OFFSET_OUT_UPPER
 * 0x188, OFFSET_OUT 0x18c, PITCH_OUT 0x190, LAUNCH_DMA 0x1b0 (DST_MEMORY_LAYOUT 0 = pitch when 1,
 * COMPLETION_TYPE 5:4 = 2 release, SEMAPHORE_STRUCT_SIZE 12 = 1 one word), LOAD_INLINE_DATA 0x1b4,
 * SET_I2M_SEMAPHORE_A/B/C 0x1dc/0x1e0/0x1e4. */
static void i2m(h *t, uint32_t subch, uint64_t dst, uint32_t len, uint32_t lines, uint32_t pitch, const uint32_t *data,
                uint32_t ndw, uint64_t sem_va, uint32_t payload)
{
    uint32_t p[5] = {len, lines, (uint32_t)(dst >> 32), (uint32_t)dst, pitch};
    inc(t, subch, 0x180, p, 5);
    uint32_t s[3] = {(uint32_t)(sem_va >> 32), (uint32_t)sem_va, payload};
    inc(t, subch, 0x1dc, s, 3);
    m1(t, subch, 0x1b0, 1 | 2u << 4 | 1u << 12);
    noninc(t, subch, 0x1b4, data, ndw);
}

static void test_i2m_upload(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    const uint32_t data[3] = {0x03020100, 0x07060504, 0x0b0a0908};
    i2m(&t, SC_I2M, DATA_VA + 0x100, 10, 1, 0, data, 3, DATA_VA, 0xAB);
    i2m(&t, SC_COMPUTE, DATA_VA + 0x200, 4, 2, 16, data, 2, DATA_VA + 8, 0xCD);   /* two lines, pitch 16 */
    flush(&t);
    uint8_t got[12];
    vgt_error err;
    t.ops->mem_read(t.b, t.vas, DATA_VA + 0x100, got, 12, &err);
    for (int i = 0; i < 10; i++) CHECK(got[i] == i, "byte %d = %u", i, got[i]);
    CHECK(got[10] == 0 && got[11] == 0, "wrote past the line length");
    CHECK(rd(&t, DATA_VA, 4) == 0xAB, "A140 semaphore %llx", (unsigned long long)rd(&t, DATA_VA, 4));
    CHECK(rd(&t, DATA_VA + 0x200, 4) == 0x03020100 && rd(&t, DATA_VA + 0x210, 4) == 0x07060504, "pitch lines");
    CHECK(rd(&t, DATA_VA + 0x204, 4) == 0, "pitch gap written");
    CHECK(rd(&t, DATA_VA + 8, 4) == 0xCD, "compute I2M semaphore");
    CHECK(ctr(&t).uploads == 2 && ctr(&t).upload_bytes == 18, "uploads %llu bytes %llu",
           (unsigned long long)ctr(&t).uploads, (unsigned long long)ctr(&t).upload_bytes);
    teardown(&t);
}

/* A long inline upload runs as one non-increasing run (taken in bulk): every dword counts as a method,
 * every byte lands; behind an unsatisfied acquire the same upload waits and lands only once released. */
static void test_i2m_long_run_and_blocked(void)
{
    enum { N = 1000 };
    static uint32_t data[N];
    for (uint32_t i = 0; i < N; i++) data[i] = 0x9e3779b9u * (i + 1);
    h t;
    setup(&t);
    bind_all(&t);
    flush(&t);
    uint64_t before = ctr(&t).methods;
    i2m(&t, SC_I2M, DATA_VA + 0x1000, 4 * N, 1, 0, data, N, DATA_VA, 1);
    flush(&t);
    CHECK_EQ_U64(ctr(&t).methods - before, 5 + 3 + 1 + N, "methods counted for the upload");
    int same = 1;
    for (uint32_t i = 0; i < N; i++) same &= rd(&t, DATA_VA + 0x1000 + 4ull * i, 4) == data[i];
    CHECK(same, "the long upload's bytes");
    host_sem(&t, DATA_VA + 0x20, 9, 0);          /* ACQUIRE == 9: blocks */
    i2m(&t, SC_I2M, DATA_VA + 0x3000, 4 * N, 1, 0, data, N, DATA_VA + 0x30, 2);
    flush(&t);
    CHECK(rd(&t, DATA_VA + 0x3000, 4) == 0 && rd(&t, DATA_VA + 0x30, 4) == 0, "an upload ran past an unsatisfied acquire");
    host_sem(&t, DATA_VA + 0x20, 9, 1);
    vgt_error err;
    CHECK(flush_on(&t, t.ch2, &err) == VGT_OK, "%s", err.msg);
    same = 1;
    for (uint32_t i = 0; i < N; i++) same &= rd(&t, DATA_VA + 0x3000 + 4ull * i, 4) == data[i];
    CHECK(same && rd(&t, DATA_VA + 0x30, 4) == 2, "the queued upload after the release");
    teardown(&t);
}

/* Copy engine C8B5: OFFSET_IN_UPPER/LOWER 0x400/0x404, OFFSET_OUT_UPPER/LOWER 0x408/0x40c, PITCH_IN/OUT
 * 0x410/0x414, LINE_LENGTH_IN 0x418, LINE_COUNT 0x41c, SET_SEMAPHORE_A/B/PAYLOAD 0x240/0x244/0x248,
 * SET_REMAP_CONST_A 0x700, SET_REMAP_COMPONENTS 0x708, LAUNCH_DMA 0x300: DATA_TRANSFER_TYPE 1:0 (2 non
 * pipelined), SEMAPHORE_TYPE 4:3 (1 one word), SRC/DST_MEMORY_LAYOUT 7/8 (1 pitch), MULTI_LINE 9, REMAP 10. */
static void copy(h *t, uint64_t src, uint64_t dst, uint32_t len, uint32_t lines, uint32_t pin, uint32_t pout, uint32_t extra)
{
    uint32_t p[8] = {(uint32_t)(src >> 32), (uint32_t)src, (uint32_t)(dst >> 32), (uint32_t)dst, pin, pout, len, lines};
    inc(t, SC_COPY, 0x400, p, 8);
    uint32_t s[3] = {(uint32_t)(DATA_VA >> 32), (uint32_t)DATA_VA + 0xF00, 0x77};
    inc(t, SC_COPY, 0x240, s, 3);
    m1(t, SC_COPY, 0x300, 2 | 1u << 3 | 1u << 7 | 1u << 8 | (lines > 1 ? 1u << 9 : 0) | extra);
}

static void test_copy_engine(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    uint8_t src[64];
    for (int i = 0; i < 64; i++) src[i] = (uint8_t)(i * 3 + 1);
    vgt_error err;
    t.ops->mem_write(t.b, t.vas, DATA_VA + 0x1000, src, 64, &err);
    copy(&t, DATA_VA + 0x1000, DATA_VA + 0x2000, 64, 1, 0, 0, 0);          /* linear */
    copy(&t, DATA_VA + 0x1000, DATA_VA + 0x3000, 8, 3, 16, 32, 0);         /* pitch: 3 lines of 8 */
    /* memset: DST_X = CONST_A (4), COMPONENT_SIZE 4 (3 << 16), one source and one destination component */
    m1(&t, SC_COPY, 0x700, 0xDEADBEEF);
    m1(&t, SC_COPY, 0x708, 4 | 3u << 16);
    copy(&t, 0, DATA_VA + 0x4000, 4, 1, 0, 0, 1u << 10);
    flush(&t);
    uint8_t got[64];
    t.ops->mem_read(t.b, t.vas, DATA_VA + 0x2000, got, 64, &err);
    CHECK(!memcmp(got, src, 64), "linear copy differs");
    for (int l = 0; l < 3; l++) {
        t.ops->mem_read(t.b, t.vas, DATA_VA + 0x3000 + 32u * l, got, 8, &err);
        CHECK(!memcmp(got, src + 16 * l, 8), "pitch line %d differs", l);
    }
    CHECK(rd(&t, DATA_VA + 0x3008, 4) == 0, "pitch gap written");
    for (int i = 0; i < 4; i++) CHECK(rd(&t, DATA_VA + 0x4000 + 4u * i, 4) == 0xDEADBEEF, "memset word %d", i);
    CHECK(rd(&t, DATA_VA + 0x4010, 4) == 0, "memset too long");
    CHECK(rd(&t, DATA_VA + 0xF00, 4) == 0x77, "copy semaphore");
    CHECK(ctr(&t).copies == 3 && ctr(&t).memsets == 1, "copies %llu memsets %llu", (unsigned long long)ctr(&t).copies,
           (unsigned long long)ctr(&t).memsets);
    /* a block-linear source never described (SET_SRC_* all 0: an empty surface) is reported as not
     * modelled, not silently wrong */
    uint32_t p[2] = {0, 0};
    inc(&t, SC_COPY, 0x400, p, 2);
    m1(&t, SC_COPY, 0x300, 2 | 1u << 8);
    flush(&t);
    CHECK(t.events[VGT_BEV_UNSUPPORTED] == 1 && strstr(t.last_event, "block-linear"), "event: %s", t.last_event);
    teardown(&t);
}

/* Block-linear sides of a copy (clc8b5.h): SET_DST_BLOCK_SIZE 0x70c (WIDTH 3:0 in GOBs, 0 = one; HEIGHT 7:4
 * and DEPTH 11:8 log2 GOBs; GOB_HEIGHT 15:12, FERMI_8 = 1), SET_DST_WIDTH/HEIGHT/DEPTH/LAYER 0x710-0x71c,
 * DST_ORIGIN_X/Y 0x74c/0x750; for the source SET_SRC_BLOCK_SIZE 0x728, SET_SRC_WIDTH..LAYER 0x72c-0x738,
 * SRC_ORIGIN_X/Y 0x744/0x748, and the packed SET_SRC_ORIGIN 0x73c (X 15:0, Y 31:16). The expected offsets
 * are worked out by hand: GOB offset bits x0-3 y0 y1 x4 y2 x5, blocks of 2^h GOBs down, rows of blocks. */
typedef struct bl_desc { uint32_t block, width, height, depth, layer, x, y; } bl_desc;

static void bl_side(h *t, int dst, const bl_desc *s)
{
    uint32_t v[5] = {s->block | 1u << 12, s->width, s->height, s->depth, s->layer};
    inc(t, SC_COPY, dst ? 0x70c : 0x728, v, 5);
    uint32_t o[2] = {s->x, s->y};
    inc(t, SC_COPY, dst ? 0x74c : 0x744, o, 2);
}

/* OFFSET_IN..LINE_COUNT, then LAUNCH_DMA: non-pipelined, MULTI_LINE, the layouts given (1 pitch) */
static void launch_copy(h *t, uint64_t src, uint64_t dst, uint32_t len, uint32_t lines, uint32_t pin, uint32_t pout,
                        uint32_t src_pitch, uint32_t dst_pitch, uint32_t extra)
{
    uint32_t p[8] = {(uint32_t)(src >> 32), (uint32_t)src, (uint32_t)(dst >> 32), (uint32_t)dst, pin, pout, len, lines};
    inc(t, SC_COPY, 0x400, p, 8);
    m1(t, SC_COPY, 0x300, 2 | src_pitch << 7 | dst_pitch << 8 | 1u << 9 | extra);
}

static uint8_t pix(uint32_t x, uint32_t y) { return (uint8_t)(x * 7 + y * 31 + 1); }

#define IMG (DATA_VA + 0x10000)      /* 128 x 16 bytes, pitch 128: pix(x, y) */

static int rows_equal(h *t, uint64_t va, uint32_t pitch, uint32_t x0, uint32_t y0, uint32_t w, uint32_t lines)
{
    uint8_t got[256];
    vgt_error err;
    for (uint32_t l = 0; l < lines; l++) {
        if (t->ops->mem_read(t->b, t->vas, va + (uint64_t)l * pitch, got, w, &err) != VGT_OK) return 0;
        for (uint32_t x = 0; x < w; x++)
            if (got[x] != pix(x0 + x, y0 + l)) return 0;
    }
    return 1;
}

static void test_copy_block_linear(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    uint8_t img[128 * 16];
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t x = 0; x < 128; x++) img[y * 128 + x] = pix(x, y);
    vgt_error err;
    t.ops->mem_write(t.b, t.vas, IMG, img, sizeof img, &err);

    /* pitch -> block-linear: 128 x 16 bytes in blocks 2 GOBs tall (HEIGHT 1) */
    const uint64_t A = DATA_VA + 0x20000;
    bl_desc a = {.block = 1u << 4, .width = 128, .height = 16, .depth = 1};
    bl_side(&t, 1, &a);
    launch_copy(&t, IMG, A, 128, 16, 128, 0, 1, 0, 0);
    flush(&t);
    CHECK_EQ_U64(rd(&t, A + 0, 1), pix(0, 0), "(0, 0)");
    CHECK_EQ_U64(rd(&t, A + 16, 1), pix(0, 1), "(0, 1) at 16");
    CHECK_EQ_U64(rd(&t, A + 32, 1), pix(0, 2), "(0, 2) at 32");
    CHECK_EQ_U64(rd(&t, A + 64, 1), pix(16, 0), "(16, 0) at 64");
    CHECK_EQ_U64(rd(&t, A + 512, 1), pix(0, 8), "(0, 8): the block's second GOB");
    CHECK_EQ_U64(rd(&t, A + 1024, 1), pix(64, 0), "(64, 0): the second block");
    CHECK_EQ_U64(rd(&t, A + 1024 + 512 + 22, 1), pix(70, 9), "(70, 9)");
    CHECK_EQ_U64(rd(&t, A + 538, 1), pix(10, 9), "(10, 9)");

    /* block-linear -> pitch: the round trip is the identity */
    bl_side(&t, 0, &a);
    launch_copy(&t, A, DATA_VA + 0x30000, 128, 16, 0, 128, 0, 1, 0);
    /* a rectangle at an origin: 30 x 5 at (20, 9), into pitch 32 */
    bl_desc ao = a;
    ao.x = 20, ao.y = 9;
    bl_side(&t, 0, &ao);
    launch_copy(&t, A, DATA_VA + 0x38000, 30, 5, 0, 32, 0, 1, 0);
    /* a negative pitch: rows written bottom-up from the last one (PITCH_OUT -128) */
    bl_side(&t, 0, &a);
    launch_copy(&t, A, DATA_VA + 0x40000 + 15 * 128, 128, 16, 0, (uint32_t)-128, 0, 1, 0);
    flush(&t);
    CHECK(rows_equal(&t, DATA_VA + 0x30000, 128, 0, 0, 128, 16), "pitch -> block-linear -> pitch differs");
    CHECK(rows_equal(&t, DATA_VA + 0x38000, 32, 20, 9, 30, 5), "the rectangle at (20, 9) differs");
    CHECK(rd(&t, DATA_VA + 0x38000 + 30, 2) == 0, "the rectangle's line written past its length");
    for (uint32_t y = 0; y < 16; y++)
        CHECK(rows_equal(&t, DATA_VA + 0x40000 + (15 - y) * 128ull, 128, 0, y, 128, 1), "negative pitch: row %u", y);

    /* partial blocks at the edges: a 100 x 20 surface (2 GOBs across, 2 blocks of 16 rows down), 40 x 6
     * written at (50, 13), across the GOB columns and the block rows, then read back */
    const uint64_t P = DATA_VA + 0x50000;
    bl_desc p = {.block = 1u << 4, .width = 100, .height = 20, .depth = 1, .x = 50, .y = 13};
    bl_side(&t, 1, &p);
    launch_copy(&t, IMG, P, 40, 6, 128, 0, 1, 0, 0);
    bl_side(&t, 0, &p);
    launch_copy(&t, P, DATA_VA + 0x58000, 40, 6, 0, 64, 0, 1, 0);
    flush(&t);
    /* (50, 13): GOB column 0, GOB row 1 (the block's second GOB, 512), in the GOB (50, 5) = 2+16+64+128+256 */
    CHECK_EQ_U64(rd(&t, P + 512 + 466, 1), pix(0, 0), "(50, 13) of the partial surface");
    /* (64, 16): GOB column 1, block row 1 -> block 3 */
    CHECK_EQ_U64(rd(&t, P + 3 * 1024, 1), pix(14, 3), "(64, 16) of the partial surface");
    CHECK(rows_equal(&t, DATA_VA + 0x58000, 64, 0, 0, 40, 6), "the partial-block round trip differs");
    CHECK_EQ_U64(rd(&t, P + 0, 1), 0, "outside the rectangle written");

    /* block-linear -> block-linear: into blocks 1 GOB tall, then back to pitch */
    const uint64_t C = DATA_VA + 0x60000;
    bl_desc c = {.block = 0, .width = 128, .height = 16, .depth = 1};
    bl_side(&t, 0, &a);
    bl_side(&t, 1, &c);
    launch_copy(&t, A, C, 128, 16, 0, 0, 0, 0, 0);
    bl_side(&t, 0, &c);
    launch_copy(&t, C, DATA_VA + 0x68000, 128, 16, 0, 128, 0, 1, 0);
    flush(&t);
    CHECK_EQ_U64(rd(&t, C + 1024 + 26, 1), pix(10, 9), "(10, 9) in blocks 1 GOB tall: block 2");
    CHECK(rows_equal(&t, DATA_VA + 0x68000, 128, 0, 0, 128, 16), "block-linear -> block-linear differs");

    /* a 3D surface: 64 x 8 x 4 in blocks 2 GOBs deep (DEPTH 1); slice 3 (SET_DST_LAYER) is the second
     * layer of blocks (1024), the block's second GOB (512) */
    const uint64_t D = DATA_VA + 0x70000;
    bl_desc d = {.block = 1u << 8, .width = 64, .height = 8, .depth = 4, .layer = 3};
    bl_side(&t, 1, &d);
    launch_copy(&t, IMG, D, 64, 8, 128, 0, 1, 0, 0);
    flush(&t);
    CHECK_EQ_U64(rd(&t, D + 1536, 1), pix(0, 0), "slice 3 at 1536");
    CHECK_EQ_U64(rd(&t, D + 1536 + 5 + 16, 1), pix(5, 1), "(5, 1) of slice 3");
    CHECK_EQ_U64(rd(&t, D + 0, 8), 0, "slice 0 written");

    /* remap with a block-linear source: elements of 4 one-byte components (COMPONENT_SIZE 0, NUM_SRC and
     * NUM_DST 3 << 20, 3 << 24), X and Z swapped (DST_X = SRC_Z 2, DST_Z = SRC_X 0); WIDTH and ORIGIN_X
     * count elements: 32 elements = 128 bytes; 16 elements from element 16 (byte 64) of rows 9 and 10,
     * given by the packed SET_SRC_ORIGIN */
    m1(&t, SC_COPY, 0x708, 2 | 1u << 4 | 0u << 8 | 3u << 12 | 3u << 20 | 3u << 24);
    bl_desc r = {.block = 1u << 4, .width = 32, .height = 16, .depth = 1};
    bl_side(&t, 0, &r);
    m1(&t, SC_COPY, 0x73c, 16 | 9u << 16);
    launch_copy(&t, A, DATA_VA + 0x78000, 16, 2, 0, 64, 0, 1, 1u << 10);
    flush(&t);
    int same = 1;
    for (uint32_t l = 0; l < 2; l++)
        for (uint32_t e = 0; e < 16; e++)
            for (uint32_t k = 0; k < 4; k++) {
                uint32_t from = k == 0 ? 2 : k == 2 ? 0 : k;
                same &= rd(&t, DATA_VA + 0x78000 + l * 64 + e * 4 + k, 1) == pix(64 + e * 4 + from, 9 + l);
            }
    CHECK(same, "remapped block-linear read differs");
    CHECK(t.events[VGT_BEV_UNSUPPORTED] == 0 && t.events[VGT_BEV_FAULT] == 0, "event: %s", t.last_event);
    teardown(&t);
}

/* What the sim does not model is reported, and a hostile description costs no unbounded work. */
static void test_copy_block_linear_refused(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    const uint64_t A = DATA_VA + 0x20000;
    struct { bl_desc d; uint32_t len, lines; const char *what; } bad[] = {
        {{.block = 1, .width = 128, .height = 16, .depth = 1}, 128, 16, "block-linear"},            /* 2 GOBs wide */
        {{.block = 6u << 4, .width = 128, .height = 16, .depth = 1}, 128, 16, "block-linear"},      /* 64 GOBs tall */
        {{.block = 0, .width = 128, .height = 16, .depth = 1, .y = 10}, 128, 8, "leaves"},          /* rows 10..17 of 16 */
        {{.block = 0, .width = 128, .height = 16, .depth = 1, .x = 100}, 29, 1, "leaves"},          /* bytes 100..128 */
        {{.block = 0, .width = 128, .height = 16, .depth = 2, .layer = 2}, 128, 1, "leaves"},       /* slice 2 of 2 */
        {{.block = 5u << 4 | 5u << 8, .width = 0xffffffffu, .height = 0xffffffffu, .depth = 0xffffffffu}, 16, 1,
         "block-linear"},                                                                          /* past 2^57 */
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bl_side(&t, 1, &bad[i].d);
        launch_copy(&t, DATA_VA, A, bad[i].len, bad[i].lines, 128, 0, 1, 0, 0);
        flush(&t);
        CHECK(t.events[VGT_BEV_UNSUPPORTED] == (int)i + 1 && strstr(t.last_event, bad[i].what), "case %u: %s", i,
              t.last_event);
    }
    CHECK_EQ_U64(rd(&t, A, 8), 0, "a refused copy wrote");
    /* a surface running off the end of its mapping: a fault, not a write outside the map */
    bl_desc edge = {.block = 0, .width = 128, .height = 8, .depth = 1};
    bl_side(&t, 1, &edge);
    launch_copy(&t, DATA_VA, DATA_VA + MAP_LEN - 512, 128, 8, 128, 0, 1, 0, 0);
    vgt_error err;
    CHECK(flush_on(&t, t.ch, &err) == VGT_E_FAULT && strstr(err.msg, "copy destination"), "%s", err.msg);
    CHECK(t.events[VGT_BEV_FAULT] == 1, "faults %d: %s", t.events[VGT_BEV_FAULT], t.last_event);
    teardown(&t);
}

/* QMD V04_00 (clcbc0qmd.h): major 583:580; GRID_WIDTH/HEIGHT/DEPTH 1055:1024, 1071:1056, 1103:1088 and
 * CTA_THREAD_DIMENSION0/1/2 1167:1152, 1183:1168, 1199:1184 (1x1x1: a launch runs threads); RELEASE_ENABLE(0)
 * 320, STRUCTURE_SIZE(0) 322:321 (1 one word), RELEASE_SEMAPHORE0 ADDR_LOWER 671:640, ADDR_UPPER 696:672,
 * PAYLOAD_LOWER 735:704. Launch by address: SEND_PCAS_A 0x2b4 = QMD VA >> 8, SEND_SIGNALING_PCAS2_B 0x2c0 PCAS_ACTION 3 (schedule). */
static void make_qmd(uint8_t *q, uint64_t sem_va, uint32_t payload)
{
    memset(q, 0, VGT_QMD_MAX_BYTES);
    vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, 583, 580, 4);
    for (unsigned lo = 1024; lo <= 1088; lo += 32) vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, lo + 15, lo, 1);   /* grid */
    for (unsigned lo = 1152; lo <= 1184; lo += 16) vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, lo + 15, lo, 1);   /* block */
    vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, 320, 320, 1);
    vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, 322, 321, 1);
    vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, 671, 640, (uint32_t)sem_va);
    vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, 696, 672, sem_va >> 32);
    vgt_qmd_set_bits(q, VGT_QMD_MAX_BYTES, 735, 704, payload);
}

static void test_qmd_launch_release(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    uint8_t q[VGT_QMD_MAX_BYTES];
    make_qmd(q, DATA_VA + 0x500, 0x600D);
    vgt_error err;
    t.ops->mem_write(t.b, t.vas, DATA_VA + 0x8000, q, sizeof q, &err);
    m1(&t, SC_COMPUTE, 0x2b4, (uint32_t)((DATA_VA + 0x8000) >> 8));
    m1(&t, SC_COMPUTE, 0x2c0, 3);
    /* inline QMD: SET_INLINE_QMD_ADDRESS_A (INLINE_SIZE 384, bit 30) / B, LOAD_INLINE_QMD_DATA(0..95) */
    make_qmd(q, DATA_VA + 0x508, 0xBEEF);
    uint32_t a[2] = {1u << 30, (uint32_t)((DATA_VA + 0x9000) >> 8)};
    inc(&t, SC_COMPUTE, 0x318, a, 2);
    uint32_t words[96];
    memcpy(words, q, sizeof words);
    inc(&t, SC_COMPUTE, 0x320, words, 96);
    flush(&t);
    CHECK(rd(&t, DATA_VA + 0x500, 4) == 0x600D, "release by address %llx", (unsigned long long)rd(&t, DATA_VA + 0x500, 4));
    CHECK(rd(&t, DATA_VA + 0x508, 4) == 0xBEEF, "inline release %llx", (unsigned long long)rd(&t, DATA_VA + 0x508, 4));
    CHECK(rd(&t, DATA_VA + 0x9000 + 0x58, 4) == 0xBEEF, "inline QMD not stored at its address");
    CHECK(ctr(&t).launches == 2, "launches %llu", (unsigned long long)ctr(&t).launches);
    teardown(&t);
}

/* SET_REPORT_SEMAPHORE_A-D 0x1b00-0x1b0c (D: OPERATION 1:0 release 0, STRUCTURE_SIZE 28 one word) and
 * Hopper's REPORT_SEMAPHORE payload 0x158/0x15c, address 0x160/0x164, EXECUTE 0x168 (STRUCTURE_SIZE 4:3
 * one word 1, PAYLOAD_SIZE64 12). */
static void test_report_semaphores(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    uint32_t r[4] = {(uint32_t)(DATA_VA >> 32), (uint32_t)DATA_VA + 0x600, 0x1234, 1u << 28};
    inc(&t, SC_3D, 0x1b00, r, 4);
    uint32_t x[5] = {0x89ABCDEF, 0x01234567, (uint32_t)DATA_VA + 0x610, (uint32_t)(DATA_VA >> 32), 1u << 3 | 1u << 12};
    inc(&t, SC_COMPUTE, 0x158, x, 5);
    flush(&t);
    CHECK(rd(&t, DATA_VA + 0x600, 4) == 0x1234, "3D report %llx", (unsigned long long)rd(&t, DATA_VA + 0x600, 4));
    CHECK(rd(&t, DATA_VA + 0x610, 8) == 0x0123456789ABCDEFull, "report execute %llx",
           (unsigned long long)rd(&t, DATA_VA + 0x610, 8));
    CHECK(ctr(&t).report_semaphores == 2, "reports %llu", (unsigned long long)ctr(&t).report_semaphores);
    teardown(&t);
}

/* Draws are counted: BEGIN 0x1618 .. DRAW_VERTEX_ARRAY 0x0d78 .. END 0x1614, and the one-method
 * DRAW_VERTEX_ARRAY_BEGIN_END_INSTANCE_FIRST 0x1214. */
static void test_draws_counted(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    for (int i = 0; i < 2; i++) {
        m1(&t, SC_3D, 0x1618, 4);
        m1(&t, SC_3D, 0x0d78, 3);
        m1(&t, SC_3D, 0x1614, 0);
    }
    m1(&t, SC_3D, 0x1214, 3u << 16 | 4u << 28);
    m1(&t, SC_3D, 0x1614, 0);   /* an END without BEGIN is not a draw */
    flush(&t);
    CHECK(ctr(&t).draws == 3, "draws %llu", (unsigned long long)ctr(&t).draws);
    teardown(&t);
}

/* CLEAR_SURFACE (clcb97.h 0x19d0: R..A enables 2..5, MRT_SELECT 9:6) of a color target selected by
 * SET_CT_SELECT (0x121c, TARGET_COUNT 3:0, TARGET0 6:4) at SET_COLOR_TARGET_A/B/WIDTH/HEIGHT/FORMAT/MEMORY(j)
 * 0x800+64j.., with SET_COLOR_CLEAR_VALUE(0..3) 0xd80.. as floats: every pixel gets the value in the target's
 * format. A pitch A8R8G8B8 target (WIDTH is the row pitch in bytes) and a block-linear A8B8G8R8 one whose
 * pixel (x, y) lies at the GOB offset x%16 + (y%2)*16 + ((y/2)%2)*32 + ((x/16)%2)*64 + ... (x in bytes). */
static void clear_target(h *t, uint32_t slot, uint64_t va, uint32_t width, uint32_t height, uint32_t format,
                         uint32_t memory, uint32_t mask)
{
    uint32_t ct[] = { (uint32_t)(va >> 32), (uint32_t)va, width, height, format, memory };
    inc(t, SC_3D, 0x800 + 64 * slot, ct, 6);
    m1(t, SC_3D, 0x121c, 1u | slot << 4);
    m1(t, SC_3D, 0x19d0, mask << 2);
}

static void test_clear_surface(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    uint32_t value[4] = { 0x3f800000, 0x00000000, 0x3f000000, 0x3f800000 };   /* R 1, G 0, B 0.5, A 1 */
    inc(&t, SC_3D, 0xd80, value, 4);
    clear_target(&t, 0, DATA_VA, 16 * 4, 4, 0xCF, 1u << 12, 0xf);               /* pitch, 16x4, A8R8G8B8 */
    clear_target(&t, 2, DATA_VA + 0x10000, 32, 16, 0xD5, 1u << 4, 0xf);         /* block-linear, 2 GOBs tall */
    flush(&t);
    /* A8R8G8B8: B G R A in memory -> 0x80, 0x00, 0xff, 0xff */
    CHECK(rd(&t, DATA_VA, 4) == 0xffff0080u, "pitch px0 0x%llx", (unsigned long long)rd(&t, DATA_VA, 4));
    CHECK(rd(&t, DATA_VA + 3 * 64 + 15 * 4, 4) == 0xffff0080u, "pitch last pixel");
    CHECK(rd(&t, DATA_VA + 4 * 64, 4) == 0, "past the pitch target");
    /* A8B8G8R8: R G B A -> 0xff, 0x00, 0x80, 0xff; pixel (31, 15) is byte x 124: GOB row 1 (y/8), GOB col 1 */
    uint64_t bl = DATA_VA + 0x10000;
    CHECK(rd(&t, bl, 4) == 0xff8000ffu, "block-linear px0 0x%llx", (unsigned long long)rd(&t, bl, 4));
    uint32_t xb = 31 * 4, y = 15;
    uint64_t in_gob = xb % 16 + (y % 2) * 16 + ((y / 2) % 2) * 32 + ((xb / 16) % 2) * 64 + ((y / 4) % 2) * 128 +
                      ((xb / 32) % 2) * 256;
    uint64_t off = ((y / 8) % 2 + (xb / 64) * 2) * 512 + in_gob;   /* block 2 GOBs tall: GOB (col 1, row 1) */
    CHECK(rd(&t, bl + off, 4) == 0xff8000ffu, "block-linear last pixel at +0x%llx", (unsigned long long)off);
    CHECK(rd(&t, bl + 4 * 512, 4) == 0, "past the block-linear target");
    /* only G and A: R and B keep what was there */
    wr32(&t, DATA_VA + 0x20000, 0x11223344);
    value[1] = 0x3f800000;
    inc(&t, SC_3D, 0xd80, value, 4);
    clear_target(&t, 1, DATA_VA + 0x20000, 4, 1, 0xD5, 1u << 12, 0xa);          /* G and A */
    flush(&t);
    CHECK(rd(&t, DATA_VA + 0x20000, 4) == 0xff22ff44u, "masked clear 0x%llx", (unsigned long long)rd(&t, DATA_VA + 0x20000, 4));
    teardown(&t);
}

/* A release outside every mapping is a reported fault; so is an entry whose push buffer is unmapped. */
static void test_out_of_map_fault(void)
{
    h t;
    setup(&t);
    host_sem(&t, 0x7000000000ull, 1, 1);
    host_sem(&t, DATA_VA, 2, 1);                 /* execution goes on after the fault */
    vgt_error err;
    vgt_status rc = flush_on(&t, t.ch, &err);
    CHECK(rc == VGT_E_FAULT, "status %d", rc);
    CHECK(strstr(err.msg, "0x7000000000") && strstr(err.msg, "not mapped"), "message: %s", err.msg);
    CHECK(rd(&t, DATA_VA, 4) == 2, "stopped after the fault");
    uint64_t ent = gp_entry(0x6000000000ull, 16, 0);
    rc = t.ops->submit(t.b, t.ch, &ent, 1, 0, &err);
    CHECK(rc == VGT_E_FAULT && strstr(err.msg, "GPFIFO entry 0"), "unmapped entry: %d %s", rc, err.msg);
    CHECK(ctr(&t).faults == 2, "faults %llu", (unsigned long long)ctr(&t).faults);
    uint8_t b[8];
    CHECK(t.ops->mem_read(t.b, t.vas, DATA_VA + MAP_LEN - 4, b, 8, &err) == VGT_E_FAULT, "read across the map end");
    CHECK(t.ops->mem_write(t.b, t.vas, ~0ull - 2, b, 8, &err) == VGT_E_FAULT, "wrapping write");
    teardown(&t);
}

/* A launch runs a shader the sim does not execute: what was produced before it is no longer claimed
 * (the shader may have overwritten it), a copy from such bytes produces nothing, and a release after
 * the launch is produced again. */
static void test_launch_makes_memory_unknown(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    vgt_error err;
    uint8_t mask[8];
    host_sem(&t, DATA_VA, 0x11, 1);
    flush(&t);
    CHECK(t.ops->produced(t.b, t.vas, DATA_VA, 4, mask, &err) == VGT_OK && mask[0], "release not produced");
    uint8_t q[VGT_QMD_MAX_BYTES];
    make_qmd(q, DATA_VA + 0x500, 0x22);
    t.ops->mem_write(t.b, t.vas, DATA_VA + 0x8000, q, sizeof q, &err);
    m1(&t, SC_COMPUTE, 0x2b4, (uint32_t)((DATA_VA + 0x8000) >> 8));
    m1(&t, SC_COMPUTE, 0x2c0, 3);
    copy(&t, DATA_VA, DATA_VA + 0x40, 4, 1, 0, 0, 0);     /* after the launch, from a now-unknown source */
    flush(&t);
    CHECK(t.ops->produced(t.b, t.vas, DATA_VA, 4, mask, &err) == VGT_OK && !mask[0], "still produced after a launch");
    CHECK(t.ops->produced(t.b, t.vas, DATA_VA + 0x500, 4, mask, &err) == VGT_OK && mask[0], "QMD release not produced");
    CHECK(t.ops->produced(t.b, t.vas, DATA_VA + 0x40, 4, mask, &err) == VGT_OK && !mask[0], "copy of unknown bytes produced");
    CHECK(rd(&t, DATA_VA + 0x40, 4) == 0x11, "the copy itself still happened");
    wr32(&t, DATA_VA + 0x80, 7);                           /* host bytes are known again: a copy of them is produced */
    copy(&t, DATA_VA + 0x80, DATA_VA + 0xC0, 4, 1, 0, 0, 0);
    flush(&t);
    CHECK(t.ops->produced(t.b, t.vas, DATA_VA + 0xC0, 4, mask, &err) == VGT_OK && mask[0] && mask[3], "copy of known bytes");
    teardown(&t);
}

/* Subroutine-level entries are fetched like main ones; control entries are counted; STATE_ONLY
 * submissions track bindings but write nothing. */
static void test_entries_and_state_only(void)
{
    h t;
    setup(&t);
    vgt_error err;
    bind_all(&t);
    host_sem(&t, DATA_VA, 0x51, 1);
    t.ops->mem_write(t.b, t.vas, PB_VA + 0x8000, t.pb, 4ull * t.n, &err);
    uint64_t ents[2] = {gp_entry(PB_VA + 0x8000, t.n, 1), (uint64_t)0 /* control NOP */};
    t.n = 0;
    CHECK(t.ops->submit(t.b, t.ch, ents, 2, 0, &err) == VGT_OK, "%s", err.msg);
    CHECK(rd(&t, DATA_VA, 4) == 0x51, "subroutine entry not run");
    CHECK(ctr(&t).control_entries == 1, "control %llu", (unsigned long long)ctr(&t).control_entries);
    host_sem(&t, DATA_VA + 4, 0x52, 1);
    t.ops->mem_write(t.b, t.vas, PB_VA + 0x9000, t.pb, 4ull * t.n, &err);
    ents[0] = gp_entry(PB_VA + 0x9000, t.n, 0);
    CHECK(t.ops->submit(t.b, t.ch, ents, 1, VGT_SUBMIT_STATE_ONLY, &err) == VGT_OK, "%s", err.msg);
    CHECK(rd(&t, DATA_VA + 4, 4) == 0, "STATE_ONLY wrote memory");
    teardown(&t);
}

/* ---- MME: a macro uploaded on HOPPER_A emits a report semaphore release (its emissions are
 * dispatched like any method). The groups come from mme_enc.h (enc_tu104_raw, enc_report_release_macro),
 * whose TU104 field layout is written out from command-stream-facts.md section 1. */

static void test_mme_macro_release(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    uint32_t code[12];
    enc_report_release_macro(code);
    m1(&t, SC_3D, 0x0114, 0);                    /* LOAD_MME_INSTRUCTION_RAM_POINTER */
    noninc(&t, SC_3D, 0x0118, code, 12);         /* LOAD_MME_INSTRUCTION_RAM */
    m1(&t, SC_3D, 0x011c, 0);                    /* LOAD_MME_START_ADDRESS_RAM_POINTER */
    m1(&t, SC_3D, 0x0120, 0);                    /* LOAD_MME_START_ADDRESS_RAM */
    m1(&t, SC_3D, 0x3800, (uint32_t)(DATA_VA >> 32));             /* CALL_MME_MACRO(0) */
    uint32_t rest[2] = {(uint32_t)DATA_VA + 0x700, 0x4242};
    noninc(&t, SC_3D, 0x3804, rest, 2);                           /* CALL_MME_DATA(0) */
    host_sem(&t, DATA_VA + 0x704, 1, 1);         /* a host method after the call completes it */
    flush(&t);
    CHECK(ctr(&t).macro_calls == 1, "macro calls %llu", (unsigned long long)ctr(&t).macro_calls);
    CHECK(rd(&t, DATA_VA + 0x700, 4) == 0x4242, "macro-emitted release %llx (%s)",
           (unsigned long long)rd(&t, DATA_VA + 0x700, 4), t.last_event);
    CHECK(rd(&t, DATA_VA + 0x704, 4) == 1, "host release after the call");
    teardown(&t);
}

/* The MME program RAM is the channel's: a macro uploaded through the 3D object is called through the
 * compute object, bound only after the upload (what the NVIDIA Vulkan driver does on the H200). */
static void test_mme_upload_shared_by_objects(void)
{
    h t;
    setup(&t);
    m1(&t, SC_3D, 0, 0xCB97);
    uint32_t code[12];
    enc_report_release_macro(code);
    m1(&t, SC_3D, 0x0114, 0);
    noninc(&t, SC_3D, 0x0118, code, 12);
    m1(&t, SC_3D, 0x011c, 7);
    m1(&t, SC_3D, 0x0120, 0);
    m1(&t, SC_COMPUTE, 0, 0xCBC0);
    m1(&t, SC_COMPUTE, 0x3800 + 8 * 7, (uint32_t)(DATA_VA >> 32));   /* CALL_MME_MACRO(7) on compute */
    uint32_t rest[2] = {(uint32_t)DATA_VA + 0xA00, 0x5150};
    noninc(&t, SC_COMPUTE, 0x3804 + 8 * 7, rest, 2);
    host_sem(&t, DATA_VA + 0xA04, 1, 1);
    flush(&t);
    CHECK(ctr(&t).macro_calls == 1 && ctr(&t).macro_errors == 0, "calls %llu errors %llu (%s)",
           (unsigned long long)ctr(&t).macro_calls, (unsigned long long)ctr(&t).macro_errors, t.last_event);
    CHECK(rd(&t, DATA_VA + 0xA00, 4) == 0x5150, "release from the macro called through compute: %llx",
           (unsigned long long)rd(&t, DATA_VA + 0xA00, 4));
    teardown(&t);
}

/* A macro whose emissions block (a report ACQUIRE, D = 0x10000001: OPERATION ACQUIRE, ONE_WORD):
 * the rest of its emissions and the methods after the call wait, in order, until a host write
 * satisfies the acquire. */
static void test_mme_emitted_acquire_blocks(void)
{
    h t;
    setup(&t);
    bind_all(&t);
    uint32_t code[18];
    enc_tu104_raw(code, 0, (uint16_t)(0x1b00 >> 2 | 1u << 12), 0, 5, 3, 0, 4, 2);   /* A, B */
    enc_tu104_raw(code + 3, 0, 0x1000, 0x0001, 0, 3, 0, 10, 1);                     /* C, D = ACQUIRE */
    enc_tu104_raw(code + 6, 0, (uint16_t)(0x1b04 >> 2 | 1u << 12), 0, 5, 3, 0, 4, 2);   /* B, C again */
    enc_tu104_raw(code + 9, 0, 0x1000, 0x0000, 0, 10, 0, 0, 0);                     /* D = RELEASE */
    enc_tu104_raw(code + 12, 1, 0, 0, 0, 0, 0, 0, 0);
    enc_tu104_raw(code + 15, 0, 0, 0, 0, 0, 0, 0, 0);
    m1(&t, SC_3D, 0x0114, 0);
    noninc(&t, SC_3D, 0x0118, code, 18);
    m1(&t, SC_3D, 0x011c, 0);
    m1(&t, SC_3D, 0x0120, 0);
    m1(&t, SC_3D, 0x3800, (uint32_t)(DATA_VA >> 32));
    uint32_t rest[4] = {(uint32_t)DATA_VA + 0x900, 5, (uint32_t)DATA_VA + 0x904, 0x77};
    noninc(&t, SC_3D, 0x3804, rest, 4);
    host_sem(&t, DATA_VA + 0x908, 1, 1);
    flush(&t);
    CHECK(ctr(&t).macro_calls == 1 && ctr(&t).macro_errors == 0, "calls %llu errors %llu (%s)",
           (unsigned long long)ctr(&t).macro_calls, (unsigned long long)ctr(&t).macro_errors, t.last_event);
    CHECK(rd(&t, DATA_VA + 0x904, 4) == 0 && rd(&t, DATA_VA + 0x908, 4) == 0, "ran past the emitted acquire");
    CHECK(t.events[VGT_BEV_BLOCKED] == 1, "blocked events %d", t.events[VGT_BEV_BLOCKED]);
    wr32(&t, DATA_VA + 0x900, 5);
    CHECK(rd(&t, DATA_VA + 0x904, 4) == 0x77, "emitted release after the acquire passed");
    CHECK(rd(&t, DATA_VA + 0x908, 4) == 1, "host release after the call");
    vgt_error err;
    CHECK(t.ops->idle(t.b, 0, &err) == VGT_OK, "%s", err.msg);
    teardown(&t);
}

/* Format 1.1 slices: channel_state binds, channel_methods restores the copy engine's transfer parameters
 * and the MME program; the one submission then holds only LAUNCH_DMA, the macro call and a host release.
 * The state writes run like pushed methods but do not count as methods; the control without them shows
 * they are what made the copy and the macro work. */
static vgt_status restored_submission(h *t, int with_state)
{
    vgt_error err;
    vgt_rec_channel_state cs = {.client = 1, .channel = 0xC0, .subdevice_mask = 0xfff, .stored_subdevice_mask = 0xfff};
    cs.subch_class[SC_COPY] = 0xC8B5;
    cs.subch_class[SC_3D] = 0xCB97;
    CHECK(t->ops->channel_state(t->b, t->ch, &cs, &err) == VGT_OK, "%s", err.msg);
    uint32_t code[12];
    enc_report_release_macro(code);
    vgt_state_method m[40];
    uint32_t n = 0;
    const uint32_t p[8] = {0, (uint32_t)DATA_VA + 0x1000, 0, (uint32_t)DATA_VA + 0x2000, 0, 0, 64, 1};
    for (uint32_t i = 0; i < 8; i++) m[n++] = (vgt_state_method){SC_COPY, 0x400 + 4 * i, p[i]};
    m[n++] = (vgt_state_method){SC_COPY, 0x240, (uint32_t)(DATA_VA >> 32)};
    m[n++] = (vgt_state_method){SC_COPY, 0x244, (uint32_t)DATA_VA + 0xF00};
    m[n++] = (vgt_state_method){SC_COPY, 0x248, 0x77};
    m[n++] = (vgt_state_method){SC_3D, 0x0114, 0};
    for (uint32_t i = 0; i < 12; i++) m[n++] = (vgt_state_method){SC_3D, 0x0118, code[i]};
    m[n++] = (vgt_state_method){SC_3D, 0x011c, 0};
    m[n++] = (vgt_state_method){SC_3D, 0x0120, 0};
    if (with_state) CHECK(t->ops->channel_methods(t->b, t->ch, m, n, &err) == VGT_OK, "%s", err.msg);
    vgt_backend_counters before = ctr(t);
    CHECK(before.methods == 0 && before.submits == 0, "state writes counted as work: %llu methods",
           (unsigned long long)before.methods);
    m1(t, SC_COPY, 0x300, 2 | 1u << 3 | 1u << 7 | 1u << 8);   /* LAUNCH_DMA, pitch, one-word semaphore */
    m1(t, SC_3D, 0x3800, (uint32_t)(DATA_VA >> 32));
    uint32_t rest[2] = {(uint32_t)DATA_VA + 0x700, 0x4242};
    noninc(t, SC_3D, 0x3804, rest, 2);
    host_sem(t, DATA_VA + 0x704, 1, 1);
    vgt_status rc = flush_on(t, t->ch, &err);
    /* 9 pushed methods and what the macro emitted, nothing of the 27 state writes */
    CHECK(ctr(t).methods == 9 + ctr(t).macro_methods && ctr(t).submits == 1, "methods %llu",
           (unsigned long long)ctr(t).methods);
    return rc;
}

static void test_channel_methods_restore_state(void)
{
    h t;
    setup(&t);
    uint8_t src[64];
    for (int i = 0; i < 64; i++) src[i] = (uint8_t)(i * 5 + 3);
    vgt_error err;
    t.ops->mem_write(t.b, t.vas, DATA_VA + 0x1000, src, 64, &err);
    CHECK(restored_submission(&t, 1) == VGT_OK, "submit: %s", t.last_event);
    uint8_t got[64];
    t.ops->mem_read(t.b, t.vas, DATA_VA + 0x2000, got, 64, &err);
    CHECK(!memcmp(got, src, 64), "the copy with restored parameters differs");
    CHECK(rd(&t, DATA_VA + 0xF00, 4) == 0x77, "copy semaphore from restored SET_SEMAPHORE_*");
    CHECK(ctr(&t).macro_calls == 1 && ctr(&t).macro_errors == 0 && rd(&t, DATA_VA + 0x700, 4) == 0x4242,
           "restored macro: %llu calls %llu errors (%s)", (unsigned long long)ctr(&t).macro_calls,
           (unsigned long long)ctr(&t).macro_errors, t.last_event);
    vgt_state_method bad = {8, 0x200, 0};
    CHECK(t.ops->channel_methods(t.b, t.ch, &bad, 1, &err) == VGT_E_ARG && strstr(err.msg, "subchannel 8"), "%s", err.msg);
    teardown(&t);

    setup(&t);   /* the control */
    t.ops->mem_write(t.b, t.vas, DATA_VA + 0x1000, src, 64, &err);
    CHECK(restored_submission(&t, 0) == VGT_E_FAULT, "without the state the copy's semaphore goes to VA 0");
    t.ops->mem_read(t.b, t.vas, DATA_VA + 0x2000, got, 64, &err);
    CHECK(memcmp(got, src, 64) && rd(&t, DATA_VA + 0x700, 4) != 0x4242, "without the state the work still ran");
    teardown(&t);
}

static void test_backend_table(void)
{
    CHECK(vgt_backend_find("sim") == &vgt_backend_sim, "sim not found");
    CHECK(vgt_backend_find("gpu") != NULL && vgt_backend_find("cuda") != NULL, "gpu/cuda not registered");
    CHECK(vgt_backend_find("nope") == NULL, "unknown name found");
    vgt_error err;
    vgt_error_clear(&err);
    /* without a CUDA driver (VGT_CUDA_LIB names a library that is not there): a refusal that says so */
    setenv("VGT_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
    CHECK(vgt_backend_find("cuda") == &vgt_backend_cuda, "cuda is the libcuda backend");
    CHECK(vgt_backend_find("cuda")->probe(&err) == VGT_E_UNSUPPORTED && strstr(err.msg, "no CUDA driver"), "%s", err.msg);
    unsetenv("VGT_CUDA_LIB");
    char why[256];
    const vgt_backend_ops *a = vgt_backend_auto(why, sizeof why);
    if (a == &vgt_backend_sim) CHECK(why[0] != 0, "auto chose sim without saying why");
}

int main(void)
{
    test_backend_table();
    test_host_release();
    test_host_acquire_blocks_then_resumes();
    test_host_acquire_comparisons();
    test_host_reductions();
    test_i2m_upload();
    test_i2m_long_run_and_blocked();
    test_copy_engine();
    test_copy_block_linear();
    test_copy_block_linear_refused();
    test_qmd_launch_release();
    test_report_semaphores();
    test_draws_counted();
    test_clear_surface();
    test_out_of_map_fault();
    test_launch_makes_memory_unknown();
    test_entries_and_state_only();
    test_mme_macro_release();
    test_mme_emitted_acquire_blocks();
    test_mme_upload_shared_by_objects();
    test_channel_methods_restore_state();
    return check_finish("test_sim");
}
