// One pass over an operand laid out across the walk (`add(a, b.T)`): ew_tiled<Op, Tout, Tin,
// Staged> reads input `Staged` through a shared-memory tile, so each of its warp
// accesses runs along its own contiguous dim, while the output and the other inputs are read
// and written along theirs. Where the host planner (infini_cupy/elementwise/tiled_plan.py)
// finds no such layout, the call copies the operand into walk order first (two passes).
//
// The walk: dims (batch, rows, cols), outermost first. The output and every other array
// input run along cols (stride of one element, or 0: broadcast); the staged input runs along
// rows. A block takes a 32 x 32 tile of (rows, cols) at a time, a grid-stride loop over the
// tiles (batch, tile row, tile column; last fastest):
//   phase 1: warp w loads cols w, w + 8, w + 16, w + 24 of the staged input, lane l taking row
//            l: 32 consecutive elements of its memory per warp access; shared slot
//            (col, row) = col * PITCH + row;
//   phase 2: warp w computes rows w, w + 8, ... of the tile, lane l taking col l: the staged
//            value from slot l * PITCH + row, the others from global memory, the result
//            stored to the output, 32 consecutive elements per warp access.
// The tile's pitch is an odd number of 4-byte words for elements of up to 4 bytes (33, 34, 36
// elements of 4, 2, 1 bytes) and 33 elements beyond: phase 2's column reads then fall in 32
// different banks (8- and 16-byte elements per half or quarter warp, as the hardware serves
// them), and phase 1's row stores are consecutive.
#pragma once

#include "common.cuh"
#include "divisor.cuh"

namespace ic {

constexpr int EW_TILE = 32;       // tile rows and cols: one warp's lanes
constexpr int EW_TILE_WARPS = 4;  // warps per block: each thread takes 8 items per phase
template <typename T>
struct TilePitch {  // elements
    static constexpr int value = EW_TILE + (sizeof(T) < 4 ? 4 / sizeof(T) : 1);
};

// The walk of ew_tiled, packed once on the host as int64 fields.
struct TiledWalk {
    index_t rows, cols;            // lengths of the tiled dims (the batch is `tiles` over them)
    index_t tiles_rows, tiles_cols;            // tiles along each
    index_t tiles_rows_magic, tiles_cols_magic;  // Divisor magics of the two
    index_t tiles;                 // batch length x tiles_rows x tiles_cols
    // Byte strides per operand k (0 the output, 1..3 the inputs) along batch, rows, cols.
    index_t batch_stride[4], row_stride[4], col_stride[4];
};

}  // namespace ic

template <typename Op, typename Tout, typename Tin, int Staged>
__global__ void __launch_bounds__(ic::EW_TILE * ic::EW_TILE_WARPS)
ew_tiled(Tout *out, const Tin *in0, const Tin *in1, const Tin *in2, Tin s0, Tin s1, Tin s2,
         int scalar_mask, ic::TiledWalk w, int /* vectorized: every elementwise kernel's
         last argument; this one has no 16-byte path */) {
    using ic::index_t;
    typedef typename ic::compute_for<Op, Tin>::type C;
    constexpr int NIN = Op::arity;
    static_assert(Staged < NIN, "the staged operand is an input");
    constexpr int ITEMS = ic::EW_TILE / ic::EW_TILE_WARPS;
    constexpr int PITCH = ic::TilePitch<Tin>::value;
    __shared__ Tin tile[ic::EW_TILE * PITCH];
    const Tin *in[3] = {in0, in1, in2};
    const C sval[3] = {ic::convert<C>(s0), ic::convert<C>(s1), ic::convert<C>(s2)};
    const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
    const ic::Divisor by_cols(static_cast<unsigned>(w.tiles_cols),
                              static_cast<unsigned>(w.tiles_cols_magic));
    const ic::Divisor by_rows(static_cast<unsigned>(w.tiles_rows),
                              static_cast<unsigned>(w.tiles_rows_magic));
    // Byte offsets inside a tile fit 32 bits (the planner checks): this thread's, the same in
    // every tile. Phase 1 reads the staged input's (lane, col) with col = warp + 8 it; phase 2
    // operand k's (row, lane) with row = warp + 8 it, `step` bytes apart.
    int staged_at[ITEMS], at[NIN + 1], step[NIN + 1];
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        staged_at[it] = lane * static_cast<int>(w.row_stride[Staged + 1]) +
                        (warp + it * ic::EW_TILE_WARPS) * static_cast<int>(w.col_stride[Staged + 1]);
    }
#pragma unroll
    for (int k = 0; k <= NIN; ++k) {
        at[k] = warp * static_cast<int>(w.row_stride[k]) + lane * static_cast<int>(w.col_stride[k]);
        step[k] = ic::EW_TILE_WARPS * static_cast<int>(w.row_stride[k]);
    }
    for (index_t b = blockIdx.x; b < w.tiles; b += gridDim.x) {
        // Tiles are counted in 32 bits (the planner takes no walk of 2^32 tiles or more).
        unsigned tile_col, tile_row;
        const unsigned batch = by_rows.div(by_cols.div(static_cast<unsigned>(b), tile_col), tile_row);
        const index_t row0 = static_cast<index_t>(tile_row) * ic::EW_TILE;
        const index_t col0 = static_cast<index_t>(tile_col) * ic::EW_TILE;
        // Rows and cols of this tile inside the walk (the last tile of each may be short).
        const int nrows = static_cast<int>(w.rows - row0 < ic::EW_TILE ? w.rows - row0 : ic::EW_TILE);
        const int ncols = static_cast<int>(w.cols - col0 < ic::EW_TILE ? w.cols - col0 : ic::EW_TILE);
        // Operand k's tile starts `corner(k)` bytes past its pointer.
        auto corner = [&](int k) {
            return batch * w.batch_stride[k] + row0 * w.row_stride[k] + col0 * w.col_stride[k];
        };

        // Phase 1: the staged input, each warp access along its rows (lane = row).
        const char *source = reinterpret_cast<const char *>(in[Staged]) + corner(Staged + 1);
        Tin staged[ITEMS];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int col = warp + it * ic::EW_TILE_WARPS;
            ic::load_if<false>(lane < nrows && col < ncols,
                               reinterpret_cast<const Tin *>(source + staged_at[it]), staged[it]);
        }
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int col = warp + it * ic::EW_TILE_WARPS;
            ic::store_if<true>(lane < nrows && col < ncols, tile + col * PITCH + lane, staged[it]);
        }
        __syncthreads();

        // Phase 2: every other operand along its cols (lane = col), all loads first.
        Tin value[ITEMS][NIN];
#pragma unroll
        for (int k = 0; k < NIN; ++k) {
            const char *operand = reinterpret_cast<const char *>(in[k]) + corner(k + 1) + at[k + 1];
#pragma unroll
            for (int it = 0; it < ITEMS; ++it) {
                const int row = warp + it * ic::EW_TILE_WARPS;
                const bool on = row < nrows && lane < ncols;
                if (k == Staged) {
                    ic::load_if<true>(on, tile + lane * PITCH + row, value[it][k]);
                } else {  // a scalar's pointer is never read
                    ic::load_if<false>(on && !(scalar_mask >> k & 1),
                                       reinterpret_cast<const Tin *>(operand + it * step[k + 1]),
                                       value[it][k]);
                }
            }
        }
        char *target = reinterpret_cast<char *>(out) + corner(0) + at[0];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int row = warp + it * ic::EW_TILE_WARPS;
            C v[NIN];
#pragma unroll
            for (int k = 0; k < NIN; ++k) {
                v[k] = k != Staged && (scalar_mask >> k & 1) ? sval[k] : ic::convert<C>(value[it][k]);
            }
            ic::store_if<false>(row < nrows && lane < ncols,
                                reinterpret_cast<Tout *>(target + it * step[0]),
                                ic::convert<Tout>(ic::apply<Op>(v)));
        }
        __syncthreads();  // the next tile overwrites shared memory
    }
}
