// Stand-alone timing harness for the bundled add_constant PTX on a real NVIDIA GPU.
//
// It loads kernels/ptx/add_constant.ptx through the CUDA driver API (the very PTX the simulator
// executes), fills `const_values` and the `values` buffer with k (iota), checks the sums, and
// times every kernel with CUDA events as workloads.md prescribes: 100 warm-up launches, then
// 100 launches between two events, reporting the mean per launch; it also reports the median of
// 100 single-launch timings. The Rust `validate` binary supersedes this once it can launch
// workloads itself; the harness stays as the record of how the committed measurements were made.
//
// Build and run (on a machine with a GPU and the CUDA toolkit), from the repository root:
//   nvcc -O2 -o /tmp/add_constant_timing validate/harness/add_constant_timing.cu -lcuda
//   /tmp/add_constant_timing kernels/ptx/add_constant.ptx 12800000
//   /tmp/add_constant_timing kernels/ptx/add_constant.ptx 128000 --profile   # one launch each, for ncu

#include <cuda.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                    \
  do {                                                                           \
    CUresult r_ = (x);                                                           \
    if (r_ != CUDA_SUCCESS) {                                                    \
      const char* s_ = nullptr;                                                  \
      cuGetErrorString(r_, &s_);                                                 \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, s_);     \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static const char* kPatterns[] = {"one_access_per_block", "one_access_per_warp", "one_access_per_thread", "pseudo_random"};

static int expected_index(int pattern, int i) {
  const int N = 16384;
  int tid = i % 1024, bid = i / 1024;
  switch (pattern) {
    case 0: return bid % N;
    case 1: return (tid / 32) % N;
    case 2: return tid % N;
    default: return (tid * 1357) % N;
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s add_constant.ptx N [--profile]\n", argv[0]);
    return 2;
  }
  bool profile = argc > 3 && !strcmp(argv[3], "--profile");
  int n = atoi(argv[2]);
  FILE* f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  std::string ptx;
  char buf[65536];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) ptx.append(buf, got);
  fclose(f);

  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  char name[256];
  CK(cuDeviceGetName(name, sizeof name, dev));
  int driver = 0;
  CK(cuDriverGetVersion(&driver));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CK(cuModuleLoadData(&mod, ptx.c_str()));

  const int N = 16384;
  std::vector<int> values(N);
  for (int k = 0; k < N; k++) values[k] = k;
  CUdeviceptr cvals;
  size_t csize;
  CK(cuModuleGetGlobal(&cvals, &csize, mod, "const_values"));
  CK(cuMemcpyHtoD(cvals, values.data(), N * sizeof(int)));
  CUdeviceptr d_inputs, d_sums, d_values;
  CK(cuMemAlloc(&d_inputs, (size_t)n * 4));
  CK(cuMemAlloc(&d_sums, (size_t)n * 4));
  CK(cuMemAlloc(&d_values, N * 4));
  CK(cuMemsetD32(d_inputs, 0, n));
  CK(cuMemcpyHtoD(d_values, values.data(), N * sizeof(int)));

  printf("# device: %s, driver %d, n = %d\n", name, driver, n);
  printf("%-24s %-9s %12s %12s %s\n", "workload", "launch", "mean_us", "median_us", "check");
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  std::vector<int> sums(n);
  unsigned grid = (n + 1023) / 1024;
  for (int p = 0; p < 4; p++) {
    for (int g = 0; g < 2; g++) {
      std::string kname = std::string("add_constant_") + (g ? "global" : "constant") + "_memory_" + kPatterns[p];
      CUfunction fn;
      CK(cuModuleGetFunction(&fn, mod, kname.c_str()));
      void* args_c[] = {&d_sums, &d_inputs, &n};
      void* args_g[] = {&d_sums, &d_inputs, &d_values, &n};
      void** args = g ? args_g : args_c;
      CK(cuMemsetD32(d_sums, 0xffffffff, n));
      auto launch = [&] { CK(cuLaunchKernel(fn, grid, 1, 1, 1024, 1, 1, 0, 0, args, nullptr)); };
      if (profile) {
        launch();
        CK(cuCtxSynchronize());
      } else {
        for (int i = 0; i < 100; i++) launch();
        CK(cuEventRecord(e0, 0));
        for (int i = 0; i < 100; i++) launch();
        CK(cuEventRecord(e1, 0));
        CK(cuEventSynchronize(e1));
      }
      float ms = 0;
      if (!profile) CK(cuEventElapsedTime(&ms, e0, e1));
      std::vector<float> singles;
      for (int i = 0; !profile && i < 100; i++) {
        CK(cuEventRecord(e0, 0));
        launch();
        CK(cuEventRecord(e1, 0));
        CK(cuEventSynchronize(e1));
        float t;
        CK(cuEventElapsedTime(&t, e0, e1));
        singles.push_back(t);
      }
      std::sort(singles.begin(), singles.end());
      CK(cuMemcpyDtoH(sums.data(), d_sums, (size_t)n * 4));
      int bad = 0;
      for (int i = 0; i < n; i++) bad += sums[i] != expected_index(p, i);
      printf("%-24s %-9s %12.2f %12.2f %s\n", kPatterns[p], g ? "global" : "constant", ms * 1000 / 100,
             singles.empty() ? 0.0 : singles[singles.size() / 2] * 1000, bad ? "WRONG" : "ok");
    }
  }
  return 0;
}
