/* multi_kernel.cu - vgtrace corpus workload: several kernels per launch stream, using constant memory,
 * shared memory and atomics, on two streams.
 *   scale   y[i] = x[i] * c_coef[i % 16] + c_bias        (__constant__ memory, set with cudaMemcpyToSymbol)
 *   blocksum s[b] = sum of y over block b                 (__shared__ tree reduction, __syncthreads)
 *   histo   h[y[i] % 64] += 1                             (atomicAdd on global memory)
 *   total   *t += s[b] for every block                    (atomicAdd, one thread per block)
 * Each of 8 rounds launches the four kernels in order on one stream (the rounds alternate between two
 * streams, joined by an event, so a round depends on the one before); the bias changes every round.
 * Host recomputes and checks everything; FNV-1a 64 of the results is printed.
 * Prints: RESULT multi_kernel ok rounds=8 n=65536 total=<u64> hash=<fnv1a64> ; exit 0, or 1 on failure. */
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#include "wl_common.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "FAIL multi_kernel: %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

enum { N = 65536, BLOCK = 256, BLOCKS = N / BLOCK, BINS = 64, ROUNDS = 8 };

__constant__ uint32_t c_coef[16];
__constant__ uint32_t c_bias;

__global__ void scale(const uint32_t *x, uint32_t *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = x[i] * c_coef[i % 16] + c_bias;
}

__global__ void blocksum(const uint32_t *y, unsigned long long *s)
{
    __shared__ unsigned long long part[BLOCK];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    part[t] = i < N ? y[i] : 0;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w >>= 1) {
        if (t < w) part[t] += part[t + w];
        __syncthreads();
    }
    if (t == 0) s[blockIdx.x] = part[0];
}

__global__ void histo(const uint32_t *y, unsigned int *h)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(&h[y[i] % BINS], 1u);
}

__global__ void total(const unsigned long long *s, unsigned long long *t)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < BLOCKS) atomicAdd(t, s[b]);
}

int main()
{
    std::vector<uint32_t> x(N), y(N);
    std::vector<unsigned long long> s(BLOCKS);
    std::vector<unsigned int> h(BINS);
    uint32_t coef[16];
    for (int i = 0; i < N; i++) x[i] = (uint32_t)i * 2654435761u;
    for (int k = 0; k < 16; k++) coef[k] = 3u + 2u * (uint32_t)k;
    uint32_t *dx, *dy;
    unsigned long long *ds, *dt;
    unsigned int *dh;
    CK(cudaMalloc(&dx, N * 4));
    CK(cudaMalloc(&dy, N * 4));
    CK(cudaMalloc(&ds, BLOCKS * 8));
    CK(cudaMalloc(&dh, BINS * 4));
    CK(cudaMalloc(&dt, 8));
    CK(cudaMemcpy(dx, x.data(), N * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dh, 0, BINS * 4));
    CK(cudaMemset(dt, 0, 8));
    CK(cudaMemcpyToSymbol(c_coef, coef, sizeof coef));
    cudaStream_t st[2];
    cudaEvent_t done[2];
    for (int k = 0; k < 2; k++) {
        CK(cudaStreamCreateWithFlags(&st[k], cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
    }
    for (int r = 0; r < ROUNDS; r++) {
        cudaStream_t q = st[r & 1];
        if (r) CK(cudaStreamWaitEvent(q, done[(r - 1) & 1], 0));
        uint32_t bias = 1000u * (uint32_t)r + 7u;
        CK(cudaMemcpyToSymbolAsync(c_bias, &bias, sizeof bias, 0, cudaMemcpyHostToDevice, q));
        CK(cudaStreamSynchronize(q));   /* bias lives on the host stack: the copy must finish before it changes */
        scale<<<BLOCKS, BLOCK, 0, q>>>(dx, dy);
        blocksum<<<BLOCKS, BLOCK, 0, q>>>(dy, ds);
        histo<<<BLOCKS, BLOCK, 0, q>>>(dy, dh);
        total<<<(BLOCKS + 127) / 128, 128, 0, q>>>(ds, dt);
        CK(cudaGetLastError());
        CK(cudaEventRecord(done[r & 1], q));
    }
    CK(cudaDeviceSynchronize());
    unsigned long long t;
    CK(cudaMemcpy(y.data(), dy, N * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(s.data(), ds, BLOCKS * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(h.data(), dh, BINS * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&t, dt, 8, cudaMemcpyDeviceToHost));
    /* the host's own computation */
    std::vector<uint32_t> ry(N);
    std::vector<unsigned int> rh(BINS, 0);
    unsigned long long rt = 0;
    std::vector<unsigned long long> rs(BLOCKS);
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t bias = 1000u * (uint32_t)r + 7u;
        for (int i = 0; i < N; i++) ry[i] = x[i] * coef[i % 16] + bias;
        for (int b = 0; b < BLOCKS; b++) {
            unsigned long long a = 0;
            for (int k = 0; k < BLOCK; k++) a += ry[b * BLOCK + k];
            rs[b] = a;
            rt += a;
        }
        for (int i = 0; i < N; i++) rh[ry[i] % BINS]++;
    }
    int bad = t != rt;
    for (int i = 0; i < N && !bad; i++) bad = y[i] != ry[i];
    for (int b = 0; b < BLOCKS && !bad; b++) bad = s[b] != rs[b];
    for (int k = 0; k < BINS && !bad; k++) bad = h[k] != rh[k];
    if (bad) {
        fprintf(stderr, "FAIL multi_kernel: results differ from the host's (total %llu, expected %llu)\n", t, rt);
        return 1;
    }
    uint64_t hash = wl_fnv1a64(y.data(), N * 4) ^ wl_fnv1a64(s.data(), BLOCKS * 8) ^ wl_fnv1a64(h.data(), BINS * 4);
    printf("RESULT multi_kernel ok rounds=%d n=%d total=%llu hash=%016llx\n", ROUNDS, N, t, (unsigned long long)hash);
    return 0;
}
