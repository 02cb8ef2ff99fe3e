/* model_impl.h (private): the trace model's state, shared by model.c (apply), model_objects.c
 * (objects, channels), model_map.c (GPU mappings) and model_mem.c (memory contents). */
#ifndef VGT_MODEL_IMPL_H
#define VGT_MODEL_IMPL_H

#include "model_hash.h"
#include "vgt/model.h"

typedef struct model_page {
    uint64_t va;              /* page-aligned */
    uint8_t *bytes;           /* VGT_MODEL_PAGE_SIZE */
    uint8_t *mask;            /* VGT_MODEL_PAGE_SIZE bytes, non-zero where known; NULL when all known */
    uint32_t known;           /* bytes known */
} model_page;

struct vgt_model {
    uint64_t next_seq, submits;
    uint64_t mem_limit, mem_bytes;
    vgt_model_object *objs;
    uint32_t *nchild;         /* parallel to objs: live objects whose parent it is (0: a leaf, freed fast) */
    uint32_t nobj, objcap;
    u64map objmap;            /* client:handle -> index in objs */
    vgt_model_channel *chans;
    uint32_t nch, chcap;
    u64map chmap;             /* client:handle -> index in chans (a hostile trace has 100,000 channels) */
    uint8_t *chdead;          /* parallel to chans: freed, awaiting compaction (order is kept) */
    uint32_t ndead;
    struct map_node *nodes;   /* model_map.c: a treap of live mappings by gpu_va; node 0 is "none" */
    uint32_t nnodes, nodecap, free_nodes, root, nmap;
    uint64_t rng;             /* treap priorities */
    u64map mapref;            /* client:handle -> mappings naming it as memory, VA space or device */
    u64map memnode;           /* client:memory -> node of its latest mapping (checked before use) */
    model_page *pages;
    uint32_t npages, pagecap;
    u64map pagemap;           /* va >> 12 -> index in pages */
    uint64_t hot_va;          /* the page written last (its index hot_ix + 1; 0: none): runs of small writes
                               * to one page (ring entries, a segment's pieces) skip the hash lookup */
    uint32_t hot_ix1;
    vgt_segment *segs;        /* scratch for decoding GPFIFO_SUBMIT */
    uint32_t segcap;
    vgt_rec_gpfifo_submit last_submit;   /* the GPFIFO_SUBMIT applied last, decoded (segments in segs) */
    uint64_t last_submit_seq;            /* its seq + 1; 0: none */
};

static inline uint64_t model_key(uint32_t client, uint32_t handle) { return (uint64_t)client << 32 | handle; }

/* model_objects.c */
vgt_status model_object_add(vgt_model *m, const vgt_model_object *o, vgt_error *err);
vgt_status model_object_free(vgt_model *m, uint32_t client, uint32_t handle, vgt_error *err);
vgt_status model_channel_add(vgt_model *m, const vgt_rec_channel *c, uint64_t seq, vgt_error *err);
vgt_model_channel *model_channel_get(vgt_model *m, uint32_t client, uint32_t handle);
void model_objects_free(vgt_model *m);

/* model_map.c */
void model_map_free(vgt_model *m);
vgt_status model_map_add(vgt_model *m, const vgt_model_mapping *mp, vgt_error *err);
/* Removes the mapping that starts at gpu_va (and its memory contents); nothing when there is none. */
void model_map_remove_at(vgt_model *m, uint64_t gpu_va);
/* Removes every mapping of (client, handle) as memory, VA space or device, with its contents. */
void model_map_remove_object(vgt_model *m, uint32_t client, uint32_t handle);

/* model_mem.c */
void model_mem_forget(vgt_model *m, uint64_t gpu_va, uint64_t len);
void model_mem_free(vgt_model *m);

#endif
