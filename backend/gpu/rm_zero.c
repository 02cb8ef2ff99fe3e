/* rm_zero.c: every allocation the replay maps starts zeroed, cleared by the copy engine.
 *
 * Why: a trace carries contents only for memory the captured program could write through the CPU; the
 * rest (render targets, shader scratch, GPU-only heaps) started as RM handed it out, zero on the
 * capture's freshly booted machine. RM does not clear video memory a previous process freed: on the
 * H200, vk_triangle's draw completed when it was the first replay after boot and hung when gl_egl had
 * run before it (2026-11-30). So the backend clears each new allocation itself: one HOPPER_DMA_COPY_A
 * memset (remap constant B, one 4-byte component: the HOPPER_DMA_COPY_A constants of vgt/nv/clc8b5.h, the
 * form the gpu self-test's `ce` row proves) per GiB, on a channel of its own, and waits for it before the engine
 * writes the trace's contents through the CPU. */
#include "gpu_internal.h"
#include "vgt/nv/clc8b5.h"
#include "vgt/nv_facts.h"

enum { SUB_COPY = 4 };
/* LAUNCH_DMA of a memset: non-pipelined, flushed, pitch to pitch, remapped, without PLC compression */
#define CE_MEMSET_LAUNCH                                                                                       \
    (VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE, NON_PIPELINED) | VGT_NV_DEF(NVC8B5_LAUNCH_DMA_FLUSH_ENABLE, TRUE) | \
     VGT_NV_DEF(NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT, PITCH) | VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT, PITCH) |   \
     VGT_NV_DEF(NVC8B5_LAUNCH_DMA_REMAP_ENABLE, TRUE) | VGT_NV_DEF(NVC8B5_LAUNCH_DMA_DISABLE_PLC, TRUE))
/* SET_REMAP_COMPONENTS: DST_X = CONST_B, one component of 4 bytes */
#define CE_REMAP_CONST_B_4BYTE_1COMP                                                                        \
    (VGT_NV_DEF(NVC8B5_SET_REMAP_COMPONENTS_DST_X, CONST_B) | VGT_NV_DEF(NVC8B5_SET_REMAP_COMPONENTS_COMPONENT_SIZE, FOUR))
#define ZERO_CHUNK (1ull << 30)                          /* bytes per LAUNCH_DMA: LINE_LENGTH_IN counts words */
#define ZERO_TIMEOUT_MS 5000u

static vgt_status zero_channel(vgt_gpu *g, vgt_error *err)
{
    if (g->zero_chan)
        return VGT_OK;
    /* A compute object too: on a GRAPHICS TSG, a channel with a copy object alone fails
     * UVM_REGISTER_CHANNEL (NV_ERR_INVALID_OBJECT on the H200), as it has no engine context to map. */
    static const uint32_t engines[] = { VGT_GPU_CLASS_HOPPER_COMPUTE, VGT_GPU_CLASS_HOPPER_COPY };
    vgt_gpu_chan_options o = { .nengines = 1, .engines = engines, .gpfifo_entries = 64 };
    VGT_TRY(vgt_gpu_chan_create(g, &o, &g->zero_chan, err));
    return VGT_OK;
}

vgt_status vgt_gpu_zero(vgt_gpu *g, uint64_t va, uint64_t size, vgt_error *err)
{
    if (!size)
        return VGT_OK;
    if (va % 4 || size % 4)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "clearing 0x%llx+0x%llx: VA and size must be 4-byte multiples",
                        (unsigned long long)va, (unsigned long long)size);
    VGT_TRY(zero_channel(g, err));
    uint32_t dw[64 + 8 * (VGT_GPU_MAX_ALLOC_BYTES / ZERO_CHUNK + 1)];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, (uint32_t)(sizeof dw / sizeof dw[0]));
    vgt_pbw_set_object(&pb, SUB_COPY, VGT_GPU_CLASS_HOPPER_COPY);
    const uint32_t remap[2] = { 0, CE_REMAP_CONST_B_4BYTE_1COMP };
    vgt_pbw_inc(&pb, SUB_COPY, NVC8B5_SET_REMAP_CONST_B, remap, 2);
    for (uint64_t off = 0; off < size; off += ZERO_CHUNK) {
        uint64_t n = size - off < ZERO_CHUNK ? size - off : ZERO_CHUNK, dst = va + off;
        const uint32_t out[2] = { (uint32_t)(dst >> 32), (uint32_t)dst };
        vgt_pbw_inc(&pb, SUB_COPY, NVC8B5_OFFSET_OUT_UPPER, out, 2);
        vgt_pbw_1(&pb, SUB_COPY, NVC8B5_LINE_LENGTH_IN, (uint32_t)(n / 4));
        vgt_pbw_1(&pb, SUB_COPY, NVC8B5_LAUNCH_DMA, CE_MEMSET_LAUNCH);
    }
    vgt_status st = vgt_pbw_check(&pb, err);
    if (st == VGT_OK)
        st = vgt_gpu_chan_run_pb(g->zero_chan, dw, pb.n, err);
    if (st == VGT_OK)
        st = vgt_gpu_chan_fence(g->zero_chan, ZERO_TIMEOUT_MS, err);
    if (st != VGT_OK)
        vgt_error_prefix(err, "clearing the new allocation at VA 0x%llx (0x%llx bytes) with the copy engine",
                         (unsigned long long)va, (unsigned long long)size);
    return st;
}
