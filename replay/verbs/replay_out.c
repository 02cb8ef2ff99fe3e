/* replay_out.c: render-target dumps, the store census table and the address plan of `vgt replay`. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "replay_out.h"
#include "vgt/cli.h"
#include "vgt/outfile.h"

#define MAX_RT_BYTES (256ull << 20)

int rt_dump_parse(const char *s, rt_dump_req *req)
{
    const char *colon = strchr(s, ':');
    char num[32];
    uint64_t v;
    if (!colon || colon == s || colon - s >= (long)sizeof num || !colon[1]) return -1;
    memcpy(num, s, (size_t)(colon - s));
    num[colon - s] = '\0';
    if (vgt_parse_u64(num, &v) || v >= VGT_RT_MAX) return -1;
    req->index = (uint32_t)v;
    req->path = colon + 1;
    return 0;
}

static const char *layout_name(const vgt_rt_desc *d) { return (d->memory >> 12) & 1 ? "pitch" : "block-linear"; }

void rt_list_print(const vgt_replay *rp, FILE *out)
{
    uint32_t n = vgt_replay_rt_count(rp);
    fprintf(out, "render targets (from the decoded SET_COLOR_TARGET_* methods): %u\n", n);
    for (uint32_t i = 0; i < n; i++) {
        const vgt_rt_desc *d = vgt_replay_rt_at(rp, i);
        fprintf(out, "  %u: VA 0x%llx %ux%u format 0x%x (%s) %s, block height %u GOBs, target %u, first bound by "
                     "submission %lld (seq %llu)\n",
                i, (unsigned long long)d->va, d->width, d->height, d->format, vgt_rt_format_name(d->format),
                layout_name(d), 1u << ((d->memory >> 4) & 0xf), d->target, (long long)d->submit_index,
                (unsigned long long)d->seq);
    }
}

/* Pixel statistics the corpus workloads print: non-black pixels ("covered") and the FNV-1a 64 hash of
 * the rows top-down and bottom-up (GL returns rows bottom-up). */
static void pixel_stats(const uint8_t *rgba, uint32_t w, uint32_t h, uint64_t *down, uint64_t *up, uint64_t *covered)
{
    uint64_t row = (uint64_t)w * 4;
    uint8_t *flip = malloc(row * h);
    *down = vgt_fnv1a64(rgba, row * h);
    *up = 0;
    if (flip) {
        for (uint32_t y = 0; y < h; y++) memcpy(flip + (uint64_t)y * row, rgba + (uint64_t)(h - 1 - y) * row, row);
        *up = vgt_fnv1a64(flip, row * h);
        free(flip);
    }
    *covered = 0;
    for (uint64_t i = 0; i < (uint64_t)w * h; i++)
        if (rgba[i * 4] | rgba[i * 4 + 1] | rgba[i * 4 + 2]) (*covered)++;
}

int rt_dump_write(vgt_replay *rp, const rt_dump_req *req, FILE *out)
{
    const vgt_rt_desc *d = vgt_replay_rt_at(rp, req->index);
    if (!d)
        return vgt_cli_error("replay", VGT_EXIT_PROBLEM, "--dump-rt %u: the replay bound %u render target(s) "
                             "(see --list-rt)", req->index, vgt_replay_rt_count(rp));
    uint64_t span = vgt_rt_span(d);
    if (!span || span > MAX_RT_BYTES)
        return vgt_cli_error("replay", VGT_EXIT_PROBLEM, "--dump-rt %u: VA 0x%llx %ux%u format 0x%x memory 0x%x is not "
                             "a surface this build converts (8-bit RGBA/BGRA, at most %llu bytes)", req->index,
                             (unsigned long long)d->va, d->width, d->height, d->format, d->memory,
                             (unsigned long long)MAX_RT_BYTES);
    uint32_t w = vgt_rt_width_px(d);
    uint8_t *surf = malloc(span), *rgba = malloc((uint64_t)w * d->height * 4);
    vgt_error err;
    int code = VGT_EXIT_OK;
    if (!surf || !rgba) code = vgt_cli_error("replay", VGT_EXIT_USAGE, "--dump-rt: out of memory");
    else if (vgt_replay_read(rp, d->va, surf, span, &err) != VGT_OK ||
             vgt_rt_linearize(d, surf, span, rgba, &err) != VGT_OK ||
             vgt_png_write_rgba(req->path, rgba, w, d->height, &err) != VGT_OK)
        code = vgt_cli_error("replay", err.code == VGT_E_IO ? VGT_EXIT_USAGE : VGT_EXIT_PROBLEM, "--dump-rt %u: %s",
                             req->index, err.msg);
    if (code == VGT_EXIT_OK) {
        uint64_t down, up, covered;
        pixel_stats(rgba, w, d->height, &down, &up, &covered);
        fprintf(out, "render target %u: VA 0x%llx %ux%u %s %s -> %s; covered=%llu hash=%016llx (rows top-down) "
                     "%016llx (bottom-up)",
                req->index, (unsigned long long)d->va, w, d->height, vgt_rt_format_name(d->format), layout_name(d),
                req->path, (unsigned long long)covered, (unsigned long long)down, (unsigned long long)up);
        if (req->has_expect) {
            int ok = req->expect == down || req->expect == up;
            fprintf(out, "; expected %016llx: %s", (unsigned long long)req->expect, ok ? "MATCH" : "DIFFERS");
            if (!ok) code = VGT_EXIT_PROBLEM;
        }
        fputc('\n', out);
    }
    free(surf);
    free(rgba);
    return code;
}

void census_print(const vgt_replay *rp, FILE *out, uint64_t max_rows)
{
    uint64_t n;
    const vgt_store_row *rows = vgt_replay_stores(rp, &n);
    fprintf(out, "stores (ranges read back around each submission; changed ranges only): %llu rows\n",
            (unsigned long long)n);
    int per_draw = n && rows[0].per_draw;
    fprintf(out, "  %-10s %-10s %-12s %-14s %10s %7s %10s %12s %16s %10s%s\n", "submission", "channel", "what", "va",
            "length", "pages", "bytes", "first_byte", "first_nonzero_px", "px0", per_draw ? "  draws" : "");
    for (uint64_t i = 0; i < n && i < max_rows; i++) {
        const vgt_store_row *r = &rows[i];
        char px0[24] = "-";   /* the first pixel's value: render targets only */
        if (r->px0 >= 0) snprintf(px0, sizeof px0, "0x%08llx", (unsigned long long)r->px0);
        char draws[48] = "";   /* the census per draw: the draws of the piece the row was read after */
        if (per_draw && r->draw_first < 0) snprintf(draws, sizeof draws, "  -");
        else if (per_draw && r->draw_count == 1) snprintf(draws, sizeof draws, "  %lld", (long long)r->draw_first);
        else if (per_draw)
            snprintf(draws, sizeof draws, "  %lld-%lld", (long long)r->draw_first,
                     (long long)r->draw_first + r->draw_count - 1);
        fprintf(out, "  %-10lld 0x%08x %-12s 0x%-12llx %10llu %7llu %10llu %12lld %16lld %10s%s\n",
                (long long)r->submit_index, r->channel, r->what, (unsigned long long)r->va, (unsigned long long)r->len,
                (unsigned long long)r->pages_written, (unsigned long long)r->bytes_changed, (long long)r->first_changed,
                (long long)r->first_nonzero_pixel, px0, draws);
        if (r->unfinished) fputs("    (read before the GPU finished this work)\n", out);
    }
    if (n > max_rows) fprintf(out, "  (%llu more rows: --census-json FILE has them all)\n", (unsigned long long)(n - max_rows));
}

int census_write_jsonl(const vgt_replay *rp, const char *path)
{
    uint64_t n;
    const vgt_store_row *rows = vgt_replay_stores(rp, &n);
    vgt_outfile of;
    vgt_error err;
    FILE *f = vgt_outfile_open(&of, path, VGT_OUT_NO_STDOUT, &err) == VGT_OK ? vgt_outfile_stdio(&of, &err) : NULL;
    if (!f) {
        if (of.kind) vgt_outfile_discard(&of);
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--census-json: %s", err.msg);
    }
    for (uint64_t i = 0; i < n; i++) {
        const vgt_store_row *r = &rows[i];
        char px0[24] = "null";   /* the first pixel's value: render targets only */
        if (r->px0 >= 0) snprintf(px0, sizeof px0, "%lld", (long long)r->px0);
        char draw[64] = "";   /* the census per draw: the draws of the row's piece (null: none) */
        /* "unfinished":1 only on rows read before the GPU finished the work (the key is absent otherwise) */
        if (r->per_draw && r->draw_first >= 0)
            snprintf(draw, sizeof draw, ",\"draw\":%lld,\"draw_count\":%u", (long long)r->draw_first, r->draw_count);
        else if (r->per_draw) snprintf(draw, sizeof draw, ",\"draw\":null,\"draw_count\":0");
        fprintf(f, "{\"submission\":%lld,\"seq\":%llu,\"channel\":%u,\"what\":\"%s\",\"va\":%llu,\"length\":%llu,"
                   "\"pages_written\":%llu,\"bytes_changed\":%llu,\"first_changed\":%lld,\"first_nonzero_pixel\":%lld,"
                   "\"px0\":%s%s%s}\n",
                (long long)r->submit_index, (unsigned long long)r->submit_seq, r->channel, r->what,
                (unsigned long long)r->va, (unsigned long long)r->len, (unsigned long long)r->pages_written,
                (unsigned long long)r->bytes_changed, (long long)r->first_changed, (long long)r->first_nonzero_pixel, px0, draw,
                r->unfinished ? ",\"unfinished\":1" : "");
    }
    if (vgt_outfile_commit(&of, &err) != VGT_OK) return vgt_cli_error("replay", VGT_EXIT_USAGE, "--census-json: %s", err.msg);
    return VGT_EXIT_OK;
}

void plan_print(const vgt_reloc_plan *p, FILE *out)
{
    if (p->nmoving)
        fprintf(out, "address plan: %u mappings, %u of them moved to new VAs; backend range at 0x%llx\n", p->maps,
                p->nmoving, (unsigned long long)p->reserved_va);
    else
        fprintf(out, "address plan: %u mappings at their captured VAs; backend range at 0x%llx\n", p->maps,
                (unsigned long long)p->reserved_va);
    for (uint32_t i = 0; i < p->nnotes; i++)
        fprintf(out, "  relocation (%s): %s\n", vgt_reloc_kind_name(p->notes[i].kind), p->notes[i].msg);
    if (p->notes_dropped) fprintf(out, "  (%llu more notes)\n", (unsigned long long)p->notes_dropped);
}
