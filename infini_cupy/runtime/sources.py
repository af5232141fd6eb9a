"""Kernel sources: where ``kernels_src/`` is, and each file read once per version (an edit,
say the fix after a failed compile, is seen by the next compile of the same process).

An installed wheel carries the sources as ``infini_cupy/kernels_src``; a checkout (or an
editable install) has them at the top of the repository beside the package.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # infini_cupy/


@functools.lru_cache(maxsize=None)
def kernels_dir() -> Path:
    for candidate in (_PACKAGE_DIR / "kernels_src", _PACKAGE_DIR.parent / "kernels_src"):
        if (candidate / "common.cuh").is_file():
            return candidate
    raise FileNotFoundError(
        f"kernels_src/ not found beside {_PACKAGE_DIR}; the package is installed incompletely"
    )


def _stamp(path: Path) -> tuple[int, int, int]:
    """What changes when a file is edited or replaced: the caches below are keyed on it, so
    a kernel fixed after a failed compile is what the next compile in this process sees."""
    st = path.stat()
    return st.st_mtime_ns, st.st_size, st.st_ino


def _header_stamps() -> tuple:
    return tuple(
        (path.relative_to(kernels_dir()).as_posix(), _stamp(path))
        for path in sorted(kernels_dir().rglob("*"))
        if path.suffix in (".cuh", ".h", ".cpp") and path.is_file()
    )


@functools.lru_cache(maxsize=None)
def _read_text(path: str, stamp: tuple) -> str:
    return Path(path).read_text()


def read_source(name: str) -> str:
    """The text of ``kernels_src/<name>`` (or of an absolute path), read again only when the
    file changed."""
    path = kernels_dir() / name
    return _read_text(str(path), _stamp(path))


def include_dirs() -> tuple[str, ...]:
    """Directories both compilers search for ``#include "..."``."""
    return (str(kernels_dir()),)


def source_digest(name: str) -> str:
    """A hash of a source and every header beside it, for on-disk caches.

    Headers are included by name, so any change below kernels_src/ invalidates the cache.
    """
    return _digest(name, _stamp(kernels_dir() / name), _header_stamps())


@functools.lru_cache(maxsize=None)
def _digest(name: str, stamp: tuple, headers: tuple) -> str:
    h = hashlib.sha256(read_source(name).encode())
    for rel, _ in headers:
        h.update(rel.encode())
        h.update((kernels_dir() / rel).read_bytes())
    return h.hexdigest()[:24]


def numbered(source: str) -> str:
    """Source text with line numbers, for compile-error messages."""
    return "\n".join(f"{i:5d}  {line}" for i, line in enumerate(source.splitlines(), 1))


_INCLUDE_PREFIX = '#include "'


def expanded_source(name: str) -> str:
    """``name`` with our own ``#include "..."`` headers pasted in, each once.

    NVRTC then needs no include path, and CuPy's kernel cache (keyed on the code it is given)
    sees header edits. The emulation shim is only included under INFINI_EMULATION and is
    left out here.
    """
    return _expanded(name, _stamp(kernels_dir() / name), _header_stamps())


@functools.lru_cache(maxsize=None)
def _expanded(name: str, stamp: tuple, headers: tuple) -> str:
    seen: set[str] = set()

    def expand(rel: str) -> list[str]:
        if rel in seen:
            return []
        seen.add(rel)
        out = []
        for line in read_source(rel).splitlines():
            stripped = line.strip()
            if stripped == "#pragma once":
                continue
            if stripped.startswith(_INCLUDE_PREFIX):
                header = stripped[len(_INCLUDE_PREFIX):].split('"', 1)[0]
                if not header.startswith("emulation/"):
                    out.append(f"// ---- {header}")
                    out.extend(expand(header))
                    out.append(f"// ---- end {header}")
                    continue
            out.append(line)
        return out

    return "\n".join(expand(name)) + "\n"
