/* fuzz_mme.c: libFuzzer target for the MME decoder, disassembler, simulator and tracker.
 *
 * Input: byte 0 selects what runs (bit 0: Fermi instead of TU104; bit 1: feed a tracker instead of a
 * direct run; bits 7:2: parameter count), byte 1 a start offset, the rest little-endian dwords:
 * parameters first, then code (direct run) or (method, value) pairs (tracker). GPU memory for DMA
 * answers from the input itself and fails on every other 4 KB page.
 * Build: CC=clang CFLAGS=-fsanitize=fuzzer-no-link cmake -DVGT_FUZZ=ON -DVGT_SANITIZE=ON ... (the CFLAGS
 * give the libraries coverage; without them the fuzzer sees only this file);
 * run: <build>/fuzz/fuzz_mme -max_total_time=60 <corpus dir>
 */
#include "vgt/mme.h"

#include <stdlib.h>
#include <string.h>

typedef struct input {
    const uint8_t *data;
    size_t size;
} input;

static vgt_status fuzz_mem(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    const input *in = user;
    if ((va >> 12) & 1 || in->size == 0) return vgt_fail(err, VGT_E_FAULT, va, "unmapped");
    unsigned char *d = dst;
    for (size_t i = 0; i < len; i++) d[i] = in->data[(va + i) % in->size];
    return VGT_OK;
}

static uint32_t fuzz_state(void *user, uint32_t method) { return method * 2654435761u; }

static vgt_status fuzz_emit(void *user, uint32_t method, uint32_t value) { return VGT_OK; }

static vgt_status fuzz_call(void *user, const vgt_mme_call *c, vgt_error *err)
{
    for (uint32_t i = 0; i < c->nemits; i++)
        if (c->emits[i].method >= 0x4000) abort();   /* emitted methods stay inside the class */
    return VGT_OK;
}

static void disassemble(vgt_mme_format fmt, const uint32_t *code, uint32_t n, uint32_t start)
{
    char line[512];
    uint32_t step = vgt_mme_inst_dwords(fmt);
    for (uint32_t at = start; at < n; at += step) vgt_mme_disasm_line(fmt, code, n, start, at, VGT_MME_DISASM_RAW, line, sizeof line);
    vgt_mme_body_hash(fmt, code, n, start, NULL);
}

static void direct_run(vgt_mme_format fmt, const uint32_t *w, uint32_t nw, uint32_t np, uint32_t start, input *in)
{
    if (np > nw) np = nw;
    const uint32_t *code = w + np;
    uint32_t n = nw - np;
    disassemble(fmt, code, n, start < n ? start : 0);
    vgt_mme_sim_io io = {.emit = fuzz_emit, .state = fuzz_state, .read_mem = fuzz_mem, .user = in};
    vgt_mme_sim_config cfg = {.max_instructions = 1u << 12};
    vgt_mme_result res;
    vgt_error err;
    vgt_status rc = vgt_mme_sim_run(&cfg, fmt, code, n, start, w, np, &io, NULL, &res, &err);
    if (rc != VGT_OK && rc != VGT_E_DECODE) abort();
    if ((rc == VGT_OK) != (res.error == VGT_MME_OK) || res.instructions > cfg.max_instructions) abort();
}

static void tracker_run(uint32_t cls, const uint32_t *w, uint32_t nw, input *in)
{
    vgt_mme_tracker_config cfg = {.cls = cls, .on_call = fuzz_call, .read_mem = fuzz_mem, .user = in,
                                  .sim = {.max_instructions = 1u << 10}, .max_call_params = 1024};
    vgt_mme_tracker *t;
    if (vgt_mme_tracker_create(&cfg, &t, NULL) != VGT_OK) abort();
    for (uint32_t i = 0; i + 1 < nw; i += 2) {
        /* bias methods to the MME's own and to the scratch/call ranges */
        uint32_t m = w[i] & 0x3ffc;
        if (w[i] & 0x10000) m = 0x0110 + (w[i] & 0x1c);
        else if (w[i] & 0x20000) m = 0x0550 + (w[i] & 0x3c);
        if (vgt_mme_tracker_feed(t, m, w[i + 1], NULL) != VGT_OK) abort();
    }
    if (vgt_mme_tracker_flush(t, NULL) != VGT_OK) abort();
    vgt_mme_tracker_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    input in = {data, size};
    vgt_mme_format fmt = data[0] & 1 ? VGT_MME_FERMI : VGT_MME_TU104;
    uint32_t np = data[0] >> 2, start = data[1];
    uint32_t nw = (uint32_t)((size - 2) / 4);
    if (nw > 0x4000) nw = 0x4000;
    uint32_t *w = malloc((nw ? nw : 1) * sizeof *w);
    if (!w) return 0;
    memcpy(w, data + 2, (size_t)nw * 4);
    if (data[0] & 2)
        tracker_run(fmt == VGT_MME_FERMI ? 0x9097 : 0xC597, w, nw, &in);
    else
        direct_run(fmt, w, nw, np, start, &in);
    free(w);
    return 0;
}
