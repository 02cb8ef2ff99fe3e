/* writer_pool.c: compression threads for the writer (opt.zstd_threads > 0). Chunks compress in parallel,
 * several at a time, and are written to the fd strictly in sequence order by one thread at a time.
 *
 * Invariants:
 *  - A job's slot is (order % njobs); orders are handed out in sequence, so the slot of order k is free
 *    again only once order k - njobs was written. At most njobs chunks are in flight (bounded memory).
 *  - Only the thread that set `writing` emits a chunk (writes, index, file offset); the appender reads
 *    those fields only after pool_drain, which waits for `writing` to clear and every chunk to be written.
 *
 *   slot: FREE --pool_submit--> QUEUED --worker--> COMPRESSING --> DONE --head of order--> emitted, FREE
 */
#include <stdlib.h>
#include <string.h>

#include "writer_impl.h"

enum { FREE, QUEUED, COMPRESSING, DONE };

struct writer_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t *threads;
    int nthreads, started;
    chunk_job *jobs;
    uint8_t *state;
    uint32_t njobs;
    uint64_t next_submit, next_compress, next_write;
    int writing, stop;
    vgt_error failure;
    vgt_writer *w;
};

/* Emits every finished chunk at the head of the order. Called with mu held; drops it while writing. */
static void emit_ready(writer_pool *p)
{
    while (!p->writing && p->next_write < p->next_compress && p->state[p->next_write % p->njobs] == DONE) {
        chunk_job *j = &p->jobs[p->next_write % p->njobs];
        p->writing = 1;
        int failed = p->failure.code != VGT_OK;
        pthread_mutex_unlock(&p->mu);
        vgt_error e;
        vgt_status rc = failed ? VGT_OK : chunk_emit(p->w, j, &e);
        pthread_mutex_lock(&p->mu);
        if (rc != VGT_OK) p->failure = e;
        p->state[p->next_write % p->njobs] = FREE;
        p->next_write++;
        p->writing = 0;
        pthread_cond_broadcast(&p->done);
    }
}

static void *worker(void *arg)
{
    writer_pool *p = arg;
    ZSTD_CCtx *cctx = chunk_cctx_new(&p->w->opt);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next_compress == p->next_submit) pthread_cond_wait(&p->work, &p->mu);
        if (p->next_compress == p->next_submit) break;   /* stopping, nothing queued */
        uint32_t slot = (uint32_t)(p->next_compress++ % p->njobs);
        p->state[slot] = COMPRESSING;
        pthread_mutex_unlock(&p->mu);
        if (cctx) chunk_compress(&p->w->opt, cctx, &p->jobs[slot]);
        else VGT_FAIL(&p->jobs[slot].err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for a zstd context");
        pthread_mutex_lock(&p->mu);
        p->state[slot] = DONE;
        emit_ready(p);
    }
    pthread_mutex_unlock(&p->mu);
    ZSTD_freeCCtx(cctx);
    return NULL;
}

vgt_status pool_start(vgt_writer *w, vgt_error *err)
{
    writer_pool *p = calloc(1, sizeof *p);
    if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for compression threads");
    w->pool = p;
    p->w = w;
    p->nthreads = w->opt.zstd_threads;
    p->njobs = 2u * (uint32_t)p->nthreads;
    p->jobs = calloc(p->njobs, sizeof *p->jobs);
    p->state = calloc(p->njobs, 1);
    p->threads = calloc((size_t)p->nthreads, sizeof *p->threads);
    vgt_error_clear(&p->failure);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (!p->jobs || !p->state || !p->threads)
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for %d compression threads", p->nthreads);
    for (int i = 0; i < p->nthreads; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "cannot start compression thread %d of %d", i + 1,
                            p->nthreads);
        p->started++;
    }
    return VGT_OK;
}

vgt_status pool_submit(vgt_writer *w, vgt_error *err)
{
    writer_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    uint32_t slot = (uint32_t)(p->next_submit % p->njobs);
    while (p->state[slot] != FREE && p->failure.code == VGT_OK) pthread_cond_wait(&p->done, &p->mu);
    if (p->failure.code != VGT_OK) {
        *err = p->failure;
        pthread_mutex_unlock(&p->mu);
        return err->code;
    }
    chunk_job spare = p->jobs[slot];
    p->jobs[slot] = w->cur;
    w->cur = spare;
    w->cur.len = w->cur.count = w->cur.submits = 0;
    p->state[slot] = QUEUED;
    p->next_submit++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return VGT_OK;
}

vgt_status pool_drain(vgt_writer *w, vgt_error *err)
{
    writer_pool *p = w->pool;
    pthread_mutex_lock(&p->mu);
    while (p->next_write < p->next_submit || p->writing) pthread_cond_wait(&p->done, &p->mu);
    vgt_status rc = p->failure.code;
    if (rc != VGT_OK) *err = p->failure;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void pool_stop(vgt_writer *w)
{
    writer_pool *p = w->pool;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++) pthread_join(p->threads[i], NULL);
    for (uint32_t i = 0; p->jobs && i < p->njobs; i++) chunk_job_free(&p->jobs[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->jobs);
    free(p->state);
    free(p->threads);
    free(p);
    w->pool = NULL;
}
