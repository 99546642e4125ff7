// Launches one kernel of a bundled PTX file once (after one warm-up launch), for Nsight Compute's
// warp-state and pipeline sections. Buffers are zero-filled; values do not change the kernels'
// control flow except ray's, which has none that depends on memory.
//   nvcc -O2 -o launch_ptx launch_ptx.cu -lcuda
//   ./launch_ptx FILE.ptx KERNEL GX GY BX BY ARG...   (ARG: b:BYTES a zeroed buffer, u:VALUE a u32)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <string>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        CUresult r_ = (x);                                                                     \
        if (r_ != CUDA_SUCCESS) {                                                              \
            const char *s_ = nullptr;                                                          \
            cuGetErrorString(r_, &s_);                                                         \
            printf("CUDA error %s at %s:%d\n", s_ ? s_ : "?", __FILE__, __LINE__);             \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 7) {
        printf("usage: %s FILE.ptx KERNEL GX GY BX BY ARG...\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { printf("cannot open %s\n", argv[1]); return 1; }
    std::string ptx;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) ptx.append(buf, n);
    fclose(f);
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CK(cuModuleLoadData(&mod, ptx.c_str()));
    CUfunction fn;
    CK(cuModuleGetFunction(&fn, mod, argv[2]));
    unsigned gx = atoi(argv[3]), gy = atoi(argv[4]), bx = atoi(argv[5]), by = atoi(argv[6]);
    std::vector<CUdeviceptr> ptrs;
    std::vector<unsigned> vals;
    ptrs.reserve(16);
    vals.reserve(16);
    std::vector<void *> args;
    for (int i = 7; i < argc; i++) {
        if (!strncmp(argv[i], "b:", 2)) {
            size_t bytes = strtoull(argv[i] + 2, nullptr, 10);
            CUdeviceptr p;
            CK(cuMemAlloc(&p, bytes));
            CK(cuMemsetD8(p, 0, bytes));
            ptrs.push_back(p);
            args.push_back(&ptrs.back());
        } else if (!strncmp(argv[i], "u:", 2)) {
            vals.push_back((unsigned)strtoul(argv[i] + 2, nullptr, 10));
            args.push_back(&vals.back());
        } else {
            printf("bad argument %s\n", argv[i]);
            return 2;
        }
    }
    for (int rep = 0; rep < 2; rep++)
        CK(cuLaunchKernel(fn, gx, gy, 1, bx, by, 1, 0, 0, args.data(), nullptr));
    CK(cuCtxSynchronize());
    printf("ok %s\n", argv[2]);
    return 0;
}
