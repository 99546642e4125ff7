// V: L2 write requests by the lines a warp's store touches and their spacing (issue 38: suite38's
// naive transposes store 4 B into each of 32 lines 8 KiB (n = 2048) or 16 KiB (n = 4096) apart
// and reach 29.6-30.4 lines per clock GPU-wide where ubench E's 8 B into 16 lines 4 KiB apart
// reach 40.8). nvcc -O3 -arch=sm_90. 132 x 8 blocks of 256 threads write a region of 16 MiB that
// stays in L2, 20 passes: lane l of warp w stores `bytes` (4 or 8: pairs of lanes share a line)
// at line (w's group) + l' x stride, l' = l or l / 2, each warp a different column within the
// lines so that a pass writes every word once. Output: `V bytes=.. lines_per_warp=..
// stride=.. us=.. lines_per_clk=..` (at 1.98 GHz).
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

// words: region size in words; stride_words: distance of a warp's lines; per: lanes per line (1 or 2).
__global__ void store(float* buf, unsigned words, unsigned stride_words, unsigned per, int reps) {
    const unsigned nthreads = gridDim.x * blockDim.x;
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lane = threadIdx.x & 31, warp = tid >> 5, nwarps = nthreads >> 5;
    const unsigned lines = 32 / per;               // lines one warp-store touches
    const unsigned group = lines * stride_words;   // words one group of lines spans
    const unsigned cols = stride_words / per;      // warp-stores per group (column positions)
    const unsigned groups = words / group;
    for (int r = 0; r < reps; r++)
        for (unsigned w = warp; w < cols * groups; w += nwarps) {
            const unsigned c = w % cols, g = w / cols;
            buf[g * group + (lane / per) * stride_words + c * per + (lane % per)] = (float)r;
        }
}

int main() {
    float* buf;
    const unsigned words = 4u << 20;  // 16 MiB
    CK(cudaMalloc(&buf, (size_t)words * 4));
    CK(cudaMemset(buf, 0, (size_t)words * 4));
    int nsm;
    CK(cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (unsigned per : {1u, 2u}) {
        for (unsigned stride_bytes : {128u, 256u, 512u, 1024u, 2048u, 4096u, 8192u, 16384u, 65536u}) {
            const unsigned sw = stride_bytes / 4;
            const int reps = 20;
            store<<<nsm * 8, 256>>>(buf, words, sw, per, 1);
            CK(cudaDeviceSynchronize());
            CK(cudaEventRecord(a));
            store<<<nsm * 8, 256>>>(buf, words, sw, per, reps);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            const double line_writes = (double)words / per * reps;  // one per (lane group, line)
            printf("V bytes=%u lines_per_warp=%u stride=%u us=%.1f lines_per_clk=%.1f\n", 4 * per,
                   32 / per, stride_bytes, ms * 1e3, line_writes / (ms * 1e-3 * 1.98e9));
        }
    }
    return 0;
}
