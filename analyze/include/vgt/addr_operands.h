/* addr_operands.h: which decoded methods, QMD fields and semantic events carry GPU addresses. Pure
 * decoding, shared by every consumer that must find or rewrite addresses (the replay's lane-1
 * relocation, its address plan):
 *  - method pairs (addr_operands.c): the high and low methods of each address a push buffer sets, per
 *    class family, with how the address is packed (the facts' address operands, with state slots);
 *  - QMD fields (addr_qmd.c): the program, constant-buffer, release and dependent-QMD addresses of a
 *    QMD (the facts' QMD address fields), found through analyze's QMD field tables, read and rewritten
 *    in place;
 *  - events (addr_events.c): the addresses a semantic event (events.h) names.
 */
#ifndef VGT_ADDR_OPERANDS_H
#define VGT_ADDR_OPERANDS_H

#include <stdint.h>

#include "vgt/events.h"
#include "vgt/nv_facts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- method pairs ---- */

/* One address operand: the facts' (trace-format/facts/addresses.txt, vgt/nv_facts.h): a high and a low
 * method (a single method when hi_mask is 0), the address being ((hi & hi_mask) << 32 | lo) << shift, for
 * every class of its family. Arrays repeat at +j * stride. Each element has a state slot, numbered here
 * (consecutive per operand, in the facts' order). */
typedef vgt_nv_addr_method vgt_addr_pair;

#define VGT_ADDR_PAIR_SLOTS 64u   /* state slots over every pair's elements: a consumer's per-slot array size */

/* The pair and element a method writes: 0 high half, 1 low half (or the single method); -1 when the
 * method carries no address. *slot: the state slot of that element (< VGT_ADDR_PAIR_SLOTS). */
int vgt_addr_pair_of(uint32_t cls, uint32_t mthd, const vgt_addr_pair **pair, uint32_t *slot);

/* The captured address from the two halves; the halves that carry new_va instead. */
uint64_t vgt_addr_pair_address(const vgt_addr_pair *p, uint32_t hi, uint32_t lo);
void vgt_addr_pair_encode(const vgt_addr_pair *p, uint64_t va, uint32_t old_hi, uint32_t *hi, uint32_t *lo);

/* ---- QMD address fields ---- */

typedef struct vgt_qmd_fix {
    const char *what;            /* "program address", "release address", ... */
    uint32_t element;            /* constant buffer / release / dependent index */
    uint64_t from, to;
    uint32_t dword;              /* the QMD dword holding the low part */
} vgt_qmd_fix;

#define VGT_QMD_MAX_FIXES 24u

/* Where a VA goes (the replay's translation; a planner's "does it move" test). */
typedef uint64_t (*vgt_qmd_translate_fn)(const void *ctx, uint64_t va);

/* Rewrite, in qmd (len bytes, a recognised version), every address field that translate() moves;
 * fix[0..n) say which. 0 when nothing moved (or the version is unknown). */
uint32_t vgt_qmd_relocate(vgt_qmd_translate_fn translate, const void *ctx, uint8_t *qmd, uint32_t len,
                          vgt_qmd_fix *fix, uint32_t max);

/* ---- events ---- */

typedef struct vgt_addr_operand {
    char what[40];               /* "semaphore address", "copy source", "constant buffer 3", ... */
    uint64_t va;                 /* never 0 */
    uint8_t in_qmd;              /* a field of the launch's QMD (rewritten in the QMD's bytes) */
} vgt_addr_operand;

#define VGT_ADDR_MAX_EVENT_OPERANDS (4u + VGT_QMD_MAX_CB + VGT_QMD_MAX_RELEASE + VGT_QMD_MAX_DEPENDENT)

/* The addresses an event names, in a fixed order; returns how many (at most max). A copy that only
 * releases a semaphore names no copy addresses (its offsets are stale, not operands); a memset names no
 * source. */
uint32_t vgt_event_addresses(const vgt_event *ev, vgt_addr_operand *out, uint32_t max);

#ifdef __cplusplus
}
#endif
#endif
