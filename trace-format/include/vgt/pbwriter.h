/* pbwriter.h: writing NVIDIA push buffers (method streams), for whoever must make one: `vgt synth`, the
 * gpu backend's own submissions and its self-test.
 *
 * Method headers are the codec's (vgt/nv_pushbuf.h: SEC_OP INC, NON_INC, IMMD, ONE_INC; a 13-bit COUNT or
 * IMMD's data; SUBCHANNEL; ADDRESS = method >> 2). The writer fills the caller's array; a run longer than COUNT allows is
 * split over several headers (a ONE_INC run goes on as NON_INC on the next method). A run that does not
 * fit, a subchannel above 7, or a method (any method an INC run reaches) not a multiple of 4 below 0x4000
 * writes nothing and marks the writer bad, which vgt_pbw_check reports. */
#ifndef VGT_PBWRITER_H
#define VGT_PBWRITER_H

#include <stdint.h>

#include "vgt/error.h"
#include "vgt/nv/clc86f.h"
#include "vgt/nv_facts.h"
#include "vgt/nv_pushbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vgt_pbw {
    uint32_t *dw;
    uint32_t n, cap;        /* dwords written, capacity */
    int overflow;           /* something was not written */
} vgt_pbw;

#define VGT_PBW_MAX_COUNT VGT_NV_MH_MAX_COUNT   /* COUNT is 13 bits */

void vgt_pbw_init(vgt_pbw *w, uint32_t *dw, uint32_t cap);
void vgt_pbw_reset(vgt_pbw *w);           /* empty again, same array */
void vgt_pbw_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n);
void vgt_pbw_non_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n);
void vgt_pbw_one_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n);
void vgt_pbw_1(vgt_pbw *w, unsigned subch, uint32_t method, uint32_t v);
void vgt_pbw_immd(vgt_pbw *w, unsigned subch, uint32_t method, uint32_t data13);
/* SET_OBJECT (host method): NVCLASS. */
void vgt_pbw_set_object(vgt_pbw *w, unsigned subch, uint32_t cls);

/* Host semaphore release (HOPPER_CHANNEL_GPFIFO_A SEM_ADDR_LO .. SEM_EXECUTE; SEM_EXECUTE OPERATION RELEASE,
 * with RELEASE_WFI and a 64-bit PAYLOAD_SIZE as flags asks). */
enum {
    VGT_PBW_RELEASE_WFI = VGT_NV_DEF(NVC86F_SEM_EXECUTE_RELEASE_WFI, EN),
    VGT_PBW_PAYLOAD_64 = VGT_NV_DEF(NVC86F_SEM_EXECUTE_PAYLOAD_SIZE, 64BIT),
};
void vgt_pbw_host_release(vgt_pbw *w, uint64_t va, uint64_t payload, uint32_t flags);

/* VGT_E_LIMIT naming the writer's fill when something was not written. */
vgt_status vgt_pbw_check(const vgt_pbw *w, vgt_error *err);

#ifdef __cplusplus
}
#endif
#endif
