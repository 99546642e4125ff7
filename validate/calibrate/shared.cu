// shared: shared-memory throughput microbenchmarks of `validate calibrate`.
//
// `smem_stride`: every warp of one block issues warp-level 4-byte shared loads whose lane l reads
// word l * stride (stride 1 to 32): the bank conflicts make the number of wavefronts per access
// gcd(stride, 32) on 32 4-byte banks. The block's cycles per warp-level load, against the
// wavefronts, check the wavefront model (cycles per wavefront).
//
// `smem_bandwidth`: full blocks of conflict-free 16-byte loads (ld.shared.v4, 4 wavefronts per
// warp-level load): bytes per cycle per SM.
//
// Loads are inline PTX `ld.shared` (asm volatile, kept between the clock reads); their address also
// depends on `i * zero`, where `zero` is a kernel argument the host passes as 0, so that no compiler
// hoists the loop-invariant loads out of the loop.
//
// Device code only, compiled by NVRTC (`validate ptx`), no CUDA headers.

typedef unsigned long long u64;

__device__ __forceinline__ u64 clock_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

__device__ __forceinline__ unsigned smid() {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    return sm;
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

__device__ __forceinline__ unsigned ld_shared(unsigned address) {
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
    return v;
}

// Records the block's cycles, SM and start: out[4 * blockIdx.x + 0, 1, 2]; the checksum (which
// keeps the loads live) lands in out[4 * blockIdx.x + 3] only in the unlikely case it matches.
__device__ __forceinline__ void record(u64* out, u64 t0, u64 t1, unsigned acc) {
    if (threadIdx.x == 0) {
        out[4 * blockIdx.x] = t1 - t0;
        out[4 * blockIdx.x + 1] = smid();
        out[4 * blockIdx.x + 2] = t0;
    }
    if (acc == 0x9e3779b9u) {
        out[4 * blockIdx.x + 3] = acc;
    }
}

// Each iteration: 8 independent loads, 32 words (128 bytes, the same banks) apart.
extern "C" __global__ void smem_stride(unsigned stride, unsigned iters, unsigned zero, u64* out) {
    __shared__ unsigned s[2048];
    for (unsigned i = threadIdx.x; i < 2048; i += blockDim.x) {
        s[i] = i;
    }
    __syncthreads();
    unsigned off = ((threadIdx.x & 31) * stride % 1024) * 4;
    unsigned base = shared_address(s);
    unsigned acc = ld_shared(base + off);
    __syncthreads();
    u64 t0 = clock_now();
    for (unsigned i = 0; i < iters; i++) {
        unsigned a = base + ((off + i * zero) & 4095);
        unsigned v0 = ld_shared(a);
        unsigned v1 = ld_shared(a + 128);
        unsigned v2 = ld_shared(a + 256);
        unsigned v3 = ld_shared(a + 384);
        unsigned v4 = ld_shared(a + 512);
        unsigned v5 = ld_shared(a + 640);
        unsigned v6 = ld_shared(a + 768);
        unsigned v7 = ld_shared(a + 896);
        acc ^= v0 ^ v1 ^ v2 ^ v3 ^ v4 ^ v5 ^ v6 ^ v7;
    }
    __syncthreads();
    u64 t1 = clock_now();
    record(out, t0, t1, acc);
}

// Each iteration: 4 independent 16-byte loads per thread; a warp's lanes read 512 consecutive
// bytes (conflict-free), the 4 loads 512 bytes apart.
extern "C" __global__ void smem_bandwidth(unsigned iters, unsigned zero, u64* out) {
    __shared__ unsigned s[8192];
    for (unsigned i = threadIdx.x; i < 8192; i += blockDim.x) {
        s[i] = i;
    }
    __syncthreads();
    unsigned base = shared_address(s) + (threadIdx.x & 31) * 16 + (threadIdx.x >> 5 & 7) * 2048;
    unsigned acc = 0;
    __syncthreads();
    u64 t0 = clock_now();
    for (unsigned i = 0; i < iters; i++) {
        unsigned a = base + ((i * zero) & 8191);
        unsigned x0, y0, z0, w0, x1, y1, z1, w1, x2, y2, z2, w2, x3, y3, z3, w3;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(x0), "=r"(y0), "=r"(z0), "=r"(w0) : "r"(a) : "memory");
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4+512];"
                     : "=r"(x1), "=r"(y1), "=r"(z1), "=r"(w1) : "r"(a) : "memory");
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4+1024];"
                     : "=r"(x2), "=r"(y2), "=r"(z2), "=r"(w2) : "r"(a) : "memory");
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4+1536];"
                     : "=r"(x3), "=r"(y3), "=r"(z3), "=r"(w3) : "r"(a) : "memory");
        acc ^= x0 ^ y0 ^ z0 ^ w0 ^ x1 ^ y1 ^ z1 ^ w1 ^ x2 ^ y2 ^ z2 ^ w2 ^ x3 ^ y3 ^ z3 ^ w3;
    }
    __syncthreads();
    u64 t1 = clock_now();
    record(out, t0, t1, acc);
}
