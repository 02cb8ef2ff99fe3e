/* fuzz_common.h: what several fuzz targets share: a memfd holding bytes, and a valid trace wrapped around
 * hostile content (objects, two channels with 3D/compute/copy/I2M objects, mapped memory), so that inputs
 * reach the decoders and interpreters behind the reader instead of stopping at a checksum. */
#ifndef VGT_FUZZ_COMMON_H
#define VGT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vgt/trace.h"

#define FZ_PB_VA 0x100000ull
#define FZ_DATA_VA 0x200000ull

static inline int fz_memfd(const char *name, const uint8_t *p, size_t n)
{
    int fd = memfd_create(name, 0);
    if (fd < 0) return -1;
    if (n && write(fd, p, n) != (ssize_t)n) {
        close(fd);
        return -1;
    }
    lseek(fd, 0, SEEK_SET);
    return fd;
}

/* "/proc/self/fd/N": a path the verbs can open. */
static inline const char *fz_path(int fd, char *buf, size_t n)
{
    snprintf(buf, n, "/proc/self/fd/%d", fd);
    return buf;
}

/* The writer options of every trace a target builds: stored (no compression), and chunks of 64 KiB
 * instead of the default 2 MiB: inputs are at most 256 KiB, so larger ones span chunks, which the reader
 * must handle anyway. */
static inline vgt_writer_options fz_writer_options(void)
{
    vgt_writer_options o = vgt_writer_defaults();
    o.codec = VGT_CODEC_STORED;
    o.chunk_target = 64u << 10;
    return o;
}

static inline void fz_setup(vgt_writer *w, vgt_error *err)
{
    vgt_rec_mem_alloc m = {.client = 1, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 2};
    vgt_write_mem_alloc(w, 1, &m, err);
    vgt_rec_gpu_map g = {.client = 1, .memory = 0x10, .gpu_va = FZ_PB_VA, .length = 0x100000, .source = 1};
    vgt_write_gpu_map(w, 2, &g, err);
    g.gpu_va = FZ_DATA_VA;
    vgt_write_gpu_map(w, 3, &g, err);
    for (uint32_t h = 0xA0; h <= 0xA1; h++) {
        vgt_rec_channel c = {.client = 1, .handle = h, .cls = 0xC86F, .entries = 64};
        vgt_write_channel(w, 4, &c, err);
        static const uint32_t classes[] = {0xCBC0, 0xC8B5, 0xCB97, 0xA140};
        for (uint32_t k = 0; k < 4; k++) {
            vgt_rec_engine_object e = {.client = 1, .channel = h, .handle = h * 16 + k, .cls = classes[k]};
            vgt_write_engine_object(w, 5, &e, err);
        }
    }
}

/* The input as chunks [kind][len lo][len hi][len bytes]. kind & 3: 0 MEMORY (+SEMAPHORE), 1 GPFIFO_SUBMIT,
 * 2 CHANNEL_STATE, 3 CHANNEL_METHODS; kind bit 2: the second channel; bits 3..5: entry count hint; bit 7:
 * the last GPFIFO entry is raw input. Written stored (no compression) to fd. */
static inline void fz_wrap(const uint8_t *p, size_t n, int fd)
{
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = fz_writer_options();
    if (vgt_writer_open_fd(&w, fd, 0, &o, NULL, 0, &err) != VGT_OK) return;
    fz_setup(w, &err);
    uint64_t pb_off = 0;
    while (n >= 3) {
        uint32_t kind = p[0], len = p[1] | (uint32_t)p[2] << 8, ch = 0xA0 + ((kind >> 2) & 1);
        p += 3, n -= 3;
        if (len > n) len = (uint32_t)n;
        if ((kind & 3) == 1) {
            uint64_t va = FZ_PB_VA + (pb_off & 0xF0000);
            pb_off += 0x1000;
            uint32_t nent = 1 + ((kind >> 3) & 7);
            uint8_t ents[8 * 8];
            for (uint32_t i = 0; i < nent; i++) {
                uint32_t dw = len / 4 / nent, off = i * dw * 4;
                uint64_t e = (uint64_t)(((uint32_t)((va + off) >> 32) & 0xFF) | dw << 10 | (i & 1u) << 9) << 32 |
                             ((uint32_t)(va + off) & ~3u);
                if (i == nent - 1 && len >= 8 && (kind & 0x80)) memcpy(&e, p, 8);
                for (int b = 0; b < 8; b++) ents[8 * i + (uint32_t)b] = (uint8_t)(e >> (8 * b));
            }
            vgt_segment seg = {.gpu_va = va, .length = len, .data = p};
            vgt_rec_gpfifo_submit s = {.client = 1, .channel = ch, .entry_count = nent, .segment_count = 1,
                                       .entries = ents, .segments = &seg};
            vgt_write_gpfifo_submit(w, 6, &s, &err);
        } else if ((kind & 3) == 2 && len >= 4 + 8 * 4) {
            vgt_rec_channel_state cs = {.client = 1, .channel = ch};
            cs.subdevice_mask = p[0] | (uint32_t)p[1] << 8;
            cs.flags = p[2] & 1;
            cs.extended_base = (uint64_t)(p[3] & 0x7f) << 40;
            for (int i = 0; i < 8; i++) cs.subch_class[i] = p[4 + 4 * i] | (uint32_t)p[5 + 4 * i] << 8;
            vgt_write_channel_state(w, 6, &cs, &err);
        } else if ((kind & 3) == 3) {
            /* writes: (method u16, subchannel u16, value u32), the subchannel and method kept legal */
            uint8_t wr[8 * 512];
            uint32_t k = 0;
            for (uint32_t i = 0; i + 8 <= len && k < 512; i += 8, k++) {
                memcpy(wr + 8 * k, p + i, 8);
                uint16_t mth = (uint16_t)((wr[8 * k] | wr[8 * k + 1] << 8) & 0x3ffc), sub = wr[8 * k + 2] & 7;
                wr[8 * k] = (uint8_t)mth, wr[8 * k + 1] = (uint8_t)(mth >> 8), wr[8 * k + 2] = (uint8_t)sub, wr[8 * k + 3] = 0;
            }
            vgt_rec_channel_methods cm = {.client = 1, .channel = ch, .writes_length = 8 * k, .writes = wr};
            vgt_write_channel_methods(w, 6, &cm, &err);
        } else if (len >= 8) {
            uint64_t va = FZ_DATA_VA + ((uint64_t)(p[0] | p[1] << 8) << 4);
            vgt_rec_memory m = {.gpu_va = va, .length = len - 2, .reason = kind & 4 ? VGT_MEM_OBSERVED : VGT_MEM_CHANGED,
                                .data = p + 2};
            vgt_write_memory(w, 7, &m, &err);
            vgt_rec_semaphore s = {.gpu_va = va, .value = p[2], .size = 4};
            if (kind & 8) vgt_write_semaphore(w, 8, &s, &err);
        }
        p += len, n -= len;
    }
    vgt_writer_close(w, &err);
}

#endif
