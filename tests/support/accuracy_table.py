"""``docs/user/accuracy.json`` as the tests read it: which column is this machine's.

The ``cpu`` device computes with NumPy, whose float32 and float64 transcendental loops are
picked at run time by the CPU: where it has AVX-512 (``AVX512_SKX``: Skylake-X and later
Xeons), NumPy runs its AVX-512 loops (Intel's SVML for most functions), which round
differently from the loops of other x86-64 CPUs (AVX2). The table keeps both: ``cpu`` and
``cpu_avx512``; the emulator's column does not depend on the CPU (g++ and glibc's libm).
Where NumPy runs neither (an x86-64 without AVX2, another architecture), no column is this
machine's: the tests of the ``cpu`` device's rounding skip there.
"""

from __future__ import annotations

import json
from pathlib import Path

TABLE = Path(__file__).resolve().parents[2] / "docs" / "user" / "accuracy.json"
AVX512_COLUMN = "cpu_avx512"


def numpy_loops() -> str | None:
    """The loops this process's NumPy dispatches its float functions to: ``"avx512"``
    (``AVX512_SKX``), ``"avx2"`` (``X86_V3``: AVX2 and FMA3, every x86-64 server since 2013),
    or None for the others (an older x86-64, NumPy's baseline loops, which round otherwise
    again; another architecture; ``NPY_DISABLE_CPU_FEATURES``): not measured in the table."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # another NumPy layout: not the x86-64 wheels the table was measured on
        return None
    if __cpu_features__.get("AVX512_SKX"):
        return "avx512"
    return "avx2" if __cpu_features__.get("X86_V3") else None


def column(device: str) -> str | None:
    """The table's column for ``device`` on this machine (``cpu``: by NumPy's dispatch; None
    where the table has no column for the loops NumPy runs here, :func:`numpy_loops`)."""
    if device != "cpu":
        return device
    return {"avx512": AVX512_COLUMN, "avx2": "cpu"}.get(numpy_loops())


def table() -> dict:
    """The table, read."""
    return json.loads(TABLE.read_text())
