// The shared-memory carveout the driver picks for a launch (issue 39: the simulator predicts
// `launch__occupancy_limit_shared_mem` 2-10x too high on bulk_copy, sgemm_cp_async, hgemm and
// stmatrix). One kernel with S bytes of dynamic shared memory, blocks of T threads and R
// registers a thread (-maxrregcount through two builds: `launch_bounds` below is only a cap);
// run under Nsight Compute for launch__shared_mem_config_size, launch__occupancy_limit_* and
// launch__shared_mem_per_block_driver: which carveout (KiB) the driver chose for each (S, T).
// Build and run: nvcc -arch=sm_90 -O3 carveout.cu -o carveout && ./carveout
#include <cstdio>
#include <cuda_runtime.h>

__global__ void touch(float* out, int n) {
    extern __shared__ float s[];
    int i = threadIdx.x;
    if (i < n) s[i] = (float)i;
    __syncthreads();
    out[blockIdx.x * blockDim.x + i] = i < n ? s[n - 1 - i] : 0.0f;
}

int main() {
    float* out;
    cudaMalloc(&out, 1 << 24);
    cudaFuncSetAttribute(touch, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024);
    printf("threads,smem_bytes\n");
    for (int t : {32, 64, 128, 256, 512, 1024}) {
        for (int kb : {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 100}) {
            int bytes = kb * 1024;
            touch<<<264, t, bytes>>>(out, bytes / 4 < t ? bytes / 4 : t);
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) { printf("error %s\n", cudaGetErrorString(e)); return 1; }
            printf("%d,%d\n", t, bytes);
        }
    }
    return 0;
}
