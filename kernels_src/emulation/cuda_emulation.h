// What g++ needs to compile our CUDA sources for the CPU emulator (INFINI_EMULATION).
//
// Kernels run with CUDA semantics: the threads of a block are cooperative fibers on one OS
// thread, so __shared__ is a per-OS-thread static and __syncthreads() switches fibers. The
// machinery (scheduler, fibers, bounds checks, tracing) lives in runtime.cpp, compiled once
// into its own shared library that every kernel library resolves its symbols against.
// Kept small: g++ parses this for every kernel library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>  // device printf
#include <math.h>  // C math and the std:: float overloads at global scope, as CUDA has them

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
// One instance per worker thread; every fiber of a block runs on that thread. 128-byte
// aligned, as the GPU places shared arrays: the profiler's bank numbers are the GPU's.
#define __shared__ static __thread __attribute__((aligned(128)))

// ---- built-in vector types (CUDA's alignments)
#define EMU_VEC2(name, T, align)                                                   \
    struct __attribute__((aligned(align))) name { T x, y; };                      \
    static inline name make_##name(T x, T y) { return name{x, y}; }
#define EMU_VEC3(name, T)                                                          \
    struct name { T x, y, z; };                                                    \
    static inline name make_##name(T x, T y, T z) { return name{x, y, z}; }
#define EMU_VEC4(name, T, align)                                                   \
    struct __attribute__((aligned(align))) name { T x, y, z, w; };                \
    static inline name make_##name(T x, T y, T z, T w) { return name{x, y, z, w}; }
#define EMU_VECS(prefix, T, a2, a4) \
    EMU_VEC2(prefix##2, T, a2) EMU_VEC3(prefix##3, T) EMU_VEC4(prefix##4, T, a4)

EMU_VECS(char, signed char, 2, 4)
EMU_VECS(uchar, unsigned char, 2, 4)
EMU_VECS(short, short, 4, 8)
EMU_VECS(ushort, unsigned short, 4, 8)
EMU_VECS(int, int, 8, 16)
EMU_VECS(uint, unsigned int, 8, 16)
EMU_VECS(float, float, 8, 16)
EMU_VEC2(long2, long, 16)
EMU_VEC2(ulong2, unsigned long, 16)
EMU_VEC2(longlong2, long long, 16)
EMU_VEC2(ulonglong2, unsigned long long, 16)
EMU_VEC2(double2, double, 16)
EMU_VEC3(longlong3, long long)
EMU_VEC3(ulonglong3, unsigned long long)
EMU_VEC3(double3, double)

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

constexpr int warpSize = 32;

// ---- the runtime (runtime.cpp); default visibility so kernel libraries resolve them there
// initial-exec: a plain %fs-relative read instead of a __tls_get_addr call. The loader then
// needs room in static TLS for the runtime's few bytes; the emulator falls back to
// INFINI_EMULATION_DYNAMIC_TLS when it has none.
#ifdef INFINI_EMULATION_DYNAMIC_TLS
#define EMU_TLS_MODEL
#else
#define EMU_TLS_MODEL __attribute__((tls_model("initial-exec")))
#endif
#pragma GCC visibility push(default)
namespace emu {
// Checks [p, p + bytes) against the launch's buffers and records it when tracing; a bad
// access ends the kernel here, before it happens.
void on_access(const void *p, size_t bytes, bool is_write);
// A shared-memory access (common.cuh's lds/sts): traced for bank-conflict counts when tracing.
void on_shared_access(const void *p, size_t bytes, bool is_write);
void sync_threads();  // block barrier: waits for every thread of the block that has not exited
void sync_warp();     // the same, for the 32 threads of this thread's warp
// Publishes `value` for the warp (after a warp barrier); the 32 lanes' values stay readable
// until warp_exchange_end(), which is a second barrier.
const unsigned long long *warp_exchange(unsigned long long value);
void warp_exchange_end();
// This block's dynamic shared memory (the launch's shared_mem bytes, 128-byte aligned).
unsigned char *dynamic_shared();
// The launch records its accesses (the profiler's trace).
bool tracing();

extern __thread uint3 threadIdx EMU_TLS_MODEL;
extern __thread uint3 blockIdx EMU_TLS_MODEL;
extern dim3 blockDim;  // same for every block of a launch, and launches run one at a time
extern dim3 gridDim;
#pragma GCC visibility pop

template <typename To, typename From>
__forceinline__ To bit_cast(const From &v) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
    To out;
    __builtin_memcpy(&out, &v, sizeof(To));
    return out;
}
}  // namespace emu

using emu::blockDim;
using emu::blockIdx;
using emu::gridDim;
using emu::threadIdx;

// Compiler barriers too, so no value of shared memory is kept in a register across them.
static inline void __syncthreads() {
    asm volatile("" ::: "memory");
    emu::sync_threads();
    asm volatile("" ::: "memory");
}
static inline void __syncwarp(unsigned = 0xffffffffu) {
    asm volatile("" ::: "memory");
    emu::sync_warp();
    asm volatile("" ::: "memory");
}
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
template <typename T> __forceinline__ T __ldg(const T *p) { return *p; }

// ---- warp exchange: masks are ignored (the warp's live lanes take part); an exited lane
// reads as 0, where a GPU gives an undefined value
template <typename T>
T __shfl_sync(unsigned, T v, int src, int width = warpSize) {
    static_assert(sizeof(T) <= 8, "__shfl_sync of more than 8 bytes");
    unsigned long long bits = 0;
    __builtin_memcpy(&bits, &v, sizeof(T));
    unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
    const unsigned long long *lanes = emu::warp_exchange(bits);
    unsigned long long got = lanes[(lane / width) * width + ((src % width + width) % width)];
    emu::warp_exchange_end();
    T out;
    __builtin_memcpy(&out, &got, sizeof(T));
    return out;
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
    unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
    return __shfl_sync(mask, v, int((lane % width) ^ lane_mask), width);
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
    unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
    int src = int(lane % width + delta);
    T got = __shfl_sync(mask, v, src < width ? src : int(lane % width), width);
    return got;
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
    unsigned lane = (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) % 32;
    int src = int(lane % width) - int(delta);
    return __shfl_sync(mask, v, src >= 0 ? src : int(lane % width), width);
}
static inline unsigned __ballot_sync(unsigned, int predicate) {
    const unsigned long long *lanes = emu::warp_exchange(predicate != 0);
    unsigned bits = 0;
    for (int i = 0; i < 32; ++i) bits |= unsigned(lanes[i] == 1) << i;
    emu::warp_exchange_end();
    return bits;
}
static inline int __any_sync(unsigned mask, int p) { return __ballot_sync(mask, p) != 0; }
static inline int __all_sync(unsigned mask, int p) { return __ballot_sync(mask, !p) == 0; }

// ---- integer and bit-cast intrinsics
static inline float __uint_as_float(unsigned v) { return emu::bit_cast<float>(v); }
static inline unsigned __float_as_uint(float v) { return emu::bit_cast<unsigned>(v); }
static inline float __int_as_float(int v) { return emu::bit_cast<float>(v); }
static inline int __float_as_int(float v) { return emu::bit_cast<int>(v); }
static inline double __longlong_as_double(long long v) { return emu::bit_cast<double>(v); }
static inline long long __double_as_longlong(double v) { return emu::bit_cast<long long>(v); }
static inline int __double2hiint(double v) { return int(emu::bit_cast<long long>(v) >> 32); }
static inline int __double2loint(double v) { return int(emu::bit_cast<long long>(v)); }
static inline int __popc(unsigned v) { return __builtin_popcount(v); }
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
static inline int __clz(int v) { return v ? __builtin_clz(unsigned(v)) : 32; }
static inline int __clzll(long long v) { return v ? __builtin_clzll((unsigned long long)v) : 64; }
static inline int __ffs(int v) { return __builtin_ffs(v); }
static inline int __ffsll(long long v) { return __builtin_ffsll(v); }
static inline unsigned __brev(unsigned v) {
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0f0f0f0fu) | ((v & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(v);
}
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned long long)a * b >> 32; }
static inline int __mulhi(int a, int b) { return int((long long)a * b >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)((unsigned __int128)a * b >> 64);
}
static inline long long __mul64hi(long long a, long long b) {
    return (long long)((__int128)a * b >> 64);
}

// ---- min/max as CUDA overloads them at global scope
#define EMU_MINMAX(R, A, B)                                       \
    static inline R min(A a, B b) { return (R)a < (R)b ? (R)a : (R)b; } \
    static inline R max(A a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
EMU_MINMAX(int, int, int)
EMU_MINMAX(unsigned, unsigned, unsigned)
EMU_MINMAX(unsigned, int, unsigned)
EMU_MINMAX(unsigned, unsigned, int)
EMU_MINMAX(long, long, long)
EMU_MINMAX(unsigned long, unsigned long, unsigned long)
EMU_MINMAX(unsigned long, long, unsigned long)
EMU_MINMAX(unsigned long, unsigned long, long)
EMU_MINMAX(long long, long long, long long)
EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
EMU_MINMAX(unsigned long long, long long, unsigned long long)
EMU_MINMAX(unsigned long long, unsigned long long, long long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(float a, double b) { return fmin(a, b); }
static inline double max(float a, double b) { return fmax(a, b); }
static inline double min(double a, float b) { return fmin(a, b); }
static inline double max(double a, float b) { return fmax(a, b); }

// ---- CUDA-only math. __expf, __logf, __sinf, __powf, ... come from glibc at full precision.
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float sinpif(float x) { return sinf(float(M_PI) * x); }
static inline float cospif(float x) { return cosf(float(M_PI) * x); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline float __fdividef(float x, float y) { return x / y; }
static inline float __saturatef(float x) { return x > 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }

// ---- atomics (real ones: blocks run in parallel); not bounds-checked
template <typename T> T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <typename T> T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }
template <typename T> T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
template <typename T> T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <typename T> T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }
template <typename T> T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
template <typename T> T atomicCAS(T *p, T expected, T desired) {
    __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
}
template <typename T> T emu_atomic_update(T *p, T v, int op) {
    T old, next;
    __atomic_load(p, &old, __ATOMIC_SEQ_CST);
    do {
        next = op == 0 ? old + v : op == 1 ? (v < old ? v : old) : (v > old ? v : old);
    } while (!__atomic_compare_exchange(p, &old, &next, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    return old;
}
static inline float atomicAdd(float *p, float v) { return emu_atomic_update(p, v, 0); }
static inline double atomicAdd(double *p, double v) { return emu_atomic_update(p, v, 0); }
template <typename T> T atomicMin(T *p, T v) { return emu_atomic_update(p, v, 1); }
template <typename T> T atomicMax(T *p, T v) { return emu_atomic_update(p, v, 2); }
