/* trace.h: libvgt's public API for .vgt traces: record types and payloads, the writer, the reader.
 *
 * docs/trace-format.md is the normative description of the bytes; this header is how C code reads and
 * writes them. Sequence numbers are the time axis of everything (0-based, contiguous, global).
 *
 * Writing:
 *     vgt_writer *w; vgt_error err;
 *     vgt_writer_options o = vgt_writer_defaults();
 *     vgt_writer_open_path(&w, "out.vgt", &o, ident, nident, &err);
 *     vgt_rec_rm_alloc a = {...};
 *     vgt_write_rm_alloc(w, ts, &a, &err);          // typed encoders, one per record type
 *     vgt_writer_close(w, &err);                    // index + footer
 *
 * Reading:
 *     vgt_reader *r;  vgt_record rec;
 *     vgt_reader_open_path(&r, "in.vgt", NULL, &err);
 *     while ((rc = vgt_reader_next(r, &rec, &err)) == VGT_OK) { ... vgt_decode_rm_alloc(&rec, &a, &err) ... }
 *     // rc == VGT_E_EOF at the clean end
 *     vgt_reader_close(r);
 */
#ifndef VGT_TRACE_H
#define VGT_TRACE_H

#include <stdint.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- format constants (docs/trace-format.md) ---- */
#define VGT_FORMAT_MAJOR 1
#define VGT_FORMAT_MINOR 5   /* 1.1 adds CHANNEL_STATE, CHANNEL_METHODS; 1.2 the CUDA driver API records
                               * (0x0032-0x0037); 1.3 MEMORY_CAS; 1.4 CHANNEL_PROGRESS; 1.5 CUDA_IMAGE_REF;
                               * readers take every minor of major 1 */
#define VGT_HEADER_FLAG_MEMORY_CAS 1u      /* header flag bit 0 (1.3): the trace may hold MEMORY_CAS records */
#define VGT_MEMCAS_WINDOW (64ull << 20)     /* MEMORY_CAS: how far back in the memory stream a COPY may reach */
#define VGT_MEMCAS_BLOCK 4096u              /* MEMORY_CAS: the writer's unit of matching */
#define VGT_FILE_HEADER_FIXED 32u
#define VGT_CHUNK_HEADER_SIZE 72u
#define VGT_RECORD_HEADER_SIZE 24u
#define VGT_INDEX_ENTRY_SIZE 48u
#define VGT_FOOTER_SIZE 32u
#define VGT_MAX_HEADER_LENGTH (1u << 20)
#define VGT_MAX_IDENTITY_ENTRIES 4096u
#define VGT_MAX_IDENTITY_KEY 255u
#define VGT_MAX_IDENTITY_VALUE (64u << 10)
#define VGT_MAX_CHUNK_RECORDS_BYTES (64u << 20)
#define VGT_MAX_CHUNK_PAYLOAD (68u << 20)
#define VGT_MAX_RECORD_PAYLOAD ((64u << 20) - 24u)

enum vgt_codec { VGT_CODEC_STORED = 0, VGT_CODEC_ZSTD = 1 };

/* Record types (stable numbers). */
enum vgt_rec_type {
    VGT_REC_SESSION_START = 0x0001,
    VGT_REC_SESSION_END = 0x0002,
    VGT_REC_PROCESS_START = 0x0003,
    VGT_REC_PROCESS_END = 0x0004,
    VGT_REC_RM_ALLOC = 0x0010,
    VGT_REC_RM_FREE = 0x0011,
    VGT_REC_RM_CONTROL = 0x0012,
    VGT_REC_MEM_ALLOC = 0x0013,
    VGT_REC_GPU_MAP = 0x0014,
    VGT_REC_GPU_UNMAP = 0x0015,
    VGT_REC_CPU_MAP = 0x0016,
    VGT_REC_CPU_UNMAP = 0x0017,
    VGT_REC_IOCTL = 0x0018,
    VGT_REC_MEMORY = 0x0020,
    VGT_REC_CHANNEL = 0x0021,
    VGT_REC_ENGINE_OBJECT = 0x0022,
    VGT_REC_GPFIFO_SUBMIT = 0x0023,
    VGT_REC_WORK_SUBMIT_TOKEN = 0x0024,
    VGT_REC_DOORBELL = 0x0025,
    VGT_REC_SEMAPHORE = 0x0026,
    VGT_REC_CHANNEL_STATE = 0x0027,    /* format 1.1 */
    VGT_REC_CHANNEL_METHODS = 0x0028,  /* format 1.1 */
    VGT_REC_MEMORY_CAS = 0x0029,       /* format 1.3: MEMORY contents as copies of earlier memory, patches, literals */
    VGT_REC_CHANNEL_PROGRESS = 0x002A, /* format 1.4: a channel's GP_GET and GP_PUT read from its USERD, no doorbell */
    VGT_REC_CUDA_MODULE = 0x0030,
    VGT_REC_CUDA_LAUNCH = 0x0031,
    VGT_REC_CUDA_IMAGE = 0x0032,       /* format 1.2: a module image, stored once per content */
    VGT_REC_CUDA_LOAD = 0x0033,        /* format 1.2: a module or library load */
    VGT_REC_CUDA_FUNCTION = 0x0034,    /* format 1.2: a function or kernel lookup */
    VGT_REC_CUDA_KERNEL = 0x0035,      /* format 1.2: a kernel launch (or a graph's kernel node) */
    VGT_REC_CUDA_MEMORY = 0x0036,      /* format 1.2: an allocation, copy or memset */
    VGT_REC_CUDA_CALL = 0x0037,        /* format 1.2: streams, events, graphs, synchronization, unloads */
    VGT_REC_CUDA_IMAGE_REF = 0x0038,   /* format 1.5: a module image named by file, offset and hash, not stored */
    VGT_REC_MARKER = 0x0040,
    VGT_REC_DIAGNOSTIC = 0x0041,
    VGT_REC_EXPERIMENTAL_FIRST = 0xF000,
    VGT_REC_EXPERIMENTAL_LAST = 0xFFFE,
};

const char *vgt_rec_type_name(uint16_t type);          /* "GPFIFO_SUBMIT", or NULL if unknown */
int vgt_rec_type_from_name(const char *name);          /* accepts names, any case, or numbers; -1 if none */

enum vgt_aperture { VGT_APERTURE_UNKNOWN = 0, VGT_APERTURE_SYSMEM = 1, VGT_APERTURE_VIDMEM = 2, VGT_APERTURE_OS = 3 };
enum vgt_mem_reason { VGT_MEM_INITIAL = 0, VGT_MEM_CHANGED = 1, VGT_MEM_OBSERVED = 2 };
#define VGT_MEM_FLAG_DERIVED 1u   /* MEMORY flags bit 0 (1.1): written by the GPU, derived by the producer */
enum vgt_map_source { VGT_MAP_RM_DMA = 1, VGT_MAP_UVM_EXTERNAL = 2, VGT_MAP_EMBEDDED = 3, VGT_MAP_SYNTHETIC = 4 };
enum vgt_ioctl_node { VGT_NODE_CTL = 1, VGT_NODE_GPU = 2, VGT_NODE_UVM = 3, VGT_NODE_OTHER = 4 };
#define VGT_SUBMIT_FLAG_SEGMENT_TRUNCATED 1u
#define VGT_SEGMENT_FLAG_SUBROUTINE 1u
#define VGT_SEGMENT_FLAG_TRUNCATED 2u
#define VGT_GP_NOT_READ 0xFFFFFFFFu
#define VGT_CHANNEL_STATE_RUN_PENDING 1u   /* CHANNEL_STATE flags bit 0: a method run was cut off */
#define VGT_SUBCHANNELS 8u
#define VGT_CHANNEL_METHOD_SIZE 8u        /* CHANNEL_METHODS: bytes per write (u16 method, u16 subch, u32 value) */
#define VGT_MAX_METHOD_ADDRESS 0x3FFCu    /* a method header's ADDRESS 11:0 (dwords) as bytes */

/* A record as read: header fields and the payload bytes (valid until the next reader call, or until the
 * chunk holding it is released when it is held: vgt_reader_hold). */
typedef struct vgt_record {
    uint16_t type;
    uint16_t flags;
    uint32_t length;          /* payload bytes */
    uint64_t seq;
    uint64_t ts;
    const uint8_t *payload;
    uint64_t chunk_offset;    /* file (or stream) offset of the chunk header holding this record */
    int fields_checked;       /* set by the reader: vgt_record_fields already passed on this record (a
                               * read-ahead worker checked its whole chunk); 0: not known */
} vgt_record;

/* ---- typed payloads. Blob pointers point into the record (decode) or at the caller's bytes (encode). ---- */
typedef struct { uint64_t wall_ns; uint32_t pid, ppid; const uint8_t *cmdline; uint32_t cmdline_length; } vgt_rec_session_start;
typedef struct { uint64_t wall_ns; int32_t exit_status, signal; uint32_t records_lost; } vgt_rec_session_end;
typedef struct { uint32_t pid, ppid; const char *exe; uint32_t exe_length; } vgt_rec_process_start;
typedef struct { uint32_t pid; int32_t exit_status, signal; } vgt_rec_process_end;
typedef struct {
    uint32_t client, parent, handle, cls, status, params_length;
    const uint8_t *params_in, *params_out;
} vgt_rec_rm_alloc;
typedef struct { uint32_t client, parent, handle, status; } vgt_rec_rm_free;
typedef struct {
    uint32_t client, object, cmd, status, flags, params_length;
    const uint8_t *params_in, *params_out;
} vgt_rec_rm_control;
typedef struct {
    uint32_t client, parent, handle, cls;
    uint64_t size, cpu_address;
    uint32_t flags, attr, attr2, aperture, status;
} vgt_rec_mem_alloc;
typedef struct {
    uint32_t client, device, va_space, memory;
    uint64_t gpu_va, offset, length;
    uint32_t flags, source, status;
} vgt_rec_gpu_map;
typedef struct { uint32_t client, device, va_space, memory; uint64_t gpu_va, length; uint32_t source, status; } vgt_rec_gpu_unmap;
typedef struct { uint32_t client, device, memory, flags; uint64_t offset, length, cpu_address; uint32_t status; } vgt_rec_cpu_map;
typedef struct { uint32_t client, device, memory; uint64_t cpu_address, length; } vgt_rec_cpu_unmap;
typedef struct {
    uint32_t node, request;
    int32_t result;
    uint32_t params_length;
    const uint8_t *params_in, *params_out;
} vgt_rec_ioctl;
typedef struct { uint64_t gpu_va; uint32_t length, reason, memory, flags; const uint8_t *data; } vgt_rec_memory;
/* MEMORY_CAS (1.3), the fixed part (its ops, patches and literals follow; readers hand such records out as
 * the MEMORY records they stand for, so only format tools meet this). */
typedef struct {
    uint64_t gpu_va;
    uint32_t length, reason, memory, flags, op_count, patch_count, literal_length;
} vgt_rec_memory_cas;
typedef struct {
    uint32_t client, parent, handle, cls;
    uint64_t ring_va;
    uint32_t entries, userd_memory;
    uint64_t userd_offset, userd_gpu_va;
    uint32_t engine_type, va_space, context_share, error_notifier, status;
} vgt_rec_channel;
typedef struct { uint32_t client, channel, handle, cls, status; } vgt_rec_engine_object;
typedef struct vgt_segment {
    uint64_t gpu_va;
    uint32_t length;          /* bytes */
    uint32_t flags;           /* VGT_SEGMENT_FLAG_* */
    const uint8_t *data;
} vgt_segment;
typedef struct {
    uint32_t client, channel, token, flags;
    uint32_t gp_get_before, gp_put_before, gp_get_after, gp_put_after;
    uint32_t entry_count, segment_count;
    const uint8_t *entries;   /* entry_count x 8 bytes, little-endian u64; use vgt_submit_entry() */
    const vgt_segment *segments; /* encode: caller's array; decode: see vgt_decode_gpfifo_submit */
} vgt_rec_gpfifo_submit;
typedef struct { uint32_t client, channel, token; } vgt_rec_work_submit_token;
typedef struct { uint32_t token, channel, offset, flags; } vgt_rec_doorbell;
typedef struct { uint64_t gpu_va, value; uint32_t size, flags; } vgt_rec_semaphore;
/* CHANNEL_PROGRESS (1.4): how far the GPU had fetched a channel's ring when no doorbell rang (the end of
 * the capture): GP_GET and GP_PUT as read from the channel's USERD. */
#define VGT_PROGRESS_FLAG_END 1u   /* read at the end of the capture */
typedef struct { uint32_t client, channel, gp_get, gp_put, flags; } vgt_rec_channel_progress;
/* CHANNEL_STATE (1.1): a channel's push-buffer decoder state, for traces cut out of longer ones. */
typedef struct {
    uint32_t client, channel, subdevice_mask, flags;
    uint64_t extended_base;                  /* already shifted: the VA added to entry addresses */
    uint32_t subch_class[VGT_SUBCHANNELS];   /* SET_OBJECT bindings; 0 = unbound */
    uint32_t stored_subdevice_mask;
} vgt_rec_channel_state;
/* CHANNEL_METHODS (1.1): method writes restoring a channel's engine state, pushed before its next
 * submission, in order. writes_length is in bytes (VGT_CHANNEL_METHOD_SIZE per write). */
typedef struct {
    uint32_t client, channel, flags, writes_length;
    const uint8_t *writes;
} vgt_rec_channel_methods;
/* One write of a CHANNEL_METHODS record, as consumers take it (method is a byte address). */
typedef struct vgt_state_method { uint32_t subch, method, value; } vgt_state_method;

static inline uint32_t vgt_channel_methods_count(const vgt_rec_channel_methods *p)
{
    return p->writes_length / VGT_CHANNEL_METHOD_SIZE;
}
/* Write i (< vgt_channel_methods_count) of a decoded record. */
static inline vgt_state_method vgt_channel_method_at(const vgt_rec_channel_methods *p, uint32_t i)
{
    const uint8_t *b = p->writes + (uint64_t)VGT_CHANNEL_METHOD_SIZE * i;
    vgt_state_method m = {(uint32_t)b[2] | (uint32_t)b[3] << 8, (uint32_t)b[0] | (uint32_t)b[1] << 8,
                          (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24};
    return m;
}
/* Encode one write into out[8] (the caller's writes buffer). */
static inline void vgt_channel_method_put(uint8_t *out, const vgt_state_method *m)
{
    out[0] = (uint8_t)m->method; out[1] = (uint8_t)(m->method >> 8);
    out[2] = (uint8_t)m->subch; out[3] = (uint8_t)(m->subch >> 8);
    for (int i = 0; i < 4; i++) out[4 + i] = (uint8_t)(m->value >> (8 * i));
}
typedef struct { uint64_t module; uint32_t image_length, flags; const uint8_t *image; } vgt_rec_cuda_module;
typedef struct {
    uint64_t module, function, stream;
    uint32_t grid[3], block[3], shared_bytes, name_length, params_length;
    const char *name;
    const uint8_t *params;
} vgt_rec_cuda_launch;
/* ---- format 1.2: the CUDA driver API (docs/trace-format.md section 5, 0x0032-0x0037) ----
 * Every API record starts with the same 32 bytes (the "call"): which entry point (enum vgt_cuda_api,
 * vgt/cuda.h), the CUresult it returned, the calling thread, flags, and the number of GPFIFO_SUBMIT
 * records the capture had written when the call began and when it returned (the link to submissions). */
typedef struct vgt_cuda_call_head {
    uint32_t api;
    int32_t result;
    uint32_t thread, flags;
    uint64_t submits_before, submits_after;
} vgt_cuda_call_head;
typedef struct { uint64_t hash; uint32_t image_length, kind; const uint8_t *image; } vgt_rec_cuda_image;
/* format 1.5: an image whose bytes are those of a file at an offset (a shared library's fatbin section):
 * the path, the offset, the hash of the bytes, and for a fatbin its entries (vgt/cuda.h,
 * vgt_cuda_fatbin_entry: 16 bytes each), instead of the bytes. */
#define VGT_CUDA_FATBIN_ENTRY_SIZE 16u
typedef struct {
    uint64_t hash, file_offset, file_size;
    uint32_t image_length, kind, flags, path_length, entries_length;
    const char *path;
    const uint8_t *entries;
} vgt_rec_cuda_image_ref;
typedef struct {
    vgt_cuda_call_head call;
    uint64_t handle, image_hash;
    uint32_t path_length;
    const char *path;
} vgt_rec_cuda_load;
typedef struct {
    vgt_cuda_call_head call;
    uint64_t function, owner;
    uint32_t name_length;
    const char *name;
} vgt_rec_cuda_function;
typedef struct {
    vgt_cuda_call_head call;
    uint64_t function, stream;
    uint32_t grid[3], block[3], shared_bytes, params_length;
    uint64_t graph_exec;
    uint32_t node_index, layout_length;
    const uint8_t *params;
    const uint8_t *layout;    /* layout_length / 8 entries: u32 offset, u32 size of each parameter */
} vgt_rec_cuda_kernel;
typedef struct {
    vgt_cuda_call_head call;
    uint64_t dst, src, size, stream, graph_exec;
    uint32_t op, value, node_index, data_length;
    const uint8_t *data;
} vgt_rec_cuda_memory;
typedef struct {
    vgt_cuda_call_head call;
    uint64_t object, arg0, arg1;
} vgt_rec_cuda_call;
typedef struct { uint32_t length, flags; const char *text; } vgt_rec_marker;
typedef struct { uint32_t severity, code, length; const char *text; } vgt_rec_diagnostic;

static inline uint64_t vgt_submit_entry(const vgt_rec_gpfifo_submit *s, uint32_t i)
{
    const uint8_t *p = s->entries + 8u * i;
    uint64_t v = 0;
    for (int b = 7; b >= 0; b--) v = (v << 8) | p[b];
    return v;
}

/* Decoders: check the payload against the record's length (VGT_E_FORMAT naming the record's sequence
 * number and the field on a short or overrunning payload). Blob pointers alias rec->payload. */
vgt_status vgt_decode_session_start(const vgt_record *r, vgt_rec_session_start *o, vgt_error *err);
vgt_status vgt_decode_session_end(const vgt_record *r, vgt_rec_session_end *o, vgt_error *err);
vgt_status vgt_decode_process_start(const vgt_record *r, vgt_rec_process_start *o, vgt_error *err);
vgt_status vgt_decode_process_end(const vgt_record *r, vgt_rec_process_end *o, vgt_error *err);
vgt_status vgt_decode_rm_alloc(const vgt_record *r, vgt_rec_rm_alloc *o, vgt_error *err);
vgt_status vgt_decode_rm_free(const vgt_record *r, vgt_rec_rm_free *o, vgt_error *err);
vgt_status vgt_decode_rm_control(const vgt_record *r, vgt_rec_rm_control *o, vgt_error *err);
vgt_status vgt_decode_mem_alloc(const vgt_record *r, vgt_rec_mem_alloc *o, vgt_error *err);
vgt_status vgt_decode_gpu_map(const vgt_record *r, vgt_rec_gpu_map *o, vgt_error *err);
vgt_status vgt_decode_gpu_unmap(const vgt_record *r, vgt_rec_gpu_unmap *o, vgt_error *err);
vgt_status vgt_decode_cpu_map(const vgt_record *r, vgt_rec_cpu_map *o, vgt_error *err);
vgt_status vgt_decode_cpu_unmap(const vgt_record *r, vgt_rec_cpu_unmap *o, vgt_error *err);
vgt_status vgt_decode_ioctl(const vgt_record *r, vgt_rec_ioctl *o, vgt_error *err);
vgt_status vgt_decode_memory(const vgt_record *r, vgt_rec_memory *o, vgt_error *err);
vgt_status vgt_decode_channel(const vgt_record *r, vgt_rec_channel *o, vgt_error *err);
vgt_status vgt_decode_engine_object(const vgt_record *r, vgt_rec_engine_object *o, vgt_error *err);
vgt_status vgt_decode_work_submit_token(const vgt_record *r, vgt_rec_work_submit_token *o, vgt_error *err);
vgt_status vgt_decode_doorbell(const vgt_record *r, vgt_rec_doorbell *o, vgt_error *err);
vgt_status vgt_decode_channel_progress(const vgt_record *r, vgt_rec_channel_progress *o, vgt_error *err);
vgt_status vgt_decode_semaphore(const vgt_record *r, vgt_rec_semaphore *o, vgt_error *err);
vgt_status vgt_decode_channel_state(const vgt_record *r, vgt_rec_channel_state *o, vgt_error *err);
/* Also checks writes_length is a multiple of 8 and every write names subchannel 0..7 and a method
 * address <= VGT_MAX_METHOD_ADDRESS that is a multiple of 4 (VGT_E_FORMAT naming the write). */
vgt_status vgt_decode_channel_methods(const vgt_record *r, vgt_rec_channel_methods *o, vgt_error *err);
vgt_status vgt_decode_cuda_module(const vgt_record *r, vgt_rec_cuda_module *o, vgt_error *err);
vgt_status vgt_decode_cuda_launch(const vgt_record *r, vgt_rec_cuda_launch *o, vgt_error *err);
vgt_status vgt_decode_cuda_image(const vgt_record *r, vgt_rec_cuda_image *o, vgt_error *err);
vgt_status vgt_decode_cuda_image_ref(const vgt_record *r, vgt_rec_cuda_image_ref *o, vgt_error *err);
vgt_status vgt_decode_cuda_load(const vgt_record *r, vgt_rec_cuda_load *o, vgt_error *err);
vgt_status vgt_decode_cuda_function(const vgt_record *r, vgt_rec_cuda_function *o, vgt_error *err);
/* Also checks layout_length is a multiple of 8. */
vgt_status vgt_decode_cuda_kernel(const vgt_record *r, vgt_rec_cuda_kernel *o, vgt_error *err);
vgt_status vgt_decode_cuda_memory(const vgt_record *r, vgt_rec_cuda_memory *o, vgt_error *err);
vgt_status vgt_decode_cuda_call(const vgt_record *r, vgt_rec_cuda_call *o, vgt_error *err);
vgt_status vgt_decode_marker(const vgt_record *r, vgt_rec_marker *o, vgt_error *err);
vgt_status vgt_decode_diagnostic(const vgt_record *r, vgt_rec_diagnostic *o, vgt_error *err);
/* GPFIFO_SUBMIT: segments are written into the caller's array seg[0..max_segments); fails with
 * VGT_E_LIMIT when the record has more. o->segments points at seg. Size the array with
 * vgt_gpfifo_submit_segment_room. */
vgt_status vgt_decode_gpfifo_submit(const vgt_record *r, vgt_rec_gpfifo_submit *o, vgt_segment *seg,
                                    uint32_t max_segments, vgt_error *err);
/* Each segment of a GPFIFO_SUBMIT payload takes at least its header (gpu_va, length, flags). */
#define VGT_SEGMENT_HEADER_BYTES 16u
/* The segment array GPFIFO_SUBMIT record r needs: its segment_count (payload bytes 36..39), bounded by what
 * its payload can hold (payload length / VGT_SEGMENT_HEADER_BYTES + 1), so a hostile count never asks for
 * more than the record's length allows. Every reader sizes its array with this one bound. */
uint32_t vgt_gpfifo_submit_segment_room(const vgt_record *r);

/* ---- generic field walk: one description of every payload layout, used by dump, verify and tools ---- */
enum vgt_field_kind {
    VGT_FIELD_U32 = 1,   /* counts, lengths, enums: shown in decimal */
    VGT_FIELD_X32,       /* handles, classes, commands, statuses, flags: shown in hex */
    VGT_FIELD_S32,
    VGT_FIELD_U64,
    VGT_FIELD_X64,       /* addresses */
    VGT_FIELD_BLOB,      /* bytes/length */
    VGT_FIELD_TEXT,      /* UTF-8 bytes/length (not NUL-terminated) */
    VGT_FIELD_ENTRIES,   /* GPFIFO_SUBMIT entries: bytes/length (length = 8 x entry_count) */
    VGT_FIELD_SEGMENT,   /* one GPFIFO_SUBMIT segment: value = gpu_va, aux = segment flags, bytes/length */
};
typedef struct vgt_field {
    const char *name;
    int kind;                 /* enum vgt_field_kind */
    uint64_t value;           /* integer kinds (S32 sign-extended) and SEGMENT's gpu_va */
    uint32_t aux;
    const uint8_t *bytes;     /* BLOB, TEXT, ENTRIES, SEGMENT: aliases the record's payload */
    uint32_t length;
} vgt_field;
/* Return non-zero to stop the walk early (vgt_record_fields then returns VGT_OK). */
typedef int (*vgt_field_fn)(void *ctx, const vgt_field *f);
/* Walks the payload of a known record type field by field, checking its structure exactly as the typed
 * decoders do (VGT_E_FORMAT naming the seq and field). Unknown types: VGT_E_NOT_FOUND. Reserved fields
 * are not reported. */
vgt_status vgt_record_fields(const vgt_record *r, vgt_field_fn fn, void *ctx, vgt_error *err);
/* Bytes of a type's fixed part (docs/trace-format.md section 5), or 0 for an unknown type. */
uint32_t vgt_rec_type_fixed_size(uint16_t type);

/* ---- identity (file header key/value block) ---- */
typedef struct vgt_identity {
    const char *key;
    const char *value;
} vgt_identity;

/* ---- writer ---- */
typedef struct vgt_writer vgt_writer;

typedef struct vgt_writer_options {
    int codec;                 /* VGT_CODEC_ZSTD (default) or VGT_CODEC_STORED */
    int zstd_level;            /* default 3 */
    int zstd_threads;          /* 0 = compress in the calling thread; N > 0: N compression threads, each
                                * compressing whole chunks (several chunks at once), written in order */
    uint32_t chunk_target;     /* bytes of records per chunk, default 2 MiB, clamped to [4 KiB, 64 MiB] */
    int crash_safe;            /* close the chunk and fsync... at every GPFIFO_SUBMIT (flush, see below) */
    int write_trailer;         /* default 1; 0 leaves a stream without trailer */
    int placement;             /* vgt_writer_open_path on a regular file: enum vgt_placement */
    int memory_cas;            /* 1: MEMORY records whose contents repeat earlier memory contents (whole
                                * 4 KiB blocks, or blocks that differ from the last contents at the same
                                * address in a few words) are written as MEMORY_CAS (format 1.3; sets header
                                * flag MEMORY_CAS); readers give them back as the MEMORY records. Default 0 */
    int live;                  /* hand each submission to the reader as it happens: the chunk is closed and
                                * written at every GPFIFO_SUBMIT (no fdatasync), so a consumer of a pipe or
                                * FIFO gets it at once instead of after chunk_target bytes; and at every
                                * CHANNEL, ENGINE_OBJECT and GPU_MAP, so that a live replay sets them up
                                * while the program is still starting up */
    struct vgt_writer_stats *stats;   /* optional: where the writer's time goes, kept up to date until
                                       * vgt_writer_close returns (the caller owns it; NULL: not kept) */
} vgt_writer_options;

/* The writer's own time, ns (vgt_writer_options.stats; the capture's VGT_CAPTURE_PROFILE and vgt record's
 * profile line): chunks emitted and their records' bytes before and after compression; zstd; the writes
 * of chunks (on a pipe: waiting for its reader), fdatasync, the content-addressed encoding of MEMORY
 * records, and at close the index and footer and putting the file in place. */
typedef struct vgt_writer_stats {
    uint64_t chunks, records_bytes, stored_bytes;
    uint64_t compress_ns, write_ns, sync_ns, cas_ns, trailer_ns, commit_ns;
} vgt_writer_stats;

/* How vgt_writer_open_path puts a trace at a path that is absent or a regular file (the policy of
 * vgt/outfile.h; "-" is standard output, a device or FIFO is written as a stream, a directory is refused). */
enum vgt_placement {
    VGT_PLACE_REPLACE = 0,      /* default: a temporary beside PATH, renamed over it by a successful close;
                                 * a failed write or vgt_writer_discard leaves PATH as it was */
    VGT_PLACE_KEEP_PREFIX = 1,  /* as REPLACE, but a close after a failed write still puts the valid prefix
                                 * (the chunks before the failure) in place: a recording keeps what it got */
    VGT_PLACE_IN_PLACE = 2,     /* straight into PATH (created or truncated): readable there while written
                                 * and after a crash; crash_safe implies it */
};

vgt_writer_options vgt_writer_defaults(void);

/* Open: writes the file header immediately. The path variant follows opt->placement (above). The fd variant
 * writes to any fd (file, pipe, socket) and does not close it unless own_fd; a regular file must be at
 * offset 0. A failed write (ENOSPC, EFBIG, EPIPE: a program writing to a pipe should ignore SIGPIPE) is
 * returned with the offset and strerror; the chunks written before it stay a valid trace (the partial
 * chunk is cut off again), and every later call returns the same error. */
vgt_status vgt_writer_open_path(vgt_writer **w, const char *path, const vgt_writer_options *opt,
                                const vgt_identity *ident, uint32_t nident, vgt_error *err);
vgt_status vgt_writer_open_fd(vgt_writer **w, int fd, int own_fd, const vgt_writer_options *opt,
                              const vgt_identity *ident, uint32_t nident, vgt_error *err);

/* Append one record with a raw payload; assigns and returns (via *seq if not NULL) its sequence number.
 * Thread-safe: the writer serializes appends with its own lock (capture has several submitting threads). */
vgt_status vgt_write_record(vgt_writer *w, uint16_t type, uint16_t flags, uint64_t ts, const void *payload,
                            uint32_t length, uint64_t *seq, vgt_error *err);
/* Gathered variant: the payload is the concatenation of parts (each part is written as given; callers
 * include padding parts). Used by the typed encoders to avoid a copy. */
typedef struct vgt_iovec { const void *base; uint32_t length; } vgt_iovec;
vgt_status vgt_write_recordv(vgt_writer *w, uint16_t type, uint16_t flags, uint64_t ts, const vgt_iovec *parts,
                             uint32_t nparts, uint64_t *seq, vgt_error *err);

/* Typed encoders (lengths inside the structs must match their blobs). */
vgt_status vgt_write_session_start(vgt_writer *w, uint64_t ts, const vgt_rec_session_start *p, vgt_error *err);
vgt_status vgt_write_session_end(vgt_writer *w, uint64_t ts, const vgt_rec_session_end *p, vgt_error *err);
vgt_status vgt_write_process_start(vgt_writer *w, uint64_t ts, const vgt_rec_process_start *p, vgt_error *err);
vgt_status vgt_write_process_end(vgt_writer *w, uint64_t ts, const vgt_rec_process_end *p, vgt_error *err);
vgt_status vgt_write_rm_alloc(vgt_writer *w, uint64_t ts, const vgt_rec_rm_alloc *p, vgt_error *err);
vgt_status vgt_write_rm_free(vgt_writer *w, uint64_t ts, const vgt_rec_rm_free *p, vgt_error *err);
vgt_status vgt_write_rm_control(vgt_writer *w, uint64_t ts, const vgt_rec_rm_control *p, vgt_error *err);
vgt_status vgt_write_mem_alloc(vgt_writer *w, uint64_t ts, const vgt_rec_mem_alloc *p, vgt_error *err);
vgt_status vgt_write_gpu_map(vgt_writer *w, uint64_t ts, const vgt_rec_gpu_map *p, vgt_error *err);
vgt_status vgt_write_gpu_unmap(vgt_writer *w, uint64_t ts, const vgt_rec_gpu_unmap *p, vgt_error *err);
vgt_status vgt_write_cpu_map(vgt_writer *w, uint64_t ts, const vgt_rec_cpu_map *p, vgt_error *err);
vgt_status vgt_write_cpu_unmap(vgt_writer *w, uint64_t ts, const vgt_rec_cpu_unmap *p, vgt_error *err);
vgt_status vgt_write_ioctl(vgt_writer *w, uint64_t ts, const vgt_rec_ioctl *p, vgt_error *err);
vgt_status vgt_write_memory(vgt_writer *w, uint64_t ts, const vgt_rec_memory *p, vgt_error *err);
vgt_status vgt_write_channel(vgt_writer *w, uint64_t ts, const vgt_rec_channel *p, vgt_error *err);
vgt_status vgt_write_engine_object(vgt_writer *w, uint64_t ts, const vgt_rec_engine_object *p, vgt_error *err);
vgt_status vgt_write_gpfifo_submit(vgt_writer *w, uint64_t ts, const vgt_rec_gpfifo_submit *p, vgt_error *err);
vgt_status vgt_write_work_submit_token(vgt_writer *w, uint64_t ts, const vgt_rec_work_submit_token *p, vgt_error *err);
vgt_status vgt_write_doorbell(vgt_writer *w, uint64_t ts, const vgt_rec_doorbell *p, vgt_error *err);
vgt_status vgt_write_channel_progress(vgt_writer *w, uint64_t ts, const vgt_rec_channel_progress *p, vgt_error *err);
vgt_status vgt_write_semaphore(vgt_writer *w, uint64_t ts, const vgt_rec_semaphore *p, vgt_error *err);
vgt_status vgt_write_channel_state(vgt_writer *w, uint64_t ts, const vgt_rec_channel_state *p, vgt_error *err);
vgt_status vgt_write_channel_methods(vgt_writer *w, uint64_t ts, const vgt_rec_channel_methods *p, vgt_error *err);
vgt_status vgt_write_cuda_module(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_module *p, vgt_error *err);
vgt_status vgt_write_cuda_launch(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_launch *p, vgt_error *err);
vgt_status vgt_write_cuda_image(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_image *p, vgt_error *err);
vgt_status vgt_write_cuda_image_ref(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_image_ref *p, vgt_error *err);
vgt_status vgt_write_cuda_load(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_load *p, vgt_error *err);
vgt_status vgt_write_cuda_function(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_function *p, vgt_error *err);
vgt_status vgt_write_cuda_kernel(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_kernel *p, vgt_error *err);
vgt_status vgt_write_cuda_memory(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_memory *p, vgt_error *err);
vgt_status vgt_write_cuda_call(vgt_writer *w, uint64_t ts, const vgt_rec_cuda_call *p, vgt_error *err);
vgt_status vgt_write_marker(vgt_writer *w, uint64_t ts, const vgt_rec_marker *p, vgt_error *err);
vgt_status vgt_write_diagnostic(vgt_writer *w, uint64_t ts, const vgt_rec_diagnostic *p, vgt_error *err);

/* Close the current chunk now (and, in crash-safe mode or when sync, fdatasync a regular file). After a
 * flush, every record written so far is readable by a reader of the file or stream. */
vgt_status vgt_writer_flush(vgt_writer *w, int sync, vgt_error *err);
/* 1 when a live writer (vgt_writer_options.live) closes its chunk at a record of this type, handing it to
 * the reader at once: GPFIFO_SUBMIT, CHANNEL, ENGINE_OBJECT, GPU_MAP. */
int vgt_writer_live_hands_on(uint16_t type);
/* Flush, write the trailer (unless disabled), close; a path opened with a temporary is put in place.
 * Frees w even on error. */
vgt_status vgt_writer_close(vgt_writer *w, vgt_error *err);
/* Give up on the trace: close without finishing it; a path opened with a temporary (REPLACE, KEEP_PREFIX)
 * is left as it was before the open. Frees w. */
void vgt_writer_discard(vgt_writer *w);
uint64_t vgt_writer_next_seq(const vgt_writer *w);

/* ---- reader ---- */
typedef struct vgt_reader vgt_reader;

typedef struct vgt_reader_options {
    int streaming;             /* 1: never seek (pipes, sockets, a file still being written); 0: auto.
                                * A streaming reader of a regular file treats the file as growing: at its
                                * current end, or inside a chunk not yet complete, next() returns VGT_E_EOF
                                * without consuming anything, and a later call resumes there. */
    int verify_checksums;      /* default 1 */
    int read_ahead;            /* worker threads that load the next chunks of a read in order (zstd and
                                * checks beside the caller's work; seekable files with an index): 0 auto
                                * (VGT_READ_AHEAD=N in the environment if set, else the other cores, at
                                * most 2), -1 none, N: N workers (at most 8) */
    int follow;                /* with streaming, on a regular file: next() waits at the file's end (polling
                                * every follow_poll_us, default 2000) until more arrives or the trailer
                                * ends the records, instead of returning VGT_E_EOF for "nothing more yet" */
    uint32_t follow_poll_us;
} vgt_reader_options;

typedef struct vgt_chunk_info {
    uint64_t offset;           /* file offset of the chunk header */
    uint64_t first_seq, first_ts, last_ts, first_submit;
    uint32_t record_count, submit_count;
    uint32_t codec, compressed_length, uncompressed_length;
} vgt_chunk_info;

typedef struct vgt_trace_info {
    uint16_t major, minor;
    uint32_t header_flags;
    uint32_t identity_count;
    const vgt_identity *identity;   /* owned by the reader */
    int has_index;                  /* a valid trailer was found */
    uint64_t file_size;             /* 0 for streams */
} vgt_trace_info;

vgt_status vgt_reader_open_path(vgt_reader **r, const char *path, const vgt_reader_options *opt, vgt_error *err);
vgt_status vgt_reader_open_fd(vgt_reader **r, int fd, int own_fd, const vgt_reader_options *opt, vgt_error *err);
void vgt_reader_close(vgt_reader *r);
const vgt_trace_info *vgt_reader_info(const vgt_reader *r);
const char *vgt_reader_identity(const vgt_reader *r, const char *key);   /* NULL when absent */

/* Next record in sequence order. VGT_OK, VGT_E_EOF at the clean end, or an error naming the offset. */
vgt_status vgt_reader_next(vgt_reader *r, vgt_record *rec, vgt_error *err);

/* Holding a chunk: the payloads of the records of the chunk that the last record came from stay valid
 * and unchanged past later calls, until vgt_reader_release(r, id) (or vgt_reader_close). *id names the
 * hold (non-zero); [*bytes, *bytes + *len) are the chunk's records, which every payload of it lies in
 * (not a MEMORY_CAS record's expansion). Holding the current chunk again gives the same id. The reader
 * then reads the next chunks into other buffers (those of released chunks, reused). VGT_E_NOT_FOUND
 * before the first record; VGT_E_NOMEM. */
vgt_status vgt_reader_hold(vgt_reader *r, uint64_t *id, const uint8_t **bytes, uint64_t *len, vgt_error *err);
void vgt_reader_release(vgt_reader *r, uint64_t id);

/* After vgt_reader_next returned VGT_E_EOF on a sequential read from the start: VGT_OK when the records
 * ended with a trailer that agrees with every chunk read (*has_trailer = 1) or at the end of the input
 * without one (*has_trailer = 0); else the trailer's problem (index or footer checksum, an entry that
 * disagrees with its chunk, bytes after the footer), naming its offset. */
vgt_status vgt_reader_trailer_check(vgt_reader *r, int *has_trailer, vgt_error *err);
/* The chunk the last record returned by vgt_reader_next came from (offset, sequence and time range,
 * codec and both lengths). VGT_E_NOT_FOUND before the first record. */
vgt_status vgt_reader_current_chunk(const vgt_reader *r, vgt_chunk_info *out, vgt_error *err);
/* 1 once the records ended for good (a trailer was met, or the end of a file or pipe that is not being
 * followed); 0 while a streaming reader of a regular file may still see more (VGT_E_EOF from next() then
 * means "nothing more yet"). */
int vgt_reader_at_end(const vgt_reader *r);
/* When the current chunk's last bytes arrived (CLOCK_MONOTONIC ns, the clock of vgt_now_ns): the moment the
 * read that completed it returned, before the chunk's checks. For a live consumer that splits a record's
 * way into transport and checks. 0 before the first chunk. */
uint64_t vgt_reader_chunk_read_ns(const vgt_reader *r);
/* File offset (stream offset) just past the last complete chunk read so far: the length of the longest
 * valid prefix of whole chunks, for salvage tools. */
uint64_t vgt_reader_valid_end(const vgt_reader *r);
/* Bytes of the input read so far: a stream's bytes consumed (all of it, trailer included, once
 * vgt_reader_next returned VGT_E_EOF at its end); a file's size. A stream that ended with a trailer that
 * agrees with its chunks is the file it would have been: these are its size. */
uint64_t vgt_reader_input_bytes(const vgt_reader *r);

/* Chunk list: from the index when present, else by a scan of chunk headers (files only). Entries from
 * the index carry no codec or lengths (0); entries from a scan carry all fields. */
vgt_status vgt_reader_chunks(vgt_reader *r, const vgt_chunk_info **chunks, uint32_t *count, vgt_error *err);
/* Reads and checks (magic, header checksum, limits) the chunk header at a file offset, without its
 * payload: every field but first_submit (0). Files only; for quick summaries of large traces. */
vgt_status vgt_reader_chunk_header(vgt_reader *r, uint64_t offset, vgt_chunk_info *out, vgt_error *err);
/* Position so that the next vgt_reader_next returns the record with that sequence number / the first
 * record with ts >= t / the n-th (0-based) GPFIFO_SUBMIT record. Files only. */
vgt_status vgt_reader_seek_seq(vgt_reader *r, uint64_t seq, vgt_error *err);
vgt_status vgt_reader_seek_time(vgt_reader *r, uint64_t ts, vgt_error *err);
vgt_status vgt_reader_seek_submit(vgt_reader *r, uint64_t submit_index, vgt_error *err);

/* ---- helpers ---- */
uint64_t vgt_now_ns(void);        /* CLOCK_MONOTONIC */
uint64_t vgt_wall_ns(void);       /* CLOCK_REALTIME */

#ifdef __cplusplus
}
#endif
#endif
