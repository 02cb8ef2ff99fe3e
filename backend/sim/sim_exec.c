/* sim_exec.c: what the sim does with a method. The meaning of methods is NOT re-derived here: every
 * method goes to analyze's semantic tracker (events.h), and the sim acts on the events it delivers:
 *
 *   SEM_RELEASE  write the payload (32/64-bit, + timestamp for four-word structures) or apply the
 *                reduction; host, report, copy-engine and QMD releases alike
 *   SEM_ACQUIRE  compare (ACQUIRE, ACQ_STRICT_GEQ, ACQ_CIRC_GEQ, ACQ_AND, ACQ_NOR); when not satisfied
 *                the channel blocks on it (sim_fetch.c runs it again after later writes)
 *   REPORT       a counter/timestamp report: written as zeros, never "produced" (not reproducible)
 *   UPLOAD       the inline-to-memory bytes written line by line at pitch; its completion semaphore
 *   COPY         linear, pitch or block-linear copy, remapped copy or memset (sim_copy.c)
 *   LAUNCH       counted (shaders are not executed); an inline QMD is stored at its address; the QMD
 *                runs (sim_qmd.c: its releases, then its dependent QMDs), or waits armed for the QMD
 *                that schedules it (REQUIRE_SCHEDULING_PCAS). As the shader may have written
 *                anywhere, every byte of memory becomes unknown (sim_mem_invalidate): later checks
 *                compare only what the front end wrote after it
 *   DRAW         counted, not rasterized; memory becomes unknown as for a launch
 * Before that, 3D and compute methods feed the channel's MME tracker (mme.h) with their class: a
 * completed macro call's emitted methods are executed like any other method, on the calling subchannel.
 *
 * The one field the UPLOAD event does not carry, the I2M completion semaphore (SET_I2M_SEMAPHORE_A/B/C and
 * LAUNCH_DMA SEMAPHORE_STRUCT_SIZE, REDUCTION_ENABLE, REDUCTION_OP, REDUCTION_FORMAT of the inline-to-memory
 * methods: the class constants of KEPLER_INLINE_TO_MEMORY_B, the same in the compute class), is kept here
 * per object.
 * Which classes the sim knows, and their families, are the facts' (vgt_nv_class_family: every class of the
 * class tables and of trace-format/facts/families.txt). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "vgt/nv/cla140.h"
#include "vgt/nv/clcb97.h"
#include "vgt/nv_facts.h"
#include "vgt/surface.h"

/* ---- class families: which objects have an MME, and which classes the sim knows at all ---- */
int sim_family_of(uint32_t cls) { return vgt_nv_class_family(cls); }

/* events.h reductions -> sim_sem.c's; the float ones are not modelled (-1). */
static int red_of(unsigned r)
{
    static const int8_t map[] = {[VGT_RED_ADD] = SIM_RED_ADD, [VGT_RED_MIN] = SIM_RED_MIN, [VGT_RED_MAX] = SIM_RED_MAX,
                                 [VGT_RED_INC] = SIM_RED_INC, [VGT_RED_DEC] = SIM_RED_DEC, [VGT_RED_AND] = SIM_RED_AND,
                                 [VGT_RED_OR] = SIM_RED_OR, [VGT_RED_XOR] = SIM_RED_XOR};
    return r >= VGT_RED_ADD && r <= VGT_RED_XOR ? map[r] : -1;
}

/* events.h acquire ops -> sim_sem.c comparisons. */
static int cmp_of(unsigned op)
{
    switch (op) {
    case VGT_SEM_OP_ACQUIRE: return SIM_ACQ_EQ;
    case VGT_SEM_OP_ACQ_STRICT_GEQ: return SIM_ACQ_STRICT_GEQ;
    case VGT_SEM_OP_ACQ_CIRC_GEQ: return SIM_ACQ_CIRC_GEQ;
    case VGT_SEM_OP_ACQ_AND: return SIM_ACQ_AND;
    case VGT_SEM_OP_ACQ_NOR: return SIM_ACQ_NOR;
    default: return -1;
    }
}

static inline uint64_t addr(uint32_t upper, uint32_t lower)
{
    return (uint64_t)VGT_NV_GET(upper, NVA140_SET_I2M_SEMAPHORE_A_OFFSET_UPPER) << 32 | lower;
}

static void unsupported(vgt_backend *b, const vgt_method *m, const char *what)
{
    b->ctr.unsupported++;
    sim_event(b, VGT_BEV_UNSUPPORTED, m, "%s", what);
}

void sim_not_modelled(vgt_backend *b, const vgt_method *m, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    unsupported(b, m, msg);
}

/* ---- semaphores ---- */
void sim_apply_release(vgt_backend *b, const vgt_method *m, const vgt_ev_sem *s)
{
    if (s->op == VGT_SEM_OP_RELEASE) {
        sim_sem_release(b, m, s->va, s->payload, s->size, (s->flags & VGT_SEM_FLAG_TIMESTAMP) != 0);
        return;
    }
    int red = red_of(s->reduction);
    if (red < 0) {
        sim_not_modelled(b, m, "semaphore reduction %s at VA 0x%llx is not modelled", vgt_sem_red_name(s->reduction),
                         (unsigned long long)s->va);
        return;
    }
    sim_sem_reduce(b, m, s->va, red, (s->flags & VGT_SEM_FLAG_SIGNED) != 0, s->payload, s->size);
}

/* Every SEM_RELEASE event counts as a release (a reduction too: census counts them alike); those of QMDs
 * also apart, as the sim reads QMDs in memory that a tool without memory may not see. A QMD's releases
 * are written when the QMD runs (sim_qmd.c), which is not always where the tracker reports them (at its
 * PCAS). */
static void on_release(vgt_backend *b, const vgt_method *m, const vgt_ev_sem *s)
{
    b->ctr.sem_releases++;
    if (s->source == VGT_SEM_SRC_REPORT) b->ctr.report_semaphores++;
    if (s->source == VGT_SEM_SRC_QMD) {
        b->ctr.qmd_releases++;
        return;
    }
    sim_apply_release(b, m, s);
}

/* SET_REPORT_SEMAPHORE_D of the 3D class has COMPARISON (EQ, GE) for its ACQUIRE; the event gives the raw
 * word. */
static void on_acquire(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_sem *s)
{
    int cmp = cmp_of(s->op);
    if (s->source == VGT_SEM_SRC_REPORT && m->mthd == NVCB97_SET_REPORT_SEMAPHORE_D &&
        VGT_NV_GET(s->raw, NVCB97_SET_REPORT_SEMAPHORE_D_COMPARISON) == NVCB97_SET_REPORT_SEMAPHORE_D_COMPARISON_GE)
        cmp = SIM_ACQ_STRICT_GEQ;
    if (cmp < 0) return;
    c->acq = (sim_acquire){1, cmp, s->size, s->va, s->payload, *m};
    if (sim_retry_acquire(b, c)) return;
    c->blocks++;
    if (!c->blocked_reported) {
        c->blocked_reported = 1;
        b->ctr.blocked_waits++;
        sim_event(b, VGT_BEV_BLOCKED, m, "channel 0x%x blocks on %s", c->handle, c->blocked_on);
    }
}

int sim_retry_acquire(vgt_backend *b, sim_channel *c)
{
    if (!c->acq.active) return 1;
    sim_channel *saved = b->cur;
    b->cur = c;
    int r = sim_sem_acquire(b, &c->acq.at, c->acq.va, c->acq.cmp, c->acq.payload, c->acq.size);
    b->cur = saved;
    if (r == 0) return 0;
    c->acq.active = 0;   /* satisfied, or faulted (reported): the channel goes on either way */
    if (r > 0) b->ctr.sem_acquires++;
    return 1;
}

static void on_report(vgt_backend *b, const vgt_method *m, const vgt_ev_sem *s)
{
    static const uint8_t zeros[16];
    vgt_error e;
    b->ctr.report_semaphores++;
    if (s->op != VGT_SEM_OP_REPORT_ONLY) return;   /* a trap writes nothing */
    /* a counter (samples, invocations) the sim cannot produce: written as 0, never compared */
    uint32_t len = s->flags & VGT_SEM_FLAG_TIMESTAMP ? 16 : s->size;
    if (sim_mem_write(sim_vas_mem(b, b->cur->vas), s->va, zeros, len, SIM_GPU_VOLATILE, "report", &e) != VGT_OK)
        sim_fault(b, m, &e);
}

/* ---- uploads ---- */
static void i2m_semaphore(vgt_backend *b, const sim_obj *o, const vgt_method *m, uint32_t launch)
{
    uint64_t va = addr(o->i2m_sem[0], o->i2m_sem[1]);
    static const int8_t red[8] = {SIM_RED_ADD, SIM_RED_MIN, SIM_RED_MAX, SIM_RED_INC, SIM_RED_DEC, SIM_RED_AND, SIM_RED_OR, SIM_RED_XOR};
    if (VGT_NV_GET(launch, NVA140_LAUNCH_DMA_REDUCTION_ENABLE) == NVA140_LAUNCH_DMA_REDUCTION_ENABLE_TRUE)
        sim_sem_reduce(b, m, va, red[VGT_NV_GET(launch, NVA140_LAUNCH_DMA_REDUCTION_OP)],
                       VGT_NV_GET(launch, NVA140_LAUNCH_DMA_REDUCTION_FORMAT) == NVA140_LAUNCH_DMA_REDUCTION_FORMAT_SIGNED_32,
                       o->i2m_sem[2], 4);
    else
        sim_sem_release(b, m, va, o->i2m_sem[2], 4,
                        VGT_NV_GET(launch, NVA140_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE) ==
                            NVA140_LAUNCH_DMA_SEMAPHORE_STRUCT_SIZE_FOUR_WORDS);
}

static void on_upload(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_upload *u)
{
    b->ctr.uploads++;
    b->ctr.upload_bytes += u->length;
    if (!u->pitch_layout) {
        char msg[128];
        snprintf(msg, sizeof msg, "I2M upload to a block-linear destination at VA 0x%llx is not modelled",
                 (unsigned long long)u->dst_va);
        unsupported(b, m, msg);
    } else if (!u->data && u->length) {
        unsupported(b, m, "I2M upload larger than the semantic tracker keeps; not written");
    } else {
        uint64_t have = u->received < u->length ? u->received : u->length;
        vgt_error e;
        for (uint64_t off = 0, line = 0; off < have && u->line_length; off += u->line_length, line++) {
            uint64_t n = have - off < u->line_length ? have - off : u->line_length;
            sim_qmd_written(b, c->vas, u->dst_va + line * u->pitch_out, n);
            if (sim_mem_write(sim_vas_mem(b, c->vas), u->dst_va + line * u->pitch_out, u->data + off, n, SIM_GPU,
                              "I2M upload", &e) != VGT_OK) {
                sim_fault(b, m, &e);
                break;
            }
        }
    }
    if (!u->complete) {
        b->ctr.diagnostics++;
        sim_event(b, VGT_BEV_DIAG, m, "I2M upload to VA 0x%llx ended after %llu of %llu bytes",
                  (unsigned long long)u->dst_va, (unsigned long long)u->received, (unsigned long long)u->length);
    } else if (u->completion == 2) {
        i2m_semaphore(b, &c->subch[m->subch & 7], m, u->raw);
    }
}

/* ---- clears ---- */
/* CLEAR_SURFACE of a color target: every pixel of the target gets the clear value (SET_COLOR_CLEAR_VALUE
 * in the target's format, vgt/surface.h) in the components the clear enables, pitch and block-linear
 * targets alike. Not modelled, and reported: depth/stencil clears, formats other than the 8-bit RGBA ones,
 * the clear rectangle and scissor of SET_CLEAR_SURFACE_CONTROL (the whole target is cleared), array layers
 * (RT_ARRAY_INDEX is ignored), and the write mask SET_CT_WRITE. */
static void on_clear(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_clear *k)
{
    char msg[160];
    if (k->depth || k->stencil) unsupported(b, m, "depth/stencil clear is not modelled");
    if (!k->color_mask || !k->target_format) return;   /* no color, or a DISABLED target: nothing written */
    vgt_rt_desc s = {.va = k->target_va, .width = k->target_width, .height = k->target_height,
                     .memory = k->target_memory, .format = k->target_format};
    uint8_t px[4];
    uint32_t w = vgt_rt_width_px(&s);
    uint64_t span = vgt_rt_span(&s);
    if (!vgt_rt_clear_pixel(k->target_format, k->clear_value, px) || !w || !span) {
        snprintf(msg, sizeof msg, "clear of color target 0x%llx (format 0x%x, %ux%u) is not modelled",
                 (unsigned long long)k->target_va, k->target_format, k->target_width, k->target_height);
        unsupported(b, m, msg);
        return;
    }
    if (span > b->cfg.max_copy_bytes) {
        snprintf(msg, sizeof msg, "clear of %llu bytes is over the sim's limit of %llu bytes", (unsigned long long)span,
                 (unsigned long long)b->cfg.max_copy_bytes);
        unsupported(b, m, msg);
        return;
    }
    sim_mem *mem = sim_vas_mem(b, c->vas);
    vgt_error e;
    if (sim_mem_check(mem, s.va, span, "clear", &e) != VGT_OK) { sim_fault(b, m, &e); return; }
    /* the bytes of a pixel the clear writes: those of the components it enables (bit 0 R .. 3 A) */
    uint8_t write_byte[4] = { 0 };
    for (unsigned comp = 0; comp < 4; comp++)
        if ((k->color_mask >> comp) & 1) write_byte[vgt_rt_component_byte(k->target_format, comp)] = 1;
    for (uint32_t y = 0; y < s.height; y++)
        for (uint32_t x = 0; x < w; x++) {
            uint64_t va = s.va + vgt_rt_pixel_offset(&s, x, y);
            if (k->color_mask == 0xf) {
                if (sim_mem_write(mem, va, px, 4, SIM_GPU, "clear", &e) != VGT_OK) { sim_fault(b, m, &e); return; }
                continue;
            }
            for (int byte = 0; byte < 4; byte++)
                if (write_byte[byte] &&
                    sim_mem_write(mem, va + byte, &px[byte], 1, SIM_GPU, "clear", &e) != VGT_OK) {
                    sim_fault(b, m, &e);
                    return;
                }
        }
}

/* ---- launches and draws ---- */
/* A launch or a draw runs shaders the sim does not execute; they may write anywhere. */
static void shaders_ran(vgt_backend *b, sim_channel *c) { sim_mem_invalidate(sim_vas_mem(b, c->vas)); }

/* A LAUNCH or an EMPTY_DISPATCH: both are scheduled QMDs. An empty one runs no threads itself, but its
 * completion may schedule a dependent QMD that does (CUDA's CTA-less QMDs), so memory is unknown after
 * it all the same. */
static void on_launch(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_launch *l)
{
    shaders_ran(b, c);
    if (l->inline_qmd && l->qmd_bytes) {   /* the GPU stores an inline QMD at its address */
        sim_mem *mem = sim_vas_mem(b, c->vas);
        if (sim_mem_check(mem, l->qmd_va, l->qmd_length, "inline QMD", NULL) == VGT_OK)
            sim_mem_write(mem, l->qmd_va, l->qmd_bytes, l->qmd_length, SIM_GPU, "inline QMD", NULL);
    }
    if (!l->decoded || !l->qmd_known) {
        char msg[128];
        snprintf(msg, sizeof msg, "QMD at VA 0x%llx %s; its release semaphores are not written",
                 (unsigned long long)l->qmd_va, l->qmd_known ? "has an unknown version" : "is not fully known");
        unsupported(b, m, msg);
        return;
    }
    sim_qmd_scheduled(b, c, m, l);
}

static void on_event(void *ctx, const vgt_event *ev)
{
    sim_channel *c = ctx;
    vgt_backend *b = c->b;
    vgt_method m = {.subch = ev->subch, .cls = ev->cls, .pos = ev->pos};
    if (b->state_only) return;   /* outside --submits: the tracker keeps its state, nothing happens */
    switch (ev->kind) {
    case VGT_EV_SEM_RELEASE: on_release(b, &m, &ev->u.sem); break;
    case VGT_EV_SEM_ACQUIRE: m.mthd = c->cur_mthd; on_acquire(b, c, &m, &ev->u.sem); break;
    case VGT_EV_REPORT: on_report(b, &m, &ev->u.sem); break;
    case VGT_EV_UPLOAD: on_upload(b, c, &m, &ev->u.upload); break;
    case VGT_EV_COPY: sim_copy(b, c, &m, &ev->u.copy); break;
    case VGT_EV_EMPTY_DMA: b->ctr.empty_dmas++; break;   /* moves nothing; its SEM_RELEASE event follows */
    case VGT_EV_LAUNCH: b->ctr.launches++; on_launch(b, c, &m, &ev->u.launch); break;
    case VGT_EV_EMPTY_DISPATCH: b->ctr.empty_dispatches++; on_launch(b, c, &m, &ev->u.launch); break;
    case VGT_EV_DRAW: b->ctr.draws++; shaders_ran(b, c); break;
    case VGT_EV_CLEAR: on_clear(b, c, &m, &ev->u.clear); break;
    default: break;
    }
}

/* The semantic tracker reads QMDs from sim memory: an unmapped QMD is a fault. */
static vgt_status sem_read(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    sim_channel *c = ctx;
    *known = 0;
    VGT_TRY(sim_mem_read(sim_vas_mem(c->b, c->vas), va, dst, len, "QMD fetch", err));
    *known = len;
    return VGT_OK;
}

vgt_status sim_channel_init(vgt_backend *b, sim_channel *c, vgt_error *err)
{
    c->b = b;
    c->mme_pending_subch = -1;
    vgt_pb_state_init(&c->pb, c->cls);
    vgt_sem_config sc = {.on_event = on_event, .ctx = c, .mem_read = sem_read, .mem_ctx = c, .keep_upload_bytes = 1};
    return vgt_sem_new(&c->sem, &sc, err);
}

void sim_end_of_submission(vgt_backend *b, sim_channel *c)
{
    sim_mme_flush(b, c);
    b->cur = c;
    vgt_sem_flush(c->sem);
}

/* ---- MME ---- */
static vgt_status mme_read(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    sim_channel *c = user;
    return sim_mem_read(sim_vas_mem(c->b, c->vas), va, dst, len, "MME DMA read", err);
}

static vgt_status mme_on_call(void *user, const vgt_mme_call *call, vgt_error *err)
{
    sim_channel *c = user;
    vgt_backend *b = c->b;
    vgt_method em = {.subch = (uint32_t)c->mme_call_subch, .cls = call->cls, .kind = VGT_HDR_INC, .pos = {b->seq, 0, 0}};
    b->ctr.macro_calls++;
    if (call->status != VGT_OK) {
        b->ctr.macro_errors++;
        sim_event(b, VGT_BEV_MACRO, &em, "MME macro %u: %s", call->macro, call->err ? call->err->msg : "failed");
    }
    uint64_t blocks = c->blocks;
    for (uint32_t i = 0; i < call->nemits; i++) {
        if (++b->methods_this_submit > b->cfg.max_methods_per_submit) {   /* emissions count as methods */
            b->limit_hit = 1;
            break;
        }
        em.mthd = call->emits[i].method;
        em.data = call->emits[i].value;
        em.is_host = vgt_nv_is_host_method(em.mthd);
        b->ctr.macro_methods++;
        if (c->blocks != blocks) {   /* an earlier emission blocked: the rest waits behind it */
            if (sim_queue_insert(b, c, &em, 1)) break;
        } else {
            sim_exec_method(b, c, &em, 1);
        }
    }
    return VGT_OK;
}

/* The channel's tracker, created with its first MME object (the class picks the format). */
static void mme_channel_init(vgt_backend *b, sim_channel *c, const sim_obj *o)
{
    vgt_mme_tracker_config tc = {.cls = o->cls, .read_mem = mme_read, .on_call = mme_on_call, .user = c, .budget = &b->mme_budget,
                                 .sim = {.max_instructions = b->cfg.max_macro_instructions}};
    if (vgt_mme_tracker_create(&tc, &c->mme, NULL) != VGT_OK) c->mme = NULL;
}

static sim_obj *obj_for(vgt_backend *b, sim_channel *c, const vgt_method *m)
{
    sim_obj *o = &c->subch[m->subch & 7];
    if (o->cls == m->cls && o->family) return o;
    sim_obj_reset(o);
    o->b = b, o->c = c, o->subch = m->subch & 7, o->cls = m->cls, o->family = sim_family_of(m->cls);
    if (vgt_nv_class_mme(o->cls) != VGT_NV_MME_NONE) {   /* a 3D or compute class with a macro engine */
        if (!c->mme) mme_channel_init(b, c, o);
        o->mme = c->mme != NULL;
    }
    return o;
}

void sim_obj_reset(sim_obj *o) { memset(o, 0, sizeof *o); }

vgt_status sim_mme_flush(vgt_backend *b, sim_channel *c)
{
    (void)b;
    if (c->mme_pending_subch < 0) return VGT_OK;
    c->mme_pending_subch = -1;
    return c->mme ? vgt_mme_tracker_flush(c->mme, NULL) : VGT_OK;
}

/* Feed the method to the channel's MME tracker with its class (which may complete a pending call and
 * dispatch its emissions first). Returns 1 when the method is a macro call word, handled by the tracker
 * alone. */
static int mme_feed(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m)
{
    if ((int)(m->subch & 7) != c->mme_pending_subch) sim_mme_flush(b, c);
    vgt_error e;
    if (vgt_mme_tracker_feed_class(c->mme, o->cls, m->mthd, m->data, &e) != VGT_OK) {
        b->ctr.macro_errors++;
        sim_event(b, VGT_BEV_MACRO, m, "MME: %s", e.msg);
    }
    int is_call = m->mthd >= VGT_MME_M_CALL_MACRO0 && m->mthd < VGT_MME_M_CALL_MACRO0 + 8 * VGT_MME_MACRO_COUNT;
    c->mme_pending_subch = is_call ? (int)(m->subch & 7) : -1;
    if (is_call) c->mme_call_subch = (int)(m->subch & 7);   /* after the feed: it ran the previous call */
    return is_call;
}

/* ---- one method ---- */
static void semantic(vgt_backend *b, sim_channel *c, const vgt_method *m)
{
    vgt_error e;
    b->cur = c;
    c->cur_mthd = m->mthd;
    if (vgt_sem_method(c->sem, m, &e) != VGT_OK) sim_fault(b, m, &e);
}

int sim_exec_method(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed)
{
    b->ctr.methods++;
    b->cur = c;
    uint64_t blocks = c->blocks;
    if (m->is_host) {
        b->ctr.host_methods++;
        if (c->mme_pending_subch >= 0) sim_mme_flush(b, c);
        if (c->blocks != blocks) {   /* the macro call it completed blocked */
            sim_queue_insert(b, c, m, 1);
            return 1;
        }
        semantic(b, c, m);
        return c->blocks != blocks;
    }
    sim_obj *o = m->cls ? obj_for(b, c, m) : NULL;
    if (!o || o->family == SIM_FAM_NONE || m->mthd >= SIM_METHOD_LIMIT) {
        b->ctr.unknown_class_methods++;
        return 0;
    }
    if (o->mme && !fed) {
        if (mme_feed(b, c, o, m)) return 0;
        if (c->blocks != blocks) {   /* the call it completed blocked: this method runs after it */
            sim_queue_insert(b, c, m, 1);
            return 1;
        }
    }
    if (m->mthd >= NVA140_SET_I2M_SEMAPHORE_A && m->mthd <= NVA140_SET_I2M_SEMAPHORE_C)
        o->i2m_sem[(m->mthd - NVA140_SET_I2M_SEMAPHORE_A) >> 2] = m->data;
    semantic(b, c, m);
    return c->blocks != blocks;
}

/* A non-increasing run of inline data at once: what sim_exec_method does for each of its dwords, where
 * nothing can happen between them (sim_fetch.c checks the rest). The MME tracker keeps only a method's
 * last value for such a method (its shadow state), so it gets the last dword. Returns 0 when the run is
 * not one it can take (the caller then runs it dword by dword). */
int sim_exec_inline_run(vgt_backend *b, sim_channel *c, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    if (m->is_host || !m->cls || c->mme_pending_subch >= 0) return 0;
    sim_obj *o = obj_for(b, c, m);
    if (o->family == SIM_FAM_NONE || m->mthd >= SIM_METHOD_LIMIT || !vgt_sem_is_inline_data(c->sem, m)) return 0;
    if (m->mthd >= NVA140_SET_I2M_SEMAPHORE_A && m->mthd <= NVA140_SET_I2M_SEMAPHORE_C) return 0;
    b->ctr.methods += count;
    b->cur = c;
    if (o->mme) {
        vgt_method last = *m;
        const uint8_t *p = data + 4u * (count - 1);
        last.data = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        last.pos.dword = m->pos.dword + count - 1;
        last.first = count == 1 && m->first;
        mme_feed(b, c, o, &last);
    }
    c->cur_mthd = m->mthd;
    vgt_error e;
    if (vgt_sem_noninc_run(c->sem, m, data, count, 0, &e) != VGT_OK) sim_fault(b, m, &e);
    return 1;
}
