// gpumemsim's CUDA shim for clang without the CUDA toolkit (`clang -x cuda --cuda-device-only
// -nocudainc -nocudalib`): the qualifiers, built-in variables and the common device intrinsics that
// nvcc and NVRTC predefine, written with clang's own NVVM builtins. `sim` puts it in front of a
// user's `.cu` when it compiles with clang; NVRTC needs none of it.
//
// Not available this way: the CUDA math library (expf, sinf, ... live in libdevice, which comes
// with a CUDA toolkit); use NVRTC for them, or the intrinsics below (__expf, __sinf, ...).
// Sources that carry their own shim (they test `defined(__global__)`, as kernels/*.cu do) are left
// alone.
#if defined(__clang__) && !defined(__CUDACC_RTC__) && !defined(__global__)
#define GPUMEMSIM_CUDA_SHIM 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#include <__clang_cuda_builtin_vars.h>

typedef __SIZE_TYPE__ size_t;

#define __GMS_D static __device__ __forceinline__

// ---- clocks -----------------------------------------------------------------------------------
__GMS_D long long clock64() { return (long long)__nvvm_read_ptx_sreg_clock64(); }
__GMS_D int clock() { return __nvvm_read_ptx_sreg_clock(); }

// ---- barriers and fences ----------------------------------------------------------------------
__GMS_D void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
__GMS_D int __syncthreads_count(int p) { return __nvvm_bar0_popc(p); }
__GMS_D int __syncthreads_and(int p) { return __nvvm_bar0_and(p); }
__GMS_D int __syncthreads_or(int p) { return __nvvm_bar0_or(p); }
__GMS_D void __threadfence_block() { __nvvm_membar_cta(); }
__GMS_D void __threadfence() { __nvvm_membar_gl(); }
__GMS_D void __threadfence_system() { __nvvm_membar_sys(); }

// ---- warp vote, shuffle, match, reduce --------------------------------------------------------
__GMS_D int __all_sync(unsigned mask, int p) { return __nvvm_vote_all_sync(mask, p); }
__GMS_D int __any_sync(unsigned mask, int p) { return __nvvm_vote_any_sync(mask, p); }
__GMS_D int __uni_sync(unsigned mask, int p) { return __nvvm_vote_uni_sync(mask, p); }
__GMS_D unsigned __ballot_sync(unsigned mask, int p) { return __nvvm_vote_ballot_sync(mask, p); }
__GMS_D unsigned __activemask() { return __nvvm_activemask(); }
__GMS_D unsigned __lanemask_lt() { return __nvvm_read_ptx_sreg_lanemask_lt(); }

#define __GMS_SHFL(NAME, INT, FLT, CLAMP)                                                          \
    __GMS_D int NAME(unsigned m, int v, int o, int w = 32) {                                       \
        return INT(m, v, o, ((32 - w) << 8) | (CLAMP));                                            \
    }                                                                                              \
    __GMS_D unsigned NAME(unsigned m, unsigned v, int o, int w = 32) {                             \
        return (unsigned)INT(m, (int)v, o, ((32 - w) << 8) | (CLAMP));                             \
    }                                                                                              \
    __GMS_D float NAME(unsigned m, float v, int o, int w = 32) {                                   \
        return FLT(m, v, o, ((32 - w) << 8) | (CLAMP));                                            \
    }                                                                                              \
    __GMS_D long long NAME(unsigned m, long long v, int o, int w = 32) {                           \
        int lo = INT(m, (int)v, o, ((32 - w) << 8) | (CLAMP));                                     \
        int hi = INT(m, (int)(v >> 32), o, ((32 - w) << 8) | (CLAMP));                             \
        return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);               \
    }                                                                                              \
    __GMS_D unsigned long long NAME(unsigned m, unsigned long long v, int o, int w = 32) {         \
        return (unsigned long long)NAME(m, (long long)v, o, w);                                    \
    }                                                                                              \
    __GMS_D double NAME(unsigned m, double v, int o, int w = 32) {                                 \
        return __builtin_bit_cast(double, NAME(m, __builtin_bit_cast(long long, v), o, w));        \
    }
__GMS_SHFL(__shfl_sync, __nvvm_shfl_sync_idx_i32, __nvvm_shfl_sync_idx_f32, 0x1f)
__GMS_SHFL(__shfl_up_sync, __nvvm_shfl_sync_up_i32, __nvvm_shfl_sync_up_f32, 0)
__GMS_SHFL(__shfl_down_sync, __nvvm_shfl_sync_down_i32, __nvvm_shfl_sync_down_f32, 0x1f)
__GMS_SHFL(__shfl_xor_sync, __nvvm_shfl_sync_bfly_i32, __nvvm_shfl_sync_bfly_f32, 0x1f)
#undef __GMS_SHFL

__GMS_D unsigned __match_any_sync(unsigned m, unsigned v) { return __nvvm_match_any_sync_i32(m, v); }
__GMS_D unsigned __match_any_sync(unsigned m, int v) { return __nvvm_match_any_sync_i32(m, v); }
__GMS_D unsigned __match_any_sync(unsigned m, unsigned long long v) {
    return __nvvm_match_any_sync_i64(m, v);
}
__GMS_D unsigned __match_any_sync(unsigned m, long long v) { return __nvvm_match_any_sync_i64(m, v); }
__GMS_D unsigned __match_all_sync(unsigned m, unsigned v, int* p) {
    return __nvvm_match_all_sync_i32p(m, v, p);
}
__GMS_D unsigned __match_all_sync(unsigned m, int v, int* p) {
    return __nvvm_match_all_sync_i32p(m, v, p);
}
__GMS_D unsigned __match_all_sync(unsigned m, unsigned long long v, int* p) {
    return __nvvm_match_all_sync_i64p(m, v, p);
}
#if __CUDA_ARCH__ >= 800
__GMS_D unsigned __reduce_add_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_add(v, m); }
__GMS_D int __reduce_add_sync(unsigned m, int v) { return __nvvm_redux_sync_add(v, m); }
__GMS_D unsigned __reduce_min_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_umin(v, m); }
__GMS_D int __reduce_min_sync(unsigned m, int v) { return __nvvm_redux_sync_min(v, m); }
__GMS_D unsigned __reduce_max_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_umax(v, m); }
__GMS_D int __reduce_max_sync(unsigned m, int v) { return __nvvm_redux_sync_max(v, m); }
__GMS_D unsigned __reduce_and_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_and(v, m); }
__GMS_D unsigned __reduce_or_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_or(v, m); }
__GMS_D unsigned __reduce_xor_sync(unsigned m, unsigned v) { return __nvvm_redux_sync_xor(v, m); }
#endif

// ---- integer intrinsics -----------------------------------------------------------------------
__GMS_D int __popc(unsigned x) { return __builtin_popcount(x); }
__GMS_D int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__GMS_D int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
__GMS_D int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
__GMS_D int __ffs(int x) { return x == 0 ? 0 : __builtin_ctz((unsigned)x) + 1; }
__GMS_D int __ffsll(long long x) { return x == 0 ? 0 : __builtin_ctzll((unsigned long long)x) + 1; }
__GMS_D unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
__GMS_D unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
__GMS_D unsigned __byte_perm(unsigned x, unsigned y, unsigned s) { return __nvvm_prmt(x, y, s); }
__GMS_D unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    return (unsigned)((((unsigned long long)hi << 32 | lo) << (s & 31)) >> 32);
}
__GMS_D unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    return (unsigned)(((unsigned long long)hi << 32 | lo) >> (s & 31));
}
__GMS_D int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
__GMS_D unsigned __umulhi(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a * b) >> 32);
}
__GMS_D long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
__GMS_D unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
__GMS_D int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
__GMS_D unsigned __uhadd(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a + b) >> 1);
}
__GMS_D int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
__GMS_D unsigned __urhadd(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a + b + 1) >> 1);
}
__GMS_D int __mul24(int a, int b) { return __nvvm_mul24_i(a, b); }
__GMS_D unsigned __umul24(unsigned a, unsigned b) { return __nvvm_mul24_ui(a, b); }
__GMS_D int __sad(int a, int b, unsigned c) { return __nvvm_sad_i(a, b, c); }
__GMS_D unsigned __usad(unsigned a, unsigned b, unsigned c) { return __nvvm_sad_ui(a, b, c); }

#define __GMS_MINMAX(T)                                                                            \
    __GMS_D T min(T a, T b) { return a < b ? a : b; }                                              \
    __GMS_D T max(T a, T b) { return a > b ? a : b; }
__GMS_MINMAX(int)
__GMS_MINMAX(unsigned)
__GMS_MINMAX(long long)
__GMS_MINMAX(unsigned long long)
#undef __GMS_MINMAX
__GMS_D float min(float a, float b) { return __builtin_fminf(a, b); }
__GMS_D float max(float a, float b) { return __builtin_fmaxf(a, b); }
__GMS_D double min(double a, double b) { return __builtin_fmin(a, b); }
__GMS_D double max(double a, double b) { return __builtin_fmax(a, b); }
__GMS_D unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
__GMS_D unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }

// ---- float functions that need no libdevice ---------------------------------------------------
__GMS_D float sqrtf(float x) { return __builtin_sqrtf(x); }
__GMS_D double sqrt(double x) { return __builtin_sqrt(x); }
__GMS_D float fabsf(float x) { return __builtin_fabsf(x); }
__GMS_D double fabs(double x) { return __builtin_fabs(x); }
__GMS_D float fminf(float a, float b) { return __builtin_fminf(a, b); }
__GMS_D float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
__GMS_D double fmin(double a, double b) { return __builtin_fmin(a, b); }
__GMS_D double fmax(double a, double b) { return __builtin_fmax(a, b); }
__GMS_D float floorf(float x) { return __builtin_floorf(x); }
__GMS_D float ceilf(float x) { return __builtin_ceilf(x); }
__GMS_D float truncf(float x) { return __builtin_truncf(x); }
__GMS_D float rintf(float x) { return __builtin_rintf(x); }
__GMS_D double floor(double x) { return __builtin_floor(x); }
__GMS_D double ceil(double x) { return __builtin_ceil(x); }
__GMS_D double trunc(double x) { return __builtin_trunc(x); }
__GMS_D float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
__GMS_D double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
__GMS_D float copysignf(float a, float b) { return __builtin_copysignf(a, b); }
__GMS_D float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
__GMS_D float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
__GMS_D float __exp2f(float x) { return __nvvm_ex2_approx_f(x); }
__GMS_D float __logf(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
__GMS_D float __log2f(float x) { return __nvvm_lg2_approx_f(x); }
__GMS_D float __sinf(float x) { return __nvvm_sin_approx_f(x); }
__GMS_D float __cosf(float x) { return __nvvm_cos_approx_f(x); }
__GMS_D float __fdividef(float a, float b) { return __nvvm_div_approx_f(a, b); }
__GMS_D float __saturatef(float x) { return __nvvm_saturate_f(x); }
__GMS_D float __fmaf_rn(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
__GMS_D float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
__GMS_D float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
__GMS_D float __frcp_rn(float x) { return __nvvm_rcp_rn_f(x); }
__GMS_D float __fsqrt_rn(float x) { return __nvvm_sqrt_rn_f(x); }
__GMS_D int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
__GMS_D unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
__GMS_D float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__GMS_D float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
__GMS_D long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
__GMS_D double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
__GMS_D int __float2int_rn(float x) { return __nvvm_f2i_rn(x); }
__GMS_D int __float2int_rz(float x) { return __nvvm_f2i_rz(x); }
__GMS_D unsigned __float2uint_rn(float x) { return __nvvm_f2ui_rn(x); }
__GMS_D float __int2float_rn(int x) { return __nvvm_i2f_rn(x); }

// ---- atomics (generic addresses; clang infers .global or .shared where it can) -----------------
__GMS_D int atomicAdd(int* p, int v) { return __nvvm_atom_add_gen_i(p, v); }
__GMS_D unsigned atomicAdd(unsigned* p, unsigned v) {
    return (unsigned)__nvvm_atom_add_gen_i((int*)p, (int)v);
}
__GMS_D unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return (unsigned long long)__nvvm_atom_add_gen_ll((long long*)p, (long long)v);
}
__GMS_D float atomicAdd(float* p, float v) { return __nvvm_atom_add_gen_f(p, v); }
#if __CUDA_ARCH__ >= 600
__GMS_D double atomicAdd(double* p, double v) { return __nvvm_atom_add_gen_d(p, v); }
#endif
__GMS_D int atomicSub(int* p, int v) { return __nvvm_atom_add_gen_i(p, -v); }
__GMS_D unsigned atomicSub(unsigned* p, unsigned v) {
    return (unsigned)__nvvm_atom_add_gen_i((int*)p, -(int)v);
}
__GMS_D int atomicExch(int* p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
__GMS_D unsigned atomicExch(unsigned* p, unsigned v) {
    return (unsigned)__nvvm_atom_xchg_gen_i((int*)p, (int)v);
}
__GMS_D unsigned long long atomicExch(unsigned long long* p, unsigned long long v) {
    return (unsigned long long)__nvvm_atom_xchg_gen_ll((long long*)p, (long long)v);
}
__GMS_D float atomicExch(float* p, float v) {
    return __int_as_float(__nvvm_atom_xchg_gen_i((int*)p, __float_as_int(v)));
}
__GMS_D int atomicMin(int* p, int v) { return __nvvm_atom_min_gen_i(p, v); }
__GMS_D unsigned atomicMin(unsigned* p, unsigned v) { return __nvvm_atom_min_gen_ui(p, v); }
__GMS_D long long atomicMin(long long* p, long long v) { return __nvvm_atom_min_gen_ll(p, v); }
__GMS_D unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
    return __nvvm_atom_min_gen_ull(p, v);
}
__GMS_D int atomicMax(int* p, int v) { return __nvvm_atom_max_gen_i(p, v); }
__GMS_D unsigned atomicMax(unsigned* p, unsigned v) { return __nvvm_atom_max_gen_ui(p, v); }
__GMS_D long long atomicMax(long long* p, long long v) { return __nvvm_atom_max_gen_ll(p, v); }
__GMS_D unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
    return __nvvm_atom_max_gen_ull(p, v);
}
__GMS_D unsigned atomicInc(unsigned* p, unsigned v) { return __nvvm_atom_inc_gen_ui(p, v); }
__GMS_D unsigned atomicDec(unsigned* p, unsigned v) { return __nvvm_atom_dec_gen_ui(p, v); }
__GMS_D int atomicCAS(int* p, int c, int v) { return __nvvm_atom_cas_gen_i(p, c, v); }
__GMS_D unsigned atomicCAS(unsigned* p, unsigned c, unsigned v) {
    return (unsigned)__nvvm_atom_cas_gen_i((int*)p, (int)c, (int)v);
}
__GMS_D unsigned long long atomicCAS(unsigned long long* p, unsigned long long c,
                                     unsigned long long v) {
    return (unsigned long long)__nvvm_atom_cas_gen_ll((long long*)p, (long long)c, (long long)v);
}
#define __GMS_BITWISE(NAME, OP)                                                                    \
    __GMS_D int NAME(int* p, int v) { return __nvvm_atom_##OP##_gen_i(p, v); }                     \
    __GMS_D unsigned NAME(unsigned* p, unsigned v) {                                               \
        return (unsigned)__nvvm_atom_##OP##_gen_i((int*)p, (int)v);                                \
    }                                                                                              \
    __GMS_D unsigned long long NAME(unsigned long long* p, unsigned long long v) {                 \
        return (unsigned long long)__nvvm_atom_##OP##_gen_ll((long long*)p, (long long)v);         \
    }
__GMS_BITWISE(atomicAnd, and)
__GMS_BITWISE(atomicOr, or)
__GMS_BITWISE(atomicXor, xor)
#undef __GMS_BITWISE

// ---- read-only loads --------------------------------------------------------------------------
__GMS_D int __ldg(const int* p) { return __nvvm_ldg_i(p); }
__GMS_D unsigned __ldg(const unsigned* p) { return __nvvm_ldg_ui(p); }
__GMS_D long long __ldg(const long long* p) { return __nvvm_ldg_ll(p); }
__GMS_D unsigned long long __ldg(const unsigned long long* p) { return __nvvm_ldg_ull(p); }
__GMS_D float __ldg(const float* p) { return __nvvm_ldg_f(p); }
__GMS_D double __ldg(const double* p) { return __nvvm_ldg_d(p); }
__GMS_D unsigned char __ldg(const unsigned char* p) { return __nvvm_ldg_uc(p); }

// ---- vector types -----------------------------------------------------------------------------
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) double2 { double x, y; };
__GMS_D int2 make_int2(int x, int y) { return int2{x, y}; }
__GMS_D int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
__GMS_D uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }
__GMS_D uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
__GMS_D float2 make_float2(float x, float y) { return float2{x, y}; }
__GMS_D float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
__GMS_D double2 make_double2(double x, double y) { return double2{x, y}; }

// Vector read-only loads: one ld.global.nc.v2/.v4, as CUDA's __ldg of vector types.
typedef float __gms_f2 __attribute__((ext_vector_type(2)));
typedef float __gms_f4 __attribute__((ext_vector_type(4)));
typedef int __gms_i2 __attribute__((ext_vector_type(2)));
typedef int __gms_i4 __attribute__((ext_vector_type(4)));
__GMS_D float2 __ldg(const float2* p) {
    __gms_f2 v = __nvvm_ldg_f2((const __gms_f2*)p);
    return float2{v.x, v.y};
}
__GMS_D float4 __ldg(const float4* p) {
    __gms_f4 v = __nvvm_ldg_f4((const __gms_f4*)p);
    return float4{v.x, v.y, v.z, v.w};
}
__GMS_D int2 __ldg(const int2* p) {
    __gms_i2 v = __nvvm_ldg_i2((const __gms_i2*)p);
    return int2{v.x, v.y};
}
__GMS_D int4 __ldg(const int4* p) {
    __gms_i4 v = __nvvm_ldg_i4((const __gms_i4*)p);
    return int4{v.x, v.y, v.z, v.w};
}
__GMS_D uint2 __ldg(const uint2* p) {
    __gms_i2 v = __nvvm_ldg_i2((const __gms_i2*)p);
    return uint2{(unsigned)v.x, (unsigned)v.y};
}
__GMS_D uint4 __ldg(const uint4* p) {
    __gms_i4 v = __nvvm_ldg_i4((const __gms_i4*)p);
    return uint4{(unsigned)v.x, (unsigned)v.y, (unsigned)v.z, (unsigned)v.w};
}

// ---- texture and surface objects (tex1Dfetch, tex2D, tex2Dgather, surf1D/2Dread/write) ---------
// As NVRTC emits them: `tex.1d.v4.{f32,s32}.s32`, `tex.2d.v4.*.f32`, `tld4.{r,g,b,a}.2d`,
// `suld.b`/`sust.b` with `.trap .clamp .zero`. Result types of 4, 8 or 16 bytes of float, int or
// unsigned (float, float2, float4, int, int2, int4, unsigned, uint2, uint4); surfaces move 4, 8 or
// 16 bytes.
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
enum cudaSurfaceBoundaryMode {
    cudaBoundaryModeZero = 0,
    cudaBoundaryModeClamp = 1,
    cudaBoundaryModeTrap = 2
};
struct __gms_v4 { unsigned x, y, z, w; };
template <class T> struct __gms_tex;
#define __GMS_TEXEL(T, F, ...)                                                                     \
    template <> struct __gms_tex<T> {                                                              \
        static const bool f = F;                                                                   \
        static __device__ __forceinline__ T of(const __gms_v4& v) { return __VA_ARGS__; }          \
    };
#define __GMS_F(c) __builtin_bit_cast(float, v.c)
__GMS_TEXEL(float, true, __GMS_F(x))
__GMS_TEXEL(float2, true, float2{__GMS_F(x), __GMS_F(y)})
__GMS_TEXEL(float4, true, float4{__GMS_F(x), __GMS_F(y), __GMS_F(z), __GMS_F(w)})
__GMS_TEXEL(int, false, (int)v.x)
__GMS_TEXEL(int2, false, int2{(int)v.x, (int)v.y})
__GMS_TEXEL(int4, false, int4{(int)v.x, (int)v.y, (int)v.z, (int)v.w})
__GMS_TEXEL(unsigned, false, v.x)
__GMS_TEXEL(uint2, false, uint2{v.x, v.y})
__GMS_TEXEL(uint4, false, uint4{v.x, v.y, v.z, v.w})
#undef __GMS_F
#undef __GMS_TEXEL
#define __GMS_V4OUT "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
__GMS_D __gms_v4 __gms_tex1d(cudaTextureObject_t t, int x, bool f) {
    __gms_v4 r;
    if (f)
        asm("tex.1d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5}];" : __GMS_V4OUT : "l"(t), "r"(x));
    else
        asm("tex.1d.v4.s32.s32 {%0, %1, %2, %3}, [%4, {%5}];" : __GMS_V4OUT : "l"(t), "r"(x));
    return r;
}
__GMS_D __gms_v4 __gms_tex2d(cudaTextureObject_t t, float x, float y, bool f) {
    __gms_v4 r;
    if (f)
        asm("tex.2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
            : __GMS_V4OUT : "l"(t), "f"(x), "f"(y));
    else
        asm("tex.2d.v4.s32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
            : __GMS_V4OUT : "l"(t), "f"(x), "f"(y));
    return r;
}
#define __GMS_TLD4(C)                                                                              \
    if (f)                                                                                         \
        asm("tld4." C ".2d.v4.f32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"                         \
            : __GMS_V4OUT : "l"(t), "f"(x), "f"(y));                                               \
    else                                                                                           \
        asm("tld4." C ".2d.v4.s32.f32 {%0, %1, %2, %3}, [%4, {%5, %6}];"                         \
            : __GMS_V4OUT : "l"(t), "f"(x), "f"(y));
__GMS_D __gms_v4 __gms_tld4(cudaTextureObject_t t, float x, float y, int comp, bool f) {
    __gms_v4 r;
    if (comp == 1) {
        __GMS_TLD4("g")
    } else if (comp == 2) {
        __GMS_TLD4("b")
    } else if (comp == 3) {
        __GMS_TLD4("a")
    } else {
        __GMS_TLD4("r")
    }
    return r;
}
#undef __GMS_TLD4
#undef __GMS_V4OUT
template <class T> static __device__ __forceinline__ T tex1Dfetch(cudaTextureObject_t t, int x) {
    return __gms_tex<T>::of(__gms_tex1d(t, x, __gms_tex<T>::f));
}
template <class T>
static __device__ __forceinline__ T tex2D(cudaTextureObject_t t, float x, float y) {
    return __gms_tex<T>::of(__gms_tex2d(t, x, y, __gms_tex<T>::f));
}
template <class T>
static __device__ __forceinline__ T tex2Dgather(cudaTextureObject_t t, float x, float y,
                                                int comp = 0) {
    return __gms_tex<T>::of(__gms_tld4(t, x, y, comp, __gms_tex<T>::f));
}

// Surfaces: `n` 32-bit words at byte x (and row y), in mode `m`.
#define __GMS_MODES(X)                                                                             \
    if (m == cudaBoundaryModeZero) {                                                               \
        X("zero")                                                                                  \
    } else if (m == cudaBoundaryModeClamp) {                                                       \
        X("clamp")                                                                                 \
    } else {                                                                                       \
        X("trap")                                                                                  \
    }
__GMS_D void __gms_suld(unsigned* w, int n, cudaSurfaceObject_t s, int x, int y, bool two_d, int m) {
#define __GMS_SULD(M)                                                                              \
    if (two_d) {                                                                                   \
        if (n == 1)                                                                                \
            asm volatile("suld.b.2d.b32." M " {%0}, [%1, {%2, %3}];"                              \
                         : "=r"(w[0]) : "l"(s), "r"(x), "r"(y) : "memory");                        \
        else if (n == 2)                                                                           \
            asm volatile("suld.b.2d.v2.b32." M " {%0, %1}, [%2, {%3, %4}];"                       \
                         : "=r"(w[0]), "=r"(w[1]) : "l"(s), "r"(x), "r"(y) : "memory");            \
        else                                                                                       \
            asm volatile("suld.b.2d.v4.b32." M " {%0, %1, %2, %3}, [%4, {%5, %6}];"               \
                         : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])                          \
                         : "l"(s), "r"(x), "r"(y) : "memory");                                     \
    } else {                                                                                       \
        if (n == 1)                                                                                \
            asm volatile("suld.b.1d.b32." M " {%0}, [%1, {%2}];"                                  \
                         : "=r"(w[0]) : "l"(s), "r"(x) : "memory");                                \
        else if (n == 2)                                                                           \
            asm volatile("suld.b.1d.v2.b32." M " {%0, %1}, [%2, {%3}];"                           \
                         : "=r"(w[0]), "=r"(w[1]) : "l"(s), "r"(x) : "memory");                    \
        else                                                                                       \
            asm volatile("suld.b.1d.v4.b32." M " {%0, %1, %2, %3}, [%4, {%5}];"                   \
                         : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])                          \
                         : "l"(s), "r"(x) : "memory");                                             \
    }
    __GMS_MODES(__GMS_SULD)
#undef __GMS_SULD
}
__GMS_D void __gms_sust(const unsigned* w, int n, cudaSurfaceObject_t s, int x, int y, bool two_d,
                        int m) {
#define __GMS_SUST(M)                                                                              \
    if (two_d) {                                                                                   \
        if (n == 1)                                                                                \
            asm volatile("sust.b.2d.b32." M " [%0, {%1, %2}], {%3};"                              \
                         :: "l"(s), "r"(x), "r"(y), "r"(w[0]) : "memory");                         \
        else if (n == 2)                                                                           \
            asm volatile("sust.b.2d.v2.b32." M " [%0, {%1, %2}], {%3, %4};"                       \
                         :: "l"(s), "r"(x), "r"(y), "r"(w[0]), "r"(w[1]) : "memory");              \
        else                                                                                       \
            asm volatile("sust.b.2d.v4.b32." M " [%0, {%1, %2}], {%3, %4, %5, %6};"               \
                         :: "l"(s), "r"(x), "r"(y), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])     \
                         : "memory");                                                              \
    } else {                                                                                       \
        if (n == 1)                                                                                \
            asm volatile("sust.b.1d.b32." M " [%0, {%1}], {%2};"                                  \
                         :: "l"(s), "r"(x), "r"(w[0]) : "memory");                                 \
        else if (n == 2)                                                                           \
            asm volatile("sust.b.1d.v2.b32." M " [%0, {%1}], {%2, %3};"                           \
                         :: "l"(s), "r"(x), "r"(w[0]), "r"(w[1]) : "memory");                      \
        else                                                                                       \
            asm volatile("sust.b.1d.v4.b32." M " [%0, {%1}], {%2, %3, %4, %5};"                   \
                         :: "l"(s), "r"(x), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])             \
                         : "memory");                                                              \
    }
    __GMS_MODES(__GMS_SUST)
#undef __GMS_SUST
}
#undef __GMS_MODES
template <class T>
static __device__ __forceinline__ T surf2Dread(cudaSurfaceObject_t s, int x, int y,
                                               cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "4, 8 or 16 bytes");
    unsigned w[4];
    __gms_suld(w, sizeof(T) / 4, s, x, y, true, m);
    T r;
    __builtin_memcpy(&r, w, sizeof(T));
    return r;
}
template <class T>
static __device__ __forceinline__ T surf1Dread(cudaSurfaceObject_t s, int x,
                                               cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "4, 8 or 16 bytes");
    unsigned w[4];
    __gms_suld(w, sizeof(T) / 4, s, x, 0, false, m);
    T r;
    __builtin_memcpy(&r, w, sizeof(T));
    return r;
}
template <class T>
static __device__ __forceinline__ void surf2Dwrite(T v, cudaSurfaceObject_t s, int x, int y,
                                                   cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "4, 8 or 16 bytes");
    unsigned w[4];
    __builtin_memcpy(w, &v, sizeof(T));
    __gms_sust(w, sizeof(T) / 4, s, x, y, true, m);
}
template <class T>
static __device__ __forceinline__ void surf1Dwrite(T v, cudaSurfaceObject_t s, int x,
                                                   cudaSurfaceBoundaryMode m = cudaBoundaryModeTrap) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "4, 8 or 16 bytes");
    unsigned w[4];
    __builtin_memcpy(w, &v, sizeof(T));
    __gms_sust(w, sizeof(T) / 4, s, x, 0, false, m);
}

#undef __GMS_D
#endif
