/* cli.h: what every `vgt <verb>` shares: exit codes, the verb signature, and small parsers.
 *
 * A verb is `int cmd_<verb>(int argc, char **argv)` with argv[0] the verb's name. It answers `--help`
 * (and `-h`) with its usage on stdout and exit 0. Verbs are listed in each part's verbs.def (X-macro
 * VGT_VERB(name, function, one-line summary)); replay/cli/main.c includes them all. */
#ifndef VGT_CLI_H
#define VGT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { VGT_EXIT_OK = 0, VGT_EXIT_PROBLEM = 1, VGT_EXIT_USAGE = 2 };

/* An inclusive range "A..B", "A.." (to the end), "..B", or "N" (A == B == N). Numbers may be hex (0x). */
typedef struct vgt_range {
    uint64_t first;
    uint64_t last;   /* UINT64_MAX when open */
} vgt_range;

int vgt_parse_range(const char *s, vgt_range *out);      /* 0 on success, -1 on a malformed range */
int vgt_parse_u64(const char *s, uint64_t *out);         /* decimal or 0x hex; 0 on success */
int vgt_range_has(const vgt_range *r, uint64_t v);
/* A byte count: decimal or 0x hex, optionally followed by K, M, G or T (binary multiples, with an
 * optional "B" or "iB"): "4096", "64K", "2MiB". 0 on success, -1 on a malformed or overflowing size. */
int vgt_parse_size(const char *s, uint64_t *out);

/* True when out names the file in already exists as (same device and inode: also through another path
 * or a hard link). A verb that reads in and writes out checks this first: opening out for writing
 * truncates it, which would destroy the input before it is read. */
int vgt_cli_same_file(const char *in, const char *out);

/* True when argv holds -h or --help anywhere before "--". */
int vgt_wants_help(int argc, char **argv);

/* Print "vgt <verb>: <message>" on stderr and return the exit code given. */
int vgt_cli_error(const char *verb, int exit_code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Print the error of a library call and return VGT_EXIT_USAGE (I/O, version) or VGT_EXIT_PROBLEM (content). */
int vgt_cli_report(const char *verb, const vgt_error *err);

/* ---- output streams: what a verb prints and could not write is an error (exit 2), never lost quietly ----
 * vgt_cli_out_failed: 1 when f has failed (a full disk, a closed pipe with SIGPIPE ignored); the error is
 * kept for vgt_cli_check_output. Verbs with large output call it on the way (cheap: ferror, and a flush
 * only once failed), to stop early instead of decoding gigabytes into a closed pipe.
 * vgt_cli_check_output: flush f; when f failed (now or earlier) print "vgt VERB: NAME: strerror" and
 * return VGT_EXIT_USAGE, else rc (verb NULL: "vgt: NAME: ..."). The dispatcher calls it for standard output after every verb. */
int vgt_cli_out_failed(FILE *f);
int vgt_cli_flush(FILE *f);   /* fflush that keeps the error for vgt_cli_check_output; -1 when f failed */
int vgt_cli_check_output(const char *verb, FILE *f, const char *name, int rc);

/* ---- inputs ----
 * A verb that reads its trace more than once (or seeks in it) and is given "-": standard input is
 * copied to an unlinked temporary file (removed by the system whatever happens), and *path becomes a name
 * that opens it ("/proc/self/fd/N"); a regular file on standard input is used as it is. Other paths are
 * left alone. 0, or prints "vgt VERB: ..." and returns VGT_EXIT_USAGE. buf holds the new name. */
int vgt_cli_seekable_input(const char *verb, const char **path, char *buf, size_t cap);

/* JSON helpers for --json/--jsonl output. */
void vgt_json_string(FILE *f, const char *s);                         /* quoted and escaped */
void vgt_json_bytes_hex(FILE *f, const uint8_t *p, uint64_t n);       /* "0a1b..." */

#ifdef __cplusplus
}
#endif
#endif
