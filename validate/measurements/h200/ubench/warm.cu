// H: what an SM's L1 and constant caches keep from one launch to the next. Each block's one
// thread chases a random cycle of words one line apart, twice: the first pass shows where the
// lines were when the launch started (L1, constant cache, or L2), the second the latency of the
// level the first pass filled. Launched back to back (queued without a host wait), after a
// cudaDeviceSynchronize, and after another kernel that streams 256 MiB through the SMs.
// Cycles per load from clock64(); every block chases the same lines, so whichever SM a block of
// the second launch lands on ran a block of the first.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CN 4096
__constant__ unsigned cnext[CN]; // 16 KiB

__global__ void chase_global(const unsigned *p, unsigned start, int n, long long *out) {
    unsigned j = start;
    long long t0 = clock64();
    for (int i = 0; i < n; i++) j = __ldca(p + j);
    long long t1 = clock64();
    for (int i = 0; i < n; i++) j = __ldca(p + j);
    long long t2 = clock64();
    out[3 * blockIdx.x] = t1 - t0;
    out[3 * blockIdx.x + 1] = t2 - t1;
    out[3 * blockIdx.x + 2] = j;
}

__global__ void chase_const(unsigned start, int n, long long *out) {
    unsigned j = start;
    long long t0 = clock64();
    for (int i = 0; i < n; i++) j = cnext[j];
    long long t1 = clock64();
    for (int i = 0; i < n; i++) j = cnext[j];
    long long t2 = clock64();
    out[3 * blockIdx.x] = t1 - t0;
    out[3 * blockIdx.x + 1] = t2 - t1;
    out[3 * blockIdx.x + 2] = j;
}

__global__ void stream(const float4 *in, float4 *out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    float4 s = make_float4(0, 0, 0, 0);
    for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    if (s.x == 12345.f) out[0] = s;
}

static const int BLOCKS = 132;

static void report(const char *what, long long *dout, int n) {
    std::vector<long long> h(3 * BLOCKS);
    cudaMemcpy(h.data(), dout, h.size() * 8, cudaMemcpyDeviceToHost);
    double a = 0, b = 0, amin = 1e30, amax = 0;
    for (int k = 0; k < BLOCKS; k++) {
        double x = h[3 * k] / (double)n, y = h[3 * k + 1] / (double)n;
        a += x; b += y; amin = x < amin ? x : amin; amax = x > amax ? x : amax;
    }
    printf("%-58s first pass %6.1f cycles/load (min %6.1f, max %6.1f), second %6.1f\n", what,
           a / BLOCKS, amin, amax, b / BLOCKS);
}

// A random cycle through `lines` words `stride` words apart, as next-index words.
static std::vector<unsigned> cycle(int lines, int stride, int words) {
    std::vector<unsigned> order(lines), next(words, 0);
    for (int i = 0; i < lines; i++) order[i] = i;
    srand(7);
    for (int i = lines - 1; i > 0; i--) std::swap(order[i], order[rand() % (i + 1)]);
    for (int i = 0; i < lines; i++) next[order[i] * stride] = order[(i + 1) % lines] * stride;
    return next;
}

int main() {
    long long *o1, *o2;
    cudaMalloc(&o1, 3 * BLOCKS * 8);
    cudaMalloc(&o2, 3 * BLOCKS * 8);
    size_t sn = (256u << 20) / 16;
    float4 *sin, *sout;
    cudaMalloc(&sin, sn * 16);
    cudaMalloc(&sout, 16);
    cudaMemset(sin, 0, sn * 16);
    // Global: 128 lines of 128 bytes (16 KiB), well inside the L1 (256 KiB with shared).
    int lines = 128, stride = 32, words = lines * stride;
    std::vector<unsigned> g = cycle(lines, stride, words);
    unsigned *d;
    cudaMalloc(&d, words * 4);
    cudaMemcpy(d, g.data(), words * 4, cudaMemcpyHostToDevice);
    for (int rep = 0; rep < 2; rep++) {
        chase_global<<<BLOCKS, 1>>>(d, 0, lines, o1);
        chase_global<<<BLOCKS, 1>>>(d, 0, lines, o2);
        cudaDeviceSynchronize();
        report("global 16 KiB: launch 1 (after memcpy)", o1, lines);
        report("global 16 KiB: launch 2, queued back to back", o2, lines);
        chase_global<<<BLOCKS, 1>>>(d, 0, lines, o1);
        cudaDeviceSynchronize();
        report("global 16 KiB: launch 3, after a host wait", o1, lines);
        stream<<<BLOCKS * 8, 256>>>(sin, sout, sn);
        chase_global<<<BLOCKS, 1>>>(d, 0, lines, o1);
        cudaDeviceSynchronize();
        report("global 16 KiB: launch 4, after a 256 MiB streaming kernel", o1, lines);
    }
    // Constant: 16 words 64 bytes apart (1 KiB) and 256 (16 KiB).
    for (int cl : {16, 256}) {
        std::vector<unsigned> c = cycle(cl, 16, CN);
        cudaMemcpyToSymbol(cnext, c.data(), CN * 4);
        for (int rep = 0; rep < 2; rep++) {
            chase_const<<<BLOCKS, 1>>>(0, cl, o1);
            chase_const<<<BLOCKS, 1>>>(0, cl, o2);
            cudaDeviceSynchronize();
            char buf[96];
            snprintf(buf, sizeof buf, "constant %d KiB: launch 1", cl * 64 / 1024);
            report(buf, o1, cl);
            snprintf(buf, sizeof buf, "constant %d KiB: launch 2, queued back to back", cl * 64 / 1024);
            report(buf, o2, cl);
            chase_const<<<BLOCKS, 1>>>(0, cl, o1);
            cudaDeviceSynchronize();
            snprintf(buf, sizeof buf, "constant %d KiB: launch 3, after a host wait", cl * 64 / 1024);
            report(buf, o1, cl);
        }
    }
    cudaError_t e = cudaGetLastError();
    printf("status: %s\n", cudaGetErrorString(e));
    return 0;
}
