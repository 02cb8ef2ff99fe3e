/* mme_internal.h: what the MME files share and the public header does not show: the run context
 * of one simulated macro call (parameter FIFO, DMA FIFO, current method, result) and its helpers.
 *
 * Invariants of a run (mme_run):
 *   - params[next_param .. nparams) are the call parameters not yet loaded; fifo[fifo_head ..
 *     fifo_tail) the MME_DMA_READ_FIFOED words not yet loaded; fifo_tail <= VGT_MME_DMA_FIFO_MAX_WORDS.
 *   - mthd is a method byte address < 0x4000 (12-bit word index, facts section 1: mthd = (v & 0xfff) << 2).
 *   - res->pc / res->pc_dword name the instruction being executed while it executes.
 */
#ifndef VGT_MME_INTERNAL_H
#define VGT_MME_INTERNAL_H

#include "vgt/mme.h"

typedef struct mme_run {
    vgt_mme_format fmt;
    const uint32_t *iram;
    uint32_t iram_dwords;
    uint32_t start;
    const uint32_t *params;
    uint32_t nparams, next_param;
    uint32_t *fifo;                 /* VGT_MME_DMA_FIFO_MAX_WORDS words, allocated by the first READ_FIFOED */
    uint32_t fifo_head, fifo_tail;
    const vgt_mme_sim_io *io;
    vgt_mme_machine *m;
    vgt_mme_result *res;
    vgt_error *err;
    uint64_t max_instructions;
    uint32_t mthd;                  /* current method, bytes */
    uint32_t inc;                   /* words added to mthd after each emit */
} mme_run;

/* Record a hardware error class at the current pc; returns VGT_E_DECODE. */
vgt_status mme_run_fail(mme_run *r, vgt_mme_error e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Pop the next parameter: FIFOed DMA words first, then call parameters; empty = MISSING_MACRO_DATA. */
vgt_status mme_run_load(mme_run *r, uint32_t *v);
/* Set the current method from a value: address bits 11:0 (words), increment bits (11+inc_bits):12. */
void mme_run_set_mthd(mme_run *r, uint32_t v, unsigned inc_bits);
/* Emit value to the current method, then advance it by the increment. */
vgt_status mme_run_emit(mme_run *r, uint32_t value);
uint32_t mme_run_state(mme_run *r, uint32_t method);
/* Counts one instruction at index ip; fails with MAX_INSTR_LIMIT or INSTR_RAM_ACCESS_OUT_OF_BOUNDS
 * when it cannot be executed. ip is signed so that a branch before the start is caught here. */
vgt_status mme_run_fetch(mme_run *r, int64_t ip, const uint32_t **code);
/* The instruction at code decoded and checked, from the machine's cache (vgt_mme_decoded). The entry
 * may be replaced by the next call: copy what is needed before decoding again. */
const vgt_mme_decoded *mme_run_decode(mme_run *r, const uint32_t *code);

vgt_status mme_tu104_run(mme_run *r);
unsigned mme_tu104_loads(const vgt_mme_tu104_inst *in);   /* parameters the group pops: 0, 1 or 2 */
vgt_status mme_fermi_run(mme_run *r);

/* A DMA method write (from the push buffer when fifo == NULL). See vgt_mme_machine_write(). */
vgt_mme_error mme_machine_apply(vgt_mme_machine *m, uint32_t method, uint32_t value, const vgt_mme_sim_io *io,
                                mme_run *fifo_run, vgt_error *why);

/* Bits hi:lo of a little-endian bit vector of 32-bit words (hi - lo < 32). */
static inline uint32_t mme_bits(const uint32_t *b, unsigned hi, unsigned lo)
{
    uint64_t w = b[lo / 32];
    if (hi / 32 != lo / 32) w |= (uint64_t)b[hi / 32] << 32;
    unsigned width = hi - lo + 1;
    return (uint32_t)((w >> (lo % 32)) & ((1ull << width) - 1));
}

/* x << s and x >> s that give 0 for s >= 32 instead of undefined behaviour. */
static inline uint32_t mme_shl(uint32_t x, uint32_t s) { return s >= 32 ? 0 : x << s; }
static inline uint32_t mme_shr(uint32_t x, uint32_t s) { return s >= 32 ? 0 : x >> s; }
static inline uint32_t mme_mask(uint32_t bits) { return bits >= 32 ? 0xffffffffu : (1u << bits) - 1; }

/* Sign-extend the low `bits` bits of v. */
static inline int32_t mme_sext(uint32_t v, unsigned bits)
{
    uint32_t m = 1u << (bits - 1);
    v &= mme_mask(bits);
    return (int32_t)((v ^ m) - m);
}

/* Bitfield merge shared by TU104 MERGE and Fermi MERGE: replace `width` bits of x at dst_pos with
 * the `width` bits of y at src_pos (Mesa mme_tu104_sim.c / mme_fermi_sim.c). Positions >= 32 shift
 * everything out [hardware behaviour unconfirmed]. */
static inline uint32_t mme_merge(uint32_t x, uint32_t y, uint32_t dst_pos, uint32_t width, uint32_t src_pos)
{
    uint32_t field = mme_shr(y, src_pos) & mme_mask(width);
    return (x & ~mme_shl(mme_mask(width), dst_pos)) | mme_shl(field, dst_pos);
}

#endif
