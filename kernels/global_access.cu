// global_access: global memory access patterns (CUDA C++ Best Practices Guide, "Coalesced Access
// to Global Memory"; "Professional CUDA C Programming", ch. 4), one element per thread, 4-byte
// floats, launched with 512 threads per block.
//
//   read_offset    out[i] = in[i + offset]           misaligned reads: a warp's 128 bytes start
//                                                    `offset` floats past a 128-byte boundary
//   write_offset   out[i + offset] = in[i]           the same for the stores
//   read_stride    out[i] = in[i * stride]           a warp's 32 loads spread over 32 * stride floats
//   read_ldg       out[i] = __ldg(&in[i + offset])   read_offset through the read-only (texture)
//                                                    path: `ld.global.nc.f32`
//   copy_float     out[i] = in[i]                    4-byte loads and stores
//   copy_float4    out[i] = in[i], 16-byte elements  vector loads and stores: `ld.global.v4.f32`,
//                                                    `st.global.v4.f32`, a quarter of the requests
//   aos            out[i] = a[i].x + a[i].y          array of structures {float x, y}: two loads,
//                                                    each touching every other word of 256 bytes
//   soa            out[i] = x[i] + y[i]              structure of arrays: two fully used 128-byte loads
//
// Every kernel is bounds-checked against n (n4 for copy_float4): thread i does nothing when
// i >= n. The offset and stride kernels index `in` (or `out`) past n, so the workloads size those
// buffers n + 128 (offsets up to 128) and n * 32 (strides up to 32) elements.
//
// What it demonstrates (compute capability 6.0 and later): a warp's accesses coalesce into as many
// 32-byte sectors as it takes to cover them. An aligned warp of 32 floats is 4 sectors; any offset
// that is not a multiple of 8 floats makes it 5; stride s touches min(32, 4 * s) sectors for the
// same 128 useful bytes, so the efficiency falls to 1/s (from stride 8 on: one sector per lane).
//
// No `__restrict__`: except for read_ldg, the loads stay plain `ld.global`, not `ld.global.nc`.
//
// Device code only: no host code and no CUDA headers, so that NVRTC and
// `clang -x cuda --cuda-device-only -nocudainc -nocudalib` both compile it (kernels/README.md).

#if defined(__clang__) && !defined(__CUDACC_RTC__) && !defined(__global__)
// clang with -nocudainc has none of the CUDA headers' declarations: spell out the qualifiers and
// take threadIdx, blockIdx, blockDim from clang's own built-in header. NVRTC and nvcc predefine
// all of these, and __ldg.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __forceinline__ __inline__ __attribute__((always_inline))
#include <__clang_cuda_builtin_vars.h>
#define GPUMEMSIM_NO_CUDA_HEADERS 1
#endif

// __ldg(p): a load through the read-only data cache, `ld.global.nc.f32` from both compilers.
// Without the CUDA headers clang has only the NVVM builtin that the headers' __ldg calls.
__device__ __forceinline__ float ldg(const float* p) {
#ifdef GPUMEMSIM_NO_CUDA_HEADERS
    return __nvvm_ldg_f(p);
#else
    return __ldg(p);
#endif
}

// A 16-byte vector of four floats, aligned like CUDA's float4 (whose definition lives in the CUDA
// headers, which clang does not see here; a name of our own avoids clashing with NVRTC's).
struct __attribute__((aligned(16))) Float4 {
    float x, y, z, w;
};

// The array-of-structures element.
struct Pair {
    float x, y;
};

extern "C" __global__ void read_offset(float* out, const float* in, int n, int offset) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i + offset];
    }
}

extern "C" __global__ void write_offset(float* out, const float* in, int n, int offset) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i + offset] = in[i];
    }
}

extern "C" __global__ void read_stride(float* out, const float* in, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i * stride];
    }
}

extern "C" __global__ void read_ldg(float* out, const float* in, int n, int offset) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = ldg(&in[i + offset]);
    }
}

extern "C" __global__ void copy_float(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
    }
}

extern "C" __global__ void copy_float4(Float4* out, const Float4* in, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        // Field by field: a plain struct copy `out[i] = in[i]` compiles to integer vector moves
        // (`ld.global.v4.u32`, with NVRTC's own float4 too; clang even splits it in two u64 moves).
        float x = in[i].x, y = in[i].y, z = in[i].z, w = in[i].w;
        out[i].x = x;
        out[i].y = y;
        out[i].z = z;
        out[i].w = w;
    }
}

extern "C" __global__ void aos(float* out, const Pair* a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i].x + a[i].y;
    }
}

extern "C" __global__ void soa(float* out, const float* x, const float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = x[i] + y[i];
    }
}
