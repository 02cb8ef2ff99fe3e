/* events_model.c: the semantic tracker's memory reads served by the trace model (kept apart so that
 * users of the tracker without a model do not link the model). */
#include <string.h>

#include "vgt/events.h"
#include "vgt/model.h"

vgt_status vgt_sem_model_reader(void *model, uint64_t va, void *dst, uint64_t len, uint64_t *known, vgt_error *err)
{
    return vgt_model_mem_read((const vgt_model *)model, va, dst, len, known, err);
}

vgt_status vgt_sem_model_ptr_reader(void *model_ptr, uint64_t va, void *dst, uint64_t len, uint64_t *known,
                                    vgt_error *err)
{
    const vgt_model *model = *(const vgt_model *const *)model_ptr;
    if (!model) {
        memset(dst, 0, len);
        *known = 0;
        return VGT_OK;
    }
    return vgt_model_mem_read(model, va, dst, len, known, err);
}
