// G: dependent-load latency of one thread through global memory (a random cycle of 128-byte-apart
// words, cg loads that skip L1): within 4 MiB (L2 hits) and within 1 GiB (DRAM, past the 60 MiB
// L2), cycles per load from clock64().
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
__global__ void chase(const unsigned *p, unsigned start, int n, long long *out) {
    unsigned j = start;
    for (int i = 0; i < 64; i++) j = __ldcg(p + j); // warm the TLB and the path
    long long t0 = clock64();
    for (int i = 0; i < n; i++) j = __ldcg(p + j);
    long long t1 = clock64();
    out[0] = t1 - t0;
    out[1] = j;
}
int main() {
    size_t sizes[] = {4u << 20, 1u << 30};
    unsigned *d;
    long long *o, h[2];
    cudaMalloc(&d, 1u << 30);
    cudaMalloc(&o, 16);
    for (size_t bytes : sizes) {
        size_t n = bytes / 128; // one word per 128-byte line
        std::vector<unsigned> order(n), next(bytes / 4, 0);
        for (size_t i = 0; i < n; i++) order[i] = (unsigned)i;
        srand(1);
        for (size_t i = n - 1; i > 0; i--) std::swap(order[i], order[(size_t)rand() % (i + 1)]);
        for (size_t i = 0; i < n; i++) next[order[i] * 32] = order[(i + 1) % n] * 32;
        cudaMemcpy(d, next.data(), bytes, cudaMemcpyHostToDevice);
        for (int rep = 0; rep < 3; rep++) {
            chase<<<1, 1>>>(d, order[0] * 32, 4096, o);
            cudaMemcpy(h, o, 16, cudaMemcpyDeviceToHost);
            printf("%zu MiB: %.1f cycles per load\n", bytes >> 20, h[0] / 4096.0);
        }
    }
    return 0;
}
