/* engine.h: private state of the replay engine (engine.c rebuilds state, check.c compares, lanes.c runs
 * submissions). */
#ifndef VGT_REPLAY_ENGINE_H
#define VGT_REPLAY_ENGINE_H

#include "vgt/backend.h"
#include "vgt/model.h"
#include "vgt/replay.h"

typedef struct engine_channel {
    uint32_t client, handle;
    uint32_t id;                 /* backend channel id */
} engine_channel;

typedef struct engine_lane {
    const char *name;
    vgt_lane lane;
    uint32_t cap;                /* VGT_CAP_LANE_* the backend must have */
    /* Run one submission on the backend. */
    vgt_status (*run)(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                      vgt_error *err);
} engine_lane;

struct vgt_replay {
    vgt_replay_options opt;
    const vgt_backend_ops *ops;
    vgt_backend *be;
    const engine_lane *lane;
    vgt_model *model;
    uint32_t vas;
    engine_channel *chans;
    uint32_t nchans, cap_chans;
    vgt_segment *segs;
    uint32_t cap_segs;
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
};

void engine_report(vgt_replay *rp, vgt_replay_report *r);
void engine_warn(vgt_replay *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* check.c */
void check_memory(vgt_replay *rp, const vgt_record *rec, const vgt_rec_memory *m);
void check_semaphore(vgt_replay *rp, const vgt_record *rec, const vgt_rec_semaphore *s);
void check_close_submission(vgt_replay *rp);
vgt_status check_take_write_log(vgt_replay *rp, vgt_error *err);

/* lanes.c */
const engine_lane *lane_find(vgt_lane l);
const engine_lane *lane_auto(uint32_t caps);
/* A submission outside --submits: its push buffers written, its methods tracked without side effects. */
vgt_status lane_state_only(vgt_replay *rp, const vgt_record *rec, const vgt_rec_gpfifo_submit *sub, uint32_t ch,
                           vgt_error *err);

#endif
