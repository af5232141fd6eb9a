"""Building the emulator's shared libraries with g++, cached on disk.

Two kinds of library: the runtime (``kernels_src/emulation/runtime.cpp``: fibers, scheduler,
bounds checks, tracing), built once per machine and loaded ``RTLD_GLOBAL``; and one kernel
library per (source, set of name expressions), whose generated wrapper instantiates exactly
those name expressions and resolves the runtime's symbols at load time.

A cached file is ``<key>.so`` with a trailer (magic + SHA-256 of the rest); the dynamic
loader ignores trailing bytes, and a file whose trailer does not match (truncated, partly
written) is rebuilt. Files are written to a temporary name and renamed into place, so
concurrent processes never see half a file; threads of one process take a lock per key, so a
variant is compiled once however many threads ask for it.
"""

from __future__ import annotations

import collections
import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from ... import config
from ...errors import KernelCompileError
from ..sources import kernels_dir, numbered, read_source, source_digest

CXX = "g++"
# -O1: most of -O2's speed at about half its compile time. No -march: cached files may be
# shared between machines. -fno-strict-aliasing: kernels reinterpret bytes freely, as CUDA allows.
KERNEL_OPTIONS = (
    "-std=c++17", "-O1", "-fPIC", "-shared", "-fno-strict-aliasing", "-fvisibility=hidden",
    "-DINFINI_EMULATION",
)
RUNTIME_OPTIONS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-fvisibility=hidden")

_TRAILER_MAGIC = b"ICEMUSO1"
_TRAILER_LEN = len(_TRAILER_MAGIC) + 32

# What happened to libraries in this process: "compiled", "loaded" (from disk), "corrupt".
stats: collections.Counter = collections.Counter()
_stats_lock = threading.Lock()  # threads building different keys count at once


def _count(event: str) -> None:
    with _stats_lock:
        stats[event] += 1


def cache_info() -> dict:
    """Libraries ``compiled``, ``loaded`` from disk, and found ``corrupt``, in this process."""
    with _stats_lock:
        return dict(stats)


_key_locks: dict[str, threading.Lock] = {}
_key_locks_guard = threading.Lock()


def cache_dir() -> Path:
    """``$INFINI_CUPY_CACHE_DIR/emulator``, by default ``~/.cache/infini_cupy/emulator``."""
    return config.cache_dir() / "emulator"


@functools.lru_cache(maxsize=None)
def compiler_version() -> str:
    """``g++`` version and target, part of every cache key."""
    found = shutil.which(CXX)
    if found is None:
        raise RuntimeError(
            f"the emulate backend compiles kernels with {CXX}, which is not on PATH; "
            "install it (Debian/Ubuntu: apt-get install g++)"
        )
    try:
        out = [
            subprocess.run([found, flag], capture_output=True, text=True, check=True).stdout.strip()
            for flag in ("-dumpfullversion", "-dumpmachine")
        ]
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(
            f"the emulate backend compiles kernels with {CXX}, but {found} does not run "
            f"({e}); install a working one (Debian/Ubuntu: apt-get install g++)"
        ) from e
    return " ".join(out)


def _lock_for(key: str) -> threading.Lock:
    with _key_locks_guard:
        return _key_locks.setdefault(key, threading.Lock())


def _hash(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _read_verified(path: Path) -> bool:
    """True when ``path`` exists and its trailer matches its content."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    body, trailer = data[:-_TRAILER_LEN], data[-_TRAILER_LEN:]
    return (
        len(data) > _TRAILER_LEN
        and trailer[: len(_TRAILER_MAGIC)] == _TRAILER_MAGIC
        and trailer[len(_TRAILER_MAGIC):] == hashlib.sha256(body).digest()
    )


def _compile(cpp_text: str, path: Path, options, names, numbered_source: str) -> None:
    """Compile ``cpp_text`` and install the library at ``path`` atomically, with its trailer."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".build-") as tmp:
        cpp, out = Path(tmp) / "unit.cpp", Path(tmp) / "lib.so"
        cpp.write_text(cpp_text)
        cmd = [CXX, *options, "-I", str(kernels_dir()), "-o", str(out), str(cpp)]
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
        if proc.returncode != 0:
            log = f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}"
            raise KernelCompileError(CXX, names, options, log, numbered_source)
        body = out.read_bytes()
        staged = Path(tmp) / "staged.so"
        staged.write_bytes(body + _TRAILER_MAGIC + hashlib.sha256(body).digest())
        os.replace(staged, path)
    _count("compiled")


def _load_or_build(path: Path, build) -> Path:
    """``path`` verified, after building it when it is missing or corrupt."""
    if _read_verified(path):
        _count("loaded")
        return path
    if path.exists():
        _count("corrupt")
    build()
    return path


_runtime_lib = None
_runtime_guard = threading.Lock()
# Extra options of both kinds of library: the dynamic-TLS fallback (see cuda_emulation.h).
_tls_options: tuple[str, ...] = ()


def kernel_options() -> tuple[str, ...]:
    return KERNEL_OPTIONS + _tls_options


def runtime_library() -> ctypes.CDLL:
    """The runtime, built once per machine and loaded RTLD_GLOBAL once per process."""
    global _runtime_lib, _tls_options
    if _runtime_lib is not None:
        return _runtime_lib
    with _runtime_guard:
        if _runtime_lib is None:
            try:
                lib = _load_runtime(RUNTIME_OPTIONS)
            except OSError as e:
                if "static TLS" not in str(e):
                    raise
                _tls_options = ("-DINFINI_EMULATION_DYNAMIC_TLS",)
                lib = _load_runtime(RUNTIME_OPTIONS + _tls_options)
            _declare_runtime(lib)
            _runtime_lib = lib
    return _runtime_lib


def _load_runtime(options) -> ctypes.CDLL:
    src = kernels_dir() / "emulation" / "runtime.cpp"
    files = sorted((kernels_dir() / "emulation").glob("*.[ch]*"))
    key = _hash("runtime", [(f.name, f.read_bytes()) for f in files], options, compiler_version())
    path = cache_dir() / f"runtime-{key}.so"
    text = f'#include "{src}"\n'
    with _lock_for(key):
        _load_or_build(path, lambda: _compile(
            text, path, options, ["emulator runtime"], numbered(src.read_text())))
    return ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)


def _declare_runtime(lib: ctypes.CDLL) -> None:
    p, u32p, i = ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32), ctypes.c_int
    lib.emu_launch.argtypes = [p, p, u32p, u32p, p, i, i, i, p, ctypes.POINTER(p),
                               ctypes.POINTER(ctypes.c_uint64), i, ctypes.c_uint64]
    lib.emu_launch.restype = i
    lib.emu_free.argtypes = [p]
    lib.emu_free.restype = None


@functools.lru_cache(maxsize=None)
def source_path(source: str) -> Path:
    """``kernels_src/<source>``, or ``source`` itself when it is an absolute path."""
    return (kernels_dir() / source).resolve()


def _wrapper(include: str, names) -> str:
    """The unit g++ compiles: the kernel source, then two exported functions per name."""
    lines = [
        "// generated by infini_cupy.runtime.emulate.build",
        f'#include "{include}"',
        '#include "emulation/entry.h"',
    ]
    for index, name in enumerate(names):
        lines += [
            f"EMU_EXPORT void emu_entry_{index}(void **args) "
            f"{{ emu::invoke(&{name}, args); }}",
            f"EMU_EXPORT const unsigned *emu_params_{index}() "
            f"{{ return emu::param_sizes(&{name}); }}",
        ]
    return "\n".join(lines) + "\n"


def kernel_library(source: str, names: tuple[str, ...]):
    """Load (building if needed) the library of ``names``.

    Returns {name: (entry address, parameter sizes, the ctypes library keeping it alive)}.
    """
    runtime_library()
    src = source_path(source)
    # Sources under kernels_src/ are hashed with all their headers: the key need not name the
    # checkout. Other sources (tests) may include neighbours, so their path is part of it.
    where = "" if src.is_relative_to(kernels_dir()) else str(src)
    key = _hash("kernels", source_digest(source), where, _wrapper("<source>", names),
                kernel_options(), compiler_version())
    path = cache_dir() / f"{key}.so"
    text = _wrapper(str(src).replace("\\", "\\\\").replace('"', '\\"'), names)

    def build():
        numbered_source = f"{numbered(read_source(source))}\n---- wrapper:\n{numbered(text)}"
        _compile(text, path, kernel_options(), names, numbered_source)

    with _lock_for(key):
        _load_or_build(path, build)
        try:
            lib = ctypes.CDLL(str(path))
        except OSError:  # verified yet unloadable (say, a stale runtime ABI): build it anew
            _count("corrupt")
            build()
            lib = ctypes.CDLL(str(path))
    kernels = {}
    for index, name in enumerate(names):
        entry = ctypes.cast(getattr(lib, f"emu_entry_{index}"), ctypes.c_void_p).value
        params = getattr(lib, f"emu_params_{index}")
        params.restype = ctypes.POINTER(ctypes.c_uint)
        sizes = params()
        kernels[name] = (entry, tuple(sizes[k] for k in range(1, sizes[0] + 1)), lib)
    return kernels
