/* error.h: the one error convention of every vgtrace library.
 *
 * Every fallible function returns a vgt_status and, on failure, fills the caller's vgt_error with the
 * status, the position the problem was found at (a file offset, a stream offset or a method position,
 * whichever the function documents) and a message that names what and where, with expected-versus-found
 * numbers. Only the CLI turns an error into an exit code; libraries never exit or print.
 *
 *     vgt_error err;
 *     if (vgt_reader_open_path(&r, path, &err) != VGT_OK)
 *         fprintf(stderr, "vgt: %s\n", err.msg);
 *
 * Inside the libraries, VGT_TRY forwards a failure and VGT_FAIL creates one:
 *     VGT_TRY(read_exact(fd, buf, n, off, err));
 *     if (len > VGT_MAX_CHUNK) return VGT_FAIL(err, VGT_E_LIMIT, off, "chunk length %u over the limit %u", len, VGT_MAX_CHUNK);
 */
#ifndef VGT_ERROR_H
#define VGT_ERROR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Stable values: they appear in JSON output and tests. Append only. */
typedef enum vgt_status {
    VGT_OK = 0,
    VGT_E_IO = 1,          /* open/read/write/seek failed; the message carries strerror(errno) */
    VGT_E_NOMEM = 2,       /* an allocation failed */
    VGT_E_FORMAT = 3,      /* bytes are not what the format says (bad magic, bad structure) */
    VGT_E_VERSION = 4,     /* a newer major version or an unknown header flag */
    VGT_E_CHECKSUM = 5,    /* a checksum does not match */
    VGT_E_TRUNCATED = 6,   /* the input ends inside a structure */
    VGT_E_LIMIT = 7,       /* a size read from the input is over a named maximum */
    VGT_E_SEQUENCE = 8,    /* sequence numbers are not contiguous */
    VGT_E_ARG = 9,         /* the caller passed something invalid */
    VGT_E_NOT_FOUND = 10,  /* a sequence number, handle, address or name that does not exist */
    VGT_E_UNSUPPORTED = 11,/* valid, but not handled by this build (codec, class, backend) */
    VGT_E_DECODE = 12,     /* a method stream, QMD or macro that cannot be decoded */
    VGT_E_BACKEND = 13,    /* a backend (sim, gpu, cuda) reported a failure */
    VGT_E_TIMEOUT = 14,    /* a wait ran past its timeout */
    VGT_E_FAULT = 15,      /* an access outside the mapped memory, an MMU fault, an RM error */
    VGT_E_EOF = 16,        /* not an error in itself: the end of the input was reached cleanly */
    VGT_E_COUNT_           /* keep last */
} vgt_status;

#define VGT_ERROR_MSG_MAX 512
#define VGT_NO_OFFSET UINT64_MAX

typedef struct vgt_error {
    vgt_status code;
    uint64_t offset;               /* where the problem was found, or VGT_NO_OFFSET */
    char msg[VGT_ERROR_MSG_MAX];   /* complete sentence-like text; includes the offset when there is one */
} vgt_error;

/* Fills *err (err may be NULL) and returns code. The message is printf-formatted; when offset is not
 * VGT_NO_OFFSET, " (at offset N)" is appended unless the text already names the position. */
vgt_status vgt_fail(vgt_error *err, vgt_status code, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prefix an existing error's message with context ("reading chunk 3: ..."), keeping code and offset. */
vgt_status vgt_error_prefix(vgt_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const char *vgt_status_name(vgt_status s);   /* "VGT_E_CHECKSUM" style, never NULL */
void vgt_error_clear(vgt_error *err);

#define VGT_FAIL(err, code, off, ...) vgt_fail((err), (code), (off), __VA_ARGS__)
#define VGT_TRY(expr)                                   \
    do {                                                \
        vgt_status vgt_try_rc_ = (expr);                \
        if (vgt_try_rc_ != VGT_OK) return vgt_try_rc_;  \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
