/* walk.h: walk a trace record by record, folding it into the trace model and decoding every submission's
 * push buffers with one vgt_pb_state per channel. The common driver of decode, census, db, mme and replay.
 *
 *     static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m) { ...; return 0; }
 *     vgt_walk_callbacks cb = {.on_method = on_method, .ctx = &mine};
 *     vgt_walk_options opt = vgt_walk_defaults();
 *     opt.submit_first = 10; opt.submit_last = 20;          // optional filters
 *     vgt_status rc = vgt_walk_path("t.vgt", &opt, &cb, &err);
 *
 * Order of calls for one GPFIFO_SUBMIT record: on_record (after the model applied it), on_submit_begin,
 * then for each GPFIFO entry on_entry followed by that entry's on_method / on_diag calls, then
 * on_submit_end. A CHANNEL_METHODS record (format 1.1) gets on_record, then one on_state_method per write
 * (the "state preamble" of the channel's next submission; see below). Every other record only gets
 * on_record.
 *
 * Invariants:
 *  - Records are applied to the model in sequence order, all of them, filters or not: the model at a
 *    submission is the state the GPU saw there.
 *  - Every submission of every channel is decoded, filters or not, so SET_OBJECT bindings, method runs and
 *    the subdevice mask are right when a selected submission comes. A submission outside the filters is
 *    decoded silently, unless deliver_unselected is set: then its callbacks run with selected = 0 (for
 *    trackers that need the whole stream, e.g. the semantic decoders).
 *  - A channel's decoder state starts over when the model shows the channel handle re-allocated: empty,
 *    or from the channel's CHANNEL_STATE record (format 1.1) when the model has one. A CHANNEL_STATE
 *    that comes later replaces the decoder state before the channel's next submission.
 *  - State preamble (format 1.1 CHANNEL_METHODS, docs/trace-format.md 0x0028): writes that restore the
 *    engines' state of a channel cut out of a longer trace, as if pushed before its next submission.
 *    They reach on_state_method only, never on_method: consumers that count submitted work (census, db)
 *    do not see them unless they ask; consumers that track engine state (the MME trace, decode) take them
 *    there. The vgt_walk_submit they come with has preamble = 1, sub = NULL, rec = the CHANNEL_METHODS
 *    record and index = the index the next submission will get; selected follows the filters for that
 *    index and the channel. Their vgt_method has kind 0, first = 1 and pos {record seq, 0, write index}.
 *  - The method loop allocates nothing; the segment table grows to the largest submission and stays.
 *  - With a finite submission range, the walk stops after the last selected submission.
 *  - Any callback returning non-zero stops the walk; vgt_walk_* then returns VGT_OK.
 */
#ifndef VGT_WALK_H
#define VGT_WALK_H

#include <stdint.h>

#include "vgt/error.h"
#include "vgt/model.h"
#include "vgt/pushbuf.h"
#include "vgt/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_WALK_MAX_CHANNELS 65536u     /* distinct (client, channel) pairs in one trace */

/* One channel as the walker tracks it. */
typedef struct vgt_walk_channel {
    uint32_t client, handle;
    uint32_t cls;                 /* the channel's (host) class from the model; 0 when the trace lacks it */
    uint64_t alloc_seq;           /* the model's allocation seq of this incarnation (UINT64_MAX unknown) */
    uint64_t submits;             /* submissions seen on this incarnation */
    vgt_pb_state pb;
    void *user;                   /* the caller's per-channel data (see on_channel) */
    uint64_t state_seq;           /* seq of the CHANNEL_STATE the decoder state was set from; UINT64_MAX none */
} vgt_walk_channel;

/* The submission being decoded. */
typedef struct vgt_walk_submit {
    uint64_t index;               /* 0-based count of GPFIFO_SUBMIT records before this one */
    uint64_t seq;
    const vgt_record *rec;
    const vgt_rec_gpfifo_submit *sub;
    vgt_walk_channel *chan;
    int selected;                 /* passes the filters (always 1 unless deliver_unselected) */
    int preamble;                 /* 1: a CHANNEL_METHODS state preamble (sub is NULL), not a submission */
    /* 1: the record's bytes (its payload, and the data of on_entry and on_noninc_run, which lie in it) stay
     * valid after the callbacks, until on_release names them (a walk over a reader holds its chunks). 0:
     * valid during the callback only (vgt_walker_record, or no memory to hold the chunk). */
    int lent;
} vgt_walk_submit;

typedef struct vgt_walk_callbacks {
    /* All optional. int-returning callbacks stop the walk with a non-zero return. */
    /* Before the model applies a record: a non-zero return stops the walk there, the record neither
     * applied nor decoded (the model and every channel's decoder state are those just before it). */
    int (*on_record_before)(void *ctx, const vgt_record *rec, const vgt_model *model);
    int (*on_record)(void *ctx, const vgt_record *rec, const vgt_model *model);
    /* A channel first seen (chan->user NULL), or seen re-allocated under the same handle (chan->user as
     * left, decoder state already reset): set or reset chan->user here. */
    void (*on_channel)(void *ctx, vgt_walk_channel *chan);
    int (*on_submit_begin)(void *ctx, const vgt_walk_submit *s);
    int (*on_submit_end)(void *ctx, const vgt_walk_submit *s);
    void (*on_entry)(void *ctx, const vgt_walk_submit *s, const vgt_gp_entry *e, uint32_t index);
    int (*on_method)(void *ctx, const vgt_walk_submit *s, const vgt_method *m);
    void (*on_diag)(void *ctx, const vgt_walk_submit *s, vgt_diag_kind kind, const vgt_mpos *pos, const char *msg);
    /* Called once per channel when the walk ends (also on error): free chan->user here. */
    void (*on_channel_end)(void *ctx, vgt_walk_channel *chan);
    void *ctx;
    /* Optional bulk path (see vgt_pb_callbacks.noninc_run): the dwords of a NON_INC header within one
     * entry in one call instead of one on_method each. For consumers that take uploads in bulk. */
    int (*on_noninc_run)(void *ctx, const vgt_walk_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count);
    /* Optional: each write of a CHANNEL_METHODS state preamble (s->preamble = 1; see the invariants). */
    int (*on_state_method)(void *ctx, const vgt_walk_submit *s, const vgt_method *m);
    /* Optional, for callers that keep pointers to the bytes of records whose s->lent was 1: the walk is
     * about to give back [bytes, bytes + len), called once per channel; whatever still points into it must
     * be copied now. Not called at the end of the walk (after on_channel_end, nothing is to be kept). */
    void (*on_release)(void *ctx, vgt_walk_channel *chan, const uint8_t *bytes, uint64_t len);
} vgt_walk_callbacks;

typedef struct vgt_walk_options {
    uint64_t submit_first;        /* submission index range, inclusive; default 0..UINT64_MAX */
    uint64_t submit_last;
    int has_channel;              /* filter: only submissions to this channel handle */
    uint32_t channel;
    int deliver_unselected;       /* 1: callbacks for unselected submissions too, with selected = 0 */
    int verify_checksums;         /* default 1 */
    int streaming;                /* reader option: 1 never seek (pipes) */
    int follow;                   /* reader option: a file still being written is read as it grows, until its
                                   * trailer (vgt_reader_options.follow) */
    uint64_t model_memory_limit;  /* 0: the model's default */
    vgt_model *model;             /* NULL: the walker's own. Else the caller's, fresh or holding exactly the
                                   * records before the reader's first; the walker applies records to it and
                                   * leaves it to the caller (to use after the walk) */
} vgt_walk_options;

typedef struct vgt_walk_stats {
    uint64_t records, submits, selected_submits, entries, pb_bytes, methods, diags;
    uint64_t state_methods;       /* CHANNEL_METHODS writes (not in methods) */
} vgt_walk_stats;

vgt_walk_options vgt_walk_defaults(void);
/* Walk a trace file ("-": standard input, read as a stream) / an open reader (the reader is not closed).
 * stats may be NULL. The model is the walker's own; on_record sees it. */
vgt_status vgt_walk_path(const char *path, const vgt_walk_options *opt, const vgt_walk_callbacks *cb,
                         vgt_walk_stats *stats, vgt_error *err);
vgt_status vgt_walk_reader(vgt_reader *r, const vgt_walk_options *opt, const vgt_walk_callbacks *cb,
                           vgt_walk_stats *stats, vgt_error *err);

/* The same walk fed one record at a time, in sequence order, by a caller that holds the records (opt and
 * cb are copied / kept: cb must outlive the walker). vgt_walker_record returns VGT_E_EOF once a callback
 * asked to stop; vgt_walker_free calls on_channel_end for every channel and fills stats (may be NULL). */
typedef struct vgt_walker vgt_walker;
vgt_status vgt_walker_new(vgt_walker **w, const vgt_walk_options *opt, const vgt_walk_callbacks *cb, vgt_error *err);
vgt_status vgt_walker_record(vgt_walker *w, const vgt_record *rec, vgt_error *err);
void vgt_walker_free(vgt_walker *w, vgt_walk_stats *stats);

#ifdef __cplusplus
}
#endif
#endif
