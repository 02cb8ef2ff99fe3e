/* sem_overlay.c: the stream-write overlay of a semantic tracker (events.h): bytes the method stream
 * itself wrote to GPU memory (uploads, inline QMDs, fills, copies of known bytes), newest first.
 *
 *   extents (ring, oldest at `first`)      arena (ring of bytes, same order)
 *     {va, len, off} ... {va, len, HOLE}     [ ... bytes of extent k ... | head -> free ... ]
 *
 * Both rings start small and grow (the arena up to the configured bytes, the extents up to
 * VGT_SEM_OVERLAY_WRITES), so a channel's overlay holds about what its stream wrote.
 * A write takes len bytes at the arena head (or at 0 when they do not fit before the end) and first
 * forgets the oldest extents whose bytes are in the way; a hole takes no bytes. The oldest extent can
 * always be forgotten (nothing older is left for it to hide), so bounds never block a write. Lookups
 * walk from the newest extent back and stop once every byte asked for is decided. */
#include <stdlib.h>
#include <string.h>

#include "sem_internal.h"

#define FIRST_ARENA 4096u
#define FIRST_SLOTS 16u

/* Remembering nothing only costs knowledge (QMDs fall back to memory): an allocation failure disables
 * the overlay instead of failing the decode. */
static void give_up(sem_overlay *o)
{
    sem_overlay_free(o);
    o->disabled = 1;
    o->n = o->first = o->head = o->size = o->slots = 0;
}

/* Room for one more extent: grow the ring (laid out oldest first again) or forget the oldest. */
static int slot_room(sem_overlay *o)
{
    if (o->n < o->slots) return 1;
    if (o->slots == VGT_SEM_OVERLAY_WRITES) { o->first = (o->first + 1) % o->slots; o->n--; return 1; }
    uint32_t slots = o->slots ? 2 * o->slots : FIRST_SLOTS;
    if (slots > VGT_SEM_OVERLAY_WRITES) slots = VGT_SEM_OVERLAY_WRITES;
    sem_extent *e = malloc(slots * sizeof *e);
    if (!e) { give_up(o); return 0; }
    for (uint32_t i = 0; i < o->n; i++) e[i] = o->ext[(o->first + i) % o->slots];
    free(o->ext);
    o->ext = e;
    o->slots = slots;
    o->first = 0;
    return 1;
}

/* Arena bytes for a write of n at the head: grow (the arena has not wrapped while it is under cap). */
static int arena_room(sem_overlay *o, uint32_t n)
{
    if (o->head + n <= o->size || o->size == o->cap) return 1;
    uint32_t size = o->size ? o->size : FIRST_ARENA;
    uint32_t need = o->head + n > o->cap ? o->cap : o->head + n;   /* past cap: grow to cap, then wrap */
    while (size < need) size = size > o->cap / 2 ? o->cap : 2 * size;
    uint8_t *a = realloc(o->arena, size);
    if (!a) { give_up(o); return 0; }
    o->arena = a;
    o->size = size;
    return 1;
}

static void pop_oldest(sem_overlay *o)
{
    o->first = (o->first + 1) % o->slots;
    o->n--;
}

static void push(sem_overlay *o, uint64_t va, uint64_t len, uint32_t off, const uint8_t *src, uint32_t npieces)
{
    if (!slot_room(o)) return;
    o->ext[(o->first + o->n) % o->slots] = (sem_extent){ va, len, off, src, npieces };
    o->n++;
    if (!o->lo && !o->hi) { o->lo = va; o->hi = va + len; }
    if (va < o->lo) o->lo = va;
    if (va + len > o->hi) o->hi = va + len;
}

void sem_overlay_hole(sem_overlay *o, uint64_t va, uint64_t len)
{
    if (!len || o->disabled || !o->n) return;   /* an empty overlay has nothing a hole could hide */
    if (va >= o->hi || va + len <= o->lo) return;
    push(o, va, len, SEM_HOLE, NULL, 0);
}

/* lent 0: bytes copied; 1: bytes pointed at; 2: bytes is a list of npieces pieces, written in the room */
static void put(sem_overlay *o, uint64_t va, const uint8_t *bytes, uint64_t len, int lent, uint32_t npieces)
{
    if (!len) return;
    if (!bytes || len > VGT_SEM_OVERLAY_MAX_WRITE || len > o->cap) { sem_overlay_hole(o, va, len); return; }
    if (o->disabled) return;
    uint32_t n = (uint32_t)len;
    if (!arena_room(o, n)) return;
    uint32_t at = o->head, old_head = o->head;
    int wrapped = at + n > o->size;   /* only once the arena is at its cap */
    if (wrapped) at = 0;
    while (o->n) {   /* forget the oldest extents whose bytes [at, at + n) would overwrite */
        const sem_extent *e = &o->ext[o->first];
        int drop = e->off == SEM_HOLE || (wrapped && e->off >= old_head) || (e->off < at + n && at < e->off + e->len);
        if (!drop) break;
        pop_oldest(o);
    }
    if (lent != 1) memcpy(o->arena + at, bytes, lent == 2 ? npieces * sizeof(sem_piece) : n);
    o->head = at + n;
    push(o, va, len, at, lent == 1 ? bytes : NULL, lent == 2 ? npieces : 0);
}

void sem_overlay_write(sem_overlay *o, uint64_t va, const uint8_t *bytes, uint64_t len) { put(o, va, bytes, len, 0, 0); }

void sem_overlay_write_lent(sem_overlay *o, uint64_t va, const uint8_t *bytes, uint64_t len)
{
    put(o, va, bytes, len, 1, 0);
}

int sem_overlay_write_pieces(sem_overlay *o, uint64_t va, const sem_piece *p, uint32_t n, uint64_t len)
{
    if ((uint64_t)n * sizeof *p > len) return 0;
    put(o, va, (const uint8_t *)p, len, 2, n);
    return 1;
}

/* Bytes [at, at + n) of a written extent into dst, wherever they are: the arena, the caller's lent bytes
 * (src), or lent pieces, whose list is in the arena at off (not aligned: copied). Every read of an extent's
 * bytes goes through here. */
static void extent_bytes(const sem_overlay *o, const sem_extent *e, uint64_t at, uint32_t n, uint8_t *dst)
{
    if (e->src) memcpy(dst, e->src + at, n);
    else if (!e->npieces) memcpy(dst, o->arena + e->off + at, n);
    else
        for (uint32_t k = 0; k < e->npieces && n; k++) {   /* the pieces [at, at + n) overlaps, in order */
            sem_piece p;
            memcpy(&p, o->arena + e->off + k * sizeof p, sizeof p);
            if (at >= p.len) { at -= p.len; continue; }
            uint32_t take = p.len - at < n ? (uint32_t)(p.len - at) : n;
            memcpy(dst, p.src + at, take);
            dst += take, n -= take, at = 0;
        }
}

void sem_overlay_reclaim(sem_overlay *o, const uint8_t *bytes, uint64_t len)
{
    uintptr_t lo = (uintptr_t)bytes, hi = lo + len;
    uint8_t gathered[VGT_SEM_OVERLAY_MAX_WRITE];
    for (uint32_t k = 0; k < o->n; k++) {
        sem_extent *e = &o->ext[(o->first + k) % o->slots];
        if (e->src && (uintptr_t)e->src >= lo && (uintptr_t)e->src < hi) {
            memcpy(o->arena + e->off, e->src, e->len);
            e->src = NULL;
        }
        if (!e->npieces) continue;
        int in = 0;   /* the pieces of one upload: gathered when any of them goes (the others are newer) */
        for (uint32_t j = 0; j < e->npieces && !in; j++) {
            sem_piece p;
            memcpy(&p, o->arena + e->off + j * sizeof p, sizeof p);
            in = (uintptr_t)p.src >= lo && (uintptr_t)p.src < hi;
        }
        if (!in) continue;
        extent_bytes(o, e, 0, (uint32_t)e->len, gathered);
        memcpy(o->arena + e->off, gathered, e->len);
        e->npieces = 0;
    }
}

uint32_t sem_overlay_lookup(const sem_overlay *o, uint64_t va, uint32_t len, uint8_t *dst, uint8_t *state)
{
    memset(state, 0, len);
    if (!o->n || va >= o->hi || va + len <= o->lo) return 0;
    uint32_t decided = 0;
    for (uint32_t k = o->n; k-- > 0 && decided < len;) {
        const sem_extent *e = &o->ext[(o->first + k) % o->slots];
        uint64_t lo = e->va > va ? e->va : va, hi = e->va + e->len < va + len ? e->va + e->len : va + len;
        if (lo < hi && !decided) {   /* the newest extent in the range (a QMD's own upload): all its bytes at once */
            uint32_t i = (uint32_t)(lo - va), n = (uint32_t)(hi - lo);
            memset(state + i, e->off == SEM_HOLE ? 2 : 1, n);
            if (e->off != SEM_HOLE) extent_bytes(o, e, lo - e->va, n, dst + i);
            decided = n;
            continue;
        }
        for (uint64_t b = lo; b < hi; b++) {
            uint32_t i = (uint32_t)(b - va);
            if (state[i]) continue;
            if (e->off == SEM_HOLE) state[i] = 2;
            else {
                state[i] = 1;
                extent_bytes(o, e, b - e->va, 1, dst + i);
            }
            decided++;
        }
    }
    return decided;
}

void sem_overlay_reset(sem_overlay *o)
{
    o->first = o->n = o->head = 0;
    o->lo = o->hi = 0;
}

void sem_overlay_free(sem_overlay *o)
{
    free(o->arena);
    free(o->ext);
    o->arena = NULL;
    o->ext = NULL;
    o->size = o->slots = 0;
}
