/* lane_cuda.h: lane 3's private state (lane_cuda.c: the records; lane_cuda_mem.c: device memory, copies and
 * their checks). */
#ifndef VGT_REPLAY_LANE_CUDA_H
#define VGT_REPLAY_LANE_CUDA_H

#include <stdint.h>

#include "vgt/replay.h"

typedef struct lc_image {
    uint64_t hash, len, module;
    uint8_t *bytes;              /* len bytes and a NUL */
    int loaded;
} lc_image;

/* A captured handle: a load (module/library -> image) or a function/kernel (-> owner, name). */
typedef struct lc_handle {
    uint64_t handle, owner, image, backend;
    char *name;
    int resolved;
} lc_handle;

typedef struct lc_node {
    uint32_t index;
    vgt_record rec;              /* the node's record, payload copied */
    uint8_t *payload;
    uint8_t *data;               /* host-to-device nodes: the host bytes for the next launch */
    uint32_t data_len;
} lc_node;

typedef struct lc_graph {
    uint64_t exec;
    uint64_t not_run;            /* launches not run: a kernel node cannot be resolved */
    lc_node *nodes;
    uint32_t nnodes, capnodes;
} lc_graph;

/* A device range: captured [cap, cap+len) lives at [rep, rep+len) in the replay. */
typedef struct lc_run { uint64_t cap, len, rep; } lc_run;

/* Bytes a device-to-host copy read, kept for the DTOH_RESULT that carries the captured bytes. */
typedef struct lc_pending { uint64_t host, dev, size; uint8_t *bytes; } lc_pending;

typedef struct lane_cuda {
    lc_image *images;
    uint32_t nimages, capimages;
    lc_handle *loads, *funcs;
    uint32_t nloads, caploads, nfuncs, capfuncs;
    lc_graph *graphs;
    uint32_t ngraphs, capgraphs;
    lc_run *runs;                /* sorted by cap */
    uint32_t nruns, capruns;
    lc_pending *pending;
    uint32_t npending, cappending;
    uint64_t ranges_kept, ranges_moved;
    uint8_t *covered;            /* one bit per submission a forwarded call is linked to */
    uint64_t capcovered;         /* bits */
    uint64_t submits;
    int legacy_warned;
} lane_cuda;

/* lane_cuda_mem.c */
/* One CUDA_MEMORY operation (not a graph-node description); in_graph: run as a node of a graph launch. */
vgt_status lc_memory_op(vgt_replay *rp, lane_cuda *lc, const vgt_record *rec, const vgt_rec_cuda_memory *m, int in_graph,
                        vgt_error *err);
/* Rewrite, in params, the pointers (8-byte parameters and aligned words of larger ones, by the layout) that
 * point into a device range that moved; returns how many. */
uint64_t lc_relocate_params(const lane_cuda *lc, uint8_t *params, uint32_t len, const uint8_t *layout, uint32_t layout_len);
/* A module global captured at [cap, cap+len) lives at rep in the replay. */
vgt_status lc_map_global(lane_cuda *lc, uint64_t cap, uint64_t len, uint64_t rep, vgt_error *err);
void lc_cover(lane_cuda *lc, uint64_t first, uint64_t count);
uint64_t lc_covered(const lane_cuda *lc);

#endif
