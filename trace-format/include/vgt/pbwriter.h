/* pbwriter.h: writing NVIDIA push buffers (method streams), for whoever must make one: `vgt synth`, the
 * gpu backend's own submissions and its self-test.
 *
 * Method header dword (open-gpu-doc classes/host/clc86f.h NVC86F_DMA_*; nvidia-rm-userspace.md §3):
 * SEC_OP 31:29 (1 INC, 3 NON_INC, 4 IMMD, 5 ONE_INC), COUNT (or IMMD's data) 28:16, SUBCHANNEL 15:13,
 * ADDRESS 11:0 = method >> 2. The writer fills the caller's array; a run longer than COUNT allows is
 * split over several headers (a ONE_INC run goes on as NON_INC on the next method). A run that does not
 * fit, a subchannel above 7, or a method (any method an INC run reaches) not a multiple of 4 below 0x4000
 * writes nothing and marks the writer bad, which vgt_pbw_check reports. */
#ifndef VGT_PBWRITER_H
#define VGT_PBWRITER_H

#include <stdint.h>

#include "vgt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vgt_pbw {
    uint32_t *dw;
    uint32_t n, cap;        /* dwords written, capacity */
    int overflow;           /* something was not written */
} vgt_pbw;

#define VGT_PBW_MAX_COUNT 0x1fffu          /* COUNT is 13 bits */

void vgt_pbw_init(vgt_pbw *w, uint32_t *dw, uint32_t cap);
void vgt_pbw_reset(vgt_pbw *w);           /* empty again, same array */
void vgt_pbw_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n);
void vgt_pbw_non_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n);
void vgt_pbw_one_inc(vgt_pbw *w, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n);
void vgt_pbw_1(vgt_pbw *w, unsigned subch, uint32_t method, uint32_t v);
void vgt_pbw_immd(vgt_pbw *w, unsigned subch, uint32_t method, uint32_t data13);
/* SET_OBJECT (host method 0x000): NVCLASS 15:0. */
void vgt_pbw_set_object(vgt_pbw *w, unsigned subch, uint32_t cls);

/* Host semaphore release (clc86f.h SEM_ADDR_LO 0x05c .. SEM_EXECUTE 0x06c; SEM_EXECUTE OPERATION 2:0
 * RELEASE = 1, RELEASE_WFI 20, PAYLOAD_SIZE 24). */
enum { VGT_PBW_RELEASE_WFI = 1u << 20, VGT_PBW_PAYLOAD_64 = 1u << 24 };
void vgt_pbw_host_release(vgt_pbw *w, uint64_t va, uint64_t payload, uint32_t flags);

/* VGT_E_LIMIT naming the writer's fill when something was not written. */
vgt_status vgt_pbw_check(const vgt_pbw *w, vgt_error *err);

#ifdef __cplusplus
}
#endif
#endif
