/* backend_gpu.c: the `gpu` backend operation table (vgt/backend.h) over the RM client in gpu.h.
 *
 * Mapping of operations:
 *   vaspace_create   the session's one UVM-owned VA space (a second is VGT_E_UNSUPPORTED)
 *   map / unmap      an allocation at exactly that VA (sysmem for SYSMEM/OS/UNKNOWN, vidmem for VIDMEM)
 *   map_alias        the memory of an existing allocation mapped again at a second VA (shared storage)
 *   mem_write/read   through the allocation's CPU mapping, refused outside our allocations
 *   channel_create   records the class and ring size; object_create records engine classes
 *   first submit     realises the channel: RM needs every engine object before UVM_REGISTER_CHANNEL,
 *                    and the trace announces objects one by one (a later object is VGT_E_UNSUPPORTED)
 *   submit           the raw GPFIFO entries go into our ring (the captured ring VA is not reproduced:
 *                    only what the entries point at is); STATE_ONLY submits run nothing
 *   sem_wait / idle  CPU polling with deadlines; every channel's error notifier is watched
 *   channel_state    (format 1.1 slices) the bindings, kept until the channel's next submission: then a
 *   channel_methods  push buffer of SET_OBJECTs and the state writes runs first (rm_preamble.c)
 * Not provided: produced()/write_log() (the GPU does not tell what it wrote; VGT_CAP_WRITE_LOG unset).
 *
 * Channel states:  recorded --(first submit / sem_wait / idle: realize())--> live --(close)--> freed
 *                  recorded --(realize fails)--> failed (every later use repeats the error)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"
#include "vgt/backend.h"
#include "vgt/nv_facts.h"

/* Channels the trace announces; only those that submit become live (at most VGT_GPU_MAX_CHANNELS). */
#define GPU_BACKEND_MAX_CHANNELS 256u

typedef struct gpu_channel {
    bool used, failed;
    bool dirty;                  /* submitted to since its last fence: idle() must issue one */
    bool pending;                /* a fence was issued and not yet seen */
    bool stalled;                /* the last wait for it timed out (an acquire a later submission releases) */
    bool faulted;                /* the error notifier fired: the channel is dead, later work is refused */
    bool async;                  /* live on an async context share of its own (its capture share's VEID) */
    vgt_error fault;             /* ... with this error (reported once, as an event) */
    vgt_backend_channel_desc desc;
    uint32_t engines[VGT_GPU_MAX_ENGINES], nengines;
    vgt_gpu_chan *live;
    vgt_error failure;
    /* format 1.1: state to run before the next submission (gpu_channel_state / gpu_channel_methods) */
    bool has_bindings;
    uint32_t bindings[VGT_SUBCHANNELS];
    vgt_state_method *writes;
    uint32_t nwrites;
} gpu_channel;

/* Time spent in each kind of backend operation, for finding what a replay waits on (bench/replay-gpu). */
typedef struct gpu_profile {
    uint64_t map_ns, zero_ns, write_ns, write_bytes, read_ns, read_bytes, realize_ns, submit_ns, wait_ns;
    uint64_t maps, writes, submits, waits;
} gpu_profile;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct vgt_backend {
    vgt_gpu *gpu;
    bool vas_created;
    gpu_channel chans[GPU_BACKEND_MAX_CHANNELS];
    vgt_backend_event_fn on_event;
    void *event_ctx;
    uint64_t seq;
    vgt_backend_counters counters;
    uint32_t subcontexts;        /* enum vgt_backend_subcontexts */
    bool zero_fill;              /* clear each new allocation (rm_zero.c); VGT_GPU_ZERO=0 turns it off */
    gpu_profile prof;            /* where the replay's time went (VGT_GPU_PROFILE=FILE: appended to FILE at close) */
};

static vgt_status gpu_probe(vgt_error *err)
{
    if (access("/dev/nvidiactl", F_OK) != 0)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "no NVIDIA GPU: /dev/nvidiactl not found");
    /* The backend's ioctls use the ABI table's layouts (rm_abi.h): only on a driver of the table's series.
     * An unchecked version of that series is allowed (the kernel checks every escape's size). */
    char ver[64], why[512];
    vgt_nv_running_driver(ver, sizeof ver);
    vgt_nv_driver_fit fit = vgt_nv_abi_driver_check(ver, why, sizeof why);
    if (fit == VGT_NV_DRIVER_OTHER_SERIES || fit == VGT_NV_DRIVER_UNKNOWN)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "gpu backend refused: %s", why);
    return VGT_OK;
}

_Static_assert(VGT_GPU_INFRA_SPAN <= VGT_BACKEND_RESERVED_SPAN, "backend.h's reserved span covers the infra range");
_Static_assert(VGT_GPU_DEFAULT_INFRA_VA == VGT_BACKEND_RESERVED_DEFAULT, "one default reserved VA");

static uint32_t gpu_caps(void)
{
    return VGT_CAP_ASYNC | VGT_CAP_SEMAPHORES | VGT_CAP_UPLOADS | VGT_CAP_COPIES | VGT_CAP_SHADERS | VGT_CAP_RASTER | VGT_CAP_MACROS |
           VGT_CAP_LANE_VERBATIM | VGT_CAP_LANE_SYNTH;
}

static vgt_status gpu_open(vgt_backend **out, const vgt_backend_config *cfg, vgt_error *err)
{
    *out = NULL;
    vgt_backend *b = calloc(1, sizeof *b);
    if (!b)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "gpu backend: out of memory");
    vgt_gpu_options o = { .infra_va = cfg ? cfg->reserved_va : 0 };
    vgt_status st = vgt_gpu_open(&o, &b->gpu, err);
    if (st != VGT_OK) {
        free(b);
        return st;
    }
    b->subcontexts = cfg ? cfg->subcontexts : VGT_SUBCTX_CAPTURED;
    const char *z = getenv("VGT_GPU_ZERO");   /* for measuring what clearing costs and changes */
    b->zero_fill = !z || strcmp(z, "0") != 0;
    *out = b;
    return VGT_OK;
}

static void gpu_close(vgt_backend *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < GPU_BACKEND_MAX_CHANNELS; i++)
        free(b->chans[i].writes);
    const char *prof_path = getenv("VGT_GPU_PROFILE");   /* a file: the library prints nothing itself */
    FILE *pf = prof_path && *prof_path ? fopen(prof_path, "a") : NULL;
    if (pf) {
        const gpu_profile *p = &b->prof;
        fprintf(pf, "gpu backend profile (ms): maps %.1f (%llu, clearing %.1f), host writes %.1f (%llu, %.1f MB), "
                "reads %.1f (%llu, %.1f MB), channel creation %.1f, submits %.1f (%llu), waits %.1f (%llu)\n",
                p->map_ns / 1e6, (unsigned long long)p->maps, p->zero_ns / 1e6, p->write_ns / 1e6,
                (unsigned long long)p->writes, p->write_bytes / 1e6, p->read_ns / 1e6, (unsigned long long)b->counters.host_reads, p->read_bytes / 1e6,
                p->realize_ns / 1e6, p->submit_ns / 1e6, (unsigned long long)p->submits, p->wait_ns / 1e6,
                (unsigned long long)p->waits);
        fclose(pf);
    }
    vgt_gpu_close(b->gpu);   /* frees the live channels and every allocation */
    free(b);
}

static void gpu_set_event_handler(vgt_backend *b, vgt_backend_event_fn fn, void *ctx)
{
    b->on_event = fn;
    b->event_ctx = ctx;
}

static void gpu_set_context(vgt_backend *b, uint64_t seq) { b->seq = seq; }

static void emit(vgt_backend *b, int kind, uint32_t ch, const char *msg, uint64_t pb_va)
{
    if (!b->on_event)
        return;
    vgt_backend_event ev = { .kind = kind, .channel = ch, .seq = b->seq, .msg = msg, .pb_va = pb_va };
    b->on_event(b->event_ctx, &ev);
}

static vgt_status check_vas(vgt_backend *b, uint32_t vas, vgt_error *err)
{
    if (!b->vas_created || vas != 1)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "VA space %u does not exist (the gpu backend has one: 1)",
                        vas);
    return VGT_OK;
}

static vgt_status gpu_vaspace_create(vgt_backend *b, uint32_t *vas, vgt_error *err)
{
    if (b->vas_created)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "the gpu backend replays into one GPU VA space; a "
                        "second was asked for");
    b->vas_created = true;
    *vas = 1;
    return VGT_OK;
}

static vgt_status gpu_map(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint32_t aperture, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    vgt_gpu_mem *m;
    vgt_gpu_mem_kind kind = aperture == 2 ? VGT_GPU_VIDMEM : VGT_GPU_SYSMEM;   /* trace.h VGT_APERTURE_VIDMEM */
    uint64_t t0 = now_ns();
    vgt_status st = vgt_gpu_mem_alloc(b->gpu, kind, va, size, &m, err);
    uint64_t t1 = now_ns();
    b->prof.map_ns += t1 - t0;
    b->prof.maps++;
    VGT_TRY(st);
    vgt_error zerr;
    st = b->zero_fill ? vgt_gpu_zero(b->gpu, va, size, &zerr) : VGT_OK;   /* zero, as RM gave it to the capture */
    b->prof.zero_ns += now_ns() - t1;
    if (st != VGT_OK) {
        char msg[VGT_ERROR_MSG_MAX + 120];
        snprintf(msg, sizeof msg, "%s; new allocations are not cleared from here on", zerr.msg);
        b->counters.unsupported++;
        emit(b, VGT_BEV_UNSUPPORTED, 0, msg, 0);
        b->zero_fill = false;
    }
    return VGT_OK;
}

static vgt_status gpu_unmap(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    vgt_gpu_mem *m = vgt_gpu_mem_find(b->gpu, va, size);
    if (!m || vgt_gpu_mem_va(m) != va || vgt_gpu_mem_size(m) != size)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "unmap 0x%llx+0x%llx: no allocation with exactly that "
                        "range", (unsigned long long)va, (unsigned long long)size);
    return vgt_gpu_mem_free(b->gpu, m, err);
}

/* One memory object at a second VA: the same RM memory mapped again (rm_memory.c vgt_gpu_mem_alias). */
static vgt_status gpu_map_alias(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint64_t src_va,
                                vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    vgt_gpu_mem *m;
    return vgt_gpu_mem_alias(b->gpu, va, size, src_va, &m, err);
}

static vgt_status gpu_mem_write(vgt_backend *b, uint32_t vas, uint64_t va, const void *src, uint64_t len,
                                vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    uint64_t t0 = now_ns();
    vgt_status st = vgt_gpu_write(b->gpu, va, src, (size_t)len, err);
    b->prof.write_ns += now_ns() - t0;
    b->prof.write_bytes += len;
    b->prof.writes++;
    b->counters.host_writes++;
    b->counters.host_write_bytes += len;
    return st;
}

static vgt_status gpu_mem_read(vgt_backend *b, uint32_t vas, uint64_t va, void *dst, uint64_t len, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    uint64_t t0 = now_ns();
    vgt_status st = vgt_gpu_read(b->gpu, va, dst, (size_t)len, err);
    b->prof.read_ns += now_ns() - t0;
    b->prof.read_bytes += len;
    b->counters.host_reads++;
    b->counters.host_read_bytes += len;
    return st;
}

static vgt_status gpu_channel_create(vgt_backend *b, const vgt_backend_channel_desc *d, uint32_t *ch, vgt_error *err)
{
    VGT_TRY(check_vas(b, d->vas, err));
    for (uint32_t i = 0; i < GPU_BACKEND_MAX_CHANNELS; i++)
        if (!b->chans[i].used) {
            b->chans[i] = (gpu_channel){ .used = true, .desc = *d };
            *ch = i;
            return VGT_OK;
        }
    return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "channel 0x%08x: the gpu backend holds at most %u channels",
                    d->handle, GPU_BACKEND_MAX_CHANNELS);
}

static vgt_status find_channel(vgt_backend *b, uint32_t ch, gpu_channel **out, vgt_error *err)
{
    if (ch >= GPU_BACKEND_MAX_CHANNELS || !b->chans[ch].used)
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "backend channel %u does not exist", ch);
    *out = &b->chans[ch];
    return VGT_OK;
}

static vgt_status gpu_object_create(vgt_backend *b, uint32_t ch, uint32_t cls, uint32_t handle, vgt_error *err)
{
    gpu_channel *c = NULL;
    VGT_TRY(find_channel(b, ch, &c, err));
    for (uint32_t i = 0; i < c->nengines; i++)
        if (c->engines[i] == cls)
            return VGT_OK;   /* one object per class serves every subchannel bound to it */
    if (c->live)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "object 0x%08x (class 0x%04x) on channel 0x%08x arrives "
                        "after the channel's first submission; RM needs every engine object before the channel is "
                        "registered with UVM", handle, cls, c->desc.handle);
    if (c->nengines == VGT_GPU_MAX_ENGINES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "object 0x%08x: channel 0x%08x already has %u engine classes",
                        handle, c->desc.handle, VGT_GPU_MAX_ENGINES);
    c->engines[c->nengines++] = cls;
    return VGT_OK;
}

/* The ring size: the captured one when it fits our slot, else the largest that does. */
static uint32_t ring_entries(uint32_t captured)
{
    uint32_t n = 2;
    while (n < captured && n < VGT_GPU_MAX_GPFIFO_ENTRIES)
        n <<= 1;
    return captured ? n : 1024;
}

/* Every channel gets the five engine classes the self-test proved together (compute, copy, 3D, I2M,
 * 2D) besides the trace's own. Two facts from the H200 (tests/gpu/run.sh, 2026-11-30): a channel with
 * only a copy object in our GRAPHICS TSG has no graphics context buffers, so UVM_REGISTER_CHANNEL fails
 * (NV_ERR_INVALID_OBJECT, "pGrCtxBufferMemDesc != NULL" in the kernel log); and the Vulkan driver
 * announces a compute object after the channel's first submission, when RM no longer takes one.
 * A channel on an async subcontext gets only compute and copy: 3D, 2D and I2M run on VEID 0 only. */
static void merge_default_engines(vgt_backend *b, gpu_channel *c, bool async)
{
    static const uint32_t defaults[] = { VGT_GPU_CLASS_HOPPER_COMPUTE, VGT_GPU_CLASS_HOPPER_COPY,
                                         VGT_GPU_CLASS_HOPPER_3D, VGT_GPU_CLASS_I2M, VGT_GPU_CLASS_TWOD };
    uint32_t merged[VGT_GPU_MAX_ENGINES], n = 0;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)   /* the proven order first */
        if (vgt_gpu_has_class(b->gpu, defaults[i]) && !(async && vgt_gpu_class_needs_sync(defaults[i])))
            merged[n++] = defaults[i];
    for (uint32_t j = 0; j < c->nengines && n < VGT_GPU_MAX_ENGINES; j++) {
        bool have = false;
        for (uint32_t i = 0; i < n; i++)
            have |= merged[i] == c->engines[j];
        if (!have)
            merged[n++] = c->engines[j];
    }
    memcpy(c->engines, merged, n * sizeof merged[0]);
    c->nengines = n;
}

/* The live channels of c's capture channel group (at most GPU_BACKEND_MAX_PEERS). */
#define GPU_BACKEND_MAX_PEERS 32u
static uint32_t group_peers(vgt_backend *b, const gpu_channel *c, gpu_channel **live, vgt_gpu_peer *peers)
{
    uint32_t n = 0;
    if (!c->desc.group)
        return 0;
    for (uint32_t i = 0; i < GPU_BACKEND_MAX_CHANNELS && n < GPU_BACKEND_MAX_PEERS; i++) {
        gpu_channel *o = &b->chans[i];
        if (o != c && o->used && o->live && o->desc.group == c->desc.group &&
            o->desc.group_client == c->desc.group_client) {
            live[n] = o;
            peers[n++] = (vgt_gpu_peer){ .context_share = o->desc.context_share, .async = o->async };
        }
    }
    return n;
}

static bool captured_needs_sync(const gpu_channel *c)
{
    for (uint32_t i = 0; i < c->nengines; i++)
        if (vgt_gpu_class_needs_sync(c->engines[i]))
            return true;
    return false;
}

/* A channel of c's group, not live yet, with another context share and a class that needs VEID 0: c,
 * opening the group's TSG without needing it, leaves VEID 0 to that one. */
static bool sibling_needs_sync(vgt_backend *b, const gpu_channel *c)
{
    for (uint32_t i = 0; c->desc.group && c->desc.context_share && i < GPU_BACKEND_MAX_CHANNELS; i++) {
        const gpu_channel *o = &b->chans[i];
        if (o != c && o->used && !o->live && o->desc.group == c->desc.group &&
            o->desc.group_client == c->desc.group_client && o->desc.context_share &&
            o->desc.context_share != c->desc.context_share && captured_needs_sync(o))
            return true;
    }
    return false;
}

/* The channel's place (subctx.c): its group's TSG when a peer lives, on the peer's subcontext or an
 * async one of its own, as its captured context share says (--subcontexts group: always the peer's;
 * tsg: never a peer); the options to create it with. */
static vgt_gpu_placement plan(vgt_backend *b, gpu_channel *c, vgt_gpu_chan_options *o, bool *on_async)
{
    gpu_channel *live[GPU_BACKEND_MAX_PEERS];
    vgt_gpu_peer peers[GPU_BACKEND_MAX_PEERS];
    uint32_t n = b->subcontexts == VGT_SUBCTX_TSG ? 0 : group_peers(b, c, live, peers), at = 0;
    uint32_t share = b->subcontexts == VGT_SUBCTX_GROUP ? 0 : c->desc.context_share;   /* 0: any peer's */
    bool sync = captured_needs_sync(c);
    vgt_gpu_placement p = vgt_gpu_place(share, sync, peers, n, &at);
    *o = (vgt_gpu_chan_options){ .channel_class = c->desc.cls, .gpfifo_entries = ring_entries(c->desc.entries),
                                 .group_with = n ? live[at]->live : NULL };
    o->own_subcontext = p == VGT_GPU_PLACE_SUBCONTEXT || p == VGT_GPU_PLACE_SUBCONTEXT_SYNC;
    bool captured_async = c->desc.has_share_flags && (c->desc.share_flags & 3u) == 1u;   /* cl9067.h ASYNC */
    o->async_subcontext = p == VGT_GPU_PLACE_SUBCONTEXT ||
                          (p == VGT_GPU_PLACE_OWN_TSG && b->subcontexts == VGT_SUBCTX_CAPTURED && !sync &&
                           (sibling_needs_sync(b, c) || captured_async));
    *on_async = o->async_subcontext || (p == VGT_GPU_PLACE_SHARE && n && live[at]->async);
    /* The runqueue and group thread the capture allocated the channel with, on an async subcontext only:
     * RM refuses a compute object on a runqueue-1 channel of the sync subcontext (H200: CUDA's channels,
     * whose captured share was async, joined our sync one: NV_ERR_INVALID_OBJECT), and accepts it on an
     * async one (vk_triangle's compute queue, flags 0x10000030). */
    if (b->subcontexts == VGT_SUBCTX_CAPTURED && c->desc.group && c->desc.has_alloc_flags && *on_async)
        o->alloc_flags = c->desc.alloc_flags;
    return p;
}

static void say_fallback(vgt_backend *b, gpu_channel *c, const char *what, const char *why, const char *then)
{
    char msg[VGT_ERROR_MSG_MAX + 400];
    snprintf(msg, sizeof msg, "channel 0x%08x (capture group 0x%08x, context share 0x%08x): %s (%s); %s",
             c->desc.handle, c->desc.group, c->desc.context_share, what, why, then);
    b->counters.unsupported++;
    emit(b, VGT_BEV_UNSUPPORTED, (uint32_t)(c - b->chans), msg, 0);
}

/* The backend channel that is live as v (a peer), NULL if none. */
static const gpu_channel *live_channel(const vgt_backend *b, const vgt_gpu_chan *v)
{
    for (uint32_t i = 0; v && i < GPU_BACKEND_MAX_CHANNELS; i++)
        if (b->chans[i].used && b->chans[i].live == v)
            return &b->chans[i];
    return NULL;
}

/* Create the planned channel; each refusal falls back one step (own subcontext -> the peer's
 * subcontext -> a TSG of its own), said as an event, rather than losing the channel. Neither a context
 * share of its own in a joined TSG nor a joined TSG is proven on the H200 yet. c->async: whether the
 * channel ends on an async share (its peers' placement depends on it). */
static vgt_status create_with_fallbacks(vgt_backend *b, gpu_channel *c, vgt_gpu_chan_options *o, bool on_async)
{
    vgt_status st = vgt_gpu_chan_create(b->gpu, o, &c->live, &c->failure);
    if (st != VGT_OK && o->own_subcontext) {
        say_fallback(b, c, "a subcontext of its own in the group's TSG failed", c->failure.msg,
                     "put on its peer's subcontext: the MME and compute state of the two are shared");
        const gpu_channel *peer = live_channel(b, o->group_with);
        o->own_subcontext = false;
        on_async = o->async_subcontext = peer && peer->async;
        if (!on_async)
            o->alloc_flags = 0;   /* see plan(): runqueue flags only on an async subcontext */
        st = vgt_gpu_chan_create(b->gpu, o, &c->live, &c->failure);
    }
    if (st != VGT_OK && o->group_with) {
        say_fallback(b, c, "joining the TSG of its capture channel group failed", c->failure.msg,
                     "created in a TSG of its own: state the group's other channels set is missing");
        o->group_with = NULL;
        o->alloc_flags = 0;
        on_async = o->async_subcontext = false;
        st = vgt_gpu_chan_create(b->gpu, o, &c->live, &c->failure);
    }
    c->async = st == VGT_OK && on_async;
    return st;
}

static vgt_status realize_untimed(vgt_backend *b, gpu_channel *c, vgt_error *err)
{
    if (c->live)
        return VGT_OK;
    if (c->failed) {
        if (err)
            *err = c->failure;
        return c->failure.code;
    }
    vgt_gpu_chan_options o;
    bool on_async;
    vgt_gpu_placement p = plan(b, c, &o, &on_async);
    if (p == VGT_GPU_PLACE_SHARE_SYNC_TAKEN)
        say_fallback(b, c, "has a context share of its own in the capture but a 3D, 2D or I2M class",
                     "only VEID 0 runs those, and a peer holds it", "put on the group's sync subcontext");
    merge_default_engines(b, c, on_async);
    o.engines = c->engines;
    o.nengines = c->nengines;
    vgt_status st = create_with_fallbacks(b, c, &o, on_async);
    if (st != VGT_OK) {
        c->failed = true;
        vgt_error_prefix(&c->failure, "channel 0x%08x", c->desc.handle);
        if (err)
            *err = c->failure;
    }
    return st;
}

static vgt_status realize(vgt_backend *b, gpu_channel *c, vgt_error *err)
{
    if (c->live)
        return VGT_OK;
    uint64_t t0 = now_ns();
    vgt_status st = realize_untimed(b, c, err);
    b->prof.realize_ns += now_ns() - t0;
    return st;
}

/* The first fault of a channel is an event (with the RM error, GPGet/GPPut and the push-buffer Get
 * pointer: the method window); the channel is dead afterwards. */
static void note_fault(vgt_backend *b, uint32_t ch, const vgt_error *e)
{
    gpu_channel *c = &b->chans[ch];
    if (c->faulted)
        return;
    c->faulted = true;
    c->dirty = false;
    c->fault = *e;
    b->counters.faults++;
    vgt_gpu_chan_state st;
    vgt_gpu_chan_state_get(c->live, &st);
    emit(b, VGT_BEV_FAULT, ch, e->msg, st.pb_get);
}

/* ---- format 1.1: resuming a channel cut out of a longer trace ---- */

static vgt_status gpu_channel_state(vgt_backend *b, uint32_t ch, const vgt_rec_channel_state *cs, vgt_error *err)
{
    gpu_channel *c = NULL;
    VGT_TRY(find_channel(b, ch, &c, err));
    for (unsigned s = 0; s < VGT_SUBCHANNELS; s++)
        c->bindings[s] = cs->subch_class[s];
    c->has_bindings = true;
    return VGT_OK;
}

static vgt_status gpu_channel_methods(vgt_backend *b, uint32_t ch, const vgt_state_method *m, uint32_t n, vgt_error *err)
{
    gpu_channel *c = NULL;
    VGT_TRY(find_channel(b, ch, &c, err));
    uint64_t total = (uint64_t)c->nwrites + n;
    if (vgt_gpu_pb_state_bound((uint32_t)(total > UINT32_MAX ? UINT32_MAX : total)) * 4u > VGT_GPU_PREAMBLE_BYTES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "channel 0x%08x: %llu state writes need more than the %llu "
                        "bytes of push buffer the backend keeps for them", c->desc.handle, (unsigned long long)total,
                        (unsigned long long)VGT_GPU_PREAMBLE_BYTES);
    vgt_state_method *v = realloc(c->writes, (size_t)total * sizeof *v);
    if (!v && total)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "channel 0x%08x: no memory for %llu state writes",
                        c->desc.handle, (unsigned long long)total);
    if (n)
        memcpy(v + c->nwrites, m, (size_t)n * sizeof *v);
    c->writes = v;
    c->nwrites = (uint32_t)total;
    return VGT_OK;
}

/* Before the channel's next submission: SET_OBJECT per binding, then the state writes, in one push buffer. */
static vgt_status run_pending_state(gpu_channel *c, vgt_error *err)
{
    if (!c->has_bindings && !c->nwrites)
        return VGT_OK;
    uint64_t cap = vgt_gpu_pb_state_bound(c->nwrites);
    uint32_t *dw = malloc(cap * sizeof *dw);
    if (!dw)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "channel 0x%08x: no memory for a state push buffer",
                        c->desc.handle);
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, (uint32_t)cap);
    if (c->has_bindings)
        vgt_gpu_pb_bindings(&pb, c->bindings);
    vgt_gpu_pb_state_methods(&pb, c->writes, c->nwrites);
    vgt_status st = vgt_pbw_check(&pb, err);
    if (st == VGT_OK)
        st = vgt_gpu_chan_run_pb(c->live, dw, pb.n, err);
    free(dw);
    if (st != VGT_OK) {
        vgt_error_prefix(err, "channel 0x%08x: restoring its state before the first submission", c->desc.handle);
        return st;
    }
    c->has_bindings = false;
    free(c->writes);
    c->writes = NULL;
    c->nwrites = 0;
    return VGT_OK;
}

static vgt_status gpu_submit_untimed(vgt_backend *b, uint32_t ch, const uint64_t *entries, uint32_t count,
                                     uint32_t flags, vgt_error *err)
{
    gpu_channel *c = NULL;
    VGT_TRY(find_channel(b, ch, &c, err));
    if (flags & VGT_SUBMIT_STATE_ONLY)
        return VGT_OK;
    VGT_TRY(realize(b, c, err));
    if (c->faulted)
        return VGT_FAIL(err, VGT_E_FAULT, VGT_NO_OFFSET, "channel 0x%08x faulted earlier (%s); not submitted",
                        c->desc.handle, c->fault.msg);
    vgt_error e;
    vgt_error_clear(&e);
    vgt_status st = run_pending_state(c, &e);
    if (st == VGT_OK)
        st = vgt_gpu_submit(c->live, entries, count, &e);
    if (st == VGT_E_FAULT)
        note_fault(b, ch, &e);
    if (st != VGT_OK && err)
        *err = e;
    if (st == VGT_OK) {
        c->dirty = true;
        b->counters.submits++;
        b->counters.entries += count;
    }
    return st;
}

static vgt_status check_all_channels(vgt_backend *b, vgt_error *err)
{
    for (uint32_t i = 0; i < GPU_BACKEND_MAX_CHANNELS; i++)
        if (b->chans[i].live && !b->chans[i].faulted) {
            vgt_error e;
            vgt_status st = vgt_gpu_chan_check(b->chans[i].live, &e);
            if (st != VGT_OK) {
                note_fault(b, i, &e);
                if (err)
                    *err = e;
                return st;
            }
        }
    return VGT_OK;
}

static bool value_reached(vgt_gpu *g, uint64_t va, uint32_t size, uint64_t value, uint64_t *got, vgt_error *err)
{
    uint64_t v = 0;
    if (vgt_gpu_read(g, va, &v, size, err) != VGT_OK)
        return false;
    *got = v;
    return v >= value;
}

static vgt_status gpu_sem_wait_untimed(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t value, uint32_t size,
                                       uint64_t timeout_ns, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    if (size != 4 && size != 8)
        return VGT_FAIL(err, VGT_E_ARG, va, "semaphore size %u: must be 4 or 8", size);
    if (!vgt_gpu_mem_find(b->gpu, va, size))
        return VGT_FAIL(err, VGT_E_FAULT, va, "semaphore at VA 0x%llx: not inside one of our allocations",
                        (unsigned long long)va);
    struct timespec pause = { 0, 20000 };
    uint64_t got = 0, waited_ns = 0;
    for (;;) {
        if (value_reached(b->gpu, va, size, value, &got, err))
            return VGT_OK;
        VGT_TRY(check_all_channels(b, err));
        if (waited_ns >= timeout_ns)
            break;
        nanosleep(&pause, NULL);
        waited_ns += 20000;
    }
    return VGT_FAIL(err, VGT_E_TIMEOUT, va, "semaphore at VA 0x%llx: found 0x%llx, waited %llu ms for >= 0x%llx",
                    (unsigned long long)va, (unsigned long long)got, (unsigned long long)(timeout_ns / 1000000),
                    (unsigned long long)value);
}

#define GPU_IDLE_DEFAULT_MS 10000u

static uint64_t mono_ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static vgt_status gpu_idle_untimed(vgt_backend *b, uint64_t timeout_ns, vgt_error *err)
{
    /* 0 means "the default", as on sim: a finished replay waits this long for the GPU */
    uint64_t ms64 = timeout_ns ? timeout_ns / 1000000 : GPU_IDLE_DEFAULT_MS;
    uint32_t ms = ms64 > UINT32_MAX ? UINT32_MAX : ms64 ? (uint32_t)ms64 : 1;
    vgt_status first = VGT_OK;
    uint64_t deadline = mono_ms_now() + ms;
    for (uint32_t i = 0; i < GPU_BACKEND_MAX_CHANNELS; i++) {
        gpu_channel *c = &b->chans[i];
        if (!c->live || c->faulted || (!c->dirty && !c->pending))
            continue;
        vgt_error e;
        vgt_status st = VGT_OK;
        if (c->dirty && (st = vgt_gpu_chan_fence_issue(c->live, &e)) == VGT_OK)
            c->dirty = false, c->pending = true;
        /* a stalled channel is only polled between submissions; the final idle (timeout 0) waits fully.
         * One deadline for the whole call: N blocked channels do not cost N timeouts. */
        uint64_t now = mono_ms_now();
        uint32_t left = now >= deadline ? 1 : (uint32_t)(deadline - now);
        if (st == VGT_OK)
            st = vgt_gpu_chan_fence_wait(c->live, c->stalled && timeout_ns ? 1 : left, &e);
        bool was_stalled = c->stalled;
        c->stalled = st == VGT_E_TIMEOUT;
        if (st == VGT_OK) {
            c->pending = false;
            continue;
        }
        if (st == VGT_E_FAULT)
            note_fault(b, i, &e);
        else if (!was_stalled)
            b->counters.blocked_waits++;   /* still running (an acquire, or slow work): polled again later */
        if (first == VGT_OK) {
            first = st;
            if (err) {
                *err = e;
                vgt_error_prefix(err, "idle, channel 0x%08x", c->desc.handle);
            }
        }
    }
    return first;
}

static vgt_status gpu_produced(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err)
{
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, va, "the gpu backend cannot tell which bytes the GPU produced");
}

static void gpu_write_log_reset(vgt_backend *b) { (void)b; }

static const vgt_backend_write *gpu_write_log(vgt_backend *b, uint32_t *count)
{
    *count = 0;
    return NULL;
}

/* Before the first submission: create every channel that has engine objects already (the captured
 * programs create their channels and objects at start-up), so the replay's timing, like the capture's
 * span, starts with the first submission. Best effort: it leaves room for the backend's own channel and
 * for channels created later, and a channel that cannot be created here is tried again, as before, at
 * its first submission (where a failure is said). */
#define GPU_PREPARE_SPARE 4u   /* live channels prepare leaves free: rm_zero.c's and later ones */

static void gpu_prepare(vgt_backend *b)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < GPU_BACKEND_MAX_CHANNELS; i++)
        live += b->chans[i].used && b->chans[i].live;
    for (uint32_t i = 0; i < GPU_BACKEND_MAX_CHANNELS && live + GPU_PREPARE_SPARE < VGT_GPU_MAX_CHANNELS; i++) {
        gpu_channel *c = &b->chans[i];
        if (!c->used || c->live || c->failed || !c->nengines)
            continue;
        if (realize(b, c, NULL) == VGT_OK)
            live++;
        else
            c->failed = false;   /* not final: its first submission tries again and reports */
    }
}

/* The timed entries of the op table (gpu_profile): submit includes a channel's lazy creation, which
 * realize() also counts apart. */
static vgt_status gpu_submit(vgt_backend *b, uint32_t ch, const uint64_t *entries, uint32_t count, uint32_t flags,
                             vgt_error *err)
{
    uint64_t t0 = now_ns();
    vgt_status st = gpu_submit_untimed(b, ch, entries, count, flags, err);
    b->prof.submit_ns += now_ns() - t0;
    b->prof.submits++;
    return st;
}

static vgt_status gpu_sem_wait(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t value, uint32_t size,
                               uint64_t timeout_ns, vgt_error *err)
{
    uint64_t t0 = now_ns();
    vgt_status st = gpu_sem_wait_untimed(b, vas, va, value, size, timeout_ns, err);
    b->prof.wait_ns += now_ns() - t0;
    b->prof.waits++;
    return st;
}

static vgt_status gpu_idle(vgt_backend *b, uint64_t timeout_ns, vgt_error *err)
{
    uint64_t t0 = now_ns();
    vgt_status st = gpu_idle_untimed(b, timeout_ns, err);
    b->prof.wait_ns += now_ns() - t0;
    b->prof.waits++;
    return st;
}

static void gpu_counters(vgt_backend *b, vgt_backend_counters *out) { *out = b->counters; }

/* The `gpu` operation table (vgt/backend.h). */
const vgt_backend_ops vgt_backend_gpu = {
    .name = "gpu",
    .summary = "the H200 through RM/UVM ioctls: captured push buffers run unchanged at their VAs",
    .probe = gpu_probe,
    .caps = gpu_caps,
    .limits_note = "the GPU does not report which bytes it wrote (no write log); one VA space",
    .open = gpu_open,
    .close = gpu_close,
    .set_event_handler = gpu_set_event_handler,
    .set_context = gpu_set_context,
    .vaspace_create = gpu_vaspace_create,
    .map = gpu_map,
    .unmap = gpu_unmap,
    .map_alias = gpu_map_alias,
    .mem_write = gpu_mem_write,
    .mem_read = gpu_mem_read,
    .channel_create = gpu_channel_create,
    .object_create = gpu_object_create,
    .channel_state = gpu_channel_state,
    .channel_methods = gpu_channel_methods,
    .submit = gpu_submit,
    .sem_wait = gpu_sem_wait,
    .idle = gpu_idle,
    .prepare = gpu_prepare,
    .produced = gpu_produced,
    .write_log_reset = gpu_write_log_reset,
    .write_log = gpu_write_log,
    .counters = gpu_counters,
};
