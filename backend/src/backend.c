/* backend.c: the table of backends and the choice of one at run time (see include/vgt/backend.h). */
#include "vgt/backend.h"

#include <stdio.h>
#include <string.h>

/* Order matters only for listing; the automatic choice is vgt_backend_auto's. */
static const vgt_backend_ops *backend_slot(uint32_t i)
{
    switch (i) {
    case 0: return &vgt_backend_sim;
    case 1: return &vgt_backend_gpu;
    case 2: return &vgt_backend_cuda;
    default: return NULL;
    }
}

uint32_t vgt_backend_count(void) { return 3; }

const vgt_backend_ops *vgt_backend_at(uint32_t i) { return backend_slot(i); }

const vgt_backend_ops *vgt_backend_find(const char *name)
{
    if (!name) return NULL;
    for (uint32_t i = 0; i < vgt_backend_count(); i++)
        if (!strcmp(backend_slot(i)->name, name)) return backend_slot(i);
    return NULL;
}

const vgt_backend_ops *vgt_backend_auto(char *why, uint32_t why_size)
{
    vgt_error err;
    vgt_error_clear(&err);
    if (why && why_size) why[0] = '\0';
    const vgt_backend_ops *gpu = backend_slot(1);
    if (gpu->probe(&err) == VGT_OK) return gpu;
    if (why && why_size) snprintf(why, why_size, "%s", err.msg);
    return &vgt_backend_sim;
}
