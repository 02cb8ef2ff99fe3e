/* events_count.c: what counts as a launch and as a copy (events.h). The tracker gives each scheduled
 * QMD and each copy-engine LAUNCH_DMA its kind with these two rules, so every tool that counts events
 * (census, db, decode, the replay's backends) counts the same things under the same names.
 *
 * Why: CUDA schedules a CTA-less QMD (grid 0x0x0, program 0) before each kernel only to order the
 * stream through dependent QMDs (corpus/many_launches.vgt: 10,000 of them for 10,000 kernels), and
 * libcuda follows most copies with a LAUNCH_DMA of DATA_TRANSFER_TYPE NONE that only releases a
 * semaphore (corpus/streams_threads.vgt: 119 of 226). Counted as launches and copies they doubled
 * what a user means by either. */
#include "vgt/events.h"

int vgt_launch_runs_threads(const vgt_ev_launch *l)
{
    if (!l->decoded || !l->qmd_known) return 1;   /* unknown bytes may hold a grid: assume it runs */
    const vgt_qmd *q = &l->qmd;
    return q->grid[0] && q->grid[1] && q->grid[2] && q->block[0] && q->block[1] && q->block[2];
}

int vgt_copy_moves_bytes(const vgt_ev_copy *k) { return k->transfer_type != 0 && k->bytes != 0; }

uint32_t vgt_copy_unit(const vgt_ev_copy *k, int dst)
{
    if (!k->remap) return 1;
    uint32_t rc = k->remap_components;
    return (((rc >> 16) & 3u) + 1u) * (((rc >> (dst ? 24 : 20)) & 3u) + 1u);
}

vgt_bl_surface vgt_copy_bl_surface(const vgt_ev_copy_surface *s, uint32_t unit)
{
    return (vgt_bl_surface){.width = (uint64_t)s->width * unit, .height = s->height, .depth = s->depth,
                            .block_height_log2 = (s->block_size >> 4) & 0xfu,
                            .block_depth_log2 = (s->block_size >> 8) & 0xfu};
}
