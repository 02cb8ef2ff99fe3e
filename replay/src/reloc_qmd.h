/* reloc_qmd.h: a QMD's address fields translated to the replay's VAs (reloc_qmd.c). */
#ifndef VGT_REPLAY_RELOC_QMD_H
#define VGT_REPLAY_RELOC_QMD_H

#include <stdint.h>

#include "vgt/replay.h"

typedef struct qmd_fix {
    const char *what;            /* "program address", "release address", ... */
    uint32_t element;            /* constant buffer / release / dependent index */
    uint64_t from, to;
    uint32_t dword;              /* the QMD dword holding the low part */
} qmd_fix;

#define QMD_MAX_FIXES 24u

/* Where a captured VA goes (addr_to_replay for the replay; the planner's "does it move" test). */
typedef uint64_t (*qmd_translate_fn)(const void *ctx, uint64_t va);

/* Rewrite, in qmd (len bytes, a recognised version), every address field that to() moves; fix[0..n)
 * say which. 0 when nothing moved (or the version is unknown). */
uint32_t qmd_relocate(qmd_translate_fn to, const void *ctx, uint8_t *qmd, uint32_t len, qmd_fix *fix, uint32_t max);

#endif
