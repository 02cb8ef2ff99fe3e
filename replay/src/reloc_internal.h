/* reloc_internal.h: what the planning files (reloc.c, reloc_operands.c, reloc_macros.c, plan.c) share. */
#ifndef VGT_REPLAY_RELOC_INTERNAL_H
#define VGT_REPLAY_RELOC_INTERNAL_H

#include "vgt/mme_trace.h"
#include "vgt/replay.h"

/* Append a note. The list is bounded (VGT_RELOC_MAX_NOTES): past it notes are counted as dropped,
 * except that a NOT_REWRITABLE note (a warning the replay must give) takes the place of the last
 * informational OPERAND note. */
void reloc_note_add(vgt_reloc_plan *p, const vgt_reloc_note *n);

/* The operands of the planned records that point into p->moving (reloc_operands.c): one walk (one decoder
 * per channel) feeds each submission's methods to a semantic tracker (operand notes) and to the MME
 * trace (reloc_macros.c: NOT_REWRITABLE notes). Fed the same records as the planner, in order; end takes
 * the status so far, finishes the macro calls still pending when it is VGT_OK, frees o and returns. The
 * walk keeps its own trace model (for the MME's DMA reads), bounded like the replay's (0: the default). */
typedef struct reloc_operands reloc_operands;
vgt_status reloc_operands_begin(reloc_operands **o, vgt_reloc_plan *p, uint64_t model_memory_limit, vgt_error *err);
vgt_status reloc_operands_record(reloc_operands *o, const vgt_record *rec, vgt_error *err);
vgt_status reloc_operands_end(reloc_operands *o, vgt_status so_far, vgt_error *err);

/* reloc_macros.c: a VGT_RELOC_NOT_REWRITABLE note for each address a macro call assembles inside one of
 * moving[0..n): the calls come from an MME trace the caller feeds (reloc_macros_trace). */
typedef struct reloc_macros reloc_macros;
vgt_status reloc_macros_new(reloc_macros **m, vgt_reloc_plan *p, const vgt_reloc_range *moving, uint32_t n,
                            vgt_error *err);
vgt_mme_trace *reloc_macros_trace(reloc_macros *m);
void reloc_macros_free(reloc_macros *m);

#endif
