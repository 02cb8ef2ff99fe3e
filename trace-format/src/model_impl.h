/* model_impl.h (private): the trace model's state, shared by model.c (apply), model_objects.c
 * (objects, channels), model_map.c (GPU mappings) and model_mem.c (memory contents). */
#ifndef VGT_MODEL_IMPL_H
#define VGT_MODEL_IMPL_H

#include <string.h>

#include "model_hash.h"
#include "vgt/model.h"

/* Lent bytes in a page (vgt_model_lend): [lo, hi) of the page are the caller's bytes at src, not copied
 * into the page's own yet (those bytes are stale). A page's pieces never overlap, and are known bytes. */
typedef struct model_piece {
    const uint8_t *src;
    uint64_t id;              /* the loan they belong to */
    uint32_t lo, hi;
} model_piece;
#define MODEL_PIECES 4u       /* per page: the ends of two push-buffer segments and what lies between */

typedef struct model_page {
    uint64_t va;              /* page-aligned */
    uint8_t *bytes;           /* VGT_MODEL_PAGE_SIZE */
    uint8_t *mask;            /* VGT_MODEL_PAGE_SIZE bytes, non-zero where known; NULL when all known */
    uint32_t known;           /* bytes known */
    uint32_t npieces;
    uint64_t listed_id;       /* the loan whose page list holds this page's VA already (skips repeats) */
    model_piece pieces[MODEL_PIECES];
} model_page;

/* A loan (vgt_model_lend): caller bytes [lo, hi) that writes may point at instead of copying, and the
 * pages given a piece of them (a VA may repeat or name a page that has since changed hands). */
typedef struct model_loan {
    uint64_t id;
    uintptr_t lo, hi;
    uint64_t *vas;
    uint32_t nvas, vascap;
} model_loan;

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
    model_loan *loans;        /* live loans, oldest first; the last one is current while cur_loan */
    uint32_t nloans, loancap;
    int cur_loan;             /* writes may point into loans[nloans - 1] */
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
/* vgt_model_mem_write; lendable: the bytes may be pointed at where they are lent (vgt_model_lend) */
vgt_status model_mem_put(vgt_model *m, uint64_t gpu_va, const void *src, uint64_t len, int lendable, vgt_error *err);
void model_mem_forget(vgt_model *m, uint64_t gpu_va, uint64_t len);
void model_mem_free(vgt_model *m);

/* model_lend.c */
void model_loans_free(vgt_model *m);
/* 1 when a write of len bytes from src may point at them (they lie in the current loan, and are enough
 * for a pointer to save more than it costs). */
int model_may_lend(const vgt_model *m, const uint8_t *src, uint64_t len);
/* Bytes [off, off + n) of page p from src: a pointer to them when lend (model_may_lend said they may),
 * else a copy. Pieces under them are cut away (or copied first where a cut would split one with no room). */
void model_put_bytes(vgt_model *m, model_page *p, uint32_t off, const uint8_t *src, uint32_t n, int lend);
/* Copies every piece of a page into its own bytes (before the page changes in ways pieces do not follow). */
void model_page_settle(model_page *p);
/* The bytes [off, off + n) of page p as they are, pieces included (its own bytes when none). */
static inline void model_page_pieces(const model_page *p, uint32_t off, uint32_t n, uint8_t *dst)
{
    for (uint32_t i = 0; i < p->npieces; i++) {
        const model_piece *q = &p->pieces[i];
        uint32_t lo = q->lo > off ? q->lo : off, hi = q->hi < off + n ? q->hi : off + n;
        if (lo < hi) memcpy(dst + (lo - off), q->src + (lo - q->lo), hi - lo);
    }
}

#endif
