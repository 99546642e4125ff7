// add_constant: constant memory vs global memory, under four access patterns.
//
// Every thread computes one element:
//
//     sums[i] = inputs[i] + values[index],   i = blockIdx.x * blockDim.x + threadIdx.x
//
// where `values` holds N = 16384 ints (all 64 KB of constant memory) and `index` depends on the
// access pattern (kernels/README.md and the workload files one_access_per_block.toml, ...):
//
//     one_access_per_block    blockIdx.x % N               one address per block (and per warp)
//     one_access_per_warp     (threadIdx.x / 32) % N       one address per warp, a new one per warp
//     one_access_per_thread   threadIdx.x % N              32 consecutive addresses per warp
//     pseudo_random           (threadIdx.x * 1357) % N     32 scattered addresses per warp
//
// Each pattern comes in two kernels that differ only in where `values` lives:
//
//   add_constant_constant_memory_<pattern>   reads the __constant__ array `const_values`
//   add_constant_global_memory_<pattern>     reads a global buffer passed as `values`
//
// What it demonstrates: a constant-memory read is served one distinct address at a time. When all
// 32 lanes of a warp read the same word it is broadcast in a single request, as cheap as (or
// cheaper than) a global load; when the lanes read k distinct words the read is serialized into k
// requests. A global load instead coalesces the lanes' addresses into 32-byte sectors: 32
// consecutive ints are 4 sectors, 32 scattered ints at most 32 sectors fetched in parallel. So
// constant memory wins or ties for one_access_per_block and one_access_per_warp, loses for
// one_access_per_thread, and loses by several times for pseudo_random.
//
// Device code only: no host code and no CUDA headers, so that NVRTC and
// `clang -x cuda --cuda-device-only -nocudainc -nocudalib` both compile it. The PTX that the
// simulator runs and the validator loads is generated from this file (kernels/README.md).
// No `__restrict__`: the global kernels must use plain `ld.global`, not the read-only `ld.global.nc`.

#if defined(__clang__) && !defined(__CUDACC_RTC__) && !defined(__global__)
// clang with -nocudainc has none of the CUDA headers' declarations: spell out the four qualifiers
// and take threadIdx, blockIdx, blockDim from clang's own built-in header (clang's resource
// directory, not the CUDA toolkit). NVRTC and nvcc predefine all of these.
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#include <__clang_cuda_builtin_vars.h>
#endif

#define N 16384

__constant__ int const_values[N];

// The index of `values` each thread reads, one function per access pattern.
__device__ __forceinline__ unsigned int index_one_access_per_block() { return blockIdx.x % N; }
__device__ __forceinline__ unsigned int index_one_access_per_warp() { return (threadIdx.x / 32) % N; }
__device__ __forceinline__ unsigned int index_one_access_per_thread() { return threadIdx.x % N; }
__device__ __forceinline__ unsigned int index_pseudo_random() { return (threadIdx.x * 1357) % N; }

// Defines the constant-memory and the global-memory kernel of one access pattern.
#define ADD_CONSTANT_KERNELS(pattern)                                                                  \
    extern "C" __global__ void add_constant_constant_memory_##pattern(int* sums, const int* inputs,  \
                                                                        int num_sums) {              \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                                 \
        if (i < num_sums) {                                                                            \
            sums[i] = inputs[i] + const_values[index_##pattern()];                                     \
        }                                                                                              \
    }                                                                                                  \
                                                                                                       \
    extern "C" __global__ void add_constant_global_memory_##pattern(                                   \
        int* sums, const int* inputs, const int* values, int num_sums) {                               \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                                 \
        if (i < num_sums) {                                                                            \
            sums[i] = inputs[i] + values[index_##pattern()];                                           \
        }                                                                                              \
    }

ADD_CONSTANT_KERNELS(one_access_per_block)
ADD_CONSTANT_KERNELS(one_access_per_warp)
ADD_CONSTANT_KERNELS(one_access_per_thread)
ADD_CONSTANT_KERNELS(pseudo_random)
