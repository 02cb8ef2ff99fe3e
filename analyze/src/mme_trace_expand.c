/* mme_trace_expand.c: `vgt decode --expand-macros`: a vgt_mme_trace whose calls are printed in line with
 * the decoded stream, as text (the call line and its emitted methods, indented under the method that
 * completed it) or as one JSON line {"type":"macro_call",...} each. Only calls of selected submissions. */
#include <stdlib.h>

#include "vgt/mme_trace.h"

typedef struct printer {
    FILE *out;
    int jsonl;
} printer;

int vgt_mme_trace_print_expansion(FILE *out, int jsonl, const vgt_mme_trace_call *c)
{
    if (!c->selected) return 0;
    unsigned flags = VGT_MME_PRINT_PARAMS | VGT_MME_PRINT_EMITS;
    if (jsonl) {
        fputs("{\"type\":\"macro_call\",\"expansion\":", out);
        vgt_mme_trace_print_call_json(out, c, flags);
        fputs("}\n", out);
    } else {
        vgt_mme_trace_print_call(out, c, flags, "    => ");
    }
    return ferror(out) ? 1 : 0;
}

static int print_call(void *user, const vgt_mme_trace_call *c)
{
    const printer *p = user;
    return vgt_mme_trace_print_expansion(p->out, p->jsonl, c);
}

vgt_status vgt_mme_trace_new_printer(FILE *out, int jsonl, vgt_mme_trace **t, vgt_error *err)
{
    if (!out || !t) return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "the macro printer needs a FILE and an out pointer");
    printer *p = malloc(sizeof *p);
    if (!p) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "no memory for the macro printer");
    *p = (printer){out, jsonl};
    vgt_mme_trace_config cfg = {.on_call = print_call, .user = p, .free_user = free};
    vgt_status rc = vgt_mme_trace_new(&cfg, t, err);
    if (rc != VGT_OK) free(p);
    return rc;
}
