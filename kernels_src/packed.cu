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
//
// The index walk is table-driven: at the start of a tile the block writes, after the tile in
// shared memory, each phase's row table (a row's byte offset and slot base) and run table (the
// slot of each run position), so a work item costs one division by the virtual row's length,
// a row-table load, and a run-table load of its units' slots. A work item of a virtual row is
// an 8-byte word of 1- or 2-byte units (one global access) where the planner says the side's
// runs allow it (PackedSide::words), else one unit.
#include "common.cuh"
#include "divisor.cuh"

namespace ic {

constexpr int PACKED_SECTOR_BYTES = 32;
constexpr int PACKED_TILE_DIMS = 8;    // dims a tile spans, at most (template D: 4 or 8)
constexpr int PACKED_OUTER_DIMS = 12;  // dims the blocks walk, at most
// Static shared memory per block (the tile and its tables): compact tiles leave room for more
// blocks per SM.
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
    index_t group_shift[PACKED_TILE_DIMS];  // index k of a dim adds (k >> group_shift) *
    index_t group_pad[PACKED_TILE_DIMS];    // group_pad slots: padding against bank conflicts
    index_t dims;                        // tile dims
    index_t run;                         // the first `run` dims chain in memory: a run
    index_t aligned;                     // runs are virtual rows from a sector boundary
    index_t uniform;                     // every run of a block starts as far into a sector
    index_t rows_at;                     // bytes into shared memory: this phase's row table
    index_t run_at;                      // and its run table
    index_t words;                       // items of virtual rows are 8-byte words (1-, 2-byte units)
    index_t contiguous;                  // phase 2, words: a run's slots are its positions, rows
                                         // start on 4-byte words (no run table)
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
    index_t src_lo;      // [src_lo, src_hi): the source's bytes, from src's pointer (phase 1
    index_t src_hi;      // reads a word cut by a run's end whole inside them)
};

// A row of a phase's walk: the byte offset of its run's lowest element from the tile's base
// (the planner keeps a tile's offsets within 32 bits) and the slot of its first run element.
struct alignas(8) PackedRow {
    int offset;
    unsigned slot;
};

// IU consecutive run-table entries, read by one shared access where a work item's first
// run position is a multiple of IU (the planner aligns each table to 16 bytes).
struct alignas(16) PackedEight {
    uint4 lo, hi;
};
template <int IU> struct PackedEntries { typedef unsigned type; };
template <> struct PackedEntries<4> { typedef uint4 type; };
template <> struct PackedEntries<8> { typedef PackedEight type; };
__device__ __forceinline__ unsigned entry(const unsigned &e, int) { return e; }
__device__ __forceinline__ unsigned entry(const uint4 &e, int k) {
    return k == 0 ? e.x : k == 1 ? e.y : k == 2 ? e.z : e.w;
}
__device__ __forceinline__ unsigned entry(const PackedEight &e, int k) {
    return k < 4 ? entry(e.lo, k) : entry(e.hi, k - 4);
}

// What a work item of a virtual row moves: an 8-byte word of 1- or 2-byte units (IU units,
// unit k at bits 8 * Unit * k, little-endian), one unit of 4 bytes or more.
constexpr int PACKED_WORD_BYTES = 8;  // WORD_BYTES in packed_planner.py
template <int Unit>
struct PackedWord {
    static constexpr int IU = Unit < 4 ? PACKED_WORD_BYTES / Unit : 1;
};
template <int IU, typename Elem>
struct PackedWordOf {  // as two 32-bit halves: byte moves within one register each
    typedef uint2 type;
    static constexpr int PER_HALF = IU / 2;
    __device__ static Elem get(const type &word, int k) {
        const unsigned half = k < PER_HALF ? word.x : word.y;
        return static_cast<Elem>(half >> (8 * sizeof(Elem) * (k % PER_HALF)));
    }
    __device__ static void put(type &word, int k, Elem value) {
        const unsigned bits = static_cast<unsigned>(value) << (8 * sizeof(Elem) * (k % PER_HALF));
        if (k < PER_HALF) {
            word.x |= bits;
        } else {
            word.y |= bits;
        }
    }
};
template <typename Elem>
struct PackedWordOf<1, Elem> {
    typedef Elem type;
    __device__ static Elem get(const Elem &word, int) { return word; }
    __device__ static void put(Elem &word, int, const Elem &value) { word = value; }
};

// Work items a thread takes per round of a phase: all their global loads are issued before
// the first shared store (phase 1), so a warp keeps that many loads in flight. 16-byte units
// over 8 tile dims, and the 8-byte words of 1-byte units (eight table entries each), take 2,
// which keeps them within the 64 registers of __launch_bounds__.
template <int Unit, int D>
struct PackedItems {
    static constexpr int value = (Unit >= 16 && D > 4) || Unit == 1 ? 2 : 4;
};

// One phase over one tile: its run and row lengths for this block (a split dim's last chunk
// may be short), and its tables, which the constructor writes (every thread of the block
// constructs the pass; a barrier then publishes the tables). Row r's dims are split off r by
// multiplication (Divisor); run position p counts units from the run's lowest address.
template <int Unit, int D>
struct PackedPass {
    static constexpr int SEC = PACKED_SECTOR_BYTES / Unit;  // units per sector
    char *base;
    int lo, hi;  // words inside bytes [lo, hi) from base may be read whole (phase 1: the source)
    PackedRow *rows_of;
    unsigned *run_of;
    unsigned plane;  // entries in each half of a run table in halves (0: one plane)
    unsigned base_low;  // the low bits of base (its offset into a sector)
    SmallDivisor per_row;  // work items per virtual row (their product stays below 2^32)
    unsigned run, total;
    bool aligned, words, contiguous;

    __device__ PackedPass(const PackedSide &side, char *base_, index_t lo_, index_t hi_,
                          unsigned char *shared, index_t chunk0, index_t chunk1)
        : base(base_), lo(static_cast<int>(lo_ < -0x7fffffffll ? -0x7fffffffll : lo_)),
          hi(static_cast<int>(hi_ > 0x7fffffffll ? 0x7fffffffll : hi_)),
          rows_of(reinterpret_cast<PackedRow *>(shared + side.rows_at)),
          run_of(reinterpret_cast<unsigned *>(shared + side.run_at)), aligned(side.aligned != 0),
          words(side.words != 0), contiguous(side.contiguous != 0) {
        const int dims = static_cast<int>(side.dims), run_dims = static_cast<int>(side.run);
        Divisor n[D];
        unsigned rows = 1;
        run = 1;
#pragma unroll
        for (int d = 0; d < D; ++d) {
            index_t len = d < dims ? side.len[d] : 1;
            unsigned magic = d < dims ? static_cast<unsigned>(side.magic[d]) : 0xffffffffu;
            if (d < dims && side.chunk_of[d] >= 0) {
                const index_t left = side.full[d] - (side.chunk_of[d] == 0 ? chunk0 : chunk1) * len;
                if (left < len) {  // the last chunk, short
                    len = left;
                    magic = 0xffffffffu / static_cast<unsigned>(len);
                }
            }
            n[d] = Divisor(static_cast<unsigned>(len), magic);
            if (d < run_dims) {
                run *= n[d].d;
            } else {
                rows *= n[d].d;
            }
        }
        const index_t along = run_dims > 0 ? side.stride[0] : Unit;
        const index_t low = along < 0 ? static_cast<index_t>(run - 1) * along : 0;
        // The tables, a warp's 32 entries at a time (every lane of a warp takes each step).
        const unsigned lane = threadIdx.x % 32;
        for (unsigned r0 = threadIdx.x - lane; r0 < rows; r0 += blockDim.x) {
            unsigned rest = r0 + lane;
            index_t offset = low;
            unsigned slot = 0;
#pragma unroll
            for (int d = 0; d < D; ++d) {
                if (d >= run_dims && d < dims) {
                    unsigned k;
                    rest = n[d].div(rest, k);
                    offset += static_cast<index_t>(k) * side.stride[d];
                    slot += k * static_cast<unsigned>(side.slot[d]) +
                            (k >> side.group_shift[d]) * static_cast<unsigned>(side.group_pad[d]);
                }
            }
            store_if<true>(r0 + lane < rows, rows_of + r0 + lane,
                           PackedRow{static_cast<int>(offset), slot});
        }
        plane = words && PackedWord<Unit>::IU == 8 ? (run + 7) / 8 * 4 : 0;
        base_low = static_cast<unsigned>(reinterpret_cast<unsigned long long>(base));
        for (unsigned p0 = threadIdx.x - lane; p0 < run && !contiguous; p0 += blockDim.x) {
            const unsigned p = p0 + lane;
            unsigned e = along < 0 ? run - 1 - p : p;  // the unit's position in the run
            unsigned slot = 0;
#pragma unroll
            for (int d = 0; d < D; ++d) {
                if (d < run_dims) {
                    unsigned k = e;
                    if (d + 1 < run_dims) e = n[d].div(e, k);
                    slot += k * static_cast<unsigned>(side.slot[d]) +
                            (k >> side.group_shift[d]) * static_cast<unsigned>(side.group_pad[d]);
                }
            }
            store_if<true>(p < run, run_of + run_index(p), slot);
        }
        unsigned items = run;  // dense rows: an item per unit
        if (aligned) {
            const unsigned first = side.uniform ? lead(static_cast<int>(low)) : SEC - 1;
            items = (run + first + SEC - 1) / SEC * SEC / (words ? PackedWord<Unit>::IU : 1);
        }
        per_row = SmallDivisor(items);
        total = rows * items;
    }

    // Where run position p's entry lies. Words of 8 units read entries p0 .. p0 + 7 (p0 a
    // multiple of 8) as two 16-byte halves, each from a plane of its own (entries 4j .. 4j + 3
    // of each group of 8 in plane j): a warp's halves are then 16 bytes apart, free of bank
    // conflicts, where one plane would put them 32 bytes apart.
    __device__ __forceinline__ unsigned run_index(unsigned p) const {
        return plane ? ((p & 3) | ((p >> 3) << 2)) + ((p >> 2) & 1) * plane : p;
    }

    // The IU entries of a word whose first run position p0 is a multiple of IU.
    template <int IU, typename Entries>
    __device__ __forceinline__ void entries(bool on, int p0, Entries &e) const {
        if constexpr (IU == 8) {
            const uint4 *half = reinterpret_cast<const uint4 *>(run_of + (p0 >> 1));
            load_if<true>(on, half, e.lo);
            load_if<true>(on, reinterpret_cast<const uint4 *>(
                reinterpret_cast<const unsigned *>(half) + plane), e.hi);
        } else {
            load_if<true>(on, reinterpret_cast<const Entries *>(run_of + p0), e);
        }
    }

    // Units from the sector boundary at or below base + offset to it (offsets: 32 bits).
    __device__ __forceinline__ int lead(int offset) const {
        return static_cast<int>((base_low + offset) % PACKED_SECTOR_BYTES / Unit);
    }
};

// Runs a phase: each thread takes PackedItems work items per round (items base + lane, base
// stepping by the block), locating all of them first, then moving them; phase 1 issues its
// global loads before any shared store. Item i of virtual row r = i / per_row covers run
// positions p0 .. p0 + IU - 1 (ALIGNED: from the sector boundary below the run; else IU = 1
// and rows follow densely). Phase 1 reads every word with a unit of the run by one global
// access (a word cut by a run's end too, where it lies inside the source's bytes); the common
// path (`fast`: whole words whose first run position is a multiple of IU) reads its IU
// table entries by one shared access. The rest (`edge`: units of other words, and words cut
// by the ends of the source's memory, read unit by unit) take a rare branch. Phase 2 writes
// words only where the planner found every run starting and ending on a word boundary, and
// (CONTIGUOUS) reads a word of consecutive slots as two 4-byte shared words. Every access goes
// through load_if / store_if, which keep the emulator's trace in step where lanes skip one.
template <int IU, bool ALIGNED, bool LOAD, bool CONTIGUOUS, int Unit, int D, typename Elem>
__device__ __forceinline__ void packed_walk(const PackedPass<Unit, D> &pass, Elem *tile) {
    constexpr int N = PackedItems<Unit, D>::value;
    typedef PackedWordOf<IU, Elem> Word;
    typedef typename Word::type word_t;
    typedef typename PackedEntries<IU>::type entries_t;
    const unsigned lane = threadIdx.x % 32;
    const int run = static_cast<int>(pass.run);
    for (unsigned first = threadIdx.x - lane; first < pass.total; first += blockDim.x * N) {
        char *address[N];
        unsigned slot[N];
        int p0[N];
        bool active[N], moved[N], fast[N];
        bool edge = false;
#pragma unroll
        for (int it = 0; it < N; ++it) {
            const unsigned i = first + it * blockDim.x + lane;
            unsigned w;
            // virtual rows (ALIGNED) are a sector or more: at least two items long
            const unsigned r = ALIGNED ? pass.per_row.div_above_one(i, w) : pass.per_row.div(i, w);
            active[it] = i < pass.total;
            PackedRow row{0, 0};
            load_if<true>(active[it], pass.rows_of + r, row);
            p0[it] = static_cast<int>(w * IU) - (ALIGNED ? pass.lead(row.offset) : 0);
            address[it] = pass.base + (row.offset + p0[it] * Unit);  // tile offsets: 32 bits
            slot[it] = row.slot;
            const bool whole = active[it] && p0[it] >= 0 && p0[it] + IU <= run;
            moved[it] = whole;
            fast[it] = whole && (p0[it] & (IU - 1)) == 0;
            if (IU > 1) {
                const bool partial = active[it] && !whole && p0[it] < run && p0[it] + IU > 0;
                if (LOAD && partial) {  // offsets from base: 32 bits (the planner's bound)
                    const int at = row.offset + p0[it] * Unit;
                    moved[it] = at >= pass.lo && at <= pass.hi - static_cast<int>(sizeof(word_t));
                }
                edge = edge || (moved[it] && !fast[it]) || partial;
            }
        }
        word_t word[N];
        if (LOAD) {
#pragma unroll
            for (int it = 0; it < N; ++it) {
                word[it] = word_t();
                load_if<false>(moved[it], reinterpret_cast<const word_t *>(address[it]), word[it]);
            }
#pragma unroll
            for (int it = 0; it < N; ++it) {
                entries_t e = entries_t();
                pass.template entries<IU>(fast[it], p0[it], e);
#pragma unroll
                for (int k = 0; k < IU; ++k) {
                    store_if<true>(fast[it], tile + slot[it] + entry(e, k), Word::get(word[it], k));
                }
            }
        } else if constexpr (CONTIGUOUS) {
            // A word's units are consecutive slots from a 4-byte boundary: two word loads,
            // the second half-warp taking its halves in the other order, so that lanes 16
            // apart (128 bytes) fall in different banks.
            const unsigned flip = (lane >> 4) & 1;
#pragma unroll
            for (int it = 0; it < N; ++it) {
                const unsigned *at = reinterpret_cast<const unsigned *>(tile + slot[it] + p0[it]);
                unsigned first = 0, second = 0;
                load_if<true>(fast[it], at + flip, first);
                load_if<true>(fast[it], at + (flip ^ 1), second);
                word[it].x = flip ? second : first;
                word[it].y = flip ? first : second;
                store_if<false>(fast[it], reinterpret_cast<word_t *>(address[it]), word[it]);
            }
        } else {
#pragma unroll
            for (int it = 0; it < N; ++it) {  // shared loads do not wait long
                word[it] = word_t();
                entries_t e = entries_t();
                pass.template entries<IU>(fast[it], p0[it], e);
#pragma unroll
                for (int k = 0; k < IU; ++k) {
                    Elem value = Elem();
                    load_if<true>(fast[it], tile + slot[it] + entry(e, k), value);
                    Word::put(word[it], k, value);
                }
                store_if<false>(fast[it], reinterpret_cast<word_t *>(address[it]), word[it]);
            }
        }
        if (IU > 1 && warp_any(edge)) {
#pragma unroll
            for (int it = 0; it < N; ++it) {
#pragma unroll
                for (int k = 0; k < IU; ++k) {
                    const int p = p0[it] + k;
                    const bool unit = active[it] && !fast[it] && p >= 0 && p < run;
                    unsigned s = 0;
                    if (CONTIGUOUS) {
                        s = p;
                    } else {
                        load_if<true>(unit, pass.run_of + pass.run_index(p), s);
                    }
                    Elem value = Word::get(word[it], k);
                    if (LOAD) {
                        load_if<false>(unit && !moved[it],
                                       reinterpret_cast<const Elem *>(address[it] + k * Unit), value);
                        store_if<true>(unit, tile + slot[it] + s, value);
                    } else {
                        load_if<true>(unit, tile + slot[it] + s, value);
                        store_if<false>(unit, reinterpret_cast<Elem *>(address[it] + k * Unit), value);
                    }
                }
            }
        }
    }
}

template <bool LOAD, int Unit, int D, typename Elem>
__device__ __forceinline__ void packed_pass(const PackedPass<Unit, D> &pass, Elem *tile) {
    constexpr int IU = PackedWord<Unit>::IU;
    if (!LOAD && IU > 1 && pass.aligned && pass.words && pass.contiguous) {
        packed_walk<IU, true, LOAD, IU == 8 || IU == 4>(pass, tile);
    } else if (pass.aligned && pass.words) {
        packed_walk<IU, true, LOAD, false>(pass, tile);
    } else if (pass.aligned) {
        packed_walk<1, true, LOAD, false>(pass, tile);
    } else {
        packed_walk<1, false, LOAD, false>(pass, tile);
    }
}

// The block's shared memory, 16-byte aligned: the tile, then each phase's tables. Declared
// statically by the compact (Wide 0) and wide (1) variants; Wide 2 takes the launch's dynamic
// shared memory (the planner's shared_bytes, beyond the 48 KiB a block may declare), for tiles
// long enough on both sides when one side's rows start anywhere in a sector.
template <int Wide>
struct PackedShared {
    __device__ static unsigned char *memory() {
        __shared__ uint4 tile[(Wide ? PACKED_WIDE_BYTES : PACKED_COMPACT_BYTES) / 16];
        return reinterpret_cast<unsigned char *>(tile);
    }
};
template <>
struct PackedShared<2> {
    __device__ static unsigned char *memory() { return dynamic_shared_memory(); }
};

}  // namespace ic

// The packed copy. Block b of the grid-stride loop over the tiles decomposes b over the outer
// dims (last fastest) for the tile's base offsets and the chunk index of each split dim, and
// writes both phases' tables; after a barrier, phase 1 reads the tile in source order into
// shared memory, phase 2 writes it in destination order, a barrier between them and after.
template <int Unit, int D, int Wide>
__global__ void __launch_bounds__(ic::PACKED_MAX_THREADS, 2)
packed_copy(void *__restrict__ dst, const void *__restrict__ src, ic::PackedSide read,
            ic::PackedSide write, ic::PackedOuter outer) {
    using ic::index_t;
    typedef typename ic::UnitOf<Unit>::type elem_t;
    unsigned char *shared = ic::PackedShared<Wide>::memory();
    elem_t *tile = reinterpret_cast<elem_t *>(shared);

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
        const ic::PackedPass<Unit, D> in(read, src_tile, outer.src_lo - src_at,
                                         outer.src_hi - src_at, shared, chunk0, chunk1);
        const ic::PackedPass<Unit, D> out(write, dst_tile, 0, 0, shared, chunk0, chunk1);
        __syncthreads();  // the tables
        ic::packed_pass<true>(in, tile);
        __syncthreads();
        ic::packed_pass<false>(out, tile);
        __syncthreads();  // the next tile overwrites shared memory
    }
}
