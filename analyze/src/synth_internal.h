/* synth_internal.h: the synthesizer's state (private to synth.c and synth_check.c). */
#ifndef VGT_SYNTH_INTERNAL_H
#define VGT_SYNTH_INTERNAL_H

#include <stdio.h>

#include "vgt/events.h"
#include "vgt/pbwriter.h"
#include "vgt/pushbuf.h"
#include "vgt/synth.h"

#define SYNTH_STATE_SLOTS 4096u
#define SYNTH_CACHE 1024u
#define SYNTH_HELD 64u

/* What the channel has been told: subchannel bindings, the compute class's state. */
typedef struct synth_state {
    uint32_t bound[8];
    uint32_t state_cls;
    uint32_t state_val[SYNTH_STATE_SLOTS];
    uint8_t state_set[SYNTH_STATE_SLOTS];
} synth_state;

typedef struct synth_cache {
    uint64_t hash, len, va;
} synth_cache;

/* One launch's relocation: captured ranges and where their copies went. */
typedef struct synth_launch {
    uint64_t cb_old[VGT_QMD_MAX_CB], cb_new[VGT_QMD_MAX_CB];
    uint32_t cb_len[VGT_QMD_MAX_CB];   /* 0: not relocated */
    uint64_t prog_old, prog_new, qmd_old, qmd_new;
    uint32_t prog_len, qmd_len;
} synth_launch;

/* A QMD that waits for a scheduling QMD (REQUIRE_SCHEDULING_PCAS: a CUDA graph's kernel node), rebuilt at
 * new_va in memory that outlives vgt_synth_forget_memory: a later submission's graph launch, or the node
 * before it in the chain, schedules it by its captured VA. */
typedef struct synth_node {
    uint64_t old_va, new_va;
    uint32_t len;
    uint8_t committed;        /* its plan was checked (vgt_synth_check); else it leaves with vgt_synth_begin */
} synth_node;

struct vgt_synth {
    vgt_synth_config cfg;
    vgt_synth_plan plan;
    synth_state committed, pending;   /* after the last checked plan; as the current plan leaves it */
    /* empty dispatches of the current plan rebuilt with their SCHEDULE dependents: a launch of the same plan
     * that decrements one's dependence shows it ordered the stream (CUDA's CTA-less QMDs), and it is taken
     * out again; the others start work the stream does not launch itself (a CUDA graph's node chain) */
    struct { uint64_t work, qmd_va; } held[SYNTH_HELD];
    uint32_t nheld;
    int broken;
    int keep;                 /* a node is being built: its memory comes from cfg.alloc_keep, not the cache */
    uint64_t cur_work;
    synth_node *nodes;
    uint32_t nnodes, cap_nodes;
    synth_cache cache[SYNTH_CACHE];
    uint32_t ncache;
    uint32_t *pb;
    uint64_t cap_pb;
    /* the check's decoder and tracker (synth_check.c), following this channel's stream */
    vgt_pb_state check_pb;
    vgt_sem_tracker *check_sem;
};

#endif
