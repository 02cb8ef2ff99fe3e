/* test_ldx_runs.c: the work extractor fed a push buffer's non-increasing runs whole (vgt_ldx_noninc_run, as
 * the replay's stream does) describes the same work as fed write by write (vgt_ldx_method), and a quiet
 * channel (vgt_ldx_channel_quiet: its tracker reads and decodes no QMD) leaves the work of the submissions
 * that are not quiet as it was.
 *
 * Each corpus trace is walked once, feeding three extractors: "one" (every write on its own), "run" (runs
 * whole) and "quiet" (runs whole, quiet on every even submission). Each work item is folded into a hash:
 * its kind, position and event, a launch's whole description as `vgt launches --json --bytes` prints it
 * (QMD, program, constant buffers, buffers, state, problem), a copy's as printed. "run" must equal "one"
 * over every submission; "quiet" must equal "one" over the odd submissions. The traces cover compute
 * launches by address and inline, macro-built launches and uploads (3D with MME macros), copies, graphs.
 * A hand-built stream adds what the corpus lacks: a compute SET_* state method sent as a run (its last value
 * is the state a later launch describes). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vgt/launch_desc.h"
#include "vgt/model.h"
#include "vgt/walk.h"

enum { ONE, RUN, QUIET, NX };

typedef struct fold {
    uint64_t hash, works, launches;
} fold;

typedef struct walk_ctx {
    vgt_ldx *x[NX];
    const vgt_model *model;
    uint64_t submission;
    fold all[NX], odd;            /* odd: "one" over the odd submissions */
    vgt_status rc;
    vgt_error err;
} walk_ctx;

typedef struct who {
    walk_ctx *w;
    int k;
} who;

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* One work item as text: what a consumer of the extractor sees of it (indices left out: a quiet extractor
 * counts only the launches it describes). */
static uint64_t work_hash(const vgt_work *wk)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return 0;
    fprintf(f, "%s %llu %llu %x %x %x ", vgt_work_kind_name(wk->kind), (unsigned long long)wk->submission,
            (unsigned long long)wk->seq, wk->channel, wk->host_cls, wk->method);
    if (wk->ev)
        fprintf(f, "ev %d %llu:%u:%u %d %llu ", (int)wk->ev->kind, (unsigned long long)wk->ev->pos.seq, wk->ev->pos.entry,
                wk->ev->pos.dword, (int)wk->ev->origin, (unsigned long long)wk->ev->macro_call);
    if (wk->launch) {
        vgt_launch_desc d = *wk->launch;
        d.index = 0;
        vgt_launch_desc_print_json(f, &d, VGT_LD_PRINT_BYTES);
    } else if (wk->kind == VGT_WORK_COPY) {
        vgt_work c = *wk;
        c.index = 0;
        vgt_work_copy_print_json(f, &c);
    } else if (wk->kind == VGT_WORK_UPLOAD && wk->ev) {
        const vgt_ev_upload *u = &wk->ev->u.upload;
        fprintf(f, "upload %llx %llu %llu", (unsigned long long)u->dst_va, (unsigned long long)u->length,
                (unsigned long long)u->received);
        if (u->data) fprintf(f, " %llx", (unsigned long long)mix(0xcbf29ce484222325ull, u->data,
                                                                   u->received < u->length ? u->received : u->length));
    }
    fclose(f);
    uint64_t h = mix(0xcbf29ce484222325ull, buf, len);
    free(buf);
    return h;
}

static void add(fold *f, const vgt_work *wk, uint64_t h)
{
    f->hash = mix(f->hash, &h, sizeof h);
    f->works++;
    if (wk->kind == VGT_WORK_LAUNCH) f->launches++;
}

static void on_work(void *ctx, const vgt_work *wk)
{
    who *o = ctx;
    uint64_t h = work_hash(wk);
    add(&o->w->all[o->k], wk, h);
    if (o->k == ONE && (wk->submission & 1)) add(&o->w->odd, wk, h);
}

typedef struct chan_x {
    vgt_ldx_channel *lc[NX];
} chan_x;

static void chan_free(vgt_walk_channel *chan)
{
    chan_x *cx = chan->user;
    if (!cx) return;
    for (int k = 0; k < NX; k++) vgt_ldx_channel_free(cx->lc[k]);
    free(cx);
    chan->user = NULL;
}

static void on_channel(void *ctx, vgt_walk_channel *chan)
{
    walk_ctx *w = ctx;
    chan_free(chan);
    chan_x *cx = calloc(1, sizeof *cx);
    chan->user = cx;
    for (int k = 0; cx && k < NX; k++)
        if (vgt_ldx_channel_new(w->x[k], chan->client, chan->handle, chan->cls, &cx->lc[k], &w->err) != VGT_OK)
            w->rc = w->err.code;
}

static void on_channel_end(void *ctx, vgt_walk_channel *chan)
{
    (void)ctx;
    chan_free(chan);
}

static int on_record(void *ctx, const vgt_record *rec, const vgt_model *model)
{
    walk_ctx *w = ctx;
    w->model = model;
    for (int k = 0; k < NX; k++) vgt_ldx_walk_record(w->x[k], rec, model);
    return 0;
}

static int on_submit_begin(void *ctx, const vgt_walk_submit *s)
{
    walk_ctx *w = ctx;
    chan_x *cx = s->chan->user;
    w->submission = s->index;
    if (!cx) return 0;
    for (int k = 0; k < NX; k++) vgt_ldx_submit_begin(cx->lc[k], s->index, s->seq);
    vgt_ldx_channel_quiet(cx->lc[QUIET], !(s->index & 1));
    return 0;
}

static int fail(walk_ctx *w, vgt_status rc)
{
    if (rc != VGT_OK && w->rc == VGT_OK) w->rc = rc;
    return 0;
}

static int on_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m)
{
    walk_ctx *w = ctx;
    chan_x *cx = s->chan->user;
    if (!cx) return 0;
    for (int k = 0; k < NX; k++) fail(w, vgt_ldx_method(cx->lc[k], m, &w->err));
    return 0;
}

static int on_noninc_run(void *ctx, const vgt_walk_submit *s, const vgt_method *m, const uint8_t *data, uint32_t count)
{
    walk_ctx *w = ctx;
    chan_x *cx = s->chan->user;
    if (!cx) return 0;
    for (uint32_t i = 0; i < count; i++) {
        vgt_method one = vgt_pb_run_method(m, data, i);
        fail(w, vgt_ldx_method(cx->lc[ONE], &one, &w->err));
    }
    fail(w, vgt_ldx_noninc_run(cx->lc[RUN], m, data, count, &w->err));
    fail(w, vgt_ldx_noninc_run(cx->lc[QUIET], m, data, count, &w->err));
    return 0;
}

static int on_state_method(void *ctx, const vgt_walk_submit *s, const vgt_method *m) { return on_method(ctx, s, m); }

static int on_submit_end(void *ctx, const vgt_walk_submit *s)
{
    walk_ctx *w = ctx;
    chan_x *cx = s->chan->user;
    if (!cx) return 0;
    for (int k = 0; k < NX; k++) fail(w, vgt_ldx_submit_end(cx->lc[k], &w->err));
    return 0;
}

static void check_trace(const char *path, uint64_t min_launches)
{
    walk_ctx w = {.rc = VGT_OK};
    who o[NX];
    vgt_error err;
    for (int k = 0; k < NX; k++) {
        o[k] = (who){&w, k};
        w.all[k].hash = 0xcbf29ce484222325ull;
        vgt_ldx_config cfg = {.on_work = on_work, .ctx = &o[k], .trace_read = vgt_sem_model_ptr_reader,
                              .trace_ctx = &w.model};
        CHECK_STATUS(vgt_ldx_new(&cfg, &w.x[k], &err), VGT_OK, &err, "extractor");
    }
    w.odd.hash = 0xcbf29ce484222325ull;
    vgt_walk_options opt = vgt_walk_defaults();
    opt.deliver_unselected = 1;
    vgt_walk_callbacks cb = {.on_record = on_record, .on_channel = on_channel, .on_channel_end = on_channel_end,
                             .on_submit_begin = on_submit_begin, .on_method = on_method, .on_noninc_run = on_noninc_run,
                             .on_state_method = on_state_method, .on_submit_end = on_submit_end, .ctx = &w};
    CHECK_STATUS(vgt_walk_path(path, &opt, &cb, NULL, &err), VGT_OK, &err, "walk of %s", path);
    CHECK_STATUS(w.rc, VGT_OK, &w.err, "%s: the extractors", path);
    CHECK(w.all[ONE].launches >= min_launches, "%s: %llu launches described (at least %llu)", path,
          (unsigned long long)w.all[ONE].launches, (unsigned long long)min_launches);
    CHECK(w.all[RUN].works == w.all[ONE].works && w.all[RUN].hash == w.all[ONE].hash,
          "%s: runs taken whole describe the same work: %llu items (%llu launches) against %llu (%llu)", path,
          (unsigned long long)w.all[RUN].works, (unsigned long long)w.all[RUN].launches,
          (unsigned long long)w.all[ONE].works, (unsigned long long)w.all[ONE].launches);
    CHECK(w.all[QUIET].works == w.odd.works && w.all[QUIET].hash == w.odd.hash,
          "%s: quiet submissions leave the others' work as it was: %llu items (%llu launches) against %llu (%llu)", path,
          (unsigned long long)w.all[QUIET].works, (unsigned long long)w.all[QUIET].launches,
          (unsigned long long)w.odd.works, (unsigned long long)w.odd.launches);
    for (int k = 0; k < NX; k++) vgt_ldx_free(w.x[k]);
}

/* ---- a hand-built stream: compute state and an MME upload sent as runs ---- */

typedef struct last_launch {
    int launches;
    vgt_launch_desc d;
} last_launch;

static void keep_launch(void *ctx, const vgt_work *wk)
{
    last_launch *l = ctx;
    if (wk->kind != VGT_WORK_LAUNCH) return;
    l->launches++;
    l->d = *wk->launch;
}

static vgt_method meth(uint32_t mthd, uint32_t data, uint8_t kind)
{
    vgt_method m = {.subch = 1, .cls = 0xCBC0, .mthd = mthd, .data = data, .kind = kind};
    m.pos.seq = 7;
    return m;
}

/* A compute SET_* state method sent as a run keeps its last value (the state a launch after it describes),
 * fed whole or write by write. */
static void test_state_run(void)
{
    enum { SLM_A = 0x0790, I2M_LINE_LENGTH = 0x180, I2M_LINE_COUNT = 0x184, I2M_OUT_UPPER = 0x188, I2M_OUT = 0x18c,
           I2M_LAUNCH = 0x1b0, I2M_DATA = 0x1b4, PCAS_A = 0x2b4, PCAS2_B = 0x2c0 };
    last_launch got[2] = {{0}};
    vgt_ldx *x[2];
    vgt_ldx_channel *lc[2];
    vgt_error err;
    uint8_t qmd[384] = {0};
    vgt_qmd_set_bits(qmd, 384, 583, 580, 4);       /* V04_00 */
    vgt_qmd_set_bits(qmd, 384, 1055, 1024, 2);     /* grid 2x1x1, block 32x1x1 */
    vgt_qmd_set_bits(qmd, 384, 1071, 1056, 1);
    vgt_qmd_set_bits(qmd, 384, 1103, 1088, 1);
    vgt_qmd_set_bits(qmd, 384, 1167, 1152, 32);
    vgt_qmd_set_bits(qmd, 384, 1183, 1168, 1);
    vgt_qmd_set_bits(qmd, 384, 1199, 1184, 1);
    const uint64_t qva = 0x204e0c000ull;
    const uint8_t values[12] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0};
    for (int k = 0; k < 2; k++) {
        vgt_ldx_config cfg = {.on_work = keep_launch, .ctx = &got[k]};
        CHECK_STATUS(vgt_ldx_new(&cfg, &x[k], &err), VGT_OK, &err, "extractor");
        CHECK_STATUS(vgt_ldx_channel_new(x[k], 1, 2, 0xC86F, &lc[k], &err), VGT_OK, &err, "channel");
        vgt_ldx_submit_begin(lc[k], 0, 7);
        vgt_method run = meth(SLM_A, 1, VGT_HDR_NONINC);
        if (k) CHECK_STATUS(vgt_ldx_noninc_run(lc[k], &run, values, 3, &err), VGT_OK, &err, "state run");
        else
            for (uint32_t i = 0; i < 3; i++) {
                vgt_method one = vgt_pb_run_method(&run, values, i);
                CHECK_STATUS(vgt_ldx_method(lc[k], &one, &err), VGT_OK, &err, "state write");
            }
        const uint32_t setup[][2] = {{I2M_OUT_UPPER, (uint32_t)(qva >> 32)}, {I2M_OUT, (uint32_t)qva},
                                     {I2M_LINE_LENGTH, 384}, {I2M_LINE_COUNT, 1}, {I2M_LAUNCH, 0x41}};
        for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++) {
            vgt_method m = meth(setup[i][0], setup[i][1], VGT_HDR_INC);
            CHECK_STATUS(vgt_ldx_method(lc[k], &m, &err), VGT_OK, &err, "upload setup");
        }
        vgt_method data = meth(I2M_DATA, (uint32_t)qmd[0] | (uint32_t)qmd[1] << 8 | (uint32_t)qmd[2] << 16 |
                                            (uint32_t)qmd[3] << 24, VGT_HDR_NONINC);
        CHECK_STATUS(vgt_ldx_noninc_run(lc[k], &data, qmd, 96, &err), VGT_OK, &err, "QMD upload run");
        vgt_method pa = meth(PCAS_A, (uint32_t)(qva >> 8), VGT_HDR_INC), pb = meth(PCAS2_B, 0x9, VGT_HDR_INC);
        CHECK(vgt_ldx_method(lc[k], &pa, &err) == VGT_OK && vgt_ldx_method(lc[k], &pb, &err) == VGT_OK, "launch");
        CHECK_STATUS(vgt_ldx_submit_end(lc[k], &err), VGT_OK, &err, "end");
    }
    CHECK(got[0].launches == 1 && got[1].launches == 1, "one launch each: %d, %d", got[0].launches, got[1].launches);
    uint32_t v[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < got[k].d.nstate; i++)
            if (got[k].d.state[i].method == SLM_A) v[k] = got[k].d.state[i].value;
    CHECK(v[0] == 3 && v[1] == 3 && got[0].d.nstate == got[1].d.nstate,
          "the launch's state holds the run's last value: %u write by write, %u whole", v[0], v[1]);
    CHECK(got[1].d.qmd.grid[0] == 2 && got[1].d.qmd.block[0] == 32 && got[1].d.qmd_known == 384, "the QMD from the run's upload");
    for (int k = 0; k < 2; k++) {
        vgt_ldx_channel_free(lc[k]);
        vgt_ldx_free(x[k]);
    }
}

int main(void)
{
    test_state_run();
    check_trace("corpus/many_launches.vgt", 10000);
    check_trace("corpus/cuda_graph.vgt", 1);
    check_trace("corpus/torch_small.vgt", 1);
    check_trace("corpus/triton_small.vgt", 1);
    check_trace("corpus/streams_threads.vgt", 1);
    check_trace("corpus/vk_compute.vgt", 1);
    check_trace("corpus/vk_scene.vgt", 0);
    check_trace("corpus/gl_egl.vgt", 0);
    return check_finish("test_ldx_runs");
}
