/* mme_emit_list.c: collects a macro's emitted (method, value) pairs so the caller can dispatch them
 * afterwards to whatever decodes the calling class (the simulator knows no classes). */
#include "mme_internal.h"

#include <stdlib.h>

vgt_status vgt_mme_emit_list_push(void *list, uint32_t method, uint32_t value)
{
    vgt_mme_emit_list *l = list;
    uint32_t max = l->max ? l->max : VGT_MME_DEFAULT_MAX_EMITS;
    if (l->n >= max) return VGT_E_LIMIT;
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 64;
        if (cap > max) cap = max;
        vgt_mme_emit *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return VGT_E_NOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (vgt_mme_emit){method, value};
    return VGT_OK;
}

void vgt_mme_emit_list_clear(vgt_mme_emit_list *l) { l->n = 0; }

void vgt_mme_emit_list_free(vgt_mme_emit_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

vgt_status vgt_mme_emit_list_dispatch(const vgt_mme_emit_list *l, vgt_mme_emit_fn fn, void *user)
{
    for (uint32_t i = 0; i < l->n; i++) VGT_TRY(fn(user, l->v[i].method, l->v[i].value));
    return VGT_OK;
}
