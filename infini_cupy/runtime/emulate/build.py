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
naming it and ``INFINI_CUPY_CACHE_DIR``. A compile's ``.build-*`` folder left by a process
killed mid-build is removed by a later process's first compile there.

Parsing a kernel source and its headers is most of a one-kernel library's compile (about
two thirds for ``elementwise.cu``), so from a process's second library of a source on, g++
reads them from a precompiled header (``prefix-<key>/prefix.h.gch``: the source and the entry
helpers, built once per source, options and g++ version, checked against its SHA-256 once per
process). The library it gives is the one a plain compile gives (the same key); a library whose
compile fails with the header is compiled again without it, and a header that only failed
there is deleted, to be built anew.
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
# The -O level comes from config.emulator_optimization() (-O1 by default). No -march: cached
# files may be shared between machines. -fno-strict-aliasing: kernels reinterpret bytes
# freely, as CUDA allows.
KERNEL_OPTIONS = (
    "-std=c++17", "-fPIC", "-shared", "-fno-strict-aliasing", "-fvisibility=hidden",
    "-DINFINI_EMULATION",
)
RUNTIME_OPTIONS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-fvisibility=hidden")

# Seconds a g++ run may take (the largest batch of name expressions compiles in about a
# minute on two cores); past it the compiler is killed and the call raises.
COMPILE_TIMEOUT_S = 600.0
# A build folder untouched this long belongs to no running compile (each is killed at
# COMPILE_TIMEOUT_S): a process killed with SIGKILL mid-build left it.
_ABANDONED_AFTER_S = 2 * COMPILE_TIMEOUT_S
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
    another key or other names) and ``stale`` (built by another g++), and precompiled headers
    ``prefix built`` and ``prefix discarded``, in this process."""
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


@functools.cache
def _sweep_abandoned_builds(directory: Path) -> None:
    """Remove the ``.build-*`` folders in ``directory`` that no compile can still be using
    (once per process and directory)."""
    now = time.time()
    with contextlib.suppress(OSError):
        for folder in directory.glob(".build-*"):
            with contextlib.suppress(OSError):
                if now - folder.stat().st_mtime > _ABANDONED_AFTER_S:
                    shutil.rmtree(folder, ignore_errors=True)


def _compile(cpp_text: str, path: Path, options, names, numbered_source: str, meta: dict) -> None:
    """Compile ``cpp_text`` and install the library at ``path`` atomically, with ``meta``
    (what it is built as) and its trailer."""
    compiler = compiler_version()  # no g++: say what to install before writing anything
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _sweep_abandoned_builds(path.parent)
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
    """g++'s options for kernel libraries: :data:`KERNEL_OPTIONS`, the -O level in force
    (:func:`infini_cupy.config.emulator_optimization`) and the dynamic-TLS fallback's."""
    first, *rest = KERNEL_OPTIONS  # (the default's options in their order: the keys of -O1's)
    return (first, f"-O{config.emulator_optimization()}", *rest, *_tls_options)


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
                               ctypes.c_uint64, i]
    lib.emu_launch.restype = i
    lib.emu_free.argtypes = [p]
    lib.emu_free.restype = None


@functools.lru_cache(maxsize=None)
def source_path(source: str) -> Path:
    """``kernels_src/<source>``, or ``source`` itself when it is an absolute path."""
    return (kernels_dir() / source).resolve()


def _prefix(include: str) -> list[str]:
    """What every library of the source ``include`` starts with: the source, then the entry
    helpers (the text of a precompiled header too)."""
    return [f'#include "{include}"', '#include "emulation/entry.h"']


def _wrapper(include: str, names, prefix: Path | None = None) -> str:
    """The unit g++ compiles: the kernel source (or the header ``prefix`` that holds it and
    the entry helpers), then two exported functions per name."""
    # the header by its name, its folder on the include path (prefix_options): g++ reads no
    # escapes in an include's name, so a cache path holding a quote would not be found
    lines = ["// generated by infini_cupy.runtime.emulate.build",
             *(_prefix(include) if prefix is None else [f'#include "{prefix.name}"'])]
    for index, name in enumerate(names):
        lines += [
            f"EMU_EXPORT void emu_entry_{index}(void **args) "
            f"{{ emu::invoke(&{name}, args); }}",
            f"EMU_EXPORT const unsigned *emu_params_{index}() "
            f"{{ return emu::param_sizes(&{name}); }}",
        ]
    return "\n".join(lines) + "\n"


def _where(source: str) -> str:
    """What a key holds of the source's place: sources under kernels_src/ are hashed with all
    their headers, so nothing (the key need not name the checkout); other sources (tests) may
    include neighbours, so their path."""
    src = source_path(source)
    return "" if src.is_relative_to(kernels_dir()) else str(src)


def _include_path(source: str) -> str:
    """The source's path as a C string literal's content."""
    return str(source_path(source)).replace("\\", "\\\\").replace('"', '\\"')


def library_file(source: str, names: tuple[str, ...]) -> tuple[str, Path, dict]:
    """(key, file, what it must be built as) of the library of ``names`` (sorted)."""
    key = _hash("kernels", source_digest(source), _where(source), _wrapper("<source>", names),
                kernel_options())
    return (key, *_library_path(key, {"key": key, "names": list(names)}))


# Libraries of each source this process compiled: its precompiled header is built at the
# second (a single compile would take longer with it than without).
_compiled_sources: collections.Counter = collections.Counter()
# Precompiled headers whose digest this process checked: (path, size, mtime_ns).
_checked_prefixes: set = set()


def _prefix_files(source: str) -> tuple[str, Path, Path]:
    """(key, header, precompiled header) of ``source``'s libraries."""
    key = _hash("prefix", source_digest(source), _where(source), kernel_options(),
                compiler_version())
    folder = cache_dir() / f"prefix-{key}"
    return key, folder / "prefix.h", folder / "prefix.h.gch"


def _digest_file(built: Path) -> Path:
    return built.with_name(built.name + ".sha256")


def _checked(built: Path) -> bool:
    """True when the precompiled header ``built`` exists and matches the digest beside it
    (checked once per process and file version)."""
    try:
        stat = built.stat()
        seen = (str(built), stat.st_size, stat.st_mtime_ns)
        if seen in _checked_prefixes:
            return True
        expected = _digest_file(built).read_text().strip()
        matches = hashlib.sha256(built.read_bytes()).hexdigest() == expected
    except OSError:
        return False
    if matches:
        with _stats_lock:
            _checked_prefixes.add(seen)
    return matches


def _precompiled_prefix(source: str) -> Path | None:
    """The header to include in place of ``source`` and the entry helpers, precompiled: the
    one on disk where its digest matches, else built now from this process's second library
    of ``source`` on. None where there is none (first library) or it cannot be built."""
    key, header, built = _prefix_files(source)
    with _stats_lock:
        _compiled_sources[source] += 1
        first = _compiled_sources[source] == 1
    if _checked(built):
        return header
    if first:
        return None
    with _lock_for(key), _other_processes_locked_out(built):
        if not _checked(built):  # (built by another thread or process while this one waited)
            try:
                _build_prefix(source, header, built)
            except (OSError, KernelCompileError, subprocess.SubprocessError):
                return None  # the library compiles without it (and says why if it fails)
    return header if _checked(built) else None


def _build_prefix(source: str, header: Path, built: Path) -> None:
    """Write ``header`` and precompile it to ``built`` (with the libraries' options: g++
    uses a precompiled header only for the options it was made with), digest first."""
    header.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(["// generated by infini_cupy.runtime.emulate.build",
                      *_prefix(_include_path(source))]) + "\n"
    if not header.exists() or header.read_text() != text:
        staged = header.with_name(f".{header.name}.{os.getpid()}")
        staged.write_text(text)
        os.replace(staged, header)
    staged = built.with_name(f".{built.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        cmd = [CXX, *kernel_options(), "-x", "c++-header", "-I", str(kernels_dir()),
               str(header), "-o", str(staged)]
        returncode, output = _run_compiler(cmd)
        if returncode != 0:
            raise KernelCompileError(CXX, [str(header)], kernel_options(), output, text)
        digest = _digest_file(built)
        staged_digest = digest.with_name(f".{digest.name}.{os.getpid()}")
        staged_digest.write_text(hashlib.sha256(staged.read_bytes()).hexdigest() + "\n")
        os.replace(staged_digest, digest)
        os.replace(staged, built)
    finally:
        with contextlib.suppress(OSError):
            staged.unlink()
    _count("prefix built")


def forget_prefixes() -> None:
    """Forget the libraries compiled and the headers checked by this process (a test's fresh
    cache directory starts as a new process would)."""
    with _stats_lock:
        _compiled_sources.clear()
        _checked_prefixes.clear()


def _discard_prefix(header: Path) -> None:
    """Delete a precompiled header that failed a compile that works without it."""
    built = header.with_name(header.name + ".gch")
    with _stats_lock:
        _checked_prefixes.difference_update({s for s in _checked_prefixes if s[0] == str(built)})
    with contextlib.suppress(OSError):
        built.unlink()
    _count("prefix discarded")


def kernel_library(source: str, names: tuple[str, ...]):
    """Load (building if needed) the library of ``names``.

    Returns {name: (entry address, parameter sizes, the ctypes library keeping it alive)}.
    """
    runtime_library()
    key, path, meta = library_file(source, names)
    include = _include_path(source)
    text = _wrapper(include, names)

    built = []  # this call's own builds (the logged "compiled" or "disk cache")

    def build():
        built.append(True)
        numbered_source = f"{numbered(read_source(source))}\n---- wrapper:\n{numbered(text)}"
        prefix = _precompiled_prefix(source)
        if prefix is not None:
            try:
                _compile(_wrapper(include, names, prefix), path,
                         (*kernel_options(), "-I", str(prefix.parent)), names,
                         numbered_source, meta)
                return
            except KernelCompileError:  # the header's fault only if the plain compile works
                pass
        _compile(text, path, kernel_options(), names, numbered_source, meta)
        if prefix is not None:
            _discard_prefix(prefix)

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
