/* rm_status.c: names of RM status codes and robust-channel (RC) error codes, as data.
 * Values: OGKM src/common/sdk/nvidia/inc/nvstatuscodes.h (NV_STATUS) and nverror.h (RC errors, the
 * "Xid" numbers the kernel log prints). */
#include "gpu_internal.h"

typedef struct code_name {
    uint32_t code;
    const char *name;
} code_name;

static const code_name rm_status_names[] = {
    { 0x00, "NV_OK" },
    { 0x03, "NV_ERR_BUSY_RETRY" },
    { 0x0f, "NV_ERR_GPU_IS_LOST" },
    { 0x11, "NV_ERR_GPU_NOT_FULL_POWER" },
    { 0x12, "NV_ERR_GPU_UUID_NOT_FOUND" },
    { 0x16, "NV_ERR_ILLEGAL_ACTION" },
    { 0x17, "NV_ERR_IN_USE" },
    { 0x1a, "NV_ERR_INSUFFICIENT_RESOURCES" },
    { 0x1b, "NV_ERR_INSUFFICIENT_PERMISSIONS" },
    { 0x1e, "NV_ERR_INVALID_ADDRESS" },
    { 0x1f, "NV_ERR_INVALID_ARGUMENT" },
    { 0x20, "NV_ERR_INVALID_BASE" },
    { 0x21, "NV_ERR_INVALID_CHANNEL" },
    { 0x22, "NV_ERR_INVALID_CLASS" },
    { 0x23, "NV_ERR_INVALID_CLIENT" },
    { 0x24, "NV_ERR_INVALID_COMMAND" },
    { 0x25, "NV_ERR_INVALID_DATA" },
    { 0x26, "NV_ERR_INVALID_DEVICE" },
    { 0x27, "NV_ERR_INVALID_DMA_SPECIFIER" },
    { 0x29, "NV_ERR_INVALID_FLAGS" },
    { 0x2a, "NV_ERR_INVALID_FUNCTION" },
    { 0x2c, "NV_ERR_INVALID_INDEX" },
    { 0x2e, "NV_ERR_INVALID_LIMIT" },
    { 0x2f, "NV_ERR_INVALID_LOCK_STATE" },
    { 0x30, "NV_ERR_INVALID_METHOD" },
    { 0x31, "NV_ERR_INVALID_OBJECT" },
    { 0x32, "NV_ERR_INVALID_OBJECT_BUFFER" },
    { 0x33, "NV_ERR_INVALID_OBJECT_HANDLE" },
    { 0x34, "NV_ERR_INVALID_OBJECT_NEW" },
    { 0x35, "NV_ERR_INVALID_OBJECT_OLD" },
    { 0x36, "NV_ERR_INVALID_OBJECT_PARENT" },
    { 0x37, "NV_ERR_INVALID_OFFSET" },
    { 0x38, "NV_ERR_INVALID_OPERATION" },
    { 0x39, "NV_ERR_INVALID_OWNER" },
    { 0x3a, "NV_ERR_INVALID_PARAM_STRUCT" },
    { 0x3b, "NV_ERR_INVALID_PARAMETER" },
    { 0x3d, "NV_ERR_INVALID_POINTER" },
    { 0x3f, "NV_ERR_INVALID_REQUEST" },
    { 0x40, "NV_ERR_INVALID_STATE" },
    { 0x4f, "NV_ERR_NO_FREE_FIFOS" },
    { 0x51, "NV_ERR_NO_MEMORY" },
    { 0x54, "NV_ERR_NOT_COMPATIBLE" },
    { 0x55, "NV_ERR_NOT_READY" },
    { 0x56, "NV_ERR_NOT_SUPPORTED" },
    { 0x57, "NV_ERR_OBJECT_NOT_FOUND" },
    { 0x58, "NV_ERR_OBJECT_TYPE_MISMATCH" },
    { 0x59, "NV_ERR_OPERATING_SYSTEM" },
    { 0x5b, "NV_ERR_OUT_OF_RANGE" },
    { 0x5c, "NV_ERR_OVERLAPPING_UVM_COMMIT" },
    { 0x5d, "NV_ERR_PAGE_TABLE_NOT_AVAIL" },
    { 0x5f, "NV_ERR_PROTECTION_FAULT" },
    { 0x60, "NV_ERR_RC_ERROR" },
    { 0x63, "NV_ERR_STATE_IN_USE" },
    { 0x65, "NV_ERR_TIMEOUT" },
    { 0x68, "NV_ERR_UVM_ADDRESS_IN_USE" },
    { 0x6b, "NV_ERR_PRIV_SEC_VIOLATION" },
    { 0x6d, "NV_ERR_FEATURE_NOT_ENABLED" },
    { 0xffff, "NV_ERR_GENERIC" },
    { 0x10006, "NV_WARN_NOTHING_TO_DO" },
    { 0x10007, "NV_WARN_NULL_OBJECT" },
};

/* Robust-channel errors a replayed push buffer can cause (nverror.h ROBUST_CHANNEL_*). */
static const code_name rc_names[] = {
    { 8, "GPU stopped processing (timeout)" },
    { 13, "graphics engine exception (GR_EXCEPTION)" },
    { 31, "MMU fault (FIFO_ERROR_MMU_ERR_FLT)" },
    { 32, "PBDMA error (bad push buffer or GPFIFO entry)" },
    { 38, "driver firmware error" },
    { 43, "channel reset (RESETCHANNEL_VERIF_ERROR)" },
    { 44, "graphics fault during context switch" },
    { 45, "preemptive channel removal" },
    { 48, "double-bit ECC error" },
    { 56, "display engine error" },
    { 57, "video memory error" },
    { 62, "internal micro-controller halt" },
    { 68, "video decoder error" },
    { 69, "graphics class error (GR_CLASS_ERROR: bad method or data)" },
    { 79, "GPU has fallen off the bus" },
    { 109, "context switch timeout" },
    { 119, "GSP RPC timeout" },
    { 120, "GSP error" },
};

static const char *lookup(const code_name *t, size_t n, uint32_t code, const char *dflt)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].code == code)
            return t[i].name;
    return dflt;
}

const char *vgt_gpu_rm_status_name(uint32_t status)
{
    return lookup(rm_status_names, sizeof rm_status_names / sizeof rm_status_names[0], status, "NV_ERR_(unknown)");
}

const char *vgt_gpu_rc_name(uint32_t code)
{
    /* Copy-engine errors are a range of codes, one per engine instance. */
    if (code == 39 || code == 40 || code == 41 || (code >= 70 && code <= 77) || code == 85)
        return "copy engine error";
    return lookup(rc_names, sizeof rc_names / sizeof rc_names[0], code, "robust-channel error");
}
