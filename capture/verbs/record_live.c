/* record_live.c: see record_live.h. */
#include "record_live.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int live_replay_spawn(const char *backend, int check, const char *latency, pid_t *pid)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    int p[2];
    if (pipe(p) != 0) return -1;
    fcntl(p[1], F_SETFD, FD_CLOEXEC);   /* CMD never holds the replay's input open */
    fflush(NULL);
    pid_t c = fork();
    if (c < 0) {
        close(p[0]), close(p[1]);
        return -1;
    }
    if (c == 0) {
        dup2(p[0], 0);
        close(p[0]);
        dup2(2, 1);   /* the replay's report goes to stderr: stdout is CMD's */
        char *argv[16];
        int k = 0;
        argv[k++] = "vgt", argv[k++] = "replay", argv[k++] = "-", argv[k++] = "--live", argv[k++] = "--quiet";
        if (backend) argv[k++] = "--backend", argv[k++] = (char *)backend;
        if (check) argv[k++] = "--check";
        if (latency) argv[k++] = "--latency", argv[k++] = (char *)latency;
        argv[k] = NULL;
        execv(exe, argv);
        fprintf(stderr, "vgt record: cannot run the replay (%s): %s\n", exe, strerror(errno));
        _exit(2);
    }
    close(p[0]);
    *pid = c;
    return p[1];
}

static int open_tmp(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);   /* nameless: nothing left behind */
    if (fd >= 0) return fd;
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/vgt-spill-XXXXXX", dir);
    fd = mkostemp(tmpl, O_CLOEXEC);
    if (fd >= 0) unlink(tmpl);
    return fd;
}

vgt_status live_spill_open(live_spill *s, vgt_writer *out, const vgt_writer_options *wo, const vgt_identity *ident,
                           uint32_t nident, vgt_writer **spill, vgt_error *err)
{
    memset(s, 0, sizeof *s);
    s->out = out;
    vgt_error_clear(&s->err);
    if ((s->fd = open_tmp()) < 0)
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "--live-policy spill: cannot create a spill file: %s", strerror(errno));
    vgt_writer_options o = *wo;
    o.codec = VGT_CODEC_STORED;   /* read back at once: compressing it twice would only cost time */
    o.live = 1;
    o.crash_safe = 0;
    VGT_TRY(vgt_writer_open_fd(&s->spill, s->fd, 0, &o, ident, nident, err));
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->more, NULL);
    *spill = s->spill;
    return VGT_OK;
}

void live_spill_flushed(live_spill *s)
{
    pthread_mutex_lock(&s->lock);
    s->flushes++;
    pthread_cond_signal(&s->more);
    pthread_mutex_unlock(&s->lock);
}

/* Waits until the spill writer flushed again since `seen` (or 20 ms: a chunk it handed on without a
 * flush, when full, is read then). */
static void wait_more(live_spill *s, uint64_t *seen)
{
    pthread_mutex_lock(&s->lock);
    if (s->flushes == *seen) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 20000000L;
        if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&s->more, &s->lock, &t);
    }
    *seen = s->flushes;
    pthread_mutex_unlock(&s->lock);
}

static void *forward(void *arg)
{
    live_spill *s = arg;
    vgt_reader *r = NULL;
    vgt_reader_options ro = {.streaming = 1, .verify_checksums = 1};
    vgt_error e;
    uint64_t seen = 0;
    vgt_status rc = vgt_reader_open_fd(&r, s->fd, 0, &ro, &e);
    while (rc == VGT_OK) {
        vgt_record rec;
        rc = vgt_reader_next(r, &rec, &e);
        if (rc == VGT_E_EOF && !vgt_reader_at_end(r)) {   /* caught up: wait for the relay */
            wait_more(s, &seen);
            rc = VGT_OK;
            continue;
        }
        if (rc != VGT_OK) break;
        struct stat st;
        if (fstat(s->fd, &st) == 0 && (uint64_t)st.st_size > vgt_reader_valid_end(r) &&
            (uint64_t)st.st_size - vgt_reader_valid_end(r) > s->peak_bytes)
            s->peak_bytes = (uint64_t)st.st_size - vgt_reader_valid_end(r);
        rc = vgt_write_record(s->out, rec.type, rec.flags, rec.ts, rec.payload, rec.length, NULL, &e);
        s->forwarded++;
    }
    if (rc == VGT_E_EOF && vgt_reader_at_end(r)) rc = VGT_OK;
    if (rc != VGT_OK) s->err = e;
    vgt_reader_close(r);
    return NULL;
}

vgt_status live_spill_start(live_spill *s, vgt_error *err)
{
    if (pthread_create(&s->thread, NULL, forward, s) != 0)
        return VGT_FAIL(err, VGT_E_IO, VGT_NO_OFFSET, "--live-policy spill: cannot start the forwarding thread");
    s->started = 1;
    return VGT_OK;
}

vgt_status live_spill_finish(live_spill *s, vgt_error *err)
{
    if (s->started) {
        live_spill_flushed(s);   /* the trailer was written: the forwarder reads it now */
        pthread_join(s->thread, NULL);
    }
    vgt_status rc = s->err.code;
    if (rc != VGT_OK && err) *err = s->err;
    char text[320];
    snprintf(text, sizeof text, "live policy spill: the consumer fell behind by up to %llu bytes of the trace, "
             "kept in a spill file on disk until it took them; no record was lost",
             (unsigned long long)s->peak_bytes);
    vgt_rec_diagnostic d = {.severity = 0, .code = 0, .length = (uint32_t)strlen(text), .text = text};
    vgt_error e;
    if (rc == VGT_OK && vgt_write_diagnostic(s->out, vgt_now_ns(), &d, &e) != VGT_OK && err) *err = e, rc = e.code;
    vgt_status crc = vgt_writer_close(s->out, &e);
    if (rc == VGT_OK && crc != VGT_OK) {
        if (err) *err = e;
        rc = crc;
    }
    close(s->fd);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->more);
    return rc;
}
