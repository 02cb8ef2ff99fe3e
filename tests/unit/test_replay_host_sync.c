/* test_replay_host_sync.c: with waits on demand, the replay keeps the order the captured program's own
 * waits for the GPU gave its work.
 *
 * On the H200, `vgt record --replay=gpu --check -- many_launches` failed 2 runs of 4: the last check (the
 * copy channel's D2H copy of the result, submission 10177) found 4079 of 4096 bytes different, while the
 * same replay waiting after every submission passed. The program launches 10,000 kernels on the compute
 * channel, calls cudaDeviceSynchronize, then cudaMemcpy: CUDA puts the copy on another channel with no
 * semaphore acquire (the host had already waited), so only the program's wait orders the copy after the
 * kernels. The engine, waiting on demand, submitted the copy while the kernels were still queued and the
 * copy engine read the buffer before the last launches wrote it.
 *
 * A fake asynchronous GPU (the simulator's operations with the GPU's capabilities) runs nothing when
 * submitted: it queues the work and runs it only when the engine waits (idle), and then the channel
 * submitted to last first, as a copy engine overtakes a long queue of launches on real hardware. It logs
 * the order, and every host write that lands on the push buffer of a submission still queued. The
 * many_launches trace, replayed live (record by record) and as a file:
 *  - nothing submitted after a point where the program waited for the GPU (cuCtxSynchronize) runs while
 *    work submitted before that point is still queued (failed before the fix: the copy ran first);
 *  - no host write (MEMORY record, push-buffer segment) lands on a queued submission's push buffer;
 *  - the waits are counted by why (the synchronize's as such, a host write's as a host write even when the
 *    record is compared first), and live and file replays agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_gpu.h"
#include "vgt/cuda.h"
#include "vgt/nv_pushbuf.h"
#include "vgt/replay.h"
#include "vgt/trace.h"

#define TRACE "corpus/many_launches.vgt"
#define MAX_MARKS 64

typedef struct queued {
    uint32_t ch, n, flags;
    uint64_t order;   /* the engine's submit call number */
    uint64_t *entries;
} queued;

static vgt_backend_ops fake;
static struct {
    queued *q;
    uint32_t nq, capq;
    uint64_t submits;               /* submit calls so far (one per submission of the trace) */
    uint64_t trace_submits;         /* GPFIFO_SUBMIT records read so far */
    uint64_t marks[MAX_MARKS];      /* the trace's submissions before each point where the program waited */
    uint32_t nmarks;
    uint64_t overtaken;             /* runs of work submitted after a mark while work before it was queued */
    uint64_t first_overtaken;       /* the first such submit call number (+1; 0: none) */
    uint64_t writes_over_queued;    /* host writes onto the push buffer of queued work */
    uint64_t idles, runs;
} st;

static vgt_status fake_submit(vgt_backend *b, uint32_t ch, const uint64_t *entries, uint32_t n, uint32_t flags,
                              vgt_error *err)
{
    (void)b;
    if (st.nq == st.capq) {
        uint32_t nc = st.capq ? st.capq * 2 : 1024;
        queued *q = realloc(st.q, nc * sizeof *q);
        if (!q) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "fake: no memory");
        st.q = q, st.capq = nc;
    }
    queued *q = &st.q[st.nq];
    if (!(q->entries = malloc((n ? n : 1) * sizeof *entries))) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "fake: no memory");
    memcpy(q->entries, entries, n * sizeof *entries);
    q->ch = ch, q->n = n, q->flags = flags, q->order = st.submits++;
    st.nq++;
    return VGT_OK;
}

/* The last mark at or before submit call o (0 when none). */
static uint64_t mark_before(uint64_t o)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < st.nmarks; i++)
        if (st.marks[i] <= o && st.marks[i] > m) m = st.marks[i];
    return m;
}

static void run_one(vgt_backend *b, uint32_t k)
{
    queued *q = &st.q[k];
    uint64_t m = mark_before(q->order);
    for (uint32_t i = 0; m && i < st.nq; i++)
        if (st.q[i].entries && st.q[i].order < m) {   /* still queued from before the program's wait */
            if (!st.overtaken++) st.first_overtaken = q->order + 1;
            break;
        }
    vgt_error e;
    vgt_backend_sim.submit(b, q->ch, q->entries, q->n, q->flags, &e);
    free(q->entries);
    q->entries = NULL;
    st.runs++;
}

/* Everything queued runs now: the channel submitted to last first (its work in order), then the others. */
static vgt_status fake_idle(vgt_backend *b, uint64_t timeout_ns, vgt_error *err)
{
    st.idles++;
    for (;;) {
        int64_t last = -1;
        for (uint32_t i = 0; i < st.nq; i++)
            if (st.q[i].entries) last = i;
        if (last < 0) break;
        uint32_t ch = st.q[last].ch;
        for (uint32_t i = 0; i < st.nq; i++)
            if (st.q[i].entries && st.q[i].ch == ch) run_one(b, i);
    }
    st.nq = 0;
    return vgt_backend_sim.idle(b, timeout_ns, err);
}

static vgt_status fake_mem_write(vgt_backend *b, uint32_t vas, uint64_t va, const void *src, uint64_t len, vgt_error *err)
{
    for (uint32_t i = 0; i < st.nq; i++) {
        const queued *q = &st.q[i];
        for (uint32_t k = 0; q->entries && k < q->n; k++) {
            uint64_t lo = vgt_nv_gp_va(q->entries[k]), hi = lo + 4ull * vgt_nv_gp_length(q->entries[k]);
            if (!vgt_nv_gp_is_control(q->entries[k]) && va < hi && lo < va + len) {
                st.writes_over_queued++;
                goto write;
            }
        }
    }
write:
    return vgt_backend_sim.mem_write(b, vas, va, src, len, err);
}

static void use_fake_gpu(void)
{
    fake = fake_gpu_from_sim("fake-lagging-gpu");
    fake.submit = fake_submit;
    fake.idle = fake_idle;
    fake.mem_write = fake_mem_write;
}

/* Where the captured program waited for the GPU before going on: the submissions before it in the trace
 * (the engine makes one submit call per submission: submit call k is the trace's submission k). */
static void note_record(void *ctx, const vgt_record *rec)
{
    (void)ctx;
    if (rec->type == VGT_REC_GPFIFO_SUBMIT) st.trace_submits++;
    if (rec->type != VGT_REC_CUDA_CALL) return;
    vgt_cuda_call_head h;
    if (vgt_cuda_decode_head(rec, &h, NULL) != VGT_OK || h.api != VGT_CUDA_CTX_SYNCHRONIZE) return;
    if (st.nmarks < MAX_MARKS) st.marks[st.nmarks++] = st.trace_submits;
}

static void run(int live, vgt_replay_summary *out)
{
    free(st.q);
    memset(&st, 0, sizeof st);
    vgt_replay_options o = vgt_replay_defaults();
    o.backend = &fake;
    o.check = 1;
    o.live = live;
    o.wait_demand = 1;
    o.progress = note_record;
    vgt_replay *rp;
    vgt_reader *r;
    vgt_error e;
    CHECK_STATUS(vgt_replay_open(&rp, &o, &e), VGT_OK, &e, "vgt_replay_open");
    CHECK_STATUS(vgt_reader_open_path(&r, TRACE, NULL, &e), VGT_OK, &e, "open " TRACE);
    vgt_status rc = VGT_OK;
    if (live) {   /* as a live stream hands them over */
        vgt_record rec;
        while (rc == VGT_OK && (rc = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
            note_record(NULL, &rec);
            rc = vgt_replay_record(rp, &rec, &e);
        }
        if (rc == VGT_E_EOF) rc = VGT_OK;
    } else {
        rc = vgt_replay_run(rp, r, &e);
    }
    if (rc == VGT_OK) rc = vgt_replay_finish(rp, &e);
    CHECK_STATUS(rc, VGT_OK, &e, "replay of " TRACE);
    *out = *vgt_replay_summary_get(rp);
    vgt_reader_close(r);
    vgt_replay_close(rp);
}

static void expect(const char *what, const vgt_replay_summary *s)
{
    printf("%s: %llu submit calls, %llu waits (check %llu, write %llu, census %llu, push buffer %llu, sync %llu); "
           "%u synchronize points; overtaken %llu (first at submit call %lld); host writes onto queued push buffers %llu\n",
           what, (unsigned long long)st.submits, (unsigned long long)s->waits, (unsigned long long)s->waits_for_check,
           (unsigned long long)s->waits_for_write, (unsigned long long)s->waits_for_census,
           (unsigned long long)s->waits_for_pb_reuse, (unsigned long long)s->waits_for_sync, st.nmarks,
           (unsigned long long)st.overtaken, (long long)st.first_overtaken - 1,
           (unsigned long long)st.writes_over_queued);
    CHECK(st.nmarks == 1 && st.submits == 10178 && st.runs == st.submits,
          "%s: the trace's one cuCtxSynchronize seen (%u), every submission run (%llu of %llu)", what, st.nmarks,
          (unsigned long long)st.runs, (unsigned long long)st.submits);
    CHECK(!st.overtaken, "%s: %llu submissions ran while work from before the program's wait for the GPU was still "
          "queued (first: submit call %llu, the copy of the result)", what, (unsigned long long)st.overtaken,
          (unsigned long long)st.first_overtaken - 1);
    CHECK(!st.writes_over_queued, "%s: %llu host writes landed on the push buffer of queued work", what,
          (unsigned long long)st.writes_over_queued);
    /* the program waited for the GPU 3 times with work in flight: cudaMemcpy of the input (its record comes
     * after its copy), cuCtxSynchronize, cudaMemcpy of the result; cuMemFree after that finds nothing running */
    CHECK(s->wait_demand && s->waits_for_sync == 3, "%s: the waits where the program waited counted as such (%llu, "
          "expected 3)", what, (unsigned long long)s->waits_for_sync);
    CHECK(s->waits == s->waits_for_check + s->waits_for_write + s->waits_for_census + s->waits_for_pb_reuse +
                          s->waits_for_sync,
          "%s: every wait on demand counted by why (%llu in all)", what, (unsigned long long)s->waits);
    CHECK(s->waits_for_write >= 6, "%s: the host writes of the module uploads wait as host writes (%llu)", what,
          (unsigned long long)s->waits_for_write);
    CHECK(!s->blocked && !s->faults && !s->ctr.faults, "%s: no channel blocked, no fault", what);
}

int main(void)
{
    vgt_replay_summary live, file;
    use_fake_gpu();
    run(1, &live);
    expect("live", &live);
    run(0, &file);
    expect("file", &file);
    /* the simulator runs no kernel: the copy of the result reads the input either way, and its check
     * differs on this fake (there is no write log to say the bytes were not produced); live and file agree */
    CHECK(live.checks_passed == file.checks_passed && live.checks_failed == file.checks_failed &&
              live.checks_skipped == file.checks_skipped && live.waits == file.waits,
          "live and file: checks %llu/%llu/%llu and %llu/%llu/%llu, waits %llu and %llu",
          (unsigned long long)live.checks_passed, (unsigned long long)live.checks_failed,
          (unsigned long long)live.checks_skipped, (unsigned long long)file.checks_passed,
          (unsigned long long)file.checks_failed, (unsigned long long)file.checks_skipped,
          (unsigned long long)live.waits, (unsigned long long)file.waits);
    free(st.q);
    return check_finish("test_replay_host_sync");
}
