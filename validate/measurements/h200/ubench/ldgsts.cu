// How the H200 counts the shared-memory side of LDGSTS (cp.async), issue 39; nvcc -O3 -arch=sm_90.
//
// tests/fixtures/tensor's cp_async GEMM measures 368 LDGSTS shared wavefronts and 63 bank
// conflicts where the simulator, which treats the shared write like an STS of the same width,
// predicts 224 and 0. Here one warp issues one LDGSTS per launch, so Nsight Compute's counters of
// that launch are the counters of one instruction:
//   size 4, 8, 16 bytes; .ca (LDGSTS.ACCESS) or, for 16, .cg (LDGSTS.BYPASS);
//   shared destination of lane i at element i * s_stride (elements of `size` bytes);
//   global source of lane i at element i * g_stride; lanes active: 32 or the first 16;
//   src-size 0 (zero fill: nothing read from global) or the full size.
// Does the shared side depend on the global side (sectors, lines) as well as on the banks?
// Output: one line per launch, `L id=.. size=.. cg=.. s_stride=.. g_stride=.. lanes=.. zfill=..`;
// the counters come from ncu (run_2026-12-07.sh), matched by launch order (id).
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

template <int SIZE, bool CG>
__global__ void one(const char* src, int* out, int s_stride, int g_stride, int lanes, int zfill, int warm = 0) {
    __shared__ __align__(128) char buf[32 * 32 * 16];
    int lane = threadIdx.x;
    if (lane < lanes) {
        unsigned dst = (unsigned)__cvta_generic_to_shared(buf + (size_t)lane * s_stride * SIZE);
        const char* s = src + (size_t)lane * g_stride * SIZE;
        // warm: the lane's line is brought into L1 first (the load's value feeds the address,
        // so the LDGSTS waits for it): an LDGSTS that hits.
        if (warm) s += (__ldca((const int*)s) == 0x7fffffff);
        int n = zfill ? 0 : SIZE;
        if (CG)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(s), "r"(n));
        else
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(s), "n"(SIZE), "r"(n));
    }
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads();
    out[lane] = ((int*)buf)[lane * 4];
}

// Third call (2026-12-07): the pattern of tests/fixtures/tensor's cp_async GEMM, where the
// per-line rule over-counts: the two half-warps copy 16 words (64 B) each from two rows `pitch`
// bytes apart, at byte `off` of the row, into 128 contiguous shared bytes; `warps` warps of one
// block, warp w on rows 2w and 2w + 1.
__global__ void rows(const char* src, int* out, int pitch, int off) {
    __shared__ __align__(128) char buf[8 * 128];
    int t = threadIdx.x, row = t / 16, col = t % 16;
    unsigned dst = (unsigned)__cvta_generic_to_shared(buf + 4 * t);
    const char* s = src + (size_t)row * pitch + off + 4 * col;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, 4;\n" ::"r"(dst), "l"(s));
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads();
    out[t] = ((int*)buf)[t];
}

static int id = 0;

template <int SIZE, bool CG>
static void launch(const char* src, int* out, int s, int g, int lanes, int zfill, int warm = 0) {
    one<SIZE, CG><<<1, 32>>>(src, out, s, g, lanes, zfill, warm);
    CK(cudaDeviceSynchronize());
    printf("L id=%d size=%d cg=%d s_stride=%d g_stride=%d lanes=%d zfill=%d warm=%d\n", id++, SIZE, CG ? 1 : 0, s, g,
           lanes, zfill, warm);
}

template <int SIZE, bool CG>
static void sweep(const char* src, int* out) {
    const int s_strides[] = {1, 2, 3, 4, 8, 32};
    const int g_strides[] = {1, 2, 8, 32, 128};
    for (int s : s_strides)
        for (int g : g_strides) launch<SIZE, CG>(src, out, s, g, 32, 0);
    launch<SIZE, CG>(src, out, 1, 1, 16, 0);
    launch<SIZE, CG>(src, out, 1, 1, 32, 1);
    launch<SIZE, CG>(src, out, 2, 1, 32, 1);
    launch<SIZE, CG>(src, out, 0, 1, 32, 0);  // every lane to one shared address
    launch<SIZE, CG>(src, out, 1, 0, 32, 0);  // every lane from one global address
}

int main() {
    char* src;
    int* out;
    CK(cudaMalloc(&src, 64 << 20));
    CK(cudaMemset(src, 1, 64 << 20));
    CK(cudaMalloc(&out, 4096));
    sweep<4, false>(src, out);
    sweep<8, false>(src, out);
    sweep<16, false>(src, out);
    sweep<16, true>(src, out);
    // Second call (2026-12-07): the same with the lines in L1 first (.ca hits; .cg bypasses L1).
    for (int g : {1, 2, 8, 32}) {
        launch<4, false>(src, out, 1, g, 32, 0, 1);
        launch<4, false>(src, out, 8, g, 32, 0, 1);
        launch<16, false>(src, out, 1, g, 32, 0, 1);
        launch<16, true>(src, out, 1, g, 32, 0, 1);
    }
    for (int warps : {1, 8})
        for (int pitch : {64, 128, 160, 192, 256, 4096})
            for (int off : {0, 64, 96}) {
                rows<<<1, 32 * warps>>>(src, out, pitch, off);
                CK(cudaDeviceSynchronize());
                printf("R id=%d warps=%d pitch=%d off=%d\n", id++, warps, pitch, off);
            }
    return 0;
}
