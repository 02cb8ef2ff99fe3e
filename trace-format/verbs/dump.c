/* dump.c: `vgt dump TRACE [--jsonl] [--seq A..B] [--type T[,T...]]`: one line per record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump_record.h"
#include "verb_open.h"
#include "vgt/cli.h"

static const char usage_text[] =
    "usage: vgt dump TRACE [--jsonl] [--seq A..B] [--type T[,T...]] [--follow]\n"
    "\n"
    "Print one line per record: sequence number, timestamp (ns), type, and the decoded payload fields.\n"
    "Blobs show as <length>B:<hex of the first 16 bytes> in text and in full hex with --jsonl.\n"
    "TRACE may be '-' to read a stream from standard input.\n"
    "\n"
    "  --jsonl        one JSON object per line: seq, ts, type, type_id, flags, length, chunk_offset, fields\n"
    "  --seq A..B     only records A to B (inclusive; 'A..' to the end, '..B' from the start, 'N' one record)\n"
    "  --type T,...   only records of these types (names such as GPFIFO_SUBMIT, any case, or numbers)\n"
    "  --follow       TRACE is still being written: print each chunk's records as soon as the writer flushes\n"
    "                 it, until the trailer (the writer closed) or an interrupt\n"
    "\n"
    "exit: 0 ok, 1 the trace has a problem (printed after the records before it), 2 usage or I/O error\n";

#define MAX_TYPES 64
#define FOLLOW_POLL_NS 50000000L   /* 50 ms between looks at a followed file */

struct dump_opts {
    const char *path;
    int jsonl, follow;
    vgt_range seq;
    int ntypes;
    int types[MAX_TYPES];
};

static int parse_types(const char *s, struct dump_opts *o)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int v = vgt_rec_type_from_name(t);
        if (v < 0) return vgt_cli_error("dump", VGT_EXIT_USAGE, "unknown record type '%s'", t);
        if (o->ntypes == MAX_TYPES) return vgt_cli_error("dump", VGT_EXIT_USAGE, "more than %d types", MAX_TYPES);
        o->types[o->ntypes++] = v;
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct dump_opts *o)
{
    o->seq = (vgt_range){0, UINT64_MAX};
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--jsonl")) o->jsonl = 1;
        else if (!strcmp(argv[i], "--follow")) o->follow = 1;
        else if ((v = vgt_verb_opt(argc, argv, &i, "--seq"))) {
            if (vgt_parse_range(v, &o->seq)) return vgt_cli_error("dump", VGT_EXIT_USAGE, "bad range '%s' (A..B)", v);
        } else if ((v = vgt_verb_opt(argc, argv, &i, "--type"))) {
            int rc = parse_types(v, o);
            if (rc) return rc;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return vgt_cli_error("dump", VGT_EXIT_USAGE, "unknown option '%s' (see vgt dump --help)", argv[i]);
        } else if (!o->path) {
            o->path = argv[i];
        } else {
            return vgt_cli_error("dump", VGT_EXIT_USAGE, "one trace only ('%s' is extra)", argv[i]);
        }
    }
    if (!o->path) return vgt_cli_error("dump", VGT_EXIT_USAGE, "no trace given (see vgt dump --help)");
    return 0;
}

static int wanted(const struct dump_opts *o, const vgt_record *r)
{
    if (!o->ntypes) return 1;
    for (int i = 0; i < o->ntypes; i++)
        if (o->types[i] == r->type) return 1;
    return 0;
}

/* A live reader's output goes out when a chunk's last record is printed: a pipe downstream of
 * `vgt record -o - | vgt dump -` sees each chunk as the writer flushes it, not when a stdio buffer fills. */
static void flush_at_chunk_end(const vgt_reader *r, const vgt_record *rec)
{
    vgt_chunk_info c;
    if (vgt_reader_current_chunk(r, &c, NULL) != VGT_OK || rec->seq + 1 == c.first_seq + c.record_count)
        vgt_cli_flush(stdout);
}

int cmd_dump(int argc, char **argv)
{
    if (vgt_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return VGT_EXIT_OK;
    }
    struct dump_opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc;
    vgt_reader *r;
    if ((rc = vgt_verb_open("dump", o.path, o.follow, &r))) return rc;
    vgt_error e;
    /* A file can start at A through the index (or a scan); a stream reads up to it. */
    if (o.seq.first > 0 && !o.follow && vgt_reader_info(r)->file_size && vgt_reader_seek_seq(r, o.seq.first, &e) != VGT_OK) {
        vgt_reader_close(r);
        if (e.code == VGT_E_NOT_FOUND) return VGT_EXIT_OK;   /* nothing in range */
        return vgt_cli_report("dump", &e);
    }
    vgt_record rec;
    vgt_status st;
    uint64_t malformed = 0, first_bad = 0;
    const int live = o.follow || !vgt_reader_info(r)->file_size;   /* a stream or a followed file */
    for (;;) {
        st = vgt_reader_next(r, &rec, &e);
        if (st == VGT_E_EOF && o.follow && !vgt_reader_at_end(r)) {   /* the writer has not flushed more yet */
            if (vgt_cli_flush(stdout)) break;   /* nobody reads any more */
            nanosleep(&(struct timespec){0, FOLLOW_POLL_NS}, NULL);
            continue;
        }
        if (st != VGT_OK) break;
        if (rec.seq > o.seq.last) break;
        if (rec.seq < o.seq.first || !wanted(&o, &rec)) continue;
        int bad = o.jsonl ? vgt_dump_record_json(stdout, &rec) : vgt_dump_record_text(stdout, &rec);
        if (bad && !malformed++) first_bad = rec.seq;
        if (live) flush_at_chunk_end(r, &rec);
        if (vgt_cli_out_failed(stdout)) break;   /* stop early: the output is lost anyway */
    }
    vgt_reader_close(r);
    if (vgt_cli_flush(stdout)) return vgt_cli_check_output("dump", stdout, "standard output", VGT_EXIT_USAGE);
    if (st != VGT_OK && st != VGT_E_EOF) return vgt_cli_report("dump", &e);
    if (malformed)
        return vgt_cli_error("dump", VGT_EXIT_PROBLEM, "%llu records did not decode (the first is seq %llu)",
                             (unsigned long long)malformed, (unsigned long long)first_bad);
    return VGT_EXIT_OK;
}
