// Strided copy ("rearrange"): dst[i] = src[i] for every multi-index i of one shape, with any
// byte strides on both sides. The host planner (infini_cupy/planner.py) merges dims, picks the
// copy unit and splits the dims into block dims (threads) and grid dims (blocks).
#include "common.cuh"

namespace ic {

// Decomposes `linear` over `len` (last index fastest) and accumulates both byte offsets.
// Returns the per-dim indices the constraints need.
template <int N, typename Index>
__device__ __forceinline__ void decompose(Index linear, const ArrayStruct<N, index_t> &len,
                                          const ArrayStruct<N, index_t> &src_stride,
                                          const ArrayStruct<N, index_t> &dst_stride,
                                          index_t &src_offset, index_t &dst_offset,
                                          index_t (&idx)[N]) {
#pragma unroll
    for (int d = N - 1; d >= 0; --d) {
        const Index l = static_cast<Index>(len.a[d]);
        const Index i = linear % l;
        linear /= l;
        idx[d] = i;
        src_offset += i * src_stride.a[d];
        dst_offset += i * dst_stride.a[d];
    }
}

}  // namespace ic

// The planned copy. Thread t of block b: t is decomposed over block_len and b over grid_len;
// it copies one UnitBytes unit unless t >= block_elems or a constraint excludes it (the tail of
// a dim split into grid x block parts that does not divide). Blocks loop with stride gridDim.x
// so grids larger than one launch allows need no second launch.
template <int UnitBytes, int B, int G, int C>
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
    if (static_cast<index_t>(threadIdx.x) >= block_elems) return;

    // The thread's part of the offsets is the same for every block it visits.
    index_t src_thread = 0, dst_thread = 0;
    index_t block_idx[B];
    // At most 1024 threads: 32-bit division is enough and much cheaper.
    ic::decompose<B, unsigned int>(threadIdx.x, block_len, src_block_stride, dst_block_stride,
                                   src_thread, dst_thread, block_idx);

    for (index_t b = blockIdx.x; b < grid_blocks; b += gridDim.x) {
        index_t src_offset = src_thread, dst_offset = dst_thread;
        index_t grid_idx[G];
        ic::decompose<G, index_t>(b, grid_len, src_grid_stride, dst_grid_stride, src_offset,
                                  dst_offset, grid_idx);
        bool inside = true;
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const ic::Constraint<index_t> k = constraints.a[c];
            index_t g = 0, t = 0;
            // Runtime indices into register arrays would spill them to local memory: select.
#pragma unroll
            for (int d = 0; d < G; ++d) g = (d == k.grid_idx) ? grid_idx[d] : g;
#pragma unroll
            for (int d = 0; d < B; ++d) t = (d == k.block_idx) ? block_idx[d] : t;
            inside = inside && (g * k.grid_div_block + t < k.total_len);
        }
        if (inside) {
            ic::st(ic::at<unit_t>(dst, dst_offset), ic::ld(ic::at<unit_t>(src, src_offset)));
        }
    }
}

// The layout-agnostic fallback (any number of dims up to 64): thread i copies element i of the
// C-order enumeration of `shape`, grid-stride loop over all elements.
template <int UnitBytes>
__global__ void rearrange_general(void *__restrict__ dst, const void *__restrict__ src,
                                  ic::ArrayStruct<64, ic::index_t> shape,
                                  ic::ArrayStruct<64, ic::index_t> src_strides,
                                  ic::ArrayStruct<64, ic::index_t> dst_strides, int ndim,
                                  ic::index_t total) {
    using ic::index_t;
    typedef typename ic::UnitOf<UnitBytes>::type unit_t;
    const index_t step = static_cast<index_t>(gridDim.x) * blockDim.x;
    for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
         i += step) {
        index_t rest = i, src_offset = 0, dst_offset = 0;
        for (int d = ndim - 1; d >= 0; --d) {
            const index_t k = rest % shape.a[d];
            rest /= shape.a[d];
            src_offset += k * src_strides.a[d];
            dst_offset += k * dst_strides.a[d];
        }
        ic::st(ic::at<unit_t>(dst, dst_offset), ic::ld(ic::at<unit_t>(src, src_offset)));
    }
}
