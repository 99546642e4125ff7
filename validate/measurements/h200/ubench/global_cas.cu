// Global atomics under same-word contention, by operation (issue 38: suite38's cas_* launches).
// W. Every lane of `blocks` blocks of 256 threads performs `iters` atomics on word
//    (global thread index >> shift) & mask of a zeroed array: shift 31 puts every lane on one word,
//    shift 5 gives each warp a word of its own (32 warps per 128-byte line), shift 0 each lane.
//    Operations: ADD with the result used (ATOMG.ADD), CAS that always fails (compare with a value
//    the word never holds: the unit reads and does not write), CAS that always succeeds for one
//    lane per round (compare with the value just read: a chain of dependent CAS as in
//    suite38's cas_global loop, one attempt per iteration), EXCH. Time per operation between two
//    CUDA events (median of 5), GPU-wide: ns per op, and cycles per op at the SM clock.
// Build and run: nvcc -arch=sm_90 -O3 global_cas.cu -o global_cas && ./global_cas
#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);            \
            return 1;                                                                          \
        }                                                                                      \
    } while (0)

__global__ void k_atom(unsigned* ctr, unsigned* out, int op, int iters, unsigned shift,
                       unsigned mask) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned* p = &ctr[(shift >= 32 ? 0u : (i >> shift)) & mask];
    unsigned acc = 0, v = 0;
    for (int j = 0; j < iters; ++j) {
        if (op == 0) acc += atomicAdd(p, 1u);
        else if (op == 1) acc += atomicCAS(p, 0xffffffffu, acc);  // never matches: fails
        else if (op == 2) { v = atomicCAS(p, v, v + 1u); acc += v; }  // matches when v is current
        else acc += atomicExch(p, acc + j);
    }
    out[i] = acc;
}

int main() {
    int dev = 0, nsm = 0, clk = 0;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, dev));
    unsigned *ctr, *out;
    const int maxblocks = 132 * 16;
    CK(cudaMalloc(&ctr, 1 << 24));
    CK(cudaMalloc(&out, maxblocks * 256 * 4));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const char* names[4] = {"add", "cas_fail", "cas_chain", "exch"};
    printf("# SMs %d, clock %d kHz (cycles below at this clock)\n", nsm, clk);
    printf("op,blocks,shift,iters,ops,us,ns_per_op,cycles_per_op\n");
    struct Case { int blocks; unsigned shift; int iters; };
    const Case cases[] = {{1, 31, 64}, {132, 31, 16}, {132, 5, 64}, {528, 5, 64}, {132, 0, 64},
                          {2112, 5, 16}};
    for (Case c : cases) {
        for (int op = 0; op < 4; ++op) {
            std::vector<float> t;
            for (int r = 0; r < 6; ++r) {
                CK(cudaMemset(ctr, 0, 1 << 24));
                CK(cudaEventRecord(e0));
                k_atom<<<c.blocks, 256>>>(ctr, out, op, c.iters, c.shift, (1u << 22) - 1);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaGetLastError());
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r > 0) t.push_back(ms * 1000);
            }
            std::sort(t.begin(), t.end());
            double us = t[t.size() / 2], ops = (double)c.blocks * 256 * c.iters;
            printf("%s,%d,%u,%d,%.0f,%.2f,%.4f,%.3f\n", names[op], c.blocks, c.shift, c.iters, ops,
                   us, us * 1000 / ops, us * clk / 1000.0 / ops);
        }
    }
    return 0;
}
