/* cuda_api.c: names of the CUDA driver API records' numbers, the call head, and the link rule
 * (include/vgt/cuda.h; docs/trace-format.md section 5, 0x0032-0x0037, "Linking"). */
#include <string.h>

#include "le.h"
#include "vgt/cuda.h"

static const char *const api_names[VGT_CUDA_API_COUNT] = {
    [VGT_CUDA_INIT] = "cuInit",
    [VGT_CUDA_MODULE_LOAD] = "cuModuleLoad",
    [VGT_CUDA_MODULE_LOAD_DATA] = "cuModuleLoadData",
    [VGT_CUDA_MODULE_LOAD_DATA_EX] = "cuModuleLoadDataEx",
    [VGT_CUDA_MODULE_LOAD_FAT_BINARY] = "cuModuleLoadFatBinary",
    [VGT_CUDA_LIBRARY_LOAD_DATA] = "cuLibraryLoadData",
    [VGT_CUDA_LIBRARY_LOAD_FROM_FILE] = "cuLibraryLoadFromFile",
    [VGT_CUDA_MODULE_UNLOAD] = "cuModuleUnload",
    [VGT_CUDA_LIBRARY_UNLOAD] = "cuLibraryUnload",
    [VGT_CUDA_MODULE_GET_FUNCTION] = "cuModuleGetFunction",
    [VGT_CUDA_LIBRARY_GET_KERNEL] = "cuLibraryGetKernel",
    [VGT_CUDA_KERNEL_GET_FUNCTION] = "cuKernelGetFunction",
    [VGT_CUDA_LAUNCH_KERNEL] = "cuLaunchKernel",
    [VGT_CUDA_LAUNCH_KERNEL_EX] = "cuLaunchKernelEx",
    [VGT_CUDA_LAUNCH_COOPERATIVE_KERNEL] = "cuLaunchCooperativeKernel",
    [VGT_CUDA_GRAPH_LAUNCH] = "cuGraphLaunch",
    [VGT_CUDA_GRAPH_INSTANTIATE] = "cuGraphInstantiate",
    [VGT_CUDA_GRAPH_EXEC_DESTROY] = "cuGraphExecDestroy",
    [VGT_CUDA_MEM_ALLOC] = "cuMemAlloc",
    [VGT_CUDA_MEM_ALLOC_ASYNC] = "cuMemAllocAsync",
    [VGT_CUDA_MEM_ALLOC_MANAGED] = "cuMemAllocManaged",
    [VGT_CUDA_MEM_FREE] = "cuMemFree",
    [VGT_CUDA_MEM_FREE_ASYNC] = "cuMemFreeAsync",
    [VGT_CUDA_MEM_ALLOC_HOST] = "cuMemAllocHost",
    [VGT_CUDA_MEM_HOST_ALLOC] = "cuMemHostAlloc",
    [VGT_CUDA_MEM_FREE_HOST] = "cuMemFreeHost",
    [VGT_CUDA_MEMCPY] = "cuMemcpy",
    [VGT_CUDA_MEMCPY_ASYNC] = "cuMemcpyAsync",
    [VGT_CUDA_MEMCPY_HTOD] = "cuMemcpyHtoD",
    [VGT_CUDA_MEMCPY_HTOD_ASYNC] = "cuMemcpyHtoDAsync",
    [VGT_CUDA_MEMCPY_DTOH] = "cuMemcpyDtoH",
    [VGT_CUDA_MEMCPY_DTOH_ASYNC] = "cuMemcpyDtoHAsync",
    [VGT_CUDA_MEMCPY_DTOD] = "cuMemcpyDtoD",
    [VGT_CUDA_MEMCPY_DTOD_ASYNC] = "cuMemcpyDtoDAsync",
    [VGT_CUDA_MEMSET_D8] = "cuMemsetD8",
    [VGT_CUDA_MEMSET_D8_ASYNC] = "cuMemsetD8Async",
    [VGT_CUDA_MEMSET_D16] = "cuMemsetD16",
    [VGT_CUDA_MEMSET_D16_ASYNC] = "cuMemsetD16Async",
    [VGT_CUDA_MEMSET_D32] = "cuMemsetD32",
    [VGT_CUDA_MEMSET_D32_ASYNC] = "cuMemsetD32Async",
    [VGT_CUDA_STREAM_CREATE] = "cuStreamCreate",
    [VGT_CUDA_STREAM_CREATE_WITH_PRIORITY] = "cuStreamCreateWithPriority",
    [VGT_CUDA_STREAM_DESTROY] = "cuStreamDestroy",
    [VGT_CUDA_STREAM_SYNCHRONIZE] = "cuStreamSynchronize",
    [VGT_CUDA_STREAM_WAIT_EVENT] = "cuStreamWaitEvent",
    [VGT_CUDA_EVENT_CREATE] = "cuEventCreate",
    [VGT_CUDA_EVENT_RECORD] = "cuEventRecord",
    [VGT_CUDA_EVENT_SYNCHRONIZE] = "cuEventSynchronize",
    [VGT_CUDA_EVENT_DESTROY] = "cuEventDestroy",
    [VGT_CUDA_CTX_SYNCHRONIZE] = "cuCtxSynchronize",
    [VGT_CUDA_STREAM_BEGIN_CAPTURE] = "cuStreamBeginCapture",
    [VGT_CUDA_STREAM_END_CAPTURE] = "cuStreamEndCapture",
    [VGT_CUDA_EVENT_RECORD_WITH_FLAGS] = "cuEventRecordWithFlags",
    [VGT_CUDA_MODULE_GET_GLOBAL] = "cuModuleGetGlobal",
    [VGT_CUDA_LIBRARY_GET_GLOBAL] = "cuLibraryGetGlobal",
};

const char *vgt_cuda_api_name(uint32_t api) { return api < VGT_CUDA_API_COUNT ? api_names[api] : NULL; }

static const char *const op_names[VGT_CUDA_OP_COUNT] = {
    [VGT_CUDA_OP_ALLOC] = "alloc", [VGT_CUDA_OP_FREE] = "free", [VGT_CUDA_OP_HTOD] = "htod",
    [VGT_CUDA_OP_DTOH] = "dtoh", [VGT_CUDA_OP_DTOD] = "dtod", [VGT_CUDA_OP_MEMSET8] = "memset8",
    [VGT_CUDA_OP_MEMSET16] = "memset16", [VGT_CUDA_OP_MEMSET32] = "memset32",
    [VGT_CUDA_OP_DTOH_RESULT] = "dtoh_result", [VGT_CUDA_OP_HOST_ALLOC] = "host_alloc",
    [VGT_CUDA_OP_HOST_FREE] = "host_free", [VGT_CUDA_OP_HTOH] = "htoh",
};

const char *vgt_cuda_op_name(uint32_t op) { return op < VGT_CUDA_OP_COUNT ? op_names[op] : NULL; }

const char *vgt_cuda_image_kind_name(uint32_t kind)
{
    switch (kind) {
    case VGT_CUDA_IMAGE_FATBIN: return "fatbin";
    case VGT_CUDA_IMAGE_CUBIN: return "cubin";
    case VGT_CUDA_IMAGE_PTX: return "ptx";
    default: return "unknown";
    }
}

uint32_t vgt_cuda_image_kind_of(const void *image, uint64_t len)
{
    const uint8_t *p = image;
    if (!p || len < 4) return VGT_CUDA_IMAGE_UNKNOWN;
    uint32_t magic = le_get32(p);
    /* fatbinary header magic and the __fatBinC_Wrapper_t magic (CUDA's fatbinary.h / fatbinary_section.h) */
    if (magic == 0xBA55ED50u || magic == 0x466243B1u) return VGT_CUDA_IMAGE_FATBIN;
    if (!memcmp(p, "\x7f" "ELF", 4)) return VGT_CUDA_IMAGE_CUBIN;
    return VGT_CUDA_IMAGE_PTX;
}

int vgt_rec_is_cuda_api(uint16_t type) { return type >= VGT_REC_CUDA_LOAD && type <= VGT_REC_CUDA_CALL; }

vgt_status vgt_cuda_decode_head(const vgt_record *r, vgt_cuda_call_head *h, vgt_error *err)
{
    if (!vgt_rec_is_cuda_api(r->type) || r->length < 32 || !r->payload)
        return VGT_FAIL(err, VGT_E_FORMAT, r->chunk_offset, "record seq %llu (type 0x%04x): no CUDA call head",
                        (unsigned long long)r->seq, r->type);
    const uint8_t *p = r->payload;
    h->api = le_get32(p);
    h->result = (int32_t)le_get32(p + 4);
    h->thread = le_get32(p + 8);
    h->flags = le_get32(p + 12);
    h->submits_before = le_get64(p + 16);
    h->submits_after = le_get64(p + 24);
    return VGT_OK;
}

void vgt_cuda_link_of(const vgt_cuda_call_head *h, uint64_t total_submits, vgt_cuda_link *out)
{
    memset(out, 0, sizeof *out);
    if (h->submits_after > h->submits_before) {
        out->first = h->submits_before;
        out->count = h->submits_after - h->submits_before;
    } else if (h->submits_after < total_submits) {
        out->first = h->submits_after;
        out->count = 1;
        out->deferred = 1;
    } else {
        out->first = h->submits_after;
    }
}

int vgt_cuda_does_work(const vgt_record *r, const vgt_cuda_call_head *h)
{
    if (h->result != 0) return 0;
    if (r->type == VGT_REC_CUDA_KERNEL)
        return !(h->flags & (VGT_CUDA_KERNEL_GRAPH_NODE | VGT_CUDA_KERNEL_STREAM_CAPTURE));
    if (r->type == VGT_REC_CUDA_CALL) return h->api == VGT_CUDA_GRAPH_LAUNCH;
    if (r->type == VGT_REC_CUDA_MEMORY) {
        if (h->flags & (VGT_CUDA_MEM_GRAPH_NODE | VGT_CUDA_MEM_STREAM_CAPTURE)) return 0;
        uint32_t op = r->length >= 76 ? le_get32(r->payload + 72) : 0;
        /* copies and memsets; a zero-sized copy moves nothing */
        uint64_t size = r->length >= 56 ? le_get64(r->payload + 48) : 0;
        return size && (op == VGT_CUDA_OP_HTOD || op == VGT_CUDA_OP_DTOH || op == VGT_CUDA_OP_DTOD ||
                        op == VGT_CUDA_OP_MEMSET8 || op == VGT_CUDA_OP_MEMSET16 || op == VGT_CUDA_OP_MEMSET32);
    }
    return 0;
}

void vgt_cuda_rebase_head(uint8_t *payload, uint32_t len, uint64_t dropped)
{
    if (len < 32) return;
    for (int i = 0; i < 2; i++) {
        uint64_t v = le_get64(payload + 16 + 8 * i);
        le_put64(payload + 16 + 8 * i, v > dropped ? v - dropped : 0);
    }
}
