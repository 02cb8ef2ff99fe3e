/* sim.h: private structures of the `sim` backend, a software model of the GPU front end.
 *
 * Files: sim_mem.c (sparse bounds-checked memory keyed by GPU VA), sim_fetch.c (channels, GPFIFO fetch,
 * the blocked-channel queue), sim_exec.c (MME glue; the sim's actions on analyze's semantic events),
 * sim_sem.c (semaphore release/acquire/reduction), sim.c (the operation table).
 *
 * Invariants:
 *  - Every byte the sim reads or writes goes through sim_mem_*, which checks it against the mapped
 *    ranges first: a hostile push buffer can fault, never touch host memory outside the page store.
 *  - A channel executes its methods in stream order. When an acquire is not satisfied the channel is
 *    BLOCKED: the acquire is held in c->acq, every later method is queued, and they run when some write
 *    (another channel's release, a host write) lets the acquire pass. Nothing ever spins.
 *  - Shaders are not executed and draws are not rasterized: launches and draws are counted, and only
 *    what the front end writes itself (semaphores, uploads, copies, QMD releases) reaches memory; since
 *    a shader may write anywhere, a launch or draw makes all memory "unknown" for --check.
 */
#ifndef VGT_SIM_H
#define VGT_SIM_H

#include <stdint.h>

#include "vgt/backend.h"
#include "vgt/events.h"
#include "vgt/mme.h"
#include "vgt/nv_facts.h"
#include "vgt/pushbuf.h"

#define SIM_PAGE_SHIFT 12
#define SIM_PAGE_SIZE (1u << SIM_PAGE_SHIFT)
#define SIM_MAX_VAS 64u
#define SIM_MAX_OBJECTS_PER_CHANNEL 64u
#define SIM_METHOD_LIMIT VGT_NV_METHOD_SPACE   /* method byte addresses the classes define */
#define SIM_WRITE_LOG_MAX (1u << 20)

/* ---- memory (sim_mem.c) ---- */
/* Every byte is KNOWN (its value is what the real GPU had: written by the host from the trace, or by
 * the GPU from known inputs) or not, and PRODUCED (the GPU wrote it from known inputs, and no host write
 * replaced it since) or not. --check compares produced bytes only. A shader that runs (a launch, a
 * draw) may write anywhere: sim_mem_invalidate() then makes every byte unknown (lazily, per page). */
enum sim_write_kind {
    SIM_HOST = 0,          /* a host (engine) write: known, not produced */
    SIM_GPU = 1,           /* a GPU write from known inputs: known and produced; logged */
    SIM_GPU_VOLATILE = 2,  /* a GPU write whose value is not reproducible (timestamps, counters, results of
                              unknown inputs): neither; logged */
};

typedef struct sim_range {
    uint64_t va, end;       /* [va, end) */
    uint32_t refs;
    uint32_t aperture;
} sim_range;

typedef struct sim_page {
    uint64_t pfn;
    uint32_t gen;                          /* the bits below are valid when gen == sim_mem.gen */
    uint8_t data[SIM_PAGE_SIZE];
    uint8_t known[SIM_PAGE_SIZE / 8];      /* bit per byte */
    uint8_t produced[SIM_PAGE_SIZE / 8];
} sim_page;

/* An alias window (sim_alias.c): the pages of [va, end) are the storage pages key, key + 1, ... rather
 * than their own VA's page numbers. Keys below 2^52 are VA page numbers (a source still mapped);
 * SIM_PRIVATE_KEY and up are storage whose source VA was unmapped while an alias still used it. */
typedef struct sim_alias {
    uint64_t va, end;       /* page aligned */
    uint64_t key;           /* storage key of the page at va */
} sim_alias;
#define SIM_PRIVATE_KEY (1ull << 56)
#define SIM_MAX_ALIASES 4096u

typedef struct sim_mem {
    sim_range *ranges;
    uint32_t nranges, cap_ranges;
    uint32_t hit;           /* index of the range the last check fell in (a cache), UINT32_MAX none */
    sim_page **slots;       /* open addressing on pfn */
    uint32_t cap_slots, npages;
    uint64_t max_pages;
    sim_page *last;         /* one-entry cache */
    uint32_t gen;           /* bumped by sim_mem_invalidate */
    vgt_backend_write *log;
    uint32_t nlog, cap_log;
    sim_alias *aliases;
    uint32_t naliases;
    uint64_t next_private;  /* the next unused private storage key */
} sim_mem;

void sim_mem_init(sim_mem *m, uint64_t max_bytes);
void sim_mem_free(sim_mem *m);
vgt_status sim_mem_map(sim_mem *m, uint64_t va, uint64_t size, uint32_t aperture, vgt_error *err);
vgt_status sim_mem_unmap(sim_mem *m, uint64_t va, uint64_t size, vgt_error *err);
/* VGT_OK when [va, va+len) is entirely mapped, else VGT_E_FAULT naming the first unmapped byte. */
vgt_status sim_mem_check(const sim_mem *m, uint64_t va, uint64_t len, const char *what, vgt_error *err);
vgt_status sim_mem_read(sim_mem *m, uint64_t va, void *dst, uint64_t len, const char *what, vgt_error *err);
vgt_status sim_mem_write(sim_mem *m, uint64_t va, const void *src, uint64_t len, int kind, const char *what,
                         vgt_error *err);
/* A GPU write whose bytes are known (and produced) where known_mask[i] is 1, unknown elsewhere. */
vgt_status sim_mem_write_masked(sim_mem *m, uint64_t va, const void *src, uint64_t len, const uint8_t *known_mask,
                                const char *what, vgt_error *err);
/* mask[i] = 1 when byte va+i is produced / known. */
vgt_status sim_mem_produced(sim_mem *m, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err);
vgt_status sim_mem_known(sim_mem *m, uint64_t va, uint64_t len, uint8_t *mask, vgt_error *err);
/* 1 when some page of [va, va+len) is stored (was ever written). */
int sim_mem_stored(sim_mem *m, uint64_t va, uint64_t len);
/* A GPU write of never-written bytes onto never-written bytes: checked against the map and logged like
 * sim_mem_write, but nothing is stored (the result reads as it did: zero, not known, not produced). */
vgt_status sim_mem_note_write(sim_mem *m, uint64_t va, uint64_t len, const char *what, vgt_error *err);
/* A shader ran: every byte may have changed (nothing is known or produced any more). O(1). */
void sim_mem_invalidate(sim_mem *m);

/* The storage key of the page holding va: its page number, or an alias window's storage page. */
static inline uint64_t sim_page_key(const sim_mem *m, uint64_t va)
{
    for (uint32_t i = 0; i < m->naliases; i++)
        if (va >= m->aliases[i].va && va < m->aliases[i].end)
            return m->aliases[i].key + ((va - m->aliases[i].va) >> SIM_PAGE_SHIFT);
    return va >> SIM_PAGE_SHIFT;
}
/* Move the stored pages with keys [k0, k1) to keys base + (key - k0) (unused). The work is bounded by
 * the pages stored, not by the range: a hostile unmap of a huge range stays cheap. */
void sim_pages_rekey(sim_mem *m, uint64_t k0, uint64_t k1, uint64_t base);
/* 1 when some byte of [va, end) is mapped. */
int sim_mem_any_mapped(const sim_mem *m, uint64_t va, uint64_t end);
/* sim_alias.c: map [va, va+size) onto the storage mapped at [src, src+size) (backend.h map_alias). */
vgt_status sim_mem_map_alias(sim_mem *m, uint64_t va, uint64_t size, uint64_t src, vgt_error *err);
/* After [va, va+size) was unmapped: windows over it go; storage of it that windows still use moves to
 * private keys, so that a later mapping at va gets fresh pages and the aliases keep theirs. */
void sim_alias_unmapped(sim_mem *m, uint64_t va, uint64_t size);

/* ---- objects and channels ---- */
/* The facts' families (vgt/nv_facts.h): sim_family_of is vgt_nv_class_family. */
enum sim_family {
    SIM_FAM_NONE = VGT_NV_FAM_NONE, SIM_FAM_HOST = VGT_NV_FAM_HOST, SIM_FAM_COMPUTE = VGT_NV_FAM_COMPUTE,
    SIM_FAM_3D = VGT_NV_FAM_3D, SIM_FAM_COPY = VGT_NV_FAM_COPY, SIM_FAM_I2M = VGT_NV_FAM_I2M, SIM_FAM_2D = VGT_NV_FAM_2D,
    SIM_FAM_COUNT_ = VGT_NV_FAM_COUNT_
};

struct sim_channel;

typedef struct sim_obj {
    struct vgt_backend *b;
    struct sim_channel *c;
    uint32_t subch;
    uint32_t cls;
    int family;
    uint32_t i2m_sem[3];    /* SET_I2M_SEMAPHORE_A/B/C: the one I2M field the UPLOAD event leaves out */
    int mme;                /* a 3D or compute object with an MME: its methods feed the channel's tracker */
} sim_obj;

typedef struct sim_qitem {
    vgt_method m;
    uint8_t fed;                /* already fed to the MME tracker (a macro emission, or a method whose
                                   feed completed a call before the channel blocked) */
    uint8_t state_only;         /* queued by a VGT_SUBMIT_STATE_ONLY submission: runs without effects */
} sim_qitem;

/* An acquire that was not satisfied: the channel waits on it (sim_exec.c on_acquire). */
typedef struct sim_acquire {
    int active;
    int cmp;                    /* enum sim_acq */
    uint32_t size;
    uint64_t va, payload;
    vgt_method at;              /* the method that executed it, for positions */
} sim_acquire;

typedef struct sim_channel {
    struct vgt_backend *b;
    uint32_t id, vas, cls, handle;
    uint64_t ring_va;
    uint32_t entries;
    vgt_pb_state pb;
    uint64_t ext_base;          /* SET_PB_SEGMENT_EXTENDED_BASE: VA bits 63:40 */
    vgt_sem_tracker *sem;       /* analyze's semantic tracker: methods in, events (what to do) out */
    uint32_t cur_mthd;          /* the method being fed to it (events do not carry it) */
    sim_acquire acq;
    sim_obj subch[8];
    uint32_t object_cls[SIM_MAX_OBJECTS_PER_CHANNEL];
    uint32_t object_count;
    /* blocked state: acq holds the acquire that blocked; queue[qhead..qtail) the methods after it */
    sim_qitem *queue;
    uint64_t qhead, qtail, qcap;
    uint64_t qins;              /* where a method that must run next is inserted (sim_queue_insert) */
    uint64_t blocks;            /* times an acquire failed on this channel (a change = "it blocked") */
    int blocked_reported;
    char blocked_on[160];
    /* The channel's MME: one tracker fed by its 3D and compute objects with their class (vgt/mme.h:
     * one instruction RAM shared by the classes, a start-address RAM per class). Created with the first
     * MME object; NULL when that failed (then macros do not run). */
    vgt_mme_tracker *mme;
    int mme_pending_subch;      /* a CALL_MME_MACRO collecting on this subchannel, or -1 */
    int mme_call_subch;         /* the subchannel of the call being run (its emissions go there) */
} sim_channel;

/* A QMD with REQUIRE_SCHEDULING_PCAS (sim_qmd.c): armed by its PCAS, pending when a completing QMD
 * scheduled it before that. */
typedef struct sim_qmd_slot {
    uint64_t va;
    uint32_t vas;
    uint8_t armed, pending;
} sim_qmd_slot;
#define SIM_QMD_SLOTS 256u

struct vgt_backend {
    vgt_backend_config cfg;
    sim_mem mem[SIM_MAX_VAS];
    uint32_t nvas;
    sim_channel **chans;
    uint32_t nchans, cap_chans;
    vgt_backend_counters ctr;
    vgt_backend_event_fn ev_fn;
    void *ev_ctx;
    uint64_t seq;               /* set_context */
    uint64_t clock_ns;          /* deterministic timestamps */
    /* execution context of the current method */
    sim_channel *cur;
    int state_only;
    uint64_t methods_this_submit;
    int limit_hit;
    vgt_status first_fault;
    vgt_error first_fault_err;
    uint8_t *fetch_buf;
    uint32_t fetch_cap;
    uint8_t *copy_buf;
    uint8_t *copy_mask;
    vgt_mme_budget mme_budget;  /* shared by every channel's tracker; a new submission's budget per submit */
    int mme_budget_said;        /* the event saying it ran out was sent */
    sim_qmd_slot qmds[SIM_QMD_SLOTS];
    uint32_t nqmds, qmd_evict;
};

/* sim_fetch.c */
vgt_status sim_submit(vgt_backend *b, uint32_t ch, const uint64_t *entries, uint32_t count, uint32_t flags,
                      vgt_error *err);
void sim_run_blocked(vgt_backend *b);
vgt_status sim_idle(vgt_backend *b, uint64_t timeout_ns, vgt_error *err);
void sim_channel_free(sim_channel *c);
void sim_event(vgt_backend *b, int kind, const vgt_method *m, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void sim_fault(vgt_backend *b, const vgt_method *m, const vgt_error *e);

/* Queue a method at c->qins (the front of what is left to run); 0, or -1 when the queue is full. */
int sim_queue_insert(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed);
static inline int sim_blocked(const sim_channel *c) { return c->acq.active || c->qhead < c->qtail; }

/* sim_exec.c. sim_exec_method runs one method: MME tracker, then analyze's semantic tracker, whose
 * events the sim acts on. It returns 1 when the channel blocked (an acquire not yet satisfied, in this
 * method or in a macro it completed); a method that could not run yet is queued at c->qins. */
int sim_family_of(uint32_t cls);
int sim_exec_method(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed);
/* A run of inline data (non-increasing, one method) at once; 0: not such a run (run it per dword). */
int sim_exec_inline_run(vgt_backend *b, sim_channel *c, const vgt_method *m, const uint8_t *data, uint32_t count);
/* Retry the acquire a channel waits on: 1 satisfied (cleared), 0 still waiting. */
int sim_retry_acquire(vgt_backend *b, sim_channel *c);
vgt_status sim_channel_init(vgt_backend *b, sim_channel *c, vgt_error *err);
void sim_obj_reset(sim_obj *o);
vgt_status sim_mme_flush(vgt_backend *b, sim_channel *c);
/* The submission ended: deliver what the semantic tracker holds back (a merged draw, a short upload). */
void sim_end_of_submission(vgt_backend *b, sim_channel *c);

/* Count and report (VGT_BEV_UNSUPPORTED) something the sim does not model. */
void sim_not_modelled(vgt_backend *b, const vgt_method *m, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Perform a SEM_RELEASE event's write (a release or a reduction); counts nothing but the reduction. */
void sim_apply_release(vgt_backend *b, const vgt_method *m, const vgt_ev_sem *s);

/* sim_copy.c: a COPY event's transfer (counted; what the sim does not model reported). */
void sim_copy(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_copy *k);

/* sim_qmd.c. A QMD was scheduled by a PCAS (a LAUNCH or EMPTY_DISPATCH event): run it now, or arm it
 * when it requires a scheduling QMD as well; running it writes its releases and acts on its dependents. */
void sim_qmd_scheduled(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_launch *l);
/* [va, va+len) of vas was written by an upload: QMDs armed there are disarmed. */
void sim_qmd_written(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t len);

/* sim_sem.c */
enum sim_red { SIM_RED_MIN, SIM_RED_MAX, SIM_RED_XOR, SIM_RED_AND, SIM_RED_OR, SIM_RED_ADD, SIM_RED_INC, SIM_RED_DEC };
enum sim_acq { SIM_ACQ_EQ, SIM_ACQ_STRICT_GEQ, SIM_ACQ_CIRC_GEQ, SIM_ACQ_AND, SIM_ACQ_NOR };
/* Release: payload (size 4 or 8 bytes) at va; with_timestamp adds the 8-byte timestamp at va+8. */
void sim_sem_release(vgt_backend *b, const vgt_method *m, uint64_t va, uint64_t payload, uint32_t size,
                     int with_timestamp);
void sim_sem_reduce(vgt_backend *b, const vgt_method *m, uint64_t va, int op, int is_signed, uint64_t payload,
                    uint32_t size);
/* Returns 1 when satisfied, 0 when not, -1 on a fault (reported). */
int sim_sem_acquire(vgt_backend *b, const vgt_method *m, uint64_t va, int cmp, uint64_t payload, uint32_t size);
uint64_t sim_timestamp(vgt_backend *b);

static inline sim_mem *sim_vas_mem(vgt_backend *b, uint32_t vas) { return &b->mem[vas]; }

#endif
