/* backend_cuda.c: the `cuda` backend (lane 3): CUDA driver API work forwarded through the host's libcuda.
 *
 * libcuda is loaded at run time with dlopen (libcuda.so.1, or the library VGT_CUDA_LIB names): the build
 * needs no CUDA toolkit, and a machine without a driver gets a clear refusal from the probe. The types
 * and constants used are declared in vgt/cuda_abi.h (from the toolkit's cuda.h, CUDA 13.0).
 *
 * Memory: the replay asks for device memory at the captured device addresses (reserve). With the virtual
 * memory management API (CUDA 10.2+: cuMemAddressReserve at the address, cuMemCreate, cuMemMap,
 * cuMemSetAccess) the range is reserved there when the address is free in this process; when the driver
 * puts the reservation elsewhere, the range lives there and the engine relocates the pointers it hands
 * to kernels. Without that API, cuMemAlloc gives memory wherever it likes (relocated). Every operation is
 * followed by a synchronization of the context: the replay is serial, in the capture's order. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/backend.h"
#include "vgt/cuda_abi.h"
#include "vgt/grow.h"

typedef struct cuda_api {
    void *lib;
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
    CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*MemsetD16)(CUdeviceptr, unsigned short, size_t);
    CUresult (*MemsetD32)(CUdeviceptr, unsigned int, size_t);
    CUresult (*ModuleGetGlobal)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*GetErrorName)(CUresult, const char **);
    /* virtual memory management (optional) */
    CUresult (*MemGetAllocationGranularity)(size_t *, const CUmemAllocationProp *, int);
    CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*MemAddressFree)(CUdeviceptr, size_t);
    CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*MemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*MemRelease)(CUmemGenericAllocationHandle);
} cuda_api;

typedef struct vm_range { CUdeviceptr va; size_t size; CUmemGenericAllocationHandle h; int vmm; } vm_range;

struct vgt_backend {
    cuda_api api;
    CUdevice dev;
    CUcontext ctx;
    uint64_t granularity;
    vm_range *ranges;
    uint32_t nranges, capranges;
    vgt_backend_counters ctr;
    char device_name[128];
};

static const char *lib_name(void)
{
    const char *e = getenv("VGT_CUDA_LIB");
    return e && *e ? e : "libcuda.so.1";
}

static vgt_status load(cuda_api *a, vgt_error *err)
{
    memset(a, 0, sizeof *a);
    a->lib = dlopen(lib_name(), RTLD_NOW | RTLD_LOCAL);
    if (!a->lib) {
        const char *why = dlerror();
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET,
                        "backend cuda: no CUDA driver on this machine (%s cannot be loaded: %s)", lib_name(),
                        why ? why : "not found");
    }
#define SYM(field, name, required)                                                                      \
    do {                                                                                                 \
        *(void **)&a->field = dlsym(a->lib, name);                                                       \
        if (required && !a->field) {                                                                     \
            dlclose(a->lib);                                                                             \
            a->lib = NULL;                                                                               \
            return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: %s lacks %s", lib_name(), name); \
        }                                                                                                \
    } while (0)
    SYM(Init, "cuInit", 1);
    SYM(DeviceGetCount, "cuDeviceGetCount", 1);
    SYM(DeviceGet, "cuDeviceGet", 1);
    SYM(DeviceGetName, "cuDeviceGetName", 0);
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 1);
    SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", 0);
    SYM(CtxSetCurrent, "cuCtxSetCurrent", 1);
    SYM(CtxSynchronize, "cuCtxSynchronize", 1);
    SYM(ModuleLoadData, "cuModuleLoadData", 1);
    SYM(ModuleGetFunction, "cuModuleGetFunction", 1);
    SYM(ModuleGetGlobal, "cuModuleGetGlobal_v2", 0);
    SYM(MemAlloc, "cuMemAlloc_v2", 1);
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2", 1);
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2", 1);
    SYM(MemcpyDtoD, "cuMemcpyDtoD_v2", 1);
    SYM(MemsetD8, "cuMemsetD8_v2", 1);
    SYM(MemsetD16, "cuMemsetD16_v2", 0);
    SYM(MemsetD32, "cuMemsetD32_v2", 1);
    SYM(LaunchKernel, "cuLaunchKernel", 1);
    SYM(LaunchKernelEx, "cuLaunchKernelEx", 0);
    SYM(GetErrorName, "cuGetErrorName", 0);
    SYM(MemGetAllocationGranularity, "cuMemGetAllocationGranularity", 0);
    SYM(MemAddressReserve, "cuMemAddressReserve", 0);
    SYM(MemAddressFree, "cuMemAddressFree", 0);
    SYM(MemCreate, "cuMemCreate", 0);
    SYM(MemMap, "cuMemMap", 0);
    SYM(MemSetAccess, "cuMemSetAccess", 0);
    SYM(MemRelease, "cuMemRelease", 0);
#undef SYM
    return VGT_OK;
}

static const char *cu_name(const cuda_api *a, CUresult r)
{
    const char *n = NULL;
    if (a->GetErrorName && a->GetErrorName(r, &n) == CUDA_SUCCESS && n) return n;
    return "CUDA error";
}

#define CU_FAIL(b, err, r, what, ...) \
    VGT_FAIL(err, VGT_E_BACKEND, VGT_NO_OFFSET, "backend cuda: " what ": %s (%d)", ##__VA_ARGS__, cu_name(&(b)->api, r), r)

static vgt_status cuda_probe(vgt_error *err)
{
    cuda_api a;
    VGT_TRY(load(&a, err));
    CUresult r = a.Init(0);
    int n = 0;
    if (r == CUDA_SUCCESS) r = a.DeviceGetCount(&n);
    const char *name = cu_name(&a, r);
    dlclose(a.lib);
    if (r != CUDA_SUCCESS)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: the CUDA driver found no usable GPU "
                        "(cuInit: %s, %d)", name, r);
    if (n < 1) return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: the CUDA driver sees no GPU");
    return VGT_OK;
}

static uint32_t cuda_caps(void) { return VGT_CAP_SHADERS | VGT_CAP_COPIES | VGT_CAP_LANE_CUDA; }

static vgt_status cuda_open(vgt_backend **out, const vgt_backend_config *cfg, vgt_error *err)
{
    (void)cfg;
    *out = NULL;
    vgt_backend *b = calloc(1, sizeof *b);
    if (!b) return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "backend cuda: out of memory");
    vgt_status rc = load(&b->api, err);
    if (rc != VGT_OK) {
        free(b);
        return rc;
    }
    CUresult r = b->api.Init(0);
    if (r == CUDA_SUCCESS) r = b->api.DeviceGet(&b->dev, 0);
    if (r == CUDA_SUCCESS) r = b->api.DevicePrimaryCtxRetain(&b->ctx, b->dev);
    if (r == CUDA_SUCCESS) r = b->api.CtxSetCurrent(b->ctx);
    if (r != CUDA_SUCCESS) {
        rc = CU_FAIL(b, err, r, "cannot set up a context on device 0");
        dlclose(b->api.lib);
        free(b);
        return rc;
    }
    if (b->api.DeviceGetName) b->api.DeviceGetName(b->device_name, sizeof b->device_name, b->dev);
    b->granularity = 2u << 20;   /* cuMemAlloc's own granule; refined below when the VM API is there */
    if (b->api.MemGetAllocationGranularity && b->api.MemAddressReserve && b->api.MemCreate && b->api.MemMap &&
        b->api.MemSetAccess) {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = b->dev;
        size_t g = 0;
        if (b->api.MemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS && g)
            b->granularity = g;
    }
    *out = b;
    return VGT_OK;
}

static void cuda_close(vgt_backend *b)
{
    if (!b) return;
    b->api.CtxSynchronize();
    for (uint32_t i = 0; i < b->nranges; i++) {
        vm_range *v = &b->ranges[i];
        if (!v->vmm) continue;   /* cuMemAlloc'd memory goes with the context */
        /* unmapping is implied by freeing the reservation only after cuMemUnmap; the handle is released
         * when nothing maps it any more. Process exit tears everything down anyway. */
        if (b->api.MemRelease) b->api.MemRelease(v->h);
    }
    if (b->api.DevicePrimaryCtxRelease) b->api.DevicePrimaryCtxRelease(b->dev);
    free(b->ranges);
    /* libcuda stays loaded: its threads may outlive a dlclose */
    free(b);
}

static vgt_status cuda_vaspace(vgt_backend *b, uint32_t *vas, vgt_error *err)
{
    (void)b, (void)err;
    *vas = 1;   /* the context's one address space */
    return VGT_OK;
}

static vgt_status sync_ctx(vgt_backend *b, const char *what, vgt_error *err)
{
    CUresult r = b->api.CtxSynchronize();
    if (r != CUDA_SUCCESS) {
        b->ctr.faults++;
        return CU_FAIL(b, err, r, "%s, then synchronizing", what);
    }
    return VGT_OK;
}

static uint64_t cuda_granularity(vgt_backend *b) { return b->granularity; }

static vgt_status keep_range(vgt_backend *b, vm_range v, vgt_error *err)
{
    if (vgt_grow(&b->ranges, &b->capranges, b->nranges + 1ull, 64))
        return VGT_FAIL(err, VGT_E_NOMEM, VGT_NO_OFFSET, "backend cuda: out of memory");
    b->ranges[b->nranges++] = v;
    return VGT_OK;
}

static vgt_status cuda_reserve(vgt_backend *b, uint64_t va, uint64_t size, uint64_t *got, vgt_error *err)
{
    cuda_api *a = &b->api;
    *got = 0;
    if (a->MemAddressReserve && a->MemCreate && a->MemMap && a->MemSetAccess) {
        CUdeviceptr p = 0;
        CUresult r = a->MemAddressReserve(&p, size, b->granularity, va, 0);
        if (r == CUDA_SUCCESS) {
            CUmemAllocationProp prop;
            memset(&prop, 0, sizeof prop);
            prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
            prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = b->dev;
            CUmemGenericAllocationHandle h = 0;
            r = a->MemCreate(&h, size, &prop, 0);
            if (r == CUDA_SUCCESS) r = a->MemMap(p, size, 0, h, 0);
            if (r == CUDA_SUCCESS) {
                CUmemAccessDesc d = {{CU_MEM_LOCATION_TYPE_DEVICE, b->dev}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
                r = a->MemSetAccess(p, size, &d, 1);
            }
            if (r == CUDA_SUCCESS) {
                *got = p;
                return keep_range(b, (vm_range){p, size, h, 1}, err);
            }
            if (h && a->MemRelease) a->MemRelease(h);
            if (a->MemAddressFree) a->MemAddressFree(p, size);
        }
    }
    /* no VM API, or it failed: memory wherever the driver puts it (the engine relocates) */
    CUdeviceptr p = 0;
    CUresult r = a->MemAlloc(&p, size);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "no device memory for %llu bytes", (unsigned long long)size);
    *got = p;
    return keep_range(b, (vm_range){p, size, 0, 0}, err);
}

static vgt_status cuda_write(vgt_backend *b, uint64_t dst, const void *src, uint64_t len, vgt_error *err)
{
    CUresult r = b->api.MemcpyHtoD(dst, src, len);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "writing %llu bytes at 0x%llx", (unsigned long long)len, (unsigned long long)dst);
    return VGT_OK;
}

static vgt_status cuda_read(vgt_backend *b, uint64_t src, void *dst, uint64_t len, vgt_error *err)
{
    CUresult r = b->api.MemcpyDtoH(dst, src, len);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "reading %llu bytes at 0x%llx", (unsigned long long)len, (unsigned long long)src);
    return VGT_OK;
}

static vgt_status cuda_copy(vgt_backend *b, uint64_t dst, uint64_t src, uint64_t len, vgt_error *err)
{
    CUresult r = b->api.MemcpyDtoD(dst, src, len);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "copying %llu bytes 0x%llx -> 0x%llx", (unsigned long long)len,
                                          (unsigned long long)src, (unsigned long long)dst);
    b->ctr.copies++;
    b->ctr.copy_bytes += len;
    return sync_ctx(b, "a copy", err);
}

static vgt_status cuda_memset(vgt_backend *b, uint64_t dst, uint32_t value, uint32_t elem, uint64_t len, vgt_error *err)
{
    CUresult r;
    if (elem == 4) r = b->api.MemsetD32(dst, value, len / 4);
    else if (elem == 2 && b->api.MemsetD16) r = b->api.MemsetD16(dst, (unsigned short)value, len / 2);
    else r = b->api.MemsetD8(dst, (unsigned char)value, len);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "memset of %llu bytes at 0x%llx", (unsigned long long)len, (unsigned long long)dst);
    b->ctr.memsets++;
    return sync_ctx(b, "a memset", err);
}

static vgt_status cuda_module_load(vgt_backend *b, const void *image, uint64_t len, uint64_t *module, vgt_error *err)
{
    (void)len;
    CUmodule m = NULL;
    CUresult r = b->api.ModuleLoadData(&m, image);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "cannot load a module image of %llu bytes", (unsigned long long)len);
    *module = (uint64_t)(uintptr_t)m;
    return VGT_OK;
}

static vgt_status cuda_function(vgt_backend *b, uint64_t module, const char *name, uint64_t *fn, vgt_error *err)
{
    CUfunction f = NULL;
    CUresult r = b->api.ModuleGetFunction(&f, (CUmodule)(uintptr_t)module, name);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "no function '%s' in its module", name);
    *fn = (uint64_t)(uintptr_t)f;
    return VGT_OK;
}

static vgt_status cuda_global(vgt_backend *b, uint64_t module, const char *name, uint64_t *dptr, uint64_t *size,
                              vgt_error *err)
{
    if (!b->api.ModuleGetGlobal)
        return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: %s has no cuModuleGetGlobal_v2", lib_name());
    CUdeviceptr p = 0;
    size_t n = 0;
    CUresult r = b->api.ModuleGetGlobal(&p, &n, (CUmodule)(uintptr_t)module, name);
    if (r != CUDA_SUCCESS) return CU_FAIL(b, err, r, "no global '%s' in its module", name);
    *dptr = p, *size = n;
    return VGT_OK;
}

static vgt_status cuda_launch(vgt_backend *b, uint64_t fn, const uint32_t grid[3], const uint32_t block[3],
                              uint32_t shared, const void *params, uint32_t params_len, int cooperative, vgt_error *err)
{
    size_t size = params_len;
    void *extra[] = {(void *)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT, (void *)params,
                     (void *)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, &size, (void *)CU_LAUNCH_PARAM_END_AS_INT};
    static uint8_t none[8];
    if (!params_len) extra[1] = none;
    CUresult r;
    if (cooperative && b->api.LaunchKernelEx) {
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
        at.value.cooperative = 1;
        CUlaunchConfig c = {grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, NULL, &at, 1};
        r = b->api.LaunchKernelEx(&c, (CUfunction)(uintptr_t)fn, NULL, extra);
    } else {
        r = b->api.LaunchKernel((CUfunction)(uintptr_t)fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared,
                                NULL, NULL, extra);
    }
    if (r != CUDA_SUCCESS) {
        b->ctr.faults++;
        return CU_FAIL(b, err, r, "launch of %ux%ux%u blocks of %ux%ux%u threads", grid[0], grid[1], grid[2], block[0],
                       block[1], block[2]);
    }
    b->ctr.launches++;
    return sync_ctx(b, "a launch", err);
}

/* The engine's generic host access (--dump): device memory at a device address. */
static vgt_status cuda_mem_write(vgt_backend *b, uint32_t vas, uint64_t va, const void *src, uint64_t len, vgt_error *err)
{
    (void)vas;
    b->ctr.host_writes++;
    b->ctr.host_write_bytes += len;
    return cuda_write(b, va, src, len, err);
}
static vgt_status cuda_mem_read(vgt_backend *b, uint32_t vas, uint64_t va, void *dst, uint64_t len, vgt_error *err)
{
    (void)vas;
    b->ctr.host_reads++;
    b->ctr.host_read_bytes += len;
    return cuda_read(b, va, dst, len, err);
}

/* RM-level work is not this backend's: the engine never hands it submissions (lane 3 replays the API
 * records instead); these say so if anything asks. */
static vgt_status cuda_no_map(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, uint32_t ap, vgt_error *err)
{
    (void)b, (void)vas, (void)va, (void)size, (void)ap;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: GPU mappings are the CUDA driver's own");
}
static vgt_status cuda_no_unmap(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t size, vgt_error *err)
{
    (void)b, (void)vas, (void)va, (void)size;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: GPU mappings are the CUDA driver's own");
}
static vgt_status cuda_no_channel(vgt_backend *b, const vgt_backend_channel_desc *d, uint32_t *ch, vgt_error *err)
{
    (void)b, (void)d, (void)ch;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: channels are the CUDA driver's own");
}
static vgt_status cuda_no_object(vgt_backend *b, uint32_t ch, uint32_t cls, uint32_t handle, vgt_error *err)
{
    (void)b, (void)ch, (void)cls, (void)handle;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: engine objects are the CUDA driver's own");
}
static vgt_status cuda_no_submit(vgt_backend *b, uint32_t ch, const uint64_t *e, uint32_t n, uint32_t f, vgt_error *err)
{
    (void)b, (void)ch, (void)e, (void)n, (void)f;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: GPFIFO submissions run on lanes 1 and 2 only");
}
static vgt_status cuda_sem_wait(vgt_backend *b, uint32_t vas, uint64_t va, uint64_t v, uint32_t size, uint64_t t,
                                vgt_error *err)
{
    (void)b, (void)vas, (void)va, (void)v, (void)size, (void)t;
    return VGT_FAIL(err, VGT_E_UNSUPPORTED, VGT_NO_OFFSET, "backend cuda: no semaphores");
}
static vgt_status cuda_idle(vgt_backend *b, uint64_t timeout_ns, vgt_error *err)
{
    (void)timeout_ns;
    return sync_ctx(b, "the replay's work", err);
}
static void cuda_counters(vgt_backend *b, vgt_backend_counters *out) { *out = b->ctr; }

static const vgt_backend_cuda_ops cuda_ops = {
    .module_load = cuda_module_load,
    .function = cuda_function,
    .global = cuda_global,
    .granularity = cuda_granularity,
    .reserve = cuda_reserve,
    .write = cuda_write,
    .read = cuda_read,
    .copy = cuda_copy,
    .memset = cuda_memset,
    .launch = cuda_launch,
};

const vgt_backend_ops vgt_backend_cuda = {
    .name = "cuda",
    .summary = "CUDA-level replay through the host's libcuda (lane 3: the captured CUDA calls forwarded)",
    .probe = cuda_probe,
    .caps = cuda_caps,
    .limits_note = "RM-level records are not replayed: the host's CUDA driver makes its own submissions",
    .open = cuda_open,
    .close = cuda_close,
    .vaspace_create = cuda_vaspace,
    .map = cuda_no_map,
    .unmap = cuda_no_unmap,
    .mem_write = cuda_mem_write,
    .mem_read = cuda_mem_read,
    .channel_create = cuda_no_channel,
    .object_create = cuda_no_object,
    .submit = cuda_no_submit,
    .sem_wait = cuda_sem_wait,
    .idle = cuda_idle,
    .counters = cuda_counters,
    .cuda = &cuda_ops,
};
