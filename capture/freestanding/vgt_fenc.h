/* vgt_fenc.h: the freestanding record encoder: what a device model or a kernel module links to record a
 * guest's GPU activity. No libc, no allocation, no locks, no floating point: every byte goes to a sink the
 * caller provides (a buffer, a ring shared with user space, a file write), one whole record at a time.
 *
 * It writes the UNCOMPRESSED record stream of docs/trace-format.md section 10: a stream header (with the
 * identity block), then records encoded exactly as inside a chunk (24-byte header, payload, padding to 8),
 * with contiguous sequence numbers from 0, then an END mark. `vgt ingest` packs such a stream into an
 * indexed, compressed .vgt trace.
 *
 *     static uint8_t buf[1 << 20];
 *     vgt_fenc_buffer b; vgt_fenc e;
 *     vgt_fenc_buffer_init(&b, buf, sizeof buf);
 *     vgt_fenc_init(&e, vgt_fenc_buffer_sink, &b);
 *     vgt_fenc_begin(&e, ident, nident);               // stream header
 *     vgt_fenc_channel(&e, ts, &ch);                    // CHANNEL
 *     vgt_fenc_submit(&e, ts, &sub, entries, segs);     // GPFIFO_SUBMIT
 *     ... hand buf[0..b.used) to user space, then vgt_fenc_buffer_reset(&b) ...
 *     vgt_fenc_end(&e, ts);                             // END mark
 *
 * Threads: one encoder per producer, or the caller serializes (a spinlock in a kernel module). A record is
 * either taken whole by the sink or not at all: when the sink refuses (full), the call returns
 * VGT_FENC_FULL, nothing of the record was written, its sequence number is not used, and records_lost
 * counts it. Timestamps are the guest's, as the caller gives them.
 *
 * Builds with -ffreestanding -nostdlib -fno-builtin (checked by the build); inside a Linux kernel module
 * (__KERNEL__) it takes its integer types from <linux/types.h>. */
#ifndef VGT_FENC_H
#define VGT_FENC_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- stream framing (docs/trace-format.md section 10) ---- */
#define VGT_FENC_MAGIC "VGTSTRM"       /* 8 bytes with its NUL */
#define VGT_FENC_STREAM_MAJOR 1u
#define VGT_FENC_STREAM_MINOR 0u
#define VGT_FENC_HEADER_SIZE 32u
#define VGT_FENC_RECORD_HEADER 24u
#define VGT_FENC_END_TYPE 0xFFFFu      /* the END mark: a record header of this type with no payload */
#define VGT_FENC_MAX_PAYLOAD ((64u << 20) - 24u)
#define VGT_FENC_MAX_IDENTITY (1u << 20)

enum vgt_fenc_status {
    VGT_FENC_OK = 0,
    VGT_FENC_FULL = 1,        /* the sink refused the record (nothing written, counted in records_lost) */
    VGT_FENC_ARG = 2,         /* a length over a limit, a blob with a length and no bytes, a call out of order */
};

/* Record types this encoder writes (the numbers of docs/trace-format.md section 5). */
enum {
    VGT_FENC_REC_RM_ALLOC = 0x0010, VGT_FENC_REC_RM_FREE = 0x0011, VGT_FENC_REC_GPU_MAP = 0x0014,
    VGT_FENC_REC_GPU_UNMAP = 0x0015, VGT_FENC_REC_MEMORY = 0x0020, VGT_FENC_REC_CHANNEL = 0x0021,
    VGT_FENC_REC_ENGINE_OBJECT = 0x0022, VGT_FENC_REC_GPFIFO_SUBMIT = 0x0023,
    VGT_FENC_REC_WORK_SUBMIT_TOKEN = 0x0024, VGT_FENC_REC_DOORBELL = 0x0025, VGT_FENC_REC_SEMAPHORE = 0x0026,
    VGT_FENC_REC_MARKER = 0x0040, VGT_FENC_REC_DIAGNOSTIC = 0x0041,
};

/* One piece of a record, in order. */
typedef struct vgt_fenc_part {
    const void *p;
    uint32_t n;
} vgt_fenc_part;

/* The sink: called one or more times per record with consecutive pieces; offset is where the pieces start
 * within the record and total the record's whole size (header, payload and padding). At offset 0 the sink
 * may refuse the whole record by returning non-zero (then no further call comes for it); once it has
 * accepted offset 0 it must take the rest. */
typedef int (*vgt_fenc_sink_fn)(void *ctx, const vgt_fenc_part *parts, uint32_t nparts, uint32_t offset,
                                uint32_t total);

typedef struct vgt_fenc {
    vgt_fenc_sink_fn sink;
    void *ctx;
    uint64_t next_seq;        /* sequence number of the next record */
    uint64_t records_lost;    /* records the sink refused */
    uint32_t state;           /* 0 new, 1 begun, 2 ended */
} vgt_fenc;

/* A ready-made sink: appends whole records to a caller's buffer. */
typedef struct vgt_fenc_buffer {
    uint8_t *buf;
    uint32_t cap;
    uint32_t used;
} vgt_fenc_buffer;
void vgt_fenc_buffer_init(vgt_fenc_buffer *b, void *buf, uint32_t cap);
void vgt_fenc_buffer_reset(vgt_fenc_buffer *b);   /* after the caller has consumed buf[0..used) */
int vgt_fenc_buffer_sink(void *ctx, const vgt_fenc_part *parts, uint32_t nparts, uint32_t offset, uint32_t total);

/* Identity entries of the stream header (docs/trace-format.md section 2): NUL-terminated UTF-8. */
typedef struct vgt_fenc_identity {
    const char *key;
    const char *value;
} vgt_fenc_identity;

void vgt_fenc_init(vgt_fenc *e, vgt_fenc_sink_fn sink, void *ctx);
/* The stream header with its identity block (one sink call); must come first. */
int vgt_fenc_begin(vgt_fenc *e, const vgt_fenc_identity *ident, uint32_t nident);
/* The END mark: the stream is complete (ingest stops and closes the trace). No record may follow. */
int vgt_fenc_end(vgt_fenc *e, uint64_t ts);

/* ---- records. Field names and meanings are those of docs/trace-format.md section 5. ---- */
typedef struct vgt_frec_object {          /* RM_ALLOC: an object the guest allocated */
    uint32_t client, parent, handle, cls, status;
    uint32_t params_length;               /* params_in and params_out have this length each */
    const void *params_in, *params_out;
} vgt_frec_object;
typedef struct vgt_frec_free { uint32_t client, parent, handle, status; } vgt_frec_free;
typedef struct vgt_frec_map {             /* GPU_MAP */
    uint32_t client, device, va_space, memory;
    uint64_t gpu_va, offset, length;
    uint32_t flags, source, status;       /* source 3: an embedding host (a device model) */
} vgt_frec_map;
typedef struct vgt_frec_unmap {
    uint32_t client, device, va_space, memory;
    uint64_t gpu_va, length;
    uint32_t source, status;
} vgt_frec_unmap;
typedef struct vgt_frec_channel {         /* CHANNEL */
    uint32_t client, parent, handle, cls;
    uint64_t ring_va;
    uint32_t entries, userd_memory;
    uint64_t userd_offset, userd_gpu_va;
    uint32_t engine_type, va_space, context_share, error_notifier, status;
} vgt_frec_channel;
typedef struct vgt_frec_engine_object { uint32_t client, channel, handle, cls, status; } vgt_frec_engine_object;
typedef struct vgt_frec_segment {         /* one push-buffer range referenced by the submission's entries */
    uint64_t gpu_va;
    uint32_t length;                      /* bytes */
    uint32_t flags;                       /* bit 0 subroutine level, bit 1 truncated */
    const void *data;
} vgt_frec_segment;
typedef struct vgt_frec_submit {          /* GPFIFO_SUBMIT */
    uint32_t client, channel, token, flags;
    uint32_t gp_get_before, gp_put_before, gp_get_after, gp_put_after;
    uint32_t entry_count, segment_count;
} vgt_frec_submit;

int vgt_fenc_object(vgt_fenc *e, uint64_t ts, const vgt_frec_object *o);
int vgt_fenc_free(vgt_fenc *e, uint64_t ts, const vgt_frec_free *f);
int vgt_fenc_map(vgt_fenc *e, uint64_t ts, const vgt_frec_map *m);
int vgt_fenc_unmap(vgt_fenc *e, uint64_t ts, const vgt_frec_unmap *m);
int vgt_fenc_channel(vgt_fenc *e, uint64_t ts, const vgt_frec_channel *c);
int vgt_fenc_engine_object(vgt_fenc *e, uint64_t ts, const vgt_frec_engine_object *o);
int vgt_fenc_work_submit_token(vgt_fenc *e, uint64_t ts, uint32_t client, uint32_t channel, uint32_t token);
/* entries: entry_count GPFIFO entries as u64 values (word 0 in bits 31:0), host order; they are written
 * little-endian. segs: segment_count segments. */
int vgt_fenc_submit(vgt_fenc *e, uint64_t ts, const vgt_frec_submit *s, const uint64_t *entries,
                    const vgt_frec_segment *segs);
/* MEMORY: guest memory contents at gpu_va (reason 0 initial, 1 changed, 2 observed). */
int vgt_fenc_memory(vgt_fenc *e, uint64_t ts, uint64_t gpu_va, const void *data, uint32_t length,
                    uint32_t reason, uint32_t memory, uint32_t flags);
int vgt_fenc_doorbell(vgt_fenc *e, uint64_t ts, uint32_t token, uint32_t channel, uint32_t offset, uint32_t flags);
/* A completion: a semaphore (or fence) value the device model saw written at gpu_va. */
int vgt_fenc_semaphore(vgt_fenc *e, uint64_t ts, uint64_t gpu_va, uint64_t value, uint32_t size, uint32_t flags);
int vgt_fenc_marker(vgt_fenc *e, uint64_t ts, const char *text, uint32_t length);
int vgt_fenc_diagnostic(vgt_fenc *e, uint64_t ts, uint32_t severity, uint32_t code, const char *text, uint32_t length);
/* Any record: payload given as pieces (the caller lays out the fixed part and blobs with their padding). */
int vgt_fenc_record(vgt_fenc *e, uint16_t type, uint64_t ts, const vgt_fenc_part *payload, uint32_t nparts);

#ifdef __cplusplus
}
#endif
#endif
