/* cuda_prog.c: a CUDA driver API program for the capture's CPU tests, run against fake_libcuda.c. It uses
 * the driver both ways a real program does: linked calls (part 1), and entry points found through
 * dlopen + dlsym(cuGetProcAddress_v2) + cuGetProcAddress, as the CUDA runtime finds them (part 2), then a
 * graph launched twice with different inputs (part 3), then a graph captured from a stream as the CUDA runtime
 * makes one, of CUkernels, through the entry points cuGetProcAddress answers at the runtime's versions
 * (cuStreamBeginCapture at 10000 and 12000, cuCtxSynchronize at 13000: cuCtxSynchronize_v2), launched
 * twice (part 4), then a module global written by a copy and read by a kernel (part 5, with the argument "global"). Prints one RESULT line (the same with and without
 * capture) and "rtld_next same|different": whether dlsym(RTLD_NEXT) from the program still answers as
 * for the program (the capture's dlsym must keep the caller's identity).
 * Exit 0 when every result checks, 1 otherwise. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgt/cuda_abi.h"

CUresult cuInit(unsigned);
CUresult cuModuleLoadData(CUmodule *, const void *);
CUresult cuModuleGetFunction(CUfunction *, CUmodule, const char *);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuMemsetD32_v2(CUdeviceptr, unsigned, size_t);
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void **, void **);
CUresult cuCtxSynchronize(void);
CUresult cuGraphCreate(CUgraph *, unsigned);
CUresult cuGraphAddKernelNode_v2(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_KERNEL_NODE_PARAMS_v2 *);
CUresult cuGraphAddMemcpyNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_MEMCPY3D *, CUcontext);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *, CUgraph, unsigned long long);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
CUresult cuStreamSynchronize(CUstream);

#define N 1024
#define CK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "FAIL %s: %d\n", #x, r_); return 1; } } while (0)

static const char ptx[] = "// fake PTX: .entry vadd .entry scale .entry iota\n";

static uint64_t fnv(const void *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
    return h;
}

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, void *);

int main(int argc, char **argv)
{
    static float a[N], b[N], c[N];
    static uint32_t u[N];
    for (int i = 0; i < N; i++) a[i] = (float)i * 0.5f, b[i] = (float)(N - i);
    /* part 1: linked calls */
    CUmodule mod;
    CUfunction vadd;
    CUdeviceptr da, db, dc;
    CK(cuInit(0));
    CK(cuModuleLoadData(&mod, ptx));
    CK(cuModuleGetFunction(&vadd, mod, "vadd"));
    CK(cuMemAlloc_v2(&da, sizeof a));
    CK(cuMemAlloc_v2(&db, sizeof b));
    CK(cuMemAlloc_v2(&dc, sizeof c));
    CK(cuMemcpyHtoD_v2(da, a, sizeof a));
    CK(cuMemcpyHtoD_v2(db, b, sizeof b));
    CK(cuMemsetD32_v2(dc, 0, N));
    int n = N;
    void *args[] = {&da, &db, &dc, &n};
    CK(cuLaunchKernel(vadd, N / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH_v2(c, dc, sizeof c));
    for (int i = 0; i < N; i++)
        if (c[i] != a[i] + b[i]) { fprintf(stderr, "FAIL vadd c[%d]\n", i); return 1; }
    uint64_t h1 = fnv(c, sizeof c);

    /* part 2: through cuGetProcAddress, as the CUDA runtime does */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "FAIL dlopen: %s\n", dlerror()); return 1; }
    gpa_fn gpa = (gpa_fn)dlsym(lib, "cuGetProcAddress_v2");
    if (!gpa) { fprintf(stderr, "FAIL no cuGetProcAddress_v2\n"); return 1; }
    CUresult (*lib_load)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *, void **, unsigned);
    CUresult (*get_kernel)(CUkernel *, CUlibrary, const char *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
    CUresult (*launch_ex)(const CUlaunchConfig *, CUfunction, void **, void **);
    CUresult (*alloc)(CUdeviceptr *, size_t);
    CUresult (*dtoh_async)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*stream_create)(CUstream *, unsigned);
    CUresult (*stream_sync)(CUstream);
    CK(gpa("cuLibraryLoadData", (void **)&lib_load, 12000, 0, NULL));
    CK(gpa("cuLibraryGetKernel", (void **)&get_kernel, 12000, 0, NULL));
    CK(gpa("cuLaunchKernel", (void **)&launch, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    CK(gpa("cuLaunchKernelEx", (void **)&launch_ex, 12000, 0, NULL));
    CK(gpa("cuMemAlloc", (void **)&alloc, 12000, 0, NULL));
    CK(gpa("cuMemcpyDtoHAsync", (void **)&dtoh_async, 12000, 0, NULL));
    CK(gpa("cuStreamCreate", (void **)&stream_create, 12000, 0, NULL));
    CK(gpa("cuStreamSynchronize", (void **)&stream_sync, 12000, 0, NULL));
    CUlibrary l;
    CUkernel iota, scale;
    CUstream s;
    CUdeviceptr du;
    CK(lib_load(&l, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CK(get_kernel(&iota, l, "iota"));
    CK(get_kernel(&scale, l, "scale"));
    CK(alloc(&du, sizeof u));
    CK(stream_create(&s, 0));
    unsigned base = 7000;
    void *iargs[] = {&du, &base, &n};
    CK(launch((CUfunction)(void *)iota, N / 128, 1, 1, 128, 1, 1, 0, s, iargs, NULL));
    float k = 0.25f;
    void *sargs[] = {&dc, &k, &n};
    CUlaunchConfig cfg = {N / 256, 1, 1, 256, 1, 1, 0, s, NULL, 0};
    CK(launch_ex(&cfg, (CUfunction)(void *)scale, sargs, NULL));
    CK(dtoh_async(u, du, sizeof u, s));
    CK(dtoh_async(c, dc, sizeof c, s));
    CK(stream_sync(s));
    for (int i = 0; i < N; i++)
        if (u[i] != base + (unsigned)i || c[i] != (a[i] + b[i]) * 0.25f) { fprintf(stderr, "FAIL part 2 [%d]\n", i); return 1; }
    uint64_t h2 = fnv(u, sizeof u) ^ fnv(c, sizeof c);

    /* part 3: a graph: a -> da, vadd, dc -> c; launched twice with different a */
    CUgraph g;
    CUgraphExec ge;
    CUgraphNode nodes[3];
    CK(cuGraphCreate(&g, 0));
    CUDA_MEMCPY3D up = {0}, down = {0};
    up.srcMemoryType = CU_MEMORYTYPE_HOST, up.srcHost = a, up.dstMemoryType = CU_MEMORYTYPE_DEVICE, up.dstDevice = da;
    up.WidthInBytes = sizeof a, up.Height = 1, up.Depth = 1;
    down.srcMemoryType = CU_MEMORYTYPE_DEVICE, down.srcDevice = dc, down.dstMemoryType = CU_MEMORYTYPE_HOST, down.dstHost = c;
    down.WidthInBytes = sizeof c, down.Height = 1, down.Depth = 1;
    CUDA_KERNEL_NODE_PARAMS_v2 kp = {0};
    kp.func = vadd, kp.gridDimX = N / 256, kp.gridDimY = kp.gridDimZ = 1, kp.blockDimX = 256, kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CK(cuGraphAddMemcpyNode(&nodes[0], g, NULL, 0, &up, NULL));
    CK(cuGraphAddKernelNode_v2(&nodes[1], g, &nodes[0], 1, &kp));
    CK(cuGraphAddMemcpyNode(&nodes[2], g, &nodes[1], 1, &down, NULL));
    CK(cuGraphInstantiateWithFlags(&ge, g, 0));
    uint64_t h3 = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) a[i] = (float)(i + round * 3);
        CK(cuGraphLaunch(ge, s));
        CK(cuStreamSynchronize(s));
        for (int i = 0; i < N; i++)
            if (c[i] != a[i] + b[i]) { fprintf(stderr, "FAIL graph round %d c[%d]\n", round, i); return 1; }
        h3 ^= fnv(c, sizeof c) + (uint64_t)round;
    }

    /* part 4: a graph captured from a stream, of CUkernels, as cudaStreamBeginCapture ... cudaGraphLaunch make
     * it: host x -> dx, scale(dx, 2), vadd(dx, db, dy), dy -> host y; launched twice with different x */
    CUresult (*begin_v1)(CUstream), (*begin_v1_pt)(CUstream);
    CUresult (*begin)(CUstream, int);
    CUresult (*end)(CUstream, CUgraph *);
    CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*glaunch)(CUgraphExec, CUstream);
    CUresult (*ctx_sync)(CUcontext);
    CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
    /* the runtime asks for every version it knows: cuStreamBeginCapture without a mode too */
    CK(gpa("cuStreamBeginCapture", (void **)&begin_v1, 10000, 0, NULL));
    CK(gpa("cuStreamBeginCapture", (void **)&begin_v1_pt, 10000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    CK(gpa("cuStreamBeginCapture", (void **)&begin, 12000, 0, NULL));
    CK(gpa("cuStreamEndCapture", (void **)&end, 12000, 0, NULL));
    CK(gpa("cuGraphInstantiate", (void **)&instantiate, 12000, 0, NULL));
    CK(gpa("cuGraphLaunch", (void **)&glaunch, 12000, 0, NULL));
    CK(gpa("cuCtxSynchronize", (void **)&ctx_sync, 13000, 0, NULL));
    CK(gpa("cuMemcpyHtoDAsync", (void **)&htod_async, 12000, 0, NULL));
    if ((void *)begin_v1 == (void *)begin) { fprintf(stderr, "FAIL cuStreamBeginCapture versions\n"); return 1; }
    static float x[N], y[N];
    CUkernel kvadd;
    CUstream cs;
    CUdeviceptr dx, dy;
    CUgraph cg;
    CUgraphExec cge;
    CK(get_kernel(&kvadd, l, "vadd"));
    CK(alloc(&dx, sizeof x));
    CK(alloc(&dy, sizeof y));
    CK(stream_create(&cs, 0));
    float two = 2.0f;
    void *s2args[] = {&dx, &two, &n};
    void *vargs[] = {&dx, &db, &dy, &n};
    CK(begin(cs, 0));
    CK(htod_async(dx, x, sizeof x, cs));
    CK(launch((CUfunction)(void *)scale, N / 256, 1, 1, 256, 1, 1, 0, cs, s2args, NULL));
    CK(launch((CUfunction)(void *)kvadd, N / 256, 1, 1, 256, 1, 1, 0, cs, vargs, NULL));
    CK(dtoh_async(y, dy, sizeof y, cs));
    CK(end(cs, &cg));
    CK(instantiate(&cge, cg, 0));
    uint64_t h4 = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) x[i] = (float)(3 * i + round);
        CK(glaunch(cge, cs));
        CK(ctx_sync(NULL));
        for (int i = 0; i < N; i++)
            if (y[i] != x[i] * 2.0f + b[i]) { fprintf(stderr, "FAIL captured graph round %d y[%d]\n", round, i); return 1; }
        h4 ^= fnv(y, sizeof y) + (uint64_t)round;
    }

    /* part 5 (argument "global"): a module global, written as cudaMemcpyToSymbolAsync writes one (its address
     * from cuLibraryGetGlobal, found through cuGetProcAddress), then read by the kernel addg: u[i] += bias */
    uint64_t h5 = 0;
    if (argc > 1 && !strcmp(argv[1], "global")) {
    CUresult (*get_global)(CUdeviceptr *, size_t *, CUlibrary, const char *);
    CK(gpa("cuLibraryGetGlobal", (void **)&get_global, 12000, 0, NULL));
    CUkernel addg;
    CUdeviceptr dbias;
    size_t nbias;
    CK(get_global(&dbias, &nbias, l, "bias"));
    CK(get_kernel(&addg, l, "addg"));
    uint32_t bias = 40000;
    CK(htod_async(dbias, &bias, sizeof bias, s));
    CK(stream_sync(s));
    void *gargs[] = {&du, &n};
    CK(launch((CUfunction)(void *)addg, N / 128, 1, 1, 128, 1, 1, 0, s, gargs, NULL));
    CK(dtoh_async(u, du, sizeof u, s));
    CK(stream_sync(s));
    for (int i = 0; i < N; i++)
        if (nbias != 4 || u[i] != base + (unsigned)i + bias) { fprintf(stderr, "FAIL global u[%d]\n", i); return 1; }
    h5 = fnv(u, sizeof u);
    }
    CK(cuMemFree_v2(da));

    void *next = dlsym(RTLD_NEXT, "cuInit"), *dflt = dlsym(RTLD_DEFAULT, "cuInit");
    printf("RESULT cuda_prog ok h1=%016llx h2=%016llx h3=%016llx h4=%016llx h5=%016llx\n", (unsigned long long)h1,
           (unsigned long long)h2, (unsigned long long)h3, (unsigned long long)h4, (unsigned long long)h5);
    printf("rtld_next %s\n", next == dflt ? "same" : "different");
    return 0;
}
