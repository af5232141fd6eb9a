// Number types and scalar math shared by the elementwise kernels.
//
// NVRTC compiles without any standard header, so float16 storage (half_t), complex numbers
// and the few type traits the kernels need are defined here in portable C++. Math functions
// are called by their common names (sin, expm1, hypot, ...): on the GPU they are the CUDA
// device overloads, in emulation the <cmath> ones brought into namespace ic below.
#pragma once

#include "common.cuh"

namespace ic {

#ifdef INFINI_EMULATION
using std::abs; using std::acos; using std::acosh; using std::asin; using std::asinh;
using std::atan; using std::atan2; using std::atanh; using std::ceil; using std::copysign;
using std::cos; using std::cosh; using std::exp; using std::expm1; using std::fabs;
using std::floor; using std::fma; using std::fmod; using std::hypot; using std::ilogb;
using std::isfinite; using std::isinf; using std::isnan; using std::ldexp; using std::log;
using std::log10; using std::log1p; using std::log2; using std::nextafter; using std::pow;
using std::rint; using std::signbit; using std::sin; using std::sinh; using std::sqrt;
using std::tan; using std::tanh; using std::trunc;
#endif

// ---- type traits (no <type_traits> under NVRTC)
template <typename A, typename B> struct is_same { static constexpr bool value = false; };
template <typename A> struct is_same<A, A> { static constexpr bool value = true; };

template <typename T> struct unsigned_of { typedef T type; };
template <> struct unsigned_of<int8_t> { typedef uint8_t type; };
template <> struct unsigned_of<int16_t> { typedef uint16_t type; };
template <> struct unsigned_of<int32_t> { typedef uint32_t type; };
template <> struct unsigned_of<int64_t> { typedef uint64_t type; };

template <typename T> struct int_traits { static constexpr bool is_int = false, is_signed = false; };
#define IC_INT_TRAITS(T, S, MIN, MAX)                                           \
    template <> struct int_traits<T> {                                          \
        static constexpr bool is_int = true, is_signed = S;                     \
        static constexpr T min = MIN, max = MAX;                                \
    };
IC_INT_TRAITS(int8_t, true, -128, 127)
IC_INT_TRAITS(int16_t, true, -32768, 32767)
IC_INT_TRAITS(int32_t, true, -2147483647 - 1, 2147483647)
IC_INT_TRAITS(int64_t, true, -9223372036854775807LL - 1, 9223372036854775807LL)
IC_INT_TRAITS(uint8_t, false, 0, 255)
IC_INT_TRAITS(uint16_t, false, 0, 65535)
IC_INT_TRAITS(uint32_t, false, 0, 4294967295U)
IC_INT_TRAITS(uint64_t, false, 0, 18446744073709551615ULL)
#undef IC_INT_TRAITS

template <typename T> __host__ __device__ constexpr bool is_int() { return int_traits<T>::is_int; }
template <typename T> __host__ __device__ constexpr bool is_signed_int() { return int_traits<T>::is_signed; }
template <typename T> __host__ __device__ constexpr bool is_float() {
    return is_same<T, float>::value || is_same<T, double>::value;
}

// ---- float16 storage: IEEE binary16 bits, converted to/from float with round-to-nearest-even.
struct alignas(2) half_t {
    uint16_t bits;
};

__device__ __forceinline__ uint32_t float_bits(float f) {
    union { float f; uint32_t u; } v;
    v.f = f;
    return v.u;
}
__device__ __forceinline__ float bits_float(uint32_t u) {
    union { float f; uint32_t u; } v;
    v.u = u;
    return v.f;
}

__device__ __forceinline__ uint64_t double_bits(double d) {
    union { double d; uint64_t u; } v;
    v.d = d;
    return v.u;
}
__device__ __forceinline__ double bits_double(uint64_t u) {
    union { double d; uint64_t u; } v;
    v.u = u;
    return v.d;
}

// Infinity and NaN without <cmath> macros (NVRTC has none).
template <typename T> __device__ __forceinline__ T inf_v();
template <typename T> __device__ __forceinline__ T nan_v();
template <> __device__ __forceinline__ float inf_v<float>() { return bits_float(0x7f800000u); }
template <> __device__ __forceinline__ float nan_v<float>() { return bits_float(0x7fc00000u); }
template <> __device__ __forceinline__ double inf_v<double>() {
    union { uint64_t u; double d; } v;
    v.u = 0x7ff0000000000000ULL;
    return v.d;
}
template <> __device__ __forceinline__ double nan_v<double>() {
    union { uint64_t u; double d; } v;
    v.u = 0x7ff8000000000000ULL;
    return v.d;
}

// float16 <-> float. On the GPU the hardware converts (cvt: exact to float; to half, round to
// nearest even with subnormals and overflow to infinity, as IEEE and NumPy), one instruction
// where the bit-level code below takes dozens; the emulator runs the bit-level code, which
// gives the same bits for every non-NaN value. NaNs take the same explicit path on both
// sides, because PTX does not promise what cvt does with a NaN's payload: to float the half's
// payload is kept (shifted up, as NumPy), to half it is kept and made quiet (0x200 set).
__device__ __forceinline__ uint32_t half_nan_to_float_bits(uint16_t bits) {
    return ((uint32_t)(bits & 0x8000u) << 16) | 0x7f800000u | ((uint32_t)(bits & 0x3ffu) << 13);
}
__device__ __forceinline__ uint16_t float_nan_to_half_bits(uint32_t u) {
    return (uint16_t)(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu));
}

#ifndef INFINI_EMULATION
__device__ __forceinline__ float half_to_float(half_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    if (f != f) f = bits_float(half_nan_to_float_bits(h.bits));  // NaN: rare, one compare
    return f;
}

__device__ __forceinline__ half_t float_to_half(float f) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
    if (f != f) h.bits = float_nan_to_half_bits(float_bits(f));  // NaN: rare, one compare
    return h;
}
#else
__device__ inline float half_to_float(half_t h) {
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    uint32_t exp = (h.bits >> 10) & 0x1fu;
    uint32_t man = h.bits & 0x3ffu;
    if (exp == 0x1f) {
        if (man) return bits_float(half_nan_to_float_bits(h.bits));
        return bits_float(sign | 0x7f800000u);  // inf
    }
    if (exp == 0) {
        // zero or subnormal: man * 2^-24, exact in float
        float m = (float)man * 5.9604644775390625e-08f;
        return sign ? -m : m;
    }
    return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
}

__device__ inline half_t float_to_half(float f) {
    uint32_t u = float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    half_t h;
    if (a > 0x7f800000u) {
        h.bits = float_nan_to_half_bits(u);
        return h;
    }
    if (a >= 0x477ff000u) {  // rounds to >= 65520 (inf included): overflow to inf
        h.bits = sign | 0x7c00u;
        return h;
    }
    if (a < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
        if (a < 0x33000000u) {  // below half of the smallest subnormal (2^-25): zero
            h.bits = sign;
            return h;
        }
        uint32_t e = a >> 23;
        uint32_t m = (a & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e;  // value = m * 2^(e-150); half units of 2^-24
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
        h.bits = sign | (uint16_t)q;
        return h;
    }
    uint32_t q = (a - 0x38000000u) >> 13;  // rebias exponent 127 -> 15
    uint32_t rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ++q;
    h.bits = sign | (uint16_t)q;
    return h;
}
#endif

// double -> float16 rounded once, to nearest even, from the double's bits (as NumPy's
// npy_doublebits_to_halfbits): going through float would round twice, e.g. 1 + 2^-11 + 2^-40
// -> 1 + 2^-11 (a tie in float16) -> 1, where the nearest float16 is 1 + 2^-10.
__device__ inline half_t double_to_half(double d) {
    uint64_t u = double_bits(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    uint64_t a = u & 0x7fffffffffffffffULL;
    half_t h;
    if (a >= 0x7ff0000000000000ULL) {  // inf or nan (keep nan quiet and non-zero)
        h.bits = sign | 0x7c00u | (a > 0x7ff0000000000000ULL ? (uint16_t)(0x200u | ((a >> 42) & 0x3ffu)) : 0u);
        return h;
    }
    if (a >= 0x40effe0000000000ULL) {  // >= 65520 (halfway above 65504 rounds to even: up): inf
        h.bits = sign | 0x7c00u;
        return h;
    }
    if (a < 0x3f10000000000000ULL) {  // below 2^-14, the smallest normal half: subnormal or zero
        if (a <= 0x3e60000000000000ULL) {  // at most half the smallest subnormal (2^-25): zero
            h.bits = sign;
            return h;
        }
        uint32_t e = (uint32_t)(a >> 52);  // a normal double here: 998 < e < 1009
        uint64_t m = (a & 0xfffffffffffffULL) | 0x10000000000000ULL;
        uint32_t shift = 1051u - e;  // value = m * 2^(e-1075); units of 2^-24: shift 43..53
        uint64_t q = m >> shift;
        uint64_t rem = m & ((1ULL << shift) - 1u);
        uint64_t halfway = 1ULL << (shift - 1u);
        if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
        h.bits = sign | (uint16_t)q;
        return h;
    }
    // Rebias the exponent 1023 -> 15 and keep 10 of the 52 fraction bits; a carry out of the
    // fraction steps the exponent, as it should (65504 + less than half an ulp stays finite).
    uint64_t q = (a - 0x3f00000000000000ULL) >> 42;
    uint64_t rem = a & 0x3ffffffffffULL;
    if (rem > 0x20000000000ULL || (rem == 0x20000000000ULL && (q & 1u))) ++q;
    h.bits = sign | (uint16_t)q;
    return h;
}

// A rounded product that the GPU compiler never fuses with a following add (NVRTC contracts
// a * b + c into one fma by default), for the error-free transformations of complex_math.cuh,
// which need exactly the rounded product. g++ for x86-64 without -march has no fma to fuse to.
__device__ __forceinline__ float mul_rn(float a, float b) {
#ifdef INFINI_EMULATION
    return a * b;
#else
    return __fmul_rn(a, b);
#endif
}
__device__ __forceinline__ double mul_rn(double a, double b) {
#ifdef INFINI_EMULATION
    return a * b;
#else
    return __dmul_rn(a, b);
#endif
}

// ---- complex numbers: the layout of NumPy's complex64/complex128 (real, imag).
template <typename T>
struct alignas(2 * sizeof(T)) complex {
    T re, im;
};

template <typename T> struct is_complex_t { static constexpr bool value = false; };
template <typename T> struct is_complex_t<complex<T>> { static constexpr bool value = true; };
template <typename T> __host__ __device__ constexpr bool is_complex() { return is_complex_t<T>::value; }

template <typename T> struct real_of { typedef T type; };
template <typename T> struct real_of<complex<T>> { typedef T type; };

template <typename T>
__device__ __forceinline__ complex<T> cplx(T re, T im) {
    complex<T> z;
    z.re = re;
    z.im = im;
    return z;
}

// What a storage type computes in: float16 in float, everything else in itself.
template <typename T> struct compute_of { typedef T type; };
template <> struct compute_of<half_t> { typedef float type; };

// ---- conversions between any two of the supported types (NumPy casting semantics).
#ifdef INFINI_EMULATION
// Float -> integer as NVIDIA's conversion instructions give it, where C++ leaves NaN and
// out-of-range values undefined (x86 gives its "integer indefinite"). Read off an H200
// (2026-12-04, our kernels and CuPy's alike, docs/user/elementwise.md): integers of 32 bits
// or fewer convert through a 32-bit cvt.rzi (saturating; NaN gives 0 from float, and from
// double INT32_MIN signed or 2^31 unsigned), then keep their low bits; 64-bit integers
// saturate, NaN giving INT64_MIN signed or 2^63 unsigned.
template <typename I, typename F>
__host__ __device__ I saturating_trunc(F x, I nan_value) {
    if (x != x) return nan_value;
    if (x <= (F)int_traits<I>::min) return int_traits<I>::min;
    if (x >= (F)int_traits<I>::max) return int_traits<I>::max;  // max rounds up to 2^bits
    return (I)x;
}
template <typename To, typename From>
__host__ __device__ To float_to_int_as_cvt(From x) {
    constexpr bool from_double = is_same<From, double>::value;
    if constexpr (sizeof(To) == 8) {
        return is_signed_int<To>() ? (To)saturating_trunc<int64_t>(x, int_traits<int64_t>::min)
                                   : (To)saturating_trunc<uint64_t>(x, (uint64_t)1 << 63);
    } else if constexpr (is_signed_int<To>()) {
        return (To)saturating_trunc<int32_t>(x, from_double ? int_traits<int32_t>::min : 0);
    } else {
        return (To)saturating_trunc<uint32_t>(x, from_double ? 2147483648u : 0u);
    }
}
#endif

template <typename To, typename From>
struct Convert {
    __device__ static To run(From x) {
#ifdef INFINI_EMULATION
        if constexpr (is_float<From>() && is_int<To>()) return float_to_int_as_cvt<To>(x);
#endif
        return (To)x;
    }
};
template <typename From>
struct Convert<bool, From> {
    __device__ static bool run(From x) { return x != (From)0; }
};
template <typename To>
struct Convert<To, half_t> {
    __device__ static To run(half_t x) { return Convert<To, float>::run(half_to_float(x)); }
};
// To float16 through float where that rounds once: float itself, and every integer (exact in
// float below 2^24, and from 2^24 = 16777216 > 65520 on float16 is inf whatever float gave);
// double rounds from its own bits.
template <typename From>
struct Convert<half_t, From> {
    __device__ static half_t run(From x) { return float_to_half(Convert<float, From>::run(x)); }
};
template <> struct Convert<half_t, double> {
    __device__ static half_t run(double x) { return double_to_half(x); }
};
template <> struct Convert<half_t, half_t> {
    __device__ static half_t run(half_t x) { return x; }
};
template <> struct Convert<bool, half_t> {
    __device__ static bool run(half_t x) { return (x.bits & 0x7fffu) != 0; }
};
template <typename T, typename From>
struct Convert<complex<T>, From> {
    __device__ static complex<T> run(From x) { return cplx((T)Convert<T, From>::run(x), (T)0); }
};
template <typename T, typename U>
struct Convert<complex<T>, complex<U>> {
    __device__ static complex<T> run(complex<U> x) { return cplx((T)x.re, (T)x.im); }
};
template <typename T>
struct Convert<complex<T>, half_t> {
    __device__ static complex<T> run(half_t x) { return cplx((T)half_to_float(x), (T)0); }
};
template <typename To, typename T>
struct Convert<To, complex<T>> {  // complex -> real drops the imaginary part, as NumPy does
    __device__ static To run(complex<T> x) { return Convert<To, T>::run(x.re); }
};
template <typename T>
struct Convert<bool, complex<T>> {
    __device__ static bool run(complex<T> x) { return x.re != (T)0 || x.im != (T)0; }
};
template <typename T>
struct Convert<half_t, complex<T>> {
    __device__ static half_t run(complex<T> x) { return Convert<half_t, T>::run(x.re); }
};

template <typename To, typename From>
__device__ __forceinline__ To convert(From x) {
    return Convert<To, From>::run(x);
}

// ---- integer arithmetic with NumPy's wrap-around (signed overflow is undefined in C++).
template <typename T>
__device__ __forceinline__ T wrap_add(T a, T b) {
    typedef typename unsigned_of<T>::type U;
    return (T)(U)((U)a + (U)b);
}
template <typename T>
__device__ __forceinline__ T wrap_sub(T a, T b) {
    typedef typename unsigned_of<T>::type U;
    return (T)(U)((U)a - (U)b);
}
template <typename T>
__device__ __forceinline__ T wrap_mul(T a, T b) {
    typedef typename unsigned_of<T>::type U;
    // uint16*uint16 promotes to (signed) int and can overflow: multiply in 64-bit unsigned.
    return (T)(U)((uint64_t)(U)a * (uint64_t)(U)b);
}
template <typename T>
__device__ __forceinline__ T wrap_neg(T a) {
    typedef typename unsigned_of<T>::type U;
    return (T)(U)((U)0 - (U)a);
}

// Floor division and remainder of integers with NumPy's answers: sign of the divisor,
// 0 for division by zero (never a trap), MIN // -1 wraps to MIN.
template <typename T>
__device__ __forceinline__ T int_floor_div(T a, T b) {
    if (b == 0) return 0;
    if constexpr (is_signed_int<T>()) {
        if (b == (T)-1) return wrap_neg(a);
        T q = (T)(a / b);
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
    } else {
        return (T)(a / b);
    }
}
template <typename T>
__device__ __forceinline__ T int_remainder(T a, T b) {
    if (b == 0) return 0;
    if constexpr (is_signed_int<T>()) {
        if (b == (T)-1) return 0;
        T r = (T)(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);
        return r;
    } else {
        return (T)(a % b);
    }
}

// ---- real floating point helpers
template <typename T>
__device__ __forceinline__ T float_remainder(T a, T b) {
    // NumPy's npy_divmod: fmod, then move into the sign of b; the zero result takes b's sign.
    if (b == (T)0) return fmod(a, b);
    T mod = fmod(a, b);
    if (mod != (T)0) {
        if ((b < (T)0) != (mod < (T)0)) mod += b;
    } else {
        mod = copysign((T)0, b);
    }
    return mod;
}
template <typename T>
__device__ __forceinline__ T float_floor_div(T a, T b) {
    if (b == (T)0) return a / b;  // inf or nan with the IEEE sign, as NumPy
    // One infinite operand: the standard's answers (+-inf, +-0), where NumPy's divmod gives
    // NaN for inf // finite and -1 for -finite // inf.
    if (isinf(a) != isinf(b) && !isnan(a) && !isnan(b)) return a / b;
    T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != (T)0 && ((b < (T)0) != (mod < (T)0))) div -= (T)1;
    T floordiv;
    if (div != (T)0) {
        floordiv = floor(div);
        if (div - floordiv > (T)0.5) floordiv += (T)1;
    } else {
        floordiv = copysign((T)0, a / b);
    }
    return floordiv;
}

}  // namespace ic
