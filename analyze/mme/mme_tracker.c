/* mme_tracker.c: follows macro uploads and calls in one channel's method stream and runs each call.
 *
 * State diagram (also in vgt/mme.h):
 *   idle --CALL_MME_MACRO(j) of class c: call_start()--> collecting(c, j)
 *   collecting(c, j) --CALL_MME_DATA(j) of c: call_append()--> collecting(c, j)
 *   collecting --other method of any class, flush(): call_run()--> idle, then the method is handled as in idle
 *
 * What is shared (vgt/mme.h "macro-upload tracker" gives the evidence): the instruction RAM and its
 * pointer belong to the channel; each class has its own slot (mme_class) with the start-address RAM,
 * the shadow state and the DMA machine. Slots are created when a class is first fed.
 *
 * Upload methods (facts section 1; envytools envydis/macro.c): LOAD_MME_INSTRUCTION_RAM_POINTER sets
 * the position in instructions (TU104: 3-dword groups [inferred from NVIDIA driver traces]; Fermi:
 * dwords), each LOAD_MME_INSTRUCTION_RAM word is stored there and the position advances by one dword;
 * LOAD_MME_START_ADDRESS_RAM_POINTER selects a macro, LOAD_MME_START_ADDRESS_RAM binds it to an
 * instruction position and advances the pointer as well [advance unconfirmed; NVK writes one entry
 * per pointer].
 *
 * Shadow state (what STATE reads; NV_PGRAPH_PRI_MME_SHADOW_RAM_INDEX is per class and method) is fed
 * by every non-MME method of the push buffer and by the macros' own emissions, under the mode of
 * SET_MME_SHADOW_RAM_CONTROL (our reading of the mode names [unconfirmed]): METHOD_TRACK and
 * METHOD_TRACK_WITH_FILTER store the value, METHOD_PASSTHROUGH and METHOD_REPLAY leave the shadow
 * as it is. SET_MME_SHADOW_SCRATCH(i), which exists only to be read back, is stored in every mode.
 */
#include "mme_internal.h"

#include <stdlib.h>
#include <string.h>

enum { SHADOW_TRACK, SHADOW_TRACK_WITH_FILTER, SHADOW_PASSTHROUGH, SHADOW_REPLAY };

/* A macro body's hash, remembered while the instruction RAM is unchanged: every call and every check of
 * the bound macros at a submission's end asks for it, and the scan that finds the body decodes each of
 * its instructions (a whole RAM for code without an exit). Direct-mapped by start dword; room for every
 * macro of two classes (256 each) that share the RAM, so the check of all bindings does not thrash. */
#define BODY_MEMO_SLOTS 512u
typedef struct body_memo {
    uint64_t gen_plus1;   /* the iram_gen it was computed at, plus one (0: empty) */
    uint32_t start_dword, ndwords;
    uint64_t hash;
} body_memo;

/* What one class of the channel keeps for itself. */
typedef struct mme_class {
    vgt_mme_tracker *t;           /* back pointer for the simulator callbacks */
    uint32_t cls;
    uint32_t start_ram[VGT_MME_MACRO_COUNT];   /* as written: instructions */
    bool start_set[VGT_MME_MACRO_COUNT];
    uint32_t start_ptr;
    uint32_t shadow_mode;
    uint32_t shadow[VGT_MME_SHADOW_WORDS];
    vgt_mme_machine machine;
} mme_class;

struct vgt_mme_tracker {
    vgt_mme_tracker_config cfg;
    vgt_mme_format fmt;
    uint32_t iram_cap, iram_used, iram_ptr;    /* dwords */
    uint32_t iram[VGT_MME_IRAM_MAX_DWORDS];
    uint64_t iram_gen;                          /* counts writes of iram: body_memo's key */
    body_memo memo[BODY_MEMO_SLOTS];
    mme_class *classes[VGT_MME_TRACKER_MAX_CLASSES];
    uint32_t nclasses;
    /* the call being collected */
    bool collecting;
    mme_class *call_class;
    uint32_t call_macro;
    uint32_t *params;
    uint32_t nparams, params_cap, max_params;
    bool truncated;
    vgt_mme_emit_list emits;
    vgt_mme_tracker_stats stats;
};

vgt_status vgt_mme_tracker_create(const vgt_mme_tracker_config *cfg, vgt_mme_tracker **out, vgt_error *err)
{
    if (!cfg || !out) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "MME tracker needs a config and an out pointer");
    *out = NULL;
    vgt_mme_format fmt = vgt_mme_format_for_class(cfg->cls);
    if (fmt == VGT_MME_NONE)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "class 0x%04x has no MME", cfg->cls);
    vgt_mme_tracker *t = calloc(1, sizeof *t);
    if (!t) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for an MME tracker");
    t->cfg = *cfg;
    t->fmt = fmt;
    t->iram_cap = cfg->sim.iram_dwords && cfg->sim.iram_dwords < vgt_mme_iram_dwords(fmt) ? cfg->sim.iram_dwords
                                                                                         : vgt_mme_iram_dwords(fmt);
    t->max_params = cfg->max_call_params ? cfg->max_call_params : VGT_MME_DEFAULT_MAX_CALL_PARAMS;
    t->emits.max = cfg->max_emits;
    *out = t;
    return VGT_OK;
}

void vgt_mme_tracker_destroy(vgt_mme_tracker *t)
{
    if (!t) return;
    for (uint32_t i = 0; i < t->nclasses; i++) free(t->classes[i]);
    free(t->params);
    vgt_mme_emit_list_free(&t->emits);
    free(t);
}

/* ---- per-class slots ------------------------------------------------------------------------------ */
static mme_class *class_find(const vgt_mme_tracker *t, uint32_t cls)
{
    for (uint32_t i = 0; i < t->nclasses; i++)
        if (t->classes[i]->cls == cls) return t->classes[i];
    return NULL;
}

static vgt_status class_get(vgt_mme_tracker *t, uint32_t cls, mme_class **out, vgt_error *err)
{
    *out = class_find(t, cls);
    if (*out) return VGT_OK;
    vgt_mme_format fmt = vgt_mme_format_for_class(cls);
    if (fmt != t->fmt)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET,
                        "class 0x%04x (MME format %s) fed to a channel tracker of format %s", cls,
                        vgt_mme_format_name(fmt), vgt_mme_format_name(t->fmt));
    if (t->nclasses >= VGT_MME_TRACKER_MAX_CLASSES)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "class 0x%04x would be MME class %u of the channel (at most %u)",
                        cls, t->nclasses + 1, VGT_MME_TRACKER_MAX_CLASSES);
    mme_class *c = calloc(1, sizeof *c);
    if (!c) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for MME class 0x%04x", cls);
    c->t = t;
    c->cls = cls;
    t->classes[t->nclasses++] = c;
    t->stats.classes = t->nclasses;
    *out = c;
    return VGT_OK;
}

/* ---- shadow state ------------------------------------------------------------------------------ */
static bool is_scratch(uint32_t m) { return m >= VGT_MME_M_SET_SHADOW_SCRATCH0 && m < VGT_MME_M_CALL_MACRO0; }

static void shadow_write(mme_class *c, uint32_t method, uint32_t value)
{
    if (method >= 4 * VGT_MME_SHADOW_WORDS) return;
    if (is_scratch(method) || c->shadow_mode == SHADOW_TRACK || c->shadow_mode == SHADOW_TRACK_WITH_FILTER)
        c->shadow[method >> 2] = value;
}

uint32_t vgt_mme_tracker_shadow(const vgt_mme_tracker *t, uint32_t cls, uint32_t method)
{
    const mme_class *c = class_find(t, cls);
    return c && method < 4 * VGT_MME_SHADOW_WORDS ? c->shadow[method >> 2] : 0;
}

/* ---- simulator callbacks (user: the calling class) ----------------------------------------------- */
static vgt_status on_emit(void *user, uint32_t method, uint32_t value)
{
    mme_class *c = user;
    VGT_TRY(vgt_mme_emit_list_push(&c->t->emits, method, value));
    if (method == VGT_MME_M_SET_SHADOW_RAM_CONTROL) c->shadow_mode = value & 3;
    shadow_write(c, method, value);
    return VGT_OK;
}

static uint32_t on_state(void *user, uint32_t method)
{
    const mme_class *c = user;
    return method < 4 * VGT_MME_SHADOW_WORDS ? c->shadow[method >> 2] : 0;
}

static vgt_status on_read_mem(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    vgt_mme_tracker *t = ((mme_class *)user)->t;
    if (!t->cfg.read_mem) return VGT_FAIL(err, VGT_E_FAULT, va, "no memory reader for MME DMA");
    return t->cfg.read_mem(t->cfg.user, va, dst, len, err);
}

static vgt_mme_sim_io class_io(mme_class *c)
{
    return (vgt_mme_sim_io){.emit = on_emit, .state = on_state, .read_mem = on_read_mem, .user = c};
}

/* ---- calls ------------------------------------------------------------------------------------- */
static uint64_t body_hash(vgt_mme_tracker *t, uint32_t start_dword, uint32_t *ndwords)
{
    body_memo *m = &t->memo[start_dword % BODY_MEMO_SLOTS];
    if (m->gen_plus1 != t->iram_gen + 1 || m->start_dword != start_dword) {
        m->hash = vgt_mme_body_hash(t->fmt, t->iram, t->iram_used, start_dword, &m->ndwords);
        m->start_dword = start_dword;
        m->gen_plus1 = t->iram_gen + 1;
    }
    if (ndwords) *ndwords = m->ndwords;
    return m->hash;
}

static vgt_status call_append(vgt_mme_tracker *t, uint32_t value, vgt_error *err)
{
    if (t->nparams >= t->max_params) {
        t->truncated = true;
        return VGT_OK;
    }
    if (t->nparams == t->params_cap) {
        uint32_t cap = t->params_cap ? t->params_cap * 2 : 64;
        if (cap > t->max_params) cap = t->max_params;
        uint32_t *p = realloc(t->params, (size_t)cap * sizeof *p);
        if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %u MME call parameters", cap);
        t->params = p;
        t->params_cap = cap;
    }
    t->params[t->nparams++] = value;
    return VGT_OK;
}

static vgt_status call_start(vgt_mme_tracker *t, mme_class *c, uint32_t j, uint32_t first, vgt_error *err)
{
    t->collecting = true;
    t->call_class = c;
    t->call_macro = j;
    t->nparams = 0;
    t->truncated = false;
    return call_append(t, first, err);
}

static vgt_status call_run(vgt_mme_tracker *t, vgt_error *err)
{
    t->collecting = false;
    mme_class *c = t->call_class;
    vgt_mme_sim_config sim = t->cfg.sim;
    if (t->cfg.budget) {   /* a spent budget: the call is not run (vgt_mme_budget_note() tells) */
        uint64_t allow = vgt_mme_budget_allow(t->cfg.budget), per_call = sim.max_instructions
                                                                              ? sim.max_instructions
                                                                              : VGT_MME_DEFAULT_MAX_INSTRUCTIONS;
        if (!allow) {
            t->stats.refused++;
            return VGT_OK;
        }
        sim.max_instructions = allow < per_call ? allow : per_call;
    }
    uint32_t j = t->call_macro, start = c->start_ram[j], start_dword = vgt_mme_pointer_dword(t->fmt, start);
    vgt_mme_call call = {.seq = t->stats.calls, .cls = c->cls, .macro = j, .start = start, .start_dword = start_dword,
                         .params = t->params, .nparams = t->nparams, .params_truncated = t->truncated};
    call.body_hash = body_hash(t, start_dword, &call.body_dwords);
    vgt_mme_emit_list_clear(&t->emits);
    vgt_mme_sim_io io = class_io(c);
    vgt_mme_result res;
    vgt_error serr;
    vgt_error_clear(&serr);
    call.status = vgt_mme_sim_run(&sim, t->fmt, t->iram, t->iram_cap, start_dword, t->params, t->nparams, &io,
                                  &c->machine, &res, &serr);
    if (call.status == VGT_E_NOMEM || call.status == VGT_E_ARG) {
        if (err) *err = serr;
        return call.status;
    }
    if (call.status != VGT_OK) t->stats.call_errors++;
    if (t->cfg.budget) vgt_mme_budget_charge(t->cfg.budget, res.instructions, call.status != VGT_OK);
    call.err = &serr;
    call.result = &res;
    call.emits = t->emits.v;
    call.nemits = t->emits.n;
    t->stats.calls++;
    if (t->cfg.on_call) return t->cfg.on_call(t->cfg.user, &call, err);
    return VGT_OK;
}

/* ---- the method stream ------------------------------------------------------------------------- */
static void set_iram_ptr(vgt_mme_tracker *t, uint32_t value)
{
    uint32_t d = vgt_mme_pointer_dword(t->fmt, value);
    t->iram_ptr = d < t->iram_cap ? d : t->iram_cap;   /* at the cap every load counts as out of bounds */
}

static void load_iram(vgt_mme_tracker *t, uint32_t value)
{
    if (t->iram_ptr >= t->iram_cap) {
        t->stats.iram_out_of_bounds++;
        return;
    }
    t->iram[t->iram_ptr++] = value;
    t->iram_gen++;
    if (t->iram_ptr > t->iram_used) t->iram_used = t->iram_ptr;
    t->stats.iram_words++;
}

static void load_start(vgt_mme_tracker *t, mme_class *c, uint32_t value)
{
    if (c->start_ptr >= VGT_MME_MACRO_COUNT) {
        t->stats.start_out_of_bounds++;
        return;
    }
    c->start_set[c->start_ptr] = true;
    c->start_ram[c->start_ptr++] = value;
}

static void dma_method(vgt_mme_tracker *t, mme_class *c, uint32_t method, uint32_t value)
{
    vgt_mme_sim_io io = class_io(c);
    vgt_mme_error e = vgt_mme_machine_write(&c->machine, method, value, &io, NULL);
    if (e != VGT_MME_OK) {
        t->stats.dma_errors++;
        t->stats.last_dma_error = e;
    }
}

static vgt_status idle_method(vgt_mme_tracker *t, mme_class *c, uint32_t method, uint32_t value, vgt_error *err)
{
    if (method >= VGT_MME_M_CALL_MACRO0 && method < 4 * VGT_MME_SHADOW_WORDS) {
        if (method & 4) {
            t->stats.orphan_data++;
            return VGT_OK;
        }
        return call_start(t, c, (method - VGT_MME_M_CALL_MACRO0) / 8, value, err);
    }
    switch (method) {
    case VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER: set_iram_ptr(t, value); return VGT_OK;
    case VGT_MME_M_LOAD_INSTRUCTION_RAM: load_iram(t, value); return VGT_OK;
    case VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER: c->start_ptr = value; return VGT_OK;
    case VGT_MME_M_LOAD_START_ADDRESS_RAM: load_start(t, c, value); return VGT_OK;
    case VGT_MME_M_SET_SHADOW_RAM_CONTROL: c->shadow_mode = value & 3; return VGT_OK;
    default: break;
    }
    if (t->fmt == VGT_MME_TU104 && method >= VGT_MME_M_SET_MEM_ADDRESS_A && method <= VGT_MME_M_SET_DATA_FIFO_CONFIG)
        dma_method(t, c, method, value);
    shadow_write(c, method, value);
    return VGT_OK;
}

vgt_status vgt_mme_tracker_feed_class(vgt_mme_tracker *t, uint32_t cls, uint32_t method, uint32_t value,
                                      vgt_error *err)
{
    mme_class *c;
    VGT_TRY(class_get(t, cls, &c, err));
    t->stats.methods++;
    if (t->collecting) {
        if (c == t->call_class && method == VGT_MME_M_CALL_DATA0 + 8 * t->call_macro) return call_append(t, value, err);
        VGT_TRY(call_run(t, err));
    }
    return idle_method(t, c, method, value, err);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether a write of method, outside a call's data, only sets its shadow word (so that of a run of such
 * writes only the last value stays): not a call or its data, not the RAM loads, the shadow control or a
 * DMA method (TU104). */
static bool shadow_only(const vgt_mme_tracker *t, uint32_t method)
{
    if (method >= VGT_MME_M_CALL_MACRO0 && method < 4 * VGT_MME_SHADOW_WORDS) return false;
    if (method >= VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER && method <= VGT_MME_M_SET_SHADOW_RAM_CONTROL) return false;
    return !(t->fmt == VGT_MME_TU104 && method >= VGT_MME_M_SET_MEM_ADDRESS_A && method <= VGT_MME_M_SET_DATA_FIFO_CONFIG);
}

vgt_status vgt_mme_tracker_feed_run(vgt_mme_tracker *t, uint32_t cls, uint32_t method, const uint8_t *data,
                                    uint32_t count, vgt_error *err)
{
    if (!count) return VGT_OK;
    /* as one by one: every write is fed whatever the one before returned; the first failure is returned */
    vgt_status rc = vgt_mme_tracker_feed_class(t, cls, method, le32(data), err);   /* ends a pending call */
    mme_class *c = class_find(t, cls);
    if (count == 1 || !c) return rc;   /* a class refused: each write is refused alike, and changes nothing */
    if (!shadow_only(t, method)) {
        for (uint32_t i = 1; i < count; i++) {
            vgt_error e;
            vgt_status st = vgt_mme_tracker_feed_class(t, cls, method, le32(data + 4u * i), &e);
            if (st != VGT_OK && rc == VGT_OK) {
                rc = st;
                if (err) *err = e;
            }
        }
        return rc;
    }
    /* after the first write nothing is collecting: each later one is a shadow write, the last one stays */
    t->stats.methods += count - 1;
    shadow_write(c, method, le32(data + 4u * (count - 1)));
    return rc;
}

vgt_status vgt_mme_tracker_feed(vgt_mme_tracker *t, uint32_t method, uint32_t value, vgt_error *err)
{
    return vgt_mme_tracker_feed_class(t, t->cfg.cls, method, value, err);
}

vgt_status vgt_mme_tracker_flush(vgt_mme_tracker *t, vgt_error *err)
{
    return t->collecting ? call_run(t, err) : VGT_OK;
}

/* ---- queries ----------------------------------------------------------------------------------- */
const vgt_mme_tracker_stats *vgt_mme_tracker_stats_get(const vgt_mme_tracker *t) { return &t->stats; }
vgt_mme_format vgt_mme_tracker_format(const vgt_mme_tracker *t) { return t->fmt; }

const uint32_t *vgt_mme_tracker_iram(const vgt_mme_tracker *t, uint32_t *used_dwords)
{
    if (used_dwords) *used_dwords = t->iram_used;
    return t->iram;
}

vgt_status vgt_mme_tracker_macro(const vgt_mme_tracker *t, uint32_t cls, uint32_t j, uint32_t *start,
                                 uint32_t *start_dword, uint64_t *hash, uint32_t *ndwords, vgt_error *err)
{
    const mme_class *c = class_find(t, cls);
    if (!c || j >= VGT_MME_MACRO_COUNT || !c->start_set[j])
        return VGT_FAIL(err, VGT_E_NOT_FOUND, VGT_NO_OFFSET, "MME macro %u of class 0x%04x was never bound to a start address",
                        j, cls);
    uint32_t d = vgt_mme_pointer_dword(t->fmt, c->start_ram[j]);
    if (start) *start = c->start_ram[j];
    if (start_dword) *start_dword = d;
    /* the memo changes no result: the tracker itself is never a const object (vgt_mme_tracker_create) */
    uint64_t h = body_hash((vgt_mme_tracker *)t, d, ndwords);
    if (hash) *hash = h;
    return VGT_OK;
}
