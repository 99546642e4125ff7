// latency: pointer-chase latency microbenchmarks of `validate calibrate` (global memory through L1,
// L2 and DRAM; shared memory). One thread follows a chain of pointers, each load's address being
// the value the previous load returned, so the loads cannot overlap: the cycles between two
// clock64 reads divided by the number of loads is the load-to-use latency of the level that
// serves them.
//
// The loads are inline PTX (`asm volatile`) so that the cache operator is exactly the one named
// (`ld.global`: through L1; `ld.global.cg`: L2 only) and so that the compiler keeps every load in
// program order between the two clock reads. The chains hold real addresses (not indices):
// no address arithmetic sits between two loads.
//
// Device code only, compiled by NVRTC (`validate ptx`), no CUDA headers.

typedef unsigned long long u64;

// The SM's cycle counter. `volatile` with a memory clobber: never moved across the loads.
__device__ __forceinline__ u64 clock_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

// Writes a cyclic chain of n elements spaced `stride` 8-byte words apart, visited in the order
// 0, step, 2 step, ... (mod n; step coprime with n, so every element once per cycle):
// element (j step mod n) holds the address of element ((j + 1) step mod n).
extern "C" __global__ void chase_init(u64* chain, u64 n, u64 stride, u64 step) {
    u64 threads = (u64)gridDim.x * blockDim.x;
    for (u64 j = (u64)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += threads) {
        u64 from = (j * step) % n;
        u64 to = ((j + 1) * step) % n;
        chain[from * stride] = (u64)(chain + to * stride);
    }
}

// One thread: `warm` loads (to fill the caches, untimed), then `hops` timed loads.
// out[0] = cycles of the timed loads, out[1] = where the chain ended (keeps it live).
#define CHASE_GLOBAL(NAME, LOAD)                                                   \
    extern "C" __global__ void NAME(const u64* start, unsigned warm, unsigned hops, \
                                    u64* out) {                                    \
        u64 p = (u64)start;                                                        \
        for (unsigned i = 0; i < warm; i++) {                                      \
            asm volatile(LOAD " %0, [%0];" : "+l"(p)::"memory");                   \
        }                                                                          \
        u64 t0 = clock_now();                                                      \
        _Pragma("unroll 8") for (unsigned i = 0; i < hops; i++) {                  \
            asm volatile(LOAD " %0, [%0];" : "+l"(p)::"memory");                   \
        }                                                                          \
        u64 t1 = clock_now();                                                      \
        out[0] = t1 - t0;                                                          \
        out[1] = p;                                                                \
    }

// A plain load, as kernels' loads are (cached in L1 by default since compute 6.0; SASS LDG.E.64):
// L1 hits on a small warm chain.
CHASE_GLOBAL(chase_plain, "ld.global.u64")
// Cached in L2 only (SASS LDG.E.64.STRONG.GPU, which never hits L1): L2 hits on a warm chain of
// any size, DRAM on a cold one. On an H200 its L2 and DRAM latencies equal a plain load's that
// misses L1.
CHASE_GLOBAL(chase_cg, "ld.global.cg.u64")

// The shared-space address (32 bits) of a generic pointer into shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
    unsigned a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

#define SHARED_WORDS 4096

// Shared memory: the block writes a chain of n <= 4096 words (element i holds the shared address
// of element (i + step) mod n), then thread 0 follows it as chase_ca does.
extern "C" __global__ void chase_shared(unsigned n, unsigned step, unsigned warm, unsigned hops,
                                        u64* out) {
    __shared__ unsigned s[SHARED_WORDS];
    unsigned base = shared_address(s);
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
        s[i] = base + 4 * ((i + step) % n);
    }
    __syncthreads();
    if (threadIdx.x != 0) {
        return;
    }
    unsigned a = base;
    for (unsigned i = 0; i < warm; i++) {
        asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a)::"memory");
    }
    u64 t0 = clock_now();
#pragma unroll 8
    for (unsigned i = 0; i < hops; i++) {
        asm volatile("ld.shared.u32 %0, [%0];" : "+r"(a)::"memory");
    }
    u64 t1 = clock_now();
    out[0] = t1 - t0;
    out[1] = a;
}
