// Staged copy ("tiled transpose"): dst[i] = src[i] over one shape, a tile at a time through
// shared memory, so that reads walk the source's contiguous dim and writes the destination's.
// The host planner (infini_cupy/tile_planner.py) picks the two tiled dims, the tile extents and
// the vector widths; its TilePlan docstring states the semantics this kernel implements.
//
// A tile is a box of two dims, dim 0 and dim 1 (dim 1 contiguous in dst), plus up to four batch
// dims taken whole by the block index. Phase 1 reads the tile from src into shared memory along
// `read_along` (dim 0 for a transpose: src-contiguous; dim 1 for a copy whose rows are only
// misaligned); phase 2 writes it to dst along dim 1. Both phases lay their rows out on 32-byte
// sector boundaries ("virtual rows", below), so every warp access covers whole sectors except
// at the two ends of a row.
#include "common.cuh"

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
};

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
    T v[V];
};

// One phase: moves `rows` rows of `row_len` elements between global memory (row r at
// `origin + r * row_stride`, element a of it at `+ a * along`, along == +-Unit) and shared
// memory (element (r, a) at `r * sh_row + a * sh_along`), V elements per global access.
//
// Work item i is unit p of virtual row r = i / vl, where a virtual row starts at the sector
// boundary at or below the row's lowest address and is vl units long, a multiple of the SEC
// units in a sector: a warp's 32 consecutive items then cover whole sectors of one or more
// rows. Items before a row's first unit or past its last are idle. vl leaves room for the
// row's lead (units between the boundary and the row): SEC - 1 at most, exactly the first
// row's when all rows share it (`uniform`, or one chained run). A row whose units are in
// descending memory order (along < 0, only with V == 1) is walked from its lowest address.
// Chained rows (row_stride == row_len * along, along > 0) are one run of rows * row_len.
template <int Unit, int V, typename Elem>
struct TilePass {
    char *origin;
    index_t along, row_stride;
    int row_len, run, units, vl, total;
    bool chained, descending;
    Elem *shared;
    int sh_row, sh_along;

    static constexpr int SEC = SECTOR_BYTES / (V * Unit);  // units per sector

    __device__ TilePass(char *origin_, index_t along_, index_t row_stride_, int rows, int row_len_,
                        bool chained_, bool uniform, Elem *shared_, int sh_row_, int sh_along_)
        : origin(origin_), along(along_), row_stride(row_stride_), row_len(row_len_),
          chained(chained_), descending(along_ < 0), shared(shared_), sh_row(sh_row_),
          sh_along(sh_along_) {
        run = chained ? rows * row_len : row_len;
        units = run / V;
        const int lead = uniform || chained ? lead_of(0) : SEC - 1;
        vl = (units + lead + SEC - 1) / SEC * SEC;
        total = (chained ? 1 : rows) * vl;
    }

    // Lowest address of row r, and how many units past a sector boundary it is.
    __device__ const char *lowest(int r) const {
        return origin + r * row_stride + (descending ? (run - 1) * along : 0);
    }
    __device__ int lead_of(int r) const {
        return static_cast<int>(reinterpret_cast<unsigned long long>(lowest(r)) % SECTOR_BYTES) /
               (V * Unit);
    }

    // Work item i: false when idle, else the global address of its unit and its first slot.
    __device__ bool locate(int i, char *&address, Elem *&slot) const {
        if (i >= total) return false;
        const int r = i / vl;
        const char *lo = lowest(r);
        const int p = i - r * vl - lead_of(r);
        if (p < 0 || p >= units) return false;
        const int e = descending ? run - 1 - p : p * V;  // element index in the run
        const int a = chained ? e % row_len : e;
        const int row = chained ? e / row_len : r;
        address = const_cast<char *>(lo) + static_cast<index_t>(p) * V * Unit;
        slot = shared + row * sh_row + a * sh_along;
        return true;
    }
};

// Runs a pass with every warp stepping through the work items together (items base + lane),
// as the GPU issues one access instruction per warp and step. In emulation an idle lane of a
// step in which others of its warp access memory repeats the first active lane's access: no
// byte or sector that instruction does not touch anyway, but the trace then numbers the
// accesses of all lanes alike, which is how the profiler recognizes one warp instruction.
template <int Unit, int V, bool LOAD, typename Elem>
__device__ __forceinline__ void tile_pass(const TilePass<Unit, V, Elem> &pass) {
    typedef Vec<Elem, V> vec_t;
    const int lane = threadIdx.x % 32;
    for (int base = threadIdx.x - lane; base < pass.total; base += blockDim.x) {
        char *address;
        Elem *slot;
        bool active = pass.locate(base + lane, address, slot);
#ifdef INFINI_EMULATION
        for (int other = 0; !active && other < 32; ++other) {
            active = pass.locate(base + other, address, slot);
        }
#endif
        if (!active) continue;
        if (LOAD) {
            const vec_t value = ld(reinterpret_cast<const vec_t *>(address));
#pragma unroll
            for (int k = 0; k < V; ++k) sts(slot + k * pass.sh_along, value.v[k]);
        } else {
            vec_t value;
#pragma unroll
            for (int k = 0; k < V; ++k) value.v[k] = lds(slot + k * pass.sh_along);
            st(reinterpret_cast<vec_t *>(address), value);
        }
    }
}

}  // namespace ic

// The staged copy. Block b of the grid-stride loop over `tiles` takes tile b: b decomposed as
// (batch index over batch_len, tile index t0 over tiles0, t1 over tiles1), last fastest. The
// tile covers i0 in [max(0, t0 * tile0 - shift0), min(len0, (t0 + 1) * tile0 - shift0)) and
// i1 likewise; every element of it is copied once: read in phase 1 (ReadVector elements per
// access), written in phase 2 (WriteVector elements per access), a barrier between them and
// after.
template <int Unit, int ReadVector, int WriteVector, int Wide>
__global__ void tiled_copy(void *__restrict__ dst, const void *__restrict__ src,
                           ic::TileLayout t,
                           ic::ArrayStruct<ic::TILE_BATCH_DIMS, ic::index_t> batch_len,
                           ic::ArrayStruct<ic::TILE_BATCH_DIMS, ic::index_t> src_batch_stride,
                           ic::ArrayStruct<ic::TILE_BATCH_DIMS, ic::index_t> dst_batch_stride) {
    using ic::index_t;
    typedef typename ic::UnitOf<Unit>::type elem_t;
    constexpr int CAPACITY = (Wide ? ic::TILE_WIDE_BYTES : ic::TILE_COMPACT_BYTES) / Unit;
    __shared__ elem_t tile[CAPACITY];
    const int pitch = static_cast<int>(t.pitch);

    for (index_t b = blockIdx.x; b < t.tiles; b += gridDim.x) {
        index_t rest = b;
        const index_t t1 = rest % t.tiles1;
        rest /= t.tiles1;
        const index_t t0 = rest % t.tiles0;
        rest /= t.tiles0;
        // The tile's first indices, clipped: the first tile of a dim starts at 0 and ends
        // `shift` early, so the later ones start where the planner put sector boundaries.
        const index_t start0 = t0 * t.tile0 - t.shift0, start1 = t1 * t.tile1 - t.shift1;
        const index_t first0 = start0 < 0 ? 0 : start0, first1 = start1 < 0 ? 0 : start1;
        const index_t end0 = start0 + t.tile0 < t.len0 ? start0 + t.tile0 : t.len0;
        const index_t end1 = start1 + t.tile1 < t.len1 ? start1 + t.tile1 : t.len1;
        const int n0 = static_cast<int>(end0 - first0), n1 = static_cast<int>(end1 - first1);
        index_t src_at = t.src_offset + first0 * t.src_stride0 + first1 * t.src_stride1;
        index_t dst_at = t.dst_offset + first0 * t.dst_stride0 + first1 * t.dst_stride1;
#pragma unroll
        for (int d = ic::TILE_BATCH_DIMS - 1; d >= 0; --d) {
            const index_t i = rest % batch_len.a[d];
            rest /= batch_len.a[d];
            src_at += i * src_batch_stride.a[d];
            dst_at += i * dst_batch_stride.a[d];
        }
        char *src_tile = const_cast<char *>(static_cast<const char *>(src)) + src_at;
        char *dst_tile = static_cast<char *>(dst) + dst_at;

        typedef ic::TilePass<Unit, ReadVector, elem_t> read_pass;
        if (t.read_along == 0) {  // rows of dim 1, each along dim 0: shared column by column
            ic::tile_pass<Unit, ReadVector, true>(read_pass(src_tile, t.src_stride0, t.src_stride1,
                n1, n0, t.read_chained != 0, t.read_uniform != 0, tile, 1, pitch));
        } else {  // rows of dim 0, each along dim 1
            ic::tile_pass<Unit, ReadVector, true>(read_pass(src_tile, t.src_stride1, t.src_stride0,
                n0, n1, t.read_chained != 0, t.read_uniform != 0, tile, pitch, 1));
        }
        __syncthreads();
        ic::tile_pass<Unit, WriteVector, false>(ic::TilePass<Unit, WriteVector, elem_t>(
            dst_tile, t.dst_stride1, t.dst_stride0, n0, n1, t.write_chained != 0,
            t.write_uniform != 0, tile, pitch, 1));
        __syncthreads();  // the next tile overwrites shared memory
    }
}
