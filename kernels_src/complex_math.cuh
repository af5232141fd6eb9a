// Complex arithmetic and elementary functions for ic::complex<T>, with the special values
// of C99 Annex G / the array API standard where they cost only a branch (infinities, NaN,
// signed zeros). Inverse functions use Kahan's formulas ("Branch cuts for complex elementary
// functions", 1987), which stay accurate near the branch points without extra precision;
// atanh (and atan) FreeBSD's, accurate for huge arguments too. Where a part cancels, the
// digits are kept by exact products (fma) and compensated sums: log and log1p near |z| = 1 and
// |1 + z| = 1, expm1 near e^x cos y = 1 (double-double). Checked against mpmath and NumPy
// (glibc) to within 1-3 ulps of each part, tests/test_numerics_regressions.py.
#pragma once

#include "numeric.cuh"

namespace ic {

template <typename T> __device__ __forceinline__ complex<T> operator+(complex<T> a, complex<T> b) {
    return cplx(a.re + b.re, a.im + b.im);
}
template <typename T> __device__ __forceinline__ complex<T> operator-(complex<T> a, complex<T> b) {
    return cplx(a.re - b.re, a.im - b.im);
}
template <typename T> __device__ __forceinline__ complex<T> operator-(complex<T> a) {
    return cplx(-a.re, -a.im);
}
template <typename T> __device__ __forceinline__ complex<T> operator*(complex<T> a, complex<T> b) {
    return cplx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
// Smith's algorithm, as NumPy divides complex numbers.
template <typename T> __device__ inline complex<T> operator/(complex<T> a, complex<T> b) {
    T abs_br = fabs(b.re), abs_bi = fabs(b.im);
    if (abs_br >= abs_bi) {
        if (abs_br == (T)0 && abs_bi == (T)0) return cplx(a.re / abs_br, a.im / abs_bi);
        T rat = b.im / b.re;
        T scl = (T)1 / (b.re + b.im * rat);
        return cplx((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }
    T rat = b.re / b.im;
    T scl = (T)1 / (b.im + b.re * rat);
    return cplx((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}
template <typename T> __device__ __forceinline__ bool operator==(complex<T> a, complex<T> b) {
    return a.re == b.re && a.im == b.im;
}
template <typename T> __device__ __forceinline__ bool operator!=(complex<T> a, complex<T> b) {
    return !(a == b);
}

template <typename T> __device__ __forceinline__ complex<T> mul_i(complex<T> z) {  // i z
    return cplx(-z.im, z.re);
}
template <typename T> __device__ __forceinline__ complex<T> mul_neg_i(complex<T> z) {  // -i z
    return cplx(z.im, -z.re);
}

template <typename T> __device__ __forceinline__ T cabs(complex<T> z) { return hypot(z.re, z.im); }

// a0 + x^2 + y^2 nearly as if summed exactly: the squares split exactly by fma into rounded
// product + error, and the five terms summed by Rump, Ogita and Oishi's SumK with K = 3 (two
// passes of error-free two-sums, then a plain sum): the digits that cancel in |z|^2 - 1 near
// the unit circle, or in |1 + z|^2 - 1 = 2x + x^2 + y^2 near 0, are kept. |x|, |y| < 2 here.
template <typename T> __device__ inline T sq_sum(T a0, T x, T y) {
    T p[5];
    p[0] = mul_rn(x, x);
    p[1] = fma(x, x, -p[0]);
    p[2] = mul_rn(y, y);
    p[3] = fma(y, y, -p[2]);
    p[4] = a0;
#pragma unroll
    for (int pass = 0; pass < 2; ++pass) {
#pragma unroll
        for (int i = 1; i < 5; ++i) {  // (p[i], p[i-1]) <- two_sum(p[i], p[i-1])
            T a = p[i], b = p[i - 1];
            T sum = a + b, bb = sum - a;
            p[i - 1] = (a - (sum - bb)) + (b - bb);
            p[i] = sum;
        }
    }
    return (((p[0] + p[1]) + p[2]) + p[3]) + p[4];
}

// a / (a^2 + b^2), the real part of 1 / (a + ib), scaled by a power of two so that the squares
// of huge (or tiny) finite parts neither overflow nor underflow.
template <typename T> __device__ inline T recip_re(T a, T b) {
    T m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    if (m == (T)0) return a / m;
    int e = ilogb(m);
    T as = ldexp(a, -e), bs = ldexp(b, -e);
    return ldexp(as / (as * as + bs * bs), -e);
}

// Beyond this exp(x) overflows (glibc's t = (int)((MAX_EXP - 1) ln 2)).
template <typename T> __device__ __forceinline__ T exp_split() {
    return is_same<T, float>::value ? (T)88 : (T)709;
}

// f e^x (c + i s) for finite x > exp_split: e^x taken in up to three factors, as glibc's cexp,
// csinh and ccosh do, so that a result that fits (c or s tiny) is not lost to an overflowing
// exp(x): exp(709.9 + 1e-300i) is 1.8e308 + 1.8e8i, not inf + infi. f is 1 or 1/2 (exact).
template <typename T> __device__ inline complex<T> exp_times(T x, T c, T s, T f) {
    const T t = exp_split<T>();
    const T et = exp(t);
    c *= et * f;
    s *= et * f;
    x -= t;
    if (x > t) {
        c *= et;
        s *= et;
        x -= t;
    }
    T e = exp(x);  // inf beyond 3t: the product overflows in any case
    return cplx(c * e, s * e);
}

template <typename T> __device__ inline complex<T> csqrt(complex<T> z) {
    T x = z.re, y = z.im;
    if (x == (T)0 && y == (T)0) return cplx((T)0, y);
    if (isinf(y)) return cplx(inf_v<T>(), y);
    if (isnan(x)) return cplx(x, x + y);
    if (isinf(x)) {
        if (x > (T)0) return cplx(x, isnan(y) ? y : copysign((T)0, y));
        return cplx(isnan(y) ? y : (T)0, copysign(inf_v<T>(), y));
    }
    if (isnan(y)) return cplx(y, y);
    // Scale huge inputs so |z| + |x| cannot overflow, and tiny ones (by an even power of two)
    // so that (|x| + |z|) / 2 and y / 2t are not subnormal and rounded to a few bits.
    const bool is_f = is_same<T, float>::value;
    const T big = is_f ? (T)1e37 : (T)1e307;
    const T small = is_f ? (T)4.70197740328915e-38 : (T)8.900295434028806e-308;  // 2^-124, 2^-1020
    T scale = (T)1;
    if (fabs(x) > big || fabs(y) > big) {
        x *= (T)0.25;
        y *= (T)0.25;
        scale = (T)2;
    } else if (fabs(x) < small && fabs(y) < small) {
        const T up = is_f ? (T)281474976710656.0 : (T)324518553658426726783156020576256.0;  // 2^48, 2^108
        x *= up;
        y *= up;
        scale = is_f ? (T)5.9604644775390625e-08 : (T)5.551115123125783e-17;  // 2^-24, 2^-54
    }
    T t = sqrt((fabs(x) + hypot(x, y)) * (T)0.5);
    if (x >= (T)0) return cplx(t * scale, y / (2 * t) * scale);
    return cplx(fabs(y) / (2 * t) * scale, copysign(t, y) * scale);
}

template <typename T> __device__ inline complex<T> cexp(complex<T> z) {
    T x = z.re, y = z.im;
    if (y == (T)0) return cplx(exp(x), y);
    if (isinf(x)) {
        if (!isfinite(y)) return x > (T)0 ? cplx(x, nan_v<T>()) : cplx((T)0, (T)0);
        T e = x > (T)0 ? x : (T)0;
        return cplx(e * cos(y), e * sin(y));
    }
    if (isnan(x) || !isfinite(y)) return cplx(nan_v<T>(), nan_v<T>());
    if (x > exp_split<T>()) return exp_times(x, cos(y), sin(y), (T)1);
    T e = exp(x);
    return cplx(e * cos(y), e * sin(y));
}

// ---- double-double numbers (hi + lo, |lo| <= ulp(hi) / 2), for cexpm1 near 0.
struct dd_t {
    double hi, lo;
};
__device__ __forceinline__ dd_t dd_fast(double a, double b) {  // a + b for |a| >= |b|
    dd_t r;
    r.hi = a + b;
    r.lo = b - (r.hi - a);
    return r;
}
__device__ __forceinline__ dd_t dd_add(dd_t a, dd_t b) {
    double s = a.hi + b.hi, bb = s - a.hi;
    double e = (a.hi - (s - bb)) + (b.hi - bb);
    return dd_fast(s, e + (a.lo + b.lo));
}
__device__ __forceinline__ dd_t dd_mul(dd_t a, dd_t b) {
    double p = mul_rn(a.hi, b.hi);
    double e = fma(a.hi, b.hi, -p);
    return dd_fast(p, e + (a.hi * b.lo + a.lo * b.hi));
}
__device__ __forceinline__ dd_t dd_of(double hi, double lo) {
    dd_t r;
    r.hi = hi;
    r.lo = lo;
    return r;
}

// Taylor coefficients in double-double: 1/k! for k = 29 .. 2, and 1/(2k)! for k = 22 .. 1.
__device__ const double ic_inv_fact[28][2] = {
    {1.1309962886447716e-31, 1.0498015412959506e-47}, {3.279889237069838e-30, 1.5117542744029879e-46},
    {9.183689863795546e-29, 1.4303150396787322e-45}, {2.4795962632247976e-27, -1.2953730964765229e-43},
    {6.446950284384474e-26, -1.9330404233703465e-42}, {1.6117375710961184e-24, -3.6846573564509766e-41},
    {3.868170170630684e-23, -8.843177655482344e-40}, {8.896791392450574e-22, -7.911402614872376e-38},
    {1.9572941063391263e-20, -1.3643503830087908e-36}, {4.110317623312165e-19, 1.4412973378659527e-36},
    {8.22063524662433e-18, 2.2141894119604265e-34}, {1.5619206968586225e-16, 1.1910679660273754e-32},
    {2.8114572543455206e-15, 1.6508842730861433e-31}, {4.779477332387385e-14, 4.399205485834081e-31},
    {7.647163731819816e-13, 7.03872877733453e-30}, {1.1470745597729725e-11, 2.0655512752830745e-28},
    {1.6059043836821613e-10, 1.2585294588752098e-26}, {2.08767569878681e-09, -1.20734505911326e-25},
    {2.505210838544172e-08, -1.448814070935912e-24}, {2.755731922398589e-07, 2.3767714622250297e-23},
    {2.7557319223985893e-06, -1.858393274046472e-22}, {2.48015873015873e-05, 2.1511947866775882e-23},
    {0.0001984126984126984, 1.7209558293420705e-22}, {0.001388888888888889, -5.300543954373577e-20},
    {0.008333333333333333, 1.1564823173178714e-19}, {0.041666666666666664, 2.3129646346357427e-18},
    {0.16666666666666666, 9.25185853854297e-18}, {0.5, 0.0},
};
__device__ const double ic_inv_fact_even[22][2] = {
    {3.7618428812322616e-55, 2.2597135911236184e-71}, {7.117406731291439e-52, 3.1742075384205573e-68},
    {1.2256174391283858e-48, 6.033927348315605e-68}, {1.911963205040282e-45, -2.7860822176883126e-62},
    {2.6882202662866363e-42, 5.355061165943334e-59}, {3.387157535521162e-39, 5.09056148151085e-56},
    {3.8003907548547434e-36, 1.7457158024652518e-52}, {3.7699876288159054e-33, 2.5870347832750324e-49},
    {3.279889237069838e-30, 1.5117542744029879e-46}, {2.4795962632247976e-27, -1.2953730964765229e-43},
    {1.6117375710961184e-24, -3.6846573564509766e-41}, {8.896791392450574e-22, -7.911402614872376e-38},
    {4.110317623312165e-19, 1.4412973378659527e-36}, {1.5619206968586225e-16, 1.1910679660273754e-32},
    {4.779477332387385e-14, 4.399205485834081e-31}, {1.1470745597729725e-11, 2.0655512752830745e-28},
    {2.08767569878681e-09, -1.20734505911326e-25}, {2.755731922398589e-07, 2.3767714622250297e-23},
    {2.48015873015873e-05, 2.1511947866775882e-23}, {0.001388888888888889, -5.300543954373577e-20},
    {0.041666666666666664, 2.3129646346357427e-18}, {0.5, 0.0},
};

// Re expm1(x + iy) = e^x cos y - 1 where expm1(x) cos y and 2 sin^2(y / 2) cancel, along the
// curve x = -log cos y (~ y^2 / 2 near 0). Each carries its own rounding, so NumPy's formula
// (the one cexpm1 uses elsewhere) leaves only their error: 8.3e-17 for 6.7e-17 at
// 0.09698 - 0.43332i, 0 for -4.5e-19 at 0.0092189 - 0.13558i. float: the same formula in
// double. double, for |x| < 12 and |y| < 1.6 (the curve up to cos y = 6e-6): (e^x - 1) +
// (cos y - 1) + (e^x - 1)(cos y - 1) in double-double, e^x - 1 from its Taylor series at
// x / 2^n (|x / 2^n| <= 0.75) and n doublings expm1(2u) = expm1(u) (2 + expm1(u)), cos y - 1
// from its series. Beyond (|y| past pi/2 with e^x cos y near 1 again): the plain formula.
template <typename T> __device__ inline T expm1_re_cancelling(T x, T y, T plain) {
    if constexpr (is_same<T, float>::value) {
        double xd = x, yd = y, s = sin(yd * 0.5);
        return (float)(expm1(xd) * cos(yd) - 2.0 * s * s);
    } else {
        if (!(fabs(x) < 12.0 && fabs(y) < 1.6)) return plain;
        int doublings = 0;
        double u = x;
        while (fabs(u) > 0.75) {
            u *= 0.5;
            ++doublings;
        }
        // e^u - 1 = u (1 + u/2! + u^2/3! + ...), the terms from u^28 / 29! < 2^-110 |u| on
        const dd_t uu = dd_of(u, 0.0);
        dd_t t = dd_of(ic_inv_fact[0][0], ic_inv_fact[0][1]);
#pragma unroll 1
        for (int k = 1; k < 28; ++k) t = dd_add(dd_of(ic_inv_fact[k][0], ic_inv_fact[k][1]), dd_mul(t, uu));
        t = dd_add(dd_of(1.0, 0.0), dd_mul(t, uu));
        dd_t a = dd_mul(t, uu);
#pragma unroll 1
        for (int k = 0; k < doublings; ++k) a = dd_mul(a, dd_add(dd_of(2.0, 0.0), a));
        // cos y - 1 = -w (1/2! - w/4! + w^2/6! - ...), w = y^2 exactly; w^21 / 44! < 2^-150 w
        const double w_hi = mul_rn(y, y);
        const dd_t w = dd_of(w_hi, fma(y, y, -w_hi));
        t = dd_of(ic_inv_fact_even[0][0], ic_inv_fact_even[0][1]);
#pragma unroll 1
        for (int k = 1; k < 22; ++k) {
            dd_t wt = dd_mul(w, t);
            t = dd_add(dd_of(ic_inv_fact_even[k][0], ic_inv_fact_even[k][1]), dd_of(-wt.hi, -wt.lo));
        }
        const dd_t wt = dd_mul(w, t);
        const dd_t c = dd_of(-wt.hi, -wt.lo);
        const dd_t r = dd_add(dd_add(a, c), dd_mul(a, c));
        return r.hi + r.lo;
    }
}

template <typename T> __device__ inline complex<T> cexpm1(complex<T> z) {
    T x = z.re, y = z.im;
    // +-0 + +-0j -> +0 + +-0j (the standard's special case; a real expm1 keeps -0's sign)
    if (y == (T)0) return cplx(x == (T)0 ? (T)0 : expm1(x), y);
    if (isinf(x) && !isfinite(y)) return x > (T)0 ? cplx(x, nan_v<T>()) : cplx((T)-1, (T)0);
    if (isinf(x) && x < (T)0) return cplx((T)-1, copysign((T)0, sin(y)));  // exactly +0 cis(y) - 1
    // e^x cos y - 1: the 1 is far below half an ulp of e^x cos y there (|cos y| > 1e-19 for
    // every double y, > 1e-9 for every float).
    if (x > exp_split<T>() && isfinite(y)) return exp_times(x, cos(y), sin(y), (T)1);
    T a = sin(y * (T)0.5);
    T p = expm1(x) * cos(y), q = 2 * a * a, re = p - q;
    if (fabs(re) < (T)0.5 * fabs(p)) re = expm1_re_cancelling(x, y, re);  // more than a bit cancels
    return cplx(re, exp(x) * sin(y));
}

// log|z| without losing the digits near |z| = 1: there log1p(|z|^2 - 1) / 2, with |z|^2 - 1
// summed exactly enough (sq_sum) that points on the unit circle's either side keep their
// relative accuracy (log|0.6 + 0.8i| is -1.1e-17 rounded, not 0 or 1.1e-16).
template <typename T> __device__ inline T log_abs(T x, T y) {
    T ax = fabs(x), ay = fabs(y);
    if (ax < ay) { T t = ax; ax = ay; ay = t; }
    if (ax >= (T)0.5 && ax < (T)2) return (T)0.5 * log1p(sq_sum((T)-1, ax, ay));
    // Scaled by a power of two where |z| would be subnormal (rounded to a few bits) or overflow.
    const bool is_f = is_same<T, float>::value;
    if (ax < (is_f ? (T)4.70197740328915e-38 : (T)8.900295434028806e-308)) {  // 2^-124, 2^-1020
        const T up = is_f ? (T)281474976710656.0 : (T)324518553658426726783156020576256.0;  // 2^48, 2^108
        return log(hypot(ax * up, ay * up)) - (is_f ? (T)33.27106466687737 : (T)74.8598955004741);
    }
    if (ax > (is_f ? (T)1e38 : (T)1e308)) return log(hypot(ax * (T)0.25, ay * (T)0.25)) + (T)1.3862943611198906;
    return log(hypot(x, y));
}

template <typename T> __device__ inline complex<T> clog(complex<T> z) {
    return cplx(log_abs(z.re, z.im), atan2(z.im, z.re));
}

// log(1 + z): log|1 + z| = log1p(2x + x^2 + y^2) / 2 wherever |1 + z|^2 > 1/2 (and the
// parts are moderate), the sum taken by sq_sum so that tiny z (NumPy's log(hypot(1 + x, y))
// returns 0 for log1p(1e-20 + 0i)) and z near the circle |1 + z| = 1 keep their digits;
// elsewhere log of 1 + z, whose rounding then costs no relative accuracy.
template <typename T> __device__ inline complex<T> clog1p(complex<T> z) {
    T x = z.re, y = z.im;
    if (fabs(x) < (T)2 && fabs(y) < (T)2) {
        T u = sq_sum((T)2 * x, x, y);  // |1 + z|^2 - 1
        if (u > (T)-0.5) return cplx((T)0.5 * log1p(u), atan2(y, x + (T)1));
    }
    return clog(cplx(x + (T)1, y));
}

template <typename T> __device__ inline complex<T> csinh(complex<T> z) {
    T x = z.re, y = z.im;
    if (y == (T)0) return cplx(sinh(x), y);
    if (!isfinite(y) && (isinf(x) || x == (T)0)) return cplx(x, nan_v<T>());
    if (isfinite(x) && isfinite(y) && fabs(x) > exp_split<T>()) {  // sinh(x) = sign(x) cosh(x) = e^|x| / 2
        complex<T> w = exp_times(fabs(x), cos(y), sin(y), (T)0.5);
        return cplx(copysign((T)1, x) * w.re, w.im);
    }
    return cplx(sinh(x) * cos(y), cosh(x) * sin(y));
}

template <typename T> __device__ inline complex<T> ccosh(complex<T> z) {
    T x = z.re, y = z.im;
    if (y == (T)0) {
        T im = isnan(x) ? y : copysign((T)0, x) * y;
        return cplx(cosh(x), im);
    }
    if (!isfinite(y) && isinf(x)) return cplx(inf_v<T>(), nan_v<T>());
    if (!isfinite(y) && x == (T)0) return cplx(nan_v<T>(), (T)0);
    if (isfinite(x) && isfinite(y) && fabs(x) > exp_split<T>()) {
        complex<T> w = exp_times(fabs(x), cos(y), sin(y), (T)0.5);
        return cplx(w.re, copysign((T)1, x) * w.im);
    }
    return cplx(cosh(x) * cos(y), sinh(x) * sin(y));
}

template <typename T> __device__ inline complex<T> ctanh(complex<T> z) {
    T x = z.re, y = z.im;
    // The standard: tanh(+inf + y j) is 1 + 0j for y > 0 (C99 takes the sign of sin(2y)).
    if (isinf(x)) return cplx(copysign((T)1, x), copysign((T)0, y));
    if (isnan(x)) return y == (T)0 ? cplx(x, y) : cplx(x, x);
    if (!isfinite(y)) return x == (T)0 ? cplx(x, nan_v<T>()) : cplx(nan_v<T>(), nan_v<T>());
    const T large = is_same<T, float>::value ? (T)9 : (T)22;
    if (fabs(x) > large) {
        return cplx(copysign((T)1, x), 4 * sin(y) * cos(y) * exp(-2 * fabs(x)));
    }
    T t = tan(y);
    T beta = 1 + t * t;
    T s = sinh(x);
    T rho = sqrt(1 + s * s);
    T denom = 1 + beta * s * s;
    return cplx(beta * rho * s / denom, t / denom);
}

// |z| beyond 1/eps: there asin, asinh, acos and acosh are log(2z) plus terms below half an
// ulp (as in FreeBSD's), and Kahan's products of square roots, ~|z|, would overflow near the
// largest finite values (acos(1.7e308 + 1.7e308i) gave -inf i).
template <typename T> __device__ __forceinline__ bool huge_for_inverse(T x, T y) {
    const T recip_eps = is_same<T, float>::value ? (T)8388608.0 : (T)4503599627370496.0;  // 2^23, 2^52
    return fabs(x) > recip_eps || fabs(y) > recip_eps;
}

// asin of finite z (Kahan); casin and casinh below handle the special values.
template <typename T> __device__ inline complex<T> casin_finite(complex<T> z) {
    complex<T> s1 = csqrt(cplx((T)1 - z.re, -z.im));
    complex<T> s2 = csqrt(cplx((T)1 + z.re, z.im));
    return cplx(atan2(z.re, s1.re * s2.re - s1.im * s2.im), asinh(s1.re * s2.im - s1.im * s2.re));
}

// C99 G.6.2.2 / the standard's list, for both signs of each part (asinh is odd and
// commutes with conj).
template <typename T> __device__ inline complex<T> casinh(complex<T> z) {
    T x = z.re, y = z.im;
    const T half_pi = (T)1.5707963267948966, quarter_pi = (T)0.7853981633974483;
    if (isinf(y)) {
        if (isnan(x)) return cplx(inf_v<T>(), x);
        return cplx(copysign(inf_v<T>(), x), copysign(isinf(x) ? quarter_pi : half_pi, y));
    }
    if (isinf(x)) return cplx(x, isnan(y) ? y : copysign((T)0, y));
    if (isnan(x)) return y == (T)0 ? cplx(x, y) : cplx(nan_v<T>(), nan_v<T>());
    if (isnan(y)) return cplx(nan_v<T>(), nan_v<T>());
    if (huge_for_inverse(x, y)) {  // asinh z = log 2z + O(z^-2) (odd, and conj-symmetric)
        T re = log_abs(x, y) + (T)0.6931471805599453, im = atan2(fabs(y), fabs(x));
        return cplx(copysign(re, x), copysign(im, y));
    }
    return mul_neg_i(casin_finite(mul_i(z)));  // asinh(z) = -i asin(i z)
}

template <typename T> __device__ inline complex<T> casin(complex<T> z) {
    return mul_neg_i(casinh(mul_i(z)));  // asin(z) = -i asinh(i z)
}

// C99 G.6.1.1 / the standard's list, both signs of the imaginary part (acos(conj z) =
// conj(acos z)); finite arguments by Kahan's formula.
template <typename T> __device__ inline complex<T> cacos(complex<T> z) {
    T x = z.re, y = z.im;
    const T pi = (T)3.141592653589793, half_pi = (T)1.5707963267948966;
    if (isinf(y)) {
        T re = isnan(x) ? x : (isinf(x) ? (x > (T)0 ? pi / 4 : 3 * pi / 4) : half_pi);
        return cplx(re, -y);
    }
    if (isinf(x)) {
        // Im: -sign(y) read off the bit (a GPU's -y of a NaN may come out positive)
        if (isnan(y)) return cplx(y, signbit(y) ? inf_v<T>() : -inf_v<T>());
        return cplx(x > (T)0 ? (T)0 : pi, copysign(inf_v<T>(), -y));
    }
    if (isnan(x)) return cplx(nan_v<T>(), nan_v<T>());
    if (isnan(y)) return x == (T)0 ? cplx(half_pi, y) : cplx(nan_v<T>(), nan_v<T>());
    if (huge_for_inverse(x, y)) {  // acos z = -+i log 2z + O(z^-2) (Im acos z has -sign(Im z))
        T re = atan2(fabs(y), x), im = log_abs(x, y) + (T)0.6931471805599453;
        return cplx(re, signbit(y) ? im : -im);
    }
    complex<T> s1 = csqrt(cplx((T)1 - z.re, -z.im));
    complex<T> s2 = csqrt(cplx((T)1 + z.re, z.im));
    return cplx(2 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}

// acosh(z) = +-i acos(z), the sign taken from the imaginary part of z (as musl does): every
// special value of cacos becomes the one the standard lists for acosh, but for +-inf + NaN i,
// whose +inf would rest on the sign of a NaN: explicit.
template <typename T> __device__ inline complex<T> cacosh(complex<T> z) {
    if (isinf(z.re) && isnan(z.im)) return cplx(inf_v<T>(), z.im);
    complex<T> w = cacos(z);
    return signbit(z.im) ? cplx(w.im, -w.re) : cplx(-w.im, w.re);
}

template <typename T> __device__ inline complex<T> catanh(complex<T> z) {
    T x = z.re, y = z.im;
    const T half_pi = (T)1.5707963267948966;
    if (isinf(y)) return cplx(isnan(x) ? (T)0 : copysign((T)0, x), copysign(half_pi, y));
    if (isinf(x)) return cplx(copysign((T)0, x), isnan(y) ? y : copysign(half_pi, y));
    if (isnan(x) || isnan(y)) return x == (T)0 ? cplx(x, y) : cplx(nan_v<T>(), nan_v<T>());
    if (x == (T)0) return cplx(x, atan(y));  // exact, and keeps the sign of a zero real part
    // Finite x != 0: FreeBSD's catanh (Montgomery-Smith, after Hull, Fairgrieve and Tang), with
    // no log1p(z) - log1p(-z), which cancels to nothing for |z| >> 1 (atanh(1e30 + 1e-10i) has
    // the real part 1e-30, not 0).
    T ax = fabs(x), ay = fabs(y);
    if (y == (T)0 && ax <= (T)1) return cplx(atanh(x), y);
    const T eps = is_same<T, float>::value ? (T)1.1920928955078125e-07 : (T)2.220446049250313e-16;
    const T ln2 = (T)0.6931471805599453;
    T rx, ry;
    if (ax > (T)1 / eps || ay > (T)1 / eps) {
        // atanh z = atanh(1/z) +- i pi/2, and atanh(1/z) = 1/z to within |z|^-2 relatively.
        rx = recip_re(ax, ay);
        ry = half_pi - recip_re(ay, ax);
    } else if (ax < (T)0.5 * sqrt((T)3 * eps) && ay < (T)0.5 * sqrt((T)3 * eps)) {
        return z;  // z + z^3 / 3 + ...: the cube is below half an ulp of each part
    } else {
        // Re = log(|1 + z|^2 / |1 - z|^2) / 4 = log1p(4|x| / ((|x| - 1)^2 + y^2)) / 4;
        // Im = arg((1 + z)(1 - conj z)) / 2 = atan2(2y, (1 - x)(1 + x) - y^2) / 2.
        if (ax == (T)1 && ay < eps) rx = (ln2 - log(ay)) * (T)0.5;
        else rx = log1p((T)4 * ax / ((ax - (T)1) * (ax - (T)1) + ay * ay)) * (T)0.25;
        if (ax == (T)1) ry = atan2((T)2, -ay) * (T)0.5;
        else if (ay < eps) ry = atan2((T)2 * ay, ((T)1 - ax) * ((T)1 + ax)) * (T)0.5;
        else ry = atan2((T)2 * ay, ((T)1 - ax) * ((T)1 + ax) - ay * ay) * (T)0.5;
    }
    return cplx(copysign(rx, x), copysign(ry, y));
}

template <typename T> __device__ inline complex<T> catan(complex<T> z) {
    return mul_neg_i(catanh(mul_i(z)));  // atan(z) = -i atanh(i z)
}

// z w as C99 Annex G (and libgcc's __muldc3, which glibc's cpow calls for b * log(a)) multiply:
// the plain product, except that where it gives nan + nan i with an infinite factor (or an
// overflowing product) the infinities are recovered: (0.5 + 0i)(inf + nan i) = inf + nan i.
template <typename T> __device__ inline complex<T> cmul_annex_g(complex<T> z, complex<T> w) {
    T a = z.re, b = z.im, c = w.re, d = w.im;
    T ac = a * c, bd = b * d, ad = a * d, bc = b * c;
    T x = ac - bd, y = ad + bc;
    if (isnan(x) && isnan(y)) {
        bool again = false;
        if (isinf(a) || isinf(b)) {  // z infinite: box it, and NaN parts of w become 0
            a = copysign(isinf(a) ? (T)1 : (T)0, a);
            b = copysign(isinf(b) ? (T)1 : (T)0, b);
            if (isnan(c)) c = copysign((T)0, c);
            if (isnan(d)) d = copysign((T)0, d);
            again = true;
        }
        if (isinf(c) || isinf(d)) {  // w infinite: likewise
            c = copysign(isinf(c) ? (T)1 : (T)0, c);
            d = copysign(isinf(d) ? (T)1 : (T)0, d);
            if (isnan(a)) a = copysign((T)0, a);
            if (isnan(b)) b = copysign((T)0, b);
            again = true;
        }
        if (!again && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {  // overflow
            if (isnan(a)) a = copysign((T)0, a);
            if (isnan(b)) b = copysign((T)0, b);
            if (isnan(c)) c = copysign((T)0, c);
            if (isnan(d)) d = copysign((T)0, d);
            again = true;
        }
        if (again) {
            x = inf_v<T>() * (a * c - b * d);
            y = inf_v<T>() * (a * d + b * c);
        }
    }
    return cplx(x, y);
}

// NumPy's npy_cpow, case for case: b == 0 gives 1 (even for a NaN a); a == 0 gives 0 for
// Re b > 0 (|0^b| = 0^Re(b) whatever Im b) and NaN otherwise; integer b with |b| < 100 by
// repeated multiplication (b == 1 returns a itself, 2 is a * a and 3 is a * (a * a), so
// inf + 0i squared is inf + nan i exactly as in NumPy, whose plain complex product gives
// inf * 0 = nan); anything else exp(b log a) with C99's product, as glibc's cpow. On the GPU,
// fma contraction changes the last bits of the products (not which parts are inf or NaN).
template <typename T> __device__ inline complex<T> cpow(complex<T> a, complex<T> b) {
    if (b.re == (T)0 && b.im == (T)0) return cplx((T)1, (T)0);
    if (a.re == (T)0 && a.im == (T)0) {
        if (b.re > (T)0) return cplx((T)0, (T)0);
        return cplx(nan_v<T>(), nan_v<T>());
    }
    if (b.im == (T)0 && b.re == trunc(b.re) && fabs(b.re) < (T)100) {
        int n = (int)b.re;
        if (n == 1) return a;
        if (n == 2) return a * a;
        if (n == 3) return a * (a * a);
        int m = n < 0 ? -n : n;
        complex<T> acc = cplx((T)1, (T)0), p = a;
        while (true) {
            if (m & 1) acc = acc * p;
            m >>= 1;
            if (!m) break;
            p = p * p;
        }
        return n < 0 ? cplx((T)1, (T)0) / acc : acc;
    }
    return cexp(cmul_annex_g(b, clog(a)));
}

}  // namespace ic
