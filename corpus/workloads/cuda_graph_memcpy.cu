/* cuda_graph_memcpy.cu - vgtrace corpus workload: a CUDA graph that interleaves kernels and memcpy nodes of
 * every direction (H2D, three kernels, D2D, a fourth kernel, D2H), captured from a stream, instantiated once
 * and launched 6 times with new host inputs. Each graph launch after the first schedules only the graph's
 * first QMD; the kernel nodes behind it run through DEPENDENT_QMD actions, and the copy nodes wait on the
 * semaphore the last kernel node of a chain releases with a reduction: what a replay must model to finish.
 * Integer arithmetic only: the results are exact; each round is checked on the host.
 * Prints: RESULT cuda_graph_memcpy ok n=16384 launches=6 sum=<sum of every round's outputs> hash=<fnv1a64>;
 * exit 0, or exit 1 on failure. */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "wl_common.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "FAIL cuda_graph_memcpy: %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

__global__ void scale(const unsigned *in, unsigned *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] = in[i] * 2654435761u + 12345u;
}

__global__ void shuffle(const unsigned *a, unsigned *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i] ^ (a[i] >> 13);
}

__global__ void bump(unsigned *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] += (unsigned)i;
}

__global__ void combine(const unsigned *c, const unsigned *a, unsigned *d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) d[i] = c[i] + (a[i] >> 3);
}

static unsigned expect(unsigned in, int i)
{
    unsigned a = in * 2654435761u + 12345u, b = (a ^ (a >> 13)) + (unsigned)i;
    return b + (a >> 3);
}

int main()
{
    const int n = 1 << 14, rounds = 6;
    const size_t bytes = (size_t)n * sizeof(unsigned);
    unsigned *hin, *hout, *din, *da, *db, *dc, *dd;
    CK(cudaMallocHost(&hin, bytes));
    CK(cudaMallocHost(&hout, bytes));
    CK(cudaMalloc(&din, bytes)); CK(cudaMalloc(&da, bytes)); CK(cudaMalloc(&db, bytes));
    CK(cudaMalloc(&dc, bytes)); CK(cudaMalloc(&dd, bytes));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CK(cudaMemcpyAsync(din, hin, bytes, cudaMemcpyHostToDevice, s));
    scale<<<n / 256, 256, 0, s>>>(din, da, n);
    shuffle<<<n / 256, 256, 0, s>>>(da, db, n);
    bump<<<n / 256, 256, 0, s>>>(db, n);
    CK(cudaMemcpyAsync(dc, db, bytes, cudaMemcpyDeviceToDevice, s));
    combine<<<n / 256, 256, 0, s>>>(dc, da, dd, n);
    CK(cudaMemcpyAsync(hout, dd, bytes, cudaMemcpyDeviceToHost, s));
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    unsigned long long sum = 0, hash = 0xcbf29ce484222325ULL;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < n; i++) hin[i] = (unsigned)(i * 7 + r * 104729);
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < n; i++) {
            unsigned want = expect(hin[i], i);
            if (hout[i] != want) {
                fprintf(stderr, "FAIL cuda_graph_memcpy: round %d out[%d]=%u expected %u\n", r, i, hout[i], want);
                return 1;
            }
            sum += hout[i];
        }
        hash ^= wl_fnv1a64(hout, bytes) + (unsigned long long)r;
    }
    CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g)); CK(cudaStreamDestroy(s));
    CK(cudaFree(din)); CK(cudaFree(da)); CK(cudaFree(db)); CK(cudaFree(dc)); CK(cudaFree(dd));
    CK(cudaFreeHost(hin)); CK(cudaFreeHost(hout));
    printf("RESULT cuda_graph_memcpy ok n=%d launches=%d sum=%llu hash=%016llx\n", n, rounds, sum, hash);
    return 0;
}
