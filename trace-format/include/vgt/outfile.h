/* outfile.h: where a verb's output goes, and how it gets there without clobbering anything.
 *
 * One policy for every file a `vgt` verb (and the trace writer's vgt_writer_open_path) writes:
 *
 *   PATH absent or a regular file   written as a temporary beside it (PATH.XXXXXX.partial) that replaces
 *                                   PATH by rename only once complete: a failed or interrupted write
 *                                   leaves PATH as it was and no temporary
 *   "-"                             standard output, written straight to it
 *   a character device or a FIFO    a stream, written straight to it (never replaced: /dev/null stays a
 *                                   device)
 *   a directory, a socket, ...      refused, naming the path
 *
 * An output that cannot be a stream (an SQLite database) asks for VGT_OUT_NEED_FILE: "-", devices and
 * FIFOs are then refused too. A verb whose standard output carries its report asks for VGT_OUT_NO_STDOUT.
 *
 *     vgt_outfile o;
 *     if (vgt_outfile_open(&o, path, 0, &err) != VGT_OK) return vgt_cli_report(verb, &err);
 *     FILE *f = vgt_outfile_stdio(&o, &err);          // or write(o.fd, ...)
 *     ... write ...
 *     if (vgt_outfile_commit(&o, &err) != VGT_OK) ... // flush, close, rename; removes the temporary on error
 *     // or vgt_outfile_discard(&o) to give up: the target stays as it was
 *
 * The temporary of an output still open is removed when the process is ended by SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGPIPE or SIGXFSZ once the program has called vgt_outfile_cleanup_on_signals() (the vgt
 * command does, before any verb runs). */
#ifndef VGT_OUTFILE_H
#define VGT_OUTFILE_H

#include <stdio.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vgt_out_kind {
    VGT_OUT_REFUSED = 0,   /* a directory, a socket, a block device, a dangling link, an unreadable path */
    VGT_OUT_FILE = 1,      /* absent or a regular file: temporary + rename */
    VGT_OUT_STREAM = 2,    /* a character device or a FIFO: written straight to it */
    VGT_OUT_STDOUT = 3,    /* "-" */
} vgt_out_kind;

enum vgt_out_flags {
    VGT_OUT_NEED_FILE = 1u,   /* the output must be a regular file (it is reopened by name, seeked, ...) */
    VGT_OUT_NO_STDOUT = 2u,   /* "-" is refused: standard output carries the verb's own report */
    VGT_OUT_IN_PLACE = 4u,    /* a regular file is created or truncated and written straight into: what
                               * was written stays readable at PATH even if the process is killed (captures) */
    VGT_OUT_NO_FD = 8u,       /* only reserve the temporary: the caller opens vgt_outfile_write_path itself
                               * (with VGT_OUT_NEED_FILE; SQLite) */
};

typedef struct vgt_outfile {
    const char *path;   /* the target, as given */
    int kind;           /* vgt_out_kind, never VGT_OUT_REFUSED once open */
    int fd;             /* open for writing; -1 with VGT_OUT_NO_FD */
    FILE *f;            /* vgt_outfile_stdio's stream, or NULL */
    char *tmp;          /* the temporary (VGT_OUT_FILE, not in place), or NULL */
    char *target;       /* where the temporary goes: PATH, or what PATH links to */
    int slot;           /* registration for removal on a signal, or -1 */
} vgt_outfile;

/* Which policy applies to path. On VGT_OUT_REFUSED, why (cap bytes) says why. */
vgt_out_kind vgt_out_classify(const char *path, char *why, size_t cap);

/* Opens path for writing under the policy above (flags: enum vgt_out_flags). A refusal is VGT_E_ARG, a
 * failure to create VGT_E_IO; both messages name the path. */
vgt_status vgt_outfile_open(vgt_outfile *o, const char *path, unsigned flags, vgt_error *err);
/* A stdio stream on the output (stdout itself for "-"); owned by o. NULL with err on failure. */
FILE *vgt_outfile_stdio(vgt_outfile *o, vgt_error *err);
/* "standard output" for "-", else the path: for messages. */
const char *vgt_outfile_name(const vgt_outfile *o);
/* The path that is actually written: the temporary, or the target itself. */
const char *vgt_outfile_write_path(const vgt_outfile *o);
/* Finish: flush and check the stream, close, and rename the temporary over the target. On any failure the
 * temporary is removed and the target is left as it was; the error names the path and strerror. */
vgt_status vgt_outfile_commit(vgt_outfile *o, vgt_error *err);
/* Give up: close and remove the temporary; the target stays as it was (a stream is just closed). */
void vgt_outfile_discard(vgt_outfile *o);

/* Install handlers that remove the temporaries still open when a signal (see above) ends the process,
 * then end it as the signal would have. Signals the program ignores stay ignored. Call once, early. */
void vgt_outfile_cleanup_on_signals(void);

#ifdef __cplusplus
}
#endif
#endif
