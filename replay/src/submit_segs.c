/* submit_segs.c: one GPFIFO_SUBMIT decode with a growing segment array, for the engine and the relocation
 * scans. The array is sized by the record's segment count (payload bytes 36..39, docs/trace-format.md),
 * bounded by what the payload can hold: a segment takes at least 16 bytes, so a hostile count cannot ask
 * for more than the record's length allows. */
#include <stdlib.h>

#include "submit_segs.h"

vgt_status replay_decode_submit(replay_segs *s, const vgt_record *rec, vgt_rec_gpfifo_submit *sub, const char *what,
                                vgt_error *err)
{
    uint32_t nseg = 0;
    if (rec->length >= 40)
        nseg = (uint32_t)rec->payload[36] | (uint32_t)rec->payload[37] << 8 | (uint32_t)rec->payload[38] << 16 |
               (uint32_t)rec->payload[39] << 24;
    uint32_t max = rec->length / 16 + 1;
    if (nseg > max) nseg = max;
    if (nseg > s->cap) {
        vgt_segment *n = realloc(s->segs, (size_t)nseg * sizeof *n);
        if (!n) return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "%s: out of memory for %u segments", what, nseg);
        s->segs = n;
        s->cap = nseg;
    }
    return vgt_decode_gpfifo_submit(rec, sub, s->segs, s->cap, err);
}
