/* cli.h: the `vgt` command line: exit codes, option tables and their one parser, and what every verb
 * shares for printing. This is the vgt_cli library (trace-format/cli/): it prints and decides exit codes,
 * so no product library links it; the verbs libraries and the `vgt` executable do.
 *
 * A verb is `int cmd_<verb>(int argc, char **argv)` with argv[0] the verb's name, and declares its
 * options in a table, `const vgt_cli_spec cmd_<verb>_spec`. Each part lists its verbs in its own verbs.def
 * (X-macro VGT_VERB(name, function, one-line summary)); the top-level CMakeLists.txt joins them into the
 * table of the `vgt` executable (trace-format/cli/main.c), which also turns the specs into usage text,
 * man pages and shell completions. So one table says, for each option: its name, its argument, its help
 * and where the value goes.
 *
 *     typedef struct { int json; vgt_range submits; const char *stores; } my_opts;
 *     static const vgt_cli_opt opts[] = {
 *         {"json", 0, VGT_ARG_NONE, NULL, "one JSON document", .off = offsetof(my_opts, json)},
 *         VGT_OPT_SUBMITS(my_opts, submits, "only submissions A..B"),
 *         {"stores", 0, VGT_ARG_PATH, "FILE", "...", .off = offsetof(my_opts, stores)},
 *         {0}};
 *     const vgt_cli_spec cmd_my_spec = {.verb = "my", .args = "TRACE", .min_args = 1, .max_args = 1,
 *                                       .about = "...", .opts = opts};
 *     int cmd_my(int argc, char **argv) {
 *         my_opts o = {.submits = VGT_RANGE_ALL};
 *         vgt_cli_args a;
 *         int rc = vgt_cli_parse(&cmd_my_spec, argc, argv, &o, &a);
 *         if (rc >= 0) return rc;          // --help printed (0) or a usage error reported (2)
 *         ... a.pos[0] is TRACE ...
 *     }
 *
 * The parser reads `--opt value`, `--opt=value`, `-o value`, `-ovalue`, `--` (the end of options),
 * "-" as a positional argument (standard input or output), answers -h/--help with the usage made from
 * the table, and rejects an unknown option, a missing or malformed value, or a wrong count of
 * positional arguments with "vgt VERB: ..." on stderr and exit 2. */
#ifndef VGT_CLI_H
#define VGT_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vgt/error.h"
#include "vgt/json.h"
#include "vgt/range.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { VGT_EXIT_OK = 0, VGT_EXIT_PROBLEM = 1, VGT_EXIT_USAGE = 2 };

/* ---- option tables ---- */

/* What an option takes, and the type of its target field (at offset off in the verb's options struct). */
typedef enum vgt_arg_kind {
    VGT_ARG_NONE,     /* a flag: int, set to 1 */
    VGT_ARG_STRING,   /* const char *: the argument as given */
    VGT_ARG_PATH,     /* const char *: a file ('-' where the help says so); completes as a file name */
    VGT_ARG_U64,      /* uint64_t: decimal or 0x hex, within [min, max] (max 0: no upper bound) */
    VGT_ARG_INT,      /* int: decimal, may be negative, within [min, max] */
    VGT_ARG_SIZE,     /* uint64_t: bytes with K/M/G/T suffixes (vgt_parse_size), within [min, max] */
    VGT_ARG_RANGE,    /* vgt_range: N, A..B, A.. or ..B (vgt_parse_range) */
    VGT_ARG_ENUM,     /* int: the index of the argument in choices */
} vgt_arg_kind;

enum {
    VGT_OPT_REQUIRED = 1u << 0,   /* the verb cannot run without it */
    VGT_OPT_REPEAT = 1u << 1,     /* may be given more than once (apply collects them) */
    VGT_OPT_VALUE_OPTIONAL = 1u << 2,   /* a value kind whose value may be left out: only `--opt=VALUE` gives one,
                                         * `--opt` alone calls apply (required with this flag) with NULL */
};

typedef struct vgt_cli_opt vgt_cli_opt;
struct vgt_cli_opt {
    const char *name;          /* long name without "--"; NULL ends the table */
    char short_name;           /* 'o' for -o; 0 none */
    vgt_arg_kind kind;
    const char *arg;           /* the argument's name in usage and man pages ("A..B", "FILE") */
    const char *help;          /* one paragraph; the usage printer wraps it */
    size_t off;                /* offset of the target field in the verb's options struct */
    const char *const *choices;   /* VGT_ARG_ENUM: the accepted words, NULL-terminated */
    int64_t min;               /* VGT_ARG_U64/INT/SIZE bounds */
    uint64_t max;
    /* Instead of storing: called with the verb's options struct and the argument (NULL for a flag) after
     * the kind's checks; stores what it wants, or prints "vgt VERB: ..." and returns an exit code. */
    int (*apply)(void *opts, const char *value);
    unsigned flags;            /* VGT_OPT_* */
    const char *alias;         /* a former long name, still accepted (documented in the help) */
    const char *what;          /* the noun in "bad WHAT 'value'" (default from the kind: "number", "range", ...) */
};

/* The one definition of the submission window every verb that has one uses: the same name, argument,
 * alias and parser everywhere (`--submit` is the former name in decode, census, db and mme). */
#define VGT_OPT_SUBMITS_FLAGS(type, field, help_text, opt_flags)                                            \
    {"submits", 0, VGT_ARG_RANGE, "A..B", help_text, .off = offsetof(type, field), .alias = "submit",             \
     .flags = (opt_flags)}
#define VGT_OPT_SUBMITS(type, field, help_text) VGT_OPT_SUBMITS_FLAGS(type, field, help_text, 0)

/* The one definition of --follow, for every verb that reads a TRACE: a regular file still being written
 * is read as it grows (each chunk as soon as the writer flushes it) until its trailer; the result is the
 * result on the finished file. ('-' and a FIFO are streams already and need no option.) */
#define VGT_FOLLOW_HELP                                                                                             \
    "TRACE is a file still being written (vgt record --crash-safe or --live, a capture with VGT_CAPTURE_OUT): "      \
    "read it as it grows, each chunk as soon as the writer flushes it, until the trailer (the writer closed) or an " \
    "interrupt; the result is the one the finished file gives"
#define VGT_OPT_FOLLOW(type, field) {"follow", 0, VGT_ARG_NONE, NULL, VGT_FOLLOW_HELP, .off = offsetof(type, field)}

typedef struct vgt_cli_spec {
    const char *verb;          /* "decode" */
    const char *args;          /* the positional arguments in the synopsis: "TRACE", "IN OUT", "-- CMD [ARGS...]" */
    int min_args, max_args;    /* positional arguments; max_args -1: any number */
    const char *about;         /* what the verb does: paragraphs separated by "\n\n" */
    const char *notes;         /* after the options (exit status and the like); may be NULL */
    const vgt_cli_opt *opts;
    unsigned flags;            /* VGT_CLI_* */
    const char *const *first_words;   /* words the first positional argument may be (completion); NULL: files */
} vgt_cli_spec;

enum {
    VGT_CLI_ARGS_END_OPTIONS = 1u << 0,   /* the first positional argument ends the options (record's CMD) */
};

#define VGT_CLI_MAX_ARGS 8

typedef struct vgt_cli_args {
    const char *pos[VGT_CLI_MAX_ARGS];   /* positional arguments, in order */
    int npos;
    char **rest;                         /* VGT_CLI_ARGS_END_OPTIONS: argv from the first positional on */
    int nrest;
    uint64_t given;                      /* bit i: option i of the table was given */
} vgt_cli_args;

/* Parses argv into the options struct and *args. Returns -1 to go on, VGT_EXIT_OK after printing the
 * usage for -h/--help, or VGT_EXIT_USAGE after printing "vgt VERB: ..." on stderr. */
int vgt_cli_parse(const vgt_cli_spec *spec, int argc, char **argv, void *opts, vgt_cli_args *args);
/* 1 when the option with this long name was given. */
int vgt_cli_given(const vgt_cli_spec *spec, const vgt_cli_args *args, const char *name);
/* The usage text made from the table: synopsis, about, options, notes. */
void vgt_cli_usage(const vgt_cli_spec *spec, FILE *f);

/* A window of a trace given on the command line (--submits, dump's --seq) must name items the trace has:
 * A and, when given, B below n. Else prints "vgt VERB: --OPTION W is outside the trace: it has N NOUN
 * (0..N-1)" and returns VGT_EXIT_USAGE; 0 when inside or when the window is everything (0..). */
int vgt_cli_window_check(const char *verb, const char *option, const vgt_range *w, uint64_t n, const char *noun);

/* ---- generated documentation (the hidden modes of the `vgt` executable) ---- */
typedef struct vgt_cli_verb {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
    const vgt_cli_spec *spec;
} vgt_cli_verb;

void vgt_cli_man_verb(FILE *f, const vgt_cli_verb *v);                         /* vgt-VERB.1 */
void vgt_cli_man_main(FILE *f, const vgt_cli_verb *verbs, size_t n);           /* vgt.1 */
void vgt_cli_bash_completion(FILE *f, const vgt_cli_verb *verbs, size_t n);
void vgt_cli_zsh_completion(FILE *f, const vgt_cli_verb *verbs, size_t n);
void vgt_cli_list_options(FILE *f, const vgt_cli_spec *spec);                  /* one "--name" a line */

/* ---- files ---- */

/* True when out names the file in already exists as (same device and inode: also through another path
 * or a hard link). A verb that reads in and writes out checks this first: opening out for writing
 * truncates it, which would destroy the input before it is read. */
int vgt_cli_same_file(const char *in, const char *out);
/* Tests only (cli/fault.c): install the fault-injecting I/O table VGT_TEST_FAULT describes. 0, or -1
 * after printing why the variable is malformed. */
int vgt_cli_fault_setup(void);

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
 * A verb that reads its trace more than once (or seeks in it) and is given "-" (or a FIFO or device,
 * which read once too: kept the same way): standard input is
 * copied to an unlinked temporary file (removed by the system whatever happens), and *path becomes a name
 * that opens it ("/proc/self/fd/N"); a regular file on standard input is used as it is. Other paths are
 * left alone. 0, or prints "vgt VERB: ..." and returns VGT_EXIT_USAGE. buf holds the new name. */
int vgt_cli_seekable_input(const char *verb, const char **path, char *buf, size_t cap);
/* --follow on a verb that reads its trace more than once (timeline, report): the file is followed as it
 * grows until its trailer, then every pass reads the finished file (the result is the file's). Call it
 * after vgt_cli_seekable_input (a stream has been kept whole by then: nothing to wait for). 0, or prints
 * "vgt VERB: ..." and returns the exit code when the file cannot be opened. */
int vgt_cli_follow_to_end(const char *verb, const char *path);

/* ---- progress: one line on stderr while long work runs (progress.c) ----
 * "vgt db: 1.2 MiB / 3.0 MiB (40%), 0.8 MiB/s, 0:02 left": bytes of the input done (a record's
 * chunk_offset is a good measure) or a count of units ("records", "traces"). Only when stderr is a
 * terminal and quiet is 0; it appears once the work has lasted VGT_PROGRESS_DELAY_MS (environment,
 * default 500), is redrawn at most ten times a second, and is erased by vgt_progress_end. A total of 0
 * (a pipe, a count not known ahead) shows what is done and the rate, without time left.
 *
 *     vgt_progress p;
 *     vgt_progress_begin_file(&p, "db", path, o.quiet);   // total: the file's size
 *     ... vgt_progress_set(&p, rec->chunk_offset); ...     // cheap: a clock read, a draw now and then
 *     vgt_progress_end(&p);                                // before printing the result */
typedef struct vgt_progress {
    const char *verb, *unit;   /* unit NULL or "": bytes */
    uint64_t total, done;
    uint64_t t0, last_draw, delay;
    int on, shown;
} vgt_progress;
void vgt_progress_begin(vgt_progress *p, const char *verb, const char *unit, uint64_t total, int quiet);
void vgt_progress_begin_file(vgt_progress *p, const char *verb, const char *path, int quiet);
void vgt_progress_set(vgt_progress *p, uint64_t done);
void vgt_progress_add(vgt_progress *p, uint64_t n);
void vgt_progress_end(vgt_progress *p);
/* Erase the line before printing something else on the terminal (it comes back with the next update). */
void vgt_progress_clear(vgt_progress *p);
/* The --quiet option of verbs that have no other use for it. */
#define VGT_OPT_QUIET(type, field) \
    {"quiet", 'q', VGT_ARG_NONE, NULL, "no progress line on a terminal", .off = offsetof(type, field)}

#ifdef __cplusplus
}
#endif
#endif
