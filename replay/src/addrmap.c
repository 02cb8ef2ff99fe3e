/* addrmap.c: lane 1's address map. Every captured GPU VA the engine hands to the backend goes through
 * addr_to_replay(): a mapping that keeps its VA translates to itself; a mapping that cannot keep it
 * (not 4 KiB aligned, overlapping a mapping of another captured VA space, or forced with
 * --relocate) is MOVED to a VA chosen free of every other mapping of the trace, of the moves already
 * made and of the backend's reserved range (vgt_reloc_choose_va), and every captured VA inside it
 * translates by the same delta. The in-page offset is kept, so an unaligned mapping lands on an
 * aligned one at the same offset. Moves live as long as their mapping (GPU_UNMAP drops them). On a
 * hardware backend a mapping over the backend's own range moves too (one the plan could not see). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vgt/grow.h"

#define PAGE 4096ull
#define MOVE_ALIGN (2ull << 20)     /* 2 MiB: a moved range may hold big pages */
#define MOVE_FLOOR (1ull << 32)     /* never below 4 GiB: drivers' own low allocations */

static uint64_t page_up(uint64_t v) { return (v + PAGE - 1) & ~(PAGE - 1); }

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) { return a < b + blen && b < a + alen; }

const addr_move *addr_move_find(const vgt_replay *rp, uint64_t va)
{
    for (uint32_t i = 0; i < rp->nmoves; i++)
        if (va >= rp->moves[i].va && va - rp->moves[i].va < rp->moves[i].len) return &rp->moves[i];
    return NULL;
}

uint64_t addr_to_replay(const vgt_replay *rp, uint64_t va)
{
    const addr_move *m = rp->nmoves ? addr_move_find(rp, va) : NULL;
    return m ? m->new_va + (va - m->va) : va;
}

/* Why the mapping g cannot keep its VA, or NULL. */
static const char *must_move(const vgt_replay *rp, const vgt_rec_gpu_map *g, uint64_t seq, char *why, size_t cap)
{
    for (uint32_t i = 0; i < rp->opt.nrelocate; i++)
        if (rp->opt.relocate[i] >= g->gpu_va && rp->opt.relocate[i] - g->gpu_va < g->length) {
            snprintf(why, cap, "--relocate 0x%llx", (unsigned long long)rp->opt.relocate[i]);
            return why;
        }
    if (g->gpu_va % PAGE) return snprintf(why, cap, "not 4 KiB aligned"), why;
    /* A hardware backend keeps its own buffers in its reserved range, chosen off the mappings the plan
     * saw (plan.c); one read after the plan was made (past the records it could hold back) that lands
     * on it moves here, at its first conflict. */
    uint64_t reserved = rp->opt.backend_cfg.reserved_va ? rp->opt.backend_cfg.reserved_va : VGT_BACKEND_RESERVED_DEFAULT;
    if ((rp->ops->caps() & VGT_CAP_ASYNC) && overlaps(reserved, VGT_BACKEND_RESERVED_SPAN, g->gpu_va, g->length)) {
        snprintf(why, cap, "overlaps the backend's own range 0x%llx+0x%llx, chosen before this mapping was read",
                 (unsigned long long)reserved, (unsigned long long)VGT_BACKEND_RESERVED_SPAN);
        return why;
    }
    uint64_t space = (uint64_t)g->client << 32 | g->va_space;
    /* the model's mappings ascend by VA: from the last one starting below the range's end, back to where
     * even the longest mapping seen cannot reach the range */
    uint32_t lo = 0, hi = vgt_model_mapping_count(rp->model);
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (vgt_model_mapping_at(rp->model, mid)->gpu_va < g->gpu_va + g->length) lo = mid + 1;
        else hi = mid;
    }
    for (uint32_t i = lo; i-- > 0;) {
        const vgt_model_mapping *m = vgt_model_mapping_at(rp->model, i);
        if (m->gpu_va + rp->longest_map <= g->gpu_va) break;
        if (m->map_seq == seq || ((uint64_t)m->client << 32 | m->va_space) == space) continue;
        if (!overlaps(m->gpu_va, m->length, g->gpu_va, g->length) || addr_move_find(rp, m->gpu_va)) continue;
        snprintf(why, cap, "overlaps GPU_MAP seq %llu (0x%llx+0x%llx) of another VA space",
                 (unsigned long long)m->map_seq, (unsigned long long)m->gpu_va, (unsigned long long)m->length);
        return why;
    }
    return NULL;
}

/* Everything a new VA must avoid: the trace's mappings (all those the plan saw, plan.c, and the live
 * ones), the moves' new ranges and the backend's reserved range. */
static vgt_reloc_range *taken_ranges(const vgt_replay *rp, uint32_t *n)
{
    uint32_t live = vgt_model_mapping_count(rp->model);
    uint64_t total = (uint64_t)rp->navoid + live + rp->nmoves + 1;
    vgt_reloc_range *t = malloc(total * sizeof *t);
    if (!t) return NULL;
    uint32_t k = 0;
    for (uint32_t i = 0; i < rp->navoid; i++) t[k++] = rp->avoid[i];
    for (uint32_t i = 0; i < live; i++) {
        const vgt_model_mapping *m = vgt_model_mapping_at(rp->model, i);
        t[k++] = (vgt_reloc_range){.va = m->gpu_va, .len = m->length};
    }
    for (uint32_t i = 0; i < rp->nmoves; i++)
        t[k++] = (vgt_reloc_range){.va = rp->moves[i].new_va & ~(PAGE - 1),
                                   .len = page_up((rp->moves[i].new_va % PAGE) + rp->moves[i].len)};
    uint64_t reserved = rp->opt.backend_cfg.reserved_va ? rp->opt.backend_cfg.reserved_va : VGT_BACKEND_RESERVED_DEFAULT;
    t[k++] = (vgt_reloc_range){.va = reserved, .len = VGT_BACKEND_RESERVED_SPAN};
    *n = k;
    return t;
}

static vgt_status add_move(vgt_replay *rp, const addr_move *mv, vgt_error *err)
{
    if (rp->nmoves == ADDR_MAX_MOVES)
        return VGT_FAIL(err, VGT_E_LIMIT, mv->seq, "replay: more than %u relocated mappings", ADDR_MAX_MOVES);
    if (vgt_grow(&rp->moves, &rp->cap_moves, rp->nmoves + 1ull, 8))
        return VGT_FAIL(err, VGT_E_NOMEM, mv->seq, "replay: out of memory for relocations");
    rp->moves[rp->nmoves++] = *mv;
    return VGT_OK;
}

vgt_status addr_place(vgt_replay *rp, const vgt_rec_gpu_map *g, uint64_t seq, addr_place_out *out, vgt_error *err)
{
    uint64_t off = g->gpu_va % PAGE;
    if (g->length > rp->longest_map) rp->longest_map = g->length;
    *out = (addr_place_out){.va = g->gpu_va, .map_va = g->gpu_va - off, .map_len = page_up(off + g->length)};
    char why[160];
    if (!must_move(rp, g, seq, why, sizeof why)) {
        out->map_va = g->gpu_va, out->map_len = g->length;
        return VGT_OK;
    }
    uint32_t n = 0;
    vgt_reloc_range *t = taken_ranges(rp, &n);
    if (!t) return VGT_FAIL(err, VGT_E_NOMEM, seq, "replay: out of memory planning a relocation");
    uint64_t base;
    vgt_error e;
    vgt_status st = vgt_reloc_choose_va(t, n, out->map_len, MOVE_ALIGN, MOVE_FLOOR, VGT_BACKEND_PB_VA_LIMIT, &base, &e);
    free(t);
    if (st != VGT_OK) {
        engine_warn(rp, "GPU_MAP seq %llu (0x%llx+0x%llx) must move (%s) but cannot: %s; kept at its VA",
                    (unsigned long long)seq, (unsigned long long)g->gpu_va, (unsigned long long)g->length, why, e.msg);
        out->map_va = g->gpu_va, out->map_len = g->length;
        return VGT_OK;
    }
    addr_move mv = {.va = g->gpu_va, .len = g->length, .new_va = base + off, .seq = seq};
    VGT_TRY(add_move(rp, &mv, err));
    *out = (addr_place_out){.va = base + off, .map_va = base, .map_len = out->map_len, .moved = 1};
    rp->sum.relocations++;
    engine_note(rp, "GPU_MAP seq %llu: memory 0x%x at 0x%llx+0x%llx relocated to 0x%llx (%s)", (unsigned long long)seq,
                g->memory, (unsigned long long)g->gpu_va, (unsigned long long)g->length, (unsigned long long)(base + off),
                why);
    return VGT_OK;
}

void addr_unmapped(vgt_replay *rp, uint64_t va, uint64_t len)
{
    for (uint32_t i = 0; i < rp->nmoves; i++)
        if (rp->moves[i].va >= va && rp->moves[i].va - va < len) rp->moves[i--] = rp->moves[--rp->nmoves];
}

vgt_status addr_own_range(vgt_replay *rp, uint64_t size, uint64_t align, uint64_t floor, uint64_t *va, vgt_error *err)
{
    uint32_t n = 0;
    vgt_reloc_range *t = taken_ranges(rp, &n);
    if (!t) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory choosing a range of its own");
    vgt_status st = vgt_reloc_choose_va(t, n, size, align, floor, VGT_BACKEND_PB_VA_LIMIT, va, err);
    free(t);
    if (st != VGT_OK) return st;
    vgt_reloc_range *a = realloc(rp->avoid, ((size_t)rp->navoid + 1) * sizeof *a);   /* later moves avoid it */
    if (!a) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "replay: out of memory choosing a range of its own");
    rp->avoid = a;
    rp->avoid[rp->navoid++] = (vgt_reloc_range){.va = *va, .len = size};
    return VGT_OK;
}
