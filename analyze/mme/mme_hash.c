/* mme_hash.c: a macro's body (its static extent in the instruction RAM) and its content hash.
 *
 * Definition (also in vgt/mme.h): from the start address, instructions in address order up to and
 * including the one after the first end_next/exit instruction, unless a branch, JAL or LOOP seen
 * before it targets beyond that point, in which case the scan goes on to the next such exit. The
 * instruction after the exit belongs to the body because it runs (end_next, and Fermi's delay slot).
 * The hash is XXH64, seed 0, over the body's dwords as little-endian bytes, so that the same code
 * uploaded at another address hashes the same.
 */
#include "mme_internal.h"

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack */
#include <xxhash.h>

/* The furthest instruction index this instruction may transfer control to, or -1. */
static int64_t tu104_reach(const vgt_mme_tu104_inst *in, int64_t idx)
{
    int64_t far = -1;
    for (int i = 0; i < 2; i++) {
        const vgt_mme_tu104_alu *a = &in->alu[i];
        int64_t t = -1;
        if (a->op == VGT_MME_TU104_JAL) t = idx + (a->imm & 0x7fff);
        else if (a->op == VGT_MME_TU104_LOOP) t = idx + a->imm - 1;
        else if (a->op >= VGT_MME_TU104_BLT && a->op <= VGT_MME_TU104_BEQ && (a->imm & 0x1fff) != 0x1000)
            t = idx + mme_sext(a->imm, 13);
        if (t > far) far = t;
    }
    return far;
}

static bool ends_at(vgt_mme_format fmt, const uint32_t *code, int64_t idx, int64_t *reach)
{
    if (fmt == VGT_MME_TU104) {
        vgt_mme_tu104_inst in;
        vgt_mme_tu104_decode(code, &in);
        int64_t t = tu104_reach(&in, idx);
        if (t > *reach) *reach = t;
        return in.end_next;
    }
    vgt_mme_fermi_inst in;
    vgt_mme_fermi_decode(*code, &in);
    if (in.op == VGT_MME_FERMI_BRANCH && idx + in.imm > *reach) *reach = idx + in.imm;
    return in.end_next;
}

uint32_t vgt_mme_body_dwords(vgt_mme_format fmt, const uint32_t *iram, uint32_t iram_dwords, uint32_t start)
{
    uint32_t step = vgt_mme_inst_dwords(fmt);
    if (!iram || step == 0 || start >= iram_dwords) return 0;
    uint32_t count = (iram_dwords - start) / step;   /* whole instructions available */
    int64_t reach = -1;
    for (uint32_t idx = 0; idx < count; idx++) {
        if (ends_at(fmt, iram + start + (uint64_t)idx * step, idx, &reach) && reach <= (int64_t)idx + 1)
            return (idx + 2 <= count ? idx + 2 : count) * step;
    }
    return count * step;
}

uint64_t vgt_mme_body_hash(vgt_mme_format fmt, const uint32_t *iram, uint32_t iram_dwords, uint32_t start,
                           uint32_t *ndwords)
{
    uint32_t n = vgt_mme_body_dwords(fmt, iram, iram_dwords, start);
    if (ndwords) *ndwords = n;
    XXH64_state_t st;
    XXH64_reset(&st, 0);
    unsigned char chunk[4 * 256];
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done < 256 ? n - done : 256;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t w = iram[start + done + i];
            chunk[4 * i] = (unsigned char)w;
            chunk[4 * i + 1] = (unsigned char)(w >> 8);
            chunk[4 * i + 2] = (unsigned char)(w >> 16);
            chunk[4 * i + 3] = (unsigned char)(w >> 24);
        }
        XXH64_update(&st, chunk, 4u * k);
        done += k;
    }
    return XXH64_digest(&st);
}
