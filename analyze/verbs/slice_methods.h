/* slice_methods.h: the engine state a slice restores (format 1.1 CHANNEL_METHODS, docs/trace-format.md
 * 0x0028): per channel, the latest value of every class method written before submission A (pushed, or
 * emitted by an MME macro), and the MME program (instruction RAM, start-address RAM) as the MME tracker
 * holds it at A. `vgt slice` feeds it in pass 1 and writes one CHANNEL_METHODS per channel in pass 2.
 *
 *     slice_methods *sm; slice_methods_new(&sm, model, &err);
 *     // walker callbacks: slice_methods_on_method() for every pushed method and every state-preamble write
 *     slice_methods_write(sm, w, ts, client, handle, alloc_seq, pb.subch_class, &err);   // per channel
 *
 * Which methods are pure state (carried) and which trigger work (never carried) is the rule table at the
 * top of slice_methods.c.
 */
#ifndef VGT_SLICE_METHODS_H
#define VGT_SLICE_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "vgt/error.h"
#include "vgt/model.h"
#include "vgt/trace.h"
#include "vgt/walk.h"

typedef struct slice_methods slice_methods;

vgt_status slice_methods_new(slice_methods **out, const vgt_model *model, vgt_error *err);
void slice_methods_free(slice_methods *sm);
/* One method the channel's engines received (pushed or a state-preamble write). Non-zero: a failure,
 * reported by slice_methods_status (stop the walk). */
int slice_methods_on_method(slice_methods *sm, const vgt_walk_submit *s, const vgt_method *m);
vgt_status slice_methods_status(const slice_methods *sm, vgt_error *err);
/* When an MME budget ran out (vgt/mme.h): what it says, into buf, and 1 (the slice's engine state then
 * lacks what the calls not run would have set); 0 otherwise. */
int slice_methods_budget_note(const slice_methods *sm, char *buf, size_t size);
/* Whether a method of class cls at byte address mthd is pure state (the rule table). */
int slice_methods_is_state(uint32_t cls, uint32_t mthd);
/* The CHANNEL_METHODS record of one channel incarnation, for the classes bound at A (subch_class[8]);
 * nothing when the channel had no engine state. *count (may be NULL) receives the writes written. */
vgt_status slice_methods_write(slice_methods *sm, vgt_writer *w, uint64_t ts, uint32_t client, uint32_t handle,
                               uint64_t alloc_seq, const uint32_t *subch_class, uint32_t *count, vgt_error *err);

#endif
