/* mme_forms.h: the instruction forms of TU104 MME macros, for mme_agree's rule that every macro it builds itself
 * uses only forms NVIDIA's driver macros use (the corpus's bodies), so that nothing it submits can be a form the
 * hardware refuses (an MME exception leaves the GPU unable to finish Vulkan draws; backend/gpu/README.md).
 *
 * A group's form is a string: which op each ALU slot holds and the kinds of its operands (a register, named by
 * its order of first use in the group so that "ADD a, a, #" and "both ALUs write one register" stay apart; ZERO;
 * IMM; IMMPAIR; IMM32; LOAD0; LOAD1), an ALU that does nothing as "-", the predicate mode and register kind, each
 * output's method and emit sources, end_next, and its place: after a group with end_next, after a branch, JAL
 * or LOOP, inside a LOOP body. Immediate values are left out except where they shape control flow: a branch's
 * sense, bit 14 and kind of target (exit, forward, backward), a LOOP's body length, a JAL's direction. */
#ifndef VGT_TEST_MME_FORMS_H
#define VGT_TEST_MME_FORMS_H

#include <stddef.h>
#include <stdint.h>

#define MME_FORM_CHARS 200u

typedef struct mme_forms {
    char (*form)[MME_FORM_CHARS];   /* sorted, distinct */
    uint32_t n, cap;
    uint32_t macros, groups;        /* what the table was built from */
} mme_forms;

/* The form of group g of the macro code[0..ndwords) (TU104, 3 dwords a group, the high word first). */
void mme_form_of(const uint32_t *code, uint32_t ndwords, uint32_t g, char out[MME_FORM_CHARS]);
/* Adds every group of a macro body; 0 when out of memory. */
int mme_forms_add_macro(mme_forms *t, const uint32_t *code, uint32_t ndwords);
/* Sorts and drops repeats; call after the last add. */
void mme_forms_finish(mme_forms *t);
int mme_forms_has(const mme_forms *t, const char *form);
/* 1 when every group of code is a form of t and passes vgt_mme_tu104_check(); else 0 and why names the first
 * group that is not. */
int mme_forms_check_macro(const mme_forms *t, const uint32_t *code, uint32_t ndwords, char *why, size_t cap);
void mme_forms_free(mme_forms *t);

#endif
