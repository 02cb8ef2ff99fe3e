/* check.c: --check. After each submission, what the backend produced is compared with what the trace
 * observed, wherever the backend can produce it (on sim: semaphores, uploads, copies, QMD releases):
 *  - SEMAPHORE records and MEMORY records of reason observed: every byte of the record that the backend
 *    produced (its `produced` mask) is compared; a record with no produced byte is "skipped" (not
 *    producible by this backend, e.g. a shader's output on sim);
 *  - MEMORY records of reason initial/changed that follow a submission: only the bytes that submission
 *    wrote (the backend's write log) and produced are compared, BEFORE the record is applied. Such a
 *    record is a snapshot the capture took at the next doorbell, when the GPU may not have run the
 *    submission yet: a byte whose recorded value is still the one the trace had before (the model's
 *    contents) is "not yet written when captured": such a record is not comparable, unless another
 *    byte of it differs for real.
 * Without a write log, bytes only the captured driver wrote (capture_only.c: captured channels' USERD and
 * rings, push-buffer pages) are left out of every comparison.
 * Results are attributed to the submission whose checks are open (the last one run) and reported
 * per submission: passed, failed, and "not comparable" (nothing the backend produced, or not yet
 * written when captured).
 * Coverage: every byte of the SEMAPHORE and MEMORY observed records checked here is an observed byte;
 * those compared in a check that passed or failed are the covered ones (replay.h, vgt_replay_summary). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static const char *const reason_names[] = {"MEMORY initial", "MEMORY changed", "MEMORY observed"};

static int scratch(vgt_replay *rp, uint64_t len)
{
    if (len <= rp->cap_scratch) return 0;
    uint8_t *m = realloc(rp->mask, len), *b, *p;
    if (!m) return -1;
    rp->mask = m;
    if (!(b = realloc(rp->buf, len))) return -1;
    rp->buf = b;
    if (!(p = realloc(rp->prev, len))) return -1;
    rp->prev = p;
    rp->cap_scratch = len;
    return 0;
}

/* Restrict mask to the bytes of [va, va+len) that the current submission's write log covers. */
static void restrict_to_log(const vgt_replay *rp, uint64_t va, uint64_t len, uint8_t *mask)
{
    uint8_t *in = calloc(len ? len : 1, 1);
    if (!in) {
        memset(mask, 0, len);
        return;
    }
    for (uint32_t i = 0; i < rp->nwlog; i++) {
        uint64_t s = rp->wlog[i].va > va ? rp->wlog[i].va : va;
        uint64_t e = rp->wlog[i].va + rp->wlog[i].len < va + len ? rp->wlog[i].va + rp->wlog[i].len : va + len;
        if (s < e) memset(in + (s - va), 1, e - s);
    }
    for (uint64_t i = 0; i < len; i++) mask[i] &= in[i];
    free(in);
}

static uint64_t le_bytes(const uint8_t *p, uint64_t avail, uint32_t *n)
{
    uint64_t v = 0;
    *n = avail < 8 ? (uint32_t)avail : 8;
    for (uint32_t i = *n; i-- > 0;) v = (v << 8) | p[i];
    return v;
}

/* Compare expected (the trace) with the backend over the produced bytes of [va, va+len); log_only
 * restricts to the current submission's writes. Counts and reports the result. */
/* One record being checked: what the trace says, and what the comparison found. */
typedef struct cmp_job {
    uint64_t rec_seq, va, len;
    uint64_t rva;                /* va in the replay (addr_to_replay): the backend is read there */
    const char *kind;
    const uint8_t *expected;
    int log_only, is_semaphore;
    uint64_t compared, differing, lagging, first;
} cmp_job;

/* Fill rp->mask (bytes to compare), rp->buf (the backend's bytes) and, for log-only checks, rp->prev
 * (the model's contents before the record). -1 when the backend cannot say. */
/* A backend without a write log (the GPU) cannot say which bytes it produced: observed and semaphore
 * records are compared whole; a changed/initial record only over the bytes that differ from the
 * model's previous contents, and only as positive evidence (all equal: passed; otherwise the bytes may
 * be the CPU's new writes, so not comparable). */
static int no_write_log(const vgt_replay *rp) { return !(rp->ops->caps() & VGT_CAP_WRITE_LOG); }

/* The bytes to compare are known before anything is read back (the record, the model, what only the
 * captured driver wrote): only their span is read, from the first to the last (and the 8 bytes a report
 * shows from a differing one); nothing when there is none. On the GPU a read crosses the PCIe BAR: a MEMORY
 * changed record of a push-buffer page, all of it the captured driver's, costs no read at all. */
static int gather_unlogged(vgt_replay *rp, const cmp_job *j)
{
    vgt_error e;
    uint64_t known = 0;
    if (scratch(rp, j->len)) return -1;
    if (!j->log_only) {
        memset(rp->mask, 1, j->len);
        volatile_unmask(rp, j->va, j->len, rp->mask);   /* timestamps and report counters */
    } else {
        if (vgt_model_mem_read(rp->model, j->va, rp->prev, j->len, &known, &e) != VGT_OK) return -1;
        for (uint64_t i = 0; i < j->len; i++) rp->mask[i] = j->expected[i] != rp->prev[i];
    }
    rp->sum.bytes_capture_only += capture_only_unmask(rp, j->va, j->len, rp->mask);
    uint64_t lo = 0, hi = j->len;
    while (lo < j->len && !rp->mask[lo]) lo++;
    while (hi > lo && !rp->mask[hi - 1]) hi--;
    if (lo == hi) return 0;
    hi = hi + 7 < j->len ? hi + 7 : j->len;   /* a report shows 8 bytes from the first differing one */
    if (j->is_semaphore) lo = 0;   /* a semaphore's report shows its whole value */
    return rp->ops->mem_read(rp->be, rp->vas, j->rva + lo, rp->buf + lo, hi - lo, &e) != VGT_OK ? -1 : 0;
}

static int gather(vgt_replay *rp, const cmp_job *j)
{
    vgt_error e;
    uint64_t known = 0;
    if (no_write_log(rp)) return gather_unlogged(rp, j);
    if (!rp->ops->produced || scratch(rp, j->len) ||
        (j->log_only && vgt_model_mem_read(rp->model, j->va, rp->prev, j->len, &known, &e) != VGT_OK) ||
        rp->ops->produced(rp->be, rp->vas, j->rva, j->len, rp->mask, &e) != VGT_OK ||
        rp->ops->mem_read(rp->be, rp->vas, j->rva, rp->buf, j->len, &e) != VGT_OK)
        return -1;
    if (j->log_only) restrict_to_log(rp, j->rva, j->len, rp->mask);   /* the log holds replay VAs */
    return 0;
}

static void count_bytes(const vgt_replay *rp, cmp_job *j)
{
    j->compared = j->differing = j->lagging = 0;
    j->first = UINT64_MAX;
    for (uint64_t i = 0; i < j->len; i++) {
        if (!rp->mask[i]) continue;
        j->compared++;
        if (rp->buf[i] == j->expected[i]) continue;
        if (j->log_only && j->expected[i] == rp->prev[i]) {
            j->lagging++;   /* the snapshot still holds the old value: the GPU had not written it yet */
            continue;
        }
        j->differing++;
        if (j->first == UINT64_MAX) j->first = i;
    }
}

static void report_mismatch(vgt_replay *rp, const cmp_job *j)
{
    vgt_replay_report r = {.kind = VGT_RPT_MISMATCH, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                           .channel = rp->cur_channel, .record_seq = j->rec_seq, .record_kind = j->kind, .va = j->va,
                           .length = j->len, .differing = j->differing, .compared = j->compared};
    uint64_t from = j->is_semaphore ? 0 : j->first;
    r.first_va = j->va + j->first;
    r.expected = le_bytes(j->expected + from, j->len - from, &r.value_bytes);
    r.found = le_bytes(rp->buf + from, j->len - from, &r.value_bytes);
    char msg[VGT_ERROR_MSG_MAX], moved[64] = "";
    if (j->rva != j->va) snprintf(moved, sizeof moved, " (relocated: read at 0x%llx)", (unsigned long long)j->rva);
    snprintf(msg, sizeof msg,
             "submission %lld (seq %llu, channel 0x%x): %s record seq %llu at VA 0x%llx (%llu bytes): %llu of %llu "
             "compared bytes differ; first at VA 0x%llx: trace 0x%0*llx, replay 0x%0*llx%s",
             (long long)rp->cur_index, (unsigned long long)rp->cur_seq, rp->cur_channel, j->kind,
             (unsigned long long)j->rec_seq, (unsigned long long)j->va, (unsigned long long)j->len,
             (unsigned long long)j->differing, (unsigned long long)j->compared, (unsigned long long)r.first_va,
             (int)(2 * r.value_bytes), (unsigned long long)r.expected, (int)(2 * r.value_bytes), (unsigned long long)r.found,
             moved);
    r.msg = msg;
    engine_report(rp, &r);
}

/* Compare, count and report one record. A log-only check (MEMORY initial/changed) that finds nothing to
 * compare is not a check at all; every other record that finds nothing is "not comparable". */
static void compare(vgt_replay *rp, cmp_job *j)
{
    /* the backend's bytes once the work before is done; a MEMORY initial/changed record is a host write
     * right after this comparison: its wait is counted as the write's */
    engine_settle(rp, j->log_only ? SETTLE_WRITE : SETTLE_CHECK);
    if (gather(rp, j)) {
        if (!j->log_only) rp->cur_skipped++, rp->sum.checks_skipped++;
        return;
    }
    count_bytes(rp, j);
    if (no_write_log(rp) && j->log_only && j->differing) {
        rp->cur_skipped++, rp->sum.checks_skipped++;   /* CPU writes, or a difference: cannot tell */
        return;
    }
    if (!j->compared || (j->is_semaphore && j->compared != j->len) || (j->lagging && !j->differing)) {
        if (!j->log_only || j->lagging) rp->cur_skipped++, rp->sum.checks_skipped++;
        return;
    }
    rp->sum.bytes_compared += j->compared;
    if (!j->log_only) rp->sum.observed_bytes_compared += j->compared;
    if (!j->differing) {
        rp->cur_passed++, rp->sum.checks_passed++;
        return;
    }
    rp->cur_failed++, rp->sum.checks_failed++;
    report_mismatch(rp, j);
}

void check_memory(vgt_replay *rp, const vgt_record *rec, const vgt_rec_memory *m)
{
    if (rp->cur_index < 0 || !rp->cur_replayed || !m->length) return;
    const char *kind = m->reason < 3 ? reason_names[m->reason] : "MEMORY";
    int log_only = m->reason != VGT_MEM_OBSERVED;
    if (log_only && !rp->nwlog && !no_write_log(rp)) return;
    if (!log_only) rp->sum.observed_bytes += m->length;   /* coverage's denominator (replay.h) */
    cmp_job j = {.rec_seq = rec->seq, .va = m->gpu_va, .rva = addr_to_replay(rp, m->gpu_va), .len = m->length,
                 .kind = kind, .expected = m->data, .log_only = log_only};
    compare(rp, &j);
}

void check_semaphore(vgt_replay *rp, const vgt_record *rec, const vgt_rec_semaphore *s)
{
    if (rp->cur_index < 0 || !rp->cur_replayed) return;
    if (s->size != 4 && s->size != 8) {
        engine_warn(rp, "SEMAPHORE record seq %llu has size %u (4 or 8 expected); not checked",
                    (unsigned long long)rec->seq, s->size);
        return;
    }
    rp->sum.observed_bytes += s->size;
    uint8_t v[8];
    for (int i = 0; i < 8; i++) v[i] = (uint8_t)(s->value >> (8 * i));
    cmp_job j = {.rec_seq = rec->seq, .va = s->gpu_va, .rva = addr_to_replay(rp, s->gpu_va), .len = s->size,
                 .kind = "SEMAPHORE", .expected = v, .is_semaphore = 1};
    compare(rp, &j);
}

void check_close_submission(vgt_replay *rp)
{
    if (rp->cur_index < 0 || !rp->cur_replayed) return;
    if (rp->cur_passed + rp->cur_failed + rp->cur_skipped) {
        char msg[256];
        snprintf(msg, sizeof msg, "submission %lld (seq %llu, channel 0x%x): checks %u passed, %u failed, %u not comparable",
                 (long long)rp->cur_index, (unsigned long long)rp->cur_seq, rp->cur_channel, rp->cur_passed,
                 rp->cur_failed, rp->cur_skipped);
        vgt_replay_report r = {.kind = VGT_RPT_SUBMIT_CHECKS, .submit_index = rp->cur_index, .submit_seq = rp->cur_seq,
                               .channel = rp->cur_channel, .passed = rp->cur_passed, .failed = rp->cur_failed,
                               .skipped = rp->cur_skipped, .msg = msg};
        engine_report(rp, &r);
    }
    rp->cur_passed = rp->cur_failed = rp->cur_skipped = 0;
}

vgt_status check_take_write_log(vgt_replay *rp, vgt_error *err)
{
    uint32_t n = 0;
    const vgt_backend_write *w = rp->ops->write_log ? rp->ops->write_log(rp->be, &n) : NULL;
    if (n > rp->cap_wlog) {
        vgt_backend_write *nw = realloc(rp->wlog, (size_t)n * sizeof *nw);
        if (!nw) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory for the write log");
        rp->wlog = nw;
        rp->cap_wlog = n;
    }
    if (n) memcpy(rp->wlog, w, (size_t)n * sizeof *w);
    rp->nwlog = n;
    return VGT_OK;
}
