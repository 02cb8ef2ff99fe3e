/* sim_exec.c: method dispatch by the class bound to the subchannel, and what each engine does.
 *
 * Every method write lands in its object's shadow (one word per method address, as the hardware's
 * method state); the few methods that DO something (a semaphore execute, a LAUNCH_DMA, a QMD send, a
 * draw) are found through a per-family action table built from the data below. Parameters are read
 * from the shadow at the trigger, so the order of the parameter methods does not matter.
 *
 * Method offsets and fields are facts from NVIDIA open-gpu-doc class headers, transcribed here:
 * classes/host/clc56f.h (SEMAPHOREA-D, SEM_ADDR_LO..SEM_EXECUTE; C86F per shared/reference §4),
 * classes/compute/clcbc0.h (I2M, report semaphores, SEND_PCAS_A, SEND_SIGNALING_PCAS(2)_B, inline QMD),
 * classes/3d/clcb97.h (BEGIN/END and the single-method draws, report semaphores),
 * classes/dma-copy/clc8b5.h (LAUNCH_DMA, offsets, pitches, remap, semaphore),
 * classes/inline-to-memory/cla140.h (LINE_LENGTH_IN..LOAD_INLINE_DATA, SET_I2M_SEMAPHORE_A-C).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "vgt/qmd.h"

/* ---- class families ---- */
static const struct { uint32_t cls; uint8_t family; } class_table[] = {
    {0xA140, SIM_FAM_I2M}, {0x902D, SIM_FAM_2D},
    {0xC36F, SIM_FAM_HOST}, {0xC46F, SIM_FAM_HOST}, {0xC56F, SIM_FAM_HOST}, {0xC86F, SIM_FAM_HOST},
    {0xC3C0, SIM_FAM_COMPUTE}, {0xC5C0, SIM_FAM_COMPUTE}, {0xC6C0, SIM_FAM_COMPUTE}, {0xC7C0, SIM_FAM_COMPUTE},
    {0xCBC0, SIM_FAM_COMPUTE},
    {0xC397, SIM_FAM_3D}, {0xC597, SIM_FAM_3D}, {0xC697, SIM_FAM_3D}, {0xC797, SIM_FAM_3D}, {0xCB97, SIM_FAM_3D},
    {0xC3B5, SIM_FAM_COPY}, {0xC5B5, SIM_FAM_COPY}, {0xC6B5, SIM_FAM_COPY}, {0xC7B5, SIM_FAM_COPY},
    {0xC8B5, SIM_FAM_COPY},
};

int sim_family_of(uint32_t cls)
{
    for (size_t i = 0; i < sizeof class_table / sizeof class_table[0]; i++)
        if (class_table[i].cls == cls) return class_table[i].family;
    return SIM_FAM_NONE;
}

/* ---- actions ---- */
enum action {
    A_NONE = 0,
    A_HOST_SEM_EXECUTE, A_HOST_SEMAPHORED,
    A_I2M_LAUNCH, A_I2M_DATA,
    A_PCAS_SIGNALING_B, A_PCAS2_B, A_INLINE_QMD_DATA,
    A_REPORT_EXECUTE, A_REPORT_D,
    A_BEGIN, A_END, A_DRAW,
    A_COPY_LAUNCH,
};

/* {family, method, count, action}: count consecutive methods (stride 4) share the action. */
static const struct { uint8_t family; uint16_t mthd, count; uint8_t action; } action_data[] = {
    {SIM_FAM_HOST, 0x001c, 1, A_HOST_SEMAPHORED},
    {SIM_FAM_HOST, 0x006c, 1, A_HOST_SEM_EXECUTE},
    {SIM_FAM_I2M, 0x01b0, 1, A_I2M_LAUNCH},
    {SIM_FAM_I2M, 0x01b4, 1, A_I2M_DATA},
    {SIM_FAM_COMPUTE, 0x01b0, 1, A_I2M_LAUNCH},
    {SIM_FAM_COMPUTE, 0x01b4, 1, A_I2M_DATA},
    {SIM_FAM_COMPUTE, 0x0168, 1, A_REPORT_EXECUTE},
    {SIM_FAM_COMPUTE, 0x1b0c, 1, A_REPORT_D},
    {SIM_FAM_COMPUTE, 0x02bc, 1, A_PCAS_SIGNALING_B},
    {SIM_FAM_COMPUTE, 0x02c0, 1, A_PCAS2_B},
    {SIM_FAM_COMPUTE, 0x0320, SIM_QMD_INLINE_MAX_DWORDS, A_INLINE_QMD_DATA},
    {SIM_FAM_3D, 0x01b0, 1, A_I2M_LAUNCH},
    {SIM_FAM_3D, 0x01b4, 1, A_I2M_DATA},
    {SIM_FAM_3D, 0x0168, 1, A_REPORT_EXECUTE},
    {SIM_FAM_3D, 0x1b0c, 1, A_REPORT_D},
    {SIM_FAM_3D, 0x1618, 1, A_BEGIN},
    {SIM_FAM_3D, 0x1614, 1, A_END},
    {SIM_FAM_3D, 0x026c, 1, A_DRAW},   /* DRAW_INDEX_BUFFER_BEGIN_END_B */
    {SIM_FAM_3D, 0x0274, 1, A_DRAW},   /* DRAW_VERTEX_ARRAY_BEGIN_END_B */
    {SIM_FAM_3D, 0x1214, 2, A_DRAW},   /* DRAW_VERTEX_ARRAY_BEGIN_END_INSTANCE_FIRST/SUBSEQUENT */
    {SIM_FAM_3D, 0x17e4, 6, A_DRAW},   /* DRAW_INDEX_BUFFER{32,16,8}_BEGIN_END_INSTANCE_FIRST/SUBSEQUENT */
    {SIM_FAM_COPY, 0x0300, 1, A_COPY_LAUNCH},
};

void sim_exec_init_tables(vgt_backend *b)
{
    memset(b->action, 0, sizeof b->action);
    for (size_t i = 0; i < sizeof action_data / sizeof action_data[0]; i++)
        for (uint32_t k = 0; k < action_data[i].count; k++)
            b->action[action_data[i].family][(action_data[i].mthd >> 2) + k] = action_data[i].action;
}

/* Reduction encodings: host/copy SEM_EXECUTE use IMIN..DEC (our order); I2M, report semaphores and QMD
 * releases use RED_ADD, MIN, MAX, INC, DEC, AND, OR, XOR. */
static const uint8_t red_from_report[8] = {SIM_RED_ADD, SIM_RED_MIN, SIM_RED_MAX, SIM_RED_INC,
                                           SIM_RED_DEC, SIM_RED_AND, SIM_RED_OR, SIM_RED_XOR};

static inline uint32_t sh(const sim_obj *o, uint32_t mthd) { return o->shadow[mthd >> 2]; }
static inline uint64_t addr(uint32_t upper, uint32_t lower) { return ((uint64_t)(upper & 0x1FFFFFFu) << 32) | lower; }

static int block(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed)
{
    c->blocks++;
    if (sim_queue_insert(b, c, m, fed)) return 0;
    if (!c->blocked_reported) {
        c->blocked_reported = 1;
        b->ctr.blocked_waits++;
        sim_event(b, VGT_BEV_BLOCKED, m, "channel 0x%x blocks on %s", c->handle, c->blocked_on);
    }
    return 1;
}

/* ---- host ---- */
static const int8_t acq_from_sem_execute[8] = {SIM_ACQ_EQ, -1, SIM_ACQ_STRICT_GEQ, SIM_ACQ_CIRC_GEQ,
                                                SIM_ACQ_AND, SIM_ACQ_NOR, -1, -1};

static int host_sem_execute(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed)
{
    const uint32_t *hs = c->host_shadow, d = m->data;
    uint64_t va = addr(hs[0x60 >> 2], hs[0x5c >> 2] & ~3u);
    uint32_t size = (d >> 24) & 1 ? 8 : 4, op = d & 7;
    uint64_t payload = hs[0x64 >> 2] | (size == 8 ? (uint64_t)hs[0x68 >> 2] << 32 : 0);
    if (op == 1) {
        sim_sem_release(b, m, va, payload, size, (d >> 25) & 1);
    } else if (op == 6) {
        sim_sem_reduce(b, m, va, (int)((d >> 27) & 15), !((d >> 31) & 1), payload, size);
    } else if (acq_from_sem_execute[op] >= 0) {
        int r = sim_sem_acquire(b, m, va, acq_from_sem_execute[op], payload, size);
        if (r == 0) return block(b, c, m, fed);
        b->ctr.sem_acquires++;
    } else {
        b->ctr.unsupported++;
        sim_event(b, VGT_BEV_UNSUPPORTED, m, "SEM_EXECUTE with the undefined OPERATION %u", op);
    }
    return 0;
}

/* The pre-Volta SEMAPHOREA-D methods (clc56f.h keeps them): D OPERATION is a bit mask. */
static int host_semaphored(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed)
{
    const uint32_t *hs = c->host_shadow, d = m->data;
    uint64_t va = ((uint64_t)(hs[0x10 >> 2] & 0xFF) << 32) | (hs[0x14 >> 2] & ~3u);
    uint32_t payload = hs[0x18 >> 2], op = d & 0x1F;
    int cmp = op == 1 ? SIM_ACQ_EQ : op == 4 ? SIM_ACQ_STRICT_GEQ : op == 8 ? SIM_ACQ_AND : -1;
    if (op == 2) {
        sim_sem_release(b, m, va, payload, 4, !((d >> 24) & 1));
    } else if (op == 0x10) {
        sim_sem_reduce(b, m, va, (int)((d >> 27) & 15), !((d >> 31) & 1), payload, 4);
    } else if (cmp >= 0) {
        int r = sim_sem_acquire(b, m, va, cmp, payload, 4);
        if (r == 0) return block(b, c, m, fed);
        b->ctr.sem_acquires++;
    } else {
        b->ctr.unsupported++;
        sim_event(b, VGT_BEV_UNSUPPORTED, m, "SEMAPHORED with the OPERATION mask 0x%x", op);
    }
    return 0;
}

/* ---- inline to memory (A140, and the same methods in compute and 3D classes) ---- */
static void i2m_complete(vgt_backend *b, sim_obj *o, const vgt_method *m)
{
    uint32_t l = o->i2m.launch;
    o->i2m.active = 0;
    b->ctr.uploads++;
    b->ctr.upload_bytes += o->i2m.total;
    if (((l >> 4) & 3) != 2) return;   /* COMPLETION_TYPE RELEASE_SEMAPHORE */
    uint64_t va = addr(sh(o, 0x1dc), sh(o, 0x1e0));
    if ((l >> 1) & 1) sim_sem_reduce(b, m, va, red_from_report[(l >> 13) & 7], ((l >> 2) & 3) == 1, sh(o, 0x1e4), 4);
    else sim_sem_release(b, m, va, sh(o, 0x1e4), 4, !((l >> 12) & 1));
}

static void i2m_launch(vgt_backend *b, sim_obj *o, const vgt_method *m)
{
    sim_i2m *u = &o->i2m;
    if (u->active) sim_event(b, VGT_BEV_DIAG, m, "I2M LAUNCH_DMA while %llu of %llu bytes of the previous upload are missing",
                             (unsigned long long)(u->total - u->done), (unsigned long long)u->total);
    u->line_length = sh(o, 0x180);
    u->pitch = sh(o, 0x190);
    u->dst = addr(sh(o, 0x188), sh(o, 0x18c));
    u->total = (uint64_t)u->line_length * sh(o, 0x184);
    u->done = 0;
    u->launch = m->data;
    u->pitch_layout = m->data & 1;
    u->active = 1;
    if (u->total > SIM_MAX_UPLOAD_BYTES) {
        b->ctr.unsupported++;
        sim_event(b, VGT_BEV_LIMIT, m, "I2M upload of %llu bytes is over the sim's limit of %u", (unsigned long long)u->total,
                  SIM_MAX_UPLOAD_BYTES);
        u->active = 0;
        return;
    }
    if (!u->pitch_layout) {
        b->ctr.unsupported++;
        sim_event(b, VGT_BEV_UNSUPPORTED, m, "I2M upload to a block-linear destination at VA 0x%llx is not modelled",
                  (unsigned long long)u->dst);
    }
    if (u->total == 0) i2m_complete(b, o, m);
}

static void i2m_data(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m)
{
    sim_i2m *u = &o->i2m;
    if (!u->active) {
        b->ctr.diagnostics++;
        sim_event(b, VGT_BEV_DIAG, m, "LOAD_INLINE_DATA with no I2M upload in progress");
        return;
    }
    uint8_t bytes[4] = {(uint8_t)m->data, (uint8_t)(m->data >> 8), (uint8_t)(m->data >> 16), (uint8_t)(m->data >> 24)};
    uint32_t n = u->total - u->done < 4 ? (uint32_t)(u->total - u->done) : 4;
    vgt_error e;
    for (uint32_t i = 0; i < n && u->pitch_layout;) {
        uint64_t line = (u->done + i) / u->line_length, col = (u->done + i) % u->line_length;
        uint32_t k = n - i;
        if (k > u->line_length - col) k = (uint32_t)(u->line_length - col);
        if (sim_mem_write(sim_vas_mem(b, c->vas), u->dst + line * u->pitch + col, bytes + i, k, SIM_GPU, "I2M upload",
                          &e) != VGT_OK) {
            sim_fault(b, m, &e);
            break;
        }
        i += k;
    }
    u->done += n;
    if (u->done == u->total) i2m_complete(b, o, m);
}

/* ---- compute launches ---- */
static void qmd_run(vgt_backend *b, const vgt_method *m, const uint8_t *qmd, uint32_t len, uint64_t va)
{
    vgt_qmd q;
    vgt_error e;
    b->ctr.launches++;
    if (vgt_qmd_decode(qmd, len, &q, &e) != VGT_OK) {
        b->ctr.unsupported++;
        sim_event(b, VGT_BEV_UNSUPPORTED, m, "QMD at VA 0x%llx: %s", (unsigned long long)va, e.msg);
        return;
    }
    for (uint32_t i = 0; i < q.release_count && i < VGT_QMD_MAX_RELEASE; i++) {
        const vgt_qmd_release *r = &q.release[i];
        if (!r->enabled) continue;
        uint32_t size = r->payload64 ? 8 : 4;
        if (r->reduction_enable)
            sim_sem_reduce(b, m, r->va, red_from_report[r->reduction_op & 7], r->reduction_format == 1, r->payload, size);
        else sim_sem_release(b, m, r->va, r->payload, size, r->structure_size == 0);
    }
}

static void launch_by_address(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m)
{
    uint64_t va = (uint64_t)sh(o, 0x2b4) << 8;
    uint8_t qmd[VGT_QMD_MAX_BYTES];
    vgt_error e;
    sim_mem *mem = sim_vas_mem(b, c->vas);
    if (sim_mem_read(mem, va, qmd, 256, "QMD fetch", &e) != VGT_OK) {
        b->ctr.launches++;
        sim_fault(b, m, &e);
        return;
    }
    uint32_t len = 256;
    if (vgt_qmd_version_size(vgt_qmd_detect(qmd, 256)) > 256 &&
        sim_mem_read(mem, va + 256, qmd + 256, VGT_QMD_MAX_BYTES - 256, "QMD fetch", &e) == VGT_OK)
        len = VGT_QMD_MAX_BYTES;
    qmd_run(b, m, qmd, len, va);
}

/* LOAD_INLINE_QMD_DATA(i): the QMD arrives in the push buffer; the launch happens with its last dword.
 * SET_INLINE_QMD_ADDRESS_A INLINE_SIZE (bit 30) picks 256 or 384 bytes; the QMD is also stored at the
 * address A/B give (QMD_ADDRESS_SHIFTED8) when that address is mapped. */
static void inline_qmd(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m)
{
    uint32_t i = (m->mthd - 0x320) >> 2, a = sh(o, 0x318), n = (a >> 30) & 1 ? 96 : 64;
    if (i >= n) return;
    o->qmd_inline[i] = m->data;
    if (i != n - 1) return;
    uint8_t qmd[VGT_QMD_MAX_BYTES];
    for (uint32_t k = 0; k < n; k++)
        for (int j = 0; j < 4; j++) qmd[4 * k + (uint32_t)j] = (uint8_t)(o->qmd_inline[k] >> (8 * j));
    uint64_t va = (((uint64_t)(a & 0x1FF) << 32) | sh(o, 0x31c)) << 8;
    sim_mem *mem = sim_vas_mem(b, c->vas);
    if (sim_mem_check(mem, va, 4 * n, "inline QMD", NULL) == VGT_OK)
        sim_mem_write(mem, va, qmd, 4 * n, SIM_GPU, "inline QMD", NULL);
    qmd_run(b, m, qmd, 4 * n, va);
}

/* ---- report semaphores ---- */
static void report_only(vgt_backend *b, const vgt_method *m, uint64_t va, uint32_t len)
{
    static const uint8_t zeros[16];
    vgt_error e;
    /* a counter value (samples, invocations) the sim cannot produce: written as 0, never checked */
    if (sim_mem_write(sim_vas_mem(b, b->cur->vas), va, zeros, len, SIM_GPU_VOLATILE, "report", &e) != VGT_OK)
        sim_fault(b, m, &e);
}

static int report_d(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m, int fed)
{
    uint32_t d = m->data, op = d & 3, one_word = (d >> 28) & 1;
    uint64_t va = addr(sh(o, 0x1b00), sh(o, 0x1b04));
    uint32_t payload = sh(o, 0x1b08);
    b->ctr.report_semaphores++;
    if (op == 0) {
        if ((d >> 3) & 1) sim_sem_reduce(b, m, va, red_from_report[(d >> 9) & 7], ((d >> 17) & 3) == 1, payload, 4);
        else sim_sem_release(b, m, va, payload, 4, !one_word);
    } else if (op == 1) {
        int r = sim_sem_acquire(b, m, va, (d >> 16) & 1 ? SIM_ACQ_STRICT_GEQ : SIM_ACQ_EQ, payload, 4);
        if (r == 0) return block(b, c, m, fed);
        b->ctr.sem_acquires++;
    } else if (op == 2) {
        report_only(b, m, va, one_word ? 4 : 16);
    }
    return 0;
}

static int report_execute(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m, int fed)
{
    uint32_t d = m->data, op = d & 3, structure = (d >> 3) & 3, size = (d >> 12) & 1 ? 8 : 4;
    uint64_t va = addr(sh(o, 0x164), sh(o, 0x160));
    uint64_t payload = sh(o, 0x158) | (size == 8 ? (uint64_t)sh(o, 0x15c) << 32 : 0);
    b->ctr.report_semaphores++;
    if (op == 0) {
        if ((d >> 6) & 1) sim_sem_reduce(b, m, va, red_from_report[(d >> 7) & 7], ((d >> 10) & 3) == 1, payload, size);
        else sim_sem_release(b, m, va, payload, size, structure == 0);
    } else if (op == 1) {
        int r = sim_sem_acquire(b, m, va, SIM_ACQ_EQ, payload, size);
        if (r == 0) return block(b, c, m, fed);
        b->ctr.sem_acquires++;
    } else if (op == 2) {
        report_only(b, m, va, structure == 1 ? 4 : structure == 2 ? 8 : 16);
    }
    return 0;
}

/* ---- copy engine ---- */
#define COPY_CHUNK (64u << 10)

static int copy_lines(vgt_backend *b, sim_mem *mem, const vgt_method *m, uint64_t src, uint64_t dst, uint64_t len,
                      uint32_t lines, uint32_t pin, uint32_t pout)
{
    vgt_error e;
    for (uint32_t l = 0; l < lines; l++)
        for (uint64_t off = 0; off < len; off += COPY_CHUNK) {
            uint64_t n = len - off < COPY_CHUNK ? len - off : COPY_CHUNK;
            if (sim_mem_read(mem, src + (uint64_t)l * pin + off, b->copy_buf, n, "copy source", &e) != VGT_OK ||
                sim_mem_write(mem, dst + (uint64_t)l * pout + off, b->copy_buf, n, SIM_GPU, "copy destination", &e) != VGT_OK) {
                sim_fault(b, m, &e);
                return -1;
            }
        }
    return 0;
}

/* Remapped copy: each destination element is num_dst components of comp bytes, taken from the source
 * element's components (SRC_X..SRC_W), CONST_A/B, or left alone (NO_WRITE). */
static int copy_remap(vgt_backend *b, sim_mem *mem, sim_obj *o, const vgt_method *m, uint64_t src, uint64_t dst,
                      uint32_t elems, uint32_t lines, uint32_t pin, uint32_t pout)
{
    uint32_t rc = sh(o, 0x708), comp = ((rc >> 16) & 3) + 1, nsrc = ((rc >> 20) & 3) + 1, ndst = ((rc >> 24) & 3) + 1;
    uint32_t consts[2] = {sh(o, 0x700), sh(o, 0x704)};
    int uses_src = 0;
    for (uint32_t k = 0; k < ndst; k++) uses_src |= ((rc >> (4 * k)) & 7) < 4;
    uint8_t in[16], out[16];
    vgt_error e;
    for (uint32_t l = 0; l < lines; l++)
        for (uint32_t x = 0; x < elems; x++) {
            uint64_t s = src + (uint64_t)l * pin + (uint64_t)x * nsrc * comp, d = dst + (uint64_t)l * pout + (uint64_t)x * ndst * comp;
            if (uses_src && sim_mem_read(mem, s, in, nsrc * comp, "copy source", &e) != VGT_OK) goto fault;
            for (uint32_t k = 0; k < ndst; k++) {
                uint32_t sel = (rc >> (4 * k)) & 7;
                if (sel >= 6) continue;   /* NO_WRITE */
                for (uint32_t j = 0; j < comp; j++)
                    out[j] = sel < 4 ? (sel < nsrc ? in[sel * comp + j] : 0) : (uint8_t)(consts[sel - 4] >> (8 * (j & 3)));
                if (sim_mem_write(mem, d + k * comp, out, comp, SIM_GPU, "copy destination", &e) != VGT_OK) goto fault;
            }
        }
    if (!uses_src) b->ctr.memsets++;
    return 0;
fault:
    sim_fault(b, m, &e);
    return -1;
}

static void copy_launch(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m)
{
    uint32_t d = m->data, lines = (d >> 9) & 1 ? sh(o, 0x41c) : 1, len = sh(o, 0x418);
    uint64_t src = addr(sh(o, 0x400), sh(o, 0x404)), dst = addr(sh(o, 0x408), sh(o, 0x40c));
    sim_mem *mem = sim_vas_mem(b, c->vas);
    if (d & 3) {   /* DATA_TRANSFER_TYPE != NONE */
        uint32_t remap = (d >> 10) & 1, rc = sh(o, 0x708);
        uint64_t elem = remap ? (uint64_t)(((rc >> 16) & 3) + 1) * (((rc >> 24) & 3) + 1) : 1;
        uint64_t total = (uint64_t)len * elem * lines;
        b->ctr.copies++;
        if (!((d >> 7) & 1) || !((d >> 8) & 1)) {
            b->ctr.unsupported++;
            sim_event(b, VGT_BEV_UNSUPPORTED, m, "copy with a block-linear %s is not modelled (src 0x%llx dst 0x%llx)",
                      !((d >> 7) & 1) ? "source" : "destination", (unsigned long long)src, (unsigned long long)dst);
        } else if ((d >> 12) & 3) {
            b->ctr.unsupported++;
            sim_event(b, VGT_BEV_UNSUPPORTED, m, "copy with a physical address is not modelled");
        } else if (total > SIM_MAX_COPY_BYTES) {
            b->ctr.unsupported++;
            sim_event(b, VGT_BEV_LIMIT, m, "copy of %llu bytes is over the sim's limit", (unsigned long long)total);
        } else if (remap ? copy_remap(b, mem, o, m, src, dst, len, lines, sh(o, 0x410), sh(o, 0x414)) == 0
                         : copy_lines(b, mem, m, src, dst, len, lines, sh(o, 0x410), sh(o, 0x414)) == 0) {
            b->ctr.copy_bytes += total;
        }
    }
    uint32_t sem = (d >> 3) & 3, size = (d >> 27) & 1 ? 8 : 4;
    if (!sem) return;
    uint64_t va = addr(sh(o, 0x240), sh(o, 0x244));
    uint64_t payload = sh(o, 0x248) | (size == 8 ? (uint64_t)sh(o, 0x24c) << 32 : 0);
    if ((d >> 19) & 1) {
        uint32_t op = (d >> 14) & 15;
        if (op > SIM_RED_DEC) {
            b->ctr.unsupported++;
            sim_event(b, VGT_BEV_UNSUPPORTED, m, "copy semaphore reduction %u (float or invalid) is not modelled", op);
            return;
        }
        sim_sem_reduce(b, m, va, (int)op, !((d >> 18) & 1), payload, size);
    } else {
        sim_sem_release(b, m, va, payload, size, sem == 2);
    }
}

/* ---- MME ---- */
static vgt_status mme_read(void *user, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    sim_obj *o = user;
    return sim_mem_read(sim_vas_mem(o->b, o->c->vas), va, dst, len, "MME DMA read", err);
}

static vgt_status mme_on_call(void *user, const vgt_mme_call *call, vgt_error *err)
{
    sim_obj *o = user;
    vgt_backend *b = o->b;
    sim_channel *c = o->c;
    vgt_method em = {.subch = o->subch, .cls = o->cls, .kind = VGT_HDR_INC, .pos = {b->seq, 0, 0}};
    b->ctr.macro_calls++;
    if (call->status != VGT_OK) {
        b->ctr.macro_errors++;
        sim_event(b, VGT_BEV_MACRO, &em, "MME macro %u: %s", call->macro, call->err ? call->err->msg : "failed");
    }
    uint64_t blocks = c->blocks;
    for (uint32_t i = 0; i < call->nemits; i++) {
        em.mthd = call->emits[i].method;
        em.data = call->emits[i].value;
        em.is_host = em.mthd < 0x100;
        b->ctr.macro_methods++;
        if (c->blocks != blocks) {   /* an earlier emission blocked: the rest waits behind it */
            if (sim_queue_insert(b, c, &em, 1)) break;
        } else {
            sim_exec_method(b, c, &em, 1);
        }
    }
    return VGT_OK;
}

static sim_obj *obj_for(vgt_backend *b, sim_channel *c, const vgt_method *m)
{
    sim_obj *o = &c->subch[m->subch & 7];
    if (o->cls == m->cls && o->shadow) return o;
    sim_obj_reset(o);
    o->b = b, o->c = c, o->subch = m->subch & 7, o->cls = m->cls, o->family = sim_family_of(m->cls);
    o->shadow = calloc(SIM_SHADOW_WORDS, sizeof *o->shadow);
    if (!o->shadow) return NULL;
    if ((o->family == SIM_FAM_3D || o->family == SIM_FAM_COMPUTE) && vgt_mme_format_for_class(o->cls) != VGT_MME_NONE) {
        vgt_mme_tracker_config tc = {.cls = o->cls, .read_mem = mme_read, .on_call = mme_on_call, .user = o};
        if (vgt_mme_tracker_create(&tc, &o->mme, NULL) != VGT_OK) o->mme = NULL;
    }
    return o;
}

void sim_obj_reset(sim_obj *o)
{
    if (o->mme) vgt_mme_tracker_destroy(o->mme);
    free(o->shadow);
    memset(o, 0, sizeof *o);
}

vgt_status sim_mme_flush(vgt_backend *b, sim_channel *c)
{
    if (c->mme_pending_subch < 0) return VGT_OK;
    sim_obj *o = &c->subch[c->mme_pending_subch];
    c->mme_pending_subch = -1;
    return o->mme ? vgt_mme_tracker_flush(o->mme, NULL) : VGT_OK;
}

/* Feed the method to its object's MME tracker (which may complete a pending call and dispatch its
 * emissions first). Returns 1 when the method is a macro call word, handled by the tracker alone. */
static int mme_feed(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m)
{
    if ((int)(m->subch & 7) != c->mme_pending_subch) sim_mme_flush(b, c);
    vgt_error e;
    if (vgt_mme_tracker_feed(o->mme, m->mthd, m->data, &e) != VGT_OK) {
        b->ctr.macro_errors++;
        sim_event(b, VGT_BEV_MACRO, m, "MME: %s", e.msg);
    }
    int is_call = m->mthd >= VGT_MME_M_CALL_MACRO0 && m->mthd < VGT_MME_M_CALL_MACRO0 + 8 * VGT_MME_MACRO_COUNT;
    c->mme_pending_subch = is_call ? (int)(m->subch & 7) : -1;
    return is_call;
}

/* ---- dispatch ---- */
static int run_action(vgt_backend *b, sim_channel *c, sim_obj *o, const vgt_method *m, int fed)
{
    switch (b->action[o->family][m->mthd >> 2]) {
    case A_I2M_LAUNCH: i2m_launch(b, o, m); break;
    case A_I2M_DATA: i2m_data(b, c, o, m); break;
    case A_PCAS_SIGNALING_B: if ((m->data >> 1) & 1) launch_by_address(b, c, o, m); break;
    case A_PCAS2_B: {
        uint32_t a = m->data & 15;   /* the PCAS_ACTIONs that SCHEDULE: 2, 3, 9, 10 */
        if (a == 2 || a == 3 || a == 9 || a == 10) launch_by_address(b, c, o, m);
        break;
    }
    case A_INLINE_QMD_DATA: inline_qmd(b, c, o, m); break;
    case A_REPORT_EXECUTE: return report_execute(b, c, o, m, fed);
    case A_REPORT_D: return report_d(b, c, o, m, fed);
    case A_BEGIN: o->in_begin = 1; break;
    case A_END: if (o->in_begin) b->ctr.draws++; o->in_begin = 0; break;
    case A_DRAW: b->ctr.draws++; break;
    case A_COPY_LAUNCH: copy_launch(b, c, o, m); break;
    default: break;
    }
    return 0;
}

int sim_exec_method(vgt_backend *b, sim_channel *c, const vgt_method *m, int fed)
{
    b->ctr.methods++;
    b->cur = c;
    if (m->is_host) {
        b->ctr.host_methods++;
        if (m->mthd >= 0x100) return 0;
        if (c->mme_pending_subch >= 0) sim_mme_flush(b, c);
        c->host_shadow[m->mthd >> 2] = m->data;
        if (b->state_only) return 0;
        switch (b->action[SIM_FAM_HOST][m->mthd >> 2]) {
        case A_HOST_SEM_EXECUTE: return host_sem_execute(b, c, m, fed);
        case A_HOST_SEMAPHORED: return host_semaphored(b, c, m, fed);
        default: return 0;
        }
    }
    sim_obj *o = m->cls ? obj_for(b, c, m) : NULL;
    if (!o || o->family == SIM_FAM_NONE || m->mthd >= 4 * SIM_SHADOW_WORDS) {
        b->ctr.unknown_class_methods++;
        return 0;
    }
    if (o->mme && !fed) {
        uint64_t blocks = c->blocks;
        if (mme_feed(b, c, o, m)) return 0;
        fed = 1;
        if (c->blocks != blocks) {   /* the call it completed blocked: this method runs after it */
            sim_queue_insert(b, c, m, 1);
            return 1;
        }
    }
    o->shadow[m->mthd >> 2] = m->data;
    if (b->state_only) return 0;
    return run_action(b, c, o, m, fed);
}
