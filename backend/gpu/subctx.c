/* subctx.c: which TSG and which subcontext a replayed channel of a capture channel group gets.
 *
 * A TSG's channels share one engine context; each FERMI_CONTEXT_SHARE_A in it is a subcontext (VEID)
 * with its own compute state. Only the sync subcontext (VEID 0) runs 3D work. What the capture shows
 * (corpus/vk_triangle.vgt): the Vulkan driver puts its 3D channel (share 0xcef000c0) and its compute
 * channel (share 0xcef000c1) in one TSG; both upload MME programs from instruction-RAM word 0 (the 3D
 * channel's 4494 words for its 3D and compute classes in submission 9, the compute channel's own 1218
 * words in submission 11), and the 3D channel's draws still ran the 3D macros: the two subcontexts
 * kept separate MME programs. Replayed on one shared subcontext, submission 11 overwrote the 3D
 * macros and the draw of submission 18 never completed. CUDA's channels of one group all name one
 * share (0x5c000016 in every CUDA trace of the corpus): they stay on one subcontext.
 *
 * Pure: the GPU session applies the result (rm_channel.c, own_subcontext). */
#include "gpu.h"

bool vgt_gpu_class_needs_sync(uint32_t cls)
{
    return cls == VGT_GPU_CLASS_HOPPER_3D || cls == VGT_GPU_CLASS_TWOD || cls == VGT_GPU_CLASS_I2M;
}

vgt_gpu_placement vgt_gpu_place(uint32_t share, bool needs_sync, const vgt_gpu_peer *peers, uint32_t npeers,
                                uint32_t *peer)
{
    *peer = 0;
    if (npeers == 0)
        return VGT_GPU_PLACE_OWN_TSG;
    for (uint32_t i = 0; i < npeers; i++)
        if (share == 0 || peers[i].context_share == 0 || peers[i].context_share == share) {
            *peer = i;
            return VGT_GPU_PLACE_SHARE;
        }
    if (!needs_sync)
        return VGT_GPU_PLACE_SUBCONTEXT;
    for (uint32_t i = 0; i < npeers; i++)
        if (!peers[i].async) {
            *peer = i;
            return VGT_GPU_PLACE_SHARE_SYNC_TAKEN;
        }
    return VGT_GPU_PLACE_SUBCONTEXT_SYNC;
}
