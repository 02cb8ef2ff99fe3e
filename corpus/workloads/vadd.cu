/* vadd.cu - vgtrace corpus workload: CUDA vector add of 1<<20 floats.
 * Deterministic inputs, exact float results, host check, FNV-1a 64 hash of the output bytes.
 * Prints: RESULT vadd ok n=1048576 sum=<exact sum> hash=<fnv1a64> ; exit 0, or exit 1 on failure. */
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include "wl_common.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "FAIL vadd: %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main()
{
    const int n = 1 << 20;
    const size_t bytes = (size_t)n * sizeof(float);
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; i++) {           /* small dyadic values: every sum is exact */
        a[i] = (float)(i & 1023) * 0.25f;
        b[i] = (float)(i >> 10) * 0.5f;
    }
    float *da, *db, *dc;
    CK(cudaMalloc(&da, bytes)); CK(cudaMalloc(&db, bytes)); CK(cudaMalloc(&dc, bytes));
    CK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));
    CK(cudaMemset(dc, 0, bytes));
    vadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        if (c[i] != a[i] + b[i]) {
            fprintf(stderr, "FAIL vadd: c[%d]=%g expected %g\n", i, c[i], a[i] + b[i]);
            return 1;
        }
        sum += c[i];
    }
    CK(cudaFree(da)); CK(cudaFree(db)); CK(cudaFree(dc));
    printf("RESULT vadd ok n=%d sum=%.2f hash=%016llx\n", n, sum,
           (unsigned long long)wl_fnv1a64(c.data(), bytes));
    return 0;
}
