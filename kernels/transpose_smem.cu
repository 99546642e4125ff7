// transpose_smem: matrix transpose through a 32x32 shared-memory tile, without and with padding
// (NVIDIA's CUDA sample "transpose": transposeCoalesced and transposeNoBankConflicts).
//
// A block of 32x8 threads (TILE_DIM = 32, BLOCK_ROWS = 8) transposes one 32x32 tile of a
// width x height float matrix. It reads the tile row by row (coalesced: a warp reads 32
// consecutive floats of a row of idata), stores it row-wise to shared memory, waits at
// __syncthreads(), then reads the tile column-wise from shared memory and writes rows of odata
// (coalesced again). Each thread moves TILE_DIM / BLOCK_ROWS = 4 elements.
//
//   transpose_smem       float tile[32][32]: the column read tile[threadIdx.x][threadIdx.y + i] puts
//                        a warp's 32 words in one bank: a 32-way conflict on every shared load
//   transpose_smem_pad   float tile[32][33]: one word of padding per row spreads the column over
//                        all 32 banks: conflict-free
//
// width and height must be multiples of 32; launch with grid (width / 32, height / 32), block (32, 8).
// No `__restrict__`: the global loads stay plain `ld.global`, not the read-only `ld.global.nc`.
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
#include <__clang_cuda_builtin_vars.h>
#endif

#define TILE_DIM 32
#define BLOCK_ROWS 8

// Defines a transpose kernel whose shared tile has TILE_DIM + pad columns.
#define TRANSPOSE_KERNEL(name, pad)                                                                    \
    extern "C" __global__ void name(float* odata, const float* idata, int width, int height) {         \
        __shared__ float tile[TILE_DIM][TILE_DIM + (pad)];                                             \
        int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;                                              \
        int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;                                              \
        int index_in = xIndex + yIndex * width;                                                        \
        xIndex = blockIdx.y * TILE_DIM + threadIdx.x;                                                  \
        yIndex = blockIdx.x * TILE_DIM + threadIdx.y;                                                  \
        int index_out = xIndex + yIndex * height;                                                      \
        for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {                                               \
            tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];                          \
        }                                                                                              \
        __syncthreads();                                                                               \
        for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {                                               \
            odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];                        \
        }                                                                                              \
    }

TRANSPOSE_KERNEL(transpose_smem, 0)
TRANSPOSE_KERNEL(transpose_smem_pad, 1)
