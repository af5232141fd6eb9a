// bfloat16 storage (the top 16 bits of an IEEE binary32, ml_dtypes' bfloat16) and its
// conversions to and from every supported type, bit for bit as ml_dtypes converts.
//
// A self-contained struct, as half_t is, rather than CUDA's __nv_bfloat16: cuda_bf16.h would
// need an include path (NVRTC compiles our sources pasted together, with none) and does not
// exist for the g++ build of the emulator; this compiles the same under both. Kernels compute
// bfloat16 in float (compute_of), as InfiniCore's CPU and Moore kernels compute half types.
//
// ml_dtypes converts every cast through float32 (static_cast<To>(float(from))), so we do too:
//   - to bfloat16: the value as float first, so float64 and 64-bit integers round twice as
//     in ml_dtypes (1 + 2^-8 + 2^-30 is 1 + 2^-8 as a float, a tie, so 1.0: one rounding
//     would give 1 + 2^-7), then round to nearest even; NaN becomes the quiet NaN 0x7fc0
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
template <typename From>
struct Convert<bfloat16_t, From> {
    __device__ static bfloat16_t run(From x) { return float_to_bfloat16(Convert<float, From>::run(x)); }
};
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
    __device__ static bfloat16_t run(complex<T> x) { return float_to_bfloat16(Convert<float, T>::run(x.re)); }
};

}  // namespace ic
