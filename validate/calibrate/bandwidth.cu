// bandwidth: device-wide bandwidth kernels of `validate calibrate`, timed with CUDA events by the
// host; the clock kernel `spin`; and `empty`, for the launch overhead.
//
// `read_bytes`: every thread of a full grid reads 16-byte words in a grid-stride loop (4 in flight
// per thread) and folds them into a checksum: DRAM read bandwidth over a buffer much larger than L2.
// `copy_bytes`: each thread copies one 16-byte word to a second buffer (bytes read + written).
// `read_l2`: `reps` passes over a working set that fits in L2, with `ld.global.cg` (L2 only, so
// that the repeated reads are not served by L1).
//
// `spin`: one warp per block, thread 0 reads clock64 until `cycles` have passed: launched with two
// cycle counts, the difference of the event times gives the SM clock. It also keeps the GPU busy
// while the host queues `empty` launches behind it, so that their timing leaves out the host.
//
// Device code only, compiled by NVRTC (`validate ptx`), no CUDA headers.

typedef unsigned long long u64;

struct __align__(16) word4 {
    unsigned x, y, z, w;
};

__device__ __forceinline__ unsigned fold(word4 v) {
    return v.x ^ v.y ^ v.z ^ v.w;
}

__device__ __forceinline__ word4 ld_cg(const word4* p) {
    word4 v;
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p)
                 : "memory");
    return v;
}

extern "C" __global__ void read_bytes(const word4* in, u64 n, unsigned* out) {
    u64 s = (u64)gridDim.x * blockDim.x;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * s < n; i += 4 * s) {
        word4 a = in[i], b = in[i + s], c = in[i + 2 * s], d = in[i + 3 * s];
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
    for (; i < n; i += s) {
        acc ^= fold(in[i]);
    }
    if (acc == 0x9e3779b9u) {
        out[0] = acc;
    }
}

// One 16-byte word per thread, a grid of n / blockDim blocks: on an H200 this reaches what
// cudaMemcpy's device-to-device copy does (4.2 TB/s), where a grid-stride loop stays near 3.9.
extern "C" __global__ void copy_bytes(const word4* in, word4* out, u64 n) {
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
    }
}

extern "C" __global__ void read_l2(const word4* in, u64 n, unsigned reps, unsigned* out) {
    u64 s = (u64)gridDim.x * blockDim.x;
    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (unsigned r = 0; r < reps; r++) {
        u64 i = first;
        for (; i + 3 * s < n; i += 4 * s) {
            word4 a = ld_cg(in + i), b = ld_cg(in + i + s), c = ld_cg(in + i + 2 * s),
                  d = ld_cg(in + i + 3 * s);
            acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
        }
        for (; i < n; i += s) {
            acc ^= fold(ld_cg(in + i));
        }
    }
    if (acc == 0x9e3779b9u) {
        out[0] = acc;
    }
}

extern "C" __global__ void spin(u64 cycles, u64* out) {
    if (threadIdx.x != 0) {
        return;
    }
    u64 t0, t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0)::"memory");
    do {
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    } while (t - t0 < cycles);
    out[blockIdx.x] = t - t0;
}

extern "C" __global__ void empty() {}
