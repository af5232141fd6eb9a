// Complex arithmetic and elementary functions for ic::complex<T>, with the special values
// of C99 Annex G / the array API standard where they cost only a branch (infinities, NaN,
// signed zeros). Inverse functions use Kahan's formulas ("Branch cuts for complex elementary
// functions", 1987), which stay accurate near the branch points without extra precision.
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
    // Scale huge inputs so |z| + |x| cannot overflow.
    const T big = is_same<T, float>::value ? (T)1e37 : (T)1e307;
    T scale = (T)1;
    if (fabs(x) > big || fabs(y) > big) {
        x *= (T)0.25;
        y *= (T)0.25;
        scale = (T)2;
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
    T e = exp(x);
    return cplx(e * cos(y), e * sin(y));
}

template <typename T> __device__ inline complex<T> cexpm1(complex<T> z) {
    T x = z.re, y = z.im;
    // +-0 + +-0j -> +0 + +-0j (the standard's special case; a real expm1 keeps -0's sign)
    if (y == (T)0) return cplx(x == (T)0 ? (T)0 : expm1(x), y);
    if (isinf(x) && !isfinite(y)) return x > (T)0 ? cplx(x, nan_v<T>()) : cplx((T)-1, (T)0);
    if (isinf(x) && x < (T)0) return cplx((T)-1, copysign((T)0, sin(y)));  // exactly +0 cis(y) - 1
    T a = sin(y * (T)0.5);
    return cplx(expm1(x) * cos(y) - 2 * a * a, exp(x) * sin(y));
}

// log|z| without losing the digits near |z| = 1.
template <typename T> __device__ inline T log_abs(T x, T y) {
    T ax = fabs(x), ay = fabs(y);
    if (ax < ay) { T t = ax; ax = ay; ay = t; }
    if (ax > (T)0.5 && ax < (T)2 && ay < (T)1) return (T)0.5 * log1p((ax - 1) * (ax + 1) + ay * ay);
    return log(hypot(x, y));
}

template <typename T> __device__ inline complex<T> clog(complex<T> z) {
    return cplx(log_abs(z.re, z.im), atan2(z.im, z.re));
}

template <typename T> __device__ inline complex<T> clog1p(complex<T> z) {
    T x = z.re, y = z.im;
    if (fabs(x) < (T)0.5 && fabs(y) < (T)0.5)
        return cplx((T)0.5 * log1p(x * ((T)2 + x) + y * y), atan2(y, x + (T)1));
    return clog(cplx(x + (T)1, y));
}

template <typename T> __device__ inline complex<T> csinh(complex<T> z) {
    T x = z.re, y = z.im;
    if (y == (T)0) return cplx(sinh(x), y);
    if (!isfinite(y) && (isinf(x) || x == (T)0)) return cplx(x, nan_v<T>());
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
        if (isnan(y)) return cplx(y, copysign(inf_v<T>(), -y));  // the sign acosh needs below
        return cplx(x > (T)0 ? (T)0 : pi, copysign(inf_v<T>(), -y));
    }
    if (isnan(x)) return cplx(nan_v<T>(), nan_v<T>());
    if (isnan(y)) return x == (T)0 ? cplx(half_pi, y) : cplx(nan_v<T>(), nan_v<T>());
    complex<T> s1 = csqrt(cplx((T)1 - z.re, -z.im));
    complex<T> s2 = csqrt(cplx((T)1 + z.re, z.im));
    return cplx(2 * atan2(s1.re, s2.re), asinh(s2.re * s1.im - s2.im * s1.re));
}

// acosh(z) = +-i acos(z), the sign taken from the imaginary part of z (as musl does): every
// special value of cacos becomes the one the standard lists for acosh.
template <typename T> __device__ inline complex<T> cacosh(complex<T> z) {
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
    complex<T> a = clog1p(z), b = clog1p(cplx(-x, -y));
    return cplx((a.re - b.re) * (T)0.5, (a.im - b.im) * (T)0.5);
}

template <typename T> __device__ inline complex<T> catan(complex<T> z) {
    return mul_neg_i(catanh(mul_i(z)));  // atan(z) = -i atanh(i z)
}

template <typename T> __device__ inline complex<T> cpow(complex<T> a, complex<T> b) {
    if (b.re == (T)0 && b.im == (T)0) return cplx((T)1, (T)0);
    if (a.re == (T)0 && a.im == (T)0) {
        if (b.re > (T)0 && b.im == (T)0) return cplx((T)0, (T)0);
        return cplx(nan_v<T>(), nan_v<T>());
    }
    if (b.im == (T)0 && b.re == trunc(b.re) && fabs(b.re) < (T)100) {
        // Small integer powers by repeated squaring, as NumPy does: exact for 1, 2, 3.
        int n = (int)b.re;
        int m = n < 0 ? -n : n;
        complex<T> acc = cplx((T)1, (T)0), p = a;
        while (m) {
            if (m & 1) acc = acc * p;
            p = p * p;
            m >>= 1;
        }
        return n < 0 ? cplx((T)1, (T)0) / acc : acc;
    }
    return cexp(b * clog(a));
}

}  // namespace ic
