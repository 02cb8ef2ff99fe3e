/* synth.h: private to `vgt synth`: a deterministic random source and a push-buffer builder that emits
 * valid Hopper method streams (host semaphores, I2M uploads, copy-engine launches, compute launches).
 *
 * Facts (method offsets, header and GPFIFO entry bit ranges, QMD V04 fields) are from NVIDIA
 * open-gpu-doc classes/host/clc86f.h,
 * classes/dma-copy/clc8b5.h, classes/compute/clcbc0.h and clcbc0qmd.h, classes/inline-to-memory/cla140.h.
 */
#ifndef VGT_SYNTH_H
#define VGT_SYNTH_H

#include <stdint.h>

#include "vgt/pbwriter.h"

/* xorshift64*: small, fast, and the same sequence everywhere for a seed. */
typedef struct synth_rng {
    uint64_t s;
} synth_rng;

void synth_rng_seed(synth_rng *r, uint64_t seed);
uint64_t synth_rng_next(synth_rng *r);
uint32_t synth_rng_below(synth_rng *r, uint32_t n);      /* uniform enough in [0, n), n > 0 */

/* Plausible memory contents: float arrays, index lists, zeros, noise; `kind` picks one. */
void synth_fill_page(synth_rng *r, uint8_t *dst, uint32_t len, uint32_t kind);

/* ---- classes and subchannels (the NVIDIA driver's assignment need not match; we bind explicitly) ---- */
#define SYNTH_CLASS_CHANNEL 0xC86Fu   /* HOPPER_CHANNEL_GPFIFO_A */
#define SYNTH_CLASS_COMPUTE 0xCBC0u   /* HOPPER_COMPUTE_A */
#define SYNTH_CLASS_COPY 0xC8B5u      /* HOPPER_DMA_COPY_A */
#define SYNTH_CLASS_3D 0xCB97u        /* HOPPER_A */
#define SYNTH_CLASS_I2M 0xA140u       /* KEPLER_INLINE_TO_MEMORY_B */
enum { SYNTH_SUBCH_3D = 0, SYNTH_SUBCH_COMPUTE = 1, SYNTH_SUBCH_I2M = 2, SYNTH_SUBCH_COPY = 4 };

#define SYNTH_QMD_BYTES 384u          /* QMD V04_00: 96 dwords */

/* Push-buffer segments under construction are vgt/pbwriter.h writers; these build the methods of one
 * operation into one (a call that does not fit marks it, the caller checks once at the end). Host
 * semaphore releases: vgt_pbw_host_release with RELEASE_WFI and a 64-bit payload, no timestamp: the GPU
 * writes exactly 8 bytes. */
/* Inline-to-memory upload of n bytes (n a multiple of 4) to va, pitch layout, one line. one_inc: LAUNCH_DMA
 * and the data under one ONE_INC header; else LAUNCH_DMA as an immediate and the data NON_INC. */
void synth_pb_i2m(vgt_pbw *pb, uint32_t subch, uint64_t va, const uint8_t *bytes, uint32_t n, int one_inc);
/* Copy-engine 1-D copy of n bytes from src to dst, then a one-word semaphore release of payload at
 * sem_va (4 bytes). */
void synth_pb_ce_copy(vgt_pbw *pb, uint64_t src, uint64_t dst, uint32_t n, uint64_t sem_va, uint32_t payload);
/* Compute launch of the QMD at qmd_va (256-byte aligned): SEND_PCAS_A + SEND_SIGNALING_PCAS2_B. */
void synth_pb_compute_launch(vgt_pbw *pb, uint64_t qmd_va);
/* A few NOPs and immediate-data methods, the filler real drivers emit between work. */
void synth_pb_filler(vgt_pbw *pb, synth_rng *r);

/* A QMD V04_00 for a grid of grid[3] CTAs of block[3] threads running code at program_va, releasing
 * a one-word semaphore of `payload` at sem_va when done. */
void synth_qmd_build(uint8_t qmd[SYNTH_QMD_BYTES], const uint32_t grid[3], const uint32_t block[3],
                     uint64_t program_va, uint64_t sem_va, uint32_t payload);

/* The GPFIFO entry (two words as one little-endian u64) for a main-level segment at va of ndw dwords. */
uint64_t synth_gp_entry(uint64_t va, uint32_t ndw);

#endif
