// T: issue rate of the integer and FP32 pipes per SM sub-partition (issue 38: conv7, R4 and the
// naive transposes issue about 2.4 cycles per load per SM where one wavefront per cycle and one
// instruction per cycle per SMSP allow 1.4-1.6). nvcc -O3 -arch=sm_90.
// Each thread runs 8 independent chains of one PTX instruction (inline asm, so ptxas keeps one
// SASS instruction per PTX one), 512 iterations; 132 x B blocks of 1024 threads (32 warps per
// block): cycles per warp-instruction per SMSP = clock64 span of the block / (iterations x 8 x
// warps per SMSP; the loop adds 3 uniform/ALU instructions per 8). Mixed variants interleave two instruction kinds (1:1).
// Output: `T op=.. blocks_per_sm=.. cycles_per_warp_inst_per_smsp=..`.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

#define CHAINS(STMT) STMT(a0) STMT(a1) STMT(a2) STMT(a3) STMT(a4) STMT(a5) STMT(a6) STMT(a7)

#define IMAD(x) asm volatile("mad.lo.s32 %0, %0, %1, %2;" : "+r"(x) : "r"(m), "r"(c));
#define IADD(x) asm volatile("add.s32 %0, %0, %1;" : "+r"(x) : "r"(c));
#define IMIN(x) asm volatile("min.s32 %0, %0, %1;" : "+r"(x) : "r"(c));
#define LOP(x) asm volatile("xor.b32 %0, %0, %1;" : "+r"(x) : "r"(c));
#define FFMA(x) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(fm), "f"(fc));
#define IMADW(x) asm volatile("{ .reg .b32 lo; cvt.u32.u64 lo, %0; mad.wide.s32 %0, lo, %1, %0; }" : "+l"(x) : "r"(m));
#define SHL(x) asm volatile("shl.b32 %0, %0, %1;" : "+r"(x) : "r"(c));

template <int OP>
__global__ void pipe(int iters, int m, int c, float fm, float fc, long long* cycles, int* sink) {
    int a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5,
        a6 = a0 + 6, a7 = a0 + 7;
    float f0 = a0, f1 = a1, f2 = a2, f3 = a3, f4 = a4, f5 = a5, f6 = a6, f7 = a7;
    long long w0 = a0, w1 = a1, w2 = a2, w3 = a3, w4 = a4, w5 = a5, w6 = a6, w7 = a7;
    __syncthreads();
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
        if (OP == 0) { CHAINS(IMAD) }
        if (OP == 1) { CHAINS(IADD) }
        if (OP == 2) { CHAINS(IMIN) }
        if (OP == 3) { CHAINS(LOP) }
        if (OP == 4) {
#define F(x) FFMA(x)
            F(f0) F(f1) F(f2) F(f3) F(f4) F(f5) F(f6) F(f7)
        }
        if (OP == 5) {
#define W(x) IMADW(x)
            W(w0) W(w1) W(w2) W(w3) W(w4) W(w5) W(w6) W(w7)
        }
        if (OP == 6) { CHAINS(SHL) }
        if (OP == 7) {  // IMAD and FFMA interleaved
            IMAD(a0) FFMA(f0) IMAD(a1) FFMA(f1) IMAD(a2) FFMA(f2) IMAD(a3) FFMA(f3)
        }
        if (OP == 8) {  // IMAD and IMNMX interleaved
            IMAD(a0) IMIN(a1) IMAD(a2) IMIN(a3) IMAD(a4) IMIN(a5) IMAD(a6) IMIN(a7)
        }
        if (OP == 9) {  // FFMA and IMNMX interleaved
            FFMA(f0) IMIN(a1) FFMA(f2) IMIN(a3) FFMA(f4) IMIN(a5) FFMA(f6) IMIN(a7)
        }
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
    int s = a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7 ^ (int)(f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7) ^
            (int)(w0 ^ w1 ^ w2 ^ w3 ^ w4 ^ w5 ^ w6 ^ w7);
    if (s == 0x7fffffff) sink[threadIdx.x] = s;
}

template <int OP>
static void run(const char* name, long long* o, int* sink, int nsm) {
    for (int bps : {1}) {  // one block of 1024 threads per SM (8 warps per SMSP)
        const int iters = 512, blocks = nsm * bps;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            pipe<OP><<<blocks, 1024>>>(iters, 3, 5, 1.0001f, 0.5f, o, sink);
            CK(cudaDeviceSynchronize());
            std::vector<long long> c(blocks);
            CK(cudaMemcpy(c.data(), o, blocks * 8, cudaMemcpyDeviceToHost));
            std::sort(c.begin(), c.end());
            best = std::min(best, (double)c[blocks / 2]);
        }
        // Each block's 32 warps spread over 4 SMSPs (8 each); with 2 blocks per SM both run at once.
        double warps_per_smsp = 8.0 * bps;
        printf("T op=%s blocks_per_sm=%d cycles_per_warp_inst_per_smsp=%.3f\n", name, bps,
               best / (iters * 8.0 * warps_per_smsp));
    }
}

int main() {
    long long* o;
    int* sink;
    int nsm;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&o, 1 << 20));
    CK(cudaMalloc(&sink, 1 << 20));
    run<0>("imad", o, sink, nsm);
    run<1>("iadd", o, sink, nsm);
    run<2>("imin", o, sink, nsm);
    run<3>("xor", o, sink, nsm);
    run<4>("ffma", o, sink, nsm);
    run<5>("imad_wide", o, sink, nsm);
    run<6>("shl", o, sink, nsm);
    run<7>("imad+ffma", o, sink, nsm);
    run<8>("imad+imin", o, sink, nsm);
    run<9>("ffma+imin", o, sink, nsm);
    return 0;
}
