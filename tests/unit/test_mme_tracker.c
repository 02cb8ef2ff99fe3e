/* test_mme_tracker.c: the macro-upload tracker fed method writes as a push buffer would carry them:
 * uploads, start addresses, calls with parameters, shadow state for STATE (and its control modes),
 * DMA from the push buffer, body hashes, limits and the callback contract; TU104 pointers and start
 * addresses in 3-dword groups, Fermi ones in dwords; one instruction RAM per channel shared by its 3D
 * and compute classes, each class with its own start-address RAM and shadow state. */
#include "mme_enc.h"

#include <stdlib.h>

#define HOPPER_A 0xCB97u
#define HOPPER_COMPUTE_A 0xCBC0u

static const unsigned Z = VGT_MME_TU104_ZERO, IMM = VGT_MME_TU104_IMM, L0 = VGT_MME_TU104_LOAD0,
                      L1 = VGT_MME_TU104_LOAD1;

/* What the on_call callback saw last. */
typedef struct seen {
    int calls;
    uint32_t cls, macro, start, start_dword, nparams, params[16], nemits, body_dwords;
    vgt_mme_emit emits[16];
    uint64_t hash;
    vgt_status status;
    vgt_mme_error error;
    bool truncated;
    vgt_status fail_with;   /* returned by the callback when not VGT_OK */
} seen;

static vgt_status on_call(void *user, const vgt_mme_call *c, vgt_error *err)
{
    seen *s = user;
    s->calls++;
    s->cls = c->cls;
    s->macro = c->macro;
    s->start = c->start;
    s->start_dword = c->start_dword;
    s->nparams = c->nparams;
    for (uint32_t i = 0; i < c->nparams && i < 16; i++) s->params[i] = c->params[i];
    s->nemits = c->nemits;
    for (uint32_t i = 0; i < c->nemits && i < 16; i++) s->emits[i] = c->emits[i];
    s->hash = c->body_hash;
    s->body_dwords = c->body_dwords;
    s->status = c->status;
    s->error = c->result->error;
    s->truncated = c->params_truncated;
    if (s->fail_with != VGT_OK) return vgt_fail(err, s->fail_with, VGT_NO_OFFSET, "callback refused call %llu",
                                                (unsigned long long)c->seq);
    return VGT_OK;
}

static void feed(vgt_mme_tracker *t, uint32_t m, uint32_t v)
{
    vgt_error err;
    vgt_status rc = vgt_mme_tracker_feed(t, m, v, &err);
    CHECK(rc == VGT_OK, "feed(0x%04x, 0x%x): %s", m, v, err.msg);
}

static void feed_cls(vgt_mme_tracker *t, uint32_t cls, uint32_t m, uint32_t v)
{
    vgt_error err;
    vgt_status rc = vgt_mme_tracker_feed_class(t, cls, m, v, &err);
    CHECK(rc == VGT_OK, "feed(0x%04x: 0x%04x, 0x%x): %s", cls, m, v, err.msg);
}

/* at: in instructions of the format (TU104 groups, Fermi dwords); through the tracker's own class */
static void upload_cls(vgt_mme_tracker *t, uint32_t cls, uint32_t at, const enc_prog *p, uint32_t macro)
{
    vgt_error err;
    CHECK(enc_upload(t, cls, at, p, macro, &err) == VGT_OK, "upload of macro %u at %u: %s", macro, at, err.msg);
}

/* Macro A: emits LOAD0 + LOAD1 to 0x2000 and SET_MME_SHADOW_SCRATCH(2) (via STATE) to 0x2004. */
static void macro_a(enc_prog *p)
{
    p->n = 0;
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, L1, tu_mthd_imm(0x2000, 1));
    tu_alu(&in, 1, VGT_MME_TU104_STATE, 2, IMM, Z, 0x3400 / 4 + 2);
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(p, &in);
    tu_end(p);
}

/* Macro B: emits STATE(0x2000) + LOAD0 to 0x2100, then DREAD[3] to 0x2104. */
static void macro_b(enc_prog *p)
{
    p->n = 0;
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_STATE, 1, IMM, Z, 0x2000 / 4);
    tu_alu(&in, 1, VGT_MME_TU104_DREAD, 2, IMM, Z, 3);
    tu_add(p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 3, 1, L0, tu_mthd_imm(0x2100, 1));
    tu_alu(&in, 1, VGT_MME_TU104_ADD, Z, 2, Z, 0);
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(p, &in);
    tu_end(p);
}

static vgt_mme_tracker *make(uint32_t cls, seen *s, uint32_t max_params)
{
    vgt_mme_tracker_config cfg = {.cls = cls, .on_call = on_call, .user = s, .read_mem = fake_read_mem,
                                  .max_call_params = max_params};
    vgt_mme_tracker *t = NULL;
    vgt_error err;
    CHECK_STATUS(vgt_mme_tracker_create(&cfg, &t, &err), VGT_OK, &err, "create");
    return t;
}

static void test_calls(void)
{
    seen s = {0};
    vgt_mme_tracker *t = make(0xC597, &s, 0);
    if (!t) return;
    enc_prog a, b;
    macro_a(&a);
    macro_b(&b);
    upload_cls(t, 0xC597, 0, &a, 0);
    upload_cls(t, 0xC597, 30, &b, 1);
    feed(t, VGT_MME_M_SET_SHADOW_SCRATCH0 + 8, 0x99);
    feed(t, VGT_MME_M_CALL_MACRO0, 5);
    feed(t, VGT_MME_M_CALL_DATA0, 6);
    CHECK_EQ_U64(s.calls, 0, "the call runs only when it is complete");
    feed(t, 0x1000, 1);   /* any other method completes the call */
    CHECK(s.calls == 1 && s.macro == 0 && s.start == 0 && s.nparams == 2 && s.params[0] == 5 && s.params[1] == 6,
          "call A: calls %d macro %u start %u nparams %u", s.calls, s.macro, s.start, s.nparams);
    CHECK(s.status == VGT_OK && s.nemits == 2 && s.emits[0].method == 0x2000 && s.emits[0].value == 11 &&
              s.emits[1].method == 0x2004 && s.emits[1].value == 0x99,
          "call A: status %s, %u emits", vgt_status_name(s.status), s.nemits);
    CHECK(vgt_mme_tracker_shadow(t, 0xC597, 0x2000) == 11 && vgt_mme_tracker_shadow(t, 0xC597, 0x1000) == 1,
          "emissions and push-buffer writes reach the shadow");
    CHECK(s.body_dwords == a.n && s.hash == vgt_mme_body_hash(VGT_MME_TU104, a.code, a.n, 0, NULL),
          "call A body: %u dwords", s.body_dwords);

    /* DMA from the push buffer fills the data RAM that macro B reads */
    mem_words[0] = 0x1111;
    mem_words[1] = 0x2222;
    feed(t, VGT_MME_M_SET_MEM_ADDRESS_A, (uint32_t)(MEM_BASE >> 32));
    feed(t, VGT_MME_M_SET_MEM_ADDRESS_B, (uint32_t)MEM_BASE);
    feed(t, VGT_MME_M_SET_DATA_RAM_ADDRESS, 2);
    feed(t, VGT_MME_M_DMA_READ, 2);
    feed(t, VGT_MME_M_CALL_MACRO0 + 8, 100);
    vgt_error err;
    CHECK_STATUS(vgt_mme_tracker_flush(t, &err), VGT_OK, &err, "flush");
    CHECK(s.calls == 2 && s.macro == 1 && s.start == 30 && s.start_dword == 90 && s.nemits == 2 && s.emits[0].value == 111 &&
              s.emits[1].method == 0x2104 && s.emits[1].value == 0x2222,
          "call B: calls %d macro %u emits %u (%u, %u)", s.calls, s.macro, s.nemits, s.emits[0].value, s.emits[1].value);
    CHECK(vgt_mme_tracker_flush(t, &err) == VGT_OK && s.calls == 2, "a second flush runs nothing");

    /* the same code bound elsewhere hashes the same */
    upload_cls(t, 0xC597, 60, &a, 2);
    uint64_t h0, h2;
    uint32_t st, sd, n0, n2;
    CHECK(vgt_mme_tracker_macro(t, 0xC597, 0, &st, &sd, &h0, &n0, &err) == VGT_OK &&
              vgt_mme_tracker_macro(t, 0xC597, 2, &st, &sd, &h2, &n2, &err) == VGT_OK && h0 == h2 && n0 == n2 &&
              st == 60 && sd == 180,
          "hash by content: %016llx %016llx", (unsigned long long)h0, (unsigned long long)h2);
    CHECK_STATUS(vgt_mme_tracker_macro(t, 0xC597, 7, NULL, NULL, NULL, NULL, &err), VGT_E_NOT_FOUND, &err,
                 "unbound macro");
    CHECK_STATUS(vgt_mme_tracker_macro(t, 0xC5C0, 0, NULL, NULL, NULL, NULL, &err), VGT_E_NOT_FOUND, &err,
                 "a class never fed");
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 61);   /* group 61: the second group of macro 2 */
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 0x12345678);
    CHECK(vgt_mme_tracker_macro(t, 0xC597, 2, NULL, NULL, &h2, NULL, &err) == VGT_OK && h2 != h0,
          "a changed body hashes differently");

    const vgt_mme_tracker_stats *st2 = vgt_mme_tracker_stats_get(t);
    CHECK(st2->calls == 2 && st2->call_errors == 0 && st2->iram_words == a.n * 2 + b.n + 1, "stats: %llu calls, %llu words",
          (unsigned long long)st2->calls, (unsigned long long)st2->iram_words);
    vgt_mme_tracker_destroy(t);
}

static void test_call_boundaries(void)
{
    seen s = {0};
    vgt_mme_tracker *t = make(0xCB97, &s, 4);
    if (!t) return;
    enc_prog a;
    macro_a(&a);
    upload_cls(t, 0xCB97, 0, &a, 0);
    /* CALL_MME_DATA of another macro ends the call and is an orphan */
    feed(t, VGT_MME_M_CALL_MACRO0, 1);
    feed(t, VGT_MME_M_CALL_DATA0, 2);
    feed(t, VGT_MME_M_CALL_DATA0 + 8, 3);
    CHECK(s.calls == 1 && s.nparams == 2, "call ended by CALL_MME_DATA(1): %d calls, %u params", s.calls, s.nparams);
    CHECK_EQ_U64(vgt_mme_tracker_stats_get(t)->orphan_data, 1, "orphan data counted");
    /* back-to-back calls of the same macro: a CALL_MME_MACRO ends the previous call */
    feed(t, VGT_MME_M_CALL_MACRO0, 1);
    feed(t, VGT_MME_M_CALL_DATA0, 2);
    feed(t, VGT_MME_M_CALL_MACRO0, 3);
    CHECK(s.calls == 2 && s.params[0] == 1, "back-to-back: %d calls", s.calls);
    /* parameters beyond max_call_params are dropped and flagged; the run then misses nothing it loads */
    for (int i = 0; i < 9; i++) feed(t, VGT_MME_M_CALL_DATA0, 10 + i);
    vgt_error err;
    CHECK_STATUS(vgt_mme_tracker_flush(t, &err), VGT_OK, &err, "flush");
    CHECK(s.calls == 3 && s.nparams == 4 && s.truncated && s.status == VGT_OK && s.error == VGT_MME_OK,
          "truncated call: %u params, truncated %d, %s", s.nparams, s.truncated, vgt_mme_error_name(s.error));
    /* a call with too few parameters is reported, not fatal */
    feed(t, VGT_MME_M_CALL_MACRO0, 1);
    CHECK(vgt_mme_tracker_flush(t, &err) == VGT_OK && s.error == VGT_MME_MISSING_MACRO_DATA, "missing data reported");
    CHECK_EQ_U64(vgt_mme_tracker_stats_get(t)->call_errors, 1, "call errors counted");
    /* a failing callback stops the feed with its status */
    s.fail_with = VGT_E_BACKEND;
    feed(t, VGT_MME_M_CALL_MACRO0, 1);
    feed(t, VGT_MME_M_CALL_DATA0, 1);
    CHECK(vgt_mme_tracker_feed(t, 0x1000, 0, &err) == VGT_E_BACKEND && strstr(err.msg, "refused"),
          "callback failure: %s", err.msg);
    s.fail_with = VGT_OK;
    /* upload bounds: the last group holds 3 dwords, the 4th is out; so is everything past the RAM,
     * including a pointer whose dword position does not fit 32 bits */
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, VGT_MME_TU104_IRAM_DWORDS / 3 - 1);
    for (uint32_t i = 0; i < 3; i++) feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 1 + i);
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 4);
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, VGT_MME_TU104_IRAM_DWORDS / 3);
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 5);
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0x55555556u);   /* x3 overflows */
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 6);
    feed(t, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, 255);
    feed(t, VGT_MME_M_LOAD_START_ADDRESS_RAM, 0);
    feed(t, VGT_MME_M_LOAD_START_ADDRESS_RAM, 0);
    const vgt_mme_tracker_stats *st = vgt_mme_tracker_stats_get(t);
    CHECK(st->iram_out_of_bounds == 3 && st->start_out_of_bounds == 1, "upload bounds: %llu %llu",
          (unsigned long long)st->iram_out_of_bounds, (unsigned long long)st->start_out_of_bounds);
    uint32_t used;
    vgt_mme_tracker_iram(t, &used);
    const uint32_t *iram = vgt_mme_tracker_iram(t, &used);
    CHECK(used == VGT_MME_TU104_IRAM_DWORDS && iram[used - 3] == 1 && iram[used - 1] == 3, "used %u", used);
    /* push-buffer READ_FIFOED is an error class of its own */
    feed(t, VGT_MME_M_DMA_READ_FIFOED, 1);
    CHECK(st->dma_errors == 1 && st->last_dma_error == VGT_MME_DMA_READ_FIFOED_FROM_PB, "READ_FIFOED from PB");
    vgt_mme_tracker_destroy(t);
}

static void test_shadow_modes(void)
{
    seen s = {0};
    vgt_mme_tracker *t = make(0xC597, &s, 0);
    if (!t) return;
    feed(t, 0x1234, 7);
    feed(t, VGT_MME_M_SET_SHADOW_RAM_CONTROL, 2);   /* METHOD_PASSTHROUGH */
    feed(t, 0x1234, 8);
    feed(t, VGT_MME_M_SET_SHADOW_SCRATCH0, 5);     /* scratch is stored in every mode */
    CHECK(vgt_mme_tracker_shadow(t, 0xC597, 0x1234) == 7 && vgt_mme_tracker_shadow(t, 0xC597, 0x3400) == 5, "passthrough");
    feed(t, VGT_MME_M_SET_SHADOW_RAM_CONTROL, 3);   /* METHOD_REPLAY */
    feed(t, 0x1234, 9);
    CHECK_EQ_U64(vgt_mme_tracker_shadow(t, 0xC597, 0x1234), 7, "replay");
    feed(t, VGT_MME_M_SET_SHADOW_RAM_CONTROL, 1);   /* METHOD_TRACK_WITH_FILTER */
    feed(t, 0x1234, 10);
    CHECK_EQ_U64(vgt_mme_tracker_shadow(t, 0xC597, 0x1234), 10, "track with filter");
    CHECK_EQ_U64(vgt_mme_tracker_shadow(t, 0xC597, 0x4000), 0, "outside the method space");
    vgt_mme_tracker_destroy(t);
}

static void test_fermi_tracker(void)
{
    seen s = {0};
    vgt_mme_tracker *t = make(0x9097, &s, 0);
    if (!t) return;
    CHECK_EQ_U64(vgt_mme_tracker_format(t), VGT_MME_FERMI, "Fermi class");
    enc_prog p = {.n = 0};
    p.code[p.n++] = fe_imm(VGT_MME_FERMI_ADD_IMM, VGT_MME_FERMI_MOVE_SET_MADDR, 0, 0, 0x2000 >> 2 | 1 << 12);
    p.code[p.n++] = fe_imm(VGT_MME_FERMI_ADD_IMM, VGT_MME_FERMI_LOAD_EMIT, 2, 1, 1);   /* send R1 + 1, R2 = param */
    p.code[p.n++] = fe_exit(fe_alu(0, VGT_MME_FERMI_MOVE_EMIT, 0, 2, 2));             /* send R2 + R2 */
    p.code[p.n++] = fe_nop();
    upload_cls(t, 0x9097, 0x10, &p, 3);   /* Fermi: dword 0x10 */
    feed(t, VGT_MME_M_CALL_MACRO0 + 24, 41);
    feed(t, VGT_MME_M_CALL_DATA0 + 24, 5);
    vgt_error err;
    CHECK_STATUS(vgt_mme_tracker_flush(t, &err), VGT_OK, &err, "flush");
    CHECK(s.calls == 1 && s.status == VGT_OK && s.nemits == 2 && s.emits[0].value == 42 && s.emits[1].method == 0x2004 &&
              s.emits[1].value == 10 && s.body_dwords == 4 && s.start == 0x10 && s.start_dword == 0x10,
          "Fermi call: %s, %u emits, body %u", vgt_status_name(s.status), s.nemits, s.body_dwords);
    vgt_mme_tracker_destroy(t);

    vgt_mme_tracker_config cfg = {.cls = 0x5097};
    CHECK(vgt_mme_tracker_create(&cfg, &t, &err) == VGT_E_UNSUPPORTED && t == NULL, "a class without MME");
}

/* TU104 pointers count groups: two macros packed back to back as corpus/gl_egl.vgt submission 2 does
 * (15 dwords at pointer 0, the next macro bound and uploaded at 5) both run; a start address written
 * as if it counted dwords lands three times too far, where nothing was uploaded. */
static void test_group_unit(void)
{
    seen s = {0};
    vgt_mme_tracker *t = make(HOPPER_A, &s, 0);
    if (!t) return;
    enc_prog a, b;
    macro_a(&a);
    macro_b(&b);
    uint32_t na = enc_insts(VGT_MME_TU104, &a);
    CHECK(na * 3 == a.n, "macro A: %u groups for %u dwords", na, a.n);
    upload_cls(t, HOPPER_A, 0, &a, 0);
    upload_cls(t, HOPPER_A, na, &b, 1);   /* right after A, in groups */
    uint32_t used;
    const uint32_t *iram = vgt_mme_tracker_iram(t, &used);
    CHECK(used == a.n + b.n && !memcmp(iram, a.code, 4 * a.n) && !memcmp(iram + a.n, b.code, 4 * b.n),
          "packed uploads: %u dwords used, expected %u", used, a.n + b.n);
    feed(t, VGT_MME_M_CALL_MACRO0 + 8, 100);   /* B: STATE(0x2000) + 100 */
    feed(t, 0x2000, 5);
    CHECK(s.calls == 1 && s.status == VGT_OK && s.start == na && s.start_dword == a.n && s.body_dwords == b.n &&
              s.nemits == 2 && s.emits[0].method == 0x2100 && s.emits[0].value == 100,
          "macro B at group %u: %s, start dword %u, %u emits", na, vgt_status_name(s.status), s.start_dword, s.nemits);
    feed(t, VGT_MME_M_CALL_MACRO0, 1);
    feed(t, VGT_MME_M_CALL_DATA0, 2);
    vgt_error err;
    CHECK(vgt_mme_tracker_flush(t, &err) == VGT_OK && s.calls == 2 && s.status == VGT_OK && s.start_dword == 0 &&
              s.nemits == 2 && s.emits[0].value == 3,
          "macro A at 0: %s, %u emits", vgt_status_name(s.status), s.nemits);
    /* macro 2 bound to A's length in dwords: group 9 = dword 27, past everything uploaded */
    feed(t, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, 2);
    feed(t, VGT_MME_M_LOAD_START_ADDRESS_RAM, a.n);
    uint32_t sd = 0, nd = 1;
    CHECK(vgt_mme_tracker_macro(t, HOPPER_A, 2, NULL, &sd, NULL, &nd, &err) == VGT_OK && sd == 3 * a.n && nd == 0,
          "a dword-style start: dword %u, body %u dwords", sd, nd);
    CHECK(vgt_mme_pointer_dword(VGT_MME_TU104, 5) == 15 && vgt_mme_pointer_dword(VGT_MME_FERMI, 5) == 5 &&
              vgt_mme_pointer_dword(VGT_MME_TU104, 0x55555556u) == UINT32_MAX,
          "pointer units");
    vgt_mme_tracker_destroy(t);
}

/* One channel: HOPPER_A uploads, HOPPER_COMPUTE_A binds its own start addresses to that code and calls
 * it (corpus/vk_compute.vgt); each class keeps its own start-address RAM and shadow state; a call of one
 * class is completed by a method of the other. */
static void test_shared_ram(void)
{
    seen s = {0};
    vgt_mme_tracker *t = make(HOPPER_A, &s, 0);
    if (!t) return;
    enc_prog a, b;
    macro_a(&a);
    macro_b(&b);
    upload_cls(t, HOPPER_A, 0, &a, 0);
    upload_cls(t, HOPPER_A, 10, &b, 1);
    /* compute binds its macro 5 to B's code, which it never uploaded */
    feed_cls(t, HOPPER_COMPUTE_A, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, 5);
    feed_cls(t, HOPPER_COMPUTE_A, VGT_MME_M_LOAD_START_ADDRESS_RAM, 10);
    feed_cls(t, HOPPER_A, 0x2000, 7);            /* 3D's shadow */
    feed_cls(t, HOPPER_COMPUTE_A, 0x2000, 40);   /* compute's shadow */
    feed_cls(t, HOPPER_COMPUTE_A, VGT_MME_M_CALL_MACRO0 + 8 * 5, 2);
    CHECK_EQ_U64(s.calls, 0, "compute call still collecting");
    feed_cls(t, HOPPER_A, 0x1000, 0);            /* a 3D method ends the compute call */
    CHECK(s.calls == 1 && s.cls == HOPPER_COMPUTE_A && s.macro == 5 && s.status == VGT_OK && s.start_dword == 30 &&
              s.nemits == 2 && s.emits[0].method == 0x2100 && s.emits[0].value == 42,
          "compute call of 3D's code: class 0x%x, %s, %u emits, first 0x%x (STATE reads compute's shadow: 40 + 2)",
          s.cls, vgt_status_name(s.status), s.nemits, s.nemits ? s.emits[0].value : 0);
    CHECK(vgt_mme_tracker_shadow(t, HOPPER_A, 0x2000) == 7 && vgt_mme_tracker_shadow(t, HOPPER_COMPUTE_A, 0x2000) == 40,
          "shadow per class");
    /* start-address RAMs are per class: compute never bound 1, 3D never bound 5 */
    vgt_error err;
    uint32_t st;
    CHECK(vgt_mme_tracker_macro(t, HOPPER_COMPUTE_A, 1, NULL, NULL, NULL, NULL, &err) == VGT_E_NOT_FOUND &&
              vgt_mme_tracker_macro(t, HOPPER_A, 5, NULL, NULL, NULL, NULL, &err) == VGT_E_NOT_FOUND &&
              vgt_mme_tracker_macro(t, HOPPER_COMPUTE_A, 5, &st, NULL, NULL, NULL, &err) == VGT_OK && st == 10,
          "start-address RAM per class");
    /* an upload through compute changes the code 3D's macro 1 runs */
    feed_cls(t, HOPPER_COMPUTE_A, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 10);
    for (uint32_t i = 0; i < a.n; i++) feed_cls(t, HOPPER_COMPUTE_A, VGT_MME_M_LOAD_INSTRUCTION_RAM, a.code[i]);
    uint64_t h0, h1;
    CHECK(vgt_mme_tracker_macro(t, HOPPER_A, 0, NULL, NULL, &h0, NULL, &err) == VGT_OK &&
              vgt_mme_tracker_macro(t, HOPPER_A, 1, NULL, NULL, &h1, NULL, &err) == VGT_OK && h0 == h1,
          "3D macro 1 holds the body compute uploaded");
    const vgt_mme_tracker_stats *ts = vgt_mme_tracker_stats_get(t);
    CHECK(ts->classes == 2 && ts->iram_words == 2 * a.n + b.n, "%u classes, %llu words", ts->classes,
          (unsigned long long)ts->iram_words);
    /* a class of the other format, and more classes than a channel can have */
    CHECK(vgt_mme_tracker_feed_class(t, 0x9097, 0x1000, 0, &err) == VGT_E_UNSUPPORTED && strstr(err.msg, "fermi"),
          "Fermi class on a TU104 channel: %s", err.msg);
    CHECK_STATUS(vgt_mme_tracker_feed_class(t, 0x5097, 0x1000, 0, &err), VGT_E_UNSUPPORTED, &err,
                 "a class without MME");
    for (uint32_t c = 2; c < VGT_MME_TRACKER_MAX_CLASSES; c++) feed_cls(t, 0xD000 + c, 0x1000, 0);
    CHECK_STATUS(vgt_mme_tracker_feed_class(t, 0xE000, 0x1000, 0, &err), VGT_E_LIMIT, &err, "class limit");
    vgt_mme_tracker_destroy(t);
}

/* The body extends past an end_next that a branch jumps over. */
static void test_body_extent(void)
{
    enc_prog p = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, L0, Z, 0x8000 | 4);   /* 0 -> 4 */
    tu_add(&p, &in);
    tu_end(&p);                                                /* 1 end_next, 2 */
    in = tu_nop();
    tu_add(&p, &in);                                           /* 3 */
    tu_end(&p);                                                /* 4 end_next, 5 */
    in = tu_nop();
    tu_add(&p, &in);                                           /* 6: not part of it */
    CHECK(vgt_mme_body_dwords(VGT_MME_TU104, p.code, p.n, 0) == 18, "body %u dwords",
          vgt_mme_body_dwords(VGT_MME_TU104, p.code, p.n, 0));
    CHECK_EQ_U64(vgt_mme_body_dwords(VGT_MME_TU104, p.code, p.n, 3), 6, "body from group 1");
    CHECK_EQ_U64(vgt_mme_body_dwords(VGT_MME_TU104, p.code, p.n, p.n), 0, "body at the end");
    CHECK_EQ_U64(vgt_mme_body_dwords(VGT_MME_TU104, p.code, 2, 0), 0, "no whole group");
    uint32_t n;
    uint64_t h1 = vgt_mme_body_hash(VGT_MME_TU104, p.code, p.n, 0, &n);
    p.code[19] ^= 1;   /* outside the body */
    CHECK(vgt_mme_body_hash(VGT_MME_TU104, p.code, p.n, 0, NULL) == h1 && n == 18, "code after the body is not hashed");
}

/* The tracker remembers body hashes between calls: reloading the instruction RAM (all of a body, one word
 * of it, or code after a body with no exit) must give the next call and vgt_mme_tracker_macro the new one. */
static void test_body_memo(void)
{
    seen s = {0};
    vgt_mme_tracker *t = make(0xC597, &s, 0);
    if (!t) return;
    enc_prog a, b;
    macro_a(&a);
    macro_b(&b);
    uint64_t ha = vgt_mme_body_hash(VGT_MME_TU104, a.code, a.n, 0, NULL);
    uint64_t hb = vgt_mme_body_hash(VGT_MME_TU104, b.code, b.n, 0, NULL);
    upload_cls(t, 0xC597, 0, &a, 0);
    feed(t, VGT_MME_M_CALL_MACRO0, 5);
    feed(t, VGT_MME_M_CALL_DATA0, 6);
    feed(t, 0x1000, 1);
    CHECK(s.calls == 1 && s.hash == ha, "first call of A");
    uint64_t h = 0;
    uint32_t nd = 0;
    vgt_error err;
    CHECK(vgt_mme_tracker_macro(t, 0xC597, 0, NULL, NULL, &h, &nd, &err) == VGT_OK && h == ha && nd == a.n, "A bound");

    upload_cls(t, 0xC597, 0, &b, 0);   /* B over A, same start */
    CHECK(vgt_mme_tracker_macro(t, 0xC597, 0, NULL, NULL, &h, &nd, &err) == VGT_OK && h == hb && nd == b.n,
          "B over A: the bound macro's hash follows");
    feed(t, VGT_MME_M_CALL_MACRO0, 5);
    feed(t, 0x1000, 1);
    CHECK(s.calls == 2 && s.hash == hb && s.body_dwords == b.n, "the call after the reload hashes B");

    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0);   /* one word of B's first group changed */
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, b.code[0] ^ 0x10000u);
    b.code[0] ^= 0x10000u;
    CHECK(vgt_mme_tracker_macro(t, 0xC597, 0, NULL, NULL, &h, NULL, &err) == VGT_OK &&
              h == vgt_mme_body_hash(VGT_MME_TU104, b.code, b.n, 0, NULL) && h != hb,
          "one word rewritten: the hash follows");

    /* a body without an exit runs to the end of what was loaded: loading more code lengthens it */
    enc_prog c = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_add(&c, &in);
    upload_cls(t, 0xC597, 40, &c, 1);
    uint32_t n1 = 0, n2 = 0;
    CHECK(vgt_mme_tracker_macro(t, 0xC597, 1, NULL, NULL, NULL, &n1, &err) == VGT_OK, "C bound");
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 0);   /* the next group, three words on */
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 0);
    feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, 0);
    CHECK(vgt_mme_tracker_macro(t, 0xC597, 1, NULL, NULL, NULL, &n2, &err) == VGT_OK && n2 == n1 + 3,
          "code loaded after a body with no exit: %u then %u dwords", n1, n2);
    vgt_mme_tracker_destroy(t);
}

/* The Hopper driver's guard: a call of 21 parameters whose macro consumes 1 and exits; the next call, of a macro
 * emitting its two parameters, sees its own parameters (the leftovers went with the first call) and both end
 * cleanly (TU104 discards what a macro left; tests/gpu/mme_agree.c checks this on the hardware). */
static void test_extra_params(void)
{
    seen s = {0};
    vgt_mme_tracker_config cfg = {.cls = HOPPER_A, .on_call = on_call, .user = &s};
    vgt_mme_tracker *t;
    vgt_error err;
    CHECK(vgt_mme_tracker_create(&cfg, &t, &err) == VGT_OK, "create: %s", err.msg);
    enc_prog guard = {.n = 0}, a;
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, L0, Z, 0);
    tu_add(&guard, &in);
    tu_end(&guard);
    macro_a(&a);
    upload_cls(t, HOPPER_A, 0, &guard, 0);
    upload_cls(t, HOPPER_A, 8, &a, 1);
    feed(t, VGT_MME_M_CALL_MACRO0, 0x100);
    for (uint32_t i = 1; i < 21; i++) feed(t, VGT_MME_M_CALL_DATA0, 0x08001000u + i);
    feed(t, VGT_MME_M_CALL_MACRO0 + 8, 7);
    CHECK(s.calls == 1 && s.nparams == 21 && s.status == VGT_OK && s.error == VGT_MME_OK && s.nemits == 0,
          "guard call: %d calls, %u params, %s", s.calls, s.nparams, vgt_mme_error_name(s.error));
    feed(t, VGT_MME_M_CALL_DATA0 + 8, 9);
    CHECK(vgt_mme_tracker_flush(t, &err) == VGT_OK, "flush: %s", err.msg);
    CHECK(s.calls == 2 && s.nparams == 2 && s.status == VGT_OK && s.nemits >= 1 && s.emits[0].method == 0x2000 &&
              s.emits[0].value == 16,
          "second call: %u params, first emit 0x%x = %u (want 7 + 9 = 16)", s.nparams, s.nemits ? s.emits[0].method : 0,
          s.nemits ? s.emits[0].value : 0);
    CHECK_EQ_U64(vgt_mme_tracker_stats_get(t)->call_errors, 0, "no call errors");
    vgt_mme_tracker_destroy(t);
}

/* Runs of one method (vgt_mme_tracker_feed_run, a NON_INC header's dwords) act as the writes one by one:
 * a macro upload, a run of plain state (only its last value stays in the shadow, each write counted), a run
 * that ends a pending call at its first write, a call's data as a run, and scratch words; the two trackers'
 * calls, emissions, shadows and stats agree. */
static void le_words(uint8_t *out, const uint32_t *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 4; b++) out[4 * i + b] = (uint8_t)(w[i] >> (8 * b));
}

static void feed_both(vgt_mme_tracker *one, vgt_mme_tracker *run, uint32_t cls, uint32_t m, const uint32_t *w, uint32_t n)
{
    uint8_t bytes[4 * 64];
    vgt_error err;
    le_words(bytes, w, n);
    for (uint32_t i = 0; i < n; i++) feed_cls(one, cls, m, w[i]);
    CHECK_STATUS(vgt_mme_tracker_feed_run(run, cls, m, bytes, n, &err), VGT_OK, &err, "run of %u writes of 0x%04x", n, m);
}

static void test_runs(void)
{
    seen a = {0}, b = {0};
    vgt_mme_tracker *one = make(0xC597, &a, 0), *run = make(0xC597, &b, 0);
    if (!one || !run) return;
    enc_prog p;
    macro_a(&p);
    uint32_t w[64];
    uint32_t j = 0, at = 4;
    feed_both(one, run, 0xC597, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, &j, 1);
    feed_both(one, run, 0xC597, VGT_MME_M_LOAD_START_ADDRESS_RAM, &at, 1);
    feed_both(one, run, 0xC597, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, &at, 1);
    feed_both(one, run, 0xC597, VGT_MME_M_LOAD_INSTRUCTION_RAM, p.code, p.n);   /* the upload as one run */
    for (uint32_t i = 0; i < 40; i++) w[i] = 0x100 + i;
    feed_both(one, run, 0xC597, 0x1b4, w, 40);   /* plain state: LOAD_INLINE_DATA */
    uint32_t scratch[3] = {0x77, 0x88, 0x99};
    feed_both(one, run, 0xC597, VGT_MME_M_SET_SHADOW_SCRATCH0 + 8, scratch, 3);
    uint32_t call[5] = {3, 4, 5, 6, 7};   /* CALL_MME_MACRO(0) then its data, as the drivers send them */
    feed_both(one, run, 0xC597, VGT_MME_M_CALL_MACRO0, call, 1);
    feed_both(one, run, 0xC597, VGT_MME_M_CALL_DATA0, call + 1, 4);
    CHECK(a.calls == 0 && b.calls == 0, "the call collects its data from the run");
    feed_both(one, run, 0xC597, 0x1b4, w + 10, 20);   /* its first write completes the call */
    CHECK(a.calls == 1 && b.calls == 1 && b.nparams == 5 && b.params[4] == 7 && b.nemits == a.nemits && b.nemits == 2 &&
              b.emits[0].value == a.emits[0].value && b.emits[1].value == 0x99,
          "the call ran once, at the run's first write: %d/%d calls, %u params, %u emits", a.calls, b.calls, b.nparams,
          b.nemits);
    feed_both(one, run, 0xC597, VGT_MME_M_SET_SHADOW_RAM_CONTROL, (uint32_t[]){2}, 1);   /* passthrough */
    feed_both(one, run, 0xC597, 0x1b8, w, 5);
    const uint32_t probe[] = {0x1b4, 0x1b8, 0x2000, 0x2004, VGT_MME_M_SET_SHADOW_SCRATCH0 + 8};
    for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++)
        CHECK_EQ_U64(vgt_mme_tracker_shadow(run, 0xC597, probe[i]), vgt_mme_tracker_shadow(one, 0xC597, probe[i]),
                     "shadow of 0x%04x", probe[i]);
    CHECK_EQ_U64(vgt_mme_tracker_shadow(run, 0xC597, 0x1b4), 0x100 + 29, "a run leaves its last value");
    const vgt_mme_tracker_stats *sa = vgt_mme_tracker_stats_get(one), *sb = vgt_mme_tracker_stats_get(run);
    CHECK(sa->methods == sb->methods && sa->iram_words == sb->iram_words && sa->calls == sb->calls &&
              sa->orphan_data == sb->orphan_data,
          "stats: %llu/%llu methods, %llu/%llu words", (unsigned long long)sa->methods, (unsigned long long)sb->methods,
          (unsigned long long)sa->iram_words, (unsigned long long)sb->iram_words);
    uint64_t ha, hb;
    vgt_error err;
    CHECK(vgt_mme_tracker_macro(one, 0xC597, 0, NULL, NULL, &ha, NULL, &err) == VGT_OK &&
              vgt_mme_tracker_macro(run, 0xC597, 0, NULL, NULL, &hb, NULL, &err) == VGT_OK && ha == hb,
          "the uploaded body is the same");
    vgt_mme_tracker_destroy(one);
    vgt_mme_tracker_destroy(run);
}

int main(void)
{
    test_runs();
    test_calls();
    test_call_boundaries();
    test_shadow_modes();
    test_fermi_tracker();
    test_group_unit();
    test_shared_ram();
    test_body_extent();
    test_body_memo();
    test_extra_params();
    return check_finish("test_mme_tracker");
}
