/* test_replay_lane1.c: the parts of lane 1 on hardware that run without a GPU.
 *  - address planning (reloc.c): the backend's own range kept or moved off synthetic layouts, notes for
 *    overlapping / unaligned mappings and push buffers above 2^40;
 *  - render targets (rt.c): GOB offsets at known positions, de-swizzle of a block-linear surface built
 *    by hand, pitch layout, BGRA byte order, the PNG file parsed back, FNV-1a 64 reference values;
 *  - the store census (census.c): vgt_store_diff on synthetic buffers, and a replay through a fake
 *    asynchronous backend (sim's operations with the GPU's capabilities: no write log, VGT_CAP_ASYNC)
 *    that must wait after each submission, compare observed records whole and produce census rows;
 *  - channel groups: each channel's capture TSG and context share handed to the backend's channel_create,
 *    with the allocation flags of the channel and of its share when the trace recorded them;
 *    on corpus/vk_triangle.vgt the gpu backend's planner (backend/gpu subctx.c) puts the Vulkan compute
 *    channel on a subcontext of its own beside the 3D channel, as captured;
 *  - GPU_UNMAP on an asynchronous backend drains the GPU first, even with --no-wait, and leaves the
 *    mapping in place when work still runs (unmapping under it faults the hardware);
 *  - checks without a write log leave out what only the captured driver wrote (USERD, rings, push-buffer
 *    pages) and still fail on real differences. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <unistd.h>

#include "../../backend/gpu/gpu.h"
#include "vgt/replay.h"
#include "vgt/trace.h"
#include "check.h"
#include "fake_gpu.h"
#include "mme_enc.h"
#include "vgt/pbwriter.h"

/* ---- reloc ---- */

static void test_reserved_choice(void)
{
    const uint64_t span = VGT_BACKEND_RESERVED_SPAN, limit = VGT_BACKEND_PB_VA_LIMIT;
    vgt_reloc_range low[] = {{.va = 0x200000000ull, .len = 0x4000000}, {.va = 0x7f4f62000000ull, .len = 0x200000}};
    uint64_t got = 0;
    vgt_error err;
    CHECK(vgt_reloc_choose_reserved(low, 2, VGT_BACKEND_RESERVED_DEFAULT, span, limit, &got, &err) == VGT_OK &&
              got == VGT_BACKEND_RESERVED_DEFAULT, "free default kept: 0x%llx", (unsigned long long)got);
    /* a mapping inside the default range: the highest free 4 GiB-aligned base below 2^40 */
    vgt_reloc_range hit[] = {{.va = VGT_BACKEND_RESERVED_DEFAULT + 0x1000, .len = 0x1000}};
    CHECK(vgt_reloc_choose_reserved(hit, 1, VGT_BACKEND_RESERVED_DEFAULT, span, limit, &got, &err) == VGT_OK &&
              got == ((limit - span) & ~0xffffffffull), "moved to 0x%llx", (unsigned long long)got);
    CHECK(got + span <= limit && !(got < hit[0].va + hit[0].len && hit[0].va < got + span), "no overlap");
    /* the top of the window taken too: the next free base down, never overlapping */
    vgt_reloc_range two[] = {{.va = VGT_BACKEND_RESERVED_DEFAULT, .len = 0x1000}, {.va = 0xfb00000000ull, .len = 0x500000000ull}};
    CHECK(vgt_reloc_choose_reserved(two, 2, VGT_BACKEND_RESERVED_DEFAULT, span, limit, &got, &err) == VGT_OK,
          "%s", err.msg);
    for (int i = 0; i < 2; i++)
        CHECK(!(got < two[i].va + two[i].len && two[i].va < got + span), "0x%llx overlaps map %d", (unsigned long long)got, i);
    /* everything from 64 GiB to 2^40 mapped: refused, with the reason */
    vgt_reloc_range all[] = {{.va = 1ull << 36, .len = limit - (1ull << 36)}};
    CHECK(vgt_reloc_choose_reserved(all, 1, VGT_BACKEND_RESERVED_DEFAULT, span, limit, &got, &err) == VGT_E_UNSUPPORTED &&
              strstr(err.msg, "cannot be placed"), "%s", err.msg);
    CHECK_STATUS(vgt_reloc_choose_reserved(low, 2, 0, limit + 1, limit, &got, &err), VGT_E_ARG, &err,
                 "span over the limit");
}

static void test_reloc_notes(void)
{
    vgt_reloc_plan *p = calloc(1, sizeof *p);
    vgt_reloc_range maps[] = {
        {.va = 0x4000000, .len = 0x20000, .seq = 10, .space = 1},
        {.va = 0x4000000, .len = 0x20000, .seq = 11, .space = 3},   /* the same range again: a remap */
        {.va = 0x4100000, .len = 0x20000, .seq = 12, .space = 1},
        {.va = 0x4110000, .len = 0x1000, .seq = 13, .space = 1},    /* same space: an unmap came between */
        {.va = 0x4118000, .len = 0x10000, .seq = 14, .space = 2},   /* overlaps seq 12, another space */
        {.va = 0x5000800, .len = 0x1000, .seq = 15, .space = 1},    /* unaligned */
    };
    vgt_reloc_check_maps(p, maps, 6);
    CHECK(p->nnotes == 2, "%u notes", p->nnotes);
    CHECK(p->nnotes >= 1 && p->notes[0].kind == VGT_RELOC_OVERLAP && p->notes[0].seq == 14 &&
              strstr(p->notes[0].msg, "seq 12"), "%s", p->nnotes ? p->notes[0].msg : "");
    CHECK(p->nnotes >= 2 && p->notes[1].kind == VGT_RELOC_UNALIGNED && p->notes[1].seq == 15, "second note");
    vgt_reloc_check_segment(p, 3, 99, 0, 0xff00000000ull, 0x1000);         /* below 2^40: fine */
    CHECK_EQ_U64(p->nnotes, 2, "segment below 2^40 noted");
    vgt_reloc_check_segment(p, 4, 100, 1, 0x7f4f62799000ull, 0x1000);
    CHECK(p->nnotes == 3 && p->notes[2].kind == VGT_RELOC_PB_ABOVE_40BIT && strstr(p->notes[2].msg, "submission 4") &&
              strstr(p->notes[2].msg, "GPFIFO entry"), "%s", p->nnotes == 3 ? p->notes[2].msg : "");
    for (int i = 0; i < 2 * VGT_RELOC_MAX_NOTES; i++) vgt_reloc_check_segment(p, 5, 101, 0, 1ull << 41, 4);
    CHECK(p->nnotes == VGT_RELOC_MAX_NOTES && p->notes_dropped == VGT_RELOC_MAX_NOTES + 3, "bounded: %u, %llu dropped",
          p->nnotes, (unsigned long long)p->notes_dropped);
    CHECK(p->nmoving == 2 && p->moving[0].seq == 14 && p->moving[1].seq == 15, "moving: %u", p->nmoving);
    vgt_reloc_plan_free(p);
    free(p);
}

/* ---- render targets ---- */

static void test_gob_offsets(void)
{
    /* inside one GOB (64 bytes x 8 rows): offset bits x0-3, y0, y1, x4, y2, x5 (measured on the H200) */
    CHECK_EQ_U64(vgt_rt_gob_offset(0, 0, 256, 0), 0, "origin");
    CHECK_EQ_U64(vgt_rt_gob_offset(15, 0, 256, 0), 15, "within 16 bytes of a row");
    CHECK_EQ_U64(vgt_rt_gob_offset(0, 1, 256, 0), 16, "y0");
    CHECK_EQ_U64(vgt_rt_gob_offset(0, 2, 256, 0), 32, "y1");
    CHECK_EQ_U64(vgt_rt_gob_offset(16, 0, 256, 0), 64, "x4");
    CHECK_EQ_U64(vgt_rt_gob_offset(0, 4, 256, 0), 128, "y2");
    CHECK_EQ_U64(vgt_rt_gob_offset(32, 0, 256, 0), 256, "x5");
    CHECK_EQ_U64(vgt_rt_gob_offset(16 + 5, 3, 256, 0), 64 + 32 + 16 + 5, "x4 y1 y0 together");
    CHECK_EQ_U64(vgt_rt_gob_offset(63, 7, 256, 0), 511, "last byte of the GOB");
    /* blocks one GOB tall: the next GOB to the right, then the next GOB row (4 GOBs per row) */
    CHECK_EQ_U64(vgt_rt_gob_offset(64, 0, 256, 0), 512, "second GOB");
    CHECK_EQ_U64(vgt_rt_gob_offset(0, 8, 256, 0), 4 * 512, "second GOB row");
    /* blocks two GOBs tall: the GOB below comes before the GOB to the right */
    CHECK_EQ_U64(vgt_rt_gob_offset(0, 8, 256, 1), 512, "GOB below, same block");
    CHECK_EQ_U64(vgt_rt_gob_offset(64, 0, 256, 1), 1024, "next block column");
    CHECK_EQ_U64(vgt_rt_gob_offset(0, 16, 256, 1), 4 * 1024, "next block row");
}

static void test_linearize(void)
{
    /* 32x16 pixels A8B8G8R8 block-linear, blocks 2 GOBs tall: 128-byte rows = 2 GOBs, 16 rows = 1 block row */
    vgt_rt_desc d = {.va = 0x100000, .width = 32, .height = 16, .format = 0xD5, .memory = 1u << 4};
    uint64_t span = vgt_rt_span(&d);
    CHECK(span == 2 * 2 * 512, "span %llu", (unsigned long long)span);
    uint8_t *surf = calloc(1, span), *rgba = calloc(32 * 16, 4);
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t x = 0; x < 32; x++) {
            uint8_t *p = surf + vgt_rt_gob_offset(x * 4, y, 128, 1);
            p[0] = (uint8_t)x, p[1] = (uint8_t)y, p[2] = 0x5a, p[3] = 0xff;
        }
    /* the pixel (17, 9) by hand: GOB column 1 (bytes 64..127), GOB row 1 inside the block ->
     * (0*2 + 1*2 + 1) * 512 = 1536... block-linear order is GOB column after column: column 1 starts at
     * 1024, the lower GOB of it at 1536; x byte 68 -> 4 in the GOB; row 9 -> 1: offset 16 */
    CHECK(surf[1536 + 16 + 4] == 17 && surf[1536 + 16 + 5] == 9, "hand-computed position of (17,9)");
    vgt_error err;
    CHECK_STATUS(vgt_rt_linearize(&d, surf, span, rgba, &err), VGT_OK, &err, "vgt_rt_linearize");
    int bad = 0;
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t x = 0; x < 32; x++) {
            const uint8_t *o = rgba + (y * 32 + x) * 4;
            bad += o[0] != x || o[1] != y || o[2] != 0x5a || o[3] != 0xff;
        }
    CHECK(!bad, "%d pixels wrong after de-swizzle", bad);
    CHECK_STATUS(vgt_rt_linearize(&d, surf, span - 1, rgba, &err), VGT_E_ARG, &err, "short surface refused");
    /* pitch layout (WIDTH = pitch in bytes), BGRA order (A8R8G8B8): channels swapped to RGBA */
    vgt_rt_desc pd = {.width = 8, .height = 2, .format = 0xCF, .memory = 1u << 12};
    uint8_t pitch[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, out[16];
    CHECK(vgt_rt_span(&pd) == 16, "pitch span");
    CHECK(vgt_rt_linearize(&pd, pitch, 16, out, &err) == VGT_OK && out[0] == 3 && out[1] == 2 && out[2] == 1 &&
              out[3] == 4 && out[12] == 15 && out[15] == 16, "BGRA -> RGBA");
    vgt_rt_desc bad_fmt = {.width = 4, .height = 4, .format = 0xC0};
    CHECK(vgt_rt_span(&bad_fmt) == 0 && vgt_rt_linearize(&bad_fmt, pitch, 16, out, &err) == VGT_E_UNSUPPORTED,
          "unsupported format refused: %s", err.msg);
    vgt_rt_desc huge = {.width = VGT_RT_MAX_DIM + 1, .height = 1, .format = 0xD5};
    CHECK(vgt_rt_span(&huge) == 0, "dimension bound");
    CHECK(vgt_rt_width_px(&huge) == 0 && vgt_rt_width_px(&d) == 32 && vgt_rt_width_px(&pd) == 2, "pixels a row");
    /* a pixel's place: the (17, 9) above, and row 1 pixel 1 of the pitch surface */
    CHECK(vgt_rt_pixel_offset(&d, 17, 9) == 1536 + 16 + 4, "block-linear pixel offset");
    CHECK(vgt_rt_pixel_offset(&pd, 1, 1) == 12, "pitch pixel offset");
    free(surf);
    free(rgba);
}

/* Clear values: R, G, B, A floats clamped to 0..1 and rounded to 8 bits, in the format's byte order. */
static void test_clear_pixel(void)
{
    const float f[4] = {1.0f, 0.5f, -2.0f, 0.2f};
    uint32_t v[4];
    memcpy(v, f, sizeof v);
    uint8_t px[4];
    CHECK(vgt_rt_clear_pixel(0xD5, v, px) && px[0] == 255 && px[1] == 128 && px[2] == 0 && px[3] == 51,
          "A8B8G8R8: R first (%u %u %u %u)", px[0], px[1], px[2], px[3]);
    CHECK(vgt_rt_clear_pixel(0xCF, v, px) && px[2] == 255 && px[1] == 128 && px[0] == 0 && px[3] == 51,
          "A8R8G8B8: B first");
    CHECK(!vgt_rt_clear_pixel(0xC0, v, px), "unsupported format");
    CHECK(vgt_rt_component_byte(0xCF, 0) == 2 && vgt_rt_component_byte(0xD5, 0) == 0 &&
              vgt_rt_component_byte(0xD5, 3) == 3 && vgt_rt_component_byte(0xD5, 4) == -1 &&
              vgt_rt_component_byte(0xC0, 0) == -1,
          "component bytes");
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static void test_png(void)
{
    char path[] = "/tmp/test_replay_lane1_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    uint8_t px[3 * 2 * 4];
    for (int i = 0; i < 24; i++) px[i] = (uint8_t)(i * 7);
    vgt_error err;
    CHECK_STATUS(vgt_png_write_rgba(path, px, 3, 2, &err), VGT_OK, &err, "vgt_png_write_rgba");
    uint8_t buf[512];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    unlink(path);
    CHECK(n > 8 + 25 + 12 && !memcmp(buf, "\x89PNG\r\n\x1a\n", 8), "signature");
    CHECK(be32(buf + 8) == 13 && !memcmp(buf + 12, "IHDR", 4) && be32(buf + 16) == 3 && be32(buf + 20) == 2 &&
              buf[24] == 8 && buf[25] == 6, "IHDR 3x2 RGBA8");
    const uint8_t *idat = buf + 33;
    uint32_t zlen = be32(idat);
    CHECK(!memcmp(idat + 4, "IDAT", 4) && zlen < sizeof buf - 41, "IDAT: %u bytes", zlen);
    uint8_t raw[2 * 13];
    uLongf rawlen = sizeof raw;
    CHECK(idat[8] == 0x78 && uncompress(raw, &rawlen, idat + 8, zlen) == Z_OK && rawlen == 26, "a zlib stream of 26 bytes");
    CHECK(raw[0] == 0 && !memcmp(raw + 1, px, 12) && raw[13] == 0 && !memcmp(raw + 14, px + 12, 12), "rows, filter 0");
    /* compressed, not stored: a 256x256 render target of one colour (256 KiB of pixels) takes a few hundred bytes */
    uint8_t *big = malloc(256 * 256 * 4);
    CHECK(big != NULL, "malloc");
    for (int i = 0; i < 256 * 256; i++) big[4 * i] = 0x20, big[4 * i + 1] = 0x40, big[4 * i + 2] = 0x80, big[4 * i + 3] = 0xff;
    CHECK_STATUS(vgt_png_write_rgba(path, big, 256, 256, &err), VGT_OK, &err, "256x256");
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size < 4096, "256x256 of one colour: %lld bytes", (long long)st.st_size);
    unlink(path);
    free(big);
    CHECK(vgt_png_write_rgba("/nonexistent-dir/x.png", px, 3, 2, &err) == VGT_E_IO && strstr(err.msg, "/nonexistent-dir"),
          "unwritable path: %s", err.msg);
    CHECK_STATUS(vgt_png_write_rgba(path, px, 0, 2, &err), VGT_E_ARG, &err, "empty image refused");
}

static void test_fnv(void)
{
    /* reference values of FNV-1a 64 (Fowler/Noll/Vo test vectors) */
    CHECK_EQ_U64(vgt_fnv1a64("", 0), 0xcbf29ce484222325ull, "empty");
    CHECK(vgt_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull, "\"a\"");
    CHECK(vgt_fnv1a64("foobar", 6) == 0x85944171f73967e8ull, "\"foobar\"");
}

/* ---- census ---- */

static void test_store_diff(void)
{
    enum { LEN = 3 * 4096 };
    uint8_t *before = calloc(1, LEN), *after = calloc(1, LEN);
    vgt_store_row r;
    vgt_store_diff(before, after, LEN, &r);
    CHECK(r.bytes_changed == 0 && r.pages_written == 0 && r.first_changed == -1 && r.first_nonzero_pixel == -1 &&
              r.px0 == -1, "nothing changed, all zero");
    after[5] = 1, after[4096 + 10] = 2, after[4096 + 11] = 3, after[2 * 4096 + 4095] = 4;
    vgt_store_diff(before, after, LEN, &r);
    CHECK(r.bytes_changed == 4 && r.pages_written == 3 && r.first_changed == 5 && r.first_nonzero_pixel == 1,
          "changed %llu pages %llu first %lld first_nonzero_px %lld", (unsigned long long)r.bytes_changed,
          (unsigned long long)r.pages_written, (long long)r.first_changed, (long long)r.first_nonzero_pixel);
    memcpy(before, after, LEN);
    vgt_store_diff(before, after, LEN, &r);
    CHECK(r.bytes_changed == 0 && r.first_nonzero_pixel == 1, "unchanged but non-zero: first_nonzero_px still reported");
    free(before);
    free(after);
}

/* A fake asynchronous backend: sim's operations with the GPU's capabilities (no write log, async), so
 * the engine takes the hardware path: waits after each submission and compares observed records whole. */
static vgt_backend_ops fake;
static int idle_calls;

static vgt_status fake_idle(vgt_backend *b, uint64_t timeout_ns, vgt_error *err)
{
    idle_calls++;
    return vgt_backend_sim.idle(b, timeout_ns, err);
}

/* The fake as the GPU backend looks to the engine: no write log to ask what the GPU wrote. */
static void use_fake_gpu(void)
{
    fake = fake_gpu_from_sim(NULL);
    fake.idle = fake_idle;
}

#define CLIENT 0xC1u
#define PB_VA 0x100000ull
#define DATA_VA 0x200000ull

static void ok(vgt_status rc, const vgt_error *e)
{
    if (rc != VGT_OK) {
        fprintf(stderr, "writer: %s\n", e->msg);
        exit(1);
    }
}

static void write_release(vgt_writer *w, uint64_t *ts, uint32_t k, uint64_t va, uint32_t payload, vgt_error *e)
{
    uint32_t pb[6] = {1u << 29 | 5u << 16 | 0x5c >> 2, (uint32_t)va, (uint32_t)(va >> 32), payload, 0, 1 /* RELEASE */};
    uint64_t pva = PB_VA + k * 4096ull;
    uint64_t ent = (uint64_t)(6u << 10) << 32 | (uint32_t)pva;
    uint8_t entry[8];
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(ent >> (8 * i));
    vgt_segment seg = {.gpu_va = pva, .length = sizeof pb, .data = (const uint8_t *)pb};
    vgt_rec_gpfifo_submit s = {.client = CLIENT, .channel = 0xA0, .entry_count = 1, .segment_count = 1, .entries = entry,
                               .segments = &seg, .gp_get_after = VGT_GP_NOT_READ, .gp_put_after = k + 1};
    ok(vgt_write_gpfifo_submit(w, ++*ts, &s, e), e);
}

/* A writer on path with the test's identity; exits on failure like ok(). */
static vgt_writer *open_trace(const char *path, vgt_error *e)
{
    vgt_writer *w;
    vgt_writer_options o = vgt_writer_defaults();
    vgt_identity id[] = {{"producer", "test_replay_lane1"}};
    ok(vgt_writer_open_path(&w, path, &o, id, 1, e), e);
    return w;
}

/* A writer on a new temporary file made from the template path ("..._XXXXXX", rewritten in place). */
static vgt_writer *open_temp_trace(char *path, vgt_error *e)
{
    int fd = mkstemp(path);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    close(fd);
    return open_trace(path, e);
}

/* The one channel of these traces: handle 0xA0, Hopper host class. */
static void write_channel_a0(vgt_writer *w, uint64_t *ts, vgt_error *e)
{
    vgt_rec_channel c = {.client = CLIENT, .parent = 3, .handle = 0xA0, .cls = 0xC86F, .entries = 128};
    ok(vgt_write_channel(w, ++*ts, &c, e), e);
}

static void write_census_trace(const char *path, uint32_t observed_value)
{
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_trace(path, &e);
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 1};
    ok(vgt_write_mem_alloc(w, ++ts, &m, &e), &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.offset = 0x100000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    write_release(w, &ts, 0, DATA_VA + 0x1008, 0x11, &e);   /* page 1 */
    write_release(w, &ts, 1, DATA_VA + 0x10, 0x22, &e);     /* page 0 */
    write_release(w, &ts, 2, DATA_VA + 0x10, 0x22, &e);     /* the same value again: no change */
    vgt_rec_memory mo = {.gpu_va = DATA_VA, .length = 0x2000, .reason = VGT_MEM_OBSERVED, .memory = 0x10};
    uint8_t *obs = calloc(1, 0x2000);
    obs[0x1008] = 0x11, obs[0x10] = (uint8_t)observed_value;
    mo.data = obs;
    ok(vgt_write_memory(w, ++ts, &mo, &e), &e);
    free(obs);
    ok(vgt_writer_close(w, &e), &e);
}

/* Submission k: push-buffer dwords pb (n of them) at PB_VA + k pages, one GPFIFO entry. */
static void write_pb(vgt_writer *w, uint64_t *ts, uint32_t k, const uint32_t *pb, uint32_t n, vgt_error *e)
{
    uint64_t pva = PB_VA + k * 4096ull;
    uint64_t ent = (uint64_t)(n << 10) << 32 | (uint32_t)pva;
    uint8_t entry[8];
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(ent >> (8 * i));
    vgt_segment seg = {.gpu_va = pva, .length = 4 * n, .data = (const uint8_t *)pb};
    vgt_rec_gpfifo_submit s = {.client = CLIENT, .channel = 0xA0, .entry_count = 1, .segment_count = 1, .entries = entry,
                               .segments = &seg, .gp_get_after = VGT_GP_NOT_READ, .gp_put_after = k + 1};
    ok(vgt_write_gpfifo_submit(w, ++*ts, &s, e), e);
}

/* A copy-engine LAUNCH_DMA (HOPPER_DMA_COPY_A, clc8b5.h: OFFSET_IN/OUT 0x400..0x40c, LINE_LENGTH_IN 0x418,
 * SET_SEMAPHORE_A/B/PAYLOAD 0x240..0x248, LAUNCH_DMA 0x300 with DATA_TRANSFER_TYPE 1:0) whose offsets point
 * into the conflicting mapping: its source and destination are operands only when it transfers. One with
 * DATA_TRANSFER_TYPE NONE only releases its semaphore (here outside every mapping): no operand note. */
static void test_plan_copy_operands(void)
{
    char path[] = "/tmp/test_replay_lane1_copyops_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.length = 0x1000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.va_space = 3, g.gpu_va = DATA_VA, g.length = 0x2000, g.memory = 0x11;   /* another space, overlapping */
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    const uint32_t sc = 4u << 13;
    for (uint32_t k = 0; k < 2; k++) {
        uint32_t launch = (k ? 2u : 0u) | 1u << 3 | 1u << 7 | 1u << 8;   /* NONE, then NON_PIPELINED; pitch */
        uint32_t pb[] = {1u << 29 | 1u << 16 | sc | 0, 0xC8B5,                        /* SET_OBJECT */
                         1u << 29 | 4u << 16 | sc | 0x400 >> 2, (uint32_t)(DATA_VA >> 32), (uint32_t)DATA_VA + 0x1100,
                         (uint32_t)(DATA_VA >> 32), (uint32_t)DATA_VA + 0x1200,
                         1u << 29 | 1u << 16 | sc | 0x418 >> 2, 64,
                         1u << 29 | 3u << 16 | sc | 0x240 >> 2, 0, 0x300000, 7,
                         1u << 29 | 1u << 16 | sc | 0x300 >> 2, launch};
        write_pb(w, &ts, k, pb, sizeof pb / 4, &e);
    }
    ok(vgt_writer_close(w, &e), &e);
    vgt_reloc_plan *p = calloc(1, sizeof *p);
    CHECK_STATUS(vgt_reloc_plan_trace(path, 0, NULL, 0, p, &e), VGT_OK, &e, "vgt_reloc_plan_trace");
    int operand = 0;
    for (uint32_t i = 0; i < p->nnotes; i++) {
        if (p->notes[i].kind != VGT_RELOC_OPERAND) continue;
        operand++;
        CHECK(strstr(p->notes[i].msg, "submission 1 ") && strstr(p->notes[i].msg, "copy "), "%s", p->notes[i].msg);
    }
    CHECK(operand == 2, "%d operand notes, expected the transfer's source and destination only", operand);
    vgt_reloc_plan_free(p);
    free(p);
    unlink(path);
}

/* Two VA spaces map overlapping ranges: the plan names the later mapping and every operand of the
 * submissions that points into it (here a host semaphore release), and only those. */
static void test_plan_operands(void)
{
    char path[] = "/tmp/test_replay_lane1_plan_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.length = 0x1000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.va_space = 3, g.gpu_va = DATA_VA, g.length = 0x2000, g.memory = 0x11;   /* another space, overlapping */
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    write_release(w, &ts, 0, 0x300000, 1, &e);          /* outside: no note */
    write_release(w, &ts, 1, DATA_VA + 0x1008, 2, &e);  /* into the conflicting mapping */
    ok(vgt_writer_close(w, &e), &e);
    vgt_reloc_plan *p = calloc(1, sizeof *p);
    CHECK_STATUS(vgt_reloc_plan_trace(path, 0, NULL, 0, p, &e), VGT_OK, &e, "vgt_reloc_plan_trace");
    int overlap = 0, operand = 0;
    for (uint32_t i = 0; i < p->nnotes; i++) {
        overlap += p->notes[i].kind == VGT_RELOC_OVERLAP;
        if (p->notes[i].kind == VGT_RELOC_OPERAND) {
            operand++;
            CHECK(strstr(p->notes[i].msg, "submission 1 ") && strstr(p->notes[i].msg, "semaphore address 0x201008"),
                  "%s", p->notes[i].msg);
        }
    }
    CHECK(overlap == 1 && operand == 1, "%d overlap, %d operand notes", overlap, operand);
    CHECK(p->maps == 3 && p->reserved_va == VGT_BACKEND_RESERVED_DEFAULT, "plan");
    vgt_reloc_plan_free(p);
    free(p);
    unlink(path);
}

/* A hardware fault reports the push-buffer Get pointer; the engine names the methods before it. The fake
 * backend adds the pointer (the end of the faulting submission's segment) to sim's fault events. */
static vgt_backend_event_fn real_handler;
static void *real_ctx;
static uint64_t fault_pb_va;
static char window_msg[VGT_ERROR_MSG_MAX];

static void add_pb_va(void *ctx, const vgt_backend_event *ev)
{
    vgt_backend_event e = *ev;
    if (e.kind == VGT_BEV_FAULT) e.pb_va = fault_pb_va;
    real_handler(ctx, &e);
}

static void fake_set_handler(vgt_backend *b, vgt_backend_event_fn fn, void *ctx)
{
    real_handler = fn;
    real_ctx = ctx;
    vgt_backend_sim.set_event_handler(b, add_pb_va, ctx);
}

static void keep_window(void *ctx, const vgt_replay_report *r)
{
    if (r->kind == VGT_RPT_EVENT && r->msg && strstr(r->msg, "method window"))
        snprintf(window_msg, sizeof window_msg, "%s", r->msg);
}

/* Open a replay with o and run the trace at path through it (rp and r stay open for the caller's checks). */
static void run_path(vgt_replay **rp, vgt_reader **r, const vgt_replay_options *o, const char *path, vgt_error *e)
{
    CHECK_STATUS(vgt_replay_open(rp, o, e), VGT_OK, e, "vgt_replay_open");
    CHECK_STATUS(vgt_reader_open_path(r, path, NULL, e), VGT_OK, e, "vgt_reader_open_path");
    CHECK_STATUS(vgt_replay_run(*rp, *r, e), VGT_OK, e, "vgt_replay_run");
}

static void test_fault_window(void)
{
    char path[] = "/tmp/test_replay_lane1_fault_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    write_release(w, &ts, 0, 0x7000000000ull, 1, &e);   /* unmapped: sim faults */
    ok(vgt_writer_close(w, &e), &e);

    vgt_backend_ops fb = fake;
    fb.set_event_handler = fake_set_handler;
    fault_pb_va = PB_VA + 6 * 4;   /* Get past the segment's six dwords */
    window_msg[0] = '\0';
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fb;
    o.check = 1;
    o.report = keep_window;
    vgt_replay *rp;
    vgt_reader *r;
    run_path(&rp, &r, &o, path, &e);
    vgt_replay_finish(rp, &e);
    CHECK(strstr(window_msg, "push-buffer Get 0x100018 = submission 0 entry 0 dword 6") &&
              strstr(window_msg, "SEM_EXECUTE = 0x00000001") && strstr(window_msg, "[0:1] subch 0"),
          "window: %s", window_msg);
    if (getenv("VGT_TEST_VERBOSE")) printf("%s\n", window_msg);
    vgt_reader_close(r);
    vgt_replay_close(rp);
    unlink(path);
}

static void run_census(const char *path, int expect_fail)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.check = 1;
    o.census = 1;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error err;
    idle_calls = 0;
    CHECK_STATUS(vgt_replay_open(&rp, &o, &err), VGT_OK, &err, "vgt_replay_open");
    vgt_replay_census_watch(rp, DATA_VA, 0x2000, "observed");
    CHECK_STATUS(vgt_reader_open_path(&r, path, NULL, &err), VGT_OK, &err, "vgt_reader_open_path");
    CHECK_STATUS(vgt_replay_run(rp, r, &err), VGT_OK, &err, "vgt_replay_run");
    vgt_replay_finish(rp, &err);
    const vgt_replay_summary *s = vgt_replay_summary_get(rp);
    CHECK(idle_calls >= 3, "the engine waited after each submission: %d idle calls", idle_calls);
    CHECK(s->checks_passed + s->checks_failed == 1 && s->checks_failed == (uint64_t)expect_fail,
          "observed record compared whole: %llu passed %llu failed", (unsigned long long)s->checks_passed,
          (unsigned long long)s->checks_failed);
    uint64_t n;
    const vgt_store_row *rows = vgt_replay_stores(rp, &n);
    CHECK(n == 2, "two submissions changed the watched range: %llu rows", (unsigned long long)n);
    if (n == 2) {
        CHECK(rows[0].submit_index == 0 && rows[0].bytes_changed == 1 && rows[0].first_changed == 0x1008 &&
                  rows[0].pages_written == 1 && rows[0].first_nonzero_pixel == 0x1008 / 4,
              "row 0: submission %lld bytes %llu first %lld first_nonzero_px %lld", (long long)rows[0].submit_index,
              (unsigned long long)rows[0].bytes_changed, (long long)rows[0].first_changed,
              (long long)rows[0].first_nonzero_pixel);
        CHECK(rows[1].submit_index == 1 && rows[1].first_changed == 0x10 && rows[1].first_nonzero_pixel == 4 &&
                  !strcmp(rows[1].what, "observed") && rows[0].px0 == -1 && rows[1].px0 == -1,
              "row 1 (observed rows have no px0)");
    }
    CHECK(s->census_quiet == 1, "one submission changed nothing: %llu", (unsigned long long)s->census_quiet);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

static void test_census_replay(void)
{
    use_fake_gpu();
    char path[] = "/tmp/test_replay_lane1_trace_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    write_census_trace(path, 0x22);
    run_census(path, 0);
    write_census_trace(path, 0x23);   /* the trace observed another value: the check fails */
    run_census(path, 1);
    unlink(path);
}

/* A render target the 3D class binds at RT_VA (SET_OBJECT HOPPER_A on subchannel 1, SET_COLOR_TARGET_A..
 * MEMORY(0) = 0x800..0x814: 16x8 A8R8G8B8 block-linear, one GOB, 512 bytes) and, in the same submission,
 * a host semaphore release of px at RT_VA: the target's first pixel. RT_VA is 0x40 into its page, so the
 * census range (whole pages) starts before the target. */
#define RT_VA (DATA_VA + 0x1040)

static void write_rt_trace(const char *path, uint32_t px)
{
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_trace(path, &e);
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 1};
    ok(vgt_write_mem_alloc(w, ++ts, &m, &e), &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.offset = 0x100000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    const uint32_t pb[] = {1u << 29 | 1u << 16 | 1u << 13 | 0, 0xCB97,
                           1u << 29 | 6u << 16 | 1u << 13 | 0x800 >> 2, (uint32_t)(RT_VA >> 32), (uint32_t)RT_VA, 16, 8,
                           0xCF /* A8R8G8B8 */, 0 /* block-linear, 1 GOB high */,
                           1u << 29 | 5u << 16 | 0x5c >> 2, (uint32_t)RT_VA, (uint32_t)(RT_VA >> 32), px, 0, 1};
    write_pb(w, &ts, 0, pb, sizeof pb / 4, &e);
    ok(vgt_writer_close(w, &e), &e);
}

/* px0 is the value of the target's first pixel; first_nonzero_pixel the index of the first non-zero word
 * of the (page-aligned) range: here 0x40 / 4. Also when the target lies in a range already watched as
 * observed: that range becomes the target's. */
static void test_census_render_target(void)
{
    use_fake_gpu();
    char path[] = "/tmp/test_replay_lane1_rt_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    write_rt_trace(path, 0xff0000ffu);
    for (int pre = 0; pre < 2; pre++) {
        vgt_replay_options o = vgt_replay_defaults();
        o.backend = &fake;
        o.census = 1;
        vgt_replay *rp;
        vgt_reader *r;
        vgt_error err;
        CHECK_STATUS(vgt_replay_open(&rp, &o, &err), VGT_OK, &err, "vgt_replay_open");
        if (pre) vgt_replay_census_watch(rp, DATA_VA, 0x2000, "observed");
        CHECK_STATUS(vgt_reader_open_path(&r, path, NULL, &err), VGT_OK, &err, "vgt_reader_open_path");
        CHECK_STATUS(vgt_replay_run(rp, r, &err), VGT_OK, &err, "vgt_replay_run");
        vgt_replay_finish(rp, &err);
        CHECK(vgt_replay_rt_count(rp) == 1, "one render target bound: %u", vgt_replay_rt_count(rp));
        uint64_t n;
        const vgt_store_row *rows = vgt_replay_stores(rp, &n);
        CHECK(n == 1, "pre-watched %d: one row: %llu", pre, (unsigned long long)n);
        if (n == 1) {
            uint64_t va = pre ? DATA_VA : RT_VA & ~0xfffull;
            /* 0xff0000ff changes two bytes */
            CHECK(!strcmp(rows[0].what, "render-target") && rows[0].va == va && rows[0].bytes_changed == 2 &&
                      rows[0].first_changed == (int64_t)(RT_VA - va) &&
                      rows[0].first_nonzero_pixel == (int64_t)(RT_VA - va) / 4 && rows[0].px0 == 0xff0000ffll,
                  "pre-watched %d: %s va 0x%llx bytes %llu first %lld first_nonzero_px %lld px0 %lld", pre,
                  rows[0].what, (unsigned long long)rows[0].va, (unsigned long long)rows[0].bytes_changed,
                  (long long)rows[0].first_changed, (long long)rows[0].first_nonzero_pixel, (long long)rows[0].px0);
        }
        vgt_reader_close(r);
        vgt_replay_close(rp);
    }
    unlink(path);
}

/* Memory only the captured driver wrote: observed records over the captured channel's USERD, its GPFIFO
 * ring and a push-buffer page (methods written after the last submitted segment) hold values no replay
 * produces; without a write log they are left out (not comparable, bytes counted), while a real
 * difference in the data next to them still fails. */
#define USERD_VA (DATA_VA + 0x80000)
#define RING_VA (DATA_VA + 0x90000)

static void write_observed(vgt_writer *w, uint64_t *ts, uint64_t va, uint32_t len, uint32_t at, uint32_t v, vgt_error *e)
{
    uint8_t *obs = calloc(1, len);
    for (int i = 0; i < 4; i++) obs[at + i] = (uint8_t)(v >> (8 * i));
    vgt_rec_memory mo = {.gpu_va = va, .length = len, .reason = VGT_MEM_OBSERVED, .memory = 0x10, .data = obs};
    ok(vgt_write_memory(w, ++*ts, &mo, e), e);
    free(obs);
}

static void write_capture_only_trace(const char *path, uint32_t data_value)
{
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_trace(path, &e);
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 1};
    ok(vgt_write_mem_alloc(w, ++ts, &m, &e), &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.offset = 0x100000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    vgt_rec_channel c = {.client = CLIENT, .parent = 3, .handle = 0xA0, .cls = 0xC86F, .entries = 128,
                         .ring_va = RING_VA, .userd_memory = 0x10, .userd_offset = 0x180000};   /* = USERD_VA */
    ok(vgt_write_channel(w, ++ts, &c, &e), &e);
    write_release(w, &ts, 0, DATA_VA + 0x10, 0x22, &e);
    vgt_rec_rm_free f = {.client = CLIENT, .parent = 3, .handle = 0xA0};   /* freed before the last observations */
    ok(vgt_write_rm_free(w, ++ts, &f, &e), &e);
    write_observed(w, &ts, USERD_VA, 0x200, 0x40, 0x00c00370, &e);   /* PUT of the captured channel */
    write_observed(w, &ts, RING_VA, 0x400, 0x8, 0x00100000, &e);     /* a GPFIFO entry the driver wrote */
    write_observed(w, &ts, PB_VA, 0x1000, 0x18, 0x2001c00d, &e);     /* a method after the segment's 24 bytes */
    write_observed(w, &ts, DATA_VA, 0x1000, 0x10, data_value, &e);
    ok(vgt_writer_close(w, &e), &e);
}

static void run_capture_only(const char *path, uint64_t expect_failed)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.check = 1;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error err;
    run_path(&rp, &r, &o, path, &err);
    vgt_replay_finish(rp, &err);
    const vgt_replay_summary *s = vgt_replay_summary_get(rp);
    CHECK(s->checks_failed == expect_failed && s->checks_passed == 1 - expect_failed && s->checks_skipped == 3,
          "USERD, ring and push-buffer page not comparable, data checked: %llu passed %llu failed %llu skipped",
          (unsigned long long)s->checks_passed, (unsigned long long)s->checks_failed,
          (unsigned long long)s->checks_skipped);
    CHECK(s->bytes_capture_only == 0x200 + 0x400 + 0x1000, "bytes left out: %llu",
          (unsigned long long)s->bytes_capture_only);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

static void test_capture_only(void)
{
    use_fake_gpu();
    char path[] = "/tmp/test_replay_lane1_capture_only_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    write_capture_only_trace(path, 0x22);
    run_capture_only(path, 0);
    write_capture_only_trace(path, 0x23);
    run_capture_only(path, 1);
    unlink(path);
}

/* NOTIFY on HOPPER_A writes a timestamp at SET_NOTIFY_A/B: without a write log those 8 bytes are not
 * compared (the rest of the observed record is, and passes on the fake backend, which writes nothing). */
static void test_notify_timestamp(void)
{
    use_fake_gpu();
    char path[] = "/tmp/test_replay_lane1_notify_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 1};
    ok(vgt_write_mem_alloc(w, ++ts, &m, &e), &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.offset = 0x100000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    vgt_rec_engine_object eo = {.client = CLIENT, .channel = 0xA0, .handle = 0xB0, .cls = 0xCB97};
    ok(vgt_write_engine_object(w, ++ts, &eo, &e), &e);
    uint32_t pb[] = {1u << 29 | 1u << 16 | 0,   /* SET_OBJECT subchannel 0 */ 0xCB97,
                     1u << 29 | 3u << 16 | 0x104 >> 2, 0, (uint32_t)(DATA_VA + 0x40), 0 /* NOTIFY WRITE_ONLY */};
    uint64_t ent = (uint64_t)((sizeof pb / 4) << 10) << 32 | (uint32_t)PB_VA;
    uint8_t entry[8];
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(ent >> (8 * i));
    vgt_segment seg = {.gpu_va = PB_VA, .length = sizeof pb, .data = (const uint8_t *)pb};
    vgt_rec_gpfifo_submit sub = {.client = CLIENT, .channel = 0xA0, .entry_count = 1, .segment_count = 1,
                                 .entries = entry, .segments = &seg, .gp_get_after = VGT_GP_NOT_READ, .gp_put_after = 1};
    ok(vgt_write_gpfifo_submit(w, ++ts, &sub, &e), &e);
    write_observed(w, &ts, DATA_VA, 0x1000, 0x40, 0x3a733fa0, &e);   /* the capture's timestamp, low word */
    ok(vgt_writer_close(w, &e), &e);

    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.check = 1;
    vgt_replay *rp;
    vgt_reader *r;
    run_path(&rp, &r, &o, path, &e);
    vgt_replay_finish(rp, &e);
    const vgt_replay_summary *s = vgt_replay_summary_get(rp);
    CHECK(s->checks_passed == 1 && s->checks_failed == 0 && s->bytes_compared == 0x1000 - 8,
          "notification timestamp left out: %llu passed %llu failed, %llu bytes compared",
          (unsigned long long)s->checks_passed, (unsigned long long)s->checks_failed,
          (unsigned long long)s->bytes_compared);
    vgt_reader_close(r);
    vgt_replay_close(rp);
    unlink(path);
}

/* Channel groups: the engine hands each channel's capture TSG (the KEPLER_CHANNEL_GROUP_A object it was
 * allocated under) to the backend, so a hardware backend can put the group's channels in one TSG and they
 * share one engine context as they did when captured. A channel under the device, or under an object of
 * another class, has no group. */
#define SEEN_MAX 16
static uint32_t seen_group[SEEN_MAX], seen_group_client[SEEN_MAX], seen_handle[SEEN_MAX], seen_share[SEEN_MAX], nseen;
static uint32_t seen_flags[SEEN_MAX], seen_share_flags[SEEN_MAX];
static int seen_has_flags[SEEN_MAX], seen_has_share_flags[SEEN_MAX];

static vgt_status record_channel_create(vgt_backend *b, const vgt_backend_channel_desc *d, uint32_t *ch,
                                        vgt_error *err)
{
    if (nseen < SEEN_MAX) {
        seen_handle[nseen] = d->handle;
        seen_group[nseen] = d->group;
        seen_share[nseen] = d->context_share;
        seen_flags[nseen] = d->alloc_flags;
        seen_has_flags[nseen] = d->has_alloc_flags;
        seen_share_flags[nseen] = d->share_flags;
        seen_has_share_flags[nseen] = d->has_share_flags;
        seen_group_client[nseen++] = d->group_client;
    }
    return vgt_backend_sim.channel_create(b, d, ch, err);
}

static void test_channel_groups(void)
{
    fake = vgt_backend_sim;
    fake.channel_create = record_channel_create;
    char path[] = "/tmp/test_replay_lane1_groups_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_rm_alloc tsg = {.client = CLIENT, .parent = 3, .handle = 0x50, .cls = 0xA06C};
    vgt_rec_rm_alloc other = {.client = CLIENT, .parent = 3, .handle = 0x60, .cls = 0x9067};
    ok(vgt_write_rm_alloc(w, ++ts, &tsg, &e), &e);
    ok(vgt_write_rm_alloc(w, ++ts, &other, &e), &e);
    /* Channel 0xA1 and its context share 0x71 were allocated with parameters (flags 0x10000030, async). */
    uint8_t chp[0x170] = {0}, sharep[12] = {0};
    chp[0x14] = 0x30, chp[0x17] = 0x10, sharep[4] = 1;
    vgt_rec_rm_alloc share = {.client = CLIENT, .parent = 0x50, .handle = 0x71, .cls = 0x9067,
                              .params_length = sizeof sharep, .params_in = sharep, .params_out = sharep};
    vgt_rec_rm_alloc challoc = {.client = CLIENT, .parent = 0x50, .handle = 0xA1, .cls = 0xC86F,
                                .params_length = sizeof chp, .params_in = chp, .params_out = chp};
    ok(vgt_write_rm_alloc(w, ++ts, &share, &e), &e);
    ok(vgt_write_rm_alloc(w, ++ts, &challoc, &e), &e);
    const uint32_t parents[4] = {0x50, 0x50, 3, 0x60};
    for (uint32_t i = 0; i < 4; i++) {
        vgt_rec_channel c = {.client = CLIENT, .parent = parents[i], .handle = 0xA0 + i, .cls = 0xC86F, .entries = 128,
                             .context_share = 0x70 + i};
        ok(vgt_write_channel(w, ++ts, &c, &e), &e);
    }
    ok(vgt_writer_close(w, &e), &e);

    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    vgt_replay *rp;
    vgt_reader *r;
    nseen = 0;
    run_path(&rp, &r, &o, path, &e);
    vgt_replay_finish(rp, &e);
    CHECK(nseen == 4, "four channels created: %u", nseen);
    for (uint32_t i = 0; i < nseen; i++) {
        uint32_t want = i < 2 ? 0x50u : 0u;
        CHECK(seen_handle[i] == 0xA0 + i && seen_group[i] == want && seen_group_client[i] == (want ? CLIENT : 0u),
              "channel 0x%x: group 0x%x client 0x%x, expected group 0x%x", seen_handle[i], seen_group[i],
              seen_group_client[i], want);
        CHECK(seen_share[i] == (want ? 0x70 + i : 0u), "channel 0x%x: context share 0x%x", seen_handle[i], seen_share[i]);
        CHECK(seen_has_flags[i] == (i == 1) && seen_flags[i] == (i == 1 ? 0x10000030u : 0u),
              "channel 0x%x: allocation flags 0x%x (recorded %d)", seen_handle[i], seen_flags[i], seen_has_flags[i]);
        CHECK(seen_has_share_flags[i] == (i == 1) && seen_share_flags[i] == (i == 1 ? 1u : 0u),
              "channel 0x%x: context share flags 0x%x (recorded %d)", seen_handle[i], seen_share_flags[i],
              seen_has_share_flags[i]);
    }
    vgt_reader_close(r);
    vgt_replay_close(rp);
    unlink(path);
}

/* The Vulkan triangle as captured: TSG 0xcef80003 holds the 3D channel 0xbeec0100 (context share
 * 0xcef000c0) and the compute channel 0xbeec0104 (0xcef000c1), which loads its own MME program over
 * instruction-RAM word 0 in submission 11. Placed in creation order by the gpu backend's planner, the
 * first opens the TSG (VEID 0) and the second gets an async subcontext of its own, not the 3D channel's. */
static void test_vk_triangle_subcontexts(void)
{
    fake = vgt_backend_sim;
    fake.channel_create = record_channel_create;
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    nseen = 0;
    CHECK_STATUS(vgt_replay_open(&rp, &o, &e), VGT_OK, &e, "vgt_replay_open");
    CHECK_STATUS(vgt_reader_open_path(&r, "corpus/vk_triangle.vgt", NULL, &e), VGT_OK, &e, "open corpus/vk_triangle.vgt");
    CHECK_STATUS(vgt_replay_run(rp, r, &e), VGT_OK, &e, "vgt_replay_run");
    vgt_replay_finish(rp, &e);
    vgt_gpu_peer peers[SEEN_MAX];
    uint32_t npeers = 0, nplaced = 0;
    vgt_gpu_placement got[2] = {VGT_GPU_PLACE_SHARE, VGT_GPU_PLACE_SHARE};
    for (uint32_t i = 0; i < nseen; i++) {
        if (seen_group[i] != 0xcef80003u) continue;
        uint32_t at;
        vgt_gpu_placement p = vgt_gpu_place(seen_share[i], seen_handle[i] == 0xbeec0100u, peers, npeers, &at);
        if (nplaced < 2) got[nplaced++] = p;
        peers[npeers++] = (vgt_gpu_peer){.context_share = seen_share[i], .async = p == VGT_GPU_PLACE_SUBCONTEXT};
    }
    CHECK(nplaced == 2, "two channels in group 0xcef80003: %u", nplaced);
    CHECK(got[0] == VGT_GPU_PLACE_OWN_TSG && got[1] == VGT_GPU_PLACE_SUBCONTEXT,
          "3D channel opens the TSG (%d), compute channel on its own subcontext (%d)", (int)got[0], (int)got[1]);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

/* GPU_UNMAP behind asynchronous work: the engine drains the backend first, with --no-wait too; when the
 * work does not finish, the mapping is left in place and a warning says so. */
static int unmap_calls, idle_before_unmap, idle_result_timeout;
static uint64_t warnings_seen;

static vgt_status counting_idle(vgt_backend *b, uint64_t timeout_ns, vgt_error *err)
{
    idle_calls++;
    if (idle_result_timeout) return VGT_FAIL(err, VGT_E_TIMEOUT, VGT_NO_OFFSET, "fake: still running");
    return vgt_backend_sim.idle(b, timeout_ns, err);
}

static vgt_status counting_unmap(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, vgt_error *err)
{
    unmap_calls++;
    idle_before_unmap = idle_calls;
    return vgt_backend_sim.unmap(b, vas, va, size, err);
}

static void count_warnings(void *ctx, const vgt_replay_report *r)
{
    (void)ctx;
    if (r->kind == VGT_RPT_WARNING && strstr(r->msg, "left mapped")) warnings_seen++;
}

static void run_unmap(const char *path, int timeout, int expect_unmaps)
{
    fake = vgt_backend_sim;
    fake.caps = fake_gpu_caps;
    fake.idle = counting_idle;
    fake.unmap = counting_unmap;
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.no_wait = 1;
    o.submit_timeout_ms = 10;
    o.report = count_warnings;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    idle_calls = unmap_calls = idle_before_unmap = 0;
    idle_result_timeout = timeout;
    warnings_seen = 0;
    run_path(&rp, &r, &o, path, &e);
    CHECK(unmap_calls == expect_unmaps, "timeout %d: %d unmaps, expected %d", timeout, unmap_calls, expect_unmaps);
    CHECK(!expect_unmaps || idle_before_unmap >= 1, "the backend was idled before the unmap: %d", idle_before_unmap);
    CHECK(warnings_seen == (uint64_t)!expect_unmaps, "warnings naming the kept mapping: %llu",
          (unsigned long long)warnings_seen);
    idle_result_timeout = 0;
    vgt_replay_finish(rp, &e);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

static void test_unmap_drains(void)
{
    char path[] = "/tmp/test_replay_lane1_unmap_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.length = 0x1000, g.memory = 0x11;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    write_release(w, &ts, 0, DATA_VA + 0x10, 0x22, &e);
    vgt_rec_gpu_unmap u = {.client = CLIENT, .device = 1, .va_space = 2, .gpu_va = DATA_VA, .length = 0x1000, .source = 1};
    ok(vgt_write_gpu_unmap(w, ++ts, &u, &e), &e);
    ok(vgt_writer_close(w, &e), &e);
    run_unmap(path, 0, 1);
    run_unmap(path, 1, 0);
    unlink(path);
}

/* options.wait_demand on an asynchronous backend: no wait after each submission; a wait before a host
 * write (MEMORY changed), before a check reads memory, and before a push buffer still in flight is written
 * over; the checks find what they find with a wait after each submission. */
static void run_waits(const char *path, int demand, vgt_replay_summary *out, int *idles)
{
    use_fake_gpu();
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.check = 1;
    o.live = 1;
    o.wait_demand = demand;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    idle_calls = 0;
    run_path(&rp, &r, &o, path, &e);
    *idles = idle_calls;   /* before finish, which always waits */
    vgt_replay_finish(rp, &e);
    *out = *vgt_replay_summary_get(rp);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

static void test_wait_on_demand(void)
{
    char path[] = "/tmp/test_replay_lane1_waits_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 1};
    ok(vgt_write_mem_alloc(w, ++ts, &m, &e), &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.offset = 0x100000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    for (uint32_t k = 0; k < 4; k++) write_release(w, &ts, k, DATA_VA + 0x10 + 8 * k, 0x40 + k, &e);   /* 4 pages of pb */
    uint8_t page[64] = {0};
    vgt_rec_memory mc = {.gpu_va = DATA_VA + 0x800, .length = sizeof page, .reason = VGT_MEM_CHANGED, .memory = 0x10,
                         .data = page};
    ok(vgt_write_memory(w, ++ts, &mc, &e), &e);   /* compared, then a host write: waits first */
    write_release(w, &ts, 0, DATA_VA + 0x30, 0x50, &e);   /* push buffer page 0 again, after the wait: no reuse wait */
    write_release(w, &ts, 4, DATA_VA + 0x38, 0x51, &e);
    write_release(w, &ts, 4, DATA_VA + 0x38, 0x51, &e);   /* page 4 again while in flight: waits */
    vgt_rec_semaphore sem = {.gpu_va = DATA_VA + 0x38, .size = 4, .value = 0x51};
    ok(vgt_write_semaphore(w, ++ts, &sem, &e), &e);   /* a check reads memory: waits */
    ok(vgt_writer_close(w, &e), &e);
    vgt_replay_summary each, demand;
    int idles_each, idles_demand;
    run_waits(path, 0, &each, &idles_each);
    run_waits(path, 1, &demand, &idles_demand);
    CHECK(idles_each == 7 && !each.wait_demand && each.waits == 7, "each: %d idle calls, %llu waits", idles_each,
          (unsigned long long)each.waits);
    CHECK(demand.wait_demand && idles_demand == 3 && demand.waits == 3, "demand: %d idle calls, %llu waits (expected 3)",
          idles_demand, (unsigned long long)demand.waits);
    /* the MEMORY record is compared (--check) before it is written: that wait is counted as the write's */
    CHECK(demand.waits_for_check == 1 && demand.waits_for_pb_reuse == 1 && demand.waits_for_write == 1,
          "demand waits: write %llu, push-buffer reuse %llu, check %llu", (unsigned long long)demand.waits_for_write,
          (unsigned long long)demand.waits_for_pb_reuse, (unsigned long long)demand.waits_for_check);
    CHECK(each.checks_passed == demand.checks_passed && each.checks_failed == demand.checks_failed &&
              each.checks_skipped == demand.checks_skipped && demand.checks_passed >= 1 && !demand.checks_failed,
          "the same checks: each %llu/%llu/%llu, demand %llu/%llu/%llu", (unsigned long long)each.checks_passed,
          (unsigned long long)each.checks_failed, (unsigned long long)each.checks_skipped,
          (unsigned long long)demand.checks_passed, (unsigned long long)demand.checks_failed,
          (unsigned long long)demand.checks_skipped);
    unlink(path);
}

/* Replays path on backend b (force as given); returns vgt_replay_run's status, the message in e. */
static vgt_status replay_status(const char *path, const vgt_backend_ops *b, int force, vgt_error *e)
{
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = b;
    o.force = force;
    vgt_replay *rp;
    vgt_reader *r;
    CHECK_STATUS(vgt_replay_open(&rp, &o, e), VGT_OK, e, "vgt_replay_open");
    CHECK_STATUS(vgt_reader_open_path(&r, path, NULL, e), VGT_OK, e, "vgt_reader_open_path");
    vgt_status st = vgt_replay_run(rp, r, e);
    vgt_replay_finish(rp, NULL);
    vgt_reader_close(r);
    vgt_replay_close(rp);
    return st;
}

static uint32_t fake_caps_no_counts(void) { return fake_gpu_caps() & ~(uint32_t)VGT_CAP_DECODES; }

/* The summary says whether the backend counted the work (VGT_CAP_DECODES): the gpu backend runs the push
 * buffers without decoding them, so its zeros are "not counted", not "none". */
static void test_work_counted(void)
{
    vgt_replay_options o = vgt_replay_defaults();
    vgt_replay *rp;
    vgt_error e;
    o.backend = &vgt_backend_sim;
    CHECK_STATUS(vgt_replay_open(&rp, &o, &e), VGT_OK, &e, "open on sim");
    CHECK(vgt_replay_summary_get(rp)->work_counted == 1, "sim counts the work it runs");
    vgt_replay_close(rp);
    use_fake_gpu();
    fake.caps = fake_caps_no_counts;
    o.backend = &fake;
    CHECK_STATUS(vgt_replay_open(&rp, &o, &e), VGT_OK, &e, "open on the fake GPU");
    CHECK(vgt_replay_summary_get(rp)->work_counted == 0, "a backend without VGT_CAP_DECODES: not counted");
    vgt_replay_close(rp);
}

/* A one-channel trace with identity id (n entries) at path (a mkstemp template): refused on the fake GPU
 * with a message naming why, run when forced, run on sim. */
static void check_refused_on_gpu(char *path, const vgt_identity *id, uint32_t n, const char *why)
{
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    vgt_error e;
    vgt_writer *w;
    vgt_writer_options wo = vgt_writer_defaults();
    ok(vgt_writer_open_path(&w, path, &wo, id, n, &e), &e);
    uint64_t ts = 0;
    write_channel_a0(w, &ts, &e);
    ok(vgt_writer_close(w, &e), &e);
    use_fake_gpu();
    vgt_status st = replay_status(path, &fake, 0, &e);
    CHECK(st == VGT_E_ARG && strstr(e.msg, why) && strstr(e.msg, "refusing"),
          "%s trace on a GPU-like backend: %s %s", why, vgt_status_name(st), e.msg);
    st = replay_status(path, &fake, 1, &e);
    CHECK(st == VGT_OK, "forced: %s %s", vgt_status_name(st), e.msg);
    st = replay_status(path, &vgt_backend_sim, 0, &e);
    CHECK(st == VGT_OK, "on sim: %s %s", vgt_status_name(st), e.msg);
}

/* A trace marked synthetic is refused on a hardware (asynchronous) backend unless forced; sim runs it. */
static void test_synthetic_refused(void)
{
    char path[] = "/tmp/test_replay_lane1_synth_XXXXXX";
    vgt_identity id[] = {{"producer", "test_replay_lane1"}, {"capture_mode", "synthetic"}};
    check_refused_on_gpu(path, id, 2, "synthetic");
    unlink(path);
}

/* A trace marked derived (identity derived_from: edited to fault on purpose, corpus/derive/) is refused the
 * same way, by the engine and by vgt_replay_admit before any backend opens. */
static void test_derived_refused(void)
{
    char path[] = "/tmp/test_replay_lane1_derived_XXXXXX";
    vgt_identity id[] = {{"producer", "vgt record"}, {"capture_mode", "preload"}, {"derived_from", "x.vgt"}};
    check_refused_on_gpu(path, id, 3, "derived");
    vgt_error e;
    vgt_reader *r;
    CHECK_STATUS(vgt_reader_open_path(&r, path, NULL, &e), VGT_OK, &e, "vgt_reader_open_path");
    CHECK(vgt_replay_admit(r, &fake, 0, &e) == VGT_E_ARG, "admit: refused without force");
    CHECK(vgt_replay_admit(r, &fake, 1, &e) == VGT_OK, "admit: forced");
    CHECK(vgt_replay_admit(r, &vgt_backend_sim, 0, &e) == VGT_OK, "admit: sim runs it");
    vgt_reader_close(r);
    unlink(path);
}

static int submits_seen;
static vgt_status counting_submit(vgt_backend *b, uint32_t ch, const uint64_t *e, uint32_t n, uint32_t flags,
                                  vgt_error *err)
{
    submits_seen++;
    return vgt_backend_sim.submit(b, ch, e, n, flags, err);
}

/* A trace whose one submission uploads the macro prog to HOPPER_A, binds macro 0 to it and calls it
 * `calls` times. */
static void write_macro_trace_calls(const char *path, const enc_prog *prog, uint32_t calls)
{
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_trace(path, &e);
    write_channel_a0(w, &ts, &e);
    uint32_t dw[128];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, 128);
    vgt_pbw_set_object(&pb, 0, 0xcb97);
    vgt_pbw_1(&pb, 0, VGT_MME_M_LOAD_INSTRUCTION_RAM_POINTER, 0);
    vgt_pbw_non_inc(&pb, 0, VGT_MME_M_LOAD_INSTRUCTION_RAM, prog->code, prog->n);
    const uint32_t bind[2] = {0, 0}, param = 7;
    vgt_pbw_one_inc(&pb, 0, VGT_MME_M_LOAD_START_ADDRESS_RAM_POINTER, bind, 2);
    for (uint32_t i = 0; i < calls; i++) vgt_pbw_one_inc(&pb, 0, VGT_MME_M_CALL_MACRO0, &param, 1);
    ok(vgt_pbw_check(&pb, &e), &e);
    uint64_t ent = (uint64_t)(pb.n << 10) << 32 | (uint32_t)PB_VA;
    uint8_t entry[8];
    for (int i = 0; i < 8; i++) entry[i] = (uint8_t)(ent >> (8 * i));
    vgt_segment seg = {.gpu_va = PB_VA, .length = pb.n * 4, .data = (const uint8_t *)dw};
    vgt_rec_gpfifo_submit sub = {.client = CLIENT, .channel = 0xA0, .entry_count = 1, .segment_count = 1,
                                 .entries = entry, .segments = &seg, .gp_get_after = VGT_GP_NOT_READ, .gp_put_after = 1};
    ok(vgt_write_gpfifo_submit(w, ++ts, &sub, &e), &e);
    ok(vgt_writer_close(w, &e), &e);
}

static void write_macro_trace(const char *path, const enc_prog *prog) { write_macro_trace_calls(path, prog, 1); }

/* Replays path on the fake GPU (force as given): how many submissions were refused and submitted. */
static void run_guarded(const char *path, int force, uint64_t *refused, int *submitted)
{
    use_fake_gpu();
    fake.submit = counting_submit;
    submits_seen = 0;
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.force = force;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    run_path(&rp, &r, &o, path, &e);
    vgt_replay_finish(rp, NULL);
    const vgt_replay_summary *s = vgt_replay_summary_get(rp);
    *refused = s->refused;
    *submitted = submits_seen;
    CHECK(vgt_replay_summary_failed(s) == (s->refused > 0), "a refusal fails the replay (refused %llu)",
          (unsigned long long)s->refused);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

/* On hardware, a submission calling a macro the MME simulator predicts to raise ILLEGAL_OPCODE is not
 * submitted (the exception leaves the GPU unable to finish other programs' Vulkan draws); a clean macro
 * is, and force lets the illegal one through. */
static void test_mme_guard(void)
{
    char path[] = "/tmp/test_replay_lane1_mme_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    enc_prog bad = {.n = 0}, good = {.n = 0};
    vgt_mme_tu104_inst in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADDC, 1, VGT_MME_TU104_ZERO, VGT_MME_TU104_ZERO, 0);   /* ADDC in ALU0 */
    tu_add(&bad, &in);
    tu_end(&bad);
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_ADD, 1, VGT_MME_TU104_LOAD0, VGT_MME_TU104_ZERO, 0);
    tu_add(&good, &in);
    tu_end(&good);
    uint64_t refused;
    int submitted;
    write_macro_trace(path, &bad);
    run_guarded(path, 0, &refused, &submitted);
    CHECK(refused == 1 && submitted == 0, "illegal macro: refused %llu, submitted %d", (unsigned long long)refused,
          submitted);
    run_guarded(path, 1, &refused, &submitted);
    CHECK(refused == 0 && submitted == 1, "forced: refused %llu, submitted %d", (unsigned long long)refused, submitted);
    write_macro_trace(path, &good);
    run_guarded(path, 0, &refused, &submitted);
    CHECK(refused == 0 && submitted == 1, "clean macro: refused %llu, submitted %d", (unsigned long long)refused,
          submitted);
    /* a one-instruction infinite loop (JAL to itself) called 12 times: each call stops at the per-call limit
     * (no exception predicted), but after 8 the budget for failing calls is spent and the simulator runs no
     * more: calls it did not check may raise an exception, so the submission is refused */
    enc_prog loop = {.n = 0};
    in = tu_nop();
    tu_alu(&in, 0, VGT_MME_TU104_JAL, VGT_MME_TU104_ZERO, VGT_MME_TU104_ZERO, VGT_MME_TU104_ZERO, 0);
    tu_add(&loop, &in);
    write_macro_trace_calls(path, &loop, 12);
    run_guarded(path, 0, &refused, &submitted);
    CHECK(refused == 1 && submitted == 0, "runaway macro over the MME budget: refused %llu, submitted %d",
          (unsigned long long)refused, submitted);
    write_macro_trace_calls(path, &loop, 4);
    run_guarded(path, 0, &refused, &submitted);
    CHECK(refused == 0 && submitted == 1, "4 runaway calls, within the budget: refused %llu, submitted %d",
          (unsigned long long)refused, submitted);
    unlink(path);
}

/* The census per draw when the GPU does not finish a piece (its wait times out, as on a GPU left unable to
 * finish draws): every row read after it says unfinished, and a draw whose piece changed nothing still
 * gets its render-target rows (bytes 0), so it is not taken for a draw that stored nothing. Two "draws":
 * SET_MULTI_VIEW (HOPPER_A 0x0228, writes nothing) and the host semaphore release of the target's first
 * pixel. With an idle that finishes: no row for the quiet draw, no row unfinished. */
static uint64_t submit_seq_of(const char *path)
{
    vgt_reader *r;
    vgt_record rec;
    vgt_error e;
    uint64_t seq = UINT64_MAX;
    ok(vgt_reader_open_path(&r, path, NULL, &e), &e);
    while (vgt_reader_next(r, &rec, &e) == VGT_OK)
        if (rec.type == VGT_REC_GPFIFO_SUBMIT && seq == UINT64_MAX) seq = rec.seq;
    vgt_reader_close(r);
    return seq;
}

static void test_census_unfinished(void)
{
    char path[] = "/tmp/test_replay_lane1_unfin_XXXXXX";
    vgt_error e;
    uint64_t ts = 0;
    vgt_writer *w = open_temp_trace(path, &e);
    vgt_rec_mem_alloc m = {.client = CLIENT, .parent = 1, .handle = 0x10, .cls = 0x40, .size = 0x200000, .aperture = 1};
    ok(vgt_write_mem_alloc(w, ++ts, &m, &e), &e);
    vgt_rec_gpu_map g = {.client = CLIENT, .device = 1, .va_space = 2, .memory = 0x10, .gpu_va = PB_VA, .length = 0x100000, .source = 1};
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    g.gpu_va = DATA_VA, g.offset = 0x100000;
    ok(vgt_write_gpu_map(w, ++ts, &g, &e), &e);
    write_channel_a0(w, &ts, &e);
    const uint32_t pb[] = {1u << 29 | 1u << 16 | 1u << 13 | 0, 0xCB97,
                           1u << 29 | 6u << 16 | 1u << 13 | 0x800 >> 2, (uint32_t)(RT_VA >> 32), (uint32_t)RT_VA, 16, 8,
                           0xCF, 0,
                           1u << 29 | 1u << 16 | 1u << 13 | 0x228 >> 2, 0,   /* dword 9: "draw" 0 */
                           1u << 29 | 5u << 16 | 0x5c >> 2, (uint32_t)RT_VA, (uint32_t)(RT_VA >> 32), 0xff0000ffu, 0, 1};
    write_pb(w, &ts, 0, pb, sizeof pb / 4, &e);   /* dword 11: "draw" 1 */
    ok(vgt_writer_close(w, &e), &e);
    uint64_t seq = submit_seq_of(path);
    const vgt_replay_draw_cut cuts[] = {{.seq = seq, .entry = 0, .dword = 10, .number = 0},
                                        {.seq = seq, .entry = 0, .dword = 12, .number = 1}};
    for (int timeout = 0; timeout < 2; timeout++) {
        fake = vgt_backend_sim;
        fake.caps = fake_gpu_caps;
        fake.idle = counting_idle;
        fake.produced = NULL, fake.write_log = NULL, fake.write_log_reset = NULL;
        idle_result_timeout = timeout;
        vgt_replay_options o = vgt_replay_defaults();
        o.backend = &fake;
        o.census = 1;
        o.submit_timeout_ms = 10;
        o.draw_cuts = cuts;
        o.ndraw_cuts = 2;
        vgt_replay *rp;
        vgt_reader *r;
        run_path(&rp, &r, &o, path, &e);
        vgt_replay_finish(rp, &e);
        const vgt_replay_summary *s = vgt_replay_summary_get(rp);
        uint64_t n, quiet0 = 0, stored1 = 0, unfinished = 0;
        const vgt_store_row *rows = vgt_replay_stores(rp, &n);
        for (uint64_t i = 0; i < n; i++) {
            unfinished += rows[i].unfinished;
            if (rows[i].draw_first == 0 && rows[i].draw_count == 1 && !strcmp(rows[i].what, "render-target"))
                quiet0 += rows[i].bytes_changed == 0;
            if (rows[i].draw_first == 1 && rows[i].bytes_changed == 2 && rows[i].px0 == 0xff0000ffll) stored1++;
        }
        CHECK(s->census_draws == 2 && s->census_draws_quiet == 1, "timeout %d: 2 draws read, 1 quiet: %llu %llu",
              timeout, (unsigned long long)s->census_draws, (unsigned long long)s->census_draws_quiet);
        CHECK(stored1 == 1, "timeout %d: draw 1's row (the pixel it released)", timeout);
        CHECK(s->census_draws_unfinished == (timeout ? 2u : 0u), "timeout %d: draws unfinished %llu", timeout,
              (unsigned long long)s->census_draws_unfinished);
        CHECK(quiet0 == (timeout ? 1u : 0u), "timeout %d: the quiet draw's render-target rows: %llu", timeout,
              (unsigned long long)quiet0);
        CHECK(timeout ? unfinished == n && n >= 2 : unfinished == 0, "timeout %d: %llu of %llu rows unfinished",
              timeout, (unsigned long long)unfinished, (unsigned long long)n);
        vgt_reader_close(r);
        vgt_replay_close(rp);
    }
    idle_result_timeout = 0;
    unlink(path);
}

int main(void)
{
    test_synthetic_refused();
    test_derived_refused();
    test_mme_guard();
    test_work_counted();
    test_reserved_choice();
    test_reloc_notes();
    test_gob_offsets();
    test_linearize();
    test_clear_pixel();
    test_png();
    test_fnv();
    test_store_diff();
    test_census_replay();
    test_census_render_target();
    test_census_unfinished();
    test_plan_operands();
    test_plan_copy_operands();
    test_fault_window();
    test_channel_groups();
    test_vk_triangle_subcontexts();
    test_unmap_drains();
    test_wait_on_demand();
    test_capture_only();
    test_notify_timestamp();
    return check_finish("test_replay_lane1");
}
