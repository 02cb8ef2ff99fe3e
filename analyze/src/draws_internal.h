/* draws_internal.h: the pieces of vgt_draws_run (vgt/draws.h), private to analyze/.
 *
 *   draws.c        the walk: per channel a semantic tracker and a 3D method shadow; records held per
 *                  submission and delivered at its end with their windows' macro calls
 *   draws_state.c  the shadow and its reading into a vgt_draw_info (methods found by name in the class
 *                  tables), the SPH read and decoded from memory
 *   draws_lint.c   the lints
 *   draws_print.c  JSON and text */
#ifndef VGT_DRAWS_INTERNAL_H
#define VGT_DRAWS_INTERNAL_H

#include "sem_internal.h"
#include "vgt/draws.h"
#include "vgt/model.h"

#define DRAWS_SLOTS 4096u    /* method offsets 0x0000..0x3ffc */

/* The last value of every method of one 3D object, and which were ever written. */
typedef struct draws_shadow {
    uint32_t cls;
    uint32_t value[DRAWS_SLOTS];
    uint8_t written[DRAWS_SLOTS / 8];
} draws_shadow;

static inline void draws_shadow_set(draws_shadow *s, uint32_t mthd, uint32_t data)
{
    uint32_t slot = (mthd >> 2) & (DRAWS_SLOTS - 1);
    s->value[slot] = data;
    s->written[slot >> 3] |= (uint8_t)(1u << (slot & 7));
}

/* Fill d's state (stages with their SPH, render targets, depth, viewport, scissor, blend, streams) from
 * the shadow. Memory: the bytes every channel's stream wrote (shared: uploads and copies of all channels,
 * since shaders are often copied in on a copy channel and drawn on another), then the draw channel's
 * tracker (its overlay, then the model). model may be NULL. */
vgt_status draws_read_state(const draws_shadow *sh, vgt_sem_tracker *sem, const sem_overlay *shared,
                            const vgt_model *model, vgt_draw_info *d, vgt_error *err);

/* The lints of a draw (d->lints). clears: this submission's clears on the channel before the draw. */
void draws_lint(vgt_draw_info *d);
void draws_lint_add(vgt_draw_lint *lints, uint32_t *n, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
