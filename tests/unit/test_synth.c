/* test_synth.c: the synthesizer (analyze/src/synth.c, synth_check.c) on a launch written by hand.
 *
 *  - the fresh QMD is Hopper's V04_00 with the program, the constant buffers and the QMD at the allocator's
 *    addresses (the program prefetch address too), dependents dropped, releases kept; a constant-buffer pointer into the bank itself and one to
 *    the QMD are relocated, a pointer to other memory is not;
 *  - the stream decodes back to the launch (vgt_synth_check), and a plan whose QMD bytes are damaged does not;
 *  - a launch with a problem (program not in the trace) is refused, a draw is unsupported;
 *  - a NOTIFY (vk_compute's first submission has one on the 3D class) is rebuilt as SET_NOTIFY_A, _B, NOTIFY
 *    on its class and decodes back; one whose address is damaged in the stream does not. */
#include <stdlib.h>
#include <string.h>

#include "vgt/nv/clcb97.h"
#include "vgt/nv/clcbc0.h"
#include "vgt/synth.h"
#include "check.h"

static uint64_t next_va = 0x10000000ull;
static uint64_t alloc(void *ctx, uint64_t size, uint64_t align)
{
    (void)ctx;
    uint64_t at = (next_va + align - 1) & ~(align - 1);
    next_va = at + size;
    return at;
}

static uint8_t program[512], cb0[1024];

static void make_launch(vgt_launch_desc *d, vgt_event *ev)
{
    memset(d, 0, sizeof *d);
    memset(ev, 0, sizeof *ev);
    d->cls = 0xCBC0, d->subch = 1, d->version = VGT_QMD_V04_00, d->qmd_size = d->qmd_known = 384;
    d->qmd_va = 0x204e0c000ull;
    vgt_qmd *q = &d->qmd;
    q->version = VGT_QMD_V04_00, q->major = 4, q->size = 384, q->release_count = 3;
    q->grid[0] = 8, q->grid[1] = q->grid[2] = 1;
    q->block[0] = 128, q->block[1] = q->block[2] = 1;
    q->program_va = 0x7fee2b799a00ull;
    q->program_prefetch_va = q->program_va, q->program_prefetch_size = 12;
    q->register_count = 16, q->barrier_count = 1;
    q->cb_valid_mask = 1;
    q->cb[0] = (vgt_qmd_cb){1, 0x7fee2a280000ull, sizeof cb0};
    q->release[0] = (vgt_qmd_release){.enabled = 1, .structure_size = 1, .va = 0x204637f3cull, .payload = 6};
    q->dependent[0] = (vgt_qmd_dependent){.enabled = 1, .action = 4, .va = 0x204e10000ull};
    for (unsigned i = 0; i < sizeof program; i++) program[i] = (uint8_t)(i * 7 + 1);
    memset(cb0, 0, sizeof cb0);
    uint64_t self = 0x7fee2a280100ull, qmd = d->qmd_va, other = 0x7fee1f000000ull;
    memcpy(cb0 + 0x38, &qmd, 8);
    memcpy(cb0 + 0xc0, &self, 8);
    memcpy(cb0 + 0x210, &other, 8);
    d->program_va = q->program_va, d->program_len = sizeof program, d->program = program;
    d->cb[0] = (vgt_ld_cb){.valid = 1, .mapped = 1, .va = q->cb[0].va, .size = sizeof cb0, .known = sizeof cb0, .bytes = cb0};
    d->addrs[0] = (vgt_ld_addr){.cb = 0, .offset = 0x38, .value = qmd};
    d->addrs[1] = (vgt_ld_addr){.cb = 0, .offset = 0xc0, .value = self};
    d->addrs[2] = (vgt_ld_addr){.cb = 0, .offset = 0x210, .value = other};
    d->naddrs = 3;
    d->state[0] = (vgt_ld_state){NVCBC0_SET_SHADER_LOCAL_MEMORY_A, 0x7fee};
    d->nstate = 1;
    ev->kind = VGT_EV_LAUNCH, ev->cls = 0xCBC0, ev->subch = 1;
    ev->u.launch.qmd = *q, ev->u.launch.decoded = 1, ev->u.launch.qmd_known = 1, ev->u.launch.qmd_va = d->qmd_va;
}

static const vgt_synth_blob *find_blob(const vgt_synth_plan *p, const char *what)
{
    for (uint32_t i = 0; i < p->nblobs; i++)
        if (strstr(p->blobs[i].what, what)) return &p->blobs[i];
    return NULL;
}

int main(void)
{
    static vgt_launch_desc d;
    vgt_event ev;
    vgt_error err;
    vgt_synth *s = NULL;
    vgt_synth_config cfg = {.alloc = alloc, .host_cls = 0xC86F};
    CHECK_STATUS(vgt_synth_new(&cfg, &s, &err), VGT_OK, &err, "new");
    if (!s) return check_finish("test_synth");
    make_launch(&d, &ev);
    vgt_work w = {.kind = VGT_WORK_LAUNCH, .index = 7, .ev = &ev, .launch = &d, .method = NVCBC0_SEND_SIGNALING_PCAS2_B};
    vgt_synth_begin(s);
    CHECK_STATUS(vgt_synth_work(s, &w, &err), VGT_OK, &err, "launch");
    const vgt_synth_plan *p = vgt_synth_plan_get(s);
    const vgt_synth_blob *bq = find_blob(p, "QMD"), *bp = find_blob(p, "program"), *bc = find_blob(p, "constant buffer 0");
    CHECK(bq && bp && bc, "blobs: QMD %p program %p cb0 %p", (void *)bq, (void *)bp, (void *)bc);
    if (bq && bp && bc) {
        vgt_qmd q;
        CHECK_STATUS(vgt_qmd_decode(p->bytes + bq->off, (uint32_t)bq->len, &q, &err), VGT_OK, &err, "decode QMD");
        CHECK(q.version == VGT_QMD_V04_00 && q.grid[0] == 8 && q.block[0] == 128, "QMD launch");
        CHECK_EQ_U64(q.program_va, bp->va, "program relocated");
        CHECK_EQ_U64(q.program_prefetch_va, bp->va, "program prefetch relocated with it");
        CHECK_EQ_U64(q.cb[0].va, bc->va, "constant buffer relocated");
        CHECK(!q.dependent[0].enabled, "dependents dropped");
        CHECK(q.release[0].enabled && q.release[0].va == 0x204637f3cull && q.release[0].payload == 6, "release kept");
        CHECK(!memcmp(p->bytes + bp->off, program, sizeof program), "program bytes");
        uint64_t v;
        memcpy(&v, p->bytes + bc->off + 0x38, 8);
        CHECK_EQ_U64(v, bq->va, "the bank's QMD pointer follows the QMD");
        memcpy(&v, p->bytes + bc->off + 0xc0, 8);
        CHECK_EQ_U64(v, bc->va + 0x100, "the bank's pointer into itself follows the bank");
        memcpy(&v, p->bytes + bc->off + 0x210, 8);
        CHECK_EQ_U64(v, 0x7fee1f000000ull, "a pointer to other memory is kept");
    }
    CHECK_STATUS(vgt_synth_check(s, &err), VGT_OK, &err, "decodes back");
    /* a second identical launch: the state is not sent again, the program is not copied again */
    uint32_t runs_before;
    vgt_synth_begin(s);
    CHECK_STATUS(vgt_synth_work(s, &w, &err), VGT_OK, &err, "launch again");
    runs_before = p->nruns;
    CHECK(!find_blob(p, "program"), "program copied once");
    for (uint32_t i = 0; i < p->nruns; i++)
        CHECK(p->runs[i].mthd != NVCBC0_SET_SHADER_LOCAL_MEMORY_A, "state sent once");
    /* damage the QMD: the check refuses the plan */
    const vgt_synth_blob *b2 = find_blob(p, "QMD");
    if (b2) {
        uint8_t *qb = (uint8_t *)p->bytes + b2->off;
        vgt_qmd_set_bits(qb, 384, 1055, 1024, 9);   /* GRID_WIDTH */
        CHECK_STATUS(vgt_synth_check(s, &err), VGT_E_DECODE, &err, "a damaged QMD");
        CHECK(strstr(err.msg, "grid") != NULL, "names the grid: %s", err.msg);
    }
    CHECK(runs_before >= 2, "runs %u", runs_before);
    /* refusals */
    vgt_synth_begin(s);
    snprintf(d.problem, sizeof d.problem, "program bytes at 0x%llx are not in the trace", (unsigned long long)d.program_va);
    CHECK_STATUS(vgt_synth_work(s, &w, &err), VGT_E_ARG, &err, "a launch with a problem");
    CHECK(strstr(err.msg, "not in the trace") != NULL, "%s", err.msg);
    vgt_synth_begin(s);
    vgt_event draw = {.kind = VGT_EV_DRAW};
    vgt_work wd = {.kind = VGT_WORK_OTHER, .ev = &draw};
    CHECK_STATUS(vgt_synth_work(s, &wd, &err), VGT_E_UNSUPPORTED, &err, "a draw");
    /* NOTIFY */
    vgt_synth_begin(s);
    vgt_event nt = {.kind = VGT_EV_NOTIFY, .cls = 0xCB97, .subch = 0};
    nt.u.notify.va = 0x1041a0010ull, nt.u.notify.type = 1;
    vgt_work wn = {.kind = VGT_WORK_SEMAPHORE, .ev = &nt, .method = NVCB97_NOTIFY};
    /* a 3D-class NOTIFY raised Xid 25 on the H200 when rebuilt on the lane's channel: left to verbatim */
    CHECK_STATUS(vgt_synth_work(s, &wn, &err), VGT_E_UNSUPPORTED, &err, "a NOTIFY on the 3D class");
    vgt_synth_begin(s);
    nt.cls = 0xCBC0, nt.subch = 1, wn.method = NVCBC0_NOTIFY;
    CHECK_STATUS(vgt_synth_work(s, &wn, &err), VGT_OK, &err, "a NOTIFY on the compute class");
    const vgt_synth_run *rn = NULL;
    for (uint32_t i = 0; i < p->nruns; i++)
        if (p->runs[i].mthd == NVCBC0_SET_NOTIFY_A) rn = &p->runs[i];
    CHECK(rn && rn->cls == 0xCBC0 && rn->subch == 1 && rn->count == 3, "SET_NOTIFY_A .. NOTIFY on the compute class");
    if (rn) {
        CHECK(p->dw[rn->first] == 0x1 && p->dw[rn->first + 1] == 0x041a0010u && p->dw[rn->first + 2] == 1,
              "notify values %x %x %x", p->dw[rn->first], p->dw[rn->first + 1], p->dw[rn->first + 2]);
        CHECK_STATUS(vgt_synth_check(s, &err), VGT_OK, &err, "the NOTIFY decodes back");
        vgt_synth_begin(s);
        CHECK_STATUS(vgt_synth_work(s, &wn, &err), VGT_OK, &err, "a NOTIFY again");
        for (uint32_t i = 0; i < p->nruns; i++)
            if (p->runs[i].mthd == NVCBC0_SET_NOTIFY_A) p->dw[p->runs[i].first + 1] ^= 0x100;
        CHECK_STATUS(vgt_synth_check(s, &err), VGT_E_DECODE, &err, "a NOTIFY at another address");
        CHECK(strstr(err.msg, "notification") != NULL, "%s", err.msg);
    }
    vgt_synth_free(s);
    return check_finish("test_synth");
}
