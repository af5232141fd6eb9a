// Shared by every kernel source: fixed-size argument structs, copy units, and the ld/st
// helpers through which every global memory access goes.
//
// The same text is compiled two ways:
//   - by NVRTC for the GPU (no standard headers there, so integer types come from here);
//   - by g++ for the CPU emulator, with INFINI_EMULATION defined: emulation/cuda_emulation.h
//     supplies threadIdx, __shared__, __syncthreads, vector types, and the access checks.
#pragma once

#ifdef INFINI_EMULATION
#include "emulation/cuda_emulation.h"
#include <cstdint>
#else
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#endif

namespace ic {

typedef long long index_t;  // byte strides and lengths: signed, 64-bit, as NumPy/CuPy report them

// A fixed-size array passed by value: kernels cannot take std::vector, and a struct of
// known size is packed once on the host (a NumPy structured scalar of the same layout).
template <int N, typename T>
struct ArrayStruct {
    T a[N];
};

// A split dimension whose length is not a multiple of its per-block part: the thread with
// grid index g (in grid dim grid_idx) and block index b (in block dim block_idx) exists
// only if g * grid_div_block + b < total_len.
template <typename T>
struct Constraint {
    T grid_idx;
    T block_idx;
    T grid_div_block;
    T total_len;
};

// What one thread copies: a plain type of exactly `Bytes` bytes and that alignment, so the
// compiler emits one vector access (two for 32 bytes).
struct alignas(32) unit32_t {
    uint4 lo, hi;
};
template <int Bytes> struct UnitOf;
template <> struct UnitOf<1> { typedef uint8_t type; };
template <> struct UnitOf<2> { typedef uint16_t type; };
template <> struct UnitOf<4> { typedef uint32_t type; };
template <> struct UnitOf<8> { typedef uint2 type; };
template <> struct UnitOf<16> { typedef uint4 type; };
template <> struct UnitOf<32> { typedef unit32_t type; };

// Global memory access. On the GPU a plain load/store; in emulation each access is checked
// against the buffers passed to the launch (and optionally traced) before it happens, so an
// out-of-bounds access becomes a Python exception instead of corrupted memory.
template <typename T>
__device__ __forceinline__ T ld(const T *p) {
#ifdef INFINI_EMULATION
    emu::on_access(p, sizeof(T), false);
#endif
    return *p;
}

template <typename T>
__device__ __forceinline__ void st(T *p, const T &v) {
#ifdef INFINI_EMULATION
    emu::on_access(p, sizeof(T), true);
#endif
    *p = v;
}

// Shared memory access. On the GPU a plain access; in emulation it is reported to the
// emulator (emu::on_shared_access), which can trace it so the profiler counts shared-memory
// bank conflicts per warp access as it counts global sectors. Kernels reach __shared__ and
// dynamic shared memory through these, never directly.
template <typename T>
__device__ __forceinline__ T lds(const T *p) {
#ifdef INFINI_EMULATION
    emu::on_shared_access(p, sizeof(T), false);
#endif
    return *p;
}

template <typename T>
__device__ __forceinline__ void sts(T *p, const T &v) {
#ifdef INFINI_EMULATION
    emu::on_shared_access(p, sizeof(T), true);
#endif
    *p = v;
}

// Lanes shared memory serves together for an access of `bytes` (a phase): the warp up to 4
// bytes, half of it for 8, a quarter for 16 (readers/bank_conflicts.py).
__host__ __device__ constexpr unsigned phase_lanes(unsigned bytes) {
    return bytes >= 16 ? 8u : bytes >= 8 ? 16u : 32u;
}

// The lane whose access an idle lane repeats (in a traced emulation, and on the GPU in the
// staged copy's loads with stand-ins): the first taking part (`mask`) in the idle lane's own
// phase, else in the warp. A repeat within the phase is a
// broadcast, free as the idle lane is on the GPU; one from another phase would add a word
// to the phase and count a bank conflict the GPU does not have.
template <unsigned Bytes>
__device__ inline int repeated_lane(unsigned mask) {
    constexpr unsigned PHASE = phase_lanes(Bytes);
    const unsigned base = threadIdx.x % 32 / PHASE * PHASE;
    const unsigned own = PHASE == 32 ? mask : mask & (((1u << PHASE) - 1) << base);
    return __ffs(static_cast<int>(own ? own : mask)) - 1;
}

// An access some lanes of a warp make and others skip (`on`): on the GPU a predicated
// access. In emulation, while the profiler traces, a lane that skips repeats a taking-part
// lane's access (its address, and for a store its value; `repeated_lane`), so that the k-th
// access of every lane stays one warp instruction in the trace (readers/coalescing.py); a
// repeated store writes what is written there anyway.
template <bool SHARED, typename T>
__device__ __forceinline__ void load_if(bool on, const T *p, T &out) {
#ifdef INFINI_EMULATION
    if (emu::tracing()) {
        const unsigned mask = __ballot_sync(0xffffffffu, on);
        if (mask == 0) return;
        const T *first = __shfl_sync(0xffffffffu, p, repeated_lane<sizeof(T)>(mask));
        const T *at = on ? p : first;
        const T value = SHARED ? lds(at) : ld(at);
        if (on) out = value;
        return;
    }
#endif
    if (on) out = SHARED ? lds(p) : ld(p);
}

#ifdef INFINI_EMULATION
// Lane `src`'s value of any trivially copyable T, 8 bytes at a time (a 16-byte complex too).
template <typename T>
T shfl_bytes(T value, int src) {
    constexpr int WORDS = (sizeof(T) + 7) / 8;
    unsigned long long words[WORDS] = {};
    __builtin_memcpy(words, &value, sizeof(T));
    for (int i = 0; i < WORDS; ++i) words[i] = __shfl_sync(0xffffffffu, words[i], src);
    T out;
    __builtin_memcpy(&out, words, sizeof(T));
    return out;
}
#endif

template <bool SHARED, typename T>
__device__ __forceinline__ void store_if(bool on, T *p, T value) {
#ifdef INFINI_EMULATION
    if (emu::tracing()) {
        const unsigned mask = __ballot_sync(0xffffffffu, on);
        if (mask == 0) return;
        const int src = repeated_lane<sizeof(T)>(mask);
        T *first = __shfl_sync(0xffffffffu, p, src);
        const T first_value = shfl_bytes(value, src);
        if (SHARED) {
            sts(on ? p : first, on ? value : first_value);
        } else {
            st(on ? p : first, on ? value : first_value);
        }
        return;
    }
#endif
    if (on) {
        if (SHARED) {
            sts(p, value);
        } else {
            st(p, value);
        }
    }
}

// Whether any lane of the warp has `edge` set: a branch taken by the whole warp or none, so
// the compiler keeps it a branch (a rare path costs nothing where no lane takes it) and the
// emulator's traced lanes stay in step inside it. Untraced emulation needs no warp vote.
__device__ __forceinline__ bool warp_any(bool edge) {
#ifdef INFINI_EMULATION
    if (!emu::tracing()) return edge;
#endif
    return __any_sync(0xffffffffu, edge);
}

// A global -> shared copy of one T that does not pass through a register: on sm_80 and later
// an asynchronous copy (cp.async, SASS LDGSTS), so a thread can have every item of a staged
// phase in flight at once instead of a round of loads at a time; cp_async_wait_all() completes
// this thread's copies (a barrier after it makes them visible to the block). Elsewhere, and in
// emulation, an ld and an sts: the same bytes moved, complete at once.
template <typename T>
__device__ __forceinline__ void cp_async(T *shared, const T *global) {
#if !defined(INFINI_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16,
                  "cp.async moves 4, 8 or 16 bytes");
    const unsigned slot = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    if (sizeof(T) == 16) {  // 16 bytes may bypass L1 (.cg): a staged copy reads each once
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(slot), "l"(global)
                     : "memory");
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(slot), "l"(global),
                     "n"(static_cast<int>(sizeof(T)))
                     : "memory");
    }
#else
    sts(shared, ld(global));
#endif
}

__device__ __forceinline__ void cp_async_wait_all() {
#if !defined(INFINI_EMULATION) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// Dynamic shared memory: the launch's shared_mem bytes per block, 16-byte aligned (a block
// may declare 48 KiB statically; beyond, the launcher opts the kernel in to more).
__device__ __forceinline__ unsigned char *dynamic_shared_memory() {
#ifdef INFINI_EMULATION
    return emu::dynamic_shared();
#else
    extern __shared__ __align__(16) unsigned char ic_dynamic_shared[];
    return ic_dynamic_shared;
#endif
}

// Byte-offset pointer arithmetic: strides are in bytes.
template <typename T>
__device__ __forceinline__ T *at(void *base, index_t offset) {
    return reinterpret_cast<T *>(static_cast<char *>(base) + offset);
}
template <typename T>
__device__ __forceinline__ const T *at(const void *base, index_t offset) {
    return reinterpret_cast<const T *>(static_cast<const char *>(base) + offset);
}

}  // namespace ic
