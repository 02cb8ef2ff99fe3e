/* test_model_lend.c: a model that points at lent record bytes (vgt_model_lend) answers as one that copies
 * them, and never reads a chunk's bytes after it was given back:
 *  - a trace of many small chunks: push-buffer segments of random places and sizes over a few pages (so
 *    a page holds several pieces, pieces are trimmed, split and overwritten whole), MEMORY records over
 *    them (copied writes that cut pieces), and unmaps that forget part of a page holding pieces;
 *  - read with a reader holding the last K chunks (vgt_reader_hold) and lending each to one model, the
 *    oldest reclaimed and released as a walk does; another model applies the same records without loans;
 *    after every record both must read the same bytes and known counts, and list the same pages
 *    (vgt_model_mem_foreach) now and then; with and without read-ahead workers, K of 1, 2 and 5;
 *  - memory written by the first chunks' push buffers, never written again, is read after all later
 *    chunks were released and their buffers reused, and again after the reader is closed (its buffers
 *    freed: a pointer left behind is a use after free under AddressSanitizer, and wrong bytes without);
 *  - the reader's holds: a held chunk's bytes stay as they were while the read goes on (workers
 *    included), the same chunk held twice gives one id, no hold before the first record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/model.h"
#include "vgt/trace.h"

#include "check.h"

#define C 0xc1d00001u
#define DEV 0x5c000001u
#define VAS 0x5c000002u
#define MEM_PB 0x5c000010u
#define MEM_RING 0x5c000011u
#define CHAN 0x5c000020u
#define PB 0x100000000ull      /* push-buffer window: two mappings sharing the page at PB + 0x2000 */
#define WIN 0x6000u
#define SPLIT 0x2800u
#define STILL 0x200000000ull   /* written by the first submission's segment only */
#define STILL_LEN 3000u
#define RING 0x80000000ull

static char path[256];
static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 32) % n;
}
static uint8_t still_bytes[STILL_LEN];

static void map_pb(vgt_writer *w, uint64_t ts, vgt_error *e)
{
    vgt_write_gpu_map(w, ts, &(vgt_rec_gpu_map){C, DEV, VAS, MEM_PB, PB, 0, SPLIT, 0, VGT_MAP_RM_DMA, 0}, e);
}

static void write_trace(void)
{
    vgt_writer *w;
    vgt_error e;
    vgt_writer_options o = vgt_writer_defaults();
    o.chunk_target = 4096;   /* the smallest: a chunk every few records */
    if (vgt_writer_open_path(&w, path, &o, NULL, 0, &e) != VGT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        exit(2);
    }
    uint64_t ts = 1;
    vgt_write_rm_alloc(w, ts++, &(vgt_rec_rm_alloc){C, 0, C, 0x41, 0, 0, NULL, NULL}, &e);
    vgt_write_rm_alloc(w, ts++, &(vgt_rec_rm_alloc){C, C, DEV, 0x80, 0, 0, NULL, NULL}, &e);
    vgt_write_rm_alloc(w, ts++, &(vgt_rec_rm_alloc){C, DEV, VAS, 0x90f1, 0, 0, NULL, NULL}, &e);
    vgt_write_mem_alloc(w, ts++, &(vgt_rec_mem_alloc){C, DEV, MEM_PB, 0x40, 0x10000, 0, 0, 0, 0, VGT_APERTURE_VIDMEM, 0}, &e);
    vgt_write_mem_alloc(w, ts++, &(vgt_rec_mem_alloc){C, DEV, MEM_RING, 0x3e, 0x2000, 0, 0, 0, 0, VGT_APERTURE_SYSMEM, 0}, &e);
    map_pb(w, ts++, &e);
    vgt_write_gpu_map(w, ts++, &(vgt_rec_gpu_map){C, DEV, VAS, MEM_PB, PB + SPLIT, SPLIT, WIN - SPLIT, 0, VGT_MAP_RM_DMA, 0}, &e);
    vgt_write_gpu_map(w, ts++, &(vgt_rec_gpu_map){C, DEV, VAS, MEM_RING, RING, 0, 0x2000, 0, VGT_MAP_RM_DMA, 0}, &e);
    vgt_write_channel(w, ts++, &(vgt_rec_channel){C, DEV, CHAN, 0xc86f, RING, 512, MEM_RING, 0x1000, 0, 1, VAS, 0, 0, 0}, &e);
    static uint8_t data[3][6000], mem[3000];
    uint32_t put = 0;
    for (int op = 0; op < 700; op++) {
        uint32_t kind = rnd(20);
        if (op == 0 || kind < 15) {
            vgt_segment seg[3];
            uint8_t entries[24] = {0};
            uint32_t n = op == 0 ? 1 : 1 + rnd(3);
            for (uint32_t i = 0; i < n; i++) {
                uint32_t len = 1 + rnd(rnd(4) ? 5000 : 600), off = rnd(WIN);
                if (off + len > WIN) len = WIN - off;
                for (uint32_t k = 0; k < len; k++) data[i][k] = (uint8_t)rnd(256);
                seg[i] = (vgt_segment){PB + off, len, 0, data[i]};
            }
            if (op == 0) {   /* the bytes nothing writes again */
                for (uint32_t k = 0; k < STILL_LEN; k++) still_bytes[k] = (uint8_t)(k * 7 + 3);
                seg[0] = (vgt_segment){STILL, STILL_LEN, 0, still_bytes};
            }
            vgt_rec_gpfifo_submit s = {.client = C, .channel = CHAN, .token = 0, .gp_get_before = put, .gp_put_before = put,
                                       .gp_get_after = (put + n) % 512, .gp_put_after = (put + n) % 512,
                                       .entry_count = n, .segment_count = n, .entries = entries, .segments = seg};
            put = (put + n) % 512;
            vgt_write_gpfifo_submit(w, ts++, &s, &e);
        } else if (kind < 18) {   /* copied bytes over pieces */
            uint32_t len = 1 + rnd(3000), off = rnd(WIN);
            if (off + len > WIN) len = WIN - off;
            for (uint32_t k = 0; k < len; k++) mem[k] = (uint8_t)rnd(256);
            vgt_write_memory(w, ts++, &(vgt_rec_memory){PB + off, len, VGT_MEM_CHANGED, MEM_PB, 0, mem}, &e);
        } else {   /* forget the first mapping, part of the page at PB + 0x2000 included, and map it again */
            vgt_write_gpu_unmap(w, ts++, &(vgt_rec_gpu_unmap){C, DEV, VAS, MEM_PB, PB, SPLIT, VGT_MAP_RM_DMA, 0}, &e);
            map_pb(w, ts++, &e);
        }
    }
    CHECK(vgt_writer_close(w, &e) == VGT_OK, "close: %s", e.msg);
}

/* Both models' view of the push-buffer window and of the bytes written once. */
static int still_written;   /* the first submission was applied */

static void compare(const vgt_model *lent, const vgt_model *ref, const char *when, uint64_t seq)
{
    static uint8_t a[WIN], b[WIN];
    uint64_t ka = 0, kb = 0;
    vgt_error e;
    CHECK(vgt_model_mem_read(lent, PB, a, WIN, &ka, &e) == VGT_OK, "read: %s", e.msg);
    CHECK(vgt_model_mem_read(ref, PB, b, WIN, &kb, &e) == VGT_OK, "read: %s", e.msg);
    if (ka != kb || memcmp(a, b, WIN)) {
        uint32_t at = 0;
        while (at < WIN && a[at] == b[at]) at++;
        CHECK(0, "%s, seq %llu: known %llu / %llu, first difference at +0x%x", when, (unsigned long long)seq,
              (unsigned long long)ka, (unsigned long long)kb, at);
    }
    if (!still_written) return;
    CHECK(vgt_model_mem_read(lent, STILL, a, STILL_LEN, &ka, &e) == VGT_OK && ka == STILL_LEN &&
              !memcmp(a, still_bytes, STILL_LEN),
          "%s, seq %llu: the first push buffer's bytes (known %llu)", when, (unsigned long long)seq, (unsigned long long)ka);
}

/* foreach: a hash of every page's VA, known bytes and mask. */
static int hash_page(void *ctx, uint64_t va, const uint8_t *bytes, const uint8_t *mask)
{
    uint64_t *h = ctx;
    *h = (*h ^ va) * 0x100000001b3ull;
    for (uint32_t i = 0; i < VGT_MODEL_PAGE_SIZE; i++)
        *h = (*h ^ (mask && !mask[i] ? 0x100u : bytes[i])) * 0x100000001b3ull;
    return 0;
}

static uint64_t pages_hash(const vgt_model *m)
{
    uint64_t h = 0xcbf29ce484222325ull;
    vgt_error e;
    CHECK(vgt_model_mem_foreach(m, hash_page, &h, &e) == VGT_OK, "foreach: %s", e.msg);
    return h;
}

static void run(int read_ahead, uint32_t keep)
{
    vgt_reader_options ro = {.verify_checksums = 1, .read_ahead = read_ahead};
    vgt_reader *r;
    vgt_model *lent, *ref;
    vgt_error e;
    if (vgt_reader_open_path(&r, path, &ro, &e) != VGT_OK || vgt_model_new(&lent, &e) != VGT_OK ||
        vgt_model_new(&ref, &e) != VGT_OK) {
        CHECK(0, "setup: %s", e.msg);
        return;
    }
    uint64_t loans[8], cur_off = UINT64_MAX, lends = 0, n = 0;
    uint32_t nloans = 0;
    still_written = 0;
    vgt_record rec;
    vgt_status st;
    while ((st = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
        if (rec.chunk_offset != cur_off) {   /* as a walk does: hold the new chunk, give back the oldest */
            cur_off = rec.chunk_offset;
            if (nloans == keep) {
                vgt_model_reclaim(lent, loans[0]);
                vgt_reader_release(r, loans[0]);
                memmove(loans, loans + 1, sizeof loans[0] * --nloans);
            }
            uint64_t id, len;
            const uint8_t *bytes;
            CHECK(vgt_reader_hold(r, &id, &bytes, &len, &e) == VGT_OK, "hold: %s", e.msg);
            CHECK(rec.payload >= bytes && rec.payload + rec.length <= bytes + len, "the record lies in its chunk");
            if (vgt_model_lend(lent, id, bytes, len)) loans[nloans++] = id, lends++;
        }
        CHECK(vgt_model_apply(lent, &rec, &e) == VGT_OK, "apply seq %llu: %s", (unsigned long long)rec.seq, e.msg);
        CHECK(vgt_model_apply(ref, &rec, &e) == VGT_OK, "apply seq %llu: %s", (unsigned long long)rec.seq, e.msg);
        still_written |= rec.type == VGT_REC_GPFIFO_SUBMIT;
        compare(lent, ref, "during the read", rec.seq);
        if (++n % 64 == 0) CHECK(pages_hash(lent) == pages_hash(ref), "pages differ at seq %llu", (unsigned long long)rec.seq);
    }
    CHECK(st == VGT_E_EOF, "read to the end: %s", e.msg);
    CHECK(lends > 100 && vgt_model_loans(lent) == nloans, "chunks lent: %llu, %u held", (unsigned long long)lends, nloans);
    while (nloans) {
        vgt_model_reclaim(lent, loans[0]);
        vgt_reader_release(r, loans[0]);
        memmove(loans, loans + 1, sizeof loans[0] * --nloans);
    }
    CHECK(vgt_model_loans(lent) == 0, "all reclaimed");
    compare(lent, ref, "after the last reclaim", rec.seq);
    vgt_reader_close(r);   /* every chunk buffer freed */
    compare(lent, ref, "after the reader closed", rec.seq);
    CHECK(pages_hash(lent) == pages_hash(ref), "pages differ at the end (read_ahead %d, keep %u)", read_ahead, keep);
    vgt_model_free(lent);
    vgt_model_free(ref);
}

static void test_holds(void)
{
    vgt_reader_options ro = {.verify_checksums = 1, .read_ahead = 1};
    vgt_reader *r;
    vgt_error e;
    if (vgt_reader_open_path(&r, path, &ro, &e) != VGT_OK) {
        CHECK(0, "open: %s", e.msg);
        return;
    }
    uint64_t id, id2, len, len2;
    const uint8_t *bytes, *bytes2;
    CHECK(vgt_reader_hold(r, &id, &bytes, &len, &e) == VGT_E_NOT_FOUND, "no hold before the first record");
    vgt_record rec;
    CHECK(vgt_reader_next(r, &rec, &e) == VGT_OK, "first record: %s", e.msg);
    CHECK(vgt_reader_hold(r, &id, &bytes, &len, &e) == VGT_OK && id && len >= rec.length, "hold: %s", e.msg);
    CHECK(vgt_reader_hold(r, &id2, &bytes2, &len2, &e) == VGT_OK && id2 == id && bytes2 == bytes && len2 == len,
          "the same chunk held again: the same hold");
    uint8_t *copy = malloc(len);
    if (!copy) return;
    memcpy(copy, bytes, len);
    uint64_t chunks = 0, last = rec.chunk_offset;
    while (vgt_reader_next(r, &rec, &e) == VGT_OK)
        if (rec.chunk_offset != last) last = rec.chunk_offset, chunks++;
    CHECK(chunks > 20, "read on through %llu chunks", (unsigned long long)chunks);
    CHECK(!memcmp(copy, bytes, len), "a held chunk's bytes stay as they were");
    vgt_reader_release(r, id);
    vgt_reader_release(r, id);   /* twice: nothing */
    free(copy);
    vgt_reader_close(r);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/vgt_test_model_lend_%d.vgt", (int)getpid());
    write_trace();
    test_holds();
    run(-1, 1);
    run(-1, 2);
    run(1, 2);
    run(1, 5);
    unlink(path);
    return check_finish("test_model_lend");
}
