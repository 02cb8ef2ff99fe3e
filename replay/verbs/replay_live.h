/* replay_live.h: what `vgt replay` shows of a live replay: the latency of each submission from the
 * capture's doorbell to the replayed doorbell (--latency FILE, and p50/p99/max in the summary), and the
 * live counters per channel on stderr when it is a terminal (submissions, launches, draws, macro calls,
 * faults). */
#ifndef VGT_REPLAY_LIVE_H
#define VGT_REPLAY_LIVE_H

#include <stdio.h>

#include "vgt/outfile.h"
#include "vgt/replay.h"

typedef struct live_out {
    vgt_replay *rp;              /* set once the replay is open */
    /* --latency */
    vgt_outfile lat;
    FILE *lat_f;                 /* NULL: no --latency */
    /* ns per submission, one series each (live_series): capture ts -> doorbell, -> received, received ->
     * doorbell, and the stages: capture ts -> chunk read, read -> received, received -> lane, lane -> doorbell,
     * the engine's waits for the backend before it */
    int64_t *series[8];
    uint64_t n, cap, dropped;
    /* counters on a terminal */
    int tty;
    uint64_t last_draw_ns;
    uint32_t drawn_lines;
} live_out;

/* --latency FILE opened (NULL: none); counters drawn on stderr when tty. A vgt exit code, 0 ok. */
int live_open(live_out *l, const char *latency_path, int tty);
/* options.on_submitted */
void live_submitted(live_out *l, const vgt_replay_submitted *s);
/* The end: the counters' last state (terminal), the latency file committed. A vgt exit code. */
int live_close(live_out *l);
/* Summary lines: "  latency: ..." (text) and the per-channel counters of a live replay. */
void live_print_text(const live_out *l, const vgt_replay_summary *s, FILE *f);
/* JSON members (each preceded by a comma): "latency":{...} and "channels":[...]. */
void live_print_json(const live_out *l, const vgt_replay_summary *s, FILE *f);
void live_free(live_out *l);

#endif
