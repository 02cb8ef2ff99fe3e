/* rm_submit.c: GPFIFO submission and waits.
 *
 * Submit order (UVM, tinygrad and the probe agree): write the ring entries, barrier, publish GPPut in
 * USERD, barrier, write the work-submit token to the usermode doorbell (+0x90). The ring is full when
 * advancing GPPut would make it equal GPGet, so at most entries-1 are outstanding.
 *
 * Waits poll CPU-visible memory with a deadline and watch the error notifier (record 0: timestamp,
 * info32 = robust-channel error code, info16, status) so that a fault ends the wait at once with the
 * channel state: GPGet/GPPut say which entry was being fetched, the push-buffer Get pointer says
 * which method window was executing. */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gpu_internal.h"

double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

uint64_t vgt_gpu_gp_entry(uint64_t va, uint32_t ndwords, unsigned flags)
{
    return vgt_nv_gp_encode(va, ndwords, flags);
}

void vgt_gpu_chan_state_get(const vgt_gpu_chan *c, vgt_gpu_chan_state *s)
{
    memset(s, 0, sizeof *s);
    const volatile uint32_t *u = c->userd;
    s->gp_get = u[USERD_GP_GET / 4];
    s->gp_put = c->put;
    s->pb_get = ((uint64_t)u[USERD_GET_HI / 4] << 32) | u[USERD_GET / 4];
    s->pb_put = ((uint64_t)u[USERD_PUT_HI / 4] << 32) | u[USERD_PUT / 4];
    s->submitted = c->submitted;
    const volatile uint32_t *n = (const volatile uint32_t *)(c->notifier + NOTIFIER_INDEX_ERROR * NOTIFIER_RECORD_SIZE);
    uint32_t t0 = n[0], t1 = n[1], info32 = n[2], w3 = n[3];
    s->error = (t0 | t1 | info32 | w3) != 0;
    s->error_code = info32;
    s->error_info16 = (uint16_t)(w3 & 0xffff);
    s->error_status = (uint16_t)(w3 >> 16);
    s->error_time_ns = ((uint64_t)t1 << 32) | t0;
}

void chan_describe(const vgt_gpu_chan *c, char *buf, size_t cap)
{
    vgt_gpu_chan_state s;
    vgt_gpu_chan_state_get(c, &s);
    int n = snprintf(buf, cap, "channel %u (class 0x%04x, handle 0x%08x, token 0x%x): GPGet %u GPPut %u of %u, "
                     "%llu entries submitted, push-buffer Get 0x%llx Put 0x%llx", c->index, c->cls, c->channel, c->token,
                     s.gp_get, s.gp_put, c->entries, (unsigned long long)s.submitted,
                     (unsigned long long)s.pb_get, (unsigned long long)s.pb_put);
    if (s.error && n > 0 && (size_t)n < cap)
        snprintf(buf + n, cap - (size_t)n, "; RC error %u (%s), info16 0x%x, status 0x%x", s.error_code,
                 vgt_gpu_rc_name(s.error_code), s.error_info16, s.error_status);
}

vgt_status vgt_gpu_chan_check(const vgt_gpu_chan *c, vgt_error *err)
{
    vgt_gpu_chan_state s;
    vgt_gpu_chan_state_get(c, &s);
    if (!s.error)
        return VGT_OK;
    char d[400];
    chan_describe(c, d, sizeof d);
    return VGT_FAIL(err, VGT_E_FAULT, VGT_NO_OFFSET, "the GPU reported an error on %s", d);
}

/* Sleep-free for the first 2 ms (submission latency matters), then yield between polls. */
static void backoff(double started)
{
    if (mono_ms() - started < 2.0)
        cpu_relax();
    else
        sched_yield();
}

static uint32_t ring_free(const vgt_gpu_chan *c)
{
    uint32_t get = c->userd[USERD_GP_GET / 4] % c->entries;
    return c->entries - 1 - ((c->put + c->entries - get) % c->entries);
}

static vgt_status wait_ring_space(vgt_gpu_chan *c, uint32_t want, vgt_error *err)
{
    double t0 = mono_ms();
    while (ring_free(c) < want) {
        VGT_TRY(vgt_gpu_chan_check(c, err));
        if (mono_ms() - t0 > c->submit_timeout_ms) {
            char d[400];
            chan_describe(c, d, sizeof d);
            return VGT_FAIL(err, VGT_E_TIMEOUT, VGT_NO_OFFSET, "no GPFIFO space for %u entries after %u ms: the GPU "
                            "stopped fetching on %s", want, c->submit_timeout_ms, d);
        }
        backoff(t0);
    }
    return VGT_OK;
}

static void publish(vgt_gpu_chan *c)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    c->userd[USERD_GP_PUT / 4] = c->put;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *(volatile uint32_t *)(c->gpu->usermode_cpu + USERMODE_DOORBELL) = c->token;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

vgt_status vgt_gpu_submit(vgt_gpu_chan *c, const uint64_t *entries, uint32_t n, vgt_error *err)
{
    VGT_TRY(vgt_gpu_chan_check(c, err));
    while (n) {
        uint32_t chunk = n < c->entries - 1 ? n : c->entries - 1;
        VGT_TRY(wait_ring_space(c, chunk, err));
        for (uint32_t i = 0; i < chunk; i++) {
            c->ring[c->put] = entries[i];
            c->put = (c->put + 1) % c->entries;
        }
        publish(c);
        c->submitted += chunk;
        entries += chunk;
        n -= chunk;
    }
    return VGT_OK;
}

vgt_status vgt_gpu_submit_pb(vgt_gpu_chan *c, uint64_t va, uint32_t ndwords, vgt_error *err)
{
    if ((va & 3) || va >> VGT_NV_GP_VA_BITS || !ndwords || ndwords > VGT_NV_GP_MAX_LENGTH)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "push buffer at VA 0x%llx of %u dwords: needs a 4-byte aligned "
                        "VA below 2^40 and 1..0x1fffff dwords", (unsigned long long)va, ndwords);
    uint64_t e = vgt_gpu_gp_entry(va, ndwords, VGT_GPU_GP_SUBROUTINE);
    return vgt_gpu_submit(c, &e, 1, err);
}

static bool sem_done(uint32_t got, uint32_t want, vgt_gpu_wait_op op)
{
    return op == VGT_GPU_WAIT_EQ ? got == want : (int32_t)(got - want) >= 0;
}

/* Poll *p until the condition holds; va is only for messages. */
static vgt_status wait_word(vgt_gpu_chan *c, const volatile uint32_t *p, uint64_t va, uint32_t value,
                            vgt_gpu_wait_op op, uint32_t timeout_ms, vgt_error *err)
{
    double t0 = mono_ms();
    uint32_t got;
    for (uint64_t spins = 0;; spins++) {
        got = *p;
        if (sem_done(got, value, op))
            return VGT_OK;
        if ((spins & 63) == 0) {
            vgt_status st = vgt_gpu_chan_check(c, err);
            if (st != VGT_OK)
                return vgt_error_prefix(err, "waiting for 0x%08x at VA 0x%llx (last value 0x%08x)", value,
                                        (unsigned long long)va, got);
            if (mono_ms() - t0 > timeout_ms)
                break;
        }
        backoff(t0);
    }
    char d[400];
    chan_describe(c, d, sizeof d);
    return VGT_FAIL(err, VGT_E_TIMEOUT, va, "semaphore at VA 0x%llx: waited %u ms for %s0x%08x, last value 0x%08x; %s",
                    (unsigned long long)va, timeout_ms, op == VGT_GPU_WAIT_EQ ? "" : ">= ", value, got, d);
}

vgt_status vgt_gpu_wait_sem32(vgt_gpu_chan *c, uint64_t va, uint32_t value, vgt_gpu_wait_op op,
                              uint32_t timeout_ms, vgt_error *err)
{
    vgt_gpu_mem *m = vgt_gpu_mem_find(c->gpu, va, 4);
    if (!m || (va & 3))
        return VGT_FAIL(err, VGT_E_FAULT, va, "semaphore at VA 0x%llx: not an aligned word inside one of our "
                        "allocations", (unsigned long long)va);
    return wait_word(c, (const volatile uint32_t *)(m->cpu + (va - m->va)), va, value, op, timeout_ms, err);
}

vgt_status vgt_gpu_chan_fence(vgt_gpu_chan *c, uint32_t timeout_ms, vgt_error *err)
{
    VGT_TRY(vgt_gpu_chan_fence_issue(c, err));
    return vgt_gpu_chan_fence_wait(c, timeout_ms, err);
}

vgt_status vgt_gpu_chan_fence_wait(vgt_gpu_chan *c, uint32_t timeout_ms, vgt_error *err)
{
    uint64_t sem_va = c->infra->va + INFRA_FENCE_SEM_OFF;
    const volatile uint32_t *sem = (const volatile uint32_t *)(c->infra->cpu + INFRA_FENCE_SEM_OFF);
    return wait_word(c, sem, sem_va, c->fence_value, VGT_GPU_WAIT_GEQ, timeout_ms, err);
}

vgt_status vgt_gpu_chan_fence_issue(vgt_gpu_chan *c, vgt_error *err)
{
    uint32_t dw[INFRA_FENCE_PB_DWORDS];
    vgt_pbw pb;
    vgt_pbw_init(&pb, dw, INFRA_FENCE_PB_DWORDS);
    uint32_t value = c->fence_value + 1;
    uint64_t sem_va = c->infra->va + INFRA_FENCE_SEM_OFF;
    vgt_pbw_host_release(&pb, sem_va, value, VGT_PBW_RELEASE_WFI);
    VGT_TRY(vgt_pbw_check(&pb, err));
    volatile uint32_t *slot = (volatile uint32_t *)(c->infra->cpu + INFRA_FENCE_PB_OFF);
    for (uint32_t i = 0; i < pb.n; i++)
        slot[i] = dw[i];
    uint64_t e = vgt_gpu_gp_entry(c->infra->va + INFRA_FENCE_PB_OFF, pb.n, VGT_GPU_GP_SUBROUTINE);
    VGT_TRY(vgt_gpu_submit(c, &e, 1, err));
    c->fence_value = value;
    return VGT_OK;
}

vgt_status vgt_gpu_wait_fetched(vgt_gpu_chan *c, uint32_t timeout_ms, vgt_error *err)
{
    double t0 = mono_ms();
    while (c->userd[USERD_GP_GET / 4] % c->entries != c->put) {
        VGT_TRY(vgt_gpu_chan_check(c, err));
        if (mono_ms() - t0 > timeout_ms) {
            char d[400];
            chan_describe(c, d, sizeof d);
            return VGT_FAIL(err, VGT_E_TIMEOUT, VGT_NO_OFFSET, "the GPU did not fetch every entry within %u ms: %s",
                            timeout_ms, d);
        }
        backoff(t0);
    }
    return VGT_OK;
}
