// Staged copy ("tiled transpose"): dst[i] = src[i] over one shape, a tile at a time through
// shared memory, so that reads walk the source's contiguous dim and writes the destination's.
// The host planner (infini_cupy/strided/tile_planner.py) picks the two tiled dims, the tile
// extents and the vector widths; its TilePlan docstring states the semantics this kernel
// implements.
//
// A tile is a box of two dims, dim 0 and dim 1 (dim 1 contiguous in dst), plus up to four batch
// dims taken whole by the block index. Phase 1 reads the tile from src into shared memory along
// `read_along` (dim 0 for a transpose: src-contiguous; dim 1 for a copy whose rows are only
// misaligned); phase 2 writes it to dst along dim 1. Both phases lay their rows out on 32-byte
// sector boundaries ("virtual rows", below), so every warp access covers whole sectors except
// at the two ends of a row.
#include "common.cuh"
#include "divisor.cuh"

namespace ic {

constexpr int SECTOR_BYTES = 32;
// Static shared memory per block: compact tiles when both sides' rows start on sector
// boundaries, wide tiles (longer rows, fewer partial sectors) when one side's do not.
constexpr int TILE_COMPACT_BYTES = 16896;  // 32 x 33 elements of 16 bytes
constexpr int TILE_WIDE_BYTES = 49152;     // all of the 48 KiB a block may declare statically
constexpr int TILE_BATCH_DIMS = 4;

// One layout, packed once on the host (a NumPy structured scalar of int64 fields). Byte strides;
// element (i0, i1) of the tile lives in shared memory at i0 * pitch + i1.
struct TileLayout {
    index_t len0, len1;                  // lengths of the tiled dims
    index_t src_stride0, src_stride1;    // their byte strides in src
    index_t dst_stride0, dst_stride1;    // and in dst (dst_stride1 == +Unit)
    index_t src_offset, dst_offset;      // bytes from the pointers to element 0 of the copy
    index_t tile0, tile1;                // tile extents, elements
    index_t shift0, shift1;              // elements the first tile of each dim gives up
    index_t tiles0, tiles1;              // tiles along each dim: ceil((len + shift) / tile)
    index_t pitch;                       // shared-memory row pitch, elements (>= tile1)
    index_t tiles;                       // tiles0 * tiles1 * product of the batch lengths
    index_t read_along;                  // 0: phase 1 walks dim 0 (a transpose); 1: dim 1
    index_t read_chained;                // phase 1's rows follow each other in src: one run
    index_t write_chained;               // phase 2's rows follow each other in dst: one run
    index_t read_uniform;                // phase 1's rows all start equally far into a sector
    index_t write_uniform;               // phase 2's rows likewise
    // Multipliers computed on the host (divisor.cuh), so a tile costs no integer division:
    index_t tiles0_magic, tiles1_magic;  // Divisor magics of tiles0 and tiles1
    index_t read_len_magic;              // SmallDivisor magic of phase 1's row length (chained)
    index_t write_len_magic;             // and of phase 2's
    // Stacked tiles: a block copies `stack` tiles one step apart along the innermost batch
    // dim (its batch length is then ceil(stack_len / stack), its strides stack steps), all
    // from one setup: each located item moves `stack` units, `stack_*_step` bytes and
    // `stack_slots` shared elements apart (steps that keep every row's place in its sector).
    index_t stack;                       // tiles per block (1: none)
    index_t stack_len;                   // the stacked dim's length
    index_t stack_src_step, stack_dst_step;
    index_t stack_slots;                 // shared elements per stacked tile: tile0 * pitch
    // Bytes from src to the lowest byte of the copy's source and past its highest: phase 1's
    // 4-byte words (below) are read whole inside them.
    index_t src_lo, src_hi;
    // Short rows (TilePass::spread_rows): a warp step of phase 1 (phase 2) whose virtual rows
    // are 8 or 16 items takes rows this many apart (a power of 2; 1: consecutive rows).
    index_t read_spread, write_spread;
    // Rows per warp step of phase 1 in the Grouped variants (TilePass::group_rows): K > 1
    // takes 32 / K lanes of each of K rows, `read_spread` apart, per step; 1: as above.
    index_t read_rows;
};

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
    T v[V];
};

// How a walk's warp step takes its rows (TilePass::locate):
enum class Grouping {
    NONE,            // items g * 32 + lane of the rows laid end to end (R == 1), or 4 rows (R == 4)
    ROWS,            // short rows of one lead, 32 / vl of them `spread` apart (spread_rows)
    ROWS_IN_CHUNKS,  // K rows `spread` apart, vl = 32 / K items of each: rows of any lead in
                     // chunks of vl items (group_rows; short rows are one chunk)
};

// A pass's phase in its kernel variant (tiled_copy), fixed per instantiation of tile_pass.
template <bool Load, bool Stacked, bool GroupedVariant>
struct Phase {
    static constexpr bool LOAD = Load;        // phase 1, global -> shared; else phase 2
    static constexpr bool STACKED = Stacked;  // a Stacked variant: `count` tiles per block
    static constexpr bool GROUPED_VARIANT = GroupedVariant;  // a Grouped variant (its walks)
};

// A walk of a pass (tile_walk, word_walk, TilePass::locate): its phase P and how its rows lie,
// fixed per instantiation so that a hot loop carries none of the other cases' arithmetic
// (tile_pass picks one per pass).
template <typename P, bool Chained, bool Uniform, bool Descending, Grouping How = Grouping::NONE>
struct Walk : P {
    static constexpr bool CHAINED = Chained;        // the rows are one run (TilePass::chained)
    static constexpr bool UNIFORM = Uniform;        // every row's lead is lead0
    static constexpr bool DESCENDING = Descending;  // units in descending memory order (V == 1)
    static constexpr Grouping GROUPING = How;
};

// Work items a thread takes per round of a pass: all their global loads are issued before
// the first shared store (phase 1), so a warp keeps TILE_ITEMS loads in flight.
constexpr int TILE_ITEMS = 4;
// One phase: moves `rows` rows of `row_len` elements between global memory (row r at
// `origin + r * row_stride`, element a of it at `+ a * along`, along == +-Unit) and shared
// memory (element (r, a) at `r * sh_row + a * sh_along`), V elements per global access.
//
// Each row is a "virtual row" that starts at the sector boundary at or below the row's lowest
// address, units past it before the row's first unit or after its last being idle work items;
// its lead (units between the boundary and the row) is the first row's when all rows share it
// (`uniform`, or one chained run), else room for SEC - 1 is left, and a virtual row longer
// than a warp step is whole warp steps (`virtual_row`). A row whose units are in
// descending memory order (along < 0, only with V == 1) is walked from its lowest address.
// Chained rows (row_stride == row_len * along, along > 0) are one run of rows * row_len.
//
// Warp step g of a pass covers 32 work items:
// - R == 1: items g * 32 + lane of the rows laid end to end (virtual rows of a multiple of SEC
//   units, so a warp covers whole sectors of one or more rows; rows of different leads share
//   a warp step only where they are short);
// - R == 4 (16-byte accesses): J = 8 consecutive units (128 bytes) of each of 4 rows: lane
//   (j, q) = (lane % 8, lane / 8) takes unit c * 8 + j of row G / S * 4S + q * S + G % S,
//   chunk c and row group G being g's place in (groups, chunks per row). A warp then spreads
//   its shared accesses over every bank: with an odd pitch, 4 rows 1 apart (the transposing
//   side, sh_along == pitch) or S = 4 / Unit rows apart (the other, sh_along == 1) start in
//   4 different 4-byte words of a 16-byte group, the 8 chunks of a row in 8 different groups.
//
// - R == 1 with rows grouped (TilePass::group_rows, the Grouped variants): the warp step
//   takes K rows `spread` apart, vl = 32 / K lanes each, lane (k, q) = (lane / vl, lane % vl)
//   taking item c * vl + q of row G / spread * (K * spread) + k * spread + G % spread, chunk
//   c and row group G being g's place in (groups, chunks per row). Short rows (uniform
//   virtual rows of vl = 8 or 16 items) are one chunk: consecutive rows may share banks (a
//   pitch spreads the rows of one side or the other, not both); rows the planner's spread
//   apart do not. Longer rows on the transposing side take K > 1 where the pitch must be K
//   times an odd number of words (modulo 32) for the other side, whose rows are one run: the
//   K rows' vl items then fill the banks between each other's.
//
// Byte units one at a time (V == 1) go to and from global memory in aligned 4-byte
// words (WORDS, word_walk): a work item is word q of its virtual row, units q * IU - lead ...
// of the run. A word wholly in the run is one access; a word at a run's end is read whole
// where it lies inside the source's bytes (src_lo, src_hi), else and when written, unit by
// unit, so no byte outside the copy is ever written.
template <int Unit, int V, int R, int S, typename Elem>
struct TilePass {
    static constexpr bool WORDS = V == 1 && Unit == 1;
    static constexpr int IU = WORDS ? 4 / Unit : V;        // units per global access
    static constexpr int SEC = SECTOR_BYTES / (IU * Unit);  // work items per sector
    static constexpr int J = 32 / R;                       // lanes along one row
    const char *low;  // row 0's lowest address
    index_t row_stride;
    int rows, row_len, run, units, lead0;
    unsigned total, steps;
    // Items and slots of one tile: n * d < 2^32 for every division below.
    SmallDivisor per_row;  // R == 1: units per virtual row; R == 4: chunks per virtual row
    SmallDivisor per_len;  // elements per row (chained runs)
    bool chained, descending, uniform;
    Elem *shared;
    int sh_row, sh_along;
    // Stacked tiles (TileLayout::stack): the pass moves `count` tiles, `step` bytes and
    // `sh_step` shared elements apart, each laid out as the first.
    int count = 1, sh_step = 0;
    index_t step = 0;
    // Phase 1 of WORDS: words inside [safe_lo, safe_hi) are read whole.
    const char *safe_lo = nullptr, *safe_hi = nullptr;
    // Rows grouped per warp step (group_rows): log2 of the lanes per row (vl), of the rows
    // per step (K = 32 / vl) and of their spacing; a row's virtual row is `per_chunk` chunks
    // of vl items.
    bool grouped = false;
    int vl_shift = 0, k_shift = 0, spread_shift = 0;
    SmallDivisor per_chunk{1};
    unsigned group_steps = 0;  // warp steps of the pass so grouped

    __device__ TilePass &stacked(int count_, index_t step_, int sh_step_) {
        count = count_, step = step_, sh_step = sh_step_;
        return *this;
    }

    __device__ TilePass &bounded(const char *lo, const char *hi) {
        safe_lo = lo, safe_hi = hi;
        return *this;
    }

    // Phase 1's rows grouped per warp step (the Grouped variants' walk of an ascending R == 1
    // pass of separate rows, not byte words): with `rows_per_step` K > 1, a step takes vl =
    // 32 / K consecutive items (whole sectors) of each of K rows `spread` apart, a row's
    // virtual row then being chunks of vl items, whatever the rows' leads; else short rows as
    // spread_rows takes them.
    template <bool ON>
    __device__ TilePass &group_rows(index_t rows_per_step, index_t spread) {
        if (!ON || R != 1 || WORDS || chained || descending || rows_per_step <= 1) {
            return spread_rows<ON>(spread);
        }
        k_shift = __ffs(static_cast<int>(rows_per_step)) - 1;  // K: a power of 2
        vl_shift = 5 - k_shift;
        const unsigned lead = uniform ? lead0 : SEC - 1;
        const unsigned chunks =
            (static_cast<unsigned>(units) + lead + (1u << vl_shift) - 1) >> vl_shift;
        grouped = true;
        spread_shift = __ffs(static_cast<int>(spread)) - 1;
        per_chunk = SmallDivisor(chunks);
        const int group_shift = k_shift + spread_shift;  // rows per group of `spread` steps
        group_steps = ((static_cast<unsigned>(rows) + (1u << group_shift) - 1) >> group_shift)
                      << spread_shift;
        group_steps *= chunks;
        return *this;
    }

    // A warp step of short rows (an R == 1 pass of uniform, ascending rows whose virtual rows
    // of vl items divide a warp) takes its 32 / vl rows `spread` apart; otherwise unchanged.
    // (Only the Grouped variants of the kernel group: the code of the others stays as it was,
    // the compiler keeping their loads in flight.)
    template <bool ON>
    __device__ TilePass &spread_rows(index_t spread) {
        const unsigned vl = per_row.d;  // a power of 2 below 32 divides a warp
        if (!ON || R != 1 || WORDS || chained || descending || !uniform || spread <= 1 || vl >= 32 ||
            (vl & (vl - 1)) != 0) {
            return *this;
        }
        grouped = true;
        vl_shift = __ffs(static_cast<int>(vl)) - 1;
        k_shift = 5 - vl_shift;
        spread_shift = __ffs(static_cast<int>(spread)) - 1;
        const int group_shift = k_shift + spread_shift;  // rows per group of `spread` steps
        group_steps = ((static_cast<unsigned>(rows) + (1u << group_shift) - 1) >> group_shift)
                      << spread_shift;
        return *this;
    }

    __device__ TilePass(char *origin, index_t along, index_t row_stride_, int rows_, int row_len_,
                        bool chained_, bool uniform_, Elem *shared_, int sh_row_, int sh_along_,
                        index_t len_magic)
        : row_stride(row_stride_), rows(rows_), row_len(row_len_), per_row(1),
          per_len(chained_ && R == 1 ? SmallDivisor(static_cast<unsigned>(row_len_),
                                                    static_cast<unsigned>(len_magic))
                                     : SmallDivisor(1)),
          chained(chained_ && R == 1),
          descending(along < 0), uniform(uniform_ || chained), shared(shared_), sh_row(sh_row_),
          sh_along(sh_along_) {
        run = chained ? rows * row_len : row_len;
        units = run / V;
        low = origin + (descending ? (run - 1) * along : 0);
        lead0 = lead_of(low);
        const int lead = uniform ? lead0 : SEC - 1;
        if (WORDS) {  // lead in units: words from the sector boundary to past the run
            const int lead_units = uniform ? lead0 : SECTOR_BYTES / Unit - 1;
            const unsigned words = (units + lead_units + IU - 1) / IU;
            per_row = SmallDivisor(virtual_row(words));
            total = (chained ? 1u : static_cast<unsigned>(rows)) * per_row.d;
            steps = (total + 31) / 32;
        } else if (R == 1) {
            const unsigned vl = virtual_row(units + lead);
            per_row = SmallDivisor(vl);
            total = (chained ? 1u : static_cast<unsigned>(rows)) * vl;
            steps = (total + 31) / 32;
        } else {
            const unsigned chunks = (units + lead + J - 1) / J;
            per_row = SmallDivisor(chunks);
            const unsigned groups = (rows + R * S - 1) / (R * S) * S;
            total = groups * chunks;
            steps = total;
        }
    }

    // Work items of a virtual row of `items` (lead room included): whole sectors; whole warp
    // steps for rows that start anywhere in a sector and outlast a warp step, so that no
    // step takes the end of one row and the start of the next, whose leads differ (their
    // slots would meet in a bank).
    __device__ unsigned virtual_row(unsigned items) const {
        const unsigned vl = (items + SEC - 1) / SEC * SEC;
        return uniform || vl <= 32 ? vl : (vl + 31) / 32 * 32;
    }

    // How many units past a sector boundary an address is.
    __device__ static int lead_of(const char *lowest) {
        return static_cast<int>(reinterpret_cast<unsigned long long>(lowest) % SECTOR_BYTES) /
               (V * Unit);
    }

    // Lane `lane` of warp step g: false when idle, else the global address of its unit and its
    // first slot. W (a Walk) holds the pass's own flags, fixed per instantiation of the walk
    // so that a hot loop carries none of the other cases' arithmetic.
    template <typename W>
    __device__ __forceinline__ bool locate(unsigned g, unsigned lane, char *&address,
                                           Elem *&slot) const {
        constexpr bool CHAINED = W::CHAINED, UNIFORM = W::UNIFORM, DESCENDING = W::DESCENDING;
        unsigned r, q;
        bool inside;
        if (W::GROUPING != Grouping::NONE) {  // step g is chunk c of row group G
            const unsigned low_steps = (1u << spread_shift) - 1;
            unsigned c = 0, G = g;
            if (W::GROUPING == Grouping::ROWS_IN_CHUNKS) G = per_chunk.div(g, c);
            q = (c << vl_shift) + (lane & ((1u << vl_shift) - 1));
            r = ((G >> spread_shift) << (spread_shift + k_shift)) +
                ((lane >> vl_shift) << spread_shift) + (G & low_steps);
            inside = r < static_cast<unsigned>(rows);
        } else if (R == 1) {
            const unsigned i = g * 32 + lane;
            inside = i < total;
            r = 0;
            q = i;
            if (!CHAINED) r = per_row.div(i, q);
        } else {
            unsigned c;
            const unsigned G = per_row.div(g, c);
            r = G / S * (R * S) + lane / J * S + G % S;
            q = c * J + lane % J;
            inside = g < steps && r < static_cast<unsigned>(rows);
        }
        const char *lo = CHAINED ? low : low + static_cast<index_t>(r) * row_stride;
        const int p = static_cast<int>(q) - (UNIFORM ? lead0 : lead_of(lo));
        const int e = DESCENDING ? run - 1 - p : p * V;  // element index in the run
        int row = static_cast<int>(r), a = e;
        if (CHAINED) {
            unsigned rest;
            row = static_cast<int>(per_len.div(static_cast<unsigned>(e), rest));
            a = static_cast<int>(rest);
        }
        address = const_cast<char *>(lo) + p * (V * Unit);
        slot = shared + (row * sh_row + a * sh_along);
        return inside && static_cast<unsigned>(p) < static_cast<unsigned>(units);
    }

    // WORDS: lane `lane` of warp step g takes word q of row r's virtual row, whose first unit
    // is unit p0 of the run (p0 < 0 or p0 + IU > units at the run's ends); false when none
    // of its units is in the run.
    template <typename W>
    __device__ __forceinline__ bool locate_word(unsigned g, unsigned lane, char *&address,
                                                int &p0, int &row) const {
        constexpr bool CHAINED = W::CHAINED, UNIFORM = W::UNIFORM;
        const unsigned i = g * 32 + lane;
        unsigned r = 0, q = i;
        if (!CHAINED) r = per_row.div(i, q);
        const char *lo = CHAINED ? low : low + static_cast<index_t>(r) * row_stride;
        p0 = static_cast<int>(q) * IU - (UNIFORM ? lead0 : lead_of(lo));
        address = const_cast<char *>(lo) + p0 * Unit;  // lo - lead units: a sector boundary
        row = static_cast<int>(r);
        return i < total && p0 < units && p0 + IU > 0;
    }

    // The shared slot of unit p of row `row`'s run.
    template <typename W>
    __device__ __forceinline__ Elem *word_slot(int row, int p) const {
        int a = W::DESCENDING ? run - 1 - p : p;
        if (W::CHAINED) {
            unsigned rest;
            row = static_cast<int>(per_len.div(static_cast<unsigned>(a), rest));
            a = static_cast<int>(rest);
        }
        return shared + (row * sh_row + a * sh_along);
    }
};

// Runs a pass: each thread takes TILE_ITEMS warp steps per round (steps warp, warp + warps,
// ...), locating all of them first, then moving them, for each stacked tile in turn; phase 1
// issues its global loads before any shared store. An idle lane of a step in which others
// of its warp access memory repeats an active lane's access, one of its own phase of the
// shared access where there is one (as `repeated_lane`): no byte, sector or bank word that
// instruction does not touch anyway. On the GPU that is how STAND_IN loads go with no
// predicate (below); in emulation every walk does it, so that the trace numbers the
// accesses of all lanes alike, which is how the profiler recognizes one warp instruction.
// W (a Walk) fixes the pass's phase and how its rows lie (tile_pass picks it).
template <typename W, int Unit, int V, int R, int S, typename Elem>
__device__ __forceinline__ void tile_walk(const TilePass<Unit, V, R, S, Elem> &pass) {
    typedef Vec<Elem, V> vec_t;
    constexpr bool LOAD = W::LOAD, STACKED = W::STACKED;
    // Single units of 4 bytes or more go global -> shared asynchronously (cp_async): every
    // round's copies are issued without waiting on the last, the phase's loads all in flight.
    constexpr bool ASYNC = LOAD && V == 1 && sizeof(Elem) >= 4;
    // 4-byte loads of R == 1 passes, and all plain loads in the Grouped variants, go with no
    // predicate, an idle lane of a step taking a stand-in (the unit of the step's first
    // working lane: the same sectors and shared words, the same value stored twice by one
    // instruction): a load waiting on a predicate ties up one of a thread's 7 predicate
    // registers until its shared store, and short of them the compiler issues each load
    // just before its store, one in flight. Narrower plain loads keep theirs in flight
    // without (kernel_costs.json).
    constexpr bool STAND_IN =
        LOAD && !ASYNC && R == 1 && (V * sizeof(Elem) == 4 || W::GROUPED_VARIANT);
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    const unsigned steps = W::GROUPING != Grouping::NONE ? pass.group_steps : pass.steps;
    for (unsigned first = warp; first < steps; first += warps * TILE_ITEMS) {
        char *address[TILE_ITEMS];
        Elem *slot[TILE_ITEMS];
        bool active[TILE_ITEMS];
#pragma unroll
        for (int it = 0; it < TILE_ITEMS; ++it) {
            const unsigned g = first + it * warps;
            active[it] = pass.template locate<W>(
                g, lane, address[it], slot[it]);
            if constexpr (STAND_IN) {  // the unit of the lane an idle one repeats
                const unsigned mask = __ballot_sync(0xffffffffu, active[it]);
                const int from = repeated_lane<sizeof(Elem)>(mask);
                const auto at = __shfl_sync(0xffffffffu,
                                            reinterpret_cast<unsigned long long>(address[it]), from);
                const int at_slot = __shfl_sync(0xffffffffu,
                                                static_cast<int>(slot[it] - pass.shared), from);
                if (!active[it]) {
                    address[it] = reinterpret_cast<char *>(at);
                    slot[it] = pass.shared + at_slot;
                }
                active[it] = mask != 0;  // a step with a working lane: all its lanes move a unit
            } else {
#ifdef INFINI_EMULATION
                // (lanes of its own phase of the shared access first: repeated_lane)
                constexpr unsigned PHASE = phase_lanes(sizeof(Elem));
                for (unsigned k = 0; !active[it] && k < 32; ++k) {
                    active[it] = pass.template locate<W>(
                        g, (lane / PHASE * PHASE + k) % 32, address[it], slot[it]);
                }
#endif
            }
        }
        // Rounds whose every step has work (all but a pass's last, and some of a grouped
        // walk's) load and store with no predicate at all; the others take the rare path.
        bool some_idle = false;
#pragma unroll
        for (int it = 0; it < TILE_ITEMS; ++it) some_idle = some_idle || !active[it];
        // The located items of every stacked tile: only the offsets differ.
        const int count = STACKED ? pass.count : 1;
        if (STAND_IN && !warp_any(some_idle)) {
            for (int s = 0; s < count; ++s) {
                vec_t value[TILE_ITEMS];
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    value[it] = ld(reinterpret_cast<const vec_t *>(address[it] + s * pass.step));
                }
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
#pragma unroll
                    for (int k = 0; k < V; ++k) {
                        sts(slot[it] + s * pass.sh_step + k * pass.sh_along, value[it].v[k]);
                    }
                }
            }
            continue;
        }
        for (int s = 0; s < count; ++s) {
            vec_t value[TILE_ITEMS];
            if (s > 0) {
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    address[it] += pass.step;
                    slot[it] += pass.sh_step;
                }
            }
            if constexpr (ASYNC) {
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    if (active[it]) cp_async(slot[it], reinterpret_cast<const Elem *>(address[it]));
                }
            } else if (LOAD) {
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    if (active[it]) value[it] = ld(reinterpret_cast<const vec_t *>(address[it]));
                }
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    if (!active[it]) continue;
#pragma unroll
                    for (int k = 0; k < V; ++k) sts(slot[it] + k * pass.sh_along, value[it].v[k]);
                }
            } else {
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    if (!active[it]) continue;
#pragma unroll
                    for (int k = 0; k < V; ++k) value[it].v[k] = lds(slot[it] + k * pass.sh_along);
                }
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    if (active[it]) st(reinterpret_cast<vec_t *>(address[it]), value[it]);
                }
            }
        }
    }
    if constexpr (ASYNC) cp_async_wait_all();  // the barrier after the phase then publishes the tile
}

// The walk of a WORDS pass (TilePass): each thread takes TILE_ITEMS warp steps per round,
// a word each, all global loads issued before the shared stores. A word's units move
// between its bytes (little-endian: unit k at bits 8 * Unit * k) and their shared slots one
// at a time. The common path moves whole words; words at a run's end (`edge`) take a rare
// branch: read whole inside the source's bytes, else (and when written) unit by unit. Lanes
// skip accesses in the middle of a round, so every access goes through load_if / store_if,
// which keep the emulator's trace in step.
template <typename W, int Unit, int R, int S, typename Elem>
__device__ __forceinline__ void word_walk(const TilePass<Unit, 1, R, S, Elem> &pass) {
    constexpr bool LOAD = W::LOAD, STACKED = W::STACKED;
    constexpr int IU = TilePass<Unit, 1, R, S, Elem>::IU;
    constexpr int BITS = 8 * Unit;
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    for (unsigned first = warp; first < pass.steps; first += warps * TILE_ITEMS) {
        char *address[TILE_ITEMS];
        int p0[TILE_ITEMS], row[TILE_ITEMS];
        bool active[TILE_ITEMS], whole[TILE_ITEMS];
        bool edge = false;
#pragma unroll
        for (int it = 0; it < TILE_ITEMS; ++it) {
            active[it] = pass.template locate_word<W>(first + it * warps, lane, address[it],
                                                      p0[it], row[it]);
            whole[it] = active[it] && p0[it] >= 0 && p0[it] + IU <= pass.units;
            edge = edge || (active[it] && !whole[it]);
        }
        const int count = STACKED ? pass.count : 1;
        for (int s = 0; s < count; ++s) {
            const index_t moved = s * pass.step;  // stacked tiles: whole sectors apart
            const int sh_moved = s * pass.sh_step;
            unsigned word[TILE_ITEMS];
            if (LOAD) {
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
                    word[it] = 0;
                    load_if<false>(whole[it], reinterpret_cast<const unsigned *>(address[it] + moved),
                                   word[it]);
                }
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {
#pragma unroll
                    for (int k = 0; k < IU; ++k) {
                        store_if<true>(whole[it],
                                       pass.template word_slot<W>(row[it], p0[it] + k) + sh_moved,
                                       static_cast<Elem>(word[it] >> (BITS * k)));
                    }
                }
                if (warp_any(edge)) {
#pragma unroll
                    for (int it = 0; it < TILE_ITEMS; ++it) {
                        const char *at = address[it] + moved;
                        const bool partial = active[it] && !whole[it];
                        const bool inside = partial && at >= pass.safe_lo && at + 4 <= pass.safe_hi;
                        load_if<false>(inside, reinterpret_cast<const unsigned *>(at), word[it]);
#pragma unroll
                        for (int k = 0; k < IU; ++k) {
                            const bool unit = partial && static_cast<unsigned>(p0[it] + k) <
                                                             static_cast<unsigned>(pass.units);
                            Elem value = static_cast<Elem>(word[it] >> (BITS * k));
                            load_if<false>(unit && !inside,
                                           reinterpret_cast<const Elem *>(at + k * Unit), value);
                            store_if<true>(unit,
                                           pass.template word_slot<W>(row[it], p0[it] + k) + sh_moved,
                                           value);
                        }
                    }
                }
            } else {
#pragma unroll
                for (int it = 0; it < TILE_ITEMS; ++it) {  // shared loads do not wait long
                    word[it] = 0;
#pragma unroll
                    for (int k = 0; k < IU; ++k) {
                        Elem unit = 0;
                        load_if<true>(whole[it],
                                      pass.template word_slot<W>(row[it], p0[it] + k) + sh_moved,
                                      unit);
                        word[it] |= static_cast<unsigned>(unit) << (BITS * k);
                    }
                    store_if<false>(whole[it], reinterpret_cast<unsigned *>(address[it] + moved), word[it]);
                }
                if (warp_any(edge)) {
#pragma unroll
                    for (int it = 0; it < TILE_ITEMS; ++it) {
#pragma unroll
                        for (int k = 0; k < IU; ++k) {
                            const bool unit = active[it] && !whole[it] &&
                                              static_cast<unsigned>(p0[it] + k) <
                                                  static_cast<unsigned>(pass.units);
                            Elem value = 0;
                            load_if<true>(unit,
                                          pass.template word_slot<W>(row[it], p0[it] + k) + sh_moved,
                                          value);
                            store_if<false>(unit, reinterpret_cast<Elem *>(address[it] + moved + k * Unit),
                                            value);
                        }
                    }
                }
            }
        }
    }
}

// Runs walk W of a pass: byte words (WORDS) or units of V elements.
template <typename W, int Unit, int V, int R, int S, typename Elem>
__device__ __forceinline__ void walk(const TilePass<Unit, V, R, S, Elem> &pass) {
    if constexpr (TilePass<Unit, V, R, S, Elem>::WORDS) {
        word_walk<W>(pass);
    } else {
        tile_walk<W>(pass);
    }
}

// The walk of a pass in phase P whose units lie in ascending or descending memory order, for
// how its rows lie: one chained run (R == 1 only: its rows then walk as one row), the Grouped
// variants' rows per warp step, rows sharing their lead, rows each with its own.
template <typename P, bool Descending, int Unit, int V, int R, int S, typename Elem>
__device__ __forceinline__ void walk_rows(const TilePass<Unit, V, R, S, Elem> &pass) {
    constexpr bool WORDS = TilePass<Unit, V, R, S, Elem>::WORDS;
    if (pass.chained) {
        walk<Walk<P, R == 1, true, Descending>>(pass);
    } else if (P::GROUPED_VARIANT && R == 1 && !WORDS && !Descending && pass.grouped) {
        // Phase 1 groups rows of any lead in chunks (K rows per step, or short rows); phase 2
        // only short rows of one lead, one chunk each.
        if constexpr (P::LOAD) {
            walk<Walk<P, false, false, false, Grouping::ROWS_IN_CHUNKS>>(pass);
        } else {
            walk<Walk<P, false, true, false, Grouping::ROWS>>(pass);
        }
    } else if (pass.uniform) {
        walk<Walk<P, false, true, Descending>>(pass);
    } else {
        walk<Walk<P, false, false, Descending>>(pass);
    }
}

// A pass's walk in phase P (a Phase): descending units come one at a time (V == 1).
template <typename P, int Unit, int V, int R, int S, typename Elem>
__device__ __forceinline__ void tile_pass(const TilePass<Unit, V, R, S, Elem> &pass) {
    if (V == 1 && pass.descending) {
        walk_rows<P, true>(pass);
    } else {
        walk_rows<P, false>(pass);
    }
}

}  // namespace ic

// The staged copy. Block b of the grid-stride loop over `tiles` takes tile b: b decomposed as
// (batch index over batch_len, tile index t0 over tiles0, t1 over tiles1), last fastest. The
// tile covers i0 in [max(0, t0 * tile0 - shift0), min(len0, (t0 + 1) * tile0 - shift0)) and
// i1 likewise; every element of it is copied once: read in phase 1 (ReadVector elements per
// access), written in phase 2 (WriteVector elements per access), a barrier between them and
// after. 16-byte accesses take 4 rows per warp step (TilePass, R == 4). The Stacked variants
// stack tiles (TileLayout::stack > 1): the innermost batch index counts groups of `stack`
// tiles, the block copies them all in each phase, one tile's located items serving every tile
// of the group. (Their own variants: the other kernels keep their registers and loops.) The
// Grouped variants take a phase's short rows `read_spread` / `write_spread` apart, and phase
// 1's rows `read_rows` at a time, per warp step (TilePass::group_rows), variants of their own:
// the extra walk costs the others' loops their loads in flight where it shares a kernel with
// them.
template <int Unit, int ReadVector, int WriteVector, int Wide, int Stacked, int Grouped = 0>
__global__ void tiled_copy(void *__restrict__ dst, const void *__restrict__ src,
                           ic::TileLayout t,
                           ic::ArrayStruct<ic::TILE_BATCH_DIMS, ic::index_t> batch_len,
                           ic::ArrayStruct<ic::TILE_BATCH_DIMS, ic::index_t> batch_magic,
                           ic::ArrayStruct<ic::TILE_BATCH_DIMS, ic::index_t> src_batch_stride,
                           ic::ArrayStruct<ic::TILE_BATCH_DIMS, ic::index_t> dst_batch_stride) {
    using ic::index_t;
    typedef typename ic::UnitOf<Unit>::type elem_t;
    constexpr int CAPACITY = (Wide ? ic::TILE_WIDE_BYTES : ic::TILE_COMPACT_BYTES) / Unit;
    constexpr int READ_ROWS = ReadVector * Unit == 16 && ReadVector > 1 ? 4 : 1;
    constexpr int WRITE_ROWS = WriteVector * Unit == 16 && WriteVector > 1 ? 4 : 1;
    constexpr int SPREAD = Unit < 4 ? 4 / Unit : 1;  // row spacing where sh_along == 1
    __shared__ elem_t tile[CAPACITY];
    const int pitch = static_cast<int>(t.pitch);
    const char *src_lo = static_cast<const char *>(src) + t.src_lo;
    const char *src_hi = static_cast<const char *>(src) + t.src_hi;
    for (index_t b = blockIdx.x; b < t.tiles; b += gridDim.x) {
        // Tiles are counted in 32 bits (the planner stages no copy of 2^32 tiles or more),
        // split off by multiplication with the host's magics.
        index_t t0, t1, src_at = t.src_offset, dst_at = t.dst_offset;
        unsigned rest = static_cast<unsigned>(b), i, group = 0;
        rest = ic::Divisor(static_cast<unsigned>(t.tiles1),
                           static_cast<unsigned>(t.tiles1_magic)).div(rest, i);
        t1 = i;
        rest = ic::Divisor(static_cast<unsigned>(t.tiles0),
                           static_cast<unsigned>(t.tiles0_magic)).div(rest, i);
        t0 = i;
#pragma unroll
        for (int d = ic::TILE_BATCH_DIMS - 1; d >= 0; --d) {
            if (batch_len.a[d] == 1) continue;  // padding dims
            rest = ic::Divisor(static_cast<unsigned>(batch_len.a[d]),
                               static_cast<unsigned>(batch_magic.a[d])).div(rest, i);
            src_at += static_cast<index_t>(i) * src_batch_stride.a[d];
            dst_at += static_cast<index_t>(i) * dst_batch_stride.a[d];
            if (d == ic::TILE_BATCH_DIMS - 1) group = i;  // the stacked dim, when stacking
        }
        // Tiles this block stacks: `stack`, fewer in the stacked dim's last group.
        const index_t left = t.stack_len - static_cast<index_t>(group) * t.stack;
        const int count = static_cast<int>(t.stack < left ? t.stack : left);
        // The tile's first indices, clipped: the first tile of a dim starts at 0 and ends
        // `shift` early, so the later ones start where the planner put sector boundaries.
        const index_t start0 = t0 * t.tile0 - t.shift0, start1 = t1 * t.tile1 - t.shift1;
        const index_t first0 = start0 < 0 ? 0 : start0, first1 = start1 < 0 ? 0 : start1;
        const index_t end0 = start0 + t.tile0 < t.len0 ? start0 + t.tile0 : t.len0;
        const index_t end1 = start1 + t.tile1 < t.len1 ? start1 + t.tile1 : t.len1;
        const int n0 = static_cast<int>(end0 - first0), n1 = static_cast<int>(end1 - first1);
        src_at += first0 * t.src_stride0 + first1 * t.src_stride1;
        dst_at += first0 * t.dst_stride0 + first1 * t.dst_stride1;
        char *src_tile = const_cast<char *>(static_cast<const char *>(src)) + src_at;
        char *dst_tile = static_cast<char *>(dst) + dst_at;

        const int sh_step = static_cast<int>(t.stack_slots);
        if (t.read_along == 0) {  // rows of dim 1, each along dim 0: shared column by column
            ic::tile_pass<ic::Phase<true, Stacked != 0, Grouped != 0>>(
                ic::TilePass<Unit, ReadVector, READ_ROWS, 1, elem_t>(
                    src_tile, t.src_stride0, t.src_stride1, n1, n0, t.read_chained != 0,
                    t.read_uniform != 0, tile, 1, pitch, t.read_len_magic)
                    .stacked(count, t.stack_src_step, sh_step)
                    .bounded(src_lo, src_hi)
                    .template group_rows<Grouped != 0>(t.read_rows, t.read_spread));
        } else {  // rows of dim 0, each along dim 1
            ic::tile_pass<ic::Phase<true, Stacked != 0, Grouped != 0>>(
                ic::TilePass<Unit, ReadVector, READ_ROWS, SPREAD, elem_t>(
                    src_tile, t.src_stride1, t.src_stride0, n0, n1, t.read_chained != 0,
                    t.read_uniform != 0, tile, pitch, 1, t.read_len_magic)
                    .stacked(count, t.stack_src_step, sh_step)
                    .bounded(src_lo, src_hi)
                    .template group_rows<Grouped != 0>(t.read_rows, t.read_spread));
        }
        __syncthreads();
        ic::tile_pass<ic::Phase<false, Stacked != 0, Grouped != 0>>(
            ic::TilePass<Unit, WriteVector, WRITE_ROWS, SPREAD, elem_t>(
                dst_tile, t.dst_stride1, t.dst_stride0, n0, n1, t.write_chained != 0,
                t.write_uniform != 0, tile, pitch, 1, t.write_len_magic)
                .stacked(count, t.stack_dst_step, sh_step)
                .template spread_rows<Grouped != 0>(t.write_spread));
        __syncthreads();  // the next tile overwrites shared memory
    }
}
