/* reloc_internal.h: what the planning files (reloc.c, reloc_operands.c, reloc_macros.c) share. */
#ifndef VGT_REPLAY_RELOC_INTERNAL_H
#define VGT_REPLAY_RELOC_INTERNAL_H

#include "vgt/replay.h"

/* Append a note. The list is bounded (VGT_RELOC_MAX_NOTES): past it notes are counted as dropped,
 * except that a NOT_REWRITABLE note (a warning the replay must give) takes the place of the last
 * informational OPERAND note. */
void reloc_note_add(vgt_reloc_plan *p, const vgt_reloc_note *n);

/* A VGT_RELOC_NOT_REWRITABLE note for each address a macro call assembles inside one of moving[0..n)
 * (reloc_macros.c). */
vgt_status reloc_find_macro_operands(const char *path, vgt_reloc_plan *p, const vgt_reloc_range *moving, uint32_t n,
                                     vgt_error *err);

#endif
