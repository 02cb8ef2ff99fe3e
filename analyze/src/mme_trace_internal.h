/* mme_trace_internal.h: private to mme_trace*.c: the per-channel and per-object state and the registry
 * of macro versions. */
#ifndef VGT_MME_TRACE_INTERNAL_H
#define VGT_MME_TRACE_INTERNAL_H

#include <stdbool.h>

#include "vgt/mme_trace.h"
#include "vgt/u64map.h"

#define MT_NONE UINT32_MAX
#define MT_METHOD_WORDS 0x1000u          /* method byte addresses < 0x4000 */
#define MT_AT_LAST_CALL UINT64_MAX       /* mt_channel_settle(): each object's last call position */

/* One channel incarnation's MME (one format): one vgt_mme_tracker, fed by all its MME objects, which
 * keeps the instruction RAM they share and each class's start-address RAM (vgt/mme.h). */
typedef struct mt_channel {
    vgt_mme_trace *trace;
    uint32_t client, channel;
    uint64_t alloc_seq;
    vgt_mme_format fmt;
    vgt_mme_tracker *tr;          /* NULL once retired (the channel handle was re-allocated) */
    bool uploads_seen;            /* upload methods since the last registry check */
    uint32_t *objs;               /* indices in trace->objects */
    uint32_t nobjs, objs_cap;
} mt_channel;

/* One channel's object of one class with an MME. */
typedef struct mt_object {
    vgt_mme_trace *trace;
    uint32_t index;               /* in trace->objects */
    uint32_t client, channel, cls;
    uint64_t alloc_seq;
    bool retired;                 /* the channel was re-allocated: a newer object replaced this one */
    vgt_mme_format fmt;
    mt_channel *chan;
    bool touched;                 /* in the trace's touched list for this submission */
    uint32_t cur_version[VGT_MME_MACRO_COUNT];   /* registry id last seen bound to j */
    /* the call being collected */
    vgt_mpos call_pos;
    uint64_t call_submission, call_seq;
    uint32_t call_subch;
    int call_selected;
    uint16_t category[MT_METHOD_WORDS];   /* cache: 0 not computed yet */
} mt_object;

struct vgt_mme_trace {
    vgt_mme_trace_config cfg;
    const vgt_model *model;
    mt_object **objects;
    uint32_t nobjects, objects_cap;
    mt_channel **chans;
    uint32_t nchans, chans_cap;
    vgt_u64map chan_ix[2];        /* per format (TU104, Fermi): client:channel -> its latest mt_channel */
    uint32_t last_object;         /* lookup cache */
    uint32_t *touched;            /* objects fed during the current submission */
    uint32_t ntouched;
    /* registry */
    vgt_mme_trace_macro *versions;
    uint64_t *code_off;           /* per version: offset in code_pool */
    uint32_t nversions, versions_cap;
    uint32_t *code_pool;
    uint64_t code_n, code_cap;
    uint32_t *slots;              /* open addressing over versions: id + 1, 0 empty */
    uint32_t nslots;              /* power of two */
    vgt_mme_trace_stats stats;
    vgt_mme_budget budget;        /* shared by every channel's tracker */
    int stopped;                  /* on_call asked to stop */
    int finished;                 /* vgt_mme_trace_finish() ran */
    uint64_t next_call;
};

/* mme_trace_registry.c: *id = the version of (object, j, start, hash), created with its body from the
 * channel's instruction RAM when new; MT_NONE when the registry is full (counted in stats). start is the
 * entry as written (instructions), start_dword the same in dwords. */
vgt_status mt_version(vgt_mme_trace *t, mt_object *o, uint32_t j, uint32_t start, uint32_t start_dword, uint64_t hash,
                      uint32_t dwords, uint64_t submission, uint64_t seq, uint32_t *id, vgt_error *err);
/* After uploads: register what each bound index of o now holds. */
vgt_status mt_check_bindings(vgt_mme_trace *t, mt_object *o, uint64_t submission, uint64_t seq, vgt_error *err);
void mt_registry_free(vgt_mme_trace *t);

/* mme_trace.c: the tracker's callbacks (user: the mt_channel). */
vgt_status mt_tracker_read_mem(void *user, uint64_t va, void *dst, size_t len, vgt_error *err);
vgt_status mt_tracker_call(void *user, const vgt_mme_call *mc, vgt_error *err);

/* mme_trace_channel.c: the live channel o belongs to (created with its tracker when new), o added to it. */
vgt_status mt_channel_join(vgt_mme_trace *t, mt_object *o, vgt_error *err);
/* The latest channel of (client, channel) in the MME format fmt, NULL if none. */
mt_channel *mt_channel_latest(const vgt_mme_trace *t, uint32_t client, uint32_t channel, vgt_mme_format fmt);
/* The channel's object of class cls (NULL if none). */
mt_object *mt_channel_object(const mt_channel *ch, uint32_t cls);
/* Run a pending call and, after uploads, register what every object's indices hold (at submission/seq,
 * or with MT_AT_LAST_CALL at each object's last call). */
vgt_status mt_channel_settle(vgt_mme_trace *t, mt_channel *ch, uint64_t submission, uint64_t seq, vgt_error *err);
/* The channel handle was re-allocated: settle, count, drop the tracker, retire every object. */
vgt_status mt_channel_retire(vgt_mme_trace *t, mt_channel *ch, vgt_error *err);
/* The tracker's own counts join the trace's (when the channel is retired or the trace finished). */
void mt_channel_absorb_stats(vgt_mme_trace *t, const mt_channel *ch);
void mt_channels_free(vgt_mme_trace *t);

#endif
