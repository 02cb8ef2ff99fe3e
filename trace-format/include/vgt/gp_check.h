/* gp_check.h: completion forensics of the GPFIFO rings, from the trace alone.
 *
 * A capture reads each channel's GP_GET from its USERD at every doorbell (GPFIFO_SUBMIT gp_get_before, and
 * gp_get_after when the producer read it) and at the end of the capture (CHANNEL_PROGRESS). The GPU fetches
 * ring entries in order and never past the GP_PUT the driver wrote, so between two reads of one channel
 * GP_GET moves forward, modulo the ring size, and stays within the last GP_PUT the trace recorded. This
 * checker follows every channel the trace allocates (its CHANNEL record gives the ring size) and reports:
 *   - PUT_WRAP: a submission's entries reach the end of the ring (GP_PUT wraps to the start);
 *   - GET_WRAP: GP_GET read lower than the previous read: the GPU fetched across the end of the ring;
 *   - GET_PAST_PUT: GP_GET beyond the last GP_PUT recorded (or not a ring index): the GPU fetched an entry
 *     no recorded submission wrote (a doorbell the capture missed, a ring written by someone else, or a
 *     ring the driver rewound).
 * A read of 0xFFFFFFFF (VGT_GP_NOT_READ) checks nothing. */
#ifndef VGT_GP_CHECK_H
#define VGT_GP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "vgt/error.h"
#include "vgt/trace.h"

typedef enum vgt_gp_event_kind {
    VGT_GP_PUT_WRAP = 1,
    VGT_GP_GET_WRAP = 2,
    VGT_GP_GET_PAST_PUT = 3,
} vgt_gp_event_kind;

typedef struct vgt_gp_event {
    vgt_gp_event_kind kind;
    uint64_t seq;                 /* the record that showed it */
    uint32_t client, channel;
    uint32_t entries;             /* ring size */
    uint32_t get;                 /* GP_GET read (GET_*), or the submission's first entry (PUT_WRAP) */
    uint32_t prev_get;            /* the previous GP_GET read on the channel (0xFFFFFFFF: none, the ring start) */
    uint32_t put;                 /* the last GP_PUT recorded before the read (PUT_WRAP: GP_PUT after) */
    int at_end;                   /* from CHANNEL_PROGRESS (the end of the capture) */
} vgt_gp_event;

/* Up to this many events from one record (a PUT wrap and a check of each of its two GP_GET reads). */
#define VGT_GP_MAX_EVENTS 3

typedef struct vgt_gp_stats {
    uint64_t submits;             /* GPFIFO_SUBMIT records */
    uint64_t get_read;            /* ... whose gp_get_before was read */
    uint64_t get_checked;         /* GP_GET reads checked against a known ring (channel allocated in the trace) */
    uint64_t progress;            /* CHANNEL_PROGRESS records */
    uint64_t fetched_all;         /* ... whose GP_GET equals the last recorded GP_PUT */
    uint64_t put_wraps, get_wraps, get_past_put;
} vgt_gp_stats;

typedef struct vgt_gp_check vgt_gp_check;

vgt_status vgt_gp_check_open(vgt_gp_check **out, vgt_error *err);
void vgt_gp_check_close(vgt_gp_check *g);
/* Feeds one record (CHANNEL, GPFIFO_SUBMIT and CHANNEL_PROGRESS matter; others are ignored). *n receives
 * how many events were written to ev. Malformed records fail as their decoders do. */
vgt_status vgt_gp_check_feed(vgt_gp_check *g, const vgt_record *rec, vgt_gp_event ev[VGT_GP_MAX_EVENTS], int *n,
                             vgt_error *err);
const vgt_gp_stats *vgt_gp_check_stats(const vgt_gp_check *g);

const char *vgt_gp_event_name(vgt_gp_event_kind k);   /* "PUT_WRAP", "GET_WRAP", "GET_PAST_PUT" */
/* One line (no newline): "seq 12 channel 0xbeef0100: GET_PAST_PUT: GP_GET 9 beyond GP_PUT 7 (previous
 * GP_GET 4, 512 entries)". Returns what snprintf returns. */
int vgt_gp_event_text(const vgt_gp_event *e, char *buf, size_t cap);
/* The event as a JSON object (keys kind, seq, client, channel, entries, get, prev_get, put, at_end). */
int vgt_gp_event_json(const vgt_gp_event *e, char *buf, size_t cap);

#endif
