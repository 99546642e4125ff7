// smem_stride: shared memory bank conflicts of a strided warp access, for 4-byte and 8-byte words.
//
// One block of one warp (32 threads). The threads first fill a shared array cooperatively,
// s[i] = i for i = 0 .. 32*33-1 (each thread every 32nd element: 33 conflict-free row stores),
// wait at __syncthreads(), then each lane reads the word `lane * stride` and writes it to global
// memory:
//
//     out[lane] = s[(lane * stride) % (32 * 33)]
//
//   smem_stride_4byte   int s[32 * 33]        (4224 bytes)
//   smem_stride_8byte   long long s[32 * 33]  (8448 bytes)
//
// What it demonstrates: with 32 banks of 4 bytes, lane k's word lies in bank (k * stride) % 32;
// the load needs as many wavefronts as the most lanes that hit one bank with distinct words:
// gcd(stride, 32) for 4-byte words (stride 1, 31, 33: none; 2: 2-way; 4: 4-way; ...; 32: 32-way).
// An 8-byte word covers two 4-byte banks, so 32 lanes need at least 2 wavefronts (256 bytes) even at
// stride 1, and strides of 8-byte words conflict like twice the stride of 4-byte words. With
// Kepler's 8-byte bank mode (`bank_mode = 8`) an 8-byte word is one bank: stride 1 is one wavefront.
//
// The modulo keeps every index inside the array for any stride; for the strides of the bundled
// workloads (at most 33) it never wraps (31 * 33 < 32 * 33).
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

#define WORDS (32 * 33)

// Launch with one block of 32 threads.
extern "C" __global__ void smem_stride_4byte(int* out, int stride) {
    __shared__ int s[WORDS];
    unsigned int tid = threadIdx.x;
    for (unsigned int k = 0; k < WORDS / 32; ++k) {  // s[i] = i for i = tid, tid + 32, ...
        s[k * 32 + tid] = k * 32 + tid;
    }
    __syncthreads();
    out[tid] = s[(tid * (unsigned int)stride) % WORDS];
}

// Launch with one block of 32 threads.
extern "C" __global__ void smem_stride_8byte(long long* out, int stride) {
    __shared__ long long s[WORDS];
    unsigned int tid = threadIdx.x;
    for (unsigned int k = 0; k < WORDS / 32; ++k) {  // s[i] = i for i = tid, tid + 32, ...
        s[k * 32 + tid] = k * 32 + tid;
    }
    __syncthreads();
    out[tid] = s[(tid * (unsigned int)stride) % WORDS];
}
