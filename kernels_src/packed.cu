// Packed staged copy (cuTT's "packed" and "packed-split" plans): dst[i] = src[i] over one shape,
// a tile at a time through shared memory, where a tile spans several whole dims on each side (and
// a chunk of at most one more dim per side), so permutations of short dims still read and write
// whole sectors. The host planner (infini_cupy/strided/packed_planner.py) picks the tile; its
// module docstring states the semantics this kernel implements.
//
// Each phase walks the tile in one side's memory order: rows of runs, a run being the tile dims
// that chain in that side's memory (one contiguous stretch). A run is laid out as a "virtual
// row" starting at the sector boundary at or below its lowest address, its length a multiple of
// the units in a sector, so a warp's 32 consecutive work items cover whole sectors of one or more
// runs: every sector of a run is touched by one warp access.
#include "common.cuh"
#include "divisor.cuh"

namespace ic {

constexpr int PACKED_SECTOR_BYTES = 32;
constexpr int PACKED_TILE_DIMS = 8;    // dims a tile spans, at most (template D: 4 or 8)
constexpr int PACKED_OUTER_DIMS = 12;  // dims the blocks walk, at most
// Static shared memory per block: compact tiles leave room for more blocks per SM.
constexpr int PACKED_COMPACT_BYTES = 8192;
constexpr int PACKED_WIDE_BYTES = 49152;  // all of the 48 KiB a block may declare statically
// Threads per block, at most (MAX_THREADS in packed_planner.py); two such blocks per SM keep
// their registers (at most 64 each).
constexpr int PACKED_MAX_THREADS = 512;

// One phase's walk of the tile: its dims in that side's memory order, innermost first. Packed
// once on the host (a NumPy structured scalar of int64 fields).
struct PackedSide {
    index_t len[PACKED_TILE_DIMS];       // elements per tile (a split dim: its chunk)
    index_t full[PACKED_TILE_DIMS];      // whole lengths (== len unless split)
    index_t chunk_of[PACKED_TILE_DIMS];  // -1, or which split (0, 1) holds the chunk index
    index_t stride[PACKED_TILE_DIMS];    // bytes in this side's memory
    index_t slot[PACKED_TILE_DIMS];      // shared-memory slot strides
    index_t magic[PACKED_TILE_DIMS];     // Divisor magic of len (a short last chunk: recomputed)
    index_t dims;                        // tile dims
    index_t run;                         // the first `run` dims chain in memory: a run
    index_t aligned;                     // runs are virtual rows from a sector boundary
    index_t uniform;                     // every run of a block starts as far into a sector
};

// The dims the blocks walk (a split dim's chunk index among them), outer -> inner.
struct PackedOuter {
    index_t len[PACKED_OUTER_DIMS];
    index_t src_stride[PACKED_OUTER_DIMS];
    index_t dst_stride[PACKED_OUTER_DIMS];
    index_t magic[PACKED_OUTER_DIMS];  // Divisor magic of len
    index_t split[2];    // position of each split dim's chunk index (-1: none)
    index_t dims;
    index_t tiles;       // the product of len: tiles to copy
    index_t src_offset;  // bytes from the pointers to element 0 of the copy
    index_t dst_offset;
};

// Work items a thread takes per round of a phase: all their global loads are issued before
// the first shared store (phase 1), so a warp keeps that many loads in flight. 16-byte units
// over 8 tile dims take 2, which keeps them within the 64 registers of __launch_bounds__.
template <int Unit, int D>
struct PackedItems {
    static constexpr int value = Unit >= 16 && D > 4 ? 2 : 4;
};

// One phase over one tile: its run and row lengths for this block (a split dim's last chunk
// may be short), then the work items. Item i is unit p of virtual row r = i / vl. Indices are
// split off item numbers by multiplication (Divisor), the magic numbers of full lengths
// computed on the host.
template <int Unit, int D>
struct PackedPass {
    static constexpr int SEC = PACKED_SECTOR_BYTES / Unit;  // units per sector
    const PackedSide &side;
    char *base;
    Divisor n[D];
    Divisor per_row;  // vl
    unsigned run, total;
    int dims, run_dims;  // side.dims and side.run, narrowed once
    bool aligned;
    index_t along, low;  // bytes between run elements (+-Unit); element 0 -> lowest address

    __device__ PackedPass(const PackedSide &side_, char *base_, index_t chunk0, index_t chunk1)
        : side(side_), base(base_), dims(static_cast<int>(side_.dims)),
          run_dims(static_cast<int>(side_.run)), aligned(side_.aligned != 0) {
        unsigned rows = 1;
        run = 1;
#pragma unroll
        for (int d = 0; d < D; ++d) {
            index_t len = d < side.dims ? side.len[d] : 1;
            unsigned magic = d < side.dims ? static_cast<unsigned>(side.magic[d]) : 0xffffffffu;
            if (d < side.dims && side.chunk_of[d] >= 0) {
                const index_t left = side.full[d] - (side.chunk_of[d] == 0 ? chunk0 : chunk1) * len;
                if (left < len) {  // the last chunk, short
                    len = left;
                    magic = 0xffffffffu / static_cast<unsigned>(len);
                }
            }
            n[d] = Divisor(static_cast<unsigned>(len), magic);
            if (d < side.run) {
                run *= n[d].d;
            } else {
                rows *= n[d].d;
            }
        }
        along = side.run > 0 ? side.stride[0] : Unit;
        low = along < 0 ? static_cast<index_t>(run - 1) * along : 0;
        unsigned vl = run;
        if (side.aligned) {
            const unsigned lead = side.uniform ? lead_of(base + low) : SEC - 1;
            vl = (run + lead + SEC - 1) / SEC * SEC;
        }
        per_row = Divisor(vl);
        total = rows * vl;
    }

    __device__ static unsigned lead_of(const char *lowest) {
        return static_cast<unsigned>(reinterpret_cast<unsigned long long>(lowest) %
                                     PACKED_SECTOR_BYTES) / Unit;
    }

    // Work item i: false when idle, else the global address of its element and its slot.
    __device__ __forceinline__ bool locate(unsigned i, char *&address, unsigned &slot) const {
        unsigned q;
        unsigned r = per_row.div(i, q);
        index_t offset = low;
        slot = 0;
#pragma unroll
        for (int d = 0; d < D; ++d) {  // the row's dims, innermost fastest
            if (d >= run_dims && d < dims) {
                unsigned k;
                r = n[d].div(r, k);
                offset += static_cast<index_t>(k) * side.stride[d];
                slot += k * static_cast<unsigned>(side.slot[d]);
            }
        }
        char *lowest = base + offset;
        const unsigned lead = aligned ? lead_of(lowest) : 0;
        const unsigned p = q - lead;  // units past the run's lowest address
        unsigned e = along < 0 ? run - 1 - p : p;  // the element's position in the run
#pragma unroll
        for (int d = 0; d < D; ++d) {
            if (d < run_dims) {
                unsigned k = e;
                if (d + 1 < run_dims) e = n[d].div(e, k);
                slot += k * static_cast<unsigned>(side.slot[d]);
            }
        }
        address = lowest + static_cast<index_t>(p) * Unit;
        return i < total && q >= lead && p < run;
    }
};

// Runs a phase: each thread takes PackedItems items per round (items base + lane, base
// stepping by the block), locating all of them first, then moving them; phase 1 issues its
// global loads before any shared store. In emulation an idle lane of a step in which others of
// its warp access memory repeats the first active lane's access (no byte or sector that
// instruction does not touch anyway), so that the trace numbers the accesses of all lanes
// alike, which is how the profiler recognizes one warp instruction.
template <int Unit, int D, bool LOAD, typename Elem>
__device__ __forceinline__ void packed_pass(const PackedPass<Unit, D> &pass, Elem *tile) {
    constexpr int PACKED_ITEMS = PackedItems<Unit, D>::value;
    const unsigned lane = threadIdx.x % 32;
    for (unsigned first = threadIdx.x - lane; first < pass.total;
         first += blockDim.x * PACKED_ITEMS) {
        char *address[PACKED_ITEMS];
        unsigned slot[PACKED_ITEMS];
        bool active[PACKED_ITEMS];
#pragma unroll
        for (int it = 0; it < PACKED_ITEMS; ++it) {
            const unsigned base = first + it * blockDim.x;
            active[it] = pass.locate(base + lane, address[it], slot[it]);
#ifdef INFINI_EMULATION
            for (unsigned other = 0; !active[it] && other < 32; ++other) {
                active[it] = pass.locate(base + other, address[it], slot[it]);
            }
#endif
        }
        Elem value[PACKED_ITEMS];
        if (LOAD) {
#pragma unroll
            for (int it = 0; it < PACKED_ITEMS; ++it) {
                if (active[it]) value[it] = ld(reinterpret_cast<const Elem *>(address[it]));
            }
#pragma unroll
            for (int it = 0; it < PACKED_ITEMS; ++it) {
                if (active[it]) sts(tile + slot[it], value[it]);
            }
        } else {
#pragma unroll
            for (int it = 0; it < PACKED_ITEMS; ++it) {
                if (active[it]) value[it] = lds(tile + slot[it]);
            }
#pragma unroll
            for (int it = 0; it < PACKED_ITEMS; ++it) {
                if (active[it]) st(reinterpret_cast<Elem *>(address[it]), value[it]);
            }
        }
    }
}

// The tile's shared memory: declared statically by the compact (Wide 0) and wide (1)
// variants; Wide 2 takes the launch's dynamic shared memory (the planner's shared_bytes,
// beyond the 48 KiB a block may declare), for tiles long enough on both sides when one
// side's rows start anywhere in a sector.
template <typename T, int Wide>
struct PackedTile {
    __device__ static T *memory() {
        __shared__ T tile[(Wide ? PACKED_WIDE_BYTES : PACKED_COMPACT_BYTES) / sizeof(T)];
        return tile;
    }
};
template <typename T>
struct PackedTile<T, 2> {
    __device__ static T *memory() { return reinterpret_cast<T *>(dynamic_shared_memory()); }
};

}  // namespace ic

// The packed copy. Block b of the grid-stride loop over the tiles decomposes b over the outer
// dims (last fastest) for the tile's base offsets and the chunk index of each split dim; phase 1
// reads the tile in source order into shared memory, phase 2 writes it in destination order,
// a barrier between them and after.
template <int Unit, int D, int Wide>
__global__ void __launch_bounds__(ic::PACKED_MAX_THREADS, 2)
packed_copy(void *__restrict__ dst, const void *__restrict__ src, ic::PackedSide read,
            ic::PackedSide write, ic::PackedOuter outer) {
    using ic::index_t;
    typedef typename ic::UnitOf<Unit>::type elem_t;
    elem_t *tile = ic::PackedTile<elem_t, Wide>::memory();

    for (index_t b = blockIdx.x; b < outer.tiles; b += gridDim.x) {
        index_t src_at = outer.src_offset, dst_at = outer.dst_offset;
        index_t chunk0 = 0, chunk1 = 0;
        if (outer.tiles <= 0xffffffffll) {  // 32-bit indices, split off by multiplication
            unsigned rest = static_cast<unsigned>(b);
            for (int d = static_cast<int>(outer.dims) - 1; d >= 0; --d) {
                unsigned i;
                rest = ic::Divisor(static_cast<unsigned>(outer.len[d]),
                                   static_cast<unsigned>(outer.magic[d])).div(rest, i);
                src_at += static_cast<index_t>(i) * outer.src_stride[d];
                dst_at += static_cast<index_t>(i) * outer.dst_stride[d];
                chunk0 = d == outer.split[0] ? i : chunk0;
                chunk1 = d == outer.split[1] ? i : chunk1;
            }
        } else {
            index_t rest = b;
            for (int d = static_cast<int>(outer.dims) - 1; d >= 0; --d) {
                const index_t i = rest % outer.len[d];
                rest /= outer.len[d];
                src_at += i * outer.src_stride[d];
                dst_at += i * outer.dst_stride[d];
                chunk0 = d == outer.split[0] ? i : chunk0;
                chunk1 = d == outer.split[1] ? i : chunk1;
            }
        }
        char *src_tile = const_cast<char *>(static_cast<const char *>(src)) + src_at;
        char *dst_tile = static_cast<char *>(dst) + dst_at;
        ic::packed_pass<Unit, D, true>(ic::PackedPass<Unit, D>(read, src_tile, chunk0, chunk1), tile);
        __syncthreads();
        ic::packed_pass<Unit, D, false>(ic::PackedPass<Unit, D>(write, dst_tile, chunk0, chunk1), tile);
        __syncthreads();  // the next tile overwrites shared memory
    }
}
