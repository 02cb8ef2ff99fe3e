/* test_pushbuf.c: GPFIFO entries and push-buffer headers decoded from hand-built buffers.
 *
 * Expected decodes follow the layouts in NVIDIA open-gpu-doc classes/host/clc56f.h (GP_ENTRY0/1, DMA_*
 * method headers: SEC_OP 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0; subdevice mask 15:4 with
 * TERT_OP 17:16 = 1 set / 2 store / 3 use) and clc86f.h (SET_PB_SEGMENT_EXTENDED_BASE, operand 24:8);
 * method offsets from classes/compute/clcbc0.h (SEND_PCAS_A 0x02b4, LOAD_INLINE_DATA 0x01b4,
 * CALL_MME_MACRO(j) 0x3800+8j) and classes/3d/clcb97.h (WAIT_FOR_IDLE 0x0110).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/pushbuf.h"
#include "check.h"

/* ---- header builders (the bit layout of clc56f.h DMA_*) ---- */
static uint32_t hdr(uint32_t sec, uint32_t subch, uint32_t mthd, uint32_t count)
{
    return sec << 29 | (count & 0x1fffu) << 16 | subch << 13 | (mthd >> 2);
}
#define INC(s, m, n) hdr(1, s, m, n)
#define NONINC(s, m, n) hdr(3, s, m, n)
#define IMMD(s, m, d) hdr(4, s, m, d)
#define ONEINC(s, m, n) hdr(5, s, m, n)
#define END_SEGMENT (7u << 29)
#define SET_MASK(v) (1u << 16 | ((v) & 0xfffu) << 4)
#define STORE_MASK(v) (2u << 16 | ((v) & 0xfffu) << 4)
#define USE_MASK (3u << 16)

static uint64_t gp_entry(uint64_t va, uint32_t dwords, int level, int sync)
{
    uint32_t w0 = (uint32_t)va & ~3u;
    uint32_t w1 = (uint32_t)(va >> 32) & 0xffu;
    w1 |= (uint32_t)level << 9 | dwords << 10 | (uint32_t)sync << 31;
    return (uint64_t)w1 << 32 | w0;
}
static uint64_t gp_control(uint32_t opcode, uint32_t operand_w0)
{
    return (uint64_t)opcode << 32 | operand_w0;
}

/* ---- a recorder of everything the decoder reports ---- */
#define MAXM 256
typedef struct rec {
    vgt_method m[MAXM];
    int nm;
    vgt_diag_kind d[64];
    vgt_mpos dpos[64];
    char dmsg[64][256];
    int nd;
    vgt_gp_entry e[16];
    int ne;
    int stop_after;   /* stop after this many methods (0 never) */
} rec;

static int on_method(void *ctx, const vgt_method *m)
{
    rec *r = ctx;
    if (r->nm < MAXM) r->m[r->nm] = *m;
    r->nm++;
    return r->stop_after && r->nm >= r->stop_after;
}
static void on_diag(void *ctx, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg)
{
    rec *r = ctx;
    if (r->nd < 64) {
        r->d[r->nd] = kind;
        r->dpos[r->nd] = *pos;
        snprintf(r->dmsg[r->nd], sizeof r->dmsg[0], "%s", msg);
    }
    r->nd++;
}
static void on_entry(void *ctx, const vgt_gp_entry *e, uint32_t index, const vgt_mpos *pos)
{
    rec *r = ctx;
    if (r->ne < 16) r->e[r->ne] = *e;
    r->ne++;
}

static vgt_pb_callbacks callbacks(rec *r)
{
    memset(r, 0, sizeof *r);
    vgt_pb_callbacks cb = {.method = on_method, .entry = on_entry, .diag = on_diag, .ctx = r};
    return cb;
}

static void to_bytes(const uint32_t *dw, uint32_t n, uint8_t *out)
{
    for (uint32_t i = 0; i < n; i++)
        for (int b = 0; b < 4; b++) out[4 * i + b] = (uint8_t)(dw[i] >> (8 * b));
}

/* A GPFIFO_SUBMIT of n entries (raw 64-bit values, stored little-endian into entries, 8n bytes) over
 * nseg segments. */
static vgt_rec_gpfifo_submit submit_of(const uint64_t *raw, uint32_t n, uint8_t *entries, vgt_segment *segs,
                                       uint32_t nseg)
{
    for (uint32_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) entries[8 * i + b] = (uint8_t)(raw[i] >> (8 * b));
    vgt_rec_gpfifo_submit sub;
    memset(&sub, 0, sizeof sub);
    sub.entry_count = n;
    sub.segment_count = nseg;
    sub.entries = entries;
    sub.segments = segs;
    return sub;
}

static int decode(vgt_pb_state *st, const uint32_t *dw, uint32_t n, rec *r)
{
    uint8_t buf[4096];
    vgt_pb_callbacks cb = callbacks(r);
    vgt_error err;
    to_bytes(dw, n, buf);
    vgt_mpos pos = {7, 0, 0};
    return vgt_pb_decode(st, buf, 4 * n, pos, &cb, &err);
}

static int has_diag(const rec *r, vgt_diag_kind k)
{
    for (int i = 0; i < r->nd && i < 64; i++)
        if (r->d[i] == k) return 1;
    return 0;
}

static void expect_method(const rec *r, int i, uint32_t subch, uint32_t cls, uint32_t mthd, uint32_t data, int kind,
                          int first, uint32_t dword)
{
    if (i >= r->nm) {
        CHECK(0, "method %d missing (only %d)", i, r->nm);
        return;
    }
    const vgt_method *m = &r->m[i];
    CHECK(m->subch == subch && m->cls == cls && m->mthd == mthd && m->data == data && m->kind == kind &&
              m->first == first && m->pos.dword == dword && m->pos.seq == 7,
          "method %d: got subch %u cls %04x mthd 0x%04x data 0x%x kind %u first %u dword %u; expected %u %04x 0x%04x 0x%x %d %d %u",
          i, m->subch, m->cls, m->mthd, m->data, m->kind, m->first, m->pos.dword, subch, cls, mthd, data, kind, first,
          dword);
}

/* ---- tests ---- */

static void test_gp_entry(void)
{
    vgt_gp_entry e;
    vgt_gp_entry_decode(gp_entry(0x7f12345678ull, 100, 1, 1) | 1u, &e);   /* FETCH set */
    CHECK(e.va == 0x7f12345678ull && e.length == 100 && e.level == 1 && e.sync == 1 && e.fetch == 1 && !e.is_control,
          "entry: va 0x%llx len %u level %u sync %u fetch %u", (unsigned long long)e.va, e.length, e.level, e.sync, e.fetch);
    vgt_gp_entry_decode(gp_entry(0x1000, 0x1fffff, 0, 0), &e);           /* the largest LENGTH (30:10) */
    CHECK(e.length == 0x1fffff && e.level == 0 && e.sync == 0, "max length %u", e.length);
    /* SET_PB_SEGMENT_EXTENDED_BASE: operand 24:8 of word 0 is VA 56:40 */
    vgt_gp_entry_decode(gp_control(4, 0x1abcdu << 8), &e);
    CHECK(e.is_control && e.opcode == 4 && e.operand == 0x1abcd, "extended base: opcode %u operand 0x%x", e.opcode, e.operand);
    vgt_gp_entry_decode(gp_control(0, 0), &e);
    CHECK(e.is_control && e.opcode == 0, "control NOP");
    CHECK(!strcmp(vgt_gp_opcode_name(4), "SET_PB_SEGMENT_EXTENDED_BASE") && vgt_gp_opcode_name(99) == NULL, "opcode names");
}

static void test_header_kinds(void)
{
    vgt_pb_state st;
    rec r;
    vgt_pb_state_init(&st, 0xC86F);
    uint32_t pb[] = {
        INC(1, 0x0000, 1), 0x0000CBC0,               /* SET_OBJECT subch 1 = HOPPER_COMPUTE_A */
        INC(1, 0x02b4, 2), 0x00123456, 0x00000009,   /* SEND_PCAS_A, SEND_PCAS_B */
        NONINC(1, 0x01b4, 3), 0xa, 0xb, 0xc,         /* LOAD_INLINE_DATA x3 */
        ONEINC(1, 0x3810, 3), 1, 2, 3,               /* CALL_MME_MACRO(2) then CALL_MME_DATA(2) x2 */
        IMMD(1, 0x0110, 0x1fff),                     /* immediate, the largest 13-bit value */
        0x00000000,                                  /* legacy GRP0 with count 0: a NOP */
    };
    CHECK(decode(&st, pb, sizeof pb / 4, &r) == VGT_OK, "decode failed");
    CHECK(r.nm == 10, "expected 10 methods, got %d", r.nm);
    expect_method(&r, 0, 1, 0xC86F, 0x0000, 0xCBC0, VGT_HDR_INC, 1, 1);
    CHECK(r.m[0].is_host, "SET_OBJECT is a host method");
    CHECK(st.subch_class[1] == 0xCBC0, "SET_OBJECT bound subch 1 to %04x", st.subch_class[1]);
    expect_method(&r, 1, 1, 0xCBC0, 0x02b4, 0x00123456, VGT_HDR_INC, 1, 3);
    expect_method(&r, 2, 1, 0xCBC0, 0x02b8, 0x00000009, VGT_HDR_INC, 0, 4);
    expect_method(&r, 3, 1, 0xCBC0, 0x01b4, 0xa, VGT_HDR_NONINC, 1, 6);
    expect_method(&r, 4, 1, 0xCBC0, 0x01b4, 0xb, VGT_HDR_NONINC, 0, 7);
    expect_method(&r, 5, 1, 0xCBC0, 0x01b4, 0xc, VGT_HDR_NONINC, 0, 8);
    expect_method(&r, 6, 1, 0xCBC0, 0x3810, 1, VGT_HDR_ONEINC, 1, 10);
    expect_method(&r, 7, 1, 0xCBC0, 0x3814, 2, VGT_HDR_ONEINC, 0, 11);
    expect_method(&r, 8, 1, 0xCBC0, 0x3814, 3, VGT_HDR_ONEINC, 0, 12);
    expect_method(&r, 9, 1, 0xCBC0, 0x0110, 0x1fff, VGT_HDR_IMMD, 1, 13);
    CHECK(r.nd == 0, "no diagnostics expected, got %d (%s)", r.nd, r.nd ? r.dmsg[0] : "");
    CHECK_EQ_U64(st.run_remaining, 0, "no run pending");
}

static void test_host_and_unknown_subchannel(void)
{
    vgt_pb_state st;
    rec r;
    vgt_pb_state_init(&st, 0xC86F);
    uint32_t pb[] = {
        INC(5, 0x005c, 2), 0x1000, 0x7f,   /* SEM_ADDR_LO/HI on subch 5: host methods, no SET_OBJECT needed */
        INC(3, 0x0300, 1), 0x182,          /* 0x300 on subch 3 with nothing bound */
        INC(3, 0x0304, 1), 0x183,          /* again: reported once per subchannel, not per header */
    };
    decode(&st, pb, sizeof pb / 4, &r);
    CHECK(r.nm == 4, "4 methods, got %d", r.nm);
    expect_method(&r, 0, 5, 0xC86F, 0x005c, 0x1000, VGT_HDR_INC, 1, 1);
    CHECK(r.m[0].is_host && r.m[1].is_host && !r.m[2].is_host, "is_host flags");
    expect_method(&r, 2, 3, 0, 0x0300, 0x182, VGT_HDR_INC, 1, 4);
    CHECK(r.nd == 1 && r.d[0] == VGT_DIAG_UNKNOWN_SUBCHANNEL && r.dpos[0].dword == 4,
          "one UNKNOWN_SUBCHANNEL at dword 4, got %d diags (%s)", r.nd, r.nd ? r.dmsg[0] : "");
    /* a SET_OBJECT binds the subchannel and clears its report */
    uint32_t pb2[] = {INC(3, 0x0000, 1), 0xC8B5, INC(3, 0x0300, 1), 0x182};
    decode(&st, pb2, 4, &r);
    CHECK(r.nd == 0 && r.nm == 2 && r.m[1].cls == 0xC8B5 && st.unbound_reported == 0, "bound: %d diags, cls %04x",
          r.nd, r.m[1].cls);
}

static void test_subdevice_mask(void)
{
    vgt_pb_state st;
    rec r;
    vgt_pb_state_init(&st, 0xC86F);
    uint32_t pb[] = {
        SET_MASK(0x2), IMMD(0, 0x0008, 1),   /* only subdevice 1: subdevice 0 ignores the NOP */
        SET_MASK(0x1), IMMD(0, 0x0008, 2),   /* subdevice 0 again */
        STORE_MASK(0x4), IMMD(0, 0x0008, 3), /* stored, not yet in use */
        USE_MASK, IMMD(0, 0x0008, 4),        /* now in use: masked */
        SET_MASK(0xfff), IMMD(0, 0x0008, 5),
    };
    decode(&st, pb, sizeof pb / 4, &r);
    CHECK(r.nm == 5, "5 methods, got %d", r.nm);
    CHECK(r.m[0].masked == 1 && r.m[1].masked == 0 && r.m[2].masked == 0 && r.m[3].masked == 1 && r.m[4].masked == 0,
          "masked flags %d %d %d %d %d", r.m[0].masked, r.m[1].masked, r.m[2].masked, r.m[3].masked, r.m[4].masked);
    CHECK(st.subdevice_mask == 0xfff && st.stored_subdevice_mask == 0x4, "mask state 0x%x stored 0x%x",
          st.subdevice_mask, st.stored_subdevice_mask);
    /* a masked-off SET_OBJECT does not bind */
    uint32_t pb2[] = {SET_MASK(0x2), INC(2, 0x0000, 1), 0xC8B5, SET_MASK(0x1)};
    decode(&st, pb2, 4, &r);
    CHECK(st.subch_class[2] == 0, "masked SET_OBJECT bound subch 2 to %04x", st.subch_class[2]);
}

static void test_end_segment_and_illegal(void)
{
    vgt_pb_state st;
    rec r;
    vgt_pb_state_init(&st, 0xC56F);
    uint32_t pb[] = {IMMD(0, 0x0008, 1), hdr(6, 0, 0x100, 1), IMMD(0, 0x0008, 2), END_SEGMENT, IMMD(0, 0x0008, 3),
                     INC(0, 0x0008, 1), 4};
    decode(&st, pb, sizeof pb / 4, &r);
    CHECK(r.nm == 2 && r.m[0].data == 1 && r.m[1].data == 2, "END_PB_SEGMENT stops the entry: %d methods", r.nm);
    CHECK(has_diag(&r, VGT_DIAG_ILLEGAL_HEADER) && has_diag(&r, VGT_DIAG_END_SEGMENT), "illegal header and end diags");
    CHECK(r.nd == 2 && r.dpos[0].dword == 1 && r.dpos[1].dword == 3, "diag positions %u %u", r.dpos[0].dword, r.dpos[1].dword);
    /* GRP2 with a non-zero TERT_OP is not a method header */
    uint32_t pb2[] = {2u << 29 | 1u << 16};
    decode(&st, pb2, 1, &r);
    CHECK(r.nm == 0 && r.nd == 1 && r.d[0] == VGT_DIAG_ILLEGAL_HEADER, "GRP2 TERT 1 illegal");
}

static void test_count_past_segment(void)
{
    vgt_pb_state st;
    rec r;
    vgt_pb_state_init(&st, 0xC86F);
    uint32_t pb[20] = {INC(0, 0x0050, 12)};   /* SET_REFERENCE... 12 dwords announced, 4 present */
    for (int i = 1; i < 5; i++) pb[i] = (uint32_t)i;
    decode(&st, pb, 5, &r);
    CHECK(r.nm == 4, "4 methods from the 4 dwords present, got %d", r.nm);
    CHECK(r.nd == 1 && r.d[0] == VGT_DIAG_COUNT_PAST_SEGMENT, "one COUNT_PAST_SEGMENT, got %d", r.nd);
    CHECK(strstr(r.dmsg[0], "count runs past segment end at entry 0 dword 5") != NULL, "message: %s", r.dmsg[0]);
    CHECK(st.run_remaining == 8 && st.run_mthd == 0x0050 + 16, "run pending: %u left at 0x%x", st.run_remaining, st.run_mthd);
    /* a zero-length buffer decodes nothing and keeps the run */
    decode(&st, pb, 0, &r);
    CHECK(r.nm == 0 && st.run_remaining == 8, "empty buffer");
}

/* A run that continues in the next GPFIFO entry, through vgt_pb_decode_submit and its segment lookup. */
static void test_run_across_entries(void)
{
    uint32_t seg0[] = {INC(0, 0x0000, 1), 0xCB97, INC(0, 0x0800, 4), 0x11, 0x22};
    uint32_t seg1[] = {0x33, 0x44, IMMD(0, 0x0110, 0)};
    uint8_t b0[sizeof seg0], b1[sizeof seg1], entries[8 * 4];
    to_bytes(seg0, 5, b0);
    to_bytes(seg1, 3, b1);
    /* segments deliberately unsorted; entry 1 lies 8 bytes into its segment */
    uint8_t b1pad[8 + sizeof seg1] = {0};
    memcpy(b1pad + 8, b1, sizeof b1);
    vgt_segment segs[2] = {{0x20000, sizeof b1pad, 0, b1pad}, {0x10000, sizeof b0, 0, b0}};
    uint64_t raw[4] = {gp_entry(0x10000, 5, 0, 0), gp_control(0, 0), gp_entry(0x20008, 3, 1, 0),
                       gp_entry(0x30000, 4, 0, 0)};
    vgt_rec_gpfifo_submit sub = submit_of(raw, 4, entries, segs, 2);
    vgt_pb_state st;
    rec r;
    vgt_pb_callbacks cb = callbacks(&r);
    vgt_error err;
    vgt_pb_state_init(&st, 0xC86F);
    CHECK_STATUS(vgt_pb_decode_submit(&st, 7, &sub, &cb, &err), VGT_OK, &err, "decode_submit failed");
    CHECK(r.ne == 4 && r.e[1].is_control && r.e[2].level == 1, "4 entries reported, got %d", r.ne);
    CHECK(r.nm == 6, "6 methods, got %d", r.nm);
    expect_method(&r, 1, 0, 0xCB97, 0x0800, 0x11, VGT_HDR_INC, 1, 3);
    expect_method(&r, 2, 0, 0xCB97, 0x0804, 0x22, VGT_HDR_INC, 0, 4);
    expect_method(&r, 3, 0, 0xCB97, 0x0808, 0x33, VGT_HDR_INC, 0, 0);
    expect_method(&r, 4, 0, 0xCB97, 0x080c, 0x44, VGT_HDR_INC, 0, 1);
    CHECK(r.m[3].pos.entry == 2 && r.m[1].pos.entry == 0, "entries of the run: %u %u", r.m[1].pos.entry, r.m[3].pos.entry);
    expect_method(&r, 5, 0, 0xCB97, 0x0110, 0, VGT_HDR_IMMD, 1, 2);
    CHECK(has_diag(&r, VGT_DIAG_COUNT_PAST_SEGMENT) && has_diag(&r, VGT_DIAG_RUN_ACROSS_ENTRIES) &&
              has_diag(&r, VGT_DIAG_ADDRESS_NOT_CAPTURED),
          "diags: past segment, run across entries, address not captured (got %d)", r.nd);
}

/* ONE_INC runs split at each possible point keep their one increment; so do INC runs. */
static void test_split_runs(void)
{
    uint32_t pb[] = {ONEINC(1, 0x3810, 3), 1, 2, 3, INC(1, 0x0800, 3), 4, 5, 6};
    static const uint32_t want[] = {0x3810, 0x3814, 0x3814, 0x0800, 0x0804, 0x0808};
    for (uint32_t cut = 0; cut <= 8; cut++) {
        vgt_pb_state st;
        rec r1, r2;
        vgt_pb_state_init(&st, 0xC86F);
        st.subch_class[1] = 0xCB97;
        decode(&st, pb, cut, &r1);
        decode(&st, pb + cut, 8 - cut, &r2);
        CHECK(r1.nm + r2.nm == 6, "cut %u: %d + %d methods", cut, r1.nm, r2.nm);
        for (int i = 0; i < r1.nm + r2.nm && i < 6; i++) {
            const vgt_method *m = i < r1.nm ? &r1.m[i] : &r2.m[i - r1.nm];
            CHECK(m->mthd == want[i] && m->data == (uint32_t)i + 1 && m->first == (i == 0 || i == 3),
                  "cut %u method %d: 0x%04x data %u first %u", cut, i, m->mthd, m->data, m->first);
        }
    }
}

/* The bulk path: a NON_INC run in one call, split where the entry ends; SET_OBJECT by NON_INC binds. */
static int runs, run_count_total;
static uint32_t run_first_data, run_last_data, run_mthd;
static int on_run(void *ctx, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    runs++;
    run_count_total += (int)count;
    run_first_data = m->data;
    run_mthd = m->mthd;
    run_last_data = (uint32_t)data[4 * count - 4] | (uint32_t)data[4 * count - 3] << 8;
    return 0;
}

static void test_noninc_run(void)
{
    uint32_t pb[] = {NONINC(2, 0x0000, 2), 0xA140, 0xC8B5, NONINC(2, 0x0700, 5), 10, 11, 12, 13};
    uint8_t buf[sizeof pb];
    to_bytes(pb, 8, buf);
    vgt_pb_state st;
    rec r;
    vgt_pb_callbacks cb = callbacks(&r);
    cb.noninc_run = on_run;
    vgt_error err;
    vgt_mpos pos = {7, 0, 0};
    vgt_pb_state_init(&st, 0xC86F);
    vgt_pb_decode(&st, buf, sizeof buf, pos, &cb, &err);
    CHECK(st.subch_class[2] == 0xC8B5, "the last SET_OBJECT of the run binds: %04x", st.subch_class[2]);
    CHECK(r.nm == 0 && runs == 2 && run_count_total == 6 && run_mthd == 0x0700 && run_first_data == 10 &&
              run_last_data == 13 && st.run_remaining == 1,
          "bulk: %d methods, %d runs of %d dwords, mthd 0x%x first %u last %u, %u left", r.nm, runs, run_count_total,
          run_mthd, run_first_data, run_last_data, st.run_remaining);
    CHECK(st.methods == 6, "statistics count bulk methods: %llu", (unsigned long long)st.methods);
}

static void test_extended_base_and_truncation(void)
{
    uint32_t seg[] = {IMMD(0, 0x0008, 1), IMMD(0, 0x0008, 2)};
    uint8_t b[8], entries[8 * 3];
    to_bytes(seg, 2, b);
    /* VA 0x0001_2300_0000_1000: VA 56:40 = 0x123 from the extended base, 39:0 from the entry */
    uint64_t va = (0x123ull << 40) | 0x1000;
    vgt_segment segs[1] = {{va, sizeof b, VGT_SEGMENT_FLAG_TRUNCATED, b}};
    uint64_t raw[3] = {gp_control(4, 0x123u << 8), gp_entry(0x1000, 3, 0, 0), gp_entry(0x1000, 1, 0, 1)};
    vgt_rec_gpfifo_submit sub = submit_of(raw, 3, entries, segs, 1);
    vgt_pb_state st;
    rec r;
    vgt_pb_callbacks cb = callbacks(&r);
    vgt_error err;
    vgt_pb_state_init(&st, 0xC86F);
    vgt_pb_decode_submit(&st, 7, &sub, &cb, &err);
    CHECK(st.extended_base == 0x123ull << 40, "extended base 0x%llx", (unsigned long long)st.extended_base);
    CHECK(r.ne == 3 && r.e[1].va == va, "entry VA with the base applied: 0x%llx", (unsigned long long)r.e[1].va);
    /* entry 1 wants 3 dwords, 2 captured: 2 methods and a TRUNCATED_SEGMENT; entry 2 wants 1 */
    CHECK(r.nm == 3, "3 methods, got %d", r.nm);
    CHECK(r.nd == 1 && r.d[0] == VGT_DIAG_TRUNCATED_SEGMENT && r.dpos[0].entry == 1, "one truncation diag, got %d: %s",
          r.nd, r.nd ? r.dmsg[0] : "");
}

static void test_stop(void)
{
    vgt_pb_state st;
    rec r;
    vgt_pb_state_init(&st, 0xC86F);
    uint32_t pb[] = {NONINC(0, 0x0008, 5), 1, 2, 3, 4, 5};
    uint8_t buf[sizeof pb];
    to_bytes(pb, 6, buf);
    vgt_pb_callbacks cb = callbacks(&r);
    r.stop_after = 2;
    vgt_error err;
    vgt_mpos pos = {7, 0, 0};
    CHECK(vgt_pb_decode(&st, buf, sizeof buf, pos, &cb, &err) == VGT_OK && r.nm == 2 && st.stopped,
          "stop after 2: %d methods, stopped %u", r.nm, st.stopped);
    CHECK_STATUS(vgt_pb_decode(&st, NULL, 4, pos, &cb, &err), VGT_E_ARG, &err,
                 "NULL bytes with a length is an argument error");
}

/* Random bytes as push buffers and random GPFIFO entries over random segments: no crash, no over-read
 * (run under ASan with -DVGT_SANITIZE=ON), and never more methods than dwords. */
static void test_hostile(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    uint8_t *buf = malloc(4096);
    uint8_t entries[8 * 32];
    for (int round = 0; round < 2000; round++) {
        for (int i = 0; i < 4096; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = (uint8_t)x;
        }
        vgt_pb_state st;
        rec r;
        vgt_pb_callbacks cb = callbacks(&r);
        vgt_error err;
        vgt_pb_state_init(&st, 0xC86F);
        uint32_t len = (uint32_t)(x % 4096);   /* deliberately not a multiple of 4 at times */
        vgt_mpos pos = {1, 0, 0};
        vgt_pb_decode(&st, buf + (4096 - len), len, pos, &cb, &err);
        CHECK(r.nm <= (int)(len / 4), "round %d: %d methods from %u bytes", round, r.nm, len);
        /* entries pointing anywhere, some into the two segments, lengths up to the maximum */
        vgt_segment segs[2] = {{0x1000, 2048, 0, buf}, {0x1800, 2048, 0, buf + 2048}};
        uint64_t raw[32];
        for (int i = 0; i < 32; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            raw[i] = (i & 1) ? gp_entry(0x1000 + (x % 4096), (uint32_t)(x >> 40) & 0x1fffff, 0, 0) : x;
        }
        vgt_rec_gpfifo_submit sub = submit_of(raw, 32, entries, segs, 2);
        CHECK(vgt_pb_decode_submit(&st, 1, &sub, &cb, &err) == VGT_OK, "round %d: decode_submit failed", round);
    }
    free(buf);
}

int main(void)
{
    test_gp_entry();
    test_header_kinds();
    test_host_and_unknown_subchannel();
    test_subdevice_mask();
    test_end_segment_and_illegal();
    test_count_past_segment();
    test_run_across_entries();
    test_split_runs();
    test_noninc_run();
    test_extended_base_and_truncation();
    test_stop();
    test_hostile();
    return check_finish("test_pushbuf");
}
