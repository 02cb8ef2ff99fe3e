/* replay_out.h: what `vgt replay` writes after a replay besides the summary: render targets as PNG
 * (--dump-rt, --list-rt), the store census (--census, --census-json) and the lane-1 address plan. */
#ifndef VGT_REPLAY_OUT_H
#define VGT_REPLAY_OUT_H

#include <stdio.h>

#include "vgt/replay.h"

typedef struct rt_dump_req {
    uint32_t index;
    const char *path;
    int has_expect;
    uint64_t expect;               /* --expect-hash: FNV-1a 64 of the pixels (rows either way up) */
} rt_dump_req;

/* "N:FILE.png" -> req; -1 when malformed. */
int rt_dump_parse(const char *s, rt_dump_req *req);
/* Write render target req->index as PNG and print one line about it. Returns a vgt exit code. */
int rt_dump_write(vgt_replay *rp, const rt_dump_req *req, FILE *out);
void rt_list_print(const vgt_replay *rp, FILE *out);
void census_print(const vgt_replay *rp, FILE *out, uint64_t max_rows);
/* JSON lines, one per row: the stores table for `vgt db` (see replay/README.md). Returns exit code. */
int census_write_jsonl(const vgt_replay *rp, const char *path);
void plan_print(const vgt_reloc_plan *p, FILE *out);
/* replay_cuts.c: every draw and launch of the trace at path, as `vgt draws` numbers them, sorted by the
 * position of the method that issued it (*cuts: the caller frees). -1 ok, else the exit code (said). */
int replay_draw_cuts(const char *path, vgt_replay_draw_cut **cuts, uint32_t *n);

#endif
