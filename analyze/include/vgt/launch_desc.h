/* launch_desc.h: the work a channel's method stream asks of the GPU, as self-contained descriptions that
 * a replayer can rebuild without the captured push buffers (the replay's synth lane, `vgt launches`,
 * `vgt decompile`).
 *
 * An extractor (vgt_ldx) is fed a channel's decoded methods in stream order (vgt_ldx_method), runs the
 * channel's semantic tracker (events.h) and MME (mme.h: methods a macro emits count like pushed ones, so a
 * QMD a macro builds is seen too) and hands out one vgt_work per thing the GPU must do:
 *
 *   LAUNCH          a compute launch that runs threads, described (vgt_launch_desc): the QMD (from memory,
 *                   from an inline-to-memory upload of the same stream, inline, or built by a macro),
 *                   decoded, with the bits no QMD field names kept apart (vgt_qmd_unnamed); the program
 *                   (SASS bytes from its entry point, as the trace recorded them); the constant buffers
 *                   with their bytes and each address-bearing 64-bit word (one whose value lies in a GPU
 *                   mapping of the trace at the launch); the buffers those words point into; grid, block,
 *                   shared memory, registers, barriers (in the QMD); the release semaphores (in the QMD);
 *                   and the compute class state in effect (the SET_* methods last written on the class).
 *   EMPTY_DISPATCH  a QMD scheduled only for its dependents or releases (runs no threads)
 *   UPLOAD          an inline-to-memory transfer, with its bytes
 *   COPY            a copy-engine LAUNCH_DMA (copy, memset, or semaphore only: ev.kind COPY or EMPTY_DMA),
 *                   with its release
 *   SEMAPHORE       a host or report semaphore release, acquire or report
 *   OTHER           work no description covers (draws, 3D program binds)
 *
 * Memory: contents the launch sees come from cfg.mem_read (the trace model for analysis; a replay's own
 * memory for the synth lane), after what the stream itself wrote (the tracker's overlay). The program's
 * bytes must be in the trace (cfg.trace_read): a launch whose entry point the trace never recorded gets a
 * `problem` and must not be synthesized (unknown SASS raises engine exceptions on the GPU).
 * Pointers inside a vgt_work are valid only during the callback. */
#ifndef VGT_LAUNCH_DESC_H
#define VGT_LAUNCH_DESC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"
#include "vgt/events.h"
#include "vgt/qmd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vgt_model;

#define VGT_LD_PROGRAM_MAX (256u << 10)   /* program bytes kept from the entry point (known, in one mapping) */
#define VGT_LD_CB_MAX (64u << 10)         /* a constant buffer's bytes (QMD sizes are 17 bits) */
#define VGT_LD_MAX_ADDRS 256u             /* address-bearing words kept per launch */
#define VGT_LD_MAX_BUFFERS 64u
#define VGT_LD_MAX_STATE 512u             /* compute class state methods */

/* Where the QMD came from. */
enum vgt_ld_qmd_source {
    VGT_LD_QMD_MEMORY = 1,    /* by address, bytes from memory (the trace model or the replay's) */
    VGT_LD_QMD_UPLOAD = 2,    /* by address, bytes uploaded by the stream (I2M) before the launch */
    VGT_LD_QMD_INLINE = 3,    /* LOAD_INLINE_QMD_DATA in the push buffer */
    VGT_LD_QMD_MACRO = 4,     /* inline or by address, the methods emitted by an MME macro */
};
const char *vgt_ld_qmd_source_name(unsigned s);   /* "memory", "upload", "inline", "macro" */

/* A 64-bit word of a constant buffer whose value lies in a GPU mapping: a pointer (CUDA's parameters,
 * the driver's own tables). */
typedef struct vgt_ld_addr {
    uint8_t cb;               /* constant buffer slot */
    uint32_t offset;          /* byte offset in it (8-byte aligned) */
    uint64_t value;
    uint32_t buffer;          /* index into buffers */
} vgt_ld_addr;

/* What an address word points into: the GPU mapping at the launch. */
enum vgt_ld_buffer_kind { VGT_LD_BUF_MEMORY = 0, VGT_LD_BUF_CB = 1, VGT_LD_BUF_PROGRAM = 2, VGT_LD_BUF_QMD = 3 };
typedef struct vgt_ld_buffer {
    uint64_t va, len;         /* the mapping */
    uint64_t map_seq;         /* its GPU_MAP record */
    uint64_t known;           /* bytes of it the trace recorded (MEMORY records, uploads) at the launch,
                                 counted up to VGT_LD_CB_MAX * 16 */
    uint8_t kind;             /* vgt_ld_buffer_kind: also holds a constant buffer / the program / the QMD */
    uint8_t cb;               /* VGT_LD_BUF_CB: the slot */
    uint32_t words;           /* address words pointing into it */
} vgt_ld_buffer;

typedef struct vgt_ld_cb {
    uint8_t valid;            /* CONSTANT_BUFFER_VALID */
    uint8_t mapped;           /* its VA lies in a GPU mapping (a valid slot at VA 0 is bound to nothing) */
    uint64_t va;
    uint32_t size;
    uint32_t known;           /* bytes of it whose contents are known */
    const uint8_t *bytes;     /* size bytes (unknown ones 0) */
} vgt_ld_cb;

typedef struct vgt_ld_state {
    uint32_t method, value;   /* a SET_* method of the compute class and the value last written */
} vgt_ld_state;

typedef struct vgt_launch_desc {
    uint64_t index;           /* 0-based over the work the extractor saw of this kind (launches; empty dispatches) */
    uint64_t submission, seq;
    vgt_mpos pos;             /* the method that launched it */
    uint32_t client, channel, host_cls;
    uint32_t cls, subch;      /* the compute class and subchannel */
    uint8_t qmd_source;       /* vgt_ld_qmd_source */
    uint8_t empty;            /* runs no threads (EMPTY_DISPATCH) */
    uint64_t macro_call;      /* VGT_LD_QMD_MACRO: the extractor's call number */
    uint64_t qmd_va;
    uint32_t signal;          /* SEND_SIGNALING_PCAS*_B data (by address), else 0 */
    uint32_t signal_method;   /* its method (0 inline) */
    vgt_qmd_version version;
    uint32_t qmd_size, qmd_known;   /* the layout's bytes; how many of them were known */
    uint8_t qmd_bytes[VGT_QMD_MAX_BYTES];
    uint8_t unnamed[VGT_QMD_MAX_BYTES];   /* vgt_qmd_unnamed(): the bits no field of the table names */
    vgt_qmd qmd;
    uint64_t program_va;
    uint32_t program_len;     /* known bytes from the entry point, within its mapping, up to VGT_LD_PROGRAM_MAX */
    uint64_t program_hash;    /* XXH64 of them */
    const uint8_t *program;
    vgt_ld_cb cb[VGT_QMD_MAX_CB];
    vgt_ld_addr addrs[VGT_LD_MAX_ADDRS];
    uint32_t naddrs, addrs_dropped;
    vgt_ld_buffer buffers[VGT_LD_MAX_BUFFERS];
    uint32_t nbuffers;
    vgt_ld_state state[VGT_LD_MAX_STATE];
    uint32_t nstate;
    char problem[240];        /* why it must not be rebuilt ("" when it may): QMD not known, program not in the trace */
} vgt_launch_desc;

typedef enum vgt_work_kind {
    VGT_WORK_LAUNCH = 1,
    VGT_WORK_EMPTY_DISPATCH = 2,
    VGT_WORK_UPLOAD = 3,
    VGT_WORK_COPY = 4,
    VGT_WORK_SEMAPHORE = 5,   /* semaphore release/acquire, report, NOTIFY (a notification written at an address) */
    VGT_WORK_OTHER = 6,
} vgt_work_kind;
const char *vgt_work_kind_name(unsigned k);   /* "launch", "empty_dispatch", "upload", "copy", "semaphore", "other" */

typedef struct vgt_work {
    vgt_work_kind kind;
    uint64_t index;           /* 0-based over all work of the extractor */
    uint64_t submission, seq;
    uint32_t client, channel, host_cls;
    const vgt_event *ev;      /* the event (LAUNCH/EMPTY_DISPATCH: its LAUNCH event) */
    uint32_t method;          /* the method that completed it (emitted by a macro: the emitted one) */
    const vgt_launch_desc *launch;   /* LAUNCH, EMPTY_DISPATCH */
} vgt_work;

typedef void (*vgt_work_fn)(void *ctx, const vgt_work *w);

typedef struct vgt_ldx_config {
    vgt_work_fn on_work;      /* required */
    void *ctx;
    vgt_sem_mem_fn mem_read;  /* memory as the launch sees it (QMDs by address, constant buffers); NULL: the trace
                               * (trace_read and the copies of it) */
    void *mem_ctx;
    vgt_sem_mem_fn trace_read;/* what the trace recorded (program bytes; copies of it count too); may be NULL */
    void *trace_ctx;
    const struct vgt_model *model;   /* GPU mappings (address words, buffers); may be set later */
} vgt_ldx_config;

typedef struct vgt_ldx vgt_ldx;
typedef struct vgt_ldx_channel vgt_ldx_channel;

vgt_status vgt_ldx_new(const vgt_ldx_config *cfg, vgt_ldx **out, vgt_error *err);
void vgt_ldx_free(vgt_ldx *x);
void vgt_ldx_set_model(vgt_ldx *x, const struct vgt_model *model);
/* The CPU wrote [va, va+len) (a MEMORY record): what copies wrote there is no longer what memory holds. */
void vgt_ldx_forget(vgt_ldx *x, uint64_t va, uint64_t len);
/* Every channel's macro calls share one MME budget (vgt/mme.h vgt_mme_budget, the default limits): a call
 * over it is not run, so the work it would have built is not seen. Calls not run so far, and what the
 * budget says (vgt_mme_budget_note: which budget ran out, where; 0 and "" when none was refused). */
uint64_t vgt_ldx_calls_refused(const vgt_ldx *x);
int vgt_ldx_budget_note(const vgt_ldx *x, char *buf, size_t size);
/* Bytes of [va, va+len) as the trace determines them: its records, and what uploads and copies of known
 * bytes wrote (*known: how many). */
vgt_status vgt_ldx_read_trace(vgt_ldx *x, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err);
/* One per channel: its tracker, MME and compute state. */
vgt_status vgt_ldx_channel_new(vgt_ldx *x, uint32_t client, uint32_t channel, uint32_t host_cls, vgt_ldx_channel **out,
                               vgt_error *err);
void vgt_ldx_channel_free(vgt_ldx_channel *c);
void vgt_ldx_submit_begin(vgt_ldx_channel *c, uint64_t submission, uint64_t seq);
/* quiet 1: the channel's methods still set its state (bindings, macros, compute class state) and what
 * uploads and copies write is still kept, but no launch is described (its QMD, program and constant
 * buffers are not read) and no work is handed to on_work: for submissions whose work nobody will use
 * (the replay's lane auto runs them verbatim). quiet 0 (the default): everything. */
void vgt_ldx_channel_quiet(vgt_ldx_channel *c, int quiet);
/* The glue between a trace walk (vgt/walk.h) and the extractor, the same for every verb that walks: each
 * record sets the model and a MEMORY record makes what copies wrote there stale (on_record); each channel
 * incarnation gets an extractor channel in chan->user (on_channel; its failure is returned), freed at its
 * end (on_channel_end). */
struct vgt_record;
struct vgt_walk_channel;
void vgt_ldx_walk_record(vgt_ldx *x, const struct vgt_record *rec, const struct vgt_model *model);
vgt_status vgt_ldx_walk_channel(vgt_ldx *x, struct vgt_walk_channel *chan, vgt_error *err);
void vgt_ldx_walk_channel_end(struct vgt_walk_channel *chan);
/* One decoded method, in stream order (masked methods are ignored, as the GPU ignores them). */
vgt_status vgt_ldx_method(vgt_ldx_channel *c, const vgt_method *m, vgt_error *err);
/* A non-increasing run (vgt_pb_callbacks.noninc_run: m its first method, data its count little-endian
 * dwords): the same as feeding its methods one by one, at a fraction of the cost. */
vgt_status vgt_ldx_noninc_run(vgt_ldx_channel *c, const vgt_method *m, const uint8_t *data, uint32_t count,
                              vgt_error *err);
/* The submission ended: a pending macro call runs, pending events are delivered. */
vgt_status vgt_ldx_submit_end(vgt_ldx_channel *c, vgt_error *err);

/* ---- output (launch_desc_print.c) ---- */
#define VGT_LD_PRINT_BYTES 1u     /* program and constant buffer bytes as hex */
/* One JSON object, no newline. */
void vgt_launch_desc_print_json(FILE *f, const vgt_launch_desc *d, unsigned flags);
/* Readable lines. */
void vgt_launch_desc_print_text(FILE *f, const vgt_launch_desc *d, unsigned flags);
/* A copy-engine description (COPY work) as one JSON object / one line. */
void vgt_work_copy_print_json(FILE *f, const vgt_work *w);
void vgt_work_copy_print_text(FILE *f, const vgt_work *w);

#ifdef __cplusplus
}
#endif
#endif
