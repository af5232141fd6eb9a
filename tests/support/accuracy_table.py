"""``docs/user/accuracy.json`` as the tests read it: which column is this machine's.

The ``cpu`` device computes with NumPy, whose float32 and float64 transcendental loops are
picked at run time by the CPU: where it has AVX-512 (``AVX512_SKX``: Skylake-X and later
Xeons), NumPy runs its AVX-512 loops (Intel's SVML for most functions), which round
differently from the loops of other x86-64 CPUs (AVX2). The table keeps both: ``cpu`` and
``cpu_avx512``; the emulator's column does not depend on the CPU (g++ and glibc's libm).
"""

from __future__ import annotations

import json
from pathlib import Path

TABLE = Path(__file__).resolve().parents[2] / "docs" / "user" / "accuracy.json"
AVX512_COLUMN = "cpu_avx512"


def numpy_runs_avx512() -> bool:
    """Whether this process's NumPy dispatches to its AVX-512 (``AVX512_SKX``) loops."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # another NumPy layout: not the x86-64 wheels the table was measured on
        return False
    return bool(__cpu_features__.get("AVX512_SKX"))


def column(device: str) -> str:
    """The table's column for ``device`` on this machine (``cpu``: by NumPy's dispatch)."""
    return AVX512_COLUMN if device == "cpu" and numpy_runs_avx512() else device


def table() -> dict:
    """The table, read."""
    return json.loads(TABLE.read_text())
