/* cuda_syms.h: the libcuda entry points the capture wraps, by exported name (cuda.h maps the API names
 * to these: cuMemAlloc is cuMemAlloc_v2, cuLaunchKernel with per-thread default streams is
 * cuLaunchKernel_ptsz, cuCtxSynchronize at CUDA 13.0 is cuCtxSynchronize_v2, which takes the context;
 * cuModuleGetGlobal is cuModuleGetGlobal_v2, cuStreamBeginCapture at CUDA 10.0 is the first version, without a mode, which the runtime asks for too).
 * One list: cuda_hook.c builds the symbol table from it, the wrappers define them. */
#ifndef VGT_CAPTURE_CUDA_SYMS_H
#define VGT_CAPTURE_CUDA_SYMS_H

#define CU_SYMS(X) \
    X(cuInit) X(cuGetProcAddress) X(cuGetProcAddress_v2) \
    X(cuModuleLoad) X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleLoadFatBinary) X(cuModuleUnload) \
    X(cuModuleGetFunction) X(cuLibraryLoadData) X(cuLibraryLoadFromFile) X(cuLibraryUnload) \
    X(cuLibraryGetKernel) X(cuKernelGetFunction) X(cuModuleGetGlobal_v2) X(cuLibraryGetGlobal) \
    X(cuLaunchKernel) X(cuLaunchKernel_ptsz) X(cuLaunchKernelEx) X(cuLaunchKernelEx_ptsz) \
    X(cuLaunchCooperativeKernel) X(cuLaunchCooperativeKernel_ptsz) \
    X(cuGraphInstantiateWithFlags) X(cuGraphInstantiateWithParams) X(cuGraphInstantiateWithParams_ptsz) \
    X(cuGraphLaunch) X(cuGraphLaunch_ptsz) X(cuGraphExecDestroy) \
    X(cuMemAlloc_v2) X(cuMemAllocAsync) X(cuMemAllocAsync_ptsz) X(cuMemAllocManaged) X(cuMemFree_v2) \
    X(cuMemFreeAsync) X(cuMemFreeAsync_ptsz) X(cuMemAllocHost_v2) X(cuMemHostAlloc) X(cuMemFreeHost) \
    X(cuMemcpy) X(cuMemcpy_ptds) X(cuMemcpyAsync) X(cuMemcpyAsync_ptsz) \
    X(cuMemcpyHtoD_v2) X(cuMemcpyHtoD_v2_ptds) X(cuMemcpyHtoDAsync_v2) X(cuMemcpyHtoDAsync_v2_ptsz) \
    X(cuMemcpyDtoH_v2) X(cuMemcpyDtoH_v2_ptds) X(cuMemcpyDtoHAsync_v2) X(cuMemcpyDtoHAsync_v2_ptsz) \
    X(cuMemcpyDtoD_v2) X(cuMemcpyDtoD_v2_ptds) X(cuMemcpyDtoDAsync_v2) X(cuMemcpyDtoDAsync_v2_ptsz) \
    X(cuMemsetD8_v2) X(cuMemsetD8_v2_ptds) X(cuMemsetD8Async) X(cuMemsetD8Async_ptsz) \
    X(cuMemsetD16_v2) X(cuMemsetD16_v2_ptds) X(cuMemsetD16Async) X(cuMemsetD16Async_ptsz) \
    X(cuMemsetD32_v2) X(cuMemsetD32_v2_ptds) X(cuMemsetD32Async) X(cuMemsetD32Async_ptsz) \
    X(cuStreamCreate) X(cuStreamCreateWithPriority) X(cuStreamDestroy_v2) \
    X(cuStreamSynchronize) X(cuStreamSynchronize_ptsz) X(cuStreamWaitEvent) X(cuStreamWaitEvent_ptsz) \
    X(cuEventCreate) X(cuEventRecord) X(cuEventRecord_ptsz) X(cuEventRecordWithFlags) \
    X(cuEventRecordWithFlags_ptsz) X(cuEventSynchronize) X(cuEventDestroy_v2) X(cuCtxSynchronize) X(cuCtxSynchronize_v2) \
    X(cuStreamBeginCapture) X(cuStreamBeginCapture_ptsz) X(cuStreamBeginCapture_v2) X(cuStreamBeginCapture_v2_ptsz) \
    X(cuStreamEndCapture) X(cuStreamEndCapture_ptsz)

#define CU_DECLARE_REAL(s) extern void *cu_real_##s;
CU_SYMS(CU_DECLARE_REAL)
#undef CU_DECLARE_REAL

#endif
