/* grow.c: arrays grown by doubling (vgt/grow.h). */
#include "vgt/grow.h"

#include <stdlib.h>

/* The capacity to grow to from cap for need items (need > cap), at most max; 0 when need is over max. */
static uint64_t next_cap(uint64_t cap, uint64_t need, size_t item, uint64_t first, uint64_t max)
{
    if (need > max) return 0;
    uint64_t c = cap ? cap : first ? first : 1;
    while (c < need) c = c > max / 2 ? max : 2 * c;
    if (c > max) c = max;   /* a first over the type's range */
    if (item && c > SIZE_MAX / item) c = need;   /* the doubled bytes would overflow: exactly what is asked */
    if (item && c > SIZE_MAX / item) return 0;
    return c;
}

static int grow(void **p, uint64_t *newcap, uint64_t cap, uint64_t need, size_t item, uint64_t first, uint64_t max)
{
    uint64_t c = next_cap(cap, need, item, first, max);
    if (!c) return -1;
    size_t bytes = (size_t)c * item;
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q) return -1;
    *p = q;
    *newcap = c;
    return 0;
}

int vgt_grow_u32(void **p, uint32_t *cap, uint64_t need, size_t item, uint32_t first)
{
    if (need <= *cap) return 0;
    uint64_t c;
    if (grow(p, &c, *cap, need, item, first, UINT32_MAX)) return -1;
    *cap = (uint32_t)c;
    return 0;
}

int vgt_grow_u64(void **p, uint64_t *cap, uint64_t need, size_t item, uint64_t first)
{
    if (need <= *cap) return 0;
    return grow(p, cap, *cap, need, item, first, UINT64_MAX);
}
