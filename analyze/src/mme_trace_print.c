/* mme_trace_print.c: one macro call as text or JSON, its emitted methods decoded with the calling class's
 * tables (vgt/classes.h). Used by `vgt mme` and by `vgt decode --expand-macros`. */
#include <inttypes.h>

#include "vgt/classes.h"
#include "vgt/json.h"
#include "vgt/mme_trace.h"

static const char *call_name(const vgt_mme_trace_call *c)
{
    return c->macro ? vgt_mme_macro_name(c->categories, 1) : "unbound";
}

void vgt_mme_trace_print_call(FILE *f, const vgt_mme_trace_call *c, unsigned flags, const char *indent)
{
    if (!indent) indent = "";
    char cls[64];
    fprintf(f, "%scall %" PRIu64 " macro 0x%x (%s", indent, c->id, c->index, call_name(c));
    if (c->macro) fprintf(f, ", version %u, hash %016" PRIx64, c->macro->id, c->macro->hash);
    fprintf(f, ") at %" PRIu64 ":%u:%u channel 0x%x %s: %u params%s, %u emits, %" PRIu64 " instructions",
            c->pos.seq, c->pos.entry, c->pos.dword, c->channel, vgt_class_name(c->cls, cls, sizeof cls), c->nparams,
            c->params_truncated ? " (truncated)" : "", c->nemits, c->result.instructions);
    /* a clean exit with parameters unread (TU104 discards them: a driver's guard macro) */
    if (c->status == VGT_OK && c->result.params_consumed < c->result.params_total)
        fprintf(f, ", %u of %u params unread", c->result.params_total - c->result.params_consumed,
                c->result.params_total);
    if (c->status != VGT_OK)
        fprintf(f, ", ERROR %s at pc %u: %s", c->status == VGT_E_DECODE ? vgt_mme_error_name(c->result.error)
                                                                    : vgt_status_name(c->status),
                c->result.pc, c->message);
    fputc('\n', f);
    if (flags & VGT_MME_PRINT_PARAMS) {
        fprintf(f, "%s  params:", indent);
        for (uint32_t i = 0; i < c->nparams; i++) fprintf(f, " 0x%08x", c->params[i]);
        fputc('\n', f);
    }
    if (!(flags & VGT_MME_PRINT_EMITS)) return;
    char text[512];
    for (uint32_t i = 0; i < c->nemits; i++) {
        vgt_method_format(c->cls, c->emits[i].method, c->emits[i].value, text, sizeof text);
        fprintf(f, "%s  emit %4u 0x%04x 0x%08x %s\n", indent, i, c->emits[i].method, c->emits[i].value, text);
    }
}

void vgt_mme_trace_print_call_json(FILE *f, const vgt_mme_trace_call *c, unsigned flags)
{
    char buf[512];
    fprintf(f, "{\"call\":%" PRIu64 ",\"submission\":%" PRIu64 ",\"seq\":%" PRIu64 ",\"entry\":%u,\"dword\":%u,"
               "\"client\":%u,\"channel\":%u,\"subchannel\":%u,\"class\":%u,\"class_name\":",
            c->id, c->submission, c->seq, c->pos.entry, c->pos.dword, c->client, c->channel, c->subch, c->cls);
    vgt_json_string(f, vgt_class_name(c->cls, buf, sizeof buf));
    fprintf(f, ",\"macro\":%u,\"version\":", c->index);
    if (c->macro) fprintf(f, "%u,\"hash\":\"%016" PRIx64 "\"", c->macro->id, c->macro->hash);
    else fprintf(f, "null,\"hash\":null");
    fprintf(f, ",\"kind\":");
    vgt_json_string(f, call_name(c));
    fprintf(f, ",\"nparams\":%u,\"params_truncated\":%s,\"params_read\":%u,\"nemits\":%u,\"instructions\":%" PRIu64
               ",\"status\":",
            c->nparams, c->params_truncated ? "true" : "false", c->result.params_consumed, c->nemits,
            c->result.instructions);
    vgt_json_string(f, vgt_status_name(c->status));
    fprintf(f, ",\"error\":");
    if (c->status == VGT_OK) fprintf(f, "null");
    else {
        fprintf(f, "{\"class\":");
        vgt_json_string(f, c->status == VGT_E_DECODE ? vgt_mme_error_name(c->result.error) : vgt_status_name(c->status));
        fprintf(f, ",\"pc\":%u,\"message\":", c->result.pc);
        vgt_json_string(f, c->message);
        fputc('}', f);
    }
    if (flags & VGT_MME_PRINT_PARAMS) {
        fprintf(f, ",\"params\":[");
        for (uint32_t i = 0; i < c->nparams; i++) fprintf(f, "%s%u", i ? "," : "", c->params[i]);
        fputc(']', f);
    }
    if (flags & VGT_MME_PRINT_EMITS) {
        fprintf(f, ",\"emits\":[");
        for (uint32_t i = 0; i < c->nemits; i++) {
            fprintf(f, "%s{\"method\":%u,\"value\":%u,\"name\":", i ? "," : "", c->emits[i].method, c->emits[i].value);
            vgt_method_name(c->cls, c->emits[i].method, buf, sizeof buf);
            vgt_json_string(f, buf);
            fprintf(f, ",\"decoded\":");
            size_t n = vgt_method_format_json(c->cls, c->emits[i].method, c->emits[i].value, buf, sizeof buf);
            fputs(n < sizeof buf ? buf : "null", f);   /* a cut object would not parse */
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputc('}', f);
}
