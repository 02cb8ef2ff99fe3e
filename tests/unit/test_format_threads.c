/* test_format_threads.c: the writer's "appends are thread-safe" (vgt/trace.h), checked: several threads
 * append at once, through small chunks, with and without compression threads, and with a flush thread
 * running meanwhile. The trace read back must hold every record exactly once, with contiguous sequence
 * numbers (the reader checks them), each thread's records in the order that thread wrote them, and the
 * sequence number the writer returned for each record equal to the one the record has in the file. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/trace.h"

#include "check.h"

#define NTHREADS 4
#define PER_THREAD 3000

typedef struct job {
    vgt_writer *w;
    uint32_t id;
    uint64_t *seq_of;     /* [PER_THREAD]: the seq the writer returned */
    int failures;
} job;

static _Atomic int stop_flushing;

static void *appender(void *arg)
{
    job *j = arg;
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        uint8_t payload[24] = {0};   /* thread id, index, and a length that varies with i */
        memcpy(payload, &j->id, 4);
        memcpy(payload + 4, &i, 4);
        vgt_error e;
        if (vgt_write_record(j->w, VGT_REC_MARKER + 0x100, 0, i, payload, 8 + i % 17, &j->seq_of[i], &e) != VGT_OK)
            j->failures++;
    }
    return NULL;
}

static void *flusher(void *arg)
{
    vgt_writer *w = arg;
    while (!stop_flushing) {
        vgt_writer_flush(w, 0, NULL);
        usleep(200);
    }
    return NULL;
}

static void run(const char *path, int codec, int zstd_threads)
{
    vgt_writer_options o = vgt_writer_defaults();
    o.codec = codec;
    o.zstd_threads = zstd_threads;
    o.chunk_target = 4096;
    vgt_writer *w;
    vgt_error e;
    if (vgt_writer_open_path(&w, path, &o, NULL, 0, &e) != VGT_OK) {
        CHECK(0, "open: %s", e.msg);
        return;
    }
    job jobs[NTHREADS];
    pthread_t t[NTHREADS], f;
    stop_flushing = 0;
    pthread_create(&f, NULL, flusher, w);
    for (uint32_t k = 0; k < NTHREADS; k++) {
        jobs[k] = (job){w, k, calloc(PER_THREAD, sizeof(uint64_t)), 0};
        pthread_create(&t[k], NULL, appender, &jobs[k]);
    }
    for (uint32_t k = 0; k < NTHREADS; k++) pthread_join(t[k], NULL);
    stop_flushing = 1;
    pthread_join(f, NULL);
    CHECK_STATUS(vgt_writer_close(w, &e), VGT_OK, &e, "close (codec %d, %d threads)", codec, zstd_threads);

    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        CHECK(0, "reopen: %s", e.msg);
        return;
    }
    uint32_t next[NTHREADS] = {0};
    uint64_t n = 0;
    vgt_record rec;
    vgt_status rc;
    while ((rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
        uint32_t id, i;
        memcpy(&id, rec.payload, 4);
        memcpy(&i, rec.payload + 4, 4);
        n++;
        if (id >= NTHREADS || i >= PER_THREAD || rec.length != 8 + i % 17) {
            CHECK(0, "record seq %llu: thread %u index %u length %u is not one that was written", (unsigned long long)rec.seq,
                  id, i, rec.length);
            continue;
        }
        CHECK_EQ_U64(i, next[id], "thread %u's records in its order (seq %llu)", id, (unsigned long long)rec.seq);
        CHECK_EQ_U64(jobs[id].seq_of[i], rec.seq, "seq returned to thread %u for its record %u", id, i);
        next[id] = i + 1;
    }
    CHECK_STATUS(rc, VGT_E_EOF, &e, "reading back (codec %d, %d threads)", codec, zstd_threads);
    int has_trailer = 0;
    CHECK_STATUS(vgt_reader_trailer_check(r, &has_trailer, &e), VGT_OK, &e, "trailer");
    CHECK_EQ_U64(n, (uint64_t)NTHREADS * PER_THREAD, "every record read back once (codec %d, %d threads)", codec,
                 zstd_threads);
    for (uint32_t k = 0; k < NTHREADS; k++) {
        CHECK(jobs[k].failures == 0, "thread %u: %d appends failed", k, jobs[k].failures);
        free(jobs[k].seq_of);
    }
    vgt_reader_close(r);
}

int main(void)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/vgt-test-threads-%d.vgt", (int)getpid());
    run(path, VGT_CODEC_STORED, 0);
    run(path, VGT_CODEC_ZSTD, 0);
    run(path, VGT_CODEC_ZSTD, 3);
    remove(path);
    return check_finish("test_format_threads");
}
