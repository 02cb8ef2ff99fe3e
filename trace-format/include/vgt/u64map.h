/* u64map.h: an open-addressing map from u64 keys to u32 values (linear probing, backward-shift deletion,
 * load under 1/2): the model's objects and pages, and every lookup by (client, handle) that a hostile
 * trace could make quadratic (the walker's and the replay engine's channels). */
#ifndef VGT_U64MAP_H
#define VGT_U64MAP_H

#include <stdint.h>

typedef struct vgt_u64map {
    uint64_t *keys;
    uint32_t *vals;          /* value + 1; 0 marks an empty slot */
    uint32_t cap, count;     /* cap: a power of two, or 0 */
} vgt_u64map;

int vgt_u64map_get(const vgt_u64map *m, uint64_t key, uint32_t *val);   /* 1 when found */
int vgt_u64map_put(vgt_u64map *m, uint64_t key, uint32_t val);          /* insert or update; -1 on no memory */
void vgt_u64map_del(vgt_u64map *m, uint64_t key);
void vgt_u64map_free(vgt_u64map *m);

/* The key of an RM object (client, handle). */
static inline uint64_t vgt_u64map_handle_key(uint32_t client, uint32_t handle) { return (uint64_t)client << 32 | handle; }

#endif
