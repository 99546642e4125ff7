// transpose: matrix copy by rows and by columns, and the naive transpose, with no shared memory
// ("Professional CUDA C Programming", ch. 4, transpose.cu: copyRow, copyCol, transposeNaiveRow,
// transposeNaiveCol; the book's default block is 16x16, and so is the workload's).
//
// An nx x ny float matrix, row-major (nx columns, ny rows), one element per thread:
// ix = blockIdx.x * blockDim.x + threadIdx.x, iy = blockIdx.y * blockDim.y + threadIdx.y,
// bounds-checked against nx and ny.
//
//   copy_row              out[iy * nx + ix] = in[iy * nx + ix]   reads and writes rows: the upper
//                                                                bound (coalesced, 16 consecutive
//                                                                floats per half-warp)
//   copy_col              out[ix * ny + iy] = in[ix * ny + iy]   reads and writes columns: the lower
//                                                                bound (a sector per pair of lanes)
//   transpose_naive_row   out[ix * ny + iy] = in[iy * nx + ix]   reads rows, writes columns
//   transpose_naive_col   out[iy * nx + ix] = in[ix * ny + iy]   reads columns, writes rows
//
// What it demonstrates (CUDA Best Practices Guide, compute capability 6.0 and later): a warp's
// accesses coalesce into as many 32-byte sectors as it takes to cover them. A warp of a 16x16
// block is two rows of 16 threads: its row access is 2 x 64 bytes, 4 sectors; its column access is
// 16 rows of 2 adjacent floats, 16 sectors of which 8 bytes each are used. The naive transposes do
// one of each; the book finds the column-read version faster when loads go through L1
// (neighbouring warps reuse the cached lines), since strided stores are not cached.
//
// No `__restrict__`: the loads stay plain `ld.global`, not the read-only `ld.global.nc`.
//
// Device code only: no host code and no CUDA headers, so that NVRTC and
// `clang -x cuda --cuda-device-only -nocudainc -nocudalib` both compile it (kernels/README.md).

#if defined(__clang__) && !defined(__CUDACC_RTC__) && !defined(__global__)
// clang with -nocudainc has none of the CUDA headers' declarations: spell out the qualifier and
// take threadIdx, blockIdx, blockDim from clang's own built-in header. NVRTC and nvcc predefine
// all of these.
#define __global__ __attribute__((global))
#include <__clang_cuda_builtin_vars.h>
#endif

extern "C" __global__ void copy_row(float* out, const float* in, int nx, int ny) {
    unsigned int ix = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int iy = blockDim.y * blockIdx.y + threadIdx.y;
    if (ix < nx && iy < ny) {
        out[iy * nx + ix] = in[iy * nx + ix];
    }
}

extern "C" __global__ void copy_col(float* out, const float* in, int nx, int ny) {
    unsigned int ix = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int iy = blockDim.y * blockIdx.y + threadIdx.y;
    if (ix < nx && iy < ny) {
        out[ix * ny + iy] = in[ix * ny + iy];
    }
}

extern "C" __global__ void transpose_naive_row(float* out, const float* in, int nx, int ny) {
    unsigned int ix = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int iy = blockDim.y * blockIdx.y + threadIdx.y;
    if (ix < nx && iy < ny) {
        out[ix * ny + iy] = in[iy * nx + ix];
    }
}

extern "C" __global__ void transpose_naive_col(float* out, const float* in, int nx, int ny) {
    unsigned int ix = blockDim.x * blockIdx.x + threadIdx.x;
    unsigned int iy = blockDim.y * blockIdx.y + threadIdx.y;
    if (ix < nx && iy < ny) {
        out[iy * nx + ix] = in[ix * ny + iy];
    }
}
