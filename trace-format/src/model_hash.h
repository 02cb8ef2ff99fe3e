/* model_hash.h (private): the model's name for the map of vgt/u64map.h (objects by client:handle,
 * memory pages by VA >> 12). */
#ifndef VGT_MODEL_HASH_H
#define VGT_MODEL_HASH_H

#include "vgt/u64map.h"

typedef vgt_u64map u64map;
#define u64map_get vgt_u64map_get
#define u64map_put vgt_u64map_put
#define u64map_del vgt_u64map_del
#define u64map_free vgt_u64map_free

#endif
