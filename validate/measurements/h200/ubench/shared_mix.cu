// Do other L1 traffic add shared-memory wavefronts? (issue 37), nvcc -O3 -arch=sm_90.
//
// suite37's launches that mix global loads with conflict-free shared accesses (scan, 2-D stencil,
// tiled GEMM and LU) measure 0.3% to 6% more shared wavefronts
// (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`) than their SASS's
// rule gives, more with bigger grids, while launches without concurrent global traffic are exact.
// L1 and shared memory are one data array; the hypothesis is that an LDS/STS that meets an L1
// fill (or other data-array use) on its banks is replayed and the hardware counter counts the
// replay, while the SASS-level counters (`smsp__sass_...`) count only the instruction's own.
// Each warp of `blocks` x 256 threads runs `iters` iterations of one conflict-free LDS.32
// (1 wavefront) and, by mode: bit 0 a global load (a new 128-byte line per warp and iteration:
// L1 misses whose fills land in the data array), bit 1 an STS.32 (1 wavefront), bit 2 the global
// load always from one line (L1 hits after the first).
// Output: `X id=.. mode=.. blocks=..`, one line per launch, matched with ncu's rows by id.
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

__global__ void mix(const float* g, float* out, int mode, int iters) {
    __shared__ float sh[2048];
    volatile float* vs = sh;
    int t = threadIdx.x;
    vs[t] = t;
    vs[t + 1024] = t;
    __syncthreads();
    float acc = 0.f;
    long long stride = (long long)gridDim.x * blockDim.x;
    const float* p = g + (long long)blockIdx.x * blockDim.x + t;
    for (int i = 0; i < iters; i++) {
        acc += vs[(t + i * 32) & 1023];
        if (mode & 1) acc += __ldca(p + (long long)i * stride);
        if (mode & 4) acc += __ldca(g + (t & 31));
        if (mode & 2) vs[1024 + ((t + i * 32) & 1023)] = acc;
    }
    out[(long long)blockIdx.x * blockDim.x + t] = acc;
}

int main() {
    const int iters = 64;
    const int grids[] = {132, 1056, 8448};
    float *g, *out;
    size_t gbytes = (size_t)8448 * 256 * iters * 4;
    CK(cudaMalloc(&g, gbytes));
    CK(cudaMemset(g, 0, gbytes));
    CK(cudaMalloc(&out, (size_t)8448 * 256 * 4));
    int id = 0;
    for (int mode : {0, 1, 2, 3, 4, 6})
        for (int blocks : grids) {
            mix<<<blocks, 256>>>(g, out, mode, iters);
            CK(cudaDeviceSynchronize());
            printf("X id=%d mode=%d blocks=%d\n", id++, mode, blocks);
        }
    return 0;
}
