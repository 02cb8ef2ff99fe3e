/* verify.c: `vgt verify TRACE [--salvage OUT]`: every check the format allows (header, chunk headers,
 * checksums, decompression, sequence continuity, record structure, record padding, trailer agreement),
 * stopping at the first problem and naming its byte offset. --salvage writes the records before the
 * problem as a new, valid trace with an index. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "verb_open.h"
#include "vgt/cli.h"
#include "vgt/cuda.h"
#include "vgt/gp_check.h"

#define VERIFY_GP_EVENTS 16u   /* ring events listed; the rest are counted */

typedef struct verify_opts {
    const char *salvage;
    int quiet, json, follow, image_files;
} verify_opts;

static const vgt_cli_opt verify_options[] = {
    {"salvage", 0, VGT_ARG_PATH, "OUT", "write every complete record before the first problem (all of them when there "
     "is no problem) to OUT, a new valid trace with an index ('-': standard output, the report then goes to stderr)",
     .off = offsetof(verify_opts, salvage)},
    {"quiet", 'q', VGT_ARG_NONE, NULL, "print nothing when the trace is valid", .off = offsetof(verify_opts, quiet)},
    {"json", 0, VGT_ARG_NONE, NULL, "one JSON object on stdout: ok, records, chunks, submissions, has_trailer, "
     "valid_end, problem {code, offset, message} or null, salvaged (records) or null, gp_event_count and gp_events "
     "(ring wraps and GETs past PUT, the first 16)", .off = offsetof(verify_opts, json)},
    {"image-files", 0, VGT_ARG_NONE, NULL, "also read the file of every CUDA image the trace references by file "
     "(CUDA_IMAGE_REF) and check that its bytes at the recorded offset hash to the recorded hash: a changed file is "
     "a problem (exit 1), an absent one a note", .off = offsetof(verify_opts, image_files)},
    VGT_OPT_FOLLOW(verify_opts, follow),
    {0}};

const vgt_cli_spec cmd_verify_spec = {
    .verb = "verify", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = verify_options,
    .about = "Check a trace completely: file header and identity, every chunk header, payload and records checksum, "
             "decompression, sequence continuity, the structure of every record payload (and zero padding), and "
             "that the trailer's index agrees with the chunks. Stops at the first problem and names its byte offset. "
             "TRACE may be '-' (a stream on stdin), a FIFO, or a file still being written (--follow).",
    .notes = "GP_GET reads the trace holds (at doorbells, at the end of the capture) are checked per channel: a ring wrap or "
             "a GP_GET beyond the last recorded GP_PUT prints a 'note:' line (they leave the exit status alone). "
             "exit: 0 valid, 1 a problem was found, 2 usage or I/O error",
};

struct verify_state {
    const char *path;
    int json;
    uint64_t records, submits, chunks, last_chunk;
    vgt_writer *salvage;
    const char *salvage_path;
    FILE *report;   /* stdout, or stderr when the salvaged trace goes to stdout */
    vgt_gp_check *gp;   /* ring events: reported as notes, not problems (the trace is well formed) */
    vgt_gp_event gp_ev[VERIFY_GP_EVENTS];
    uint64_t gp_events;
    int image_files;                       /* --image-files */
    uint64_t image_refs, images_absent, images_changed;
    char image_notes[VERIFY_GP_EVENTS][512];
    uint64_t nimage_notes;
};

static int report_problem(const struct verify_state *s, const vgt_error *e)
{
    if (e->offset != VGT_NO_OFFSET)
        fprintf(stderr, "vgt verify: %s: problem at offset %" PRIu64 ": %s\n", s->path, e->offset, e->msg);
    else
        fprintf(stderr, "vgt verify: %s: problem: %s\n", s->path, e->msg);
    return VGT_EXIT_PROBLEM;
}

/* Payload structure (known types) and zero record padding. */
static vgt_status check_record(const vgt_record *rec, vgt_error *e)
{
    if (!rec->fields_checked && vgt_rec_type_name(rec->type)) VGT_TRY(vgt_record_fields(rec, NULL, NULL, e));
    for (uint32_t i = rec->length; i % 8; i++)
        if (rec->payload[i])
            return VGT_FAIL(e, VGT_E_FORMAT, rec->chunk_offset,
                            "record seq %" PRIu64 " (in the chunk at offset %" PRIu64 "): non-zero padding byte after "
                            "its %u-byte payload", rec->seq, rec->chunk_offset, rec->length);
    return VGT_OK;
}

static int open_salvage(struct verify_state *s, vgt_reader *r)
{
    const vgt_trace_info *in = vgt_reader_info(r);
    vgt_writer_options o = vgt_writer_defaults();
    o.placement = VGT_PLACE_KEEP_PREFIX;   /* a failed write still puts the records salvaged so far in place */
    vgt_error e;
    if (vgt_writer_open_path(&s->salvage, s->salvage_path, &o, in->identity, in->identity_count, &e) != VGT_OK)
        return vgt_cli_report("verify", &e);
    return 0;
}

static int close_salvage(struct verify_state *s)
{
    vgt_error e;
    if (!s->salvage) return 0;
    vgt_status rc = vgt_writer_close(s->salvage, &e);
    s->salvage = NULL;
    if (rc != VGT_OK) return vgt_cli_report("verify", &e);
    if (s->json) return 0;
    const char *into = strcmp(s->salvage_path, "-") ? s->salvage_path : "standard output";
    if (s->records) fprintf(s->report, "salvaged %" PRIu64 " records (seq 0..%" PRIu64 ") into %s\n", s->records, s->records - 1, into);
    else fprintf(s->report, "salvaged 0 records into %s (a valid trace with the identity only)\n", into);
    return 0;
}

static int write_salvage(struct verify_state *s, const vgt_record *rec)
{
    vgt_error e;
    if (!s->salvage) return 0;
    if (vgt_write_record(s->salvage, rec->type, rec->flags, rec->ts, rec->payload, rec->length, NULL, &e) == VGT_OK) return 0;
    vgt_error ce;
    vgt_writer_close(s->salvage, &ce);   /* KEEP_PREFIX: the chunks written before the failure go in place */
    s->salvage = NULL;
    return vgt_cli_report("verify", &e);
}

static void print_json(const struct verify_state *s, const vgt_error *problem, int has_trailer, uint64_t valid_end)
{
    printf("{\"trace\":");
    vgt_json_string(stdout, s->path);
    printf(",\"ok\":%s,\"records\":%" PRIu64 ",\"chunks\":%" PRIu64 ",\"submissions\":%" PRIu64
           ",\"has_trailer\":%s,\"valid_end\":%" PRIu64 ",\"problem\":",
           problem ? "false" : "true", s->records, s->chunks, s->submits, has_trailer ? "true" : "false", valid_end);
    if (problem) {
        printf("{\"code\":\"%s\",\"offset\":", vgt_status_name(problem->code));
        if (problem->offset == VGT_NO_OFFSET) printf("null");
        else printf("%" PRIu64, problem->offset);
        printf(",\"message\":");
        vgt_json_string(stdout, problem->msg);
        printf("}");
    } else {
        printf("null");
    }
    if (s->salvage_path) printf(",\"salvaged\":%" PRIu64, s->records);
    else printf(",\"salvaged\":null");
    printf(",\"gp_event_count\":%" PRIu64 ",\"gp_events\":[", s->gp_events);
    for (uint64_t i = 0; i < s->gp_events && i < VERIFY_GP_EVENTS; i++) {
        char obj[320];
        vgt_gp_event_json(&s->gp_ev[i], obj, sizeof obj);
        printf("%s%s", i ? "," : "", obj);
    }
    printf("]}\n");
}

/* GP_GET ring events (a ring wrap, a GET past the last recorded PUT): facts about the GPU's progress that
 * the trace records, not defects of the file, so they are notes and leave the exit status alone. */
static void print_gp_notes(const struct verify_state *s)
{
    for (uint64_t i = 0; i < s->gp_events && i < VERIFY_GP_EVENTS; i++) {
        char line[320];
        vgt_gp_event_text(&s->gp_ev[i], line, sizeof line);
        fprintf(s->report, "note: %s\n", line);
    }
    if (s->gp_events > VERIFY_GP_EVENTS)
        fprintf(s->report, "note: ... %" PRIu64 " more ring events\n", s->gp_events - VERIFY_GP_EVENTS);
}

/* A CUDA image referenced by file (format 1.5): with --image-files, its file read and checked. The trace
 * is well formed either way; an absent file is a note, a changed one a problem of what the trace names. */
static void image_note(struct verify_state *s, const char *msg, const char *tail)
{
    if (s->nimage_notes < VERIFY_GP_EVENTS)
        snprintf(s->image_notes[s->nimage_notes], sizeof s->image_notes[0], "%.440s%s", msg, tail);
    s->nimage_notes++;
}

static void check_image_file(struct verify_state *s, const vgt_record *rec)
{
    s->image_refs++;
    vgt_rec_cuda_image_ref im;
    vgt_error e;
    if (!s->image_files || vgt_decode_cuda_image_ref(rec, &im, &e) != VGT_OK) return;
    vgt_status rc = vgt_cuda_image_ref_load(&im, NULL, &e);
    if (rc == VGT_OK) return;
    if (rc == VGT_E_NOT_FOUND) s->images_absent++, image_note(s, e.msg, " (absent here: not checked)");
    else s->images_changed++, image_note(s, e.msg, "");
}

static void print_image_notes(const struct verify_state *s)
{
    if (!s->image_refs) return;
    if (!s->image_files) {
        fprintf(s->report, "note: %" PRIu64 " CUDA image%s referenced by file, not stored (--image-files checks the "
                "files)\n", s->image_refs, s->image_refs > 1 ? "s" : "");
        return;
    }
    fprintf(s->report, "note: %" PRIu64 " CUDA image%s referenced by file: %" PRIu64 " checked against their files, %"
            PRIu64 " absent, %" PRIu64 " changed\n", s->image_refs, s->image_refs > 1 ? "s" : "",
            s->image_refs - s->images_absent - s->images_changed, s->images_absent, s->images_changed);
    for (uint64_t i = 0; i < s->nimage_notes && i < VERIFY_GP_EVENTS; i++)
        fprintf(s->report, "note: %s\n", s->image_notes[i]);
}

static int walk(struct verify_state *s, vgt_reader *r, int quiet)
{
    vgt_record rec;
    vgt_error e;
    vgt_status st;
    int rc;
    while ((st = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
        if ((st = check_record(&rec, &e)) != VGT_OK) break;
        if ((rc = write_salvage(s, &rec))) return rc;
        if (s->records++ == 0 || rec.chunk_offset != s->last_chunk) s->chunks++, s->last_chunk = rec.chunk_offset;
        s->submits += rec.type == VGT_REC_GPFIFO_SUBMIT;
        vgt_gp_event ev[VGT_GP_MAX_EVENTS];
        int nev = 0;
        if (s->gp) vgt_gp_check_feed(s->gp, &rec, ev, &nev, &e);   /* check_record accepted its structure */
        for (int i = 0; i < nev; i++, s->gp_events++)
            if (s->gp_events < VERIFY_GP_EVENTS) s->gp_ev[s->gp_events] = ev[i];
        if (rec.type == VGT_REC_CUDA_IMAGE_REF) check_image_file(s, &rec);
    }
    int has_trailer = 0;
    if (st == VGT_E_EOF) st = vgt_reader_trailer_check(r, &has_trailer, &e);
    int problem = st != VGT_OK;
    /* whole valid chunks end before the chunk that holds a bad record */
    uint64_t valid_end = vgt_reader_valid_end(r);
    if (problem && e.offset < valid_end) valid_end = e.offset;
    if (problem) report_problem(s, &e);
    if ((rc = close_salvage(s))) return rc;
    if (s->json) {
        print_json(s, problem ? &e : NULL, has_trailer, valid_end);
        return !problem ? VGT_EXIT_OK : e.code == VGT_E_IO || e.code == VGT_E_NOMEM ? VGT_EXIT_USAGE : VGT_EXIT_PROBLEM;
    }
    if (problem) {
        fprintf(s->report, "valid prefix: %" PRIu64 " records (whole chunks end at byte %" PRIu64 ")\n", s->records, valid_end);
        return e.code == VGT_E_IO || e.code == VGT_E_NOMEM ? VGT_EXIT_USAGE : VGT_EXIT_PROBLEM;
    }
    if (!quiet) print_gp_notes(s);
    if (!quiet) print_image_notes(s);
    if (s->images_changed) {
        fprintf(stderr, "vgt verify: %s: %" PRIu64 " CUDA image file%s changed since the capture (a cuda-lane replay "
                "refuses %s)\n", s->path, s->images_changed, s->images_changed > 1 ? "s" : "",
                s->images_changed > 1 ? "them" : "it");
        return VGT_EXIT_PROBLEM;
    }
    if (!quiet)
        fprintf(s->report, "ok: %s: %" PRIu64 " records, %" PRIu64 " chunks, %" PRIu64 " submissions, %s\n", s->path, s->records, s->chunks,
               s->submits, has_trailer ? "index agrees with every chunk" : "no trailer (a stream or an interrupted capture)");
    return VGT_EXIT_OK;
}

int cmd_verify(int argc, char **argv)
{
    verify_opts vo = {0};
    vgt_cli_args a;
    int prc = vgt_cli_parse(&cmd_verify_spec, argc, argv, &vo, &a);
    if (prc >= 0) return prc;
    struct verify_state s = {0};
    int quiet = vo.quiet;
    s.json = vo.json;
    s.salvage_path = vo.salvage;
    s.path = a.pos[0];
    s.report = stdout;
    s.image_files = vo.image_files;
    if (s.salvage_path && !strcmp(s.salvage_path, "-")) {
        if (s.json) return vgt_cli_error("verify", VGT_EXIT_USAGE, "--json and --salvage - would both write to standard output");
        s.report = stderr;
    }
    if (s.salvage_path && vgt_cli_same_file(s.path, s.salvage_path))
        return vgt_cli_error("verify", VGT_EXIT_USAGE, "--salvage '%s' is the trace being verified: writing it would "
                             "destroy the trace before it is read; salvage into another file", s.salvage_path);
    vgt_reader *r;
    vgt_error e;
    vgt_reader_options o = {.streaming = vo.follow, .verify_checksums = 1, .follow = vo.follow};
    vgt_status st = !strcmp(s.path, "-") ? vgt_reader_open_fd(&r, STDIN_FILENO, 0, &o, &e) : vgt_reader_open_path(&r, s.path, &o, &e);
    if (st != VGT_OK) {
        if (st == VGT_E_IO || st == VGT_E_NOMEM || st == VGT_E_ARG) return vgt_cli_report("verify", &e);
        report_problem(&s, &e);
        if (s.salvage_path) fprintf(stderr, "vgt verify: nothing to salvage: the file header is not valid\n");
        s.salvage_path = NULL;
        if (s.json) print_json(&s, &e, 0, 0);
        return VGT_EXIT_PROBLEM;
    }
    int rc = s.salvage_path ? open_salvage(&s, r) : 0;
    if (!rc && vgt_gp_check_open(&s.gp, &e) != VGT_OK) s.gp = NULL;   /* out of memory: no ring notes */
    if (!rc) rc = walk(&s, r, quiet);
    vgt_gp_check_close(s.gp);
    vgt_reader_close(r);
    return rc;
}
