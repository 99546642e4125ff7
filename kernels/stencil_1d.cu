// stencil_1d: a 1-D 9-point stencil (radius 4) through a shared-memory tile with halo, the 9
// coefficients in constant memory vs read through the read-only data path.
//
// A block of 256 threads computes out[i] for i = blockIdx.x * 256 + threadIdx.x:
//
//     __shared__ float tile[4 + 256 + 4];
//     tile[threadIdx.x + 4] = in[i]                              every thread: the block's elements
//     tile[threadIdx.x] = in[i - 4]          (first 4 threads)   the left halo
//     tile[threadIdx.x + 8] = in[i + 4]      (last 4 threads)    the right halo
//     __syncthreads()
//     out[i] = sum over k in 0..9 of c[k] * tile[threadIdx.x + k]   (c[k] weighs in[i - 4 + k])
//
// Elements outside 0..n count as 0; threads with i >= n load 0 and store nothing.
//
//   stencil_1d_constant(const float* in, float* out, int n)
//       the coefficients in `__constant__ float c[9]`
//   stencil_1d_readonly(const float* __restrict__ in, const float* __restrict__ coef,
//                       float* __restrict__ out, int n)
//       the coefficients in a global buffer read with __ldg (`ld.global.nc.f32`); with
//       `const __restrict__` the tile loads of `in` take the read-only path too
//
// What it demonstrates: every coefficient read is one address per warp. From constant memory it
// is a broadcast (the index is a compile-time constant after unrolling, an immediate constant
// operand on the GPU); through the read-only path it is a global load of one sector per warp and
// coefficient, served by the L1/texture cache after the first warp.
//
// Device code only: no host code and no CUDA headers, so that NVRTC and
// `clang -x cuda --cuda-device-only -nocudainc -nocudalib` both compile it (kernels/README.md).

#if defined(__clang__) && !defined(__CUDACC_RTC__) && !defined(__global__)
// clang with -nocudainc has none of the CUDA headers' declarations: spell out the qualifiers and
// take threadIdx, blockIdx, blockDim from clang's own built-in header. __syncthreads() is a clang
// builtin. NVRTC and nvcc predefine all of these, and __ldg.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#include <__clang_cuda_builtin_vars.h>
#define GPUMEMSIM_NO_CUDA_HEADERS 1
#endif

#define RADIUS 4
#define BLOCK 256 // threads per block: launch with exactly this many

// __ldg(p): a load through the read-only data cache, `ld.global.nc.f32` from both compilers.
// Without the CUDA headers clang has only the NVVM builtin that the headers' __ldg calls.
__device__ __forceinline__ float ldg(const float* p) {
#ifdef GPUMEMSIM_NO_CUDA_HEADERS
    return __nvvm_ldg_f(p);
#else
    return __ldg(p);
#endif
}

__constant__ float c[2 * RADIUS + 1];

extern "C" __global__ void stencil_1d_constant(const float* in, float* out, int n) {
    __shared__ float tile[BLOCK + 2 * RADIUS];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int t = threadIdx.x + RADIUS;
    tile[t] = i < n ? in[i] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int j = i - RADIUS;
        tile[t - RADIUS] = j >= 0 && j < n ? in[j] : 0.0f;
    }
    if (threadIdx.x >= BLOCK - RADIUS) {
        int j = i + RADIUS;
        tile[t + RADIUS] = j < n ? in[j] : 0.0f;
    }
    __syncthreads();
    if (i < n) {
        float sum = 0.0f;
        for (int k = 0; k <= 2 * RADIUS; k++) {
            sum += c[k] * tile[threadIdx.x + k];
        }
        out[i] = sum;
    }
}

extern "C" __global__ void stencil_1d_readonly(const float* __restrict__ in,
                                               const float* __restrict__ coef,
                                               float* __restrict__ out, int n) {
    __shared__ float tile[BLOCK + 2 * RADIUS];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int t = threadIdx.x + RADIUS;
    tile[t] = i < n ? in[i] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int j = i - RADIUS;
        tile[t - RADIUS] = j >= 0 && j < n ? in[j] : 0.0f;
    }
    if (threadIdx.x >= BLOCK - RADIUS) {
        int j = i + RADIUS;
        tile[t + RADIUS] = j < n ? in[j] : 0.0f;
    }
    __syncthreads();
    if (i < n) {
        float sum = 0.0f;
        for (int k = 0; k <= 2 * RADIUS; k++) {
            sum += ldg(&coef[k]) * tile[threadIdx.x + k];
        }
        out[i] = sum;
    }
}
