/* shim_copy.h: reading the program's ioctl parameters without trusting its pointers. */
#ifndef VGT_CAPTURE_SHIM_COPY_H
#define VGT_CAPTURE_SHIM_COPY_H

#include <stdint.h>
#include <string.h>

/* Copy n bytes from the program's address src; returns bytes copied (short on a bad pointer, where the
 * kernel would have answered EFAULT). Uses process_vm_readv, so a bad pointer never faults the shim. */
uint64_t shim_copy_in(void *dst, const void *src, uint64_t n);

static inline uint32_t shim_rd32(const uint8_t *p, uint32_t off)
{
    return (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 | (uint32_t)p[off + 3] << 24;
}
static inline uint64_t shim_rd64(const uint8_t *p, uint32_t off)
{
    return (uint64_t)shim_rd32(p, off) | (uint64_t)shim_rd32(p, off + 4) << 32;
}
#endif
