/* verb_open.h: how the format verbs open their input and report what went wrong. */
#ifndef VGT_VERB_OPEN_H
#define VGT_VERB_OPEN_H

#include "vgt/trace.h"

enum {
    VGT_VERB_OPEN_FILE = 0,     /* a file (seeks, index), or a stream when path is '-' or a FIFO */
    VGT_VERB_OPEN_STREAM = 1,   /* never seek: at the end of a growing file next() says "nothing more yet" */
    VGT_VERB_OPEN_FOLLOW = 2,   /* never seek, and next() waits at the end of a growing file for more */
};

/* Opens path ("-": standard input, read as a stream) for `vgt <verb>`; streaming is VGT_VERB_OPEN_*. On failure prints
 * "vgt <verb>: <message>" and returns the exit code (2 for I/O, usage or version errors, 1 for a file that
 * is not a valid trace); 0 on success. */
int vgt_verb_open(const char *verb, const char *path, int streaming, vgt_reader **r);

#endif
