// Strided copy ("rearrange"): dst[i] = src[i] for every multi-index i of one shape, with any
// byte strides on both sides. The host planner (infini_cupy/strided/seed_planner.py) merges dims,
// picks the copy unit and splits the dims into block dims (threads) and grid dims (blocks).
//
// Both kernels take an Index type: int when the host has checked that every byte offset of
// both layouts (and the element count) fits in 31 bits, else long long. 32-bit offsets halve
// the index arithmetic, and no kernel divides by a runtime value in its copy loop: the matrix
// kernel walks its grid dims with an odometer, the flat-index kernel divides by multiplying
// with magic numbers the host computed.
#include "common.cuh"

namespace ic {

// Units each thread copies per trip through the copy loop, all loaded before any is stored,
// so that every thread keeps several loads in flight (small units need the most to cover the
// memory latency; 32-byte units are already two 16-byte accesses each).
template <int UnitBytes>
struct UnitsPerThread {
    static constexpr int value = UnitBytes <= 2 ? 8 : (UnitBytes <= 16 ? 4 : 2);
};

// Decomposes `linear` over `len` (last index fastest) and accumulates both byte offsets.
// Returns the per-dim indices the constraints need.
template <int N, typename Index, typename Linear>
__device__ __forceinline__ void decompose(Linear linear, const ArrayStruct<N, index_t> &len,
                                          const ArrayStruct<N, index_t> &src_stride,
                                          const ArrayStruct<N, index_t> &dst_stride,
                                          Index &src_offset, Index &dst_offset, Index (&idx)[N]) {
#pragma unroll
    for (int d = N - 1; d >= 0; --d) {
        const Linear l = static_cast<Linear>(len.a[d]);
        const Linear i = linear % l;
        linear /= l;
        idx[d] = static_cast<Index>(i);
        src_offset += static_cast<Index>(i) * static_cast<Index>(src_stride.a[d]);
        dst_offset += static_cast<Index>(i) * static_cast<Index>(dst_stride.a[d]);
    }
}

}  // namespace ic

// The planned copy. Thread t of a block is decomposed over block_len; a logical block b over
// grid_len. Thread t of logical block b copies one UnitBytes unit unless t >= block_elems or a
// constraint excludes it (the tail of a dim split into grid x block parts that does not
// divide). Each launched block copies a contiguous range of logical blocks, so any grid size
// is correct: the range's first block is decomposed once, the others are reached by stepping
// the grid indices (an odometer: add the innermost stride, carry on wrap-around), and the
// thread's own offsets and constraint limits are computed once. Index: see the file comment.
template <int UnitBytes, int B, int G, int C, typename Index = long long>
__global__ void rearrange(void *__restrict__ dst, const void *__restrict__ src,
                          ic::ArrayStruct<B, ic::index_t> block_len,
                          ic::ArrayStruct<B, ic::index_t> src_block_stride,
                          ic::ArrayStruct<B, ic::index_t> dst_block_stride,
                          ic::ArrayStruct<G, ic::index_t> grid_len,
                          ic::ArrayStruct<G, ic::index_t> src_grid_stride,
                          ic::ArrayStruct<G, ic::index_t> dst_grid_stride,
                          ic::ArrayStruct<(C > 0 ? C : 1), ic::Constraint<ic::index_t>> constraints,
                          ic::index_t block_elems, ic::index_t grid_blocks) {
    using ic::index_t;
    typedef typename ic::UnitOf<UnitBytes>::type unit_t;
    constexpr int K = ic::UnitsPerThread<UnitBytes>::value;
    if (static_cast<index_t>(threadIdx.x) >= block_elems) return;

    // This block's range [first, last) of logical blocks: contiguous, as equal as possible.
    const Index blocks = static_cast<Index>(grid_blocks);
    const Index per_block = blocks / static_cast<Index>(gridDim.x);
    const Index extra = blocks % static_cast<Index>(gridDim.x);
    const Index bx = static_cast<Index>(blockIdx.x);
    const Index first = bx * per_block + (bx < extra ? bx : extra);
    const Index last = first + per_block + (bx < extra ? 1 : 0);
    if (first >= last) return;

    // The thread's part of the offsets (at most 1024 threads: 32-bit division).
    Index src_thread = 0, dst_thread = 0;
    Index block_idx[B];
    ic::decompose<B, Index, unsigned int>(threadIdx.x, block_len, src_block_stride,
                                          dst_block_stride, src_thread, dst_thread, block_idx);

    // A constraint g * grid_div_block + t < total_len, for this thread's t, is g <= limit:
    // one limit per grid dim (the grid index never exceeds grid_len - 1 anyway).
    Index limit[G];
#pragma unroll
    for (int d = 0; d < G; ++d) limit[d] = static_cast<Index>(grid_len.a[d]) - 1;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const ic::Constraint<index_t> k = constraints.a[c];
        Index t = 0;
        // Runtime indices into register arrays would spill them to local memory: select.
#pragma unroll
        for (int d = 0; d < B; ++d) t = (d == k.block_idx) ? block_idx[d] : t;
        // Clamped first, so that the division is done in Index (any limit past grid_len - 1
        // is as good as grid_len - 1).
        index_t room = k.total_len - 1 - static_cast<index_t>(t);
        if (sizeof(Index) == 4 && room > 2147483647LL) room = 2147483647LL;
        const Index at_most = static_cast<Index>(room) / static_cast<Index>(k.grid_div_block);
#pragma unroll
        for (int d = 0; d < G; ++d)
            limit[d] = (d == k.grid_idx && at_most < limit[d]) ? at_most : limit[d];
    }

    // The first logical block's grid indices and offsets; later ones by stepping.
    Index grid_idx[G];
    Index src_offset = src_thread, dst_offset = dst_thread;
    ic::decompose<G, Index, Index>(first, grid_len, src_grid_stride, dst_grid_stride, src_offset,
                                   dst_offset, grid_idx);
    // The constraints on the outer grid dims change only when the odometer carries.
    bool outer_inside = true;
#pragma unroll
    for (int d = 0; d < G - 1; ++d) outer_inside = outer_inside && grid_idx[d] <= limit[d];

    const Index inner_len = static_cast<Index>(grid_len.a[G - 1]);
    const Index inner_src = static_cast<Index>(src_grid_stride.a[G - 1]);
    const Index inner_dst = static_cast<Index>(dst_grid_stride.a[G - 1]);
    // Past the end of the innermost grid dim: reset it, step the next one (and so on out).
    auto carry = [&]() {
#pragma unroll
        for (int d = G - 1; d > 0; --d) {
            if (grid_idx[d] != static_cast<Index>(grid_len.a[d])) break;
            const Index len = static_cast<Index>(grid_len.a[d]);
            grid_idx[d] = 0;
            ++grid_idx[d - 1];
            src_offset += static_cast<Index>(src_grid_stride.a[d - 1]) -
                          len * static_cast<Index>(src_grid_stride.a[d]);
            dst_offset += static_cast<Index>(dst_grid_stride.a[d - 1]) -
                          len * static_cast<Index>(dst_grid_stride.a[d]);
        }
        outer_inside = true;
#pragma unroll
        for (int d = 0; d < G - 1; ++d) outer_inside = outer_inside && grid_idx[d] <= limit[d];
    };
    const char *src_bytes = static_cast<const char *>(src);
    char *dst_bytes = static_cast<char *>(dst);
    for (Index b = first; b < last;) {
        // Branches below depend on the logical block only: the whole block takes the same one.
        if (inner_len - grid_idx[G - 1] >= K && last - b >= K) {
            // K logical blocks along one row of the innermost grid dim: K units whose
            // addresses are one multiply-add from the first, every load before any store.
            const char *from = src_bytes + src_offset;
            char *to = dst_bytes + dst_offset;
            const Index room = limit[G - 1] - grid_idx[G - 1];  // units allowed past the first
            unit_t value[K];
#pragma unroll
            for (int u = 0; u < K; ++u)
                if (C == 0 || (outer_inside && u <= room))
                    value[u] = ic::ld(reinterpret_cast<const unit_t *>(from + static_cast<index_t>(inner_src) * u));
#pragma unroll
            for (int u = 0; u < K; ++u)
                if (C == 0 || (outer_inside && u <= room))
                    ic::st(reinterpret_cast<unit_t *>(to + static_cast<index_t>(inner_dst) * u), value[u]);
            b += K;
            grid_idx[G - 1] += K;
            src_offset += K * inner_src;
            dst_offset += K * inner_dst;
        } else {  // the end of a row or of the range: one unit
            if (outer_inside && grid_idx[G - 1] <= limit[G - 1])
                ic::st(ic::at<unit_t>(dst, static_cast<index_t>(dst_offset)),
                       ic::ld(ic::at<unit_t>(src, static_cast<index_t>(src_offset))));
            ++b;
            ++grid_idx[G - 1];
            src_offset += inner_src;
            dst_offset += inner_dst;
        }
        if (grid_idx[G - 1] == inner_len) carry();
    }
}

// The flat-index kernel (any number of dims up to 64, for layouts the matrix does not cover):
// element i of the C-order enumeration of `shape` is copied by thread i % blockDim.x of trip
// i / (blockDim.x * K) of a grid-stride loop; each thread loads its K elements of a trip
// before storing them. Dividing by shape[d] is a multiply-high and a shift by magic[d] and
// shift[d] (round-up division by invariant integers, host-computed: exact for every
// numerator below 2^31 (Index int) or 2^63 (long long) and every divisor >= 2).
template <int UnitBytes, typename Index = long long>
__global__ void rearrange_general(void *__restrict__ dst, const void *__restrict__ src,
                                  ic::ArrayStruct<64, ic::index_t> shape,
                                  ic::ArrayStruct<64, ic::index_t> src_strides,
                                  ic::ArrayStruct<64, ic::index_t> dst_strides,
                                  ic::ArrayStruct<64, ic::index_t> magic,
                                  ic::ArrayStruct<64, ic::index_t> shift, int ndim,
                                  ic::index_t total) {
    using ic::index_t;
    typedef typename ic::UnitOf<UnitBytes>::type unit_t;
    constexpr int K = ic::UnitsPerThread<UnitBytes>::value;
    const Index count = static_cast<Index>(total);
    const Index trip = static_cast<Index>(blockDim.x) * K;
    const Index step = trip * static_cast<Index>(gridDim.x);
    for (Index start = static_cast<Index>(blockIdx.x) * trip + static_cast<Index>(threadIdx.x);
         start < count; start += step) {
        unit_t value[K];
        Index dst_at[K];
        bool copy[K];
#pragma unroll
        for (int u = 0; u < K; ++u) {
            const Index i = start + static_cast<Index>(u) * static_cast<Index>(blockDim.x);
            copy[u] = i < count;
            Index rest = i, src_offset = 0, dst_offset = 0;
            for (int d = ndim - 1; d > 0; --d) {
                Index q;
                if constexpr (sizeof(Index) == 4) {
                    q = static_cast<Index>(__umulhi(static_cast<unsigned int>(rest),
                                                    static_cast<unsigned int>(magic.a[d])) >>
                                           shift.a[d]);
                } else {
                    q = static_cast<Index>(__umul64hi(static_cast<unsigned long long>(rest),
                                                      static_cast<unsigned long long>(magic.a[d])) >>
                                           shift.a[d]);
                }
                const Index k = rest - q * static_cast<Index>(shape.a[d]);
                rest = q;
                src_offset += k * static_cast<Index>(src_strides.a[d]);
                dst_offset += k * static_cast<Index>(dst_strides.a[d]);
            }
            src_offset += rest * static_cast<Index>(src_strides.a[0]);  // dim 0: what is left
            dst_offset += rest * static_cast<Index>(dst_strides.a[0]);
            dst_at[u] = dst_offset;
            if (copy[u]) value[u] = ic::ld(ic::at<unit_t>(src, static_cast<index_t>(src_offset)));
        }
#pragma unroll
        for (int u = 0; u < K; ++u)
            if (copy[u]) ic::st(ic::at<unit_t>(dst, static_cast<index_t>(dst_at[u])), value[u]);
    }
}
