/* rm_preamble.c: push buffers that resume a channel cut out of a longer trace (format 1.1,
 * docs/trace-format.md 0x0027 CHANNEL_STATE and 0x0028 CHANNEL_METHODS): SET_OBJECT for each bound
 * subchannel, then the state writes, coalesced into as few headers as the method header allows
 * (DOC classes/host/clc86f.h NVC86F_DMA_*: COUNT 28:16, so at most 0x1fff dwords per header). They run
 * from a per-channel window of the infra range, as subroutine entries, like the fence's push buffer. */
#include <string.h>

#include "gpu_internal.h"
#include "vgt/trace.h"

#define PB_MAX_COUNT 0x1fffu
#define SUBCHANNELS 8u

void vgt_gpu_pb_bindings(vgt_pbw *pb, const uint32_t subch_class[8])
{
    for (unsigned s = 0; s < SUBCHANNELS; s++)
        if (subch_class[s])
            vgt_pbw_set_object(pb, s, subch_class[s]);
}

/* How many writes from m[0] one header carries: consecutive methods (INC) or one method repeated (NON_INC). */
static uint32_t run_length(const vgt_state_method *m, uint32_t n, bool *non_inc)
{
    uint32_t k = 1;
    *non_inc = n > 1 && m[1].subch == m[0].subch && m[1].method == m[0].method;
    while (k < n && k < PB_MAX_COUNT && m[k].subch == m[0].subch &&
           m[k].method == (*non_inc ? m[0].method : m[0].method + 4u * k))
        k++;
    return k;
}

void vgt_gpu_pb_state_methods(vgt_pbw *pb, const vgt_state_method *m, uint32_t n)
{
    uint32_t v[PB_MAX_COUNT];
    for (uint32_t i = 0; i < n;) {
        bool non_inc;
        uint32_t k = run_length(m + i, n - i, &non_inc);
        for (uint32_t j = 0; j < k; j++)
            v[j] = m[i + j].value;
        if (non_inc)
            vgt_pbw_non_inc(pb, m[i].subch, m[i].method, v, k);
        else
            vgt_pbw_inc(pb, m[i].subch, m[i].method, v, k);
        i += k;
    }
}

uint64_t vgt_gpu_pb_state_bound(uint32_t n) { return 2ull * SUBCHANNELS + 2ull * n; }

static vgt_status window(vgt_gpu_chan *c, vgt_error *err)
{
    if (c->preamble)
        return VGT_OK;
    uint64_t va = c->gpu->opt.infra_va + INFRA_PREAMBLE_OFF + (uint64_t)c->index * VGT_GPU_PREAMBLE_BYTES;
    _Static_assert(INFRA_PREAMBLE_OFF + VGT_GPU_MAX_CHANNELS * VGT_GPU_PREAMBLE_BYTES <= VGT_GPU_CTX_BASE_OFFSET,
                   "the state windows lie between the infra slots and the context ranges");
    VGT_TRY(mem_alloc_internal(c->gpu, va, VGT_GPU_PREAMBLE_BYTES, &c->preamble, err));
    c->preamble_used = 0;
    return VGT_OK;
}

vgt_status vgt_gpu_chan_run_pb(vgt_gpu_chan *c, const uint32_t *dw, uint32_t n, vgt_error *err)
{
    if (!n)
        return VGT_OK;
    if ((uint64_t)n * 4u > VGT_GPU_PREAMBLE_BYTES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "channel %u: a state push buffer of %u dwords exceeds the "
                        "channel's window of %llu bytes", c->index, n, (unsigned long long)VGT_GPU_PREAMBLE_BYTES);
    VGT_TRY(window(c, err));
    if (c->preamble_used + (uint64_t)n * 4u > VGT_GPU_PREAMBLE_BYTES) {
        VGT_TRY(vgt_gpu_chan_fence(c, c->submit_timeout_ms, err));   /* the GPU is done with the window */
        c->preamble_used = 0;
    }
    volatile uint32_t *dst = (volatile uint32_t *)((volatile uint8_t *)vgt_gpu_mem_cpu(c->preamble) + c->preamble_used);
    for (uint32_t i = 0; i < n; i++)
        dst[i] = dw[i];
    uint64_t va = vgt_gpu_mem_va(c->preamble) + c->preamble_used;
    c->preamble_used += n * 4u;
    return vgt_gpu_submit_pb(c, va, n, err);
}
