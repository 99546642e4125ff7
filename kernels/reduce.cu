// reduce: block sum of ints, shared memory vs warp shuffles ("Professional CUDA C Programming",
// ch. 5, reduceSmem, and the warp-shuffle reduction reduceShfl), with 128 threads per block.
//
// Each block sums the 128 ints g_idata[blockIdx.x * 128 ..] and writes g_odata[blockIdx.x].
// Elements past n count as 0.
//
//   reduce_smem   loads its elements into __shared__ int smem[128], halves the active threads with
//                 __syncthreads() between steps down to 64 sums (tid < 64), then the last warp
//                 finishes without barriers through a `volatile int*` (the book's unrolled
//                 warp-synchronous tail: 6 steps of load, load, add, store). Per block: 29 shared
//                 memory warp instructions (4 + 2*3 + 6*3 + 1), all conflict-free, and 2 barriers
//   reduce_shfl   each warp sums its 32 values with 5 butterfly shuffles (__shfl_xor_sync,
//                 `shfl.sync.bfly.b32`), lane 0 of each warp stores its sum to __shared__ int smem[4],
//                 and after __syncthreads() the first warp sums the 4 partial sums by shuffles again.
//                 Per block: 25 shuffle warp instructions, 5 shared memory warp instructions (4 stores
//                 of one lane each, 1 load) and 1 barrier
//
// What it demonstrates: a shuffle exchanges registers within a warp without shared memory, so the
// shuffle version issues a small fraction of reduce_smem's shared memory requests and barriers.
//
// The book's tail relies on implicit warp-synchronous execution (no __syncwarp()), which holds when
// the warp runs converged, as it does here; it is kept as written in the book.
//
// Device code only: no host code and no CUDA headers, so that NVRTC and
// `clang -x cuda --cuda-device-only -nocudainc -nocudalib` both compile it (kernels/README.md).

#if defined(__clang__) && !defined(__CUDACC_RTC__) && !defined(__global__)
// clang with -nocudainc has none of the CUDA headers' declarations: spell out the qualifiers and
// take threadIdx, blockIdx, blockDim from clang's own built-in header. __syncthreads() is a clang
// builtin. NVRTC and nvcc predefine all of these.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#include <__clang_cuda_builtin_vars.h>
#define GPUMEMSIM_NO_CUDA_HEADERS 1
// Without a CUDA installation clang enables no PTX ISA version in the front end, and refuses the
// shuffle builtin (it needs PTX ISA 6.0 or later). Enable PTX ISA 7.0, the version clang emits for
// sm_80 anyway, on every function that uses or inlines the builtin.
#define SHFL_TARGET __attribute__((target("ptx70")))
#else
#define SHFL_TARGET
#endif

#define DIM 128              // threads per block
#define WARP 32              // warp size (a literal, not `warpSize`, so the PTX holds a constant)
#define SMEMDIM (DIM / WARP) // warps per block

// __shfl_xor_sync(0xffffffff, v, lane_mask) over the full warp: `shfl.sync.bfly.b32` in the PTX of
// both compilers. NVRTC (and nvcc, and clang with the CUDA headers) declare __shfl_xor_sync; clang
// without them has only the NVVM builtin, whose last operand packs the segment mask and the lane
// clamp as the CUDA headers do for width 32: ((32 - width) << 8) | 0x1f = 0x1f.
__device__ __forceinline__ SHFL_TARGET int shfl_xor(int v, int lane_mask) {
#ifdef GPUMEMSIM_NO_CUDA_HEADERS
    return __nvvm_shfl_sync_bfly_i32(0xffffffffu, v, lane_mask, 0x1f);
#else
    return __shfl_xor_sync(0xffffffffu, v, lane_mask);
#endif
}

extern "C" __global__ void reduce_smem(const int* g_idata, int* g_odata, unsigned int n) {
    __shared__ int smem[DIM];
    unsigned int tid = threadIdx.x;
    unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
    smem[tid] = idx < n ? g_idata[idx] : 0;
    __syncthreads();

    // In-place tree reduction in shared memory, with a barrier after each step (128 -> 64 sums).
    if (tid < 64) smem[tid] += smem[tid + 64];
    __syncthreads();

    // The last warp: 64 -> 1 without barriers; volatile keeps every step in shared memory.
    if (tid < 32) {
        volatile int* vsmem = smem;
        vsmem[tid] += vsmem[tid + 32];
        vsmem[tid] += vsmem[tid + 16];
        vsmem[tid] += vsmem[tid + 8];
        vsmem[tid] += vsmem[tid + 4];
        vsmem[tid] += vsmem[tid + 2];
        vsmem[tid] += vsmem[tid + 1];
    }

    if (tid == 0) g_odata[blockIdx.x] = smem[0];
}

// The sum of v over the 32 lanes of the warp, in every lane.
__device__ __forceinline__ SHFL_TARGET int warp_reduce(int v) {
    v += shfl_xor(v, 16);
    v += shfl_xor(v, 8);
    v += shfl_xor(v, 4);
    v += shfl_xor(v, 2);
    v += shfl_xor(v, 1);
    return v;
}

extern "C" __global__ SHFL_TARGET void reduce_shfl(const int* g_idata, int* g_odata, unsigned int n) {
    __shared__ int smem[SMEMDIM];
    unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int my_sum = idx < n ? g_idata[idx] : 0;
    unsigned int lane = threadIdx.x % WARP;
    unsigned int warp = threadIdx.x / WARP;

    // Every warp sums its 32 values; lane 0 keeps the warp's sum in shared memory.
    my_sum = warp_reduce(my_sum);
    if (lane == 0) smem[warp] = my_sum;
    __syncthreads();

    // The first warp sums the warps' sums.
    my_sum = threadIdx.x < SMEMDIM ? smem[lane] : 0;
    if (warp == 0) my_sum = warp_reduce(my_sum);

    if (threadIdx.x == 0) g_odata[blockIdx.x] = my_sum;
}
