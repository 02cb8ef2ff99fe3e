/* sem_copy.c: copy-engine launches (NVIDIA open-gpu-doc classes/dma-copy/clc5b5.h .. clc8b5.h).
 *
 * State methods: SET_SEMAPHORE_A 0x240 (upper) / B 0x244 (lower) / PAYLOAD 0x248 / PAYLOAD_UPPER 0x24c
 * (C7B5+), OFFSET_IN_UPPER/LOWER 0x400/0x404, OFFSET_OUT_UPPER/LOWER 0x408/0x40c, PITCH_IN/OUT 0x410/0x414,
 * LINE_LENGTH_IN 0x418, LINE_COUNT 0x41c, SET_REMAP_CONST_A/B 0x700/0x704, SET_REMAP_COMPONENTS 0x708
 * (DST_X..W 2:0, 6:4, 10:8, 14:12: 0-3 source X-W, 4 CONST_A, 5 CONST_B, 6 NO_WRITE; COMPONENT_SIZE
 * 17:16 = bytes - 1; NUM_DST_COMPONENTS 25:24 = n - 1).
 * LAUNCH_DMA 0x300: DATA_TRANSFER_TYPE 1:0, SEMAPHORE_TYPE 4:3, SRC/DST_MEMORY_LAYOUT 7/8 (1 pitch),
 * MULTI_LINE_ENABLE 9, REMAP_ENABLE 10, SRC/DST_TYPE 12/13 (1 physical), SEMAPHORE_REDUCTION 17:14,
 * SEMAPHORE_REDUCTION_SIGN 18 (0 signed), SEMAPHORE_REDUCTION_ENABLE 19, SEMAPHORE_PAYLOAD_SIZE 27 (C7B5+).
 * A block-linear side (SRC/DST_MEMORY_LAYOUT 0) is described by SET_DST_BLOCK_SIZE 0x70c, SET_DST_WIDTH,
 * HEIGHT, DEPTH, LAYER 0x710-0x71c, SET_DST_ORIGIN 0x720 (X 15:0, Y 31:16), and SET_SRC_BLOCK_SIZE 0x728,
 * SET_SRC_WIDTH, HEIGHT, DEPTH, LAYER 0x72c-0x738, SET_SRC_ORIGIN 0x73c; SRC_ORIGIN_X/Y 0x744/0x748 and
 * DST_ORIGIN_X/Y 0x74c/0x750 hold the origin in 32 bits (every class C5B5..C8B5). The origin is one
 * register pair written either way: the packed SET_*_ORIGIN sets both coordinates, *_ORIGIN_X/Y one each
 * (NVIDIA's driver and NVK send the 32-bit ones on these classes; that the packed form writes the same
 * pair is our reading of the two names, no trace of ours uses it).
 * The bytes a small fill or a copy of known bytes (the overlay's, else the trace's captured memory) writes
 * go into the stream-write overlay (events.h).
 * A COPY event is delivered, or EMPTY_DMA when the launch moves no bytes (DATA_TRANSFER_TYPE NONE, or a
 * size of 0: events_count.c), then a SEM_RELEASE (source copy) when SEMAPHORE_TYPE is not NONE. */
#include <string.h>

#include "sem_internal.h"
#include "vgt/blocklinear.h"

#define BITS(v, hi, lo) (((v) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1u))

/* SEMAPHORE_REDUCTION 17:14: IMIN IMAX IXOR IAND IOR IADD INC DEC, then (skipping invalid codes) FADD FMIN FMAX. */
static const uint8_t copy_red[16] = { VGT_RED_MIN, VGT_RED_MAX, VGT_RED_XOR, VGT_RED_AND, VGT_RED_OR, VGT_RED_ADD,
                                      VGT_RED_INC, VGT_RED_DEC, 0, 0, VGT_RED_FADD, VGT_RED_FMIN, VGT_RED_FMAX,
                                      0, 0, 0 };

static int remap_is_memset(uint32_t comp)
{
    unsigned n = BITS(comp, 25, 24) + 1;
    for (unsigned i = 0; i < n; i++) {
        unsigned sel = (comp >> (4 * i)) & 7;
        if (sel < 4) return 0;   /* reads a source component */
    }
    return 1;
}

/* A fill's bytes: elements of NUM_DST_COMPONENTS components of COMPONENT_SIZE bytes, each CONST_A or
 * CONST_B (low bytes first). 0 when a component is not written (NO_WRITE) or reads a source. */
static int fill_bytes(const vgt_ev_copy *k, uint8_t *out, uint64_t n)
{
    unsigned comps = BITS(k->remap_components, 25, 24) + 1, size = BITS(k->remap_components, 17, 16) + 1;
    uint8_t elem[16];
    for (unsigned i = 0; i < comps; i++) {
        unsigned sel = (k->remap_components >> (4 * i)) & 7;
        if (sel != 4 && sel != 5) return 0;
        uint32_t v = sel == 4 ? k->remap_const_a : k->remap_const_b;
        for (unsigned b = 0; b < size; b++) elem[i * size + b] = (uint8_t)(v >> (8 * b));
    }
    unsigned esize = comps * size;
    for (uint64_t i = 0; i < n; i++) out[i] = elem[i % esize];
    return 1;
}

/* Where a copy's destination bytes may lie, as one extent from *va: a block-linear destination's whole
 * surface (its rectangle is somewhere in it; vgt/blocklinear.h, the X unit as sim_copy.c has it), else
 * the lines at the signed PITCH_OUT (a negative pitch walks them upwards from OFFSET_OUT). */
static uint64_t written_span(const vgt_ev_copy *k, uint64_t line, uint64_t *va)
{
    uint64_t lines = k->multi_line ? k->line_count : 1;
    if (!k->dst_pitch) {
        vgt_bl_surface s = vgt_copy_bl_surface(&k->dst_bl, vgt_copy_unit(k, 1));
        uint64_t span = vgt_bl_span(&s);
        if (span) return span;
        return line;   /* not a surface the engine could write: the first line's bytes, as ever */
    }
    if (!lines) return 0;
    int64_t pitch = (int32_t)k->pitch_out;
    uint64_t step = (uint64_t)(pitch < 0 ? -pitch : pitch) * (lines - 1);
    if (pitch < 0) *va -= step;
    return step + line;
}

/* What the copy wrote, into the overlay: the bytes of a small pitch fill or of a small pitch copy whose
 * source the overlay holds entirely; a hole over the destination otherwise. Physical addresses are not
 * in the VA space the overlay keeps. */
static void remember(vgt_sem_tracker *t, const vgt_ev_copy *k)
{
    if (k->dst_physical || !k->bytes) return;
    uint64_t line = k->line_count ? k->bytes / (k->multi_line ? k->line_count : 1) : k->bytes;
    int contiguous = !k->multi_line || k->line_count <= 1 || k->pitch_out == line;
    uint64_t hole_va = k->dst_va, span = k->dst_pitch && contiguous ? k->bytes : written_span(k, line, &hole_va);
    static const uint32_t max = VGT_SEM_OVERLAY_MAX_WRITE;
    uint8_t buf[VGT_SEM_OVERLAY_MAX_WRITE];
    if (!k->dst_pitch || !contiguous || k->bytes > max) { sem_overlay_hole(&t->overlay, hole_va, span); return; }
    int known = 0;
    if (k->memset) known = fill_bytes(k, buf, k->bytes);
    else if (!k->remap && k->src_pitch && !k->src_physical && (!k->multi_line || k->line_count <= 1 || k->pitch_in == line)) {
        uint8_t state[SEM_OVERLAY_READ];
        known = 1;
        for (uint64_t done = 0; known && done < k->bytes; done += SEM_OVERLAY_READ) {
            uint32_t n = k->bytes - done < SEM_OVERLAY_READ ? (uint32_t)(k->bytes - done) : SEM_OVERLAY_READ;
            known = sem_overlay_lookup(&t->overlay, k->src_va + done, n, buf + done, state) == n &&
                    memchr(state, 2, n) == NULL;
        }
    }
    if (!known && !k->memset && !k->remap && k->src_pitch && !k->src_physical &&
        (!k->multi_line || k->line_count <= 1 || k->pitch_in == line)) {
        /* a source the stream did not write: its bytes as the trace holds them (captured memory, e.g. a
         * staging buffer the driver filled before the doorbell) are what the engine copies. Shader
         * programs reach video memory this way (corpus/vk_triangle.vgt). */
        uint64_t got = 0;
        vgt_error ignored;
        known = vgt_sem_mem_read(t, k->src_va, buf, k->bytes, &got, &ignored) == VGT_OK && got == k->bytes;
    }
    if (known) sem_overlay_write(&t->overlay, k->dst_va, buf, k->bytes);
    else sem_overlay_hole(&t->overlay, k->dst_va, span);
}

static void launch(vgt_sem_tracker *t, const copy_state *c, const vgt_method *m)
{
    uint32_t d = m->data;
    vgt_event ev;
    sem_event_init(t, &ev, VGT_EV_COPY, m);
    vgt_ev_copy *k = &ev.u.copy;
    k->src_va = ((uint64_t)(c->in_upper & 0x1ffffffu) << 32) | c->in_lower;
    k->dst_va = ((uint64_t)(c->out_upper & 0x1ffffffu) << 32) | c->out_lower;
    k->pitch_in = c->pitch_in;
    k->pitch_out = c->pitch_out;
    k->line_length = c->line_length;
    k->line_count = c->line_count;
    k->transfer_type = (uint8_t)BITS(d, 1, 0);
    k->semaphore_type = (uint8_t)BITS(d, 4, 3);
    k->src_pitch = (uint8_t)BITS(d, 7, 7);
    k->dst_pitch = (uint8_t)BITS(d, 8, 8);
    k->multi_line = (uint8_t)BITS(d, 9, 9);
    k->remap = (uint8_t)BITS(d, 10, 10);
    k->src_physical = (uint8_t)BITS(d, 12, 12);
    k->dst_physical = (uint8_t)BITS(d, 13, 13);
    k->remap_const_a = c->remap_a;
    k->remap_const_b = c->remap_b;
    k->remap_components = c->remap_components;
    k->src_bl = c->src_bl;
    k->dst_bl = c->dst_bl;
    uint64_t line = c->line_length;
    if (k->remap) {
        line *= vgt_copy_unit(k, 1);
        k->memset = (uint8_t)remap_is_memset(c->remap_components);
    }
    /* DATA_TRANSFER_TYPE NONE moves nothing (a semaphore-only launch): the offsets and line length are
     * whatever an earlier copy left, not bytes this launch writes */
    k->bytes = !k->transfer_type ? 0 : k->multi_line ? line * c->line_count : line;
    k->raw = d;
    int payload64 = (m->cls & 0xffff) >= 0xc7b5 && BITS(d, 27, 27);
    k->sem_va = ((uint64_t)(c->sem_a & 0x1ffffffu) << 32) | c->sem_b;
    k->sem_payload = payload64 ? ((uint64_t)c->sem_payload_upper << 32) | c->sem_payload : c->sem_payload;
    if (!t->overlay.disabled) remember(t, k);
    if (!vgt_copy_moves_bytes(k)) ev.kind = VGT_EV_EMPTY_DMA;
    sem_emit(t, &ev);
    if (!k->semaphore_type) return;

    vgt_event se;
    sem_event_init(t, &se, VGT_EV_SEM_RELEASE, m);
    vgt_ev_sem *s = &se.u.sem;
    s->source = VGT_SEM_SRC_COPY;
    s->op = BITS(d, 19, 19) ? VGT_SEM_OP_REDUCTION : VGT_SEM_OP_RELEASE;
    s->size = payload64 ? 8 : 4;
    s->va = k->sem_va;
    s->payload = k->sem_payload;
    if (s->op == VGT_SEM_OP_REDUCTION) {
        s->reduction = copy_red[BITS(d, 17, 14)];
        if (!BITS(d, 18, 18)) s->flags |= VGT_SEM_FLAG_SIGNED;
    }
    if (k->semaphore_type == 2) s->flags |= VGT_SEM_FLAG_TIMESTAMP;
    if (BITS(d, 6, 5)) s->flags |= VGT_SEM_FLAG_AWAKEN;
    s->raw = d;
    sem_emit(t, &se);
}

/* SET_SRC/DST_ORIGIN: X 15:0, Y 31:16 */
static void set_origin(vgt_ev_copy_surface *s, uint32_t v)
{
    s->origin_x = BITS(v, 15, 0);
    s->origin_y = BITS(v, 31, 16);
}

void sem_copy(vgt_sem_tracker *t, sub_state *sub, unsigned role, const vgt_method *m)
{
    copy_state *c = &sub->copy;
    switch (role) {
    case R_CE_SEM_A: c->sem_a = m->data; break;
    case R_CE_SEM_B: c->sem_b = m->data; break;
    case R_CE_SEM_PAYLOAD: c->sem_payload = m->data; break;
    case R_CE_SEM_PAYLOAD_UPPER: c->sem_payload_upper = m->data; break;
    case R_CE_LAUNCH: launch(t, c, m); break;
    case R_CE_OFF_IN_UPPER: c->in_upper = m->data; break;
    case R_CE_OFF_IN_LOWER: c->in_lower = m->data; break;
    case R_CE_OFF_OUT_UPPER: c->out_upper = m->data; break;
    case R_CE_OFF_OUT_LOWER: c->out_lower = m->data; break;
    case R_CE_PITCH_IN: c->pitch_in = m->data; break;
    case R_CE_PITCH_OUT: c->pitch_out = m->data; break;
    case R_CE_LINE_LENGTH: c->line_length = m->data; break;
    case R_CE_LINE_COUNT: c->line_count = m->data; break;
    case R_CE_REMAP_A: c->remap_a = m->data; break;
    case R_CE_REMAP_B: c->remap_b = m->data; break;
    case R_CE_REMAP_COMPONENTS: c->remap_components = m->data; break;
    case R_CE_SRC_BLOCK_SIZE: c->src_bl.block_size = m->data; break;
    case R_CE_SRC_WIDTH: c->src_bl.width = m->data; break;
    case R_CE_SRC_HEIGHT: c->src_bl.height = m->data; break;
    case R_CE_SRC_DEPTH: c->src_bl.depth = m->data; break;
    case R_CE_SRC_LAYER: c->src_bl.layer = m->data; break;
    case R_CE_SRC_ORIGIN: set_origin(&c->src_bl, m->data); break;
    case R_CE_SRC_ORIGIN_X: c->src_bl.origin_x = m->data; break;
    case R_CE_SRC_ORIGIN_Y: c->src_bl.origin_y = m->data; break;
    case R_CE_DST_BLOCK_SIZE: c->dst_bl.block_size = m->data; break;
    case R_CE_DST_WIDTH: c->dst_bl.width = m->data; break;
    case R_CE_DST_HEIGHT: c->dst_bl.height = m->data; break;
    case R_CE_DST_DEPTH: c->dst_bl.depth = m->data; break;
    case R_CE_DST_LAYER: c->dst_bl.layer = m->data; break;
    case R_CE_DST_ORIGIN: set_origin(&c->dst_bl, m->data); break;
    case R_CE_DST_ORIGIN_X: c->dst_bl.origin_x = m->data; break;
    case R_CE_DST_ORIGIN_Y: c->dst_bl.origin_y = m->data; break;
    }
}
