/* cuda_proc.c: cuGetProcAddress and cuGetProcAddress_v2, the road by which the CUDA runtime finds every
 * driver entry point: the driver's answer goes through cu_proc_hook (cuda_hook.c), which hands out our
 * wrapper where the answer is an entry point we wrap. */
#include "cuda_cap.h"
#include "cuda_syms.h"

SHIM_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    CUresult (*real)(const char *, void **, int, cuuint64_t) =
        (CUresult (*)(const char *, void **, int, cuuint64_t))cu_real(&cu_real_cuGetProcAddress, "cuGetProcAddress");
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && !shim_foreign()) *pfn = cu_proc_hook(symbol, *pfn);
    return r;
}

SHIM_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags, void *status)
{
    CUresult (*real)(const char *, void **, int, cuuint64_t, void *) =
        (CUresult (*)(const char *, void **, int, cuuint64_t, void *))cu_real(&cu_real_cuGetProcAddress_v2,
                                                                              "cuGetProcAddress_v2");
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn && !shim_foreign()) *pfn = cu_proc_hook(symbol, *pfn);
    return r;
}

