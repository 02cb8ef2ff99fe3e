/* model.h: THE trace model. The one place that folds records into state: objects and their parents,
 * memory objects, channels and their engine objects and tokens, GPU and CPU mappings, memory contents by
 * GPU VA, submissions. Everything that needs "what did the GPU see at submission N" applies records to
 * a model up to N and asks it; nobody else re-derives this state (docs/architecture.md).
 *
 * Invariants:
 *  - Records are applied in sequence order; applying a record whose seq is not the next one fails.
 *  - A GPU VA is resolved through the mappings, never treated as a CPU pointer.
 *  - Memory contents come from MEMORY records and from the push-buffer segments of GPFIFO_SUBMIT records
 *    (which are the bytes in memory at the doorbell). Bytes never recorded read as "unknown".
 *  - Handles are keyed by (client, handle).
 */
#ifndef VGT_MODEL_H
#define VGT_MODEL_H

#include <stdint.h>

#include "vgt/error.h"
#include "vgt/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGT_MODEL_PAGE_SIZE 4096u
#define VGT_MODEL_MAX_ENGINES 16u

typedef struct vgt_model vgt_model;

typedef struct vgt_model_object {
    uint32_t client, parent, handle, cls;
    uint64_t alloc_seq;
    int is_memory;            /* a MEM_ALLOC (or RM_ALLOC of a memory class) */
    uint64_t size;            /* memory objects */
    uint32_t aperture;        /* memory objects */
    /* The flags word of the RM_ALLOC parameters, for the classes whose flags a replay reproduces
     * (model.c alloc_flag_fields): channels (NVOS04 flags) and context shares (sync/async/specified).
     * has_alloc_flags: 0 when the trace did not record them (older captures sent no parameters). */
    uint32_t alloc_flags;
    int has_alloc_flags;
} vgt_model_object;

typedef struct vgt_model_engine {
    uint32_t handle, cls;
    uint64_t alloc_seq;
} vgt_model_engine;

typedef struct vgt_model_channel {
    vgt_rec_channel rec;      /* as recorded (blob-free) */
    uint64_t alloc_seq;
    int has_token;
    uint32_t token;
    uint32_t engine_count;
    vgt_model_engine engines[VGT_MODEL_MAX_ENGINES];
    uint64_t submit_count;    /* GPFIFO_SUBMIT records applied for this channel */
    uint32_t last_gp_put;
    /* Format 1.1: the push-buffer decoder state a CHANNEL_STATE record gave this channel (the latest one
     * since its CHANNEL record); a channel sliced out of a longer trace starts decoding from it. The model
     * does not decode push buffers: SET_OBJECTs in later submissions do not change it. */
    int has_state;
    uint64_t state_seq;       /* seq of that CHANNEL_STATE record */
    vgt_rec_channel_state state;   /* state.subch_class[0..7]: the subchannel -> class bindings */
    /* Format 1.1: the latest CHANNEL_METHODS record of this channel since its CHANNEL record (the model's
     * own copy of its writes, vgt_channel_method_at() reads them); replaced by a later one. */
    int has_methods;
    uint64_t methods_seq;
    vgt_rec_channel_methods methods_rec;  /* .writes points at methods */
    uint8_t *methods;
} vgt_model_channel;

typedef struct vgt_model_mapping {
    uint32_t client, device, va_space, memory;
    uint64_t gpu_va, offset, length;
    uint32_t flags, source;
    uint64_t map_seq;
} vgt_model_mapping;

vgt_status vgt_model_new(vgt_model **m, vgt_error *err);
void vgt_model_free(vgt_model *m);

/* Fold one record into the state. Unknown record types are accepted and ignored. Malformed payloads fail
 * with the record's sequence number in the message. Memory contents are bounded by max_memory_bytes
 * (vgt_model_set_memory_limit; default 4 GiB): past it, apply fails with VGT_E_LIMIT. */
vgt_status vgt_model_apply(vgt_model *m, const vgt_record *rec, vgt_error *err);
void vgt_model_set_memory_limit(vgt_model *m, uint64_t max_memory_bytes);
uint64_t vgt_model_next_seq(const vgt_model *m);      /* seq of the next record to apply */
uint64_t vgt_model_submit_count(const vgt_model *m);  /* GPFIFO_SUBMIT records applied so far */
/* The GPFIFO_SUBMIT of seq as the model decoded it, when it is the record applied last (its segments stay
 * valid until the next apply): 1, else 0. Saves a walk over the model decoding the record again. */
int vgt_model_last_submit(const vgt_model *m, uint64_t seq, vgt_rec_gpfifo_submit *out);

/* Objects (live only; a freed object is gone). */
const vgt_model_object *vgt_model_object_find(const vgt_model *m, uint32_t client, uint32_t handle);
uint32_t vgt_model_object_count(const vgt_model *m);
const vgt_model_object *vgt_model_object_at(const vgt_model *m, uint32_t i);

/* Channels (live only). */
uint32_t vgt_model_channel_count(const vgt_model *m);
const vgt_model_channel *vgt_model_channel_at(const vgt_model *m, uint32_t i);
const vgt_model_channel *vgt_model_channel_find(const vgt_model *m, uint32_t client, uint32_t handle);
const vgt_model_channel *vgt_model_channel_by_token(const vgt_model *m, uint32_t token);
/* Class of an engine object handle on a channel, or 0. */
uint32_t vgt_model_engine_class(const vgt_model_channel *ch, uint32_t handle);

/* GPU mappings (live only), sorted by gpu_va. find: the mapping containing va, or NULL. */
uint32_t vgt_model_mapping_count(const vgt_model *m);
const vgt_model_mapping *vgt_model_mapping_at(const vgt_model *m, uint32_t i);
const vgt_model_mapping *vgt_model_mapping_find(const vgt_model *m, uint64_t gpu_va);

/* Memory contents by GPU VA. read: copies len bytes into dst (unknown bytes read as 0) and returns in
 * *known the number of those bytes that were ever recorded. write: used by apply; public so that tools
 * can seed a model. */
vgt_status vgt_model_mem_read(const vgt_model *m, uint64_t gpu_va, void *dst, uint64_t len, uint64_t *known,
                              vgt_error *err);
vgt_status vgt_model_mem_write(vgt_model *m, uint64_t gpu_va, const void *src, uint64_t len, vgt_error *err);
/* Visit every known page (ascending VA) with its bytes and a mask of known bytes (NULL when all known;
 * else VGT_MODEL_PAGE_SIZE bytes, non-zero where the byte is known). Return non-zero to stop. A GPU_UNMAP
 * (or freeing the memory, its VA space or device) forgets the contents under the mapping. */
typedef int (*vgt_model_page_fn)(void *ctx, uint64_t page_va, const uint8_t *bytes, const uint8_t *known_mask);
vgt_status vgt_model_mem_foreach(const vgt_model *m, vgt_model_page_fn fn, void *ctx, vgt_error *err);
uint64_t vgt_model_mem_bytes(const vgt_model *m);     /* bytes of page storage held */

/* Lending record bytes instead of copying them. A caller that keeps the bytes of the records it applies
 * valid past its next read (a walk holding its reader's chunks, vgt_reader_hold) lends them under an id:
 * a push-buffer segment of a GPFIFO_SUBMIT applied while the loan is the latest, whose bytes lie in
 * [bytes, bytes + len), may then be kept as pointers to those bytes instead of a copy in the model's
 * pages; a later write over the same memory drops the pointers, so that push buffers soon written over
 * (they are rings) are never copied. Every answer of the model is the same as without lending. The caller
 * keeps the bytes valid and unchanged until vgt_model_reclaim(m, id), which copies what still points into
 * them; vgt_model_free needs no reclaim. Only the latest loan takes new pointers; older ones stay until
 * reclaimed. lend returns 0 when it could not (no memory; id 0 or already lent): writes then copy, and
 * nothing is to be reclaimed. */
int vgt_model_lend(vgt_model *m, uint64_t id, const void *bytes, uint64_t len);
void vgt_model_reclaim(vgt_model *m, uint64_t id);
/* Loans not reclaimed yet (tests, and a caller's check that it reclaimed all). */
uint32_t vgt_model_loans(const vgt_model *m);

#ifdef __cplusplus
}
#endif
#endif
