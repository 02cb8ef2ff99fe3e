/* synth.h: work rebuilt without the captured push buffers (the replay's synth lane, `vgt decompile`).
 *
 * A synthesizer (vgt_synth) turns the work a stream asked for (launch_desc.h) into a fresh method stream
 * for a channel of its own and the memory that stream needs:
 *
 *   LAUNCH     the compute class state the launch ran with (SET_* methods that differ from what this
 *              channel last set), a fresh QMD in the compute class's QMD version (the captured QMD's own when
 *              it is a layout of the same major version: V02_02 on TURING_COMPUTE_A) (vgt_qmd_encode) with its
 *              program and constant buffers copied to allocations of its own and every address field
 *              relocated (the QMD's program, program prefetch and constant buffer addresses; the 64-bit words
 *              of the constant buffers that point into a relocated constant buffer, the program or the QMD
 *              itself), then INVALIDATE_SHADER_CACHES_NO_WFI (instruction, data, constant: the host wrote
 *              them) and SEND_PCAS_A + SEND_SIGNALING_PCAS2_B (PCAS_B before Ampere). Dependent QMDs are left out: the
 *              synthesized stream orders the launches (each waited for). Releases keep their addresses.
 *              A QMD that waits for a scheduling QMD (REQUIRE_SCHEDULING_PCAS: a CUDA graph's kernel node,
 *              sent once and run by every graph launch) is a node: it keeps its dependents (the next node),
 *              and it and its program and constant buffers go to memory that outlives
 *              vgt_synth_forget_memory (cfg.alloc_keep), since later submissions schedule it.
 *   EMPTY_DISPATCH that SCHEDULEs a QMD: rebuilt like a launch with its dependents (a CUDA graph launch starts
 *              the graph's node chain), unless a launch of the same plan decrements its dependence (CUDA's
 *              stream-ordering QMD): then it leaves the plan again. Others: nothing.
 *   Dependents of nodes and empty dispatches name a node rebuilt before by its new VA (the captured QMD at
 *   the captured VA was never sent with its PCAS in a synthesized stream, so scheduling it there would run
 *   nothing); others keep their captured VA. An upload over a node's captured QMD, or another launch of a
 *   QMD there, ends the node (the driver reuses the memory).
 *   UPLOAD     LINE_LENGTH_IN .. LAUNCH_DMA and its LOAD_INLINE_DATA (pitch layouts)
 *   COPY       OFFSET_IN/OUT, PITCH_IN/OUT, LINE_LENGTH_IN, LINE_COUNT, remap constants, SET_SEMAPHORE_*,
 *              LAUNCH_DMA as captured (pitch layouts; semaphore-only ones of any layout)
 *   SEMAPHORE  the host's SEM_ADDR_LO .. SEM_EXECUTE, or the class's report semaphore methods, as captured
 *
 * Everything else (draws, empty dispatches that release semaphores) cannot be synthesized: vgt_synth_work
 * says so (VGT_E_UNSUPPORTED); a launch that must not be built (its program not in the trace, a QMD the
 * layout cannot hold) is refused (VGT_E_ARG). Before anything is submitted, vgt_synth_check decodes the
 * synthesized stream back (push-buffer decoder and semantic tracker, QMDs read from the plan's own
 * memory) and compares every event with the work it was built from: a stream that does not decode to the
 * same launches, copies, uploads and semaphores never reaches a GPU.
 *
 * Facts: method offsets are the generated class constants of trace-format/facts (a family's methods
 * share their offsets: events_table.c relies on the same). */
#ifndef VGT_SYNTH_H
#define VGT_SYNTH_H

#include <stdint.h>

#include "vgt/error.h"
#include "vgt/launch_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One header's worth of methods: count dwords from dw[first], incrementing (INC) or not (NON_INC). */
typedef struct vgt_synth_run {
    uint8_t subch;
    uint8_t noninc;
    uint8_t set_object;       /* SET_OBJECT (host method 0): data is the class */
    uint32_t cls;             /* the class the methods belong to (the host class for host methods) */
    uint32_t mthd;
    uint32_t count;
    uint64_t first;
    uint64_t work;            /* the work item it belongs to (vgt_work.index) */
} vgt_synth_run;

/* Memory the stream needs, at a VA the allocator gave. */
typedef struct vgt_synth_blob {
    uint64_t va, len;
    uint64_t off;             /* into bytes */
    char what[64];            /* "program of launch 3", "constant buffer 0 of launch 3", "QMD of launch 3" */
} vgt_synth_blob;

/* What decoding the stream back must give, one per event, in order. */
typedef struct vgt_synth_expect {
    vgt_event ev;             /* pointers cleared; LAUNCH: the relocated QMD in ev.u.launch.qmd */
    uint64_t work;
    uint64_t data_hash;       /* UPLOAD: FNV-1a 64 of its bytes */
} vgt_synth_expect;

typedef struct vgt_synth_plan {
    vgt_synth_run *runs;
    uint32_t nruns, cap_runs;
    uint32_t *dw;
    uint64_t ndw, cap_dw;
    vgt_synth_blob *blobs;
    uint32_t nblobs, cap_blobs;
    uint8_t *bytes;
    uint64_t nbytes, cap_bytes;
    vgt_synth_expect *expect;
    uint32_t nexpect, cap_expect;
    uint64_t works, launches; /* work items taken, launches among them */
    uint64_t ordering_only;   /* empty dispatches that only ordered the stream (dependents): nothing to build */
} vgt_synth_plan;

/* The synthesizer's memory: size bytes aligned to align; 0 when none is left. */
typedef uint64_t (*vgt_synth_alloc_fn)(void *ctx, uint64_t size, uint64_t align);

typedef struct vgt_synth_config {
    vgt_synth_alloc_fn alloc; /* required */
    void *ctx;
    /* memory that vgt_synth_forget_memory does not take back (a graph's nodes, scheduled by later
     * submissions); NULL: alloc */
    vgt_synth_alloc_fn alloc_keep;
    uint32_t host_cls;        /* the channel class the stream runs on */
    /* 1: the caller adds the context state (local memory) where the captured driver sent it
     * (vgt_synth_context_state; a replay of the whole stream); 0: each launch re-sends the local memory
     * its channel had set (a launch on its own: vgt decompile) */
    int context_state_in_stream;
} vgt_synth_config;

typedef struct vgt_synth vgt_synth;

vgt_status vgt_synth_new(const vgt_synth_config *cfg, vgt_synth **out, vgt_error *err);
void vgt_synth_free(vgt_synth *s);
/* Start a new plan (a new submission); the channel state (subchannel bindings, compute state) carries on. */
void vgt_synth_begin(vgt_synth *s);
/* Add one work item. VGT_E_UNSUPPORTED: this kind of work cannot be synthesized (err says what); VGT_E_ARG:
 * a launch that must not be built (err says why); the plan is then unusable until vgt_synth_begin. */
vgt_status vgt_synth_work(vgt_synth *s, const vgt_work *w, vgt_error *err);
const vgt_synth_plan *vgt_synth_plan_get(const vgt_synth *s);
/* Decode the plan's stream back and compare it with the work (see above). VGT_E_DECODE naming the first
 * difference. Also commits the channel state the plan leaves (call it once per plan, before submitting). */
vgt_status vgt_synth_check(vgt_synth *s, vgt_error *err);
/* The allocator (cfg.alloc, not cfg.alloc_keep) was reset: programs and constant buffers are copied again. */
void vgt_synth_forget_memory(vgt_synth *s);
/* Other methods ran on the channel (captured ones, verbatim): its bindings and compute state are set again
 * by the next plan. */
void vgt_synth_forget_state(vgt_synth *s);
/* Local memory (SET_SHADER_LOCAL_MEMORY_*: base, window, size per TPC) is state of the channel's context,
 * which every channel of a group shares: CUDA sets it once, on one channel, when a kernel needs more, and
 * launches on the group's other channels depend on it. So these methods are not re-sent per launch from
 * the launch's own channel (a stale, smaller value would undo another channel's resize): the stream
 * carries them where the captured driver sent them (vgt_synth_context_state). */
int vgt_synth_is_context_state(uint32_t cls, uint32_t mthd);
/* Which local-memory method mthd is on compute class cls (from the class tables' names). */
typedef enum vgt_lmem_role {
    VGT_LMEM_NONE = 0,
    VGT_LMEM_BASE_UPPER,      /* SET_SHADER_LOCAL_MEMORY_A */
    VGT_LMEM_BASE_LOWER,      /* SET_SHADER_LOCAL_MEMORY_B */
    VGT_LMEM_SIZE_UPPER,      /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A: bytes per TPC */
    VGT_LMEM_SIZE_LOWER,      /* SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B */
    VGT_LMEM_OTHER            /* the window, NON_THROTTLED_C (SM count), throttled sizes */
} vgt_lmem_role;
vgt_lmem_role vgt_lmem_method_role(uint32_t cls, uint32_t mthd);
/* One captured context-state method, added to the plan at this point of the stream. */
vgt_status vgt_synth_context_state(vgt_synth *s, unsigned subch, uint32_t cls, uint32_t mthd, uint32_t value,
                                   vgt_error *err);
/* The plan's stream as push-buffer dwords (vgt_pbwriter). *n receives the count; the array lives in s. */
const uint32_t *vgt_synth_pushbuf(vgt_synth *s, uint32_t *n, vgt_error *err);

#ifdef __cplusplus
}
#endif
#endif
