/* test_capture_threads.c: the embedding API (capture.h) driven from two threads at once, the trace read
 * back: no submission lost or duplicated, each channel's submissions in order with their own push
 * buffers, and the whole run within a bounded time (a deadlock, or a call that returned holding the
 * capture's mutex, fails the test by its alarm).
 *
 * Each thread has its own channel, ring and push buffers in one shared host view, and between doorbells
 * it also maps and unmaps a view of its own, writes MEMORY records through it and registers and forgets
 * objects, so every kind of call meets the other thread's doorbells. A tracker checks that its hooks
 * never run two at a time (they run under the capture's mutex) and writes a MEMORY record of its own
 * before each submission, as the LD_PRELOAD shim's does. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgt/capture.h"
#include "vgt/trace.h"
#include "check.h"

#define VA0 0x200000000ull
#define MEM0 (1u << 20)
#define RING_ENTRIES 64u
#define ROUNDS 5000u
#define SCRATCH_VA(t) (0x400000000ull + (uint64_t)(t) * 0x100000ull)

static uint8_t mem0[MEM0];
static uint8_t scratch[2][4096];
static vgt_writer *writer;
static _Atomic int in_hook, overlapping_hooks;
static _Atomic uint64_t before_submits;

typedef struct worker { vgt_capture *c; uint32_t index, channel; uint64_t ring_va, pb_va; uint32_t failures; } worker;

static uint8_t *at(uint64_t va) { return mem0 + (va - VA0); }

/* GPFIFO entry: VA[31:2] in word 0, VA[39:32] in word 1 bits 7:0, LENGTH (dwords) in bits 30:10. */
static void put_entry(uint64_t ring_va, uint32_t i, uint64_t va, uint32_t dwords)
{
    uint32_t w[2] = { (uint32_t)va & ~3u, ((uint32_t)(va >> 32) & 0xffu) | dwords << 10 };
    memcpy(at(ring_va) + 8u * i, w, 8);
}

static void before_submit(void *ctx, const vgt_segment *segs, uint32_t nseg)
{
    (void)ctx;
    (void)segs;
    if (atomic_fetch_add(&in_hook, 1) != 0) atomic_fetch_add(&overlapping_hooks, 1);
    for (volatile int spin = 0; spin < 2000; spin++) { }   /* widen the window another thread could enter */
    uint64_t n = atomic_fetch_add(&before_submits, 1);
    /* A tracker writes its changed-memory records here, before the submission's record. */
    vgt_rec_memory m = { .gpu_va = VA0 + MEM0 - 8, .length = 8, .reason = VGT_MEM_CHANGED, .data = (const uint8_t *)&n };
    vgt_error err;
    if (nseg != 1 || vgt_write_memory(writer, vgt_now_ns(), &m, &err) != VGT_OK) atomic_fetch_add(&overlapping_hooks, 1000);
    atomic_fetch_sub(&in_hook, 1);
}

static void *run(void *arg)
{
    worker *w = arg;
    vgt_error err;
    for (uint32_t k = 0; k < ROUNDS; k++) {
        uint64_t pb = w->pb_va + 16u * (k % RING_ENTRIES);
        uint32_t tag[4] = { w->channel, k, ~k, 0x600d };
        memcpy(at(pb), tag, sizeof tag);
        put_entry(w->ring_va, k % RING_ENTRIES, pb, 4);
        if (vgt_capture_doorbell(w->c, 1, w->channel, 0, (k + 1) % RING_ENTRIES, NULL, &err) != VGT_OK) w->failures++;
        if (k % 16 == 0) {   /* the other calls, between doorbells */
            vgt_capture_view v = { .gpu_va = SCRATCH_VA(w->index), .length = sizeof scratch[0], .host = scratch[w->index],
                                   .client = 1, .memory = 0x900 + w->index };
            scratch[w->index][0] = (uint8_t)k;
            if (vgt_capture_map_view(w->c, &v, &err) != VGT_OK ||
                vgt_capture_memory(w->c, v.gpu_va, 64, VGT_MEM_CHANGED, &err) != VGT_OK ||
                vgt_capture_unmap_view(w->c, v.gpu_va, &err) != VGT_OK ||
                vgt_capture_register_object(w->c, 1, 2, 0x800 + w->index, 0x3e, VGT_CAPTURE_OBJ_MEMORY, &err) != VGT_OK)
                w->failures++;
            vgt_capture_forget_object(w->c, 1, 0x800 + w->index);
        }
    }
    return NULL;
}

int main(void)
{
    alarm(60);   /* a deadlock fails the test instead of hanging it */
    char path[] = "/tmp/test_capture_threads_XXXXXX";
    close(mkstemp(path));
    vgt_error err;
    vgt_writer_options o = vgt_writer_defaults();
    if (vgt_writer_open_path(&writer, path, &o, NULL, 0, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    vgt_capture_tracker t = { .before_submit = before_submit };
    vgt_capture *c;
    if (vgt_capture_open(&c, writer, &(vgt_capture_options){ .tracker = &t }, &err) != VGT_OK) {
        fprintf(stderr, "FAIL open: %s\n", err.msg);
        return 1;
    }
    vgt_capture_view v0 = { .gpu_va = VA0, .length = MEM0, .host = mem0, .client = 1, .memory = 0x40 };
    CHECK_STATUS(vgt_capture_map_view(c, &v0, &err), VGT_OK, &err, "map view");
    worker w[2];
    for (uint32_t i = 0; i < 2; i++) {
        w[i] = (worker){ .c = c, .index = i, .channel = 0xbeef0100 + i, .ring_va = VA0 + 0x1000u * i,
                         .pb_va = VA0 + 0x10000u + 0x1000u * i };
        vgt_rec_channel ch = { .client = 1, .parent = 2, .handle = w[i].channel, .cls = 0xc86f, .ring_va = w[i].ring_va,
                               .entries = RING_ENTRIES };
        CHECK_STATUS(vgt_capture_channel(c, &ch, &err), VGT_OK, &err, "channel %u", i);
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, run, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(w[0].failures == 0 && w[1].failures == 0, "failed calls: %u and %u", w[0].failures, w[1].failures);
    CHECK(atomic_load(&overlapping_hooks) == 0, "tracker hooks overlapped or failed: %d", atomic_load(&overlapping_hooks));
    vgt_capture_stats st = vgt_capture_get_stats(c);
    CHECK_EQ_U64(st.submits, 2 * ROUNDS, "submissions counted");
    vgt_capture_close(c);
    CHECK_STATUS(vgt_writer_close(writer, &err), VGT_OK, &err, "writer close");

    /* Read back: per channel, submission k has gp_put k..k+1 and push buffer k; each is preceded by the
     * tracker's MEMORY record (its counter: one per submission, in order). */
    vgt_reader *r;
    if (vgt_reader_open_path(&r, path, NULL, &err) != VGT_OK) { fprintf(stderr, "FAIL: %s\n", err.msg); return 1; }
    vgt_record rec;
    uint32_t next[2] = { 0, 0 }, bad = 0;
    uint64_t tracker_next = 0;
    int tracker_pending = 0;
    while (vgt_reader_next(r, &rec, &err) == VGT_OK) {
        if (rec.type == VGT_REC_MEMORY) {
            vgt_rec_memory m;
            if (vgt_decode_memory(&rec, &m, &err) == VGT_OK && m.gpu_va == VA0 + MEM0 - 8) {
                uint64_t n;
                memcpy(&n, m.data, 8);
                if (n != tracker_next++ || tracker_pending) bad++;
                tracker_pending = 1;
            }
            continue;
        }
        if (rec.type != VGT_REC_GPFIFO_SUBMIT) continue;
        vgt_rec_gpfifo_submit s;
        vgt_segment seg[4];
        if (vgt_decode_gpfifo_submit(&rec, &s, seg, 4, &err) != VGT_OK) { bad++; continue; }
        uint32_t i = s.channel - 0xbeef0100u;
        if (i > 1 || !tracker_pending) { bad++; continue; }
        tracker_pending = 0;
        uint32_t k = next[i]++, tag[4] = { 0 };
        if (s.segment_count == 1 && seg[0].length == 16) memcpy(tag, seg[0].data, 16);
        int ok = s.entry_count == 1 && s.gp_put_before == k % RING_ENTRIES && s.gp_put_after == (k + 1) % RING_ENTRIES &&
                 tag[0] == s.channel && tag[1] == k && tag[2] == ~k;
        if (!ok && bad++ < 5)
            CHECK(0, "channel 0x%x submission %u: %u entries, put %u..%u, push buffer of submission %u", s.channel, k,
                  s.entry_count, s.gp_put_before, s.gp_put_after, tag[1]);
    }
    vgt_reader_close(r);
    CHECK(bad == 0, "%u records out of place", bad);
    CHECK(next[0] == ROUNDS && next[1] == ROUNDS, "%u and %u submissions read back, expected %u each", next[0], next[1], ROUNDS);
    CHECK_EQ_U64(tracker_next, 2 * ROUNDS, "tracker records");
    unlink(path);
    return check_finish("test_capture_threads");
}
