/* gpu_selftest.c: the hardware check of backend/gpu, run on the H200 (CI has no GPU; see
 * tests/gpu/gpu_selftest.sh). Every step goes through the backend's API (backend/gpu/gpu.h) and is
 * verified by reading memory back; the end prints one table row per step and exits 0 only when every
 * step that ran passed.
 *
 *   open        session, device, UVM VA space          guards   refusals outside our allocations
 *   memory      sysmem + vidmem at fixed GPU VAs       channel  C86F + CBC0 C8B5 CB97 A140 902D
 *   host_sem    host semaphore release                 objects  SET_OBJECT on five subchannels
 *   i2m_a140    upload through A140                    i2m_comp upload through HOPPER_COMPUTE_A
 *   ce          memset + sysmem->vidmem->sysmem + CE semaphore, vidmem read back through BAR1
 *   i2m_3d      HOPPER_A bound, upload through 3D      fence    channel fence
 *   rate        trivial submissions per second (info)
 *   mme_*       on channels of their own: macros uploaded to HOPPER_A as the NVIDIA driver does (start
 *               addresses in 96-bit groups, behind a lead-in macro) and called, each emitting an I2M
 *               upload; the address and value written must equal the MME tracker's prediction
 *               (mme_plain first; five variants that isolate instruction forms; see step_mme)
 *   c56f_3d     an AMPERE_CHANNEL_GPFIFO_A (Vulkan's class) channel: upload through HOPPER_A
 *   fault       a release to an unmapped VA on a second channel must end the wait with VGT_E_FAULT
 *   after_fault the first channel still works
 *   ops         the `gpu` backend operation table end to end (a session of its own)
 *
 * Destructive rows (--destructive only): mme_mul_out, whose macro the MME model predicts to raise
 * ILLEGAL_OPCODE, and fault, an MMU fault on purpose. An engine exception on the graphics engine (Xid 13)
 * leaves this GPU unable to finish a stock Vulkan draw by any process until the machine restarts
 * (backend/gpu/README.md, "Engine exceptions"), so a default run never provokes one; those rows print
 * SKIP with the reason.
 *
 * Usage: gpu_selftest [-v] [--destructive] [--only ROW[,ROW...]] [--infra-va HEX]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "vgt/nv/cla140.h"
#include "vgt/nv/clc8b5.h"
#include "vgt/nv_facts.h"
#include "vgt/backend.h"

extern const vgt_backend_ops vgt_backend_gpu;
#ifdef VGT_SELFTEST_MME
#include "../unit/mme_enc.h"
#endif

/* ---- layout of our test memory ----------------------------------------------------------------- */
#define SYS_VA 0x200000000ull
#define SYS_SIZE (8ull << 20)
#define VID_VA 0x201000000ull
#define VID_SIZE (2ull << 20)
#define FALLBACK_INFRA_VA 0x300000000ull   /* ctx ranges then start at 0x4_0000_0000, the probe's */
#define PB_OFF 0x10000u                    /* 4 KiB push-buffer slots */
#define PB_SLOT 0x1000u
#define PB_SLOTS 64u
#define CE_SRC_OFF 0x100000u
#define CE_DST_OFF 0x200000u
#define I2M_OFF 0x280000u                  /* + 0x1000 per upload test */
#define SEM_OFF 0x300000u                  /* + 0x10 per semaphore */
#define MEMSET_OFF 0x400000u
#define CE_BYTES 0x10000u
#define I2M_DWORDS 64u
#define WAIT_MS 2000u

/* subchannel assignment of the objects (the probe's, NVIDIA's drivers may differ) */
enum { SUB_3D = 0, SUB_COMPUTE = 1, SUB_I2M = 2, SUB_2D = 3, SUB_COPY = 4 };

/* HOPPER_DMA_COPY_A methods and LAUNCH_DMA bits: the class constants (vgt/nv/clc8b5.h) */
#define CE_NON_PIPELINED VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE, NON_PIPELINED)
#define CE_FLUSH VGT_NV_DEF(NVC8B5_LAUNCH_DMA_FLUSH_ENABLE, TRUE)
#define CE_SEM_ONE_WORD VGT_NV_DEF(NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE, RELEASE_ONE_WORD_SEMAPHORE)
#define CE_SRC_PITCH VGT_NV_DEF(NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT, PITCH)
#define CE_DST_PITCH VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT, PITCH)
#define CE_REMAP VGT_NV_DEF(NVC8B5_LAUNCH_DMA_REMAP_ENABLE, TRUE)
#define CE_DISABLE_PLC VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DISABLE_PLC, TRUE)
#define CE_REMAP_CONST_B_4BYTE_1COMP                                                                             \
    (VGT_NV_DEF(NVC8B5_SET_REMAP_COMPONENTS_DST_X, CONST_B) | VGT_NV_DEF(NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE, FOUR))
/* inline-to-memory: the same offsets in A140, HOPPER_COMPUTE_A and HOPPER_A (vgt/nv/cla140.h) */
#define I2M_LAUNCH_PITCH_FLUSH                                                                                   \
    (VGT_NV_DEF(NVA140_LAUNCH_DMA_DST_MEMORY_LAYOUT, PITCH) | VGT_NV_DEF(NVA140_LAUNCH_DMA_COMPLETION_TYPE, FLUSH_ONLY))

/* ---- results table ------------------------------------------------------------------------------- */
typedef struct row {
    const char *name;
    const char *result;   /* PASS FAIL SKIP INFO */
    double ms;
    char detail[800];
} row;

static row rows[40];
static int nrows;
static int verbose;
static int destructive;          /* --destructive: rows that raise an engine exception or an MMU fault */
static const char *only;         /* --only: comma-separated row names; NULL runs every row */

/* True when --only names the row (or was not given). */
static int row_wanted(const char *name)
{
    if (!only)
        return 1;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* A destructive row without --destructive: SKIP, saying what it would leave behind; 1 when skipped. */
static int skip_destructive(row *r, const char *what)
{
    if (destructive)
        return 0;
    r->result = "SKIP";
    snprintf(r->detail, sizeof r->detail, "destructive (%s; afterwards the GPU cannot finish a stock Vulkan draw "
             "until the machine restarts): run with --destructive", what);
    return 1;
}

static row *row_begin(const char *name)
{
    row *r = &rows[nrows < 39 ? nrows++ : 39];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->result = "FAIL";
    return r;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void log_line(void *user, const char *line)
{
    (void)user;
    if (verbose)
        printf("  | %s\n", line);
}

/* ---- test context -------------------------------------------------------------------------------- */
typedef struct ctx {
    vgt_gpu *g;
    vgt_gpu_chan *ch;
    uint32_t slot;        /* next push-buffer slot */
    uint64_t infra_va;    /* the backend's reserved range in this session */
} ctx;

static uint64_t sys(uint32_t off) { return SYS_VA + off; }

/* Writes pb into the next slot, clears the semaphore, submits, waits for value there. */
static vgt_status run_pb(ctx *t, vgt_gpu_chan *ch, const vgt_pbw *pb, uint32_t sem_off, uint32_t value,
                         vgt_error *err)
{
    VGT_TRY(vgt_pbw_check(pb, err));
    uint64_t va = sys(PB_OFF + (t->slot++ % PB_SLOTS) * PB_SLOT);
    if (pb->n * 4 > PB_SLOT)
        return vgt_fail(err, VGT_E_LIMIT, VGT_NO_OFFSET, "push buffer of %u dwords exceeds a slot", pb->n);
    VGT_TRY(vgt_gpu_fill32(t->g, sys(sem_off), 0, 1, err));
    VGT_TRY(vgt_gpu_write(t->g, va, pb->dw, pb->n * 4, err));
    VGT_TRY(vgt_gpu_submit_pb(ch, va, pb->n, err));
    return vgt_gpu_wait_sem32(ch, sys(sem_off), value, VGT_GPU_WAIT_EQ, WAIT_MS, err);
}

/* Compares n words at va with want (or with the constant c when want is NULL). */
static int check_words(ctx *t, uint64_t va, const uint32_t *want, uint32_t c, uint32_t n, char *detail, size_t cap)
{
    static uint32_t got[CE_BYTES / 4];
    vgt_error err;
    if (n > CE_BYTES / 4 || vgt_gpu_read(t->g, va, got, n * 4, &err) != VGT_OK) {
        snprintf(detail, cap, "read back of %u words at 0x%llx failed", n, (unsigned long long)va);
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t w = want ? want[i] : c;
        if (got[i] != w) {
            snprintf(detail, cap, "word %u of %u at 0x%llx is 0x%08x, expected 0x%08x", i, n,
                     (unsigned long long)(va + 4 * i), got[i], w);
            return 0;
        }
    }
    snprintf(detail, cap, "%u words verified at 0x%llx", n, (unsigned long long)va);
    return 1;
}

static void fail_row(row *r, const vgt_error *err)
{
    r->result = "FAIL";
    snprintf(r->detail, sizeof r->detail, "%s: %s", vgt_status_name(err->code), err->msg);
}

/* ---- steps ------------------------------------------------------------------------------------------ */
static int step_open(ctx *t, uint64_t infra_va)
{
    row *r = row_begin("open");
    double t0 = now_ms();
    t->infra_va = infra_va ? infra_va : VGT_GPU_DEFAULT_INFRA_VA;
    vgt_gpu_options o = { .infra_va = infra_va, .log = log_line };
    vgt_error err;
    if (vgt_gpu_open(&o, &t->g, &err) != VGT_OK) {
        fail_row(r, &err);
        return 0;
    }
    const vgt_gpu_info *in = vgt_gpu_info_get(t->g);
    r->ms = now_ms() - t0;
    r->result = "PASS";
    snprintf(r->detail, sizeof r->detail, "pci %04x:%02x:%02x.%x device 0x%04x, %u classes, usermode 0x%04x, "
             "uuid %02x%02x%02x%02x..., infra VA 0x%llx; %s", in->pci_domain, in->pci_bus, in->pci_slot,
             in->pci_function, in->device_id, in->nclasses, in->usermode_class, in->uuid[0], in->uuid[1], in->uuid[2],
             in->uuid[3], (unsigned long long)t->infra_va, in->driver);
    return 1;
}

static int step_memory(ctx *t)
{
    row *r = row_begin("memory");
    double t0 = now_ms();
    vgt_error err;
    vgt_gpu_mem *s, *v;
    if (vgt_gpu_mem_alloc(t->g, VGT_GPU_SYSMEM, SYS_VA, SYS_SIZE, &s, &err) != VGT_OK ||
        vgt_gpu_mem_alloc(t->g, VGT_GPU_VIDMEM, VID_VA, VID_SIZE, &v, &err) != VGT_OK) {
        fail_row(r, &err);
        return 0;
    }
    /* the CPU views work both ways */
    uint32_t probe = 0x12345678, back = 0;
    vgt_gpu_write(t->g, VID_VA + 0x100, &probe, 4, &err);
    vgt_gpu_read(t->g, VID_VA + 0x100, &back, 4, &err);
    vgt_gpu_fill32(t->g, SYS_VA + SEM_OFF, 0, 0x100 / 4, &err);
    r->ms = now_ms() - t0;
    r->result = back == probe ? "PASS" : "FAIL";
    snprintf(r->detail, sizeof r->detail, "sysmem 0x%llx+0x%llx, vidmem 0x%llx+0x%llx, BAR1 write/read 0x%08x",
             (unsigned long long)SYS_VA, (unsigned long long)SYS_SIZE, (unsigned long long)VID_VA,
             (unsigned long long)VID_SIZE, back);
    return back == probe;
}

static void step_guards(ctx *t)
{
    row *r = row_begin("guards");
    vgt_error e1, e2, e3;
    vgt_gpu_mem *m;
    uint32_t w = 0;
    vgt_status a = vgt_gpu_mem_alloc(t->g, VGT_GPU_SYSMEM, SYS_VA + 0x1000, 0x1000, &m, &e1);
    vgt_status b = vgt_gpu_write(t->g, SYS_VA + SYS_SIZE - 2, &w, 4, &e2);
    vgt_status c = vgt_gpu_mem_alloc(t->g, VGT_GPU_SYSMEM, t->infra_va + 0x100000, 0x1000, &m, &e3);
    int ok = a == VGT_E_ARG && b == VGT_E_FAULT && c == VGT_E_ARG;
    r->result = ok ? "PASS" : "FAIL";
    snprintf(r->detail, sizeof r->detail, "overlap: %s; write past the end: %s; infra range: %s",
             vgt_status_name(a), vgt_status_name(b), vgt_status_name(c));
    if (verbose)
        printf("  guards: %s\n  guards: %s\n  guards: %s\n", e1.msg, e2.msg, e3.msg);
}

static int step_channel(ctx *t)
{
    row *r = row_begin("channel");
    double t0 = now_ms();
    vgt_error err;
    if (vgt_gpu_chan_create(t->g, NULL, &t->ch, &err) != VGT_OK) {
        fail_row(r, &err);
        return 0;
    }
    r->ms = now_ms() - t0;
    r->result = "PASS";
    snprintf(r->detail, sizeof r->detail, "class 0x%04x, token 0x%x, objects cbc0 0x%08x c8b5 0x%08x cb97 0x%08x "
             "a140 0x%08x 902d 0x%08x", vgt_gpu_chan_class(t->ch), vgt_gpu_chan_token(t->ch),
             vgt_gpu_chan_engine(t->ch, 0xcbc0), vgt_gpu_chan_engine(t->ch, 0xc8b5), vgt_gpu_chan_engine(t->ch, 0xcb97),
             vgt_gpu_chan_engine(t->ch, 0xa140), vgt_gpu_chan_engine(t->ch, 0x902d));
    return 1;
}

/* A step that runs one push buffer ending in a host release and checks the semaphore. */
static int finish_sem_step_on(ctx *t, vgt_gpu_chan *ch, row *r, vgt_pbw *pb, uint32_t sem_off, uint32_t value)
{
    vgt_error err;
    vgt_pbw_host_release(pb, sys(sem_off), value, VGT_PBW_RELEASE_WFI);
    double t0 = now_ms();
    vgt_status st = run_pb(t, ch, pb, sem_off, value, &err);
    r->ms = now_ms() - t0;
    if (st != VGT_OK) {
        fail_row(r, &err);
        return 0;
    }
    r->result = "PASS";
    snprintf(r->detail, sizeof r->detail, "semaphore 0x%llx = 0x%08x", (unsigned long long)sys(sem_off), value);
    return 1;
}

static int finish_sem_step(ctx *t, row *r, vgt_pbw *pb, uint32_t sem_off, uint32_t value)
{
    return finish_sem_step_on(t, t->ch, r, pb, sem_off, value);
}

static void step_host_sem(ctx *t)
{
    uint32_t dw[64];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 64);
    finish_sem_step(t, row_begin("host_sem"), &pb, SEM_OFF + 0x00, 0xcafe0000u);
}

static void step_objects(ctx *t)
{
    uint32_t dw[64];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 64);
    vgt_pbw_set_object(&pb, SUB_3D, VGT_GPU_CLASS_HOPPER_3D);
    vgt_pbw_set_object(&pb, SUB_COMPUTE, VGT_GPU_CLASS_HOPPER_COMPUTE);
    vgt_pbw_set_object(&pb, SUB_I2M, VGT_GPU_CLASS_I2M);
    vgt_pbw_set_object(&pb, SUB_2D, VGT_GPU_CLASS_TWOD);
    vgt_pbw_set_object(&pb, SUB_COPY, VGT_GPU_CLASS_HOPPER_COPY);
    finish_sem_step(t, row_begin("objects"), &pb, SEM_OFF + 0x10, 0xcafe0001u);
}

static void pb_i2m(vgt_pbw *pb, unsigned subch, uint64_t dst, const uint32_t *data, uint32_t n)
{
    const uint32_t v[4] = { n * 4, 1, (uint32_t)(dst >> 32), (uint32_t)dst };
    vgt_pbw_inc(pb, subch, NVA140_LINE_LENGTH_IN, v, 4);
    vgt_pbw_1(pb, subch, NVA140_LAUNCH_DMA, I2M_LAUNCH_PITCH_FLUSH);
    vgt_pbw_non_inc(pb, subch, NVA140_LOAD_INLINE_DATA, data, n);
}

static void step_i2m(ctx *t, const char *name, unsigned subch, uint32_t area, uint32_t seed, uint32_t sem_value)
{
    row *r = row_begin(name);
    uint32_t data[I2M_DWORDS], dw[256];
    for (uint32_t i = 0; i < I2M_DWORDS; i++)
        data[i] = seed + i * 0x01010101u;
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 256);
    uint64_t dst = sys(I2M_OFF + area * 0x1000);
    vgt_error err;
    vgt_gpu_fill32(t->g, dst, 0, I2M_DWORDS, &err);
    pb_i2m(&pb, subch, dst, data, I2M_DWORDS);
    if (!finish_sem_step(t, r, &pb, SEM_OFF + 0x20 + area * 0x10, sem_value))
        return;
    if (!check_words(t, dst, data, 0, I2M_DWORDS, r->detail, sizeof r->detail))
        r->result = "FAIL";
}

static void pb_ce(vgt_pbw *pb, uint64_t src, uint64_t dst, uint32_t bytes, uint32_t flags)
{
    const uint32_t o[4] = { (uint32_t)(src >> 32), (uint32_t)src, (uint32_t)(dst >> 32), (uint32_t)dst };
    vgt_pbw_inc(pb, SUB_COPY, NVC8B5_OFFSET_IN_UPPER, o, 4);
    vgt_pbw_1(pb, SUB_COPY, NVC8B5_LINE_LENGTH_IN, bytes);
    vgt_pbw_1(pb, SUB_COPY, NVC8B5_LAUNCH_DMA, CE_NON_PIPELINED | CE_SRC_PITCH | CE_DST_PITCH | CE_DISABLE_PLC | flags);
}

static void build_ce(vgt_pbw *pb, uint32_t sem_value)
{
    const uint32_t remap[2] = { 0xdeadbeefu, CE_REMAP_CONST_B_4BYTE_1COMP };
    vgt_pbw_inc(pb, SUB_COPY, NVC8B5_SET_REMAP_CONST_B, remap, 2);
    const uint32_t out[2] = { (uint32_t)(sys(MEMSET_OFF) >> 32), (uint32_t)sys(MEMSET_OFF) };
    vgt_pbw_inc(pb, SUB_COPY, NVC8B5_OFFSET_OUT_UPPER, out, 2);
    vgt_pbw_1(pb, SUB_COPY, NVC8B5_LINE_LENGTH_IN, CE_BYTES / 4);
    vgt_pbw_1(pb, SUB_COPY, NVC8B5_LAUNCH_DMA, CE_NON_PIPELINED | CE_FLUSH | CE_SRC_PITCH | CE_DST_PITCH | CE_REMAP |
                 CE_DISABLE_PLC);
    pb_ce(pb, sys(CE_SRC_OFF), VID_VA, CE_BYTES, 0);
    pb_ce(pb, VID_VA, sys(CE_DST_OFF), CE_BYTES, CE_FLUSH);
    uint64_t s = sys(SEM_OFF + 0x80);
    const uint32_t sem[3] = { (uint32_t)(s >> 32), (uint32_t)s, sem_value };
    vgt_pbw_inc(pb, SUB_COPY, NVC8B5_SET_SEMAPHORE_A, sem, 3);
    vgt_pbw_1(pb, SUB_COPY, NVC8B5_LAUNCH_DMA, CE_FLUSH | CE_SEM_ONE_WORD | CE_DISABLE_PLC);
}

static void step_ce(ctx *t)
{
    row *r = row_begin("ce");
    static uint32_t pattern[CE_BYTES / 4];
    vgt_error err;
    for (uint32_t i = 0; i < CE_BYTES / 4; i++)
        pattern[i] = 0x5a000000u ^ (i * 2654435761u);
    vgt_gpu_write(t->g, sys(CE_SRC_OFF), pattern, CE_BYTES, &err);
    vgt_gpu_fill32(t->g, sys(CE_DST_OFF), 0x55555555u, CE_BYTES / 4, &err);
    vgt_gpu_fill32(t->g, sys(MEMSET_OFF), 0x11111111u, CE_BYTES / 4, &err);
    vgt_gpu_fill32(t->g, VID_VA, 0, CE_BYTES / 4, &err);
    uint32_t dw[128];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 128);
    build_ce(&pb, 0xcafe0002u);
    double t0 = now_ms();
    vgt_status st = run_pb(t, t->ch, &pb, SEM_OFF + 0x80, 0xcafe0002u, &err);
    r->ms = now_ms() - t0;
    if (st != VGT_OK) {
        fail_row(r, &err);
        return;
    }
    char d1[160], d2[160], d3[160];
    int ok = check_words(t, sys(MEMSET_OFF), NULL, 0xdeadbeefu, CE_BYTES / 4, d1, sizeof d1);
    ok &= check_words(t, sys(CE_DST_OFF), pattern, 0, CE_BYTES / 4, d2, sizeof d2);
    ok &= check_words(t, VID_VA, pattern, 0, CE_BYTES / 4, d3, sizeof d3);
    r->result = ok ? "PASS" : "FAIL";
    snprintf(r->detail, sizeof r->detail, "CE semaphore ok; memset: %s; copy: %s; vidmem via BAR1: %s", d1, d2, d3);
}

/* ---- MME on HOPPER_A ----------------------------------------------------------------------------------- */
#ifdef VGT_SELFTEST_MME
/* Macros that emit an I2M upload of one word (LINE_LENGTH_IN 4, LINE_COUNT 1, OFFSET_OUT_UPPER/OFFSET_OUT,
 * LAUNCH_DMA, LOAD_INLINE_DATA), each on a channel of its own.
 *
 * Upload (mme_upload_call): as the NVIDIA driver uploads its macros (corpus/gl_egl.vgt submission 2): ONE
 * run of LOAD_MME_INSTRUCTION_RAM from pointer 0 holding a lead-in macro (consumes its parameter, emits
 * nothing) and right after it the variant's macro; start addresses count 96-bit groups: macro 0 -> 0,
 * macro 1 -> the lead-in's length in groups [inferred from NVIDIA driver traces, vgt/mme.h "Units"].
 * Calling macro 1 runs the variant only if the H200 counts start addresses in groups: in dwords it would
 * start inside the lead-in. An earlier version of this test uploaded each macro alone at pointer 0 with
 * start 0 (no unit involved) and variant "loads_out" (now mme_plain) raised MME ILLEGAL_OPCODE (ESR
 * 0x404490 = 0x80000004) on the H200 (2026-11-30). The next run (2026-11-30) passed nop, add_regs and
 * imm_only and raised GR_EXCEPTION (RC 13) for plain, loads_alu and mul_regs, whose MUL result OUT1 emitted
 * in the MUL's own group; the NVIDIA driver's Hopper macros never do that, and the MME model now refuses it
 * (analyze/mme/README.md "Multiplies and the H200"). The MUL variants emit the product from the next group:
 *   plain      parameters emitted straight from LOAD0/LOAD1; MUL LOAD0 x LOAD1
 *   nop        the variant macro consumes the call word and emits nothing: upload and call alone (passes
 *              when the semaphore after the call is released and the prediction has no emission)
 *   loads_alu  parameters through ALU results; MUL LOAD0 x LOAD1
 *   mul_regs   parameters through ALU results; MUL on registers
 *   add_regs   as mul_regs with ADD instead of MUL, the sum emitted in its own group (legal for ADD)
 *   imm_only   no parameter but the call word; address and value from IMM32 outputs
 *   mul_out    mul_regs with the product emitted in its own group (the old form): predicted
 *              ILLEGAL_OPCODE; passes when the hardware raises a graphics exception (RC 13) as well
 *   mul_alu1   mul_regs with the MUL in ALU1 (Mesa's builder pairs MULs so; legal in the model)
 *   mul_pair   MUL in ALU0 while OUT1 emits ALU1 (an ADD) in the same group: legal in the model, the
 *              inline word is the ADD's sum */
typedef enum { V_PLAIN, V_NOP, V_LOADS_ALU, V_MUL_REGS, V_ADD_REGS, V_IMM_ONLY, V_MUL_OUT, V_MUL_ALU1, V_MUL_PAIR,
               V_COUNT } mme_variant;
static const char *const variant_names[V_COUNT] = { "mme_plain", "mme_nop", "mme_loads_alu", "mme_mul_regs",
                                                    "mme_add_regs", "mme_imm_only", "mme_mul_out", "mme_mul_alu1",
                                                    "mme_mul_pair" };

static void macro_head(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();          /* LINE_LENGTH_IN = 4, method -> 0x184 */
    in.alu[0].imm = tu_mthd_imm(NVA140_LINE_LENGTH_IN, 1);
    in.alu[1].imm = 4;
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
    tu_add(p, &in);
    in = tu_nop();                             /* LINE_COUNT = R1 = 0 + 1 */
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, VGT_MME_TU104_ZERO, VGT_MME_TU104_IMM, 1);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_add(p, &in);
}

/* OFFSET_OUT_UPPER, OFFSET_OUT from the next two parameters. */
static void macro_address(enc_prog *p, int through_alu)
{
    vgt_mme_tu104_inst in = tu_nop();
    if (through_alu) {
        tu_alu(&in, 0, VGT_MME_TU104_ADD, 3, VGT_MME_TU104_LOAD0, VGT_MME_TU104_ZERO, 0);
        tu_alu(&in, 1, VGT_MME_TU104_ADD, 4, VGT_MME_TU104_LOAD1, VGT_MME_TU104_ZERO, 0);
        tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
        tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    } else {
        tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD0);
        tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD1);
    }
    tu_add(p, &in);
}

/* LAUNCH_DMA, then LOAD_INLINE_DATA = ALU0 of an instruction computing op(x, y), in the same group (for
 * a multiply the model's ILLEGAL_OPCODE form). */
static void macro_launch(enc_prog *p, unsigned op, unsigned x, unsigned y)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, op, 2, x, y, tu_mthd_imm(NVA140_LAUNCH_DMA, 1));
    in.alu[1].imm = I2M_LAUNCH_PITCH_FLUSH;
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_add(p, &in);
}

/* R2 = op(x, y) in ALU `alu` next to LAUNCH_DMA; the next group emits R2 as LOAD_INLINE_DATA (the method
 * increments past LAUNCH_DMA), as the NVIDIA driver's macros hand a product on (corpus/vk_triangle.vgt). */
static void macro_launch_late(enc_prog *p, int alu, unsigned op, unsigned x, unsigned y)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, alu, op, 2, x, y, 0);
    in.alu[0].imm = tu_mthd_imm(NVA140_LAUNCH_DMA, 1);
    in.alu[1].imm = I2M_LAUNCH_PITCH_FLUSH;
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
    tu_add(p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, VGT_MME_TU104_ZERO, 2, VGT_MME_TU104_ZERO, 0);
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU0);
    tu_add(p, &in);
}

/* MUL R2 = R5 x R6 in ALU0 while ALU1 computes R7 = R5 + R6 and OUT1 emits it as LOAD_INLINE_DATA. */
static void macro_launch_pair(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_MUL, 2, 5, 6, tu_mthd_imm(NVA140_LAUNCH_DMA, 1));
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 7, 5, 6, I2M_LAUNCH_PITCH_FLUSH);
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_ALU1);
    tu_add(p, &in);
}

/* R5, R6 = the next two parameters. */
static void macro_load_pair(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 5, VGT_MME_TU104_LOAD0, VGT_MME_TU104_ZERO, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 6, VGT_MME_TU104_LOAD1, VGT_MME_TU104_ZERO, 0);
    tu_add(p, &in);
}

/* One output of IMM32 (imm0 << 16 | imm1). */
static void macro_imm32(enc_prog *p, uint32_t v, int first_is_load)
{
    vgt_mme_tu104_inst in = tu_nop();
    if (first_is_load)   /* consume the call word */
        tu_alu(&in, 0, VGT_MME_TU104_ADD, VGT_MME_TU104_ZERO, VGT_MME_TU104_LOAD0, VGT_MME_TU104_ZERO, 0);
    in.alu[0].imm = (uint16_t)(v >> 16);
    in.alu[1].imm = (uint16_t)v;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM32);
    tu_add(p, &in);
}

/* Consumes the call word, emits nothing: the lead-in, and the nop variant. */
static void macro_lead_in(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, VGT_MME_TU104_ZERO, VGT_MME_TU104_LOAD0, VGT_MME_TU104_ZERO, 0);
    tu_add(p, &in);
    tu_end(p);
}

/* Builds the variant's macro and its parameters (returns how many). */
static uint32_t build_macro(enc_prog *p, mme_variant v, uint64_t dst, uint32_t *params)
{
    memset(p, 0, sizeof *p);
    if (v == V_NOP) {
        macro_lead_in(p);
        params[0] = 0x0badf00du;
        return 1;
    }
    params[0] = (uint32_t)(dst >> 32);
    params[1] = (uint32_t)dst;
    params[2] = 0x1234u;
    params[3] = 0x5678u;
    macro_head(p);
    switch (v) {
    case V_PLAIN:
    case V_LOADS_ALU:
        macro_address(p, v == V_LOADS_ALU);
        macro_launch_late(p, 0, VGT_MME_TU104_MUL, VGT_MME_TU104_LOAD0, VGT_MME_TU104_LOAD1);
        break;
    case V_MUL_REGS:
    case V_MUL_ALU1:
        macro_address(p, 1);
        macro_load_pair(p);
        macro_launch_late(p, v == V_MUL_ALU1, VGT_MME_TU104_MUL, 5, 6);
        break;
    case V_ADD_REGS:
    case V_MUL_OUT:
        macro_address(p, 1);
        macro_load_pair(p);
        macro_launch(p, v == V_MUL_OUT ? VGT_MME_TU104_MUL : VGT_MME_TU104_ADD, 5, 6);
        break;
    case V_MUL_PAIR:
        macro_address(p, 1);
        macro_load_pair(p);
        macro_launch_pair(p);
        break;
    default:
        macro_imm32(p, params[0], 1);
        macro_imm32(p, params[1], 0);
        params[0] = 0x600d;   /* the only parameter: consumed, not used */
        {
            vgt_mme_tu104_inst in = tu_nop();   /* LAUNCH_DMA, LOAD_INLINE_DATA = 0x600dcafe */
            in.alu[0].imm = tu_mthd_imm(NVA140_LAUNCH_DMA, 1);
            in.alu[1].imm = I2M_LAUNCH_PITCH_FLUSH;
            tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
            tu_add(p, &in);
        }
        macro_imm32(p, 0x600dcafeu, 0);
        tu_end(p);
        return 1;
    }
    tu_end(p);
    return 4;
}

/* Predicted memory writes: replay the emitted I2M methods (one line, inline data dwords). */
static int predict_i2m(const vgt_mme_emit_list *l, uint64_t *va, uint32_t *value)
{
    uint32_t hi = 0, lo = 0;
    int launched = 0, have = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        uint32_t m = l->v[i].method, v = l->v[i].value;
        if (m == NVA140_OFFSET_OUT_UPPER) hi = v;
        if (m == NVA140_OFFSET_OUT) lo = v;
        if (m == NVA140_LAUNCH_DMA) launched = 1;
        if (m == NVA140_LOAD_INLINE_DATA && launched && !have) {
            *value = v;
            have = 1;
        }
    }
    *va = ((uint64_t)hi << 32) | lo;
    return have;
}

/* The instruction RAM image: the lead-in, then the variant from group *start (in groups). */
static void mme_image(const enc_prog *variant, enc_prog *image, uint32_t *start)
{
    memset(image, 0, sizeof *image);
    macro_lead_in(image);
    *start = enc_insts(VGT_MME_TU104, image);
    memcpy(image->code + image->n, variant->code, 4 * variant->n);
    image->n += variant->n;
}

/* What the MME library predicts for the stream run_macro() sends: a channel tracker fed the same methods
 * (vgt/mme.h: group units), the call of macro 1 captured. */
typedef struct mme_pred {
    int calls;
    vgt_status status;
    vgt_mme_error error;   /* the hardware error class predicted, VGT_MME_OK for none */
    uint32_t error_pc;
    char msg[200];
    uint64_t instructions;
    uint32_t start_dword;
    vgt_mme_emit_list emits;
} mme_pred;

static vgt_status pred_call(void *user, const vgt_mme_call *c, vgt_error *err)
{
    (void)err;
    mme_pred *p = user;
    p->calls++;
    p->status = c->status;
    p->error = c->result->error;
    p->error_pc = c->result->pc;
    snprintf(p->msg, sizeof p->msg, "%.199s", c->status != VGT_OK && c->err ? c->err->msg : "");
    p->instructions = c->result->instructions;
    p->start_dword = c->start_dword;
    vgt_mme_emit_list_clear(&p->emits);
    for (uint32_t i = 0; i < c->nemits; i++) VGT_TRY(vgt_mme_emit_list_push(&p->emits, c->emits[i].method, c->emits[i].value));
    return VGT_OK;
}

static vgt_status predict(const enc_prog *image, uint32_t start, const uint32_t *params, uint32_t np, mme_pred *p,
                          vgt_error *err)
{
    const uint32_t cls = VGT_GPU_CLASS_HOPPER_3D;
    vgt_mme_tracker_config cfg = { .cls = cls, .on_call = pred_call, .user = p };
    vgt_mme_tracker *t;
    VGT_TRY(vgt_mme_tracker_create(&cfg, &t, err));
    vgt_status st = vgt_mme_tracker_feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0, err);
    for (uint32_t i = 0; st == VGT_OK && i < image->n; i++)
        st = vgt_mme_tracker_feed(t, VGT_MME_M_LOAD_INSTRUCTION_RAM, image->code[i], err);
    const uint32_t binds[4] = { 0, 0, 1, start };   /* macro 0 -> 0, macro 1 -> start: one pointer each */
    for (uint32_t i = 0; st == VGT_OK && i < 4; i++)
        st = vgt_mme_tracker_feed(t, i & 1 ? VGT_MME_M_LOAD_START_ADDRESS_RAM : VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER,
                                  binds[i], err);
    for (uint32_t i = 0; st == VGT_OK && i < np; i++)
        st = vgt_mme_tracker_feed(t, i ? VGT_MME_M_CALL_DATA0 + 8 : VGT_MME_M_CALL_MACRO0 + 8, params[i], err);
    if (st == VGT_OK) st = vgt_mme_tracker_flush(t, err);
    vgt_mme_tracker_destroy(t);
    return st;
}

/* Upload the image from pointer 0, bind macro 0 -> 0 and macro 1 -> start (groups), call macro 1, release
 * a semaphore; on a channel of its own. *rc (may be NULL): the channel's robust-channel error code when
 * the run failed and the GPU reported one, else 0. */
static int run_macro(ctx *t, row *r, const enc_prog *image, uint32_t start, const uint32_t *params, uint32_t np,
                     uint32_t sem_value, uint32_t *rc)
{
    if (rc) *rc = 0;
    vgt_error err;
    vgt_gpu_chan *c;
    if (vgt_gpu_chan_create(t->g, NULL, &c, &err) != VGT_OK) {
        fail_row(r, &err);
        return 0;
    }
    uint32_t dw[256];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 256);
    vgt_pbw_set_object(&pb, SUB_3D, VGT_GPU_CLASS_HOPPER_3D);
    vgt_pbw_1(&pb, SUB_3D, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0);
    vgt_pbw_non_inc(&pb, SUB_3D, VGT_MME_M_LOAD_INSTRUCTION_RAM, image->code, image->n);
    /* one entry per pointer (NVK's form): ONE_INC sends the pointer, then the entry */
    const uint32_t bind0[2] = { 0, 0 }, bind1[2] = { 1, start };
    vgt_pbw_one_inc(&pb, SUB_3D, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, bind0, 2);
    vgt_pbw_one_inc(&pb, SUB_3D, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, bind1, 2);
    vgt_pbw_one_inc(&pb, SUB_3D, VGT_MME_M_CALL_MACRO0 + 8, params, np);
    int ran = finish_sem_step_on(t, c, r, &pb, SEM_OFF + 0xa0, sem_value);
    if (!ran && rc) {
        vgt_gpu_chan_state s;
        vgt_gpu_chan_state_get(c, &s);
        *rc = s.error ? s.error_code : 0;
    }
    vgt_gpu_chan_destroy(c);
    return ran;
}

/* The MME raises its error classes (NV_PGRAPH_PRI_MME_HWW_ESR) as a graphics exception on the channel. */
#define RC_GR_EXCEPTION 13u

/* A variant the model predicts to fault: passes when the hardware faults with a graphics exception too.
 * The kernel log (gpu_selftest.sh run prints it) names the MME ESR. */
static void mme_expect_error(ctx *t, row *r, const enc_prog *prog, const enc_prog *image, uint32_t start,
                             const uint32_t *params, uint32_t np, uint64_t dst, uint32_t sem_value,
                             const mme_pred *pred)
{
    vgt_error err;
    uint32_t rc = 0, got = 0;
    vgt_gpu_fill32(t->g, dst, 0, 4, &err);
    char hw[240];
    if (run_macro(t, r, image, start, params, np, sem_value, &rc)) {
        vgt_gpu_read(t->g, dst, &got, 4, &err);
        r->result = "FAIL";
        snprintf(hw, sizeof hw, "the hardware ran it cleanly (0x%08x at 0x%llx)", got, (unsigned long long)dst);
    } else {
        r->result = rc == RC_GR_EXCEPTION ? "PASS" : "FAIL";
        if (rc == RC_GR_EXCEPTION)
            snprintf(hw, sizeof hw, "hardware: RC 13 (%s), as predicted (MME ESR: kernel log)", vgt_gpu_rc_name(rc));
        else   /* another error, or none reported: keep the run's own message */
            snprintf(hw, sizeof hw, "hardware (expected RC 13): %.200s", r->detail);
    }
    snprintf(r->detail, sizeof r->detail, "%u-dword macro at group %u; predicted %s at instruction %u (%s); %s",
             prog->n, start, vgt_mme_error_name(pred->error), pred->error_pc, pred->msg, hw);
}

static void step_mme_variant(ctx *t, mme_variant v)
{
    row *r = row_begin(variant_names[v]);
    static enc_prog prog, image;
    uint64_t dst = sys(I2M_OFF + 0x8000 + 0x100 * v);
    uint32_t params[4], start;
    uint32_t np = build_macro(&prog, v, dst, params);
    mme_image(&prog, &image, &start);
    mme_pred pred = { 0 };
    vgt_error err;
    vgt_status sst = predict(&image, start, params, np, &pred, &err);
    if (sst == VGT_OK && pred.calls == 1) sst = pred.status;
    else if (sst == VGT_OK) sst = VGT_E_NOT_FOUND;
    const vgt_mme_emit_list *emits = &pred.emits;
    uint64_t pva = 0;
    uint32_t pval = 0, got = 0;
    if (sst == VGT_E_DECODE && pred.error != VGT_MME_OK) {
        if (skip_destructive(r, "the model predicts an MME exception")) {
            vgt_mme_emit_list_free(&pred.emits);
            return;
        }
        mme_expect_error(t, r, &prog, &image, start, params, np, dst, 0xcafe0600u + v, &pred);
        vgt_mme_emit_list_free(&pred.emits);
        return;
    }
    if (v == V_NOP) {
        if (sst == VGT_OK && emits->n == 0 && run_macro(t, r, &image, start, params, np, 0xcafe0600u + v, NULL))
            snprintf(r->detail, sizeof r->detail, "%u-dword macro at group %u behind the lead-in, called; no "
                     "emission, as predicted", prog.n, start);
        else if (sst != VGT_OK || emits->n)
            snprintf(r->detail, sizeof r->detail, "prediction: %s %s, %u emits (expected none)", vgt_status_name(sst),
                     pred.msg, emits->n);
        vgt_mme_emit_list_free(&pred.emits);
        return;
    }
    if (sst != VGT_OK || !predict_i2m(emits, &pva, &pval) || pva != dst) {
        snprintf(r->detail, sizeof r->detail, "prediction: %s %s (%u emits)", vgt_status_name(sst),
                 sst != VGT_OK ? pred.msg : "no I2M write to the target predicted", emits->n);
        vgt_mme_emit_list_free(&pred.emits);
        return;
    }
    vgt_gpu_fill32(t->g, dst, 0, 4, &err);
    if (run_macro(t, r, &image, start, params, np, 0xcafe0600u + v, NULL)) {
        vgt_gpu_read(t->g, dst, &got, 4, &err);
        r->result = got == pval ? "PASS" : "FAIL";
        snprintf(r->detail, sizeof r->detail, "%u-dword macro at group %u (dword %u), %u emits, %llu instructions "
                 "simulated; predicted 0x%08x at 0x%llx, hardware wrote 0x%08x", prog.n, start, pred.start_dword,
                 emits->n, (unsigned long long)pred.instructions, pval, (unsigned long long)pva, got);
    } else {
        char d[700];
        snprintf(d, sizeof d, "macro at group %u; predicted 0x%08x at 0x%llx; hardware: %s", start, pval,
                 (unsigned long long)pva, r->detail);
        snprintf(r->detail, sizeof r->detail, "%s", d);
    }
    vgt_mme_emit_list_free(&pred.emits);
}

static void step_mme(ctx *t)
{
    for (int v = 0; v < V_COUNT; v++)
        if (row_wanted(variant_names[v]))
            step_mme_variant(t, (mme_variant)v);
}
#else
static void step_mme(ctx *t)
{
    row *r = row_begin("mme");
    r->result = "SKIP";
    snprintf(r->detail, sizeof r->detail, "built without the MME simulator (analyze/include/vgt/mme.h)");
}
#endif

static void step_fence(ctx *t)
{
    row *r = row_begin("fence");
    vgt_error err;
    double t0 = now_ms();
    vgt_status st = vgt_gpu_chan_fence(t->ch, WAIT_MS, &err);
    r->ms = now_ms() - t0;
    if (st != VGT_OK) {
        fail_row(r, &err);
        return;
    }
    r->result = "PASS";
    snprintf(r->detail, sizeof r->detail, "host release into the channel's own slot observed");
}

/* Trivial submissions (one host release each): one doorbell per entry, and batches of 64. */
static void step_rate(ctx *t)
{
    row *r = row_begin("rate");
    uint32_t dw[16];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 16);
    vgt_pbw_host_release(&pb, sys(SEM_OFF + 0xc0), 0x5e5e5e5eu, VGT_PBW_RELEASE_WFI);
    vgt_error err;
    uint64_t va = sys(PB_OFF + (PB_SLOTS - 1) * PB_SLOT);
    vgt_gpu_write(t->g, va, dw, pb.n * 4, &err);
    const uint32_t n = 100000;
    static uint64_t batch[64];
    for (uint32_t i = 0; i < 64; i++)
        batch[i] = vgt_gpu_gp_entry(va, pb.n, VGT_GPU_GP_SUBROUTINE);
    double t0 = now_ms();
    vgt_status st = VGT_OK;
    for (uint32_t i = 0; i < n && st == VGT_OK; i++)
        st = vgt_gpu_submit(t->ch, batch, 1, &err);
    if (st == VGT_OK)
        st = vgt_gpu_chan_fence(t->ch, 10000, &err);
    double single = now_ms() - t0;
    t0 = now_ms();
    for (uint32_t i = 0; i < n / 64 && st == VGT_OK; i++)
        st = vgt_gpu_submit(t->ch, batch, 64, &err);
    if (st == VGT_OK)
        st = vgt_gpu_chan_fence(t->ch, 10000, &err);
    double batched = now_ms() - t0;
    if (st != VGT_OK) {
        fail_row(r, &err);
        return;
    }
    /* the same release without RELEASE_WFI: what a trivial submission costs when the GPU need not drain */
    vgt_pbw_init(&pb, dw, 16);
    vgt_pbw_host_release(&pb, sys(SEM_OFF + 0xc8), 0x5e5e5e5fu, 0);
    uint64_t va2 = sys(PB_OFF + (PB_SLOTS - 2) * PB_SLOT);
    vgt_gpu_write(t->g, va2, dw, pb.n * 4, &err);
    uint64_t e2 = vgt_gpu_gp_entry(va2, pb.n, VGT_GPU_GP_SUBROUTINE);
    t0 = now_ms();
    for (uint32_t i = 0; i < n && st == VGT_OK; i++)
        st = vgt_gpu_submit(t->ch, &e2, 1, &err);
    if (st == VGT_OK)
        st = vgt_gpu_chan_fence(t->ch, 10000, &err);
    double nowfi = now_ms() - t0;
    uint32_t landed = 0;
    vgt_gpu_read(t->g, sys(SEM_OFF + 0xc8), &landed, 4, &err);
    if (st != VGT_OK) {
        fail_row(r, &err);
        return;
    }
    r->result = "INFO";
    r->ms = single + batched + nowfi;
    snprintf(r->detail, sizeof r->detail, "%u submissions, one doorbell each: %.0f/s (%.2f us each); in batches of "
             "64: %.0f/s; without WFI, one doorbell each: %.0f/s (release %s)", n, n / (single / 1e3),
             single * 1e3 / n, (n / 64 * 64) / (batched / 1e3), n / (nowfi / 1e3),
             landed == 0x5e5e5e5fu ? "landed" : "NOT seen");
}

/* A host release to an unmapped VA on a second channel: the wait must end with VGT_E_FAULT. */
static void step_fault(ctx *t)
{
    row *r = row_begin("fault");
    /* One engine object: without any, RM has no runlist for the channel and refuses the work-submit
     * token (NV_ERR_INVALID_STATE, seen on the H200). */
    static const uint32_t compute_only[1] = { VGT_GPU_CLASS_HOPPER_COMPUTE };
    vgt_gpu_chan_options o = { .engines = compute_only, .nengines = 1 };
    vgt_gpu_chan *c2;
    vgt_error err;
    if (vgt_gpu_chan_create(t->g, &o, &c2, &err) != VGT_OK) {
        fail_row(r, &err);
        return;
    }
    uint32_t dw[32];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 32);
    vgt_pbw_host_release(&pb, 0x500000000ull, 1, VGT_PBW_RELEASE_WFI);   /* nothing is mapped there */
    vgt_pbw_host_release(&pb, sys(SEM_OFF + 0xe0), 0xfa017, VGT_PBW_RELEASE_WFI);
    double t0 = now_ms();
    vgt_status st = run_pb(t, c2, &pb, SEM_OFF + 0xe0, 0xfa017, &err);
    r->ms = now_ms() - t0;
    r->result = st == VGT_E_FAULT ? "PASS" : "FAIL";
    snprintf(r->detail, sizeof r->detail, "%s: %s", vgt_status_name(st), st == VGT_OK ? "release landed" : err.msg);
    vgt_gpu_chan_destroy(c2);
}

static void step_after_fault(ctx *t)
{
    uint32_t dw[16];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 16);
    finish_sem_step(t, row_begin("after_fault"), &pb, SEM_OFF + 0xf0, 0xcafe00ffu);
}

/* The Vulkan driver's channel class on Hopper: HOPPER_A bound, an upload through 3D. */
static void step_c56f(ctx *t)
{
    row *r = row_begin("c56f_3d");
    vgt_gpu_chan_options o = { .channel_class = VGT_GPU_CLASS_AMPERE_CHANNEL };
    vgt_gpu_chan *c;
    vgt_error err;
    if (vgt_gpu_chan_create(t->g, &o, &c, &err) != VGT_OK) {
        fail_row(r, &err);
        return;
    }
    uint32_t data[I2M_DWORDS], dw[256];
    for (uint32_t i = 0; i < I2M_DWORDS; i++)
        data[i] = 0xc56f0000u + i;
    uint64_t dst = sys(I2M_OFF + 0x3000);
    vgt_gpu_fill32(t->g, dst, 0, I2M_DWORDS, &err);
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 256);
    vgt_pbw_set_object(&pb, SUB_3D, VGT_GPU_CLASS_HOPPER_3D);
    pb_i2m(&pb, SUB_3D, dst, data, I2M_DWORDS);
    int ran = finish_sem_step_on(t, c, r, &pb, SEM_OFF + 0xb0, 0xcafe0007u);
    vgt_gpu_chan_destroy(c);
    if (ran && !check_words(t, dst, data, 0, I2M_DWORDS, r->detail, sizeof r->detail))
        r->result = "FAIL";
}

/* The `gpu` operation table (vgt/backend.h) end to end, as the replay engine drives it; the entry is
 * MAIN level (the other steps use SUBROUTINE). Runs after the first session is closed. */
static vgt_status ops_run(vgt_backend *b, const vgt_backend_ops *ops, char *detail, size_t cap, vgt_error *err)
{
    uint32_t vas, ch, dw[256], data[16], got[16];
    const uint64_t base = 0x280000000ull, pb_va = base, dst = base + 0x10000, sem = base + 0x20000;
    VGT_TRY(ops->vaspace_create(b, &vas, err));
    VGT_TRY(ops->map(b, vas, base, 0x100000, 1, err));
    for (uint32_t i = 0; i < 16; i++)
        data[i] = 0x0b500000u + i;
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 256);
    vgt_pbw_set_object(&pb, SUB_3D, VGT_GPU_CLASS_HOPPER_3D);
    pb_i2m(&pb, SUB_3D, dst, data, 16);
    vgt_pbw_host_release(&pb, sem, 7, VGT_PBW_RELEASE_WFI);
    VGT_TRY(vgt_pbw_check(&pb, err));
    VGT_TRY(ops->mem_write(b, vas, pb_va, dw, pb.n * 4, err));
    vgt_backend_channel_desc d = { .vas = vas, .cls = 0xc86f, .entries = 512, .handle = 0xbeef0100u };
    VGT_TRY(ops->channel_create(b, &d, &ch, err));
    VGT_TRY(ops->object_create(b, ch, VGT_GPU_CLASS_HOPPER_3D, 0xbeef0200u, err));
    VGT_TRY(ops->object_create(b, ch, VGT_GPU_CLASS_HOPPER_COMPUTE, 0xbeef0201u, err));
    uint64_t e = vgt_gpu_gp_entry(pb_va, pb.n, VGT_GPU_GP_MAIN);
    VGT_TRY(ops->submit(b, ch, &e, 1, 0, err));
    VGT_TRY(ops->sem_wait(b, vas, sem, 7, 4, 2000000000ull, err));
    VGT_TRY(ops->mem_read(b, vas, dst, got, sizeof got, err));
    VGT_TRY(ops->idle(b, 2000000000ull, err));
    vgt_backend_counters k;
    ops->counters(b, &k);
    if (memcmp(got, data, sizeof got))
        return vgt_fail(err, VGT_E_FAULT, dst, "upload read back differs: word 0 is 0x%08x, expected 0x%08x", got[0],
                        data[0]);
    snprintf(detail, cap, "map, write, channel+objects, MAIN entry, sem_wait, read (16 words ok), idle; %llu submits",
             (unsigned long long)k.submits);
    return VGT_OK;
}

static void step_ops(void)
{
    row *r = row_begin("ops");
    const vgt_backend_ops *ops = &vgt_backend_gpu;
    vgt_backend *b;
    vgt_error err;
    double t0 = now_ms();
    vgt_status st = ops->probe(&err);
    if (st == VGT_OK)
        st = ops->open(&b, NULL, &err);
    if (st == VGT_OK) {
        st = ops_run(b, ops, r->detail, sizeof r->detail, &err);
        ops->close(b);
    }
    r->ms = now_ms() - t0;
    if (st != VGT_OK)
        fail_row(r, &err);
    else
        r->result = "PASS";
}

/* ---- driver ------------------------------------------------------------------------------------------- */
static void run_steps(ctx *t)
{
    if (row_wanted("guards")) step_guards(t);
    if (row_wanted("host_sem")) step_host_sem(t);
    if (row_wanted("objects")) step_objects(t);
    if (row_wanted("i2m_a140")) step_i2m(t, "i2m_a140", SUB_I2M, 0, 0xa1400000u, 0xcafe0003u);
    if (row_wanted("i2m_comp")) step_i2m(t, "i2m_comp", SUB_COMPUTE, 1, 0xc0000000u, 0xcafe0004u);
    if (row_wanted("ce")) step_ce(t);
    if (row_wanted("i2m_3d")) step_i2m(t, "i2m_3d", SUB_3D, 2, 0x3d000000u, 0xcafe0005u);
    if (row_wanted("fence")) step_fence(t);
    if (row_wanted("rate")) step_rate(t);
    if (row_wanted("c56f_3d")) step_c56f(t);
    step_mme(t);
    if (row_wanted("fault") && destructive) {
        step_fault(t);
        step_after_fault(t);
    } else if (row_wanted("fault")) {
        skip_destructive(row_begin("fault"), "an MMU fault on purpose");
    }
}

/* Open, memory, channel; with the default infra VA first and, if the channel cannot be made there,
 * once more with the probe's proven low range (the table then says so). */
static int setup(ctx *t, uint64_t infra_va, int allow_fallback)
{
    if (!step_open(t, infra_va) || !step_memory(t))
        return 0;
    if (step_channel(t))
        return 1;
    if (!allow_fallback)
        return 0;
    vgt_gpu_close(t->g);
    t->g = NULL;
    row *r = row_begin("fallback");
    r->result = "INFO";
    snprintf(r->detail, sizeof r->detail, "channel failed with infra VA 0x%llx; retrying at 0x%llx",
             (unsigned long long)VGT_GPU_DEFAULT_INFRA_VA, (unsigned long long)FALLBACK_INFRA_VA);
    return setup(t, FALLBACK_INFRA_VA, 0);
}

static int print_table(void)
{
    int failed = 0;
    printf("\n%-12s %-6s %9s  %s\n", "step", "result", "ms", "detail");
    for (int i = 0; i < nrows; i++) {
        printf("%-12s %-6s %9.3f  %s\n", rows[i].name, rows[i].result, rows[i].ms, rows[i].detail);
        failed += !strcmp(rows[i].result, "FAIL");
    }
    printf("\ngpu_selftest: %s (%d failed of %d rows)\n", failed ? "FAIL" : "PASS", failed, nrows);
    return failed;
}

static void on_watchdog(int sig)
{
    static const char msg[] = "\ngpu_selftest: watchdog expired (a step hung); terminating\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    (void)sig;
    raise(SIGTERM);   /* the backend's handler frees the root client, then the process ends */
}

int main(int argc, char **argv)
{
    uint64_t infra_va = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--destructive"))
            destructive = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--infra-va") && i + 1 < argc)
            infra_va = strtoull(argv[++i], NULL, 16);
        else {
            printf("usage: gpu_selftest [-v] [--destructive] [--only ROW[,ROW...]] [--infra-va HEX]\n");
            return !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") ? 0 : 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGALRM, on_watchdog);
    alarm(180);
    ctx t = { 0 };
    if (setup(&t, infra_va, infra_va == 0))
        run_steps(&t);
    double t0 = now_ms();
    vgt_gpu_close(t.g);
    row *r = row_begin("teardown");
    r->result = "INFO";   /* vgt_gpu_close cannot fail; the kernel log printed after the run shows errors */
    r->ms = now_ms() - t0;
    snprintf(r->detail, sizeof r->detail, "root client freed, UVM unregistered, fds closed");
    if (t.g && infra_va == 0 && row_wanted("ops"))
        step_ops();
    return print_table() ? 1 : 0;
}
