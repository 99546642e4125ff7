// Microbenchmarks of the H200 (sm_90) for the timing model's hardware parameters: constant-cache
// LDC latency and throughput, block dispatch, bar.sync, and L2 write throughput for full and
// partial sectors. Build and run (README.md beside this file):
//   nvcc -O3 -arch=sm_90 -o ubench ubench.cu && ./ubench
// Cycles come from clock64() (the SM clock) inside the kernels; throughputs GPU-wide from CUDA
// events and the SM clock read by the same kernels.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);    \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

__constant__ unsigned cdata[8192]; // 32 KiB

struct Rec {
    long long t0, t1;
    unsigned sm, pad;
};

__device__ __forceinline__ unsigned smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

// ---- A: LDC latency, one warp, dependent chain through constant memory (byte offsets) ----
__global__ void k_ldc_lat(unsigned *out, long long *cyc, int iters, unsigned lanemul) {
    unsigned j = threadIdx.x * lanemul; // 0 for every lane when lanemul = 0, unknown to ptxas
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 8; u++) j = *(const unsigned *)((const char *)cdata + j);
    }
    long long t1 = clock64();
    out[threadIdx.x] = j;
    if (threadIdx.x == 0) cyc[0] = t1 - t0;
}

// ---- A': LDG latency (L1 hit), same chain in global memory ----
__global__ void k_ldg_lat(const unsigned *g, unsigned *out, long long *cyc, int iters,
                          unsigned lanemul) {
    unsigned j = threadIdx.x * lanemul;
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 8; u++) j = *(const unsigned *)((const char *)g + j);
    }
    long long t1 = clock64();
    out[threadIdx.x] = j;
    if (threadIdx.x == 0) cyc[0] = t1 - t0;
}

// ---- B: LDC throughput: 8 independent LDC per iteration, many warps per SM ----
__global__ void k_ldc_tput(float *out, Rec *rec, int iters, unsigned lanemul) {
    unsigned base = threadIdx.x * lanemul; // 0 at run time (uniform) or distinct per lane
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    __syncthreads();
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
        const char *p = (const char *)cdata + base + ((i & 15) << 6);
        s0 += *(const float *)(p + 0);
        s1 += *(const float *)(p + 4);
        s2 += *(const float *)(p + 8);
        s3 += *(const float *)(p + 12);
        s4 += *(const float *)(p + 16);
        s5 += *(const float *)(p + 20);
        s6 += *(const float *)(p + 24);
        s7 += *(const float *)(p + 28);
    }
    __syncthreads();
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    if (threadIdx.x == 0) rec[blockIdx.x] = Rec{t0, t1, smid(), 0};
}

// ---- B': the same with global loads hitting L1 ----
__global__ void k_ldg_tput(const float *g, float *out, Rec *rec, int iters, unsigned lanemul) {
    unsigned base = threadIdx.x * lanemul;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    __syncthreads();
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
        const char *p = (const char *)g + base + ((i & 15) << 6);
        s0 += *(const float *)(p + 0);
        s1 += *(const float *)(p + 4);
        s2 += *(const float *)(p + 8);
        s3 += *(const float *)(p + 12);
        s4 += *(const float *)(p + 16);
        s5 += *(const float *)(p + 20);
        s6 += *(const float *)(p + 24);
        s7 += *(const float *)(p + 28);
    }
    __syncthreads();
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    if (threadIdx.x == 0) rec[blockIdx.x] = Rec{t0, t1, smid(), 0};
}

// ---- B'': ray-like loop: 3 LDC of one sphere, a dependent FP chain, a data-dependent branch ----
template <bool CONST>
__global__ void k_ray_like(const float *g, float *out, Rec *rec, int iters, unsigned lanemul) {
    unsigned base = threadIdx.x * lanemul;
    float ox = (float)(threadIdx.x & 15), oy = (float)(threadIdx.x >> 4), acc = 0.f;
    const char *src = CONST ? (const char *)cdata : (const char *)g;
    __syncthreads();
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
        const char *p = src + base + ((i % 20) * 28);
        float x = *(const float *)(p + 16), y = *(const float *)(p + 20),
              r = *(const float *)(p + 12);
        float dx = ox - x, dy = oy - y;
        if (dx * dx + dy * dy < r * r) acc += *(const float *)(p + 24);
    }
    __syncthreads();
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    if (threadIdx.x == 0) rec[blockIdx.x] = Rec{t0, t1, smid(), 0};
}

// ---- C: block dispatch: blocks that do (almost) nothing ----
__global__ void k_empty() {}
__global__ void k_stamp(Rec *rec) {
    if (threadIdx.x == 0) {
        long long t = clock64();
        rec[blockIdx.x] = Rec{t, t, smid(), 0};
    }
}

// ---- D: bar.sync cost ----
__global__ void k_bar(Rec *rec, int iters, float *out) {
    float a = threadIdx.x;
    __syncthreads();
    long long t0 = clock64();
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < 8; u++) {
            a = a * 0.999f + 1.0f;
            __syncthreads();
        }
    }
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
    if (threadIdx.x == 0) rec[blockIdx.x] = Rec{t0, t1, smid(), 0};
}

// ---- E: L2 write throughput, region inside L2, written many times ----
// mode 0: a warp writes 32 consecutive words (4 full sectors)
// mode 1: pairs of lanes write 8 B into 16 sectors 4 KiB apart (transpose naive_row's stores)
// mode 2: each lane writes 4 B into its own sector (32 sectors, stride 32 B)
// mode 3: float4 per lane, 16 full sectors per request
__global__ void k_store(float *buf, unsigned words, int mode, int reps) {
    unsigned nthreads = gridDim.x * blockDim.x;
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31, warp = tid >> 5, nwarps = nthreads >> 5;
    for (int r = 0; r < reps; r++) {
        if (mode == 0) {
            for (unsigned w = warp; w * 32 < words; w += nwarps) buf[w * 32 + lane] = (float)r;
        } else if (mode == 1) {
            // 1024-word rows; a warp covers 16 rows x 2 words; warps tile columns then row groups
            unsigned cols = 512, groups = words / (1024 * 16);
            for (unsigned w = warp; w < cols * groups; w += nwarps) {
                unsigned c = w % cols, g = w / cols;
                buf[(g * 16 + (lane >> 1)) * 1024 + c * 2 + (lane & 1)] = (float)r;
            }
        } else if (mode == 2) {
            // 8-word stride; a warp covers 32 sectors; warps then shift by one word
            unsigned blocks = words / 256;
            for (unsigned w = warp; w < blocks * 8; w += nwarps) {
                unsigned b = w >> 3, k = w & 7;
                buf[b * 256 + lane * 8 + k] = (float)r;
            }
        } else {
            float4 *b4 = (float4 *)buf;
            for (unsigned w = warp; w * 32 < words / 4; w += nwarps)
                b4[w * 32 + lane] = make_float4(r, r, r, r);
        }
    }
}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// per-SM span (max t1 - min t0 of the blocks on that SM), median over SMs
static double sm_span(const std::vector<Rec> &r, int nsm) {
    std::vector<long long> lo(nsm, -1), hi(nsm, -1);
    for (auto &x : r) {
        if (x.sm >= (unsigned)nsm) continue;
        if (lo[x.sm] < 0 || x.t0 < lo[x.sm]) lo[x.sm] = x.t0;
        if (hi[x.sm] < 0 || x.t1 > hi[x.sm]) hi[x.sm] = x.t1;
    }
    std::vector<double> s;
    for (int i = 0; i < nsm; i++)
        if (lo[i] >= 0) s.push_back((double)(hi[i] - lo[i]));
    return median(s);
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int nsm = prop.multiProcessorCount;
    printf("# %s, %d SMs, compute capability %d\n", prop.name, nsm, prop.major * 10 + prop.minor);

    // constant chain: word k holds the byte offset of word (k + 1) % 256 (1 KiB, fits the 2 KiB L1)
    std::vector<unsigned> h(8192);
    for (int k = 0; k < 8192; k++) h[k] = ((k + 1) % 256) * 4;
    CK(cudaMemcpyToSymbol(cdata, h.data(), h.size() * 4));
    unsigned *gchain;
    CK(cudaMalloc(&gchain, 8192 * 4));
    CK(cudaMemcpy(gchain, h.data(), 8192 * 4, cudaMemcpyHostToDevice));
    unsigned *dout;
    long long *dcyc;
    CK(cudaMalloc(&dout, 1 << 26));
    CK(cudaMalloc(&dcyc, 64));
    const int iters = 4096;

    printf("\n## A. dependent-load latency, one warp (cycles per load)\n");
    for (unsigned lm : {0u, 4u}) {
        for (int pass = 0; pass < 2; pass++) {
            long long c;
            k_ldc_lat<<<1, 32>>>(dout, dcyc, iters, lm);
            CK(cudaMemcpy(&c, dcyc, 8, cudaMemcpyDeviceToHost));
            if (pass) printf("LDC  lanemul=%u (%s): %.1f\n", lm, lm ? "32 distinct words" : "uniform", (double)c / (iters * 8));
            k_ldg_lat<<<1, 32>>>(gchain, dout, dcyc, iters, lm);
            CK(cudaMemcpy(&c, dcyc, 8, cudaMemcpyDeviceToHost));
            if (pass) printf("LDG  lanemul=%u (%s): %.1f\n", lm, lm ? "32 distinct words" : "uniform", (double)c / (iters * 8));
        }
    }

    // throughput data: floats
    std::vector<unsigned> hf(8192);
    for (int k = 0; k < 8192; k++) {
        float f = 1.0f + (k % 7) * 0.125f;
        memcpy(&hf[k], &f, 4);
    }
    CK(cudaMemcpyToSymbol(cdata, hf.data(), hf.size() * 4));
    float *gf;
    CK(cudaMalloc(&gf, 8192 * 4));
    CK(cudaMemcpy(gf, hf.data(), 8192 * 4, cudaMemcpyHostToDevice));
    Rec *drec;
    const int maxblocks = 1 << 20;
    CK(cudaMalloc(&drec, maxblocks * sizeof(Rec)));
    std::vector<Rec> hrec(maxblocks);

    printf("\n## B. load throughput per SM (8 independent loads per iteration, %d iterations)\n", 1024);
    printf("# warps/SM = blocks/SM x threads/32; cycles per warp-load per SM = span / (warps/SM x 8 x iters)\n");
    struct Cfg { int bps, threads; };
    for (unsigned lm : {0u, 4u}) {
        for (Cfg c : {Cfg{1, 32}, Cfg{1, 128}, Cfg{1, 512}, Cfg{2, 1024}}) {
            int blocks = nsm * c.bps, it = 1024;
            for (int which = 0; which < 2; which++) {
                double best = 1e30;
                for (int pass = 0; pass < 3; pass++) {
                    if (which == 0) k_ldc_tput<<<blocks, c.threads>>>((float *)dout, drec, it, lm);
                    else k_ldg_tput<<<blocks, c.threads>>>(gf, (float *)dout, drec, it, lm);
                    CK(cudaDeviceSynchronize());
                    CK(cudaMemcpy(hrec.data(), drec, blocks * sizeof(Rec), cudaMemcpyDeviceToHost));
                    hrec.resize(blocks);
                    best = std::min(best, sm_span(hrec, nsm));
                    hrec.resize(maxblocks);
                }
                double warps = c.bps * c.threads / 32.0;
                printf("%s lanemul=%u warps/SM=%4.0f: %.2f cycles per warp-load per SM (%.2f per SMSP)\n",
                       which ? "LDG" : "LDC", lm, warps, best / (warps * 8 * it),
                       best / (warps * 8 * it) * std::min(4.0, warps));
            }
        }
    }

    printf("\n## B2. ray-like loop (3 loads + dependent FP chain + branch per iteration), cycles per iteration per SM\n");
    for (unsigned lm : {0u}) {
        for (Cfg c : {Cfg{1, 32}, Cfg{1, 128}, Cfg{1, 512}, Cfg{2, 1024}}) {
            int blocks = nsm * c.bps, it = 2000;
            for (int which = 0; which < 2; which++) {
                double best = 1e30;
                for (int pass = 0; pass < 3; pass++) {
                    if (which == 0) k_ray_like<true><<<blocks, c.threads>>>(gf, (float *)dout, drec, it, lm);
                    else k_ray_like<false><<<blocks, c.threads>>>(gf, (float *)dout, drec, it, lm);
                    CK(cudaDeviceSynchronize());
                    CK(cudaMemcpy(hrec.data(), drec, blocks * sizeof(Rec), cudaMemcpyDeviceToHost));
                    hrec.resize(blocks);
                    best = std::min(best, sm_span(hrec, nsm));
                    hrec.resize(maxblocks);
                }
                double warps = c.bps * c.threads / 32.0;
                printf("%s warps/SM=%4.0f: %.2f cycles per warp-iteration per SM, %.1f cycles per iteration of one warp\n",
                       which ? "global  " : "constant", warps, best / (warps * it), best / it);
            }
        }
    }

    printf("\n## C. block dispatch: empty blocks, mean of 20 back-to-back launches (us)\n");
    int *dflag;
    CK(cudaMalloc(&dflag, 64));
    CK(cudaMemset(dflag, 0, 64));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int threads : {32, 128, 256, 512, 1024}) {
        printf("threads=%4d:", threads);
        for (int mult : {1, 8, 32, 128, 512}) {
            int blocks = nsm * mult;
            k_empty<<<blocks, threads>>>();
            CK(cudaDeviceSynchronize());
            CK(cudaEventRecord(e0));
            for (int r = 0; r < 20; r++) k_empty<<<blocks, threads>>>();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            printf("  %6d blocks %7.2f", blocks, ms * 1000 / 20);
        }
        printf("\n");
    }
    // block start times on one SM: gaps between consecutive starts
    for (int threads : {128, 256, 1024}) {
        int blocks = nsm * 256;
        k_stamp<<<blocks, threads>>>(drec);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hrec.data(), drec, blocks * sizeof(Rec), cudaMemcpyDeviceToHost));
        std::vector<double> gaps;
        for (int s = 0; s < 8; s++) {
            std::vector<long long> t;
            for (int b = 0; b < blocks; b++)
                if (hrec[b].sm == (unsigned)s) t.push_back(hrec[b].t0);
            std::sort(t.begin(), t.end());
            if (t.size() > 2) gaps.push_back((double)(t.back() - t.front()) / (t.size() - 1));
        }
        printf("stamp threads=%4d, %d blocks: mean cycles between block starts on one SM (median of 8 SMs) %.1f\n",
               threads, blocks, median(gaps));
    }

    printf("\n## D. bar.sync: cycles per barrier (one FFMA between barriers)\n");
    for (Cfg c : {Cfg{1, 32}, Cfg{1, 128}, Cfg{1, 256}, Cfg{1, 1024}, Cfg{8, 256}, Cfg{16, 128}}) {
        int blocks = nsm * c.bps, it = 1000;
        double best = 1e30;
        for (int pass = 0; pass < 3; pass++) {
            k_bar<<<blocks, c.threads>>>(drec, it, (float *)dout);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hrec.data(), drec, blocks * sizeof(Rec), cudaMemcpyDeviceToHost));
            hrec.resize(blocks);
            best = std::min(best, sm_span(hrec, nsm));
            hrec.resize(maxblocks);
        }
        printf("blocks/SM=%2d threads=%4d: %.1f cycles per barrier per block-round\n", c.bps, c.threads, best / (it * 8));
    }

    printf("\n## E. L2 write throughput, 16 MiB region written 20 times (GPU-wide, sectors per SM cycle)\n");
    float *dbuf;
    const unsigned words = 4u << 20; // 16 MiB
    CK(cudaMalloc(&dbuf, (size_t)words * 4));
    CK(cudaMemset(dbuf, 0, (size_t)words * 4));
    const char *names[4] = {"full sectors (32 words per warp)", "8 B per sector (16 sectors per warp)",
                            "4 B per sector (32 sectors per warp)", "float4 (16 full sectors per warp)"};
    for (int mode = 0; mode < 4; mode++) {
        int reps = 20;
        k_store<<<nsm * 8, 256>>>(dbuf, words, mode, 1);
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(e0));
        k_store<<<nsm * 8, 256>>>(dbuf, words, mode, reps);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        double stores = (double)words * reps; // thread stores (float4 mode: words/4 per rep)
        double sectors = mode == 0 ? stores / 8 : mode == 1 ? stores / 2 : mode == 2 ? stores : stores / 8;
        double cycles = ms * 1e-3 * 1.98e9;
        printf("mode %d %-40s %8.1f us, %.1f L1 store sectors per cycle (at 1.98 GHz), %.2f B/cycle of data\n",
               mode, names[mode], ms * 1000, sectors / cycles, (double)words * 4 * reps / cycles);
    }
    CK(cudaDeviceSynchronize());
    printf("\n# done\n");
    return 0;
}
