/* record_live.h: `vgt record` in live mode: the replay it feeds (--replay: a `vgt replay --live -` child
 * reading the trace from a pipe) and the spill policy (--live-policy spill: the records wait in a file
 * on disk while the consumer is behind, so the program never blocks on it). */
#ifndef VGT_RECORD_LIVE_H
#define VGT_RECORD_LIVE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "vgt/trace.h"

/* The replay child: `vgt replay - --live --backend BACKEND [--check] [--latency FILE] --quiet`, its stdin
 * the read end of a pipe, its stdout our stderr (CMD's stdout stays CMD's). Returns the write end (the
 * trace goes there) and the child's pid in *pid; -1 with errno on failure. backend NULL: the replay
 * chooses (the GPU when usable, else sim). */
int live_replay_spawn(const char *backend, int check, const char *latency, pid_t *pid);

/* The spill policy: records written to spill (a writer on an unlinked file) are forwarded, in order, to
 * out by a thread; the bytes the consumer fell behind are kept on disk, never lost and never in memory.
 * spill_flushed() after each flush of spill; spill_finish() after spill is closed (its trailer ends the
 * forwarding): a DIAGNOSTIC in out says how far the consumer fell behind, then out is closed. */
typedef struct live_spill {
    int fd;                      /* the spill file */
    vgt_writer *spill, *out;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t more;
    uint64_t flushes;            /* spill flushes so far (under lock) */
    uint64_t peak_bytes;         /* the most bytes written to the spill file and not yet forwarded */
    uint64_t forwarded;          /* records forwarded */
    vgt_error err;               /* the first failure forwarding (reading the spill file or writing out) */
    int started;
} live_spill;

/* Opens the spill file (in TMPDIR) and its writer (*spill: what the caller writes to). */
vgt_status live_spill_open(live_spill *s, vgt_writer *out, const vgt_writer_options *wo, const vgt_identity *ident,
                           uint32_t nident, vgt_writer **spill, vgt_error *err);
vgt_status live_spill_start(live_spill *s, vgt_error *err);
void live_spill_flushed(live_spill *s);
/* Waits for the forwarding to end; closes out. Returns its status (err says why). */
vgt_status live_spill_finish(live_spill *s, vgt_error *err);

#endif
