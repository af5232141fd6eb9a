"""Faults around the kernels: compile failures, damaged cache files, missing compilers.

- A kernel that fails to compile (emulator's g++, NVRTC) raises KernelCompileError naming the
  kernel, the options, the compiler's log and the numbered source, leaves nothing behind in
  the caches, and the next compile works; so does the same file once fixed, in the same
  process (sources are cached per file version, not per name).
- A truncated or corrupted emulator library (kernels or runtime) is detected and rebuilt.
- A missing g++ or NVRTC is a RuntimeError saying what to install; nothing is written.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config
from infini_cupy.errors import KernelCompileError
from infini_cupy.runtime import nvrtc, recent
from infini_cupy.runtime.emulate import build as emulator_build
from infini_cupy.runtime.emulate import launcher as emulator
from infini_cupy.strided import plan_cache as strided_copy

BROKEN = textwrap.dedent("""\
    #include "common.cuh"
    template <int N> __global__ void fill(int *p) { ic::st(p + threadIdx.x, N + undefined_name); }
""")
FIXED = textwrap.dedent("""\
    #include "common.cuh"
    // fixed: no undefined name any more
    template <int N> __global__ void fill(int *p) { ic::st(p + threadIdx.x, N); }
""")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh emulator cache directory, nothing loaded: every kernel really compiles."""
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path / "cache"))
    emulator.forget_loaded()
    recent.forget_all()
    yield tmp_path / "cache" / "emulator"
    emulator.forget_loaded()
    recent.forget_all()


def _leftovers(directory):
    """What a build left in ``directory``, less the empty files processes lock (``.lock``)."""
    return sorted(p.name for p in directory.glob("*") if p.suffix != ".lock") \
        if directory.exists() else []


def _assert_names_everything(message, compiler, names, options_fragment):
    assert f"{compiler} failed to compile {', '.join(names)}" in message
    assert re.search(r"options: .*" + re.escape(options_fragment), message)
    assert "undefined_name" in message or "UnitOf" in message  # the compiler's log
    assert re.search(r"source:\n\s+1  ", message)  # the numbered source


# ---------------------------------------------------------------- compile failures
def test_emulator_compile_error_then_fixed_source(tmp_path, cache):
    source = tmp_path / "user_kernel.cu"
    source.write_text(BROKEN)
    with pytest.raises(KernelCompileError) as info:
        emulator.prepare(str(source), ("fill<3>",))
    _assert_names_everything(str(info.value), "g++", ["fill<3>"], "-DINFINI_EMULATION")
    assert re.search(r"\n\s+2  template <int N> __global__ void fill", str(info.value))
    assert not [n for n in _leftovers(cache) if not n.startswith("runtime-")]  # no library, no build dir

    source.write_text(FIXED)  # the user fixes the file and tries again, same process
    emulator.prepare(str(source), ("fill<3>",))
    out = np.zeros(32, np.int32)
    emulator.launch(str(source), "fill<3>", 1, 32, (out,))
    assert (out == 3).all()


def test_emulator_batch_with_one_bad_name_poisons_nothing(cache, backend_name):
    if backend_name != "emulate":
        pytest.skip("the emulator's compiler")
    good, bad = "rearrange<2, 1, 1, 0>", "rearrange<3, 1, 1, 0>"  # no 3-byte copy unit
    with pytest.raises(KernelCompileError) as info:
        emulator.prepare("rearrange.cu", (good, bad))
    message = str(info.value)
    assert good in message and bad in message and "-DINFINI_EMULATION" in message
    emulator.prepare("rearrange.cu", (good,))
    x = np.arange(24, dtype=np.int16).reshape(4, 6)[:, ::2]
    y = np.zeros((4, 3), np.int16)
    xp.rearrange_(y, x)
    np.testing.assert_array_equal(y, x)
    assert emulator_build.cache_info().get("compiled", 0) >= 1


def test_nvrtc_compile_error_then_fixed_source(tmp_path):
    pytest.importorskip("cupy")
    source = tmp_path / "user_kernel.cu"
    source.write_text(BROKEN)
    with pytest.raises(KernelCompileError) as info:
        nvrtc.compile_ptx(str(source), ["fill<3>"], "sm_75")
    _assert_names_everything(str(info.value), "NVRTC", ["fill<3>"], "--gpu-architecture=sm_75")
    program = nvrtc.compile_ptx("rearrange.cu", ["rearrange<4, 1, 1, 0>"], "sm_75")  # unharmed
    assert ".entry" in program.ptx
    source.write_text(FIXED)
    program = nvrtc.compile_ptx(str(source), ["fill<3>"], "sm_75")
    assert f".entry {program.lowered_names['fill<3>']}" in program.ptx


def test_nvrtc_bad_name_expression_then_good_one():
    pytest.importorskip("cupy")
    with pytest.raises(KernelCompileError) as info:
        nvrtc.compile_ptx("rearrange.cu", ["rearrange<3, 1, 1, 0>"], "sm_90")
    _assert_names_everything(str(info.value), "NVRTC", ["rearrange<3, 1, 1, 0>"],
                             "--gpu-architecture=sm_90")
    assert nvrtc.compile_ptx("rearrange.cu", ["rearrange<1, 1, 1, 0>"], "sm_90").lowered_names


@pytest.mark.gpu
def test_cuda_runtime_compile_error_then_fixed_source(tmp_path, backend_name):
    import cupy

    from infini_cupy.runtime import cuda as runtime

    source = tmp_path / "user_kernel.cu"
    source.write_text(BROKEN)
    with pytest.raises(KernelCompileError) as info:
        runtime.get_kernel(str(source), "fill<3>")
    _assert_names_everything(str(info.value), "NVRTC", ["fill<3>"], "-std=c++17")
    assert not [key for key in runtime._kernels if key[1] == str(source)]
    source.write_text(FIXED)
    out = cupy.zeros(32, np.int32)
    runtime.launch(str(source), "fill<3>", (1, 1, 1), (32, 1, 1), (out,))
    assert (out.get() == 3).all()


# ---------------------------------------------------------------- damaged cache files
def _garbage_as(data: bytes) -> bytes:
    """Not a library, yet with the trailer and build record of ``data``'s library: it
    verifies, and only loading it fails."""
    meta_len = emulator_build._META_LEN.unpack(
        data[-emulator_build._TRAILER_LEN + len(emulator_build._TRAILER_MAGIC):-32])[0]
    body = b"\x7fELF, but not really" * 64 + data[-emulator_build._TRAILER_LEN - meta_len:
                                                   -emulator_build._TRAILER_LEN]
    return (body + emulator_build._TRAILER_MAGIC + emulator_build._META_LEN.pack(meta_len)
            + hashlib.sha256(body).digest())


CORRUPTIONS = {
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "trailer only": lambda data: data[-emulator_build._TRAILER_LEN:],
    "trailer cut off": lambda data: data[: -emulator_build._TRAILER_LEN],
    "a byte flipped": lambda data: data[:4000] + bytes([data[4000] ^ 0xFF]) + data[4001:],
    "garbage with a valid trailer": _garbage_as,
}


@pytest.mark.parametrize("damage", CORRUPTIONS, ids=list(CORRUPTIONS))
def test_damaged_kernel_library_is_rebuilt(damage, tmp_path, monkeypatch, backend_name):
    if backend_name != "emulate":
        pytest.skip("the emulator's disk cache")
    x = np.arange(40, dtype=np.float32).reshape(5, 8)[:, 1:7]
    y = np.zeros((6, 5), np.float32).T
    prepared = strided_copy.plan_for(y, x)
    first, second = tmp_path / "first", tmp_path / "second"
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(first))
    emulator.forget_loaded()
    emulator.prepare(prepared.source, (prepared.kernel,))
    (library,) = (first / "emulator").glob("[0-9a-f]*.so")
    # the same entry, damaged, in a directory this process never loaded from
    (second / "emulator").mkdir(parents=True)
    damaged = second / "emulator" / library.name
    damaged.write_bytes(CORRUPTIONS[damage](library.read_bytes()))
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(second))
    emulator.forget_loaded()
    before = emulator_build.cache_info()
    try:
        xp.rearrange_(y, x)
        np.testing.assert_array_equal(y, x)
        after = emulator_build.cache_info()
        assert after.get("corrupt", 0) == before.get("corrupt", 0) + 1
        assert after.get("compiled", 0) == before.get("compiled", 0) + 1
        assert emulator_build._read_verified(damaged)
    finally:
        emulator.forget_loaded()


def test_damaged_runtime_library_is_rebuilt(tmp_path):
    """In a child process: this one keeps its runtime loaded for good."""
    script = textwrap.dedent("""\
        import numpy as np
        import infini_cupy as xp
        from infini_cupy.runtime.emulate import build

        build.runtime_library()
        (path,) = build.cache_dir().glob("runtime-*.so")
        data = path.read_bytes()
        staged = path.with_name("staged")
        staged.write_bytes(data[: len(data) // 3])
        staged.replace(path)  # replaced, not truncated in place: the old file stays mapped
        build._runtime_lib = None
        build.runtime_library()
        with xp.backend("emulate"):
            x = np.arange(12.0).reshape(3, 4)
            assert (xp.rearrange(x.T) == x.T).all()
        print(build.stats["corrupt"], build.stats["compiled"])
    """)
    env = {**os.environ, config.CACHE_DIR_VAR: str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    corrupt, compiled = map(int, done.stdout.split())
    assert corrupt == 1 and compiled == 3  # runtime, runtime again, the copy kernel


# ---------------------------------------------------------------- missing compilers
@pytest.fixture
def no_compiler_cache():
    emulator_build.compiler_version.cache_clear()
    yield
    emulator_build.compiler_version.cache_clear()


def test_missing_gxx_says_what_to_install(cache, tmp_path, monkeypatch, no_compiler_cache,
                                          backend_name):
    if backend_name != "emulate":
        pytest.skip("the emulator's compiler")
    empty = tmp_path / "no-compilers-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    y = np.full((4, 3), 7.0, np.float32)
    with pytest.raises(RuntimeError, match=r"g\+\+, which is not on PATH.*apt-get install g\+\+"):
        xp.rearrange_(y, np.ones((3, 4), np.float32).T)
    assert (y == 7).all()
    monkeypatch.undo()  # g++ back on PATH: the failure was not cached
    emulator_build.compiler_version.cache_clear()
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(cache.parent))
    xp.rearrange_(y, np.ones((3, 4), np.float32).T)
    assert (y == 1).all()


def test_broken_gxx_says_what_to_install(tmp_path, monkeypatch, no_compiler_cache):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "g++").write_text("#!/bin/sh\necho 'g++: cannot execute' >&2\nexit 1\n")
    (fake / "g++").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(RuntimeError, match=r"does not run.*apt-get install g\+\+"):
        emulator_build.compiler_version()


@pytest.fixture
def nvrtc_reloaded():
    nvrtc.load_nvrtc.cache_clear()
    yield
    nvrtc.load_nvrtc.cache_clear()


def test_missing_nvrtc_library_says_what_to_install(monkeypatch, nvrtc_reloaded):
    pytest.importorskip("cupy")
    from cupy.cuda import nvrtc as cupy_nvrtc

    def not_found():  # what cuda.pathfinder raises when no libnvrtc is found
        raise RuntimeError("Failure finding 'libnvrtc.so': no such file")

    monkeypatch.setattr(cupy_nvrtc, "getVersion", not_found)
    for call in (lambda: nvrtc.compile_ptx("rearrange.cu", ["rearrange<4, 1, 1, 0>"]),
                 nvrtc.nvrtc_version):
        with pytest.raises(RuntimeError, match=r"pip install nvidia-cuda-nvrtc") as info:
            call()
        assert "libnvrtc" in str(info.value)  # and what went wrong
    monkeypatch.undo()  # installed now: the failure was not cached
    assert nvrtc.nvrtc_version() >= (11, 0)


def test_missing_nvrtc_bindings_say_what_to_install(monkeypatch, nvrtc_reloaded):
    cupy_cuda = pytest.importorskip("cupy.cuda")  # CuPy's own, also where a stand-in is cupy
    monkeypatch.delattr(cupy_cuda, "nvrtc", raising=False)
    monkeypatch.setitem(sys.modules, "cupy.cuda.nvrtc", None)  # import fails
    with pytest.raises(RuntimeError, match=r"pip install nvidia-cuda-nvrtc"):
        nvrtc.compile_ptx("rearrange.cu", ["rearrange<4, 1, 1, 0>"])


@pytest.mark.gpu
def test_missing_nvrtc_on_the_cuda_backend(monkeypatch, nvrtc_reloaded, backend_name):
    import cupy
    from cupy.cuda import nvrtc as cupy_nvrtc

    from infini_cupy.runtime import cuda as runtime

    def not_found():
        raise RuntimeError("Failure finding 'libnvrtc.so'")

    monkeypatch.setattr(cupy_nvrtc, "getVersion", not_found)
    runtime.forget_kernels()
    y = cupy.full((4, 3), 7.0, np.float32)
    with pytest.raises(RuntimeError, match=r"pip install nvidia-cuda-nvrtc"):
        runtime.get_kernel("rearrange.cu", "rearrange<4, 1, 1, 0>")
    with pytest.raises(RuntimeError, match=r"pip install nvidia-cuda-nvrtc"):
        recent.forget_all()
        xp.rearrange_(y, cupy.ones((3, 4), np.float32).T)
    assert (y.get() == 7).all()
