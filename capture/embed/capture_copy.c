/* capture_copy.c: copying out of GPU memory mapped to the CPU.
 *
 * BAR1 (vidmem) and many RM sysmem mappings are write-combined or uncached: an ordinary load fetches
 * 8-32 bytes per bus transaction, and glibc's memcpy may use `rep movsb`, which is slow there. The H200
 * probe measured the shim's first memcpy-based capture at ~30 MB/s from such mappings. Streaming loads
 * (MOVNTDQA, SSE4.1; VMOVNTDQA, AVX2) read whole 64-byte lines from write-combined memory and behave as
 * plain loads on write-back memory, so they are always correct and much faster where it matters. */
#include <stdint.h>
#include <string.h>

#include "vgt/capture.h"

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
    for (; i < n; i++) dst[i] = ((const volatile uint8_t *)src)[i];
}
#endif

void vgt_capture_copy_device(void *dst, const void *src, uint64_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
#if defined(__x86_64__)
    /* Streaming loads need aligned sources: byte-copy up to the first 32-byte boundary. */
    while (n && ((uintptr_t)s & 31)) { *d++ = *(const volatile uint8_t *)s++; n--; }
    static int level = -1;   /* 2 AVX2, 1 SSE4.1, 0 neither; a benign race: every thread computes the same */
    if (level < 0) level = __builtin_cpu_supports("avx2") ? 2 : __builtin_cpu_supports("sse4.1") ? 1 : 0;
    if (level == 2) { copy_avx2(d, s, n); return; }
    if (level == 1) { copy_sse41(d, s, n); return; }
#endif
    for (uint64_t i = 0; i < n; i++) d[i] = ((const volatile uint8_t *)s)[i];
}
