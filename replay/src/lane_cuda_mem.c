/* lane_cuda_mem.c: lane 3's device memory and copies.
 *
 * Placement. A captured allocation [dst, dst+size) needs device memory at those addresses, so that the
 * pointers the program put in kernel parameters and in device memory stay valid. The backend reserves in
 * whole granules (2 MiB on the H200): the allocation's granules not placed yet are reserved as one range,
 * at its captured address when the driver lets us (the run is "kept"), else wherever it can ("moved").
 * A moved range is reached through translate(), and the kernel parameters that point into it are rewritten
 * (lc_relocate_params: by the parameter layout the capture recorded, 8-byte parameters and the aligned
 * words of larger ones). Pointers stored inside
 * device memory by the program cannot be found that way: a moved range that holds such pointers replays
 * wrong, and the summary's "moved" count says when that can have happened.
 *
 * Checks. A device-to-host copy's bytes are read back here and compared with the captured ones, at once
 * (a synchronous copy: DTOH with data) or when the DTOH_RESULT of an asynchronous one comes (its bytes
 * are read at the copy: the replay is serial, so that is where the copy ran in stream order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "lane_cuda.h"
#include "vgt/cuda.h"
#include "vgt/grow.h"

static const lc_run *run_of(const lane_cuda *lc, uint64_t a)
{
    for (uint32_t i = 0; i < lc->nruns; i++)
        if (a - lc->runs[i].cap < lc->runs[i].len) return &lc->runs[i];
    return NULL;
}

static uint64_t translate(const lane_cuda *lc, uint64_t a)
{
    const lc_run *r = run_of(lc, a);
    return r ? r->rep + (a - r->cap) : a;
}

/* The granules of [va, va+size) that no run covers, each maximal stretch reserved as one range. */
static vgt_status place(vgt_replay *rp, lane_cuda *lc, uint64_t va, uint64_t size, vgt_error *err)
{
    uint64_t g = rp->ops->cuda->granularity(rp->be);
    if (!g) g = 2u << 20;
    uint64_t lo = va / g * g, hi = (va + size + g - 1) / g * g;
    for (uint64_t a = lo; a < hi;) {
        if (run_of(lc, a)) {
            a += g;
            continue;
        }
        uint64_t end = a + g;
        while (end < hi && !run_of(lc, end)) end += g;
        uint64_t got = 0;
        vgt_error e;
        if (rp->ops->cuda->reserve(rp->be, a, end - a, &got, &e) != VGT_OK) {
            engine_warn(rp, "device memory for captured [0x%llx, 0x%llx) not reserved: %s", (unsigned long long)a,
                        (unsigned long long)end, e.msg);
            return VGT_OK;
        }
        if (vgt_grow(&lc->runs, &lc->capruns, lc->nruns + 1ull, 16))
            return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "lane cuda: out of memory");
        lc->runs[lc->nruns++] = (lc_run){a, end - a, got};
        if (got == a) lc->ranges_kept++;
        else {
            lc->ranges_moved++;
            engine_note(rp, "captured device range [0x%llx, 0x%llx) could not be reserved at its address: it lives at "
                        "0x%llx, and pointer parameters into it are relocated", (unsigned long long)a,
                        (unsigned long long)end, (unsigned long long)got);
        }
        a = end;
    }
    return VGT_OK;
}

vgt_status lc_map_global(lane_cuda *lc, uint64_t cap, uint64_t len, uint64_t rep, vgt_error *err)
{
    if (!len) return VGT_OK;
    for (uint32_t i = 0; i < lc->nruns; i++)
        if (lc->runs[i].cap == cap) {   /* looked up again (the module loaded again at the capture): the newest */
            lc->runs[i].len = len, lc->runs[i].rep = rep;
            return VGT_OK;
        }
    if (vgt_grow(&lc->runs, &lc->capruns, lc->nruns + 1ull, 16))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "lane cuda: out of memory");
    lc->runs[lc->nruns++] = (lc_run){cap, len, rep};
    return VGT_OK;
}

/* One 8-byte word of params at off: rewritten when it points into a moved range. */
static int relocate_word(const lane_cuda *lc, uint8_t *params, uint32_t off)
{
    uint64_t v;
    memcpy(&v, params + off, 8);
    const lc_run *r = run_of(lc, v);
    if (!r || r->rep == r->cap) return 0;
    v = r->rep + (v - r->cap);
    memcpy(params + off, &v, 8);
    return 1;
}

/* Pointers are 8-byte parameters, or 8-byte-aligned words inside a larger one (a struct passed by value:
 * PyTorch's kernels take their tensors' data pointers in one); without a layout, every aligned word. A word
 * that only looks like an address inside a moved range would be rewritten too: device addresses are large
 * numbers that integers of a program seldom equal. */
uint64_t lc_relocate_params(const lane_cuda *lc, uint8_t *params, uint32_t len, const uint8_t *layout, uint32_t layout_len)
{
    uint64_t n = 0;
    if (!lc->nruns) return 0;
    if (!layout_len) {
        for (uint32_t off = 0; off + 8 <= len; off += 8) n += (uint64_t)relocate_word(lc, params, off);
        return n;
    }
    for (uint32_t i = 0; i + 8 <= layout_len; i += 8) {
        uint32_t off, size;
        memcpy(&off, layout + i, 4);
        memcpy(&size, layout + i + 4, 4);
        if (size < 8 || off % 8 || off > len || size > len - off) continue;
        for (uint32_t w = 0; w + 8 <= size; w += 8) n += (uint64_t)relocate_word(lc, params, off + w);
    }
    return n;
}

/* Compare what the replay read with what the capture got; one check. */
static void compare(vgt_replay *rp, const vgt_record *rec, uint64_t dev, const uint8_t *want, const uint8_t *got,
                    uint64_t len)
{
    if (!rp->opt.check) return;
    rp->sum.observed_bytes += len;
    rp->sum.bytes_compared += len;
    rp->sum.observed_bytes_compared += len;
    uint64_t diff = 0, first = len;
    for (uint64_t i = 0; i < len; i++)
        if (want[i] != got[i]) {
            if (first == len) first = i;
            diff++;
        }
    if (!diff) {
        rp->sum.checks_passed++;
        return;
    }
    rp->sum.checks_failed++;
    char msg[VGT_ERROR_MSG_MAX];
    uint64_t ev = 0, fv = 0;
    uint32_t nb = (uint32_t)(len - first < 8 ? len - first : 8);
    memcpy(&ev, want + first, nb);
    memcpy(&fv, got + first, nb);
    snprintf(msg, sizeof msg, "CUDA_MEMORY seq %llu: %llu of %llu bytes copied back from device 0x%llx differ, the first "
             "at +0x%llx (captured 0x%llx, replayed 0x%llx)", (unsigned long long)rec->seq, (unsigned long long)diff,
             (unsigned long long)len, (unsigned long long)dev, (unsigned long long)first, (unsigned long long)ev,
             (unsigned long long)fv);
    vgt_replay_report r = {.kind = VGT_RPT_MISMATCH, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .record_seq = rec->seq, .record_kind = "CUDA_MEMORY", .va = dev, .length = len,
                           .differing = diff, .compared = len, .first_va = dev + first, .expected = ev, .found = fv,
                           .value_bytes = nb, .msg = msg};
    engine_report(rp, &r);
}

/* Read len bytes at captured device address dev (translated); NULL (warned) on failure. */
static uint8_t *read_back(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, uint64_t dev, uint64_t len)
{
    uint8_t *buf = malloc(len ? len : 1);
    vgt_error e;
    if (!buf) return NULL;
    if (rp->ops->cuda->read(rp->be, translate(lc, dev), buf, len, &e) != VGT_OK) {
        engine_warn(rp, "CUDA_MEMORY seq %llu: %s", (unsigned long long)rec->seq, e.msg);
        free(buf);
        return NULL;
    }
    return buf;
}

static void result(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, const vgt_rec_cuda_memory *m)
{
    for (uint32_t i = lc->npending; i-- > 0;) {
        lc_pending *p = &lc->pending[i];
        if (p->host != m->dst || p->dev != m->src || p->size != m->size) continue;
        if (p->bytes) compare(rp, rec, m->src, m->data, p->bytes, m->data_length < p->size ? m->data_length : p->size);
        free(p->bytes);
        lc->pending[i] = lc->pending[--lc->npending];
        return;
    }
    engine_warn(rp, "CUDA_MEMORY seq %llu: the bytes of a device-to-host copy (0x%llx -> 0x%llx) whose copy the trace "
                "does not hold", (unsigned long long)rec->seq, (unsigned long long)m->src, (unsigned long long)m->dst);
}

vgt_status lc_memory_op(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, const vgt_rec_cuda_memory *m, int in_graph,
                        vgt_error *err)
{
    const vgt_backend_cuda_ops *c = rp->ops->cuda;
    vgt_error e;
    vgt_status rc = VGT_OK;
    int forwarded = 1;
    if ((m->call.flags & VGT_CUDA_MEM_DATA_TRUNCATED) && (m->op == VGT_CUDA_OP_HTOD || m->op == VGT_CUDA_OP_DTOH))
        engine_warn(rp, "CUDA_MEMORY seq %llu: the capture kept %u of its %llu bytes", (unsigned long long)rec->seq,
                    m->data_length, (unsigned long long)m->size);
    switch (m->op) {
    case VGT_CUDA_OP_ALLOC:
        forwarded = 0;
        if (m->dst && m->size) return place(rp, lc, m->dst, m->size, err);
        return VGT_OK;
    case VGT_CUDA_OP_HTOD:
        if (m->data_length) rc = c->write(rp->be, translate(lc, m->dst), m->data, m->data_length, &e);
        break;
    case VGT_CUDA_OP_DTOH: {
        uint8_t *got = read_back(rp, lc, rec, m->src, m->size);
        if (!got) break;
        if ((m->call.flags & VGT_CUDA_MEM_DATA_LATER) || in_graph) {
            if (vgt_grow(&lc->pending, &lc->cappending, lc->npending + 1ull, 16)) {
                free(got);
                return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "lane cuda: out of memory");
            }
            lc->pending[lc->npending++] = (lc_pending){m->dst, m->src, m->size, got};
        } else {
            compare(rp, rec, m->src, m->data, got, m->data_length < m->size ? m->data_length : m->size);
            free(got);
        }
        break;
    }
    case VGT_CUDA_OP_DTOH_RESULT:
        result(rp, lc, rec, m);
        return VGT_OK;
    case VGT_CUDA_OP_DTOD:
        rc = c->copy(rp->be, translate(lc, m->dst), translate(lc, m->src), m->size, &e);
        break;
    case VGT_CUDA_OP_MEMSET8:
    case VGT_CUDA_OP_MEMSET16:
    case VGT_CUDA_OP_MEMSET32:
        rc = c->memset(rp->be, translate(lc, m->dst), m->value,
                       m->op == VGT_CUDA_OP_MEMSET8 ? 1 : m->op == VGT_CUDA_OP_MEMSET16 ? 2 : 4, m->size, &e);
        break;
    default:
        return VGT_OK;   /* frees, host allocations, host-to-host copies: nothing on the device */
    }
    if (forwarded && !in_graph) rp->sum.cuda_forwarded++;
    if (rc != VGT_OK) {
        rp->sum.faults++;
        engine_warn(rp, "CUDA_MEMORY seq %llu (%s): %s", (unsigned long long)rec->seq, vgt_cuda_op_name(m->op), e.msg);
    }
    return VGT_OK;
}

void lc_cover(lane_cuda *lc, uint64_t first, uint64_t count)
{
    if (count > (1u << 20)) count = 1u << 20;
    if (first > UINT64_MAX - count) return;   /* past any submission the trace can hold */
    uint64_t need = first + count;
    if (need > lc->capcovered) {   /* grown in bytes (first 512: 4096 bits), the new ones cleared */
        uint64_t had = lc->capcovered / 8, bytes = had;
        if (vgt_grow(&lc->covered, &bytes, need / 8 + (need % 8 != 0), 512)) return;
        memset(lc->covered + had, 0, bytes - had);
        lc->capcovered = bytes * 8;
    }
    for (uint64_t i = first; i < need; i++) lc->covered[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* Covered submissions that the trace holds (a deferred link may name one past the end). */
uint64_t lc_covered(const lane_cuda *lc)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < lc->submits && i < lc->capcovered; i++) n += (lc->covered[i / 8] >> (i % 8)) & 1;
    return n;
}
