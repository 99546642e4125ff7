// smem_rectangle: shared memory bank conflicts on a rectangular int tile ("Professional CUDA C
// Programming", ch. 5, "Rectangular Shared Memory").
//
// One block of 32x16 threads (BDIMX = 32, BDIMY = 16). Every thread writes its linear index
//
//     idx = threadIdx.y * blockDim.x + threadIdx.x
//
// into a shared tile, waits at __syncthreads(), reads one element back and writes it to out[idx].
//
//   setRowReadRow        int tile[16][32]: write and read tile[ty][tx]: one row per warp, no
//                        conflict
//   setColReadCol        int tile[32][16]: write and read tile[tx][ty]: a warp's 32 words are 16
//                        words apart, in 2 banks: a 16-way conflict (with 4-byte banks)
//   setRowReadCol        int tile[16][32]: write tile[ty][tx]; read the transposed element
//                        tile[icol][irow], irow = idx / blockDim.y, icol = idx % blockDim.y: the
//                        load walks down 2 columns (words 32 apart, one bank each), 16 lanes per
//                        column: a 16-way conflict
//   setRowReadColPad     as setRowReadCol on int tile[16][32 + NPAD]: conflict-free
//   setRowReadColDyn     as setRowReadCol on dynamic shared memory (32*16 ints = 2048 bytes)
//   setRowReadColDynPad  as setRowReadColPad on dynamic shared memory ((32+2)*16 ints = 2176 bytes)
//
// With Kepler's 8-byte banks, 32 int columns occupy 16 bank slots of 8 bytes; the book pads by
// NPAD = 2 words (one 8-byte bank) so that the padding works in both bank modes.
//
// The shared accesses cannot be optimised away: every value is stored to shared memory, read back
// after the barrier (by another thread) and written to global memory.
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

#define BDIMX 32
#define BDIMY 16
#define NPAD 2

extern "C" __global__ void setRowReadRow(int* out) {
    __shared__ int tile[BDIMY][BDIMX];
    unsigned int idx = threadIdx.y * blockDim.x + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = idx;
    __syncthreads();
    out[idx] = tile[threadIdx.y][threadIdx.x];
}

extern "C" __global__ void setColReadCol(int* out) {
    __shared__ int tile[BDIMX][BDIMY];
    unsigned int idx = threadIdx.y * blockDim.x + threadIdx.x;
    tile[threadIdx.x][threadIdx.y] = idx;
    __syncthreads();
    out[idx] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void setRowReadCol(int* out) {
    __shared__ int tile[BDIMY][BDIMX];
    unsigned int idx = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned int irow = idx / blockDim.y;
    unsigned int icol = idx % blockDim.y;
    tile[threadIdx.y][threadIdx.x] = idx;
    __syncthreads();
    out[idx] = tile[icol][irow];
}

extern "C" __global__ void setRowReadColPad(int* out) {
    __shared__ int tile[BDIMY][BDIMX + NPAD];
    unsigned int idx = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned int irow = idx / blockDim.y;
    unsigned int icol = idx % blockDim.y;
    tile[threadIdx.y][threadIdx.x] = idx;
    __syncthreads();
    out[idx] = tile[icol][irow];
}

// Launch with blockDim.x * blockDim.y * sizeof(int) bytes of dynamic shared memory (2048).
extern "C" __global__ void setRowReadColDyn(int* out) {
    extern __shared__ int tile[];
    unsigned int idx = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned int irow = idx / blockDim.y;
    unsigned int icol = idx % blockDim.y;
    unsigned int col_idx = icol * blockDim.x + irow;
    tile[idx] = idx;
    __syncthreads();
    out[idx] = tile[col_idx];
}

// Launch with (blockDim.x + NPAD) * blockDim.y * sizeof(int) bytes of dynamic shared memory (2176).
extern "C" __global__ void setRowReadColDynPad(int* out) {
    extern __shared__ int tile[];
    unsigned int g_idx = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned int irow = g_idx / blockDim.y;
    unsigned int icol = g_idx % blockDim.y;
    unsigned int row_idx = threadIdx.y * (blockDim.x + NPAD) + threadIdx.x;
    unsigned int col_idx = icol * (blockDim.x + NPAD) + irow;
    tile[row_idx] = g_idx;
    __syncthreads();
    out[g_idx] = tile[col_idx];
}
