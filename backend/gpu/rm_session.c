/* rm_session.c: open and close a gpu session (see the lifecycle in gpu_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.h"

static vgt_status check_options(const vgt_gpu_options *o, vgt_error *err)
{
    if (o->dev_dir && strlen(o->dev_dir) >= 200)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "device folder name of %zu bytes, the limit is 199",
                        strlen(o->dev_dir));
    if (o->infra_va % VGT_GPU_PAGE)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "infra VA 0x%llx is not 4 KiB aligned",
                        (unsigned long long)o->infra_va);
    if (o->infra_va && (o->infra_va < RM_VASPACE_BASE || o->infra_va + VGT_GPU_INFRA_SPAN > VGT_GPU_CHANNEL_VA_LIMIT))
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "infra range 0x%llx+0x%llx must lie inside [0x%llx, 2^40): "
                        "push buffers and 3D context buffers need 40-bit VAs", (unsigned long long)o->infra_va,
                        (unsigned long long)VGT_GPU_INFRA_SPAN, (unsigned long long)RM_VASPACE_BASE);
    return VGT_OK;
}

vgt_status vgt_gpu_open(const vgt_gpu_options *opt, vgt_gpu **out, vgt_error *err)
{
    static const vgt_gpu_options defaults = { 0 };
    const vgt_gpu_options *o = opt ? opt : &defaults;
    *out = NULL;
    VGT_TRY(check_options(o, err));
    vgt_gpu *g = calloc(1, sizeof *g);
    if (!g)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "gpu session: out of memory (%zu bytes)", sizeof *g);
    g->opt = *o;
    if (!g->opt.infra_va)
        g->opt.infra_va = VGT_GPU_DEFAULT_INFRA_VA;
    snprintf(g->dev_dir, sizeof g->dev_dir, "%s", o->dev_dir ? o->dev_dir : "/dev");
    g->opt.dev_dir = g->dev_dir;
    g->fd_ctl = g->fd_uvm = g->fd_uvm_mm = g->fd_dev = -1;
    g->registry_slot = -1;
    vgt_status st = objects_open(g, err);
    if (st != VGT_OK) {
        vgt_gpu_close(g);
        return st;
    }
    if (!g->opt.no_signal_teardown)
        teardown_register(g);
    *out = g;
    return VGT_OK;
}

void vgt_gpu_close(vgt_gpu *g)
{
    if (!g)
        return;
    teardown_unregister(g);
    for (uint32_t i = 0; i < VGT_GPU_MAX_CHANNELS; i++)
        vgt_gpu_chan_destroy(g->chans[i]);
    mem_release_all(g);
    objects_close(g);
    free(g->mems);
    free(g);
}

const vgt_gpu_info *vgt_gpu_info_get(const vgt_gpu *g)
{
    return &g->info;
}

uint64_t vgt_gpu_timer_ns(const vgt_gpu *g)
{
    if (!g->usermode_cpu)
        return 0;
    volatile uint32_t *t = (volatile uint32_t *)(g->usermode_cpu + USERMODE_TIME_0);
    uint32_t hi, lo;
    do {   /* TIME_1 can roll over between the two reads */
        hi = t[1];
        lo = t[0];
    } while (hi != t[1]);
    return ((uint64_t)hi << 32) | lo;
}
