/* addr_operands.c: the methods that carry GPU addresses, as data: what a relocation rewrites in a push
 * buffer (vgt/addr_operands.h). Offsets and bit ranges from NVIDIA open-gpu-doc: host classes/host/clc46f.h (SEMAPHOREA/B),
 * clc86f.h (SEM_ADDR_LO 31:2 / SEM_ADDR_HI 24:0); compute classes/compute/clcbc0.h (SEND_PCAS_A: QMD
 * address >> 8; SET_INLINE_QMD_ADDRESS_A 8:0 / _B, shifted 8; SET_REPORT_SEMAPHORE_A/B; SET_NOTIFY_A/B;
 * REPORT_SEMAPHORE_ADDRESS_LOWER/UPPER from C7C0); 3D classes/3d/clcb97.h (SET_COLOR_TARGET_A/B(j),
 * SET_ZT_A/B, SET_INDEX_BUFFER_A/B and _E/_F (limit), SET_PIPELINE_PROGRAM_ADDRESS_A/B(j),
 * SET_CONSTANT_BUFFER_SELECTOR_B/C, the same report/notify/I2M methods); copy classes/dma-copy/clc8b5.h
 * (SET_SEMAPHORE_A/B, OFFSET_IN_UPPER/LOWER, OFFSET_OUT_UPPER/LOWER); inline-to-memory
 * classes/inline-to-memory/cla140.h (OFFSET_OUT_UPPER/OFFSET_OUT). The same offsets are in
 * analyze/src/events_table.c, which the semantic tracker (and so addr_events.c) decodes with. */
#include "vgt/addr_operands.h"

#define HI25 0x1ffffffu
#define P(fam, hi, lo, mask, shift, name) {fam, hi, lo, mask, shift, 1, 0, 0, name}
#define PA(fam, hi, lo, n, stride, name) {fam, hi, lo, HI25, 0, n, stride, 0, name}

static vgt_addr_pair pairs[] = {
    P(0x6f, 0x0010, 0x0014, 0xffu, 0, "SEMAPHOREA/B"),
    P(0x6f, 0x0060, 0x005c, HI25, 0, "SEM_ADDR_HI/LO"),
    /* compute */
    P(0xc0, 0x0188, 0x018c, HI25, 0, "OFFSET_OUT_UPPER/OFFSET_OUT (I2M)"),
    P(0xc0, 0x1b00, 0x1b04, HI25, 0, "SET_REPORT_SEMAPHORE_A/B"),
    P(0xc0, 0x0164, 0x0160, HI25, 0, "REPORT_SEMAPHORE_ADDRESS_UPPER/LOWER"),
    P(0xc0, 0x0104, 0x0108, HI25, 0, "SET_NOTIFY_A/B"),
    P(0xc0, 0x0000, 0x02b4, 0, 8, "SEND_PCAS_A (QMD address >> 8)"),
    P(0xc0, 0x0318, 0x031c, 0x1ffu, 8, "SET_INLINE_QMD_ADDRESS_A/B"),
    /* 3D */
    P(0x97, 0x0188, 0x018c, HI25, 0, "OFFSET_OUT_UPPER/OFFSET_OUT (I2M)"),
    P(0x97, 0x1b00, 0x1b04, HI25, 0, "SET_REPORT_SEMAPHORE_A/B"),
    P(0x97, 0x0164, 0x0160, HI25, 0, "REPORT_SEMAPHORE_ADDRESS_UPPER/LOWER"),
    P(0x97, 0x0104, 0x0108, HI25, 0, "SET_NOTIFY_A/B"),
    PA(0x97, 0x0800, 0x0804, 8, 0x40, "SET_COLOR_TARGET_A/B"),
    P(0x97, 0x0fe0, 0x0fe4, HI25, 0, "SET_ZT_A/B"),
    P(0x97, 0x17c8, 0x17cc, HI25, 0, "SET_INDEX_BUFFER_A/B"),
    P(0x97, 0x17d8, 0x17dc, HI25, 0, "SET_INDEX_BUFFER_E/F (limit)"),
    PA(0x97, 0x2014, 0x2018, 6, 0x40, "SET_PIPELINE_PROGRAM_ADDRESS_A/B"),
    P(0x97, 0x2384, 0x2388, HI25, 0, "SET_CONSTANT_BUFFER_SELECTOR_B/C"),
    /* copy */
    P(0xb5, 0x0240, 0x0244, HI25, 0, "SET_SEMAPHORE_A/B"),
    P(0xb5, 0x0400, 0x0404, HI25, 0, "OFFSET_IN_UPPER/LOWER"),
    P(0xb5, 0x0408, 0x040c, HI25, 0, "OFFSET_OUT_UPPER/LOWER"),
    /* inline-to-memory */
    P(0x40, 0x0188, 0x018c, HI25, 0, "OFFSET_OUT_UPPER/OFFSET_OUT"),
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* Slots: each pair's elements get consecutive state slots (42 in all, under VGT_ADDR_PAIR_SLOTS). */
static void number_slots(void)
{
    static int done;
    if (done) return;
    uint32_t next = 0;
    for (uint32_t i = 0; i < NPAIRS; i++) {
        pairs[i].slot = (uint8_t)next;
        next += pairs[i].count;
    }
    done = 1;
}

int vgt_addr_pair_of(uint32_t cls, uint32_t mthd, const vgt_addr_pair **pair, uint32_t *slot)
{
    number_slots();
    uint8_t fam = (uint8_t)cls;
    for (uint32_t i = 0; i < NPAIRS; i++) {
        const vgt_addr_pair *p = &pairs[i];
        if (p->family != fam) continue;
        for (uint32_t j = 0; j < p->count; j++) {
            uint32_t off = j * p->stride;
            int half = p->hi && mthd == p->hi + off ? 0 : mthd == p->lo + off ? 1 : -1;
            if (half < 0) continue;
            *pair = p;
            *slot = p->slot + j;
            return half;
        }
    }
    return -1;
}

uint64_t vgt_addr_pair_address(const vgt_addr_pair *p, uint32_t hi, uint32_t lo)
{
    uint64_t v = p->hi ? (uint64_t)(hi & p->hi_mask) << 32 | lo : lo;
    return v << p->shift;
}

void vgt_addr_pair_encode(const vgt_addr_pair *p, uint64_t va, uint32_t old_hi, uint32_t *hi, uint32_t *lo)
{
    uint64_t v = va >> p->shift;
    *lo = (uint32_t)v;
    *hi = p->hi ? (old_hi & ~p->hi_mask) | ((uint32_t)(v >> 32) & p->hi_mask) : 0;
}
