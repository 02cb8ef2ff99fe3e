/* test_pushbuf_walk.c: the trace walker (vgt/walk.h) over a trace written with libvgt's writer: order of
 * callbacks, SET_OBJECT state carried across submissions and through filters, a channel re-allocated
 * under the same handle starting over, submission/channel filters, stopping, and statistics; a channel's
 * decoder state taken from CHANNEL_STATE records (format 1.1: bindings and extended base, replaced by a
 * later record); stopping before a record (on_record_before) with a model the caller keeps; a state
 * preamble (CHANNEL_METHODS, format 1.1) delivered to on_state_method only, with the bindings of the
 * CHANNEL_STATE before it, the next submission's index and the filters' selection.
 *
 * Method offsets: host SET_OBJECT 0x0000, NOP 0x0008 (open-gpu-doc classes/host/clc56f.h);
 * HOPPER_COMPUTE_A SEND_PCAS_A 0x02b4 (classes/compute/clcbc0.h). Header layout as in test_pushbuf.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/walk.h"


#define CLIENT 0xC1D00001u
#define CH_A 0xCAFE0001u
#define CH_B 0xCAFE0002u
#define INC(s, m, n) (1u << 29 | (uint32_t)(n) << 16 | (uint32_t)(s) << 13 | (uint32_t)(m) >> 2)

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int write_channel(vgt_writer *w, uint32_t handle, vgt_error *err)
{
    vgt_rec_channel c;
    memset(&c, 0, sizeof c);
    c.client = CLIENT;
    c.parent = 0xC1D00002u;
    c.handle = handle;
    c.cls = 0xC86F;
    c.ring_va = 0x100000;
    c.entries = 1024;
    return vgt_write_channel(w, 0, &c, err);
}

/* One submission of one entry holding the dwords dw at va. */
static int write_submit(vgt_writer *w, uint32_t handle, uint64_t va, const uint32_t *dw, uint32_t n, vgt_error *err)
{
    uint8_t data[64], entry[8];
    for (uint32_t i = 0; i < n; i++) put32(data + 4 * i, dw[i]);
    uint64_t e = (va & 0xfffffffcu) | ((uint64_t)(((va >> 32) & 0xffu) | n << 10) << 32);
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(e >> (8 * i));
    vgt_segment seg = {va, 4 * n, 0, data};
    vgt_rec_gpfifo_submit s;
    memset(&s, 0, sizeof s);
    s.client = CLIENT;
    s.channel = handle;
    s.gp_get_after = VGT_GP_NOT_READ;
    s.entry_count = 1;
    s.segment_count = 1;
    s.entries = entry;
    s.segments = &seg;
    return vgt_write_gpfifo_submit(w, 0, &s, err);
}

/* submissions: 0 A binds subch 1 to CBC0; 1 B NOP; 2 A SEND_PCAS_A on subch 1; channel A freed and
 * re-created; 3 A SEND_PCAS_A on subch 1 again (no binding any more). */
static int make_trace(const char *path)
{
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id = {"producer", "test_pushbuf_walk"};
    const uint32_t bind[] = {INC(1, 0x0000, 1), 0xCBC0}, nop[] = {INC(0, 0x0008, 1), 7},
                   pcas[] = {INC(1, 0x02b4, 1), 0x1234};
    vgt_rec_rm_free fr = {CLIENT, 0xC1D00002u, CH_A, 0};
    if (vgt_writer_open_path(&w, path, &o, &id, 1, &err) != VGT_OK || write_channel(w, CH_A, &err) ||
        write_channel(w, CH_B, &err) || write_submit(w, CH_A, 0x200000, bind, 2, &err) ||
        write_submit(w, CH_B, 0x300000, nop, 2, &err) || write_submit(w, CH_A, 0x201000, pcas, 2, &err) ||
        vgt_write_rm_free(w, 0, &fr, &err) || write_channel(w, CH_A, &err) ||
        write_submit(w, CH_A, 0x202000, pcas, 2, &err) || vgt_writer_close(w, &err)) {
        fprintf(stderr, "writing %s: %s\n", path, err.msg);
        return -1;
    }
    return 0;
}

/* CHANNEL_STATE: submission 0 uses subch 1 bound only by the state, at a VA above the extended base; a
 * second state unbinds subch 1 and clears the base before submission 1. */
#define EXT_BASE (0x12ull << 40)
static int make_state_trace(const char *path)
{
    vgt_writer *w;
    vgt_error err;
    const uint32_t pcas[] = {INC(1, 0x02b4, 1), 0x1234};
    vgt_rec_channel_state cs = {CLIENT, CH_A, 0xfff, 0, EXT_BASE, {0, 0xCBC0}, 0xfff};
    vgt_rec_channel_state cleared = {CLIENT, CH_A, 0xfff, 0, 0, {0}, 0xfff};
    if (vgt_writer_open_path(&w, path, NULL, NULL, 0, &err) != VGT_OK || write_channel(w, CH_A, &err) ||
        vgt_write_channel_state(w, 0, &cs, &err) || write_submit(w, CH_A, EXT_BASE + 0x200000, pcas, 2, &err) ||
        vgt_write_channel_state(w, 0, &cleared, &err) || write_submit(w, CH_A, 0x201000, pcas, 2, &err) ||
        vgt_writer_close(w, &err)) {
        fprintf(stderr, "writing %s: %s\n", path, err.msg);
        return -1;
    }
    return 0;
}

typedef struct log {
    char text[4096];
    size_t len;
    int channels, channel_ends, records;
    int stop_at_method;   /* stop at the n-th method (1-based), 0 never */
    int methods;
} log;

static void logf_(log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>

#include "check.h"
static void logf_(log *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(l->text + l->len, sizeof l->text - l->len, fmt, ap);
    va_end(ap);
    if (n > 0 && l->len + (size_t)n < sizeof l->text) l->len += (size_t)n;
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *m)
{
    log *l = ctx;
    l->records++;
    if (rec->type == VGT_REC_GPFIFO_SUBMIT) CHECK(vgt_model_next_seq(m) == rec->seq + 1, "model applied before on_record");
    return 0;
}
static void on_channel(void *ctx, vgt_walk_channel *c)
{
    log *l = ctx;
    l->channels++;
    c->user = (void *)(uintptr_t)l->channels;
    logf_(l, "C%x ", c->handle & 0xf);
}
static void on_channel_end(void *ctx, vgt_walk_channel *c)
{
    ((log *)ctx)->channel_ends++;
}
static int on_begin(void *ctx, const vgt_walk_submit *s)
{
    logf_(ctx, "B%llu%s ", (unsigned long long)s->index, s->selected ? "" : "u");
    return 0;
}
static int on_end(void *ctx, const vgt_walk_submit *s)
{
    logf_(ctx, "E%llu ", (unsigned long long)s->index);
    return 0;
}
static void on_entry(void *ctx, const vgt_walk_submit *s, const vgt_gp_entry *e, uint32_t i)
{
    logf_(ctx, "e%u ", i);
}
static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    log *l = ctx;
    logf_(l, "m%x:%x:%x ", m->subch, m->cls, m->mthd);
    l->methods++;
    return l->stop_at_method && l->methods >= l->stop_at_method;
}
static void on_diag(void *ctx, const vgt_walk_submit *s, vgt_diag_kind k, const vgt_mpos *pos, const char *msg)
{
    logf_(ctx, "!%s ", vgt_diag_kind_name(k));
}

static vgt_walk_callbacks all_callbacks(log *l)
{
    memset(l, 0, sizeof *l);
    vgt_walk_callbacks cb = {.on_record = on_record, .on_channel = on_channel, .on_submit_begin = on_begin,
                             .on_submit_end = on_end, .on_entry = on_entry, .on_method = on_method,
                             .on_diag = on_diag, .on_channel_end = on_channel_end, .ctx = l};
    return cb;
}

static void expect_log(const log *l, const char *want)
{
    CHECK(!strcmp(l->text, want), "\n   got  \"%s\"\n   want \"%s\"", l->text, want);
}

static int stop_before_second_submit(void *ctx, const vgt_record *rec, const vgt_model *m)
{
    (void)ctx;
    return rec->type == VGT_REC_GPFIFO_SUBMIT && vgt_model_submit_count(m) == 1;
}

static void test_channel_state(void)
{
    char path[] = "/tmp/test_pushbuf_walk_state_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || make_state_trace(path)) {
        CHECK(0, "state trace");
        return;
    }
    close(fd);
    log l;
    vgt_walk_stats st;
    vgt_error err;
    vgt_walk_callbacks cb = all_callbacks(&l);
    CHECK(vgt_walk_path(path, NULL, &cb, &st, &err) == VGT_OK, "walk: %s", err.msg);
    expect_log(&l, "C1 B0 e0 m1:cbc0:2b4 E0 B1 e0 !UNKNOWN_SUBCHANNEL m1:0:2b4 E1 ");
    CHECK(st.diags == 1 && st.entries == 2, "the extended base found submission 0's segment: %llu diags",
          (unsigned long long)st.diags);

    /* stop before submission 1, on a model the caller keeps */
    cb = all_callbacks(&l);
    cb.on_record_before = stop_before_second_submit;
    vgt_walk_options o = vgt_walk_defaults();
    CHECK(vgt_model_new(&o.model, &err) == VGT_OK, "model");
    CHECK(vgt_walk_path(path, &o, &cb, &st, &err) == VGT_OK, "walk with a stop: %s", err.msg);
    expect_log(&l, "C1 B0 e0 m1:cbc0:2b4 E0 ");
    const vgt_model_channel *ch = vgt_model_channel_find(o.model, CLIENT, CH_A);
    CHECK(vgt_model_next_seq(o.model) == 4 && st.records == 4 && ch && ch->has_state && ch->state_seq == 3 &&
              ch->state.subch_class[1] == 0,
          "the caller's model holds the 4 records before submission 1: next seq %llu",
          (unsigned long long)vgt_model_next_seq(o.model));
    vgt_model_free(o.model);
    unlink(path);
}

/* CHANNEL_STATE binds subch 1; CHANNEL_METHODS writes 0x200 = 5 and 0x3400 = 9 there before submission 0;
 * one for a channel that is not alive (ignored); submission 1. */
static int make_methods_trace(const char *path)
{
    vgt_writer *w;
    vgt_error err;
    const uint32_t pcas[] = {INC(1, 0x02b4, 1), 0x1234};
    vgt_rec_channel_state cs = {CLIENT, CH_A, 0xfff, 0, 0, {0, 0xCBC0}, 0xfff};
    uint8_t writes[16];
    vgt_channel_method_put(writes, &(vgt_state_method){1, 0x0200, 5});
    vgt_channel_method_put(writes + 8, &(vgt_state_method){1, 0x3400, 9});
    vgt_rec_channel_methods cm = {CLIENT, CH_A, 0, 16, writes}, dead = {CLIENT, CH_B, 0, 8, writes};
    if (vgt_writer_open_path(&w, path, NULL, NULL, 0, &err) != VGT_OK || write_channel(w, CH_A, &err) ||
        vgt_write_channel_state(w, 0, &cs, &err) || vgt_write_channel_methods(w, 0, &cm, &err) ||
        write_submit(w, CH_A, 0x200000, pcas, 2, &err) || vgt_write_channel_methods(w, 0, &dead, &err) ||
        write_submit(w, CH_A, 0x201000, pcas, 2, &err) || vgt_writer_close(w, &err)) {
        fprintf(stderr, "writing %s: %s\n", path, err.msg);
        return -1;
    }
    return 0;
}

static int on_state_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    log *l = ctx;
    CHECK(s->preamble && !s->sub && s->rec && s->rec->type == VGT_REC_CHANNEL_METHODS && m->pos.seq == s->seq,
          "a preamble write comes with its record");
    logf_(l, "P%llu%s:%x:%x:%x=%x@%u ", (unsigned long long)s->index, s->selected ? "" : "u", m->subch, m->cls,
          m->mthd, m->data, m->pos.dword);
    return 0;
}

static void test_state_methods(void)
{
    char path[] = "/tmp/test_pushbuf_walk_methods_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || make_methods_trace(path)) {
        CHECK(0, "methods trace");
        return;
    }
    close(fd);
    log l;
    vgt_walk_stats st;
    vgt_error err;
    vgt_walk_callbacks cb = all_callbacks(&l);
    cb.on_state_method = on_state_method;
    CHECK(vgt_walk_path(path, NULL, &cb, &st, &err) == VGT_OK, "walk: %s", err.msg);
    expect_log(&l, "C1 P0:1:cbc0:200=5@0 P0:1:cbc0:3400=9@1 B0 e0 m1:cbc0:2b4 E0 B1 e0 m1:cbc0:2b4 E1 ");
    CHECK(st.methods == 2 && st.state_methods == 2 && l.methods == 2,
          "preamble writes are not submitted methods: %llu methods, %llu state writes", (unsigned long long)st.methods,
          (unsigned long long)st.state_methods);

    /* without on_state_method nobody sees them, on_method included */
    cb = all_callbacks(&l);
    CHECK(vgt_walk_path(path, NULL, &cb, &st, &err) == VGT_OK, "walk: %s", err.msg);
    expect_log(&l, "C1 B0 e0 m1:cbc0:2b4 E0 B1 e0 m1:cbc0:2b4 E1 ");

    /* they follow the filters of the submission they precede */
    cb = all_callbacks(&l);
    cb.on_state_method = on_state_method;
    vgt_walk_options o = vgt_walk_defaults();
    o.submit_first = 1;
    CHECK(vgt_walk_path(path, &o, &cb, &st, &err) == VGT_OK, "walk 1..: %s", err.msg);
    expect_log(&l, "C1 B1 e0 m1:cbc0:2b4 E1 ");
    o.deliver_unselected = 1;
    cb = all_callbacks(&l);
    cb.on_state_method = on_state_method;
    CHECK(vgt_walk_path(path, &o, &cb, &st, &err) == VGT_OK, "walk 1.. unselected: %s", err.msg);
    expect_log(&l, "C1 P0u:1:cbc0:200=5@0 P0u:1:cbc0:3400=9@1 B0u e0 m1:cbc0:2b4 E0 B1 e0 m1:cbc0:2b4 E1 ");
    unlink(path);
}

int main(void)
{
    char path[] = "/tmp/test_pushbuf_walk_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || make_trace(path)) return 1;
    close(fd);
    log l;
    vgt_walk_stats st;
    vgt_error err;

    /* everything */
    vgt_walk_callbacks cb = all_callbacks(&l);
    CHECK(vgt_walk_path(path, NULL, &cb, &st, &err) == VGT_OK, "walk: %s", err.msg);
    expect_log(&l, "C1 B0 e0 m1:c86f:0 E0 C2 B1 e0 m0:c86f:8 E1 B2 e0 m1:cbc0:2b4 E2 "
                   "C1 B3 e0 !UNKNOWN_SUBCHANNEL m1:0:2b4 E3 ");
    CHECK(l.records == 8 && st.records == 8 && st.submits == 4 && st.selected_submits == 4 && st.entries == 4 &&
              st.methods == 4 && st.pb_bytes == 32 && st.diags == 1,
          "stats: records %llu submits %llu entries %llu methods %llu bytes %llu diags %llu",
          (unsigned long long)st.records, (unsigned long long)st.submits, (unsigned long long)st.entries,
          (unsigned long long)st.methods, (unsigned long long)st.pb_bytes, (unsigned long long)st.diags);
    CHECK(l.channels == 3 && l.channel_ends == 2, "channel callbacks: %d new/reset, %d ends", l.channels, l.channel_ends);

    /* a submission range: earlier submissions decoded silently (the binding holds), the walk stops after */
    cb = all_callbacks(&l);
    vgt_walk_options o = vgt_walk_defaults();
    o.submit_first = o.submit_last = 2;
    CHECK(vgt_walk_path(path, &o, &cb, &st, &err) == VGT_OK, "walk 2..2: %s", err.msg);
    expect_log(&l, "C1 C2 B2 e0 m1:cbc0:2b4 E2 ");
    CHECK(st.submits == 3 && st.selected_submits == 1 && st.methods == 3, "stopped after the range: %llu submits",
          (unsigned long long)st.submits);

    /* a channel filter, with unselected submissions delivered (selected = 0) */
    cb = all_callbacks(&l);
    o = vgt_walk_defaults();
    o.has_channel = 1;
    o.channel = CH_B;
    o.deliver_unselected = 1;
    CHECK(vgt_walk_path(path, &o, &cb, &st, &err) == VGT_OK, "walk channel B: %s", err.msg);
    expect_log(&l, "C1 B0u e0 m1:c86f:0 E0 C2 B1 e0 m0:c86f:8 E1 B2u e0 m1:cbc0:2b4 E2 "
                   "C1 B3u e0 !UNKNOWN_SUBCHANNEL m1:0:2b4 E3 ");
    CHECK(st.selected_submits == 1, "one selected");

    /* a callback that stops the walk */
    cb = all_callbacks(&l);
    l.stop_at_method = 2;
    CHECK(vgt_walk_path(path, NULL, &cb, &st, &err) == VGT_OK, "stopped walk: %s", err.msg);
    expect_log(&l, "C1 B0 e0 m1:c86f:0 E0 C2 B1 e0 m0:c86f:8 ");

    /* no callbacks at all, and a missing file */
    CHECK(vgt_walk_path(path, NULL, NULL, &st, &err) == VGT_OK && st.methods == 4, "bare walk");
    CHECK(vgt_walk_path("/nonexistent/x.vgt", NULL, NULL, NULL, &err) == VGT_E_IO, "missing file: %s",
          vgt_status_name(err.code));
    unlink(path);
    test_channel_state();
    test_state_methods();
    return check_finish("test_pushbuf_walk");
}
