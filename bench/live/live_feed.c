/* live_feed.c: a recorded trace played back as a live stream, paced, with every record stamped with the
 * time it is sent (CLOCK_MONOTONIC, the capture's clock), so that a live consumer measures the latency it
 * adds from the moment a submission is "captured":
 *
 *   live_feed [--rate N] [--speed X] [--limit N] TRACE
 *
 * Output: under `vgt record` (VGT_CAPTURE_FD set: the capture's own stream), the records go to that fd
 * as the capture shim writes them (stored chunks, one per submission when vgt record is live, else of 1 MiB;
 * no trailer; SESSION_START/END left to vgt record), so `vgt record --replay=sim --check -- live_feed TRACE` runs the whole live path on a
 * machine without a GPU; otherwise a complete trace on stdout (one chunk per submission), for
 * `live_feed TRACE | vgt replay --live - ...`. The process never opens an NVIDIA device node, so the
 * capture shim stays out of its way.
 *
 * Pacing: --rate N sends at most N submissions a second (the records between two submissions go with the
 * second); --speed X keeps the trace's own gaps between submissions divided by X (1: as captured); with
 * neither, as fast as the consumer takes them. --limit N stops after N submissions.
 * Exit: 0, 2 on a usage or I/O error (a consumer that goes away is an I/O error). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vgt/trace.h"

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) { }
}

static int usage(void)
{
    fprintf(stderr, "usage: live_feed [--rate N] [--speed X] [--limit N] TRACE\n");
    return 2;
}

int main(int argc, char **argv)
{
    double rate = 0, speed = 0;
    uint64_t limit = UINT64_MAX;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rate") && i + 1 < argc) rate = atof(argv[++i]);
        else if (!strcmp(argv[i], "--speed") && i + 1 < argc) speed = atof(argv[++i]);
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = strtoull(argv[++i], NULL, 0);
        else if (argv[i][0] == '-' || path) return usage();
        else path = argv[i];
    }
    if (!path || rate < 0 || speed < 0) return usage();
    signal(SIGPIPE, SIG_IGN);   /* a consumer that goes away is a write error, said below */
    vgt_error err;
    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) {
        fprintf(stderr, "live_feed: %s\n", err.msg);
        return 2;
    }
    const char *fd_env = getenv("VGT_CAPTURE_FD");
    int capture = fd_env && *fd_env;
    vgt_writer_options wo = vgt_writer_defaults();
    wo.codec = VGT_CODEC_STORED;
    wo.write_trailer = !capture;
    /* under vgt record, as the capture shim: a chunk per submission only when vgt record asks for live
     * (VGT_CAPTURE_LIVE), else 1 MiB chunks; on stdout always live */
    const char *live_env = getenv("VGT_CAPTURE_LIVE");
    wo.live = !capture || (live_env && !strcmp(live_env, "1"));
    wo.chunk_target = 1u << 20;
    const vgt_trace_info *in = vgt_reader_info(r);
    vgt_identity capture_id[] = {{"producer", "live_feed"}, {"capture_mode", "preload"}, {"memory_mode", "changed"}};
    vgt_writer *w;
    vgt_status rc = capture ? vgt_writer_open_fd(&w, atoi(fd_env), 0, &wo, capture_id, 3, &err)
                            : vgt_writer_open_fd(&w, 1, 0, &wo, in->identity, in->identity_count, &err);
    if (rc != VGT_OK) {
        fprintf(stderr, "live_feed: %s\n", err.msg);
        vgt_reader_close(r);
        return 2;
    }
    vgt_record rec;
    uint64_t submits = 0, t0 = vgt_now_ns(), first_ts = 0;
    int have_first = 0;
    while ((rc = vgt_reader_next(r, &rec, &err)) == VGT_OK) {
        if (capture && (rec.type == VGT_REC_SESSION_START || rec.type == VGT_REC_SESSION_END)) continue;
        if (rec.type == VGT_REC_GPFIFO_SUBMIT) {
            if (submits == limit) break;
            if (!have_first) first_ts = rec.ts, have_first = 1;
            if (rate > 0) sleep_until(t0 + (uint64_t)((double)submits * 1e9 / rate));
            else if (speed > 0) sleep_until(t0 + (uint64_t)((double)(rec.ts - first_ts) / speed));
            submits++;
        }
        /* stamped now: the moment this submission is "captured" */
        if ((rc = vgt_write_record(w, rec.type, rec.flags, vgt_now_ns(), rec.payload, rec.length, NULL, &err)) != VGT_OK)
            break;
    }
    vgt_error cerr;
    vgt_status crc = vgt_writer_close(w, &cerr);
    vgt_reader_close(r);
    if (rc != VGT_OK && rc != VGT_E_EOF) {
        fprintf(stderr, "live_feed: %s\n", err.msg);
        return 2;
    }
    if (crc != VGT_OK) {
        fprintf(stderr, "live_feed: %s\n", cerr.msg);
        return 2;
    }
    return 0;
}
