/* mme_budget.c: the MME work budgets of a submission and a trace (vgt/mme.h says why and how much). */
#include <stdio.h>

#include "vgt/mme.h"

void vgt_mme_budget_init(vgt_mme_budget *b, uint64_t per_submission, uint64_t per_trace, uint64_t per_failed)
{
    *b = (vgt_mme_budget){0};
    b->per_submission = per_submission ? per_submission : VGT_MME_DEFAULT_BUDGET_SUBMISSION;
    b->per_trace = per_trace ? per_trace : VGT_MME_DEFAULT_BUDGET_TRACE;
    b->per_failed = per_failed ? per_failed : VGT_MME_DEFAULT_BUDGET_FAILED;
}

void vgt_mme_budget_next_submission(vgt_mme_budget *b)
{
    b->submission_used = 0;
    b->submissions++;
}

static uint64_t left(uint64_t limit, uint64_t used) { return used >= limit ? 0 : limit - used; }

uint64_t vgt_mme_budget_allow(vgt_mme_budget *b)
{
    uint64_t s = left(b->per_submission, b->submission_used), t = left(b->per_trace, b->trace_used);
    uint64_t f = left(b->per_failed, b->failed_used);
    uint64_t n = s < t ? s : t;
    if (f < n) n = f;
    if (n) return n;
    if (b->first == VGT_MME_BUDGET_OK) {
        b->first = !f ? VGT_MME_BUDGET_FAILED : !t ? VGT_MME_BUDGET_TRACE : VGT_MME_BUDGET_SUBMISSION;
        b->first_submission = b->submissions;
    }
    b->refused++;
    return 0;
}

void vgt_mme_budget_charge(vgt_mme_budget *b, uint64_t instructions, int failed)
{
    uint64_t c = instructions < VGT_MME_CALL_COST ? VGT_MME_CALL_COST : instructions;
    b->submission_used += c;
    b->trace_used += c;
    if (failed) b->failed_used += c;
}

int vgt_mme_budget_note(const vgt_mme_budget *b, char *buf, size_t size)
{
    if (size) buf[0] = 0;
    if (!b->refused || !size) return 0;
    static const char *what[] = {"", "per submission", "per trace", "per trace for calls that fail"};
    uint64_t limit = b->first == VGT_MME_BUDGET_SUBMISSION ? b->per_submission
                     : b->first == VGT_MME_BUDGET_TRACE    ? b->per_trace
                                                           : b->per_failed;
    snprintf(buf, size,
             "MME budget of %llu instructions %s spent (first in submission %llu): %llu macro calls not run",
             (unsigned long long)limit, what[b->first], (unsigned long long)b->first_submission,
             (unsigned long long)b->refused);
    return 1;
}
