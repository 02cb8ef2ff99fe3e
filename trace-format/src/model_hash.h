/* model_hash.h (private): an open-addressing map from u64 keys to u32 values (linear probing, backward-
 * shift deletion), for the model's objects (key client:handle) and memory pages (key VA >> 12). */
#ifndef VGT_MODEL_HASH_H
#define VGT_MODEL_HASH_H

#include <stdint.h>

typedef struct u64map {
    uint64_t *keys;
    uint32_t *vals;          /* value + 1; 0 marks an empty slot */
    uint32_t cap, count;     /* cap: a power of two, or 0 */
} u64map;

int u64map_get(const u64map *m, uint64_t key, uint32_t *val);   /* 1 when found */
int u64map_put(u64map *m, uint64_t key, uint32_t val);          /* insert or update; -1 on no memory */
void u64map_del(u64map *m, uint64_t key);
void u64map_free(u64map *m);

#endif
