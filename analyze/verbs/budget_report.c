/* budget_report.c: see budget_report.h. */
#include "budget_report.h"

#include <stdio.h>

int mme_budget_print(const char *verb, const char *note)
{
    if (!note || !note[0]) return 0;
    fprintf(stderr, "vgt %s: %s\n", verb, note);
    return 1;
}

int mme_budget_report(const char *verb, const vgt_mme_trace *t)
{
    char note[256];
    if (!t || !vgt_mme_trace_budget_note(t, note, sizeof note)) return 0;
    return mme_budget_print(verb, note);
}
