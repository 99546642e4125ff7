// constant: constant-cache microbenchmarks of `validate calibrate`.
//
// `chase_const`: one thread follows a chain through __constant__ memory (each element holds the
// byte offset of the next), so the loads cannot overlap; the host writes chains over working sets
// from 512 B to 64 KiB and the latency per load steps up where a constant cache level overflows.
//
// `const_addresses`: every warp of one block issues warp-level indexed constant loads (LDC) whose
// 32 lanes read `distinct` different words (lane % distinct), all cached; the block's cycles per
// warp-level load, against `distinct`, give the cost of each extra address (the constant cache
// serves one address at a time).
//
// Loads are inline PTX `ld.const` from the constant-space address of `cchain` (asm volatile: kept
// in order between the clock reads, never merged or hoisted by NVVM). In `const_addresses` the
// address also depends on `i * zero`, where `zero` is a kernel argument the host passes as 0, so
// that ptxas cannot hoist the loop-invariant loads out of the loop either.
//
// Device code only, compiled by NVRTC (`validate ptx`), no CUDA headers.

typedef unsigned long long u64;

__device__ __forceinline__ u64 clock_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

// The whole 64 KiB constant bank a module may use.
__constant__ unsigned cchain[16384];

// The constant-space address of cchain, as a PTX symbol: a link-time constant that ptxas folds into
// the LDC's immediate offset, so that a chase's loads are LDC R, c[0x3][R] with nothing between
// them. The unused input keeps the variable referenced from C, so that NVVM emits it.
__device__ __forceinline__ u64 cchain_address() {
    u64 a;
    asm("mov.u64 %0, cchain;" : "=l"(a) : "l"(cchain));
    return a;
}

__device__ __forceinline__ unsigned ld_const(u64 address) {
    unsigned v;
    asm volatile("ld.const.u32 %0, [%1];" : "=r"(v) : "l"(address) : "memory");
    return v;
}

// One thread; the chain starts at byte offset 0. out[0] = cycles of `hops` timed loads after
// `warm` untimed ones, out[1] = the last offset.
//
// The start is `threadIdx.x * zero` (the host passes zero = 0): were it a constant, ptxas would see
// a warp-uniform chain and load it through the uniform datapath (ULDC), which is not the indexed
// constant cache path (LDC) that this measures.
extern "C" __global__ void chase_const(unsigned warm, unsigned hops, unsigned zero, u64* out) {
    u64 base = cchain_address();
    unsigned off = threadIdx.x * zero;
    for (unsigned i = 0; i < warm; i++) {
        off = ld_const(base + off);
    }
    u64 t0 = clock_now();
#pragma unroll 8
    for (unsigned i = 0; i < hops; i++) {
        off = ld_const(base + off);
    }
    u64 t1 = clock_now();
    out[0] = t1 - t0;
    out[1] = off;
}

// One block. Each iteration issues 8 independent warp-level loads, 128 bytes apart (the lanes of
// load k read words k * 32 + lane % distinct: 1 KiB in all, well inside the smallest constant
// cache). out[0] = the block's cycles for `iters` iterations (between two barriers), out[1] =
// the %smid it ran on, out[2] = its first clock; out[3] gets the checksum that keeps the loads
// live only in the unlikely case it matches.
extern "C" __global__ void const_addresses(unsigned distinct, unsigned iters, unsigned zero,
                                           u64* out) {
    u64 base = cchain_address();
    unsigned off = ((threadIdx.x & 31) % distinct) * 4;
    unsigned acc = 0;
    for (unsigned k = 0; k < 8; k++) {
        acc ^= ld_const(base + off + k * 128);
    }
    __syncthreads();
    u64 t0 = clock_now();
    for (unsigned i = 0; i < iters; i++) {
        u64 a = base + ((off + i * zero) & 1023);
        unsigned v0 = ld_const(a);
        unsigned v1 = ld_const(a + 128);
        unsigned v2 = ld_const(a + 256);
        unsigned v3 = ld_const(a + 384);
        unsigned v4 = ld_const(a + 512);
        unsigned v5 = ld_const(a + 640);
        unsigned v6 = ld_const(a + 768);
        unsigned v7 = ld_const(a + 896);
        acc ^= v0 ^ v1 ^ v2 ^ v3 ^ v4 ^ v5 ^ v6 ^ v7;
    }
    __syncthreads();
    u64 t1 = clock_now();
    if (threadIdx.x == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        out[0] = t1 - t0;
        out[1] = sm;
        out[2] = t0;
    }
    if (acc == 0x9e3779b9u) {
        out[3] = acc;
    }
}
