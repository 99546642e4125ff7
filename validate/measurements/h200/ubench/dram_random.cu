// DRAM throughput by locality (issue 38: suite37's random gathers from 128 MiB run at ~2.9 TB/s of
// DRAM traffic where strided reads reach 3.5-3.9). X. 132 x 16 blocks of 256 threads, each
// thread 32 independent 4-byte loads (8 in flight per unrolled step), from a 1 GiB buffer that L2
// cannot hold; where a warp's lanes read:
//   sector:  each lane a random 32-byte sector (a line per lane, 64-byte DRAM fills)
//   line:    the warp a random 128-byte line (lane l word l)
//   k1:      the warp 1 KiB at a random 1 KiB-aligned offset (lane l words 8l..8l+7, 8 loads)
//   k4:      the warp 4 KiB at a random 4 KiB-aligned offset (8 loads of 512 B)
//   seq:     consecutive lines across the grid (a stream)
// Time between CUDA events (median of 5, after a warm-up); bytes from DRAM per the fills each
// pattern needs (sector: 64 B per load, the fill size; the others: what they touch). Nsight Compute's
// dram__bytes_read.sum of the same launches comes from the run script.
// With an argument k the buffer is 2^k words instead: `./dram_random 20` reads 4 MiB, which L2
// holds (the L2's own rate for scattered sectors, lines and runs: suite37's L2-resident gathers
// move 73 sectors per cycle where streaming reads move 124).
// Build and run: nvcc -arch=sm_90 -O3 dram_random.cu -o dram_random && ./dram_random
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

__device__ __forceinline__ unsigned hash(unsigned x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

// words: buffer size in 4-byte words (a power of two).
__global__ void k_read(const unsigned* __restrict__ buf, unsigned* out, unsigned words, int mode) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31,
                   warp = t >> 5, nthreads = gridDim.x * blockDim.x;
    unsigned acc = 0;
#pragma unroll 1
    for (int j = 0; j < 32; j += 8) {
        unsigned a[8];
#pragma unroll
        for (int u = 0; u < 8; ++u) {
            const unsigned i = j + u;
            unsigned w;
            if (mode == 0) w = (hash(t * 32 + i) & (words - 1)) & ~7u;
            else if (mode == 1) w = ((hash(warp * 32 + i) << 5) & (words - 1)) + lane;
            else if (mode == 2) w = ((hash(warp * 4 + i / 8) << 8) & (words - 1)) + lane * 8 + (i & 7);
            else if (mode == 3) w = ((hash(warp) << 10) & (words - 1)) + i * 32 + lane;
            else w = ((i * nthreads + t) & (words - 1));
            a[u] = buf[w];
        }
#pragma unroll
        for (int u = 0; u < 8; ++u) acc += a[u];
    }
    out[t] = acc;
}

int main(int argc, char** argv) {
    const unsigned words = 1u << (argc > 1 ? atoi(argv[1]) : 28);  // 1 GiB
    unsigned *buf, *out;
    const int blocks = 132 * 16, threads = 256;
    cudaMalloc(&buf, (size_t)words * 4);
    cudaMemset(buf, 1, (size_t)words * 4);
    cudaMalloc(&out, blocks * threads * 4);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    const char* names[5] = {"sector", "line", "k1", "k4", "seq"};
    // DRAM bytes each pattern must move: sector 64 B (fill) per load; line 128 B per warp-load;
    // k1 / k4 / seq: 4 B per load (every byte touched once, whole lines)
    const double per_load[5] = {64.0, 4.0, 4.0, 4.0, 4.0};
    const double loads = (double)blocks * threads * 32;
    printf("pattern,us,loads,dram_bytes_needed,GB_per_s\n");
    for (int m = 0; m < 5; ++m) {
        std::vector<float> t;
        for (int r = 0; r < 6; ++r) {
            cudaEventRecord(e0);
            k_read<<<blocks, threads>>>(buf, out, words, m);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (r) t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        const double us = t[t.size() / 2], bytes = loads * per_load[m];
        printf("%s,%.2f,%.0f,%.0f,%.1f\n", names[m], us, loads, bytes, bytes / us / 1e3);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) printf("error %s\n", cudaGetErrorString(e));
    return 0;
}
