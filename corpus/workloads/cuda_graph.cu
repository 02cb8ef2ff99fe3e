/* cuda_graph.cu - vgtrace corpus workload: a CUDA graph captured from a stream (a host-to-device copy, three
 * kernels, a device-to-host copy), instantiated once and launched 8 times with different host inputs.
 * Integer arithmetic only: the results are exact; each round is checked on the host.
 * Prints: RESULT cuda_graph ok n=65536 launches=8 sum=<sum of every round's outputs> hash=<fnv1a64 of them>;
 * exit 0, or exit 1 on failure. */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "wl_common.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "FAIL cuda_graph: %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

__global__ void fill(unsigned *a, unsigned base, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = base + 3u * (unsigned)i;
}

__global__ void mix(const unsigned *a, unsigned *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] * 2654435761u ^ (a[i] >> 7);
}

__global__ void add(const unsigned *b, const unsigned *in, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = b[i] + in[i];
}

int main()
{
    const int n = 1 << 16, rounds = 8;
    const size_t bytes = (size_t)n * sizeof(unsigned);
    unsigned *hin, *hout, *da, *db, *din, *dout;
    CK(cudaMallocHost(&hin, bytes));
    CK(cudaMallocHost(&hout, bytes));
    CK(cudaMalloc(&da, bytes)); CK(cudaMalloc(&db, bytes)); CK(cudaMalloc(&din, bytes)); CK(cudaMalloc(&dout, bytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemcpyAsync(din, hin, bytes, cudaMemcpyHostToDevice, s));
    fill<<<n / 256, 256, 0, s>>>(da, 7u, n);
    mix<<<n / 256, 256, 0, s>>>(da, db, n);
    add<<<n / 256, 256, 0, s>>>(db, din, dout, n);
    CK(cudaMemcpyAsync(hout, dout, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    unsigned long long sum = 0, hash = 0xcbf29ce484222325ULL;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) hin[i] = (unsigned)(i ^ (r * 7919));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) {
            unsigned a = 7u + 3u * (unsigned)i, want = (a * 2654435761u ^ (a >> 7)) + hin[i];
            if (hout[i] != want) {
                fprintf(stderr, "FAIL cuda_graph: round %d out[%d]=%u expected %u\n", r, i, hout[i], want);
                return 1;
            }
            sum += hout[i];
        }
        hash ^= wl_fnv1a64(hout, bytes) + (unsigned long long)r;
    }
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g)); CK(cudaStreamDestroy(s));
    CK(cudaFree(da)); CK(cudaFree(db)); CK(cudaFree(din)); CK(cudaFree(dout));
    CK(cudaFreeHost(hin)); CK(cudaFreeHost(hout));
    printf("RESULT cuda_graph ok n=%d launches=%d sum=%llu hash=%016llx\n", n, rounds, sum, hash);
    return 0;
}
