/* state_dump.c: --dump-state. The end state of a replay, in a form two backends fill alike, so that a
 * replay on sim and one on hardware can be compared (tests/gpu/differential.sh):
 *  - every semaphore the trace observes (SEMAPHORE records): its value at the end;
 *  - every range the trace observes (MEMORY observed records): an FNV-1a 64 hash per 256-byte chunk.
 * A backend that can say which bytes it does not know (sim: a launch or a draw ran shaders it does not
 * execute, so every byte may have changed; backend.h `known`) marks them: a semaphore with an unknown
 * byte has "known":false, a range lists its chunks with one in "unknown". Values are written all the
 * same: where they differ from another backend's, an unknown one is what the backend did not model, a
 * known one a disagreement. The regions of SEMAPHORE and MEMORY
 * observed records are read when the record comes (right after the submission it follows, as --check
 * reads them: the capture read them then, and the memory may be gone at the end), and carry the record's
 * "seq"; the semaphores the submissions release are read at the end ("seq": null). Listed once each,
 * sorted, as JSON lines after one header line. A region that cannot be read (unmapped) has an "error". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/grow.h"
#include "vgt/json.h"

#define STATE_CHUNK 256u
#define STATE_MAX_REGION (64ull << 20)   /* a larger observed range is left out */

static void write_region(vgt_replay *rp, FILE *f, const state_region *r, uint8_t *buf, uint8_t *mask);

/* The region's line now, for a record's region (seq != STATE_AT_END). */
static char *snapshot(vgt_replay *rp, const state_region *r)
{
    uint8_t *buf = malloc(r->len), *mask = malloc(r->len);
    char *text = NULL;
    size_t n = 0;
    FILE *f = buf && mask ? open_memstream(&text, &n) : NULL;
    if (f) {
        write_region(rp, f, r, buf, mask);
        fclose(f);
    }
    free(buf);
    free(mask);
    return text;
}

void state_note(vgt_replay *rp, int semaphore, uint64_t va, uint64_t len, uint64_t seq)
{
    if (!rp->opt.dump_state || !len || len > STATE_MAX_REGION) return;
    if (vgt_grow(&rp->state, &rp->cap_state, rp->nstate + 1ull, 64)) return;   /* a region left out: the file says how many it holds */
    state_region r = {va, len, seq, NULL, (uint8_t)semaphore};
    if (seq != STATE_AT_END && !(r.text = snapshot(rp, &r))) return;
    rp->state[rp->nstate++] = r;
}

static int cmp_region(const void *a, const void *b)
{
    const state_region *x = a, *y = b;
    if (x->semaphore != y->semaphore) return x->semaphore ? -1 : 1;
    if (x->va != y->va) return x->va < y->va ? -1 : 1;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t fnv1a(const uint8_t *p, uint64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* mask[i] = 1 where the backend knows byte va+i (all 1 for a backend that cannot tell). */
static void known_mask(vgt_replay *rp, uint64_t va, uint64_t len, uint8_t *mask)
{
    vgt_error e;
    if (!rp->ops->known || rp->ops->known(rp->be, rp->vas, vgt_replay_translate(rp, va), len, mask, &e) != VGT_OK)
        memset(mask, 1, len);
}

static void put_seq(FILE *f, const state_region *r)
{
    if (r->seq == STATE_AT_END) fputs("\"seq\":null,", f);
    else fprintf(f, "\"seq\":%" PRIu64 ",", r->seq);
}

static void write_region(vgt_replay *rp, FILE *f, const state_region *r, uint8_t *buf, uint8_t *mask)
{
    vgt_error e;
    if (vgt_replay_read(rp, r->va, buf, r->len, &e) != VGT_OK) {
        fprintf(f, "{\"type\":\"%s\",\"va\":%" PRIu64 ",\"len\":%" PRIu64 ",", r->semaphore ? "semaphore" : "range",
                r->va, r->len);
        put_seq(f, r);
        fputs("\"error\":", f);
        vgt_json_string(f, e.msg);
        fputs("}\n", f);
        return;
    }
    known_mask(rp, r->va, r->len, mask);
    if (r->semaphore) {
        uint64_t v = 0;
        int known = 1;
        for (uint64_t i = 0; i < r->len; i++) known &= mask[i] != 0;
        for (uint64_t i = r->len; i-- > 0;) v = v << 8 | buf[i];
        fprintf(f, "{\"type\":\"semaphore\",\"va\":%" PRIu64 ",\"len\":%" PRIu64 ",", r->va, r->len);
        put_seq(f, r);
        fprintf(f, "\"value\":%" PRIu64 ",\"known\":%s}\n", v, known ? "true" : "false");
        return;
    }
    fprintf(f, "{\"type\":\"range\",\"va\":%" PRIu64 ",\"len\":%" PRIu64 ",", r->va, r->len);
    put_seq(f, r);
    fprintf(f, "\"chunk\":%u,\"chunks\":[", STATE_CHUNK);
    for (uint64_t off = 0; off < r->len; off += STATE_CHUNK) {
        uint64_t n = r->len - off < STATE_CHUNK ? r->len - off : STATE_CHUNK;
        fprintf(f, "%s\"%016" PRIx64 "\"", off ? "," : "", fnv1a(buf + off, n));
    }
    fputs("],\"unknown\":[", f);
    int first = 1;
    for (uint64_t off = 0, k = 0; off < r->len; off += STATE_CHUNK, k++) {
        uint64_t n = r->len - off < STATE_CHUNK ? r->len - off : STATE_CHUNK;
        int known = 1;
        for (uint64_t i = 0; i < n; i++) known &= mask[off + i] != 0;
        if (!known) fprintf(f, "%s%" PRIu64, first ? "" : ",", k), first = 0;
    }
    fputs("]}\n", f);
}

vgt_status state_write(vgt_replay *rp, FILE *f, vgt_error *err)
{
    if (!rp->be) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "replay: nothing replayed (the backend is not open)");
    qsort(rp->state, rp->nstate, sizeof *rp->state, cmp_region);
    uint32_t n = 0;
    uint64_t most = 0;
    for (uint32_t i = 0; i < rp->nstate; i++) {   /* drop repeats (a semaphore released many times) */
        if (n && !cmp_region(&rp->state[n - 1], &rp->state[i])) {
            free(rp->state[i].text);
            continue;
        }
        rp->state[n++] = rp->state[i];
        if (rp->state[i].len > most) most = rp->state[i].len;
    }
    rp->nstate = n;
    uint8_t *buf = malloc(most ? most : 1), *mask = malloc(most ? most : 1);
    if (!buf || !mask) {
        free(buf);
        free(mask);
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "--dump-state: no memory for a %" PRIu64 "-byte range", most);
    }
    fprintf(f, "{\"type\":\"state\",\"backend\":\"%s\",\"known_bytes\":%s,\"regions\":%u}\n", rp->sum.backend,
            rp->ops->known ? "true" : "false", n);
    for (uint32_t i = 0; i < n; i++) {
        if (rp->state[i].text) fputs(rp->state[i].text, f);
        else write_region(rp, f, &rp->state[i], buf, mask);
    }
    free(buf);
    free(mask);
    return VGT_OK;
}

/* The semaphores the submissions release (the engine's semantic tracker, which reads no memory: the
 * releases of QMDs written outside the stream are not among them), besides those the trace observes. */
static int active(const vgt_replay *rp) { return rp->opt.dump_state; }

static unsigned begin(stream_submit *s)
{
    (void)s;
    return 0;
}

static void event(stream_submit *s, const vgt_event *ev)
{
    if (ev->kind == VGT_EV_SEM_RELEASE && ev->u.sem.op != VGT_SEM_OP_REPORT_ONLY)
        state_note(s->rp, 1, ev->u.sem.va, ev->u.sem.size, STATE_AT_END);
}

const stream_sub sub_state = {.name = "state", .active = active, .begin = begin, .event = event};
