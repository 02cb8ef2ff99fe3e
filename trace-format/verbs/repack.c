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

static const char usage_text[] =
    "usage: vgt repack IN OUT [--level N] [--chunk-size BYTES] [--threads N] [--stored]\n"
    "\n"
    "Rewrite a trace: the same identity and records (types, flags, timestamps, sequence numbers) in new\n"
    "chunks, with a new index and footer. IN may be '-' (a stream on stdin), OUT '-' (standard output;\n"
    "the summary then goes to stderr). OUT is replaced only once complete; a device or FIFO is written to.\n"
    "\n"
    "  --level N          zstd level (default 3; negative levels are faster)\n"
    "  --chunk-size BYTES bytes of records per chunk (default 2 MiB; 4 KiB to 64 MiB; suffixes K and M)\n"
    "  --threads N        zstd worker threads (default 0: compress in the calling thread)\n"
    "  --stored           no compression\n"
    "\n"
    "exit: 0 ok, 1 IN has a problem (OUT is left as it was), 2 usage or I/O error\n";

/* A chunk size in [4 KiB, 64 MiB] (the writer's range), with the suffixes of vgt_parse_size. */
static int parse_chunk_size(const char *s, uint32_t *out)
{
    uint64_t v;
    if (vgt_parse_size(s, &v) || v > VGT_MAX_CHUNK_RECORDS_BYTES || v < 4096) return -1;
    *out = (uint32_t)v;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

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
    if (vgt_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return VGT_EXIT_OK;
    }
    const char *in = NULL, *out = NULL;
    vgt_writer_options o = vgt_writer_defaults();
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "--stored")) o.codec = VGT_CODEC_STORED;
        else if ((v = vgt_verb_opt(argc, argv, &i, "--level"))) {
            if (parse_int(v, -131072, 22, &o.zstd_level)) return vgt_cli_error("repack", VGT_EXIT_USAGE, "bad level '%s'", v);
        } else if ((v = vgt_verb_opt(argc, argv, &i, "--chunk-size"))) {
            if (parse_chunk_size(v, &o.chunk_target))
                return vgt_cli_error("repack", VGT_EXIT_USAGE, "bad chunk size '%s' (4K to 64M)", v);
        } else if ((v = vgt_verb_opt(argc, argv, &i, "--threads"))) {
            if (parse_int(v, 0, 256, &o.zstd_threads)) return vgt_cli_error("repack", VGT_EXIT_USAGE, "bad thread count '%s'", v);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return vgt_cli_error("repack", VGT_EXIT_USAGE, "unknown option '%s'", argv[i]);
        } else if (!in) in = argv[i];
        else if (!out) out = argv[i];
        else return vgt_cli_error("repack", VGT_EXIT_USAGE, "extra argument '%s'", argv[i]);
    }
    if (!in || !out) return vgt_cli_error("repack", VGT_EXIT_USAGE, "need IN and OUT (see vgt repack --help)");
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
    while ((st = vgt_reader_next(r, &rec, &e)) == VGT_OK) {
        if ((st = vgt_write_record(w, rec.type, rec.flags, rec.ts, rec.payload, rec.length, NULL, &e)) != VGT_OK) break;
        n++;
    }
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
