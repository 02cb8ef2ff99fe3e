/* test_replay_reloc.c: lane 1's address map on sim, over traces written with libvgt.
 *  - aliases: one memory object mapped at two VAs; a MEMORY record written through one VA, a host
 *    semaphore release and an I2M upload through the other, observed through the first: --check passes
 *    with the backend's map_alias and fails (with a warning naming the alias) on a backend without it;
 *    sim's alias windows keep working when either side is unmapped, a new mapping at the source VA
 *    starts fresh, bounds are checked;
 *  - relocation: --relocate of the mapping holding a semaphore target and an I2M destination and of the
 *    push buffer's mapping: the replay runs at the new VAs, --check passes, each rewrite is reported
 *    (method, old -> new VA) and the GPFIFO entries are rewritten; an unaligned mapping moves by itself;
 *  - an operand an MME macro builds cannot be rewritten: the plan names it and the replay warns; nor can
 *    one whose high half an earlier submission sent: the replay warns;
 *  - the engine's own plan (plan.c): the records held back until it is made, the census watching the
 *    observed ranges from the first submission whether the records come from a reader or one by one,
 *    and a plan cut short by options.plan_buffer_limit (said in a warning; ranges then watched from
 *    when they are read);
 *  - vgt_reloc_choose_va on synthetic layouts;
 *  - the gpu backend's alias bookkeeping (no hardware): the memory object outlives whichever of its
 *    mappings goes first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../backend/gpu/gpu_internal.h"
#include "vgt/replay.h"
#include "vgt/trace.h"
#include "check.h"
#include "mme_enc.h"

#define CLIENT 0xC1u
#define CHAN 0xA0u
#define PB_VA 0x100000ull
#define VA_A 0x300000ull      /* memory 0x10, first mapping */
#define VA_B 0x5000000ull     /* memory 0x10, second mapping */
#define DATA_VA 0x200000ull   /* memory 0x12 */
#define SC_3D 0u
#define SC_I2M 1u

typedef struct tw {
    vgt_writer *w;
    uint64_t ts, pb_off;
    uint32_t pb[512], n;
    vgt_error err;
} tw;

static void ok(vgt_status rc, tw *t)
{
    if (rc != VGT_OK) {
        fprintf(stderr, "writer: %s\n", t->err.msg);
        exit(1);
    }
}

static void open_trace(tw *t, const char *path)
{
    memset(t, 0, sizeof *t);
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id[] = {{"producer", "test_replay_reloc"}};
    ok(vgt_writer_open_path(&t->w, path, &o, id, 1, &t->err), t);
}

static void alloc(tw *t, uint32_t handle, uint64_t size)
{
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = handle, .cls = 0x40, .size = size, .aperture = 2};
    ok(vgt_write_mem_alloc(t->w, ++t->ts, &m, &t->err), t);
}

static void map(tw *t, uint32_t memory, uint64_t va, uint64_t offset, uint64_t len)
{
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = memory, .gpu_va = va,
                         .offset = offset, .length = len, .source = 1};
    ok(vgt_write_gpu_map(t->w, ++t->ts, &g, &t->err), t);
}

static void channel(tw *t)
{
    vgt_rec_channel c = {.client = CLIENT, .parent = 3, .handle = CHAN, .cls = 0xC86F, .entries = 128};
    ok(vgt_write_channel(t->w, ++t->ts, &c, &t->err), t);
    const uint32_t cls[2] = {0xCB97, 0xA140};
    for (uint32_t i = 0; i < 2; i++) {
        vgt_rec_engine_object o = {.client = CLIENT, .channel = CHAN, .handle = 0x200 + i, .cls = cls[i]};
        ok(vgt_write_engine_object(t->w, ++t->ts, &o, &t->err), t);
    }
}

/* Push-buffer headers (pushbuf.h): SEC_OP 31:29, COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 = mthd >> 2. */
static void inc(tw *t, uint32_t subch, uint32_t mthd, const uint32_t *v, uint32_t n)
{
    t->pb[t->n++] = 1u << 29 | n << 16 | subch << 13 | mthd >> 2;
    for (uint32_t i = 0; i < n; i++) t->pb[t->n++] = v[i];
}
static void m1(tw *t, uint32_t subch, uint32_t mthd, uint32_t v) { inc(t, subch, mthd, &v, 1); }
static void noninc(tw *t, uint32_t subch, uint32_t mthd, const uint32_t *v, uint32_t n)
{
    t->pb[t->n++] = 3u << 29 | n << 16 | subch << 13 | mthd >> 2;
    for (uint32_t i = 0; i < n; i++) t->pb[t->n++] = v[i];
}

/* Host SEM_ADDR_LO/HI, PAYLOAD_LO/HI, SEM_EXECUTE (0x5c..0x6c, clc86f.h): a 32-bit release. */
static void host_release(tw *t, uint64_t va, uint32_t payload)
{
    const uint32_t v[5] = {(uint32_t)va, (uint32_t)(va >> 32), payload, 0, 1};
    inc(t, 0, 0x5c, v, 5);
}

/* I2M (cla140.h): LINE_LENGTH_IN 0x180, LINE_COUNT 0x184, OFFSET_OUT_UPPER/OFFSET_OUT 0x188/0x18c,
 * LAUNCH_DMA 0x1b0 (DST_MEMORY_LAYOUT pitch = 1), LOAD_INLINE_DATA 0x1b4. */
static void i2m(tw *t, uint64_t dst, const uint32_t *data, uint32_t ndw)
{
    const uint32_t v[4] = {4 * ndw, 1, (uint32_t)(dst >> 32), (uint32_t)dst};
    inc(t, SC_I2M, 0x180, v, 4);
    m1(t, SC_I2M, 0x1b0, 1);
    noninc(t, SC_I2M, 0x1b4, data, ndw);
}

static void bind(tw *t)
{
    m1(t, SC_3D, 0, 0xCB97);
    m1(t, SC_I2M, 0, 0xA140);
}

/* The dwords built so far as one submission (one entry, one segment) on a fresh page of PB_VA. */
static void submit(tw *t)
{
    uint64_t va = PB_VA + t->pb_off;
    t->pb_off += 4096;
    uint64_t e = (uint64_t)(((uint32_t)(va >> 32) & 0xFF) | t->n << 10) << 32 | ((uint32_t)va & ~3u);
    uint8_t entry[8];
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(e >> (8 * i));
    vgt_segment seg = {.gpu_va = va, .length = 4 * t->n, .data = (const uint8_t *)t->pb};
    vgt_rec_gpfifo_submit s = {.client = CLIENT, .channel = CHAN, .entry_count = 1, .segment_count = 1, .entries = entry,
                               .segments = &seg, .gp_get_after = VGT_GP_NOT_READ, .gp_put_after = 1};
    ok(vgt_write_gpfifo_submit(t->w, ++t->ts, &s, &t->err), t);
    t->n = 0;
}

static void memory(tw *t, uint32_t mem, uint64_t va, const void *data, uint32_t len, uint32_t reason)
{
    vgt_rec_memory m = {.gpu_va = va, .length = len, .reason = reason, .memory = mem, .data = data};
    ok(vgt_write_memory(t->w, ++t->ts, &m, &t->err), t);
}

static void semaphore(tw *t, uint64_t va, uint64_t value)
{
    vgt_rec_semaphore s = {.gpu_va = va, .value = value, .size = 4};
    ok(vgt_write_semaphore(t->w, ++t->ts, &s, &t->err), t);
}

/* ---- replay harness ---- */

typedef struct seen {
    int warnings, mismatches, faults, notes;
    char notes_text[8192], warnings_text[8192];
} seen;

static void append(char *buf, size_t cap, const char *msg)
{
    size_t l = strlen(buf);
    if (l + strlen(msg) + 2 < cap) snprintf(buf + l, cap - l, "%s\n", msg);
}

static void on_report(void *ctx, const vgt_replay_report *r)
{
    seen *s = ctx;
    if (r->kind == VGT_RPT_WARNING) s->warnings++, append(s->warnings_text, sizeof s->warnings_text, r->msg);
    if (r->kind == VGT_RPT_RELOCATION) s->notes++, append(s->notes_text, sizeof s->notes_text, r->msg);
    if (r->kind == VGT_RPT_MISMATCH) s->mismatches++;
    if (r->kind == VGT_RPT_EVENT && r->event_kind == VGT_BEV_FAULT) s->faults++;
}

typedef struct run {
    vgt_replay_summary sum;
    seen seen;
    uint8_t read[16];          /* vgt_replay_read of read_va after the replay */
    uint64_t translated;       /* vgt_replay_translate(read_va) */
    vgt_status rc;
} run;

/* The engine plans by itself (plan.c): relocate makes it plan, as `vgt replay --relocate` does. */
static void replay(const char *path, const vgt_backend_ops *ops, const uint64_t *reloc, uint32_t nreloc,
                   uint64_t read_va, run *out)
{
    memset(out, 0, sizeof *out);
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = ops;
    o.check = 1;
    o.report = on_report;
    o.report_ctx = &out->seen;
    o.relocate = reloc;
    o.nrelocate = nreloc;
    vgt_error err;
    vgt_reader *r = NULL;
    vgt_replay *rp = NULL;
    vgt_status rc = vgt_reader_open_path(&r, path, NULL, &err);
    if (rc == VGT_OK) rc = vgt_replay_open(&rp, &o, &err);
    if (rc == VGT_OK) rc = vgt_replay_run(rp, r, &err);
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, &err);
    if (rp) {
        out->sum = *vgt_replay_summary_get(rp);
        out->translated = vgt_replay_translate(rp, read_va);
        if (vgt_replay_read(rp, read_va, out->read, sizeof out->read, &err) != VGT_OK) memset(out->read, 0xee, 16);
    }
    if (rc != VGT_OK) fprintf(stderr, "replay: %s\n", err.msg);
    out->rc = rc;
    vgt_replay_close(rp);
    vgt_reader_close(r);
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* ---- aliases ---- */

static void write_alias_trace(const char *path)
{
    tw t;
    open_trace(&t, path);
    alloc(&t, 0x10, 0x20000);
    alloc(&t, 0x11, 0x100000);
    map(&t, 0x11, PB_VA, 0, 0x100000);
    map(&t, 0x10, VA_A, 0, 0x10000);
    map(&t, 0x10, VA_B, 0, 0x10000);              /* the same memory again: an alias */
    channel(&t);
    const uint32_t cafe = 0xCAFE;
    memory(&t, 0x10, VA_A + 0x40, &cafe, 4, VGT_MEM_INITIAL);   /* a host write through A */
    bind(&t);
    host_release(&t, VA_A + 0x10, 1);
    submit(&t);                                   /* 0: 1 through A */
    host_release(&t, VA_B + 0x10, 7);
    const uint32_t up[2] = {0x11111111, 0x22222222};
    i2m(&t, VA_B + 0x80, up, 2);
    submit(&t);                                   /* 1: 7 and an upload through B */
    semaphore(&t, VA_A + 0x10, 7);                /* ... observed through A */
    const uint32_t seven = 7;
    memory(&t, 0x10, VA_A + 0x10, &seven, 4, VGT_MEM_OBSERVED);
    memory(&t, 0x10, VA_A + 0x80, up, 8, VGT_MEM_OBSERVED);
    ok(vgt_writer_close(t.w, &t.err), &t);
}

static void test_alias_replay(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/alias.vgt", dir);
    write_alias_trace(path);
    run r;
    replay(path, &vgt_backend_sim, NULL, 0, VA_B + 0x40, &r);
    CHECK_STATUS(r.rc, VGT_OK, &(vgt_error){0}, "alias replay");
    CHECK_EQ_U64(r.sum.aliases, 1, "one alias");
    CHECK_EQ_U64(r.sum.aliases_unreproduced, 0, "none unreproduced");
    CHECK(r.sum.checks_failed == 0 && r.sum.checks_passed >= 3, "checks %llu passed %llu failed",
          (unsigned long long)r.sum.checks_passed, (unsigned long long)r.sum.checks_failed);
    CHECK_EQ_U64(le32(r.read), 0xCAFE, "the host write through A read through B");
    CHECK(strstr(r.seen.notes_text, "alias of its mapping at 0x300000"), "notes: %s", r.seen.notes_text);

    /* a backend that cannot alias: separate copies, a warning, and the checks through A fail */
    vgt_backend_ops no_alias = vgt_backend_sim;
    no_alias.map_alias = NULL;
    replay(path, &no_alias, NULL, 0, VA_B + 0x40, &r);
    CHECK_EQ_U64(r.sum.aliases_unreproduced, 1, "alias not reproduced");
    CHECK(r.sum.checks_failed >= 1, "without the alias a check must fail (%llu failed)",
          (unsigned long long)r.sum.checks_failed);
    CHECK(strstr(r.seen.warnings_text, "alias is not reproduced"), "warning: %s", r.seen.warnings_text);
    CHECK(le32(r.read) != 0xCAFE, "separate storage read 0x%x through B", le32(r.read));
}

static uint32_t sim_rd(const vgt_backend_ops *ops, vgt_backend *b, uint32_t vas, uint64_t va, vgt_status *rc)
{
    uint8_t v[4] = {0};
    vgt_error e;
    *rc = ops->mem_read(b, vas, va, v, 4, &e);
    return le32(v);
}

static void test_sim_alias_lifetimes(void)
{
    const vgt_backend_ops *ops = &vgt_backend_sim;
    vgt_backend *b;
    vgt_error e;
    uint32_t vas;
    vgt_status rc;
    if (ops->open(&b, NULL, &e) != VGT_OK || ops->vaspace_create(b, &vas, &e) != VGT_OK) {
        CHECK(0, "sim open: %s", e.msg);
        return;
    }
    const uint32_t v1 = 0x1234, v2 = 0x5678;
    CHECK_STATUS(ops->map(b, vas, VA_A, 0x4000, 2, &e), VGT_OK, &e, "map A");
    CHECK_STATUS(ops->mem_write(b, vas, VA_A + 0x1008, &v1, 4, &e), VGT_OK, &e, "write A");
    /* an alias of A's second and third pages */
    CHECK_STATUS(ops->map_alias(b, vas, VA_B, 0x2000, VA_A + 0x1000, &e), VGT_OK, &e, "alias");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_B + 8, &rc), v1, "read through the alias");
    CHECK_STATUS(ops->mem_write(b, vas, VA_B + 0x1010, &v2, 4, &e), VGT_OK, &e, "write B");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_A + 0x2010, &rc), v2, "written through the alias, read through A");
    CHECK_STATUS(ops->mem_read(b, vas, VA_B + 0x2000, (uint8_t[4]){0}, 4, &e), VGT_E_FAULT, &e, "past the alias");
    CHECK_STATUS(ops->map_alias(b, vas, VA_B + 0x800, 0x1000, VA_A, &e), VGT_E_ARG, &e, "in-page offsets differ");
    CHECK_STATUS(ops->map_alias(b, vas, VA_B, 0x1000, VA_A, &e), VGT_E_ARG, &e, "over a mapped range");
    CHECK_STATUS(ops->map_alias(b, vas, 0x9000000, 0x1000, 0x7000000, &e), VGT_E_FAULT, &e, "unmapped source");
    /* the source goes first: the alias keeps its bytes; a new mapping at A starts fresh */
    CHECK_STATUS(ops->unmap(b, vas, VA_A, 0x4000, &e), VGT_OK, &e, "unmap A");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_B + 8, &rc), v1, "alias after the source's unmap");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_B + 0x1010, &rc), v2, "alias after the source's unmap (2)");
    CHECK_STATUS(ops->map(b, vas, VA_A, 0x4000, 2, &e), VGT_OK, &e, "map A again");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_A + 0x1008, &rc), 0, "a new mapping at A does not see the old bytes");
    CHECK_STATUS(ops->mem_write(b, vas, VA_A + 0x1008, &v2, 4, &e), VGT_OK, &e, "write new A");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_B + 8, &rc), v1, "the alias does not see the new mapping");
    /* then the alias goes: A unaffected; B unmapped */
    CHECK_STATUS(ops->unmap(b, vas, VA_B, 0x2000, &e), VGT_OK, &e, "unmap B");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_A + 0x1008, &rc), v2, "A after the alias's unmap");
    sim_rd(ops, b, vas, VA_B + 8, &rc);
    CHECK_STATUS(rc, VGT_E_FAULT, &e, "B is gone");
    /* an alias unmapped first leaves its source alone */
    CHECK_STATUS(ops->map_alias(b, vas, VA_B, 0x1000, VA_A + 0x1000, &e), VGT_OK, &e, "alias again");
    CHECK_STATUS(ops->unmap(b, vas, VA_B, 0x1000, &e), VGT_OK, &e, "unmap the alias");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_A + 0x1008, &rc), v2, "source after the alias's unmap");
    /* a huge source (1 TiB) unmapped under an alias: the work is bounded by the pages stored */
    const uint64_t big = 1ull << 40, BIG_VA = 1ull << 44;
    CHECK_STATUS(ops->map(b, vas, BIG_VA, big, 2, &e), VGT_OK, &e, "map 1 TiB");
    CHECK_STATUS(ops->mem_write(b, vas, BIG_VA + big - 0x1000, &v1, 4, &e), VGT_OK, &e, "write its last page");
    CHECK_STATUS(ops->map_alias(b, vas, VA_B, 0x2000, BIG_VA + big - 0x2000, &e), VGT_OK, &e, "alias its end");
    CHECK_STATUS(ops->unmap(b, vas, BIG_VA, big, &e), VGT_OK, &e, "unmap 1 TiB");
    CHECK_EQ_U64(sim_rd(ops, b, vas, VA_B + 0x1000, &rc), v1, "alias of the huge mapping keeps its page");
    ops->close(b);
}

/* ---- relocation ---- */

static void write_reloc_trace(const char *path, uint64_t data_va)
{
    tw t;
    open_trace(&t, path);
    alloc(&t, 0x11, 0x100000);
    alloc(&t, 0x12, 0x10000);
    map(&t, 0x11, PB_VA, 0, 0x100000);
    map(&t, 0x12, data_va, 0, 0x10000 - (data_va & 0xfff));
    channel(&t);
    bind(&t);
    host_release(&t, data_va + 0x10, 5);
    const uint32_t up[3] = {0xAAAA0001, 0xBBBB0002, 0xCCCC0003};
    i2m(&t, data_va + 0x100, up, 3);
    submit(&t);
    semaphore(&t, data_va + 0x10, 5);
    memory(&t, 0x12, data_va + 0x100, up, 12, VGT_MEM_OBSERVED);
    ok(vgt_writer_close(t.w, &t.err), &t);
}

static void test_forced_relocation(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/reloc.vgt", dir);
    write_reloc_trace(path, DATA_VA);
    const uint64_t reloc[2] = {DATA_VA + 0x10, PB_VA};
    vgt_reloc_plan *p = calloc(1, sizeof *p);
    vgt_error e;
    CHECK_STATUS(vgt_reloc_plan_trace(path, 0, reloc, 2, p, &e), VGT_OK, &e, "plan");
    uint32_t forced = 0, operands = 0;
    for (uint32_t i = 0; i < p->nnotes; i++) forced += p->notes[i].kind == VGT_RELOC_FORCED,
                                             operands += p->notes[i].kind == VGT_RELOC_OPERAND;
    CHECK(forced == 2 && operands >= 2, "plan: %u forced, %u operands", forced, operands);
    CHECK_EQ_U64(p->nmap_ranges, 2, "the plan keeps every mapping");
    run r;
    replay(path, &vgt_backend_sim, reloc, 2, DATA_VA + 0x10, &r);
    vgt_reloc_plan_free(p);
    free(p);
    CHECK_STATUS(r.rc, VGT_OK, &(vgt_error){0}, "relocated replay");
    CHECK_EQ_U64(r.sum.relocations, 2, "two mappings moved");
    CHECK(r.sum.checks_passed >= 2 && r.sum.checks_failed == 0 && r.sum.faults == 0 && r.seen.faults == 0,
          "checks %llu passed %llu failed, faults %d", (unsigned long long)r.sum.checks_passed,
          (unsigned long long)r.sum.checks_failed, r.seen.faults);
    CHECK_EQ_U64(r.sum.operands_rewritten, 2, "the semaphore address and the I2M destination");
    CHECK_EQ_U64(r.sum.entries_rewritten, 1, "the GPFIFO entry");
    CHECK(r.translated != DATA_VA + 0x10 && (r.translated & 0xfff) == 0x10 && r.translated < (1ull << 40),
          "moved to 0x%llx", (unsigned long long)r.translated);
    CHECK_EQ_U64(le32(r.read), 5, "the release at the new VA, read at the captured one");
    char want[128];
    snprintf(want, sizeof want, "SEM_ADDR_HI/LO 0x%llx -> 0x%llx", (unsigned long long)(DATA_VA + 0x10),
             (unsigned long long)r.translated);
    CHECK(strstr(r.seen.notes_text, want), "missing '%s' in: %s", want, r.seen.notes_text);
    snprintf(want, sizeof want, "OFFSET_OUT_UPPER/OFFSET_OUT 0x%llx -> 0x%llx", (unsigned long long)(DATA_VA + 0x100),
             (unsigned long long)(r.translated - 0x10 + 0x100));
    CHECK(strstr(r.seen.notes_text, want), "missing '%s' in: %s", want, r.seen.notes_text);
    CHECK(strstr(r.seen.notes_text, "GPFIFO entry push buffer 0x100000 -> "), "entry note: %s", r.seen.notes_text);
    CHECK(strstr(r.seen.notes_text, "relocated to") && strstr(r.seen.notes_text, "--relocate"), "%s", r.seen.notes_text);

    /* not relocated: the same trace at its captured VAs */
    replay(path, &vgt_backend_sim, NULL, 0, DATA_VA + 0x10, &r);
    CHECK(r.sum.relocations == 0 && r.sum.operands_rewritten == 0 && r.translated == DATA_VA + 0x10, "no relocation");
    CHECK_EQ_U64(le32(r.read), 5, "plain replay");
}

static void test_unaligned_moves(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/unaligned.vgt", dir);
    write_reloc_trace(path, DATA_VA + 0x800);
    run r;
    replay(path, &vgt_backend_sim, NULL, 0, DATA_VA + 0x810, &r);
    CHECK_EQ_U64(r.sum.relocations, 1, "the unaligned mapping moved by itself");
    CHECK(r.sum.checks_passed >= 2 && r.sum.checks_failed == 0, "checks %llu/%llu",
          (unsigned long long)r.sum.checks_passed, (unsigned long long)r.sum.checks_failed);
    CHECK((r.translated & 0xfff) == 0x810, "in-page offset kept: 0x%llx", (unsigned long long)r.translated);
    CHECK(strstr(r.seen.notes_text, "not 4 KiB aligned"), "%s", r.seen.notes_text);
}

/* A high half sent by an earlier submission cannot follow the move: a warning names the operand. */
static void test_split_halves_warn(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/split.vgt", dir);
    tw t;
    open_trace(&t, path);
    alloc(&t, 0x11, 0x100000);
    alloc(&t, 0x12, 0x10000);
    map(&t, 0x11, PB_VA, 0, 0x100000);
    map(&t, 0x12, DATA_VA, 0, 0x10000);
    channel(&t);
    bind(&t);
    m1(&t, 0, 0x60, (uint32_t)(DATA_VA >> 32));   /* SEM_ADDR_HI alone */
    submit(&t);
    const uint32_t v[4] = {(uint32_t)DATA_VA + 0x10, 9, 0, 1};   /* SEM_ADDR_LO, PAYLOAD_LO/HI, SEM_EXECUTE */
    t.pb[t.n++] = 1u << 29 | 1u << 16 | 0x5c >> 2;
    t.pb[t.n++] = v[0];
    inc(&t, 0, 0x64, v + 1, 3);
    submit(&t);
    ok(vgt_writer_close(t.w, &t.err), &t);
    const uint64_t reloc[1] = {DATA_VA};
    run r;
    replay(path, &vgt_backend_sim, reloc, 1, DATA_VA + 0x10, &r);
    char want[96];
    snprintf(want, sizeof want, "SEM_ADDR_HI/LO 0x%llx is to be 0x%llx", (unsigned long long)(DATA_VA + 0x10),
             (unsigned long long)r.translated);
    CHECK(strstr(r.seen.warnings_text, want) && strstr(r.seen.warnings_text, "not rewritten"), "warnings: %s",
          r.seen.warnings_text);
    CHECK_EQ_U64(r.sum.operands_rewritten, 0, "nothing half-rewritten");
}

/* ---- an operand an MME macro builds ---- */

/* The macro is mme_enc.h's enc_report_release_macro: SET_REPORT_SEMAPHORE_A/B from its parameters. */

static void write_macro_trace(const char *path)
{
    tw t;
    open_trace(&t, path);
    alloc(&t, 0x11, 0x100000);
    alloc(&t, 0x12, 0x10000);
    map(&t, 0x11, PB_VA, 0, 0x100000);
    map(&t, 0x12, DATA_VA, 0, 0x10000);
    channel(&t);
    bind(&t);
    uint32_t code[12];
    enc_report_release_macro(code);
    m1(&t, SC_3D, 0x0114, 0);                     /* LOAD_MME_INSTRUCTION_RAM_POINTER */
    noninc(&t, SC_3D, 0x0118, code, 12);          /* LOAD_MME_INSTRUCTION_RAM */
    m1(&t, SC_3D, 0x011c, 0);                     /* LOAD_MME_START_ADDRESS_RAM_POINTER */
    m1(&t, SC_3D, 0x0120, 0);                     /* LOAD_MME_START_ADDRESS_RAM */
    m1(&t, SC_3D, 0x3800, (uint32_t)(DATA_VA >> 32));               /* CALL_MME_MACRO(0) */
    const uint32_t rest[2] = {(uint32_t)DATA_VA + 0x700, 0x4242};
    noninc(&t, SC_3D, 0x3804, rest, 2);                             /* CALL_MME_DATA(0) */
    host_release(&t, DATA_VA + 0x10, 5);          /* completes the call; rewritable */
    submit(&t);
    semaphore(&t, DATA_VA + 0x10, 5);
    ok(vgt_writer_close(t.w, &t.err), &t);
}

static void test_macro_operand(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/macro.vgt", dir);
    write_macro_trace(path);
    const uint64_t reloc[1] = {DATA_VA};
    vgt_reloc_plan *p = calloc(1, sizeof *p);
    vgt_error e;
    CHECK_STATUS(vgt_reloc_plan_trace(path, 0, reloc, 1, p, &e), VGT_OK, &e, "plan");
    const vgt_reloc_note *macro = NULL;
    for (uint32_t i = 0; i < p->nnotes; i++)
        if (p->notes[i].kind == VGT_RELOC_NOT_REWRITABLE) macro = &p->notes[i];
    char want[64];
    snprintf(want, sizeof want, "0x%llx", (unsigned long long)(DATA_VA + 0x700));
    CHECK(macro && strstr(macro->msg, "MME macro 0") && strstr(macro->msg, "SET_REPORT_SEMAPHORE_A/B") &&
              strstr(macro->msg, want) && strstr(macro->msg, "cannot be rewritten"),
          "macro note: %s", macro ? macro->msg : "(none)");
    /* the replay (its own plan) warns with it; the host release is still rewritten and checked */
    run r;
    replay(path, &vgt_backend_sim, reloc, 1, DATA_VA + 0x10, &r);
    CHECK(r.seen.warnings >= 1 && strstr(r.seen.warnings_text, "MME macro 0"), "warnings: %s", r.seen.warnings_text);
    CHECK_EQ_U64(r.sum.operands_rewritten, 1, "the host release");
    CHECK_EQ_U64(le32(r.read), 5, "host release at the new VA");
    /* the macro's release went to the captured VA, which nothing maps any more: a fault, not silence */
    CHECK(r.seen.faults >= 1, "the macro's stale address faulted (%d faults)", r.seen.faults);
    vgt_reloc_plan_free(p);
    free(p);
}

/* ---- the engine's plan ---- */

typedef struct plan_seen {
    seen seen;
    int plans, partial;
    uint64_t records, observed;
} plan_seen;

static void on_plan(void *ctx, const vgt_reloc_plan *p)
{
    plan_seen *s = ctx;
    s->plans++;
    s->partial = p->partial;
    s->records = p->records;
    s->observed = p->nobserved;
}

static void on_plan_report(void *ctx, const vgt_replay_report *r) { on_report(&((plan_seen *)ctx)->seen, r); }

/* A census replay of path: from a reader (by_record 0) or fed record by record; rows counted. */
static uint64_t census_rows(const char *path, uint64_t limit, int by_record, plan_seen *ps, vgt_replay_summary *sum)
{
    memset(ps, 0, sizeof *ps);
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &vgt_backend_sim;
    o.check = 1;
    o.census = 1;
    o.plan_buffer_limit = limit;
    o.report = on_plan_report;
    o.report_ctx = ps;
    o.on_plan = on_plan;
    vgt_error err;
    vgt_reader *r = NULL;
    vgt_replay *rp = NULL;
    vgt_status rc = vgt_reader_open_path(&r, path, NULL, &err);
    if (rc == VGT_OK) rc = vgt_replay_open(&rp, &o, &err);
    if (rc == VGT_OK && !by_record) rc = vgt_replay_run(rp, r, &err);
    vgt_record rec;
    while (rc == VGT_OK && by_record && (rc = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        rc = vgt_replay_record(rp, &rec, &err);
        CHECK(rc != VGT_OK || ps->plans == 0 || limit, "the plan waits for the last record");
    }
    if (rc == VGT_E_EOF) rc = VGT_OK;
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, &err);
    CHECK_STATUS(rc, VGT_OK, &err, "census replay");
    uint64_t rows = 0;
    if (rp) {
        vgt_replay_stores(rp, &rows);
        *sum = *vgt_replay_summary_get(rp);
    }
    vgt_replay_close(rp);
    vgt_reader_close(r);
    return rows;
}

static void test_engine_plan(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/plan.vgt", dir);
    write_reloc_trace(path, DATA_VA);
    plan_seen ps;
    vgt_replay_summary sum;
    /* the whole trace planned: the observed range (written by the one submission, observed after it) is
     * watched from the start, so the submission's write is a row */
    uint64_t rows = census_rows(path, 0, 0, &ps, &sum);
    CHECK(ps.plans == 1 && !ps.partial && ps.observed == 1, "plan: %d made, partial %d, %llu observed", ps.plans,
          ps.partial, (unsigned long long)ps.observed);
    CHECK(rows >= 1 && sum.checks_failed == 0 && ps.seen.warnings == 0, "%llu rows, %llu failed, %d warnings",
          (unsigned long long)rows, (unsigned long long)sum.checks_failed, ps.seen.warnings);
    uint64_t records = ps.records;
    CHECK_EQ_U64(records, sum.records, "every record planned, then replayed");
    /* fed one record at a time: held until vgt_replay_finish, the same plan and rows */
    plan_seen ps2;
    vgt_replay_summary sum2;
    CHECK_EQ_U64(census_rows(path, 0, 1, &ps2, &sum2), rows, "rows fed by record");
    CHECK(ps2.plans == 1 && ps2.records == records && sum2.checks_passed == sum.checks_passed, "same plan by record");
    /* a limit below the first record: the plan covers nothing, says so, and the range is watched only from
     * when the trace observes it (after the submission that wrote it): no row; the checks are unchanged */
    CHECK_EQ_U64(census_rows(path, 1, 0, &ps2, &sum2), 0, "rows of a plan cut short");
    CHECK(ps2.plans == 1 && ps2.partial && ps2.records == 0, "partial plan: %d made, partial %d, %llu records",
          ps2.plans, ps2.partial, (unsigned long long)ps2.records);
    CHECK(ps2.seen.warnings == 1 && strstr(ps2.seen.warnings_text, "the address plan covers the first 0 records"),
          "warning: %s", ps2.seen.warnings_text);
    CHECK(sum2.checks_passed == sum.checks_passed && sum2.checks_failed == 0 && sum2.records == sum.records,
          "the replay itself is the same");
}

/* ---- choosing a VA ---- */

static void test_choose_va(void)
{
    vgt_error e;
    uint64_t got = 0;
    const uint64_t G = 1ull << 30, M2 = 2ull << 20, top = 1ull << 40;
    vgt_reloc_range none[1] = {{0}};
    CHECK_STATUS(vgt_reloc_choose_va(none, 0, 0x3000, M2, 1ull << 32, top, &got, &e), VGT_OK, &e, "empty");
    CHECK_EQ_U64(got, top - M2, "highest aligned base");
    vgt_reloc_range t[] = {{.va = top - G, .len = G}, {.va = top - 3 * G, .len = G + 0x1000}};
    CHECK_STATUS(vgt_reloc_choose_va(t, 2, 0x3000, M2, 1ull << 32, top, &got, &e), VGT_OK, &e, "gap");
    CHECK(got == top - G - M2, "into the gap below the top range: 0x%llx", (unsigned long long)got);
    CHECK_STATUS(vgt_reloc_choose_va(t, 2, G, M2, 1ull << 32, top, &got, &e), VGT_OK, &e, "a big one");
    CHECK(got + G <= top - 3 * G, "below both: 0x%llx", (unsigned long long)got);
    for (int i = 0; i < 2; i++)
        CHECK(!(got < t[i].va + t[i].len && t[i].va < got + G), "0x%llx overlaps range %d", (unsigned long long)got, i);
    vgt_reloc_range all[] = {{.va = 0, .len = top}};
    CHECK_STATUS(vgt_reloc_choose_va(all, 1, 0x1000, M2, 1ull << 32, top, &got, &e), VGT_E_UNSUPPORTED, &e, "full");
    CHECK_STATUS(vgt_reloc_choose_va(t, 2, 0x1000, 3, 1ull << 32, top, &got, &e), VGT_E_ARG, &e, "bad alignment");
}

/* ---- the gpu backend's alias bookkeeping, without hardware: no handle, no CPU view, no UVM range, so
 * release() makes no ioctl ---- */

static vgt_gpu_mem *fake_mem(vgt_gpu *g, uint64_t va, uint64_t size, vgt_gpu_mem *owner, uint64_t offset)
{
    vgt_gpu_mem *m = calloc(1, sizeof *m);
    *m = (vgt_gpu_mem){.kind = VGT_GPU_VIDMEM, .va = va, .size = size, .owner = owner, .offset = offset};
    if (owner) owner->refs++;
    g->mems[g->nmems++] = m;
    return m;
}

static void test_gpu_alias_refcount(void)
{
    vgt_gpu *g = calloc(1, sizeof *g);
    g->fd_ctl = g->fd_uvm = -1;
    g->capmems = 8;
    g->mems = calloc(8, sizeof *g->mems);
    vgt_gpu_mem *a = fake_mem(g, VA_A, 0x10000, NULL, 0);
    vgt_gpu_mem *owner = NULL;
    uint64_t off = 0;
    vgt_error e;
    CHECK_STATUS(mem_alias_source(g, VA_A + 0x2000, 0x1000, &owner, &off, &e), VGT_OK, &e, "source");
    CHECK(owner == a && off == 0x2000, "owner %p offset 0x%llx", (void *)owner, (unsigned long long)off);
    vgt_gpu_mem *b = fake_mem(g, VA_B, 0x8000, a, 0x2000);
    /* an alias of the alias resolves to the owner, offsets added */
    CHECK_STATUS(mem_alias_source(g, VA_B + 0x1000, 0x1000, &owner, &off, &e), VGT_OK, &e, "source through an alias");
    CHECK(owner == a && off == 0x3000, "owner %p offset 0x%llx", (void *)owner, (unsigned long long)off);
    CHECK_STATUS(mem_alias_source(g, 0x9000000, 0x1000, &owner, &off, &e), VGT_E_NOT_FOUND, &e, "no source");
    vgt_gpu_mem *c = fake_mem(g, 0x7000000, 0x1000, a, 0x4000);
    CHECK_EQ_U64(a->refs, 2, "two aliases");
    /* the owner unmapped first: its memory stays for the aliases, it is no longer found */
    CHECK_STATUS(vgt_gpu_mem_free(g, a, &e), VGT_OK, &e, "free owner");
    CHECK_EQ_U64(g->detached_owners, 1, "owner detached");
    CHECK(vgt_gpu_mem_find(g, VA_A, 4) == NULL, "the owner's VA is gone");
    CHECK(vgt_gpu_mem_find(g, VA_B, 4) == b, "the alias still maps it");
    CHECK_STATUS(vgt_gpu_mem_free(g, b, &e), VGT_OK, &e, "free alias b");
    CHECK_EQ_U64(g->detached_owners, 1, "one alias left");
    CHECK_STATUS(vgt_gpu_mem_free(g, c, &e), VGT_OK, &e, "free alias c");
    CHECK_EQ_U64(g->detached_owners, 0, "the last mapping released the memory");
    CHECK_EQ_U64(g->nmems, 0, "nothing left");
    /* an alias first: the owner then goes at once */
    a = fake_mem(g, VA_A, 0x10000, NULL, 0);
    b = fake_mem(g, VA_B, 0x1000, a, 0);
    CHECK_STATUS(vgt_gpu_mem_free(g, b, &e), VGT_OK, &e, "alias first");
    CHECK_EQ_U64(a->refs, 0, "no alias");
    CHECK_STATUS(vgt_gpu_mem_free(g, a, &e), VGT_OK, &e, "owner");
    CHECK_EQ_U64(g->detached_owners, 0, "nothing detached");
    free(g->mems);
    free(g);
}

int main(void)
{
    char dir[] = "/tmp/vgt-reloc-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_choose_va();
    test_sim_alias_lifetimes();
    test_alias_replay(dir);
    test_forced_relocation(dir);
    test_unaligned_moves(dir);
    test_macro_operand(dir);
    test_split_halves_warn(dir);
    test_engine_plan(dir);
    test_gpu_alias_refcount();
    const char *names[] = {"alias.vgt", "reloc.vgt", "unaligned.vgt", "macro.vgt", "split.vgt", "plan.vgt"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
    return check_finish("test_replay_reloc");
}
