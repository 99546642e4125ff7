// F: when do partial stores to one sector merge before L2? Nsight Compute counts the L2 write
// sectors (lts__t_sectors_srcunit_tex_op_write.sum) of each launch:
//   ncu --metrics lts__t_sectors_srcunit_tex_op_write.sum ./merge
// k_gap: each warp stores byte 0 of 32 words (4 sectors), waits `gap` cycles, stores byte 1 of the
//        same words: 4 L2 write sectors per warp if merged, 8 if not.
// k_warps: after a barrier, the 4 warps of a block each store their own byte of the same 32 words
//        (4 sectors): 4 per block if merged, 16 if not.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void k_gap(unsigned char *p, long long gap) {
    unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    unsigned char *b = p + (size_t)w * 256 + lane * 4;
    long long t0 = clock64(), t = t0;
    b[0] = (unsigned char)(1 + (t0 < 0)); // issued after t0 is read
    while (t - t0 < gap) t = clock64();
    b[1] = (unsigned char)(2 + (t < 0)); // issued after the wait
}
__global__ void k_warps(unsigned char *p) {
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    p[(size_t)blockIdx.x * 256 + lane * 4 + warp] = 3;
}
int main() {
    unsigned char *p;
    cudaMalloc(&p, 64 << 20);
    cudaMemset(p, 0, 64 << 20);
    long long gaps[] = {0, 4, 8, 16, 32, 64, 128, 512};
    for (long long g : gaps) {
        k_gap<<<132, 32>>>(p, g); // one warp per SM
        cudaDeviceSynchronize();
    }
    for (long long g : gaps) {
        k_gap<<<132 * 4, 512>>>(p, g); // 64 warps per SM
        cudaDeviceSynchronize();
    }
    k_warps<<<132, 128>>>(p);
    k_warps<<<132 * 16, 128>>>(p);
    cudaDeviceSynchronize();
    printf("launches: k_gap 1 warp/SM gaps 0 4 8 16 32 64 128 512 (132 warps, 4 sectors each store);"
           " k_gap 64 warps/SM same gaps (8448 warps); k_warps 132 blocks; k_warps 2112 blocks\n");
    return 0;
}
