/* devcopy.c: copying out of GPU memory mapped to the CPU (the capture's views, the gpu backend's BAR1).
 *
 * BAR1 (vidmem) and many RM sysmem mappings are write-combined or uncached: an ordinary load fetches
 * 8-32 bytes per bus transaction, and glibc's memcpy may use `rep movsb`, which is slow there. The H200
 * probe measured the shim's first memcpy-based capture at ~30 MB/s from such mappings. Streaming loads
 * (MOVNTDQA, SSE4.1; VMOVNTDQA, AVX2) read whole 64-byte lines from write-combined memory and behave as
 * plain loads on write-back memory, so they are always correct and much faster where it matters. */
#include <stdint.h>
#include <string.h>

#include "vgt/devcopy.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static void copy_avx2(uint8_t *dst, const uint8_t *src, uint64_t n)
{
    uint64_t i = 0;
    for (; i + 128 <= n; i += 128) {
        __m256i a = _mm256_stream_load_si256((const __m256i *)(src + i));
        __m256i b = _mm256_stream_load_si256((const __m256i *)(src + i + 32));
        __m256i c = _mm256_stream_load_si256((const __m256i *)(src + i + 64));
        __m256i d = _mm256_stream_load_si256((const __m256i *)(src + i + 96));
        _mm256_storeu_si256((__m256i *)(dst + i), a);
        _mm256_storeu_si256((__m256i *)(dst + i + 32), b);
        _mm256_storeu_si256((__m256i *)(dst + i + 64), c);
        _mm256_storeu_si256((__m256i *)(dst + i + 96), d);
    }
    for (; i + 32 <= n; i += 32)
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_stream_load_si256((const __m256i *)(src + i)));
    for (; i < n; i++) dst[i] = ((const volatile uint8_t *)src)[i];
}

__attribute__((target("sse4.1"))) static void copy_sse41(uint8_t *dst, const uint8_t *src, uint64_t n)
{
    uint64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_stream_load_si128((__m128i *)(src + i));
        __m128i b = _mm_stream_load_si128((__m128i *)(src + i + 16));
        __m128i c = _mm_stream_load_si128((__m128i *)(src + i + 32));
        __m128i d = _mm_stream_load_si128((__m128i *)(src + i + 48));
        _mm_storeu_si128((__m128i *)(dst + i), a);
        _mm_storeu_si128((__m128i *)(dst + i + 16), b);
        _mm_storeu_si128((__m128i *)(dst + i + 32), c);
        _mm_storeu_si128((__m128i *)(dst + i + 48), d);
    }
    for (; i + 16 <= n; i += 16) _mm_storeu_si128((__m128i *)(dst + i), _mm_stream_load_si128((__m128i *)(src + i)));
    for (; i < n; i++) dst[i] = ((const volatile uint8_t *)src)[i];
}
#endif

/* Copy [src, src+n) by whole aligned 32-byte blocks: on uncached memory every load is a bus transaction,
 * so an unaligned head or tail is read as one block (a block never crosses a page), never byte by byte. */
static void copy_blocks(uint8_t *d, const uint8_t *s, uint64_t n, int level)
{
    uintptr_t first = (uintptr_t)s & ~(uintptr_t)31, end = (uintptr_t)s + n;
    for (uintptr_t b = first; b < end; b += 32) {
        uint8_t blk[32] __attribute__((aligned(32)));
        uintptr_t lo = b < (uintptr_t)s ? (uintptr_t)s : b, hi = b + 32 < end ? b + 32 : end;
        if (lo == b && hi == b + 32 && end - b >= 128 && level) {   /* aligned bulk: straight through */
            uint64_t bulk = (end - b) & ~(uint64_t)127;
#if defined(__x86_64__)
            if (level == 2) copy_avx2(d + (b - (uintptr_t)s), (const uint8_t *)b, bulk);
            else copy_sse41(d + (b - (uintptr_t)s), (const uint8_t *)b, bulk);
#endif
            b += bulk - 32;
            continue;
        }
#if defined(__x86_64__)
        if (level) copy_sse41(blk, (const uint8_t *)b, 32);
        else
#endif
            for (int i = 0; i < 4; i++) ((uint64_t *)blk)[i] = ((const volatile uint64_t *)b)[i];
        memcpy(d + (lo - (uintptr_t)s), blk + (lo - b), hi - lo);
    }
}

void vgt_copy_from_device(void *dst, const volatile void *vsrc, uint64_t n)
{
    const void *src = (const void *)vsrc;
    if (n == 0) return;
    static int level = -1;   /* 2 AVX2, 1 SSE4.1, 0 neither; a benign race: every thread computes the same */
#if defined(__x86_64__)
    if (level < 0) level = __builtin_cpu_supports("avx2") ? 2 : __builtin_cpu_supports("sse4.1") ? 1 : 0;
#else
    level = 0;
#endif
    copy_blocks(dst, src, n, level);
}
