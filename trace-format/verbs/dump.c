/* dump.c: `vgt dump TRACE [--jsonl] [--seq A..B] [--type T[,T...]]`: one line per record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dump_record.h"
#include "verb_open.h"
#include "vgt/cli.h"


#define MAX_TYPES 64
#define FOLLOW_POLL_NS 50000000L   /* 50 ms between looks at a followed file */

struct dump_opts {
    const char *path;
    int jsonl, follow;
    vgt_range seq;
    int ntypes;
    int types[MAX_TYPES];
};

static int parse_types(void *opts, const char *s)
{
    struct dump_opts *o = opts;
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

static const vgt_cli_opt dump_options[] = {
    {"jsonl", 0, VGT_ARG_NONE, NULL, "one JSON object per line: seq, ts, type, type_id, flags, length, chunk_offset, fields",
     .off = offsetof(struct dump_opts, jsonl)},
    {"seq", 0, VGT_ARG_RANGE, "A..B", "only records A to B (inclusive; 'A..' to the end, '..B' from the start, 'N' one "
     "record); a window outside the trace is an error (exit 2)", .off = offsetof(struct dump_opts, seq)},
    {"type", 0, VGT_ARG_STRING, "T,...", "only records of these types (names such as GPFIFO_SUBMIT, any case, or numbers)",
     .apply = parse_types, .flags = VGT_OPT_REPEAT},
    {"follow", 0, VGT_ARG_NONE, NULL, "TRACE is still being written: print each chunk's records as soon as the writer "
     "flushes it, until the trailer (the writer closed) or an interrupt", .off = offsetof(struct dump_opts, follow)},
    {0}};

const vgt_cli_spec cmd_dump_spec = {
    .verb = "dump", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = dump_options,
    .about = "Print one line per record: sequence number, timestamp (ns), type, and the decoded payload fields. "
             "Blobs show as <length>B:<hex of the first 16 bytes> in text and in full hex with --jsonl. "
             "TRACE may be '-' to read a stream from standard input.",
    .notes = "exit: 0 ok, 1 the trace has a problem (printed after the records before it), 2 usage or I/O error "
             "(also a --seq window outside the trace)",
};

/* The records of a trace file, from its chunk headers (read at open). */
static uint64_t record_total(vgt_reader *r)
{
    const vgt_chunk_info *chunks;
    uint32_t n;
    vgt_error e;
    uint64_t total = 0;
    if (vgt_reader_chunks(r, &chunks, &n, &e) != VGT_OK) return 0;
    for (uint32_t i = 0; i < n; i++) total += chunks[i].record_count;
    return total;
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

/* --follow on a file whose writer has not written its whole header yet (it may be empty): wait for it, as
 * for the chunks after it, until it is whole or turns out not to be a header (then the open says why). */
static void wait_for_header(const char *path)
{
    for (;;) {
        vgt_reader *r;
        vgt_error e;
        vgt_reader_options ro = {.streaming = 1, .verify_checksums = 1};
        if (vgt_reader_open_path(&r, path, &ro, &e) == VGT_OK) {
            vgt_reader_close(r);
            return;
        }
        if (e.code != VGT_E_TRUNCATED) return;
        nanosleep(&(struct timespec){0, FOLLOW_POLL_NS}, NULL);
    }
}

int cmd_dump(int argc, char **argv)
{
    struct dump_opts o = {.seq = VGT_RANGE_ALL};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_dump_spec, argc, argv, &o, &a);
    if (rc >= 0) return rc;
    o.path = a.pos[0];
    vgt_reader *r;
    if (o.follow && strcmp(o.path, "-")) wait_for_header(o.path);
    if ((rc = vgt_verb_open("dump", o.path, o.follow, &r))) return rc;
    vgt_error e;
    /* A file can start at A through the index (or a scan); a stream reads up to it. */
    if (o.seq.first > 0 && !o.follow && vgt_reader_info(r)->file_size && vgt_reader_seek_seq(r, o.seq.first, &e) != VGT_OK) {
        uint64_t total = e.code == VGT_E_NOT_FOUND ? record_total(r) : 0;
        vgt_reader_close(r);
        if (e.code == VGT_E_NOT_FOUND) return vgt_cli_window_check("dump", "--seq", &o.seq, total, "records");
        return vgt_cli_report("dump", &e);
    }
    vgt_record rec;
    vgt_status st;
    uint64_t malformed = 0, first_bad = 0, records = 0;   /* records: 1 + the last seq read */
    int past_window = 0;
    const int live = o.follow || !vgt_reader_info(r)->file_size;   /* a stream or a followed file */
    for (;;) {
        st = vgt_reader_next(r, &rec, &e);
        if (st == VGT_E_EOF && o.follow && !vgt_reader_at_end(r)) {   /* the writer has not flushed more yet */
            if (vgt_cli_flush(stdout)) break;   /* nobody reads any more */
            nanosleep(&(struct timespec){0, FOLLOW_POLL_NS}, NULL);
            continue;
        }
        if (st != VGT_OK) break;
        records = rec.seq + 1;
        if (rec.seq > o.seq.last) {
            past_window = 1;
            break;
        }
        if (rec.seq < o.seq.first || !wanted(&o, &rec)) continue;
        int bad = o.jsonl ? vgt_dump_record_json(stdout, &rec) : vgt_dump_record_text(stdout, &rec);
        if (bad && !malformed++) first_bad = rec.seq;
        if (live) flush_at_chunk_end(r, &rec);
        if (vgt_cli_out_failed(stdout)) break;   /* stop early: the output is lost anyway */
    }
    vgt_reader_close(r);
    if (vgt_cli_flush(stdout)) return vgt_cli_check_output("dump", stdout, "standard output", VGT_EXIT_USAGE);
    if (st != VGT_OK && st != VGT_E_EOF) return vgt_cli_report("dump", &e);
    if (!past_window && (rc = vgt_cli_window_check("dump", "--seq", &o.seq, records, "records"))) return rc;
    if (malformed)
        return vgt_cli_error("dump", VGT_EXIT_PROBLEM, "%llu records did not decode (the first is seq %llu)",
                             (unsigned long long)malformed, (unsigned long long)first_bad);
    return VGT_EXIT_OK;
}
