/* sem_internal.h: the semantic tracker's state and its per-decoder entry points (private to analyze/).
 *
 * events.c owns the tracker and dispatch: a method's class picks a family, the family's table (built
 * from events_table.c) maps the method offset to a role, and the role's decoder (sem_*.c) updates the
 * subchannel's state and emits events. Host methods (< 0x100) use the channel's host state whatever the
 * subchannel. Events are emitted in method order: a draw held back for instance merging is delivered
 * before any other event (sem_emit). */
#ifndef VGT_SEM_INTERNAL_H
#define VGT_SEM_INTERNAL_H

#include "vgt/events.h"
#include "vgt/nv_facts.h"

/* The class families of the facts (vgt_nv_class_family); 2D has no methods the tracker listens to. */
enum sem_family {
    FAM_NONE = VGT_NV_FAM_NONE, FAM_HOST = VGT_NV_FAM_HOST, FAM_COMPUTE = VGT_NV_FAM_COMPUTE, FAM_3D = VGT_NV_FAM_3D,
    FAM_COPY = VGT_NV_FAM_COPY, FAM_I2M = VGT_NV_FAM_I2M, FAM_COUNT_ = VGT_NV_FAM_COUNT_
};

/* Roles: what a method means to the tracker. Array methods carry their index separately. The roles are
 * grouped by decoder, in this order: dispatch() in events.c picks the decoder by range (R_SEMA_D,
 * R_I2M_DATA, R_REPX_EXECUTE, R_INLINE_QMD_DATA, R_BASE_INSTANCE, R_PIPE_ADDR_B, R_NOTIFY end the
 * groups). */
enum sem_role {
    R_NONE = 0,
    /* host */
    R_SEM_ADDR_LO, R_SEM_ADDR_HI, R_SEM_PAYLOAD_LO, R_SEM_PAYLOAD_HI, R_SEM_EXECUTE,
    R_SEMA_A, R_SEMA_B, R_SEMA_C, R_SEMA_D,
    /* inline-to-memory (3D, compute, A140) */
    R_I2M_LINE_LENGTH, R_I2M_LINE_COUNT, R_I2M_OFFSET_UPPER, R_I2M_OFFSET, R_I2M_PITCH, R_I2M_LAUNCH, R_I2M_DATA,
    /* report semaphores (3D, compute) */
    R_REP_A, R_REP_B, R_REP_C, R_REP_D,
    R_REPX_PAYLOAD_LO, R_REPX_PAYLOAD_HI, R_REPX_ADDR_LO, R_REPX_ADDR_HI, R_REPX_EXECUTE,
    /* compute launches */
    R_PCAS_A, R_SIGNAL_PCAS_B, R_SIGNAL_PCAS2_B, R_INLINE_QMD_A, R_INLINE_QMD_B, R_INLINE_QMD_DATA,
    /* 3D draws */
    R_BEGIN, R_END, R_VA_START, R_DRAW_VA, R_VA_BE_A, R_VA_BE_B, R_IB_BE_A, R_IB_BE_B,
    R_VA_INST_FIRST, R_VA_INST_SUBSEQ, R_IB_INST_FIRST, R_IB_INST_SUBSEQ,
    R_DRAW_IB, R_IB_A, R_IB_B, R_IB_E, R_IB_F,
    R_INLINE_INDEX, R_INLINE_INDEX2X16, R_INLINE_INDEX4X8, R_DRAW_ZERO_INDEX, R_DRAW_AUTO,
    R_DRAW_CTL_A, R_DRAW_CTL_B, R_TOPO_CONTROL, R_TOPOLOGY,
    R_BASE_VERTEX, R_BASE_INSTANCE,
    /* 3D programs */
    R_PIPE_SHADER, R_PIPE_REGCOUNT, R_PIPE_ADDR_A, R_PIPE_ADDR_B,
    /* 3D clears and targets, notifiers (3D, compute) */
    R_CT_A, R_CT_B, R_CT_WIDTH, R_CT_HEIGHT, R_CT_MEMORY, R_CLEAR_VALUE, R_CT_FORMAT, R_CT_SELECT, R_ZT_A, R_ZT_B, R_CLEAR, R_NOTIFY_A, R_NOTIFY_B, R_NOTIFY,
    /* copy engine */
    R_CE_SEM_A, R_CE_SEM_B, R_CE_SEM_PAYLOAD, R_CE_SEM_PAYLOAD_UPPER, R_CE_LAUNCH,
    R_CE_OFF_IN_UPPER, R_CE_OFF_IN_LOWER, R_CE_OFF_OUT_UPPER, R_CE_OFF_OUT_LOWER,
    R_CE_PITCH_IN, R_CE_PITCH_OUT, R_CE_LINE_LENGTH, R_CE_LINE_COUNT,
    R_CE_REMAP_A, R_CE_REMAP_B, R_CE_REMAP_COMPONENTS,
    R_CE_SRC_BLOCK_SIZE, R_CE_SRC_WIDTH, R_CE_SRC_HEIGHT, R_CE_SRC_DEPTH, R_CE_SRC_LAYER, R_CE_SRC_ORIGIN,
    R_CE_SRC_ORIGIN_X, R_CE_SRC_ORIGIN_Y,
    R_CE_DST_BLOCK_SIZE, R_CE_DST_WIDTH, R_CE_DST_HEIGHT, R_CE_DST_DEPTH, R_CE_DST_LAYER, R_CE_DST_ORIGIN,
    R_CE_DST_ORIGIN_X, R_CE_DST_ORIGIN_Y,
    R_COUNT_
};

/* One table row: family, first method offset, array shape, role, lowest class it applies to. */
typedef struct sem_method_spec {
    uint8_t family;
    uint16_t mthd;
    uint16_t count, stride;
    uint8_t role;
    uint16_t min_class;       /* 0: every class of the family */
    uint16_t first;           /* array index of the row's first method (a row may hold the tail of an array) */
} sem_method_spec;

extern const sem_method_spec vgt_sem_method_table[];
extern const uint32_t vgt_sem_method_table_count;

#define SEM_MTHD_SLOTS 4096u  /* method offsets 0x0000..0x3ffc */

/* A lookup cell: the role (R_NONE = not listened to), the array index, the lowest class it applies to. */
typedef struct sem_cell { uint8_t role; uint8_t index; uint16_t min_class; } sem_cell;

/* Bytes of an upload where a lent run brought them (see i2m_state.pieces and sem_extent). */
typedef struct sem_piece {
    const uint8_t *src;
    uint64_t len;
} sem_piece;
#define SEM_PIECES 32u   /* drivers split an upload into runs of 1 KiB: 16 for the largest one remembered */

typedef struct i2m_state {
    uint32_t line_length, line_count, pitch_out, offset_upper, offset;
    int active;               /* LAUNCH_DMA seen, waiting for data */
    uint32_t raw;
    vgt_method launch;        /* the LAUNCH_DMA, for an upload cut short at a flush */
    uint64_t expected, received;
    uint8_t *buf;             /* where this transfer's bytes go: store, or NULL when not collected */
    const uint8_t *bytes;     /* where they are: buf, or the data of the one run that brought them all (used
                               * in place, not copied: that run's bytes are valid while it is handled) */
    /* Lent runs (vgt_sem_noninc_run, lent 1) that brought the bytes so far, in order, not copied into buf yet
     * (npieces 0: none; sem_i2m_gather copies them before anything else is written to buf). */
    sem_piece pieces[SEM_PIECES];
    uint32_t npieces;
    uint8_t *store;           /* the allocation (keep_upload_bytes), cap bytes */
    uint64_t cap;
} i2m_state;

typedef struct report_state {
    uint32_t a, b, c;         /* SET_REPORT_SEMAPHORE_A/B/C */
    uint32_t payload_lo, payload_hi, addr_lo, addr_hi;   /* Hopper-style REPORT_SEMAPHORE_* */
} report_state;

typedef struct compute_state {
    int pcas_pending;
    uint64_t pcas_qmd_va;
    uint32_t inline_a, inline_b;
    uint32_t inline_dwords;   /* dwords the inline QMD needs: 64 or 96 */
    uint32_t inline_loaded;   /* dwords received so far (highest index + 1) */
    uint8_t inline_qmd[VGT_QMD_MAX_BYTES];
} compute_state;

typedef struct pipe_state { uint32_t shader, regcount, addr_a, addr_b; } pipe_state;

typedef struct draw_state {
    int in_begin;
    uint32_t begin;           /* BEGIN data */
    uint32_t va_start, ib_first, ib_a, ib_b, ib_e, base_vertex, base_instance;
    uint32_t va_be_a, ib_be_a;
    uint32_t inline_count;    /* inline indices between BEGIN and END */
    int inline_seen;
    uint32_t instance;        /* instance of the current BEGIN (0 FIRST, n SUBSEQUENT) */
    uint32_t draw_ctl_a, draw_ctl_b;   /* SET_DRAW_CONTROL_A/B: topology and instances of *_BEGIN_END_A/B */
    uint32_t topo_override;   /* SET_PRIMITIVE_TOPOLOGY_CONTROL OVERRIDE: 1 = SET_PRIMITIVE_TOPOLOGY rules */
    uint32_t topology;        /* SET_PRIMITIVE_TOPOLOGY V */
    pipe_state pipe[6];
    /* what CLEAR_SURFACE needs: SET_COLOR_TARGET_A/B/FORMAT(j), SET_CT_SELECT, SET_ZT_A/B */
    uint32_t ct_a[8], ct_b[8], ct_format[8], ct_width[8], ct_height[8], ct_memory[8], ct_select, zt_a, zt_b;
    uint32_t clear_value[4];  /* SET_COLOR_CLEAR_VALUE(0..3) */
    uint32_t notify_a, notify_b;   /* SET_NOTIFY_A/B (3D and compute) */
} draw_state;

typedef struct copy_state {
    uint32_t sem_a, sem_b, sem_payload, sem_payload_upper;
    uint32_t in_upper, in_lower, out_upper, out_lower, pitch_in, pitch_out, line_length, line_count;
    uint32_t remap_a, remap_b, remap_components;
    vgt_ev_copy_surface src_bl, dst_bl;   /* the block-linear surfaces (SET_SRC_*, SET_DST_*) */
} copy_state;

typedef struct sub_state {
    report_state report;
    compute_state compute;
    draw_state draw;
    copy_state copy;
} sub_state;

typedef struct host_state {
    uint32_t addr_lo, addr_hi, payload_lo, payload_hi;
    uint32_t a, b, c;         /* SEMAPHOREA/B/C */
} host_state;

/* The stream-write overlay (events.h): a ring of extents, oldest first, whose bytes live in a ring arena
 * in the same order; a hole (off == SEM_HOLE) hides older bytes under it. */
#define SEM_HOLE UINT32_MAX
/* src: the bytes are still the caller's at src (lent, sem_overlay_write_lent), their arena room reserved
 * but not written; npieces: they are the caller's in pieces, whose list (sem_piece) is written in their
 * arena room instead (sem_overlay_write_pieces); else in the arena at off. */
typedef struct sem_extent { uint64_t va, len; uint32_t off; const uint8_t *src; uint32_t npieces; } sem_extent;
typedef struct sem_overlay {
    int disabled;             /* config, or an allocation failed: remember nothing */
    uint8_t *arena;           /* size bytes; grows from a small first allocation up to cap before it wraps, so
                               * a channel holds about what its stream wrote, never more than cap */
    uint32_t size, cap, head; /* allocated, limit, next arena byte to fill */
    sem_extent *ext;          /* slots slots (grows up to VGT_SEM_OVERLAY_WRITES) */
    uint32_t slots, first, n; /* ring: oldest slot, extents held */
    uint64_t lo, hi;          /* VA span of every write since the reset (a quick miss test) */
} sem_overlay;

void sem_overlay_write(sem_overlay *o, uint64_t va, const uint8_t *bytes, uint64_t len);   /* bytes NULL: a hole */
void sem_overlay_hole(sem_overlay *o, uint64_t va, uint64_t len);
/* As sem_overlay_write, the bytes left where they are until sem_overlay_reclaim names them (vgt_sem_reclaim):
 * the same room taken and the same extents forgotten, so that what the overlay holds does not depend on it. */
void sem_overlay_write_lent(sem_overlay *o, uint64_t va, const uint8_t *bytes, uint64_t len);
void sem_overlay_reclaim(sem_overlay *o, const uint8_t *bytes, uint64_t len);
/* The same for bytes in lent pieces; 0 when their list does not fit in their room (nothing written). */
int sem_overlay_write_pieces(sem_overlay *o, uint64_t va, const sem_piece *p, uint32_t n, uint64_t len);
/* Bytes [va, va+len) the overlay decides (len <= SEM_OVERLAY_READ): state[i] 0 undecided, 1 known (dst[i] set),
 * 2 hidden by a hole. Returns the number decided. */
#define SEM_OVERLAY_READ 512u
uint32_t sem_overlay_lookup(const sem_overlay *o, uint64_t va, uint32_t len, uint8_t *dst, uint8_t *state);
void sem_overlay_reset(sem_overlay *o);
void sem_overlay_free(sem_overlay *o);

struct vgt_sem_tracker {
    vgt_sem_config cfg;
    uint8_t origin;           /* vgt_event_origin of the methods being fed */
    uint64_t macro_call;
    sem_overlay overlay;
    uint32_t last_cls;        /* class of the last engine method, and its family's lookup table */
    const sem_cell *last_tab;
    uint32_t hot_cls, hot_mthd;   /* the last LOAD_INLINE_DATA seen (class, address): the fast path */
    int run_lent;             /* the run being handled is lent (vgt_sem_noninc_run, lent 1) */
    host_state host;
    i2m_state i2m[8];         /* per subchannel, apart from sub[] so the hot LOAD_INLINE_DATA path is cheap */
    sub_state sub[8];
    int draw_pending;         /* a draw held back for instance merging */
    int skip_launches;        /* vgt_sem_skip_launches */
    vgt_event pending;
};

/* Deliver an event (after a held draw). */
void sem_emit(vgt_sem_tracker *t, const vgt_event *ev);
void sem_flush_draw(vgt_sem_tracker *t);
void sem_event_init(const vgt_sem_tracker *t, vgt_event *ev, vgt_event_kind kind, const vgt_method *m);
/* vgt_sem_mem_read for the decoders. */
vgt_status sem_mem_read(vgt_sem_tracker *t, uint64_t va, uint8_t *dst, uint32_t len, uint32_t *known, vgt_error *err);

/* Decoders: one per area, each given the role, the array index and the method. */
void sem_host(vgt_sem_tracker *t, unsigned role, const vgt_method *m);
vgt_status sem_i2m(vgt_sem_tracker *t, i2m_state *s, unsigned role, const vgt_method *m, vgt_error *err);
/* LOAD_INLINE_DATA is most of a bulk push buffer: the hot path, inlined into vgt_sem_method. */
void sem_i2m_collect(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m);
void sem_i2m_gather(i2m_state *s);
void sem_i2m_complete(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m);
static inline void sem_i2m_data(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m)
{
    if (__builtin_expect(!s->active, 0)) return;   /* data without a LAUNCH_DMA: nothing to attach it to */
    if (s->buf && s->received < s->expected) {
        if (s->npieces) sem_i2m_gather(s);
        sem_i2m_collect(t, s, m);
    }
    s->received += 4;
    if (s->received >= s->expected) sem_i2m_complete(t, s, m);
}
/* count LOAD_INLINE_DATA dwords at once (m: the first); returns how many it took (the rest have no
 * transfer to go to) */
uint32_t sem_i2m_bulk(vgt_sem_tracker *t, i2m_state *s, const vgt_method *m, const uint8_t *data, uint32_t count);
void sem_i2m_flush(vgt_sem_tracker *t, i2m_state *s, unsigned subch);
void sem_report(vgt_sem_tracker *t, sub_state *s, unsigned role, const vgt_method *m);
vgt_status sem_launch(vgt_sem_tracker *t, sub_state *s, unsigned role, unsigned index, const vgt_method *m,
                      vgt_error *err);
void sem_draw(vgt_sem_tracker *t, sub_state *s, unsigned role, const vgt_method *m);
void sem_program(vgt_sem_tracker *t, sub_state *s, unsigned role, unsigned index, const vgt_method *m);
void sem_copy(vgt_sem_tracker *t, sub_state *s, unsigned role, const vgt_method *m);
void sem_clear(vgt_sem_tracker *t, sub_state *s, unsigned role, unsigned index, const vgt_method *m);

#endif
