/* events.h: semantic events decoded from a channel's method stream.
 *
 * The push-buffer decoder (pushbuf.h) turns bytes into vgt_method events; a semantic tracker, one per
 * channel, is fed those methods in order and turns runs of them into what the GPU was asked to do:
 *
 *   LAUNCH        a compute launch that runs threads: QMD by address (SEND_PCAS_A + a scheduling
 *                 SEND_SIGNALING_PCAS*_B) or inline (SET_INLINE_QMD_ADDRESS_A/B + LOAD_INLINE_QMD_DATA(i)),
 *                 the QMD decoded
 *   EMPTY_DISPATCH  a scheduled QMD that runs no threads (zero grid or block, vgt_launch_runs_threads):
 *                 CUDA schedules CTA-less QMDs only to order a stream's kernels (their dependent QMDs)
 *   UPLOAD        an inline-to-memory transfer (I2M LAUNCH_DMA + LOAD_INLINE_DATA dwords), with its bytes
 *   COPY          a copy-engine LAUNCH_DMA that moves bytes (source, destination, lengths, layouts,
 *                 remap/memset)
 *   EMPTY_DMA     a copy-engine LAUNCH_DMA that moves none (vgt_copy_moves_bytes): most only release a
 *                 semaphore (its SEM_RELEASE follows)
 *   SEM_RELEASE   a semaphore write: host SEM_EXECUTE release/reduction, a report semaphore release, the
 *                 release of a copy or of a QMD (ev.sem.source says which)
 *   SEM_ACQUIRE   a semaphore wait: host SEM_EXECUTE acquire (with its comparison), report acquire
 *   REPORT        a report semaphore that writes a counter or timestamp (REPORT_ONLY) or traps
 *   PROGRAM_BIND  a 3D shader stage bound to a program (SET_PIPELINE_PROGRAM_ADDRESS_A/B(j))
 *   DRAW          a 3D draw: BEGIN/END with DRAW_VERTEX_ARRAY / DRAW_INDEX_BUFFER / inline indices, or a
 *                 one-method draw (*_BEGIN_END_*); consecutive instances of one draw are merged
 *   CLEAR         a 3D CLEAR_SURFACE: which color components, depth, stencil, and the color target it hits
 *                 (MRT_SELECT through SET_CT_SELECT to SET_COLOR_TARGET_A/B) and the depth target
 *   NOTIFY        a NOTIFY method (3D or compute): the engine writes a notifier at SET_NOTIFY_A/B
 *
 * Events are delivered through a callback while the tracker runs; pointers inside an event (QMD bytes,
 * upload bytes) are valid only during the callback. An event's pos is the position of the method that
 * completed it. Every event has a one-line text form (vgt decode prints it in line; the db keeps it) and
 * a JSON form.
 *
 * Facts: method offsets and fields from NVIDIA open-gpu-doc classes/host/clc46f.h, clc56f.h,
 * classes/compute/clc5c0.h..clcbc0.h, classes/3d/clc597.h..clcb97.h, classes/dma-copy/clc5b5.h..clc8b5.h,
 * classes/inline-to-memory/cla140.h, kept as tables in analyze/src/events_table.c.
 *
 * Memory: a launch by address needs the QMD bytes, which live in GPU memory. The tracker reads them from
 * what the stream itself wrote first (the overlay, below), then through a vgt_sem_mem_fn
 * (vgt_sem_model_reader() adapts a vgt_model). When neither knows them, a launch by address is still
 * reported, with qmd_known = 0.
 *
 * Origin: methods an MME macro emitted can be fed too (vgt_sem_macro_call); their events say so
 * (ev.origin, ev.macro_call). Bulk: vgt_sem_noninc_run takes a non-increasing run at once. Inline QMDs also land in memory at their QMD address (the GPU
 * writes them there), which is what a replayer must recreate: ev.launch.qmd_va says where.
 */
#ifndef VGT_EVENTS_H
#define VGT_EVENTS_H

#include <stdint.h>
#include <stdio.h>

#include "vgt/blocklinear.h"
#include "vgt/error.h"
#include "vgt/pushbuf.h"
#include "vgt/qmd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stable numbers: they are stored in the db and printed in JSON. Append only. */
typedef enum vgt_event_kind {
    VGT_EV_LAUNCH = 1,
    VGT_EV_UPLOAD = 2,
    VGT_EV_COPY = 3,
    VGT_EV_SEM_RELEASE = 4,
    VGT_EV_SEM_ACQUIRE = 5,
    VGT_EV_REPORT = 6,
    VGT_EV_PROGRAM_BIND = 7,
    VGT_EV_DRAW = 8,
    VGT_EV_EMPTY_DISPATCH = 9,   /* u.launch */
    VGT_EV_EMPTY_DMA = 10,       /* u.copy */
    VGT_EV_CLEAR = 11,           /* u.clear */
    VGT_EV_NOTIFY = 12,          /* u.notify */
    VGT_EV_KIND_COUNT_
} vgt_event_kind;

/* Where a semaphore operation came from. */
typedef enum vgt_sem_source {
    VGT_SEM_SRC_HOST = 1,     /* host class SEM_ADDR/PAYLOAD/SEM_EXECUTE (or C46F SEMAPHOREA-D) */
    VGT_SEM_SRC_REPORT = 2,   /* 3D/compute SET_REPORT_SEMAPHORE_A-D or REPORT_SEMAPHORE_EXECUTE */
    VGT_SEM_SRC_COPY = 3,     /* copy engine LAUNCH_DMA semaphore */
    VGT_SEM_SRC_QMD = 4,      /* a QMD release semaphore (at the end of the grid) */
} vgt_sem_source;

/* Semaphore operations, one numbering for every source. */
typedef enum vgt_sem_op {
    VGT_SEM_OP_RELEASE = 1,
    VGT_SEM_OP_ACQUIRE = 2,          /* wait until *va == payload */
    VGT_SEM_OP_ACQ_STRICT_GEQ = 3,   /* wait until *va >= payload */
    VGT_SEM_OP_ACQ_CIRC_GEQ = 4,     /* wait until *va >= payload, wrapping */
    VGT_SEM_OP_ACQ_AND = 5,          /* wait until (*va & payload) != 0 */
    VGT_SEM_OP_ACQ_NOR = 6,          /* wait until ~(*va | payload) != 0 */
    VGT_SEM_OP_REDUCTION = 7,        /* *va = reduction(*va, payload) */
    VGT_SEM_OP_REPORT_ONLY = 8,      /* write a counter/timestamp report */
    VGT_SEM_OP_TRAP = 9,
} vgt_sem_op;

/* Reductions, one numbering for every source (host, copy and report encode them differently). */
typedef enum vgt_sem_red {
    VGT_RED_NONE = 0,
    VGT_RED_ADD, VGT_RED_MIN, VGT_RED_MAX, VGT_RED_INC, VGT_RED_DEC,
    VGT_RED_AND, VGT_RED_OR, VGT_RED_XOR,
    VGT_RED_FADD, VGT_RED_FMIN, VGT_RED_FMAX,
} vgt_sem_red;

#define VGT_SEM_FLAG_WFI 1u          /* release waits for idle first */
#define VGT_SEM_FLAG_TIMESTAMP 2u    /* release writes a timestamp (four-word structure) */
#define VGT_SEM_FLAG_SWITCH_TSG 4u   /* acquire may switch TSG while waiting */
#define VGT_SEM_FLAG_AWAKEN 8u       /* awaken / interrupt on release */
#define VGT_SEM_FLAG_SIGNED 16u      /* reduction on signed values */

typedef struct vgt_ev_sem {
    uint8_t source;           /* vgt_sem_source */
    uint8_t op;               /* vgt_sem_op */
    uint8_t size;             /* payload bytes: 4 or 8 */
    uint8_t reduction;        /* vgt_sem_red */
    uint32_t flags;           /* VGT_SEM_FLAG_* */
    uint64_t va;
    uint64_t payload;
    uint32_t report;          /* REPORT field of 3D reports (counter kind), else 0 */
    uint32_t raw;             /* the executing method's data word (SEM_EXECUTE, _D, LAUNCH_DMA, ...) */
} vgt_ev_sem;

typedef struct vgt_ev_launch {
    uint64_t qmd_va;          /* where the QMD is (by address) or is written to (inline) */
    uint8_t inline_qmd;       /* 1 inline, 0 by address */
    uint8_t qmd_known;        /* 1 when all the QMD's bytes were known (inline, or in the model) */
    uint8_t decoded;          /* 1 when qmd holds a decode (version recognised) */
    uint32_t qmd_length;      /* bytes in qmd_bytes */
    const uint8_t *qmd_bytes; /* valid during the callback */
    uint32_t signal;          /* SEND_SIGNALING_PCAS*_B data that scheduled it (by address), else 0 */
    vgt_qmd qmd;
} vgt_ev_launch;

typedef struct vgt_ev_upload {
    uint64_t dst_va;          /* OFFSET_OUT_UPPER:OFFSET_OUT */
    uint32_t line_length;     /* bytes per line */
    uint32_t line_count;
    uint32_t pitch_out;
    uint8_t pitch_layout;     /* 1 pitch, 0 block-linear (SET_DST_* describe the surface) */
    uint8_t completion;       /* LAUNCH_DMA COMPLETION_TYPE: 0 none, 1 flush, 2 release semaphore */
    uint8_t complete;         /* 1 when every byte arrived; 0 when the stream ended first */
    uint64_t length;          /* bytes expected: line_length * line_count */
    uint64_t received;        /* bytes carried by LOAD_INLINE_DATA (a multiple of 4, may pad past length) */
    const uint8_t *data;      /* min(received, length) bytes; valid during the callback */
    uint32_t raw;             /* LAUNCH_DMA data */
} vgt_ev_upload;

/* One block-linear side of a copy, as the copy engine's state held it at LAUNCH_DMA (SET_SRC_* for the
 * source, SET_DST_* for the destination; sem_copy.c names the methods). The X quantities count bytes,
 * or elements of the remap's component size times component count when REMAP_ENABLE is set. */
typedef struct vgt_ev_copy_surface {
    uint32_t block_size;      /* SET_*_BLOCK_SIZE raw: WIDTH 3:0, HEIGHT 7:4, DEPTH 11:8 (log2 GOBs), GOB_HEIGHT 15:12 */
    uint32_t width, height, depth;   /* SET_*_WIDTH (X units), SET_*_HEIGHT (rows), SET_*_DEPTH (slices) */
    uint32_t layer;           /* SET_*_LAYER: the slice the copy reads or writes */
    uint32_t origin_x, origin_y;     /* *_ORIGIN_X (X units) and *_ORIGIN_Y (rows) of the copied rectangle */
} vgt_ev_copy_surface;

typedef struct vgt_ev_copy {
    uint64_t src_va, dst_va;  /* OFFSET_IN/OUT_UPPER:LOWER; a block-linear side's surface start */
    uint32_t pitch_in, pitch_out;     /* signed: a negative pitch walks the lines upwards */
    uint32_t line_length, line_count;
    uint8_t src_pitch, dst_pitch;     /* 1 pitch, 0 block-linear */
    uint8_t multi_line;
    uint8_t remap;            /* SET_REMAP_COMPONENTS applies */
    uint8_t memset;           /* remap with only constant sources: a fill, src unused */
    uint8_t src_physical, dst_physical;
    uint8_t transfer_type;    /* 0 none, 1 pipelined, 2 non-pipelined */
    uint8_t semaphore_type;   /* 0 none, 1 one-word/no timestamp, 2 four-word/timestamp, 3 conditional intr */
    uint32_t remap_const_a, remap_const_b, remap_components;
    uint64_t bytes;           /* bytes written at the destination (0 when transfer_type is none: semaphore only) */
    uint64_t sem_va, sem_payload;  /* when semaphore_type != 0 */
    uint32_t raw;             /* LAUNCH_DMA data */
    vgt_ev_copy_surface src_bl, dst_bl;   /* the block-linear sides (meaningful when src/dst_pitch is 0) */
} vgt_ev_copy;

typedef struct vgt_ev_program {
    uint32_t stage;           /* j of SET_PIPELINE_*(j), 0..5 */
    uint32_t type;            /* SET_PIPELINE_SHADER TYPE: 0 VERTEX_CULL_BEFORE_FETCH 1 VERTEX 2 TESS_INIT 3 TESS 4 GEOMETRY 5 PIXEL */
    uint8_t enabled;
    uint32_t register_count;  /* SET_PIPELINE_REGISTER_COUNT(j) */
    uint64_t program_va;      /* SET_PIPELINE_PROGRAM_ADDRESS_A(j):B(j): the shader program header, SASS follows */
} vgt_ev_program;

typedef enum vgt_draw_kind {
    VGT_DRAW_ARRAYS = 1,      /* BEGIN; [SET_VERTEX_ARRAY_START] DRAW_VERTEX_ARRAY; END or *_BEGIN_END_A/B */
    VGT_DRAW_INDEXED = 2,     /* DRAW_INDEX_BUFFER / DRAW_INDEX_BUFFER*_BEGIN_END_* */
    VGT_DRAW_INLINE_INDEX = 3,/* DRAW_INLINE_INDEX* between BEGIN and END */
    VGT_DRAW_AUTO = 4,        /* DRAW_AUTO (stream-output byte count) */
    VGT_DRAW_ZERO_INDEX = 5,  /* DRAW_ZERO_INDEX */
} vgt_draw_kind;

typedef struct vgt_ev_draw {
    uint8_t kind;             /* vgt_draw_kind */
    uint8_t index_size;       /* bytes per index for indexed draws (1, 2, 4), else 0 */
    uint32_t topology;        /* BEGIN OP / TOPOLOGY: 0 POINTS .. 4 TRIANGLES 5 TRIANGLE_STRIP .. 14 PATCH */
    uint32_t first;           /* first vertex or first index */
    uint32_t count;           /* vertices or indices (DRAW_AUTO: byte count) */
    uint32_t instance_count;  /* instances merged into this draw (BEGIN INSTANCE_ID FIRST then SUBSEQUENT) */
    uint32_t base_vertex, base_instance;   /* SET_GLOBAL_BASE_VERTEX/INSTANCE_INDEX */
    uint64_t index_buffer_va; /* SET_INDEX_BUFFER_A:B, indexed draws */
} vgt_ev_draw;

typedef struct vgt_ev_clear {
    uint32_t raw;             /* CLEAR_SURFACE data */
    uint8_t color_mask;       /* R_ENABLE 2, G 3, B 4, A 5 as bits 0..3 */
    uint8_t depth, stencil;   /* Z_ENABLE 0, STENCIL_ENABLE 1 */
    uint32_t mrt_select;      /* MRT_SELECT 9:6: the n-th selected color target */
    uint32_t rt_array_index;  /* RT_ARRAY_INDEX 25:10 */
    uint32_t target;          /* the color target slot j: SET_CT_SELECT TARGETn for n = mrt_select */
    uint64_t target_va;       /* SET_COLOR_TARGET_A(j):B(j), 0 when never set */
    uint32_t target_format;   /* SET_COLOR_TARGET_FORMAT(j): 0 = DISABLED */
    uint32_t target_width, target_height, target_memory;   /* SET_COLOR_TARGET_WIDTH/HEIGHT/MEMORY(j) */
    uint32_t clear_value[4];  /* SET_COLOR_CLEAR_VALUE(0..3): R, G, B, A as 32-bit floats */
    uint64_t zt_va;           /* SET_ZT_A:B when depth or stencil is cleared */
} vgt_ev_clear;

typedef struct vgt_ev_notify {
    uint64_t va;              /* SET_NOTIFY_A (upper):SET_NOTIFY_B */
    uint32_t type;            /* NOTIFY TYPE: 0 WRITE_ONLY, 1 WRITE_THEN_AWAKEN */
} vgt_ev_notify;

/* Where the methods that made an event came from. */
typedef enum vgt_event_origin {
    VGT_ORIGIN_STREAM = 0,    /* the push buffer itself */
    VGT_ORIGIN_MACRO = 1,     /* methods an MME macro call emitted (fed with vgt_sem_begin_macro) */
} vgt_event_origin;

typedef struct vgt_event {
    vgt_event_kind kind;
    vgt_mpos pos;             /* the method that completed the event (a macro's: its CALL_MME_MACRO) */
    uint32_t cls;             /* class of that method */
    uint32_t subch;
    uint8_t origin;           /* vgt_event_origin */
    uint64_t macro_call;      /* origin MACRO: the call's id (vgt_mme_trace_call.id); else 0 */
    union {
        vgt_ev_launch launch; /* LAUNCH, EMPTY_DISPATCH */
        vgt_ev_upload upload;
        vgt_ev_copy copy;     /* COPY, EMPTY_DMA */
        vgt_ev_sem sem;       /* SEM_RELEASE, SEM_ACQUIRE, REPORT */
        vgt_ev_program program;
        vgt_ev_draw draw;
        vgt_ev_clear clear;
        vgt_ev_notify notify;
    } u;
} vgt_event;

/* ---- what counts as a launch and as a copy ----
 * One rule for every tool that counts (census, db, decode, the replay's summary): the tracker applies
 * it when it delivers the event, as its kind (LAUNCH or EMPTY_DISPATCH, COPY or EMPTY_DMA). */

/* A dispatch runs threads unless its QMD was decoded from fully known bytes and its grid
 * (x * y * z) or its block (x * y * z) is zero. A QMD not (fully) known may run threads: a launch. */
int vgt_launch_runs_threads(const vgt_ev_launch *l);
/* The SEM_RELEASE (source qmd) that release slot `slot` of a QMD makes when its grid completes: what the
 * tracker delivers after a LAUNCH, for a QMD run some other way (a dependent QMD). */
void vgt_ev_sem_from_qmd_release(const vgt_qmd_release *r, unsigned slot, vgt_ev_sem *out);
/* A LAUNCH_DMA moves bytes when its DATA_TRANSFER_TYPE is not NONE and its size is not zero. */
int vgt_copy_moves_bytes(const vgt_ev_copy *k);
/* Bytes in an X unit of a copy's source (dst 0) or destination (dst 1): 1, or with REMAP_ENABLE the
 * component size (SET_REMAP_COMPONENTS 17:16) times that side's component count (21:20 source, 25:24
 * destination). LINE_LENGTH_IN, a block-linear side's WIDTH and ORIGIN_X count such units. */
uint32_t vgt_copy_unit(const vgt_ev_copy *k, int dst);
/* A block-linear side of a copy as vgt/blocklinear.h describes surfaces: its width in bytes (WIDTH times
 * unit), height, depth, and the block's height and depth from SET_*_BLOCK_SIZE (7:4, 11:8). */
vgt_bl_surface vgt_copy_bl_surface(const vgt_ev_copy_surface *s, uint32_t unit);

/* ---- the tracker ---- */

/* Read len bytes of GPU memory at va into dst; *known = how many of them were ever recorded. */
typedef vgt_status (*vgt_sem_mem_fn)(void *mem_ctx, uint64_t va, void *dst, uint64_t len, uint64_t *known,
                                     vgt_error *err);
typedef void (*vgt_event_fn)(void *ctx, const vgt_event *ev);

#define VGT_SEM_MAX_UPLOAD (64u << 20)   /* an I2M transfer larger than this is reported, its bytes dropped */

/* The stream-write overlay. libcuda writes each QMD into GPU memory with an inline-to-memory upload just
 * before the SEND_PCAS_A that launches it, so the QMD bytes are in the method stream, not in any captured
 * memory record. The tracker therefore remembers, per channel, the bytes that the stream itself wrote:
 * completed UPLOADs, inline QMDs (the GPU stores them at their QMD address), copy-engine fills
 * (memset remaps) and copies whose source bytes the overlay holds. A write it cannot know the bytes of
 * (a larger upload, a copy from elsewhere, block-linear layouts) is remembered as a hole that hides
 * older overlay bytes under it. Reads (vgt_sem_mem_read, and so every QMD read) take the newest
 * overlay bytes first and everything else from cfg.mem_read. Bounded: the oldest writes are forgotten
 * first. */
#define VGT_SEM_OVERLAY_BYTES (1u << 20)      /* bytes remembered per tracker (default) */
#define VGT_SEM_OVERLAY_WRITES 4096u          /* writes (extents, holes included) remembered per tracker */
#define VGT_SEM_OVERLAY_MAX_WRITE (16u << 10) /* a write larger than this is remembered as a hole */

typedef struct vgt_sem_tracker vgt_sem_tracker;

typedef struct vgt_sem_config {
    vgt_event_fn on_event;    /* required */
    void *ctx;
    vgt_sem_mem_fn mem_read;  /* optional: QMD bytes of launches by address */
    void *mem_ctx;
    uint32_t max_upload;      /* 0 = VGT_SEM_MAX_UPLOAD */
    int keep_upload_bytes;    /* 0: count upload bytes only (census speed); 1: collect them for ev.upload.data
                               * (uploads up to VGT_SEM_OVERLAY_MAX_WRITE are collected for the overlay anyway,
                               * and then also reach ev.upload.data) */
    int no_overlay;           /* 1: no stream-write overlay: memory reads go to mem_read only */
    uint32_t overlay_bytes;   /* 0: VGT_SEM_OVERLAY_BYTES; at least VGT_SEM_OVERLAY_MAX_WRITE is used */
    /* Optional: a draw was issued (ev: its DRAW event as far as it is known then). The DRAW event itself
     * comes later (instances are merged, vgt_sem_flush); the engine state as of this call is the state
     * the draw ran with, which is what a consumer that tracks state (vgt/draws.h) records here. */
    vgt_event_fn on_draw_issued;
    /* Optional: every method fed (pushed or emitted by a macro) that is not the data of an inline-to-memory
     * transfer, before the tracker acts on it: for consumers that shadow engine state (vgt/draws.h). */
    void (*on_method)(void *ctx, const vgt_method *m);
} vgt_sem_config;

vgt_status vgt_sem_new(vgt_sem_tracker **t, const vgt_sem_config *cfg, vgt_error *err);
void vgt_sem_free(vgt_sem_tracker *t);
/* Forget all state (a channel that was torn down and re-created). */
void vgt_sem_reset(vgt_sem_tracker *t);
/* 1: launches are followed but not delivered: no QMD is read or decoded, no LAUNCH, EMPTY_DISPATCH or QMD
 * release event comes; the tracker's state moves as it would (an inline QMD still lands in the overlay).
 * For a consumer that ignores those events for a while (the replay's work extractor, while no plan of its
 * runs): a launch is most of what such a consumer would pay for. 0 (the default): delivered again. */
void vgt_sem_skip_launches(vgt_sem_tracker *t, int skip);
/* The tracker a walk keeps per channel (in vgt_walk_channel.user, see walk.h on_channel): *slot already
 * holding one means the walker saw the channel re-allocated, so it is reset; otherwise one is created
 * (*slot is NULL when that fails). detach frees it and clears the slot (on_channel_end). */
vgt_status vgt_sem_attach(void **slot, const vgt_sem_config *cfg, vgt_error *err);
void vgt_sem_detach(void **slot);

/* Feed one method. Events it completes are delivered before it returns. Fails only when memory reads
 * fail with something other than "unknown bytes" (the reader's error is passed on). */
vgt_status vgt_sem_method(vgt_sem_tracker *t, const vgt_method *m, vgt_error *err);
/* Feed a non-increasing method run at once: m is its first method (m->data its value), data holds count
 * little-endian dwords (data[0..3] is m->data), at dwords m->pos.dword, +1, ... Events are the same as
 * feeding them one by one with vgt_sem_method; LOAD_INLINE_DATA runs are taken in bulk (one copy, no
 * per-dword work). The vgt_pb_callbacks.noninc_run / vgt_walk_callbacks.on_noninc_run path.
 * lent 0: data is valid during the call only (an upload's bytes are copied where they are kept). lent 1:
 * data stays valid and unchanged after the call, until vgt_sem_reclaim names it (a walk's lent records,
 * vgt_walk_submit.lent, with on_release calling vgt_sem_reclaim): uploads brought by such runs are
 * remembered without a copy (the overlay points at the push buffer's bytes, in one piece or several).
 * Everything the tracker answers is the same either way, but for ev.upload.data of an upload remembered in
 * several pieces without keep_upload_bytes: NULL (its bytes are not in one place). */
vgt_status vgt_sem_noninc_run(vgt_sem_tracker *t, const vgt_method *m, const uint8_t *data, uint32_t count,
                              int lent, vgt_error *err);
/* [bytes, bytes + len) are about to go (vgt_walk_callbacks.on_release): copy what still points into them. */
void vgt_sem_reclaim(vgt_sem_tracker *t, const uint8_t *bytes, uint64_t len);
/* 1 when m is inline data of an upload (LOAD_INLINE_DATA of a class whose I2M the tracker follows): a
 * run of it only copies bytes and raises at most the upload's event at its end, so a consumer may take
 * the whole run at once without checking anything between its dwords (the sim backend does). */
int vgt_sem_is_inline_data(vgt_sem_tracker *t, const vgt_method *m);

/* Methods an MME macro emitted: between vgt_sem_begin_macro and vgt_sem_end_macro, fed methods are the
 * call's emissions (pos: the CALL_MME_MACRO's), and the events they complete carry origin MACRO and the
 * call id. Feed a call's emissions where the GPU runs it: after its last CALL_MME_DATA, before the next
 * stream method of the channel (vgt_mme_trace delivers calls at exactly that point). */
void vgt_sem_begin_macro(vgt_sem_tracker *t, uint64_t call_id);
void vgt_sem_end_macro(vgt_sem_tracker *t);
/* Feed one completed call of vgt_mme_trace (mme_trace.h): its emissions between begin and end, each at the
 * call's position, in the call's class and subchannel. Drive it from vgt_mme_trace_config.on_call with the
 * tracker of the call's channel. */
struct vgt_mme_trace_call;
vgt_status vgt_sem_macro_call(vgt_sem_tracker *t, const struct vgt_mme_trace_call *call, vgt_error *err);

/* Read GPU memory as the stream left it so far: the overlay's bytes (newest first), the rest through
 * cfg.mem_read (a region it reports unmapped reads as unknown). *known = bytes known of len. */
vgt_status vgt_sem_mem_read(vgt_sem_tracker *t, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err);

/* The submission ended: deliver a pending merged draw and an upload or inline QMD still waiting for data
 * (marked incomplete). State (bound addresses, payloads) persists into the next submission. */
void vgt_sem_flush(vgt_sem_tracker *t);

/* A vgt_sem_mem_fn over a vgt_model (pass the model as mem_ctx). Defined in events_model.c. */
struct vgt_model;
vgt_status vgt_sem_model_reader(void *model, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err);
/* The same over the model a pointer holds (mem_ctx = &ptr), for walker callbacks that learn the model
 * only with the records: while *ptr is NULL nothing is known (zeros). */
vgt_status vgt_sem_model_ptr_reader(void *model_ptr, uint64_t va, void *dst, uint64_t len, uint64_t *known,
                                    vgt_error *err);

/* ---- formatting ---- */
const char *vgt_event_kind_name(vgt_event_kind k);     /* "LAUNCH", "EMPTY_DISPATCH"; "?" if unknown */
const char *vgt_sem_op_name(unsigned op);              /* "RELEASE", "ACQ_STRICT_GEQ", ... */
const char *vgt_sem_red_name(unsigned red);            /* "ADD", ...; "NONE" */
const char *vgt_sem_source_name(unsigned src);         /* "host", "report", "copy", "qmd" */
const char *vgt_topology_name(unsigned topo);          /* "TRIANGLES", ... */
const char *vgt_draw_kind_name(unsigned kind);         /* "arrays", "indexed", ... */
const char *vgt_event_origin_name(unsigned origin);    /* "stream", "macro"; "?" if unknown */

/* One line, no newline, e.g. "LAUNCH qmd=0x7f0000100 V04_00 grid=64x1x1 block=128x1x1 prog=0x..." ;
 * an event of macro origin ends in " [macro call N]".
 * Returns what snprintf returns (the full length; output truncated at cap). */
int vgt_event_format(const vgt_event *ev, char *buf, uint32_t cap);
/* One JSON object, no newline: {"event":"LAUNCH","seq":..,"entry":..,"dword":..,"class":..,...}; events of
 * macro origin add "origin":"macro","macro_call":N (stream events have no origin key). */
void vgt_event_print_json(FILE *f, const vgt_event *ev);

#ifdef __cplusplus
}
#endif
#endif
