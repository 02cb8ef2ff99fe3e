/* cuda_mem.c: the memory, stream, event and synchronization entry points (cuda_cap.h). Copies keep the
 * bytes that crossed between host and device (up to cu_data_max() each): host-to-device as of the call,
 * device-to-host when they have arrived (at the call for a synchronous copy, at the synchronization that
 * follows an asynchronous one: DTOH_RESULT). */
#include <string.h>

#include "cuda_cap.h"
#include "cuda_syms.h"

#define PT VGT_CUDA_CALL_PER_THREAD
#define U64(p) ((uint64_t)(uintptr_t)(p))

SHIM_EXPORT CUresult cuInit(unsigned int flags)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_INIT, 0);
    CUresult r = CU_REAL(cuInit) ? CU_REAL(cuInit)(flags) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    if (c.rec) {
        vgt_rec_cuda_call k = {.call = c.head, .arg0 = flags};
        cu_write(VGT_REC_CUDA_CALL, &k);
    }
    return r;
}

/* One CUDA_MEMORY record. data: the bytes to keep (NULL: none), at most cu_data_max() of size. */
static void write_mem(const cu_call *c, uint32_t op, uint32_t flags, uint64_t dst, uint64_t src, uint64_t size,
                      uint64_t stream, uint32_t value, const void *data)
{
    if (!c->rec) return;
    vgt_rec_cuda_memory m = {.call = c->head, .dst = dst, .src = src, .size = size, .stream = stream, .op = op,
                             .value = value};
    m.call.flags |= flags;
    if (data && size) {
        uint64_t n = size < cu_data_max() ? size : cu_data_max();
        m.data = data;
        m.data_length = (uint32_t)n;
        if (n < size) m.call.flags |= VGT_CUDA_MEM_DATA_TRUNCATED;
    }
    if (c->head.result != CUDA_SUCCESS) m.data = NULL, m.data_length = 0;
    cu_write(VGT_REC_CUDA_MEMORY, &m);
}

static uint32_t stream_flags(uint64_t stream, int async)
{
    return (async ? VGT_CUDA_MEM_ASYNC : 0) | (cu_capturing(stream) ? VGT_CUDA_MEM_STREAM_CAPTURE : 0);
}

/* ---- allocations ---- */

static CUresult alloc_common(CUresult r, cu_call *c, uint32_t op, CUdeviceptr *p, size_t n, uint64_t stream)
{
    cu_end(c, r);
    uint64_t a = r == CUDA_SUCCESS && p ? *p : 0;
    if (c->rec && a) cu_alloc_add(a, n);
    write_mem(c, op, stream ? VGT_CUDA_MEM_ASYNC : 0, a, 0, n, stream, 0, NULL);
    return r;
}

SHIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MEM_ALLOC, 0);
    CUresult r = CU_REAL(cuMemAlloc_v2) ? CU_REAL(cuMemAlloc_v2)(p, n) : CUDA_ERROR_NOT_FOUND;
    return alloc_common(r, &c, VGT_CUDA_OP_ALLOC, p, n, 0);
}

SHIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MEM_ALLOC_MANAGED, 0);
    CUresult r = CU_REAL(cuMemAllocManaged) ? CU_REAL(cuMemAllocManaged)(p, n, flags) : CUDA_ERROR_NOT_FOUND;
    return alloc_common(r, &c, VGT_CUDA_OP_ALLOC, p, n, 0);
}

#define ALLOC_ASYNC(sym, vf)                                                                         \
    SHIM_EXPORT CUresult sym(CUdeviceptr *p, size_t n, CUstream s)                                   \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_MEM_ALLOC_ASYNC, vf);                                                  \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(p, n, s) : CUDA_ERROR_NOT_FOUND;                    \
        return alloc_common(r, &c, VGT_CUDA_OP_ALLOC, p, n, U64(s));                                 \
    }
ALLOC_ASYNC(cuMemAllocAsync, 0)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, PT)

SHIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MEM_FREE, 0);
    CUresult r = CU_REAL(cuMemFree_v2) ? CU_REAL(cuMemFree_v2)(p) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    if (c.rec && r == CUDA_SUCCESS) cu_alloc_remove(p);
    write_mem(&c, VGT_CUDA_OP_FREE, 0, p, 0, 0, 0, 0, NULL);
    return r;
}

#define FREE_ASYNC(sym, vf)                                                                          \
    SHIM_EXPORT CUresult sym(CUdeviceptr p, CUstream s)                                              \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_MEM_FREE_ASYNC, vf);                                                   \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(p, s) : CUDA_ERROR_NOT_FOUND;                       \
        cu_end(&c, r);                                                                               \
        if (c.rec && r == CUDA_SUCCESS) cu_alloc_remove(p);                                          \
        write_mem(&c, VGT_CUDA_OP_FREE, VGT_CUDA_MEM_ASYNC, p, 0, 0, U64(s), 0, NULL);               \
        return r;                                                                                    \
    }
FREE_ASYNC(cuMemFreeAsync, 0)
FREE_ASYNC(cuMemFreeAsync_ptsz, PT)

SHIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t n)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MEM_ALLOC_HOST, 0);
    CUresult r = CU_REAL(cuMemAllocHost_v2) ? CU_REAL(cuMemAllocHost_v2)(pp, n) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_mem(&c, VGT_CUDA_OP_HOST_ALLOC, 0, r == CUDA_SUCCESS && pp ? U64(*pp) : 0, 0, n, 0, 0, NULL);
    return r;
}

SHIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t n, unsigned int flags)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MEM_HOST_ALLOC, 0);
    CUresult r = CU_REAL(cuMemHostAlloc) ? CU_REAL(cuMemHostAlloc)(pp, n, flags) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_mem(&c, VGT_CUDA_OP_HOST_ALLOC, 0, r == CUDA_SUCCESS && pp ? U64(*pp) : 0, 0, n, 0, flags, NULL);
    return r;
}

SHIM_EXPORT CUresult cuMemFreeHost(void *p)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_MEM_FREE_HOST, 0);
    CUresult r = CU_REAL(cuMemFreeHost) ? CU_REAL(cuMemFreeHost)(p) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_mem(&c, VGT_CUDA_OP_HOST_FREE, 0, U64(p), 0, 0, 0, 0, NULL);
    return r;
}

/* ---- copies ---- */

/* After a copy: its record (op by direction), and for device-to-host the bytes (now, or at the next
 * synchronization when asynchronous). */
static void after_copy(cu_call *c, uint32_t op, uint64_t dst, uint64_t src, uint64_t n, uint64_t stream, int async)
{
    if (!c->rec) return;
    uint32_t flags = stream_flags(stream, async);
    const void *data = NULL;
    if (op == VGT_CUDA_OP_HTOD) data = (const void *)(uintptr_t)src;
    if (op == VGT_CUDA_OP_DTOH && !(flags & VGT_CUDA_MEM_STREAM_CAPTURE)) {
        if (async && c->head.result == CUDA_SUCCESS) {
            flags |= VGT_CUDA_MEM_DATA_LATER;
            cu_pending_dtoh(dst, src, n, stream);
        } else {
            data = (const void *)(uintptr_t)dst;
        }
    }
    write_mem(c, op, flags, dst, src, n, stream, 0, data);
}

/* A copy whose direction the addresses give (unified addressing): device where an allocation we saw
 * covers the address. */
static uint32_t unified_op(uint64_t dst, uint64_t src)
{
    int d = cu_is_device(dst), s = cu_is_device(src);
    return s ? (d ? VGT_CUDA_OP_DTOD : VGT_CUDA_OP_DTOH) : (d ? VGT_CUDA_OP_HTOD : VGT_CUDA_OP_HTOH);
}

#define COPY_SYNC(sym, api, vf, dtype, stype, op_expr)                                               \
    SHIM_EXPORT CUresult sym(dtype dst, stype src, size_t n)                                         \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, api, vf);                                                                       \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(dst, src, n) : CUDA_ERROR_NOT_FOUND;                \
        cu_end(&c, r);                                                                               \
        if (c.rec) {                                                                                 \
            uint64_t d_ = (uint64_t)(uintptr_t)dst, s_ = (uint64_t)(uintptr_t)src;                   \
            after_copy(&c, op_expr, d_, s_, n, 0, 0);                                                \
            if (r == CUDA_SUCCESS) cu_flush_dtoh(&c, 0, 0);   /* synchronous: the legacy stream synced */ \
        }                                                                                            \
        return r;                                                                                    \
    }
#define COPY_ASYNC(sym, api, vf, dtype, stype, op_expr)                                              \
    SHIM_EXPORT CUresult sym(dtype dst, stype src, size_t n, CUstream s)                             \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, api, vf);                                                                       \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(dst, src, n, s) : CUDA_ERROR_NOT_FOUND;             \
        cu_end(&c, r);                                                                               \
        if (c.rec) {                                                                                 \
            uint64_t d_ = (uint64_t)(uintptr_t)dst, s_ = (uint64_t)(uintptr_t)src;                   \
            after_copy(&c, op_expr, d_, s_, n, U64(s), 1);                                           \
        }                                                                                            \
        return r;                                                                                    \
    }

COPY_SYNC(cuMemcpy, VGT_CUDA_MEMCPY, 0, CUdeviceptr, CUdeviceptr, unified_op(d_, s_))
COPY_SYNC(cuMemcpy_ptds, VGT_CUDA_MEMCPY, PT, CUdeviceptr, CUdeviceptr, unified_op(d_, s_))
COPY_ASYNC(cuMemcpyAsync, VGT_CUDA_MEMCPY_ASYNC, 0, CUdeviceptr, CUdeviceptr, unified_op(d_, s_))
COPY_ASYNC(cuMemcpyAsync_ptsz, VGT_CUDA_MEMCPY_ASYNC, PT, CUdeviceptr, CUdeviceptr, unified_op(d_, s_))
COPY_SYNC(cuMemcpyHtoD_v2, VGT_CUDA_MEMCPY_HTOD, 0, CUdeviceptr, const void *, VGT_CUDA_OP_HTOD)
COPY_SYNC(cuMemcpyHtoD_v2_ptds, VGT_CUDA_MEMCPY_HTOD, PT, CUdeviceptr, const void *, VGT_CUDA_OP_HTOD)
COPY_ASYNC(cuMemcpyHtoDAsync_v2, VGT_CUDA_MEMCPY_HTOD_ASYNC, 0, CUdeviceptr, const void *, VGT_CUDA_OP_HTOD)
COPY_ASYNC(cuMemcpyHtoDAsync_v2_ptsz, VGT_CUDA_MEMCPY_HTOD_ASYNC, PT, CUdeviceptr, const void *, VGT_CUDA_OP_HTOD)
COPY_SYNC(cuMemcpyDtoH_v2, VGT_CUDA_MEMCPY_DTOH, 0, void *, CUdeviceptr, VGT_CUDA_OP_DTOH)
COPY_SYNC(cuMemcpyDtoH_v2_ptds, VGT_CUDA_MEMCPY_DTOH, PT, void *, CUdeviceptr, VGT_CUDA_OP_DTOH)
COPY_ASYNC(cuMemcpyDtoHAsync_v2, VGT_CUDA_MEMCPY_DTOH_ASYNC, 0, void *, CUdeviceptr, VGT_CUDA_OP_DTOH)
COPY_ASYNC(cuMemcpyDtoHAsync_v2_ptsz, VGT_CUDA_MEMCPY_DTOH_ASYNC, PT, void *, CUdeviceptr, VGT_CUDA_OP_DTOH)
COPY_SYNC(cuMemcpyDtoD_v2, VGT_CUDA_MEMCPY_DTOD, 0, CUdeviceptr, CUdeviceptr, VGT_CUDA_OP_DTOD)
COPY_SYNC(cuMemcpyDtoD_v2_ptds, VGT_CUDA_MEMCPY_DTOD, PT, CUdeviceptr, CUdeviceptr, VGT_CUDA_OP_DTOD)
COPY_ASYNC(cuMemcpyDtoDAsync_v2, VGT_CUDA_MEMCPY_DTOD_ASYNC, 0, CUdeviceptr, CUdeviceptr, VGT_CUDA_OP_DTOD)
COPY_ASYNC(cuMemcpyDtoDAsync_v2_ptsz, VGT_CUDA_MEMCPY_DTOD_ASYNC, PT, CUdeviceptr, CUdeviceptr, VGT_CUDA_OP_DTOD)

/* ---- memsets (size in the record: bytes) ---- */
#define MEMSET_SYNC(sym, api, vf, vtype, op, esize)                                                  \
    SHIM_EXPORT CUresult sym(CUdeviceptr dst, vtype v, size_t n)                                     \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, api, vf);                                                                       \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(dst, v, n) : CUDA_ERROR_NOT_FOUND;                  \
        cu_end(&c, r);                                                                               \
        write_mem(&c, op, 0, dst, 0, (uint64_t)n * esize, 0, v, NULL);                               \
        return r;                                                                                    \
    }
#define MEMSET_ASYNC(sym, api, vf, vtype, op, esize)                                                 \
    SHIM_EXPORT CUresult sym(CUdeviceptr dst, vtype v, size_t n, CUstream s)                         \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, api, vf);                                                                       \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(dst, v, n, s) : CUDA_ERROR_NOT_FOUND;               \
        cu_end(&c, r);                                                                               \
        if (c.rec) write_mem(&c, op, stream_flags(U64(s), 1), dst, 0, (uint64_t)n * esize, U64(s), v, NULL); \
        return r;                                                                                    \
    }
MEMSET_SYNC(cuMemsetD8_v2, VGT_CUDA_MEMSET_D8, 0, unsigned char, VGT_CUDA_OP_MEMSET8, 1)
MEMSET_SYNC(cuMemsetD8_v2_ptds, VGT_CUDA_MEMSET_D8, PT, unsigned char, VGT_CUDA_OP_MEMSET8, 1)
MEMSET_ASYNC(cuMemsetD8Async, VGT_CUDA_MEMSET_D8_ASYNC, 0, unsigned char, VGT_CUDA_OP_MEMSET8, 1)
MEMSET_ASYNC(cuMemsetD8Async_ptsz, VGT_CUDA_MEMSET_D8_ASYNC, PT, unsigned char, VGT_CUDA_OP_MEMSET8, 1)
MEMSET_SYNC(cuMemsetD16_v2, VGT_CUDA_MEMSET_D16, 0, unsigned short, VGT_CUDA_OP_MEMSET16, 2)
MEMSET_SYNC(cuMemsetD16_v2_ptds, VGT_CUDA_MEMSET_D16, PT, unsigned short, VGT_CUDA_OP_MEMSET16, 2)
MEMSET_ASYNC(cuMemsetD16Async, VGT_CUDA_MEMSET_D16_ASYNC, 0, unsigned short, VGT_CUDA_OP_MEMSET16, 2)
MEMSET_ASYNC(cuMemsetD16Async_ptsz, VGT_CUDA_MEMSET_D16_ASYNC, PT, unsigned short, VGT_CUDA_OP_MEMSET16, 2)
MEMSET_SYNC(cuMemsetD32_v2, VGT_CUDA_MEMSET_D32, 0, unsigned int, VGT_CUDA_OP_MEMSET32, 4)
MEMSET_SYNC(cuMemsetD32_v2_ptds, VGT_CUDA_MEMSET_D32, PT, unsigned int, VGT_CUDA_OP_MEMSET32, 4)
MEMSET_ASYNC(cuMemsetD32Async, VGT_CUDA_MEMSET_D32_ASYNC, 0, unsigned int, VGT_CUDA_OP_MEMSET32, 4)
MEMSET_ASYNC(cuMemsetD32Async_ptsz, VGT_CUDA_MEMSET_D32_ASYNC, PT, unsigned int, VGT_CUDA_OP_MEMSET32, 4)

/* ---- streams, events, synchronization ---- */

static void write_call(const cu_call *c, uint64_t object, uint64_t arg0, uint64_t arg1)
{
    if (!c->rec) return;
    vgt_rec_cuda_call k = {.call = c->head, .object = object, .arg0 = arg0, .arg1 = arg1};
    cu_write(VGT_REC_CUDA_CALL, &k);
}

SHIM_EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_STREAM_CREATE, 0);
    CUresult r = CU_REAL(cuStreamCreate) ? CU_REAL(cuStreamCreate)(s, flags) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, r == CUDA_SUCCESS && s ? U64(*s) : 0, flags, 0);
    return r;
}

SHIM_EXPORT CUresult cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int prio)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_STREAM_CREATE_WITH_PRIORITY, 0);
    CUresult r = CU_REAL(cuStreamCreateWithPriority) ? CU_REAL(cuStreamCreateWithPriority)(s, flags, prio)
                                                     : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, r == CUDA_SUCCESS && s ? U64(*s) : 0, flags, (uint64_t)(int64_t)prio);
    return r;
}

SHIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_STREAM_DESTROY, 0);
    CUresult r = CU_REAL(cuStreamDestroy_v2) ? CU_REAL(cuStreamDestroy_v2)(s) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, U64(s), 0, 0);
    return r;
}

#define STREAM_SYNC(sym, vf)                                                                         \
    SHIM_EXPORT CUresult sym(CUstream s)                                                             \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_STREAM_SYNCHRONIZE, vf);                                               \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(s) : CUDA_ERROR_NOT_FOUND;                          \
        cu_end(&c, r);                                                                               \
        write_call(&c, U64(s), 0, 0);                                                                \
        if (c.rec && r == CUDA_SUCCESS) cu_flush_dtoh(&c, U64(s), 0);                                    \
        return r;                                                                                    \
    }
STREAM_SYNC(cuStreamSynchronize, 0)
STREAM_SYNC(cuStreamSynchronize_ptsz, PT)

#define STREAM_WAIT(sym, vf)                                                                         \
    SHIM_EXPORT CUresult sym(CUstream s, CUevent e, unsigned int flags)                              \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_STREAM_WAIT_EVENT, vf);                                                \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(s, e, flags) : CUDA_ERROR_NOT_FOUND;                \
        cu_end(&c, r);                                                                               \
        write_call(&c, U64(s), U64(e), flags);                                                       \
        return r;                                                                                    \
    }
STREAM_WAIT(cuStreamWaitEvent, 0)
STREAM_WAIT(cuStreamWaitEvent_ptsz, PT)

SHIM_EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_EVENT_CREATE, 0);
    CUresult r = CU_REAL(cuEventCreate) ? CU_REAL(cuEventCreate)(e, flags) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, r == CUDA_SUCCESS && e ? U64(*e) : 0, flags, 0);
    return r;
}

#define EVENT_RECORD(sym, vf)                                                                        \
    SHIM_EXPORT CUresult sym(CUevent e, CUstream s)                                                  \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_EVENT_RECORD, vf);                                                     \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(e, s) : CUDA_ERROR_NOT_FOUND;                       \
        cu_end(&c, r);                                                                               \
        if (c.rec && r == CUDA_SUCCESS) cu_event_recorded(U64(e), U64(s));                           \
        write_call(&c, U64(e), U64(s), 0);                                                           \
        return r;                                                                                    \
    }
EVENT_RECORD(cuEventRecord, 0)
EVENT_RECORD(cuEventRecord_ptsz, PT)

#define EVENT_RECORD_FLAGS(sym, vf)                                                                  \
    SHIM_EXPORT CUresult sym(CUevent e, CUstream s, unsigned int flags)                              \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_EVENT_RECORD_WITH_FLAGS, vf);                                          \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(e, s, flags) : CUDA_ERROR_NOT_FOUND;                \
        cu_end(&c, r);                                                                               \
        if (c.rec && r == CUDA_SUCCESS) cu_event_recorded(U64(e), U64(s));                           \
        write_call(&c, U64(e), U64(s), flags);                                                       \
        return r;                                                                                    \
    }
EVENT_RECORD_FLAGS(cuEventRecordWithFlags, 0)
EVENT_RECORD_FLAGS(cuEventRecordWithFlags_ptsz, PT)

SHIM_EXPORT CUresult cuEventSynchronize(CUevent e)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_EVENT_SYNCHRONIZE, 0);
    CUresult r = CU_REAL(cuEventSynchronize) ? CU_REAL(cuEventSynchronize)(e) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, U64(e), 0, 0);
    if (c.rec && r == CUDA_SUCCESS) {
        uint64_t s = cu_event_stream(U64(e));
        if (s != ~0ull) cu_flush_dtoh(&c, s, 0);
    }
    return r;
}

SHIM_EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_EVENT_DESTROY, 0);
    CUresult r = CU_REAL(cuEventDestroy_v2) ? CU_REAL(cuEventDestroy_v2)(e) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, U64(e), 0, 0);
    return r;
}

SHIM_EXPORT CUresult cuCtxSynchronize(void)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_CTX_SYNCHRONIZE, 0);
    CUresult r = CU_REAL(cuCtxSynchronize) ? CU_REAL(cuCtxSynchronize)() : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, 0, 0, 0);
    if (c.rec && r == CUDA_SUCCESS) cu_flush_dtoh(&c, 0, 1);
    return r;
}

/* cuCtxSynchronize_v2 (CUDA 13.0): the context given (NULL: the current one); what the runtime's
 * cudaDeviceSynchronize calls when it was built against CUDA 13. */
SHIM_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    CU_CALL(c);
    cu_begin(&c, VGT_CUDA_CTX_SYNCHRONIZE, 0);
    CUresult r = CU_REAL(cuCtxSynchronize_v2) ? CU_REAL(cuCtxSynchronize_v2)(ctx) : CUDA_ERROR_NOT_FOUND;
    cu_end(&c, r);
    write_call(&c, U64(ctx), 0, 0);
    if (c.rec && r == CUDA_SUCCESS) cu_flush_dtoh(&c, 0, 1);
    return r;
}

static void began_capture(cu_call *c, CUresult r, CUstream s, int mode)
{
    if (c->rec && r == CUDA_SUCCESS) cu_capture_begin(U64(s));
    write_call(c, U64(s), (uint64_t)mode, 0);
}

#define BEGIN_CAPTURE(sym, vf)                                                                       \
    SHIM_EXPORT CUresult sym(CUstream s, int mode)                                                   \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_STREAM_BEGIN_CAPTURE, vf);                                             \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(s, mode) : CUDA_ERROR_NOT_FOUND;                    \
        cu_end(&c, r);                                                                               \
        began_capture(&c, r, s, mode);                                                               \
        return r;                                                                                    \
    }
BEGIN_CAPTURE(cuStreamBeginCapture_v2, 0)
BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz, PT)

/* The first version (CUDA 10.0) has no mode: it captures in global mode (CU_STREAM_CAPTURE_MODE_GLOBAL, 0). */
#define BEGIN_CAPTURE_V1(sym, vf)                                                                    \
    SHIM_EXPORT CUresult sym(CUstream s)                                                             \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_STREAM_BEGIN_CAPTURE, vf);                                             \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(s) : CUDA_ERROR_NOT_FOUND;                          \
        cu_end(&c, r);                                                                               \
        began_capture(&c, r, s, 0);                                                                  \
        return r;                                                                                    \
    }
BEGIN_CAPTURE_V1(cuStreamBeginCapture, 0)
BEGIN_CAPTURE_V1(cuStreamBeginCapture_ptsz, PT)

#define END_CAPTURE(sym, vf)                                                                         \
    SHIM_EXPORT CUresult sym(CUstream s, CUgraph *g)                                                 \
    {                                                                                                \
        CU_CALL(c);                                                                                  \
        cu_begin(&c, VGT_CUDA_STREAM_END_CAPTURE, vf);                                               \
        CUresult r = CU_REAL(sym) ? CU_REAL(sym)(s, g) : CUDA_ERROR_NOT_FOUND;                       \
        cu_end(&c, r);                                                                               \
        if (c.rec) cu_capture_end(U64(s));                                                           \
        write_call(&c, U64(s), r == CUDA_SUCCESS && g ? U64(*g) : 0, 0);                             \
        return r;                                                                                    \
    }
END_CAPTURE(cuStreamEndCapture, 0)
END_CAPTURE(cuStreamEndCapture_ptsz, PT)
