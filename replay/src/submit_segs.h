/* submit_segs.h: decoding a GPFIFO_SUBMIT record into a caller's growing segment array (replay/ only). */
#ifndef VGT_REPLAY_SUBMIT_SEGS_H
#define VGT_REPLAY_SUBMIT_SEGS_H

#include "vgt/trace.h"

/* A reusable segment array: grown to what each record needs, freed by the owner (free(segs)). */
typedef struct replay_segs {
    vgt_segment *segs;
    uint32_t cap;
} replay_segs;

/* Decode rec (a GPFIFO_SUBMIT) into sub, its segments in s (grown as needed; sub->segments points into it).
 * what names the caller in an out-of-memory message. */
vgt_status replay_decode_submit(replay_segs *s, const vgt_record *rec, vgt_rec_gpfifo_submit *sub, const char *what,
                                vgt_error *err);

#endif
