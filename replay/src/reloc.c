/* reloc.c: lane 1 address planning. Lane 1 puts every buffer back at its captured GPU VA; what cannot
 * go there is found here, before the backend opens:
 *  - the backend's own range (rings, USERD, context ranges: VGT_BACKEND_RESERVED_SPAN bytes that must
 *    end below 2^40) is MOVED off every captured mapping: the one relocation that changes nothing the
 *    GPU reads from the trace;
 *  - a push-buffer segment at or above 2^40 cannot be named by a GPFIFO entry (GP_ENTRY0/1 carry a
 *    40-bit address: open-gpu-doc classes/host/clc86f.h NVC86F_GP_ENTRY*), a mapping that is not
 *    4 KiB aligned cannot be mapped at its VA, and two mappings of the trace's VA spaces that overlap
 *    cannot both be placed in the one VA space the replay uses. Each is reported as a note naming the
 *    record, the range and what would have to be relocated (the GPFIFO entry's address, or every
 *    operand that points into the moved range: semaphore, copy, upload, QMD and shader addresses).
 * The planner is a pure function over ranges (vgt_reloc_choose_reserved) so that it is tested on
 * synthetic layouts; vgt_reloc_plan_record feeds it one record at a time (GPU_MAP, GPFIFO_SUBMIT,
 * MEMORY observed): the engine's pre-pass (plan.c) over the records it holds back, or
 * vgt_reloc_plan_trace over a file. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/replay.h"
#include "reloc_internal.h"
#include "vgt/grow.h"

#define RESERVED_ALIGN (1ull << 32)   /* candidate bases: 4 GiB steps, far from driver allocations */
#define RESERVED_FLOOR (1ull << 36)   /* never below 64 GiB: the low VAs are where drivers allocate */

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

static int free_of(const vgt_reloc_range *maps, uint32_t n, uint64_t base, uint64_t span)
{
    for (uint32_t i = 0; i < n; i++)
        if (overlaps(base, span, maps[i].va, maps[i].len)) return 0;
    return 1;
}

vgt_status vgt_reloc_choose_reserved(const vgt_reloc_range *maps, uint32_t n, uint64_t preferred, uint64_t span,
                                     uint64_t limit, uint64_t *out, vgt_error *err)
{
    if (!span || span > limit)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "reserved span 0x%llx does not fit below 0x%llx",
                        (unsigned long long)span, (unsigned long long)limit);
    if (preferred && preferred + span <= limit && free_of(maps, n, preferred, span)) {
        *out = preferred;
        return VGT_OK;
    }
    /* the highest free base below the limit: captured VAs cluster low (driver heaps) or far above 2^40
     * (CUDA's host-mirroring VAs), so the top of the 40-bit window is the likeliest to be free */
    for (uint64_t base = (limit - span) & ~(RESERVED_ALIGN - 1); base >= RESERVED_FLOOR; base -= RESERVED_ALIGN)
        if (free_of(maps, n, base, span)) {
            *out = base;
            return VGT_OK;
        }
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET,
                    "no 4 GiB-aligned range of 0x%llx bytes between 0x%llx and 0x%llx is free of the trace's %u "
                    "mappings: the backend's own buffers cannot be placed",
                    (unsigned long long)span, (unsigned long long)RESERVED_FLOOR, (unsigned long long)limit, n);
}

static int by_va(const void *a, const void *b)
{
    const vgt_reloc_range *x = a, *y = b;
    return x->va < y->va ? -1 : x->va > y->va;
}

/* Sort and merge taken into disjoint ranges (in place); returns how many remain. Empty ranges go. */
static uint32_t merge(vgt_reloc_range *t, uint32_t n)
{
    qsort(t, n, sizeof *t, by_va);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!t[i].len) continue;
        uint64_t end = t[i].va + t[i].len < t[i].va ? UINT64_MAX : t[i].va + t[i].len;
        if (k && t[i].va <= t[k - 1].va + t[k - 1].len) {
            if (end > t[k - 1].va + t[k - 1].len) t[k - 1].len = end - t[k - 1].va;
            continue;
        }
        t[k] = t[i];
        t[k++].len = end - t[i].va;
    }
    return k;
}

vgt_status vgt_reloc_choose_va(const vgt_reloc_range *taken, uint32_t n, uint64_t size, uint64_t align, uint64_t floor,
                               uint64_t limit, uint64_t *out, vgt_error *err)
{
    if (!size || !align || (align & (align - 1)) || size > limit || floor >= limit)
        return VGT_FAIL(err, VGT_E_ARG, VGT_NO_OFFSET, "relocation of 0x%llx bytes (alignment 0x%llx) cannot fit "
                        "between 0x%llx and 0x%llx", (unsigned long long)size, (unsigned long long)align,
                        (unsigned long long)floor, (unsigned long long)limit);
    vgt_reloc_range *t = malloc(((size_t)n + 1) * sizeof *t);
    if (!t) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "relocation: out of memory for %u ranges", n);
    if (n) memcpy(t, taken, (size_t)n * sizeof *t);
    uint32_t k = merge(t, n);
    /* the gaps from the top down: above t[i-1] and below t[i] (t[k] stands for the limit) */
    uint64_t top = limit;
    vgt_status st = VGT_E_UNSUPPORTED;
    for (uint32_t i = k + 1; i-- > 0;) {
        uint64_t gap_hi = i < k && t[i].va < top ? t[i].va : top;
        uint64_t gap_lo = i ? t[i - 1].va + t[i - 1].len : 0;
        if (i < k && t[i].va >= top) continue;   /* above the limit */
        if (gap_lo < floor) gap_lo = floor;
        if (gap_hi >= gap_lo + size) {
            uint64_t base = (gap_hi - size) & ~(align - 1);
            if (base >= gap_lo) {
                *out = base;
                st = VGT_OK;
                break;
            }
        }
        if (gap_hi <= floor) break;
    }
    free(t);
    if (st == VGT_OK) return VGT_OK;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "no 0x%llx-aligned range of 0x%llx bytes between 0x%llx and "
                    "0x%llx is free of the trace's %u mappings", (unsigned long long)align, (unsigned long long)size,
                    (unsigned long long)floor, (unsigned long long)limit, n);
}

static void note(vgt_reloc_plan *p, int kind, uint64_t seq, uint64_t va, uint64_t len, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Each moving mapping once (a bounded list: at most one entry per GPU_MAP). */
static void add_moving(vgt_reloc_plan *p, const vgt_reloc_range *r)
{
    for (uint32_t i = 0; i < p->nmoving; i++)
        if (p->moving[i].seq == r->seq) return;
    vgt_reloc_range *n = realloc(p->moving, ((size_t)p->nmoving + 1) * sizeof *n);
    if (!n) return;   /* no memory: its operands go unlisted; the replay still moves and rewrites it */
    p->moving = n;
    p->moving[p->nmoving++] = *r;
}

void reloc_note_add(vgt_reloc_plan *p, const vgt_reloc_note *n)
{
    if (n->kind == VGT_RELOC_NOT_REWRITABLE)
        for (uint32_t i = 0; i < p->nnotes; i++)
            if (p->notes[i].kind == n->kind && p->notes[i].va == n->va) {   /* that address again: said once */
                p->notes_dropped++;
                return;
            }
    if (p->nnotes < VGT_RELOC_MAX_NOTES) {
        p->notes[p->nnotes++] = *n;
        return;
    }
    p->notes_dropped++;
    if (n->kind != VGT_RELOC_NOT_REWRITABLE) return;
    for (int pass = 0; pass < 2; pass++)   /* a warning outranks an operand note, then any other note */
        for (uint32_t i = p->nnotes; i-- > 0;)
            if (pass ? p->notes[i].kind != VGT_RELOC_NOT_REWRITABLE : p->notes[i].kind == VGT_RELOC_OPERAND) {
                p->notes[i] = *n;
                return;
            }
}

static void note(vgt_reloc_plan *p, int kind, uint64_t seq, uint64_t va, uint64_t len, const char *fmt, ...)
{
    vgt_reloc_note n = {.kind = kind, .seq = seq, .va = va, .len = len};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n.msg, sizeof n.msg, fmt, ap);
    va_end(ap);
    reloc_note_add(p, &n);
}

const char *vgt_reloc_kind_name(int kind)
{
    static const char *const names[] = {"?", "reserved-moved", "pushbuf-above-40-bit", "unaligned-mapping",
                                        "overlapping-mappings", "operand", "forced", "not-rewritable"};
    return kind > 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "?";
}

/* Mappings that overlap an earlier one at a different VA or with a different length (the trace's VA
 * spaces differ; the replay has one). The same range mapped again (a remap) is not a conflict. */
void vgt_reloc_check_maps(vgt_reloc_plan *p, const vgt_reloc_range *maps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (maps[i].va % 4096 || maps[i].len % 4096) add_moving(p, &maps[i]);
        if (maps[i].va % 4096 || maps[i].len % 4096)
            note(p, VGT_RELOC_UNALIGNED, maps[i].seq, maps[i].va, maps[i].len,
                 "GPU_MAP seq %llu: 0x%llx+0x%llx is not 4 KiB aligned; it would be placed at an aligned VA and every "
                 "operand pointing into it relocated", (unsigned long long)maps[i].seq,
                 (unsigned long long)maps[i].va, (unsigned long long)maps[i].len);
        for (uint32_t j = 0; j < i; j++) {
            if (!overlaps(maps[i].va, maps[i].len, maps[j].va, maps[j].len)) continue;
            if (maps[i].va == maps[j].va && maps[i].len == maps[j].len) continue;
            if (maps[i].space == maps[j].space) continue;   /* one VA space: an unmap came between */
            add_moving(p, &maps[i]);
            note(p, VGT_RELOC_OVERLAP, maps[i].seq, maps[i].va, maps[i].len,
                 "GPU_MAP seq %llu (0x%llx+0x%llx) overlaps GPU_MAP seq %llu (0x%llx+0x%llx) of another VA space; "
                 "the later one would need a new VA and the operands that point into it relocated",
                 (unsigned long long)maps[i].seq, (unsigned long long)maps[i].va, (unsigned long long)maps[i].len,
                 (unsigned long long)maps[j].seq, (unsigned long long)maps[j].va, (unsigned long long)maps[j].len);
            break;
        }
    }
}

/* Mappings --relocate moves: each containing one of the VAs. */
static void check_forced(vgt_reloc_plan *p, const vgt_reloc_range *maps, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < p->nrelocate; k++) {
            if (p->relocate[k] < maps[i].va || p->relocate[k] - maps[i].va >= maps[i].len) continue;
            add_moving(p, &maps[i]);
            note(p, VGT_RELOC_FORCED, maps[i].seq, maps[i].va, maps[i].len,
                 "GPU_MAP seq %llu: 0x%llx+0x%llx is moved (--relocate 0x%llx): every operand pointing into it is "
                 "rewritten with its new VA", (unsigned long long)maps[i].seq, (unsigned long long)maps[i].va,
                 (unsigned long long)maps[i].len, (unsigned long long)p->relocate[k]);
            break;
        }
}

void vgt_reloc_check_segment(vgt_reloc_plan *p, uint64_t submit_index, uint64_t seq, uint32_t segment, uint64_t va,
                             uint64_t len)
{
    if (va + len <= VGT_BACKEND_PB_VA_LIMIT) return;
    note(p, VGT_RELOC_PB_ABOVE_40BIT, seq, va, len,
         "submission %llu (seq %llu) segment %u: push buffer at VA 0x%llx (+%llu bytes) lies above 2^40: a GPFIFO "
         "entry carries 40 bits, so the stream reaches it through SET_PB_SEGMENT_EXTENDED_BASE, which runs "
         "unchanged; kept at its VA (only the backend's ring and USERD must be below 2^40)",
         (unsigned long long)submit_index, (unsigned long long)seq, segment, (unsigned long long)va,
         (unsigned long long)len);
}

/* ---- one record at a time ---- */

void vgt_reloc_plan_begin(vgt_reloc_plan *p, uint64_t preferred, const uint64_t *relocate, uint32_t nrelocate)
{
    memset(p, 0, sizeof *p);
    p->relocate = relocate;
    p->nrelocate = nrelocate;
    p->preferred = preferred ? preferred : VGT_BACKEND_RESERVED_DEFAULT;
    p->reserved_va = p->preferred;
}

static vgt_status add_map(vgt_reloc_plan *p, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_gpu_map g;
    if (vgt_decode_gpu_map(rec, &g, NULL) != VGT_OK) return VGT_OK;   /* the replay reports a broken record */
    if (g.status != 0 || !g.length) return VGT_OK;
    if (p->nmap_ranges == VGT_BACKEND_MAX_MAP_RANGES)
        return VGT_FAIL(err, VGT_E_LIMIT, rec->seq, "more than %u GPU_MAP records", VGT_BACKEND_MAX_MAP_RANGES);
    if (vgt_grow(&p->map_ranges, &p->cap_map_ranges, p->nmap_ranges + 1ull, 256))
        return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "reloc: out of memory for %u mappings", p->nmap_ranges + 1);
    p->map_ranges[p->nmap_ranges++] = (vgt_reloc_range){.va = g.gpu_va, .len = g.length, .seq = rec->seq,
                                                        .space = (uint64_t)g.client << 32 | g.va_space};
    return VGT_OK;
}

#define MAX_OBSERVED 4096u

static vgt_status add_observed(vgt_reloc_plan *p, const vgt_record *rec, vgt_error *err)
{
    vgt_rec_memory m;
    if (vgt_decode_memory(rec, &m, NULL) != VGT_OK) return VGT_OK;
    if (m.reason != VGT_MEM_OBSERVED || !m.length || p->nobserved == MAX_OBSERVED) return VGT_OK;
    if (!p->observed && !(p->observed = malloc(MAX_OBSERVED * sizeof *p->observed)))
        return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "reloc: out of memory for observed ranges");
    p->observed[p->nobserved++] = (vgt_reloc_range){.va = m.gpu_va, .len = m.length, .seq = rec->seq};
    return VGT_OK;
}

static vgt_status check_submit(vgt_reloc_plan *p, const vgt_record *rec, vgt_error *err)
{
    uint32_t nseg = rec->length >= 40 ? (uint32_t)rec->payload[36] | (uint32_t)rec->payload[37] << 8 |
                                            (uint32_t)rec->payload[38] << 16 | (uint32_t)rec->payload[39] << 24
                                      : 0;
    uint32_t max = rec->length / 16 + 1;   /* a segment takes at least 16 bytes (submit_segs.c) */
    if (nseg > max) nseg = max;
    if (nseg > p->cap_segs) {
        vgt_segment *n = realloc(p->segs, (size_t)nseg * sizeof *n);
        if (!n) return VGT_FAIL(err, VGT_E_NOMEM, rec->seq, "reloc: out of memory for %u segments", nseg);
        p->segs = n;
        p->cap_segs = nseg;
    }
    vgt_rec_gpfifo_submit sub;
    if (vgt_decode_gpfifo_submit(rec, &sub, p->segs, p->cap_segs, NULL) == VGT_OK)
        for (uint32_t i = 0; i < sub.segment_count; i++)
            vgt_reloc_check_segment(p, p->submits, rec->seq, i, sub.segments[i].gpu_va, sub.segments[i].length);
    p->submits++;
    return VGT_OK;
}

/* Records the replay would refuse as broken are skipped here: the replay reports them when it meets them. */
vgt_status vgt_reloc_plan_record(vgt_reloc_plan *p, const vgt_record *rec, vgt_error *err)
{
    p->records++;
    if (rec->type == VGT_REC_GPU_MAP) return add_map(p, rec, err);
    if (rec->type == VGT_REC_GPFIFO_SUBMIT) return check_submit(p, rec, err);
    if (rec->type == VGT_REC_MEMORY) return add_observed(p, rec, err);
    return VGT_OK;
}

void vgt_reloc_plan_moving(vgt_reloc_plan *p)
{
    check_forced(p, p->map_ranges, p->nmap_ranges);
    vgt_reloc_check_maps(p, p->map_ranges, p->nmap_ranges);
}

vgt_status vgt_reloc_plan_end(vgt_reloc_plan *p, vgt_error *err)
{
    free(p->segs);
    p->segs = NULL;
    p->cap_segs = 0;
    VGT_TRY(vgt_reloc_choose_reserved(p->map_ranges, p->nmap_ranges, p->reserved_va, VGT_BACKEND_RESERVED_SPAN,
                                      VGT_BACKEND_PB_VA_LIMIT, &p->reserved_va, err));
    p->maps = p->nmap_ranges;
    if (p->reserved_va != p->preferred)
        note(p, VGT_RELOC_RESERVED_MOVED, 0, p->reserved_va, VGT_BACKEND_RESERVED_SPAN,
             "the backend's own range moved to 0x%llx (+0x%llx): the trace maps memory at 0x%llx",
             (unsigned long long)p->reserved_va, (unsigned long long)VGT_BACKEND_RESERVED_SPAN,
             (unsigned long long)p->preferred);
    return VGT_OK;
}

void vgt_reloc_plan_free(vgt_reloc_plan *p)
{
    free(p->observed);
    p->observed = NULL;
    p->nobserved = 0;
    free(p->map_ranges);
    p->map_ranges = NULL;
    p->nmap_ranges = p->cap_map_ranges = 0;
    free(p->moving);
    p->moving = NULL;
    p->nmoving = 0;
    free(p->segs);
    p->segs = NULL;
    p->cap_segs = 0;
}

/* A file planned on its own (tools and tests; the replay plans inside the engine, plan.c): the records,
 * then the operands of the mappings that move (a second read, only when some move). */
vgt_status vgt_reloc_plan_trace(const char *path, uint64_t preferred, const uint64_t *relocate, uint32_t nrelocate,
                                vgt_reloc_plan *p, vgt_error *err)
{
    vgt_reloc_plan_begin(p, preferred, relocate, nrelocate);
    vgt_reader *r;
    VGT_TRY(vgt_reader_open_path(&r, path, NULL, err));
    vgt_record rec;
    vgt_status rc;
    while ((rc = vgt_reader_next(r, &rec, err)) == VGT_OK)
        if ((rc = vgt_reloc_plan_record(p, &rec, err)) != VGT_OK) break;
    vgt_reader_close(r);
    if (rc != VGT_E_EOF) return rc;
    vgt_reloc_plan_moving(p);
    if (p->nmoving) {
        reloc_operands *o;
        VGT_TRY(reloc_operands_begin(&o, p, 0, err));
        rc = vgt_reader_open_path(&r, path, NULL, err);
        if (rc == VGT_OK) {
            while ((rc = vgt_reader_next(r, &rec, err)) == VGT_OK && (rc = reloc_operands_record(o, &rec, err)) == VGT_OK) {
            }
            vgt_reader_close(r);
        }
        VGT_TRY(reloc_operands_end(o, rc == VGT_E_EOF ? VGT_OK : rc, err));
    }
    return vgt_reloc_plan_end(p, err);
}
