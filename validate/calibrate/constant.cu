// constant: constant-cache microbenchmarks of `validate calibrate`.
//
// `chase_const`: one thread follows a chain through __constant__ memory (each element holds the
// byte offset of the next), so the loads cannot overlap; the host writes chains over working sets
// from 512 B to 64 KiB and the latency per load steps up where a constant cache level overflows.
//
// `const_addresses`: every warp of one block issues warp-level indexed constant loads (LDC) whose
// 32 lanes read `distinct` different words (lane % distinct), all cached; the block's cycles per
// warp-level load, against `distinct`, give the cost of each extra address (the constant cache
// serves one address at a time). `const_misses` does the same with addresses that miss the
// smallest level: the cost of each missing address.
//
// Loads are inline PTX `ld.const` from the constant-space address of `cchain` (asm volatile: kept
// in order between the clock reads, never merged or hoisted by NVVM). In `const_addresses` and
// `const_misses` the address also depends on `i * rotate`, a kernel argument, so that ptxas cannot
// hoist the loads out of the loop either.
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

// One block. Each iteration issues 8 independent warp-level loads, STEP bytes apart; the lanes of
// each read the words LANE x (lane % distinct) bytes from its start, and iteration i moves every
// address on by i x `rotate` bytes within its STEP-byte window. out[0] = the block's cycles for
// `iters` iterations (between two barriers), out[1] = the %smid it ran on, out[2] = its first
// clock; out[3] gets the checksum that keeps the loads live only in the unlikely case it matches.
template <unsigned LANE, unsigned STEP>
__device__ __forceinline__ void addresses(unsigned distinct, unsigned iters, unsigned rotate,
                                          u64* out) {
    u64 base = cchain_address();
    unsigned off = ((threadIdx.x & 31) % distinct) * LANE;
    unsigned acc = 0;
    for (unsigned k = 0; k < 8; k++) {
        acc ^= ld_const(base + off + k * STEP);
    }
    __syncthreads();
    u64 t0 = clock_now();
    for (unsigned i = 0; i < iters; i++) {
        u64 a = base + ((off + i * rotate) & (STEP - 1));
        unsigned v0 = ld_const(a);
        unsigned v1 = ld_const(a + STEP);
        unsigned v2 = ld_const(a + 2 * STEP);
        unsigned v3 = ld_const(a + 3 * STEP);
        unsigned v4 = ld_const(a + 4 * STEP);
        unsigned v5 = ld_const(a + 5 * STEP);
        unsigned v6 = ld_const(a + 6 * STEP);
        unsigned v7 = ld_const(a + 7 * STEP);
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

// Hits: consecutive words (lane stride 4 bytes), loads 128 bytes apart: 1 KiB in all, well inside
// the smallest constant cache. The host passes rotate = 0: the addresses stay, and the `i * rotate`
// term only keeps ptxas from hoisting the loads out of the loop.
extern "C" __global__ void const_addresses(unsigned distinct, unsigned iters, unsigned rotate,
                                           u64* out) {
    addresses<4, 128>(distinct, iters, rotate, out);
}

// Misses of the smallest level: lanes 256 bytes (4 lines) apart, loads 8 KiB apart. The host passes
// rotate = 320 bytes (5 lines): iteration after iteration every address moves on through its 8 KiB
// window, and the warps sweep all 1024 lines of the 64 KiB bank, so that the 2 KiB level keeps none
// of them and the next level (at least 64 KiB on an H200) serves every address.
extern "C" __global__ void const_misses(unsigned distinct, unsigned iters, unsigned rotate,
                                        u64* out) {
    addresses<256, 8192>(distinct, iters, rotate, out);
}
