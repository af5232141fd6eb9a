// The emulator's runtime, compiled once into its own shared library (loaded RTLD_GLOBAL, so
// kernel libraries resolve emu::* and the threadIdx/blockIdx thread-locals here, exactly once).
//
// A launch splits its blocks among worker threads (the caller plus a persistent pool). A
// worker runs one block at a time; the block's threads are fibers on that worker, started in
// the launch's thread order (forward, reversed, or shuffled: a kernel whose result depends on
// the order misses a barrier). A thread runs until it exits or reaches a barrier; a barrier is
// released when every thread still alive has reached it, and the threads then resume in that
// order (reshuffled at every barrier), so a kernel without barriers runs each thread
// start-to-finish, all on one stack.
#include "cuda_emulation.h"
#include "fiber.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <thread>
#include <vector>

namespace emu {

__thread uint3 threadIdx EMU_TLS_MODEL;
__thread uint3 blockIdx EMU_TLS_MODEL;
dim3 blockDim;
dim3 gridDim;

// ---- shared with Python (infini_cupy/runtime/emulate/launcher.py mirrors these layouts:
// _FAULT_KINDS, the (lo, hi, writable) buffer rows, _Fault, TRACE_DTYPE, _THREAD_ORDERS)
enum FaultKind : int32_t {
    NO_FAULT = 0, OUT_OF_BOUNDS = 1, MISALIGNED = 2, READ_ONLY = 3, BARRIER_DEADLOCK = 4,
    SHARED_OVERRUN = 5,  // a write past either end of the launch's dynamic shared memory
    INTERRUPTED = 6      // SIGINT (Ctrl-C) during an interruptible launch: blocks left unrun
};

struct Buffer {
    uint64_t lo, hi, writable;
};

struct Fault {
    int32_t kind;
    uint32_t block[3];
    uint32_t thread[3];
    uint32_t bytes;
    uint64_t address;
    int32_t is_write;
    int32_t pad;
};

struct TraceRecord {
    uint64_t address;
    uint64_t block;
    uint32_t bytes;
    uint32_t thread;
    uint32_t access;  // the k-th access of its thread in its memory space
    uint8_t is_write;
    uint8_t shared;  // 1: a shared-memory access (lds/sts), 0: global (ld/st)
    uint8_t pad[2];
};
static_assert(sizeof(TraceRecord) == 32, "TraceRecord layout is shared with Python");

// ---- one launch
enum ThreadOrder : int32_t { FORWARD = 0, REVERSE = 1, SHUFFLE = 2 };

struct Job {
    void (*entry)(void **);
    void **args;
    uint64_t n_blocks;
    uint32_t block_threads;
    const Buffer *buffers;
    int n_buffers;
    bool tracing;
    ThreadOrder order;
    uint64_t seed;  // SHUFFLE: with the block index, seeds each block's permutations
    uint64_t dynamic_shared;  // bytes of dynamic shared memory per block (launch's shared_mem)
    std::atomic<uint64_t> next_block{0};
    std::atomic<bool> stop{false};
    std::atomic<bool> faulted{false};
    Fault fault{};
};

static Job *g_job;  // the launch in progress; launches are serialized by g_launch_mutex
static std::mutex g_launch_mutex;
// Set by the SIGINT handler of an interruptible launch (a lock-free atomic: signal-safe);
// the workers stop taking blocks once it is.
static std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "read in a signal handler");

static void on_interrupt(int) { g_interrupted.store(true, std::memory_order_relaxed); }

enum ThreadState : uint8_t { UNSTARTED, RUNNING, AT_SYNC, AT_WARP, EXITED };

struct Fiber {  // one CUDA thread of the current block
    Context ctx;
    char *stack;  // top of the stack it runs on, while it is suspended at a barrier
    uint3 idx;
    uint32_t linear;
    uint32_t accesses;
    uint32_t shared_accesses;
    ThreadState state;
};

struct Worker {
    Context scheduler;
    Fiber fibers[1024];
    uint32_t schedule[1024];  // the order in which this block's threads start and resume
    uint64_t shuffle_state = 0;
    std::vector<char *> free_stacks;  // tops of stacks not held by a suspended fiber
    std::vector<char *> all_stacks;
    unsigned long long warp_slots[32][32];
    uint32_t n_threads = 0, next_unstarted = 0;
    uint64_t block_linear = 0;
    Fiber *current = nullptr;
    bool suspended = false;  // some thread of this block waited at a barrier
    std::vector<TraceRecord> trace;
    struct Segment {
        uint64_t block, start, count;
    };
    std::vector<Segment> segments;  // where each block's records are in `trace`
    // Dynamic shared memory: guard bytes, the block's bytes (16-byte aligned), guard bytes.
    std::vector<unsigned char> dynamic_storage;
    unsigned char *dynamic = nullptr;

    char *take_stack() {
        if (free_stacks.empty()) {
            void *mem = mmap(nullptr, STACK_BYTES, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (mem == MAP_FAILED) {
                fprintf(stderr, "infini_cupy emulator: cannot map a fiber stack\n");
                abort();
            }
            mprotect(mem, GUARD_BYTES, PROT_NONE);
            // Tops staggered by cache lines: equally aligned tops would share few cache sets.
            size_t color = (all_stacks.size() % 64) * 64;
            all_stacks.push_back(static_cast<char *>(mem) + STACK_BYTES - color);
            return all_stacks.back();
        }
        char *top = free_stacks.back();
        free_stacks.pop_back();
        return top;
    }
    ~Worker() {
        for (size_t i = 0; i < all_stacks.size(); ++i)
            munmap(all_stacks[i] + (i % 64) * 64 - STACK_BYTES, STACK_BYTES);
    }
};

static thread_local std::unique_ptr<Worker> t_worker;
static __thread Worker *t_current_worker EMU_TLS_MODEL;

static inline void enter(Worker &w, Fiber &f) {
    w.current = &f;
    threadIdx = f.idx;
    f.state = RUNNING;
}

// Every fiber's body: run threads of the block in order until one blocks at a barrier (its
// stack is then held by it) or none is left to start (the stack goes back to the pool).
static void fiber_main() {
    Worker &w = *t_current_worker;
    for (;;) {
        Fiber &f = *w.current;
        g_job->entry(g_job->args);
        f.state = EXITED;
        w.warp_slots[f.linear / 32][f.linear % 32] = 0;  // an exited lane votes 0
        if (w.next_unstarted < w.n_threads && !g_job->stop.load(std::memory_order_relaxed)) {
            Fiber &next = w.fibers[w.schedule[w.next_unstarted++]];
            next.stack = f.stack;
            enter(w, next);
            continue;
        }
        w.free_stacks.push_back(f.stack);
        switch_context(f.ctx, w.scheduler);  // never resumed
    }
}

static void record_fault(FaultKind kind, const Fiber &f, const void *p, size_t bytes, bool is_write) {
    Job &job = *g_job;
    if (!job.faulted.exchange(true)) {  // the first fault of the launch is the one reported
        job.fault.kind = kind;
        job.fault.block[0] = blockIdx.x, job.fault.block[1] = blockIdx.y, job.fault.block[2] = blockIdx.z;
        job.fault.thread[0] = f.idx.x, job.fault.thread[1] = f.idx.y, job.fault.thread[2] = f.idx.z;
        job.fault.address = reinterpret_cast<uint64_t>(p);
        job.fault.bytes = uint32_t(bytes);
        job.fault.is_write = is_write;
    }
    job.stop.store(true);
}

[[noreturn]] static void fail(FaultKind kind, const void *p, size_t bytes, bool is_write) {
    Worker &w = *t_current_worker;
    Fiber &f = *w.current;
    record_fault(kind, f, p, bytes, is_write);
    switch_context(f.ctx, w.scheduler);  // the block is abandoned; this fiber never resumes
    __builtin_unreachable();
}

void on_access(const void *p, size_t bytes, bool is_write) {
    const Job &job = *g_job;
    uint64_t lo = reinterpret_cast<uint64_t>(p), hi = lo + bytes;
    uint64_t align = bytes & (~bytes + 1);  // largest power of two dividing the size
    if (align > 32) align = 32;
    if (lo & (align - 1)) fail(MISALIGNED, p, bytes, is_write);
    bool inside = false, writable = false;
    for (int i = 0; i < job.n_buffers; ++i) {
        const Buffer &b = job.buffers[i];
        if (lo >= b.lo && hi <= b.hi) {
            inside = true;
            writable |= b.writable != 0;
        }
    }
    if (!inside) fail(OUT_OF_BOUNDS, p, bytes, is_write);
    if (is_write && !writable) fail(READ_ONLY, p, bytes, is_write);
    if (job.tracing) {
        Worker &w = *t_current_worker;
        Fiber &f = *w.current;
        w.trace.push_back(TraceRecord{lo, w.block_linear, uint32_t(bytes), f.linear, f.accesses++,
                                      uint8_t(is_write), 0, {0, 0}});
    }
}

// Shared memory is per block and every __shared__ array and the dynamic shared memory start
// on 128-byte boundaries (cuda_emulation.h, prepare_dynamic_shared), so an address's bank
// (address / 4 % 32) is the one the GPU would use for the same offset.
void on_shared_access(const void *p, size_t bytes, bool is_write) {
    if (!g_job->tracing) return;
    Worker &w = *t_current_worker;
    Fiber &f = *w.current;
    w.trace.push_back(TraceRecord{reinterpret_cast<uint64_t>(p), w.block_linear, uint32_t(bytes),
                                  f.linear, f.shared_accesses++, uint8_t(is_write), 1, {0, 0}});
}

static inline void wait_at(ThreadState state) {
    Worker &w = *t_current_worker;
    Fiber &f = *w.current;
    f.state = state;
    w.suspended = true;
    switch_context(f.ctx, w.scheduler);  // resumed by the scheduler, which set threadIdx
}

void sync_threads() { wait_at(AT_SYNC); }
void sync_warp() { wait_at(AT_WARP); }

const unsigned long long *warp_exchange(unsigned long long value) {
    Worker &w = *t_current_worker;
    uint32_t linear = w.current->linear;
    w.warp_slots[linear / 32][linear % 32] = value;
    wait_at(AT_WARP);
    return w.warp_slots[w.current->linear / 32];
}
void warp_exchange_end() { wait_at(AT_WARP); }

// Which suspended threads may go on: a warp whose live threads all wait at __syncwarp, else
// the whole block when every live thread waits at __syncthreads. False: they never can.
static bool release_waiting(Worker &w) {
    uint32_t n = w.n_threads, live = 0, at_sync = 0;
    bool released = false;
    for (uint32_t warp = 0; warp * 32 < n; ++warp) {
        uint32_t end = warp * 32 + 32 < n ? warp * 32 + 32 : n, warp_live = 0, warp_waiting = 0;
        for (uint32_t t = warp * 32; t < end; ++t) {
            ThreadState s = w.fibers[t].state;
            warp_live += s != EXITED;
            warp_waiting += s == AT_WARP;
            at_sync += s == AT_SYNC;
        }
        live += warp_live;
        if (warp_live && warp_waiting == warp_live) {
            for (uint32_t t = warp * 32; t < end; ++t) w.fibers[t].state = RUNNING;
            released = true;
        }
    }
    if (!released && live && at_sync == live) {
        for (uint32_t t = 0; t < n; ++t)
            if (w.fibers[t].state == AT_SYNC) w.fibers[t].state = RUNNING;
        released = true;
    }
    return released || !live;
}

static uint64_t splitmix64(uint64_t &state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// The order of the next round of the block's threads: forward, reversed, or a fresh shuffle.
static void arrange(Worker &w, const Job &job, uint32_t n) {
    for (uint32_t k = 0; k < n; ++k) w.schedule[k] = job.order == REVERSE ? n - 1 - k : k;
    if (job.order != SHUFFLE) return;
    for (uint32_t k = n; k > 1; --k) {  // Fisher-Yates
        uint32_t j = uint32_t(splitmix64(w.shuffle_state) % k);
        uint32_t t = w.schedule[k - 1];
        w.schedule[k - 1] = w.schedule[j];
        w.schedule[j] = t;
    }
}

static void run_block_threads(Worker &w, Job &job, uint64_t block) {
    uint64_t gx = gridDim.x, gy = gridDim.y;
    blockIdx = uint3{uint32_t(block % gx), uint32_t(block / gx % gy), uint32_t(block / gx / gy)};
    w.block_linear = block;
    uint32_t bx = blockDim.x, by = blockDim.y, n = job.block_threads;
    for (uint32_t t = 0; t < n; ++t) {
        Fiber &f = w.fibers[t];
        f.idx = uint3{t % bx, t / bx % by, t / bx / by};
        f.linear = t;
        f.accesses = 0;
        f.shared_accesses = 0;
        f.state = UNSTARTED;
    }
    __builtin_memset(w.warp_slots, 0, sizeof(w.warp_slots));
    w.n_threads = n;
    w.next_unstarted = 0;
    w.shuffle_state = job.seed ^ (block * 0xd1b54a32d192ed03ull);
    arrange(w, job, n);
    auto after_switch = [&]() {  // a fiber came back: it exited, waits, or faulted
        if (job.stop.load(std::memory_order_relaxed)) {
            for (uint32_t t = 0; t < n; ++t) {
                Fiber &f = w.fibers[t];
                if (f.state == AT_SYNC || f.state == AT_WARP || f.state == RUNNING) {
                    w.free_stacks.push_back(f.stack);
                    f.state = EXITED;
                }
            }
            return false;
        }
        return true;
    };
    while (w.next_unstarted < n) {
        Fiber &f = w.fibers[w.schedule[w.next_unstarted++]];
        f.stack = w.take_stack();
        init_context(f.ctx, f.stack, fiber_main);
        enter(w, f);
        switch_context(w.scheduler, f.ctx);
        if (!after_switch()) return;
    }
    for (;;) {
        if (!release_waiting(w)) {
            for (uint32_t t = 0; t < n; ++t) {
                if (w.fibers[t].state != EXITED) {
                    record_fault(BARRIER_DEADLOCK, w.fibers[t], nullptr, 0, false);
                    break;
                }
            }
            after_switch();
            return;
        }
        bool any = false;
        if (job.order == SHUFFLE) arrange(w, job, n);
        for (uint32_t k = 0; k < n; ++k) {
            Fiber &f = w.fibers[w.schedule[k]];
            if (f.state != RUNNING) continue;
            any = true;
            w.current = &f;
            threadIdx = f.idx;
            switch_context(w.scheduler, f.ctx);
            if (!after_switch()) return;
        }
        if (!any) return;  // every thread exited
    }
}

// ---- dynamic shared memory: undefined at a block's start on a GPU, so each block gets it
// poisoned (a kernel reading what it never wrote sees garbage, not the last block's tile);
// guard bytes on both sides catch writes past its ends. It starts on a 128-byte boundary, as a
// GPU's does when no static shared memory precedes it: bank numbers then match.
static constexpr size_t SHARED_GUARD = 64;
static constexpr unsigned char SHARED_POISON = 0xA5, GUARD_BYTE = 0x5B;

static void prepare_dynamic_shared(Worker &w, uint64_t bytes) {
    size_t need = bytes + 2 * SHARED_GUARD + 128;
    if (w.dynamic_storage.size() < need) w.dynamic_storage.resize(need);
    uintptr_t base = reinterpret_cast<uintptr_t>(w.dynamic_storage.data()) + SHARED_GUARD;
    w.dynamic = reinterpret_cast<unsigned char *>((base + 127) & ~uintptr_t(127));
    __builtin_memset(w.dynamic - SHARED_GUARD, GUARD_BYTE, SHARED_GUARD);
    __builtin_memset(w.dynamic, SHARED_POISON, bytes);
    __builtin_memset(w.dynamic + bytes, GUARD_BYTE, SHARED_GUARD);
}

// The first guard byte a block overwrote, or null.
static const unsigned char *dynamic_shared_overrun(const Worker &w, uint64_t bytes) {
    for (size_t k = 0; k < SHARED_GUARD; ++k) {
        if (w.dynamic[bytes + k] != GUARD_BYTE) return w.dynamic + bytes + k;
        if (w.dynamic[-1 - ptrdiff_t(k)] != GUARD_BYTE) return w.dynamic - 1 - k;
    }
    return nullptr;
}

unsigned char *dynamic_shared() { return t_current_worker->dynamic; }

bool tracing() { return g_job->tracing; }

// Runs one block; its trace records end up in thread order (barriers and thread orders other
// than forward interleave or reorder threads).
static void run_block(Worker &w, Job &job, uint64_t block) {
    uint64_t start = w.trace.size();
    w.suspended = false;
    if (job.dynamic_shared) prepare_dynamic_shared(w, job.dynamic_shared);
    run_block_threads(w, job, block);
    if (job.dynamic_shared) {
        if (const unsigned char *p = dynamic_shared_overrun(w, job.dynamic_shared))
            record_fault(SHARED_OVERRUN, w.fibers[0], p, 1, true);
    }
    if (!job.tracing) return;
    auto first = w.trace.begin() + start;
    if (w.suspended || job.order != FORWARD)
        std::stable_sort(first, w.trace.end(), [](const TraceRecord &a, const TraceRecord &b) {
            return a.thread < b.thread;
        });
    w.segments.push_back({block, start, w.trace.size() - start});
}

static void work(Job &job) {
    if (!t_worker) t_worker.reset(new Worker());
    Worker &w = *t_worker;
    t_current_worker = &w;
    w.trace.clear();
    w.segments.clear();
    for (;;) {
        if (job.stop.load(std::memory_order_relaxed)) break;
        if (g_interrupted.load(std::memory_order_relaxed)) break;
        uint64_t block = job.next_block.fetch_add(1);
        if (block >= job.n_blocks) break;
        run_block(w, job, block);
    }
}

// ---- the worker pool: persistent threads, woken per launch
struct Pool {
    std::mutex mutex;
    std::condition_variable wake, done;
    std::vector<std::thread> threads;
    std::vector<Worker *> workers;  // each pool thread's Worker, for collecting traces
    uint64_t generation = 0;
    int wanted = 0, running = 0;
    Job *job = nullptr;
};
static Pool *g_pool = new Pool();  // never destroyed: its threads outlive static destructors

// A forked child has none of the pool's threads (and maybe a launch lock held by one).
static void reset_after_fork() {
    g_pool = new Pool();
    new (&g_launch_mutex) std::mutex();
}
static const int g_atfork_registered = pthread_atfork(nullptr, nullptr, reset_after_fork);

static void pool_thread(int index) {
    Pool &pool = *g_pool;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(pool.mutex);
    for (;;) {
        pool.wake.wait(lock, [&] { return pool.generation != seen; });
        seen = pool.generation;
        if (index >= pool.wanted) continue;
        Job *job = pool.job;
        lock.unlock();
        work(*job);
        lock.lock();
        pool.workers[index] = t_worker.get();
        if (--pool.running == 0) pool.done.notify_all();
    }
}

}  // namespace emu

using namespace emu;

extern "C" {

__attribute__((visibility("default"))) int emu_abi_version() { return 5; }

// Runs every block of one launch; returns the fault kind (0: none). With tracing, *trace
// receives a malloc'ed array of *trace_len records (free with emu_free). thread_order: 0
// forward, 1 reversed, 2 shuffled (seeded by seed and each block's index). dynamic_shared:
// bytes of dynamic shared memory per block. interruptible: SIGINT, while the launch runs,
// stops it between blocks (fault INTERRUPTED) instead of going to the process's handler,
// which is restored when the launch ends (Python raises KeyboardInterrupt then).
__attribute__((visibility("default"))) int emu_launch(void (*entry)(void **), void **args,
                                                      const uint32_t *grid, const uint32_t *block,
                                                      const Buffer *buffers, int n_buffers,
                                                      int n_workers, int tracing, Fault *fault,
                                                      TraceRecord **trace, uint64_t *trace_len,
                                                      int thread_order, uint64_t seed,
                                                      uint64_t dynamic_shared, int interruptible) {
    if (uint64_t(block[0]) * block[1] * block[2] > 1024) return -1;
    std::lock_guard<std::mutex> launch_lock(g_launch_mutex);
    struct sigaction previous;
    if (interruptible) {
        g_interrupted.store(false);
        struct sigaction handler {};
        handler.sa_handler = on_interrupt;
        sigemptyset(&handler.sa_mask);
        sigaction(SIGINT, &handler, &previous);
    }
    Job job;
    job.entry = entry;
    job.args = args;
    job.n_blocks = uint64_t(grid[0]) * grid[1] * grid[2];
    job.block_threads = block[0] * block[1] * block[2];
    job.buffers = buffers;
    job.n_buffers = n_buffers;
    job.tracing = tracing != 0;
    job.order = thread_order == 1 ? REVERSE : thread_order == 2 ? SHUFFLE : FORWARD;
    job.seed = seed;
    job.dynamic_shared = dynamic_shared;
    g_job = &job;
    gridDim = dim3(grid[0], grid[1], grid[2]);
    blockDim = dim3(block[0], block[1], block[2]);
    int helpers = n_workers - 1;
    if (uint64_t(helpers) >= job.n_blocks) helpers = int(job.n_blocks) - 1;
    Pool &pool = *g_pool;
    if (helpers > 0) {
        std::lock_guard<std::mutex> lock(pool.mutex);
        while (int(pool.threads.size()) < helpers) {
            pool.workers.push_back(nullptr);
            pool.threads.emplace_back(pool_thread, int(pool.threads.size()));
            pool.threads.back().detach();
        }
        pool.job = &job;
        pool.wanted = helpers;
        pool.running = helpers;
        ++pool.generation;
        pool.wake.notify_all();
    }
    work(job);
    std::vector<Worker *> used{t_worker.get()};
    if (helpers > 0) {
        std::unique_lock<std::mutex> lock(pool.mutex);
        pool.done.wait(lock, [&] { return pool.running == 0; });
        used.insert(used.end(), pool.workers.begin(), pool.workers.begin() + helpers);
    }
    if (job.tracing) {  // every block's records, in block order
        std::vector<std::pair<Worker *, Worker::Segment>> segments;
        uint64_t total = 0;
        for (Worker *w : used) {
            for (const Worker::Segment &seg : w->segments) segments.push_back({w, seg});
            total += w->trace.size();
        }
        std::sort(segments.begin(), segments.end(),
                  [](const auto &a, const auto &b) { return a.second.block < b.second.block; });
        TraceRecord *out = static_cast<TraceRecord *>(malloc(total ? total * sizeof(TraceRecord) : 1));
        uint64_t at = 0;
        for (const auto &[w, seg] : segments) {
            __builtin_memcpy(out + at, w->trace.data() + seg.start, seg.count * sizeof(TraceRecord));
            at += seg.count;
        }
        for (Worker *w : used) {
            std::vector<TraceRecord>().swap(w->trace);
            std::vector<Worker::Segment>().swap(w->segments);
        }
        *trace = out;
        *trace_len = at;
    }
    if (interruptible) {
        sigaction(SIGINT, &previous, nullptr);
        if (g_interrupted.exchange(false) && !job.fault.kind) job.fault.kind = INTERRUPTED;
    }
    *fault = job.fault;
    g_job = nullptr;
    return job.fault.kind;
}

__attribute__((visibility("default"))) void emu_free(void *p) { free(p); }

}  // extern "C"
