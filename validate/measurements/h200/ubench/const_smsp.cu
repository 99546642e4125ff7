// Which warps share constant-cache fills (issue 38), on the H200. const_sets.cu found that K = 32
// distinct constant words 128 bytes apart (16 sets' worth of lines for 8 sets x 4 ways: every
// request of one warp misses) miss 100% with 1 warp per SM but only 22-31% with 8-16 warps.
// Hypothesis: the IDC interleaves the requests of the 4 SM sub-partitions (SMSPs) address by
// address, so warps on different SMSPs share each line fill, while warps of one SMSP are served
// one whole LDC after the other. Test: one block of 32 warps, only the warps in `mask` run the
// loop (warp w runs on SMSP w % 4), optionally the odd-numbered active warps start `delay`
// cycles late. Prints cycles per load of the slowest active warp; run under Nsight Compute for
// idc__requests_lookup_miss.sum per launch (launch order as printed).
// Build and run: nvcc -arch=sm_90 -O3 const_smsp.cu -o const_smsp && ./const_smsp
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define WORDS 16384
__constant__ uint32_t table[WORDS];  // 64 KiB of zeros

__global__ void smsp_set(unsigned mask, int k, int s_words, int iters, int delay,
                         uint32_t advance, long long* cyc, uint32_t* out) {
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (!((mask >> warp) & 1u)) return;
    uint32_t off = (lane % k) * s_words, base = 0, acc = 0;
    // Odd-ranked active warps wait `delay` cycles (rank = position among the active warps).
    int rank = __popc(mask & ((1u << warp) - 1u));
    if (delay > 0 && (rank & 1)) {
        long long t = clock64();
        while (clock64() - t < delay) {}
    }
    long long t0 = clock64();
    for (int i = 0; i < iters; ++i) { acc += table[(base + off) % WORDS]; base += advance; }
    long long t1 = clock64();
    out[threadIdx.x] = acc;
    if (lane == 0) cyc[warp] = t1 - t0;
}

int main() {
    long long* cyc; uint32_t* out; long long hc[32];
    cudaMalloc(&cyc, sizeof hc); cudaMalloc(&out, 1024 * 4);
    struct Case { const char* name; unsigned mask; };
    const Case cases[] = {
        {"w0", 0x1u},          {"w0_w1", 0x3u},       {"w0_w4", 0x11u},
        {"w0_w2", 0x5u},       {"w0-3", 0xfu},        {"w0_4_8_12", 0x1111u},
        {"w0_1_4_5", 0x33u},   {"w0-7", 0xffu},       {"w0-15", 0xffffu},
        {"w0-31", 0xffffffffu},
    };
    struct Pat { int k, s; };
    const Pat pats[] = {{32, 128}, {16, 256}, {32, 256}, {8, 512}};
    printf("case,mask,k,stride_b,delay,warps,cycles_per_load\n");
    for (Pat p : pats) {
        for (Case c : cases) {
            for (int delay : {0, 2000}) {
                if (delay && __builtin_popcount(c.mask) != 2) continue;
                int iters = 512;
                smsp_set<<<1, 1024>>>(c.mask, p.k, p.s / 4, iters, delay, 0, cyc, out);
                cudaError_t e = cudaDeviceSynchronize();
                if (e != cudaSuccess) { printf("error %s\n", cudaGetErrorString(e)); return 1; }
                cudaMemcpy(hc, cyc, sizeof hc, cudaMemcpyDeviceToHost);
                long long mx = 0;
                for (int w = 0; w < 32; ++w)
                    if ((c.mask >> w) & 1u) mx = hc[w] > mx ? hc[w] : mx;
                printf("%s,0x%x,%d,%d,%d,%d,%.2f\n", c.name, c.mask, p.k, p.s, delay,
                       __builtin_popcount(c.mask), (double)mx / iters);
            }
        }
    }
    return 0;
}
