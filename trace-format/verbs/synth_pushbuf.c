/* synth_pushbuf.c: valid Hopper method streams and QMDs for `vgt synth` (see synth.h).
 *
 * Methods and fields are the class constants (vgt/nv/clXXXX.h); headers and GPFIFO entries the codec's
 * (vgt/nv_pushbuf.h, through vgt/pbwriter.h).
 */
#include <string.h>

#include "synth.h"
#include "vgt/nv/cla140.h"
#include "vgt/nv/clc86f.h"
#include "vgt/nv/clc8b5.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/nv_facts.h"
#include "vgt/nv_pushbuf.h"

#define HOST_NOP NVC86F_NOP
/* I2M methods (A140; the same offsets in HOPPER_COMPUTE_A) */
#define I2M_LINE_LENGTH_IN NVA140_LINE_LENGTH_IN
#define I2M_LAUNCH_DMA NVA140_LAUNCH_DMA
#define I2M_LAUNCH_DMA_PITCH VGT_NV_DEF(NVA140_LAUNCH_DMA_DST_MEMORY_LAYOUT, PITCH)
#define I2M_LOAD_INLINE_DATA NVA140_LOAD_INLINE_DATA
#define I2M_UPPER(va) VGT_NV_SET(NVA140_OFFSET_OUT_UPPER_VALUE, (va) >> 32)
/* HOPPER_DMA_COPY_A */
#define CE_SET_SEMAPHORE_A NVC8B5_SET_SEMAPHORE_A
#define CE_LAUNCH_DMA NVC8B5_LAUNCH_DMA
#define CE_OFFSET_IN_UPPER NVC8B5_OFFSET_IN_UPPER
#define CE_LAUNCH_NON_PIPELINED VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE, NON_PIPELINED)
#define CE_LAUNCH_FLUSH VGT_NV_DEF(NVC8B5_LAUNCH_DMA_FLUSH_ENABLE, TRUE)
#define CE_LAUNCH_SEM_ONE_WORD VGT_NV_DEF(NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE, RELEASE_ONE_WORD_SEMAPHORE)
#define CE_LAUNCH_SRC_PITCH VGT_NV_DEF(NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT, PITCH)
#define CE_LAUNCH_DST_PITCH VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT, PITCH)
#define CE_UPPER(va) VGT_NV_SET(NVC8B5_OFFSET_IN_UPPER_UPPER, (va) >> 32)   /* OFFSET_IN/OUT, SEMAPHORE_A: 24:0 */
/* HOPPER_COMPUTE_A */
#define COMPUTE_SEND_PCAS_A NVCBC0_SEND_PCAS_A
#define COMPUTE_SEND_SIGNALING_PCAS2_B NVCBC0_SEND_SIGNALING_PCAS2_B
#define PCAS_ACTION_INVALIDATE_COPY_SCHEDULE NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE

void synth_rng_seed(synth_rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; }

uint64_t synth_rng_next(synth_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

uint32_t synth_rng_below(synth_rng *r, uint32_t n) { return (uint32_t)((synth_rng_next(r) >> 32) % n); }

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

void synth_fill_page(synth_rng *r, uint8_t *dst, uint32_t len, uint32_t kind)
{
    uint32_t base = (uint32_t)synth_rng_next(r);
    switch (kind % 4) {
    case 0: /* a float ramp: vertex or tensor data */
        for (uint32_t i = 0; i + 4 <= len; i += 4) {
            float f = (float)(base % 1000) * 0.25f + (float)(i / 4) * 0.5f;
            uint32_t u;
            memcpy(&u, &f, 4);
            put32(dst + i, u);
        }
        break;
    case 1: /* an index list */
        for (uint32_t i = 0; i + 4 <= len; i += 4) put32(dst + i, (base % 97) + i / 4 + (i / 12) % 3);
        break;
    case 2: /* mostly zero with a header: a freshly cleared buffer */
        memset(dst, 0, len);
        for (uint32_t i = 0; i < 64 && i + 4 <= len; i += 4) put32(dst + i, base ^ i);
        break;
    default: /* noise: compressed textures, random weights */
        for (uint32_t i = 0; i + 8 <= len; i += 8) {
            uint64_t v = synth_rng_next(r);
            for (int b = 0; b < 8; b++) dst[i + b] = (uint8_t)(v >> (8 * b));
        }
        break;
    }
    for (uint32_t i = len & ~3u; i < len; i++) dst[i] = (uint8_t)base;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void synth_pb_i2m(vgt_pbw *pb, uint32_t subch, uint64_t va, const uint8_t *bytes, uint32_t n, int one_inc)
{
    /* LINE_LENGTH_IN, LINE_COUNT, OFFSET_OUT_UPPER, OFFSET_OUT */
    uint32_t setup[4] = {n, 1, I2M_UPPER(va), (uint32_t)va};
    vgt_pbw_inc(pb, subch, I2M_LINE_LENGTH_IN, setup, 4);
    uint32_t words = n / 4, tmp[257];
    uint32_t i = 0;
    if (one_inc) {   /* LAUNCH_DMA and the first data words under one ONE_INC header (Mesa's idiom) */
        uint32_t k = words < 256 ? words : 256;
        tmp[0] = I2M_LAUNCH_DMA_PITCH;
        for (uint32_t j = 0; j < k; j++) tmp[1 + j] = le32(bytes + 4u * j);
        vgt_pbw_one_inc(pb, subch, I2M_LAUNCH_DMA, tmp, 1 + k);
        i = k;
    } else {
        vgt_pbw_immd(pb, subch, I2M_LAUNCH_DMA, I2M_LAUNCH_DMA_PITCH);
    }
    for (; i < words; i += 256) {   /* one NON_INC header per 256 words, as drivers split long uploads */
        uint32_t k = words - i < 256 ? words - i : 256;
        for (uint32_t j = 0; j < k; j++) tmp[j] = le32(bytes + 4u * (i + j));
        vgt_pbw_non_inc(pb, subch, I2M_LOAD_INLINE_DATA, tmp, k);
    }
}

void synth_pb_ce_copy(vgt_pbw *pb, uint64_t src, uint64_t dst, uint32_t n, uint64_t sem_va, uint32_t payload)
{
    /* OFFSET_IN_UPPER/LOWER, OFFSET_OUT_UPPER/LOWER, PITCH_IN, PITCH_OUT, LINE_LENGTH_IN, LINE_COUNT */
    uint32_t off[8] = {CE_UPPER(src), (uint32_t)src, CE_UPPER(dst), (uint32_t)dst, n, n, n, 1};
    vgt_pbw_inc(pb, SYNTH_SUBCH_COPY, CE_OFFSET_IN_UPPER, off, 8);
    uint32_t sem[3] = {CE_UPPER(sem_va), (uint32_t)sem_va, payload};
    vgt_pbw_inc(pb, SYNTH_SUBCH_COPY, CE_SET_SEMAPHORE_A, sem, 3);
    uint32_t launch = CE_LAUNCH_NON_PIPELINED | CE_LAUNCH_FLUSH | CE_LAUNCH_SEM_ONE_WORD | CE_LAUNCH_SRC_PITCH |
                      CE_LAUNCH_DST_PITCH;
    vgt_pbw_inc(pb, SYNTH_SUBCH_COPY, CE_LAUNCH_DMA, &launch, 1);
}

void synth_pb_compute_launch(vgt_pbw *pb, uint64_t qmd_va)
{
    uint32_t a = VGT_NV_SET(NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8, qmd_va >> 8);
    vgt_pbw_inc(pb, SYNTH_SUBCH_COMPUTE, COMPUTE_SEND_PCAS_A, &a, 1);
    vgt_pbw_immd(pb, SYNTH_SUBCH_COMPUTE, COMPUTE_SEND_SIGNALING_PCAS2_B, PCAS_ACTION_INVALIDATE_COPY_SCHEDULE);
}

void synth_pb_filler(vgt_pbw *pb, synth_rng *r)
{
    uint32_t n = 1 + synth_rng_below(r, 3);
    uint32_t zero[3] = {0, 0, 0};
    vgt_pbw_non_inc(pb, 0, HOST_NOP, zero, n);
    vgt_pbw_immd(pb, 0, HOST_NOP, synth_rng_below(r, 0x2000));
}

/* QMD V04_00 bit fields (§4, from open-gpu-doc clcbc0qmd.h): set bits hi:lo of the 96-dword QMD. */
static void qmd_set(uint8_t *q, uint32_t lo, uint32_t hi, uint32_t v)
{
    for (uint32_t b = lo; b <= hi; b++) {
        uint32_t bit = (v >> (b - lo)) & 1u;
        q[b / 8] = (uint8_t)((q[b / 8] & ~(1u << (b % 8))) | (bit << (b % 8)));
    }
}

void synth_qmd_build(uint8_t qmd[SYNTH_QMD_BYTES], const uint32_t grid[3], const uint32_t block[3],
                     uint64_t program_va, uint64_t sem_va, uint32_t payload)
{
    memset(qmd, 0, SYNTH_QMD_BYTES);
    qmd_set(qmd, 23, 25, 2);                       /* QMD_TYPE GRID_CTA */
    qmd_set(qmd, 576, 579, 0);                     /* QMD_MINOR_VERSION */
    qmd_set(qmd, 580, 583, 4);                     /* QMD_MAJOR_VERSION */
    qmd_set(qmd, 0x80 * 8, 0x80 * 8 + 31, grid[0]);          /* GRID_WIDTH */
    qmd_set(qmd, 0x84 * 8, 0x84 * 8 + 15, grid[1]);          /* GRID_HEIGHT */
    qmd_set(qmd, 0x88 * 8, 0x88 * 8 + 15, grid[2]);          /* GRID_DEPTH */
    qmd_set(qmd, 0x90 * 8, 0x90 * 8 + 15, block[0]);         /* CTA_THREAD_DIMENSION0 */
    qmd_set(qmd, 0x92 * 8, 0x92 * 8 + 15, block[1]);
    qmd_set(qmd, 0x94 * 8, 0x94 * 8 + 15, block[2]);
    qmd_set(qmd, 0x98 * 8, 0x98 * 8 + 31, (uint32_t)program_va);          /* PROGRAM_ADDRESS_LOWER */
    qmd_set(qmd, 0x9c * 8, 0x9c * 8 + 31, (uint32_t)(program_va >> 32));  /* PROGRAM_ADDRESS_UPPER */
    qmd_set(qmd, 1200, 1208, 32);                  /* REGISTER_COUNT */
    qmd_set(qmd, 320, 320, 1);                     /* RELEASE_ENABLE(0) */
    qmd_set(qmd, 321, 322, 1);                     /* RELEASE_STRUCTURE_SIZE(0): ONE_WORD */
    qmd_set(qmd, 0x50 * 8, 0x50 * 8 + 31, (uint32_t)sem_va);                         /* RELEASE_SEMAPHORE0 lo */
    qmd_set(qmd, 0x54 * 8, 0x54 * 8 + 24, (uint32_t)(sem_va >> 32) & 0x1FFFFFFu);    /* hi 24:0 */
    qmd_set(qmd, 0x58 * 8, 0x58 * 8 + 31, payload);                                  /* payload lo */
}

uint64_t synth_gp_entry(uint64_t va, uint32_t ndw)
{
    return vgt_nv_gp_encode(va, ndw, 0);   /* LEVEL main */
}
