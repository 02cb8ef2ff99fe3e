/* fuzz_replay.c: libFuzzer target driving the replay engine on sim with hostile input, under the limits
 * the CLI runs with (sim memory allocated only when written, methods per submission, queued methods, the
 * MME budgets per call, submission and trace).
 *
 * The first byte picks how the rest is used:
 *   even: the bytes ARE a trace (parsed by the reader; most inputs stop at a checksum, which is the
 *         point: the reader's errors must reach the engine's caller cleanly);
 *   odd:  the bytes are hostile GPU work wrapped in a VALID trace: fixed objects, two channels and
 *         mappings (one memory object mapped twice: an alias), then GPFIFO_SUBMIT records whose push
 *         buffers and GPFIFO entries are the input, and MEMORY records (QMDs, semaphores) cut from it, so
 *         every input reaches the sim's front end.
 * Bits 1 and 2 of the first byte relocate the data and the push-buffer mapping (`--relocate`), so the
 * rewriting of address operands, QMD fields and GPFIFO entries sees hostile streams too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "vgt/replay.h"

#define PB_VA FZ_PB_VA
#define DATA_VA FZ_DATA_VA

static void ignore_report(void *ctx, const vgt_replay_report *r) { (void)ctx, (void)r; }

static void run_engine(int fd, uint8_t how)
{
    vgt_replay_options o = vgt_replay_defaults();
    uint64_t moved[2];
    uint32_t nmoved = 0;
    if (how & 2) moved[nmoved++] = DATA_VA;
    if (how & 4) moved[nmoved++] = PB_VA;
    o.relocate = moved;
    o.nrelocate = nmoved;
    o.backend = &vgt_backend_sim;
    o.check = 1;
    o.report = ignore_report;
    /* the CLI's own default limits (vgt/backend.h, vgt/mme.h budgets): bugs between a tighter fuzzing set
     * and the defaults are reached too; the MME budgets keep a runaway macro to a few milliseconds */
    vgt_error err;
    vgt_reader *r = NULL;
    vgt_replay *rp = NULL;
    vgt_reader_options ro = {.streaming = 0, .verify_checksums = 1};
    if (vgt_reader_open_fd(&r, fd, 0, &ro, &err) == VGT_OK && vgt_replay_open(&rp, &o, &err) == VGT_OK) {
        vgt_replay_run(rp, r, &err);
        vgt_replay_finish(rp, &err);
        uint8_t b[64];
        vgt_replay_read(rp, DATA_VA, b, sizeof b, &err);
    }
    vgt_replay_close(rp);
    vgt_reader_close(r);
}

/* Each chunk of input: [kind][len lo][len hi] then len bytes. kind bit 0: submit (else MEMORY),
 * bit 1: channel, bits 2..7: entry count hint. */
static void wrap(const uint8_t *p, size_t n, int fd)
{
    vgt_writer *w;
    vgt_error err;
    vgt_writer_options o = fz_writer_options();
    if (vgt_writer_open_fd(&w, fd, 0, &o, NULL, 0, &err) != VGT_OK) return;
    fz_setup(w, &err);   /* the objects, channels and mappings fz_wrap starts with too */
    uint64_t pb_off = 0;
    while (n >= 3) {
        uint32_t kind = p[0], len = p[1] | (uint32_t)p[2] << 8;
        p += 3, n -= 3;
        if (len > n) len = (uint32_t)n;
        if (kind & 1) {
            uint64_t va = PB_VA + (pb_off & 0xF0000);
            pb_off += 0x1000;
            uint32_t nent = 1 + ((kind >> 2) & 7);
            uint8_t ents[8 * 8];
            for (uint32_t i = 0; i < nent; i++) {
                /* entries into the segment; the last one may be anything the input says */
                uint32_t dw = len / 4 / nent, off = i * dw * 4;
                uint64_t e = (uint64_t)(((uint32_t)((va + off) >> 32) & 0xFF) | dw << 10 | (i & 1u) << 9) << 32 |
                             ((uint32_t)(va + off) & ~3u);
                if (i == nent - 1 && len >= 8 && (kind & 0x80)) memcpy(&e, p, 8);
                for (int b = 0; b < 8; b++) ents[8 * i + (uint32_t)b] = (uint8_t)(e >> (8 * b));
            }
            vgt_segment seg = {.gpu_va = va, .length = len, .data = p};
            vgt_rec_gpfifo_submit s = {.client = 1, .channel = 0xA0 + ((kind >> 1) & 1), .entry_count = nent,
                                       .segment_count = 1, .entries = ents, .segments = &seg};
            vgt_write_gpfifo_submit(w, 6, &s, &err);
        } else if (len >= 8) {
            uint64_t va = DATA_VA + ((uint64_t)(p[0] | p[1] << 8) << 4);
            vgt_rec_memory m = {.gpu_va = va, .length = len - 2, .reason = kind & 2 ? VGT_MEM_OBSERVED : VGT_MEM_CHANGED,
                                .data = p + 2};
            vgt_write_memory(w, 7, &m, &err);
            vgt_rec_semaphore s = {.gpu_va = va, .value = p[2], .size = 4};
            if (kind & 4) vgt_write_semaphore(w, 8, &s, &err);
        }
        p += len, n -= len;
    }
    vgt_writer_close(w, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int fd = memfd_create("fuzz_replay", 0);
    if (fd < 0) return 0;
    if (data[0] & 1) {
        wrap(data + 1, size - 1, fd);
    } else if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
        close(fd);
        return 0;
    }
    lseek(fd, 0, SEEK_SET);
    run_engine(fd, data[0]);
    close(fd);
    return 0;
}
