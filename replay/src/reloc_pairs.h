/* reloc_pairs.h: the address-bearing methods lane 1 rewrites when a mapping moves (reloc_pairs.c). */
#ifndef VGT_REPLAY_RELOC_PAIRS_H
#define VGT_REPLAY_RELOC_PAIRS_H

#include <stdint.h>

#include "vgt/nv_facts.h"

/* One address operand: the facts' (trace-format/facts/addresses.txt, vgt/nv_facts.h): a high and a low
 * method (a single method when hi is 0), the address being ((hi & hi_mask) << 32 | lo) << shift. Arrays
 * repeat at +j * stride. */
typedef vgt_nv_addr_method reloc_pair;

/* The pair and element a method writes: 0 high half, 1 low half (or the single method); -1 when the
 * method carries no address. *slot: the state slot of that element (< PATCH_MAX_PAIRS). */
int reloc_pair_of(uint32_t cls, uint32_t mthd, const reloc_pair **pair, uint32_t *slot);

/* The captured address from the two halves; the halves that carry new_va instead. */
uint64_t reloc_pair_address(const reloc_pair *p, uint32_t hi, uint32_t lo);
void reloc_pair_encode(const reloc_pair *p, uint64_t va, uint32_t old_hi, uint32_t *hi, uint32_t *lo);

#endif
