/* ingest.c: `vgt ingest SOURCE -o OUT.vgt [--follow]`: pack an uncompressed record stream (what the
 * freestanding encoder, capture/freestanding/vgt_fenc.h, writes: docs/trace-format.md section 10) into an
 * indexed, compressed trace.
 *
 * Crash-safe and incremental: the trace is written in place with the writer's crash_safe mode (a chunk
 * closed and synced at every GPFIFO_SUBMIT), and whatever has arrived is flushed whenever the source goes
 * quiet, so a killed ingest leaves a trace valid to its last flushed record (`vgt verify --salvage`
 * recovers it). It stops at the stream's END mark, at the end of a pipe or device, or on SIGINT/SIGTERM,
 * and then closes the trace with its index. With --follow a regular file is read as it grows until an
 * END mark or a signal. Every record is checked (sequence, length, payload structure) before it is
 * written: a malformed record stops the ingest with the trace valid up to the record before it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "../freestanding/vgt_fenc.h"
#include "vgt/cli.h"
#include "vgt/io.h"
#include "vgt/trace.h"

typedef struct ingest_opts {
    const char *out;
    int follow;
    uint64_t level;
} ingest_opts;

static const vgt_cli_opt ingest_options[] = {
    {"output", 'o', VGT_ARG_PATH, "OUT.vgt", "output trace ('-' for standard output)", .off = offsetof(ingest_opts, out),
     .flags = VGT_OPT_REQUIRED},
    {"follow", 0, VGT_ARG_NONE, NULL, "SOURCE is a regular file still being written: wait for more at its end, until "
     "an END mark or SIGINT/SIGTERM", .off = offsetof(ingest_opts, follow)},
    {"level", 0, VGT_ARG_U64, "N", "zstd level (default 3)", .off = offsetof(ingest_opts, level), .min = 1, .max = 22},
    {0}};

const vgt_cli_spec cmd_ingest_spec = {
    .verb = "ingest", .args = "SOURCE", .min_args = 1, .max_args = 1, .opts = ingest_options,
    .about = "Pack an uncompressed record stream (the output of the freestanding encoder that device models and "
             "kernel modules link; docs/trace-format.md section 10) into an indexed, compressed trace. SOURCE is a "
             "file, a FIFO, a character device or '-' (standard input).\n\n"
             "The trace is written in place and crash-safe: every submission is flushed and synced, and whatever has "
             "arrived is flushed when the source goes quiet, so a killed ingest leaves a trace valid up to its last "
             "flushed record ('vgt verify --salvage' recovers it). The ingest ends at the stream's END mark, at the "
             "end of SOURCE, or on SIGINT/SIGTERM, and then writes the index.",
    .notes = "exit: 0 the stream ended with its END mark or ingest was stopped by a signal; 1 the stream ended without "
             "an END mark, inside a record, or with a malformed record (the trace holds every record before it); 2 "
             "usage or I/O error",
};

#define VERB "ingest"
#define IDLE_FLUSH_MS 200
#define FOLLOW_POLL_MS 50

static volatile sig_atomic_t stop_requested;
static void on_stop(int sig) { (void)sig; stop_requested = 1; }

struct source {
    int fd;
    int follow;          /* a growing regular file */
    uint64_t offset;     /* bytes consumed */
    int pending;         /* records written since the last flush */
    vgt_writer *w;
};

enum { GOT_ALL = 0, GOT_EOF = 1, GOT_PARTIAL = 2, GOT_STOP = 3, GOT_ERROR = 4 };

static int flush_pending(struct source *s)
{
    vgt_error err;
    if (!s->pending) return 0;
    s->pending = 0;
    if (vgt_writer_flush(s->w, 1, &err) != VGT_OK) return vgt_cli_report(VERB, &err), -1;
    return 0;
}

/* Read exactly n bytes. Flushes the trace while the source is quiet; at the end of a followed file waits
 * for more. GOT_EOF when the source ended before the first byte, GOT_PARTIAL inside. */
static int read_exact(struct source *s, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (stop_requested) return GOT_STOP;
        if (!s->follow) {
            struct pollfd p = {s->fd, POLLIN, 0};
            int pr = poll(&p, 1, s->pending ? IDLE_FLUSH_MS : -1);
            if (pr == 0) {
                if (flush_pending(s)) return GOT_ERROR;
                continue;
            }
            if (pr < 0 && errno == EINTR) continue;
        }
        ssize_t r = vgt_io()->read(s->fd, (char *)buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                struct timespec ts = {0, FOLLOW_POLL_MS * 1000000L};
                nanosleep(&ts, NULL);
                continue;
            }
            fprintf(stderr, "vgt ingest: reading the source at offset %llu: %s\n",
                    (unsigned long long)s->offset + got, strerror(errno));
            return GOT_ERROR;
        }
        if (r == 0) {
            if (!s->follow) return got ? GOT_PARTIAL : GOT_EOF;
            if (flush_pending(s)) return GOT_ERROR;
            struct timespec ts = {0, FOLLOW_POLL_MS * 1000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        got += (size_t)r;
    }
    s->offset += n;
    return GOT_ALL;
}

static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

/* The stream header and its identity block; fills ident (strings owned by *blob). */
static int read_header(struct source *s, vgt_identity **ident, uint32_t *nident, char **blob)
{
    uint8_t h[VGT_FENC_HEADER_SIZE];
    int rc = read_exact(s, h, sizeof h);
    if (rc == GOT_STOP) return GOT_STOP;
    if (rc != GOT_ALL) {
        if (rc != GOT_ERROR) fprintf(stderr, "vgt ingest: the source ended inside the stream header (offset 0)\n");
        return GOT_ERROR;
    }
    if (memcmp(h, VGT_FENC_MAGIC, 8)) {
        fprintf(stderr, "vgt ingest: offset 0: not a record stream (magic is not \"VGTSTRM\")\n");
        return GOT_ERROR;
    }
    uint32_t major = h[8] | h[9] << 8, len = get32(h + 20);
    if (major != VGT_FENC_STREAM_MAJOR) {
        fprintf(stderr, "vgt ingest: offset 8: stream version %u.%u is not supported (this ingest reads %u.x)\n",
                major, h[10] | h[11] << 8, VGT_FENC_STREAM_MAJOR);
        return GOT_ERROR;
    }
    if (get32(h + 12)) {
        fprintf(stderr, "vgt ingest: offset 12: unknown stream flags 0x%x\n", get32(h + 12));
        return GOT_ERROR;
    }
    if (len % 8 || len > VGT_FENC_MAX_IDENTITY) {
        fprintf(stderr, "vgt ingest: offset 20: identity length %u is not a multiple of 8 up to %u\n", len,
                VGT_FENC_MAX_IDENTITY);
        return GOT_ERROR;
    }
    uint8_t *id = malloc(len ? len : 1);
    /* each entry takes at least 8 bytes; strings get a NUL each, so 2 bytes per entry besides the text */
    *blob = malloc(len + 2 * (len / 8) + 1);
    *ident = calloc(len / 8 + 1, sizeof **ident);
    if (!id || !*blob || !*ident) {
        free(id);
        fprintf(stderr, "vgt ingest: out of memory for the identity block\n");
        return GOT_ERROR;
    }
    rc = read_exact(s, id, len);
    if (rc != GOT_ALL) {
        free(id);
        if (rc == GOT_STOP) return GOT_STOP;
        if (rc != GOT_ERROR) fprintf(stderr, "vgt ingest: the source ended inside the identity block\n");
        return GOT_ERROR;
    }
    uint32_t pos = 0, n = 0;
    char *out = *blob;
    while (pos < len) {
        uint32_t k = pos + 8 <= len ? get32(id + pos) : 0, v = pos + 8 <= len ? get32(id + pos + 4) : 0;
        if (pos + 8 > len || k == 0 || k > VGT_MAX_IDENTITY_KEY || v > VGT_MAX_IDENTITY_VALUE ||
            (uint64_t)k + v > len - pos - 8) {
            fprintf(stderr, "vgt ingest: offset %u: identity entry %u does not fit the identity block\n",
                    VGT_FENC_HEADER_SIZE + pos, n);
            free(id);
            return GOT_ERROR;
        }
        (*ident)[n].key = out;
        memcpy(out, id + pos + 8, k), out += k, *out++ = 0;
        (*ident)[n].value = out;
        memcpy(out, id + pos + 8 + k, v), out += v, *out++ = 0;
        n++;
        pos += (8 + k + v + 7) & ~7u;
    }
    free(id);
    *nident = n;
    return GOT_ALL;
}

/* Checks a payload's structure only: vgt_record_fields does the checking. */
static int walk_nothing(void *ctx, const vgt_field *f) { (void)ctx, (void)f; return 0; }

static int ingest(struct source *s, const char *out, int level)
{
    vgt_identity *ident = NULL;
    char *blob = NULL;
    uint32_t nident = 0;
    int rc = read_header(s, &ident, &nident, &blob);
    if (rc != GOT_ALL) {
        free(ident), free(blob);
        if (rc == GOT_STOP) fprintf(stderr, "vgt ingest: stopped before the stream header; nothing written\n");
        return VGT_EXIT_USAGE;
    }
    /* The stream's identity, with crash_safe set: every submission of this trace was flushed. */
    vgt_identity *all = calloc(nident + 2, sizeof *all);
    if (!all) return free(ident), free(blob), vgt_cli_error(VERB, VGT_EXIT_USAGE, "out of memory");
    uint32_t na = 0;
    int has_producer = 0;
    for (uint32_t i = 0; i < nident; i++) {
        if (!strcmp(ident[i].key, "crash_safe")) continue;
        has_producer |= !strcmp(ident[i].key, "producer");
        all[na++] = ident[i];
    }
    if (!has_producer) all[na++] = (vgt_identity){"producer", "vgt ingest"};
    all[na++] = (vgt_identity){"crash_safe", "1"};

    vgt_writer_options o = vgt_writer_defaults();
    o.crash_safe = 1;
    o.zstd_level = level;
    vgt_error err;
    rc = vgt_writer_open_path(&s->w, out, &o, all, na, &err);
    free(all), free(ident), free(blob);
    if (rc != VGT_OK) return vgt_cli_report(VERB, &err);

    int exit_code = VGT_EXIT_OK;
    uint8_t *payload = NULL;
    size_t cap = 0;
    uint64_t seq = 0;
    for (;;) {
        uint8_t h[VGT_RECORD_HEADER_SIZE];
        uint64_t at = s->offset;
        rc = read_exact(s, h, sizeof h);
        if (rc == GOT_STOP) break;
        if (rc == GOT_ERROR) { exit_code = VGT_EXIT_USAGE; break; }
        if (rc == GOT_EOF) {
            fprintf(stderr, "vgt ingest: the stream ended at offset %llu without an END mark (%llu records kept)\n",
                    (unsigned long long)at, (unsigned long long)seq);
            exit_code = VGT_EXIT_PROBLEM;
            break;
        }
        if (rc == GOT_PARTIAL) goto partial;
        uint16_t type = (uint16_t)(h[0] | h[1] << 8), flags = (uint16_t)(h[2] | h[3] << 8);
        uint32_t len = get32(h + 4);
        uint64_t rseq = get64(h + 8), ts = get64(h + 16);
        if (rseq != seq) {
            fprintf(stderr, "vgt ingest: offset %llu: record sequence number %llu, expected %llu\n",
                    (unsigned long long)at, (unsigned long long)rseq, (unsigned long long)seq);
            exit_code = VGT_EXIT_PROBLEM;
            break;
        }
        if (type == VGT_FENC_END_TYPE) {
            if (len) {
                fprintf(stderr, "vgt ingest: offset %llu: END mark with a payload of %u bytes\n",
                        (unsigned long long)at, len);
                exit_code = VGT_EXIT_PROBLEM;
            }
            break;
        }
        if (type == 0 || len > VGT_MAX_RECORD_PAYLOAD) {
            fprintf(stderr, "vgt ingest: offset %llu: record seq %llu: %s\n", (unsigned long long)at,
                    (unsigned long long)seq, type == 0 ? "record type 0 is invalid" : "payload over the 64 MiB limit");
            exit_code = VGT_EXIT_PROBLEM;
            break;
        }
        size_t padded = (len + 7u) & ~(size_t)7u;
        if (padded > cap) {
            uint8_t *np = realloc(payload, padded);
            if (!np) { exit_code = vgt_cli_error(VERB, VGT_EXIT_USAGE, "out of memory for a record of %u bytes", len); break; }
            payload = np, cap = padded;
        }
        rc = read_exact(s, payload, padded);
        if (rc == GOT_STOP) break;
        if (rc == GOT_ERROR) { exit_code = VGT_EXIT_USAGE; break; }
        if (rc != GOT_ALL) goto partial;
        vgt_record rec = {type, flags, len, seq, ts, payload, 0, 0};
        if (type < VGT_REC_EXPERIMENTAL_FIRST && vgt_rec_type_fixed_size(type) &&
            vgt_record_fields(&rec, walk_nothing, NULL, &err) != VGT_OK) {
            fprintf(stderr, "vgt ingest: offset %llu: %s\n", (unsigned long long)at, err.msg);
            exit_code = VGT_EXIT_PROBLEM;
            break;
        }
        if (vgt_write_record(s->w, type, flags, ts, payload, len, NULL, &err) != VGT_OK) {
            exit_code = vgt_cli_report(VERB, &err);
            break;
        }
        s->pending = 1;
        seq++;
        continue;
    partial:
        fprintf(stderr, "vgt ingest: the stream ended inside record seq %llu (offset %llu); %llu records kept\n",
                (unsigned long long)seq, (unsigned long long)at, (unsigned long long)seq);
        exit_code = VGT_EXIT_PROBLEM;
        break;
    }
    free(payload);
    if (vgt_writer_close(s->w, &err) != VGT_OK) return vgt_cli_report(VERB, &err);
    return exit_code;
}

int cmd_ingest(int argc, char **argv)
{
    ingest_opts o = {.level = 3};
    vgt_cli_args a;
    int prc = vgt_cli_parse(&cmd_ingest_spec, argc, argv, &o, &a);
    if (prc >= 0) return prc;
    const char *src = a.pos[0], *out = o.out;
    int follow = o.follow;
    uint64_t level = o.level;
    if (strcmp(src, "-") && vgt_cli_same_file(src, out))
        return vgt_cli_error(VERB, VGT_EXIT_USAGE, "SOURCE and OUT are the same file");

    struct source s = {0};
    s.fd = strcmp(src, "-") ? vgt_io()->open(src, O_RDONLY | O_CLOEXEC, 0) : 0;
    if (s.fd < 0) return vgt_cli_error(VERB, VGT_EXIT_USAGE, "%s: %s", src, strerror(errno));
    struct stat st;
    if (fstat(s.fd, &st) == 0 && S_ISDIR(st.st_mode))
        return vgt_cli_error(VERB, VGT_EXIT_USAGE, "%s: is a directory", src);
    if (follow && !(fstat(s.fd, &st) == 0 && S_ISREG(st.st_mode)))
        follow = 0;   /* a pipe or device already blocks for more; its end is the stream's end */
    s.follow = follow;

    /* SIGINT/SIGTERM end the ingest cleanly (index written); no SA_RESTART so a blocked read returns. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int rc = ingest(&s, out, (int)level);
    if (s.fd > 0) vgt_io()->close(s.fd);
    return rc;
}
