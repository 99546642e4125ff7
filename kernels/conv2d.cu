// conv2d: 2-D convolution with the filter in constant memory vs in global memory ("Programming
// Massively Parallel Processors", 4th ed., ch. 7: convolution_2D_basic_kernel and
// convolution_2D_const_mem_kernel), filter radius 2 (a 5x5 float filter), one output per thread.
//
// A width x height float image, row-major; thread (col, row) = (blockIdx.x * blockDim.x +
// threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y) computes
//
//     out[row][col] = sum over fRow, fCol in 0..5 of F[fRow][fCol] * in[row - 2 + fRow][col - 2 + fCol]
//
// skipping the input cells outside the image (ghost cells count as 0), in the book's order, and
// does nothing when (col, row) lies outside the image. The workload uses 16x16 blocks.
//
//   conv2d_constant(const float* in, float* out, int width, int height)
//                    the filter in `__constant__ float F[5][5]`
//   conv2d_global(const float* in, const float* filter, float* out, int width, int height)
//                    the filter in a global buffer of 25 floats, row-major
//
// What it demonstrates: the filter index does not depend on the thread, so every filter read is
// one address for the whole warp: a constant-cache broadcast, where the global kernel issues a
// global load per filter element and thread (one sector per warp, hitting in L1 or L2). The book:
// with the filter out of the DRAM traffic, the arithmetic intensity rises from 0.25 to 0.5 OP/B.
//
// No `__restrict__`: the global kernel's loads stay plain `ld.global`, not `ld.global.nc`.
//
// Device code only: no host code and no CUDA headers, so that NVRTC and
// `clang -x cuda --cuda-device-only -nocudainc -nocudalib` both compile it (kernels/README.md).

#if defined(__clang__) && !defined(__CUDACC_RTC__) && !defined(__global__)
// clang with -nocudainc has none of the CUDA headers' declarations: spell out the qualifiers and
// take threadIdx, blockIdx, blockDim from clang's own built-in header. NVRTC and nvcc predefine
// all of these.
#define __global__ __attribute__((global))
#define __constant__ __attribute__((constant))
#include <__clang_cuda_builtin_vars.h>
#endif

#define FILTER_RADIUS 2
#define FILTER_DIM (2 * FILTER_RADIUS + 1)

__constant__ float F[FILTER_DIM][FILTER_DIM];

extern "C" __global__ void conv2d_constant(const float* in, float* out, int width, int height) {
    int outCol = blockIdx.x * blockDim.x + threadIdx.x;
    int outRow = blockIdx.y * blockDim.y + threadIdx.y;
    if (outCol >= width || outRow >= height) {
        return;
    }
    float Pvalue = 0.0f;
    for (int fRow = 0; fRow < FILTER_DIM; fRow++) {
        for (int fCol = 0; fCol < FILTER_DIM; fCol++) {
            int inRow = outRow - FILTER_RADIUS + fRow;
            int inCol = outCol - FILTER_RADIUS + fCol;
            if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {
                Pvalue += F[fRow][fCol] * in[inRow * width + inCol];
            }
        }
    }
    out[outRow * width + outCol] = Pvalue;
}

extern "C" __global__ void conv2d_global(const float* in, const float* filter, float* out,
                                         int width, int height) {
    int outCol = blockIdx.x * blockDim.x + threadIdx.x;
    int outRow = blockIdx.y * blockDim.y + threadIdx.y;
    if (outCol >= width || outRow >= height) {
        return;
    }
    float Pvalue = 0.0f;
    for (int fRow = 0; fRow < FILTER_DIM; fRow++) {
        for (int fCol = 0; fCol < FILTER_DIM; fCol++) {
            int inRow = outRow - FILTER_RADIUS + fRow;
            int inCol = outCol - FILTER_RADIUS + fCol;
            if (inRow >= 0 && inRow < height && inCol >= 0 && inCol < width) {
                Pvalue += filter[fRow * FILTER_DIM + fCol] * in[inRow * width + inCol];
            }
        }
    }
    out[outRow * width + outCol] = Pvalue;
}
