// smem_square: shared memory bank conflicts on a square 32x32 int tile ("Professional CUDA C
// Programming", ch. 5, "Square Shared Memory").
//
// One block of 32x32 threads (BDIMX = BDIMY = 32). Every thread writes its linear index
//
//     idx = threadIdx.y * blockDim.x + threadIdx.x
//
// into a shared tile, waits at __syncthreads(), reads one element of the tile back and writes it to
// global memory, out[idx]. The variants differ only in how the tile is indexed:
//
//   setRowReadRow        write tile[ty][tx], read tile[ty][tx]: a warp (fixed ty) touches one
//                        row, 32 words in 32 banks: no conflict
//   setColReadCol        write tile[tx][ty], read tile[tx][ty]: a warp touches one column, 32
//                        words in one bank: a 32-way conflict on the store and on the load
//   setRowReadCol        write tile[ty][tx] (no conflict), read tile[tx][ty] (32-way)
//   setRowReadColPad     as setRowReadCol on int tile[32][32 + IPAD]: conflict-free
//   setRowReadColDyn     as setRowReadCol on dynamic shared memory (extern __shared__, 32*32 ints
//                        = 4096 bytes)
//   setRowReadColDynPad  as setRowReadColPad on dynamic shared memory (32*33 ints = 4224 bytes)
//
// What it demonstrates: with 4-byte banks (bank = word address % 32) a column of a 32x32 int tile
// lies in a single bank, so a column access is a 32-way conflict (32 wavefronts instead of 1); one
// word of padding per row moves each row to the next bank and removes the conflict. With Kepler's
// 8-byte banks (bank = (byte address / 8) % 32) two adjacent words share a bank and a column covers
// 2 banks: 16-way. There one word of padding leaves a 2-way conflict on the column loads of odd
// rows (threadIdx.y odd: lanes 0 and 31 read different 8-byte words of bank (threadIdx.y - 1) / 2),
// 1.5 wavefronts per column load on average instead of 16.
//
// The shared accesses cannot be optimised away: every value is stored to shared memory, read back
// after the barrier (possibly by another thread) and written to global memory.
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
#define BDIMY 32
#define IPAD 1

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
    tile[threadIdx.y][threadIdx.x] = idx;
    __syncthreads();
    out[idx] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void setRowReadColPad(int* out) {
    __shared__ int tile[BDIMY][BDIMX + IPAD];
    unsigned int idx = threadIdx.y * blockDim.x + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = idx;
    __syncthreads();
    out[idx] = tile[threadIdx.x][threadIdx.y];
}

// Launch with blockDim.x * blockDim.y * sizeof(int) bytes of dynamic shared memory (4096).
extern "C" __global__ void setRowReadColDyn(int* out) {
    extern __shared__ int tile[];
    unsigned int row_idx = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned int col_idx = threadIdx.x * blockDim.y + threadIdx.y;
    tile[row_idx] = row_idx;
    __syncthreads();
    out[row_idx] = tile[col_idx];
}

// Launch with (blockDim.x + IPAD) * blockDim.y * sizeof(int) bytes of dynamic shared memory (4224).
extern "C" __global__ void setRowReadColDynPad(int* out) {
    extern __shared__ int tile[];
    unsigned int row_idx = threadIdx.y * (blockDim.x + IPAD) + threadIdx.x;
    unsigned int col_idx = threadIdx.x * (blockDim.x + IPAD) + threadIdx.y;
    unsigned int g_idx = threadIdx.y * blockDim.x + threadIdx.x;
    tile[row_idx] = g_idx;
    __syncthreads();
    out[g_idx] = tile[col_idx];
}
