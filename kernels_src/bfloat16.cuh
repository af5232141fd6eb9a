// bfloat16 storage (the top 16 bits of an IEEE binary32, ml_dtypes' bfloat16) and its
// conversions to and from every supported type, bit for bit as ml_dtypes (>= 0.7) converts.
//
// A self-contained struct, as half_t is, rather than CUDA's __nv_bfloat16: cuda_bf16.h would
// need an include path (NVRTC compiles our sources pasted together, with none) and does not
// exist for the g++ build of the emulator; this compiles the same under both. Kernels compute
// bfloat16 in float (compute_of), as InfiniCore's CPU and Moore kernels compute half types.
//
//   - to bfloat16: rounded once, to nearest even, from every source (IEEE's rule, and
//     ml_dtypes' since 0.7): 1 + 2^-8 + 2^-30 in float64 is 1 + 2^-7, where going through
//     float32 would round twice (1 + 2^-8, a tie, then 1.0). NaN becomes the quiet NaN 0x7fc0
//     with its sign kept;
//   - from bfloat16: the exact float (the bits shifted up), then float's conversion; to
//     float16 a NaN becomes 0x7e00 with its sign kept (Eigen's half, which ml_dtypes uses),
//     where float_to_half keeps payload bits.
#pragma once

#include "numeric.cuh"

namespace ic {

struct alignas(2) bfloat16_t {
    uint16_t bits;
};

__device__ __forceinline__ float bfloat16_to_float(bfloat16_t b) {
    return bits_float((uint32_t)b.bits << 16);
}

// On sm_80 and newer the hardware rounds (cvt.rn.bf16.f32: to nearest even, subnormals kept,
// overflow to infinity), one instruction; the emulator and older GPUs run the bit-level code
// below, which gives the same bits for every non-NaN float. A NaN takes the explicit path on
// every side (PTX does not promise cvt's NaN bits): the quiet NaN 0x7fc0 with its sign.
__device__ __forceinline__ bfloat16_t float_to_bfloat16(float f) {
    uint32_t u = float_bits(f);
    bfloat16_t b;
#if !defined(INFINI_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.bits) : "f"(f));
    if (f != f) b.bits = (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);  // NaN: rare, one compare
    return b;
#endif
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        b.bits = (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);
        return b;
    }
    // Round to nearest even on the 16 bits dropped: a carry runs into the exponent, and past
    // the largest finite bfloat16 to infinity. Subnormal floats round the same way.
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = (uint16_t)(u >> 16);
    return b;
}

template <> struct compute_of<bfloat16_t> { typedef float type; };

template <typename To>
struct Convert<To, bfloat16_t> {
    __device__ static To run(bfloat16_t x) { return Convert<To, float>::run(bfloat16_to_float(x)); }
};
// Sources wider than float (double, 32- and 64-bit integers) go through a float rounded to
// odd: the float next to the value toward zero, its last bit set when that float is not the
// value. float keeps 16 bits more than bfloat16, so rounding that float to nearest even gives
// the value rounded once (round-to-odd, Boldo and Melquiond 2008), subnormals and overflow
// included. sm_90 converts these sources to bfloat16 in one instruction (cvt.rn.bf16.f64,
// .s64, .u64, .s32, .u32: F2F.BF16.F64 and I2F.BF16 in SASS); older GPUs and the emulator run
// the round-to-odd code, which gives the same bits. NaN takes float_to_bfloat16's explicit path.
#if !defined(INFINI_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define IC_BF16_WIDE_CVT 1
#endif

// The float rounded to odd from ``rounded``, the source rounded to nearest even: unchanged
// when exact, else one step toward zero if it rounded away (infinity steps to the largest
// float), with the last bit set.
__device__ __forceinline__ float float_odd_from(float rounded, bool exact, bool rounded_away) {
    if (exact) return rounded;
    uint32_t u = float_bits(rounded);
    if (rounded_away) u -= 1u;
    return bits_float(u | 1u);
}

__device__ __forceinline__ float double_to_float_odd(double d) {
    float f = (float)d;  // to nearest even
    uint64_t back = double_bits((double)f) & 0x7fffffffffffffffULL;
    uint64_t mag = double_bits(d) & 0x7fffffffffffffffULL;
    return float_odd_from(f, back == mag || mag > 0x7ff0000000000000ULL, back > mag);
}

__device__ __forceinline__ float uint64_to_float_odd(uint64_t a) {
    float f = (float)a;  // to nearest even: 2^64 for the largest values
    if (float_bits(f) >= 0x5f800000u) return float_odd_from(f, false, true);
    uint64_t back = (uint64_t)f;
    return float_odd_from(f, back == a, back > a);
}

__device__ __forceinline__ float int64_to_float_odd(int64_t x) {
    float f = uint64_to_float_odd(x < 0 ? 0ULL - (uint64_t)x : (uint64_t)x);
    return x < 0 ? -f : f;
}

template <typename From>
struct Convert<bfloat16_t, From> {  // float and the types float holds exactly
    __device__ static bfloat16_t run(From x) { return float_to_bfloat16(Convert<float, From>::run(x)); }
};

#ifdef IC_BF16_WIDE_CVT
#define IC_BF16_FROM(T, PTX, REG, ODD)                                              \
    template <> struct Convert<bfloat16_t, T> {                                     \
        __device__ static bfloat16_t run(T x) {                                     \
            bfloat16_t b;                                                           \
            asm("cvt.rn.bf16." PTX " %0, %1;" : "=h"(b.bits) : REG(x));             \
            if (x != x) b = float_to_bfloat16((float)x); /* NaN: rare, one compare */ \
            return b;                                                               \
        }                                                                           \
    };
#else
#define IC_BF16_FROM(T, PTX, REG, ODD)                                              \
    template <> struct Convert<bfloat16_t, T> {                                     \
        __device__ static bfloat16_t run(T x) { return float_to_bfloat16(ODD(x)); } \
    };
#endif
IC_BF16_FROM(double, "f64", "d", double_to_float_odd)
IC_BF16_FROM(int64_t, "s64", "l", int64_to_float_odd)
IC_BF16_FROM(uint64_t, "u64", "l", uint64_to_float_odd)
IC_BF16_FROM(int32_t, "s32", "r", int64_to_float_odd)
IC_BF16_FROM(uint32_t, "u32", "r", uint64_to_float_odd)
#undef IC_BF16_FROM

template <> struct Convert<bfloat16_t, bfloat16_t> {
    __device__ static bfloat16_t run(bfloat16_t x) { return x; }
};
template <> struct Convert<bool, bfloat16_t> {
    __device__ static bool run(bfloat16_t x) { return (x.bits & 0x7fffu) != 0; }  // NaN: true
};
template <> struct Convert<half_t, bfloat16_t> {
    __device__ static half_t run(bfloat16_t x) {
        if ((x.bits & 0x7fffu) > 0x7f80u) {
            half_t h;
            h.bits = (uint16_t)((x.bits & 0x8000u) | 0x7e00u);
            return h;
        }
        return float_to_half(bfloat16_to_float(x));
    }
};
template <> struct Convert<bfloat16_t, half_t> {
    __device__ static bfloat16_t run(half_t x) { return float_to_bfloat16(half_to_float(x)); }
};
template <typename T>
struct Convert<complex<T>, bfloat16_t> {
    __device__ static complex<T> run(bfloat16_t x) { return cplx((T)bfloat16_to_float(x), (T)0); }
};
template <typename T>
struct Convert<bfloat16_t, complex<T>> {  // the real part, as for every complex -> real cast
    __device__ static bfloat16_t run(complex<T> x) { return Convert<bfloat16_t, T>::run(x.re); }
};

}  // namespace ic
