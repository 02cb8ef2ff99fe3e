/* devcopy.h: reading GPU memory mapped to the CPU (BAR1 vidmem, uncached or write-combined sysmem).
 *
 * An ordinary load there is one bus transaction of 4-8 bytes, and glibc's memcpy may use `rep movsb`,
 * slower still; this copies by aligned blocks with streaming loads (AVX2 / SSE4.1 MOVNTDQA) that fetch
 * whole lines from write-combined memory and act as plain loads on write-back memory. Correct on any
 * memory, any alignment and length: a block never crosses a page, an unaligned head or tail is read as
 * one block. Used by the capture (its memory views) and the gpu backend (its BAR1 reads). */
#ifndef VGT_DEVCOPY_H
#define VGT_DEVCOPY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void vgt_copy_from_device(void *dst, const volatile void *src, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif
