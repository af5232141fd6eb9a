// Test kernels for the emulator (tests/runtime/test_emulate.py); NVRTC compiles them too
// (tests/runtime/test_nvrtc.py).
#include "common.cuh"

// One thread per element; the last block may be partial.
template <typename T>
__global__ void copy(T *__restrict__ y, const T *__restrict__ x, ic::index_t n) {
    ic::index_t i = ic::index_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) ic::st(y + i, ic::ld(x + i));
}

// Writes y[i + offset] for i < n with no bounds check: offset/n choose an out-of-bounds store.
__global__ void store_at(float *y, int offset, int n) {
    int i = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) ic::st(y + i + offset, float(i));
}

// A 16-byte load from x + byte_offset: misaligned unless byte_offset % 16 == 0.
__global__ void load_vector_at(uint4 *y, const char *x, int byte_offset) {
    ic::st(y, ic::ld(reinterpret_cast<const uint4 *>(x + byte_offset)));
}

// Reverses each block's tile through shared memory.
template <typename T, int TILE>
__global__ void reverse_tiles(T *y, const T *x) {
    __shared__ T tile[TILE];
    unsigned t = threadIdx.x;
    ic::index_t base = ic::index_t(blockIdx.x) * TILE;
    tile[t] = ic::ld(x + base + t);
    __syncthreads();
    ic::st(y + base + t, tile[TILE - 1 - t]);
}

// Reverses each block's blockDim.x elements through dynamic shared memory; with `peek`, thread
// t first copies out what slot t held before anything was written (poison in emulation), and
// `overrun` makes thread 0 write one int past the launch's shared_mem bytes.
__global__ void reverse_dynamic(int *y, const int *x, int *before, int overrun) {
    int *tile = reinterpret_cast<int *>(ic::dynamic_shared_memory());
    unsigned t = threadIdx.x, n = blockDim.x;
    ic::index_t base = ic::index_t(blockIdx.x) * n;
    ic::st(before + base + t, tile[t]);
    __syncthreads();
    tile[t] = ic::ld(x + base + t);
    if (overrun && t == 0) tile[n] = -1;
    __syncthreads();
    ic::st(y + base + t, tile[n - 1 - t]);
}

// Sum of each block's part of x: threads past n return before the barriers.
template <int BLOCK>
__global__ void block_sums(float *sums, const float *x, int n) {
    __shared__ float partial[BLOCK];
    unsigned t = threadIdx.x;
    int i = int(blockIdx.x * BLOCK + t);
    if (i >= n) return;
    partial[t] = ic::ld(x + i);
    __syncthreads();
    unsigned live = min(unsigned(BLOCK), unsigned(n - int(blockIdx.x) * BLOCK));
    for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (t < stride && t + stride < live) partial[t] += partial[t + stride];
        __syncthreads();
    }
    if (t == 0) ic::st(sums + blockIdx.x, partial[0]);
}

// Per warp, the sum of lane values by shuffles.
__global__ void warp_sums(int *sums, const int *x) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = ic::ld(x + i);
    for (int delta = 16; delta > 0; delta /= 2) v += __shfl_down_sync(0xffffffffu, v, delta);
    if (threadIdx.x % 32 == 0) ic::st(sums + i / 32, v);
}

// Every thread writes its built-in indices: 12 values at its global linear index.
__global__ void write_indices(uint32_t *out) {
    uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    uint32_t *row = out + 12 * (block * blockDim.x * blockDim.y * blockDim.z + thread);
    const uint32_t v[12] = {threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z,
                            blockDim.x,  blockDim.y,  blockDim.z,  gridDim.x,  gridDim.y,  gridDim.z};
    for (int k = 0; k < 12; ++k) ic::st(row + k, v[k]);
}

// Echoes by-value arguments: a struct, then scalars of several sizes.
struct Mixed {
    int8_t small;
    double wide;
    int32_t mid;
};

__global__ void echo_args(double *out, ic::ArrayStruct<3, ic::index_t> shape, Mixed mixed, float scale,
                          int8_t tiny, uint64_t big) {
    if (threadIdx.x != 0) return;
    const double v[9] = {double(shape.a[0]), double(shape.a[1]), double(shape.a[2]), double(mixed.small),
                         mixed.wide,         double(mixed.mid),  double(scale),       double(tiny),
                         double(big)};
    for (int k = 0; k < 9; ++k) ic::st(out + k, v[k]);
}

// Lane 0 of warp 0 waits at __syncwarp while every other thread waits at __syncthreads.
__global__ void mismatched_barriers(int *y) {
    if (threadIdx.x == 0) {
        __syncwarp();
    } else {
        __syncthreads();
    }
    ic::st(y + threadIdx.x, 1);
}

// Each thread stores its element in shared memory, then stores its left neighbour's (thread
// 0: its own) to y. With SYNC a barrier orders the two; without it the kernel is wrong, and
// only threads run in forward order happen to find every neighbour's store done.
template <bool SYNC>
__global__ void shift_right(int *y, const int *x) {
    __shared__ int buf[1024];
    unsigned t = threadIdx.x;
    ic::index_t base = ic::index_t(blockIdx.x) * blockDim.x;
    buf[t] = ic::ld(x + base + t);
    if (SYNC) __syncthreads();
    ic::st(y + base + t, buf[t == 0 ? 0 : t - 1]);
}
