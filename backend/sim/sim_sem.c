/* sim_sem.c: semaphore release, reduction and acquire, shared by every engine of the sim (host
 * SEM_EXECUTE, copy-engine LAUNCH_DMA, I2M completion, report semaphores, QMD releases).
 *
 * Facts (NVIDIA open-gpu-doc classes/host/clc56f.h SEM_EXECUTE; clc86f.h has the same fields): acquire ACQUIRE waits for equality, ACQ_STRICT_GEQ
 * for value >= payload, ACQ_CIRC_GEQ for (value - payload) as a signed number >= 0, ACQ_AND for
 * (value & payload) != 0, ACQ_NOR for ~(value | payload) != 0. Reductions IMIN, IMAX, IXOR, IAND, IOR,
 * IADD, INC (wraps to 0 past the payload), DEC (wraps to the payload at 0 or above it), signed or not.
 * A four-word release writes the payload and an 8-byte timestamp at +8. */
#include <stdio.h>
#include <string.h>

#include "sim.h"

uint64_t sim_timestamp(vgt_backend *b)
{
    b->clock_ns += 1000;   /* deterministic: a replay's timestamps are not the capture's anyway */
    return b->clock_ns;
}

static void put_le(uint8_t *p, uint64_t v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;
    for (uint32_t i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
}

static sim_mem *cur_mem(vgt_backend *b) { return sim_vas_mem(b, b->cur ? b->cur->vas : 0); }

void sim_sem_release(vgt_backend *b, const vgt_method *m, uint64_t va, uint64_t payload, uint32_t size,
                     int with_timestamp)
{
    uint8_t buf[8];
    vgt_error e;
    put_le(buf, payload, size);
    if (sim_mem_write(cur_mem(b), va, buf, size, SIM_GPU, "semaphore release", &e) != VGT_OK) {
        sim_fault(b, m, &e);
        return;
    }
    if (!with_timestamp) return;
    put_le(buf, sim_timestamp(b), 8);
    if (sim_mem_write(cur_mem(b), va + 8, buf, 8, SIM_GPU_VOLATILE, "semaphore timestamp", &e) != VGT_OK)
        sim_fault(b, m, &e);
}

static uint64_t sext(uint64_t v, uint32_t size) { return size == 4 ? (uint64_t)(int64_t)(int32_t)(uint32_t)v : v; }

static uint64_t reduce(int op, int is_signed, uint64_t old, uint64_t p, uint32_t size)
{
    uint64_t mask = size == 4 ? 0xFFFFFFFFull : ~0ull;
    int64_t so = (int64_t)sext(old, size), sp = (int64_t)sext(p, size);
    switch (op) {
    case SIM_RED_MIN: return (is_signed ? (so < sp) : (old < p)) ? old : p;
    case SIM_RED_MAX: return (is_signed ? (so > sp) : (old > p)) ? old : p;
    case SIM_RED_XOR: return old ^ p;
    case SIM_RED_AND: return old & p;
    case SIM_RED_OR: return old | p;
    case SIM_RED_ADD: return (old + p) & mask;
    case SIM_RED_INC: return old >= p ? 0 : (old + 1) & mask;
    case SIM_RED_DEC: return (old == 0 || old > p) ? p : old - 1;
    default: return old;
    }
}

void sim_sem_reduce(vgt_backend *b, const vgt_method *m, uint64_t va, int op, int is_signed, uint64_t payload,
                    uint32_t size)
{
    uint8_t buf[8];
    vgt_error e;
    b->ctr.sem_reductions++;
    if (sim_mem_read(cur_mem(b), va, buf, size, "semaphore reduction", &e) != VGT_OK) {
        sim_fault(b, m, &e);
        return;
    }
    uint64_t v = reduce(op, is_signed, get_le(buf, size), payload & (size == 4 ? 0xFFFFFFFFull : ~0ull), size);
    put_le(buf, v, size);
    /* the result is known only when the old value was */
    uint8_t known[8] = {0};
    int all_known = sim_mem_known(cur_mem(b), va, size, known, NULL) == VGT_OK;
    for (uint32_t i = 0; i < size; i++) all_known &= known[i];
    if (sim_mem_write(cur_mem(b), va, buf, size, all_known ? SIM_GPU : SIM_GPU_VOLATILE, "semaphore reduction", &e) != VGT_OK)
        sim_fault(b, m, &e);
}

static const char *const acq_names[] = {"ACQUIRE", "ACQ_STRICT_GEQ", "ACQ_CIRC_GEQ", "ACQ_AND", "ACQ_NOR"};

int sim_sem_acquire(vgt_backend *b, const vgt_method *m, uint64_t va, int cmp, uint64_t payload, uint32_t size)
{
    uint8_t buf[8];
    vgt_error e;
    if (sim_mem_read(cur_mem(b), va, buf, size, "semaphore acquire", &e) != VGT_OK) {
        sim_fault(b, m, &e);
        return -1;
    }
    uint64_t mask = size == 4 ? 0xFFFFFFFFull : ~0ull, v = get_le(buf, size);
    payload &= mask;
    int ok;
    switch (cmp) {
    case SIM_ACQ_EQ: ok = v == payload; break;
    case SIM_ACQ_STRICT_GEQ: ok = v >= payload; break;
    case SIM_ACQ_CIRC_GEQ: ok = size == 4 ? (int32_t)(uint32_t)(v - payload) >= 0 : (int64_t)(v - payload) >= 0; break;
    case SIM_ACQ_AND: ok = (v & payload) != 0; break;
    case SIM_ACQ_NOR: ok = (~(v | payload) & mask) != 0; break;
    default: ok = 1; break;
    }
    if (!ok && b->cur)
        snprintf(b->cur->blocked_on, sizeof b->cur->blocked_on, "%s at VA 0x%llx: waits for 0x%llx, holds 0x%llx",
                 acq_names[cmp], (unsigned long long)va, (unsigned long long)payload, (unsigned long long)v);
    return ok;
}
