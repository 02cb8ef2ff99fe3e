/* pbwriter.c: the push-buffer writer (vgt/pbwriter.h says the layout and the rules). */
#include <string.h>

#include "vgt/pbwriter.h"

enum { SEC_INC = VGT_NV_SEC_INC, SEC_NON_INC = VGT_NV_SEC_NON_INC, SEC_IMMD = VGT_NV_SEC_IMMD, SEC_ONE_INC = VGT_NV_SEC_ONE_INC };

void vgt_pbw_init(vgt_pbw *w, uint32_t *dw, uint32_t cap)
{
    w->dw = dw;
    w->cap = cap;
    vgt_pbw_reset(w);
}

void vgt_pbw_reset(vgt_pbw *w)
{
    w->n = 0;
    w->overflow = 0;
}

static int valid(vgt_pbw *w, unsigned subch, uint32_t method, uint32_t need)
{
    if (w->overflow || subch > VGT_NV_MH_MAX_SUBCH || (method & 3) || method >= VGT_NV_METHOD_SPACE || need > w->cap - w->n) {
        w->overflow = 1;
        return 0;
    }
    return 1;
}

static uint32_t header(uint32_t sec_op, uint32_t count, unsigned subch, uint32_t method)
{
    return vgt_nv_mh_encode(sec_op, count, subch, method);   /* valid() checked the ranges */
}

static void run(vgt_pbw *w, uint32_t sec_op, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    while (n) {
        uint32_t k = n > VGT_PBW_MAX_COUNT ? VGT_PBW_MAX_COUNT : n;
        uint32_t last = sec_op == SEC_INC ? method + 4u * (k - 1) : method;   /* an INC run walks the methods */
        if (!valid(w, subch, last, 0) || !valid(w, subch, method, 1 + k)) return;
        w->dw[w->n++] = header(sec_op, k, subch, method);
        memcpy(w->dw + w->n, v, 4u * k);
        w->n += k;
        if (sec_op == SEC_INC) method += 4u * k;
        if (sec_op == SEC_ONE_INC) method += 4u, sec_op = SEC_NON_INC;
        v += k;
        n -= k;
    }
}

void vgt_pbw_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    run(w, SEC_INC, subch, method, v, n);
}

void vgt_pbw_non_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    run(w, SEC_NON_INC, subch, method, v, n);
}

void vgt_pbw_one_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    run(w, SEC_ONE_INC, subch, method, v, n);
}

void vgt_pbw_1(vgt_pbw *w, unsigned subch, uint32_t method, uint32_t v)
{
    run(w, SEC_INC, subch, method, &v, 1);
}

void vgt_pbw_immd(vgt_pbw *w, unsigned subch, uint32_t method, uint32_t data13)
{
    if (data13 > VGT_PBW_MAX_COUNT) w->overflow = 1;
    if (valid(w, subch, method, 1)) w->dw[w->n++] = header(SEC_IMMD, data13, subch, method);
}

void vgt_pbw_set_object(vgt_pbw *w, unsigned subch, uint32_t cls)
{
    vgt_pbw_1(w, subch, NVC86F_SET_OBJECT, VGT_NV_SET(NVC86F_SET_OBJECT_NVCLASS, cls));
}

void vgt_pbw_host_release(vgt_pbw *w, uint64_t va, uint64_t payload, uint32_t flags)
{
    const uint32_t m[5] = {
        (uint32_t)va & NVC86F_SEM_ADDR_LO_OFFSET_MASK,                       /* SEM_ADDR_LO */
        VGT_NV_SET(NVC86F_SEM_ADDR_HI_OFFSET, va >> 32),                      /* SEM_ADDR_HI */
        (uint32_t)payload,                                                    /* SEM_PAYLOAD_LO */
        (uint32_t)(payload >> 32),                                            /* SEM_PAYLOAD_HI */
        VGT_NV_DEF(NVC86F_SEM_EXECUTE_OPERATION, RELEASE) | (flags & (VGT_PBW_RELEASE_WFI | VGT_PBW_PAYLOAD_64)),
    };
    vgt_pbw_inc(w, 0, NVC86F_SEM_ADDR_LO, m, 5);
}

vgt_status vgt_pbw_check(const vgt_pbw *w, vgt_error *err)
{
    if (!w->overflow) return VGT_OK;
    return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "push buffer: %u of %u dwords used when a method run did not "
                    "fit or its header was out of range", w->n, w->cap);
}
