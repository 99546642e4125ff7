// R: DRAM latency by access pattern and under load, and a global histogram's time by where its
// bins lie (issue 38). nvcc -O3 -arch=sm_90.
//
// R1 one thread's dependent chain of L1-bypassing loads (ld.global.cg), first pass over lines
//    that are in neither L1 nor L2 (a 512 MiB write elsewhere evicts them first): sequential
//    lines `stride` bytes apart in a 1 GiB buffer, and random lines within a `span` (TLB reach
//    and DRAM pages). ubench G measured 657 cycles per load over random lines of 1 GiB.
// R2 loaded latency: 132 blocks of `warps` warps; each warp walks its own 128 KiB region line
//    by line (32 lanes x 4 B = one line per warp-load), the next line's index from the value
//    lane 0 loaded (a dependent chain per warp): cycles per load (clock64, mean of all warps)
//    and the DRAM bandwidth the whole grid moved (CUDA events).
// R3 hist_global of suite37 (one atomicAdd per input word on 2^log2 bins) with the bins `off`
//    words past a 2 MiB-aligned base: microseconds (CUDA events, median of 5).
// R4 L1 hit throughput by lines and sectors per request: 132 blocks of 1024 threads, each warp
//    8 independent loads per iteration (__ldca, a 16 KiB region that stays in L1), lane l reading
//    word off + l * stride of its row: cycles per warp-level load per SM (clock64 of the block,
//    over its 32 warps' loads). ubench B: aligned LDG hitting L1 1.0 cycle.
// Output lines: `R1 ...`, `R2 ...`, `R3 ...`, `R4 ...`, then `CLK mhz=..`.
#include <algorithm>
#include <initializer_list>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

__global__ void chase(const unsigned* p, unsigned start, int n, long long* out) {
    unsigned j = start;
    long long t0 = clock64();
    for (int i = 0; i < n; i++) j = __ldcg(p + j);
    long long t1 = clock64();
    out[0] = t1 - t0;
    out[1] = j;
}

__global__ void fill(unsigned* p, size_t words, unsigned v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = v + (unsigned)i;
}

// Sequential chain: word i*s/4 points at word (i+1)*s/4.
__global__ void seq_links(unsigned* p, size_t links, unsigned step) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < links;
         i += (size_t)gridDim.x * blockDim.x)
        p[i * step] = (unsigned)(((i + 1) % links) * step);
}

// R2: warp w's region starts at line w * lines; word 0 of each line holds the next line's index.
__global__ void walk(const unsigned* p, int lines, int n, long long* cycles) {
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    const unsigned* r = p + (size_t)warp * lines * 32;
    unsigned j = 0, acc = 0;
    long long t0 = clock64();
    for (int i = 0; i < n; i++) {
        unsigned v = __ldcg(r + j * 32 + lane);
        acc += v;
        j = __shfl_sync(0xffffffffu, v, 0);
    }
    long long t1 = clock64();
    if (lane == 0) cycles[warp] = t1 - t0;
    if (acc == 0x12345678u) cycles[warp] = -1;
}

__global__ void walk_links(unsigned* p, int lines, size_t total_lines) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total_lines;
         i += (size_t)gridDim.x * blockDim.x)
        p[i * 32] = (unsigned)((i % lines + 1) % lines);
}

__global__ void hist_global(const unsigned* data, int n, unsigned* hist, int log2_bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[data[i] >> (32 - log2_bins)], 1u);
}

__global__ void l1tp(const float* p, int iters, int off, int stride, long long* cycles, float* sink) {
    const int lane = threadIdx.x & 31;
    const float* q = p + off + lane * stride;
    float acc = 0.0f;
    for (int k = 0; k < 16; k++) acc += __ldca(q + k * 256);  // brings the rows into L1
    __syncthreads();
    long long t0 = clock64();
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 8; k++) acc += __ldca(q + ((i + k) & 15) * 256);
    }
    __syncthreads();
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
    if (acc == 1234.5f) sink[threadIdx.x] = acc;
}

static unsigned* flushbuf;
static void flush_l2() {
    fill<<<1056, 256>>>(flushbuf, (512u << 20) / 4, 7u);
    CK(cudaDeviceSynchronize());
}

int main() {
    long long* o;
    long long h[2];
    unsigned* big;
    CK(cudaMalloc(&o, 1 << 20));
    CK(cudaMalloc(&flushbuf, 512u << 20));
    CK(cudaMalloc(&big, 1ull << 30));
    const int n = 4096;
    // R1 sequential
    for (unsigned stride : {128u, 256u, 512u, 1024u, 4096u, 65536u, 262144u}) {
        size_t links = (1ull << 30) / stride;
        unsigned step = stride / 4;
        seq_links<<<1056, 256>>>(big, links, step);
        CK(cudaDeviceSynchronize());
        for (int rep = 0; rep < 3; rep++) {
            flush_l2();
            chase<<<1, 1>>>(big, 0, n, o);
            CK(cudaMemcpy(h, o, 16, cudaMemcpyDeviceToHost));
            printf("R1 pattern=seq stride=%u rep=%d cycles_per_load=%.1f\n", stride, rep,
                   h[0] / (double)n);
        }
    }
    // R1 random lines within span
    for (size_t span : {1ull << 21, 8ull << 20, 32ull << 20, 128ull << 20, 1ull << 30}) {
        size_t lines = span / 128;
        std::vector<unsigned> order(lines), next(span / 4, 0);
        for (size_t i = 0; i < lines; i++) order[i] = (unsigned)i;
        srand(1);
        for (size_t i = lines - 1; i > 0; i--) std::swap(order[i], order[(size_t)rand() % (i + 1)]);
        for (size_t i = 0; i < lines; i++) next[order[i] * 32] = order[(i + 1) % lines] * 32;
        CK(cudaMemcpy(big, next.data(), span, cudaMemcpyHostToDevice));
        int m = (int)std::min<size_t>(n, lines);
        for (int rep = 0; rep < 3; rep++) {
            flush_l2();
            chase<<<1, 1>>>(big, order[0] * 32, m, o);
            CK(cudaMemcpy(h, o, 16, cudaMemcpyDeviceToHost));
            printf("R1 pattern=random span_mib=%zu rep=%d cycles_per_load=%.1f\n", span >> 20, rep,
                   h[0] / (double)m);
        }
    }
    // R2 loaded latency
    cudaEvent_t ea, eb;
    CK(cudaEventCreate(&ea));
    CK(cudaEventCreate(&eb));
    const int lines = 1024, steps = 1024;  // 128 KiB per warp
    for (int warps : {1, 2, 4, 8, 16, 32}) {
        size_t total = (size_t)132 * warps * lines;
        if (total * 128 > (1ull << 30)) break;
        walk_links<<<1056, 256>>>(big, lines, total);
        CK(cudaDeviceSynchronize());
        for (int rep = 0; rep < 2; rep++) {
            flush_l2();
            CK(cudaEventRecord(ea));
            walk<<<132, 32 * warps>>>(big, lines, steps, o);
            CK(cudaEventRecord(eb));
            CK(cudaEventSynchronize(eb));
            float ms;
            CK(cudaEventElapsedTime(&ms, ea, eb));
            std::vector<long long> c(132 * warps);
            CK(cudaMemcpy(c.data(), o, c.size() * 8, cudaMemcpyDeviceToHost));
            double mean = 0;
            for (long long x : c) mean += (double)x;
            mean /= c.size() * (double)steps;
            double gbs = (double)total * 128 / (ms * 1e-3) / 1e9;
            printf("R2 warps_per_sm=%d rep=%d cycles_per_load=%.1f us=%.2f gb_per_s=%.1f\n", warps, rep,
                   mean, ms * 1e3, gbs);
        }
    }
    // R3 histogram placement
    const int hn = 4 << 20;
    unsigned* data;
    CK(cudaMalloc(&data, hn * 4));
    {
        std::vector<unsigned> d(hn);
        unsigned x = 37;
        for (int i = 0; i < hn; i++) { x = x * 1664525u + 1013904223u; d[i] = x; }
        CK(cudaMemcpy(data, d.data(), hn * 4, cudaMemcpyHostToDevice));
    }
    for (int count : {1 << 20, 4 << 20}) {
        for (int off : {0, 32, 64, 128, 256, 512, 1024, 4096, 4096 + 96}) {
            unsigned* hist = big + off;
            float best[5];
            for (int rep = 0; rep < 5; rep++) {
                CK(cudaMemset(big, 0, 1 << 20));
                CK(cudaEventRecord(ea));
                hist_global<<<(count + 255) / 256, 256>>>(data, count, hist, 8);
                CK(cudaEventRecord(eb));
                CK(cudaEventSynchronize(eb));
                CK(cudaEventElapsedTime(&best[rep], ea, eb));
            }
            std::sort(best, best + 5);
            printf("R3 n=%d off_words=%d base_mod_2mib=%llu us=%.2f\n", count, off,
                   (unsigned long long)((size_t)hist % (2u << 20)), best[2] * 1e3);
        }
    }
    // R4 L1 throughput
    {
        float* f = (float*)big;
        fill<<<64, 256>>>(big, 1 << 20, 0u);
        CK(cudaDeviceSynchronize());
        const int iters = 256;
        int cases[][2] = {{0, 1}, {1, 1}, {8, 1}, {16, 1}, {31, 1}, {0, 2}, {1, 2}, {0, 4}, {0, 8}, {0, 32}, {0, 0}};
        for (auto& c : cases) {
            l1tp<<<132, 1024>>>(f, iters, c[0], c[1], o, (float*)(big + (2 << 20)));
            CK(cudaDeviceSynchronize());
            std::vector<long long> cy(132);
            CK(cudaMemcpy(cy.data(), o, 132 * 8, cudaMemcpyDeviceToHost));
            std::sort(cy.begin(), cy.end());
            printf("R4 off_words=%d stride_words=%d cycles_per_load_per_sm=%.3f\n", c[0], c[1],
                   cy[66] / (double)(iters * 8 * 32));
        }
    }
    int khz;
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    printf("CLK mhz=%d\n", khz / 1000);
    return 0;
}
