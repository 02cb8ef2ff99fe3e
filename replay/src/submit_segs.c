/* submit_segs.c: one GPFIFO_SUBMIT decode with a growing segment array, for the engine and the relocation
 * scans. The array is sized by vgt_gpfifo_submit_segment_room (vgt/trace.h): the record's segment count,
 * bounded by what its payload can hold. */
#include <stdlib.h>

#include "submit_segs.h"

vgt_status replay_decode_submit(replay_segs *s, const vgt_record *rec, vgt_rec_gpfifo_submit *sub, const char *what,
                                vgt_error *err)
{
    uint32_t nseg = vgt_gpfifo_submit_segment_room(rec);
    if (nseg > s->cap) {
        vgt_segment *n = realloc(s->segs, (size_t)nseg * sizeof *n);
        if (!n) return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "%s: out of memory for %u segments", what, nseg);
        s->segs = n;
        s->cap = nseg;
    }
    return vgt_decode_gpfifo_submit(rec, sub, s->segs, s->cap, err);
}
