/* rm_access.c: CPU access to our allocations by GPU VA. Every access is checked to lie inside one
 * allocation of this session (never the backend's own ring/USERD): replay touches only its own memory.
 * Writes go word by word through volatile pointers where both sides allow it (BAR1 is write-combined;
 * sysmem is CPU-cached); reads use vgt_copy_from_device's aligned streaming loads, which fetch whole
 * lines from BAR1. */
#include <string.h>

#include "gpu_internal.h"
#include "vgt/devcopy.h"

vgt_gpu_mem *vgt_gpu_mem_find(vgt_gpu *g, uint64_t va, uint64_t len)
{
    for (uint32_t i = 0; i < g->nmems; i++) {
        vgt_gpu_mem *m = g->mems[i];
        if (!m->internal && va >= m->va && va - m->va <= m->size && len <= m->size - (va - m->va))
            return m;
    }
    return NULL;
}

uint64_t vgt_gpu_mem_va(const vgt_gpu_mem *m) { return m->va; }
uint64_t vgt_gpu_mem_size(const vgt_gpu_mem *m) { return m->size; }
volatile void *vgt_gpu_mem_cpu(const vgt_gpu_mem *m) { return m->cpu; }

static vgt_status locate(vgt_gpu *g, uint64_t va, size_t len, const char *what, volatile uint8_t **p, vgt_error *err)
{
    vgt_gpu_mem *m = vgt_gpu_mem_find(g, va, len);
    if (!m)
        return VGT_FAIL(err, VGT_E_FAULT, va, "%s of %zu bytes at VA 0x%llx: not inside one of our allocations", what,
                        len, (unsigned long long)va);
    *p = m->cpu + (va - m->va);
    return VGT_OK;
}

static void copy_out(volatile uint8_t *dst, const uint8_t *src, size_t len)
{
    size_t i = 0;
    if (((uintptr_t)dst & 3) == 0)
        for (; i + 4 <= len; i += 4) {
            uint32_t w;
            memcpy(&w, src + i, 4);
            *(volatile uint32_t *)(dst + i) = w;
        }
    for (; i < len; i++)
        dst[i] = src[i];
}

vgt_status vgt_gpu_write(vgt_gpu *g, uint64_t va, const void *src, size_t len, vgt_error *err)
{
    volatile uint8_t *p = NULL;
    VGT_TRY(locate(g, va, len, "write", &p, err));
    copy_out(p, src, len);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return VGT_OK;
}

vgt_status vgt_gpu_read(vgt_gpu *g, uint64_t va, void *dst, size_t len, vgt_error *err)
{
    volatile uint8_t *p = NULL;
    VGT_TRY(locate(g, va, len, "read", &p, err));
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    vgt_copy_from_device(dst, p, len);   /* streaming loads: BAR1 word by word ran at ~4 MB/s (the census) */
    return VGT_OK;
}

vgt_status vgt_gpu_fill32(vgt_gpu *g, uint64_t va, uint32_t value, size_t nwords, vgt_error *err)
{
    volatile uint8_t *p = NULL;
    if (va & 3)
        return VGT_FAIL(err, VGT_E_ARG, va, "fill at VA 0x%llx: not 4-byte aligned", (unsigned long long)va);
    if (nwords > SIZE_MAX / 4)
        return VGT_FAIL(err, VGT_E_LIMIT, va, "fill of %zu words: too large", nwords);
    VGT_TRY(locate(g, va, nwords * 4, "fill", &p, err));
    volatile uint32_t *w = (volatile uint32_t *)p;
    for (size_t i = 0; i < nwords; i++)
        w[i] = value;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return VGT_OK;
}
