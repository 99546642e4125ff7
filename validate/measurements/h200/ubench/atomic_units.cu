// Which lines of global memory share an L2 atomic unit (issue 38), nvcc -O3 -arch=sm_90.
//
// ubench J (shared_units.cu) showed that atomics on several lines are not served in parallel line
// by line: 2 lines 128 B apart take longer than 1 line, 8 consecutive lines (1 KiB) are only
// twice as fast as 2, 32 consecutive lines about 8 times as fast as 1, while lines 4 KiB apart
// come close to one unit per line. So lines share units, by address.
//
// P: every warp of 528 blocks x 256 threads does `iters` REDs, lanes 0-15 on the word at line A,
//    lanes 16-31 on the word at line B (16 lanes on one word: 16 serialized operations per line
//    per request). Where A and B are served by one unit the two halves take turns (about the time
//    of all 32 lanes on one word); by two units, half that. A = `base`, B = `base + d` lines,
//    d = 0 .. 4095 from base 0 (every line of the first 512 KiB), and, from other bases, d = 2^k
//    lines and some odd ones, to see whether the map is the same everywhere (an XOR hash of the
//    address bits is).
// C: what one atomicCAS costs at the unit, without the retries of a CAS loop: every lane of 528
//    blocks x 256 threads does `iters` CAS on word (lane % naddr) of line 0, either one that
//    always matches (compare 0, swap 0: the word stays 0, every CAS succeeds) or one that never
//    does (compare 1), against RED.ADD on the same words; naddr 1 (all on one word), 8 (a sector),
//    32 (the line). A contended CAS loop is one success per round, the other contenders' failed
//    CAS in between.
// Output: `P base_line=.. d_lines=.. us=..` (CUDA events, the faster of two launches), `L ...`,
// `C op=.. naddr=.. ns_per_op=..`, then `CLK`.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

__global__ void pair(unsigned* ctr, long long a, long long b, int iters) {
    long long w = (threadIdx.x & 16) ? b : a;
    for (int i = 0; i < iters; i++) atomicAdd(&ctr[w], 1u);
}

__global__ void cas_k(unsigned* ctr, int naddr, int iters, unsigned compare, int op) {
    unsigned* p = &ctr[(threadIdx.x & 31) % naddr];
    unsigned acc = 0;
    for (int i = 0; i < iters; i++) {
        if (op == 2) atomicAdd(p, 0u);
        else acc += atomicCAS(p, compare, 0u);
    }
    if (acc == 12345) ctr[1 << 20] = acc;  // keeps the CAS results used
}

// L: one thread's chain of dependent atomics on one word, each CAS comparing with the value the
//    one before returned (so each matches: the round of an uncontended CAS loop), or ATOM.ADD
//    returning; cycles per operation by clock64.
__global__ void chain(unsigned* ctr, long long* out, int n, int op) {
    unsigned v = 0;
    long long t0 = clock64();
    for (int i = 0; i < n; i++) v = op ? atomicAdd(ctr, 1u) : atomicCAS(ctr, v, v + 1u) + 1u;
    long long t1 = clock64();
    out[0] = t1 - t0;
    out[1] = v;
}

static unsigned* ctr;
static cudaEvent_t ea, eb;

// Microseconds of one launch on lines `base` and `base + d` (the faster of two).
static float run(long long base, long long d) {
    float best = 1e30f;
    for (int rep = 0; rep < 2; rep++) {
        CK(cudaEventRecord(ea));
        pair<<<528, 256>>>(ctr, base * 32, (base + d) * 32, 8);
        CK(cudaEventRecord(eb));
        CK(cudaEventSynchronize(eb));
        float ms;
        CK(cudaEventElapsedTime(&ms, ea, eb));
        if (ms < best) best = ms;
    }
    return best * 1e3f;
}

int main() {
    const size_t bytes = 256ull << 20;  // 2^21 lines of 128 B
    CK(cudaMalloc(&ctr, bytes));
    CK(cudaMemset(ctr, 0, bytes));
    CK(cudaEventCreate(&ea));
    CK(cudaEventCreate(&eb));
    run(0, 1);  // warm-up
    for (long long d = 0; d < 4096; d++) printf("P base_line=0 d_lines=%lld us=%.2f\n", d, run(0, d));
    const long long bases[] = {7, 1000, 24581, 300001};
    for (long long base : bases) {
        for (int k = 0; k <= 20; k++) {
            long long d = 1ll << k;
            if (base + d < (long long)(bytes / 128))
                printf("P base_line=%lld d_lines=%lld us=%.2f\n", base, d, run(base, d));
        }
        for (long long d : {3ll, 5ll, 6ll, 12ll, 24ll, 33ll, 96ll, 257ll, 1027ll, 4100ll, 65537ll})
            printf("P base_line=%lld d_lines=%lld us=%.2f\n", base, d, run(base, d));
    }
    const char* ops[] = {"cas_match", "cas_fail", "red"};
    for (int op = 0; op < 3; op++)
        for (int naddr : {1, 8, 32}) {
            float best = 1e30f;
            for (int rep = 0; rep < 2; rep++) {
                CK(cudaMemset(ctr, 0, 4 << 20));
                CK(cudaEventRecord(ea));
                cas_k<<<528, 256>>>(ctr, naddr, 8, op == 1 ? 1u : 0u, op);
                CK(cudaEventRecord(eb));
                CK(cudaEventSynchronize(eb));
                float ms;
                CK(cudaEventElapsedTime(&ms, ea, eb));
                if (ms < best) best = ms;
            }
            double n = 528.0 * 256 * 8;
            printf("C op=%s naddr=%d us=%.2f ns_per_op=%.4f\n", ops[op], naddr, best * 1e3, best * 1e6 / n);
        }
    long long* dout;
    CK(cudaMalloc(&dout, 16));
    for (int op = 0; op < 2; op++) {
        CK(cudaMemset(ctr, 0, 4));
        chain<<<1, 1>>>(ctr, dout, 1000, op);
        CK(cudaDeviceSynchronize());
        long long h[2];
        CK(cudaMemcpy(h, dout, 16, cudaMemcpyDeviceToHost));
        printf("L op=%s n=1000 cycles_per_op=%.1f last=%lld\n", op ? "atom_add" : "cas", h[0] / 1000.0, h[1]);
    }
    int clk;
    CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
    printf("CLK khz=%d\n", clk);
    return 0;
}
