/* budget_report.h: what the verbs that run macros (census, db, decode --expand-macros, draws, launches, mme) say when an
 * MME budget (vgt/mme.h) ran out: one line on stderr, and the walk counts as having found a problem. */
#ifndef VGT_BUDGET_REPORT_H
#define VGT_BUDGET_REPORT_H

#include "vgt/mme_trace.h"

/* Prints "vgt VERB: MME budget of ... spent ...: N macro calls not run" and returns 1 when a budget ran
 * out; 0 (nothing printed) otherwise or when t is NULL. */
int mme_budget_report(const char *verb, const vgt_mme_trace *t);
/* The same for a note already made (vgt_mme_budget_note and its kin): prints "vgt VERB: NOTE" and returns 1
 * when note is not empty; 0 otherwise. */
int mme_budget_print(const char *verb, const char *note);

#endif
