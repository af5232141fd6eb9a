"""The emulator's g++ builds and disk cache when things go wrong around them: a compiler that
hangs, cache files swapped between keys, a cache directory that cannot be used, no g++ at
all with every library cached, a library built by another g++ version."""

from __future__ import annotations

import ast
import hashlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config
from infini_cupy.runtime import elf
from infini_cupy.errors import KernelCompileError
from infini_cupy.runtime import recent
from infini_cupy.runtime.emulate import build as emulator_build
from infini_cupy.runtime.emulate import launcher as emulator

KERNELS = str(Path(__file__).parent.parent / "support" / "kernels" / "emulator_kernels.cu")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh emulator cache directory, nothing loaded (the runtime stays loaded)."""
    _runtime_dir()
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path / "cache"))
    emulator.forget_loaded()
    recent.forget_all()
    emulator_build.compiler_version.cache_clear()
    emulator_build.forget_prefixes()
    yield tmp_path / "cache" / "emulator"
    emulator.forget_loaded()
    recent.forget_all()
    emulator_build.compiler_version.cache_clear()
    emulator_build.forget_prefixes()


def _libraries(directory: Path) -> set[str]:
    return {p.name for p in directory.glob("*.so") if not p.name.startswith("runtime-")}


def _count(event: str) -> int:
    return emulator_build.cache_info().get(event, 0)


# ---------------------------------------------------------------- a hung compiler
def test_hung_compiler_is_killed_after_the_timeout(cache, tmp_path, monkeypatch):
    """A g++ that never returns: killed (with its children) after COMPILE_TIMEOUT_S, and a
    KernelCompileError naming the kernel, the command and the timeout."""
    fake = tmp_path / "bin"
    fake.mkdir()
    pid_file = tmp_path / "pid"
    (fake / "g++").write_text(textwrap.dedent(f"""\
        #!/bin/sh
        case "$1" in
            -dumpfullversion) echo 99.0; exit 0;;
            -dumpmachine) echo hung-compiler; exit 0;;
        esac
        sleep 300 &
        echo $! > {pid_file}
        wait
    """))
    (fake / "g++").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(emulator_build, "COMPILE_TIMEOUT_S", 1.0)
    start = time.monotonic()
    with pytest.raises(KernelCompileError) as info:
        emulator.prepare(KERNELS, ("copy<float>",))
    assert time.monotonic() - start < 30
    message = str(info.value)
    assert "copy<float>" in message and "timed out after 1 s" in message
    assert "COMPILE_TIMEOUT_S" in message and "g++ -std=c++17" in message  # the command
    grandchild = int(pid_file.read_text())
    for _ in range(50):  # SIGKILL to the group: the compiler's own children go too
        if not _running(grandchild):
            break
        time.sleep(0.1)
    else:
        os.kill(grandchild, 9)
        pytest.fail("the compiler's child outlived the timeout")
    assert not _libraries(cache)


def test_build_folders_left_by_a_killed_process_are_removed(cache):
    """A process killed with SIGKILL mid-compile leaves its ``.build-*`` folder: the next
    compile in that directory removes those no running compile can be using, and no other."""
    cache.mkdir(parents=True)
    abandoned, running = cache / ".build-abandoned", cache / ".build-running"
    for folder in (abandoned, running):
        folder.mkdir()
        (folder / "unit.cpp").write_text("// partly written")
    old = time.time() - emulator_build._ABANDONED_AFTER_S - 60
    os.utime(abandoned, (old, old))
    emulator.prepare(KERNELS, ("copy<float>",))
    assert not abandoned.exists() and (running / "unit.cpp").exists()


def _running(pid: int) -> bool:
    """Alive and not a zombie (a container's init may never reap an orphan)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# ---------------------------------------------------------------- files under the wrong key
def test_swapped_libraries_are_rebuilt_not_run(cache):
    """Two cached libraries swapped on disk (a copy gone wrong, a sync tool): each is found
    to hold other kernels than its key's and rebuilt; subtract does not multiply. Checked in
    a new process: this one keeps the libraries it loaded by their paths."""
    a, b = np.arange(1.0, 7.0, dtype=np.float32), np.full(6, 3.0, np.float32)
    with xp.backend("emulate"):
        xp.subtract(a, b)
        (subtract_file,) = _libraries(cache)
        xp.multiply(a, b)
        (multiply_file,) = _libraries(cache) - {subtract_file}
    subtract_path, multiply_path = cache / subtract_file, cache / multiply_file
    staged = cache / "staged"
    subtract_path.rename(staged)
    multiply_path.rename(subtract_path)
    staged.rename(multiply_path)
    _copy_runtime(cache)
    script = textwrap.dedent("""\
        import numpy as np
        import infini_cupy as xp
        from infini_cupy.runtime.emulate import build
        a, b = np.arange(1.0, 7.0, dtype=np.float32), np.full(6, 3.0, np.float32)
        with xp.backend("emulate"):
            print(xp.subtract(a, b).tolist(), xp.multiply(a, b).tolist())
        print(build.cache_info())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ), timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    results, info = done.stdout.splitlines()[-2:]
    assert results == f"{(a - b).tolist()} {(a * b).tolist()}"
    info = ast.literal_eval(info)
    assert info["corrupt"] == 2 and info["compiled"] == 2


def test_processes_asking_at_once_compile_a_library_once(cache):
    """Two processes asking for the same missing library at once: one compiles it, the other
    waits for it and loads it. The test holds the library's lock while both start, so both
    find it missing; without the lock each would compile its own."""
    import fcntl

    _copy_runtime(cache)
    _, path, _ = emulator_build.library_file(KERNELS, ("copy<float>",))
    script = textwrap.dedent(f"""\
        from infini_cupy.runtime.emulate import build, launcher
        launcher.prepare({KERNELS!r}, ("copy<float>",))
        print(build.cache_info().get("compiled", 0))
    """)
    with open(path.with_suffix(".lock"), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        children = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True) for _ in range(2)]
        time.sleep(3)  # both are started and waiting on the lock
        assert [child.poll() for child in children] == [None, None]
    outputs = [child.communicate(timeout=300) for child in children]
    assert [child.returncode for child in children] == [0, 0], outputs
    assert sorted(int(out.split()[-1]) for out, _ in outputs) == [0, 1]
    assert emulator_build._read_verified(path)


def _copy_runtime(directory: Path) -> None:
    """The runtime this process uses, into ``directory``: spares a child a slow build."""
    directory.mkdir(parents=True, exist_ok=True)
    for runtime in _runtime_dir().glob("runtime-*-*.so"):
        (directory / runtime.name).write_bytes(runtime.read_bytes())


_RUNTIME_DIR = []


def _runtime_dir() -> Path:
    if not _RUNTIME_DIR:  # where the runtime this process loaded lives (before any fixture)
        emulator_build.runtime_library()
        _RUNTIME_DIR.append(emulator_build.cache_dir())
    return _RUNTIME_DIR[0]


def test_library_missing_an_entry_is_rebuilt(cache, monkeypatch):
    """A file that verifies and is built for the key, yet lacks an entry symbol (say, a
    wrapper of another version): rebuilt, not a raw AttributeError."""
    emulator.prepare(KERNELS, ("copy<float>",))
    real_entries = emulator_build._entries
    calls = []

    def first_call_misses(lib, names):
        calls.append(names)
        if len(calls) == 1:
            raise AttributeError("emu_entry_0")
        return real_entries(lib, names)

    monkeypatch.setattr(emulator_build, "_entries", first_call_misses)
    emulator.forget_loaded()
    compiled = _count("compiled")
    emulator.prepare(KERNELS, ("copy<float>",))
    assert _count("compiled") == compiled + 1 and len(calls) == 2


# ---------------------------------------------------------------- cache directories
def test_cache_dir_that_is_a_file(tmp_path, monkeypatch, cache):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("not a directory")
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(not_a_dir))
    with pytest.raises(RuntimeError, match=r"cache directory .*a-file.*INFINI_CUPY_CACHE_DIR"):
        emulator.prepare(KERNELS, ("copy<float>",))


def test_read_only_cache_dir(tmp_path, monkeypatch, cache):
    """Nothing to build: a read-only cache serves its libraries. Something to build: a
    RuntimeError naming the directory and the variable."""
    emulator.prepare(KERNELS, ("copy<float>",))

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(cache))

    if os.geteuid() == 0:  # root writes anyway: refuse the writes the build makes
        monkeypatch.setattr(emulator_build.tempfile, "TemporaryDirectory", denied)
    else:
        cache.chmod(0o555)
    try:
        emulator.forget_loaded()
        emulator.prepare(KERNELS, ("copy<float>",))  # cached: read only
        with pytest.raises(RuntimeError, match=r"cache directory .*INFINI_CUPY_CACHE_DIR") as info:
            emulator.prepare(KERNELS, ("copy<double>",))
        assert str(cache) in str(info.value) and "Permission denied" in str(info.value)
    finally:
        cache.chmod(0o755)


# ---------------------------------------------------------------- no g++, another g++
def test_cached_libraries_run_without_gxx(tmp_path):
    """In a process without g++ on PATH: the runtime and kernels cached by a process with
    g++ run; a kernel not cached says what to install."""
    env = {**os.environ, config.CACHE_DIR_VAR: str(tmp_path)}
    _copy_runtime(tmp_path / "emulator")
    script = textwrap.dedent("""\
        import sys
        import numpy as np
        import infini_cupy as xp
        from infini_cupy.runtime.emulate import build
        with xp.backend("emulate"):
            x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
            assert (xp.rearrange(x.T) == x.T).all()
            assert (xp.add(x, x) == 2 * x).all()
            if sys.argv[1] == "no-gxx":
                try:
                    xp.subtract(x, x)
                except RuntimeError as e:
                    print("refused:", e)
        print(build.cache_info())
    """)
    first = subprocess.run([sys.executable, "-c", script, "with-gxx"], env=env,
                           capture_output=True, text=True, timeout=300, check=False)
    assert first.returncode == 0, first.stderr
    empty = tmp_path / "no-compilers-here"
    empty.mkdir()
    second = subprocess.run([sys.executable, "-c", script, "no-gxx"],
                            env={**env, "PATH": str(empty)}, capture_output=True, text=True,
                            timeout=300, check=False)
    assert second.returncode == 0, second.stderr
    assert "refused: the emulate backend compiles kernels with g++, which is not on PATH" in second.stdout
    info = ast.literal_eval(second.stdout.splitlines()[-1])
    assert info.get("compiled", 0) == 0 and info["loaded"] >= 3  # the runtime and 2 kernels


def test_cached_library_without_gxx_in_process(cache, tmp_path, monkeypatch):
    emulator.prepare(KERNELS, ("copy<float>",))
    empty = tmp_path / "no-compilers-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    emulator_build.compiler_version.cache_clear()
    emulator.forget_loaded()
    loaded = _count("loaded")
    emulator.prepare(KERNELS, ("copy<float>",))
    assert _count("loaded") == loaded + 1
    x = np.arange(40, dtype=np.float32)
    y = np.zeros_like(x)
    emulator.launch(KERNELS, "copy<float>", 1, 64, (y, x, np.int64(40)))
    np.testing.assert_array_equal(y, x)
    with pytest.raises(RuntimeError, match=r"g\+\+, which is not on PATH"):
        emulator.prepare(KERNELS, ("copy<double>",))
    assert len(_libraries(cache)) == 1  # nothing written


def test_library_of_another_gxx_version_is_not_used(cache, monkeypatch):
    """Where g++ is installed, a library built by another version is not loaded: the
    installed one builds its own (both stay: machines sharing a cache do not fight)."""
    emulator.prepare(KERNELS, ("copy<float>",))
    (first,) = _libraries(cache)
    compiled = _count("compiled")
    with monkeypatch.context() as patched:
        patched.setattr(emulator_build, "compiler_version", lambda: "g++ 0.0-other x86_64")
        emulator.forget_loaded()
        emulator.prepare(KERNELS, ("copy<float>",))
    assert _count("compiled") == compiled + 1
    assert len(_libraries(cache)) == 2 and first in _libraries(cache)


# ---------------------------------------------------------------- precompiled headers
def _code(path: Path) -> bytes:
    """The machine code of a library (its .text section)."""
    data = path.read_bytes()
    _, offset, size, _ = elf.sections(data)[".text"]
    return data[offset:offset + size]


def _prefix(cache: Path) -> Path:
    (found,) = cache.glob("prefix-*/prefix.h.gch")
    return found


def _copies(name: str, dtype, n: int) -> None:
    """Kernel ``name`` (a copy) copies ``n`` elements of ``dtype`` in the emulator."""
    x = np.arange(n, dtype=dtype)
    y = np.zeros_like(x)
    emulator.prepare(KERNELS, (name,))
    emulator.launch(KERNELS, name, ((n + 31) // 32, 1, 1), (32, 1, 1), [y, x, np.int64(n)])
    np.testing.assert_array_equal(y, x)


def test_a_second_library_of_a_source_reads_its_precompiled_header(cache, tmp_path, monkeypatch):
    """The first library of a source compiles without a precompiled header, the second
    builds it and reads it; each library's code is the code of a plain compile, and its
    kernel gives the plain compile's answer."""
    names = [("copy<float>",), ("copy<double>",), ("reverse_tiles<float, 8>",)]
    built = _count("prefix built")
    for name in names:
        emulator_build.kernel_library(KERNELS, name)
    assert _count("prefix built") == built + 1 and _prefix(cache).stat().st_size > 0
    with_prefix = {n: _code(emulator_build.library_file(KERNELS, n)[1]) for n in names[1:]}
    emulator_build.forget_prefixes()
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path / "plain"))
    monkeypatch.setattr(emulator_build, "_precompiled_prefix", lambda source: None)
    for name in names[1:]:
        emulator_build.kernel_library(KERNELS, name)
        assert _code(emulator_build.library_file(KERNELS, name)[1]) == with_prefix[name], name
    _copies("copy<double>", np.float64, 32)


def test_a_cache_path_with_a_quote_reads_its_precompiled_header(cache, tmp_path, monkeypatch):
    """A cache folder named with ``"`` and ``\\``: the precompiled header is built once and
    read by every later library (included by name, its folder on the include path), not
    built and discarded at every compile."""
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path / "q\"uo\\\\te"))
    built, discarded = _count("prefix built"), _count("prefix discarded")
    for name in ("copy<float>", "copy<double>", "copy<int>"):
        emulator_build.kernel_library(KERNELS, (name,))
    assert _count("prefix built") == built + 1 and _count("prefix discarded") == discarded
    _copies("copy<int>", np.int32, 40)


def test_a_damaged_precompiled_header_is_not_read(cache):
    """A header whose bytes no longer match their digest is built again before use; one that
    matches its digest but that g++ cannot read (a damaged file and its digest rewritten) fails
    the compile, which is done again without it, and the header is deleted."""
    built_before, discarded_before = _count("prefix built"), _count("prefix discarded")
    emulator_build.kernel_library(KERNELS, ("copy<float>",))
    emulator_build.kernel_library(KERNELS, ("copy<double>",))
    built = _prefix(cache)
    size = built.stat().st_size
    built.write_bytes(built.read_bytes()[:size // 2])
    emulator_build.forget_prefixes()
    emulator_build.kernel_library(KERNELS, ("copy<int>",))  # first of this "process": no header
    emulator_build.kernel_library(KERNELS, ("copy<short>",))
    assert _count("prefix built") == built_before + 2
    assert built.stat().st_size > size // 2 and emulator_build._checked(built)
    built.write_bytes(built.read_bytes()[:size // 2])
    digest = built.with_name(built.name + ".sha256")
    digest.write_text(hashlib.sha256(built.read_bytes()).hexdigest())
    emulator_build.forget_prefixes()
    compiled = _count("compiled")
    emulator_build.kernel_library(KERNELS, ("copy<long long>",))
    assert _count("compiled") == compiled + 1
    assert _count("prefix discarded") == discarded_before + 1 and not built.exists()
    _copies("copy<long long>", np.int64, 40)


def test_a_broken_name_expression_fails_with_and_without_the_header(cache):
    """A name expression g++ rejects fails as it would without a precompiled header (the log
    and the numbered source), and the header is kept."""
    discarded = _count("prefix discarded")
    emulator_build.kernel_library(KERNELS, ("copy<float>",))
    emulator_build.kernel_library(KERNELS, ("copy<double>",))
    with pytest.raises(KernelCompileError) as info:
        emulator_build.kernel_library(KERNELS, ("copy<no_such_type>",))
    assert "no_such_type" in str(info.value) and "emulator_kernels.cu" in str(info.value)
    assert _count("prefix discarded") == discarded and _prefix(cache).exists()


# ---------------------------------------------------------------- the optimization level
# What both levels compute: one fused kernel per dtype through many of libm's functions and
# the float16/bfloat16 conversions, a division, a cast to int8 (its saturation), a remainder.
LEVELS_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import infini_cupy as xp

    @xp.fuse
    def chain(x, y):
        a = xp.exp(xp.sin(x) * y) / xp.hypot(x, y) + xp.sqrt(xp.abs(x))
        return a - xp.log1p(xp.abs(y)) * xp.atan2(y, x) + xp.remainder(x, y)

    rng = np.random.default_rng(5)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -3.5, 250.0, 7e4]
    out = {}
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        values = np.concatenate([rng.standard_normal(247) * 30, special]).astype(np.float64)
        x = xp.asarray(values, device="emulator").astype(getattr(xp, dtype))
        y = xp.asarray(values[::-1].copy(), device="emulator").astype(getattr(xp, dtype))
        out[dtype] = np.asarray(chain(x, y).astype(xp.float64))
        out[dtype + "-int8"] = np.asarray((x * 3).astype(xp.int8))
        out[dtype + "-divide"] = np.asarray((x / y).astype(xp.float64))
    np.savez(sys.argv[1], **out)
""")


def test_the_level_keys_the_library_and_a_bad_one_is_refused(cache, monkeypatch):
    built = {}
    for level in ("0", "1"):
        monkeypatch.setenv(config.EMULATOR_OPTIMIZE_VAR, level)
        emulator.forget_loaded()
        emulator.prepare(KERNELS, ["copy<float>"])
        built[level] = _libraries(cache)
    assert len(built["0"]) == 1 and len(built["1"]) == 2  # one library per level
    with config.emulator_optimized("0"):  # a block's own level, over the variable's
        assert "-O0" in emulator_build.kernel_options()
        emulator.forget_loaded()
        emulator.prepare(KERNELS, ["copy<float>"])
        assert _libraries(cache) == built["1"]  # the level-0 library, from the disk cache
    assert "-O1" in emulator_build.kernel_options()
    monkeypatch.setenv(config.EMULATOR_OPTIMIZE_VAR, "3")
    emulator.forget_loaded()
    with pytest.raises(ValueError, match=f"{config.EMULATOR_OPTIMIZE_VAR}='3'"):
        emulator.prepare(KERNELS, ["copy<float>"])


def test_every_level_gives_the_same_bits(tmp_path, backend_name):
    """The suite builds its batches at -O0 (tests/support/batches.py), users at -O1: both
    builds of the same kernels give the same bits (ISO C++17 without fast-math or
    contraction, no -march)."""
    if backend_name != "emulate":
        pytest.skip("compares the emulator's builds")
    results = {}
    for level in ("0", "1"):
        env = dict(os.environ, **{config.EMULATOR_OPTIMIZE_VAR: level,
                                  config.BACKEND_VAR: "emulate"})
        done = subprocess.run([sys.executable, "-c", LEVELS_SCRIPT, str(tmp_path / level)],
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        results[level] = dict(np.load(tmp_path / f"{level}.npz"))
    assert results["0"].keys() == results["1"].keys()
    for name, at_0 in results["0"].items():
        np.testing.assert_array_equal(at_0.view(f"u{at_0.itemsize}"),
                                      results["1"][name].view(f"u{at_0.itemsize}"), name)
