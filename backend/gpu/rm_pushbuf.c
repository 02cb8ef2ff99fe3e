/* rm_pushbuf.c: a bounded push-buffer writer for the backend's own submissions and the self-test.
 * Method header layout (DOC classes/host/clc86f.h NVC86F_DMA_*): SEC_OP 31:29 (1 INC, 3 NON_INC,
 * 5 ONE_INC), COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 (method >> 2). Host methods (same file):
 * SET_OBJECT 0x000, SEM_ADDR_LO 0x05c .. SEM_EXECUTE 0x06c with OPERATION 2:0 (RELEASE 1),
 * RELEASE_WFI 20, PAYLOAD_SIZE 24 (0: 32-bit). */
#include "gpu_internal.h"

enum { SEC_OP_INC = 1, SEC_OP_NON_INC = 3, SEC_OP_ONE_INC = 5 };
enum { HOST_SET_OBJECT = 0x000, HOST_SEM_ADDR_LO = 0x05c };
#define HOST_SEM_RELEASE_WFI_32 ((1u << 0) | (1u << 20))
#define PB_MAX_COUNT 0x1fffu

void vgt_gpu_pb_init(vgt_gpu_pb *pb, uint32_t *dw, uint32_t cap)
{
    pb->dw = dw;
    pb->n = 0;
    pb->cap = cap;
    pb->overflow = false;
}

static void put(vgt_gpu_pb *pb, uint32_t v)
{
    if (pb->n < pb->cap)
        pb->dw[pb->n++] = v;
    else
        pb->overflow = true;
}

/* A header whose fields do not fit is not written (nor its data): the writer is marked bad. */
static bool header(vgt_gpu_pb *pb, unsigned sec_op, unsigned subch, uint32_t method, uint32_t count)
{
    if (count > PB_MAX_COUNT || subch > 7 || (method & 3) || method > 0x3ffc) {
        pb->overflow = true;
        return false;
    }
    put(pb, ((uint32_t)sec_op << 29) | (count << 16) | ((uint32_t)subch << 13) | (method >> 2));
    return true;
}

static void body(vgt_gpu_pb *pb, unsigned sec_op, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    if (!header(pb, sec_op, subch, method, n))
        return;
    for (uint32_t i = 0; i < n; i++)
        put(pb, v[i]);
}

void vgt_gpu_pb_inc(vgt_gpu_pb *pb, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    body(pb, SEC_OP_INC, subch, method, v, n);
}

void vgt_gpu_pb_non_inc(vgt_gpu_pb *pb, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    body(pb, SEC_OP_NON_INC, subch, method, v, n);
}

void vgt_gpu_pb_one_inc(vgt_gpu_pb *pb, unsigned subch, uint32_t method, const uint32_t *v, uint32_t n)
{
    body(pb, SEC_OP_ONE_INC, subch, method, v, n);
}

void vgt_gpu_pb_1(vgt_gpu_pb *pb, unsigned subch, uint32_t method, uint32_t v)
{
    body(pb, SEC_OP_INC, subch, method, &v, 1);
}

void vgt_gpu_pb_set_object(vgt_gpu_pb *pb, unsigned subch, uint32_t cls)
{
    vgt_gpu_pb_1(pb, subch, HOST_SET_OBJECT, cls);
}

void vgt_gpu_pb_host_release(vgt_gpu_pb *pb, uint64_t va, uint32_t payload)
{
    const uint32_t v[5] = { (uint32_t)va, (uint32_t)(va >> 32), payload, 0, HOST_SEM_RELEASE_WFI_32 };
    vgt_gpu_pb_inc(pb, 0, HOST_SEM_ADDR_LO, v, 5);
}

void vgt_gpu_pb_host_release_nowfi(vgt_gpu_pb *pb, uint64_t va, uint32_t payload)
{
    /* SEM_EXECUTE RELEASE_WFI (bit 20) DIS: the release does not wait for the engines to idle */
    const uint32_t v[5] = { (uint32_t)va, (uint32_t)(va >> 32), payload, 0, HOST_SEM_RELEASE_WFI_32 & ~(1u << 20) };
    vgt_gpu_pb_inc(pb, 0, HOST_SEM_ADDR_LO, v, 5);
}

vgt_status vgt_gpu_pb_check(const vgt_gpu_pb *pb, vgt_error *err)
{
    if (pb->overflow)
        return VGT_FAIL(err, VGT_E_LIMIT, VGT_NO_OFFSET, "push buffer overflow: %u dwords written, capacity %u, or a "
                        "header out of range", pb->n, pb->cap);
    return VGT_OK;
}
