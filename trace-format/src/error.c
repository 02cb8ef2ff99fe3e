/* error.c: the vgt_error helpers (see include/vgt/error.h). */
#include "vgt/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const status_names[VGT_E_COUNT_] = {
    "VGT_OK",         "VGT_E_IO",       "VGT_E_NOMEM",  "VGT_E_FORMAT",      "VGT_E_VERSION",
    "VGT_E_CHECKSUM", "VGT_E_TRUNCATED", "VGT_E_LIMIT", "VGT_E_SEQUENCE",    "VGT_E_ARG",
    "VGT_E_NOT_FOUND", "VGT_E_UNSUPPORTED", "VGT_E_DECODE", "VGT_E_BACKEND", "VGT_E_TIMEOUT",
    "VGT_E_FAULT",    "VGT_E_EOF",
};

const char *vgt_status_name(vgt_status s)
{
    if ((unsigned)s < VGT_E_COUNT_ && status_names[s]) return status_names[s];
    return "VGT_E_UNKNOWN";
}

void vgt_error_clear(vgt_error *err)
{
    if (!err) return;
    err->code = VGT_OK;
    err->offset = VGT_NO_OFFSET;
    err->msg[0] = '\0';
}

vgt_status vgt_fail(vgt_error *err, vgt_status code, uint64_t offset, const char *fmt, ...)
{
    if (!err) return code;
    err->code = code;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if (offset != VGT_NO_OFFSET && !strstr(err->msg, "offset") && (size_t)n < sizeof err->msg)
        snprintf(err->msg + n, sizeof err->msg - (size_t)n, " (at offset %llu)", (unsigned long long)offset);
    return code;
}

/* Appends s at msg[n], truncating at the end of the message buffer; returns the new length. */
static size_t append_text(char *msg, size_t n, const char *s)
{
    size_t k = strlen(s);
    if (k > VGT_ERROR_MSG_MAX - 1 - n) k = VGT_ERROR_MSG_MAX - 1 - n;
    memmove(msg + n, s, k);
    msg[n + k] = '\0';
    return n + k;
}

vgt_status vgt_error_prefix(vgt_error *err, const char *fmt, ...)
{
    if (!err) return VGT_E_ARG;
    char head[VGT_ERROR_MSG_MAX], old[VGT_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    size_t n = append_text(err->msg, 0, head);
    n = append_text(err->msg, n, ": ");
    append_text(err->msg, n, old);
    return err->code;
}
