// Constant-cache set mapping and warp-level sets (issue 38), on the H200. Two tests:
// A. chase: one thread follows a dependent chain through N words S bytes apart (one word per
//    line), warmed once, then timed: cycles per load. Where the chain stops fitting the constant
//    L1 for a given S says how its sets are indexed (8 sets x 4 ways of 64-byte lines hold 32
//    lines at S = 64, 16 at S = 128, 8 at S = 256; a fully associative 2 KiB holds 32 at any S).
// B. warp: each lane of W warps (one block per SM, 1 or 132 SMs) loads word (lane % K) * S / 4,
//    the same K distinct words every iteration, independent loads as suite38's const_walk: cycles
//    per warp-level load (the slowest warp), against K, S and W; Nsight Compute's IDC misses.
// Build and run: nvcc -arch=sm_90 -O3 const_sets.cu -o const_sets && ./const_sets
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>

#define WORDS 16384
__constant__ uint32_t table[WORDS];  // 64 KiB

__global__ void chase(int hops, long long* cyc, uint32_t* out) {
    uint32_t j = 0;
    for (int i = 0; i < hops; ++i) j = table[j];
    j = 0;
    long long t0 = clock64();
    for (int i = 0; i < hops; ++i) j = table[j];
    long long t1 = clock64();
    out[0] = j;
    cyc[0] = t1 - t0;
}

__global__ void warp_set(int k, int s_words, int iters, uint32_t advance, long long* cyc,
                         uint32_t* out) {
    // As tests/fixtures/suite38/constant.cu's const_walk (independent loads; `advance` is 0 at
    // run time, so every iteration reads the same K words, but the compiler cannot hoist them).
    int lane = threadIdx.x % 32;
    uint32_t off = (lane % k) * s_words, base = 0, acc = 0;
    for (int i = 0; i < 4; ++i) { acc += table[(base + off) % WORDS]; base += advance; }
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; ++i) { acc += table[(base + off) % WORDS]; base += advance; }
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    if (lane == 0) cyc[blockIdx.x * 32 + threadIdx.x / 32] = t1 - t0;
}

static uint32_t h[WORDS];
static long long hc[132 * 32];

int main() {
    long long* cyc; uint32_t* out;
    cudaMalloc(&cyc, sizeof hc); cudaMalloc(&out, 132 * 1024 * 4);
    const int strides[] = {64, 128, 256, 512, 1024, 2048};
    const int counts[] = {4, 6, 8, 10, 12, 14, 16, 18, 20, 24, 28, 30, 32, 33, 34, 36, 40, 48, 64};
    printf("test,stride_b,lines,warps,sms,cycles_per_load\n");
    for (int s : strides) {
        for (int n : counts) {
            if ((long)n * s > WORDS * 4) continue;
            memset(h, 0, sizeof h);
            for (int k = 0; k < n; ++k) h[k * s / 4] = ((k + 1) % n) * s / 4;
            cudaMemcpyToSymbol(table, h, sizeof h);
            int hops = 4096;
            chase<<<1, 1>>>(hops, cyc, out);
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) { printf("error %s\n", cudaGetErrorString(e)); return 1; }
            cudaMemcpy(hc, cyc, 8, cudaMemcpyDeviceToHost);
            printf("chase,%d,%d,1,1,%.2f\n", s, n, (double)hc[0] / hops);
        }
    }
    memset(h, 0, sizeof h);
    cudaMemcpyToSymbol(table, h, sizeof h);
    for (int sms : {1, 132}) {
        for (int w : {1, 8, 16}) {
            for (int s : {4, 64, 128, 256, 512, 2048}) {
                for (int k : {1, 2, 4, 8, 16, 32}) {
                    int iters = 1024;
                    warp_set<<<sms, 32 * w>>>(k, s / 4, iters, 0, cyc, out);
                    cudaError_t e = cudaDeviceSynchronize();
                    if (e != cudaSuccess) { printf("error %s\n", cudaGetErrorString(e)); return 1; }
                    cudaMemcpy(hc, cyc, sizeof(long long) * sms * 32, cudaMemcpyDeviceToHost);
                    long long mx = 0;
                    for (int b = 0; b < sms; ++b)
                        for (int q = 0; q < w; ++q) mx = hc[b * 32 + q] > mx ? hc[b * 32 + q] : mx;
                    printf("warp,%d,%d,%d,%d,%.2f\n", s, k, w, sms, (double)mx / iters);
                }
            }
        }
    }
    return 0;
}
