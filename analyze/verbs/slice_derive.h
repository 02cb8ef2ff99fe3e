/* slice_derive.h (private to `vgt slice`): the GPU's own writes before the slice's first submission.
 *
 * A capture records what the CPU wrote (MEMORY records) and the push buffers; what the GPU itself wrote
 * while running the submissions before A (semaphore releases, inline-to-memory uploads, copies) is in no
 * record. A slice that starts at A must still hold it: a later submission waits on those semaphores and
 * launches shaders and QMDs that were uploaded. This module decodes the submissions before A into
 * semantic events (vgt/events.h), one tracker per channel, and applies each write it can know exactly to
 * the slice's model, in stream order (so a later CPU write over the same bytes wins):
 *
 *   SEM_RELEASE  release: the payload (4 or 8 bytes); reduction: computed from the current value when
 *                that is known (integer ops; float ones are not derived)
 *   UPLOAD       complete pitch-layout uploads with their bytes
 *   COPY         pitch-layout copies without remapping whose source bytes are all known, up to
 *                MAX_COPY bytes
 *
 * Launch outputs (shaders are not executed), block-linear layouts, fills and macro-emitted methods are
 * not derived: they are counted, for the DIAGNOSTIC the slice writes. The byte ranges written are kept,
 * sorted and merged, so that the slice marks those MEMORY records with VGT_MEM_FLAG_DERIVED.
 */
#ifndef VGT_SLICE_DERIVE_H
#define VGT_SLICE_DERIVE_H

#include <stdint.h>

#include "vgt/model.h"
#include "vgt/walk.h"

typedef struct slice_derive slice_derive;

typedef struct slice_range {
    uint64_t va, end;         /* [va, end) */
} slice_range;

typedef struct slice_derive_stats {
    uint64_t releases, reductions, uploads, copies, bytes;         /* derived */
    uint64_t launches, skipped;                                    /* not derived */
} slice_derive_stats;

vgt_status slice_derive_new(slice_derive **d, vgt_model *model, vgt_error *err);
void slice_derive_free(slice_derive *d);

/* Walker hooks (vgt_walk_callbacks of the same names): the caller forwards them. */
void slice_derive_on_channel(slice_derive *d, vgt_walk_channel *c);
void slice_derive_on_channel_end(slice_derive *d, vgt_walk_channel *c);
int slice_derive_on_method(slice_derive *d, const vgt_walk_submit *s, const vgt_method *m);
int slice_derive_on_run(slice_derive *d, const vgt_walk_submit *s, const vgt_method *m, const uint8_t *data,
                        uint32_t count);
int slice_derive_on_submit_end(slice_derive *d, const vgt_walk_submit *s);

/* The first failure met inside a hook (VGT_OK if none); the hooks return non-zero after one. */
vgt_status slice_derive_status(const slice_derive *d, vgt_error *err);
/* The written ranges, sorted and merged; valid until the next hook call. */
const slice_range *slice_derive_ranges(slice_derive *d, uint32_t *count);
/* The bytes the GPU wrote before A that no derivation can know (release timestamps, report values),
 * sorted and merged: the slice leaves them out of the observed contents it copies, since its replay
 * cannot produce them. Valid until the next hook call. */
const slice_range *slice_derive_unknown(slice_derive *d, uint32_t *count);
slice_derive_stats slice_derive_get_stats(const slice_derive *d);

#endif
