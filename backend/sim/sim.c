/* sim.c: the `sim` backend's operation table: a software model of the GPU front end that runs
 * anywhere (CI, a laptop). What it does and does not do is in sim.h and backend/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "vgt/grow.h"

static vgt_status sim_probe(vgt_error *err) { return VGT_OK; }

static uint32_t sim_caps(void)
{
    return VGT_CAP_SEMAPHORES | VGT_CAP_UPLOADS | VGT_CAP_COPIES | VGT_CAP_MACROS | VGT_CAP_WRITE_LOG |
           VGT_CAP_LANE_VERBATIM | VGT_CAP_LANE_SYNTH | VGT_CAP_DECODES;
}

static vgt_status sim_open(vgt_backend **out, const vgt_backend_config *cfg, vgt_error *err)
{
    vgt_backend *b = calloc(1, sizeof *b);
    if (!b) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "sim: out of memory");
    if (cfg) b->cfg = *cfg;
    if (!b->cfg.max_memory_bytes) b->cfg.max_memory_bytes = VGT_BACKEND_DEFAULT_MAX_MEMORY;
    if (!b->cfg.max_methods_per_submit) b->cfg.max_methods_per_submit = VGT_BACKEND_DEFAULT_MAX_METHODS;
    if (!b->cfg.max_queued_methods) b->cfg.max_queued_methods = VGT_BACKEND_DEFAULT_MAX_QUEUED;
    if (!b->cfg.max_channels) b->cfg.max_channels = VGT_BACKEND_DEFAULT_MAX_CHANNELS;
    if (!b->cfg.max_copy_bytes) b->cfg.max_copy_bytes = VGT_BACKEND_DEFAULT_MAX_COPY;
    vgt_mme_budget_init(&b->mme_budget, 0, 0, 0);
    b->copy_buf = malloc(64u << 10);
    b->copy_mask = malloc(64u << 10);
    if (!b->copy_buf || !b->copy_mask) {
        free(b->copy_buf);
        free(b->copy_mask);
        free(b);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "sim: out of memory");
    }
    *out = b;
    return VGT_OK;
}

static void sim_close(vgt_backend *b)
{
    if (!b) return;
    for (uint32_t i = 0; i < b->nchans; i++) sim_channel_free(b->chans[i]);
    free(b->chans);
    for (uint32_t i = 0; i < b->nvas; i++) sim_mem_free(&b->mem[i]);
    free(b->fetch_buf);
    free(b->copy_buf);
    free(b->copy_mask);
    free(b);
}

static void sim_set_event_handler(vgt_backend *b, vgt_backend_event_fn fn, void *ctx)
{
    b->ev_fn = fn;
    b->ev_ctx = ctx;
}

static void sim_set_context(vgt_backend *b, uint64_t seq) { b->seq = seq; }

static vgt_status sim_vaspace_create(vgt_backend *b, uint32_t *vas, vgt_error *err)
{
    if (b->nvas == SIM_MAX_VAS) return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "sim: more than %u VA spaces", SIM_MAX_VAS);
    /* the memory limit is shared: each VA space may use all of it, the page store is bounded per space */
    sim_mem_init(&b->mem[b->nvas], b->cfg.max_memory_bytes);
    *vas = b->nvas++;
    return VGT_OK;
}

static vgt_status check_vas(vgt_backend *b, uint32_t vas, vgt_error *err)
{
    if (vas < b->nvas) return VGT_OK;
    return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "sim: no VA space %u (%u exist)", vas, b->nvas);
}

static vgt_status sim_map(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint32_t aperture, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    return sim_mem_map(&b->mem[vas], va, size, aperture, err);
}

static vgt_status sim_unmap(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    return sim_mem_unmap(&b->mem[vas], va, size, err);
}

static vgt_status sim_map_alias(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint64_t src_va,
                                vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    return sim_mem_map_alias(&b->mem[vas], va, size, src_va, err);
}

static vgt_status sim_write(vgt_backend *b, uint32_t vas, uint64_t va, const void *src, uint64_t len, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    VGT_TRY(sim_mem_write(&b->mem[vas], va, src, len, SIM_HOST, "host write", err));
    b->ctr.host_writes++;
    b->ctr.host_write_bytes += len;
    sim_run_blocked(b);   /* a host write may release a blocked acquire */
    return VGT_OK;
}

static vgt_status sim_read(vgt_backend *b, uint32_t vas, uint64_t va, void *dst, uint64_t len, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    b->ctr.host_reads++;
    b->ctr.host_read_bytes += len;
    return sim_mem_read(&b->mem[vas], va, dst, len, "host read", err);
}

static vgt_status sim_channel_create(vgt_backend *b, const vgt_backend_channel_desc *d, uint32_t *ch, vgt_error *err)
{
    VGT_TRY(check_vas(b, d->vas, err));
    if (b->nchans >= b->cfg.max_channels)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "sim: more than %u channels", b->cfg.max_channels);
    if (vgt_grow(&b->chans, &b->cap_chans, b->nchans + 1ull, 16))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "sim: out of memory");
    sim_channel *c = calloc(1, sizeof *c);
    if (!c) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "sim: out of memory");
    c->id = b->nchans, c->vas = d->vas, c->cls = d->cls, c->handle = d->handle;
    c->ring_va = d->ring_va, c->entries = d->entries;
    if (sim_channel_init(b, c, err) != VGT_OK) {
        sim_channel_free(c);
        return err ? err->code : VGT_E_NOMEM;
    }
    b->chans[b->nchans++] = c;
    *ch = c->id;
    return VGT_OK;
}

static vgt_status sim_object_create(vgt_backend *b, uint32_t ch, uint32_t cls, uint32_t handle, vgt_error *err)
{
    if (ch >= b->nchans) return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "sim: no channel %u", ch);
    sim_channel *c = b->chans[ch];
    if (c->object_count == SIM_MAX_OBJECTS_PER_CHANNEL)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "sim: more than %u engine objects on channel 0x%x",
                        SIM_MAX_OBJECTS_PER_CHANNEL, c->handle);
    c->object_cls[c->object_count++] = cls;
    if (sim_family_of(cls) == SIM_FAM_NONE)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "sim: class 0x%04x (object 0x%x) is not modelled; its methods will be counted only",
                        cls, handle);
    return VGT_OK;
}

static vgt_status sim_channel_state(vgt_backend *b, uint32_t ch, const vgt_rec_channel_state *cs, vgt_error *err)
{
    if (ch >= b->nchans) return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "sim: no channel %u", ch);
    sim_channel *c = b->chans[ch];
    vgt_pb_state_adopt(&c->pb, c->cls, cs);
    return VGT_OK;
}

/* Format 1.1 CHANNEL_METHODS: each write goes the way of a pushed method (MME tracker, then the semantic
 * tracker: the MME program and the class state land where a later submission expects them), behind a
 * blocked acquire when the channel waits; the methods counter is left as submitted work made it. */
static vgt_status sim_channel_methods(vgt_backend *b, uint32_t ch, const vgt_state_method *sm, uint32_t n, vgt_error *err)
{
    if (ch >= b->nchans) return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "sim: no channel %u", ch);
    sim_channel *c = b->chans[ch];
    uint64_t counted = b->ctr.methods;
    for (uint32_t i = 0; i < n; i++) {
        if (sm[i].subch >= VGT_SUBCHANNELS || sm[i].method > VGT_MAX_METHOD_ADDRESS)
            return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "sim: state write %u names subchannel %u method 0x%x", i,
                            sm[i].subch, sm[i].method);
        vgt_method m = {.subch = sm[i].subch, .mthd = sm[i].method, .data = sm[i].value, .first = 1,
                        .is_host = vgt_nv_is_host_method(sm[i].method), .pos = {b->seq, 0, i}};
        m.cls = m.is_host ? c->pb.channel_class : c->pb.subch_class[m.subch];
        c->qins = c->qtail;
        b->cur = c;
        if (sim_blocked(c)) sim_queue_insert(b, c, &m, 0);
        else sim_exec_method(b, c, &m, 0);
    }
    b->ctr.methods = counted;
    return VGT_OK;
}

static vgt_status sim_sem_wait(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t value, uint32_t size,
                               uint64_t timeout_ns, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    if (size != 4 && size != 8) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "sim: semaphore size %u is not 4 or 8", size);
    sim_run_blocked(b);
    uint8_t buf[8] = {0};
    VGT_TRY(sim_mem_read(&b->mem[vas], va, buf, size, "semaphore wait", err));
    uint64_t v = 0;
    for (uint32_t i = size; i-- > 0;) v = (v << 8) | buf[i];
    if (v >= value) return VGT_OK;
    return VGT_FAIL(err, VGT_E_TIMEOUT, VGT_NO_OFFSET,
                    "sim: semaphore at VA 0x%llx holds 0x%llx, waiting for 0x%llx can never finish (no channel can make progress)",
                    (unsigned long long)va, (unsigned long long)v, (unsigned long long)value);
}

static vgt_status sim_known(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err)
{
    if (vas >= b->nvas) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "sim: VA space %u does not exist", vas);
    return sim_mem_known(&b->mem[vas], va, len, mask, err);
}

static vgt_status sim_produced(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err)
{
    VGT_TRY(check_vas(b, vas, err));
    return sim_mem_produced(&b->mem[vas], va, len, mask, err);
}

static void sim_write_log_reset(vgt_backend *b)
{
    for (uint32_t i = 0; i < b->nvas; i++) b->mem[i].nlog = 0;
}

/* The log of VA space 0 (the engine replays one address space: the trace model's). */
static const vgt_backend_write *sim_write_log(vgt_backend *b, uint32_t *count)
{
    *count = b->nvas ? b->mem[0].nlog : 0;
    return b->nvas ? b->mem[0].log : NULL;
}

static void sim_counters(vgt_backend *b, vgt_backend_counters *out) { *out = b->ctr; }

const vgt_backend_ops vgt_backend_sim = {
    .name = "sim",
    .summary = "software model of the GPU front end (semaphores, uploads, copies, QMD releases, macros)",
    .probe = sim_probe,
    .caps = sim_caps,
    .limits_note = "shaders not executed; draws not rasterized",
    .open = sim_open,
    .close = sim_close,
    .set_event_handler = sim_set_event_handler,
    .set_context = sim_set_context,
    .vaspace_create = sim_vaspace_create,
    .map = sim_map,
    .unmap = sim_unmap,
    .map_alias = sim_map_alias,
    .mem_write = sim_write,
    .mem_read = sim_read,
    .channel_create = sim_channel_create,
    .object_create = sim_object_create,
    .channel_state = sim_channel_state,
    .channel_methods = sim_channel_methods,
    .submit = sim_submit,
    .sem_wait = sim_sem_wait,
    .idle = sim_idle,
    .produced = sim_produced,
    .known = sim_known,
    .write_log_reset = sim_write_log_reset,
    .write_log = sim_write_log,
    .counters = sim_counters,
};
