// Elementwise functions of the array API standard: one functor per function, and the kernel
// templates that apply any functor to up to three inputs.
//
//   ew_contig<Op, Tout, Tin>                every array operand C-contiguous with the output's
//                                           shape: a grid-stride loop, 16-byte vector accesses
//                                           when the host says every pointer is aligned.
//   ew_strided<Op, Tout, Tin, NDIM, Index>  any strides (bytes; negative, zero), NDIM coalesced
//                                           dims, index arithmetic in Index (int when every
//                                           offset fits in 32 bits, else long long); for
//                                           NDIM 2, 16-byte accesses along the inner dim
//                                           when the host says the layout allows them.
//   ew_tiled<Op, Tout, Tin, Staged>         input Staged runs along another dim than the
//                                           output: read through a shared-memory tile;
//   ew_tiled_out<Op, Tout, Tin>             the output runs along another dim than the
//                                           inputs: written through one
//                                           (tiled_elementwise.cuh).
//
// All inputs share one storage type Tin (the host promotes first); each is either an array or
// a scalar passed by value (bit k of scalar_mask set: input k is the value sk, its pointer is
// never read). Functors compute in compute_of<Tin> (float16 and bfloat16 in float) and return
// whatever the function yields (bool for comparisons, real for abs of complex); the kernel
// converts that to Tout.
#include "complex_math.cuh"
#include "bfloat16.cuh"

namespace ic {

// ---------------------------------------------------------------- functors
#define IC_UNARY(NAME) struct NAME { static constexpr int arity = 1; template <typename T> __device__ auto operator()(T a) const
#define IC_BINARY(NAME) struct NAME { static constexpr int arity = 2; template <typename T> __device__ auto operator()(T a, T b) const
#define IC_END };

// Functions of floating-point arguments only: the real libm name, or the complex version.
// Complex order, NumPy's (and CuPy's): lexicographic on (re, im); a NaN imaginary part
// makes an unequal real part unordered.
template <typename T> __device__ __forceinline__ bool cnan(T a) { return isnan(a.re) || isnan(a.im); }
template <typename T> __device__ __forceinline__ bool clt(T a, T b) {
    return (a.re < b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im < b.im);
}
template <typename T> __device__ __forceinline__ bool cle(T a, T b) {
    return (a.re < b.re && !isnan(a.im) && !isnan(b.im)) || (a.re == b.re && a.im <= b.im);
}
template <typename T> __device__ __forceinline__ bool cge(T a, T b) { return cle(b, a); }

#define IC_FLOAT_UNARY(NAME, REAL, COMPLEX) \
    IC_UNARY(NAME) { if constexpr (is_complex<T>()) return COMPLEX(a); else return REAL(a); } IC_END

IC_FLOAT_UNARY(OpAcos, acos, cacos)
IC_FLOAT_UNARY(OpAcosh, acosh, cacosh)
IC_FLOAT_UNARY(OpAsin, asin, casin)
IC_FLOAT_UNARY(OpAsinh, asinh, casinh)
IC_FLOAT_UNARY(OpAtan, atan, catan)
IC_FLOAT_UNARY(OpAtanh, atanh, catanh)
IC_FLOAT_UNARY(OpCosh, cosh, ccosh)
IC_FLOAT_UNARY(OpSinh, sinh, csinh)
IC_FLOAT_UNARY(OpTanh, tanh, ctanh)
IC_FLOAT_UNARY(OpExp, exp, cexp)
IC_FLOAT_UNARY(OpExpm1, expm1, cexpm1)
IC_FLOAT_UNARY(OpLog, log, clog)
IC_FLOAT_UNARY(OpLog1p, log1p, clog1p)
IC_FLOAT_UNARY(OpSqrt, sqrt, csqrt)
#undef IC_FLOAT_UNARY

IC_UNARY(OpCos) { if constexpr (is_complex<T>()) return ccosh(mul_i(a)); else return cos(a); } IC_END
IC_UNARY(OpSin) { if constexpr (is_complex<T>()) return mul_neg_i(csinh(mul_i(a))); else return sin(a); } IC_END
IC_UNARY(OpTan) { if constexpr (is_complex<T>()) return mul_neg_i(ctanh(mul_i(a))); else return tan(a); } IC_END
IC_UNARY(OpLog2) {
    if constexpr (is_complex<T>()) {
        typedef typename real_of<T>::type R;
        T l = clog(a);
        const R inv_ln2 = (R)1.4426950408889634;
        return cplx(l.re * inv_ln2, l.im * inv_ln2);
    } else return log2(a);
} IC_END
IC_UNARY(OpLog10) {
    if constexpr (is_complex<T>()) {
        typedef typename real_of<T>::type R;
        T l = clog(a);
        const R inv_ln10 = (R)0.43429448190325176;
        return cplx(l.re * inv_ln10, l.im * inv_ln10);
    } else return log10(a);
} IC_END

IC_UNARY(OpAbs) {
    if constexpr (is_complex<T>()) return cabs(a);
    else if constexpr (is_float<T>()) return fabs(a);
    else if constexpr (is_signed_int<T>()) return a < 0 ? wrap_neg(a) : a;  // abs(MIN) == MIN
    else return a;
} IC_END
IC_UNARY(OpNegative) {
    if constexpr (is_int<T>()) return wrap_neg(a);
    else return -a;
} IC_END
IC_UNARY(OpPositive) { return a; } IC_END  // also the cast: Tout differs from Tin
IC_UNARY(OpSquare) {
    if constexpr (is_int<T>()) return wrap_mul(a, a);
    else if constexpr (is_complex<T>()) {
        // re as (x - y)(x + y): exact where x = +-y (x*x - y*y gives a rounding error, or
        // inf - inf once x*x overflows), -inf for x finite and y infinite; and 0 where
        // x = +-y are finite and x + y (or x - y) overflows (0 * inf would give NaN).
        // im as (x + x) y, or as (x y) 2 where x + x overflows (the same rounding: x y is
        // no subnormal there)
        typedef typename real_of<T>::type R;
        R twice = a.re + a.re;
        R im = isinf(twice) && isfinite(a.re) ? (a.re * a.im) * (R)2 : twice * a.im;
        R d = a.re - a.im, s = a.re + a.im;
        if (isfinite(a.re) && isfinite(a.im)) {
            if (d == (R)0 && isinf(s)) s = copysign((R)1, s);
            else if (s == (R)0 && isinf(d)) d = copysign((R)1, d);
        }
        return cplx(d * s, im);
    } else return a * a;
} IC_END
IC_UNARY(OpReciprocal) {
    if constexpr (is_complex<T>()) {
        typedef typename real_of<T>::type R;
        return cplx((R)1, (R)0) / a;
    } else if constexpr (is_int<T>()) return a == 0 ? (T)0 : (T)((T)1 / a);  // NumPy's 0 for 1 / 0
    else return (T)1 / a;
} IC_END
IC_UNARY(OpSign) {
    if constexpr (is_complex<T>()) {
        typedef typename real_of<T>::type R;
        // the standard's NaN case; then NumPy 2's: one infinite part gives the unit along
        // it, two give NaN (z / |z| would give NaN for any infinite part)
        if (isnan(a.re) || isnan(a.im) || (isinf(a.re) && isinf(a.im)))
            return cplx(nan_v<R>(), nan_v<R>());
        if (isinf(a.re)) return cplx(copysign((R)1, a.re), (R)0);
        if (isinf(a.im)) return cplx((R)0, copysign((R)1, a.im));
        if (a.re == (R)0 && a.im == (R)0) return cplx((R)0, (R)0);
        R m = cabs(a);
        if (isinf(m)) {  // |z| past the largest finite value: z / 4 first (exact there)
            R x = a.re * (R)0.25, y = a.im * (R)0.25;
            m = hypot(x, y);
            return cplx(x / m, y / m);
        }
        return cplx(a.re / m, a.im / m);
    } else if constexpr (is_float<T>()) {
        return isnan(a) ? a : (a > (T)0 ? (T)1 : (a < (T)0 ? (T)-1 : (T)0));
    } else if constexpr (is_signed_int<T>()) {
        return (T)((a > 0) - (a < 0));
    } else return (T)(a > 0);
} IC_END
IC_UNARY(OpSignbit) { return (bool)signbit(a); } IC_END
IC_UNARY(OpCeil) { if constexpr (is_float<T>()) return ceil(a); else return a; } IC_END
IC_UNARY(OpFloor) { if constexpr (is_float<T>()) return floor(a); else return a; } IC_END
IC_UNARY(OpTrunc) { if constexpr (is_float<T>()) return trunc(a); else return a; } IC_END
IC_UNARY(OpRound) {  // half to even, as NumPy
    if constexpr (is_complex<T>()) return cplx(rint(a.re), rint(a.im));
    else if constexpr (is_float<T>()) return rint(a);
    else return a;
} IC_END
IC_UNARY(OpConj) { if constexpr (is_complex<T>()) return cplx(a.re, -a.im); else return a; } IC_END
IC_UNARY(OpReal) { if constexpr (is_complex<T>()) return a.re; else return a; } IC_END
IC_UNARY(OpImag) { if constexpr (is_complex<T>()) return a.im; else return (T)0; } IC_END
IC_UNARY(OpIsnan) {
    if constexpr (is_complex<T>()) return (bool)(isnan(a.re) || isnan(a.im));
    else if constexpr (is_float<T>()) return (bool)isnan(a);
    else return false;
} IC_END
IC_UNARY(OpIsinf) {
    if constexpr (is_complex<T>()) return (bool)(isinf(a.re) || isinf(a.im));
    else if constexpr (is_float<T>()) return (bool)isinf(a);
    else return false;
} IC_END
IC_UNARY(OpIsfinite) {
    if constexpr (is_complex<T>()) return (bool)(isfinite(a.re) && isfinite(a.im));
    else if constexpr (is_float<T>()) return (bool)isfinite(a);
    else return true;
} IC_END
IC_UNARY(OpLogicalNot) { return !a; } IC_END
IC_UNARY(OpBitwiseInvert) {
    if constexpr (is_same<T, bool>::value) return !a;
    else return (T)~a;
} IC_END

IC_BINARY(OpAdd) {  // bool + bool is OR, as NumPy's and CuPy's bool loop
    if constexpr (is_same<T, bool>::value) return (bool)(a || b);
    else if constexpr (is_int<T>()) return wrap_add(a, b);
    else return a + b;
} IC_END
IC_BINARY(OpSubtract) { if constexpr (is_int<T>()) return wrap_sub(a, b); else return a - b; } IC_END
IC_BINARY(OpMultiply) {  // bool * bool is AND
    if constexpr (is_same<T, bool>::value) return (bool)(a && b);
    else if constexpr (is_int<T>()) return wrap_mul(a, b);
    else return a * b;
} IC_END
IC_BINARY(OpDivide) {  // integers divide in double, as NumPy's true_divide
    if constexpr (is_int<T>()) return (double)a / (double)b;
    else return a / b;
} IC_END
IC_BINARY(OpFloorDivide) {
    if constexpr (is_int<T>()) return int_floor_div(a, b);
    else return float_floor_div(a, b);
} IC_END
IC_BINARY(OpRemainder) {
    if constexpr (is_int<T>()) return int_remainder(a, b);
    else return float_remainder(a, b);
} IC_END
IC_BINARY(OpPow) {
    if constexpr (is_complex<T>()) return cpow(a, b);
    else if constexpr (is_float<T>()) {
        // x**0 and 1**y are 1 for every x and y, NaN included (the standard, C99); libm's
        // pow (glibc's, CUDA's) answers NaN when that NaN is a signaling one
        if (b == T(0) || a == T(1)) return T(1);
        return pow(a, b);
    } else {
        // Exponentiation by squaring with wrap-around; negative exponents (undefined in the
        // standard, an error in NumPy) give the integer part of the true result.
        if constexpr (is_signed_int<T>()) {
            if (b < 0) return (T)(a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0));
        }
        T acc = 1, p = a;
        while (b != 0) {
            if (b & 1) acc = wrap_mul(acc, p);
            p = wrap_mul(p, p);
            b = (T)(b >> 1);
        }
        return acc;
    }
} IC_END
IC_BINARY(OpAtan2) { return atan2(a, b); } IC_END
IC_BINARY(OpCopysign) { return copysign(a, b); } IC_END
IC_BINARY(OpHypot) { return hypot(a, b); } IC_END
IC_BINARY(OpNextafter) {
    if constexpr (is_same<T, half_t>::value || is_same<T, bfloat16_t>::value) {
        // Steps of the 16-bit type, not of float. Both are sign-magnitude: the next value
        // away from zero is the bit pattern plus one, toward zero minus one.
        const float fa = convert<float>(a), fb = convert<float>(b);
        if (isnan(fa) || isnan(fb)) return convert<T>(nan_v<float>());
        if (fa == fb) return b;  // IEEE: y when x == y (-0, +0: +0)
        T r;
        if (!(a.bits & 0x7fffu)) r.bits = (uint16_t)((b.bits & 0x8000u) + 1u);
        else if (!(a.bits & 0x8000u))
            r.bits = (uint16_t)((int16_t)a.bits > (int16_t)b.bits ? a.bits - 1u : a.bits + 1u);
        else
            r.bits = (uint16_t)((!(b.bits & 0x8000u) || (a.bits & 0x7fffu) > (b.bits & 0x7fffu)) ? a.bits - 1u
                                                                                              : a.bits + 1u);
        return r;
    } else return nextafter(a, b);
} IC_END
IC_BINARY(OpLogaddexp) {  // NumPy's npy_logaddexp: exact for equal arguments (and infinities)
    if (a == b) return a + (T)0.6931471805599453;
    T d = a - b;
    if (d > (T)0) return a + log1p(exp(-d));
    if (d <= (T)0) return b + log1p(exp(d));
    return d;  // nan
} IC_END
IC_BINARY(OpMaximum) {  // NaN propagates; +0 is larger than -0
    if constexpr (is_complex<T>()) {
        return (cnan(a) || cge(a, b)) ? a : b;  // NumPy's order
    } else {
        if constexpr (is_float<T>()) {
            if (isnan(a)) return a;
            if (isnan(b)) return b;
            if (a == b) return signbit(a) ? b : a;
        }
        return a > b ? a : b;
    }
} IC_END
IC_BINARY(OpMinimum) {
    if constexpr (is_complex<T>()) {
        return (cnan(a) || cle(a, b)) ? a : b;
    } else {
        if constexpr (is_float<T>()) {
            if (isnan(a)) return a;
            if (isnan(b)) return b;
            if (a == b) return signbit(a) ? a : b;
        }
        return a < b ? a : b;
    }
} IC_END
IC_BINARY(OpEqual) { return (bool)(a == b); } IC_END
IC_BINARY(OpNotEqual) { return (bool)(a != b); } IC_END
IC_BINARY(OpLess) { if constexpr (is_complex<T>()) return clt(a, b); else return (bool)(a < b); } IC_END
IC_BINARY(OpLessEqual) { if constexpr (is_complex<T>()) return cle(a, b); else return (bool)(a <= b); } IC_END
IC_BINARY(OpGreater) { if constexpr (is_complex<T>()) return clt(b, a); else return (bool)(a > b); } IC_END
IC_BINARY(OpGreaterEqual) { if constexpr (is_complex<T>()) return cle(b, a); else return (bool)(a >= b); } IC_END
IC_BINARY(OpLogicalAnd) { return (bool)(a && b); } IC_END
IC_BINARY(OpLogicalOr) { return (bool)(a || b); } IC_END
IC_BINARY(OpLogicalXor) { return (bool)((bool)a != (bool)b); } IC_END
IC_BINARY(OpBitwiseAnd) { return (T)(a & b); } IC_END
IC_BINARY(OpBitwiseOr) { return (T)(a | b); } IC_END
IC_BINARY(OpBitwiseXor) { return (T)(a ^ b); } IC_END
IC_BINARY(OpBitwiseLeftShift) {  // NumPy: shifting by >= the width (or < 0) gives 0
    typedef typename unsigned_of<T>::type U;
    if ((uint64_t)(int64_t)b < (uint64_t)(8 * sizeof(T))) return (T)(U)((U)a << b);
    return (T)0;
} IC_END
IC_BINARY(OpBitwiseRightShift) {  // NumPy: by >= the width, 0 (or -1 for negative a)
    if ((uint64_t)(int64_t)b < (uint64_t)(8 * sizeof(T))) return (T)(a >> b);
    if constexpr (is_signed_int<T>()) return (T)(a < 0 ? -1 : 0);
    return (T)0;
} IC_END

struct OpClip {  // min(max(x, lo), hi) with NaN propagating from any argument
    static constexpr int arity = 3;
    template <typename T> __device__ auto operator()(T x, T lo, T hi) const {
        return OpMinimum()(OpMaximum()(x, lo), hi);
    }
};

#undef IC_UNARY
#undef IC_BINARY
#undef IC_END

// ---------------------------------------------------------------- kernel helpers
// The type a functor computes in: float16 and bfloat16 in float, except where float would
// change the answer: nextafter steps by one ulp of the 16-bit type, and a cast from bfloat16
// (OpPositive) converts its bits directly (to float16 a NaN becomes 0x7e00, as ml_dtypes).
template <typename Op, typename Tin> struct compute_for { typedef typename compute_of<Tin>::type type; };
template <> struct compute_for<OpNextafter, half_t> { typedef half_t type; };
template <> struct compute_for<OpNextafter, bfloat16_t> { typedef bfloat16_t type; };
template <> struct compute_for<OpPositive, bfloat16_t> { typedef bfloat16_t type; };

template <typename Op, typename C>
__device__ __forceinline__ auto apply(const C *v) {
    if constexpr (Op::arity == 1) return Op()(v[0]);
    else if constexpr (Op::arity == 2) return Op()(v[0], v[1]);
    else return Op()(v[0], v[1], v[2]);
}

// VEC elements of T moved as one access of VEC * sizeof(T) <= 16 bytes.
template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
    T v[VEC];
};

template <typename Tin, typename Tout>
struct VecWidth {  // elements per vector access: 16 bytes of the wider of the two types
    static constexpr int bytes = sizeof(Tin) > sizeof(Tout) ? sizeof(Tin) : sizeof(Tout);
    static constexpr int value = bytes >= 16 ? 1 : 16 / bytes;
};

// The strided kernels' layouts: dims outermost first, strides.a[d * ROW + k] the byte stride
// of dim d for operand k (outputs first, then inputs).

// The innermost dim walked in packs of VEC elements: its length divided, its strides
// multiplied. Returns the inputs (operands FIRST_IN on, bit k - FIRST_IN) that it broadcasts.
template <int VEC, int ROW, int FIRST_IN, int NDIM, typename Index>
__device__ __forceinline__ int pack_inner_dim(ArrayStruct<NDIM, Index> &shape,
                                              ArrayStruct<NDIM * ROW, Index> &strides) {
    int broadcast = 0;
    shape.a[NDIM - 1] /= VEC;
#pragma unroll
    for (int k = 0; k < ROW; ++k) {
        strides.a[(NDIM - 1) * ROW + k] *= VEC;
        if (k >= FIRST_IN && strides.a[(NDIM - 1) * ROW + k] == 0) broadcast |= 1 << (k - FIRST_IN);
    }
    return broadcast;
}

// The byte offsets of element i (C order over `shape`) for the first NOPS operands.
template <int NOPS, int ROW, int NDIM, typename Index>
__device__ __forceinline__ void strided_offsets(Index i, const ArrayStruct<NDIM, Index> &shape,
                                                const ArrayStruct<NDIM * ROW, Index> &strides,
                                                Index (&offset)[NOPS]) {
    Index rest = i;
#pragma unroll
    for (int k = 0; k < NOPS; ++k) offset[k] = 0;
#pragma unroll
    for (int d = NDIM - 1; d >= 0; --d) {
        const Index len = shape.a[d];
        Index coord = rest;
        if (d > 0) {
            coord = rest % len;
            rest = rest / len;
        }
#pragma unroll
        for (int k = 0; k < NOPS; ++k) offset[k] += coord * strides.a[d * ROW + k];
    }
}

}  // namespace ic

// ---------------------------------------------------------------- kernels
template <typename Op, typename Tout, typename Tin>
__global__ void ew_contig(Tout *out, const Tin *in0, const Tin *in1, const Tin *in2, Tin s0, Tin s1,
                          Tin s2, int scalar_mask, long long n, int vectorized) {
    typedef typename ic::compute_for<Op, Tin>::type C;
    constexpr int NIN = Op::arity;
    const Tin *in[3] = {in0, in1, in2};
    const C sval[3] = {ic::convert<C>(s0), ic::convert<C>(s1), ic::convert<C>(s2)};
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long step = (long long)gridDim.x * blockDim.x;
    long long head = 0;
    constexpr int VEC = ic::VecWidth<Tin, Tout>::value;
    if constexpr (VEC > 1) {
        if (vectorized) {
            typedef ic::Pack<Tin, VEC> PackIn;
            typedef ic::Pack<Tout, VEC> PackOut;
            const long long nvec = n / VEC;
            for (long long i = tid; i < nvec; i += step) {
                PackIn p[NIN];
#pragma unroll
                for (int k = 0; k < NIN; ++k)
                    if (!(scalar_mask >> k & 1)) p[k] = ic::ld(reinterpret_cast<const PackIn *>(in[k]) + i);
                PackOut r;
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    C v[NIN];
#pragma unroll
                    for (int k = 0; k < NIN; ++k)
                        v[k] = (scalar_mask >> k & 1) ? sval[k] : ic::convert<C>(p[k].v[j]);
                    r.v[j] = ic::convert<Tout>(ic::apply<Op>(v));
                }
                ic::st(reinterpret_cast<PackOut *>(out) + i, r);
            }
            head = nvec * VEC;
        }
    }
    for (long long i = head + tid; i < n; i += step) {
        C v[NIN];
#pragma unroll
        for (int k = 0; k < NIN; ++k) v[k] = (scalar_mask >> k & 1) ? sval[k] : ic::convert<C>(ic::ld(in[k] + i));
        ic::st(out + i, ic::convert<Tout>(ic::apply<Op>(v)));
    }
}

// strides.a[d * 4 + k]: byte stride of dim d for operand k (0 the output, 1..3 the inputs).
// Dims run outermost first; unused leading dims have length 1.
//
// With `vectorized` (NDIM == 2 only; the host checked it: the inner dim's length is a multiple
// of VEC, its stride is one element for the output and one element or 0 for every array
// input, and every other stride and pointer of an operand moved in vectors is VEC elements
// aligned) each thread takes VEC consecutive elements of the inner dim: one 16-byte access per
// operand, or one element for an input broadcast along that dim (a column of a matrix), whose
// lanes then ask for the same few sectors instead of half the warp's requests. Two dims cover
// the layouts that need it (rows plus a column or a row); three would double the compile time
// of every 3-dim variant for rarer layouts.
template <typename Op, typename Tout, typename Tin, int NDIM, typename Index>
__global__ void ew_strided(Tout *out, const Tin *in0, const Tin *in1, const Tin *in2, Tin s0, Tin s1,
                           Tin s2, int scalar_mask, ic::ArrayStruct<NDIM, Index> shape,
                           ic::ArrayStruct<NDIM * 4, Index> strides, Index n, int vectorized) {
    typedef typename ic::compute_for<Op, Tin>::type C;
    constexpr int NIN = Op::arity;
    constexpr int VEC = ic::VecWidth<Tin, Tout>::value;
    const Tin *in[3] = {in0, in1, in2};
    const C sval[3] = {ic::convert<C>(s0), ic::convert<C>(s1), ic::convert<C>(s2)};
    const Index step = (Index)gridDim.x * (Index)blockDim.x;
    Index count = n;
    int same_mask = scalar_mask;  // inputs with one value per pack: scalars and broadcasts
    if constexpr (VEC > 1 && NDIM == 2) {
        if (vectorized) {  // the innermost dim counted in packs of VEC elements
            same_mask |= ic::pack_inner_dim<VEC, 4, 1>(shape, strides);
            count = n / VEC;
        }
    }
    for (Index i = (Index)blockIdx.x * (Index)blockDim.x + (Index)threadIdx.x; i < count; i += step) {
        Index offset[NIN + 1];
        ic::strided_offsets<NIN + 1, 4>(i, shape, strides, offset);
        if constexpr (VEC > 1 && NDIM == 2) {
            if (vectorized) {
                typedef ic::Pack<Tin, VEC> PackIn;
                typedef ic::Pack<Tout, VEC> PackOut;
                PackIn p[NIN];
                C same[NIN];
#pragma unroll
                for (int k = 0; k < NIN; ++k) {
                    if (scalar_mask >> k & 1) same[k] = sval[k];
                    else if (same_mask >> k & 1) same[k] = ic::convert<C>(ic::ld(ic::at<Tin>(in[k], offset[k + 1])));
                    else p[k] = ic::ld(ic::at<PackIn>(in[k], offset[k + 1]));
                }
                PackOut r;
#pragma unroll
                for (int j = 0; j < VEC; ++j) {
                    C v[NIN];
#pragma unroll
                    for (int k = 0; k < NIN; ++k)
                        v[k] = (same_mask >> k & 1) ? same[k] : ic::convert<C>(p[k].v[j]);
                    r.v[j] = ic::convert<Tout>(ic::apply<Op>(v));
                }
                ic::st(ic::at<PackOut>(out, offset[0]), r);
                continue;
            }
        }
        C v[NIN];
#pragma unroll
        for (int k = 0; k < NIN; ++k)
            v[k] = (scalar_mask >> k & 1) ? sval[k] : ic::convert<C>(ic::ld(ic::at<Tin>(in[k], offset[k + 1])));
        ic::st(ic::at<Tout>(out, offset[0]), ic::convert<Tout>(ic::apply<Op>(v)));
    }
}

// One pass over a transposed operand: a third kernel template over the functors above.
#include "tiled_elementwise.cuh"

// Fused expressions (infini_cupy.fuse): more kernel templates over the functors above.
#include "fusion.cuh"
