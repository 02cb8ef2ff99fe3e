/* streams_threads.cu - vgtrace corpus workload: 4 host threads (std::thread), each driving
 * its own 2 CUDA streams. Per thread: stream A copies chunk A in (pinned memory), runs 4 update
 * kernels, records an event; stream B copies chunk B in, runs 4 update kernels, waits on A's event,
 * adds chunk A into chunk B, copies both back. Every result is recomputed on the host. Sized (4096
 * values a chunk) so that its trace stays within a megabyte or two.
 * Prints: RESULT streams_threads ok threads=4 streams=8 n=4096 hash=<fnv1a64 of all outputs, in
 * thread order> ; exit 0, or exit 1 on failure. */
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
#include "wl_common.h"

enum { THREADS = 4, N = 4096, ITERS = 4 };

__global__ void update(uint32_t *x, int n, uint32_t a, uint32_t b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + b + (uint32_t)i;
}

__global__ void addinto(uint32_t *dst, const uint32_t *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] += src[i];
}

static uint32_t init_val(int t, int s, int i) { return (uint32_t)(t * 1000003 + s * 7919 + i); }

struct Work {
    int t;
    uint32_t *h_in[2], *h_out[2];   /* pinned */
    std::string err;
};

#define TCK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    w->err = std::string(#x) + ": " + cudaGetErrorString(e_); return; } } while (0)

static void worker(Work *w)
{
    const size_t bytes = N * sizeof(uint32_t);
    cudaStream_t st[2];
    cudaEvent_t ev;
    uint32_t *d[2];
    TCK(cudaSetDevice(0));
    for (int s = 0; s < 2; s++) {
        TCK(cudaStreamCreateWithFlags(&st[s], cudaStreamNonBlocking));
        TCK(cudaMalloc(&d[s], bytes));
    }
    TCK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    for (int s = 0; s < 2; s++) {
        TCK(cudaMemcpyAsync(d[s], w->h_in[s], bytes, cudaMemcpyHostToDevice, st[s]));
        for (int k = 0; k < ITERS; k++)
            update<<<N / 256, 256, 0, st[s]>>>(d[s], N, 2u * (uint32_t)(w->t + s + k) + 1u, (uint32_t)k);
        TCK(cudaGetLastError());
        if (s == 0) TCK(cudaEventRecord(ev, st[0]));
    }
    TCK(cudaStreamWaitEvent(st[1], ev, 0));
    addinto<<<N / 256, 256, 0, st[1]>>>(d[1], d[0], N);
    TCK(cudaGetLastError());
    TCK(cudaMemcpyAsync(w->h_out[0], d[0], bytes, cudaMemcpyDeviceToHost, st[0]));
    TCK(cudaMemcpyAsync(w->h_out[1], d[1], bytes, cudaMemcpyDeviceToHost, st[1]));
    for (int s = 0; s < 2; s++) TCK(cudaStreamSynchronize(st[s]));
    TCK(cudaEventDestroy(ev));
    for (int s = 0; s < 2; s++) { TCK(cudaFree(d[s])); TCK(cudaStreamDestroy(st[s])); }
}

int main()
{
    const size_t bytes = N * sizeof(uint32_t);
    Work w[THREADS];
    for (int t = 0; t < THREADS; t++) {
        w[t].t = t;
        for (int s = 0; s < 2; s++) {
            cudaError_t e1 = cudaMallocHost(&w[t].h_in[s], bytes), e2 = cudaMallocHost(&w[t].h_out[s], bytes);
            if (e1 != cudaSuccess || e2 != cudaSuccess) {
                fprintf(stderr, "FAIL streams_threads: cudaMallocHost: %s\n",
                        cudaGetErrorString(e1 != cudaSuccess ? e1 : e2));
                return 1;
            }
            for (int i = 0; i < N; i++) w[t].h_in[s][i] = init_val(t, s, i);
            memset(w[t].h_out[s], 0, bytes);
        }
    }
    std::vector<std::thread> th;
    for (int t = 0; t < THREADS; t++) th.emplace_back(worker, &w[t]);
    for (auto &x : th) x.join();
    for (int t = 0; t < THREADS; t++)
        if (!w[t].err.empty()) {
            fprintf(stderr, "FAIL streams_threads: thread %d: %s\n", t, w[t].err.c_str());
            return 1;
        }
    uint64_t h = 0xcbf29ce484222325ULL;
    std::vector<uint32_t> ref[2] = {std::vector<uint32_t>(N), std::vector<uint32_t>(N)};
    for (int t = 0; t < THREADS; t++) {
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < N; i++) {
                uint32_t x = init_val(t, s, i);
                for (int k = 0; k < ITERS; k++) x = x * (2u * (uint32_t)(t + s + k) + 1u) + (uint32_t)k + (uint32_t)i;
                ref[s][i] = x;
            }
        for (int i = 0; i < N; i++) ref[1][i] += ref[0][i];
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < N; i++)
                if (w[t].h_out[s][i] != ref[s][i]) {
                    fprintf(stderr, "FAIL streams_threads: thread %d stream %d x[%d]=%u expected %u\n",
                            t, s, i, w[t].h_out[s][i], ref[s][i]);
                    return 1;
                }
            const unsigned char *p = (const unsigned char *)w[t].h_out[s];
            for (size_t i = 0; i < bytes; i++) { h ^= p[i]; h *= 0x100000001b3ULL; }
        }
    }
    for (int t = 0; t < THREADS; t++)
        for (int s = 0; s < 2; s++) { cudaFreeHost(w[t].h_in[s]); cudaFreeHost(w[t].h_out[s]); }
    printf("RESULT streams_threads ok threads=%d streams=%d n=%d hash=%016llx\n", THREADS, 2 * THREADS, N,
           (unsigned long long)h);
    return 0;
}
