/* many_launches.cu - vgtrace corpus workload: 10000 tiny kernel launches on the default stream.
 * Launch k computes x[i] = x[i]*3 + k + i (uint32, wrapping): the result depends on every launch
 * running, and in order. Host recomputes and checks; FNV-1a 64 of the final array is printed.
 * Prints: RESULT many_launches ok launches=10000 n=1024 hash=<fnv1a64> ; exit 0, or 1 on failure. */
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <cuda_runtime.h>
#include "wl_common.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "FAIL many_launches: %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
    exit(1); } } while (0)

__global__ void step(uint32_t *x, int n, uint32_t k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 3u + k + (uint32_t)i;
}

int main()
{
    const int n = 1024, launches = 10000;
    std::vector<uint32_t> host(n), ref(n);
    for (int i = 0; i < n; i++) ref[i] = host[i] = (uint32_t)i * 7u;
    uint32_t *dx;
    CK(cudaMalloc(&dx, n * sizeof(uint32_t)));
    CK(cudaMemcpy(dx, host.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    for (int k = 0; k < launches; k++) {
        step<<<n / 256, 256>>>(dx, n, (uint32_t)k);
        if ((k & 1023) == 0) CK(cudaGetLastError());
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(host.data(), dx, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    CK(cudaFree(dx));
    for (int k = 0; k < launches; k++)
        for (int i = 0; i < n; i++) ref[i] = ref[i] * 3u + (uint32_t)k + (uint32_t)i;
    for (int i = 0; i < n; i++)
        if (host[i] != ref[i]) {
            fprintf(stderr, "FAIL many_launches: x[%d]=%u expected %u\n", i, host[i], ref[i]);
            return 1;
        }
    printf("RESULT many_launches ok launches=%d n=%d x0=%u hash=%016llx\n", launches, n, host[0],
           (unsigned long long)wl_fnv1a64(host.data(), n * sizeof(uint32_t)));
    return 0;
}
