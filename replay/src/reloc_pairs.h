/* reloc_pairs.h: the address-bearing methods lane 1 rewrites when a mapping moves (reloc_pairs.c). */
#ifndef VGT_REPLAY_RELOC_PAIRS_H
#define VGT_REPLAY_RELOC_PAIRS_H

#include <stdint.h>

/* One address operand: a high and a low method (a single method when hi is 0), the address being
 * ((hi & hi_mask) << 32 | lo) << shift. Arrays repeat at +j * stride. */
typedef struct reloc_pair {
    uint8_t family;              /* low byte of the class: 0x6f host, 0xc0 compute, 0x97 3D, 0xb5 copy, 0x40 I2M */
    uint16_t hi, lo;
    uint32_t hi_mask;
    uint8_t shift;
    uint8_t count, stride;
    uint8_t slot;                /* first slot of the pair's state (patch_channel.half) */
    const char *name;
} reloc_pair;

/* The pair and element a method writes: 0 high half, 1 low half (or the single method); -1 when the
 * method carries no address. *slot: the state slot of that element (< PATCH_MAX_PAIRS). */
int reloc_pair_of(uint32_t cls, uint32_t mthd, const reloc_pair **pair, uint32_t *slot);

/* The captured address from the two halves; the halves that carry new_va instead. */
uint64_t reloc_pair_address(const reloc_pair *p, uint32_t hi, uint32_t lo);
void reloc_pair_encode(const reloc_pair *p, uint64_t va, uint32_t old_hi, uint32_t *hi, uint32_t *lo);

#endif
