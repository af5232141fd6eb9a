"""The emulator runs our kernel sources on the CPU with CUDA semantics (NumPy as the oracle).

Test kernels live in tests/support/kernels/ and are compiled by NVRTC too
(tests/runtime/test_nvrtc.py), so they stay valid CUDA.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from infini_cupy import config
from infini_cupy.errors import KernelCompileError, KernelFault
from infini_cupy.runtime.emulate import build as emulator_build
from infini_cupy.runtime.emulate import launcher as emulator

KERNELS = str(Path(__file__).parent.parent / "support" / "kernels" / "emulator_kernels.cu")
NAMES = (
    "copy<float>", "copy<double>", "store_at", "load_vector_at", "reverse_tiles<float, 64>",
    "reverse_tiles<int, 1024>", "block_sums<256>", "warp_sums", "write_indices", "echo_args",
    "mismatched_barriers", "shift_right<true>", "shift_right<false>", "reverse_dynamic",
)
ORDERS = ("forward", "reverse", "shuffle", "shuffle:7")


@pytest.fixture(scope="module", autouse=True)
def _prepared():
    emulator.prepare(KERNELS, NAMES)  # one library for the module: one compile, cached


def launch(name, grid, block, *args, shared_mem=0):
    emulator.launch(KERNELS, name, grid, block, args, shared_mem)


@pytest.mark.parametrize("n", [0, 1, 127, 128, 1000])
def test_copy(n):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    launch("copy<float>", max(1, -(-n // 128)), 128, y, x, np.int64(n))
    np.testing.assert_array_equal(y, x)


def test_shared_tile_reversal():
    x = np.arange(5 * 64, dtype=np.float32)
    y = np.zeros_like(x)
    launch("reverse_tiles<float, 64>", 5, 64, y, x)
    np.testing.assert_array_equal(y, x.reshape(5, 64)[:, ::-1].ravel())
    x = np.arange(3 * 1024, dtype=np.int32)  # the largest block: 1024 fibers at one barrier
    y = np.zeros_like(x)
    launch("reverse_tiles<int, 1024>", 3, 1024, y, x)
    np.testing.assert_array_equal(y, x.reshape(3, 1024)[:, ::-1].ravel())


@pytest.mark.parametrize("order", ORDERS)
def test_dynamic_shared_memory_is_per_block_and_poisoned(order, monkeypatch):
    """Each block's dynamic shared memory starts undefined, as on a GPU: the emulator fills it
    with 0xA5 bytes, so a kernel reading what it never wrote sees garbage, never the previous
    block's data; launches of 256 threads with 1 KiB each, several blocks per worker."""
    monkeypatch.setenv(config.THREAD_ORDER_VAR, order)
    blocks, threads = 9, 256
    x = np.random.default_rng(3).integers(-1000, 1000, blocks * threads).astype(np.int32)
    y, before = np.zeros_like(x), np.zeros_like(x)
    launch("reverse_dynamic", blocks, threads, y, x, before, np.int32(0), shared_mem=4 * threads)
    np.testing.assert_array_equal(y, x.reshape(blocks, threads)[:, ::-1].ravel())
    assert (before.view(np.uint8) == 0xA5).all()


def test_dynamic_shared_memory_overrun_and_limit_fault():
    x = np.arange(64, dtype=np.int32)
    y, before = np.zeros_like(x), np.zeros_like(x)
    with pytest.raises(KernelFault, match="shared-memory overrun in kernel reverse_dynamic"):
        launch("reverse_dynamic", 1, 64, y, x, before, np.int32(1), shared_mem=4 * 64)
    with pytest.raises(ValueError, match="dynamic shared memory"):
        launch("reverse_dynamic", 1, 64, y, x, before, np.int32(0),
               shared_mem=emulator.MAX_DYNAMIC_SHARED + 16)


@pytest.mark.parametrize("n", [256, 700, 1])
def test_tree_reduction_with_early_exit(n):
    # The last block's threads past n return before the barriers they would have met.
    x = np.random.default_rng(n).integers(-50, 50, n).astype(np.float32)
    n_blocks = -(-n // 256)
    sums = np.zeros(n_blocks, np.float32)
    launch("block_sums<256>", n_blocks, 256, sums, x, np.int32(n))
    expected = [x[b * 256:(b + 1) * 256].sum() for b in range(n_blocks)]
    np.testing.assert_array_equal(sums, expected)


def test_warp_shuffle():
    x = np.arange(4 * 64, dtype=np.int32)
    sums = np.zeros(8, np.int32)
    launch("warp_sums", 4, 64, sums, x)
    np.testing.assert_array_equal(sums, x.reshape(8, 32).sum(axis=1))


def test_3d_grid_and_block_indices():
    grid, block = (3, 2, 2), (4, 3, 2)
    n_threads = np.prod(grid) * np.prod(block)
    out = np.zeros((n_threads, 12), np.uint32)
    launch("write_indices", grid, block, out)
    bz, by, bx, tz, ty, tx = np.meshgrid(
        *(np.arange(n) for n in (grid[2], grid[1], grid[0], block[2], block[1], block[0])),
        indexing="ij",
    )
    columns = [tx, ty, tz, bx, by, bz] + [np.full_like(tx, v) for v in block + grid]
    expected = np.stack([c.ravel() for c in columns], axis=1)
    np.testing.assert_array_equal(out, expected)


def test_struct_and_scalar_arguments():
    shape_t = np.dtype({"names": ["a"], "formats": [("<i8", (3,))]}, align=True)
    mixed_t = np.dtype([("small", "i1"), ("wide", "<f8"), ("mid", "<i4")], align=True)
    assert mixed_t.itemsize == 24  # C++ layout: padding after `small` and after `mid`
    shape = np.array(([7, -8, 2**40],), shape_t)[()]
    mixed = np.array((-3, 2.5, 123456), mixed_t)[()]
    out = np.zeros(9, np.float64)
    launch("echo_args", 1, 32, out, shape, mixed, np.float32(0.25), np.int8(-7), np.uint64(2**53))
    np.testing.assert_array_equal(out, [7, -8, 2**40, -3, 2.5, 123456, 0.25, -7, 2**53])


def test_wrong_arguments_are_rejected():
    out = np.zeros(9)
    with pytest.raises(TypeError, match="takes 6 arguments, got 1"):
        launch("echo_args", 1, 1, out)
    with pytest.raises(TypeError, match="argument 1 of kernel store_at: the parameter has 4"):
        launch("store_at", 1, 1, np.zeros(4, np.float32), np.int64(0), np.int32(1))
    with pytest.raises(TypeError, match="expected a NumPy array or NumPy scalar, got int"):
        launch("store_at", 1, 1, np.zeros(4, np.float32), 0, np.int32(1))
    with pytest.raises(ValueError, match="at most 1024 threads"):
        launch("copy<float>", 1, (64, 32), out, out, np.int64(0))


def test_out_of_bounds_store_faults_before_writing():
    memory = np.full(64, -1.0, np.float32)
    y = memory[16:48]  # the kernel sees only this view
    with pytest.raises(KernelFault) as info:
        launch("store_at", 2, 32, y, np.int32(0), np.int32(33))  # block 1 thread 0 writes y[32]
    message = str(info.value)
    assert "out-of-bounds write of 4 bytes" in message
    assert "store_at" in message and "block (1, 0, 0), thread (0, 0, 0)" in message
    assert f"{y.ctypes.data + 32 * 4:#x}" in message
    assert "argument 0 (float32 array, shape (32,))" in message
    assert "ends 4 bytes past its end" in message
    assert info.value.block == (1, 0, 0) and info.value.thread == (0, 0, 0)
    np.testing.assert_array_equal(memory[:16], -1.0)  # around the view: untouched
    np.testing.assert_array_equal(memory[48:], -1.0)
    with pytest.raises(KernelFault, match=r"starts 4 bytes before its start"):
        launch("store_at", 1, 32, y, np.int32(-1), np.int32(1))
    np.testing.assert_array_equal(memory[:16], -1.0)


def test_fault_while_threads_wait_at_a_barrier():
    # Block 1's last thread reads past x while its other threads wait at __syncthreads: the
    # block is abandoned, and the next launches reuse its fibers' stacks. (x is cut from a
    # larger array: a read past it must not land in y, which would pass the check.)
    x = np.arange(200, dtype=np.float32)[: 2 * 64 - 1]
    y = np.zeros(2 * 64, np.float32)
    with pytest.raises(KernelFault, match=r"out-of-bounds read .* block \(1, 0, 0\), thread \(63, 0, 0\)"):
        launch("reverse_tiles<float, 64>", 2, 64, y, x)
    x = np.arange(2 * 64, dtype=np.float32)
    for _ in range(3):
        launch("reverse_tiles<float, 64>", 2, 64, y, x)
        np.testing.assert_array_equal(y, x.reshape(2, 64)[:, ::-1].ravel())


def test_zero_size_and_read_only_arrays_fault():
    with pytest.raises(KernelFault, match="out-of-bounds write"):
        launch("store_at", 1, 1, np.zeros(0, np.float32), np.int32(0), np.int32(1))
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(KernelFault, match="read-only write"):
        launch("store_at", 1, 4, frozen, np.int32(0), np.int32(4))
    np.testing.assert_array_equal(frozen, 0)


def test_broadcast_arrays_views_never_warn():
    """``np.broadcast_arrays`` views warn (FutureWarning) when asked for flags.writeable: no
    path reads it, whether the view is a kernel argument, an input of the namespace's
    functions (full path and short path), the source of a copy or an ``out=`` refused."""
    import warnings

    import infini_cupy as xp

    a, b = np.broadcast_arrays(np.arange(4, dtype=np.float32), np.ones((3, 1), np.float32))
    y = np.zeros(12, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        launch("copy<float>", 1, 32, y, a, np.int64(4))  # packs read-only flags of arrays
        np.testing.assert_array_equal(y[:4], a[0])
        with xp.backend("emulate"):
            for _ in range(2):  # planned, then remembered
                np.testing.assert_array_equal(xp.add(a, b), a + b)
                np.testing.assert_array_equal(xp.clip(a, b, None), np.maximum(a, b))
                np.testing.assert_array_equal(xp.rearrange(a), a)
                np.testing.assert_array_equal(xp.astype(a, np.float64), a)
                out = np.zeros((3, 4), np.float32)
                np.testing.assert_array_equal(xp.rearrange_(out, a), a)
                np.testing.assert_array_equal(xp.multiply(a, 2.0, out=out), 2 * a)
            with pytest.raises(ValueError, match="overlaps itself"):
                xp.add(a, b, out=a)
            with pytest.raises(ValueError):
                xp.rearrange_(a, b)


@pytest.mark.parametrize("value", ["abc", "0", "-2", "1.5"])
def test_bad_emulator_threads_named_by_a_launch(value, monkeypatch):
    """INFINI_CUPY_EMULATOR_THREADS is read per launch: a bad value fails the launch with a
    ValueError naming the variable and the value, and runs nothing."""
    import infini_cupy as xp

    monkeypatch.setenv(config.EMULATOR_THREADS_VAR, value)
    x = np.arange(5, dtype=np.float32)
    y = np.zeros_like(x)
    with pytest.raises(ValueError, match=rf"INFINI_CUPY_EMULATOR_THREADS='{value}'"):
        launch("copy<float>", 1, 32, y, x, np.int64(5))
    with xp.backend("emulate"), pytest.raises(ValueError, match="INFINI_CUPY_EMULATOR_THREADS"):
        xp.add(x, 1.0)
    assert not y.any()
    monkeypatch.setenv(config.EMULATOR_THREADS_VAR, "2")
    launch("copy<float>", 1, 32, y, x, np.int64(5))
    np.testing.assert_array_equal(y, x)


def test_misaligned_vector_load_faults():
    x = np.zeros(64, np.uint8)
    base = -x.ctypes.data % 16  # x + base is 16-byte aligned
    y = np.zeros(4, np.uint32)
    launch("load_vector_at", 1, 1, y, x, np.int32(base))
    with pytest.raises(KernelFault, match="misaligned read of 16 bytes .* needs 16-byte alignment"):
        launch("load_vector_at", 1, 1, y, x, np.int32(base + 4))


def test_barrier_deadlock_faults():
    with pytest.raises(KernelFault, match="barrier deadlock in kernel mismatched_barriers"):
        launch("mismatched_barriers", 1, 64, np.zeros(64, np.int32))


@pytest.mark.parametrize("order", ORDERS)
def test_kernels_with_barriers_are_right_in_every_thread_order(order, monkeypatch):
    monkeypatch.setenv(config.THREAD_ORDER_VAR, order)
    x = np.arange(3 * 1024, dtype=np.int32)
    y = np.zeros_like(x)
    launch("reverse_tiles<int, 1024>", 3, 1024, y, x)
    np.testing.assert_array_equal(y, x.reshape(3, 1024)[:, ::-1].ravel())
    x = np.random.default_rng(1).integers(-50, 50, 700).astype(np.float32)
    sums = np.zeros(3, np.float32)
    launch("block_sums<256>", 3, 256, sums, x, np.int32(700))
    np.testing.assert_array_equal(sums, [x[i:i + 256].sum() for i in (0, 256, 512)])
    x = np.arange(4 * 96, dtype=np.int32)
    y = np.zeros(4 * 96 // 32, np.int32)
    launch("warp_sums", 4, 96, y, x)
    np.testing.assert_array_equal(y, x.reshape(-1, 32).sum(1))
    shifted = np.zeros_like(x)
    launch("shift_right<true>", 4, 96, shifted, x)
    expected = np.concatenate([[b[0], *b[:-1]] for b in x.reshape(4, 96)])
    np.testing.assert_array_equal(shifted, expected)


def _shift_right(name, blocks, threads, launch_index):
    """Launches ``name`` on fresh values (shared memory keeps the last launch's: a stale value
    must never pass for the right one); returns where y differs from the expected shift."""
    x = np.arange(1, blocks * threads + 1, dtype=np.int32) + 100_000 * launch_index
    expected = np.concatenate([[b[0], *b[:-1]] for b in x.reshape(blocks, threads)])
    y = np.zeros_like(x)
    launch(name, blocks, threads, y, x)
    return y != expected


@pytest.mark.parametrize("order", ["reverse", "shuffle", "shuffle:3"])
def test_a_missing_barrier_passes_in_forward_order_only(order, monkeypatch):
    # The proof that the thread order bites: the kernel without its barrier gives the right
    # answer when threads run forward, the wrong one otherwise.
    assert not _shift_right("shift_right<false>", 4, 128, 0).any()
    monkeypatch.setenv(config.THREAD_ORDER_VAR, order)
    assert _shift_right("shift_right<false>", 4, 128, 1).sum() > 4 * 128 // 4
    assert not _shift_right("shift_right<true>", 4, 128, 2).any()


def test_shuffle_seeds_make_different_orders(monkeypatch):
    wrong = []
    for k, seed in enumerate((1, 1, 2)):
        monkeypatch.setenv(config.THREAD_ORDER_VAR, f"shuffle:{seed}")
        wrong.append(_shift_right("shift_right<false>", 1, 256, 3 + k))
    # Thread t reads a stale value exactly when thread t - 1 ran after it: a seed repeats
    # its order, another seed makes another.
    np.testing.assert_array_equal(wrong[0], wrong[1])
    assert not np.array_equal(wrong[0], wrong[2])


@pytest.mark.parametrize("value", ["backwards", "reverse:1", "shuffle:x", "shuffle:-1"])
def test_a_bad_thread_order_is_refused(value, monkeypatch):
    monkeypatch.setenv(config.THREAD_ORDER_VAR, value)
    with pytest.raises(ValueError, match=config.THREAD_ORDER_VAR):
        launch("copy<float>", 1, 32, np.zeros(4, np.float32), np.ones(4, np.float32),
               np.int64(4))


@pytest.mark.parametrize("order", ["reverse", "shuffle"])
def test_traces_stay_in_thread_order_whatever_the_thread_order(order, monkeypatch):
    monkeypatch.setenv(config.THREAD_ORDER_VAR, order)
    n = 100
    x = np.arange(n, dtype=np.float64)
    y = np.zeros_like(x)
    with emulator.tracing() as trace:
        launch("copy<double>", 2, 64, y, x, np.int64(n))
    acc = trace.launches[0].accesses
    i = np.repeat(np.arange(n), 2)
    np.testing.assert_array_equal(acc["block"], i // 64)
    np.testing.assert_array_equal(acc["thread"], i % 64)
    np.testing.assert_array_equal(acc["access"], np.tile([0, 1], n))
    np.testing.assert_array_equal(y, x)


def test_trace_of_a_copy():
    n = 100
    x = np.arange(n, dtype=np.float64)
    y = np.zeros_like(x)
    with emulator.tracing() as trace:
        launch("copy<double>", 2, 64, y, x, np.int64(n))
    launch("copy<double>", 2, 64, y, x, np.int64(n))  # outside: not recorded
    assert len(trace.launches) == 1
    record = trace.launches[0]
    assert (record.name, record.grid, record.block) == ("copy<double>", (2, 1, 1), (64, 1, 1))
    acc = record.accesses
    assert len(acc) == 2 * n  # threads past n make no access
    i = np.repeat(np.arange(n), 2)
    np.testing.assert_array_equal(acc["block"], i // 64)
    np.testing.assert_array_equal(acc["thread"], i % 64)
    np.testing.assert_array_equal(acc["access"], np.tile([0, 1], n))
    np.testing.assert_array_equal(acc["is_write"], np.tile([False, True], n))
    np.testing.assert_array_equal(acc["bytes"], 8)
    expected = np.stack([x.ctypes.data + 8 * np.arange(n), y.ctypes.data + 8 * np.arange(n)], 1)
    np.testing.assert_array_equal(acc["address"], expected.ravel())


def test_trace_is_in_thread_order_across_barriers():
    x = np.arange(2 * 64, dtype=np.float32)
    y = np.zeros_like(x)
    with emulator.tracing() as trace:
        launch("reverse_tiles<float, 64>", 2, 64, y, x)
    acc = trace.launches[0].accesses
    t = np.arange(2 * 64)
    np.testing.assert_array_equal(acc["block"], np.repeat(t // 64, 2))
    np.testing.assert_array_equal(acc["thread"], np.repeat(t % 64, 2))
    np.testing.assert_array_equal(acc["access"], np.tile([0, 1], 2 * 64))
    np.testing.assert_array_equal(acc["address"][0::2], x.ctypes.data + 4 * t)


def test_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    names = ("copy<short>",)
    before = emulator_build.cache_info()
    emulator.prepare(KERNELS, names)
    assert emulator_build.cache_info().get("compiled", 0) == before.get("compiled", 0) + 1
    (library,) = (tmp_path / "emulator").glob("[0-9a-f]*.so")

    emulator.forget_loaded()
    emulator.prepare(KERNELS, names)  # loaded from the disk, not compiled (no timing: CI is busy)
    assert emulator_build.cache_info().get("compiled", 0) == before.get("compiled", 0) + 1

    # A truncated file (a crash mid-write elsewhere) is detected and rebuilt. Replaced, not
    # truncated in place: this process still maps the old file.
    truncated = tmp_path / "truncated"
    truncated.write_bytes(library.read_bytes()[:5000])
    truncated.replace(library)
    emulator.forget_loaded()
    emulator.prepare(KERNELS, names)
    info = emulator_build.cache_info()
    assert info["corrupt"] == before.get("corrupt", 0) + 1
    assert info["compiled"] == before.get("compiled", 0) + 2
    x = np.arange(10, dtype=np.int16)
    y = np.zeros_like(x)
    launch("copy<short>", 1, 32, y, x, np.int64(10))
    np.testing.assert_array_equal(y, x)
    emulator.forget_loaded()


def test_racing_threads_compile_once(tmp_path, monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    before = emulator_build.cache_info().get("compiled", 0)
    errors = []

    def run():
        try:
            emulator.prepare(KERNELS, ("copy<unsigned char>",))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert emulator_build.cache_info()["compiled"] == before + 1
    emulator.forget_loaded()


def test_compile_error_names_kernel_and_source():
    with pytest.raises(KernelCompileError) as info:
        emulator.prepare(KERNELS, ("no_such_kernel<int>",))
    message = str(info.value)
    assert "g++ failed to compile no_such_kernel<int>" in message
    assert "-DINFINI_EMULATION" in message and "no_such_kernel" in info.value.log


def test_missing_compiler_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))  # nothing cached to run instead
    monkeypatch.setattr(emulator_build, "CXX", "g++-not-installed")
    emulator_build.compiler_version.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="apt-get install g\\+\\+"):
            emulator.prepare(KERNELS, ("copy<int>",))
    finally:
        emulator_build.compiler_version.cache_clear()


@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_test_kernels_compile_with_nvrtc(arch):
    pytest.importorskip("cupy")
    from infini_cupy.runtime import nvrtc

    program = nvrtc.compile_ptx(KERNELS, NAMES, arch)
    assert set(program.lowered_names) == set(NAMES)


def _sigint_once_written(y: np.ndarray) -> threading.Thread:
    """A thread sending this process SIGINT once the launch has begun writing ``y``."""

    def watch():
        while not y[::4096].any():
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_ctrl_c_stops_a_long_launch_between_blocks():
    """Ctrl-C during a long launch: the interpreter runs its SIGINT handler only when the
    call into the runtime returns, so the launch went on to its end (seconds of a large
    array). It stops taking blocks and raises KeyboardInterrupt, part of the output written;
    the process's handler is back for the next Ctrl-C."""
    n = 1 << 24
    x = np.ones(n, np.float32)
    y = np.zeros_like(x)
    # Python's own handler (what a program has unless it sets one; the session's earlier
    # tests may have left another)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        timer = _sigint_once_written(y)
        with pytest.raises(KeyboardInterrupt, match=r"kernel copy<float> stopped"):
            launch("copy<float>", n // 128, 128, y, x, np.int64(n))
        timer.join()
        assert 0 < np.count_nonzero(y) < n  # it ran, and stopped before the end
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        launch("copy<float>", n // 128, 128, y, x, np.int64(n))  # the next launch runs whole
    finally:
        signal.signal(signal.SIGINT, previous)
    np.testing.assert_array_equal(y, x)


def test_a_program_s_own_sigint_handler_is_left_to_run_after_the_launch():
    """A program that handles SIGINT itself gets the signal as before: the launch is not
    interrupted, and the handler runs once it returns."""
    n = 1 << 22
    x = np.ones(n, np.float32)
    y = np.zeros_like(x)
    seen = []
    previous = signal.signal(signal.SIGINT, lambda *_: seen.append(True))
    try:
        timer = _sigint_once_written(y)
        launch("copy<float>", n // 128, 128, y, x, np.int64(n))
        timer.join()
        time.sleep(0.01)  # the handler runs at the interpreter's next check
    finally:
        signal.signal(signal.SIGINT, previous)
    np.testing.assert_array_equal(y, x)
    assert seen == [True]
