/* test_mme_trace.c: MME macros across a trace (vgt/mme_trace.h) over a trace written with libvgt's writer:
 * uploads and calls in push buffers, each call resolved to the body in effect at that moment (upload,
 * call, re-upload a different body at the same index, call again), emitted methods and the names derived
 * from them, a simulator error with its pc and the call's position, upload pointers and start addresses
 * in 3-dword groups (TU104, as NVIDIA's driver writes them; Fermi in dwords), a compute object calling
 * code its channel's 3D object uploaded (one instruction RAM per channel), and the SQLite tables
 * (vgt_mme_db_fill).
 *
 * `test_mme_trace --write PATH` only writes the trace (tests/py/test_mme_cli.py uses it).
 *
 * Method offsets (open-gpu-doc classes/3d/clcb97.h HOPPER_A, classes/host/clc86f.h): SET_OBJECT 0x0000,
 * LOAD_MME_* 0x0114..0x0120, BEGIN 0x1618, END 0x1614, DRAW_VERTEX_ARRAY 0x0d78, CLEAR_SURFACE 0x19d0,
 * CALL_MME_MACRO(j) 0x3800 + 8j. Header layout (pushbuf.h): SEC_OP 31:29, COUNT 28:16, SUBCH 15:13,
 * ADDRESS 11:0 (dwords). */
#include "mme_enc.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include "vgt/mme_trace.h"
#include "vgt/trace.h"

#define CLIENT 0xC1D00001u
#define CH_A 0xBEEF0100u   /* 3D and compute objects */
#define CH_B 0xBEEF0200u   /* a second channel: its own instruction RAM */
#define HOPPER_A 0xCB97u
#define HOPPER_COMPUTE_A 0xCBC0u
#define M_BEGIN 0x1618u
#define M_END 0x1614u
#define M_DRAW_VERTEX_ARRAY 0x0d78u
#define M_CLEAR_SURFACE 0x19d0u

static const unsigned Z = VGT_MME_TU104_ZERO, L0 = VGT_MME_TU104_LOAD0;

/* ---- macro bodies --------------------------------------------------------------------------------- */
static enc_prog draw_p, clear_p, bad_p;

/* draw(mode, count): BEGIN = mode, DRAW_VERTEX_ARRAY = count, END = 0 */
static void build_draw(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 0, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, Z, Z, tu_mthd_imm(M_BEGIN, 0));
    tu_out(&in, 0, VGT_MME_OUT_IMM1, VGT_MME_OUT_ALU0);
    tu_add(p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, Z, Z, tu_mthd_imm(M_DRAW_VERTEX_ARRAY, 0));
    tu_out(&in, 0, VGT_MME_OUT_IMM1, VGT_MME_OUT_ALU0);
    tu_add(p, &in);
    in = tu_nop();
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, Z, Z, tu_mthd_imm(M_END, 0));
    tu_out(&in, 0, VGT_MME_OUT_IMM1, VGT_MME_OUT_IMM0);   /* imm0 = 0 */
    tu_add(p, &in);
    tu_end(p);
}

/* clear(bits): CLEAR_SURFACE = bits */
static void build_clear(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 0, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, Z, Z, tu_mthd_imm(M_CLEAR_SURFACE, 0));
    tu_out(&in, 0, VGT_MME_OUT_IMM1, VGT_MME_OUT_ALU0);
    tu_add(p, &in);
    tu_end(p);
}

/* bad: loads its parameter, then writes register 30 (no such register: ILLEGAL_OPCODE at pc 1) */
static void build_bad(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 0, L0, Z, 0);
    tu_add(p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 30, Z, Z, 0);
    tu_add(p, &in);
    tu_end(p);
}

/* ---- push buffers ------------------------------------------------------------------------------------ */
typedef struct pb {
    uint32_t dw[4096];
    uint32_t n;
} pb;

static uint32_t hdr(unsigned op, unsigned subch, uint32_t mthd, uint32_t count)
{
    return (uint32_t)op << 29 | count << 16 | subch << 13 | mthd >> 2;
}

/* INC header + values; returns the dword index of the first value. */
static uint32_t pb_inc(pb *p, unsigned subch, uint32_t mthd, const uint32_t *v, uint32_t n)
{
    p->dw[p->n++] = hdr(1, subch, mthd, n);
    uint32_t at = p->n;
    for (uint32_t i = 0; i < n; i++) p->dw[p->n++] = v[i];
    return at;
}

/* ONE_INC header: first value to mthd, the rest to mthd + 4. */
static uint32_t pb_oneinc(pb *p, unsigned subch, uint32_t mthd, const uint32_t *v, uint32_t n)
{
    p->dw[p->n++] = hdr(5, subch, mthd, n);
    uint32_t at = p->n;
    for (uint32_t i = 0; i < n; i++) p->dw[p->n++] = v[i];
    return at;
}

static void pb_bind(pb *p, unsigned subch, uint32_t cls) { pb_inc(p, subch, 0x0000, &cls, 1); }

/* Bind macro j to `start` and upload the body at `ptr` (both in instructions: TU104 groups, Fermi dwords). */
static void pb_upload(pb *p, unsigned subch, uint32_t j, uint32_t start, uint32_t ptr, const enc_prog *body)
{
    uint32_t bind[2] = {j, start};
    pb_inc(p, subch, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, bind, 2);
    uint32_t v[1 + 64];
    v[0] = ptr;
    for (uint32_t i = 0; i < body->n; i++) v[1 + i] = body->code[i];
    pb_oneinc(p, subch, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, v, 1 + body->n);
}

static uint32_t pb_call(pb *p, unsigned subch, uint32_t j, const uint32_t *params, uint32_t n)
{
    return pb_oneinc(p, subch, VGT_MME_M_CALL_MACRO0 + 8 * j, params, n);
}

/* ---- the trace ----------------------------------------------------------------------------------------- */
static void put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
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

static uint64_t next_va = 0x200000;

static int write_submit(vgt_writer *w, uint32_t handle, const pb *p, vgt_error *err)
{
    static uint8_t data[4 * 4096];
    uint8_t entry[8];
    uint64_t va = next_va;
    next_va += 0x10000;
    for (uint32_t i = 0; i < p->n; i++) put32(data + 4 * i, p->dw[i]);
    uint64_t e = (va & 0xfffffffcu) | ((uint64_t)(((va >> 32) & 0xffu) | p->n << 10) << 32);
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(e >> (8 * i));
    vgt_segment seg = {va, 4 * p->n, 0, data};
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

/* Where the calls of interest are: the CALL_MME_MACRO data dword in its submission. */
static uint32_t at_draw1, at_clear1, at_bad, at_draw2, at_compute, at_b_clear, at_b_draw;
static uint32_t start_clear2;

/* Every upload packs its body right after the previous one, pointers in groups (as gl_egl.vgt does).
 *  S0 (A): bind 3D on subch 0; upload draw -> 0x22 at 0, clear -> 0x23, bad -> 0x24
 *  S1 (A): call 0x22(4, 3), 0x23(0x3c), 0x24(7)
 *  S2 (A): re-upload the clear body at a new place and bind it to 0x22; call 0x22(0x3d)
 *  S3 (A): bind compute on subch 1; it binds its 0x40 to the draw body the 3D object uploaded; call it
 *  S4 (B): upload draw -> 0 and clear -> 1; call 1(0x3e), call 0(5, 6) */
static int make_trace(const char *path)
{
    static pb p;
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id = {"producer", "test_mme_trace"};
    if (vgt_writer_open_path(&w, path, &o, &id, 1, &err) != VGT_OK || write_channel(w, CH_A, &err) ||
        write_channel(w, CH_B, &err))
        goto fail;
    uint32_t nd = draw_p.n / 3, nc = clear_p.n / 3;   /* in groups */
    p.n = 0;
    pb_bind(&p, 0, HOPPER_A);
    pb_upload(&p, 0, 0x22, 0, 0, &draw_p);
    pb_upload(&p, 0, 0x23, nd, nd, &clear_p);
    pb_upload(&p, 0, 0x24, nd + nc, nd + nc, &bad_p);
    if (write_submit(w, CH_A, &p, &err)) goto fail;

    p.n = 0;
    at_draw1 = pb_call(&p, 0, 0x22, (const uint32_t[]){4, 3}, 2);
    at_clear1 = pb_call(&p, 0, 0x23, (const uint32_t[]){0x3c}, 1);
    at_bad = pb_call(&p, 0, 0x24, (const uint32_t[]){7}, 1);
    if (write_submit(w, CH_A, &p, &err)) goto fail;

    p.n = 0;
    start_clear2 = nd + nc + bad_p.n / 3;
    pb_upload(&p, 0, 0x22, start_clear2, start_clear2, &clear_p);
    at_draw2 = pb_call(&p, 0, 0x22, (const uint32_t[]){0x3d}, 1);
    if (write_submit(w, CH_A, &p, &err)) goto fail;

    p.n = 0;
    pb_bind(&p, 1, HOPPER_COMPUTE_A);   /* first seen after the uploads: the channel's RAM has them */
    pb_inc(&p, 1, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, (const uint32_t[]){0x40, 0}, 2);
    at_compute = pb_call(&p, 1, 0x40, (const uint32_t[]){1, 2}, 2);
    if (write_submit(w, CH_A, &p, &err)) goto fail;

    p.n = 0;
    pb_bind(&p, 0, HOPPER_A);
    pb_upload(&p, 0, 0, 0, 0, &draw_p);
    pb_upload(&p, 0, 1, nd, nd, &clear_p);
    at_b_clear = pb_call(&p, 0, 1, (const uint32_t[]){0x3e}, 1);
    at_b_draw = pb_call(&p, 0, 0, (const uint32_t[]){5, 6}, 2);
    if (write_submit(w, CH_B, &p, &err) || vgt_writer_close(w, &err)) goto fail;
    return 0;
fail:
    fprintf(stderr, "writing %s: %s\n", path, err.msg);
    return -1;
}

/* ---- what the calls looked like ------------------------------------------------------------------- */
typedef struct seen_call {
    uint64_t id, submission, seq;
    vgt_mpos pos;
    uint32_t channel, cls, index, version, nemits, categories;
    vgt_mme_emit emits[8];
    vgt_status status;
    vgt_mme_error error;
    uint32_t pc;
} seen_call;

typedef struct seen {
    seen_call c[32];
    uint32_t n;
} seen;

static int on_call(void *user, const vgt_mme_trace_call *k)
{
    seen *s = user;
    if (s->n == 32) return 0;
    seen_call *c = &s->c[s->n++];
    memset(c, 0, sizeof *c);
    *c = (seen_call){.id = k->id, .submission = k->submission, .seq = k->seq, .pos = k->pos, .channel = k->channel,
                     .cls = k->cls, .index = k->index, .version = k->macro ? k->macro->id : UINT32_MAX,
                     .nemits = k->nemits, .categories = k->categories};
    for (uint32_t i = 0; i < k->nemits && i < 8; i++) c->emits[i] = k->emits[i];
    c->status = k->status;
    c->error = k->result.error;
    c->pc = k->result.pc;
    return 0;
}

static const seen_call *find_call(const seen *s, uint64_t submission, uint32_t dword)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (s->c[i].submission == submission && s->c[i].pos.dword == dword) return &s->c[i];
    return NULL;
}

static void expect(const char *what, const seen_call *c, const uint32_t *pairs, uint32_t n)
{
    CHECK(c != NULL, "%s: no such call", what);
    if (!c) return;
    CHECK(c->status == VGT_OK, "%s: status %s", what, vgt_status_name(c->status));
    CHECK(c->nemits == n, "%s: %u emits, expected %u", what, c->nemits, n);
    for (uint32_t i = 0; i < n && i < c->nemits; i++)
        CHECK(c->emits[i].method == pairs[2 * i] && c->emits[i].value == pairs[2 * i + 1],
              "%s: emit %u (0x%04x, 0x%x), expected (0x%04x, 0x%x)", what, i, c->emits[i].method, c->emits[i].value,
              pairs[2 * i], pairs[2 * i + 1]);
}

static void check_calls(const seen *s, const vgt_mme_trace *t)
{
    const seen_call *d1 = find_call(s, 1, at_draw1), *c1 = find_call(s, 1, at_clear1), *bad = find_call(s, 1, at_bad),
                    *d2 = find_call(s, 2, at_draw2), *cp = find_call(s, 3, at_compute),
                    *bc = find_call(s, 4, at_b_clear), *bd = find_call(s, 4, at_b_draw);
    CHECK(s->n == 7, "%u calls seen, expected 7", s->n);
    expect("draw 0x22", d1, (const uint32_t[]){M_BEGIN, 4, M_DRAW_VERTEX_ARRAY, 3, M_END, 0}, 3);
    expect("clear 0x23", c1, (const uint32_t[]){M_CLEAR_SURFACE, 0x3c}, 1);
    expect("0x22 after the re-upload", d2, (const uint32_t[]){M_CLEAR_SURFACE, 0x3d}, 1);
    expect("compute 0x40 on the 3D object's code", cp,
           (const uint32_t[]){M_BEGIN, 1, M_DRAW_VERTEX_ARRAY, 2, M_END, 0}, 3);
    expect("channel B: clear at index 1", bc, (const uint32_t[]){M_CLEAR_SURFACE, 0x3e}, 1);
    expect("channel B: draw at index 0", bd, (const uint32_t[]){M_BEGIN, 5, M_DRAW_VERTEX_ARRAY, 6, M_END, 0}, 3);
    if (d1 && d2) CHECK(d1->version != d2->version, "re-upload at 0x22 kept version %u", d1->version);
    if (d1) CHECK(d1->categories & VGT_MME_EMIT_DRAW, "draw call categories 0x%x", d1->categories);
    if (cp) CHECK(cp->cls == HOPPER_COMPUTE_A, "compute call class 0x%x", cp->cls);
    CHECK(bad && bad->status == VGT_E_DECODE && bad->error == VGT_MME_ILLEGAL_OPCODE && bad->pc == 1,
          "bad call: %s %s pc %u", bad ? vgt_status_name(bad->status) : "missing",
          bad ? vgt_mme_error_name(bad->error) : "", bad ? bad->pc : 0);
    if (bad && d1) CHECK(bad->seq == d1->seq && bad->pos.entry == 0, "bad call at seq %llu entry %u",
                         (unsigned long long)bad->seq, bad->pos.entry);
    const vgt_mme_trace_stats *st = vgt_mme_trace_stats_get(t);
    CHECK(st->calls == 7 && st->call_errors == 1, "stats: %llu calls, %llu errors", (unsigned long long)st->calls,
          (unsigned long long)st->call_errors);
    CHECK(st->objects == 3 && st->channels == 2, "%llu objects on %llu channels", (unsigned long long)st->objects,
          (unsigned long long)st->channels);
}

/* The registry: versions with the hashes of the bodies as encoded, names derived from the emissions. */
static const vgt_mme_trace_macro *find_version(const vgt_mme_trace *t, uint32_t channel, uint32_t cls, uint32_t j,
                                               uint64_t hash)
{
    for (uint32_t i = 0; i < vgt_mme_trace_macro_count(t); i++) {
        const vgt_mme_trace_macro *v = vgt_mme_trace_macro_at(t, i);
        if (v->channel == channel && v->cls == cls && v->index == j && v->hash == hash) return v;
    }
    return NULL;
}

static void check_registry(const vgt_mme_trace *t)
{
    uint32_t nd, nc, nb;
    uint64_t hd = vgt_mme_body_hash(VGT_MME_TU104, draw_p.code, draw_p.n, 0, &nd);
    uint64_t hc = vgt_mme_body_hash(VGT_MME_TU104, clear_p.code, clear_p.n, 0, &nc);
    uint64_t hb = vgt_mme_body_hash(VGT_MME_TU104, bad_p.code, bad_p.n, 0, &nb);
    CHECK(nd == draw_p.n && nc == clear_p.n && nb == bad_p.n, "body extents %u %u %u", nd, nc, nb);
    const vgt_mme_trace_macro *d = find_version(t, CH_A, HOPPER_A, 0x22, hd),
                              *c = find_version(t, CH_A, HOPPER_A, 0x23, hc),
                              *b = find_version(t, CH_A, HOPPER_A, 0x24, hb),
                              *c2 = find_version(t, CH_A, HOPPER_A, 0x22, hc),
                              *gd = find_version(t, CH_B, HOPPER_A, 0, hd), *gc = find_version(t, CH_B, HOPPER_A, 1, hc);
    CHECK(d && c && b && c2 && gd && gc, "versions missing: %p %p %p %p %p %p", (void *)d, (void *)c, (void *)b,
          (void *)c2, (void *)gd, (void *)gc);
    if (!(d && c && b && c2 && gd && gc)) return;
    CHECK(!strcmp(vgt_mme_trace_macro_name(d, NULL), "draw"), "draw named '%s'", vgt_mme_trace_macro_name(d, NULL));
    CHECK(!strcmp(vgt_mme_trace_macro_name(c, NULL), "clear"), "clear named '%s'", vgt_mme_trace_macro_name(c, NULL));
    CHECK(d->calls == 1 && c->calls == 1 && c2->calls == 1 && b->calls == 1 && b->call_errors == 1,
          "call counts %llu %llu %llu %llu", (unsigned long long)d->calls, (unsigned long long)c->calls,
          (unsigned long long)c2->calls, (unsigned long long)b->calls);
    CHECK(d->start == 0 && c->start == draw_p.n / 3 && c->start_dword == draw_p.n && c2->start == start_clear2 &&
              c2->start_dword == 3 * start_clear2,
          "starts %u %u (dword %u) %u", d->start, c->start, c->start_dword, c2->start);
    CHECK(gc->start == draw_p.n / 3 && gc->start_dword == draw_p.n, "channel B start %u (dword %u)", gc->start,
          gc->start_dword);
    CHECK(d->dwords == draw_p.n && !memcmp(d->code, draw_p.code, 4 * draw_p.n), "draw body kept (%u dwords)", d->dwords);
    CHECK(d->first_submission == 0 && c2->first_submission == 2, "first seen %llu %llu",
          (unsigned long long)d->first_submission, (unsigned long long)c2->first_submission);
    CHECK(d->static_categories & VGT_MME_EMIT_DRAW, "draw static categories 0x%x", d->static_categories);
}

/* The naming rule table on its own. */
static void check_names(void)
{
    CHECK(!strcmp(vgt_mme_macro_name(VGT_MME_EMIT_DRAW | VGT_MME_EMIT_SET, 3), "draw"), "draw");
    CHECK(!strcmp(vgt_mme_macro_name(VGT_MME_EMIT_SET | VGT_MME_EMIT_SYNC, 1), "state setter"), "state setter");
    CHECK(!strcmp(vgt_mme_macro_name(VGT_MME_EMIT_CB_LOAD | VGT_MME_EMIT_SET, 1), "constant-buffer update"), "cb");
    CHECK(!strcmp(vgt_mme_macro_name(VGT_MME_EMIT_CB_BIND, 1), "constant-buffer bind"), "cb bind");
    CHECK(!strcmp(vgt_mme_macro_name(VGT_MME_EMIT_SET | VGT_MME_EMIT_UNKNOWN, 1), "mixed"), "mixed");
    CHECK(!strcmp(vgt_mme_macro_name(0, 1), "no emission"), "no emission");
    CHECK(!strcmp(vgt_mme_macro_name(VGT_MME_EMIT_DRAW, 0), "not called"), "not called");
    CHECK_EQ_U64(vgt_mme_emit_category(HOPPER_A, M_BEGIN), VGT_MME_EMIT_DRAW, "BEGIN");
    CHECK_EQ_U64(vgt_mme_emit_category(HOPPER_A, M_CLEAR_SURFACE), VGT_MME_EMIT_CLEAR, "CLEAR_SURFACE");
    CHECK_EQ_U64(vgt_mme_emit_category(HOPPER_A, 0x2390), VGT_MME_EMIT_CB_LOAD, "LOAD_CONSTANT_BUFFER");
    CHECK_EQ_U64(vgt_mme_emit_category(HOPPER_A, 0x1a24), VGT_MME_EMIT_UNKNOWN, "0x1a24 is not in the public table");
}

/* ---- SQLite -------------------------------------------------------------------------------------------- */
static long long q_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        CHECK(0, "prepare '%s': %s", sql, sqlite3_errmsg(db));
        return -1;
    }
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void q_text(sqlite3 *db, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *st;
    out[0] = '\0';
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        CHECK(0, "prepare '%s': %s", sql, sqlite3_errmsg(db));
        return;
    }
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

static void check_db(const char *path)
{
    sqlite3 *db;
    vgt_error err;
    CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK, "sqlite open");
    CHECK_STATUS(vgt_mme_db_schema(db, &err), VGT_OK, &err, "schema");
    uint64_t calls = 0;
    vgt_walk_options opt = vgt_walk_defaults();
    CHECK_STATUS(vgt_mme_db_fill(db, path, &opt, &calls, NULL, 0, &err), VGT_OK, &err, "fill");
    CHECK(calls == 7 && q_int(db, "SELECT count(*) FROM macro_calls") == 7, "%llu calls", (unsigned long long)calls);
    CHECK_EQ_U64(q_int(db, "SELECT count(*) FROM macro_call_params"), 10, "params rows");
    CHECK_EQ_U64(q_int(db, "SELECT count(*) FROM macro_emits"), 12, "emit rows");
    char buf[256];
    q_text(db, "SELECT group_concat(method, ',') FROM (SELECT e.method FROM macro_emits e JOIN macro_calls c USING(call)"
               " WHERE c.submission = 1 AND c.macro = 34 ORDER BY e.idx)", buf, sizeof buf);
    CHECK(!strcmp(buf, "BEGIN,DRAW_VERTEX_ARRAY,END"), "draw emits '%s'", buf);
    q_text(db, "SELECT name FROM macros WHERE channel = 3203334400 AND macro = 34 AND calls > 0 ORDER BY version LIMIT 1",
           buf, sizeof buf);
    CHECK(!strcmp(buf, "draw"), "macro 0x22 named '%s'", buf);
    /* "which calls emitted a draw" (docs/forensics-mme.md) */
    CHECK(q_int(db, "SELECT count(DISTINCT call) FROM macro_emits WHERE method IN ('BEGIN','END')"
                    " OR method LIKE 'DRAW\\_%' ESCAPE '\\'") == 2, "draw calls");
    q_text(db, "SELECT error || ' pc ' || pc FROM macro_calls WHERE status != 'VGT_OK'", buf, sizeof buf);
    CHECK(!strcmp(buf, "ILLEGAL_OPCODE pc 1"), "error row '%s'", buf);
    q_text(db, "SELECT value FROM macro_call_params WHERE call = (SELECT call FROM macro_calls WHERE submission = 4"
               " AND macro = 0) AND idx = 1", buf, sizeof buf);
    CHECK(!strcmp(buf, "6"), "param 1 of the group-unit draw '%s'", buf);
    CHECK(q_int(db, "SELECT length(code) FROM macros WHERE channel = 3203334400 AND macro = 34 ORDER BY version") ==
              4 * (long long)draw_p.n, "code blob");
    /* a submission window: only submission 1's calls */
    sqlite3_close(db);
    CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK, "sqlite open");
    CHECK_STATUS(vgt_mme_db_schema(db, &err), VGT_OK, &err, "schema");
    opt.submit_first = opt.submit_last = 1;
    CHECK_STATUS(vgt_mme_db_fill(db, path, &opt, &calls, NULL, 0, &err), VGT_OK, &err, "fill");
    CHECK(q_int(db, "SELECT count(*) FROM macro_calls") == 3 && calls == 3, "window calls");
    CHECK_EQ_U64(q_int(db, "SELECT count(*) FROM macro_calls WHERE macro = 36 AND status = 'VGT_E_DECODE'"), 1,
                 "window error");
    sqlite3_close(db);
}

/* The printer behind `vgt decode --expand-macros`: text and JSON lines, selected submissions only. */
static void check_printer(const char *path)
{
    for (int jsonl = 0; jsonl < 2; jsonl++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        vgt_mme_trace *t = NULL;
        vgt_error err;
        CHECK(f && vgt_mme_trace_new_printer(f, jsonl, &t, &err) == VGT_OK, "printer: %s", err.msg);
        if (!t) continue;
        vgt_walk_options opt = vgt_walk_defaults();
        opt.submit_first = opt.submit_last = 1;
        CHECK_STATUS(vgt_mme_trace_run(t, path, &opt, NULL, &err), VGT_OK, &err, "printer run");
        vgt_mme_trace_free(t);
        fclose(f);
        if (!jsonl) {
            CHECK(strstr(text, "    => call 0 macro 0x22 (draw, version ") != NULL, "text: %s", text);
            CHECK(strstr(text, "    =>   emit    0 0x1618 0x00000004 BEGIN = ") != NULL, "text: %s", text);
            CHECK(strstr(text, "ERROR ILLEGAL_OPCODE at pc 1") != NULL, "text: %s", text);
            CHECK(strstr(text, "0x3d") == NULL, "a call outside the window printed: %s", text);
        } else {
            int lines = 0;
            for (char *p = text; (p = strchr(p, '\n')); p++) lines++;
            const char *first = "{\"type\":\"macro_call\",\"expansion\":{\"call\":0,";
            CHECK(lines == 3 && !strncmp(text, first, strlen(first)),
                  "jsonl (%d lines): %s", lines, text);
            CHECK(strstr(text, "\"name\":\"DRAW_VERTEX_ARRAY\"") != NULL, "jsonl: %s", text);
        }
        free(text);
    }
}

/* A writer on a new temporary file (path: a mkstemp template, filled in) with channel ch allocated;
 * what names the producer. */
static vgt_writer *open_scratch(char *path, const char *what, uint32_t ch, vgt_error *err)
{
    int fd = mkstemp(path);
    vgt_writer *w = NULL;
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id = {"producer", what};
    CHECK(fd >= 0 && vgt_writer_open_path(&w, path, &o, &id, 1, err) == VGT_OK && !write_channel(w, ch, err),
          "open: %s", err->msg);
    close(fd);
    return w;
}

/* The trace at path run with every call collected into s (max_instructions 0: the default). */
static vgt_mme_trace *run_collect(const char *path, seen *s, uint64_t max_instructions)
{
    vgt_mme_trace_config cfg = {.on_call = on_call, .user = s, .sim = {.max_instructions = max_instructions}};
    vgt_mme_trace *t = NULL;
    vgt_error err;
    CHECK_STATUS(vgt_mme_trace_new(&cfg, &t, &err), VGT_OK, &err, "new");
    CHECK_STATUS(vgt_mme_trace_run(t, path, NULL, NULL, &err), VGT_OK, &err, "run");
    return t;
}

/* Hostile uploads and calls: pointers whose scaling to dwords overflows, a start address far outside the
 * RAM, garbage bodies, calls of unbound macros, data with no call. Every call is still reported, none
 * crashes or hangs the run. */
static void check_hostile(void)
{
    static pb p;
    char path[] = "/tmp/test_mme_trace_hostile_XXXXXX";
    vgt_error err;
    vgt_writer *w = open_scratch(path, "test_mme_trace hostile", CH_B, &err);
    p.n = 0;
    pb_bind(&p, 0, HOPPER_A);
    pb_upload(&p, 0, 0, 0, 0, &draw_p);
    pb_upload(&p, 0, 1, draw_p.n / 3, draw_p.n / 3, &clear_p);
    enc_prog garbage = {.n = 48};
    uint32_t x = 0x12345678u;
    for (uint32_t i = 0; i < garbage.n; i++) garbage.code[i] = x = x * 1103515245u + 12345u;
    pb_upload(&p, 0, 2, 0x55555556u, 0x55555556u, &garbage);   /* x3 overflows: dropped, out of bounds */
    pb_upload(&p, 0, 3, 0xffffffffu, 100, &garbage);            /* a start far outside the RAM */
    pb_upload(&p, 0, 4, 200, 200, &garbage);                    /* garbage, in bounds */
    pb_inc(&p, 0, VGT_MME_M_CALL_DATA0 + 8 * 9, (const uint32_t[]){1}, 1);   /* data with no call */
    uint32_t calls = 0;
    for (uint32_t j = 0; j < 8; j++, calls++) pb_call(&p, 0, j, (const uint32_t[]){j, 2 * j, 3 * j}, 1 + j % 3);
    pb_call(&p, 0, 255, (const uint32_t[]){0}, 1);
    calls++;
    CHECK(!write_submit(w, CH_B, &p, &err) && vgt_writer_close(w, &err) == VGT_OK, "write: %s", err.msg);
    seen s = {0};
    vgt_mme_trace *t = run_collect(path, &s, 10000);
    const vgt_mme_trace_stats *st = vgt_mme_trace_stats_get(t);
    CHECK(s.n == calls && st->calls == calls, "%u calls seen, %llu counted, %u made", s.n,
          (unsigned long long)st->calls, calls);
    CHECK(st->unbound_calls >= 4, "%llu unbound calls (5, 6, 7, 255 and the out-of-RAM 3)",
          (unsigned long long)st->unbound_calls);
    CHECK(st->orphan_data == 1, "%llu CALL_MME_DATA without a call", (unsigned long long)st->orphan_data);
    /* index 1 is still the clear body; called with 2 parameters it uses one: the other is discarded (TU104) */
    if (s.n >= 2)
        CHECK(s.c[1].nemits == 1 && s.c[1].emits[0].method == M_CLEAR_SURFACE && s.c[1].emits[0].value == 1 &&
                  s.c[1].error == VGT_MME_OK,
              "index 1: %u emits, %s", s.c[1].nemits, vgt_mme_error_name(s.c[1].error));
    vgt_mme_trace_free(t);
    unlink(path);
}

/* NVIDIA's guard pattern: a macro that reads one parameter, called with 21 (the leftovers are discarded with
 * the call on TU104), between two exact calls. vgt mme counts the call that left parameters unread, as a
 * fact about the driver, not an error. */
static void check_params_left(void)
{
    static pb p;
    char path[] = "/tmp/test_mme_trace_left_XXXXXX";
    vgt_error err;
    vgt_writer *w = open_scratch(path, "test_mme_trace params left", CH_B, &err);
    p.n = 0;
    pb_bind(&p, 0, HOPPER_A);
    pb_upload(&p, 0, 0, 0, 0, &clear_p);
    uint32_t many[21];
    many[0] = 2;
    for (uint32_t i = 1; i < 21; i++) many[i] = 0x08001000u + i;
    pb_call(&p, 0, 0, (const uint32_t[]){1}, 1);
    pb_call(&p, 0, 0, many, 21);
    pb_call(&p, 0, 0, (const uint32_t[]){3}, 1);
    CHECK(!write_submit(w, CH_B, &p, &err) && vgt_writer_close(w, &err) == VGT_OK, "write: %s", err.msg);
    seen s = {0};
    vgt_mme_trace *t = run_collect(path, &s, 0);
    const vgt_mme_trace_stats *st = vgt_mme_trace_stats_get(t);
    CHECK(st->calls == 3 && st->call_errors == 0 && st->params_left_calls == 1,
          "%llu calls, %llu with errors, %llu left parameters unread (want 3, 0, 1)", (unsigned long long)st->calls,
          (unsigned long long)st->call_errors, (unsigned long long)st->params_left_calls);
    if (s.n == 3)
        CHECK(s.c[2].nemits == 1 && s.c[2].emits[0].method == M_CLEAR_SURFACE && s.c[2].emits[0].value == 3,
              "the call after the guard sees its own parameter: %u emits, value 0x%x", s.c[2].nemits,
              s.c[2].nemits ? s.c[2].emits[0].value : 0);
    vgt_mme_trace_free(t);
    unlink(path);
}

/* A channel freed and allocated again under the same handle starts with no macros. */
static void check_realloc(void)
{
    static pb p;
    char path[] = "/tmp/test_mme_trace_realloc_XXXXXX";
    vgt_error err;
    vgt_rec_rm_free fr = {CLIENT, 0xC1D00002u, CH_A, 0};
    vgt_writer *w = open_scratch(path, "test_mme_trace realloc", CH_A, &err);
    p.n = 0;
    pb_bind(&p, 0, HOPPER_A);
    pb_upload(&p, 0, 0x22, 0, 0, &draw_p);
    pb_call(&p, 0, 0x22, (const uint32_t[]){4, 3}, 2);
    int bad = write_submit(w, CH_A, &p, &err) || vgt_write_rm_free(w, 0, &fr, &err) || write_channel(w, CH_A, &err);
    p.n = 0;
    pb_bind(&p, 0, HOPPER_A);
    pb_call(&p, 0, 0x22, (const uint32_t[]){4, 3}, 2);
    bad = bad || write_submit(w, CH_A, &p, &err) || vgt_writer_close(w, &err) != VGT_OK;
    CHECK(!bad, "write: %s", err.msg);
    seen s = {0};
    vgt_mme_trace *t = run_collect(path, &s, 0);
    CHECK(s.n == 2 && s.c[0].version != UINT32_MAX && s.c[0].nemits == 3 && s.c[1].version == UINT32_MAX,
          "%u calls; first version %u with %u emits, second version %u", s.n, s.c[0].version, s.c[0].nemits,
          s.c[1].version);
    const vgt_mme_trace_stats *st = vgt_mme_trace_stats_get(t);
    CHECK(st->objects == 2 && st->unbound_calls == 1 && st->versions == 1, "%llu objects, %llu unbound, %llu versions",
          (unsigned long long)st->objects, (unsigned long long)st->unbound_calls, (unsigned long long)st->versions);
    vgt_mme_trace_free(t);
    unlink(path);
}

/* A Fermi-format class (VOLTA_A 0xC397: classes 0x9000..0xC4FF use it): an instruction is a dword, so
 * pointers and start addresses are dwords (start 2 is dword 2, not group 2). */
static void check_fermi(void)
{
    static pb p;
    char path[] = "/tmp/test_mme_trace_fermi_XXXXXX";
    vgt_error err;
    vgt_writer *w = open_scratch(path, "test_mme_trace fermi", CH_A, &err);
    enc_prog body = {.n = 0};
    /* maddr = BEGIN; send R1 (the first parameter); two no-ops; exit with its delay slot */
    body.code[body.n++] = fe_imm(VGT_MME_FERMI_ADD_IMM, VGT_MME_FERMI_MOVE_SET_MADDR, 0, 0, M_BEGIN >> 2);
    body.code[body.n++] = fe_alu(0, VGT_MME_FERMI_MOVE_EMIT, 0, 1, 0);
    body.code[body.n++] = fe_nop();
    body.code[body.n++] = fe_nop();
    body.code[body.n++] = fe_exit(fe_nop());
    body.code[body.n++] = fe_nop();
    p.n = 0;
    pb_bind(&p, 0, 0xC397);
    pb_upload(&p, 0, 5, 0, 0, &body);
    pb_inc(&p, 0, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, (const uint32_t[]){6, body.n / 3}, 2);   /* dword 2 */
    pb_call(&p, 0, 5, (const uint32_t[]){0x77}, 1);
    pb_call(&p, 0, 6, (const uint32_t[]){0}, 1);
    CHECK(!write_submit(w, CH_A, &p, &err) && vgt_writer_close(w, &err) == VGT_OK, "write: %s", err.msg);
    seen s = {0};
    vgt_mme_trace *t = run_collect(path, &s, 0);
    CHECK(s.n == 2, "%u calls", s.n);
    if (s.n == 2) {
        expect("fermi macro 5", &s.c[0], (const uint32_t[]){M_BEGIN, 0x77}, 1);
        /* from dword 2: no-ops and the exit: no emission, clean, and bound */
        CHECK(s.c[1].version != UINT32_MAX && s.c[1].status == VGT_OK && s.c[1].nemits == 0,
              "fermi macro 6: version %u, %s, %u emits", s.c[1].version, vgt_status_name(s.c[1].status),
              s.c[1].nemits);
    }
    const vgt_mme_trace_macro *v = vgt_mme_trace_macro_count(t) ? vgt_mme_trace_macro_at(t, 0) : NULL;
    CHECK(v && v->fmt == VGT_MME_FERMI && v->index == 5 && v->dwords == body.n, "fermi version: fmt %d, %u dwords",
          v ? (int)v->fmt : -1, v ? v->dwords : 0);
    const vgt_mme_trace_macro *v6 = s.n == 2 && s.c[1].version != UINT32_MAX ? vgt_mme_trace_macro_at(t, s.c[1].version) : NULL;
    CHECK(v6 && v6->start == 2 && v6->start_dword == 2 && v6->dwords == body.n - 2, "fermi macro 6 at dword %u (%u dwords)",
          v6 ? v6->start_dword : 0, v6 ? v6->dwords : 0);
    vgt_mme_trace_free(t);
    unlink(path);
}

/* MME DMA from the trace's memory: the push buffer reads 4 captured words into the data RAM, a macro reads
 * one back with DREAD and emits it; a read of memory the trace never captured is a DMA error. */
static void check_dma(void)
{
    static pb p;
    const uint64_t mem = 0x7f00000000ull;
    char path[] = "/tmp/test_mme_trace_dma_XXXXXX";
    int fd = mkstemp(path);
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id = {"producer", "test_mme_trace dma"};
    uint8_t words[16];
    for (uint32_t i = 0; i < 4; i++) put32(words + 4 * i, 0x11 * (i + 1));
    vgt_rec_gpu_map map = {.client = CLIENT, .device = 0x20, .va_space = 0x30, .memory = 0x40, .gpu_va = mem,
                           .length = 1 << 20, .source = 4};
    vgt_rec_memory rec = {.gpu_va = mem, .length = sizeof words, .memory = 0x40, .data = words};
    CHECK(fd >= 0 && vgt_writer_open_path(&w, path, &o, &id, 1, &err) == VGT_OK && !write_channel(w, CH_A, &err) &&
              vgt_write_gpu_map(w, 0, &map, &err) == VGT_OK && vgt_write_memory(w, 0, &rec, &err) == VGT_OK,
          "open: %s", err.msg);
    close(fd);
    enc_prog dread = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, L0, Z, 0);                      /* consume the call's parameter */
    tu_alu(&in, 1, VGT_MME_TU104_DREAD, 0, VGT_MME_TU104_IMM, Z, 2);    /* R0 = dataRAM[2] */
    tu_add(&dread, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, 0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, Z, Z, tu_mthd_imm(M_CLEAR_SURFACE, 0));
    tu_out(&in, 0, VGT_MME_OUT_IMM1, VGT_MME_OUT_ALU0);
    tu_add(&dread, &in);
    tu_end(&dread);
    p.n = 0;
    pb_bind(&p, 0, HOPPER_A);
    pb_upload(&p, 0, 7, 0, 0, &dread);
    pb_inc(&p, 0, VGT_MME_M_SET_MEM_ADDRESS_A, (const uint32_t[]){(uint32_t)(mem >> 32), (uint32_t)mem, 0, 4}, 4);
    pb_call(&p, 0, 7, (const uint32_t[]){0}, 1);
    /* not captured: 0x7f00100000 is outside the one MEMORY record */
    pb_inc(&p, 0, VGT_MME_M_SET_MEM_ADDRESS_A, (const uint32_t[]){(uint32_t)(mem >> 32), 0x100000, 0, 4}, 4);
    CHECK(!write_submit(w, CH_A, &p, &err) && vgt_writer_close(w, &err) == VGT_OK, "write: %s", err.msg);
    seen s = {0};
    vgt_mme_trace *t = run_collect(path, &s, 0);
    CHECK(s.n == 1, "%u calls", s.n);
    if (s.n) expect("DREAD of the DMA'd word", &s.c[0], (const uint32_t[]){M_CLEAR_SURFACE, 0x33}, 1);
    CHECK(vgt_mme_trace_stats_get(t)->dma_errors == 1, "%llu DMA errors",
          (unsigned long long)vgt_mme_trace_stats_get(t)->dma_errors);
    vgt_mme_trace_free(t);
    unlink(path);
}

int main(int argc, char **argv)
{
    build_draw(&draw_p);
    build_clear(&clear_p);
    build_bad(&bad_p);
    if (argc == 3 && !strcmp(argv[1], "--write")) return make_trace(argv[2]) ? 2 : 0;

    char path[] = "/tmp/test_mme_trace_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || make_trace(path)) return 2;
    close(fd);
    check_names();
    seen s = {0};
    vgt_mme_trace_config cfg = {.on_call = on_call, .user = &s};
    vgt_mme_trace *t = NULL;
    vgt_error err;
    CHECK_STATUS(vgt_mme_trace_new(&cfg, &t, &err), VGT_OK, &err, "new");
    vgt_status rc = vgt_mme_trace_run(t, path, NULL, NULL, &err);
    CHECK(rc == VGT_OK, "run: %s", err.msg);
    if (rc == VGT_OK) {
        check_calls(&s, t);
        check_registry(t);
    }
    vgt_mme_trace_free(t);
    check_db(path);
    check_printer(path);
    unlink(path);
    check_hostile();
    check_params_left();
    check_realloc();
    check_fermi();
    check_dma();
    return check_finish("test_mme_trace");
}
