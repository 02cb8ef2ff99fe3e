/* sem_semaphore.c: host semaphores (SEM_ADDR_LO/HI, SEM_PAYLOAD_LO/HI, SEM_EXECUTE; SEMAPHOREA-D) and
 * report semaphores of the 3D and compute classes (SET_REPORT_SEMAPHORE_A-D; REPORT_SEMAPHORE_* on
 * C797/C7C0 and later).
 *
 * Fields (NVIDIA open-gpu-doc): SEM_EXECUTE (classes/host/clc56f.h): OPERATION 2:0 (ACQUIRE 0, RELEASE 1,
 * ACQ_STRICT_GEQ 2, ACQ_CIRC_GEQ 3, ACQ_AND 4, ACQ_NOR 5, REDUCTION 6), ACQUIRE_SWITCH_TSG 12,
 * RELEASE_WFI 20, PAYLOAD_SIZE 24 (1 = 64-bit), RELEASE_TIMESTAMP 25, REDUCTION 30:27 (IMIN IMAX IXOR IAND
 * IOR IADD INC DEC), REDUCTION_FORMAT 31 (0 signed). SEM_ADDR_LO keeps bits 31:2, SEM_ADDR_HI 24:0 on C86F.
 * SEMAPHORED (clc46f.h): OPERATION 4:0 one-hot (ACQUIRE 1, RELEASE 2, ACQ_GEQ 4, ACQ_AND 8, REDUCTION 16),
 * RELEASE_WFI 20 (0 = enabled), RELEASE_SIZE 24 (0 = 16-byte with timestamp), REDUCTION 30:27 (MIN MAX XOR
 * AND OR ADD INC DEC), FORMAT 31 (0 signed).
 * SET_REPORT_SEMAPHORE_D (classes/3d/clcb97.h, compute/clcbc0.h): OPERATION 1:0 (RELEASE 0, ACQUIRE 1,
 * REPORT_ONLY 2, TRAP 3), FLUSH_DISABLE 2, REDUCTION_ENABLE 3, REDUCTION_OP 11:9 (ADD MIN MAX INC DEC AND OR
 * XOR), REDUCTION_FORMAT 18:17, AWAKEN_ENABLE 20, REPORT 27:23 (3D), STRUCTURE_SIZE 28 (0 four words).
 * REPORT_SEMAPHORE_EXECUTE differs per class: compute (clcbc0.h) OPERATION 1:0, AWAKEN 2, STRUCTURE_SIZE
 * 4:3, REDUCTION_ENABLE 6, REDUCTION_OP 9:7, REDUCTION_FORMAT 11:10, PAYLOAD_SIZE64 12; 3D (clcb97.h)
 * OPERATION 1:0, AWAKEN 6, REPORT 11:7, STRUCTURE_SIZE 14:13, REDUCTION_ENABLE 20, REDUCTION_OP 23:21,
 * REDUCTION_FORMAT 25:24 (structure TWO_WORDS = a 64-bit payload). */
#include "sem_internal.h"

#define BITS(v, hi, lo) (((v) >> (lo)) & ((1u << ((hi) - (lo) + 1)) - 1u))

/* Host SEM_EXECUTE REDUCTION 30:27 -> our numbering. */
static const uint8_t host_red[8] = { VGT_RED_MIN, VGT_RED_MAX, VGT_RED_XOR, VGT_RED_AND, VGT_RED_OR, VGT_RED_ADD,
                                     VGT_RED_INC, VGT_RED_DEC };
/* Report REDUCTION_OP (3 bits) -> our numbering. */
static const uint8_t report_red[8] = { VGT_RED_ADD, VGT_RED_MIN, VGT_RED_MAX, VGT_RED_INC, VGT_RED_DEC, VGT_RED_AND,
                                       VGT_RED_OR, VGT_RED_XOR };
static const uint8_t host_op[8] = { VGT_SEM_OP_ACQUIRE, VGT_SEM_OP_RELEASE, VGT_SEM_OP_ACQ_STRICT_GEQ,
                                    VGT_SEM_OP_ACQ_CIRC_GEQ, VGT_SEM_OP_ACQ_AND, VGT_SEM_OP_ACQ_NOR,
                                    VGT_SEM_OP_REDUCTION, 0 };
static const uint8_t report_op[4] = { VGT_SEM_OP_RELEASE, VGT_SEM_OP_ACQUIRE, VGT_SEM_OP_REPORT_ONLY, VGT_SEM_OP_TRAP };

static vgt_event_kind kind_of(unsigned op)
{
    if (op == VGT_SEM_OP_RELEASE || op == VGT_SEM_OP_REDUCTION) return VGT_EV_SEM_RELEASE;
    if (op == VGT_SEM_OP_REPORT_ONLY || op == VGT_SEM_OP_TRAP) return VGT_EV_REPORT;
    return VGT_EV_SEM_ACQUIRE;
}

static void emit_sem(vgt_sem_tracker *t, const vgt_method *m, const vgt_ev_sem *sem)
{
    vgt_event ev;
    sem_event_init(t, &ev, kind_of(sem->op), m);
    ev.u.sem = *sem;
    sem_emit(t, &ev);
}

static void host_execute(vgt_sem_tracker *t, const vgt_method *m)
{
    const host_state *h = &t->host;
    uint32_t d = m->data;
    vgt_ev_sem s = { 0 };
    s.source = VGT_SEM_SRC_HOST;
    s.op = host_op[BITS(d, 2, 0)];
    if (!s.op) return;   /* OPERATION 7 is not defined */
    s.size = BITS(d, 24, 24) ? 8 : 4;
    s.va = ((uint64_t)(h->addr_hi & 0x1ffffffu) << 32) | (h->addr_lo & ~3u);
    s.payload = s.size == 8 ? ((uint64_t)h->payload_hi << 32) | h->payload_lo : h->payload_lo;
    if (s.op == VGT_SEM_OP_REDUCTION) {
        s.reduction = host_red[BITS(d, 30, 27) & 7];
        if (!BITS(d, 31, 31)) s.flags |= VGT_SEM_FLAG_SIGNED;
    }
    if (BITS(d, 12, 12)) s.flags |= VGT_SEM_FLAG_SWITCH_TSG;
    if (BITS(d, 20, 20)) s.flags |= VGT_SEM_FLAG_WFI;
    if (BITS(d, 25, 25)) s.flags |= VGT_SEM_FLAG_TIMESTAMP;
    s.raw = d;
    emit_sem(t, m, &s);
}

static void host_semaphored(vgt_sem_tracker *t, const vgt_method *m)
{
    const host_state *h = &t->host;
    uint32_t d = m->data, op = BITS(d, 4, 0);
    vgt_ev_sem s = { 0 };
    s.source = VGT_SEM_SRC_HOST;
    if (op == 1) s.op = VGT_SEM_OP_ACQUIRE;
    else if (op == 2) s.op = VGT_SEM_OP_RELEASE;
    else if (op == 4) s.op = VGT_SEM_OP_ACQ_STRICT_GEQ;
    else if (op == 8) s.op = VGT_SEM_OP_ACQ_AND;
    else if (op == 16) s.op = VGT_SEM_OP_REDUCTION;
    else return;
    s.size = 4;
    s.va = ((uint64_t)(h->a & 0xffu) << 32) | (h->b & ~3u);
    s.payload = h->c;
    if (s.op == VGT_SEM_OP_REDUCTION) {
        s.reduction = host_red[BITS(d, 30, 27) & 7];
        if (!BITS(d, 31, 31)) s.flags |= VGT_SEM_FLAG_SIGNED;
    }
    if (BITS(d, 12, 12)) s.flags |= VGT_SEM_FLAG_SWITCH_TSG;
    if (!BITS(d, 20, 20)) s.flags |= VGT_SEM_FLAG_WFI;        /* RELEASE_WFI_EN is 0 here */
    if (!BITS(d, 24, 24) && s.op == VGT_SEM_OP_RELEASE) s.flags |= VGT_SEM_FLAG_TIMESTAMP;
    s.raw = d;
    emit_sem(t, m, &s);
}

void sem_host(vgt_sem_tracker *t, unsigned role, const vgt_method *m)
{
    host_state *h = &t->host;
    switch (role) {
    case R_SEM_ADDR_LO: h->addr_lo = m->data; break;
    case R_SEM_ADDR_HI: h->addr_hi = m->data; break;
    case R_SEM_PAYLOAD_LO: h->payload_lo = m->data; break;
    case R_SEM_PAYLOAD_HI: h->payload_hi = m->data; break;
    case R_SEM_EXECUTE: host_execute(t, m); break;
    case R_SEMA_A: h->a = m->data; break;
    case R_SEMA_B: h->b = m->data; break;
    case R_SEMA_C: h->c = m->data; break;
    case R_SEMA_D: host_semaphored(t, m); break;
    }
}

/* SET_REPORT_SEMAPHORE_D: address from A (upper, 24:0 on Hopper) and B, 32-bit payload from C. */
static void report_d(vgt_sem_tracker *t, const report_state *r, const vgt_method *m)
{
    uint32_t d = m->data;
    vgt_ev_sem s = { 0 };
    s.source = VGT_SEM_SRC_REPORT;
    s.op = report_op[BITS(d, 1, 0)];
    s.size = 4;
    s.va = ((uint64_t)(r->a & 0x1ffffffu) << 32) | r->b;
    s.payload = r->c;
    if (BITS(d, 3, 3) && s.op == VGT_SEM_OP_RELEASE) {
        s.op = VGT_SEM_OP_REDUCTION;
        s.reduction = report_red[BITS(d, 11, 9)];
        if (BITS(d, 18, 17) == 1) s.flags |= VGT_SEM_FLAG_SIGNED;
    }
    if (BITS(d, 20, 20)) s.flags |= VGT_SEM_FLAG_AWAKEN;
    if (!BITS(d, 28, 28)) s.flags |= VGT_SEM_FLAG_TIMESTAMP;   /* four-word structure */
    if ((m->cls & 0xff) == 0x97) s.report = BITS(d, 27, 23);
    s.raw = d;
    emit_sem(t, m, &s);
}

/* REPORT_SEMAPHORE_EXECUTE: address and 64-bit payload from the REPORT_SEMAPHORE_* methods. */
static void report_execute(vgt_sem_tracker *t, const report_state *r, const vgt_method *m)
{
    uint32_t d = m->data;
    int is3d = (m->cls & 0xff) == 0x97;
    unsigned structure = is3d ? BITS(d, 14, 13) : BITS(d, 4, 3);
    unsigned red_en = is3d ? BITS(d, 20, 20) : BITS(d, 6, 6);
    unsigned red_op = is3d ? BITS(d, 23, 21) : BITS(d, 9, 7);
    unsigned red_fmt = is3d ? BITS(d, 25, 24) : BITS(d, 11, 10);
    unsigned awaken = is3d ? BITS(d, 6, 6) : BITS(d, 2, 2);
    int is64 = is3d ? structure == 2 : BITS(d, 12, 12);
    vgt_ev_sem s = { 0 };
    s.source = VGT_SEM_SRC_REPORT;
    s.op = report_op[BITS(d, 1, 0)];
    s.size = is64 ? 8 : 4;
    s.va = ((uint64_t)(r->addr_hi & 0x1ffffffu) << 32) | r->addr_lo;
    s.payload = is64 ? ((uint64_t)r->payload_hi << 32) | r->payload_lo : r->payload_lo;
    if (red_en && s.op == VGT_SEM_OP_RELEASE) {
        s.op = VGT_SEM_OP_REDUCTION;
        s.reduction = report_red[red_op];
        if (red_fmt == 1) s.flags |= VGT_SEM_FLAG_SIGNED;
    }
    if (awaken) s.flags |= VGT_SEM_FLAG_AWAKEN;
    if (structure == 0) s.flags |= VGT_SEM_FLAG_TIMESTAMP;
    if (is3d) s.report = BITS(d, 11, 7);
    s.raw = d;
    emit_sem(t, m, &s);
}

void sem_report(vgt_sem_tracker *t, sub_state *sub, unsigned role, const vgt_method *m)
{
    report_state *r = &sub->report;
    switch (role) {
    case R_REP_A: r->a = m->data; break;
    case R_REP_B: r->b = m->data; break;
    case R_REP_C: r->c = m->data; break;
    case R_REP_D: report_d(t, r, m); break;
    case R_REPX_PAYLOAD_LO: r->payload_lo = m->data; break;
    case R_REPX_PAYLOAD_HI: r->payload_hi = m->data; break;
    case R_REPX_ADDR_LO: r->addr_lo = m->data; break;
    case R_REPX_ADDR_HI: r->addr_hi = m->data; break;
    case R_REPX_EXECUTE: report_execute(t, r, m); break;
    }
}
