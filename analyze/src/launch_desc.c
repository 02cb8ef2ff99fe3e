/* launch_desc.c: the work extractor (launch_desc.h). Per channel: the semantic tracker (events.h), the MME
 * (mme.h: macro emissions are fed to the tracker where the GPU runs them) and a shadow of the compute
 * class's SET_* state; each event becomes a vgt_work, a launch a full vgt_launch_desc. */
#include <stdlib.h>
#include <string.h>

#include "vgt/classes.h"
#include "vgt/launch_desc.h"
#include "vgt/walk.h"
#include "vgt/mme.h"
#include "vgt/model.h"
#include "vgt/nv_facts.h"
#include "launch_store.h"

#define STATE_SLOTS 4096u     /* method offsets 0x0000..0x3ffc */
#define STATE_CLASSES 8u      /* compute classes whose state filter is kept */
#define MME_FORMATS 4u

typedef struct state_filter {
    uint32_t cls;
    uint8_t is_state[STATE_SLOTS];
} state_filter;

struct vgt_ldx {
    vgt_ldx_config cfg;
    uint64_t launches, empties, works, macro_calls;
    vgt_launch_desc desc;
    uint8_t *program;         /* VGT_LD_PROGRAM_MAX */
    uint8_t *cbs;             /* VGT_QMD_MAX_CB * VGT_LD_CB_MAX */
    uint8_t *scratch;         /* VGT_LD_CB_MAX */
    state_filter filters[STATE_CLASSES];
    uint32_t nfilters;
    ld_store store;           /* what copies and fills wrote, where the trace determines it */
    uint8_t *chunk;           /* COPY_CHUNK bytes: copies go through it */
    vgt_mme_budget budget;    /* every channel's macro calls (vgt/mme.h): a hostile trace's cannot run for minutes */
    uint64_t budget_submission;   /* the submission the budget's per-submission part is for */
};

#define COPY_CHUNK (1u << 20)

struct vgt_ldx_channel {
    vgt_ldx *x;
    uint32_t client, channel, host_cls;
    vgt_sem_tracker *sem;
    vgt_mme_tracker *mme[MME_FORMATS];   /* one per MME format (a channel's classes of one format share it) */
    uint8_t mme_off[MME_FORMATS];
    uint64_t submission, seq;
    uint32_t cur_method;      /* the method being fed (events it completes name it) */
    uint32_t call_subch;      /* subchannel of the last CALL_MME_MACRO fed (its emissions run there) */
    vgt_status rc;            /* a failure inside a callback */
    /* compute class state: the last value of each SET_* method (state_cls: the class, 0 none yet) */
    uint32_t state_cls;
    uint32_t state_val[STATE_SLOTS];
    uint8_t state_set[STATE_SLOTS];
    int quiet;                /* vgt_ldx_channel_quiet: follow the state, describe and emit nothing */
};

const char *vgt_ld_qmd_source_name(unsigned s)
{
    static const char *const n[] = {"?", "memory", "upload", "inline", "macro"};
    return s < sizeof n / sizeof n[0] ? n[s] : "?";
}

const char *vgt_work_kind_name(unsigned k)
{
    static const char *const n[] = {"?", "launch", "empty_dispatch", "upload", "copy", "semaphore", "other"};
    return k < sizeof n / sizeof n[0] ? n[k] : "?";
}

vgt_status vgt_ldx_new(const vgt_ldx_config *cfg, vgt_ldx **out, vgt_error *err)
{
    *out = NULL;
    if (!cfg || !cfg->on_work) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "launch extractor: on_work is required");
    vgt_ldx *x = calloc(1, sizeof *x);
    if (x) {
        x->program = malloc(VGT_LD_PROGRAM_MAX);
        x->cbs = malloc((size_t)VGT_QMD_MAX_CB * VGT_LD_CB_MAX);
        x->scratch = malloc(VGT_LD_CB_MAX);
        x->chunk = malloc(COPY_CHUNK);
    }
    if (!x || !x->program || !x->cbs || !x->scratch || !x->chunk) {
        vgt_ldx_free(x);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "launch extractor: out of memory");
    }
    x->cfg = *cfg;
    vgt_mme_budget_init(&x->budget, 0, 0, 0);
    x->budget_submission = UINT64_MAX;
    *out = x;
    return VGT_OK;
}

void vgt_ldx_free(vgt_ldx *x)
{
    if (!x) return;
    free(x->program);
    free(x->cbs);
    free(x->scratch);
    free(x->chunk);
    ld_store_free(&x->store);
    free(x);
}

void vgt_ldx_forget(vgt_ldx *x, uint64_t va, uint64_t len) { ld_store_forget(&x->store, va, len); }

void vgt_ldx_walk_record(vgt_ldx *x, const vgt_record *rec, const vgt_model *model)
{
    vgt_ldx_set_model(x, model);
    vgt_rec_memory mr;
    vgt_error e;
    if (rec->type == VGT_REC_MEMORY && vgt_decode_memory(rec, &mr, &e) == VGT_OK) vgt_ldx_forget(x, mr.gpu_va, mr.length);
}

vgt_status vgt_ldx_walk_channel(vgt_ldx *x, vgt_walk_channel *chan, vgt_error *err)
{
    vgt_ldx_walk_channel_end(chan);   /* a new incarnation of the handle: the old state goes */
    vgt_ldx_channel *lc = NULL;
    vgt_status st = vgt_ldx_channel_new(x, chan->client, chan->handle, chan->cls, &lc, err);
    chan->user = lc;
    return st;
}

void vgt_ldx_walk_channel_end(vgt_walk_channel *chan)
{
    vgt_ldx_channel_free(chan->user);
    chan->user = NULL;
}

uint64_t vgt_ldx_calls_refused(const vgt_ldx *x) { return x->budget.refused; }

int vgt_ldx_budget_note(const vgt_ldx *x, char *buf, size_t size) { return vgt_mme_budget_note(&x->budget, buf, size); }

/* ---- memory: the copies' store over a reader ---- */

/* base's bytes with the store's on top; known: base's count plus the store's where base lacked them
 * (counted per 4 KiB piece: a piece the store covers whole is known whatever base says). */
static vgt_status over_store(vgt_ldx *x, vgt_sem_mem_fn base, void *ctx, uint64_t va, void *dst, uint64_t len,
                             uint64_t *known, vgt_error *err)
{
    uint8_t *d = dst;
    *known = 0;
    while (len) {
        uint64_t n = LD_STORE_PAGE - (va & (LD_STORE_PAGE - 1));
        if (n > len) n = len;
        uint64_t kb = 0;
        memset(d, 0, n);
        if (base) VGT_TRY(base(ctx, va, d, n, &kb, err));
        uint64_t ks = ld_store_read(&x->store, va, d, n, NULL);
        *known += ks == n ? n : (kb + ks < n ? kb + ks : n);
        va += n, d += n, len -= n;
    }
    return VGT_OK;
}

/* What the trace determines: its own records, and what copies of them wrote. */
static vgt_status trace_read(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    vgt_ldx *x = ctx;
    return over_store(x, x->cfg.trace_read, x->cfg.trace_ctx, va, dst, len, known, err);
}

vgt_status vgt_ldx_read_trace(vgt_ldx *x, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    return trace_read(x, va, dst, len, known, err);
}

/* Memory as a launch sees it (the tracker reads through this after its overlay). */
static vgt_status mem_read(void *ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    vgt_ldx *x = ctx;
    if (!x->cfg.mem_read) return trace_read(ctx, va, dst, len, known, err);
    return over_store(x, x->cfg.mem_read, x->cfg.mem_ctx, va, dst, len, known, err);
}

void vgt_ldx_set_model(vgt_ldx *x, const struct vgt_model *model) { x->cfg.model = model; }

/* ---- the compute class state ---- */

static int is_state_name(const char *n)
{
    static const char *const deny[] = {"SET_OBJECT", "SET_INLINE_QMD_ADDRESS", "SET_MME", "SET_REPORT_SEMAPHORE",
                                       "SET_NOTIFY", "SET_DST_", "SET_FALCON", "SET_I2M"};
    if (strncmp(n, "SET_", 4)) return 0;
    for (size_t i = 0; i < sizeof deny / sizeof deny[0]; i++)
        if (!strncmp(n, deny[i], strlen(deny[i]))) return 0;
    return 1;
}

/* Which methods of a compute class are state a launch depends on: its SET_* methods, less those that act
 * (inline QMDs, reports, notifiers, I2M destinations, macros, firmware methods). From the class tables. */
static const state_filter *filter_for(vgt_ldx *x, uint32_t cls)
{
    for (uint32_t i = 0; i < x->nfilters; i++)
        if (x->filters[i].cls == cls) return &x->filters[i];
    if (x->nfilters == STATE_CLASSES) return NULL;
    state_filter *f = &x->filters[x->nfilters++];
    f->cls = cls;
    memset(f->is_state, 0, sizeof f->is_state);
    char name[96];
    for (uint32_t s = 0x100 / 4; s < STATE_SLOTS; s++)
        if (vgt_method_name(cls, s * 4, name, sizeof name) && is_state_name(name)) f->is_state[s] = 1;
    return f;
}

static void track_state(vgt_ldx_channel *c, const vgt_method *m)
{
    if (vgt_nv_class_family(m->cls) != VGT_NV_FAM_COMPUTE || m->mthd >= STATE_SLOTS * 4) return;
    if (c->state_cls != m->cls) {   /* another compute class bound: its state starts empty */
        c->state_cls = m->cls;
        memset(c->state_set, 0, sizeof c->state_set);
    }
    const state_filter *f = filter_for(c->x, m->cls);
    uint32_t s = m->mthd / 4;
    if (!f || !f->is_state[s]) return;
    c->state_val[s] = m->data;
    c->state_set[s] = 1;
}

/* ---- describing a launch ---- */

static uint64_t fnv1a64(const uint8_t *p, uint64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void problem(vgt_launch_desc *d, const char *msg)
{
    if (!d->problem[0]) snprintf(d->problem, sizeof d->problem, "%s", msg);
}

/* Known bytes of [va, va+len) through a reader (0 when there is none or it fails). */
static uint64_t read_known(vgt_sem_mem_fn fn, void *ctx, uint64_t va, void *dst, uint64_t len)
{
    uint64_t known = 0;
    vgt_error e;
    memset(dst, 0, len);
    if (!fn || fn(ctx, va, dst, len, &known, &e) != VGT_OK) return 0;
    return known;
}

/* The program from its entry point: whole 256-byte pieces the trace recorded, within its mapping, up to
 * VGT_LD_PROGRAM_MAX; trailing zero bytes (heap padding) left out, the length kept a multiple of 128. */
static void describe_program(vgt_ldx *x, vgt_launch_desc *d)
{
    d->program_va = d->qmd.program_va + d->qmd.program_offset;
    d->program = x->program;
    const vgt_model_mapping *mp = x->cfg.model ? vgt_model_mapping_find(x->cfg.model, d->program_va) : NULL;
    uint64_t limit = VGT_LD_PROGRAM_MAX;
    if (mp && mp->gpu_va + mp->length - d->program_va < limit) limit = mp->gpu_va + mp->length - d->program_va;
    uint32_t len = 0;
    while (len + 256 <= limit) {
        if (read_known(trace_read, x, d->program_va + len, x->program + len, 256) != 256) break;
        len += 256;
    }
    while (len && !x->program[len - 1]) len--;
    len = (len + 127) & ~127u;
    d->program_len = len;
    d->program_hash = fnv1a64(x->program, len);
    if (!d->qmd.program_va)
        problem(d, "the QMD names no program (PROGRAM_ADDRESS is 0)");
    else if (!len) {
        char msg[160];
        snprintf(msg, sizeof msg, "program bytes at 0x%llx are not in the trace", (unsigned long long)d->program_va);
        problem(d, msg);
    }
}

static uint32_t add_buffer(vgt_ldx *x, vgt_launch_desc *d, const vgt_model_mapping *mp, uint64_t value)
{
    for (uint32_t i = 0; i < d->nbuffers; i++)
        if (d->buffers[i].va == mp->gpu_va) return i;
    if (d->nbuffers == VGT_LD_MAX_BUFFERS) return UINT32_MAX;
    vgt_ld_buffer *b = &d->buffers[d->nbuffers];
    memset(b, 0, sizeof *b);
    b->va = mp->gpu_va, b->len = mp->length, b->map_seq = mp->map_seq;
    uint64_t from = value, n = mp->gpu_va + mp->length - value;
    if (n > VGT_LD_CB_MAX) n = VGT_LD_CB_MAX;
    b->known = read_known(trace_read, x, from, x->scratch, n);
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++)
        if (d->cb[i].valid && value >= d->cb[i].va && value < d->cb[i].va + d->cb[i].size) {
            b->kind = VGT_LD_BUF_CB, b->cb = (uint8_t)i;
            break;
        }
    if (b->kind == VGT_LD_BUF_MEMORY && value >= d->program_va && value < d->program_va + d->program_len)
        b->kind = VGT_LD_BUF_PROGRAM;
    if (b->kind == VGT_LD_BUF_MEMORY && value >= d->qmd_va && value < d->qmd_va + d->qmd_size) b->kind = VGT_LD_BUF_QMD;
    return d->nbuffers++;
}

/* Constant buffers: bytes as the launch sees them (the stream's writes first), and every 64-bit word that
 * points into a GPU mapping. */
static void describe_cbs(vgt_ldx_channel *c, vgt_launch_desc *d)
{
    vgt_ldx *x = c->x;
    for (unsigned i = 0; i < VGT_QMD_MAX_CB; i++) {
        vgt_ld_cb *cb = &d->cb[i];
        const vgt_qmd_cb *q = &d->qmd.cb[i];
        cb->valid = q->valid, cb->va = q->va, cb->size = q->size;
        cb->bytes = x->cbs + (size_t)i * VGT_LD_CB_MAX;
        if (!q->valid) continue;
        cb->mapped = x->cfg.model && q->va && vgt_model_mapping_find(x->cfg.model, q->va) != NULL;
        uint32_t n = q->size < VGT_LD_CB_MAX ? q->size : VGT_LD_CB_MAX;
        uint64_t known = 0;
        vgt_error e;
        memset((uint8_t *)cb->bytes, 0, n);
        /* the store holds what streams wrote (uploads, copies, inline QMDs): the tracker's overlay adds nothing */
        if (cb->mapped && mem_read(x, q->va, (uint8_t *)cb->bytes, n, &known, &e) != VGT_OK) known = 0;
        cb->known = (uint32_t)known;
    }
    for (unsigned i = 0; i < VGT_QMD_MAX_CB && x->cfg.model; i++) {
        const vgt_ld_cb *cb = &d->cb[i];
        if (!cb->valid || !cb->known) continue;
        for (uint32_t off = 0; off + 8 <= cb->size && off + 8 <= VGT_LD_CB_MAX; off += 8) {
            uint64_t v;
            memcpy(&v, cb->bytes + off, 8);
            if (v < 0x10000) continue;   /* small integers are not pointers, even where page 0 is mapped */
            const vgt_model_mapping *mp = vgt_model_mapping_find(x->cfg.model, v);
            if (!mp) continue;
            if (d->naddrs == VGT_LD_MAX_ADDRS) {
                d->addrs_dropped++;
                continue;
            }
            uint32_t b = add_buffer(x, d, mp, v);
            d->addrs[d->naddrs++] = (vgt_ld_addr){.cb = (uint8_t)i, .offset = off, .value = v, .buffer = b};
            if (b != UINT32_MAX) d->buffers[b].words++;
        }
    }
}

static void describe_state(const vgt_ldx_channel *c, vgt_launch_desc *d)
{
    d->nstate = 0;
    if (c->state_cls != d->cls) return;
    for (uint32_t s = 0; s < STATE_SLOTS && d->nstate < VGT_LD_MAX_STATE; s++)
        if (c->state_set[s]) d->state[d->nstate++] = (vgt_ld_state){.method = s * 4, .value = c->state_val[s]};
}

/* Which bytes a by-address QMD came from: memory when the trace's own records give the same bytes, else
 * what a stream wrote there (an upload, a copy). */
static uint8_t by_address_source(vgt_ldx *x, const vgt_ev_launch *l, uint32_t size)
{
    if (read_known(x->cfg.trace_read, x->cfg.trace_ctx, l->qmd_va, x->scratch, size) == size &&
        !memcmp(x->scratch, l->qmd_bytes, size))
        return VGT_LD_QMD_MEMORY;
    return VGT_LD_QMD_UPLOAD;
}

static void describe_launch(vgt_ldx_channel *c, const vgt_event *ev, vgt_launch_desc *d)
{
    vgt_ldx *x = c->x;
    const vgt_ev_launch *l = &ev->u.launch;
    memset(d, 0, offsetof(vgt_launch_desc, addrs));
    d->naddrs = d->addrs_dropped = d->nbuffers = d->nstate = 0;
    d->problem[0] = 0;
    d->empty = ev->kind == VGT_EV_EMPTY_DISPATCH;
    d->index = d->empty ? x->empties++ : x->launches++;
    d->submission = c->submission, d->seq = c->seq, d->pos = ev->pos;
    d->client = c->client, d->channel = c->channel, d->host_cls = c->host_cls;
    d->cls = ev->cls, d->subch = ev->subch;
    d->qmd_va = l->qmd_va;
    d->signal = l->signal;
    d->signal_method = l->inline_qmd ? 0 : c->cur_method;
    d->version = l->decoded ? l->qmd.version : VGT_QMD_UNKNOWN;
    d->qmd_size = vgt_qmd_version_size(d->version);
    uint32_t have = l->qmd_length < VGT_QMD_MAX_BYTES ? l->qmd_length : VGT_QMD_MAX_BYTES;
    memcpy(d->qmd_bytes, l->qmd_bytes, have);
    if (ev->origin == VGT_ORIGIN_MACRO) d->qmd_source = VGT_LD_QMD_MACRO, d->macro_call = ev->macro_call;
    else if (l->inline_qmd) d->qmd_source = VGT_LD_QMD_INLINE;
    else d->qmd_source = by_address_source(x, l, d->qmd_size ? d->qmd_size : VGT_QMD_MAX_BYTES);
    if (!l->decoded) {
        problem(d, "the QMD's version is not one the tables know");
        return;
    }
    d->qmd = l->qmd;
    /* every named field must lie in known bytes; the rest (unnamed bits) may be unknown, then 0 */
    uint32_t known = l->qmd_known ? d->qmd_size : (l->inline_qmd ? (d->qmd_size > 256 ? 256 : d->qmd_size) : 0);
    uint32_t n = 0, need = 0;
    const vgt_qmd_field *f = vgt_qmd_fields(d->version, &n);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t top = (f[k].hi + (f[k].count - 1) * f[k].stride) / 8 + 1;
        if (top > need) need = top;
    }
    d->qmd_known = known;
    if (known < need) problem(d, "the QMD's bytes are not known");
    if (known < d->qmd_size) memset(d->qmd_bytes + known, 0, d->qmd_size - known);
    if (l->inline_qmd) ld_store_write(&x->store, d->qmd_va, d->qmd_bytes, known);   /* the GPU stores it there */
    vgt_qmd_unnamed(d->version, d->qmd_bytes, d->qmd_size, d->unnamed);
    if (d->empty) return;   /* no program, no constant buffers to speak of: its dependents and releases matter */
    describe_program(x, d);
    describe_cbs(c, d);
    describe_state(c, d);
}

/* ---- copies into the store ---- */

/* A fill's element (sem_copy.c's rule): NUM_DST_COMPONENTS components of COMPONENT_SIZE bytes, each CONST_A
 * or CONST_B; 0 when a component reads the source or is not written. */
static uint32_t fill_element(const vgt_ev_copy *k, uint8_t *elem)
{
    unsigned comps = ((k->remap_components >> 24) & 3) + 1, size = ((k->remap_components >> 16) & 3) + 1;
    for (unsigned i = 0; i < comps; i++) {
        unsigned sel = (k->remap_components >> (4 * i)) & 7;
        if (sel != 4 && sel != 5) return 0;
        uint32_t v = sel == 4 ? k->remap_const_a : k->remap_const_b;
        for (unsigned b = 0; b < size; b++) elem[i * size + b] = (uint8_t)(v >> (8 * b));
    }
    return comps * size;
}

/* What a copy-engine transfer wrote, where the trace determines it: pitch copies of known bytes and pitch
 * fills; anything else (block-linear, physical, unknown source) makes its destination unknown. */
static void apply_copy(vgt_ldx *x, const vgt_ev_copy *k)
{
    if (!k->bytes || k->dst_physical) return;
    uint64_t lines = k->multi_line && k->line_count ? k->line_count : 1, line = k->bytes / lines;
    uint64_t span = lines > 1 ? (uint64_t)k->pitch_out * (lines - 1) + line : line;
    int plain = !k->remap && k->src_pitch && !k->src_physical;
    uint8_t elem[16];
    uint32_t esize = k->memset ? fill_element(k, elem) : 0;
    if (!k->dst_pitch || (!plain && !esize) || (lines > 1 && k->pitch_out < line)) {
        ld_store_forget(&x->store, k->dst_va, span);
        return;
    }
    if (esize) {   /* a fill: its element repeated from each line's start (the store keeps long ones compact) */
        if (lines > 1 && k->pitch_out == line && line % esize == 0) lines = 1, line = span;   /* one run */
        for (uint64_t l = 0; l < lines; l++) ld_store_fill(&x->store, k->dst_va + l * k->pitch_out, line, elem, esize);
        return;
    }
    for (uint64_t l = 0; l < lines; l++)
        for (uint64_t done = 0; done < line; done += COPY_CHUNK) {
            uint64_t n = line - done < COPY_CHUNK ? line - done : COPY_CHUNK, dst = k->dst_va + l * k->pitch_out + done;
            if (read_known(trace_read, x, k->src_va + l * k->pitch_in + done, x->chunk, n) != n) {
                ld_store_forget(&x->store, dst, n);
                continue;
            }
            ld_store_write(&x->store, dst, x->chunk, n);
        }
}

/* What an inline-to-memory upload wrote (pitch layouts; its bytes are in the stream). Uploads of another
 * channel count too: CUDA uploads a module's code on one channel and launches it on another. */
static void apply_upload(vgt_ldx *x, const vgt_ev_upload *u)
{
    uint64_t lines = u->line_count ? u->line_count : 1;
    uint64_t have = u->received < u->length ? u->received : u->length;
    if (!u->length) return;
    if (!u->pitch_layout || !u->data || have < u->length) {
        uint64_t span = lines > 1 ? (uint64_t)u->pitch_out * (lines - 1) + u->line_length : u->length;
        ld_store_forget(&x->store, u->dst_va, span);
        return;
    }
    for (uint64_t l = 0; l < lines; l++)
        ld_store_write(&x->store, u->dst_va + l * (lines > 1 ? u->pitch_out : 0), u->data + l * u->line_length,
                       u->line_length);
}

/* ---- events to work ---- */

static void emit(vgt_ldx_channel *c, vgt_work_kind kind, const vgt_event *ev, const vgt_launch_desc *d)
{
    vgt_work w = {.kind = kind, .index = c->x->works++, .submission = c->submission, .seq = c->seq,
                  .client = c->client, .channel = c->channel, .host_cls = c->host_cls, .ev = ev,
                  .method = c->cur_method, .launch = d};
    c->x->cfg.on_work(c->x->cfg.ctx, &w);
}

static void on_event(void *ctx, const vgt_event *ev)
{
    vgt_ldx_channel *c = ctx;
    if (c->quiet) {   /* what uploads and copies wrote stays known for the submissions that describe */
        if (ev->kind == VGT_EV_UPLOAD) apply_upload(c->x, &ev->u.upload);
        else if (ev->kind == VGT_EV_COPY) apply_copy(c->x, &ev->u.copy);
        return;
    }
    switch (ev->kind) {
    case VGT_EV_LAUNCH: case VGT_EV_EMPTY_DISPATCH:
        describe_launch(c, ev, &c->x->desc);
        emit(c, ev->kind == VGT_EV_LAUNCH ? VGT_WORK_LAUNCH : VGT_WORK_EMPTY_DISPATCH, ev, &c->x->desc);
        return;
    case VGT_EV_UPLOAD:
        apply_upload(c->x, &ev->u.upload);
        emit(c, VGT_WORK_UPLOAD, ev, NULL);
        return;
    case VGT_EV_COPY: case VGT_EV_EMPTY_DMA:
        if (ev->kind == VGT_EV_COPY) apply_copy(c->x, &ev->u.copy);
        emit(c, VGT_WORK_COPY, ev, NULL);
        return;
    case VGT_EV_SEM_RELEASE:
        /* a QMD's releases are in its description, a copy's in its LAUNCH_DMA */
        if (ev->u.sem.source == VGT_SEM_SRC_QMD || ev->u.sem.source == VGT_SEM_SRC_COPY) return;
        emit(c, VGT_WORK_SEMAPHORE, ev, NULL);
        return;
    case VGT_EV_SEM_ACQUIRE: case VGT_EV_REPORT: case VGT_EV_NOTIFY: emit(c, VGT_WORK_SEMAPHORE, ev, NULL); return;
    default: emit(c, VGT_WORK_OTHER, ev, NULL); return;
    }
}

/* ---- channels ---- */

static vgt_status mme_read(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    vgt_ldx_channel *c = user;
    uint64_t known = 0;
    VGT_TRY(vgt_sem_mem_read(c->sem, va, dst, len, &known, err));
    return VGT_OK;
}

static vgt_status on_call(void *user, const vgt_mme_call *call, vgt_error *err)
{
    vgt_ldx_channel *c = user;
    vgt_method m = {.subch = c->call_subch, .cls = call->cls, .kind = VGT_HDR_INC};
    m.pos.seq = c->seq;
    vgt_sem_begin_macro(c->sem, c->x->macro_calls++);
    uint32_t saved = c->cur_method;
    vgt_status rc = VGT_OK;
    for (uint32_t i = 0; i < call->nemits && rc == VGT_OK; i++) {
        m.mthd = call->emits[i].method, m.data = call->emits[i].value;
        m.is_host = vgt_nv_is_host_method(m.mthd);
        m.first = i == 0;
        c->cur_method = m.mthd;
        track_state(c, &m);
        rc = vgt_sem_method(c->sem, &m, err);
    }
    c->cur_method = saved;
    vgt_sem_end_macro(c->sem);
    return rc;
}

vgt_status vgt_ldx_channel_new(vgt_ldx *x, uint32_t client, uint32_t channel, uint32_t host_cls, vgt_ldx_channel **out,
                               vgt_error *err)
{
    *out = NULL;
    vgt_ldx_channel *c = calloc(1, sizeof *c);
    if (!c) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "launch extractor: out of memory for channel 0x%x", channel);
    c->x = x, c->client = client, c->channel = channel, c->host_cls = host_cls;
    vgt_sem_config cfg = {.on_event = on_event, .ctx = c, .mem_read = mem_read, .mem_ctx = x, .keep_upload_bytes = 1};
    vgt_status rc = vgt_sem_new(&c->sem, &cfg, err);
    if (rc != VGT_OK) {
        free(c);
        return rc;
    }
    *out = c;
    return VGT_OK;
}

void vgt_ldx_channel_free(vgt_ldx_channel *c)
{
    if (!c) return;
    for (unsigned i = 0; i < MME_FORMATS; i++)
        if (c->mme[i]) vgt_mme_tracker_destroy(c->mme[i]);
    vgt_sem_free(c->sem);
    free(c);
}

void vgt_ldx_channel_quiet(vgt_ldx_channel *c, int quiet)
{
    c->quiet = quiet;
    vgt_sem_skip_launches(c->sem, quiet);   /* quiet: on_event drops launches; none is read or decoded */
}

void vgt_ldx_submit_begin(vgt_ldx_channel *c, uint64_t submission, uint64_t seq)
{
    c->submission = submission, c->seq = seq;
    vgt_ldx *x = c->x;
    if (submission != x->budget_submission) {   /* a new submission's budget is whole again */
        vgt_mme_budget_next_submission(&x->budget);
        x->budget.submissions = submission;     /* the note names the trace's submission index */
        x->budget_submission = submission;
    }
}

/* A method of a non-increasing run: count dwords at data (data[0..3] is m->data), 1 for a single method. */
static vgt_status feed_mme(vgt_ldx_channel *c, const vgt_method *m, const uint8_t *data, uint32_t count, vgt_error *err)
{
    vgt_mme_format fmt = m->is_host ? VGT_MME_NONE : vgt_mme_format_for_class(m->cls);
    /* a method no macro takes (host, copy engine, another format): a pending call has all its data and runs
     * first, as on the GPU (a semaphore acquire after a macro-built launch waits for that launch) */
    for (unsigned i = 0; i < MME_FORMATS; i++)
        if (c->mme[i] && i != (unsigned)fmt) VGT_TRY(vgt_mme_tracker_flush(c->mme[i], err));
    if (fmt == VGT_MME_NONE || (unsigned)fmt >= MME_FORMATS || c->mme_off[fmt]) return VGT_OK;
    if (!c->mme[fmt]) {
        vgt_mme_tracker_config cfg = {.cls = m->cls, .read_mem = mme_read, .on_call = on_call, .user = c,
                                      .budget = &c->x->budget};
        if (vgt_mme_tracker_create(&cfg, &c->mme[fmt], err) != VGT_OK) {
            c->mme[fmt] = NULL, c->mme_off[fmt] = 1;   /* no macros of this format: launches they build are not seen */
            return VGT_OK;
        }
    }
    vgt_status rc = count == 1 ? vgt_mme_tracker_feed_class(c->mme[fmt], m->cls, m->mthd, m->data, err)
                               : vgt_mme_tracker_feed_run(c->mme[fmt], m->cls, m->mthd, data, count, err);
    if (rc == VGT_E_LIMIT || rc == VGT_E_UNSUPPORTED) {   /* more MME classes than one tracker takes */
        vgt_mme_tracker_destroy(c->mme[fmt]);
        c->mme[fmt] = NULL, c->mme_off[fmt] = 1;
        return VGT_OK;
    }
    if (m->mthd >= VGT_MME_M_CALL_MACRO0 && m->mthd < VGT_MME_M_CALL_MACRO0 + 8 * VGT_MME_MACRO_COUNT && !(m->mthd & 4))
        c->call_subch = m->subch;   /* CALL_MME_MACRO(j) */
    return rc;
}

vgt_status vgt_ldx_method(vgt_ldx_channel *c, const vgt_method *m, vgt_error *err)
{
    if (m->masked) return VGT_OK;
    /* a pending macro call completes at this method: its emissions reach the tracker first */
    VGT_TRY(feed_mme(c, m, NULL, 1, err));
    c->cur_method = m->mthd;
    track_state(c, m);
    return vgt_sem_method(c->sem, m, err);
}

vgt_status vgt_ldx_noninc_run(vgt_ldx_channel *c, const vgt_method *m, const uint8_t *data, uint32_t count,
                              vgt_error *err)
{
    if (m->masked || !count) return VGT_OK;
    /* A write that starts or feeds a macro call (CALL_MME_MACRO/DATA, or one that ends a pending call, the
     * first) runs the call's emissions into the tracker between the run's dwords: one by one. */
    vgt_mme_format fmt = m->is_host ? VGT_MME_NONE : vgt_mme_format_for_class(m->cls);
    if (fmt != VGT_MME_NONE && m->mthd >= VGT_MME_M_CALL_MACRO0 && m->mthd < VGT_MME_M_CALL_MACRO0 + 8 * VGT_MME_MACRO_COUNT) {
        vgt_status rc = VGT_OK;
        for (uint32_t i = 0; i < count; i++) {   /* each write fed, the first failure returned */
            vgt_method one = vgt_pb_run_method(m, data, i);
            vgt_error e;
            vgt_status st = vgt_ldx_method(c, &one, rc == VGT_OK ? err : &e);
            if (rc == VGT_OK) rc = st;
        }
        return rc;
    }
    /* Otherwise the MME takes the run whole (a pending call ends at its first write), the compute state keeps
     * its last value, and the tracker takes the run as it would one by one. */
    vgt_status rc = feed_mme(c, m, data, count, err);
    vgt_method last = vgt_pb_run_method(m, data, count - 1), rest;
    const vgt_method *first = m;
    if (rc != VGT_OK) {   /* as write by write: only the first write can fail here, and it goes no further */
        if (count == 1) return rc;
        rest = vgt_pb_run_method(m, data, 1);
        first = &rest, data += 4, count--;
    }
    c->cur_method = m->mthd;
    track_state(c, &last);
    vgt_error e;
    vgt_status st = vgt_sem_noninc_run(c->sem, first, data, count, 0, rc == VGT_OK ? err : &e);
    return rc != VGT_OK ? rc : st;
}

vgt_status vgt_ldx_submit_end(vgt_ldx_channel *c, vgt_error *err)
{
    for (unsigned i = 0; i < MME_FORMATS; i++)
        if (c->mme[i]) VGT_TRY(vgt_mme_tracker_flush(c->mme[i], err));
    vgt_sem_flush(c->sem);
    return VGT_OK;
}
