/* engine.h: private state of the replay engine (engine.c rebuilds state, stream.c decodes each
 * submission once for its subscribers, plan.c plans before replaying, check.c compares, lanes.c runs
 * submissions). */
#ifndef VGT_REPLAY_ENGINE_H
#define VGT_REPLAY_ENGINE_H

#include "vgt/addr_operands.h"
#include "vgt/backend.h"
#include "vgt/events.h"
#include "vgt/mme.h"
#include "vgt/model.h"
#include "vgt/pushbuf.h"
#include "vgt/replay.h"
#include "vgt/u64map.h"
#include "submit_segs.h"

#include <stdio.h>

/* SET_COLOR_TARGET_A/B/WIDTH/HEIGHT/FORMAT/MEMORY of the 8 targets as the stream last set them. */
typedef struct rt_state {
    uint32_t ct[8][6];
    uint8_t dirty;               /* targets written during the current submission */
    uint32_t notify[2][2];       /* SET_NOTIFY_A/B of the 3D [0] and compute [1] classes */
} rt_state;

/* A mapping lane 1 moved (addrmap.c): captured [va, va+len) is at [new_va, new_va+len) in the replay. */
typedef struct addr_move {
    uint64_t va, len, new_va;
    uint64_t seq;                /* its GPU_MAP */
} addr_move;
#define ADDR_MAX_MOVES 65536u

/* Where addr_place put a GPU_MAP: the replay VA of its first byte and the page-aligned range mapped. */
typedef struct addr_place_out {
    uint64_t va, map_va, map_len;
    int moved;
} addr_place_out;

/* Per channel: the address-method pairs of the stream (reloc_patch.c), captured and as sent. */
typedef struct patch_half {
    uint32_t captured, sent;     /* the stream's value, and the value the replay submitted */
    int64_t pb_va;               /* captured VA of its dword in the current submission's push buffer; -1 when
                                    it was sent by an earlier submission (or never written) */
    uint32_t entry, dword;
    uint8_t set;
} patch_half;

typedef struct patch_note {
    uint64_t to;
    uint32_t entry, dword;
    uint8_t valid;
} patch_note;

/* The QMD-sized head of the last inline-to-memory upload, or of an inline QMD, of a channel: where each
 * dword sits in the current submission, so that a QMD's address fields can be rewritten there. */
#define PATCH_QMD_DWORDS 96u
typedef struct patch_upload {
    uint64_t dst;                /* captured destination (the QMD address) */
    uint32_t n;                  /* dwords received (those past PATCH_QMD_DWORDS are not kept) */
    uint32_t data[PATCH_QMD_DWORDS];
    int64_t pb_va[PATCH_QMD_DWORDS];   /* -1: not in the current submission */
    uint8_t active;
} patch_upload;

#define PATCH_MAX_PAIRS VGT_ADDR_PAIR_SLOTS
#define PATCH_UPLOADS 4u
typedef struct patch_channel {
    patch_half half[PATCH_MAX_PAIRS][2];   /* [pair][0 high, 1 low] by reloc_patch.c's table index */
    /* the last rewrite reported per slot in this submission: the other half of the same write
     * (within a couple of dwords) is not a second rewrite */
    patch_note noted[PATCH_MAX_PAIRS];
    patch_upload upload[PATCH_UPLOADS];   /* the last I2M uploads (QMDs by address: libcuda uploads each
                                             one, sometimes with a few other uploads before the launch) */
    uint32_t next_upload;
    patch_upload inline_qmd;     /* SET_INLINE_QMD_ADDRESS_A/B + LOAD_INLINE_QMD_DATA(i) */
} patch_channel;

/* The submission reloc_patch.c is rewriting. */
typedef struct patch_submit {
    int full;                    /* operands followed this submission (a mapping moved, or will) */
    uint64_t *entry_va;          /* VA of each entry's push buffer (extended base applied), 0 control */
    uint32_t cap_entry_va;
    uint64_t pending;            /* slots whose earlier half could not be rewritten (bit per slot) */
    const vgt_addr_pair *pending_pair[PATCH_MAX_PAIRS];
    uint64_t pending_va[PATCH_MAX_PAIRS];   /* ... the captured address they hold */
} patch_submit;

typedef struct engine_channel {
    uint32_t client, handle;
    uint32_t id;                 /* backend channel id */
    uint32_t cls;                /* host class, for the decoder */
    /* the channel's one decoded stream (stream.c) */
    vgt_pb_state pb;             /* the decoder (subchannel bindings persist across submissions) */
    int pb_started;              /* 0 until the first submission, and again after a CHANNEL_STATE */
    vgt_pb_state pb_before;      /* ... as it was before the current submission (fault windows re-decode it) */
    struct vgt_sem_tracker *sem; /* the semantic tracker, when a subscriber takes events; NULL otherwise */
    int sem_off;                 /* ... failed once: off for this channel */
    /* the subscribers' state */
    rt_state rt;                 /* rt_track.c, volatile.c (SET_NOTIFY) */
    patch_channel *patch;        /* reloc_patch.c state, NULL until the first submission */
    struct vgt_mme_tracker *mme; /* mme_guard.c: the channel's MME as the simulator sees it (hardware only) */
    int mme_off;                 /* ... given up on this channel */
    char mme_refuse[240];        /* ... why the current submission must not run; "" when it may */
    struct sked_chan *sked;      /* sked_guard.c: the submission's local-memory methods and launches, in order */
    char sked_refuse[400];       /* ... why it must not run; "" when it may */
    struct synth_chan *synth;    /* lane_synth.c: the channel's work extractor, synthesizer and own channel */
    vgt_replay_channel_count cnt;   /* live_count.c (launches, draws, macro calls), engine.c (submissions, faults) */
} engine_channel;

/* Bytes the GPU writes that differ from run to run (timestamps, report counters): a backend without a
 * write log excludes them from --check (rt_track.c finds them in the decoded stream). */
typedef struct volatile_range {
    uint64_t va, len;
} volatile_range;
#define VOLATILE_MAX 4096u

/* The store census: ranges read back around each submission (census.c). */
typedef struct census_range {
    uint64_t va, len;
    const char *what;
    int64_t first_px;            /* render targets: offset of the target's first pixel in the range, else -1 */
    uint8_t *before;             /* contents before the submission */
} census_range;

typedef struct census_state {
    census_range *ranges;
    uint32_t n, cap;
    uint64_t bytes;              /* sum of range lengths (bounded by CENSUS_MAX_BYTES) */
    uint64_t skipped_bytes;      /* ranges not watched because of that bound */
    uint8_t *after;
    uint64_t cap_after;
    vgt_store_row *rows;
    uint64_t nrows, cap_rows, dropped_rows;
    uint64_t quiet_submissions;  /* submissions that changed no watched byte */
    int changed;                 /* the current submission changed a watched byte (in any of its pieces) */
    int per_draw;                /* rows name draws (the census per draw is on) */
    int64_t draw_first;          /* the draws of the piece being read back (draw_cuts.c), -1 none */
    uint32_t draw_count;
    uint64_t pieces;             /* reads after a piece of a submission (not its end) */
    uint64_t draws, draws_quiet; /* draws and launches read back after their piece; ... that changed nothing */
    uint64_t draws_unfinished;   /* ... read before the GPU finished their piece */
} census_state;

/* The census per draw (draw_cuts.c): where the current submission is cut. A piece ends before dword
 * `dword` of entry `entry` (a method header; 0: at the end of the entry before) and ran its draws. */
typedef struct draw_piece {
    uint32_t entry, dword;
    int64_t draw_first;
    uint32_t draw_count;
} draw_piece;

typedef struct draw_cut_state {
    uint64_t seq;                /* the submission the pieces are of */
    draw_piece *pieces;
    uint32_t npieces, cap;
    uint32_t next;               /* the next options.draw_cuts entry to meet */
    int pending, pending_macro;  /* a draw was issued: cut at the next header (after its macro call's data) */
    uint32_t hdr_entry, hdr_dword;   /* the header of the method run being decoded */
    int64_t tail_first;          /* the draws after the last cut (the submission's last piece) */
    uint32_t tail_count;
} draw_cut_state;

/* ---- the decoded stream (stream.c): one decoder and one semantic tracker per channel; subscribers ---- */

/* One submission being decoded, as the subscribers see it. */
typedef struct stream_submit {
    vgt_replay *rp;
    engine_channel *c;
    const vgt_record *rec;
    const vgt_rec_gpfifo_submit *sub;
    vgt_status rc;               /* a subscriber's failure (no memory): stops the decode, returned */
    vgt_error *err;
} stream_submit;

#define STREAM_METHODS 1u        /* begin: the subscriber wants this submission's methods */
#define STREAM_ENTRIES 2u        /* ... and its GPFIFO entries */

/* A subscriber: called in the engine's order (rp->subs) for every submission of every channel. */
typedef struct stream_sub {
    const char *name;
    int (*active)(const vgt_replay *rp);      /* subscribes to this replay (asked once, when it starts) */
    /* before the submission's methods: what it wants of them (STREAM_*; 0 nothing) */
    unsigned (*begin)(stream_submit *s);
    void (*entry)(stream_submit *s, const vgt_gp_entry *e, uint32_t index);
    void (*method)(stream_submit *s, const vgt_method *m);   /* masked methods too: the subscriber decides */
    /* optional: a non-increasing run of one method (m its first write, data its count little-endian dwords,
     * as vgt_pb_callbacks.noninc_run), to be taken as `method` would take each write; without it the
     * subscriber gets the writes one by one. Most of a launch-bound stream is such runs (LOAD_INLINE_DATA
     * of each QMD and its constants), which most subscribers ignore. */
    void (*run)(stream_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count);
    /* the semantic tracker's events (a subscriber with this hook makes the channel's tracker run) */
    void (*event)(stream_submit *s, const vgt_event *ev);
    void (*end)(stream_submit *s);            /* after the submission's methods */
    void (*channel_free)(engine_channel *c);  /* its per-channel state (a CHANNEL_STATE restarts; close) */
} stream_sub;

#define STREAM_MAX_SUBS 12u
#define ENGINE_INFLIGHT_MAX 64u   /* disjoint push-buffer ranges in flight before the engine waits anyway */
extern const stream_sub sub_reloc, sub_rt, sub_volatile, sub_mme_guard, sub_sked_guard, sub_synth, sub_count, sub_cuts, sub_state;

void stream_start(vgt_replay *rp);   /* picks the active subscribers, in order */
/* Decode the submission once (snapshot first, for fault windows) and hand it to every subscriber. */
vgt_status stream_decode(vgt_replay *rp, engine_channel *c, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub,
                         vgt_error *err);
/* The channel's decoder, tracker and subscriber state start again (CHANNEL_STATE) or go (close). */
void stream_channel_free(engine_channel *c);

/* ---- planning (plan.c) ---- */
typedef struct plan_held {
    vgt_record rec;              /* payload: an offset into held_bytes until replayed */
    uint64_t off;
} plan_held;

typedef struct engine_lane {
    const char *name;
    vgt_lane lane;
    uint32_t cap;                /* VGT_CAP_LANE_* the backend must have */
    /* Run one submission on the backend. */
    vgt_status (*run)(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                      vgt_error *err);
    /* A lane that replays other records than the submissions (lane 3: the CUDA API records, forwarded to
     * the host's driver, which makes its own submissions): every record goes to it instead of the model
     * and the RM-level rebuild; NULL for the lanes that run submissions. finish and close: its end. */
    vgt_status (*record)(vgt_replay *rp, const vgt_record *rec, vgt_error *err);
    vgt_status (*finish)(vgt_replay *rp, vgt_error *err);
    void (*close)(vgt_replay *rp);
} engine_lane;

/* A region --dump-state reports (state_dump.c). */
typedef struct state_region {
    uint64_t va, len;
    uint64_t seq;                /* the record's, or STATE_AT_END: read when the state is written */
    char *text;                  /* the line read at the record (seq != STATE_AT_END) */
    uint8_t semaphore;
} state_region;
#define STATE_AT_END UINT64_MAX

struct vgt_replay {
    vgt_replay_options opt;
    state_region *state;         /* --dump-state: the regions the trace observes */
    uint32_t nstate, cap_state;
    const vgt_backend_ops *ops;
    vgt_backend *be;
    const engine_lane *lane;
    vgt_model *model;
    uint32_t vas;
    engine_channel *chans;
    uint32_t nchans, cap_chans;
    vgt_u64map chan_ix;          /* client:handle -> index in chans */
    replay_segs segs;          /* the current submission's segments (submit_segs.c) */
    /* the submission whose checks are open (the last one run) */
    int64_t cur_index;
    uint64_t cur_seq;
    uint32_t cur_channel;
    int cur_replayed;
    uint32_t cur_passed, cur_failed, cur_skipped;
    vgt_backend_write *wlog;     /* copy of the backend's write log for that submission */
    uint32_t nwlog, cap_wlog;
    uint8_t *mask;               /* scratch for produced() */
    uint8_t *buf;                /* scratch for reads */
    uint8_t *prev;               /* scratch: the model's contents before a MEMORY record */
    uint64_t cap_scratch;
    int done;
    vgt_replay_summary sum;
    vgt_rt_desc rts[VGT_RT_MAX];
    uint32_t nrts;
    census_state census;
    draw_cut_state cuts;         /* draw_cuts.c: the census per draw */
    volatile_range *volat;
    uint32_t nvolat;
    uint64_t volat_dropped;
    uint64_t *pb_pages;          /* sorted 4 KiB page numbers that held submitted push-buffer segments */
    uint32_t npb_pages, cap_pb_pages;
    uint64_t pb_pages_dropped;   /* pages or ranges not kept (over CAPTURE_PB_PAGES_MAX / _RANGES_MAX) */
    volatile_range *co_ranges;   /* captured channels' USERD and rings, kept when each channel is created */
    uint32_t nco_ranges;
    /* the submission being run (valid inside run_submission): fault windows decode it */
    const vgt_record *run_rec;
    const vgt_rec_gpfifo_submit *run_sub;
    engine_channel *run_chan;
    int unsettled;               /* asynchronous backend: work submitted since the last idle that finished */
    int unfinished;              /* the last wait for the backend timed out or met a fault (census rows say so) */
    int wait_demand;             /* options.wait_demand on an asynchronous backend (engine_settle) */
    uint64_t waited_acc;         /* ns waited for the backend since the last on_submitted */
    /* wait_demand: push-buffer ranges (replay VAs) written since the last wait: a segment over one of
     * them may still be fetched by the GPU, so writing it waits first */
    struct { uint64_t lo, hi; } inflight[ENGINE_INFLIGHT_MAX];
    uint32_t ninflight;
    uint64_t first_ts, last_ts;  /* capture timestamps of the first and last submission */
    uint64_t t0_ns, t1_ns;       /* monotonic: first submission started, finish ended */
    /* lane 1 addresses (addrmap.c) */
    addr_move *moves;
    uint32_t nmoves, cap_moves;
    uint64_t longest_map;        /* the longest GPU_MAP so far (bounds the overlap search) */
    uint64_t *mapped_mem;        /* client << 32 | memory of every memory object mapped so far (open
                                    addressing; 0 empty): only those can be aliased by a new GPU_MAP */
    uint32_t cap_mapped_mem, nmapped_mem;
    uint64_t *relocate;          /* copy of opt.relocate */
    vgt_reloc_range *avoid;      /* every mapping the plan saw (plan.c): a new VA avoids them */
    uint32_t navoid;
    uint8_t *pbcopy;             /* the current submission's segment bytes, rewritten (reloc_patch.c) */
    uint64_t cap_pbcopy;
    uint64_t *seg_off;           /* where each segment's bytes start in pbcopy */
    uint32_t cap_seg_off;
    int patched;                 /* pbcopy holds this submission's segments */
    patch_submit patch_cur;      /* reloc_patch.c: the submission being rewritten */
    int track_addresses;         /* the plan expects relocations: address operands followed from the start */
    /* the subscribers of every channel's decoded stream (stream.c) */
    const stream_sub *subs[STREAM_MAX_SUBS];
    uint32_t nsubs;
    vgt_mme_budget mme_guard_budget;   /* mme_guard.c: the MME work its simulator may do (vgt/mme.h) */
    uint64_t mme_guard_refused;        /* ... calls refused before the current submission */
    int stream_events;           /* a subscriber takes events: the channels' semantic trackers run */
    void *stream_cur;            /* the decode under way (stream.c), for the trackers' events */
    /* planning (plan.c): records held back until the plan is made */
    int planning;
    int started;                 /* the backend is open (after the plan, which chooses its reserved VA) */
    plan_held *held;
    uint64_t nheld, cap_held;
    uint8_t *held_bytes;
    uint64_t held_len, cap_held_bytes;
    vgt_reloc_plan *plan;
    struct lane_cuda *cuda;      /* lane 3's state (lane_cuda.c), NULL for the other lanes */
    struct sked_guard *sked;     /* sked_guard.c: each context's local memory as submitted (hardware only) */
    struct synth_lane *synth;    /* lane_synth.c (lane synth, or auto on hardware) */
    /* options.channel_counters: what vgt_replay_channels hands out */
    vgt_replay_channel_count *cnt_out;
    uint32_t cap_cnt_out;
    /* options.on_submitted: when the last GPFIFO_SUBMIT reached vgt_replay_record */
    uint64_t received_ns, received_seq;
    uint64_t read_ns, next_read_ns;   /* its chunk's arrival (vgt_reader_chunk_read_ns), set by vgt_replay_run */
};

void engine_report(vgt_replay *rp, vgt_replay_report *r);
/* Why the engine waits for submitted work (options.wait_demand; counted in the summary). */
typedef enum { SETTLE_CHECK, SETTLE_WRITE, SETTLE_CENSUS, SETTLE_PB_REUSE, SETTLE_SYNC } settle_why;
/* options.wait_demand: wait for the work submitted so far to finish before what needs it finished
 * (reading memory for a check or the census, a host write, a point where the captured program waited for
 * the GPU). Nothing without wait_demand (the engine waited after the submission already) or when nothing
 * was submitted since the last wait. The rules: engine.c, above engine_settle. */
void engine_settle(vgt_replay *rp, settle_why why);
/* options.wait_demand: a push-buffer segment is about to be written at [va, va+len): waits first when it
 * overlaps one written since the last wait (the GPU may not have fetched it yet), then notes it. */
void engine_pb_write(vgt_replay *rp, uint64_t va, uint64_t len);
/* A VGT_RPT_RELOCATION report. */
void engine_note(vgt_replay *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* addrmap.c: the one translation from captured to replay VAs */
uint64_t addr_to_replay(const vgt_replay *rp, uint64_t va);
const addr_move *addr_move_find(const vgt_replay *rp, uint64_t va);
/* Where a GPU_MAP goes: at its VA, or moved (reported; rp->moves grows). */
vgt_status addr_place(vgt_replay *rp, const vgt_rec_gpu_map *g, uint64_t seq, addr_place_out *out, vgt_error *err);
/* A GPU_UNMAP of captured [va, va+len): the moves of mappings in it end. */
void addr_unmapped(vgt_replay *rp, uint64_t va, uint64_t len);

/* reloc_patch.c (subscriber sub_reloc): every address operand that points into a moved mapping is rewritten
 * in a copy of the submission's segment bytes (reported); rp->patched says the copy is in use. Then the
 * GPFIFO entries whose push buffer moved. */
uint64_t patch_entry(vgt_replay *rp, uint32_t index, uint64_t raw);
void engine_warn(vgt_replay *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* check.c */
void check_memory(vgt_replay *rp, const vgt_record *rec, const vgt_rec_memory *m);
/* state_dump.c: note a region the trace observes (semaphore: a SEMAPHORE record); write them all. */
void state_note(vgt_replay *rp, int semaphore, uint64_t va, uint64_t len, uint64_t seq);
vgt_status state_write(vgt_replay *rp, FILE *f, vgt_error *err);
void check_semaphore(vgt_replay *rp, const vgt_record *rec, const vgt_rec_semaphore *s);
void check_close_submission(vgt_replay *rp);
vgt_status check_take_write_log(vgt_replay *rp, vgt_error *err);

/* capture_only.c: memory only the captured driver wrote (captured channels' USERD and rings, pages of
 * push-buffer segments), excluded from checks without a write log. */
#define CAPTURE_PB_PAGES_MAX 65536u
#define CAPTURE_RANGES_MAX 2048u
void capture_only_note_channel(vgt_replay *rp, const vgt_rec_channel *c);
void capture_only_note_submit(vgt_replay *rp, const vgt_rec_gpfifo_submit *sub);
/* Clears mask over those bytes of [va, va+len); returns how many it cleared. */
uint64_t capture_only_unmask(const vgt_replay *rp, uint64_t va, uint64_t len, uint8_t *mask);

/* sked_guard.c (subscriber sub_sked_guard): on a hardware backend, a submission whose compute launch asks
 * for more local memory than its context was given (SKEDCHECK05) is not run. The verbatim lane checks the
 * captured stream, the synth lane its plan; each returns 1 (c->sked_refuse says why) or 0 and then
 * commits the local memory the stream sets. sked_refuse reports and counts it. */
struct vgt_synth_plan;
/* KEPLER_CHANNEL_GROUP_A (open-gpu-doc classes/host/cla06c.h): a TSG, one context for its channels */
#define VGT_CLASS_CHANNEL_GROUP 0xa06cu
int sked_guard_verbatim(vgt_replay *rp, engine_channel *c);
int sked_guard_plan(vgt_replay *rp, engine_channel *c, const struct vgt_synth_plan *p);
vgt_status sked_refuse(vgt_replay *rp, engine_channel *c);
/* The rule: 1 (why says it) when a launch of lo + hi bytes of local memory per thread must not run on a
 * context with that local memory base and size per TPC. */
int sked_guard_violates(uint32_t lo, uint32_t hi, uint64_t base, uint64_t size, char *why, size_t n);
void sked_guard_free(vgt_replay *rp);

/* mme_guard.c (subscriber sub_mme_guard): on a hardware backend, submissions whose macro calls would raise
 * an MME exception are refused (they leave the GPU unable to finish other programs' Vulkan draws):
 * c->mme_refuse says why, "" when the submission may run */
int mme_guard_active(const vgt_replay *rp);
int mme_guard_state(vgt_replay *rp, engine_channel *c, const vgt_state_method *w, uint32_t n);

/* volatile.c (subscriber sub_volatile): bytes that differ from run to run, for checks without a write log.
 * Clears mask over those bytes of [va, va+len). */
void volatile_unmask(const vgt_replay *rp, uint64_t va, uint64_t len, uint8_t *mask);

/* rt_track.c (subscriber sub_rt): the render targets the stream binds (rp->rts; the census watches them) */

/* window.c: the methods around a push-buffer Get pointer a faulted channel reported (re-decoded from the
 * channel's snapshot, pb_before) */
void engine_fault_window(vgt_replay *rp, uint64_t pb_va);

/* plan.c */
int plan_wanted(const vgt_replay *rp);
/* Hold rec back for the plan: *held = 0 when the plan had to be made first (over the limit): rec is then
 * the caller's to replay. */
vgt_status plan_hold(vgt_replay *rp, const vgt_record *rec, int *held, vgt_error *err);
/* Make the plan from what is held, apply it, open the backend and replay the held records. */
vgt_status plan_close(vgt_replay *rp, vgt_error *err);
void plan_free(vgt_replay *rp);

/* engine.c */
vgt_status engine_start(vgt_replay *rp, vgt_error *err);    /* opens the backend */
vgt_status engine_record(vgt_replay *rp, const vgt_record *rec, vgt_error *err);   /* one record, replayed */

/* census.c */
void census_watch(vgt_replay *rp, uint64_t va, uint64_t len, const char *what);
vgt_status census_before(vgt_replay *rp, vgt_error *err);
/* Read the watched ranges back and add a row per changed one. piece 1: after a piece of a submission
 * cut at its draws (what was read becomes the next piece's "before"); 0: after the whole submission. */
vgt_status census_after(vgt_replay *rp, int piece, vgt_error *err);

/* draw_cuts.c (subscriber sub_cuts): the census per draw. Submit the entries of the submission being run
 * in pieces cut after its draws, each waited for and read back (*done 1); *done 0 when this submission is
 * not cut (the caller submits it whole). */
vgt_status draw_cuts_submit(vgt_replay *rp, uint32_t ch, const uint64_t *ents, uint32_t count, int *done,
                            vgt_error *err);
void draw_cuts_free(vgt_replay *rp);
/* engine.c: wait for the work submitted (an asynchronous backend), bounded by the submission timeout */
void engine_wait_submission(vgt_replay *rp);
void census_free(vgt_replay *rp);

/* lane_cuda.c: lane 3 */
vgt_status lane_cuda_record(vgt_replay *rp, const vgt_record *rec, vgt_error *err);
vgt_status lane_cuda_finish(vgt_replay *rp, vgt_error *err);
void lane_cuda_close(vgt_replay *rp);

/* lanes.c */
const engine_lane *lane_find(vgt_lane l);
/* Lane 1: the captured segments at their replay VAs, the captured entries (counted as verbatim). */
vgt_status lane_run_verbatim(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                             vgt_error *err);
/* lane_synth.c: lane 2, and auto's choice per submission on hardware */
vgt_status lane_run_synth(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                          vgt_error *err);
vgt_status lane_run_auto(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                         vgt_error *err);
int lane_synth_ready(const vgt_replay *rp, const engine_channel *c);
void lane_synth_memory(vgt_replay *rp, uint64_t va, uint64_t len);   /* the CPU wrote there (MEMORY record) */
void lane_synth_free(vgt_replay *rp);
/* engine.c: a submission the MME guard keeps off the GPU, reported and counted (returns VGT_OK). */
vgt_status engine_refuse_as(vgt_replay *rp, const char *why, const char *exception, int event_kind);
vgt_status engine_refuse(vgt_replay *rp, engine_channel *c);
/* addrmap.c: a free range of the replay's own (size bytes, align-aligned, at or above floor, below 2^40), off
 * every mapping, move and the backend's range; later relocations avoid it. */
vgt_status addr_own_range(vgt_replay *rp, uint64_t size, uint64_t align, uint64_t floor, uint64_t *va, vgt_error *err);
const engine_lane *lane_auto(uint32_t caps);
/* A submission outside --submits: its push buffers written, its methods tracked without side effects. */
vgt_status lane_state_only(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                           vgt_error *err);

#endif
