"""Building the emulator's shared libraries with g++, cached on disk.

Two kinds of library: the runtime (``kernels_src/emulation/runtime.cpp``: fibers, scheduler,
bounds checks, tracing), built once per machine and loaded ``RTLD_GLOBAL``; and one kernel
library per (source, set of name expressions), whose generated wrapper instantiates exactly
those name expressions and resolves the runtime's symbols at load time.

A cached file is ``<key>.so`` followed by what it was built as (JSON: its key, the name
expressions in entry order, the g++ version) and a trailer (magic, the JSON's length, SHA-256
of everything before the trailer); the dynamic loader ignores trailing bytes. A file whose
trailer does not match (truncated, partly written) or that was built as something else (a
file copied or swapped under another key) is rebuilt. The key leaves out the g++ version, so
a machine without g++ still runs every cached library; where g++ is present, a library
built by another version is rebuilt. Files are written to a temporary name and renamed into
place, so concurrent processes never see half a file; threads of one process take a lock per
key and processes an advisory lock on a file beside it, so a variant is compiled once however
many threads or processes ask for it. g++ runs at most
``COMPILE_TIMEOUT_S`` seconds; a cache directory that cannot be used is a RuntimeError
naming it and ``INFINI_CUPY_CACHE_DIR``.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import functools
import hashlib
import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import logging
import threading
import time
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

# Seconds a g++ run may take (the largest batch of name expressions compiles in about a
# minute on two cores); past it the compiler is killed and the call raises.
COMPILE_TIMEOUT_S = 600.0
_VERSION_TIMEOUT_S = 60.0  # g++ -dumpfullversion / -dumpmachine

# Each library load (never a cached launch) is one INFO record: kernel, backend, ms, how.
_log = logging.getLogger("infini_cupy")

_TRAILER_MAGIC = b"ICEMUSO2"
_META_LEN = struct.Struct("<I")  # byte length of the JSON before the trailer
_TRAILER_LEN = len(_TRAILER_MAGIC) + _META_LEN.size + 32

# What happened to libraries in this process: "compiled", "loaded" (from disk), "corrupt".
stats: collections.Counter = collections.Counter()
_stats_lock = threading.Lock()  # threads building different keys count at once


def _count(event: str) -> None:
    with _stats_lock:
        stats[event] += 1


def cache_info() -> dict:
    """Libraries ``compiled``, ``loaded`` from disk, found ``corrupt`` (damaged, or built as
    another key or other names) and ``stale`` (built by another g++), in this process."""
    with _stats_lock:
        return dict(stats)


_key_locks: dict[str, threading.Lock] = {}
_key_locks_guard = threading.Lock()


def cache_dir() -> Path:
    """``$INFINI_CUPY_CACHE_DIR/emulator``, by default ``~/.cache/infini_cupy/emulator``."""
    return config.cache_dir() / "emulator"


def _cache_error(directory: Path, error: OSError) -> RuntimeError:
    return RuntimeError(
        f"the emulator cannot use its cache directory {directory} ({error}); make it a "
        f"writable directory or point {config.CACHE_DIR_VAR} at one"
    )


@functools.lru_cache(maxsize=None)
def compiler_version() -> str:
    """``g++`` version and target, stored in every library it builds."""
    found = shutil.which(CXX)
    if found is None:
        raise RuntimeError(
            f"the emulate backend compiles kernels with {CXX}, which is not on PATH; "
            "install it (Debian/Ubuntu: apt-get install g++)"
        )
    try:
        out = [
            subprocess.run([found, flag], capture_output=True, text=True, check=True,
                           timeout=_VERSION_TIMEOUT_S).stdout.strip()
            for flag in ("-dumpfullversion", "-dumpmachine")
        ]
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(
            f"the emulate backend compiles kernels with {CXX}, but {found} does not run "
            f"({e}); install a working one (Debian/Ubuntu: apt-get install g++)"
        ) from e
    return " ".join(out)


def _installed_compiler() -> str | None:
    """``compiler_version()``, or None where no working g++ is installed (cached libraries
    are then used as they are)."""
    try:
        return compiler_version()
    except RuntimeError:
        return None


def _lock_for(key: str) -> threading.Lock:
    with _key_locks_guard:
        return _key_locks.setdefault(key, threading.Lock())


def _hash(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(repr(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _read_meta(path: Path) -> dict | None:
    """What the library at ``path`` was built as, or None when it is missing, unreadable, or
    its trailer does not match its content."""
    try:
        data = path.read_bytes()
    except OSError:  # missing, or a cache directory that cannot be read: build it
        return None
    if len(data) <= _TRAILER_LEN:
        return None
    rest, trailer = data[:-_TRAILER_LEN], data[-_TRAILER_LEN:]
    magic, digest = trailer[:len(_TRAILER_MAGIC)], trailer[-32:]
    (meta_len,) = _META_LEN.unpack(trailer[len(_TRAILER_MAGIC):-32])
    if magic != _TRAILER_MAGIC or digest != hashlib.sha256(rest).digest() or meta_len >= len(rest):
        return None
    try:
        meta = json.loads(rest[len(rest) - meta_len:])
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def _read_verified(path: Path) -> bool:
    """True when ``path`` exists and its trailer matches its content."""
    return _read_meta(path) is not None


def _run_compiler(cmd) -> tuple[int, str]:
    """(exit status, output) of ``cmd``, killed with its children past COMPILE_TIMEOUT_S."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=COMPILE_TIMEOUT_S)
    except BaseException:  # the timeout, or an interrupt: no compiler is left running
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc.returncode, output


def _compile(cpp_text: str, path: Path, options, names, numbered_source: str, meta: dict) -> None:
    """Compile ``cpp_text`` and install the library at ``path`` atomically, with ``meta``
    (what it is built as) and its trailer."""
    compiler = compiler_version()  # no g++: say what to install before writing anything
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp_dir = tempfile.TemporaryDirectory(dir=path.parent, prefix=".build-")
    except OSError as e:
        raise _cache_error(path.parent, e) from e
    with tmp_dir as tmp:
        cpp, out = Path(tmp) / "unit.cpp", Path(tmp) / "lib.so"
        try:
            cpp.write_text(cpp_text)
        except OSError as e:
            raise _cache_error(path.parent, e) from e
        cmd = [CXX, *options, "-I", str(kernels_dir()), "-o", str(out), str(cpp)]
        try:
            returncode, output = _run_compiler(cmd)
        except subprocess.TimeoutExpired:
            log = (f"{' '.join(cmd)}\ntimed out after {COMPILE_TIMEOUT_S:g} s "
                   "(build.COMPILE_TIMEOUT_S); the compiler was killed")
            raise KernelCompileError(CXX, names, options, log, numbered_source) from None
        if returncode != 0:
            raise KernelCompileError(CXX, names, options, f"{' '.join(cmd)}\n{output}",
                                     numbered_source)
        try:
            built = json.dumps({**meta, "compiler": compiler}, sort_keys=True).encode()
            body = out.read_bytes() + built
            staged = Path(tmp) / "staged.so"
            staged.write_bytes(body + _TRAILER_MAGIC + _META_LEN.pack(len(built))
                               + hashlib.sha256(body).digest())
            os.replace(staged, path)
        except OSError as e:
            raise _cache_error(path.parent, e) from e
    _count("compiled")


def _library_path(stem: str, meta: dict) -> tuple[Path, dict]:
    """(file, what it must be built as) of the library ``stem`` (the key, with a prefix):
    ``<stem>-<g++ version hash>.so``. Without a working g++, the newest verified file of any
    version (a cached library runs without its compiler); the path to build otherwise."""
    compiler = _installed_compiler()
    if compiler is not None:
        return cache_dir() / f"{stem}-{_hash(compiler)[:12]}.so", {**meta, "compiler": compiler}
    try:
        found = sorted(cache_dir().glob(f"{stem}-*.so"), key=lambda p: p.stat().st_mtime,
                       reverse=True)
    except OSError:
        found = []
    for path in found:
        built = _read_meta(path)
        if built is not None and all(built.get(k) == v for k, v in meta.items()):
            return path, meta
    return cache_dir() / f"{stem}-no-compiler.so", meta  # building it says what to install


def _load_or_build(path: Path, meta: dict, build) -> Path:
    """``path`` verified as built for ``meta`` (its key, names and g++ version), after
    building it when it is missing, damaged or another library (a file copied or swapped).
    Another process building the same file at the same time is waited for, not repeated."""

    def verified():
        found = _read_meta(path)
        return found is not None and all(found.get(k) == v for k, v in meta.items())

    if verified():
        _count("loaded")
        return path
    with _other_processes_locked_out(path):
        if verified():  # built by another process while this one waited
            _count("loaded")
            return path
        if _exists(path):
            _count("corrupt")
        build()
    return path


@contextlib.contextmanager
def _other_processes_locked_out(path: Path):
    """An advisory lock on ``<path>.lock`` (POSIX ``flock``), so that processes asking for the
    same library at once compile it once; where there is none (Windows, a file system without
    locks, an unwritable directory) each process builds its own copy, as before."""
    try:
        import fcntl

        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path.with_suffix(".lock"), "a")
    except (ImportError, OSError):
        yield
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError:
            pass
        yield  # closing the file releases the lock


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


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
    key = _hash("runtime", [(f.name, f.read_bytes()) for f in files], options)
    path, meta = _library_path(f"runtime-{key}", {"key": key, "names": ["emulator runtime"]})
    text = f'#include "{src}"\n'
    with _lock_for(key):
        _load_or_build(path, meta, lambda: _compile(
            text, path, options, ["emulator runtime"], numbered(src.read_text()), meta))
    return ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)


def _declare_runtime(lib: ctypes.CDLL) -> None:
    p, u32p, i = ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32), ctypes.c_int
    lib.emu_launch.argtypes = [p, p, u32p, u32p, p, i, i, i, p, ctypes.POINTER(p),
                               ctypes.POINTER(ctypes.c_uint64), i, ctypes.c_uint64,
                               ctypes.c_uint64]
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


def library_file(source: str, names: tuple[str, ...]) -> tuple[str, Path, dict]:
    """(key, file, what it must be built as) of the library of ``names`` (sorted)."""
    src = source_path(source)
    # Sources under kernels_src/ are hashed with all their headers: the key need not name the
    # checkout. Other sources (tests) may include neighbours, so their path is part of it.
    where = "" if src.is_relative_to(kernels_dir()) else str(src)
    key = _hash("kernels", source_digest(source), where, _wrapper("<source>", names),
                kernel_options())
    return (key, *_library_path(key, {"key": key, "names": list(names)}))


def kernel_library(source: str, names: tuple[str, ...]):
    """Load (building if needed) the library of ``names``.

    Returns {name: (entry address, parameter sizes, the ctypes library keeping it alive)}.
    """
    runtime_library()
    key, path, meta = library_file(source, names)
    src = source_path(source)
    text = _wrapper(str(src).replace("\\", "\\\\").replace('"', '\\"'), names)

    built = []  # this call's own builds (the logged "compiled" or "disk cache")

    def build():
        built.append(True)
        numbered_source = f"{numbered(read_source(source))}\n---- wrapper:\n{numbered(text)}"
        _compile(text, path, kernel_options(), names, numbered_source, meta)

    started = time.perf_counter()
    with _lock_for(key):
        _load_or_build(path, meta, build)
        try:
            kernels = _entries(ctypes.CDLL(str(path)), names)
        except (OSError, AttributeError):  # verified yet unloadable (a stale runtime ABI)
            _count("corrupt")
            build()
            kernels = _entries(ctypes.CDLL(str(path)), names)
        how = "compiled by g++" if built else "disk cache"
    _log.info("kernel %s (%s): emulate, %.1f ms, %s", ", ".join(names), source,
              (time.perf_counter() - started) * 1e3, how)
    return kernels


def _entries(lib: ctypes.CDLL, names) -> dict:
    """{name: (entry address, parameter sizes, lib)}; AttributeError for a missing entry."""
    kernels = {}
    for index, name in enumerate(names):
        entry = ctypes.cast(getattr(lib, f"emu_entry_{index}"), ctypes.c_void_p).value
        params = getattr(lib, f"emu_params_{index}")
        params.restype = ctypes.POINTER(ctypes.c_uint)
        sizes = params()
        kernels[name] = (entry, tuple(sizes[k] for k in range(1, sizes[0] + 1)), lib)
    return kernels
