// Division by a divisor known only at run time, as a multiply and one correction: the staged
// copies split work item numbers into indices with it, where an integer division would cost
// ~20 instructions (32-bit) or a call to the 64-bit division helper.
#pragma once

#include "common.cuh"

namespace ic {

// magic = floor((2^32 - 1) / d): umulhi(n, magic) is floor(n / d) or one less for every
// n < 2^32 (n * magic / 2^32 falls short of n / d by n * (2^32 - magic * d) / (d * 2^32) < 1),
// which the remainder corrects.
struct Divisor {
    unsigned d, magic;
    Divisor() = default;
    __device__ explicit Divisor(unsigned d_) : d(d_), magic(0xffffffffu / d_) {}
    __device__ Divisor(unsigned d_, unsigned magic_) : d(d_), magic(magic_) {}
    // (n / d, n % d)
    __device__ __forceinline__ unsigned div(unsigned n, unsigned &rem) const {
        unsigned q = __umulhi(n, magic);
        rem = n - q * d;
        if (rem >= d) {
            ++q;
            rem -= d;
        }
        return q;
    }
    __device__ __forceinline__ unsigned div(unsigned n) const {
        unsigned rem;
        return div(n, rem);
    }
};

// The same for dividends and divisors whose product stays below 2^32 (the work items of one
// tile and their row lengths, at most ~49,200 each): magic = ceil(2^32 / d) makes
// umulhi(n, magic) exact (it exceeds n / d by n * (magic * d - 2^32) / (d * 2^32) < n / 2^32,
// less than the 1 / d that separates n / d from the next integer), with no correction.
struct SmallDivisor {
    unsigned d, magic;  // magic 0 for d == 1 (2^32 does not fit): the quotient is n
    SmallDivisor() = default;
    __device__ explicit SmallDivisor(unsigned d_)
        : d(d_), magic(d_ > 1 ? 0xffffffffu / d_ + 1 : 0) {}
    __device__ SmallDivisor(unsigned d_, unsigned magic_) : d(d_), magic(magic_) {}
    __device__ __forceinline__ unsigned div(unsigned n, unsigned &rem) const {
        const unsigned q = d > 1 ? __umulhi(n, magic) : n;
        rem = n - q * d;
        return q;
    }
    // The same where the caller knows d > 1 (no test for the divisor 1).
    __device__ __forceinline__ unsigned div_above_one(unsigned n, unsigned &rem) const {
        const unsigned q = __umulhi(n, magic);
        rem = n - q * d;
        return q;
    }
};

}  // namespace ic
