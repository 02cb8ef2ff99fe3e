/* verb_open.h: how the format verbs open their input and report what went wrong. */
#ifndef VGT_VERB_OPEN_H
#define VGT_VERB_OPEN_H

#include "vgt/trace.h"

/* Opens path ("-": standard input, read as a stream) for `vgt <verb>`. On failure prints
 * "vgt <verb>: <message>" and returns the exit code (2 for I/O, usage or version errors, 1 for a file that
 * is not a valid trace); 0 on success. */
int vgt_verb_open(const char *verb, const char *path, int streaming, vgt_reader **r);

#endif
