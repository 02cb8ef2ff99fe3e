/* rm_status.c: names of RM status codes and robust-channel (RC) error codes, as data.
 * Status codes: the facts table (trace-format/facts/rm_abi.txt, from OGKM nvstatuscodes.h); RC errors:
 * OGKM nverror.h (the "Xid" numbers the kernel log prints). */
#include "gpu_internal.h"

typedef struct code_name {
    uint32_t code;
    const char *name;
} code_name;

/* The status table of trace-format/facts/rm_abi.txt. */
static const code_name rm_status_names[] = {
#define STATUS_ENTRY(name, value) { value, #name },
    VGT_NV_STATUS_LIST(STATUS_ENTRY)
#undef STATUS_ENTRY
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

const char *vgt_gpu_rm_refusal(uint32_t status)
{
    /* The answers serverControl_ValidateCookie (OGKM src/nvidia/src/kernel/rmapi/control.c) gives a
     * control this client may not call, before the control runs. */
    switch (status) {
    case RM_NV_ERR_INSUFFICIENT_PERMISSIONS:
        return "the control is kernel-only (no NON_PRIVILEGED flag) or admin-only (PRIVILEGED)";
    case RM_NV_ERR_TEST_ONLY_CODE_NOT_ENABLED:
        return "the control is flagged RM_TEST_ONLY_CODE and the driver was loaded without the "
               "EnableRmTestOnlyCode registry key (NVreg_RegistryDwords)";
    case RM_NV_ERR_NOT_SUPPORTED:
        return "the driver does not offer the control here (internal, or not on this GPU or configuration)";
    case RM_NV_ERR_PRIV_SEC_VIOLATION:
        return "a privileged-security check refused the control";
    default:
        return NULL;
    }
}
