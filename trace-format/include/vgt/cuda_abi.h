/* cuda_abi.h: the few CUDA driver API types and constants the capture's CUDA layer and the cuda backend
 * use, declared here so that neither needs the CUDA toolkit to build. Transcribed from the toolkit's
 * cuda.h (CUDA 13.0; the layouts have been stable since the versions named): handles are pointers to
 * opaque structs, CUdeviceptr is 64 bits (the _v2 entry points, CUDA 3.2+), CUresult is an int.
 * Only what is listed here is used; a field we do not read is still declared so that the sizes match.
 * These are the CUDA driver's ABI, not the NVIDIA kernel driver's: they stay here rather than in
 * trace-format/facts/rm_abi.txt because the capture and the backend use them as the C types the program
 * hands the driver (pointer and handle fields), which the facts generator's fixed-width layouts are not.
 * Every size and offset, and every constant below, was compared with CUDA 13.0's cuda.h on x86-64 (all
 * matched); the sizes and the offsets the capture reads are pinned at the end of this file. */
#ifndef VGT_CUDA_ABI_H
#define VGT_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;                          /* cuda.h: enum cudaError_enum */
typedef unsigned long long CUdeviceptr;        /* CUdeviceptr_v2 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUlib_st *CUlibrary;
typedef struct CUfunc_st *CUfunction;
typedef struct CUkern_st *CUkernel;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef uint64_t cuuint64_t;
typedef int CUjit_option;                      /* enum CUjit_option_enum */
typedef int CUlibraryOption;                   /* enum CUlibraryOption_enum */

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NOT_FOUND 500
#define CUDA_ERROR_NOT_SUPPORTED 801

/* cuLaunchKernel's extra array (cuda.h CU_LAUNCH_PARAM_*_AS_INT) */
#define CU_LAUNCH_PARAM_END_AS_INT 0x00
#define CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT 0x01
#define CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT 0x02

/* cuGetProcAddress flags (CUdriverProcAddress_flags) */
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM 1ull
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2ull

/* CUmemorytype */
#define CU_MEMORYTYPE_HOST 1
#define CU_MEMORYTYPE_DEVICE 2
#define CU_MEMORYTYPE_ARRAY 3
#define CU_MEMORYTYPE_UNIFIED 4

/* CUgraphNodeType */
#define CU_GRAPH_NODE_TYPE_KERNEL 0
#define CU_GRAPH_NODE_TYPE_MEMCPY 1
#define CU_GRAPH_NODE_TYPE_MEMSET 2
#define CU_GRAPH_NODE_TYPE_EMPTY 5

/* CUlaunchAttributeID */
#define CU_LAUNCH_ATTRIBUTE_COOPERATIVE 2

/* The virtual memory management API (CUmemAllocationType, CUmemLocationType, CUmemAccess_flags,
 * CUmemAllocationGranularity_flags) */
#define CU_MEM_ALLOCATION_TYPE_PINNED 1
#define CU_MEM_LOCATION_TYPE_DEVICE 1
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE 3
#define CU_MEM_ALLOC_GRANULARITY_MINIMUM 0

typedef struct CUlaunchAttribute {
    int id;                                    /* CUlaunchAttributeID */
    char pad[4];
    union { char pad[64]; int cooperative; } value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

typedef struct CUDA_KERNEL_NODE_PARAMS_v2 {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
    CUkernel kern;                             /* used when func is NULL */
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS_v2;

typedef struct CUDA_MEMCPY3D {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    int srcMemoryType;                         /* CUmemorytype */
    const void *srcHost;
    CUdeviceptr srcDevice;
    void *srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    int dstMemoryType;
    void *dstHost;
    CUdeviceptr dstDevice;
    void *dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;

typedef struct CUDA_MEMSET_NODE_PARAMS {
    CUdeviceptr dst;
    size_t pitch;
    unsigned int value, elementSize;
    size_t width, height;
} CUDA_MEMSET_NODE_PARAMS;

typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS {
    cuuint64_t flags;
    CUstream hUploadStream;
    CUgraphNode hErrNode_out;
    int result_out;                            /* CUgraphInstantiateResult */
} CUDA_GRAPH_INSTANTIATE_PARAMS;

typedef struct CUmemLocation { int type, id; } CUmemLocation;
typedef struct CUmemAllocationProp {
    int type;                                  /* CUmemAllocationType */
    int requestedHandleTypes;
    CUmemLocation location;
    void *win32HandleMetaData;
    struct { unsigned char compressionType, gpuDirectRDMACapable; unsigned short usage; unsigned char reserved[4]; } allocFlags;
} CUmemAllocationProp;
typedef struct CUmemAccessDesc { CUmemLocation location; int flags; } CUmemAccessDesc;

/* The layouts as cuda.h (CUDA 13.0) has them on a 64-bit host: a mismatch here would make the capture
 * read the program's structs at the wrong offsets. */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr_v2");
_Static_assert(sizeof(CUlaunchAttribute) == 72 && offsetof(CUlaunchAttribute, value) == 8, "CUlaunchAttribute");
_Static_assert(sizeof(CUlaunchConfig) == 56 && offsetof(CUlaunchConfig, hStream) == 32 &&
               offsetof(CUlaunchConfig, attrs) == 40 && offsetof(CUlaunchConfig, numAttrs) == 48, "CUlaunchConfig");
_Static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS_v2) == 72 && offsetof(CUDA_KERNEL_NODE_PARAMS_v2, kernelParams) == 40 &&
               offsetof(CUDA_KERNEL_NODE_PARAMS_v2, kern) == 56 && offsetof(CUDA_KERNEL_NODE_PARAMS_v2, ctx) == 64,
               "CUDA_KERNEL_NODE_PARAMS_v2");
_Static_assert(sizeof(CUDA_MEMCPY3D) == 200 && offsetof(CUDA_MEMCPY3D, srcMemoryType) == 32 &&
               offsetof(CUDA_MEMCPY3D, srcDevice) == 48 && offsetof(CUDA_MEMCPY3D, dstMemoryType) == 120 &&
               offsetof(CUDA_MEMCPY3D, dstDevice) == 136 && offsetof(CUDA_MEMCPY3D, WidthInBytes) == 176,
               "CUDA_MEMCPY3D");
_Static_assert(sizeof(CUDA_MEMSET_NODE_PARAMS) == 40 && offsetof(CUDA_MEMSET_NODE_PARAMS, value) == 16,
               "CUDA_MEMSET_NODE_PARAMS");
_Static_assert(sizeof(CUDA_GRAPH_INSTANTIATE_PARAMS) == 32, "CUDA_GRAPH_INSTANTIATE_PARAMS");
_Static_assert(sizeof(CUmemAllocationProp) == 32 && offsetof(CUmemAllocationProp, allocFlags) == 24,
               "CUmemAllocationProp");
_Static_assert(sizeof(CUmemAccessDesc) == 12, "CUmemAccessDesc");
#endif

#endif
