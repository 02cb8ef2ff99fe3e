/* rm_channel.c: a channel with its engine objects, in the order the probe proved on the H200
 * (rmchan-h200.log step 5):
 *
 *   TSG (KEPLER_CHANNEL_GROUP_A, GRAPHICS), or the TSG of the channel named by group_with
 *   -> context share (FERMI_CONTEXT_SHARE_A in our UVM VA space; sync = VEID 0, needed for 3D), or
 *      group_with's, or with own_subcontext a new one in group_with's TSG
 *   -> error notifier (sysmem, CPU-mapped so waits can watch it)
 *   -> channel (C86F or C56F): ring at the infra slot's GPU VA, USERD = infra memory + ring bytes
 *   -> engine objects (CBC0, C8B5, CB97, A140, 902D, ...)
 *   -> work-submit token (GET_WORK_SUBMIT_TOKEN) -> UVM_REGISTER_CHANNEL (after every engine object:
 *      it maps the context buffers those objects created; probe fact 2) -> GPFIFO_SCHEDULE on the TSG.
 *
 * Destroy: UVM_UNREGISTER_CHANNEL, RM_FREE the TSG (frees the channel, its objects and context share)
 * when this is its last channel, else RM_FREE the channel alone; RM_FREE the notifier, release the infra
 * memory. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gpu_internal.h"

static const uint32_t default_engines[] = { VGT_GPU_CLASS_HOPPER_COMPUTE, VGT_GPU_CLASS_HOPPER_COPY,
                                            VGT_GPU_CLASS_HOPPER_3D, VGT_GPU_CLASS_I2M, VGT_GPU_CLASS_TWOD };

static vgt_status check_chan_options(vgt_gpu *g, const vgt_gpu_chan_options *o, vgt_error *err)
{
    uint32_t cls = o->channel_class ? o->channel_class : VGT_GPU_CLASS_HOPPER_CHANNEL;
    if (cls != VGT_GPU_CLASS_HOPPER_CHANNEL && cls != VGT_GPU_CLASS_AMPERE_CHANNEL)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "channel class 0x%04x: only 0xc86f and 0xc56f are "
                        "supported", cls);
    if (!vgt_gpu_has_class(g, cls))
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "channel class 0x%04x is not in the GPU's class list",
                        cls);
    if (o->group_with && o->group_with->gpu != g)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "group_with: a channel of another GPU session");
    if (o->own_subcontext && !o->group_with)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "own_subcontext: only with group_with (a TSG to join)");
    uint32_t n = o->gpfifo_entries ? o->gpfifo_entries : 1024;
    if (n < 2 || (n & (n - 1)) || n > VGT_GPU_MAX_GPFIFO_ENTRIES)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "GPFIFO of %u entries: must be a power of two from 2 to %u", n,
                        VGT_GPU_MAX_GPFIFO_ENTRIES);
    uint32_t ne = o->engines ? o->nengines : (uint32_t)(sizeof default_engines / sizeof default_engines[0]);
    if (ne > VGT_GPU_MAX_ENGINES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "%u engine objects: the limit is %u", ne, VGT_GPU_MAX_ENGINES);
    const uint32_t *e = o->engines ? o->engines : default_engines;
    for (uint32_t i = 0; i < ne; i++)
        if (!vgt_gpu_has_class(g, e[i]))
            return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "engine class 0x%04x is not in the GPU's class "
                            "list", e[i]);
    return VGT_OK;
}

static vgt_status alloc_ctxshare(vgt_gpu *g, uint32_t tsg, bool async, uint32_t *out, vgt_error *err)
{
    rm_ctxshare_alloc s = { .va_space = g->vaspace, .flags = async ? 1u : 0u };
    return rm_alloc(g, tsg, RM_CLASS_CONTEXT_SHARE, &s, sizeof s, async ? "FERMI_CONTEXT_SHARE_A (async)" :
                    "FERMI_CONTEXT_SHARE_A (sync, VEID 0)", out, err);
}

/* Into with's TSG: on with's context share, or (own) on a new one of this channel's. RM frees a context
 * share with its TSG only, so a channel that later joins this one's share never finds it gone. */
static vgt_status join_group(vgt_gpu_chan *c, const vgt_gpu_chan *with, bool own, bool async, vgt_error *err)
{
    c->group = with->group;
    c->group->refs++;
    c->tsg = c->group->tsg;
    if (!own) {
        c->ctxshare = with->ctxshare;
        return VGT_OK;
    }
    return alloc_ctxshare(c->gpu, c->tsg, async, &c->ctxshare, err);
}

static vgt_status new_group(vgt_gpu_chan *c, bool async, vgt_error *err)
{
    vgt_gpu *g = c->gpu;
    c->group = calloc(1, sizeof *c->group);
    if (!c->group)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "channel group record: out of memory");
    c->group->refs = 1;
    rm_tsg_alloc t = { .engine_type = RM_ENGINE_TYPE_GRAPHICS };
    VGT_TRY(rm_alloc(g, g->device, RM_CLASS_CHANNEL_GROUP, &t, sizeof t, "KEPLER_CHANNEL_GROUP_A", &c->group->tsg,
                     err));
    c->tsg = c->group->tsg;
    VGT_TRY(alloc_ctxshare(g, c->tsg, async, &c->group->ctxshare, err));
    c->ctxshare = c->group->ctxshare;
    return VGT_OK;
}

/* A new TSG with its sync (VEID 0) or async context share, or group_with's TSG: the capture's channels
 * of one KEPLER_CHANNEL_GROUP_A share one engine context, and state one of them set (CUDA's shader
 * local memory) is what the others' work needs; a capture channel with a context share of its own
 * (Vulkan's compute queue) keeps its own subcontext there (subctx.c says why). UVM maps a TSG's shared
 * context buffers once and hands them to each channel registered in it (OGKM
 * kernel-open/nvidia-uvm/uvm_user_channel.c, find_va_range / create_va_range). */
static vgt_status alloc_group(vgt_gpu_chan *c, const vgt_gpu_chan_options *o, vgt_error *err)
{
    if (o->group_with)
        VGT_TRY(join_group(c, o->group_with, o->own_subcontext, o->async_subcontext, err));
    else
        VGT_TRY(new_group(c, o->async_subcontext, err));
    return mem_alloc_notifier(c->gpu, &c->notifier_mem, &c->notifier, err);
}

static vgt_status alloc_channel(vgt_gpu_chan *c, uint32_t alloc_flags, vgt_error *err)
{
    vgt_gpu *g = c->gpu;
    uint64_t va = g->opt.infra_va + (uint64_t)c->index * VGT_GPU_INFRA_SLOT;
    VGT_TRY(mem_alloc_internal(g, va, VGT_GPU_INFRA_SLOT, &c->infra, err));
    uint32_t userd_off = INFRA_USERD_OFF;
    c->ring = (volatile uint64_t *)c->infra->cpu;
    c->userd = (volatile uint32_t *)(c->infra->cpu + userd_off);
    for (uint32_t i = 0; i < VGT_GPU_INFRA_SLOT / 4; i++)
        ((volatile uint32_t *)c->infra->cpu)[i] = 0;
    for (uint32_t i = 0; i < NOTIFIER_CLEAR_BYTES / 4; i++)
        ((volatile uint32_t *)c->notifier)[i] = 0;

    rm_channel_alloc *p = calloc(1, sizeof *p);
    if (!p)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "channel parameters: out of memory");
    p->error_notifier = c->notifier_mem;
    p->object_buffer = c->infra->handle;   /* unused by 580; the stock drivers pass the ring memory */
    p->gpfifo_va = va;
    p->gpfifo_entries = c->entries;
    p->flags = alloc_flags & RM_CHANNEL_FLAGS_PLACEMENT;
    p->context_share = c->ctxshare;
    p->userd_memory[0] = c->infra->handle;
    p->userd_offset[0] = userd_off;
    vgt_status st = rm_alloc(g, c->tsg, c->cls, p, sizeof *p, "channel", &c->channel, err);
    free(p);
    return st;
}

static vgt_status alloc_engines(vgt_gpu_chan *c, const uint32_t *classes, uint32_t n, vgt_error *err)
{
    for (uint32_t i = 0; i < n; i++) {
        c->engine_class[i] = classes[i];
        VGT_TRY(rm_alloc(c->gpu, c->channel, classes[i], NULL, 0, "engine object", &c->engine_handle[i], err));
        c->nengines = i + 1;
    }
    return VGT_OK;
}

static vgt_status start_channel(vgt_gpu_chan *c, vgt_error *err)
{
    vgt_gpu *g = c->gpu;
    rm_work_token tok = { .token = 0xffffffffu };
    VGT_TRY(rm_control(g, c->channel, RM_CTRL_CHAN_GET_WORK_TOKEN, &tok, sizeof tok, "GPFIFO_GET_WORK_SUBMIT_TOKEN",
                       err));
    c->token = tok.token;
    uvm_register_channel_params r = {
        .rm_ctrl_fd = g->fd_ctl, .client = g->client, .channel = c->channel,
        .base = g->opt.infra_va + VGT_GPU_CTX_BASE_OFFSET + (uint64_t)c->index * VGT_GPU_CTX_RANGE,
        .length = VGT_GPU_CTX_RANGE,
    };
    memcpy(r.uuid, g->info.uuid, 16);
    VGT_TRY(uvm_call(g, g->fd_uvm, UVM_REQ_REGISTER_CHANNEL, &r, &r.status, "REGISTER_CHANNEL", err));
    c->uvm_registered = true;
    /* The group verb also for a channel joining a scheduled TSG: RM walks the group's channels at each
     * call (OGKM kernel_channel_group_api.c, kchangrpapiCtrlCmdGpFifoSchedule), so the newcomer is
     * scheduled and the running ones stay as they are. */
    rm_schedule s = { .enable = 1 };
    return rm_control(g, c->tsg, RM_CTRL_TSG_GPFIFO_SCHEDULE, &s, sizeof s, "GPFIFO_SCHEDULE", err);
}

static int free_slot(vgt_gpu *g)
{
    for (uint32_t i = 0; i < VGT_GPU_MAX_CHANNELS; i++)
        if (!g->chans[i])
            return (int)i;
    return -1;
}

vgt_status vgt_gpu_chan_create(vgt_gpu *g, const vgt_gpu_chan_options *opt, vgt_gpu_chan **out, vgt_error *err)
{
    static const vgt_gpu_chan_options defaults = { 0 };
    const vgt_gpu_chan_options *o = opt ? opt : &defaults;
    *out = NULL;
    VGT_TRY(check_chan_options(g, o, err));
    int slot = free_slot(g);
    if (slot < 0)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "%u channels open: the limit is %u", VGT_GPU_MAX_CHANNELS,
                        VGT_GPU_MAX_CHANNELS);
    vgt_gpu_chan *c = calloc(1, sizeof *c);
    if (!c)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "channel record: out of memory");
    c->gpu = g;
    c->index = (uint32_t)slot;
    c->cls = o->channel_class ? o->channel_class : VGT_GPU_CLASS_HOPPER_CHANNEL;
    c->entries = o->gpfifo_entries ? o->gpfifo_entries : 1024;
    c->submit_timeout_ms = o->submit_timeout_ms ? o->submit_timeout_ms : 2000;
    g->chans[slot] = c;
    const uint32_t *e = o->engines ? o->engines : default_engines;
    uint32_t ne = o->engines ? o->nengines : (uint32_t)(sizeof default_engines / sizeof default_engines[0]);
    vgt_status st = alloc_group(c, o, err);
    if (st == VGT_OK)
        st = alloc_channel(c, o->alloc_flags, err);
    if (st == VGT_OK)
        st = alloc_engines(c, e, ne, err);
    if (st == VGT_OK)
        st = start_channel(c, err);
    if (st != VGT_OK) {
        vgt_error_prefix(err, "creating channel %d (class 0x%04x)", slot, c->cls);
        vgt_gpu_chan_destroy(c);
        return st;
    }
    *out = c;
    return VGT_OK;
}

void vgt_gpu_chan_destroy(vgt_gpu_chan *c)
{
    if (!c)
        return;
    vgt_gpu *g = c->gpu;
    vgt_error ignored;
    if (c->uvm_registered) {
        uvm_unregister_channel_params u = { .client = g->client, .channel = c->channel };
        memcpy(u.uuid, g->info.uuid, 16);
        uvm_call(g, g->fd_uvm, UVM_REQ_UNREGISTER_CHANNEL, &u, &u.status, "UNREGISTER_CHANNEL", &ignored);
    }
    if (c->group && c->group->refs > 1) {   /* others still run in the TSG: free only this channel */
        if (c->channel)
            rm_free(g, c->tsg, c->channel, "channel (and its engine objects)", &ignored);
        c->group->refs--;
    } else if (c->group) {
        if (c->tsg)
            rm_free(g, g->device, c->tsg, "channel group (channel, engine objects, context share)", &ignored);
        free(c->group);
    }
    if (c->notifier)
        munmap((void *)c->notifier, NOTIFIER_BYTES);
    if (c->notifier_mem)
        rm_free(g, g->device, c->notifier_mem, "error notifier", &ignored);
    if (c->infra)
        vgt_gpu_mem_free(g, c->infra, &ignored);
    if (c->preamble)
        vgt_gpu_mem_free(g, c->preamble, &ignored);
    g->chans[c->index] = NULL;
    free(c);
}

uint32_t vgt_gpu_chan_class(const vgt_gpu_chan *c) { return c->cls; }
uint32_t vgt_gpu_chan_token(const vgt_gpu_chan *c) { return c->token; }

uint32_t vgt_gpu_chan_engine(const vgt_gpu_chan *c, uint32_t cls)
{
    for (uint32_t i = 0; i < c->nengines; i++)
        if (c->engine_class[i] == cls)
            return c->engine_handle[i];
    return 0;
}
