/* sim_copy.c: the copy engine's COPY event (events.h; the methods are sem_copy.c's): linear, pitch,
 * block-linear and remapped copies and fills, through sim memory.
 *
 * Facts (NVIDIA open-gpu-doc classes/dma-copy/clc5b5.h .. clc8b5.h, the class tables of
 * trace-format/facts/classes/; what the drivers send, where the header leaves the unit open):
 *  - LINE_LENGTH_IN bytes (elements with REMAP_ENABLE) on LINE_COUNT lines (one without
 *    MULTI_LINE_ENABLE); a pitch side steps PITCH_IN/OUT bytes a line. The pitch is signed: NVIDIA's GL
 *    driver reads a render target back bottom-up with PITCH_OUT 0xffffff00 (corpus/gl_egl.vgt);
 *  - a block-linear side (LAUNCH_DMA SRC/DST_MEMORY_LAYOUT 0) is a surface at OFFSET_IN/OUT of
 *    SET_*_WIDTH x HEIGHT x DEPTH in blocks of SET_*_BLOCK_SIZE (WIDTH 3:0 ONE_GOB 0; HEIGHT 7:4 and
 *    DEPTH 11:8 log2 GOBs, at most THIRTYTWO_GOBS 5; GOB_HEIGHT 15:12 GOB_HEIGHT_FERMI_8 1); the copy
 *    reads or writes the rectangle at (*_ORIGIN_X, *_ORIGIN_Y) of slice SET_*_LAYER. Its pitch is not
 *    used. WIDTH and ORIGIN_X count bytes, or elements (component size x component count of
 *    SET_REMAP_COMPONENTS) with REMAP_ENABLE: NVK computes them so (src/nouveau/vulkan/nvk_cmd_copy.c)
 *    and NVIDIA's Vulkan driver reads a 64x64 RGBA8 target with width 0x40 and 4-byte elements
 *    (corpus/vk_triangle.vgt);
 *  - where a byte of a block-linear surface lies: vgt/blocklinear.h.
 * Not modelled, and reported: blocks wider than one GOB, other GOB heights, block sizes past 32 GOBs, a
 * rectangle that leaves its surface (x, y or the layer), physical addresses, copies over the sim's limit.
 * Bytes copied from unknown bytes are unknown (a shader or a draw may have written the source). */
#include <stdio.h>

#include "sim.h"
#include "vgt/blocklinear.h"
#include "vgt/nv/clc8b5.h"
#include "vgt/nv_facts.h"

#define COPY_CHUNK (64u << 10)

_Static_assert(NVC8B5_SET_SRC_BLOCK_SIZE_HEIGHT_SHIFT == NVC8B5_SET_DST_BLOCK_SIZE_HEIGHT_SHIFT &&
               NVC8B5_SET_SRC_BLOCK_SIZE_DEPTH_SHIFT == NVC8B5_SET_DST_BLOCK_SIZE_DEPTH_SHIFT &&
               NVC8B5_SET_SRC_BLOCK_SIZE_WIDTH_SHIFT == NVC8B5_SET_DST_BLOCK_SIZE_WIDTH_SHIFT &&
               NVC8B5_SET_SRC_BLOCK_SIZE_GOB_HEIGHT_SHIFT == NVC8B5_SET_DST_BLOCK_SIZE_GOB_HEIGHT_SHIFT,
               "SET_SRC_BLOCK_SIZE and SET_DST_BLOCK_SIZE share their fields");
_Static_assert(NVC8B5_SET_SRC_BLOCK_SIZE_HEIGHT_SHIFT == 4 && NVC8B5_SET_SRC_BLOCK_SIZE_DEPTH_SHIFT == 8,
               "vgt_copy_bl_surface reads HEIGHT at 7:4 and DEPTH at 11:8");
_Static_assert(NVC8B5_SET_SRC_BLOCK_SIZE_HEIGHT_THIRTYTWO_GOBS == VGT_BL_MAX_BLOCK_LOG2,
               "the copy engine's largest block is blocklinear.h's");

/* One side of a copy: where byte x of line l lies. */
typedef struct copy_side {
    uint64_t va;
    int64_t pitch;            /* pitch layout */
    int bl;                   /* block-linear: the fields below */
    vgt_bl_surface s;
    uint64_t x0;              /* the rectangle's origin: X in bytes, row, slice */
    uint32_t y0, z;
} copy_side;

/* The VA of byte x of line l, and in *run how many bytes from it (at most want) are contiguous. */
static uint64_t side_va(const copy_side *d, uint64_t x, uint32_t l, uint64_t want, uint64_t *run)
{
    if (!d->bl) {
        *run = want;
        return d->va + (uint64_t)((int64_t)l * d->pitch) + x;
    }
    uint64_t bx = d->x0 + x, r = vgt_bl_run(bx);
    *run = r < want ? r : want;
    return d->va + vgt_bl_offset(&d->s, bx, d->y0 + l, d->z);
}

/* A side from the event: a pitch side, or a block-linear one checked against what the sim models (the
 * rectangle of `lines` lines of `len` X units must lie in the surface). 0, or -1 with the reason in why. */
static int side_init(copy_side *d, uint64_t va, int pitch_layout, uint32_t pitch, const vgt_ev_copy_surface *bl,
                     uint32_t unit, uint64_t len, uint32_t lines, const char *name, char *why, size_t whylen)
{
    *d = (copy_side){.va = va, .pitch = (int32_t)pitch};
    if (pitch_layout) return 0;
    uint32_t bs = bl->block_size;
    d->bl = 1;
    d->s = vgt_copy_bl_surface(bl, unit);
    d->x0 = (uint64_t)bl->origin_x * unit;
    d->y0 = bl->origin_y;
    d->z = bl->layer;
    if (VGT_NV_GET(bs, NVC8B5_SET_SRC_BLOCK_SIZE_WIDTH) != NVC8B5_SET_SRC_BLOCK_SIZE_WIDTH_ONE_GOB ||
        VGT_NV_GET(bs, NVC8B5_SET_SRC_BLOCK_SIZE_GOB_HEIGHT) != NVC8B5_SET_SRC_BLOCK_SIZE_GOB_HEIGHT_GOB_HEIGHT_FERMI_8 ||
        !vgt_bl_span(&d->s)) {
        snprintf(why, whylen, "copy with a block-linear %s of %ux%ux%u, block size 0x%x, is not modelled", name,
                 bl->width, bl->height, bl->depth, bs);
        return -1;
    }
    if ((uint64_t)bl->origin_x + len > bl->width || (uint64_t)bl->origin_y + lines > bl->height ||
        bl->layer >= bl->depth) {
        snprintf(why, whylen, "copy of %llux%u at (%u, %u) layer %u leaves its block-linear %s of %ux%ux%u: not modelled",
                 (unsigned long long)len, lines, bl->origin_x, bl->origin_y, bl->layer, name, bl->width, bl->height,
                 bl->depth);
        return -1;
    }
    return 0;
}

/* n bytes at byte x of line l of a side into buf (and their known bits into known), run by run */
static vgt_status side_read(sim_mem *mem, const copy_side *d, uint64_t x, uint32_t l, uint8_t *buf, uint8_t *known,
                            uint32_t n, vgt_error *e)
{
    for (uint64_t run, done = 0; done < n; done += run) {
        uint64_t va = side_va(d, x + done, l, n - done, &run);
        if (sim_mem_read(mem, va, buf + done, run, "copy source", e) != VGT_OK ||
            sim_mem_known(mem, va, run, known + done, e) != VGT_OK)
            return VGT_E_FAULT;
    }
    return VGT_OK;
}

static vgt_status side_write(sim_mem *mem, const copy_side *d, uint64_t x, uint32_t l, const uint8_t *buf, uint32_t n,
                             int kind, vgt_error *e)
{
    for (uint64_t run, done = 0; done < n; done += run) {
        uint64_t va = side_va(d, x + done, l, n - done, &run);
        if (sim_mem_write(mem, va, buf + done, run, kind, "copy destination", e) != VGT_OK) return VGT_E_FAULT;
    }
    return VGT_OK;
}

static uint32_t copy_lines_count(const vgt_ev_copy *k) { return k->multi_line ? k->line_count : 1; }

/* A plain copy: each line's bytes in pieces contiguous on both sides (64 KiB on pitch sides, at most a
 * 16-byte run of a GOB on a block-linear one). */
static int copy_plain(vgt_backend *b, sim_mem *mem, const vgt_method *m, const vgt_ev_copy *k, const copy_side *src,
                      const copy_side *dst)
{
    vgt_error e;
    uint32_t lines = copy_lines_count(k);
    for (uint32_t l = 0; l < lines; l++)
        for (uint64_t x = 0, n; x < k->line_length; x += n) {
            uint64_t want = k->line_length - x < COPY_CHUNK ? k->line_length - x : COPY_CHUNK;
            uint64_t s = side_va(src, x, l, want, &n);
            uint64_t d = side_va(dst, x, l, n, &n);
            /* never-written bytes onto never-written bytes: nothing to store (a 1 GiB copy inside a huge,
             * empty mapping must not allocate a GiB) */
            if (!sim_mem_stored(mem, s, n) && !sim_mem_stored(mem, d, n)) {
                if (sim_mem_check(mem, s, n, "copy source", &e) != VGT_OK ||
                    sim_mem_note_write(mem, d, n, "copy destination", &e) != VGT_OK)
                    goto fault;
                continue;
            }
            /* the destination is as known as the source was */
            if (sim_mem_read(mem, s, b->copy_buf, n, "copy source", &e) != VGT_OK ||
                sim_mem_known(mem, s, n, b->copy_mask, &e) != VGT_OK ||
                sim_mem_write_masked(mem, d, b->copy_buf, n, b->copy_mask, "copy destination", &e) != VGT_OK)
                goto fault;
        }
    return 0;
fault:
    sim_fault(b, m, &e);
    return -1;
}

/* Remapped copy (SET_REMAP_COMPONENTS, classes/dma-copy/clc8b5.h): each destination element is
 * NUM_DST_COMPONENTS (25:24) components of COMPONENT_SIZE (17:16) bytes, each DST_X..W (3 bits at 4i)
 * taken from the source element's SRC_X..W (0-3), CONST_A/B (4, 5) or left alone (NO_WRITE, 6). */
static int copy_remap(vgt_backend *b, sim_mem *mem, const vgt_method *m, const vgt_ev_copy *k, const copy_side *src,
                      const copy_side *dst)
{
    uint32_t rc = k->remap_components, comp = ((rc >> 16) & 3) + 1, nsrc = ((rc >> 20) & 3) + 1, ndst = ((rc >> 24) & 3) + 1;
    uint32_t consts[2] = {k->remap_const_a, k->remap_const_b}, lines = copy_lines_count(k);
    uint8_t in[16] = {0}, known[16], out[16];
    vgt_error e;
    for (uint32_t l = 0; l < lines; l++)
        for (uint32_t x = 0; x < k->line_length; x++) {
            int src_known = 1;
            if (!k->memset) {
                if (side_read(mem, src, (uint64_t)x * nsrc * comp, l, in, known, nsrc * comp, &e) != VGT_OK) goto fault;
                for (uint32_t j = 0; j < nsrc * comp; j++) src_known &= known[j];
            }
            for (uint32_t c = 0; c < ndst; c++) {
                uint32_t sel = (rc >> (4 * c)) & 7;
                if (sel >= 6) continue;
                for (uint32_t j = 0; j < comp; j++)
                    out[j] = sel < 4 ? (sel < nsrc ? in[sel * comp + j] : 0) : (uint8_t)(consts[sel - 4] >> (8 * (j & 3)));
                int kind = sel < 4 && !src_known ? SIM_GPU_VOLATILE : SIM_GPU;
                if (side_write(mem, dst, ((uint64_t)x * ndst + c) * comp, l, out, comp, kind, &e) != VGT_OK) goto fault;
            }
        }
    return 0;
fault:
    sim_fault(b, m, &e);
    return -1;
}

/* The bytes a copy touches, counted so that a zero pitch cannot hide the work: every line moves its
 * line, whatever the pitches (a hostile LINE_COUNT of 2^32 with pitch 0 is 2^32 lines of work). */
static uint64_t copy_work(const vgt_ev_copy *k)
{
    uint64_t lines = copy_lines_count(k), line = (uint64_t)k->line_length * vgt_copy_unit(k, 1);
    if (!lines || !line) return 0;
    return line > UINT64_MAX / lines ? UINT64_MAX : line * lines;
}

void sim_copy(vgt_backend *b, sim_channel *c, const vgt_method *m, const vgt_ev_copy *k)
{
    char why[200];
    b->ctr.copies++;
    if (k->src_physical || k->dst_physical) {
        sim_not_modelled(b, m, "copy with a physical address is not modelled");
        return;
    }
    if (copy_work(k) > b->cfg.max_copy_bytes) {
        sim_not_modelled(b, m, "copy of %llu bytes (%llu lines) is over the sim's limit of %llu bytes",
                         (unsigned long long)k->bytes, (unsigned long long)copy_lines_count(k),
                         (unsigned long long)b->cfg.max_copy_bytes);
        return;
    }
    uint32_t src_unit = vgt_copy_unit(k, 0), dst_unit = vgt_copy_unit(k, 1);
    uint32_t lines = copy_lines_count(k);
    copy_side src = {0}, dst;
    /* a fill reads no source: its source side is whatever the state holds */
    if ((!k->memset && side_init(&src, k->src_va, k->src_pitch, k->pitch_in, &k->src_bl, src_unit, k->line_length, lines,
                                 "source", why, sizeof why) != 0) ||
        side_init(&dst, k->dst_va, k->dst_pitch, k->pitch_out, &k->dst_bl, dst_unit, k->line_length, lines,
                  "destination", why, sizeof why) != 0) {
        sim_not_modelled(b, m, "%s (src 0x%llx dst 0x%llx)", why, (unsigned long long)k->src_va,
                         (unsigned long long)k->dst_va);
        return;
    }
    sim_mem *mem = sim_vas_mem(b, c->vas);
    if ((k->remap ? copy_remap(b, mem, m, k, &src, &dst) : copy_plain(b, mem, m, k, &src, &dst)) == 0) {
        b->ctr.copy_bytes += k->bytes;
        if (k->memset) b->ctr.memsets++;
    }
}
