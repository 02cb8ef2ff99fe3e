/* reader_ahead.c: loading the next chunks of a sequential read on worker threads (read, payload
 * checksum, zstd, records checksum, record walk), so that decompression runs beside the caller's work.
 *
 * Only for seekable files with a chunk list from their index, and only once the caller has read a chunk and
 * asks for the next in order (a reader opened to look at one record never starts threads). The workers also
 * run each record's field check (chunk_fields_ok), so that a walk need not. Chunk i is loaded into slot i %
 * nslots; a worker may take chunk i only while i < cur + nslots, where cur is the chunk the caller has been
 * handed last (whose slot it still reads). nslots is the workers plus two (one chunk held by the caller, one
 * ready beside each worker's): each slot's buffers are a chunk's worth of memory touched for the first time,
 * so slots no worker can fill cost page faults and gain nothing. The caller's view of the records is exactly
 * the sequential reader's: the same checks run on each chunk, each error is reported when the read reaches
 * that chunk, and the checks that depend on the read's order (sequence, chunks seen) stay in
 * reader_load_chunk. A seek to any chunk restarts the pipeline there. */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "reader_impl.h"

#define MAX_WORKERS 8
#define SLOTS (MAX_WORKERS + 2)

typedef struct slot {
    int64_t chunk;           /* chunk index loaded or being loaded; -1 none */
    int state;               /* 0 free, 1 loading, 2 ready */
    chunk_header h;
    int header_ok;
    chunk_bufs bufs;
    const uint8_t *view;
    int fields_ok;           /* chunk_fields_ok of its records */
    vgt_status rc;
    vgt_error err;
} slot;

struct reader_ahead {
    const vgt_reader *r;     /* fd, file size, options, chunk list: read-only while workers run */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    int64_t cur;             /* the chunk the caller holds (its slot is not reused) */
    int64_t next_claim;      /* the next chunk a worker takes */
    int stop, busy;
    int check_fields;        /* run chunk_fields_ok (not for MEMORY_CAS traces: their records change on the way) */
    uint32_t nworkers;
    int64_t nslots;          /* slots in use: nworkers + 2 */
    pthread_t th[MAX_WORKERS];
    slot slots[SLOTS];
};

static void *worker(void *arg)
{
    reader_ahead *a = arg;
    ZSTD_DCtx *dctx = NULL;   /* created by the first compressed chunk */
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && (a->next_claim >= (int64_t)a->r->nchunks || a->next_claim >= a->cur + a->nslots))
            pthread_cond_wait(&a->work, &a->mu);
        if (a->stop) break;
        int64_t i = a->next_claim++;
        slot *s = &a->slots[i % a->nslots];
        s->chunk = i;
        s->state = 1;
        a->busy++;
        pthread_mutex_unlock(&a->mu);
        uint64_t off = a->r->chunks[i].offset;
        s->header_ok = 0;
        s->rc = chunk_load_at(a->r->fd, a->r->info.file_size, off, a->r->opt.verify_checksums, &dctx, &s->bufs, &s->h,
                              &s->header_ok, &s->view, &s->err);
        s->fields_ok = s->rc == VGT_OK && a->check_fields && chunk_fields_ok(s->view, &s->h);
        pthread_mutex_lock(&a->mu);
        s->state = 2;
        a->busy--;
        pthread_cond_broadcast(&a->done);
    }
    pthread_mutex_unlock(&a->mu);
    ZSTD_freeDCtx(dctx);
    return NULL;
}

/* Workers left on auto: the other cores this process may run on (the caller keeps one; `taskset` limits
 * them), at most AUTO_WORKERS. Two keep the decoding thread fed: on the H200's 16 idle cores (2026-12-02,
 * census of 0.46 GiB, docs/performance.md) 1, 2, 4 and 8 workers took 0.27, 0.17, 0.24 and 0.25 s; more
 * than two only contend for the same chunks (and touch more buffers). A caller may still ask for up to
 * MAX_WORKERS. */
#define AUTO_WORKERS 2
static uint32_t auto_workers(void)
{
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2) return 1;
    return n - 1 > AUTO_WORKERS ? AUTO_WORKERS : (uint32_t)(n - 1);
}

/* VGT_READ_AHEAD=N in the environment stands for an option left at 0 (auto): N workers, -1 none. Lets
 * any verb's scaling with cores be measured without a flag on each. */
static int env_read_ahead(void)
{
    const char *e = getenv("VGT_READ_AHEAD");
    if (!e || !*e) return 0;
    long v = strtol(e, NULL, 10);
    return v < 0 ? -1 : v > MAX_WORKERS ? MAX_WORKERS : (int)v;
}

reader_ahead *reader_ahead_start(const vgt_reader *r, uint32_t first)
{
    int want = r->opt.read_ahead ? r->opt.read_ahead : env_read_ahead();
    if (want < 0 || !r->seekable || !r->have_chunks || r->nchunks < first + 2) return NULL;
    reader_ahead *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->r = r;
    a->check_fields = !(r->info.header_flags & VGT_HEADER_FLAG_MEMORY_CAS);
    a->cur = (int64_t)first - 1;
    a->next_claim = first;
    for (int i = 0; i < SLOTS; i++) a->slots[i].chunk = -1;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->work, NULL);
    pthread_cond_init(&a->done, NULL);
    uint32_t n = want > 0 ? (uint32_t)want : auto_workers();
    if (n > MAX_WORKERS) n = MAX_WORKERS;
    a->nslots = (int64_t)n + 2;   /* workers that fail to start leave slots unused: harmless */
    for (uint32_t i = 0; i < n; i++)
        if (pthread_create(&a->th[a->nworkers], NULL, worker, a) == 0) a->nworkers++;
    if (!a->nworkers) {
        reader_ahead_stop(a);
        return NULL;
    }
    return a;
}

void reader_ahead_stop(reader_ahead *a)
{
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->work);
    pthread_mutex_unlock(&a->mu);
    for (uint32_t i = 0; i < a->nworkers; i++) pthread_join(a->th[i], NULL);
    for (int i = 0; i < SLOTS; i++) chunk_bufs_free(&a->slots[i].bufs);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->work);
    pthread_cond_destroy(&a->done);
    free(a);
}

int64_t reader_ahead_next(const reader_ahead *a) { return a->cur + 1; }

chunk_buf reader_ahead_detach(reader_ahead *a, const uint8_t *view, chunk_buf repl)
{
    pthread_mutex_lock(&a->mu);   /* no worker writes the current slot (it takes chunks after cur only) */
    chunk_buf out = chunk_bufs_swap(&a->slots[a->cur % a->nslots].bufs, view, repl);
    pthread_mutex_unlock(&a->mu);
    return out;
}

vgt_status reader_ahead_take(reader_ahead *a, chunk_header *h, int *header_ok, const uint8_t **view, int *fields_ok,
                             vgt_error *err)
{
    pthread_mutex_lock(&a->mu);
    int64_t i = a->cur + 1;
    slot *s = &a->slots[i % a->nslots];
    while (!(s->chunk == i && s->state == 2)) pthread_cond_wait(&a->done, &a->mu);
    a->cur = i;                      /* the previous chunk's slot is free again */
    pthread_cond_broadcast(&a->work);
    pthread_mutex_unlock(&a->mu);
    *header_ok = s->header_ok;
    *h = s->h;
    if (s->rc != VGT_OK) {
        if (err) *err = s->err;
        return s->rc;
    }
    *view = s->view;
    *fields_ok = s->fields_ok;
    return VGT_OK;
}
