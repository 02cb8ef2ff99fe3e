/* addr_operands.c: the methods that carry GPU addresses: what a relocation rewrites in a push buffer
 * (vgt/addr_operands.h). The table is the facts' (trace-format/facts/addresses.txt: which methods of which
 * class family carry an address, with their offsets from the class tables); the semantic tracker (and so
 * addr_events.c) decodes the same methods through the same class tables. This file numbers the state
 * slots. */
#include "vgt/addr_operands.h"

_Static_assert(VGT_NV_ADDR_METHOD_SLOTS <= VGT_ADDR_PAIR_SLOTS, "every address operand element needs a state slot");

/* Slots: each pair's elements get consecutive state slots (VGT_NV_ADDR_METHOD_SLOTS in all). */
static uint8_t slot_base[VGT_NV_ADDR_METHOD_COUNT];

static void number_slots(void)
{
    static int done;
    if (done) return;
    uint32_t next = 0;
    for (uint32_t i = 0; i < VGT_NV_ADDR_METHOD_COUNT; i++) {
        slot_base[i] = (uint8_t)next;
        next += vgt_nv_addr_method_at(i)->count;
    }
    done = 1;
}

int vgt_addr_pair_of(uint32_t cls, uint32_t mthd, const vgt_addr_pair **pair, uint32_t *slot)
{
    number_slots();
    uint32_t element;
    int half = vgt_nv_addr_method_of(cls, mthd, pair, &element);
    if (half < 0) return -1;
    *slot = slot_base[*pair - vgt_nv_addr_method_at(0)] + element;
    return half;
}

uint64_t vgt_addr_pair_address(const vgt_addr_pair *p, uint32_t hi, uint32_t lo) { return vgt_nv_addr_method_value(p, hi, lo); }

void vgt_addr_pair_encode(const vgt_addr_pair *p, uint64_t va, uint32_t old_hi, uint32_t *hi, uint32_t *lo)
{
    vgt_nv_addr_method_encode(p, va, old_hi, hi, lo);
}
