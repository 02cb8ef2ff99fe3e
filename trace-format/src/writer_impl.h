/* writer_impl.h (private): the writer's state, shared by writer.c (API, record appends), writer_chunk.c
 * (compressing and emitting one chunk) and writer_pool.c (compression threads). */
#ifndef VGT_WRITER_IMPL_H
#define VGT_WRITER_IMPL_H

#include <pthread.h>
#include <stddef.h>
#include <zstd.h>

#include "format.h"
#include "memcas.h"
#include "vgt/outfile.h"

/* One chunk: its records buffer and counters while it fills, then its compressed form. The buffers
 * travel with the job (they are swapped, never copied, when the chunk is handed to a worker). */
typedef struct chunk_job {
    uint8_t *buf;
    uint32_t len, cap;
    uint32_t count, submits;
    uint64_t first_seq, first_ts, last_ts;
    uint8_t *cbuf;
    size_t ccap;
    chunk_header h;            /* filled by chunk_compress */
    const uint8_t *payload;    /* buf (stored) or cbuf (zstd) */
    vgt_error err;             /* chunk_compress's failure, if any */
} chunk_job;

typedef struct writer_pool writer_pool;

struct vgt_writer {
    pthread_mutex_t lock;      /* serializes appends, flush, close */
    int fd, own_fd, is_file;
    vgt_writer_options opt;
    chunk_job cur;             /* the chunk being filled */
    uint64_t next_seq;
    ZSTD_CCtx *cctx;           /* synchronous compression (no pool) */
    writer_pool *pool;         /* compression threads, when opt.zstd_threads > 0 */
    /* Touched only by whoever emits chunks (the appender, or the pool's single emitting thread). */
    uint64_t file_off;
    uint64_t total_submits;
    vgt_chunk_info *index;
    uint32_t nindex, index_cap;
    uint8_t *emit;             /* a small chunk's header and payload in one piece: one write, one wake-up */
    uint32_t emit_cap;
    vgt_error failure;         /* code != VGT_OK once a write failed: sticky (appender side only) */
    vgt_outfile *out;          /* vgt_writer_open_path: the output (temporary + rename), or NULL */
    memcas_encoder *cas;       /* opt.memory_cas: MEMORY records through the content-addressed encoder */
    uint8_t *flat;             /* a MEMORY record's parts in one piece, for the encoder */
    uint32_t flat_cap;
};

/* writer_chunk.c */
ZSTD_CCtx *chunk_cctx_new(const vgt_writer_options *o);
/* Compresses j->buf (zstd when it makes it smaller, else stored) and checksums it. */
void chunk_compress(const vgt_writer_options *o, ZSTD_CCtx *cctx, chunk_job *j);
/* Writes j's header and payload at w->file_off and indexes it; on failure cuts the file back to the
 * chunk's start and returns the error with what is intact (the caller makes it sticky). Chunks are
 * emitted in sequence order, by one thread at a time. */
vgt_status chunk_emit(vgt_writer *w, chunk_job *j, vgt_error *err);
void chunk_job_free(chunk_job *j);
/* Adds v to a vgt_writer_stats field (atomically: the pool's threads add at once). */
void writer_stat_add(uint64_t *field, uint64_t v);

/* writer_pool.c */
vgt_status pool_start(vgt_writer *w, vgt_error *err);
/* Hands w->cur to the workers and gives w->cur an empty job (may wait for a free slot). */
vgt_status pool_submit(vgt_writer *w, vgt_error *err);
/* Waits until every handed chunk is written; returns the first write failure. */
vgt_status pool_drain(vgt_writer *w, vgt_error *err);
void pool_stop(vgt_writer *w);

/* After a failed write: what the error means for the output, appended to its message: the chunks before
 * it (records of them) are intact, or, for an output that replaces its target only when complete, the
 * target is left as it was. */
void writer_say_what_stays(const vgt_writer *w, uint64_t records, vgt_error *err);

#endif
