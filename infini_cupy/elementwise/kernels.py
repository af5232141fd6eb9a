"""Name expressions of the elementwise kernels: every one the engine can request, built from
the op table.

A variant is (functor, output C type, input C type, layout):

- ``contig``: ``ew_contig<Op, Tout, Tin>``, every array operand C-contiguous, same shape;
- ``strided``: ``ew_strided<Op, Tout, Tin, NDIM, Index>`` for NDIM = 2 or 3 coalesced dims
  (one strided dim is padded to two: a division per element is nothing next to a strided
  access, and it saves a variant per signature; longer layouts loop over their leading dims
  on the host). Index is always ``int``: a layout whose byte offsets do not fit in 31 bits is
  split on the host into launches that do (the kernel template still takes the index type,
  so a 64-bit matrix can be added without touching the kernels);
- ``tiled``: ``ew_tiled<Op, Tout, Tin, Staged>``, input ``Staged`` laid out across the walk,
  read through a shared-memory tile, and ``ew_tiled_out<Op, Tout, Tin>``, the output laid
  out across it, written through one (:mod:`.tiled_plan`).

>>> contig_name("ic::OpAdd", "float", "float")
'ew_contig<ic::OpAdd, float, float>'
>>> strided_name("ic::OpLess", "bool", "int8_t", 3, "int")
'ew_strided<ic::OpLess, bool, int8_t, 3, int>'
"""

from __future__ import annotations

import functools

from .. import dtypes
from .ops import CAST_FUNCTOR, OPS
from .resolution import loop_dtypes, result_of_loop

SOURCE = "elementwise.cu"
STRIDED_NDIMS = (2, 3)
MAX_STRIDED_NDIM = STRIDED_NDIMS[-1]
INDEX_CTYPE = "int"


def contig_name(functor: str, out_ctype: str, in_ctype: str) -> str:
    return f"ew_contig<{functor}, {out_ctype}, {in_ctype}>"


def strided_name(functor: str, out_ctype: str, in_ctype: str, ndim: int, index_ctype: str) -> str:
    return f"ew_strided<{functor}, {out_ctype}, {in_ctype}, {ndim}, {index_ctype}>"


def tiled_name(functor: str, out_ctype: str, in_ctype: str, staged: int) -> str:
    """The tiled kernel reading input ``staged`` through its tile; -1: writing the output."""
    if staged < 0:
        return f"ew_tiled_out<{functor}, {out_ctype}, {in_ctype}>"
    return f"ew_tiled<{functor}, {out_ctype}, {in_ctype}, {staged}>"


def strided_bucket(ndim: int) -> int:
    """The smallest compiled NDIM >= ``ndim`` (padding dims have length 1)."""
    for n in STRIDED_NDIMS:
        if n >= ndim:
            return n
    raise ValueError(f"no strided kernel for {ndim} dims")


def layout_names(functor: str, out_ctype: str, in_ctype: str, arity: int = 1) -> tuple[str, ...]:
    """Every layout variant of one (functor, dtypes) signature of ``arity`` inputs."""
    names = [contig_name(functor, out_ctype, in_ctype)]
    names += [strided_name(functor, out_ctype, in_ctype, n, INDEX_CTYPE) for n in STRIDED_NDIMS]
    names += [tiled_name(functor, out_ctype, in_ctype, k) for k in range(-1, arity)]
    return tuple(names)


def op_signatures(op_name: str) -> tuple[tuple[str, str, str], ...]:
    """(functor, out ctype, in ctype) for every input dtype the op accepts."""
    op = OPS[op_name]
    return tuple((op.functor, dtypes.ctype(result_of_loop(op.name, dt)), dtypes.ctype(dt))
                 for dt in loop_dtypes(op.name))


def cast_signatures() -> tuple[tuple[str, str, str], ...]:
    """Every (dst, src) pair of supported dtypes: promotion before a kernel, astype, and the
    same-dtype copy into an ``out=`` that overlaps an input."""
    return tuple((CAST_FUNCTOR, dtypes.ctype(dst), dtypes.ctype(src))
                 for src in dtypes.ALL_DTYPES for dst in dtypes.ALL_DTYPES)


def cast_layout_names(functor: str, out_ctype: str, in_ctype: str) -> tuple[str, ...]:
    """Casts compile fewer layouts: contiguous, the widest strided NDIM, and tiled."""
    return (contig_name(functor, out_ctype, in_ctype),
            strided_name(functor, out_ctype, in_ctype, MAX_STRIDED_NDIM, INDEX_CTYPE),
            tiled_name(functor, out_ctype, in_ctype, 0),
            tiled_name(functor, out_ctype, in_ctype, -1))


def op_variant_names(op_name: str) -> tuple[str, ...]:
    return tuple(n for sig in op_signatures(op_name)
                 for n in layout_names(*sig, OPS[op_name].arity))


def cast_variant_names() -> tuple[str, ...]:
    return tuple(n for sig in cast_signatures() for n in cast_layout_names(*sig))


@functools.lru_cache(maxsize=None)
def all_names() -> tuple[str, ...]:
    """Every name expression of elementwise.cu the engine can request."""
    names = [n for op in OPS for n in op_variant_names(op)]
    names += cast_variant_names()
    return tuple(dict.fromkeys(names))

