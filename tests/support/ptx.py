"""What the stand-in for CuPy reads from a kernel's PTX: the byte size of each parameter (its
launches are checked against them) and the static shared memory (the opt-in limit is shared
with it).

>>> ptx_parameters(".entry k(\\n .param .u64 p0,\\n .param .align 8 .b8 p1[16]\\n)")
{'k': (8, 16)}
"""

from __future__ import annotations

import re

_ENTRY = re.compile(r"\.entry\s+(\S+)\s*\((.*?)\)", re.S)
# static shared memory: ".shared .align 4 .b8 _ZZ...tile[8192];" (".extern .shared" is dynamic)
_STATIC_SHARED = re.compile(r"^\s*\.shared\s.*?\.b8\s+\S+?\[(\d+)\];", re.M)
# ".param .align 8 .b8 name[16]", ".param .u64 name", ".param .u64 .ptr .align 1 name"
_PARAM = re.compile(r"\.param\b.*?\.[busf](8|16|32|64)\b.*?(?:\[(\d+)\])?$")


def ptx_parameters(ptx: str) -> dict[str, tuple[int, ...]]:
    """``entry name -> byte size of each parameter`` of every kernel in ``ptx``."""
    kernels = {}
    for name, params in _ENTRY.findall(ptx):
        sizes = []
        for param in filter(None, (p.strip() for p in params.split(","))):
            match = _PARAM.match(param)
            if match is None:
                raise ValueError(f"stand-in cannot read PTX parameter {param!r} of {name}")
            bits, count = match.groups()
            sizes.append(int(bits) // 8 * int(count or 1))
        kernels[name] = tuple(sizes)
    return kernels


def static_shared_bytes(ptx: str) -> int:
    """Bytes of statically declared shared memory in ``ptx`` (one kernel per module here)."""
    return sum(int(n) for n in _STATIC_SHARED.findall(ptx))
