/* info.c: `vgt info TRACE [--json]`: identity, record counts by type, channels, submissions, GP_GET reads
 * and ring events (vgt/gp_check.h), chunks, bytes raw and compressed, ratio, time span. Reads the whole trace once (every chunk is checked). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump_record.h"
#include "verb_open.h"
#include "vgt/cli.h"
#include "vgt/nv_abi.h"
#include "vgt/cuda.h"
#include "vgt/gp_check.h"

typedef struct info_opts {
    int json, quick, follow;
} info_opts;

static const vgt_cli_opt info_options[] = {
    {"json", 0, VGT_ARG_NONE, NULL, "one JSON object instead of text", .off = offsetof(info_opts, json)},
    {"quick", 0, VGT_ARG_NONE, NULL, "from the index and the chunk headers only (no decompression): records, "
     "submissions, chunks, bytes, time span; no counts by type, no channels, payloads not checked",
     .off = offsetof(info_opts, quick)},
    VGT_OPT_FOLLOW(info_opts, follow),
    {0}};

const vgt_cli_spec cmd_info_spec = {
    .verb = "info", .args = "TRACE", .min_args = 1, .max_args = 1, .opts = info_options,
    .about = "Summarize a trace: format version, identity (producer, host, GPU, driver, command line...), record "
             "counts by type, channels (class, ring, token, submissions), submissions, chunks, bytes of records "
             "and of compressed chunks with their ratio, and the time span. TRACE may be '-' (a stream on stdin), a "
             "FIFO, or a file still being written (--follow): a stream that ends with its index reads as the file "
             "would.",
    .notes = "exit: 0 ok, 1 the trace has a problem (the summary covers the records before it), or its CUDA records "
             "are inconsistent (a call that put work on the GPU linked to no submission, a launch of a function never "
             "looked up, an image stored twice), 2 usage or I/O error",
};

#define MAX_CHANNELS 4096u
#define INFO_GP_EVENTS 8u   /* events listed; the rest are counted */

struct channel_info {
    uint32_t client, handle, cls, entries, token, has_token;
    uint64_t ring_va, submits;
};

struct stats {
    uint64_t *by_type;          /* 65536 counters */
    uint64_t records, submits, chunks, bytes_raw, bytes_comp, first_ts, last_ts, min_ts, max_ts;
    uint64_t last_chunk;
    struct channel_info ch[MAX_CHANNELS];
    uint32_t nch, ch_dropped;
    vgt_cuda_scan cuda;         /* the CUDA API records (format 1.2): counts and consistency */
    int cuda_bad;               /* a malformed CUDA record (its message in cuda_err) */
    vgt_error cuda_err;
    vgt_gp_check *gp;           /* GP_GET / GP_PUT forensics (vgt/gp_check.h) */
    vgt_gp_event gp_ev[INFO_GP_EVENTS];   /* the first events */
    uint64_t gp_events;
    int gp_bad;
};

static struct channel_info *find_channel(struct stats *s, uint32_t client, uint32_t handle)
{
    for (uint32_t i = 0; i < s->nch; i++)
        if (s->ch[i].handle == handle && (s->ch[i].client == client || !client)) return &s->ch[i];
    return NULL;
}

static void note_token(struct stats *s, uint32_t client, uint32_t channel, uint32_t token)
{
    struct channel_info *c = find_channel(s, client, channel);
    if (c) c->token = token, c->has_token = 1;
}

static void count_record(struct stats *s, vgt_reader *r, const vgt_record *rec)
{
    vgt_error e;
    s->by_type[rec->type]++;
    vgt_gp_event ev[VGT_GP_MAX_EVENTS];
    int nev = 0;
    if (s->gp && !s->gp_bad && vgt_gp_check_feed(s->gp, rec, ev, &nev, &e) != VGT_OK) s->gp_bad = 1;
    for (int i = 0; i < nev; i++, s->gp_events++)
        if (s->gp_events < INFO_GP_EVENTS) s->gp_ev[s->gp_events] = ev[i];
    if (!s->cuda_bad && vgt_cuda_scan_record(&s->cuda, rec, &s->cuda_err) != VGT_OK) s->cuda_bad = 1;
    if (s->records++ == 0) s->first_ts = s->min_ts = s->max_ts = rec->ts;
    s->last_ts = rec->ts;
    if (rec->ts < s->min_ts) s->min_ts = rec->ts;
    if (rec->ts > s->max_ts) s->max_ts = rec->ts;
    if (s->chunks == 0 || rec->chunk_offset != s->last_chunk) {
        vgt_chunk_info ci;
        if (vgt_reader_current_chunk(r, &ci, &e) == VGT_OK) {
            s->chunks++;
            s->bytes_raw += ci.uncompressed_length;
            s->bytes_comp += ci.compressed_length + VGT_CHUNK_HEADER_SIZE;
        }
        s->last_chunk = rec->chunk_offset;
    }
    if (rec->type == VGT_REC_CHANNEL) {
        vgt_rec_channel c;
        if (vgt_decode_channel(rec, &c, &e) != VGT_OK) return;
        if (s->nch == MAX_CHANNELS) {
            s->ch_dropped++;
            return;
        }
        s->ch[s->nch++] = (struct channel_info){c.client, c.handle, c.cls, c.entries, 0, 0, c.ring_va, 0};
    } else if (rec->type == VGT_REC_WORK_SUBMIT_TOKEN) {
        vgt_rec_work_submit_token t;
        if (vgt_decode_work_submit_token(rec, &t, &e) == VGT_OK) note_token(s, t.client, t.channel, t.token);
    } else if (rec->type == VGT_REC_RM_CONTROL) {
        vgt_rec_rm_control c;
        if (vgt_decode_rm_control(rec, &c, &e) == VGT_OK && c.cmd == RM_CTRL_CHAN_GET_WORK_TOKEN && c.status == 0 &&
            c.params_length >= 4 && c.params_out) {
            struct channel_info *ch = find_channel(s, c.client, c.object);
            if (ch && !ch->has_token)
                note_token(s, c.client, c.object, (uint32_t)c.params_out[0] | (uint32_t)c.params_out[1] << 8 |
                                                      (uint32_t)c.params_out[2] << 16 | (uint32_t)c.params_out[3] << 24);
        }
    } else if (rec->type == VGT_REC_GPFIFO_SUBMIT) {
        s->submits++;
        if (rec->length >= 8) {   /* client and channel: the first two u32 of the payload */
            const uint8_t *p = rec->payload;
            uint32_t client = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
            uint32_t chan = p[4] | p[5] << 8 | p[6] << 16 | (uint32_t)p[7] << 24;
            struct channel_info *ch = find_channel(s, client, chan);
            if (ch) ch->submits++;
        }
    }
}

static void print_cuda_text(const vgt_cuda_scan *c);

/* GP_GET: how many doorbells read it, what the end of the capture read, and the ring events. */
static void print_gp_text(const struct stats *s)
{
    const vgt_gp_stats *g = vgt_gp_check_stats(s->gp);
    printf("gp_get:       read at %" PRIu64 " of %" PRIu64 " doorbells (%" PRIu64 " checked against a ring)", g->get_read,
           g->submits, g->get_checked);
    if (g->progress) printf("; at the end %" PRIu64 " channels, %" PRIu64 " fetched every entry", g->progress, g->fetched_all);
    printf("\n  ring wraps: PUT %" PRIu64 ", GET %" PRIu64 "; GET past PUT: %" PRIu64 "\n", g->put_wraps, g->get_wraps,
           g->get_past_put);
    for (uint64_t i = 0; i < s->gp_events && i < INFO_GP_EVENTS; i++) {
        char line[320];
        vgt_gp_event_text(&s->gp_ev[i], line, sizeof line);
        printf("  %s\n", line);
    }
    if (s->gp_events > INFO_GP_EVENTS) printf("  ... %" PRIu64 " more\n", s->gp_events - INFO_GP_EVENTS);
}

static void print_gp_json(const struct stats *s)
{
    const vgt_gp_stats *g = vgt_gp_check_stats(s->gp);
    printf(",\"gp\":{\"submissions\":%" PRIu64 ",\"get_read\":%" PRIu64 ",\"get_checked\":%" PRIu64
           ",\"progress\":%" PRIu64 ",\"fetched_all\":%" PRIu64 ",\"put_wraps\":%" PRIu64 ",\"get_wraps\":%" PRIu64
           ",\"get_past_put\":%" PRIu64 ",\"events\":[", g->submits, g->get_read, g->get_checked, g->progress,
           g->fetched_all, g->put_wraps, g->get_wraps, g->get_past_put);
    for (uint64_t i = 0; i < s->gp_events && i < INFO_GP_EVENTS; i++) {
        char obj[320];
        vgt_gp_event_json(&s->gp_ev[i], obj, sizeof obj);
        printf("%s%s", i ? "," : "", obj);
    }
    printf("]}");
}

/* What the reader knows of the container. A stream read to its end that closed with a trailer agreeing
 * with its chunks is the file it would have been: same index, same size (so `vgt info -` says what
 * `vgt info FILE` says). */
static vgt_trace_info container(vgt_reader *r, int read_all)
{
    vgt_trace_info in = *vgt_reader_info(r);
    int trailer = 0;
    if (!in.file_size && read_all && vgt_reader_at_end(r) && vgt_reader_trailer_check(r, &trailer, NULL) == VGT_OK &&
        trailer) {
        in.has_index = 1;
        in.file_size = vgt_reader_input_bytes(r);
    }
    return in;
}

static void print_text(const char *path, vgt_reader *r, const struct stats *s, int quick)
{
    const vgt_trace_info info = container(r, 1), *in = &info;
    printf("trace:        %s\n", path);
    printf("format:       %u.%u (header flags 0x%x)\n", in->major, in->minor, in->header_flags);
    if (in->file_size) printf("file size:    %" PRIu64 " bytes\n", in->file_size);
    printf("index:        %s\n", in->has_index ? "yes" : in->file_size ? "no (chunks found by a scan)" : "stream");
    printf("identity:\n");
    for (uint32_t i = 0; i < in->identity_count; i++) printf("  %-22s %s\n", in->identity[i].key, in->identity[i].value);
    printf("records:      %" PRIu64 "\n", s->records);
    for (uint32_t t = 0; t < 65536 && !quick; t++) {
        if (!s->by_type[t]) continue;
        const char *n = vgt_rec_type_name((uint16_t)t);
        if (n) printf("  %-22s %" PRIu64 "\n", n, s->by_type[t]);
        else printf("  type 0x%04x            %" PRIu64 "\n", t, s->by_type[t]);
    }
    if (!quick) printf("channels:     %u\n", s->nch + s->ch_dropped);
    for (uint32_t i = 0; i < s->nch; i++) {
        const struct channel_info *c = &s->ch[i];
        printf("  client 0x%08x handle 0x%08x class 0x%04x ring 0x%" PRIx64 " entries %u token ", c->client, c->handle, c->cls,
               c->ring_va, c->entries);
        if (c->has_token) printf("0x%x", c->token);
        else printf("-");
        printf(" submissions %" PRIu64 "\n", c->submits);
    }
    printf("submissions:  %" PRIu64 "\n", s->submits);
    if (!quick && s->gp) print_gp_text(s);
    if (!quick) print_cuda_text(&s->cuda);
    printf("chunks:       %" PRIu64 "\n", s->chunks);
    printf("bytes:        records %" PRIu64 ", compressed chunks %" PRIu64 " (ratio %.2fx)\n", s->bytes_raw, s->bytes_comp,
           s->bytes_comp ? (double)s->bytes_raw / (double)s->bytes_comp : 0.0);
    if (s->records)
        printf("time span:    %" PRIu64 " .. %" PRIu64 " ns (%.6f s)\n", s->min_ts, s->max_ts, (double)(s->max_ts - s->min_ts) / 1e9);
}

static void json_kv_u64(const char *k, uint64_t v, int comma) { printf("%s\"%s\":%" PRIu64, comma ? "," : "", k, v); }

/* The CUDA driver API section: what was called, how it links to the submissions, what is inconsistent. */
static void print_cuda_text(const vgt_cuda_scan *c)
{
    if (!vgt_cuda_scan_any(c)) return;
    printf("cuda:         images %" PRIu64 " (%" PRIu64 " bytes), loads %" PRIu64 ", functions %" PRIu64 ", launches %" PRIu64
           ", graph nodes %" PRIu64 ", graph launches %" PRIu64 ", memory operations %" PRIu64 ", other calls %" PRIu64 "\n",
           c->images, c->image_bytes, c->loads, c->functions, c->launches, c->graph_nodes, c->graph_launches,
           c->memory_ops, c->calls);
    if (c->ref_images)
        printf("  images referenced by file, not stored: %" PRIu64 " (%" PRIu64 " bytes; a replay reads them from the "
               "files, checked against their hashes)\n", c->ref_images, c->ref_bytes);
    if (c->legacy_modules || c->legacy_launches)
        printf("  format 1.0 records: %" PRIu64 " CUDA_MODULE, %" PRIu64 " CUDA_LAUNCH\n", c->legacy_modules, c->legacy_launches);
    printf("  calls that put work on the GPU linked to submissions: %" PRIu64 " of %" PRIu64 " (%" PRIu64 " deferred to the "
           "next submission)\n", c->work_linked, c->work_calls, c->work_deferred);
    if (!c->problems) {
        printf("  consistency: ok\n");
        return;
    }
    printf("  consistency: %" PRIu64 " problem%s\n", c->problems, c->problems > 1 ? "s" : "");
    for (uint64_t i = 0; i < c->problems && i < VGT_CUDA_SCAN_MAX_PROBLEMS; i++) printf("    %s\n", c->problem[i]);
    if (c->problems > VGT_CUDA_SCAN_MAX_PROBLEMS)
        printf("    ... %" PRIu64 " more\n", c->problems - VGT_CUDA_SCAN_MAX_PROBLEMS);
}

static void print_cuda_json(const vgt_cuda_scan *c)
{
    printf(",\"cuda\":");
    if (!vgt_cuda_scan_any(c)) {
        printf("null");
        return;
    }
    printf("{\"images\":%" PRIu64 ",\"image_bytes\":%" PRIu64 ",\"ref_images\":%" PRIu64 ",\"ref_image_bytes\":%" PRIu64
           ",\"loads\":%" PRIu64 ",\"functions\":%" PRIu64
           ",\"launches\":%" PRIu64 ",\"graph_nodes\":%" PRIu64 ",\"graph_launches\":%" PRIu64 ",\"memory_ops\":%" PRIu64
           ",\"calls\":%" PRIu64 ",\"legacy_modules\":%" PRIu64 ",\"legacy_launches\":%" PRIu64 ",\"work_calls\":%" PRIu64
           ",\"work_linked\":%" PRIu64 ",\"work_deferred\":%" PRIu64 ",\"by_api\":{",
           c->images, c->image_bytes, c->ref_images, c->ref_bytes, c->loads, c->functions, c->launches,
           c->graph_nodes, c->graph_launches, c->memory_ops, c->calls, c->legacy_modules, c->legacy_launches, c->work_calls, c->work_linked,
           c->work_deferred);
    int first = 1;
    for (uint32_t a = 0; a < VGT_CUDA_API_COUNT; a++) {
        if (!c->api_count[a]) continue;
        printf("%s\"%s\":%" PRIu64, first ? "" : ",", vgt_cuda_api_name(a), c->api_count[a]);
        first = 0;
    }
    printf("},\"problem_count\":%" PRIu64 ",\"problems\":[", c->problems);
    for (uint64_t i = 0; i < c->problems && i < VGT_CUDA_SCAN_MAX_PROBLEMS; i++) {
        if (i) putchar(',');
        vgt_json_string(stdout, c->problem[i]);
    }
    printf("]}");
}

static void print_json_types_channels(const struct stats *s)
{
    printf(",\"records_by_type\":{");
    int n = 0;
    for (uint32_t t = 0; t < 65536; t++) {
        if (!s->by_type[t]) continue;
        const char *name = vgt_rec_type_name((uint16_t)t);
        if (name) printf("%s\"%s\":%" PRIu64, n++ ? "," : "", name, s->by_type[t]);
        else printf("%s\"0x%04x\":%" PRIu64, n++ ? "," : "", t, s->by_type[t]);
    }
    printf("},\"channels\":[");
    for (uint32_t i = 0; i < s->nch; i++) {
        const struct channel_info *c = &s->ch[i];
        printf("%s{\"client\":%u,\"handle\":%u,\"class\":%u,\"ring_va\":%" PRIu64 ",\"entries\":%u,\"token\":", i ? "," : "",
               c->client, c->handle, c->cls, c->ring_va, c->entries);
        if (c->has_token) printf("%u", c->token);
        else printf("null");
        printf(",\"submissions\":%" PRIu64 "}", c->submits);
    }
    printf("]");
    json_kv_u64("channel_count", s->nch + s->ch_dropped, 1);
}

static void print_json(const char *path, vgt_reader *r, const struct stats *s, const vgt_error *problem, int quick)
{
    const vgt_trace_info info = container(r, !problem), *in = &info;
    printf("{\"trace\":");
    vgt_json_string(stdout, path);
    printf(",\"format\":\"%u.%u\",\"header_flags\":%u,\"has_index\":%s", in->major, in->minor, in->header_flags,
           in->has_index ? "true" : "false");
    json_kv_u64("file_size", in->file_size, 1);
    printf(",\"identity\":{");
    for (uint32_t i = 0; i < in->identity_count; i++) {
        if (i) putchar(',');
        vgt_json_string(stdout, in->identity[i].key);
        putchar(':');
        vgt_json_string(stdout, in->identity[i].value);
    }
    printf("}");
    json_kv_u64("records", s->records, 1);
    printf(",\"quick\":%s", quick ? "true" : "false");
    if (quick) {   /* only what the chunk headers say */
        printf(",\"records_by_type\":null,\"channels\":null,\"channel_count\":null");
    } else {
        print_json_types_channels(s);
    }
    json_kv_u64("submissions", s->submits, 1);
    if (!quick) print_cuda_json(&s->cuda);
    if (!quick && s->gp) print_gp_json(s);
    json_kv_u64("chunks", s->chunks, 1);
    json_kv_u64("bytes_raw", s->bytes_raw, 1);
    json_kv_u64("bytes_compressed", s->bytes_comp, 1);
    printf(",\"ratio\":%.4f", s->bytes_comp ? (double)s->bytes_raw / (double)s->bytes_comp : 0.0);
    if (s->records) {
        json_kv_u64("first_ts", s->min_ts, 1);
        json_kv_u64("last_ts", s->max_ts, 1);
        json_kv_u64("duration_ns", s->max_ts - s->min_ts, 1);
    }
    printf(",\"problem\":");
    if (problem) {
        vgt_json_string(stdout, problem->msg);
        printf(",\"problem_offset\":");
        if (problem->offset == VGT_NO_OFFSET) printf("null");
        else printf("%" PRIu64, problem->offset);
    } else {
        printf("null");
    }
    printf("}\n");
}

static void quick_chunk(struct stats *s, const vgt_chunk_info *h)
{
    if (s->records == 0 || h->first_ts < s->min_ts) s->min_ts = h->first_ts;
    if (s->records == 0 || h->last_ts > s->max_ts) s->max_ts = h->last_ts;
    s->records += h->record_count;
    s->submits += h->submit_count;
    s->chunks++;
    s->bytes_raw += h->uncompressed_length;
    s->bytes_comp += h->compressed_length + VGT_CHUNK_HEADER_SIZE;
}

/* --quick: the chunk list (index, or a scan of headers) and each chunk's header; no payload is read.
 * A stream has no chunk list before its end: its chunks are read as they come (the same figures). */
static vgt_status quick_stats(vgt_reader *r, struct stats *s, vgt_error *e)
{
    if (!vgt_reader_info(r)->file_size) {
        vgt_record rec;
        vgt_status st;
        uint64_t last = UINT64_MAX;
        while ((st = vgt_reader_next(r, &rec, e)) == VGT_OK) {
            vgt_chunk_info h;
            if (rec.chunk_offset == last || vgt_reader_current_chunk(r, &h, e) != VGT_OK) continue;
            last = rec.chunk_offset;
            quick_chunk(s, &h);
        }
        return st == VGT_E_EOF ? VGT_OK : st;
    }
    const vgt_chunk_info *c;
    uint32_t n;
    VGT_TRY(vgt_reader_chunks(r, &c, &n, e));
    for (uint32_t i = 0; i < n; i++) {
        vgt_chunk_info h;
        VGT_TRY(vgt_reader_chunk_header(r, c[i].offset, &h, e));
        quick_chunk(s, &h);
    }
    return VGT_OK;
}

int cmd_info(int argc, char **argv)
{
    info_opts o = {0};
    vgt_cli_args a;
    int rc = vgt_cli_parse(&cmd_info_spec, argc, argv, &o, &a);
    if (rc >= 0) return rc;
    const char *path = a.pos[0];
    int json = o.json, quick = o.quick;
    vgt_reader *r;
    rc = vgt_verb_open("info", path, o.follow ? VGT_VERB_OPEN_FOLLOW : VGT_VERB_OPEN_FILE, &r);
    if (rc) return rc;
    struct stats *s = calloc(1, sizeof *s);
    uint64_t *by_type = calloc(65536, sizeof *by_type);
    if (!s || !by_type) {
        free(s), free(by_type), vgt_reader_close(r);
        return vgt_cli_error("info", VGT_EXIT_USAGE, "out of memory");
    }
    s->by_type = by_type;
    vgt_record rec;
    vgt_error e;
    vgt_status st;
    int bad;
    if (quick) {
        bad = quick_stats(r, s, &e) != VGT_OK;
    } else {
        vgt_cuda_scan_init(&s->cuda);
        if (vgt_gp_check_open(&s->gp, &e) != VGT_OK) s->gp = NULL;   /* out of memory: the summary goes without it */
        while ((st = vgt_reader_next(r, &rec, &e)) == VGT_OK) count_record(s, r, &rec);
        bad = st != VGT_E_EOF;
        vgt_cuda_scan_finish(&s->cuda);
        if (!bad && s->cuda_bad) bad = 1, e = s->cuda_err;
    }
    if (json) print_json(path, r, s, bad ? &e : NULL, quick);
    else print_text(path, r, s, quick);
    vgt_cli_flush(stdout);
    rc = bad ? vgt_cli_report("info", &e) : VGT_EXIT_OK;
    if (rc == VGT_EXIT_OK && s->cuda.problems) rc = VGT_EXIT_PROBLEM;   /* the CUDA records are inconsistent */
    vgt_cuda_scan_free(&s->cuda);
    vgt_gp_check_close(s->gp);
    vgt_reader_close(r);
    free(by_type);
    free(s);
    return rc;
}
