/* mme_trace_internal.h: private to mme_trace*.c: the per-object state, the registry of macro versions,
 * and the upload-unit detector. */
#ifndef VGT_MME_TRACE_INTERNAL_H
#define VGT_MME_TRACE_INTERNAL_H

#include <stdbool.h>

#include "vgt/mme_trace.h"

#define MT_NONE UINT32_MAX
#define MT_METHOD_WORDS 0x1000u          /* method byte addresses < 0x4000 */
#define MT_UPLOAD_LOG_MAX (1u << 20)   /* upload writes kept while the pointer unit is undecided */

typedef struct mt_trace mt_trace;

/* Upload methods of a channel whose pointer unit is not decided yet, kept to be re-applied in groups. */
typedef struct mt_upload_log {
    uint32_t *obj, *m, *v;        /* object index, method, value */
    uint32_t n, cap;
} mt_upload_log;

/* What the MME objects of one format in one channel incarnation share: the instruction RAM (every object
 * gets every instruction-RAM write: in the corpus HOPPER_COMPUTE_A binds and calls macros whose code only
 * the HOPPER_A object uploaded [inference from traces]) and so the pointer unit. The start-address RAM
 * stays per object: both classes write their own. */
typedef struct mt_channel {
    uint32_t client, channel;
    uint64_t alloc_seq;
    vgt_mme_format fmt;
    /* pointer unit: 0 undecided (dwords applied), 1 dwords, 3 groups of 3 dwords */
    uint32_t unit;
    uint32_t seg_base, seg_len;   /* raw pointer of the upload in progress and words written since */
    bool seg_open;
    mt_upload_log log;
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
    vgt_mme_tracker *tr;
    mt_channel *chan;
    bool uploads_seen;            /* upload methods since the last registry check */
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
    int stopped;                  /* on_call asked to stop */
    int finished;                 /* vgt_mme_trace_finish() ran */
    uint64_t next_call;
};

/* mme_trace_registry.c: *id = the version of (object, j, start, hash), created with its body from the
 * object's instruction RAM when new; MT_NONE when the registry is full (counted in stats). */
vgt_status mt_version(vgt_mme_trace *t, mt_object *o, uint32_t j, uint32_t start_dword, uint64_t hash,
                      uint32_t dwords, uint64_t submission, uint64_t seq, uint32_t *id, vgt_error *err);
/* After uploads: register what each bound index now holds. */
vgt_status mt_check_bindings(vgt_mme_trace *t, mt_object *o, uint64_t submission, uint64_t seq, vgt_error *err);
void mt_registry_free(vgt_mme_trace *t);

/* mme_trace_upload.c: feed one upload method (0x0114..0x0120) of o, deciding and applying the unit and
 * sharing instruction-RAM writes with o's siblings. */
vgt_status mt_upload_method(mt_object *o, uint32_t method, uint32_t value, vgt_error *err);
/* The channel o belongs to (created when new), o added to it, and o's instruction RAM filled from a sibling. */
vgt_status mt_channel_join(vgt_mme_trace *t, mt_object *o, vgt_error *err);
void mt_channels_free(vgt_mme_trace *t);

#endif
