/* repack.c: `vgt repack IN OUT [--level N] [--chunk-size BYTES] [--threads N] [--stored]`: rewrite every
 * record into new chunks (another zstd level, chunk size or codec) and a fresh index. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "verb_open.h"
#include "vgt/cli.h"

typedef struct repack_opts {
    int level, threads, stored, quiet;
    uint64_t chunk_size;
} repack_opts;

static const vgt_cli_opt repack_options[] = {
    {"level", 0, VGT_ARG_INT, "N", "zstd level (default 3; negative levels are faster)", .off = offsetof(repack_opts, level),
     .min = -131072, .max = 22},
    {"chunk-size", 0, VGT_ARG_SIZE, "BYTES", "bytes of records per chunk (default 2 MiB; 4 KiB to 64 MiB; suffixes K and M)",
     .off = offsetof(repack_opts, chunk_size), .min = 4096, .max = VGT_MAX_CHUNK_RECORDS_BYTES, .what = "chunk size"},
    {"threads", 0, VGT_ARG_INT, "N", "zstd worker threads (default 0: compress in the calling thread)",
     .off = offsetof(repack_opts, threads), .min = 0, .max = 256, .what = "thread count"},
    {"stored", 0, VGT_ARG_NONE, NULL, "no compression", .off = offsetof(repack_opts, stored)},
    VGT_OPT_QUIET(repack_opts, quiet),
    {0}};

const vgt_cli_spec cmd_repack_spec = {
    .verb = "repack", .args = "IN OUT", .min_args = 2, .max_args = 2, .opts = repack_options,
    .about = "Rewrite a trace: the same identity and records (types, flags, timestamps, sequence numbers) in new "
             "chunks, with a new index and footer. IN may be '-' (a stream on stdin), OUT '-' (standard output; "
             "the summary then goes to stderr). OUT is replaced only once complete; a device or FIFO is written to.",
    .notes = "exit: 0 ok, 1 IN has a problem (OUT is left as it was), 2 usage or I/O error",
};

static uint64_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int cmd_repack(int argc, char **argv)
{
    vgt_writer_options o = vgt_writer_defaults();
    repack_opts ro = {.level = o.zstd_level, .threads = o.zstd_threads, .chunk_size = o.chunk_target};
    vgt_cli_args a;
    int prc = vgt_cli_parse(&cmd_repack_spec, argc, argv, &ro, &a);
    if (prc >= 0) return prc;
    const char *in = a.pos[0], *out = a.pos[1];
    o.zstd_level = ro.level;
    o.zstd_threads = ro.threads;
    o.chunk_target = (uint32_t)ro.chunk_size;
    if (ro.stored) o.codec = VGT_CODEC_STORED;
    if (vgt_cli_same_file(in, out))
        return vgt_cli_error("repack", VGT_EXIT_USAGE, "OUT '%s' is the input file itself: writing it would destroy IN "
                             "before it is read; repack into another file", out);
    vgt_reader *r;
    int rc = vgt_verb_open("repack", in, 0, &r);
    if (rc) return rc;
    const vgt_trace_info *info = vgt_reader_info(r);
    vgt_writer *w;
    vgt_error e;
    if (vgt_writer_open_path(&w, out, &o, info->identity, info->identity_count, &e) != VGT_OK) {
        vgt_reader_close(r);
        return vgt_cli_report("repack", &e);
    }
    vgt_record rec;
    vgt_status st;
    uint64_t n = 0;
    vgt_progress p;
    vgt_progress_begin_file(&p, "repack", in, ro.quiet);
    while ((st = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
        if ((st = vgt_write_record(w, rec.type, rec.flags, rec.ts, rec.payload, rec.length, NULL, &e)) != VGT_OK) break;
        n++;
        vgt_progress_set(&p, rec.chunk_offset);
    }
    vgt_progress_end(&p);
    vgt_reader_close(r);
    if (st != VGT_E_EOF) {   /* IN is broken: OUT stays as it was */
        vgt_writer_discard(w);
        return vgt_cli_report("repack", &e);
    }
    vgt_error ce;
    if (vgt_writer_close(w, &ce) != VGT_OK) return vgt_cli_report("repack", &ce);
    if (!strcmp(out, "-"))
        fprintf(stderr, "repacked %" PRIu64 " records to standard output\n", n);
    else if (!is_regular(out))   /* a device or FIFO: no size to compare */
        printf("repacked %" PRIu64 " records to %s\n", n, out);
    else
        printf("repacked %" PRIu64 " records: %" PRIu64 " -> %" PRIu64 " bytes\n", n, size_of(in), size_of(out));
    return VGT_EXIT_OK;
}
