"""The compiled hot path (``hot_calls.c``, with ``compiled_launch.c``, the compiled launch
mechanism's part, ``hot_arrays.c``, what both read and make of Arrays, ``cpu_calls.c``, the
cpu device's repeats, ``float_range.c``, the range check of its float -> integer casts,
``lazy_calls.c``, ``lazy()``'s deferred calls of a chain seen before, and their headers):
built once per machine and Python by the emulator's g++ into one extension module, cached
under ``$INFINI_CUPY_CACHE_DIR/native``.

Python's bytecode alone cannot take a repeated elementwise call below about 1.6 times a plain
``np.add`` (docs/dev/hot_path.md); ``hot_calls.c`` does the same steps as the Python hot path
in C. It is optional: where it cannot be built (no g++, no ``Python.h``, a free-threaded
Python, Windows) or with ``INFINI_CUPY_NATIVE=0``, :func:`hot_calls` is None and the Python
path runs alone. Either way the same plans decide every call.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path

from .. import config
from .emulate.build import CXX

SOURCES = tuple(Path(__file__).with_name(name)
                for name in ("hot_calls.c", "compiled_launch.c", "hot_arrays.c", "cpu_calls.c",
                             "float_range.c", "lazy_calls.c"))
HEADERS = tuple(Path(__file__).with_name(name)
                for name in ("compiled_launch.h", "hot_arrays.h", "cpu_calls.h", "float_range.h",
                                       "lazy_calls.h"))
MODULE = "hot_calls"  # PyInit_hot_calls, its one exported symbol (-fvisibility=hidden)
# g++ compiles them as C (-x c before each: g++ takes a later .c file as C++ otherwise): the
# one compiler the emulator already needs.
OPTIONS = ("-O2", "-fPIC", "-shared", "-fno-strict-aliasing", "-fvisibility=hidden")
LANGUAGE = ("-x", "c")
LIBRARIES = ("-lm",)  # float_range.c's nextafterf: libm, named rather than assumed loaded
COMPILE_TIMEOUT_S = 120.0
# After the library's bytes: this, then their sha256. A truncated file (an interrupted copy
# or untar of a prepared cache, a full disk) is mapped by dlopen all the same, and the
# process dies of SIGBUS at its first page past the end, which no Python code can catch.
SEAL = b"ICHOTSO1"
_SEAL_LEN = len(SEAL) + 32

_log = logging.getLogger("infini_cupy")
_lock = threading.Lock()
_loaded: list = []  # [module or None] once tried in this process


def enabled() -> bool:
    """False under ``INFINI_CUPY_NATIVE=0``: the Python hot path alone."""
    return config.env_switch(config.NATIVE_VAR, True)


def _unsupported() -> str | None:
    """Why no build of hot_calls.c can run in this interpreter, or None."""
    if sys.platform == "win32":
        return "Windows"
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        return "a free-threaded Python"
    if sys.implementation.name != "cpython":
        return sys.implementation.name
    return None


def _unbuildable() -> str | None:
    """Why it cannot be built here, or None (a cached build loads without g++)."""
    if shutil.which(CXX) is None:
        return f"no {CXX}"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python.h (install the Python development headers)"
    return None


def library_path(cache_dir: Path | None = None, suffix: str | None = None) -> Path:
    """Where this Python's build of the current source is cached (in ``cache_dir``, else
    ``$INFINI_CUPY_CACHE_DIR``; ``suffix``: another Python's ``EXT_SUFFIX``)."""
    digest = hashlib.sha256()
    for path in (*SOURCES, *HEADERS):
        digest.update(path.read_bytes())
    digest.update(" ".join((*OPTIONS, *LANGUAGE, *LIBRARIES)).encode() + SEAL)
    # the suffix names the ABI (cpython-311-x86_64-linux-gnu): builds of one version share it
    suffix = suffix or sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return ((cache_dir or config.cache_dir()) / "native"
            / f"{MODULE}-{digest.hexdigest()[:16]}{suffix}")


def build_for(python: str, cache_dir: Path) -> Path:
    """Build for the interpreter ``python`` (another version's, whose headers this machine
    has) into ``cache_dir``: what ``warmup --native-python`` carries to a GPU machine that
    lacks g++ or ``Python.h``. Returns the file's path."""
    query = ("import json, sysconfig; print(json.dumps([sysconfig.get_paths()['include'], "
             "sysconfig.get_config_var('EXT_SUFFIX'), "
             "bool(sysconfig.get_config_var('Py_GIL_DISABLED'))]))")
    done = subprocess.run([python, "-c", query], capture_output=True, text=True, check=True,
                          timeout=COMPILE_TIMEOUT_S)
    include, suffix, free_threaded = json.loads(done.stdout)
    if free_threaded or not (Path(include) / "Python.h").exists():
        raise RuntimeError(f"{python}: " + ("a free-threaded Python" if free_threaded else
                                             f"no Python.h in {include}"))
    path = library_path(cache_dir, suffix)
    _build(path, include)
    return path


def _build(path: Path, include: str | None = None) -> None:
    """Compile (against ``include``, else this Python's headers) to a temporary name and
    rename into place: a process never loads half a file, and two processes building at once
    each rename a whole one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        include = include or sysconfig.get_paths()["include"]
        sources = [part for source in SOURCES for part in (*LANGUAGE, str(source))]
        command = [CXX, *OPTIONS, f"-I{include}", *sources, *LIBRARIES, "-o", tmp]
        if sys.platform == "darwin":
            command.insert(-2, "-undefined")
            command.insert(-2, "dynamic_lookup")
        subprocess.run(command, capture_output=True, text=True, check=True,
                       timeout=COMPILE_TIMEOUT_S)
        with open(tmp, "r+b") as built:
            body = built.read()
            built.write(SEAL + hashlib.sha256(body).digest())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _sealed(path: Path) -> bool:
    """Whether ``path`` ends with :data:`SEAL` and the sha256 of the bytes before it: the
    whole library :func:`_build` wrote, nothing cut off or changed."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    body, seal = data[:-_SEAL_LEN], data[-_SEAL_LEN:]
    return (len(data) > _SEAL_LEN and seal[:len(SEAL)] == SEAL
            and seal[len(SEAL):] == hashlib.sha256(body).digest())


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(MODULE, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def status() -> str:
    """What this process does for repeated calls, in words (``show_config``), without
    building anything."""
    if not enabled():
        return f"off ({config.NATIVE_VAR}={os.environ[config.NATIVE_VAR]}): the Python hot path"
    reason = _unsupported()
    if reason is None:
        path = library_path()
        if path.exists():
            return f"compiled ({path})"
        reason = _unbuildable()
        if reason is None:
            return "compiled at the first repeated call (g++ and Python.h found)"
    return f"not available ({reason}): the Python hot path"


def hot_calls():
    """The compiled module (``binary``, ``unary``, ``configure``), built on first use, or
    None where it cannot be (the reason is logged once, at INFO)."""
    if _loaded:
        return _loaded[0]
    with _lock:
        if not _loaded:
            _loaded.append(_try_load())
    return _loaded[0]


def loaded():
    """The compiled module if this process has loaded it, else None (nothing is built)."""
    return _loaded[0] if _loaded else None


def _try_load():
    if not enabled():
        return None
    reason = _unsupported()
    if reason is None:
        path = library_path()
        try:
            if path.exists() and not _sealed(path):
                _log.info("the compiled hot path's file %s is damaged: built again", path)
                path.unlink()  # (a cache that cannot be written: the Python hot path)
            if not path.exists():
                reason = _unbuildable()
                if reason is None:
                    _build(path)
            if reason is None:
                return _load(path)
        except (OSError, ImportError, subprocess.SubprocessError) as e:
            reason = f"{type(e).__name__}: {e}"
    _log.info("the compiled hot path is not used (%s): the Python hot path runs", reason)
    return None
