/* test_model.c: the trace model (vgt/model.h) folding records written by libvgt:
 *  - objects by (client, handle); freeing a parent frees its subtree, its channels and mappings;
 *  - channels, engine objects, tokens from WORK_SUBMIT_TOKEN and from the RM_CONTROL fallback;
 *  - GPU mappings sorted, found by VA, replaced on overlap, removed by GPU_UNMAP;
 *  - memory contents: MEMORY records, push-buffer segments and ring entries of GPFIFO_SUBMIT, partial
 *    pages with known-byte masks, forgetting on unmap, the memory limit;
 *  - sequence order enforced; failed RM calls (status != 0) change nothing;
 *  - CHANNEL_STATE (1.1): kept per live channel, replaced by a later one, ignored for an unknown channel,
 *    cleared when the channel handle is allocated again;
 *  - CHANNEL_METHODS (1.1): the same rules, the model keeping its own copy of the writes; a ragged one is
 *    a format error naming the record;
 *  - allocation flags: a channel's NVOS04 flags and a context share's flags read from their RM_ALLOC
 *    parameters, kept across the CHANNEL record; absent when no parameters were recorded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/model.h"
#include "vgt/trace.h"

#include "check.h"
#include "vgt/nv_abi.h"

#define C 0xc1d00001u
#define DEV 0x5c000001u
#define VAS 0x5c000002u
#define MEM_A 0x5c000010u
#define MEM_B 0x5c000011u
#define CHAN 0x5c000020u
#define TSG 0x5c000021u

static char path[256];

/* Writes the trace that the tests fold; returns the seq of each labeled point through marks[]. */
enum { MARK_AFTER_SETUP, MARK_AFTER_SUBMIT, MARK_AFTER_UNMAP, MARK_AFTER_FREE, MARK_COUNT };
static uint64_t marks[MARK_COUNT];
static uint8_t page[4096], seg_bytes[100];

static void write_trace(void)
{
    vgt_writer *w;
    vgt_error e;
    vgt_writer_options o = vgt_writer_defaults();
    o.chunk_target = 4096;
    if (vgt_writer_open_path(&w, path, &o, NULL, 0, &e) != VGT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        exit(2);
    }
    for (int i = 0; i < 4096; i++) page[i] = (uint8_t)(i * 3 + 1);
    for (int i = 0; i < 100; i++) seg_bytes[i] = (uint8_t)(0xa0 + i);
    uint32_t token = 0x77;
    vgt_write_rm_alloc(w, 1, &(vgt_rec_rm_alloc){C, 0, C, 0x41, 0, 0, NULL, NULL}, &e);
    vgt_write_rm_alloc(w, 2, &(vgt_rec_rm_alloc){C, C, DEV, 0x80, 0, 0, NULL, NULL}, &e);
    vgt_write_rm_alloc(w, 3, &(vgt_rec_rm_alloc){C, DEV, VAS, 0x90f1, 0, 0, NULL, NULL}, &e);
    vgt_write_rm_alloc(w, 3, &(vgt_rec_rm_alloc){C, DEV, 0xdead, 0x90f1, 0x1f, 0, NULL, NULL}, &e);   /* failed */
    vgt_write_rm_alloc(w, 4, &(vgt_rec_rm_alloc){C, DEV, TSG, 0xa06c, 0, 0, NULL, NULL}, &e);
    vgt_write_mem_alloc(w, 5, &(vgt_rec_mem_alloc){C, DEV, MEM_A, 0x40, 0x10000, 0, 0, 0, 0, VGT_APERTURE_VIDMEM, 0}, &e);
    vgt_write_mem_alloc(w, 5, &(vgt_rec_mem_alloc){C, DEV, MEM_B, 0x3e, 0x2000, 0, 0, 0, 0, VGT_APERTURE_SYSMEM, 0}, &e);
    vgt_write_gpu_map(w, 6, &(vgt_rec_gpu_map){C, DEV, VAS, MEM_A, 0x100000000ull, 0, 0x10000, 0, VGT_MAP_RM_DMA, 0}, &e);
    vgt_write_gpu_map(w, 6, &(vgt_rec_gpu_map){C, DEV, VAS, MEM_B, 0x80000000ull, 0, 0x2000, 0, VGT_MAP_RM_DMA, 0}, &e);
    vgt_write_channel(w, 7, &(vgt_rec_channel){C, TSG, CHAN, 0xc86f, 0x80000000ull, 512, MEM_B, 0x1000, 0, 1, VAS, 0, 0, 0}, &e);
    vgt_write_engine_object(w, 8, &(vgt_rec_engine_object){C, CHAN, 0x5c000030, 0xcbc0, 0}, &e);
    vgt_write_engine_object(w, 8, &(vgt_rec_engine_object){C, CHAN, 0x5c000031, 0xc8b5, 0}, &e);
    vgt_write_rm_control(w, 9, &(vgt_rec_rm_control){C, CHAN, RM_CTRL_CHAN_GET_WORK_TOKEN, 0, 0, 4, (const uint8_t *)&token,
                                                     (const uint8_t *)&token}, &e);
    vgt_write_memory(w, 10, &(vgt_rec_memory){0x100000000ull, 4096, VGT_MEM_INITIAL, MEM_A, 0, page}, &e);
    vgt_write_memory(w, 10, &(vgt_rec_memory){0x100001800ull, 16, VGT_MEM_CHANGED, MEM_A, 0, page}, &e);
    marks[MARK_AFTER_SETUP] = vgt_writer_next_seq(w);
    uint8_t entries[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    vgt_segment seg = {0x100003000ull - 40, 100, 0, seg_bytes};   /* straddles a page boundary */
    vgt_write_gpfifo_submit(w, 11, &(vgt_rec_gpfifo_submit){C, CHAN, 0x77, 0, 0, 510, VGT_GP_NOT_READ, 0, 2, 1, entries, &seg}, &e);
    marks[MARK_AFTER_SUBMIT] = vgt_writer_next_seq(w);
    vgt_write_gpu_unmap(w, 12, &(vgt_rec_gpu_unmap){C, DEV, VAS, MEM_A, 0x100000000ull, 0x10000, VGT_MAP_RM_DMA, 0}, &e);
    vgt_write_rm_free(w, 12, &(vgt_rec_rm_free){C, CHAN, 0x5c000031, 0}, &e);   /* one engine object alone */
    marks[MARK_AFTER_UNMAP] = vgt_writer_next_seq(w);
    vgt_write_rm_free(w, 13, &(vgt_rec_rm_free){C, C, DEV, 0}, &e);
    marks[MARK_AFTER_FREE] = vgt_writer_next_seq(w);
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
}

static void check_setup(const vgt_model *m)
{
    CHECK(vgt_model_object_count(m) == 9, "9 live objects, got %u", vgt_model_object_count(m));
    CHECK(vgt_model_object_find(m, C, 0xdead) == NULL, "a failed alloc is not an object");
    const vgt_model_object *a = vgt_model_object_find(m, C, MEM_A);
    CHECK(a && a->is_memory && a->size == 0x10000 && a->aperture == VGT_APERTURE_VIDMEM && a->parent == DEV, "MEM_A");
    CHECK(vgt_model_channel_count(m) == 1, "one channel");
    const vgt_model_channel *ch = vgt_model_channel_find(m, C, CHAN);
    CHECK(ch && ch->rec.ring_va == 0x80000000ull && ch->engine_count == 2, "channel");
    CHECK(ch && ch->has_token && ch->token == 0x77, "token from the RM_CONTROL fallback");
    CHECK(vgt_model_channel_by_token(m, 0x77) == ch, "by token");
    CHECK(ch && vgt_model_engine_class(ch, 0x5c000031) == 0xc8b5 && vgt_model_engine_class(ch, 1) == 0, "engine class");
    CHECK(vgt_model_mapping_count(m) == 2, "2 mappings");
    CHECK(vgt_model_mapping_at(m, 0)->gpu_va == 0x80000000ull, "sorted by VA");
    const vgt_model_mapping *mp = vgt_model_mapping_find(m, 0x10000ffffull);
    CHECK(mp && mp->memory == MEM_A, "find inside");
    CHECK(vgt_model_mapping_find(m, 0x100010000ull) == NULL, "find past the end");
    uint8_t buf[8192];
    uint64_t known = 0;
    vgt_error e;
    CHECK(vgt_model_mem_read(m, 0x100000000ull, buf, 4096, &known, &e) == VGT_OK && known == 4096 && !memcmp(buf, page, 4096), "page");
    CHECK(vgt_model_mem_read(m, 0x100001000ull, buf, 4096, &known, &e) == VGT_OK && known == 16 &&
          !memcmp(buf + 0x800, page, 16) && buf[0] == 0 && buf[0x810] == 0, "partial page: %llu known", (unsigned long long)known);
}

static int count_pages(void *ctx, uint64_t va, const uint8_t *bytes, const uint8_t *mask)
{
    uint64_t *n = ctx;
    static uint64_t last;
    if (*n && va <= last) CHECK(0, "foreach not ascending at 0x%llx", (unsigned long long)va);
    last = va;
    (*n)++;
    return 0;
}

static void check_submit(const vgt_model *m)
{
    uint8_t buf[128];
    uint64_t known;
    vgt_error e;
    CHECK(vgt_model_submit_count(m) == 1 && vgt_model_channel_find(m, C, CHAN)->submit_count == 1 &&
          vgt_model_channel_find(m, C, CHAN)->last_gp_put == 0, "submit counted");
    CHECK(vgt_model_mem_read(m, 0x100003000ull - 40, buf, 100, &known, &e) == VGT_OK && known == 100 && !memcmp(buf, seg_bytes, 100),
          "segment bytes across pages");
    /* two entries at slots 510 and 511 of the ring */
    CHECK(vgt_model_mem_read(m, 0x80000000ull + 8 * 510, buf, 16, &known, &e) == VGT_OK && known == 16 && buf[0] == 1 && buf[15] == 16,
          "ring entries written at gp_put_before");
    uint64_t n = 0;
    CHECK(vgt_model_mem_foreach(m, count_pages, &n, &e) == VGT_OK && n == 5, "5 pages held, %llu", (unsigned long long)n);
}

static void check_unmap(const vgt_model *m)
{
    uint8_t buf[16];
    uint64_t known = 1;
    vgt_error e;
    CHECK(vgt_model_mapping_count(m) == 1 && vgt_model_mapping_find(m, 0x100000000ull) == NULL, "unmapped");
    CHECK(vgt_model_mem_read(m, 0x100000000ull, buf, 16, &known, &e) == VGT_OK && known == 0, "contents forgotten with the mapping");
    CHECK(vgt_model_mem_read(m, 0x80000000ull + 8 * 510, buf, 16, &known, &e) == VGT_OK && known == 16, "other mapping kept");
    const vgt_model_channel *ch = vgt_model_channel_find(m, C, CHAN);
    CHECK(ch && ch->engine_count == 1 && vgt_model_engine_class(ch, 0x5c000031) == 0 &&
          vgt_model_object_find(m, C, 0x5c000031) == NULL, "a freed engine object leaves its channel");
}

static void check_free(const vgt_model *m)
{
    CHECK(vgt_model_object_count(m) == 1 && vgt_model_object_find(m, C, C), "freeing the device freed its subtree, %u left",
          vgt_model_object_count(m));
    CHECK(vgt_model_channel_count(m) == 0 && vgt_model_mapping_count(m) == 0, "channels and mappings freed with it");
}

static void test_fold(void)
{
    vgt_model *m;
    vgt_reader *r;
    vgt_error e;
    if (vgt_model_new(&m, &e) != VGT_OK || vgt_reader_open_path(&r, path, NULL, &e) != VGT_OK) {
        CHECK(0, "setup: %s", e.msg);
        return;
    }
    vgt_record rec;
    int checked = 0;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK) {
        vgt_status rc = vgt_model_apply(m, &rec, &e);
        CHECK(rc == VGT_OK, "apply seq %llu: %s", (unsigned long long)rec.seq, e.msg);
        uint64_t next = vgt_model_next_seq(m);
        checked += next == marks[MARK_AFTER_SETUP] || next == marks[MARK_AFTER_SUBMIT] || next == marks[MARK_AFTER_UNMAP] ||
                   next == marks[MARK_AFTER_FREE];
        if (next == marks[MARK_AFTER_SETUP]) {
            check_setup(m);
            /* out of order is refused */
            vgt_record again = rec;
            CHECK(vgt_model_apply(m, &again, &e) == VGT_E_SEQUENCE, "re-applying a record");
        }
        if (next == marks[MARK_AFTER_SUBMIT]) check_submit(m);
        if (next == marks[MARK_AFTER_UNMAP]) check_unmap(m);
        if (next == marks[MARK_AFTER_FREE]) check_free(m);
    }
    CHECK(vgt_model_next_seq(m) == marks[MARK_AFTER_FREE], "all applied");
    CHECK(checked == MARK_COUNT, "every checkpoint reached (%d)", checked);
    vgt_reader_close(r);
    vgt_model_free(m);
}

/* A writer on a second trace beside the main one (path + "." + suffix), or NULL after a failed check. */
static vgt_writer *side_writer(char *p2, size_t n, const char *suffix)
{
    snprintf(p2, n, "%s.%s", path, suffix);
    vgt_writer *w;
    vgt_error e;
    if (vgt_writer_open_path(&w, p2, NULL, NULL, 0, &e) != VGT_OK) {
        CHECK(0, "open %s: %s", p2, e.msg);
        return NULL;
    }
    return w;
}

/* CHANNEL_STATE records folded one by one, the channel checked after each. */
static void test_channel_state(void)
{
    char p2[300];
    vgt_writer *w = side_writer(p2, sizeof p2, "state");
    vgt_error e;
    if (!w) return;
    vgt_rec_channel chan = {C, TSG, CHAN, 0xc86f, 0x80000000ull, 512, MEM_B, 0x1000, 0, 1, VAS, 0, 0, 0};
    vgt_rec_channel_state cs = {C, CHAN, 0xfff, 0, 0x0000120000000000ull, {0xcb97, 0xcbc0, 0, 0, 0xc8b5}, 0xfff};
    vgt_write_channel(w, 1, &chan, &e);                                   /* seq 0 */
    vgt_write_channel_state(w, 2, &cs, &e);                               /* seq 1 */
    vgt_write_channel_state(w, 3, &(vgt_rec_channel_state){C, 0x999, 1, 0, 0, {0xa140}, 1}, &e);   /* seq 2: no such channel */
    cs.subch_class[2] = 0xa140;
    cs.subdevice_mask = 0x1;
    vgt_write_channel_state(w, 4, &cs, &e);                               /* seq 3: replaces seq 1 */
    vgt_write_channel(w, 5, &chan, &e);                                   /* seq 4: the handle again */
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    vgt_model *m;
    vgt_reader *r;
    if (vgt_model_new(&m, &e) != VGT_OK || vgt_reader_open_path(&r, p2, NULL, &e) != VGT_OK) {
        CHECK(0, "setup: %s", e.msg);
        return;
    }
    vgt_record rec;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK) {
        CHECK(vgt_model_apply(m, &rec, &e) == VGT_OK, "apply seq %llu: %s", (unsigned long long)rec.seq, e.msg);
        const vgt_model_channel *ch = vgt_model_channel_find(m, C, CHAN);
        if (!ch) {
            CHECK(0, "channel missing after seq %llu", (unsigned long long)rec.seq);
            break;
        }
        switch (rec.seq) {
        case 0: CHECK(!ch->has_state, "no state before a CHANNEL_STATE"); break;
        case 1: case 2:
            CHECK(ch->has_state && ch->state_seq == 1 && ch->state.subch_class[0] == 0xcb97 && ch->state.subch_class[4] == 0xc8b5 &&
                  ch->state.subch_class[2] == 0 && ch->state.extended_base == 0x0000120000000000ull && ch->state.subdevice_mask == 0xfff,
                  "state of seq 1 after seq %llu", (unsigned long long)rec.seq);
            CHECK(vgt_model_channel_count(m) == 1, "a state for an unknown channel makes no channel");
            break;
        case 3: CHECK(ch->has_state && ch->state_seq == 3 && ch->state.subch_class[2] == 0xa140 && ch->state.subdevice_mask == 1, "replaced"); break;
        case 4: CHECK(!ch->has_state && ch->state.subch_class[0] == 0, "re-allocated channel starts without state"); break;
        }
    }
    CHECK(vgt_model_next_seq(m) == 5, "all 5 applied");
    vgt_reader_close(r);
    vgt_model_free(m);
    remove(p2);
}

/* Allocation flags from RM_ALLOC parameters: a channel's (offset 0x14 of NV_CHANNEL_ALLOC_PARAMS) survive
 * its CHANNEL record; a context share's (offset 4); none without parameters or when too short. */
static void test_alloc_flags(void)
{
    char p2[300];
    vgt_writer *w = side_writer(p2, sizeof p2, "flags");
    vgt_error e;
    if (!w) return;
    uint8_t chp[0x170] = {0}, share[12] = {0}, shortp[8] = {0};
    chp[0x14] = 0x30, chp[0x17] = 0x10;   /* 0x10000030: runqueue 1, privileged, group thread 1 */
    share[4] = 1;                         /* async */
    vgt_write_rm_alloc(w, 1, &(vgt_rec_rm_alloc){C, TSG, 0x5c000040, 0x9067, 0, sizeof share, share, share}, &e);
    vgt_write_rm_alloc(w, 2, &(vgt_rec_rm_alloc){C, TSG, CHAN, 0xc56f, 0, sizeof chp, chp, chp}, &e);
    vgt_write_channel(w, 3, &(vgt_rec_channel){C, TSG, CHAN, 0xc56f, 0x80000000ull, 512, MEM_B, 0, 0, 1, VAS, 0x5c000040, 0, 0}, &e);
    vgt_write_rm_alloc(w, 4, &(vgt_rec_rm_alloc){C, TSG, CHAN + 1, 0xc86f, 0, 0, NULL, NULL}, &e);
    vgt_write_rm_alloc(w, 5, &(vgt_rec_rm_alloc){C, TSG, CHAN + 2, 0xc86f, 0, sizeof shortp, shortp, shortp}, &e);
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    vgt_model *m;
    vgt_reader *r;
    if (vgt_model_new(&m, &e) != VGT_OK || vgt_reader_open_path(&r, p2, NULL, &e) != VGT_OK) {
        CHECK(0, "setup: %s", e.msg);
        return;
    }
    vgt_record rec;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK)
        CHECK(vgt_model_apply(m, &rec, &e) == VGT_OK, "apply seq %llu: %s", (unsigned long long)rec.seq, e.msg);
    const vgt_model_object *ch = vgt_model_object_find(m, C, CHAN), *sh = vgt_model_object_find(m, C, 0x5c000040);
    CHECK(ch && ch->has_alloc_flags && ch->alloc_flags == 0x10000030u, "channel flags kept across CHANNEL: 0x%x",
          ch ? ch->alloc_flags : 0);
    CHECK(sh && sh->has_alloc_flags && sh->alloc_flags == 1, "context share flags");
    const vgt_model_object *none = vgt_model_object_find(m, C, CHAN + 1), *cut = vgt_model_object_find(m, C, CHAN + 2);
    CHECK(none && !none->has_alloc_flags && cut && !cut->has_alloc_flags, "no flags without (enough) parameters");
    vgt_reader_close(r);
    vgt_model_free(m);
    remove(p2);
}

/* CHANNEL_METHODS records folded one by one, the channel checked after each. */
static void test_channel_methods(void)
{
    char p2[300];
    vgt_writer *w = side_writer(p2, sizeof p2, "methods");
    vgt_error e;
    if (!w) return;
    vgt_rec_channel chan = {C, TSG, CHAN, 0xc86f, 0x80000000ull, 512, MEM_B, 0x1000, 0, 1, VAS, 0, 0, 0};
    uint8_t a[16], b[8], ragged[16 + 12] = {0};
    vgt_channel_method_put(a, &(vgt_state_method){0, 0x0114, 0});
    vgt_channel_method_put(a + 8, &(vgt_state_method){4, 0x0400, 0xabcd});
    vgt_channel_method_put(b, &(vgt_state_method){2, 0x3400, 7});
    ragged[0] = (uint8_t)CHAN, ragged[1] = (uint8_t)(CHAN >> 8), ragged[12] = 12;
    vgt_write_channel(w, 1, &chan, &e);                                                       /* seq 0 */
    vgt_write_channel_methods(w, 2, &(vgt_rec_channel_methods){C, CHAN, 0, 16, a}, &e);       /* seq 1 */
    vgt_write_channel_methods(w, 3, &(vgt_rec_channel_methods){C, 0x999, 0, 8, b}, &e);       /* seq 2: no such channel */
    vgt_write_channel_methods(w, 4, &(vgt_rec_channel_methods){C, CHAN, 0, 8, b}, &e);        /* seq 3: replaces seq 1 */
    vgt_write_channel(w, 5, &chan, &e);                                                       /* seq 4: the handle again */
    vgt_write_record(w, VGT_REC_CHANNEL_METHODS, 0, 6, ragged, sizeof ragged, NULL, &e);     /* seq 5: ragged */
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
    vgt_model *m;
    vgt_reader *r;
    if (vgt_model_new(&m, &e) != VGT_OK || vgt_reader_open_path(&r, p2, NULL, &e) != VGT_OK) {
        CHECK(0, "setup: %s", e.msg);
        return;
    }
    vgt_record rec;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK) {
        vgt_status st = vgt_model_apply(m, &rec, &e);
        if (rec.seq == 5) {
            CHECK(st == VGT_E_FORMAT && strstr(e.msg, "CHANNEL_METHODS") && strstr(e.msg, "seq 5"), "ragged: %s", e.msg);
            break;
        }
        CHECK(st == VGT_OK, "apply seq %llu: %s", (unsigned long long)rec.seq, e.msg);
        const vgt_model_channel *ch = vgt_model_channel_find(m, C, CHAN);
        if (!ch) {
            CHECK(0, "channel missing after seq %llu", (unsigned long long)rec.seq);
            break;
        }
        vgt_state_method x = ch->has_methods && ch->methods_rec.writes_length ? vgt_channel_method_at(&ch->methods_rec,
                                                                                vgt_channel_methods_count(&ch->methods_rec) - 1)
                                                                          : (vgt_state_method){0, 0, 0};
        switch (rec.seq) {
        case 0: CHECK(!ch->has_methods, "no methods before a CHANNEL_METHODS"); break;
        case 1: case 2:
            CHECK(ch->has_methods && ch->methods_seq == 1 && vgt_channel_methods_count(&ch->methods_rec) == 2 &&
                  x.subch == 4 && x.method == 0x400 && x.value == 0xabcd, "methods of seq 1 after seq %llu",
                  (unsigned long long)rec.seq);
            break;
        case 3:
            CHECK(ch->has_methods && ch->methods_seq == 3 && vgt_channel_methods_count(&ch->methods_rec) == 1 &&
                  x.subch == 2 && x.method == 0x3400 && x.value == 7, "replaced");
            break;
        case 4: CHECK(!ch->has_methods && !ch->methods, "re-allocated channel starts without methods"); break;
        }
    }
    vgt_reader_close(r);
    vgt_model_free(m);
    remove(p2);
}

static void test_memory_direct(void)
{
    vgt_model *m;
    vgt_error e;
    vgt_model_new(&m, &e);
    uint8_t buf[3 * 4096];
    memset(buf, 0x5a, sizeof buf);
    uint64_t known;
    /* partial writes that complete a page drop its mask */
    CHECK(vgt_model_mem_write(m, 0x1000, buf, 100, &e) == VGT_OK, "write");
    uint64_t with_mask = vgt_model_mem_bytes(m);
    CHECK(vgt_model_mem_write(m, 0x1000 + 100, buf, 4096 - 100, &e) == VGT_OK, "write rest");
    CHECK(vgt_model_mem_bytes(m) == 4096 && with_mask == 8192, "mask dropped when full: %llu then %llu",
          (unsigned long long)with_mask, (unsigned long long)vgt_model_mem_bytes(m));
    CHECK(vgt_model_mem_read(m, 0x1000, buf, 4096, &known, &e) == VGT_OK && known == 4096, "full");
    CHECK(vgt_model_mem_read(m, 0xfff, buf, 2, &known, &e) == VGT_OK && known == 1, "straddling read");
    CHECK(vgt_model_mem_write(m, UINT64_MAX - 2, buf, 8, &e) == VGT_E_FORMAT, "wrap refused: the trace's fault");
    /* a range ending exactly at 2^64 is a range */
    CHECK(vgt_model_mem_write(m, UINT64_MAX - 2, buf, 3, &e) == VGT_OK, "ends at 2^64: %s", e.msg);
    CHECK(vgt_model_mem_read(m, UINT64_MAX - 2, buf, 3, &known, &e) == VGT_OK && known == 3, "read back at 2^64");
    vgt_model_set_memory_limit(m, vgt_model_mem_bytes(m) + 2 * 4096);   /* room for two more pages */
    CHECK(vgt_model_mem_write(m, 0x10000, buf, 2 * 4096, &e) == VGT_OK, "two more pages fit");
    CHECK(vgt_model_mem_write(m, 0x20000, buf, 1, &e) == VGT_E_LIMIT && strstr(e.msg, "limit"), "limit: %s", e.msg);
    vgt_model_free(m);
}

/* Mappings under random GPU_MAP / GPU_UNMAP / RM_FREE against a plain reference list: overlapping maps
 * replace, unmaps remove, frees of memory remove every mapping of it; order, count and find agree. */
struct ref_map { uint64_t va, len; uint32_t mem; };

static uint64_t rnd_state = 12345;
static uint32_t rnd(uint32_t n)
{
    rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
    return (uint32_t)(rnd_state % n);
}

static void ref_remove(struct ref_map *r, uint32_t *n, uint32_t i)
{
    memmove(&r[i], &r[i + 1], sizeof *r * (*n - i - 1));
    (*n)--;
}

static void test_mappings_random(void)
{
    enum { OPS = 20000, MAXREF = 4096 };
    static struct ref_map ref[MAXREF];
    uint32_t nref = 0;
    vgt_model *m;
    vgt_error e;
    vgt_model_new(&m, &e);
    uint8_t buf[64];
    uint64_t seq = 0;
    for (int op = 0; op < OPS; op++) {
        uint32_t kind = rnd(10);
        memset(buf, 0, sizeof buf);
        vgt_record rec = {0, 0, 0, seq, seq, buf, 0, 0};
        if (kind < 6) {           /* GPU_MAP: client, device, va_space, memory, gpu_va, offset, length */
            uint64_t va = 0x10000000ull + 0x1000ull * rnd(256) + (rnd(4) ? 0 : rnd(4096)), len = 1 + rnd(8 * 4096);
            uint32_t mem = 100 + rnd(64);
            uint32_t f[4] = {C, DEV, VAS, mem};
            memcpy(buf, f, 16);
            memcpy(buf + 16, &va, 8);
            memcpy(buf + 32, &len, 8);
            rec.type = VGT_REC_GPU_MAP, rec.length = 56;
            for (uint32_t i = 0; i < nref;)
                if (ref[i].va < va + len && va < ref[i].va + ref[i].len) ref_remove(ref, &nref, i);
                else i++;
            uint32_t at = 0;
            while (at < nref && ref[at].va < va) at++;
            memmove(&ref[at + 1], &ref[at], sizeof *ref * (nref - at));
            ref[at] = (struct ref_map){va, len, mem};
            nref++;
        } else if (kind < 8 && nref) {   /* GPU_UNMAP of a live mapping, or of a VA where none starts */
            uint32_t i = rnd(nref);
            uint64_t va = ref[i].va + (rnd(3) ? 0 : 1);
            uint32_t f[4] = {C, DEV, VAS, ref[i].mem};
            memcpy(buf, f, 16);
            memcpy(buf + 16, &va, 8);
            rec.type = VGT_REC_GPU_UNMAP, rec.length = 40;
            if (va == ref[i].va) ref_remove(ref, &nref, i);
        } else {                         /* RM_FREE of a memory object: all its mappings go */
            uint32_t mem = 100 + rnd(64);
            uint32_t f[4] = {C, DEV, mem, 0};
            memcpy(buf, f, 16);
            rec.type = VGT_REC_RM_FREE, rec.length = 16;
            for (uint32_t i = 0; i < nref;)
                if (ref[i].mem == mem) ref_remove(ref, &nref, i);
                else i++;
        }
        if (vgt_model_apply(m, &rec, &e) != VGT_OK) {
            CHECK(0, "op %d: %s", op, e.msg);
            break;
        }
        seq++;
        uint64_t probe = 0x10000000ull + rnd(270 * 4096);
        const vgt_model_mapping *f = vgt_model_mapping_find(m, probe);
        const struct ref_map *want = NULL;
        for (uint32_t i = 0; i < nref; i++)
            if (probe >= ref[i].va && probe - ref[i].va < ref[i].len) want = &ref[i];
        if (!want != !f || (f && (f->gpu_va != want->va || f->length != want->len || f->memory != want->mem))) {
            CHECK(0, "op %d: find 0x%llx disagrees with the reference", op, (unsigned long long)probe);
            break;
        }
        if (op % 97 == 0 || op == OPS - 1) {
            int same = vgt_model_mapping_count(m) == nref;
            for (uint32_t i = 0; same && i < nref; i++) {
                const vgt_model_mapping *a = vgt_model_mapping_at(m, i);
                same = a && a->gpu_va == ref[i].va && a->length == ref[i].len && a->memory == ref[i].mem;
            }
            if (!same) {
                CHECK(0, "op %d: %u mappings, the reference has %u or they differ", op, vgt_model_mapping_count(m), nref);
                break;
            }
        }
    }
    CHECK(vgt_model_mapping_at(m, nref) == NULL, "past the end");
    vgt_model_free(m);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/vgt-test-model-%d.vgt", (int)getpid());
    write_trace();
    test_fold();
    test_channel_state();
    test_channel_methods();
    test_alloc_flags();
    test_memory_direct();
    test_mappings_random();
    remove(path);
    return check_finish("test_model");
}
