/* test_grow.c: vgt_grow, the one doubling growth of arrays (vgt/grow.h): it grows to the first capacity,
 * doubles (more than once when asked for more), keeps the contents, does nothing when there is room,
 * refuses a capacity or byte count that would overflow and an allocation that fails, leaving the array
 * and its capacity as they were, and handles zero-sized items and a zero need. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/grow.h"
#include "check.h"

typedef struct { uint64_t a, b; } pair;

static void first_and_doubling(void)
{
    pair *v = NULL;
    uint32_t cap = 0;
    CHECK(vgt_grow(&v, &cap, 1, 16) == 0, "the first growth");
    CHECK(v != NULL, "an array");
    CHECK_EQ_U64(cap, 16, "the first capacity");
    for (uint32_t i = 0; i < 16; i++) v[i] = (pair){i, ~(uint64_t)i};
    pair *before = v;
    CHECK(vgt_grow(&v, &cap, 16, 8) == 0 && v == before && cap == 16, "room already: nothing done");
    CHECK(vgt_grow(&v, &cap, 0, 8) == 0 && v == before && cap == 16, "a need of 0: nothing done");
    CHECK(vgt_grow(&v, &cap, 17, 8) == 0, "one more than the capacity");
    CHECK_EQ_U64(cap, 32, "doubled");
    CHECK(vgt_grow(&v, &cap, 33, 8) == 0, "one more again");
    CHECK_EQ_U64(cap, 64, "doubled again");
    CHECK(vgt_grow(&v, &cap, 1000, 8) == 0, "far more than double");
    CHECK_EQ_U64(cap, 1024, "doubled until it holds the need");
    int kept = 1;
    for (uint32_t i = 0; i < 16; i++) kept &= v[i].a == i && v[i].b == ~(uint64_t)i;
    CHECK(kept, "the contents kept through every growth");
    v[1023] = (pair){1, 2};   /* the whole capacity is there (under a memory checker) */
    free(v);

    /* a first capacity of 0 counts as 1; a need larger than first is reached by doubling first */
    uint8_t *b = NULL;
    uint64_t bcap = 0;
    CHECK(vgt_grow(&b, &bcap, 1, 0) == 0 && bcap == 1, "first 0 counts as 1");
    CHECK(vgt_grow(&b, &bcap, 5, 0) == 0 && bcap == 8, "1 doubled to 8 for 5");
    free(b);
    b = NULL, bcap = 0;
    CHECK(vgt_grow(&b, &bcap, 100, 64) == 0 && bcap == 128, "first 64 doubled to 128 for 100");
    free(b);
}

/* What vgt_grow expands to, with a run-time item size (an array of void *). */
static void explicit_item_size(void)
{
    void *v = NULL;
    uint64_t cap = 0;
    CHECK(vgt_grow_u64(&v, &cap, 3, 24, 4) == 0 && cap == 4, "u64: the first capacity");
    memset(v, 0xab, 4 * 24);
    CHECK(vgt_grow_u64(&v, &cap, 5, 24, 4) == 0 && cap == 8, "u64: doubled");
    CHECK(((uint8_t *)v)[4 * 24 - 1] == 0xab, "u64: contents kept");
    free(v);
    void *w = NULL;
    uint32_t cap32 = 0;
    CHECK(vgt_grow_u32(&w, &cap32, 3, 24, 4) == 0 && cap32 == 4, "u32: the first capacity");
    free(w);
}

static void refusals_leave_the_array(void)
{
    /* an array with contents, then growth that cannot be done: it stays as it was */
    void *v = NULL;
    uint32_t cap = 0;
    CHECK(vgt_grow_u32(&v, &cap, 2, 8, 2) == 0 && cap == 2, "setup");
    memcpy(v, "contents", 8);
    void *before = v;

    /* need * item over SIZE_MAX: refused before any allocation */
    CHECK(vgt_grow_u32(&v, &cap, 3, SIZE_MAX / 2, 2) == -1, "bytes that overflow are refused");
    CHECK(v == before && cap == 2, "refused: pointer and capacity unchanged");
    CHECK(vgt_grow_u32(&v, &cap, 3, SIZE_MAX, 2) == -1, "an item of SIZE_MAX bytes");
    CHECK(v == before && cap == 2, "refused: pointer and capacity unchanged");

    /* bytes that fit size_t but no allocator gives: realloc fails, and the array is not freed */
    CHECK(vgt_grow_u32(&v, &cap, 3, SIZE_MAX / 8, 2) == -1, "an allocation that fails");
    CHECK(v == before && cap == 2, "failed: pointer and capacity unchanged");
    CHECK(memcmp(v, "contents", 8) == 0, "failed: contents still there");

    /* a need over the capacity's type */
    CHECK(vgt_grow_u32(&v, &cap, (uint64_t)UINT32_MAX + 1, 1, 2) == -1, "a need over UINT32_MAX for a u32 capacity");
    CHECK(v == before && cap == 2, "refused: pointer and capacity unchanged");
    free(v);

    /* the same through the macro on a typed array, with nothing allocated yet */
    pair *t = NULL;
    uint64_t tcap = 0;
    CHECK(vgt_grow(&t, &tcap, UINT64_MAX / 8, 16) == -1, "a u64 need whose bytes overflow");
    CHECK(t == NULL && tcap == 0, "refused: still no array");
}

/* Zero-sized items: never realloc(p, 0) (which may free p and return NULL); the capacity arithmetic is
 * the same, so the limits of the capacity's type show here without large allocations. */
static void zero_sized_items(void)
{
    void *v = NULL;
    uint32_t cap = 0;
    CHECK(vgt_grow_u32(&v, &cap, 1, 0, 16) == 0 && v != NULL && cap == 16, "zero-sized items: an allocation");
    CHECK(vgt_grow_u32(&v, &cap, 17, 0, 16) == 0 && v != NULL && cap == 32, "zero-sized items: doubled");

    /* near the top of uint32_t, doubling stops at UINT32_MAX rather than wrapping */
    cap = 3000000000u;
    CHECK(vgt_grow_u32(&v, &cap, 3000000001u, 0, 16) == 0, "doubling past UINT32_MAX");
    CHECK_EQ_U64(cap, UINT32_MAX, "kept within the type");
    CHECK(vgt_grow_u32(&v, &cap, UINT32_MAX, 0, 16) == 0 && cap == UINT32_MAX, "the type's top: room");
    cap = 0x80000000u;
    CHECK(vgt_grow_u32(&v, &cap, 0x80000001u, 0, 16) == 0, "exactly half of 2^32 doubled");
    CHECK_EQ_U64(cap, UINT32_MAX, "kept within the type");
    uint64_t cap64 = UINT64_MAX - 5;
    CHECK(vgt_grow_u64(&v, &cap64, UINT64_MAX, 0, 16) == 0 && cap64 == UINT64_MAX, "u64 kept within the type");

    /* a need of 0 on an empty array allocates nothing */
    uint32_t c2 = 0;
    void *w = NULL;
    CHECK(vgt_grow_u32(&w, &c2, 0, 4, 16) == 0 && w == NULL && c2 == 0, "need 0 on nothing: nothing allocated");
    free(w);
    free(v);
}

int main(void)
{
    first_and_doubling();
    explicit_item_size();
    refusals_leave_the_array();
    zero_sized_items();
    return check_finish("test_grow");
}
