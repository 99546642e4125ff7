// U: shared-memory atomics under same-word contention (issue 38: suite38's cas_sh_c32, a CAS loop
// with all 32 lanes on one word, takes 170 us where one wavefront per lane per word predicts 70;
// ATOMS.ADD at 32 lanes per word, sh_add_c32, is right at one per lane). nvcc -O3 -arch=sm_90.
// 132 x 2 blocks of 256 threads (16 warps per SM); each warp issues `iters` rounds of 8
// independent shared atomics (returned values kept) with 2^logc lanes on each word (words in
// consecutive banks): cycles per warp-atomic per SM = clock64 span of the block pair / (warps per
// SM x iters x 8). ops: add (ATOMS.ADD), exch (ATOMS.EXCH), cas_fail (ATOMS.CAS whose compare
// never matches), cas_hit (compare with the word's current value as the lane last saw it), and
// the CAS loop of cas_sh (16 increments per lane: microseconds by CUDA events).
// Output: `U op=.. lanes_per_word=.. cycles_per_warp_atomic_per_sm=..`, `U op=cas_loop ..`.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

template <int OP>
__global__ void atoms(int iters, unsigned logc, long long* cycles, unsigned* sink) {
    __shared__ unsigned s[8 * 1024];
    for (int k = threadIdx.x; k < 8 * 1024; k += blockDim.x) s[k] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned* p = &s[warp * 32 + (lane >> logc)];
    unsigned acc = 0, seen[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 8; k++) {
            unsigned* q = p + k * 1024;
            unsigned r;
            if (OP == 0) r = atomicAdd(q, lane ^ i);
            if (OP == 1) r = atomicExch(q, lane ^ i);
            if (OP == 2) r = atomicCAS(q, 0xffffffffu, lane);
            if (OP == 3) { r = atomicCAS(q, seen[k], seen[k] + 1u); seen[k] = (r == seen[k]) ? r + 1u : r; }
            acc ^= r;
        }
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
    if (acc == 0x12345678u) sink[threadIdx.x] = acc;
}

__global__ void cas_loop(unsigned* out, int iters, unsigned logc) {
    __shared__ unsigned s[1024];
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) s[k] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned* p = &s[warp * 32 + (lane >> logc)];
    for (int j = 0; j < iters; ++j) {
        unsigned old = *p, assumed;
        do {
            assumed = old;
            old = atomicCAS(p, assumed, assumed + 1u);
        } while (assumed != old);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) out[blockIdx.x * 1024 + k] = s[k];
}

template <int OP>
static void run(const char* name, long long* o, unsigned* sink, int nsm) {
    for (unsigned logc : {0u, 1u, 2u, 3u, 4u, 5u}) {
        const int iters = 64, blocks = nsm * 2;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            atoms<OP><<<blocks, 256>>>(iters, logc, o, sink);
            CK(cudaDeviceSynchronize());
            std::vector<long long> c(blocks);
            CK(cudaMemcpy(c.data(), o, blocks * 8, cudaMemcpyDeviceToHost));
            std::sort(c.begin(), c.end());
            best = std::min(best, (double)c[blocks / 2]);
        }
        printf("U op=%s lanes_per_word=%u cycles_per_warp_atomic_per_sm=%.3f\n", name, 1u << logc,
               best / (16.0 * iters * 8));
    }
}

int main() {
    long long* o;
    unsigned* sink;
    int nsm;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&o, 1 << 20));
    CK(cudaMalloc(&sink, 64 << 20));
    run<0>("add", o, sink, nsm);
    run<1>("exch", o, sink, nsm);
    run<2>("cas_fail", o, sink, nsm);
    run<3>("cas_hit", o, sink, nsm);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (unsigned logc : {0u, 1u, 2u, 3u, 4u, 5u}) {
        float best = 1e30f;
        for (int rep = 0; rep < 5; rep++) {
            CK(cudaEventRecord(a));
            cas_loop<<<264, 256>>>(sink, 16, logc);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            best = std::min(best, ms);
        }
        printf("U op=cas_loop lanes_per_word=%u blocks=264 iters=16 us=%.2f\n", 1u << logc, best * 1e3);
    }
    return 0;
}
