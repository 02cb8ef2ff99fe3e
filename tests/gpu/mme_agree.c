/* mme_agree.c: the MME simulator (vgt/mme.h) against the H200's MME, through the gpu backend (backend/gpu/gpu.h).
 * Run on the GPU machine by tests/gpu/mme_agree.sh. An MME exception leaves the GPU unable to finish Vulkan draws
 * until the machine is reset (backend/gpu/README.md "Engine exceptions"), so nothing is submitted unless:
 *   - every macro of ours (probes, the data-RAM writer, markers, the extra_* and bit-14 macros) consists only of
 *     group forms that NVIDIA's driver macros in --list use (tests/gpu/mme_forms.h: per group the op and operand
 *     kinds of each ALU, the outputs' sources, predicate, end_next, branch and loop placement); checked for all of
 *     them before anything runs (a refusal exits 2) and again for each image before it is submitted;
 *   - every driver macro passes vgt_mme_tu104_check() over its whole body and the simulator predicts a clean call
 *     that emits only state methods, with values the driver sent in the captured call;
 *   - stage 0 ran cleanly: one submission holding only the data-RAM writer and the two probes, checked by its
 *     semaphore, the channel's error state and the words read back. The first failed or erroring submission stops
 *     the run: later rows say "stopped after a channel error".
 *
 * Results are read back through the MME itself: a probe macro reads the shadow values (STATE) of a list of methods,
 * or data-RAM words (DREAD), and writes them to memory with an inline-to-memory upload; markers are
 * SET_MME_SHADOW_SCRATCH(i) writes, which only the MME reads.
 *
 *   stage0_zero_probe  scratch values set from the push buffer and data-RAM words written with the DWRITE macro
 *             (NVIDIA's own macro 0x63, byte for byte), read back by both probes.
 *   extra_*   a guard macro that reads 4 of its 21 parameters and exits (the Hopper Vulkan driver's form),
 *             then a macro that stores its 3 parameters in scratch registers: the second call sees its own
 *             parameters (DISCARDED: what the simulator models) or the guard's leftovers (CARRIED), or the
 *             channel reports an error (ERROR); variants: one push buffer, the guard exiting by end_next or by
 *             a taken branch, the second call in the next GPFIFO entry, the leftovers under their own header.
 *   bit14_*   branches whose immediate has bit 14 set (NVIDIA's driver sets it on 76 branches of the corpus),
 *             next to the same branch without it: scratch markers show which groups ran.
 *   macro     every distinct driver macro of --list (tests/gpu/mme_macros.py --list), on a fresh channel, with the
 *             parameters of a captured call: the shadow values the simulator's STATE reads are fetched from the
 *             hardware first; the data-RAM words its DREADs name are zeroed (the whole RAM when an address is
 *             computed) by straight-line calls of the DWRITE macro; then the shadow value of every method the
 *             simulator says it emitted and every data-RAM word it left nonzero are read back and compared.
 *             AGREE / DISAGREE, or SKIP with the reason (never called cleanly in the corpus; emits MME DMA, a draw,
 *             an upload...; would send a value the driver did not send; no effect the probes can read back; ...).
 *
 * Usage: mme_agree --list FILE [-v] [--dry-run] [--safe] [--run-known-bad] [--forms] [--only extra|bit14|macros]
 *                  [--budget SECONDS]
 *   --run-known-bad: also extra_branch_exit, which raised MME ILLEGAL_OPCODE on the H200 (skipped otherwise)
 *   --dry-run: no GPU: the form check, the simulator's predictions, and which macros would run (DRY) with a zero
 *              shadow state
 *   --safe: stage 0, the extra_* and bit-14 rows only; the driver macros are skipped
 *   --forms: print the driver forms table (and the check of our macros) and exit
 * Exit: 0 all agree, 1 a difference, an error or a stop, 2 usage, I/O, or our macros refused.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "mme_forms.h"
#include "vgt/mme_trace.h"
#include "vgt/nv/cla140.h"
#include "../unit/mme_enc.h"

#define SYS_VA 0x200000000ull
#define SYS_SIZE (8ull << 20)
#define PB_OFF 0x0u            /* 64 KiB push-buffer slots */
#define PB_SLOT 0x10000u
#define PB_SLOTS 32u
#define OUT_OFF 0x200000u      /* probe results: 16 KiB per probe */
#define OUT_SLOT 0x4000u
#define SEM_OFF 0x400000u
#define WAIT_MS 2000u
#define MAX_PROBE 1024u        /* methods one probe reads */
#define SUB_MME 0

enum { Z = VGT_MME_TU104_ZERO, IMM = VGT_MME_TU104_IMM, L0 = VGT_MME_TU104_LOAD0, L1 = VGT_MME_TU104_LOAD1 };
#define SCRATCH(i) (VGT_MME_M_SET_SHADOW_SCRATCH0 + 4u * (i))
#define I2M_LAUNCH_PITCH_FLUSH                                                                                   \
    (VGT_NV_DEF(NVA140_LAUNCH_DMA_DST_MEMORY_LAYOUT, PITCH) | VGT_NV_DEF(NVA140_LAUNCH_DMA_COMPLETION_TYPE, FLUSH_ONLY))

static int verbose;
static int safe;  /* --safe: only forms and upload patterns that ran cleanly on the H200 (see usage) */
static int run_known_bad;   /* --run-known-bad: also the rows that raised an engine exception on the H200 */
static int dry;   /* --dry-run: no GPU; predictions and the per-macro gate with a zero shadow state */
static mme_forms forms;   /* the group forms of the listed driver macros */
static double t_start;
static char halted[400];   /* set by the first failed submission: nothing more is submitted */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t sys(uint32_t off) { return SYS_VA + off; }

/* ---- a push buffer and the simulator's view of the same stream ------------------------------------ */
typedef struct call_seen {
    uint32_t macro, nparams;
    vgt_status status;
    vgt_mme_error error;
    char msg[160];
    vgt_mme_emit_list emits;
} call_seen;

typedef struct stream {
    uint32_t cls;
    uint32_t dw[PB_SLOT / 4];
    vgt_pbw pb;
    vgt_mme_tracker *t;
    call_seen calls[8];
    uint32_t ncalls;
    vgt_status st;   /* the first feed failure */
    vgt_error err;
    char refused[300];   /* the submission gate's refusal (image_check), or "" */
} stream;

typedef struct image image;
static int image_check(const image *im, char *why, size_t cap);
static const enc_prog *image_prog(const image *im);

static vgt_status on_call(void *user, const vgt_mme_call *c, vgt_error *err)
{
    (void)err;
    stream *s = user;
    if (s->ncalls >= 8) return VGT_OK;
    call_seen *k = &s->calls[s->ncalls++];
    k->macro = c->macro;
    k->nparams = c->nparams;
    k->status = c->status;
    k->error = c->result->error;
    snprintf(k->msg, sizeof k->msg, "%.159s", c->status != VGT_OK && c->err ? c->err->msg : "");
    vgt_mme_emit_list_clear(&k->emits);
    for (uint32_t i = 0; i < c->nemits; i++) VGT_TRY(vgt_mme_emit_list_push(&k->emits, c->emits[i].method, c->emits[i].value));
    return VGT_OK;
}

static void s_feed(stream *s, uint32_t m, uint32_t v)
{
    if (s->st == VGT_OK) s->st = vgt_mme_tracker_feed(s->t, m, v, &s->err);
}

static int s_begin(stream *s, uint32_t cls)
{
    for (uint32_t i = 0; i < 8; i++) vgt_mme_emit_list_free(&s->calls[i].emits);
    memset(s->calls, 0, sizeof s->calls);
    s->ncalls = 0;
    s->cls = cls;
    s->st = VGT_OK;
    s->refused[0] = 0;
    vgt_pbw_init(&s->pb, s->dw, PB_SLOT / 4 - 16);
    vgt_pbw_set_object(&s->pb, SUB_MME, cls);
    vgt_mme_tracker_config cfg = { .cls = cls, .on_call = on_call, .user = s };
    return vgt_mme_tracker_create(&cfg, &s->t, &s->err) == VGT_OK;
}

static void s_end(stream *s)
{
    if (s->st == VGT_OK) s->st = vgt_mme_tracker_flush(s->t, &s->err);
    vgt_mme_tracker_destroy(s->t);
    s->t = NULL;
}

static void s_method(stream *s, uint32_t m, uint32_t v)
{
    vgt_pbw_1(&s->pb, SUB_MME, m, v);
    s_feed(s, m, v);
}

/* The whole image from instruction 0 (one run, as the NVIDIA driver uploads), then macro j -> start (groups). */
static void s_upload(stream *s, const image *im)
{
    const enc_prog *code = image_prog(im);
    if (!image_check(im, s->refused, sizeof s->refused) && !s->refused[0]) snprintf(s->refused, sizeof s->refused, "refused");
    s_method(s, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0);
    vgt_pbw_non_inc(&s->pb, SUB_MME, VGT_MME_M_LOAD_INSTRUCTION_RAM, code->code, code->n);
    for (uint32_t i = 0; i < code->n; i++) s_feed(s, VGT_MME_M_LOAD_INSTRUCTION_RAM, code->code[i]);
}

static void s_bind(stream *s, uint32_t j, uint32_t start)
{
    const uint32_t b[2] = { j, start };
    vgt_pbw_one_inc(&s->pb, SUB_MME, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, b, 2);
    s_feed(s, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, j);
    s_feed(s, VGT_MME_M_LOAD_START_ADDRESS_RAM, start);
}

/* CALL_MME_MACRO(j) and its data under one increment-once header (the driver's form); split: the call word
 * under its own header, the rest under a non-incrementing CALL_MME_DATA header. */
static void s_call(stream *s, uint32_t j, const uint32_t *p, uint32_t n, int split)
{
    if (split && n > 1) {
        vgt_pbw_1(&s->pb, SUB_MME, VGT_MME_M_CALL_MACRO0 + 8 * j, p[0]);
        vgt_pbw_non_inc(&s->pb, SUB_MME, VGT_MME_M_CALL_DATA0 + 8 * j, p + 1, n - 1);
    } else {
        vgt_pbw_one_inc(&s->pb, SUB_MME, VGT_MME_M_CALL_MACRO0 + 8 * j, p, n);
    }
    for (uint32_t i = 0; i < n; i++) s_feed(s, i ? VGT_MME_M_CALL_DATA0 + 8 * j : VGT_MME_M_CALL_MACRO0 + 8 * j, p[i]);
}

/* ---- macros of our own: only forms of NVIDIA's driver macros (mme_forms.h; checked before any submission) ---- */
/* Probe: parameters (address high, low); reads m[0..n) and writes the values, in order, to that address through an
 * inline-to-memory upload. dram 0: m are methods, read with STATE (their shadow values); 1: m are data-RAM words,
 * read with DREAD. Groups (each a driver form): LINE_LENGTH_IN = 4n; LINE_COUNT = 1, OFFSET_OUT_UPPER = high;
 * OFFSET_OUT = low, LAUNCH_DMA; then per word "STATE/DREAD R0, #m" and "LOAD_INLINE_DATA = R0". */
static void build_probe(enc_prog *p, const uint32_t *m, uint32_t n, int dram)
{
    vgt_mme_tu104_inst in = tu_nop();                 /* - ; - ; IMM0/IMM1 ; NONE/NONE */
    in.alu[0].imm = tu_mthd_imm(NVA140_LINE_LENGTH_IN, 1);
    in.alu[1].imm = (uint16_t)(4 * n);
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
    tu_add(p, &in);
    in = tu_nop();                                    /* - ; - ; NONE/IMM0 ; NONE/LOAD0 */
    in.alu[0].imm = 1;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_IMM0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD0);
    tu_add(p, &in);
    in = tu_nop();                                    /* - ; - ; NONE/LOAD0 ; IMM0/IMM1 */
    in.alu[0].imm = tu_mthd_imm(NVA140_LAUNCH_DMA, 0);
    in.alu[1].imm = I2M_LAUNCH_PITCH_FLUSH;
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD0);
    tu_out(&in, 1, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
    tu_add(p, &in);
    for (uint32_t i = 0; i < n; i++) {
        in = tu_nop();                                /* R0 = shadow of m[i] / data RAM word m[i] */
        if (dram) tu_alu(&in, 0, VGT_MME_TU104_DREAD, 0, IMM, Z, (uint16_t)m[i]);
        else tu_alu(&in, 0, VGT_MME_TU104_STATE, 0, IMM, Z, (uint16_t)(m[i] >> 2));
        tu_add(p, &in);
        in = tu_nop();                                /* LOAD_INLINE_DATA = R0, from its own group */
        tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, 0, Z, tu_mthd_imm(NVA140_LOAD_INLINE_DATA, 0));
        tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
        tu_add(p, &in);
    }
    tu_end(p);
}

/* Writes one data-RAM word: parameters (word, value). NVIDIA's own macro (the body of the driver's macro 0x63 in
 * corpus/gl_egl.vgt, hash 2e7ecf3e37d886fa): "DWRITE [LOAD0], LOAD1 ; end_next", then a no-op group. The data RAM
 * is zeroed by calling it once per word a macro under test reads, straight-line from the push buffer. (Until
 * 2026-12-02 a loop of our own zeroed the whole RAM; its first group wrote R1 from both ALUs and every H200
 * submission holding it raised MME ILLEGAL_OPCODE.) */
static void build_dwrite(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_DWRITE, Z, L0, L1, 0);
    in.end_next = true;
    tu_add(p, &in);
    in = tu_nop();
    tu_add(p, &in);
}

/* A program image: our macros and driver macros one after another, each a segment the submission gate checks. */
typedef struct image {
    enc_prog p;
    uint32_t seg[8], nseg;   /* first dword of each segment */
    uint8_t driver[8];       /* 1: a driver macro's body as captured (checked by vgt_mme_tu104_check only) */
} image;

static void image_init(image *im) { memset(im, 0, sizeof *im); }

/* Appends macro code[0..n) at the next group; returns its start (groups). */
static uint32_t image_put(image *im, const uint32_t *code, uint32_t n, int driver)
{
    uint32_t at = im->p.n / 3;
    if (im->nseg < 8) {
        im->seg[im->nseg] = im->p.n;
        im->driver[im->nseg++] = (uint8_t)driver;
    }
    memcpy(im->p.code + im->p.n, code, 4 * n);
    im->p.n += n;
    im->p.n += (3 - im->p.n % 3) % 3;
    return at;
}

static uint32_t image_add(image *im, const enc_prog *q) { return image_put(im, q->code, q->n, 0); }
static const enc_prog *image_prog(const image *im) { return &im->p; }

/* The submission gate for an image: our segments only of the driver's forms, every group legal. 1 ok; else why. */
static int image_check(const image *im, char *why, size_t cap)
{
    for (uint32_t i = 0; i < im->nseg; i++) {
        uint32_t from = im->seg[i], to = i + 1 < im->nseg ? im->seg[i + 1] : im->p.n;
        char w[260];
        if (!im->driver[i]) {
            if (!mme_forms_check_macro(&forms, im->p.code + from, to - from, w, sizeof w)) {
                snprintf(why, cap, "refused: our macro at group %u: %s", from / 3, w);
                return 0;
            }
            continue;
        }
        for (uint32_t g = from; g + 3 <= to; g += 3) {
            vgt_mme_tu104_inst in;
            const char *r = NULL;
            vgt_mme_tu104_decode(im->p.code + g, &in);
            if (vgt_mme_tu104_check(&in, &r) != VGT_MME_OK) {
                snprintf(why, cap, "refused: driver macro group %u: %s", (g - from) / 3, r ? r : "illegal");
                return 0;
            }
        }
    }
    return 1;
}

/* ---- hardware -------------------------------------------------------------------------------------------- */
typedef struct hw {
    vgt_gpu *g;
    uint32_t slot, sem;
} hw;

/* Submits the stream's push buffer (+ a host release) on c, waits; 1 when it completed. *rc: the channel's
 * robust-channel error when it did not. */
static int hw_run(hw *h, vgt_gpu_chan *c, stream *s, uint32_t *rc, char *why, size_t cap)
{
    vgt_error err;
    if (s->refused[0]) {   /* never submitted: not a hardware error */
        *rc = 0;
        snprintf(why, cap, "%s", s->refused);
        return 0;
    }
    if (halted[0]) {
        *rc = 0;
        snprintf(why, cap, "not submitted: stopped after a channel error: %.200s", halted);
        return 0;
    }
    uint32_t value = 0xa9000000u + ++h->sem;
    vgt_pbw_host_release(&s->pb, sys(SEM_OFF), value, VGT_PBW_RELEASE_WFI);
    uint64_t va = sys(PB_OFF + (h->slot++ % PB_SLOTS) * PB_SLOT);
    *rc = 0;
    vgt_status st = vgt_pbw_check(&s->pb, &err);
    if (st == VGT_OK) st = vgt_gpu_write(h->g, va, s->pb.dw, s->pb.n * 4, &err);
    if (st != VGT_OK) {   /* nothing reached the GPU */
        snprintf(why, cap, "not submitted: %s: %.200s", vgt_status_name(st), err.msg);
        return 0;
    }
    st = vgt_gpu_submit_pb(c, va, s->pb.n, &err);
    if (st == VGT_OK) st = vgt_gpu_wait_sem32(c, sys(SEM_OFF), value, VGT_GPU_WAIT_EQ, WAIT_MS, &err);
    vgt_gpu_chan_state cs;
    vgt_gpu_chan_state_get(c, &cs);
    if (st == VGT_OK && !cs.error) return 1;
    if (st == VGT_OK) snprintf(err.msg, sizeof err.msg, "the semaphore was released but the channel reports an error");
    *rc = cs.error ? cs.error_code : 0;
    snprintf(why, cap, "%s: %.200s", vgt_status_name(st), err.msg);
    /* stop at once: an engine exception leaves the GPU unable to run Vulkan draws, so nothing more is submitted */
    snprintf(halted, sizeof halted, "%s (channel error %s, code %u)", why, cs.error ? "set" : "not set", *rc);
    printf("mme_agree: STOP: %s\n", halted);
    return 0;
}

static vgt_gpu_chan *hw_chan(hw *h, char *why, size_t cap)
{
    vgt_gpu_chan *c;
    vgt_error err;
    if (vgt_gpu_chan_create(h->g, NULL, &c, &err) != VGT_OK) {
        snprintf(why, cap, "channel: %.200s", err.msg);
        return NULL;
    }
    return c;
}

/* Every call of the stream ended cleanly in the simulator; else why. */
static int sim_clean(const stream *s, char *why, size_t cap)
{
    if (s->refused[0]) {
        snprintf(why, cap, "%s", s->refused);
        return 0;
    }
    if (s->st != VGT_OK) {
        snprintf(why, cap, "simulator feed: %.200s", s->err.msg);
        return 0;
    }
    for (uint32_t i = 0; i < s->ncalls; i++)
        if (s->calls[i].status != VGT_OK) {
            snprintf(why, cap, "simulator: call %u (macro %u) %s: %s", i, s->calls[i].macro,
                     vgt_mme_error_name(s->calls[i].error), s->calls[i].msg);
            return 0;
        }
    return 1;
}

/* What the last probe of the stream is predicted to write: the inline words the simulator emitted. */
static uint32_t predicted_words(const stream *s, uint32_t call, uint32_t *w, uint32_t cap)
{
    uint32_t n = 0;
    const vgt_mme_emit_list *l = &s->calls[call].emits;
    for (uint32_t i = 0; i < l->n && n < cap; i++)
        if (l->v[i].method == NVA140_LOAD_INLINE_DATA) w[n++] = l->v[i].value;
    return n;
}

/* ---- extra parameters ------------------------------------------------------------------------------------- */
#define EXTRA_MARK 40u   /* scratch registers the second macro writes */

static void build_guard(enc_prog *p, int by_branch)
{
    vgt_mme_tu104_inst in;
    if (by_branch) {   /* two data-RAM words made equal first ("DWRITE [#a], ZERO ; DWRITE [#b], ZERO", a driver form) */
        in = tu_nop();
        tu_alu(&in, 0, VGT_MME_TU104_DWRITE, Z, IMM, Z, 0x10);
        tu_alu(&in, 1, VGT_MME_TU104_DWRITE, Z, IMM, Z, 0x11);
        tu_add(p, &in);
    }
    in = tu_nop();   /* reads 4 parameters */
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 2, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 3, L1, Z, 0);
    tu_add(p, &in);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 4, L0, Z, 0);
    tu_alu(&in, 1, VGT_MME_TU104_ADD, 5, L1, Z, 0);
    tu_add(p, &in);
    if (by_branch) {   /* the driver's guard (hash a3f5fd61523563ca): two data-RAM words read, equal -> exit by a
                        * taken BEQ. The first version read ONE word twice in a group ("DREAD R0, [#0x10] ;
                        * DREAD R1, [#0x10]") and raised MME ILLEGAL_OPCODE on the H200 (2026-12-02); the
                        * driver always reads two different words, as this one now does. */
        in = tu_nop();
        tu_alu(&in, 0, VGT_MME_TU104_DREAD, 0, IMM, Z, 0x10);
        tu_alu(&in, 1, VGT_MME_TU104_DREAD, 1, IMM, Z, 0x11);
        tu_add(p, &in);
        in = tu_nop();
        tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, 1, 0, 0x8000u | 0x1000u);
        tu_add(p, &in);
        in = tu_nop();   /* never reached (the branch is taken); the driver follows an exit branch with such a group */
        tu_alu(&in, 0, VGT_MME_TU104_ADD, 6, IMM, Z, 0);
        tu_add(p, &in);
    }
    tu_end(p);
}

/* Stores its first three parameters in SCRATCH(EXTRA_MARK..+2): two in the group with end_next, the third in the
 * group after it (both driver forms). */
static void build_store3(enc_prog *p)
{
    vgt_mme_tu104_inst in = tu_nop();
    in.alu[0].imm = tu_mthd_imm(SCRATCH(EXTRA_MARK), 1);
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_LOAD0);
    tu_out(&in, 1, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD1);
    in.end_next = true;
    tu_add(p, &in);
    in = tu_nop();
    tu_out(&in, 0, VGT_MME_OUT_NONE, VGT_MME_OUT_LOAD0);
    tu_add(p, &in);
}

typedef struct verdict {
    const char *name;
    const char *result;   /* AGREE DISAGREE UNREADABLE SKIP ERROR, DRY (a dry run: would be submitted) */
    char detail[600];
    char cat[64];         /* SKIP: the reason's kind, for the summary */
} verdict;

static verdict rows[64];
static int nrows;

static verdict *row(const char *name)
{
    verdict *v = &rows[nrows < 63 ? nrows++ : 63];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->result = "ERROR";
    return v;
}

/* variant: 0 one push buffer; 1 guard exits by a taken branch; 2 second call in the next GPFIFO entry;
 * 3 the leftovers under their own header */
static void test_extra(hw *h, int variant)
{
    static const char *const names[4] = { "extra_same_pb", "extra_branch_exit", "extra_next_entry", "extra_split_hdr" };
    verdict *v = row(names[variant]);
    if (variant == 1 && !run_known_bad) {
        /* Its one run on the H200 (2026-12-02) raised MME ILLEGAL_OPCODE (Xid 13, ESR 0x404490=0x80000004): the
         * guard exiting by a taken BEQ (immediate 0x9000, the driver's own exit form) with 17 parameters left,
         * where the same guard exiting by end_next (extra_same_pb) ran cleanly and dropped them. NVIDIA's own
         * guard in vk_scene exits the same way without an error. The guard now reads two words as the driver's
         * does (build_guard); it has not run on hardware in that form, so it stays opt-in. */
        v->result = "SKIP";
        snprintf(v->detail, sizeof v->detail, "raised MME ILLEGAL_OPCODE on the H200 (2026-12-02); --run-known-bad runs it");
        return;
    }
    static image img;
    static enc_prog q;
    image_init(&img);
    memset(&q, 0, sizeof q);
    build_guard(&q, variant == 1);
    uint32_t at_g = image_add(&img, &q);
    memset(&q, 0, sizeof q);
    build_store3(&q);
    uint32_t at_s = image_add(&img, &q);
    const uint32_t marks[3] = { SCRATCH(EXTRA_MARK), SCRATCH(EXTRA_MARK + 1), SCRATCH(EXTRA_MARK + 2) };
    memset(&q, 0, sizeof q);
    build_probe(&q, marks, 3, 0);
    uint32_t at_p = image_add(&img, &q);
    uint32_t gp[21], own[3] = { 0xe0e0e0e0u, 0xe1e1e1e1u, 0xe2e2e2e2u };
    for (uint32_t i = 0; i < 21; i++) gp[i] = 0x08001000u + i;
    uint64_t dst = sys(OUT_OFF);
    const uint32_t pp[2] = { (uint32_t)(dst >> 32), (uint32_t)dst };
    static stream s1, s2;
    char why[300] = "";
    uint32_t rc = 0;
    if (!s_begin(&s1, VGT_GPU_CLASS_HOPPER_3D)) { snprintf(v->detail, sizeof v->detail, "tracker"); return; }
    s_upload(&s1, &img);
    s_bind(&s1, 0, at_g);
    s_bind(&s1, 1, at_s);
    s_bind(&s1, 2, at_p);
    for (uint32_t i = 0; i < 3; i++) s_method(&s1, marks[i], 0);
    s_call(&s1, 0, gp, 21, variant == 3);
    stream *tail = &s1;
    if (variant == 2) {   /* the second call in a GPFIFO entry of its own (the same state: one tracker) */
        tail = &s2;
        tail->cls = s1.cls;
    }
    if (tail == &s1) {
        s_call(&s1, 1, own, 3, 0);
        s_call(&s1, 2, pp, 2, 0);
    }
    s_end(&s1);
    int clean = sim_clean(&s1, why, sizeof why);
    uint32_t want[3] = { 0 }, nwant = 0;
    if (variant != 2) nwant = predicted_words(&s1, s1.ncalls - 1, want, 3);
    /* the tail stream of variant 2: the simulator sees both entries as one stream */
    if (variant == 2 && clean) {
        static stream sim;
        s_begin(&sim, VGT_GPU_CLASS_HOPPER_3D);
        s_upload(&sim, &img);
        s_bind(&sim, 0, at_g);
        s_bind(&sim, 1, at_s);
        s_bind(&sim, 2, at_p);
        for (uint32_t i = 0; i < 3; i++) s_method(&sim, marks[i], 0);
        s_call(&sim, 0, gp, 21, 0);
        s_call(&sim, 1, own, 3, 0);
        s_call(&sim, 2, pp, 2, 0);
        s_end(&sim);
        clean = sim_clean(&sim, why, sizeof why);
        nwant = predicted_words(&sim, sim.ncalls - 1, want, 3);
        vgt_pbw_init(&s2.pb, s2.dw, PB_SLOT / 4 - 16);
        vgt_pbw_set_object(&s2.pb, SUB_MME, VGT_GPU_CLASS_HOPPER_3D);
        vgt_pbw_one_inc(&s2.pb, SUB_MME, VGT_MME_M_CALL_MACRO0 + 8, own, 3);
        vgt_pbw_one_inc(&s2.pb, SUB_MME, VGT_MME_M_CALL_MACRO0 + 16, pp, 2);
    }
    if (!clean || nwant != 3) {
        v->result = "SKIP";
        snprintf(v->detail, sizeof v->detail, "not submitted: %s (%u predicted words)", why, nwant);
        return;
    }
    if (dry) {
        v->result = "DRY";
        snprintf(v->detail, sizeof v->detail, "simulator: 0x%08x 0x%08x 0x%08x", want[0], want[1], want[2]);
        return;
    }
    vgt_gpu_chan *c = hw_chan(h, why, sizeof why);
    if (!c) { snprintf(v->detail, sizeof v->detail, "%s", why); return; }
    vgt_error err;
    vgt_gpu_fill32(h->g, dst, 0xdeadbeefu, 3, &err);
    int ok = hw_run(h, c, &s1, &rc, why, sizeof why);
    if (ok && variant == 2) ok = hw_run(h, c, &s2, &rc, why, sizeof why);
    uint32_t got[3] = { 0 };
    vgt_gpu_read(h->g, dst, got, sizeof got, &err);
    vgt_gpu_chan_state cs;
    vgt_gpu_chan_state_get(c, &cs);
    vgt_gpu_chan_destroy(c);
    const char *what;
    if (!ok || cs.error)
        what = "ERROR (the channel reported an error: see the kernel log)";
    else if (!memcmp(got, own, sizeof own))
        what = "DISCARDED (the second call saw its own parameters)";
    else if (got[0] == gp[4] && got[1] == gp[5] && got[2] == gp[6])
        what = "CARRIED (the second call read the guard's leftovers)";
    else
        what = "OTHER";
    v->result = ok && !cs.error && !memcmp(got, want, sizeof want) ? "AGREE" : "DISAGREE";
    snprintf(v->detail, sizeof v->detail, "hardware: %s; read 0x%08x 0x%08x 0x%08x, simulator 0x%08x 0x%08x 0x%08x; "
             "channel error %s (rc %u)%s%s", what, got[0], got[1], got[2], want[0], want[1], want[2],
             cs.error ? "YES" : "none", cs.error ? cs.error_code : rc, ok ? "" : "; ", ok ? "" : why);
}

/* ---- bit 14 of a branch immediate ---------------------------------------------------------------------------- */
#define B14_MARK 48u

static void mark_group(enc_prog *p, uint32_t i, uint16_t value, int end_next)
{
    vgt_mme_tu104_inst in = tu_nop();
    in.alu[0].imm = tu_mthd_imm(SCRATCH(B14_MARK + i), 0);
    in.alu[1].imm = value;
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMM1);
    in.end_next = end_next;
    tu_add(p, &in);
}

/* kind 0: a taken forward branch over two marker groups (the call word 0: R0 == 0); 1: the same branch not taken
 * (the call word 0xb14); 2: a loop closed by a backward branch with end_next, taken while R0 != 3 (the driver's
 * forms: "BEQ R2, ZERO ?T -> loop ; end_next" with R2 = SEQ R0, #3). flag: bit 14 set. */
static void build_b14(enc_prog *p, int kind, int flag)
{
    uint16_t b14 = flag ? 0x4000u : 0;
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 0, L0, Z, 0);    /* R0 = the call word */
    tu_add(p, &in);
    if (kind < 2) {
        mark_group(p, 0, 1, 0);
        in = tu_nop();
        tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, 0, Z, (uint16_t)(0x8000u | b14 | 3u));
        tu_add(p, &in);
        mark_group(p, 1, 1, 0);   /* right after the branch */
        mark_group(p, 2, 1, 0);   /* skipped when taken */
        mark_group(p, 3, 1, 1);   /* the target; ends the macro */
        in = tu_nop();
        tu_add(p, &in);
        return;
    }
    in = tu_nop();                                     /* loop: R0 += 1 */
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 0, 0, IMM, 1);
    tu_add(p, &in);
    in = tu_nop();                                     /* SCRATCH(B14_MARK+4) = R0 */
    tu_alu(&in, 0, VGT_MME_TU104_ADD, Z, 0, Z, tu_mthd_imm(SCRATCH(B14_MARK + 4), 0));
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_ALU0);
    tu_add(p, &in);
    in = tu_nop();                                     /* R2 = (R0 == 3) */
    tu_alu(&in, 0, VGT_MME_TU104_SEQ, 2, 0, VGT_MME_TU104_IMM32, 0);
    in.alu[1].imm = 3;
    tu_add(p, &in);
    in = tu_nop();                                     /* BEQ R2, ZERO ?T -> loop (-3), end_next */
    tu_alu(&in, 0, VGT_MME_TU104_BEQ, Z, 2, Z, (uint16_t)(0x8000u | b14 | (0x2000u - 3u)));
    in.end_next = true;
    tu_add(p, &in);
    in = tu_nop();                                     /* after the loop: the driver's no-op with end_next */
    in.end_next = true;
    tu_add(p, &in);
    in = tu_nop();                                     /* SCRATCH(B14_MARK+5) = 7: runs only if that end_next
                                                        * did not end the macro */
    in.alu[0].imm = (uint16_t)(tu_mthd_imm(SCRATCH(B14_MARK + 5), 0) | 0x7000u);
    tu_out(&in, 0, VGT_MME_OUT_IMM0, VGT_MME_OUT_IMMHIGH0);
    tu_add(p, &in);
    tu_end(p);
}

static void test_b14(hw *h, int kind, int flag)
{
    static const char *const names[3][2] = { { "b14_fwd_ctl", "b14_fwd" }, { "b14_nottaken_ctl", "b14_nottaken" },
                                             { "b14_loop_ctl", "b14_loop" } };
    verdict *v = row(names[kind][flag]);
    static image img;
    static enc_prog q;
    image_init(&img);
    memset(&q, 0, sizeof q);
    build_b14(&q, kind, flag);
    uint32_t at_m = image_add(&img, &q);
    uint32_t marks[7];
    for (uint32_t i = 0; i < 7; i++) marks[i] = SCRATCH(B14_MARK + i);
    memset(&q, 0, sizeof q);
    build_probe(&q, marks, 7, 0);
    uint32_t at_p = image_add(&img, &q);
    uint64_t dst = sys(OUT_OFF + OUT_SLOT);
    const uint32_t pp[2] = { (uint32_t)(dst >> 32), (uint32_t)dst }, word = kind == 1 ? 0xb14 : 0;
    static stream s;
    char why[300] = "";
    if (!s_begin(&s, VGT_GPU_CLASS_HOPPER_3D)) return;
    s_upload(&s, &img);
    s_bind(&s, 0, at_m);
    s_bind(&s, 1, at_p);
    for (uint32_t i = 0; i < 7; i++) s_method(&s, marks[i], 0);
    s_call(&s, 0, &word, 1, 0);
    s_call(&s, 1, pp, 2, 0);
    s_end(&s);
    uint32_t want[7] = { 0 };
    if (!sim_clean(&s, why, sizeof why) || predicted_words(&s, s.ncalls - 1, want, 7) != 7) {
        v->result = "SKIP";
        snprintf(v->detail, sizeof v->detail, "not submitted: %s", why);
        return;
    }
    uint32_t rc, got[7] = { 0 };
    vgt_error err;
    if (dry) {
        v->result = "DRY";
        snprintf(v->detail, sizeof v->detail, "simulator markers 0..6: %x,%x,%x,%x,%x,%x,%x", want[0], want[1], want[2],
                 want[3], want[4], want[5], want[6]);
        return;
    }
    vgt_gpu_chan *c = hw_chan(h, why, sizeof why);
    if (!c) { snprintf(v->detail, sizeof v->detail, "%s", why); return; }
    vgt_gpu_fill32(h->g, dst, 0xdeadbeefu, 7, &err);
    int ok = hw_run(h, c, &s, &rc, why, sizeof why);
    vgt_gpu_read(h->g, dst, got, sizeof got, &err);
    vgt_gpu_chan_destroy(c);
    char hs[120], ss[120];
    int n1 = 0, n2 = 0;
    for (int i = 0; i < 7; i++) {
        n1 += snprintf(hs + n1, sizeof hs - n1, "%s%x", i ? "," : "", got[i]);
        n2 += snprintf(ss + n2, sizeof ss - n2, "%s%x", i ? "," : "", want[i]);
    }
    v->result = ok && !memcmp(got, want, sizeof want) ? "AGREE" : "DISAGREE";
    snprintf(v->detail, sizeof v->detail, "markers 0..6 hardware [%s] simulator [%s]%s%s (%s)", hs, ss,
             ok ? "" : "; ", ok ? "" : why,
             kind == 0 ? "m1 set: the group after a taken branch ran (a delay slot); m2 set: not taken"
             : kind == 1 ? "all of m0..m3 set: not taken (R0 != 0)"
                         : "m4 = iterations (3: a taken branch ignores its end_next; 1: it stops after the target); "
                           "m5 7: the group after the end_next that follows the loop ran");
}

/* ---- driver macros from the corpus ---------------------------------------------------------------------------- */
typedef struct cap_call {
    uint32_t np, ne;
    uint32_t *p, *e;   /* params; emits as method, value pairs */
} cap_call;

typedef struct dmacro {
    char hash[24], trace[64];
    uint32_t cls, n;
    uint32_t *code;
    cap_call calls[8];
    uint32_t ncalls;
} dmacro;

static dmacro *macros;
static uint32_t nmacros;

static uint32_t *read_hex(char **s, uint32_t n)
{
    uint32_t *v = calloc(n ? n : 1, 4);
    for (uint32_t i = 0; v && i < n; i++) v[i] = (uint32_t)strtoul(*s, s, 16);
    return v;
}

static int load_list(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    static char line[1 << 20];
    uint32_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        if (!strncmp(line, "macro ", 6)) {
            if (nmacros == cap && !(macros = realloc(macros, (cap = cap ? 2 * cap : 64) * sizeof *macros))) return 0;
            dmacro *m = &macros[nmacros++];
            memset(m, 0, sizeof *m);
            int off = 0;
            if (sscanf(line, "macro %23s %63s %x %x %n", m->hash, m->trace, &m->cls, &m->n, &off) != 4) return 0;
            s = line + off;
            m->code = read_hex(&s, m->n);
        } else if (!strncmp(line, "call ", 5) && nmacros && macros[nmacros - 1].ncalls < 8) {
            dmacro *m = &macros[nmacros - 1];
            cap_call *k = &m->calls[m->ncalls++];
            s = line + 5;
            strtoul(s, &s, 16);   /* submission */
            k->np = (uint32_t)strtoul(s, &s, 16);
            k->p = read_hex(&s, k->np);
            k->ne = (uint32_t)strtoul(s, &s, 16);
            k->e = read_hex(&s, 2 * k->ne);
        }
    }
    fclose(f);
    return 1;
}

/* Methods a driver macro may emit here: state only. Drawing, clearing, launching, uploads, constant-buffer loads and
 * binds, reports and semaphores, firmware methods, the MME's own DMA and shadow control are refused. */
static const char *refused_method(uint32_t cls, uint32_t m)
{
    if (m >= VGT_MME_M_SET_MEM_ADDRESS_A && m <= VGT_MME_M_SET_DATA_FIFO_CONFIG) return "MME DMA";
    if (m >= VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER && m <= VGT_MME_M_SET_SHADOW_RAM_CONTROL) return "MME control";
    if (m >= VGT_MME_M_SET_SHADOW_SCRATCH0 && m < VGT_MME_M_CALL_MACRO0) return NULL;
    uint32_t c = vgt_mme_emit_category(cls, m);
    if (c & (VGT_MME_EMIT_SET | VGT_MME_EMIT_SYNC)) return NULL;
    return c & VGT_MME_EMIT_DRAW ? "draw" : c & VGT_MME_EMIT_CLEAR ? "clear" : c & VGT_MME_EMIT_LAUNCH ? "launch"
         : c & VGT_MME_EMIT_CB_LOAD ? "constant-buffer load" : c & VGT_MME_EMIT_CB_BIND ? "constant-buffer bind"
         : c & VGT_MME_EMIT_INLINE ? "inline upload" : c & VGT_MME_EMIT_REPORT ? "report/semaphore"
         : c & VGT_MME_EMIT_FALCON ? "firmware method" : c & VGT_MME_EMIT_UNKNOWN ? "unknown method" : "action method";
}

/* STATE reads answered from a table (the hardware's shadow values), recording what was asked. */
typedef struct state_tab {
    uint32_t m[MAX_PROBE], v[MAX_PROBE], n;
    uint32_t asked[MAX_PROBE], nasked;
    int overflow;
} state_tab;

static uint32_t tab_state(void *user, uint32_t method)
{
    state_tab *t = user;
    uint32_t i;
    for (i = 0; i < t->nasked && t->asked[i] != method; i++) {}
    if (i == t->nasked) {
        if (t->nasked < MAX_PROBE) t->asked[t->nasked++] = method;
        else t->overflow = 1;
    }
    for (i = 0; i < t->n; i++)
        if (t->m[i] == method) return t->v[i];
    return 0;
}

/* The macro with params on a machine with a zeroed data RAM, STATE from tab; the machine stays in sim_mach. */
typedef struct sim_user {
    vgt_mme_emit_list *emits;
    state_tab *tab;
} sim_user;

static vgt_mme_machine sim_mach;

static vgt_status su_emit(void *user, uint32_t m, uint32_t v) { return vgt_mme_emit_list_push(((sim_user *)user)->emits, m, v); }
static uint32_t su_state(void *user, uint32_t m) { return tab_state(((sim_user *)user)->tab, m); }

static vgt_status sim_macro(const dmacro *d, const cap_call *k, state_tab *tab, vgt_mme_emit_list *emits,
                            vgt_mme_result *res, vgt_error *err)
{
    memset(&sim_mach, 0, sizeof sim_mach);
    vgt_mme_emit_list_clear(emits);
    sim_user u = { emits, tab };
    vgt_mme_sim_io io = { .emit = su_emit, .state = su_state, .user = &u };
    return vgt_mme_sim_run(NULL, VGT_MME_TU104, d->code, d->n, 0, k->p, k->np, &io, &sim_mach, res, err);
}

/* The data-RAM words the macro's DREADs name (their address operand a constant: ZERO or an immediate), sorted and
 * distinct; 0 when some DREAD computes its address (a register or a parameter): then the whole RAM is zeroed. */
static int dread_words(const dmacro *d, uint32_t *w, uint32_t *n)
{
    *n = 0;
    for (uint32_t g = 0; g + 3 <= d->n; g += 3) {
        vgt_mme_tu104_inst in;
        vgt_mme_tu104_decode(d->code + g, &in);
        for (int i = 0; i < 2; i++) {
            if (in.alu[i].op != VGT_MME_TU104_DREAD) continue;
            uint32_t x;
            switch (in.alu[i].src[0]) {
            case Z: x = 0; break;
            case IMM: x = (uint32_t)(int32_t)(int16_t)in.alu[i].imm; break;
            case VGT_MME_TU104_IMMPAIR: x = (uint32_t)(int32_t)(int16_t)in.alu[1 - i].imm; break;
            case VGT_MME_TU104_IMM32: x = (uint32_t)in.alu[0].imm << 16 | in.alu[1].imm; break;
            default: return 0;
            }
            if (x >= VGT_MME_DATA_RAM_WORDS) continue;   /* the simulator's gate refuses it if it runs */
            uint32_t j;
            for (j = 0; j < *n && w[j] != x; j++) {}
            if (j == *n) w[(*n)++] = x;
        }
    }
    return 1;
}

/* The stream's end: what the gate refused or the simulator failed is not submitted (why says so); a dry run stops
 * here; otherwise the stream runs on c. 1 when it ran (or would, dry). */
static int s_submit(hw *h, vgt_gpu_chan *c, stream *s, char *why, size_t cap)
{
    s_end(s);
    if (s->refused[0]) { snprintf(why, cap, "%s", s->refused); return 0; }
    if (s->st != VGT_OK) { snprintf(why, cap, "simulator feed: %.200s", s->err.msg); return 0; }
    for (uint32_t i = 0; i < s->ncalls; i++)
        if (s->calls[i].status != VGT_OK && s->calls[i].macro != 0) {
            snprintf(why, cap, "simulator: macro %u %s", s->calls[i].macro, vgt_mme_error_name(s->calls[i].error));
            return 0;
        }
    if (dry) return 1;
    uint32_t rc;
    return hw_run(h, c, s, &rc, why, cap);
}

/* One submission on c. d == NULL: probe the shadow values pm into OUT slot 2. Else: zero the data-RAM words zw
 * with the driver's DWRITE macro (the whole RAM when nzw is ~0u), probe pm into slot 2 and data-RAM words dm into
 * slot 4, call macro d with k, probe again into slots 3 and 5. Returns 1 when the hardware completed it (in dry runs:
 * when it would be submitted); our macros must end cleanly in the simulator, which predicted d with the hardware's
 * shadow values separately (sim_macro). */
static int run_dm(hw *h, vgt_gpu_chan *c, const dmacro *d, const cap_call *k, const uint32_t *zw, uint32_t nzw,
                  const uint32_t *pm, uint32_t npm, const uint32_t *dm, uint32_t ndm, char *why, size_t cap)
{
    static image im;
    static enc_prog q;
    static stream s;
    image_init(&im);
    uint32_t at_d = 0, at_z = 0, at_p, at_q = 0;
    if (d) {
        at_d = image_put(&im, d->code, d->n, 1);
        memset(&q, 0, sizeof q);
        build_dwrite(&q);
        at_z = image_add(&im, &q);
    }
    memset(&q, 0, sizeof q);
    build_probe(&q, pm, npm, 0);
    at_p = image_add(&im, &q);
    if (ndm) {
        memset(&q, 0, sizeof q);
        build_probe(&q, dm, ndm, 1);
        at_q = image_add(&im, &q);
    }
    if (!s_begin(&s, d ? d->cls : VGT_GPU_CLASS_HOPPER_3D)) return 0;
    s_upload(&s, &im);
    s_bind(&s, 2, at_p);
    if (d) {
        s_bind(&s, 0, at_d);
        s_bind(&s, 1, at_z);
        if (ndm) s_bind(&s, 3, at_q);
        for (uint32_t i = 0; i < (nzw == ~0u ? VGT_MME_DATA_RAM_WORDS : nzw); i++) {
            const uint32_t zp[2] = { nzw == ~0u ? i : zw[i], 0 };
            s_call(&s, 1, zp, 2, 0);
        }
    }
    uint64_t o[6];
    uint32_t op[6][2];
    for (int i = 0; i < 6; i++) {
        o[i] = sys(OUT_OFF + (uint32_t)i * OUT_SLOT);
        op[i][0] = (uint32_t)(o[i] >> 32);
        op[i][1] = (uint32_t)o[i];
    }
    if (npm) s_call(&s, 2, op[2], 2, 0);
    if (d) {
        if (ndm) s_call(&s, 3, op[4], 2, 0);
        s_call(&s, 0, k->p, k->np, 0);
        if (npm) s_call(&s, 2, op[3], 2, 0);
        if (ndm) s_call(&s, 3, op[5], 2, 0);
    }
    return s_submit(h, c, &s, why, cap);
}

/* The shadow check of methods a macro run left unchanged: each written directly (the value the simulator says the
 * macro sent, one the driver sent in that call), then read back with the probe into OUT slot 3. A method that reads
 * back what was written keeps a shadow, so the macro did not send it; one that does not keeps none, and what the
 * macro sent there cannot be read back. */
static int run_direct(hw *h, vgt_gpu_chan *c, uint32_t cls, const uint32_t *pm, const uint32_t *val, uint32_t n,
                      char *why, size_t cap)
{
    static image im;
    static enc_prog q;
    static stream s;
    image_init(&im);
    memset(&q, 0, sizeof q);
    build_probe(&q, pm, n, 0);
    uint32_t at_p = image_add(&im, &q);
    if (!s_begin(&s, cls)) return 0;
    s_upload(&s, &im);
    s_bind(&s, 2, at_p);
    for (uint32_t i = 0; i < n; i++) s_method(&s, pm[i], val[i]);
    uint64_t o = sys(OUT_OFF + 3 * OUT_SLOT);
    const uint32_t op[2] = { (uint32_t)(o >> 32), (uint32_t)o };
    s_call(&s, 2, op, 2, 0);
    return s_submit(h, c, &s, why, cap);
}

#define MAX_DRAM 256u   /* data-RAM words one run compares */

/* Methods a macro run left unchanged, written directly and read back (run_direct): where none reads back what was
 * written, they keep no shadow and the row says the macro's effect on them cannot be read back (UNREADABLE);
 * where one does, the macro did not send it and the row stays DISAGREE. */
static void shadow_check(hw *h, uint32_t cls, const uint32_t *um, const uint32_t *uv, uint32_t nu, verdict *v, int *n)
{
    char why[300] = "";
    static uint32_t got[MAX_PROBE];
    vgt_gpu_chan *c = hw_chan(h, why, sizeof why);
    if (!c) { *n += snprintf(v->detail + *n, sizeof v->detail - *n, "; shadow check: %s", why); return; }
    vgt_error err;
    vgt_gpu_fill32(h->g, sys(OUT_OFF + 3 * OUT_SLOT), 0xdeadbeefu, nu, &err);
    int ran = run_direct(h, c, cls, um, uv, nu, why, sizeof why);
    vgt_gpu_read(h->g, sys(OUT_OFF + 3 * OUT_SLOT), got, 4 * nu, &err);
    vgt_gpu_chan_destroy(c);
    if (!ran) { *n += snprintf(v->detail + *n, sizeof v->detail - *n, "; shadow check not run: %.150s", why); return; }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < nu; i++) {
        kept += got[i] == uv[i];
        *n += snprintf(v->detail + *n, sizeof v->detail - *n, "; 0x%04x written directly as 0x%x reads back 0x%x (%s)",
                       um[i], uv[i], got[i], got[i] == uv[i] ? "shadowed: the macro did not send it" : "no shadow");
    }
    if (!kept) {
        v->result = "UNREADABLE";
        snprintf(v->cat, sizeof v->cat, "sends only to methods that keep no shadow");
    }
}

static void test_macro(hw *h, const dmacro *d, double deadline)
{
    verdict *v = row("macro");
    char why[300] = "";
    int n = 0;
#define DETAIL(...) (n += snprintf(v->detail + n, sizeof v->detail - n, __VA_ARGS__))
#define CAT(...) snprintf(v->cat, sizeof v->cat, __VA_ARGS__)
    char cat[64] = "";
    DETAIL("%s %-16s %4u insts: ", d->hash, d->trace, d->n / 3);
    v->result = "SKIP";
    if (d->cls != VGT_GPU_CLASS_HOPPER_3D && d->cls != VGT_GPU_CLASS_HOPPER_COMPUTE) {
        CAT("class has no object here");
        DETAIL("class 0x%04x has no object here", d->cls);
        return;
    }
    if (!d->ncalls) {
        CAT("never called cleanly in the corpus");
        DETAIL("never called cleanly in the corpus: no captured parameters");
        return;
    }
    if (halted[0]) {
        CAT("stopped after a channel error");
        DETAIL("not run: stopped after a channel error");
        return;
    }
    if (now_s() > deadline) {
        CAT("time budget spent");
        DETAIL("time budget spent");
        return;
    }
    if (safe) {
        CAT("--safe");
        DETAIL("--safe: driver macros not run");
        return;
    }
    /* the MME guard over the whole body, reached or not */
    for (uint32_t g = 0; g + 3 <= d->n; g += 3) {
        vgt_mme_tu104_inst in;
        const char *r = NULL;
        vgt_mme_tu104_decode(d->code + g, &in);
        if (vgt_mme_tu104_check(&in, &r) != VGT_MME_OK) {
            CAT("an illegal group");
            DETAIL("group %u is illegal (%s): not submitted", g / 3, r ? r : "?");
            return;
        }
    }
    static uint32_t zw[VGT_MME_DATA_RAM_WORDS];
    uint32_t nzw;
    if (!dread_words(d, zw, &nzw)) nzw = ~0u;
    static state_tab tab;
    static vgt_mme_emit_list emits;
    vgt_mme_result res;
    vgt_error err;
    const char *skip = NULL;
    char sk[300] = "";
    for (uint32_t ci = 0; ci < d->ncalls; ci++) {
        const cap_call *k = &d->calls[ci];
        memset(&tab, 0, sizeof tab);
        vgt_gpu_chan *c = dry ? NULL : hw_chan(h, why, sizeof why);
        if (!c && !dry) { v->result = "ERROR"; DETAIL("%s", why); return; }
        /* STATE reads: ask the simulator which methods it reads, fetch them from the hardware, until stable */
        int ok = 1;
        for (int round = 0; round < 4 && ok; round++) {
            uint32_t before = tab.nasked;
            vgt_status st = sim_macro(d, k, &tab, &emits, &res, &err);
            if (st != VGT_OK) {
                snprintf(cat, sizeof cat, "simulator: %s", vgt_mme_error_name(res.error));
                snprintf(sk, sizeof sk, "simulator: %s at %u: %.120s", vgt_mme_error_name(res.error), res.pc, err.msg);
                ok = 0;
                break;
            }
            if (tab.overflow) { snprintf(cat, sizeof cat, "reads more shadow values than a probe fetches"); snprintf(sk, sizeof sk, "reads more than %u shadow values", MAX_PROBE); ok = 0; break; }
            if (round && tab.nasked == before) break;
            if (!tab.nasked) break;
            if (!run_dm(h, c, NULL, NULL, NULL, 0, tab.asked, tab.nasked, NULL, 0, why, sizeof why)) {
                snprintf(cat, sizeof cat, "shadow read failed");
                snprintf(sk, sizeof sk, "shadow read failed: %.150s", why);
                ok = 0;
                break;
            }
            if (dry) break;   /* no hardware: the shadow state stays zero */
            tab.n = tab.nasked;
            memcpy(tab.m, tab.asked, 4 * tab.n);
            vgt_gpu_read(h->g, sys(OUT_OFF + 2 * OUT_SLOT), tab.v, 4 * tab.n, &err);
        }
        if (ok) {   /* the prediction with the hardware's shadow values */
            vgt_status st = sim_macro(d, k, &tab, &emits, &res, &err);
            if (st != VGT_OK) {
                snprintf(cat, sizeof cat, "simulator: %s", vgt_mme_error_name(res.error));
                snprintf(sk, sizeof sk, "simulator: %s at %u", vgt_mme_error_name(res.error), res.pc);
                ok = 0;
            }
        }
        /* the gate: state methods only, and each value one the driver sent in that call (or a scratch value) */
        static uint32_t pm[MAX_PROBE], last[MAX_PROBE], dm[MAX_DRAM], dlast[MAX_DRAM];
        uint32_t npm = 0, ndm = 0;
        for (uint32_t i = 0; ok && i < emits.n; i++) {
            uint32_t m = emits.v[i].method, val = emits.v[i].value;
            const char *r = refused_method(d->cls, m);
            if (r) {
                snprintf(cat, sizeof cat, "emits %s", r);
                snprintf(sk, sizeof sk, "emits %s (method 0x%04x)", r, m);
                ok = 0;
                break;
            }
            if (vgt_mme_emit_category(d->cls, m) & VGT_MME_EMIT_SYNC) continue;
            int sent = m >= VGT_MME_M_SET_SHADOW_SCRATCH0 && m < VGT_MME_M_CALL_MACRO0;
            for (uint32_t e = 0; !sent && e < k->ne; e++) sent = k->e[2 * e] == m && k->e[2 * e + 1] == val;
            if (!sent) {
                snprintf(cat, sizeof cat, "would send a value the driver did not send");
                snprintf(sk, sizeof sk, "with this channel's shadow state it would send 0x%x to 0x%04x, a value the "
                         "driver did not send in that call", val, m);
                ok = 0;
                break;
            }
            uint32_t j;
            for (j = 0; j < npm && pm[j] != m; j++) {}
            if (j == npm && npm < MAX_PROBE) pm[npm++] = m;
            last[j] = val;
        }
        /* its data-RAM writes: the words the simulated run left nonzero (the RAM starts zeroed where it reads) */
        for (uint32_t w = 0; ok && w < VGT_MME_DATA_RAM_WORDS && ndm < MAX_DRAM; w++)
            if (sim_mach.data_ram[w]) {
                dm[ndm] = w;
                dlast[ndm++] = sim_mach.data_ram[w];
            }
        if (ok && !npm && !ndm) {
            snprintf(cat, sizeof cat, "no effect the probes can read back");
            snprintf(sk, sizeof sk, "no effect the probes can read back: with these parameters it emits no state "
                     "method (%u emits, synchronisation only) and leaves every data-RAM word 0", emits.n);
            ok = 0;
        }
        if (!ok) {
            if (c) vgt_gpu_chan_destroy(c);
            skip = sk;
            continue;   /* the next captured call may pass */
        }
        /* run: zero the data RAM where it reads, probe before, the macro, probe after */
        static uint32_t before[MAX_PROBE], after[MAX_PROBE], dbefore[MAX_DRAM], dafter[MAX_DRAM];
        if (!dry) {
            vgt_gpu_fill32(h->g, sys(OUT_OFF + 3 * OUT_SLOT), 0xdeadbeefu, npm ? npm : 1, &err);
            vgt_gpu_fill32(h->g, sys(OUT_OFF + 5 * OUT_SLOT), 0xdeadbeefu, ndm ? ndm : 1, &err);
        }
        int ran = run_dm(h, c, d, k, zw, nzw, pm, npm, dm, ndm, why, sizeof why);
        if (dry) {
            if (!ran) { v->result = "SKIP"; CAT("not submitted (our gate)"); DETAIL("call %u: not submitted: %s", ci, why); return; }
            v->result = "DRY";
            DETAIL("call %u (%u params, %u STATE reads): would zero %s%u data-RAM words, compare %u methods and %u "
                   "data-RAM words", ci, k->np, tab.nasked, nzw == ~0u ? "all " : "",
                   nzw == ~0u ? VGT_MME_DATA_RAM_WORDS : nzw, npm, ndm);
            return;
        }
        vgt_gpu_read(h->g, sys(OUT_OFF + 2 * OUT_SLOT), before, 4 * npm, &err);
        vgt_gpu_read(h->g, sys(OUT_OFF + 3 * OUT_SLOT), after, 4 * npm, &err);
        vgt_gpu_read(h->g, sys(OUT_OFF + 4 * OUT_SLOT), dbefore, 4 * ndm, &err);
        vgt_gpu_read(h->g, sys(OUT_OFF + 5 * OUT_SLOT), dafter, 4 * ndm, &err);
        vgt_gpu_chan_state cs;
        vgt_gpu_chan_state_get(c, &cs);
        vgt_gpu_chan_destroy(c);
        if (!ran) {
            v->result = halted[0] ? "ERROR" : "SKIP";
            CAT("not submitted (our gate)");
            DETAIL("call %u: %s: %.200s (channel error %u)", ci, halted[0] ? "hardware" : "not submitted", why,
                   cs.error ? cs.error_code : 0);
            return;
        }
        uint32_t bad = 0, unchanged = 0, dbad = 0, moved = 0;
        static uint32_t um[MAX_PROBE], uv[MAX_PROBE];
        for (uint32_t j = 0; j < npm; j++) {
            moved += after[j] == last[j] && after[j] != before[j];
            if (after[j] == last[j]) continue;
            bad++;
            if (after[j] == before[j]) um[unchanged] = pm[j], uv[unchanged++] = last[j];
            if (bad <= 3) DETAIL("0x%04x sim 0x%x hw 0x%x (before 0x%x); ", pm[j], last[j], after[j], before[j]);
        }
        for (uint32_t j = 0; j < ndm; j++) {
            moved += dafter[j] == dlast[j] && dafter[j] != dbefore[j];
            if (dafter[j] != dlast[j] && ++dbad <= 3)
                DETAIL("data[0x%x] sim 0x%x hw 0x%x (before 0x%x); ", dm[j], dlast[j], dafter[j], dbefore[j]);
        }
        v->result = bad + dbad ? "DISAGREE" : "AGREE";
        DETAIL("call %u (%u params, %u STATE reads from the hardware): %u methods and %u data-RAM words compared, "
               "%u differ", ci, k->np, tab.n, npm, ndm, bad + dbad);
        /* every difference a method the run left as it was, while others changed as simulated (the macro ran
         * the simulated path): do those methods keep a shadow at all? */
        if (bad && unchanged == bad && !dbad && moved) shadow_check(h, d->cls, um, uv, unchanged, v, &n);
        return;
    }
    v->result = "SKIP";
    CAT("%s", cat[0] ? cat : "no call passed");
    DETAIL("not run: %s", skip ? skip : "no call passed");
#undef DETAIL
#undef CAT
}

/* ---- the tool's own macros: only the driver's forms ------------------------------------------------------------ */
typedef struct tool_macro {
    const char *name;
    void (*build)(enc_prog *p, int arg);
    int arg;
} tool_macro;

static void tm_probe(enc_prog *p, int dram)
{
    uint32_t m[3];
    for (uint32_t i = 0; i < 3; i++) m[i] = dram ? 0x10 + i : SCRATCH(B14_MARK + i);
    build_probe(p, m, 3, dram);
}
static void tm_dwrite(enc_prog *p, int arg) { (void)arg; build_dwrite(p); }
static void tm_guard(enc_prog *p, int by_branch) { build_guard(p, by_branch); }
static void tm_store3(enc_prog *p, int arg) { (void)arg; build_store3(p); }
static void tm_b14(enc_prog *p, int kf) { build_b14(p, kf >> 1, kf & 1); }

static const tool_macro tool_macros[] = {
    { "probe_shadow", tm_probe, 0 }, { "probe_dataram", tm_probe, 1 }, { "dwrite", tm_dwrite, 0 }, { "guard_end", tm_guard, 0 }, { "guard_branch", tm_guard, 1 },
    { "store3", tm_store3, 0 }, { "b14_fwd_ctl", tm_b14, 0 }, { "b14_fwd", tm_b14, 1 }, { "b14_nottaken_ctl", tm_b14, 2 },
    { "b14_nottaken", tm_b14, 3 }, { "b14_loop_ctl", tm_b14, 4 }, { "b14_loop", tm_b14, 5 },
};

/* Every macro of ours against the driver's forms; prints one line each; returns how many fail. */
static int check_tool_macros(void)
{
    static enc_prog q;
    int bad = 0;
    for (size_t i = 0; i < sizeof tool_macros / sizeof *tool_macros; i++) {
        char why[300];
        memset(&q, 0, sizeof q);
        tool_macros[i].build(&q, tool_macros[i].arg);
        int ok = mme_forms_check_macro(&forms, q.code, q.n, why, sizeof why);
        const char *same = NULL;
        for (uint32_t j = 0; j < nmacros && !same; j++)
            if (macros[j].n == q.n && !memcmp(macros[j].code, q.code, 4 * q.n)) same = macros[j].hash;
        printf("our macro %-18s %3u groups: %s%s%s\n", tool_macros[i].name, q.n / 3, ok ? "driver forms only" : why,
               same ? "; the very body of driver macro " : "", same ? same : "");
        bad += !ok;
    }
    return bad;
}

/* Stage 0: one submission holding only the zeroing and probe macros, before anything else. SCRATCH(S0_MARK..+2) set
 * from the push buffer, data-RAM words 0x10..0x12 written with the DWRITE macro (0x10 and 0x12 with a pattern, then
 * 0x12 zeroed again), both probes read them back. Clean: the semaphore came, the channel reports no error and the
 * words read are the simulator's. */
#define S0_MARK 56u
static int stage0(hw *h)
{
    verdict *v = row("stage0_zero_probe");
    static image im;
    static enc_prog q;
    static stream s;
    image_init(&im);
    memset(&q, 0, sizeof q);
    build_dwrite(&q);
    uint32_t at_z = image_add(&im, &q);
    const uint32_t marks[3] = { SCRATCH(S0_MARK), SCRATCH(S0_MARK + 1), SCRATCH(S0_MARK + 2) };
    const uint32_t words[3] = { 0x10, 0x11, 0x12 };
    memset(&q, 0, sizeof q);
    build_probe(&q, marks, 3, 0);
    uint32_t at_p = image_add(&im, &q);
    memset(&q, 0, sizeof q);
    build_probe(&q, words, 3, 1);
    uint32_t at_q = image_add(&im, &q);
    uint64_t d0 = sys(OUT_OFF), d1 = sys(OUT_OFF + OUT_SLOT);
    const uint32_t p0[2] = { (uint32_t)(d0 >> 32), (uint32_t)d0 }, p1[2] = { (uint32_t)(d1 >> 32), (uint32_t)d1 };
    const uint32_t w0[2] = { 0x10, 0x5a5a0010u }, w1[2] = { 0x11, 0 }, w2[2] = { 0x12, 0xa5a50012u }, w3[2] = { 0x12, 0 };
    char why[300] = "";
    if (!s_begin(&s, VGT_GPU_CLASS_HOPPER_3D)) return 0;
    s_upload(&s, &im);
    s_bind(&s, 0, at_z);
    s_bind(&s, 1, at_p);
    s_bind(&s, 2, at_q);
    for (uint32_t i = 0; i < 3; i++) s_method(&s, marks[i], 0x50c0u + i);
    s_call(&s, 0, w0, 2, 0);
    s_call(&s, 0, w1, 2, 0);
    s_call(&s, 0, w2, 2, 0);
    s_call(&s, 0, w3, 2, 0);
    s_call(&s, 1, p0, 2, 0);
    s_call(&s, 2, p1, 2, 0);
    s_end(&s);
    uint32_t want[6] = { 0 };
    if (!sim_clean(&s, why, sizeof why) || predicted_words(&s, s.ncalls - 2, want, 3) != 3 ||
        predicted_words(&s, s.ncalls - 1, want + 3, 3) != 3) {
        v->result = "SKIP";
        snprintf(v->detail, sizeof v->detail, "not submitted: %s", why[0] ? why : "the simulator predicts no probe words");
        snprintf(halted, sizeof halted, "stage 0 not submitted: %.300s", why);
        return 0;
    }
    if (dry) {
        v->result = "DRY";
        snprintf(v->detail, sizeof v->detail, "simulator: scratch %x,%x,%x; data RAM 0x10..0x12 %x,%x,%x", want[0],
                 want[1], want[2], want[3], want[4], want[5]);
        return 1;
    }
    vgt_gpu_chan *c = hw_chan(h, why, sizeof why);
    if (!c) {
        snprintf(v->detail, sizeof v->detail, "%s", why);
        snprintf(halted, sizeof halted, "stage 0: %.300s", why);
        return 0;
    }
    vgt_error err;
    uint32_t rc, got[6] = { 0 };
    vgt_gpu_fill32(h->g, d0, 0xdeadbeefu, 3, &err);
    vgt_gpu_fill32(h->g, d1, 0xdeadbeefu, 3, &err);
    int ok = hw_run(h, c, &s, &rc, why, sizeof why);
    vgt_gpu_read(h->g, d0, got, 12, &err);
    vgt_gpu_read(h->g, d1, got + 3, 12, &err);
    vgt_gpu_chan_destroy(c);
    int same = !memcmp(got, want, sizeof want);
    v->result = ok && same ? "AGREE" : ok ? "DISAGREE" : "ERROR";
    snprintf(v->detail, sizeof v->detail, "%s; read %x,%x,%x; %x,%x,%x, simulator %x,%x,%x; %x,%x,%x",
             ok ? "semaphore released, no channel error" : why, got[0], got[1], got[2], got[3], got[4], got[5], want[0],
             want[1], want[2], want[3], want[4], want[5]);
    if (ok && !same) snprintf(halted, sizeof halted, "stage 0 read back other words than the simulator's");
    return ok && same;
}

/* ---- driver ------------------------------------------------------------------------------------------------------ */
static void on_watchdog(int sig)
{
    static const char msg[] = "\nmme_agree: watchdog expired; terminating\n";
    ssize_t w = write(1, msg, sizeof msg - 1);
    (void)w;
    (void)sig;
    raise(SIGTERM);
}

int main(int argc, char **argv)
{
    const char *list = NULL, *only = NULL;
    double budget = 150;
    int print_forms = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "--dry-run")) dry = 1;
        else if (!strcmp(argv[i], "--safe")) safe = 1;
        else if (!strcmp(argv[i], "--run-known-bad")) run_known_bad = 1;
        else if (!strcmp(argv[i], "--forms")) print_forms = 1;
        else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atof(argv[++i]);
        else {
            list = NULL;
            break;
        }
    }
    if (!list) {
        printf("usage: mme_agree --list FILE [-v] [--dry-run] [--safe] [--run-known-bad] [--forms] [--only extra|bit14|macros] "
               "[--budget SECONDS]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    t_start = now_s();
    if (!load_list(list)) { printf("mme_agree: cannot read %s\n", list); return 2; }
    for (uint32_t i = 0; i < nmacros; i++)
        if (!mme_forms_add_macro(&forms, macros[i].code, macros[i].n)) { printf("mme_agree: out of memory\n"); return 2; }
    mme_forms_finish(&forms);
    if (print_forms) {
        for (uint32_t i = 0; i < forms.n; i++) printf("%s\n", forms.form[i]);
    }
    printf("driver forms: %u distinct group forms in %u groups of %u driver macros (%s)\n", forms.n, forms.groups,
           forms.macros, list);
    /* before anything is submitted: every macro of ours uses only those forms */
    int refused = check_tool_macros();
    if (refused) {
        printf("mme_agree: REFUSED: %d of our macros use a form no driver macro uses; nothing submitted\n", refused);
        return 2;
    }
    if (print_forms) return 0;
    signal(SIGALRM, on_watchdog);
    alarm((unsigned)budget + 60);
    hw h = { 0 };
    vgt_error err;
    vgt_gpu_options o = { 0 };
    vgt_gpu_mem *mem;
    if (!dry && (vgt_gpu_open(&o, &h.g, &err) != VGT_OK || vgt_gpu_mem_alloc(h.g, VGT_GPU_SYSMEM, SYS_VA, SYS_SIZE, &mem, &err) != VGT_OK)) {
        printf("mme_agree: %s\n", err.msg);
        return 2;
    }
    /* stage 0 first: the zeroing and probe macros alone; anything wrong there stops the run */
    if (!stage0(&h)) printf("mme_agree: STOP after stage 0: %s\n", halted[0] ? halted : "see the stage0 row");
    if (!halted[0] && (!only || !strcmp(only, "extra")))
        for (int vnt = 0; vnt < 4; vnt++) test_extra(&h, vnt);
    if (!halted[0] && (!only || !strcmp(only, "bit14")))
        for (int k = 0; k < 3; k++)
            for (int f = 0; f < 2; f++) test_b14(&h, k, f);
    int first_macro = nrows;
    static verdict mrows[4096];
    uint32_t nm = 0, agree = 0, dis = 0, unread = 0, skip = 0, errs = 0, would = 0;
    if (!only || !strcmp(only, "macros"))
        for (uint32_t i = 0; i < nmacros && nm < 4096; i++) {
            nrows = first_macro;
            test_macro(&h, &macros[i], t_start + budget);
            mrows[nm++] = rows[first_macro];
            if (verbose) printf("  %-8s %s\n", rows[first_macro].result, rows[first_macro].detail);
        }
    nrows = first_macro;
    if (h.g) vgt_gpu_close(h.g);
    printf("\n%-18s %-8s %s\n", "row", "result", "detail");
    int bad = 0;
    for (int i = 0; i < nrows; i++) {
        printf("%-18s %-8s %s\n", rows[i].name, rows[i].result, rows[i].detail);
        bad += strcmp(rows[i].result, "AGREE") && strcmp(rows[i].result, "SKIP") && strcmp(rows[i].result, "DRY");
    }
    if (nm) printf("\n%-8s %s\n", "result", "hash source instructions: detail");
    /* skip reasons, counted by kind */
    char cats[32][64];
    uint32_t ncat = 0, catn[32] = { 0 };
    for (uint32_t i = 0; i < nm; i++) {
        printf("%-8s %s\n", mrows[i].result, mrows[i].detail);
        agree += !strcmp(mrows[i].result, "AGREE");
        dis += !strcmp(mrows[i].result, "DISAGREE");
        unread += !strcmp(mrows[i].result, "UNREADABLE");
        errs += !strcmp(mrows[i].result, "ERROR");
        would += !strcmp(mrows[i].result, "DRY");
        if (strcmp(mrows[i].result, "SKIP")) continue;
        skip++;
        uint32_t j;
        for (j = 0; j < ncat && strcmp(cats[j], mrows[i].cat); j++) {}
        if (j == ncat && ncat < 32) snprintf(cats[ncat++], 64, "%s", mrows[i].cat);
        if (j < 32) catn[j]++;
    }
    if (nm) {
        if (dry) printf("\nmacros: %u distinct, %u would run, %u skipped\n", nm, would, skip);
        else printf("\nmacros: %u distinct, %u agree, %u disagree, %u unreadable (their other effects agree; the "
                    "methods that differ keep no shadow), %u skipped, %u errors\n", nm, agree, dis, unread, skip, errs);
        for (uint32_t j = 0; j < ncat; j++) printf("  skipped %3u: %s\n", catn[j], cats[j]);
    }
    if (halted[0]) printf("mme_agree: STOPPED: %s\n", halted);
    int fail = bad + (int)dis + (int)errs + (halted[0] != 0);
    printf("mme_agree: %.1f s, %s\n", now_s() - t_start, fail ? "DIFFERENCES OR ERRORS (see above)" : "all agree");
    return fail ? 1 : 0;
}
