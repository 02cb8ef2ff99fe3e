/* replay.h: the replay engine. It reads a trace (a file, or a stream: the same engine runs live on a
 * streaming reader), folds every record through the trace model (model.h), rebuilds VA spaces,
 * mappings, memory contents, channels and engine objects on a backend (backend.h), and hands each
 * submission to a lane. With check on, it compares what the backend produced with what the trace
 * observed, per submission.
 *
 *     vgt_replay_options o = vgt_replay_defaults();
 *     o.check = 1;
 *     vgt_replay *rp;  vgt_error err;
 *     vgt_replay_open(&rp, &o, &err);
 *     vgt_replay_run(rp, reader, &err);          // or vgt_replay_record() for each record you have
 *     vgt_replay_finish(rp, &err);               // waits for the channels; reports what never finished
 *     const vgt_replay_summary *s = vgt_replay_summary_get(rp);
 *     vgt_replay_close(rp);
 *
 * The engine replays one GPU address space, the model's: every GPU_MAP (whatever its VA-space handle)
 * lands in one backend VA space. Lane 1 keeps captured VAs, except for mappings that cannot keep them
 * (not 4 KiB aligned, overlapping a mapping of another captured VA space, or named by
 * options.relocate): those move, and every captured VA the engine hands to the backend goes through one
 * translation (vgt_replay_translate); the address operands and GPFIFO entries that point into a moved
 * mapping are rewritten and reported (VGT_RPT_RELOCATION). A memory object mapped at two VAs is mapped
 * once and aliased (backend map_alias). Records, the model and reports keep captured VAs.
 *
 * Inside, each record goes: model -> engine (state on the backend) and, for a GPFIFO_SUBMIT, the
 * channel's one decoder and semantic tracker -> the subscribers to that stream (relocation, render
 * targets, volatile bytes for the checks, the MME guard) -> the lane -> backend submit (the doorbell).
 * Planning is a pre-pass inside the engine over the records it holds back before replaying (options.plan):
 * a stream and a file of one trace are planned, replayed and checked alike.
 *
 * Lanes: `verbatim` runs the captured push buffers unchanged at their captured VAs; `synth` (lane 2)
 * rebuilds each submission's work (launches, uploads, copies, semaphores) into a fresh push buffer with
 * fresh QMDs on a channel of its own, checked by decoding it back before it is submitted; `auto` is
 * verbatim, and on hardware synth for submissions verbatim must not run; `cuda` (lane 3, backend cuda)
 * forwards the captured CUDA driver API calls (format 1.2 records) through the host's libcuda, at the
 * captured device addresses where the driver lets it reserve them, relocating pointer parameters where not,
 * and checks the bytes copied back to the host against the capture's. A backend that does not implement a
 * lane asked for by name refuses it cleanly.
 */
#ifndef VGT_REPLAY_H
#define VGT_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "vgt/backend.h"
#include "vgt/range.h"
#include "vgt/error.h"
#include "vgt/png.h"
#include "vgt/surface.h"
#include "vgt/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vgt_lane { VGT_LANE_AUTO = 0, VGT_LANE_VERBATIM = 1, VGT_LANE_SYNTH = 2, VGT_LANE_CUDA = 3 } vgt_lane;

const char *vgt_lane_name(vgt_lane l);               /* "verbatim"...; "auto" */
int vgt_lane_from_name(const char *name);            /* -1 when unknown */

/* What the engine tells its caller while it runs (the CLI prints these). */
enum vgt_replay_report_kind {
    VGT_RPT_SUBMIT_CHECKS = 1,   /* the checks after one submission: passed/failed/skipped */
    VGT_RPT_MISMATCH = 2,        /* one check that failed */
    VGT_RPT_EVENT = 3,           /* a backend event: fault, unsupported operation, blocked channel ... */
    VGT_RPT_WARNING = 4,         /* something the engine could not rebuild exactly (msg says what) */
    VGT_RPT_RELOCATION = 5,      /* lane 1 moved a mapping, rewrote an operand or a GPFIFO entry, or
                                    mapped a memory object's second VA onto its first (msg says which) */
};

typedef struct vgt_replay_report {
    int kind;
    int64_t submit_index;        /* 0-based GPFIFO_SUBMIT number the report belongs to; -1 before any */
    uint64_t submit_seq;         /* its record sequence number */
    uint32_t channel;            /* its channel handle */
    /* VGT_RPT_SUBMIT_CHECKS */
    uint32_t passed, failed, skipped;   /* skipped: not comparable */
    /* VGT_RPT_MISMATCH */
    uint64_t record_seq;         /* the MEMORY / SEMAPHORE record compared */
    const char *record_kind;     /* "MEMORY observed", "MEMORY changed", "MEMORY initial", "SEMAPHORE" */
    uint64_t va;                 /* the record's range */
    uint64_t length;
    uint64_t differing;          /* bytes that differ (of those compared) */
    uint64_t compared;
    uint64_t first_va;           /* the first differing byte */
    uint64_t expected, found;    /* SEMAPHORE: the values; MEMORY: up to 8 bytes from first_va, little-endian */
    uint32_t value_bytes;        /* how many bytes expected/found hold */
    /* VGT_RPT_EVENT: the backend event kind; VGT_RPT_WARNING: 0 */
    int event_kind;
    const char *msg;             /* a complete sentence for every kind */
} vgt_replay_report;

typedef void (*vgt_replay_report_fn)(void *ctx, const vgt_replay_report *r);

struct vgt_reloc_plan;
struct vgt_replay_submitted;

typedef struct vgt_replay_options {
    const vgt_backend_ops *backend;   /* NULL: vgt_backend_auto() */
    vgt_lane lane;                    /* VGT_LANE_AUTO: the first lane the backend implements */
    vgt_range submits;                /* submissions to replay and check (0-based); reading stops after the last */
    int prefix_state_only;            /* submissions before submits.first: 0 = run them unchecked (the
                                         state they leave, e.g. semaphores, is what the window starts
                                         from), 1 = only track state (bindings, macros: no GPU work) */
    int check;
    vgt_backend_config backend_cfg;
    uint64_t model_memory_limit;      /* 0: the model's default */
    vgt_replay_report_fn report;      /* may be NULL */
    void *report_ctx;
    /* asynchronous backends (VGT_CAP_ASYNC: the GPU): how long to wait for each submission to finish
     * before its checks read memory; 0 = VGT_REPLAY_DEFAULT_SUBMIT_TIMEOUT_MS. A submission still
     * running then is reported (blocked) and waited for again at the next one. */
    uint32_t submit_timeout_ms;
    int no_wait;                      /* 1: do not wait after each submission (speed runs; no checks) */
    /* 1: on an asynchronous backend, wait for submitted work only when something needs it finished, not
     * after each submission: before a check or the census reads memory, before a host write (a MEMORY
     * record, the synth lane's or a relocated QMD's bytes, a push-buffer segment over one still in flight),
     * before an unmap, and at the end. The doorbell of the next submission then rings without waiting for
     * the GPU to run the previous one (live replays: `vgt replay --live`, `vgt record --replay`). Checks
     * compare the same bytes as with a wait after each submission; a fault is found at the next wait or
     * submission on its channel, so it can be reported against a later submission. The synth lane's work
     * extractor reads the replay's memory as it is (bytes in-flight work has yet to write read as before). */
    int wait_demand;
    int census;                       /* 1: store census (census.c): watched ranges diffed per submission */
    int dump_state;                   /* 1: note the observed regions for vgt_replay_dump_state */
    int track_render_targets;         /* 1: decode SET_COLOR_TARGET_* state (rt.c) for --dump-rt */
    /* lane 1 relocation (addrmap.c): the mapping containing each of these captured VAs moves to a new VA
     * (`vgt replay --relocate`); mappings that are not 4 KiB aligned or overlap a mapping of another
     * captured VA space move without being asked. Copied by vgt_replay_open. */
    const uint64_t *relocate;
    uint32_t nrelocate;
    /* planning (plan.c). Before it replays a record the engine plans, in one pre-pass over the records
     * it has read: where the backend's own range goes (backend_cfg.reserved_va is the preferred VA),
     * which mappings move and the address operands they take along (each macro-built one a warning),
     * and the ranges the trace observes (the census watches them from the first submission). It holds
     * the records back for that, up to plan_buffer_limit bytes, so that a stream and a file of the same
     * trace are planned alike. It plans when the backend is hardware (VGT_CAP_ASYNC) and the replay is not
     * live, census is on, relocate is given, or plan is 1; otherwise records replay as they come. */
    int plan;
    uint64_t plan_buffer_limit;       /* 0: VGT_REPLAY_PLAN_BUFFER_DEFAULT */
    /* the plan once made, before any record is replayed (called with report_ctx); may be NULL */
    void (*on_plan)(void *ctx, const struct vgt_reloc_plan *plan);
    /* 1: run a trace marked synthetic (identity capture_mode=synthetic) on a hardware backend anyway.
     * Synthetic traces carry placeholder shader code; on the GPU it raises engine exceptions, and a
     * graphics-engine exception leaves the GPU unable to finish other processes' Vulkan draws. */
    int force;
    /* vgt_replay_run calls it with each record it reads, before replaying it (a caller's progress line:
     * rec->chunk_offset is how far into the file the replay is); may be NULL */
    void (*progress)(void *ctx, const vgt_record *rec);
    void *progress_ctx;
    /* live: the trace is being recorded while it is replayed (`vgt record --replay`, `vgt replay --live`):
     * nothing may wait for its end. Without census, plan or relocate every record is replayed as it comes:
     * the backend opens at vgt_replay_open with backend_cfg.reserved_va (or its default), so the program's
     * channels and mappings are set up while it is still starting up, not at its first submission (plan.c);
     * a mapping over the backend's range moves at its GPU_MAP. With one of those, the plan is made over the
     * records before the first submission (the setup: most mappings), the backend's range placed away from
     * the mappings seen so far, and the rest decided as it comes (plan.c): a later mapping over the backend's range, or one that cannot keep its
     * VA, moves at its GPU_MAP with its operands rewritten from then on; a range the trace observes later
     * (the capture observes at the end) is watched by the census only from when it is read, so census rows
     * of the submissions before it are missing (a warning says so). Checks are the same as on the file. */
    int live;
    /* each submission run (inside or before --submits), when it was handed to the backend: latency
     * measurements (`--latency`). Called with report_ctx; may be NULL. */
    void (*on_submitted)(void *ctx, const struct vgt_replay_submitted *s);
    /* per-channel counters of the decoded stream (vgt_replay_channels): launches, draws, macro calls; the
     * channels' semantic trackers run for it */
    int channel_counters;
    /* census per draw (`vgt replay --census-per-draw`, draw_cuts.c): with census on, a verbatim submission
     * is split after each of these draws and launches (sorted by seq, entry, dword: the method that issued
     * each, as vgt_draws_run numbers them), each piece waited for (an asynchronous backend: its idle, a
     * fence semaphore released behind the work) and the watched ranges read back, so that every census row
     * names the draws of its piece. The array must outlive the replay. */
    const struct vgt_replay_draw_cut *draw_cuts;
    uint32_t ndraw_cuts;
} vgt_replay_options;

/* A draw or launch the census closes the work after (options.draw_cuts). */
typedef struct vgt_replay_draw_cut {
    uint64_t seq;                     /* its submission record */
    uint32_t entry, dword;            /* the method that issued it (a macro's draw: its CALL_MME_MACRO) */
    uint64_t number;                  /* its number in `vgt draws` */
} vgt_replay_draw_cut;

/* One submission as the engine ran it. Times are CLOCK_MONOTONIC (vgt_now_ns), the clock the capture
 * stamps its records with: on one machine, capture_ts and doorbell_ns compare. */
typedef struct vgt_replay_submitted {
    int64_t submit_index;
    uint64_t seq;
    uint32_t channel;
    uint64_t capture_ts;              /* the GPFIFO_SUBMIT record's timestamp: the capture's doorbell */
    uint64_t read_ns;                 /* its chunk's last bytes were read from the input (before the reader's
                                         checks); received_ns when unknown (a record fed by vgt_replay_record,
                                         or held back for the plan) */
    uint64_t received_ns;             /* the engine got the record (after the reader's checks) */
    uint64_t submit_ns;               /* the lane started (segments written, entries rewritten) */
    uint64_t doorbell_ns;             /* the backend's submit returned: the replayed doorbell rung */
    uint64_t waited_ns;               /* time the engine spent waiting for the backend to finish earlier work
                                         since the previous submission's doorbell (asynchronous backends) */
} vgt_replay_submitted;

/* Per channel, what the replay ran (options.channel_counters; faults always). */
typedef struct vgt_replay_channel_count {
    uint32_t client, handle;
    uint64_t submissions, launches, draws, macro_calls, faults;
} vgt_replay_channel_count;

#define VGT_REPLAY_DEFAULT_SUBMIT_TIMEOUT_MS 5000u
#define VGT_REPLAY_PLAN_BUFFER_DEFAULT (1ull << 30)   /* record bytes held back for the plan */

vgt_replay_options vgt_replay_defaults(void);

typedef struct vgt_replay_summary {
    const char *backend;              /* backend name */
    const char *lane;
    const char *limits_note;          /* "shaders not executed; draws not rasterized" on sim, or NULL */
    int work_counted;                 /* the backend counts the work it runs (VGT_CAP_DECODES): else the
                                         counters' methods, launches, draws, copies, semaphores and macro
                                         calls are 0 because nothing counted them, not because there were none */
    uint64_t records;
    uint64_t submissions;             /* GPFIFO_SUBMIT records read (up to the last of --submits) */
    uint64_t submissions_replayed;    /* ... run on the backend inside --submits */
    uint64_t submissions_prefix;      /* ... before --submits: run unchecked, or state only */
    uint64_t checks_passed, checks_failed;
    uint64_t checks_skipped;          /* not comparable: nothing the backend produced, or not yet written
                                         when the capture took its snapshot */
    uint64_t bytes_compared;          /* every byte compared: observed_bytes_compared plus the bytes of MEMORY
                                         changed/initial records that the submissions wrote */
    /* coverage: the observed bytes are the bytes of the SEMAPHORE records (4 or 8 bytes) and of the MEMORY
     * records of reason observed read while a replayed submission's checks are open: what the capture read
     * back of the GPU's results, each a byte a check takes as expected output. Of them, those compared in a
     * check that passed or failed (those the backend produced, less volatile and captured-driver-only
     * bytes). MEMORY changed/initial records are not in either: they are snapshots of memory the CPU also
     * writes, checked only where the backend says the submission wrote. */
    uint64_t observed_bytes, observed_bytes_compared;
    uint64_t warnings;
    uint64_t faults;                  /* submissions that faulted */
    uint64_t refused;                 /* submissions not run on hardware: a macro call the MME simulator
                                         predicts to raise an exception (mme_guard.c; options.force) */
    int blocked;                      /* channels still blocked at finish */
    vgt_backend_counters ctr;
    /* timing: the capture's span from the first to the last submission's timestamp, and the replay's
     * from the start of its first submission to the end of vgt_replay_finish (all work done) */
    uint64_t capture_span_ns, replay_span_ns;
    /* --census */
    uint32_t census_ranges;           /* ranges watched */
    uint64_t census_bytes;            /* ... their bytes */
    uint64_t census_skipped_bytes;    /* bytes not watched (over the bound) */
    uint64_t census_rows, census_rows_dropped;
    uint64_t census_quiet;            /* submissions that changed no watched byte */
    /* the census per draw: submissions read back after a piece too (pieces), draws and launches read
     * back after their piece, and those of them whose piece changed no watched byte */
    uint64_t census_pieces, census_draws, census_draws_quiet;
    uint64_t census_draws_unfinished;  /* ... read back before the GPU finished their piece */
    /* --check without a write log: bytes of compared records left out because only the captured driver
     * wrote them (captured channels' USERD and GPFIFO rings, pages of submitted push-buffer segments) */
    uint64_t bytes_capture_only;
    /* lane 1 addresses: mappings moved, address operands rewritten in push buffers, GPFIFO entries
     * rewritten, memory objects mapped at a second VA as aliases of the first (and those the backend
     * could not alias: separate copies) */
    uint64_t relocations, operands_rewritten, entries_rewritten, aliases, aliases_unreproduced;
    /* submissions per lane (index: vgt_lane; [0] unused): run by lanes 1 and 2 (counted by the lane that
     * ran them: a submission the synth lane cannot rebuild runs verbatim and counts there; auto counts each
     * submission under the lane it chose), or, lane 3, linked to a forwarded CUDA call (the host driver made
     * its own). The summary's "lanes". */
    uint64_t lanes[4];
    /* lane 3: CUDA calls forwarded (launches, graph launches, copies, memsets) and skipped (not
     * reproducible: no image, no parameter layout, ...); pointer parameters relocated; device ranges
     * kept at their captured addresses and moved */
    uint64_t cuda_forwarded, cuda_skipped, cuda_params_relocated, cuda_ranges_kept, cuda_ranges_moved;
    /* submissions the synth lane did not submit: a launch it must not build (its program not in the trace,
     * a QMD the layout cannot hold) or a synthesized stream that does not decode back to the captured work */
    uint64_t synth_refused;
    /* lane 3: graph launches not run at all (of cuda_skipped) because a kernel node of the graph cannot be
     * resolved (its function never looked up in the trace, its image missing, ...) or the graph has no
     * nodes: what the graph computes is missing from the replay, which therefore fails */
    uint64_t cuda_graphs_not_run;
    /* options.live: the plan was made over this many records, those before the first submission (0 when
     * not live or when nothing needed a plan: a live replay plans only for census, plan or relocate) */
    uint64_t live_planned_records;
    int live;
    /* asynchronous backends: the engine's waits for submitted work to finish (after each submission, or
     * only when needed with options.wait_demand) and the time they took; of those, waits on demand by why
     * (for_sync: where the captured program waited for the GPU, a CUDA synchronize or synchronous copy) */
    uint64_t waits, wait_ns;
    uint64_t waits_for_check, waits_for_write, waits_for_census, waits_for_pb_reuse, waits_for_sync;
    int wait_demand;                  /* the waits were on demand (options.wait_demand on an asynchronous backend) */
} vgt_replay_summary;

typedef struct vgt_replay vgt_replay;

/* Whether trace r may run on backend ops: VGT_E_ARG (a message saying why) for a trace marked synthetic
 * (identity capture_mode=synthetic) or derived (identity derived_from: edited to provoke a fault) on a
 * hardware backend (VGT_CAP_ASYNC), unless force; such a trace raises engine exceptions that can leave the GPU
 * unable to finish other programs' draws. Needs no backend open: callers ask before probing the GPU.
 * vgt_replay_run asks it too. */
vgt_status vgt_replay_admit(const vgt_reader *r, const vgt_backend_ops *ops, int force, vgt_error *err);
vgt_status vgt_replay_open(vgt_replay **rp, const vgt_replay_options *o, vgt_error *err);
/* One record, in sequence order. Returns VGT_OK also when the backend reported problems (they reach
 * the report callback and the summary); fails only when the replay cannot go on. */
vgt_status vgt_replay_record(vgt_replay *rp, const vgt_record *rec, vgt_error *err);
/* Every record of the reader until its end (or until past the last submission of options.submits). */
vgt_status vgt_replay_run(vgt_replay *rp, vgt_reader *r, vgt_error *err);
/* 1 once every submission of options.submits has run and its checks are done: reading may stop. */
int vgt_replay_done(const vgt_replay *rp);
/* Close the last submission's checks and let blocked channels finish; VGT_E_TIMEOUT naming the
 * channels that never could (on sim: an acquire nothing releases). */
vgt_status vgt_replay_finish(vgt_replay *rp, vgt_error *err);
const vgt_replay_summary *vgt_replay_summary_get(vgt_replay *rp);
/* Read replayed memory (--dump) at a captured VA (translated where its mapping was relocated). */
vgt_status vgt_replay_read(vgt_replay *rp, uint64_t va, void *dst, uint64_t len, vgt_error *err);
/* With options.dump_state, after vgt_replay_finish: the end state of every semaphore and range the trace
 * observes, as JSON lines (state_dump.c says what they hold). */
vgt_status vgt_replay_dump_state(vgt_replay *rp, FILE *f, vgt_error *err);
/* Where the replay put a captured VA (itself unless its mapping was relocated). */
uint64_t vgt_replay_translate(const vgt_replay *rp, uint64_t va);
/* The channels created so far, in creation order; valid until the next record or close. */
const vgt_replay_channel_count *vgt_replay_channels(vgt_replay *rp, uint32_t *count);
void vgt_replay_close(vgt_replay *rp);

/* True when the summary shows a problem (a failed check, a fault, a blocked channel). */
int vgt_replay_summary_failed(const vgt_replay_summary *s);

/* ---- coverage (coverage.c): the share of the observed bytes a check compared ---- */
typedef struct vgt_coverage_min {
    uint64_t num, den;                /* at least num/den of the observed bytes must be compared */
    int fraction;                     /* given as N/D (else as a percentage) */
    char text[48];                    /* as given */
} vgt_coverage_min;

/* "PCT" or "PCT%" (a decimal percentage 0..100, up to 16 decimals: "50", "0.5%") or "N/D" (an exact
 * fraction, N <= D, D > 0: "12/2179072"); decimal digits only. 0, or -1 when malformed or out of range. */
int vgt_coverage_parse(const char *s, vgt_coverage_min *out);
/* compared/observed >= m, exactly. Nothing observed meets only a zero minimum. */
int vgt_coverage_met(uint64_t compared, uint64_t observed, const vgt_coverage_min *m);
double vgt_coverage_min_pct(const vgt_coverage_min *m);
/* The minimum as given, with '%' after a percentage: "50%", "0.5%", "12/2179072". */
void vgt_coverage_min_text(const vgt_coverage_min *m, char *buf, size_t cap);
/* 100 * compared / observed as text without '%', truncated (never rounded up) to two decimals, or more
 * below 1% to show two significant digits (at most 12): "100", "37.5", "0.00055"; "0" when nothing was
 * compared, "-" when nothing was observed, "<0.000000000001" when a few bytes of very many were. */
void vgt_coverage_pct(uint64_t compared, uint64_t observed, char *buf, size_t cap);

/* ---- lane 1 address planning (reloc.c) ---- */
typedef struct vgt_reloc_range {
    uint64_t va, len;
    uint64_t seq;                     /* the record that made it */
    uint64_t space;                   /* client << 32 | VA-space handle: overlaps matter across spaces */
} vgt_reloc_range;

enum vgt_reloc_kind {
    VGT_RELOC_RESERVED_MOVED = 1,     /* the backend's own range was moved off the trace's mappings */
    VGT_RELOC_PB_ABOVE_40BIT = 2,     /* a push buffer a GPFIFO entry cannot address */
    VGT_RELOC_UNALIGNED = 3,          /* a mapping not at a 4 KiB boundary */
    VGT_RELOC_OVERLAP = 4,            /* mappings of different VA spaces that overlap */
    VGT_RELOC_OPERAND = 5,            /* an operand pointing into a mapping that cannot keep its VA */
    VGT_RELOC_FORCED = 6,             /* a mapping --relocate moves */
    VGT_RELOC_NOT_REWRITABLE = 7,     /* an operand pointing into a moved mapping that an MME macro builds
                                         at run time: the replay cannot rewrite it (a warning) */
};

#define VGT_RELOC_MAX_NOTES 64

typedef struct vgt_reloc_note {
    int kind;                         /* enum vgt_reloc_kind */
    uint64_t seq, va, len;
    char msg[320];
} vgt_reloc_note;

typedef struct vgt_reloc_plan {
    uint64_t reserved_va;             /* where the backend's own range goes (vgt_backend_config.reserved_va) */
    uint64_t preferred;               /* ... where it was asked to go */
    uint32_t maps;                    /* GPU_MAP records considered */
    uint64_t records;                 /* records planned */
    int partial;                      /* 1: the trace went on past the records the engine could hold back
                                         (options.plan_buffer_limit): the plan covers records only */
    uint32_t nnotes;
    uint64_t notes_dropped;
    vgt_reloc_note notes[VGT_RELOC_MAX_NOTES];
    /* the ranges of the trace's MEMORY observed records (what the census watches from the start) */
    vgt_reloc_range *observed;
    uint32_t nobserved;
    /* every GPU_MAP range planned: a new VA the replay chooses avoids them all */
    vgt_reloc_range *map_ranges;
    uint32_t nmap_ranges, cap_map_ranges;
    /* the mappings that will move (forced, unaligned, overlapping): every one, unlike the notes */
    vgt_reloc_range *moving;
    uint32_t nmoving;
    /* captured VAs whose mappings the replay is asked to move (--relocate): set before planning */
    const uint64_t *relocate;
    uint32_t nrelocate;
    /* the planner's own */
    uint64_t submits;
    vgt_segment *segs;
    uint32_t cap_segs;
} vgt_reloc_plan;

/* The base of a span-byte range below limit that overlaps none of maps: preferred when free, else the
 * highest free 4 GiB-aligned base at or above 64 GiB; VGT_E_UNSUPPORTED when there is none. */
vgt_status vgt_reloc_choose_reserved(const vgt_reloc_range *maps, uint32_t n, uint64_t preferred, uint64_t span,
                                     uint64_t limit, uint64_t *out, vgt_error *err);
/* The highest align-aligned base in [floor, limit) of a size-byte range that overlaps none of taken;
 * VGT_E_UNSUPPORTED when there is none. Pure: the relocation of a mapping uses it. */
vgt_status vgt_reloc_choose_va(const vgt_reloc_range *taken, uint32_t n, uint64_t size, uint64_t align, uint64_t floor,
                               uint64_t limit, uint64_t *out, vgt_error *err);
/* Notes for mappings that cannot be placed at their VA (unaligned, overlapping across VA spaces; each
 * also added to p->moving) and for push-buffer segments above 2^40. */
void vgt_reloc_check_maps(vgt_reloc_plan *p, const vgt_reloc_range *maps, uint32_t n);
void vgt_reloc_check_segment(vgt_reloc_plan *p, uint64_t submit_index, uint64_t seq, uint32_t segment, uint64_t va,
                             uint64_t len);
/* Planning one record at a time, in sequence order (the engine's pre-pass, plan.c): begin, then every
 * record (GPU_MAP ranges, push-buffer segments above 2^40, MEMORY observed ranges), then moving (the
 * mappings that move: forced, unaligned, overlapping; with their notes), then end (the backend's range
 * chosen off every mapping planned). Between moving and end the engine adds a note per address-bearing
 * operand of the planned submissions that points into a moving mapping (semantic events and
 * render-target methods), and a NOT_REWRITABLE note per address an MME macro builds into one.
 * preferred: vgt_backend_config.reserved_va (0: the default); relocate: captured VAs whose mappings
 * --relocate moves (kept by pointer). */
void vgt_reloc_plan_begin(vgt_reloc_plan *p, uint64_t preferred, const uint64_t *relocate, uint32_t nrelocate);
vgt_status vgt_reloc_plan_record(vgt_reloc_plan *p, const vgt_record *rec, vgt_error *err);
void vgt_reloc_plan_moving(vgt_reloc_plan *p);
vgt_status vgt_reloc_plan_end(vgt_reloc_plan *p, vgt_error *err);
/* The same over a trace file on its own (tools, tests): the plan the engine makes of it, operands
 * included. */
vgt_status vgt_reloc_plan_trace(const char *path, uint64_t preferred, const uint64_t *relocate, uint32_t nrelocate,
                                vgt_reloc_plan *p, vgt_error *err);
const char *vgt_reloc_kind_name(int kind);
void vgt_reloc_plan_free(vgt_reloc_plan *p);   /* frees what the plan holds (not p) */

/* ---- render targets (rt_track.c; the surfaces are analyze's, vgt/surface.h and vgt/png.h) ---- */
#define VGT_RT_MAX 64

uint32_t vgt_replay_rt_count(const vgt_replay *rp);
const vgt_rt_desc *vgt_replay_rt_at(const vgt_replay *rp, uint32_t i);

/* ---- store census (census.c): what each submission wrote, read back from the backend ---- */
typedef struct vgt_store_row {
    int64_t submit_index;
    uint64_t submit_seq;
    uint32_t channel;
    uint64_t va, len;                 /* the watched range */
    const char *what;                 /* "observed" (a range the trace observes), "render-target" */
    uint64_t pages_written;           /* 4 KiB pages with at least one changed byte */
    uint64_t bytes_changed;
    int64_t first_changed;            /* offset of the first changed byte, -1 none */
    int64_t first_nonzero_pixel;      /* index (not value) of the first non-zero 4-byte word of the range
                                         after the submission, counted from the range's start; -1 none */
    int64_t px0;                      /* render-target rows: the VALUE of the target's first pixel after the
                                         submission (the little-endian 32-bit word at the target's VA; 0 is
                                         black); -1 for other ranges */
    /* census per draw: the draws and launches of the piece of the submission the row was read after,
     * numbered as `vgt draws` numbers them (draw_first .. draw_first + draw_count - 1); draw_first -1 and
     * draw_count 0 on rows of the submission's work before its first draw or after its last one, and
     * on every row of a census per submission (per_draw 0) */
    int64_t draw_first;
    uint32_t draw_count;
    uint8_t per_draw;
    /* the GPU had not finished the work when the range was read (its wait timed out or the channel
     * faulted): the row says what was read, not what the work stores. The census per draw keeps the
     * render-target rows of such a piece even when nothing changed, so that a draw whose piece never ran
     * is not taken for a draw that stored nothing. */
    uint8_t unfinished;
} vgt_store_row;

/* Compare before/after of one watched range: pages written, bytes changed, first changed byte, first
 * non-zero 4-byte word after (px0 is left -1: only the census knows where a target starts). Pure (tested
 * with synthetic buffers). */
void vgt_store_diff(const uint8_t *before, const uint8_t *after, uint64_t len, vgt_store_row *row);
/* The rows of a census replay (changed ranges only), in submission order; valid until close. */
const vgt_store_row *vgt_replay_stores(const vgt_replay *rp, uint64_t *count);
/* Watch a range from now on (the engine itself watches the ranges its plan found the trace observing). */
void vgt_replay_census_watch(vgt_replay *rp, uint64_t va, uint64_t len, const char *what);

#ifdef __cplusplus
}
#endif
#endif
