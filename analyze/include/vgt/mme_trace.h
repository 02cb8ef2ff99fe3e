/* mme_trace.h: MME macros across a whole trace: per channel and class, which macro bodies were uploaded,
 * which body every CALL_MME_MACRO(j) ran (the one in effect at that moment), with what parameters, what it
 * emitted, and whether it ended cleanly; recurring bodies recognised by content hash and named by what
 * they emit. Built on the MME library (vgt/mme.h: one vgt_mme_tracker per channel, fed with each method's
 * class) and the trace walker (vgt/walk.h).
 *
 * Two ways to drive it:
 *   - its own walk:   vgt_mme_trace_new(&cfg, &t, &err); vgt_mme_trace_run(t, "t.vgt", &opt, NULL, &err);
 *   - inside a caller's walk (decode, db): call vgt_mme_trace_model() from on_record,
 *     vgt_mme_trace_method() from on_method, vgt_mme_trace_submit_end() from on_submit_end and
 *     vgt_mme_trace_finish() after the walk.
 * Calls reach cfg.on_call as they complete; the macro registry (every distinct body seen bound to an
 * index, with call counts and the name derived from its emissions) is read after the walk with
 * vgt_mme_trace_macro_count()/vgt_mme_trace_macro_at().
 *
 * Invariants:
 *  - Every method of every submission is fed, filters or not (the instruction RAM, start-address RAM and
 *    shadow state must be right when a selected submission comes); calls carry `selected`.
 *  - A call completes when the next method of its channel's MME objects that is not its CALL_MME_DATA
 *    arrives, or at the end of its submission (the GPU runs a macro once its data stops; a call never
 *    spans submissions).
 *  - A channel handle re-allocated (new model alloc_seq) starts with empty MME state.
 *  - A macro version is (channel, class, index, start, body hash): a re-upload of a different body at the
 *    same index is a new version; the same body re-uploaded is the same version.
 *  - Pointer units and sharing are the library's model (vgt/mme.h, "macro-upload tracker"): TU104
 *    LOAD_MME_INSTRUCTION_RAM_POINTER and start addresses count 3-dword groups, Fermi ones dwords; the
 *    MME objects of one channel (3D and compute) share one instruction RAM and each has its own
 *    start-address RAM [inferred from NVIDIA driver traces].
 */
#ifndef VGT_MME_TRACE_H
#define VGT_MME_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"
#include "vgt/mme.h"
#include "vgt/walk.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_MME_TRACE_MAX_OBJECTS 1024u      /* (channel, class) pairs with an MME, ~40 KiB of state each
                                                plus ~50 KiB per channel */
#define VGT_MME_TRACE_MAX_VERSIONS 65536u    /* distinct macro versions kept in the registry */
#define VGT_MME_TRACE_MAX_CODE_DWORDS (64u << 20) /* all kept bodies together (256 MiB) */

/* ---- what a macro emits: categories and the naming rule table (mme_trace_name.c) ---------------- */
enum {
    VGT_MME_EMIT_DRAW = 1u << 0,        /* BEGIN, END, DRAW_* */
    VGT_MME_EMIT_CLEAR = 1u << 1,       /* CLEAR_SURFACE */
    VGT_MME_EMIT_LAUNCH = 1u << 2,      /* compute LAUNCH, SEND_PCAS_*, SEND_SIGNALING_PCAS* */
    VGT_MME_EMIT_CB_LOAD = 1u << 3,     /* LOAD_CONSTANT_BUFFER* */
    VGT_MME_EMIT_CB_BIND = 1u << 4,     /* BIND_GROUP_CONSTANT_BUFFER */
    VGT_MME_EMIT_INLINE = 1u << 5,      /* LAUNCH_DMA, LOAD_INLINE_DATA (inline-to-memory) */
    VGT_MME_EMIT_REPORT = 1u << 6,      /* SET_REPORT_SEMAPHORE_D, REPORT_SEMAPHORE_EXECUTE */
    VGT_MME_EMIT_SET = 1u << 7,         /* any other SET_* */
    VGT_MME_EMIT_OTHER = 1u << 8,       /* a known method of none of the above */
    VGT_MME_EMIT_UNKNOWN = 1u << 9,     /* a method the class table does not define */
    VGT_MME_EMIT_SYNC = 1u << 10,       /* NO_OPERATION, WAIT_FOR_IDLE: neutral for naming */
    VGT_MME_EMIT_FALCON = 1u << 11,     /* SET_FALCON*: methods handed to the context-switch firmware */
};

/* The category bit of one emitted method of class cls (by its name in the class table). */
uint32_t vgt_mme_emit_category(uint32_t cls, uint32_t method);
/* The name a macro gets from the OR of the categories of everything it emitted (first rule that matches:
 * "draw", "clear", "launch", "constant-buffer update", "inline upload", "report", "firmware method",
 * "constant-buffer bind", "state setter", "sync", else "mixed"); "no emission" when it emitted nothing,
 * "not called" when it never ran (calls == 0). Never NULL. */
const char *vgt_mme_macro_name(uint32_t categories, uint64_t calls);

/* The categories of the methods a body selects with constants (TU104 outputs whose method comes from an
 * immediate; Fermi SET_MADDR of ADD_IMM from R0): a lower bound of what it can emit, without running it.
 * code[0..ndwords) is the body from its first instruction. */
uint32_t vgt_mme_static_categories(vgt_mme_format fmt, uint32_t cls, const uint32_t *code, uint32_t ndwords);

/* ---- registry of macro versions --------------------------------------------------------------- */
typedef struct vgt_mme_trace_macro {
    uint32_t id;                  /* 0, 1, 2 ... in order of first sight */
    uint32_t client, channel;     /* channel handle */
    uint64_t channel_alloc_seq;   /* the channel incarnation (UINT64_MAX unknown) */
    uint32_t cls;
    vgt_mme_format fmt;
    uint32_t index;               /* j of CALL_MME_MACRO(j) */
    uint32_t start;               /* start address as the stream wrote it (instructions: TU104 groups) */
    uint32_t start_dword;         /* in instruction-RAM dwords */
    uint32_t dwords;              /* body length (vgt_mme_body_dwords) */
    uint64_t hash;                /* vgt_mme_body_hash */
    uint64_t first_submission, first_seq;   /* where it was first seen bound (upload or call) */
    uint64_t calls, call_errors, emits;
    uint32_t categories;          /* OR of VGT_MME_EMIT_* over every call */
    uint32_t static_categories;   /* vgt_mme_static_categories() of the body */
    const uint32_t *code;         /* the body's dwords (code[0] = dword start_dword) */
} vgt_mme_trace_macro;

/* The macro's name: from its calls' emissions when it ran, else from its code (static categories) when
 * those say anything, else "not called". *from (may be NULL) receives "calls", "code" or "none". */
const char *vgt_mme_trace_macro_name(const vgt_mme_trace_macro *v, const char **from);

/* ---- one completed call -------------------------------------------------------------------------- */
typedef struct vgt_mme_trace_call {
    uint64_t id;                  /* 0, 1, 2 ... over the whole trace */
    uint64_t submission, seq;     /* the submission the CALL_MME_MACRO was in */
    vgt_mpos pos;                 /* where its CALL_MME_MACRO method was */
    uint32_t client, channel, subch, cls;
    int selected;                 /* the submission passes the walk's filters */
    const vgt_mme_trace_macro *macro;   /* the version that ran (NULL when j was never bound) */
    uint32_t index;               /* j */
    const uint32_t *params;
    uint32_t nparams;
    int params_truncated;
    vgt_status status;            /* VGT_OK, VGT_E_DECODE (result.error set) or VGT_E_LIMIT */
    vgt_mme_result result;        /* error class, pc, instructions, ... */
    const char *message;          /* the simulator's message when status != VGT_OK, else "" */
    const vgt_mme_emit *emits;
    uint32_t nemits;
    uint32_t categories;          /* OR of VGT_MME_EMIT_* of this call's emissions */
} vgt_mme_trace_call;

/* Called once per completed call; the pointers in *call live only during the call. Return non-zero to
 * stop: the feeding function then returns VGT_E_EOF and vgt_mme_trace_run() stops the walk cleanly. */
typedef int (*vgt_mme_trace_call_fn)(void *user, const vgt_mme_trace_call *call);

typedef struct vgt_mme_trace_config {
    vgt_mme_trace_call_fn on_call;    /* may be NULL */
    void *user;
    vgt_mme_sim_config sim;           /* instruction limit etc.; zero = defaults */
    uint32_t max_call_params;         /* 0: VGT_MME_DEFAULT_MAX_CALL_PARAMS */
    uint32_t max_emits;               /* per call; 0: VGT_MME_DEFAULT_MAX_EMITS */
    void (*free_user)(void *user);    /* may be NULL: called with user by vgt_mme_trace_free() */
    /* MME budgets (vgt/mme.h vgt_mme_budget): 0 the defaults, UINT64_MAX none */
    uint64_t budget_submission, budget_trace, budget_failed;
} vgt_mme_trace_config;

typedef struct vgt_mme_trace_stats {
    uint64_t objects;             /* (channel, class) objects with an MME seen */
    uint64_t channels;            /* channel incarnations with an MME (one tracker each) */
    uint64_t versions;            /* macro versions in the registry */
    uint64_t calls, call_errors, selected_calls, emits;
    uint64_t unbound_calls;       /* CALL_MME_MACRO(j) with j never bound, or nothing uploaded at its start */
    uint64_t unknown_emits;       /* emitted methods the calling class's table does not define */
    uint64_t dropped_versions;    /* over VGT_MME_TRACE_MAX_VERSIONS or the code budget: not kept */
    uint64_t dma_errors;          /* push-buffer MME DMA methods that raised an error class (after finish) */
    uint64_t orphan_data;         /* CALL_MME_DATA with no call of that macro collecting (after finish) */
    uint64_t calls_refused;       /* calls not run: an MME budget was spent (vgt_mme_trace_budget_note) */
    uint64_t params_left_calls;   /* clean calls whose macro exited with parameters unread (TU104 discards
                                     them; NVIDIA's driver does this on purpose with its guard macros) */
} vgt_mme_trace_stats;

typedef struct vgt_mme_trace vgt_mme_trace;

vgt_status vgt_mme_trace_new(const vgt_mme_trace_config *cfg, vgt_mme_trace **out, vgt_error *err);
void vgt_mme_trace_free(vgt_mme_trace *t);

/* Inside a caller's walk. model: the walker's model (DMA reads come from its memory). A non-OK status
 * is a failure of the run itself (no memory, a limit), never a macro's error class; a non-zero return
 * of on_call is reported as VGT_E_EOF ("stopped"), which callers treat as a request to stop. */
void vgt_mme_trace_model(vgt_mme_trace *t, const vgt_model *model);
vgt_status vgt_mme_trace_method(vgt_mme_trace *t, const vgt_walk_submit *s, const vgt_method *m, vgt_error *err);
/* A walk that takes non-increasing runs whole (on_noninc_run) feeds vgt_mme_trace_method every dword of a
 * run of these methods: instruction and start-address RAM loads and their pointers
 * (LOAD_MME_INSTRUCTION_RAM_POINTER .. SET_MME_SHADOW_RAM_CONTROL), the MME DMA methods (SET_MME_MEM_ADDRESS_A
 * .. SET_MME_DATA_FIFO_CONFIG), CALL_MME_MACRO/DATA (and up). Of any other method only the last value of the
 * run matters to the trace. */
int vgt_mme_trace_needs_every_dword(uint32_t mthd);
vgt_status vgt_mme_trace_submit_end(vgt_mme_trace *t, const vgt_walk_submit *s, vgt_error *err);
vgt_status vgt_mme_trace_finish(vgt_mme_trace *t, vgt_error *err);

/* Its own walk over a trace file: the above, with opt's filters deciding `selected` (deliver_unselected
 * is forced on). stats may be NULL. */
vgt_status vgt_mme_trace_run(vgt_mme_trace *t, const char *path, const vgt_walk_options *opt,
                             vgt_walk_stats *stats, vgt_error *err);

uint32_t vgt_mme_trace_macro_count(const vgt_mme_trace *t);
const vgt_mme_trace_macro *vgt_mme_trace_macro_at(const vgt_mme_trace *t, uint32_t i);
const vgt_mme_trace_stats *vgt_mme_trace_stats_get(const vgt_mme_trace *t);
/* Which MME budget ran out, where, and how many calls were not run (vgt_mme_budget_note); 0 when none. */
int vgt_mme_trace_budget_note(const vgt_mme_trace *t, char *buf, size_t size);

/* ---- printing (used by `vgt mme` and `vgt decode --expand-macros`) --------------------------------- */
#define VGT_MME_PRINT_EMITS 1u    /* each emitted method on its own line, decoded with the class tables */
#define VGT_MME_PRINT_PARAMS 2u   /* the call's parameters */
/* "call 12 macro 0x22 (draw, version 3, hash 0123456789abcdef) at 17:0:40 channel 0x100 HOPPER_A:
 * 3 params, 9 emits, 40 instructions[, ERROR <class> at pc N: <message>]" (one line), then with the flags
 * the parameter line and one line per emission, each line prefixed with indent. */
void vgt_mme_trace_print_call(FILE *f, const vgt_mme_trace_call *c, unsigned flags, const char *indent);
/* The same as one JSON object (no newline). */
void vgt_mme_trace_print_call_json(FILE *f, const vgt_mme_trace_call *c, unsigned flags);

/* `vgt decode --expand-macros` (mme_trace_expand.c): a trace state whose selected calls are printed to
 * out as they complete: text (the call, its parameters and its emitted methods decoded, lines prefixed
 * "    => ") or, with jsonl, one line {"type":"macro_call","expansion":{...call...}} each. Drive it inside
 * the decode walk as described at the top of this file; feed each method before printing it, so that a
 * call's expansion appears right after the call's last parameter. */
vgt_status vgt_mme_trace_new_printer(FILE *out, int jsonl, vgt_mme_trace **t, vgt_error *err);
/* One call as `vgt decode --expand-macros` shows it (nothing for a call of an unselected submission):
 * "    => " lines, or one {"type":"macro_call",...} JSON line. Returns non-zero on an output error. */
int vgt_mme_trace_print_expansion(FILE *out, int jsonl, const vgt_mme_trace_call *c);

/* ---- SQLite (mme_db.c; tables documented in docs/sqlite-schema.md) --------------------------- */
struct sqlite3;
/* Create mme_macros, mme_calls, mme_call_params, mme_emits (their indexes come with vgt_mme_db_fill). */
vgt_status vgt_mme_db_schema(struct sqlite3 *db, vgt_error *err);
/* Walk the trace at path (opt's filters: rows for calls of selected submissions only; every macro version
 * is written), fill the tables, then index them. The caller owns the transaction. calls_out (may be NULL) receives the
 * number of mme_calls rows; budget_note (may be NULL) what vgt_mme_trace_budget_note says ("" if nothing). */
vgt_status vgt_mme_db_fill(struct sqlite3 *db, const char *path, const vgt_walk_options *opt, uint64_t *calls_out,
                           char *budget_note, size_t note_size, vgt_error *err);

#ifdef __cplusplus
}
#endif
#endif
