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
 * lands in one backend VA space.
 *
 * Lanes: `verbatim` runs the captured push buffers unchanged at their captured VAs; `synth` (lane 2,
 * re-synthesized push buffers) and `cuda` (lane 3) exist as names and are refused cleanly by a backend
 * that does not implement them.
 */
#ifndef VGT_REPLAY_H
#define VGT_REPLAY_H

#include <stdint.h>

#include "vgt/backend.h"
#include "vgt/cli.h"
#include "vgt/error.h"
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
} vgt_replay_options;

vgt_replay_options vgt_replay_defaults(void);

typedef struct vgt_replay_summary {
    const char *backend;              /* backend name */
    const char *lane;
    const char *limits_note;          /* "shaders not executed; draws not rasterized" on sim, or NULL */
    uint64_t records;
    uint64_t submissions;             /* GPFIFO_SUBMIT records read (up to the last of --submits) */
    uint64_t submissions_replayed;    /* ... run on the backend inside --submits */
    uint64_t submissions_prefix;      /* ... before --submits: run unchecked, or state only */
    uint64_t checks_passed, checks_failed;
    uint64_t checks_skipped;          /* not comparable: nothing the backend produced, or not yet written
                                         when the capture took its snapshot */
    uint64_t bytes_compared;
    uint64_t warnings;
    uint64_t faults;                  /* submissions that faulted */
    int blocked;                      /* channels still blocked at finish */
    vgt_backend_counters ctr;
} vgt_replay_summary;

typedef struct vgt_replay vgt_replay;

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
/* Read replayed memory (--dump). */
vgt_status vgt_replay_read(vgt_replay *rp, uint64_t va, void *dst, uint64_t len, vgt_error *err);
void vgt_replay_close(vgt_replay *rp);

/* True when the summary shows a problem (a failed check, a fault, a blocked channel). */
int vgt_replay_summary_failed(const vgt_replay_summary *s);

#ifdef __cplusplus
}
#endif
#endif
