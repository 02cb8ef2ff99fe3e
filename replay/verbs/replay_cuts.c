/* replay_cuts.c: `vgt replay --census-per-draw`: where the census closes the work. One walk of the trace
 * with vgt_draws_run (the walk behind `vgt draws`) lists every draw and launch, numbered as `vgt draws`
 * numbers them, with the method that issued it; the engine cuts each submission there (draw_cuts.c). */
#include <stdlib.h>

#include "replay_out.h"
#include "vgt/cli.h"
#include "vgt/draws.h"
#include "vgt/grow.h"

typedef struct cut_list {
    vgt_replay_draw_cut *v;
    uint32_t n, cap;
    int oom;
} cut_list;

static int on_draw(void *ctx, const vgt_draw_info *d)
{
    cut_list *l = ctx;
    if (vgt_grow(&l->v, &l->cap, l->n + 1ull, 64)) {
        l->oom = 1;
        return 1;
    }
    l->v[l->n++] = (vgt_replay_draw_cut){.seq = d->pos.seq, .entry = d->pos.entry, .dword = d->pos.dword,
                                         .number = d->number};
    return 0;
}

static int cut_cmp(const void *x, const void *y)
{
    const vgt_replay_draw_cut *a = x, *b = y;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    if (a->entry != b->entry) return a->entry < b->entry ? -1 : 1;
    if (a->dword != b->dword) return a->dword < b->dword ? -1 : 1;
    return a->number < b->number ? -1 : a->number > b->number;
}

int replay_draw_cuts(const char *path, vgt_replay_draw_cut **cuts, uint32_t *n)
{
    cut_list l = {0};
    vgt_walk_options wo = vgt_walk_defaults();
    vgt_draws_config cfg = {.on_draw = on_draw, .ctx = &l};
    vgt_error err;
    if (vgt_draws_run(path, &wo, &cfg, &err) != VGT_OK) {
        free(l.v);
        return vgt_cli_report("replay", &err);
    }
    if (l.oom) {
        free(l.v);
        return vgt_cli_error("replay", VGT_EXIT_USAGE, "--census-per-draw: out of memory for %u draws", l.n);
    }
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cut_cmp);
    *cuts = l.v;
    *n = l.n;
    return -1;
}
