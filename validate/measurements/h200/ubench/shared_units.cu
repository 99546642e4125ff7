// Microbenchmarks of the H200's units that several SMs share (issue 38), nvcc -O3 -arch=sm_90:
//   I  constant-cache misses: cycles per warp-level LDC per SM as the number of SMs that miss
//      together grows (one block of 16 warps per SM; the SMs chosen by %smid), for k distinct
//      addresses per warp, their spacing and the table size. If the level behind the per-SM
//      constant L1 is shared by the SMs of a GPC, the cost per SM grows with the SMs of one GPC
//      that miss at once, and SMs far apart in %smid order share less.
//   J  atomics on few addresses: ns per atomic operation GPU-wide for 1 to 4096 distinct
//      addresses, RED (result unused) and ATOM (result used), every lane or one lane per warp.
//   K  back-to-back launches: CUDA-event mean per launch and host enqueue time per launch of
//      kernels that spin for a given time, to separate the GPU's launch-to-launch gap from the
//      host's launch cost.
// Output: one line per measurement, `key=value` fields.
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

__constant__ int ctab[16384];  // 64 KiB: the whole constant bank a kernel may declare

// I: 16 warps; warp w, load j of iteration i reads word ((i*8 + j + 37*w) * step + (lane % k) *
// stride) & mask. step = 512 words (2 KiB), so consecutive loads of a warp never share a line of
// the 2 KiB constant L1. Blocks on SMs outside `sel` return at once.
__global__ void cmiss(int iters, int k, int stride, int step, int mask, const int* sel,
                      long long* cycles, int* sink) {
    extern __shared__ int pad[];
    int smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (!sel[smid]) return;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int off = (lane % k) * stride;
    int acc = 0;
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < 8; j++) acc += ctab[(((i * 8 + j + 37 * w) * step) + off) & mask];
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
    if (acc == 0x7fffffff) sink[0] = acc + pad[0];
}

// J: every thread (or lane 0 of each warp) adds 1 to ctr[(thread % naddr) * spacing], iters times.
__global__ void red_k(unsigned* ctr, int naddr, int spacing, int iters, int one_lane) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (one_lane && (threadIdx.x & 31)) return;
    unsigned a = (t % naddr) * spacing;
    for (int i = 0; i < iters; i++) atomicAdd(&ctr[a], 1u);
}
__global__ void atom_k(unsigned* ctr, int naddr, int spacing, int iters, int one_lane, unsigned* sink) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (one_lane && (threadIdx.x & 31)) return;
    unsigned a = (t % naddr) * spacing, acc = 0;
    for (int i = 0; i < iters; i++) acc += atomicAdd(&ctr[a], 1u);
    if (acc == 0xffffffffu) sink[0] = acc;
}


// L: one thread per block chases a dependent list through ctab: word i holds the index of the
// next word, `stride` words on, wrapping within the first `words`; a warm-up pass, then `n`
// timed loads. cycles[block] = cycles per load.
__global__ void cchase(int n, long long* cycles, int* sink) {
    if (threadIdx.x) return;
    int j = 0;
    for (int i = 0; i < n; i++) j = ctab[j];
    long long t0 = clock64();
    for (int i = 0; i < n; i++) j = ctab[j];
    long long t1 = clock64();
    cycles[blockIdx.x] = (t1 - t0) / n;
    if (j == -1) sink[0] = j;
}

// K: each block's thread 0 spins until `cyc` clock cycles have passed.
__global__ void spin(long long cyc) {
    if (threadIdx.x) return;
    long long t0 = clock64();
    while (clock64() - t0 < cyc) {}
}
__global__ void empty() {}

static float time_launches(int n, void (*launch)()) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    launch();
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(a));
    for (int r = 0; r < n; r++) launch();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

int main(int argc, char** argv) {
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    int nsm = p.multiProcessorCount, clk;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    printf("device=%s sms=%d clock_khz=%d\n", p.name, nsm, clk);
    std::vector<int> host(16384);
    for (int i = 0; i < 16384; i++) host[i] = i;
    CK(cudaMemcpyToSymbol(ctab, host.data(), sizeof(int) * 16384));
    int *sel, *sink; long long* cyc;
    CK(cudaMalloc(&sel, 4 * 1024)); CK(cudaMalloc(&sink, 64)); CK(cudaMalloc(&cyc, 8 * nsm));
    int shm = 150 * 1024;  // one block per SM
    CK(cudaFuncSetAttribute(cmiss, cudaFuncAttributeMaxDynamicSharedMemorySize, shm));

    // I. SM sets: the first n in %smid order, and n spread evenly over all SMs.
    // `shared_units L WORDS STRIDE BLOCKS`: one chase launch only (for Nsight Compute).
    auto run_l = [&](int words, int stride, int blocks) {
        std::vector<int> t(16384, 0);
        for (int i = 0; i < words; i += stride) t[i] = (i + stride) % words;
        CK(cudaMemcpyToSymbol(ctab, t.data(), sizeof(int) * 16384));
        CK(cudaMemset(cyc, 0, 8 * nsm));
        cchase<<<blocks, 32>>>(4096, cyc, sink);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<long long> c(nsm);
        CK(cudaMemcpy(c.data(), cyc, 8 * nsm, cudaMemcpyDeviceToHost));
        double sum = 0; for (int b = 0; b < blocks; b++) sum += c[b];
        printf("L words_b=%d stride_b=%d blocks=%d cyc_per_load=%.1f\n", words * 4, stride * 4, blocks, sum / blocks);
    };
    if (argc == 5 && argv[1][0] == 'L') { run_l(atoi(argv[2]), atoi(argv[3]), atoi(argv[4])); return 0; }
    if (argc == 2 && argv[1][0] == 'L') {
        for (int stride : {16, 64})
            for (int kb : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 48, 56, 64})
                for (int blocks : {1, nsm}) run_l(kb * 256, stride, blocks);
        return 0;
    }
    // `shared_units I SET N K STRIDE_WORDS MASK`: one launch of I only (for Nsight Compute).
    auto run_i = [&](const char* set, int n, int k, int stride, int mask, int iters) {
        std::vector<int> s(1024, 0);
        for (int i = 0; i < n; i++) {
            int id = set[0] == 'f' ? i : (int)((long long)i * nsm / n);
            s[id] = 1;
        }
        CK(cudaMemcpy(sel, s.data(), 4 * 1024, cudaMemcpyHostToDevice));
        CK(cudaMemset(cyc, 0, 8 * nsm));
        cmiss<<<nsm, 512, shm>>>(iters, k, stride, 512, mask, sel, cyc, sink);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<long long> c(nsm);
        CK(cudaMemcpy(c.data(), cyc, 8 * nsm, cudaMemcpyDeviceToHost));
        double sum = 0, mx = 0; int m = 0;
        for (auto v : c) if (v) { sum += v; mx = v > mx ? v : mx; m++; }
        double loads = (double)iters * 8 * 16;  // warp-level loads per SM
        printf("I set=%s sms=%d ran=%d k=%d stride_b=%d table_b=%d cyc_per_ldc_mean=%.2f cyc_per_ldc_max=%.2f\n",
               set, n, m, k, stride * 4, (mask + 1) * 4, sum / m / loads, mx / loads);
    };
    if (argc == 7 && argv[1][0] == 'I') {
        run_i(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), 200);
        return 0;
    }
    for (const char* set : {"first", "spread"})
        for (int n : {1, 2, 4, 8, 16, 18, 24, 33, 66, 132})
            for (int k : {1, 8, 32}) run_i(set, n, k, 16, 16383, 200);
    for (int n : {1, 16, 132})
        for (int stride : {1, 4, 16, 64})
            for (int k : {2, 4, 16}) run_i("first", n, k, stride, 16383, 200);
    for (int n : {1, 132})
        for (int tb : {4096, 8192, 16384, 32768, 65536}) run_i("spread", n, 32, 16, tb / 4 - 1, 200);

    // J. atomics
    unsigned* ctr; CK(cudaMalloc(&ctr, 4 << 20));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int ret = 0; ret < 2; ret++)
        for (int one = 0; one < 2; one++)
            for (int naddr : {1, 2, 4, 8, 32, 128, 1024, 4096})
                for (int spacing : {1, 32}) {
                    int blocks = nsm * 4, threads = 256, iters = one ? 64 : 16;
                    for (int rep = 0; rep < 2; rep++) {
                        CK(cudaMemset(ctr, 0, 4 << 20));
                        CK(cudaEventRecord(a));
                        if (ret) atom_k<<<blocks, threads>>>(ctr, naddr, spacing, iters, one, (unsigned*)sink);
                        else red_k<<<blocks, threads>>>(ctr, naddr, spacing, iters, one);
                        CK(cudaEventRecord(b));
                        CK(cudaEventSynchronize(b));
                        float ms; CK(cudaEventElapsedTime(&ms, a, b));
                        double ops = (double)blocks * threads / (one ? 32 : 1) * iters;
                        if (rep) printf("J op=%s lanes=%s naddr=%d spacing_b=%d ops=%.0f us=%.2f ns_per_op=%.4f\n",
                                        ret ? "atom" : "red", one ? "one" : "all", naddr, spacing * 4, ops,
                                        ms * 1e3, ms * 1e6 / ops);
                    }
                }

    // K. back-to-back launches
    static long long spin_cyc; static int spin_grid;
    for (int g : {1, 132, 1056})
        for (double us : {0.0, 1.0, 2.0, 4.0, 8.0, 16.0}) {
            spin_cyc = (long long)(us * clk / 1e3); spin_grid = g;
            auto l = [] { spin<<<spin_grid, 128>>>(spin_cyc); };
            int n = 2000;
            auto h0 = std::chrono::steady_clock::now();
            float ms = time_launches(n, l);
            auto h1 = std::chrono::steady_clock::now();
            double host_us = std::chrono::duration<double, std::micro>(h1 - h0).count();
            // host enqueue cost alone: launches queued behind a long spin (the GPU is busy)
            spin<<<1, 32>>>((long long)clk * 100);  // 100 ms
            auto e0 = std::chrono::steady_clock::now();
            for (int r = 0; r < 200; r++) l();
            auto e1 = std::chrono::steady_clock::now();
            CK(cudaDeviceSynchronize());
            double enq = std::chrono::duration<double, std::micro>(e1 - e0).count() / 200;
            printf("K grid=%d spin_us=%.1f events_us_per_launch=%.3f host_wall_us_per_launch=%.3f enqueue_us=%.3f\n",
                   g, us, ms * 1e3 / n, host_us / n, enq);
        }
    {
        auto l = [] { empty<<<1, 32>>>(); };
        float ms = time_launches(2000, l);
        printf("K kernel=empty grid=1 events_us_per_launch=%.3f\n", ms * 1e3 / 2000);
    }
    return 0;
}
