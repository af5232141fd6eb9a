// One pass over an operand laid out across the walk (`add(a, b.T)`): ew_tiled<Op, Tout, Tin,
// Staged> reads input `Staged` through a shared-memory tile, so each of its warp
// accesses runs along its own contiguous dim, while the output and the other inputs are read
// and written along theirs; ew_tiled_out<Op, Tout, Tin> (at the end) writes the output
// through the tile instead. Where the host planner (infini_cupy/elementwise/tiled_plan.py)
// finds no such layout, the call copies the operand through the tiled copy (two passes).
//
// The walk: dims (batch, rows, cols), outermost first. The output and every other array
// input run along cols (stride of one element, or 0: broadcast); the staged input runs along
// rows. A block takes a 32 x 32 tile of (rows, cols) at a time, a grid-stride loop over the
// tiles (batch, tile row, tile column; last fastest):
//   phase 1: warp w loads cols w, w + 4, ..., w + 28 of the staged input, lane l taking row
//            l: 32 consecutive elements of its memory per warp access; shared slot
//            (col, row) = col * PITCH + row;
//   phase 2: warp w computes rows w, w + 4, ... of the tile, lane l taking col l: the staged
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

// Tile b of the walk (batch, tile row, tile column; last fastest): where it starts and how
// much of it lies inside the walk (the last tile of each dim may be short). Tiles are
// counted in 32 bits (the planner takes no walk of 2^32 tiles or more).
struct WalkTile {
    unsigned batch;
    index_t row0, col0;
    int rows, cols;
    __device__ WalkTile(const TiledWalk &w, index_t b) {
        unsigned tile_col, tile_row;
        const Divisor by_cols(static_cast<unsigned>(w.tiles_cols), static_cast<unsigned>(w.tiles_cols_magic));
        const Divisor by_rows(static_cast<unsigned>(w.tiles_rows), static_cast<unsigned>(w.tiles_rows_magic));
        batch = by_rows.div(by_cols.div(static_cast<unsigned>(b), tile_col), tile_row);
        row0 = static_cast<index_t>(tile_row) * EW_TILE;
        col0 = static_cast<index_t>(tile_col) * EW_TILE;
        rows = static_cast<int>(w.rows - row0 < EW_TILE ? w.rows - row0 : EW_TILE);
        cols = static_cast<int>(w.cols - col0 < EW_TILE ? w.cols - col0 : EW_TILE);
    }
    // Bytes from operand k's pointer to the tile's first element.
    __device__ index_t corner(const TiledWalk &w, int k) const {
        return batch * w.batch_stride[k] + row0 * w.row_stride[k] + col0 * w.col_stride[k];
    }
};

// Loads, into value[it][k], every array input k but `Skip` at (row warp + 4 it, col lane)
// of the tile (lane = col: each warp access along the inputs' cols); `at` and `step` as the
// kernels compute them. A scalar's pointer is never read.
template <int Skip, int ITEMS, int NIN, typename Tin>
__device__ __forceinline__ void load_along_cols(Tin (&value)[ITEMS][NIN], const Tin *const (&in)[3],
                                                const TiledWalk &w, const WalkTile &t,
                                                const int (&at)[NIN + 1], const int (&step)[NIN + 1],
                                                int scalar_mask, int warp, int lane) {
#pragma unroll
    for (int k = 0; k < NIN; ++k) {
        if (k == Skip) continue;
        const char *operand = reinterpret_cast<const char *>(in[k]) + t.corner(w, k + 1) + at[k + 1];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int row = warp + it * EW_TILE_WARPS;
            load_if<false>(row < t.rows && lane < t.cols && !(scalar_mask >> k & 1),
                           reinterpret_cast<const Tin *>(operand + it * step[k + 1]), value[it][k]);
        }
    }
}

// The function of one item's inputs (scalars by value; `Staged` never a scalar), as Tout.
template <typename Op, typename Tout, int Staged, typename C, int NIN, typename Tin>
__device__ __forceinline__ Tout compute_item(const Tin (&value)[NIN], const C (&sval)[3],
                                             int scalar_mask) {
    C v[NIN];
#pragma unroll
    for (int k = 0; k < NIN; ++k) {
        v[k] = k != Staged && (scalar_mask >> k & 1) ? sval[k] : convert<C>(value[k]);
    }
    return convert<Tout>(apply<Op>(v));
}

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
    // Byte offsets inside a tile fit 32 bits (the planner checks): this thread's, the same in
    // every tile. Phase 1 reads the staged input's (lane, col) with col = warp + 4 it; phase 2
    // operand k's (row, lane) with row = warp + 4 it, `step` bytes apart.
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
        const ic::WalkTile t(w, b);
        const int nrows = t.rows, ncols = t.cols;

        // Phase 1: the staged input, each warp access along its rows (lane = row).
        const char *source = reinterpret_cast<const char *>(in[Staged]) + t.corner(w, Staged + 1);
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

        // Phase 2: every operand along its cols (lane = col), all loads first; the staged one
        // from the tile.
        Tin value[ITEMS][NIN];
        ic::load_along_cols<Staged>(value, in, w, t, at, step, scalar_mask, warp, lane);
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int row = warp + it * ic::EW_TILE_WARPS;
            ic::load_if<true>(row < nrows && lane < ncols, tile + lane * PITCH + row, value[it][Staged]);
        }
        char *target = reinterpret_cast<char *>(out) + t.corner(w, 0) + at[0];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int row = warp + it * ic::EW_TILE_WARPS;
            ic::store_if<false>(row < nrows && lane < ncols,
                                reinterpret_cast<Tout *>(target + it * step[0]),
                                ic::compute_item<Op, Tout, Staged>(value[it], sval, scalar_mask));
        }
        __syncthreads();  // the next tile overwrites shared memory
    }
}

// The mirror image: every array input runs along cols and the output along rows (an `out=`
// laid out unlike the inputs, or `add(a.T, b.T)` into a new array). Phase 1 computes warp
// w's rows w, w + 4, ... (lane = col) into the tile, slot (col, row) = col * PITCH + row;
// phase 2 writes cols w, w + 4, ... of the output (lane = row) from it.
template <typename Op, typename Tout, typename Tin>
__global__ void __launch_bounds__(ic::EW_TILE * ic::EW_TILE_WARPS)
ew_tiled_out(Tout *out, const Tin *in0, const Tin *in1, const Tin *in2, Tin s0, Tin s1, Tin s2,
             int scalar_mask, ic::TiledWalk w, int /* vectorized: unused, as ew_tiled */) {
    using ic::index_t;
    typedef typename ic::compute_for<Op, Tin>::type C;
    constexpr int NIN = Op::arity;
    constexpr int ITEMS = ic::EW_TILE / ic::EW_TILE_WARPS;
    constexpr int PITCH = ic::TilePitch<Tout>::value;
    __shared__ Tout tile[ic::EW_TILE * PITCH];
    const Tin *in[3] = {in0, in1, in2};
    const C sval[3] = {ic::convert<C>(s0), ic::convert<C>(s1), ic::convert<C>(s2)};
    const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
    // This thread's byte offsets inside a tile (32-bit, as in ew_tiled): input k's
    // (row, lane) with row = warp + 4 it, `step` bytes apart; the output's (lane, col) with
    // col = warp + 4 it.
    int at[NIN + 1], step[NIN + 1], out_at[ITEMS];
#pragma unroll
    for (int k = 1; k <= NIN; ++k) {
        at[k] = warp * static_cast<int>(w.row_stride[k]) + lane * static_cast<int>(w.col_stride[k]);
        step[k] = ic::EW_TILE_WARPS * static_cast<int>(w.row_stride[k]);
    }
#pragma unroll
    for (int it = 0; it < ITEMS; ++it) {
        out_at[it] = lane * static_cast<int>(w.row_stride[0]) +
                     (warp + it * ic::EW_TILE_WARPS) * static_cast<int>(w.col_stride[0]);
    }
    for (index_t b = blockIdx.x; b < w.tiles; b += gridDim.x) {
        const ic::WalkTile t(w, b);
        const int nrows = t.rows, ncols = t.cols;

        // Phase 1: the inputs along their cols (lane = col), all loads first; results to the tile.
        Tin value[ITEMS][NIN];
        ic::load_along_cols<-1>(value, in, w, t, at, step, scalar_mask, warp, lane);
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int row = warp + it * ic::EW_TILE_WARPS;
            ic::store_if<true>(row < nrows && lane < ncols, tile + lane * PITCH + row,
                               ic::compute_item<Op, Tout, -1>(value[it], sval, scalar_mask));
        }
        __syncthreads();

        // Phase 2: the output along its rows (lane = row).
        char *target = reinterpret_cast<char *>(out) + t.corner(w, 0);
        Tout result[ITEMS];
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int col = warp + it * ic::EW_TILE_WARPS;
            ic::load_if<true>(lane < nrows && col < ncols, tile + col * PITCH + lane, result[it]);
        }
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int col = warp + it * ic::EW_TILE_WARPS;
            ic::store_if<false>(lane < nrows && col < ncols,
                                reinterpret_cast<Tout *>(target + out_at[it]), result[it]);
        }
        __syncthreads();  // the next tile overwrites shared memory
    }
}
