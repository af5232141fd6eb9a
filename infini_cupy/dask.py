"""Dask arrays through infini_cupy: ``rearrange``, the elementwise functions, ``astype``,
``where`` and ``matmul`` over a ``dask.array.Array``, each call one blockwise graph layer whose
tasks run our functions on one chunk each (plus one rechunk layer, only when a pattern needs
whole axes in a chunk; ``matmul``'s sum of products after its layer).

Dask plans and runs everything: we only choose chunks and per-chunk functions. Chunks are
whatever the input's are (CuPy chunks: the ``cuda`` backend, one chunk on one GPU per task;
NumPy chunks: the backend in force when the graph is built, re-entered in every task because
a ``backend()`` context does not follow tasks to worker threads or processes).

>>> import numpy as np, dask.array as da
>>> from infini_cupy import dask as xd
>>> x = da.from_array(np.arange(24.0).reshape(2, 3, 4), chunks=(1, 1, 2))
>>> y = xd.rearrange(x, "b h w -> b (w h)")  # h must be whole in a chunk: one rechunk
>>> y.chunks, len(y.dask.layers) - len(x.dask.layers)
(((1, 1), (6, 6)), 2)
>>> bool((y.compute() == np.arange(24.0).reshape(2, 3, 4).transpose(0, 2, 1).reshape(2, 12)).all())
True
>>> xd.add(y, 1).dtype  # Python scalars are weak, as in infini_cupy.add
dtype('float64')
"""

from __future__ import annotations

import functools
import inspect
import math

import numpy as np

try:
    import dask.array as da
    from dask.array.chunk_types import register_chunk_type
    from dask.array.core import broadcast_shapes
    from dask.array.dispatch import concatenate_lookup, percentile_lookup
    from dask.array.utils import meta_from_array
    from dask.base import tokenize
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("infini_cupy.dask needs Dask: pip install 'infini_cupy[dask]'") from e

import infini_cupy as _xp

from .arrays import is_array, type_name

from .elementwise.ops import OPS
from .namespace import patterns
from .namespace.docstrings import dask_elementwise_doc

# The array API standard's elementwise functions, from the op table.
ELEMENTWISE_NAMES = tuple(OPS)


def _check_dask(x, what: str, *, sizes: bool = True) -> None:
    """TypeError for an ``x`` that is no Dask array; ValueError for unknown chunk sizes
    where ``sizes`` (a call that plans by them: chunk by chunk work does not need them)."""
    if not isinstance(x, da.Array):
        raise TypeError(f"infini_cupy.dask.{what} takes a dask.array.Array, got "
                        f"{type_name(x)}; for NumPy or CuPy arrays "
                        f"call infini_cupy.{what}")
    if sizes and any(math.isnan(c) for dim in x.chunks for c in dim):
        raise ValueError(f"infini_cupy.dask.{what}: the input's chunk sizes are unknown "
                         f"(chunks {x.chunks}); call x.compute_chunk_sizes() first")


def _in_backend(backend: str, func, *args, **kwargs):
    """One task, run under the backend captured when the graph was built."""
    with _xp.backend(backend):
        return func(*args, **kwargs)


def _layer(label: str, func, out_ind, args, meta, backend: str, **kwargs):
    """One blockwise layer named ``infini-<label>-<token>`` (a dashboard shows our tasks
    apart from Dask's; the token covers the backend: an emulated and a NumPy graph of the
    same inputs are different computations)."""
    name = f"infini-{label}-{tokenize(label, func, out_ind, args, kwargs, backend)}"
    return da.blockwise(functools.partial(_in_backend, backend, func), out_ind, *args,
                        name=name, meta=meta, dtype=meta.dtype, **kwargs)


# ------------------------------------------------------------------ elementwise and astype
def _map(label: str, func, args):
    """``func(*args)`` chunk by chunk: dask arrays (and NumPy/CuPy arrays, wrapped by Dask)
    broadcast against each other, anything else (Python scalars, None, a dtype) is passed to
    every task as is. The result's dtype and meta come from ``func`` itself on 0-size metas,
    so promotion, weak scalars and bad dtypes are exactly infini_cupy's, raised here."""
    if not any(isinstance(a, da.Array) for a in args):
        given = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"infini_cupy.dask.{label} needs a dask.array.Array argument, got "
                        f"({given}); for NumPy or CuPy arrays call infini_cupy.{label}")
    # NumPy/CuPy arrays and our Arrays beside Dask arrays: one-chunk Dask arrays (an Array
    # passed as is would be broadcast against the 0-size metas and left out of the shape)
    args = [da.asarray(a) if is_array(a) or isinstance(a, _xp.Array) else a for a in args]
    for a in args:
        if isinstance(a, da.Array):
            _check_dask(a, label, sizes=False)  # unknown sizes (x[mask]) as in Dask's own
    shapes = [tuple(a.shape) for a in args if isinstance(a, da.Array)]
    try:
        broadcast_shapes(*shapes)  # Dask's: it takes unknown (nan) lengths
    except ValueError:  # before Dask's blockwise, whose message would be about chunks
        raise ValueError(f"infini_cupy.dask.{label}: operands could not be broadcast together "
                         f"with shapes {' '.join(map(str, shapes))}") from None
    meta = func(*(meta_from_array(a, ndim=a.ndim) if isinstance(a, da.Array) else a
                  for a in args))
    out_ind = tuple(range(meta.ndim))[::-1]  # right-aligned indices: NumPy broadcasting
    pairs = []
    for a in args:
        pairs += [a, out_ind[meta.ndim - a.ndim:]] if isinstance(a, da.Array) else [a, None]
    return _layer(label, func, out_ind, pairs, meta, _xp.get_backend())


def _arity(func) -> int:
    return sum(p.kind is p.POSITIONAL_ONLY for p in inspect.signature(func).parameters.values())


def _make(name: str):
    func = getattr(_xp, name)
    if name == "clip":
        def function(x, /, min=None, max=None):
            return _map(name, func, (x, min, max))
    elif name == "round":  # NumPy's decimals, an extension of ours
        def function(x, /, decimals=0):
            return _map(name, functools.partial(func, decimals=decimals) if decimals else func,
                        (x,))
    elif _arity(func) == 1:
        def function(x, /):
            return _map(name, func, (x,))
    else:
        def function(x1, x2, /):
            return _map(name, func, (x1, x2))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = dask_elementwise_doc(OPS[name])
    return function


globals().update({name: _make(name) for name in ELEMENTWISE_NAMES})


def astype(x, dtype, /, *, copy: bool = True):
    """``x`` as ``dtype``, chunk by chunk through :func:`infini_cupy.astype`.

    One blockwise layer: our cast kernel per chunk (the same dtype with ``copy=True``: our
    copy kernel; with ``copy=False``: ``x`` itself, no layer).

    Parameters
    ----------
    x : dask.array.Array
    dtype : dtype
    copy : bool, default True

    Returns
    -------
    dask.array.Array

    Raises
    ------
    TypeError
        ``x`` not a Dask array, or a dtype the kernels do not hold.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from infini_cupy import dask as xd
    >>> x = da.from_array(np.asarray([1.5, -2.5, 3.0]), chunks=2)
    >>> xd.astype(x, np.int32).compute()
    array([ 1, -2,  3], dtype=int32)
    """
    _check_dask(x, "astype", sizes=False)
    if not copy and np.dtype(dtype) == x.dtype:
        return x
    return _map("astype", _xp.astype, (x, np.dtype(dtype)))


def where(condition, x1, x2, /):
    """``x1`` where ``condition`` is true, else ``x2``, chunk by chunk through
    :func:`infini_cupy.where`.

    One blockwise layer, a task per output chunk: :func:`infini_cupy.where` on one chunk of
    each operand (the chunks' library selects: ``where`` is no kernel of ours outside
    :func:`infini_cupy.fuse` and :func:`infini_cupy.lazy`), broadcast as NumPy does. ``x1``
    and ``x2`` may be Python scalars (weak, as in :func:`infini_cupy.where`); the result's
    dtype is that function's, decided (and bad operands refused) when the graph is built.

    Parameters
    ----------
    condition : dask.array.Array or array
        Of dtype bool.
    x1, x2 : dask.array.Array, array or Python scalar

    Returns
    -------
    dask.array.Array

    Raises
    ------
    TypeError
        No Dask array among the operands, an operand that is neither an array nor a Python
        scalar, or values that do not promote.
    ValueError
        Operands that do not broadcast (naming their shapes).

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from infini_cupy import dask as xd
    >>> x = da.from_array(np.asarray([1.5, -2.5, 3.0, -4.0]), chunks=2)
    >>> xd.where(x > 0, x, 0.0).compute()
    array([1.5, 0. , 3. , 0. ])
    """
    return _map("where", _xp.where, (condition, x1, x2))


# -------------------------------------------------------------------------------- matmul
def _matmul_block(a, b):
    """One pair of chunks' product, the contracted axis kept (length 1) for the sum after."""
    return _xp.expand_dims(_xp.matmul(a, b), axis=-2)


def matmul(x1, x2, /):
    """``x1 @ x2`` over Dask arrays, chunk pair by chunk pair through
    :func:`infini_cupy.matmul`.

    Dask's own graph for it: one blockwise layer of products, a chunk of ``x1`` by a chunk
    of ``x2`` along the contracted axis each, then their sum (``any`` for bool). Dask's
    ``x1 @ x2`` does not take Array chunks: it takes them for CuPy arrays by their type's
    name, and ``cupy.matmul`` refuses them. One-dimensional operands and batch dimensions
    follow the standard's ``matmul``.

    Parameters
    ----------
    x1, x2 : dask.array.Array or array
        At least one a Dask array; neither 0-d.

    Returns
    -------
    dask.array.Array

    Raises
    ------
    TypeError
        No Dask array among the operands.
    ValueError
        A 0-d operand, contracted axes of different lengths or batch axes that do not
        broadcast (naming the shapes).

    Examples
    --------
    >>> import numpy as np, infini_cupy as xp
    >>> from infini_cupy import dask as xd
    >>> h = np.arange(6.0).reshape(2, 3)
    >>> with xp.backend("emulate"):
    ...     d = xd.asarray(h, chunks=(1, 2))
    >>> xd.matmul(d, d.T).compute()
    Array([[ 5., 14.],
           [14., 50.]], device='emulator')
    """
    if not any(isinstance(x, da.Array) for x in (x1, x2)):
        raise TypeError(f"infini_cupy.dask.matmul needs a dask.array.Array argument, got "
                        f"({type(x1).__name__}, {type(x2).__name__}); for NumPy or CuPy "
                        "arrays call infini_cupy.matmul")
    a, b = (x if isinstance(x, da.Array) else da.asarray(x) for x in (x1, x2))
    for x in (a, b):
        _check_dask(x, "matmul")
    if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise ValueError(f"infini_cupy.dask.matmul: shapes {a.shape} and {b.shape} do not "
                         "multiply (the last axis of x1 against the second-to-last of x2, "
                         "neither 0-d)")
    try:  # the batch axes: before Dask's blockwise, whose message would be about chunks
        broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"infini_cupy.dask.matmul: the batch axes of shapes {a.shape} and "
                         f"{b.shape} could not be broadcast together") from None
    x1_vector, x2_vector = a.ndim == 1, b.ndim == 1
    a = a[None, :] if x1_vector else a
    b = b[:, None] if x2_vector else b
    a = a[(None,) * (b.ndim - a.ndim)] if a.ndim < b.ndim else a
    b = b[(None,) * (a.ndim - b.ndim)] if b.ndim < a.ndim else b
    lhs = tuple(range(a.ndim))
    rhs = lhs[:-2] + (lhs[-1], a.ndim)  # x2's rows are x1's contracted axis
    backend = _xp.get_backend()
    meta = _in_backend(backend, _matmul_block, meta_from_array(a, ndim=a.ndim),
                       meta_from_array(b, ndim=b.ndim))
    products = _layer("matmul", _matmul_block, tuple(range(a.ndim + 1)),
                      [a, lhs, b, rhs], meta, backend, concatenate=False,
                      adjust_chunks={lhs[-1]: 1})
    # the products' contracted axis, second to last: one entry per pair of chunks
    out = products.any(axis=-2) if meta.dtype == bool else \
        products.sum(axis=-2, dtype=meta.dtype)
    if x1_vector:
        out = out[..., 0, :]
    return out[..., 0] if x2_vector else out


# ------------------------------------------------------------------------------ rearrange
def _rearrange_block(block, pattern: str, axes: dict):
    # an input axis in no output index arrives as a list of its one chunk (concatenate=False)
    while isinstance(block, list):
        (block,) = block
    return _xp.rearrange(block, pattern, **axes)


def _groups(pattern: str, shape: tuple, axes_lengths: dict):
    """Input and output groups of elementary axis names (the ellipsis expanded) and every
    axis' length; pattern errors name the pattern and the input shape."""
    try:
        recipe = patterns.plan_pattern(pattern, shape, patterns.lengths_key(pattern, axes_lengths))
    except patterns.PatternError as e:
        if str(shape) in str(e):
            raise
        raise type(e)(f"{e} (input shape {shape})") from None
    parsed = patterns.parse_pattern(pattern)
    n_fixed = sum(1 for entry in parsed.left if entry != "...")
    dots = tuple(f"...{i}" for i in range(len(shape) - n_fixed)) if parsed.has_ellipsis else ()

    def expand(side):
        out = []
        for entry in side:
            if entry == "...":
                out += [(name,) for name in dots]
            else:
                out.append(tuple(n for name in entry for n in (dots if name == "..." else (name,))))
        return out

    left, right = expand(parsed.left), expand(parsed.right)
    lengths = dict(recipe.axis_lengths)
    lengths.update({g[0]: n for g, n in zip(left, shape) if len(g) == 1})  # includes the dots
    return left, right, lengths, tuple(recipe.output_shape)


def _lead(group, lengths):
    """The one axis of a group that may stay chunked: its outermost axis not of length 1."""
    return next((name for name in group if lengths[name] != 1), group[-1] if group else None)


def rearrange(x, pattern: str | None = None, /, **axes_lengths):
    """einops' ``rearrange(x, pattern, **axes_lengths)`` of a Dask array.

    One blockwise layer of :func:`infini_cupy.rearrange` per chunk (a view where it can be,
    else one of our copies), after one rechunk only where the pattern needs it:

    - axes merged into one output axis ``(h w)``: all but the outermost must be whole in a
      chunk (they are rechunked to one chunk when they are not);
    - an input axis split ``(h d) -> ...``: its chunks must be multiples of the inner
      lengths (``d``), else it is rechunked to the multiple nearest its chunk size.

    Parameters
    ----------
    x : dask.array.Array or list of them
        A list is stacked on a new first axis, as einops does.
    pattern : str, optional
        Without one: a C-contiguous copy of each chunk.
    **axes_lengths : int
        Lengths of split axes.

    Returns
    -------
    dask.array.Array

    Raises
    ------
    TypeError
        ``x`` not a Dask array, a pattern that is not a str, axis lengths without a pattern.
    ValueError
        A malformed pattern, or one that does not fit ``x``'s shape; when the graph is built.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from infini_cupy import dask as xd
    >>> x = da.from_array(np.arange(12).reshape(3, 4), chunks=(1, 4))
    >>> y = xd.rearrange(x, "h w -> w h")
    >>> y.chunks
    ((4,), (1, 1, 1))
    >>> y.compute()
    array([[ 0,  4,  8],
           [ 1,  5,  9],
           [ 2,  6, 10],
           [ 3,  7, 11]])
    """
    if isinstance(x, (list, tuple)) and x and all(isinstance(a, da.Array) for a in x):
        x = da.stack(x)  # Dask's: one new axis of one-chunk blocks, no copy of ours
    _check_dask(x, "rearrange")
    if pattern is None:
        if axes_lengths:
            raise TypeError("rearrange: axis lengths were given without a pattern")
        return _map("rearrange", _xp.rearrange, (x,))
    if not isinstance(pattern, str):
        raise TypeError(f"rearrange: the pattern must be a str, got {type(pattern).__name__}")
    shape = tuple(x.shape)
    left, right, lengths, out_shape = _groups(pattern, shape, axes_lengths)
    backend = _xp.get_backend()
    meta = meta_from_array(x, ndim=len(out_shape))
    if x.size == 0:  # no data: one task, einops works out the shape
        # the chunks joined by the task (concatenate=True: the chunk type's concatenate, ours
        # for Arrays), not by x.rechunk(-1): Dask's rechunk of a 0-size array makes NumPy
        # chunks whatever the input's type
        new = {x.ndim + j: n for j, n in enumerate(out_shape)}
        return _layer("rearrange", _rearrange_block, tuple(new), [x, tuple(range(x.ndim))],
                      meta, backend, new_axes=new, concatenate=True,
                      pattern=pattern, axes=dict(axes_lengths))

    whole = set()  # axes that must be whole in a chunk: all but the lead of an output group
    for group in right:
        whole.update([name for name in group if lengths[name] != 1][1:])
    leads, inner, rechunk = [], [], {}
    for i, group in enumerate(left):
        lead = _lead(group, lengths)
        after = group[group.index(lead) + 1:] if group else ()
        leads.append(lead)
        inner.append(math.prod(lengths[name] for name in after))
        multiple = shape[i] if lead in whole else inner[i]
        if any(c % multiple for c in x.chunks[i]):
            # keep about the chunk size asked for, rounded to a whole number of multiples
            # (integer arithmetic: this module's round, abs and pow are the elementwise ones)
            rechunk[i] = max(1, (max(x.chunks[i]) + multiple // 2) // multiple) * multiple
    if rechunk:
        x = x.rechunk(rechunk)

    # each output axis takes the block index of the input axis whose lead it starts with
    out_ind, adjust, new = [], {}, {}
    for j, group in enumerate(right):
        lead = _lead(group, lengths)
        if lead is not None and lead in leads:
            i = leads.index(lead)
            scale = math.prod(lengths[name] for name in group[group.index(lead) + 1:])
            out_ind.append(i)
            adjust[i] = tuple(c // inner[i] * scale for c in x.chunks[i])
        else:  # an anonymous 1, or an axis whole in one chunk: one block
            out_ind.append(x.ndim + j)
            new[x.ndim + j] = out_shape[j]
    # per chunk, give every length but the lead's of each composed input axis (it varies)
    block_axes = {name: lengths[name] for group, lead in zip(left, leads) if len(group) > 1
                  for name in group if name != lead}
    return _layer("rearrange", _rearrange_block, tuple(out_ind), [x, tuple(range(x.ndim))],
                  meta, backend, adjust_chunks=adjust, new_axes=new, concatenate=False,
                  pattern=pattern, axes=block_axes)


# ------------------------------------------------------------------ Array chunks
def _to_array_chunk(block):
    return _xp.asarray(block)


def asarray(x, /, *, chunks="auto"):
    """``x`` as a Dask array whose chunks are :class:`infini_cupy.Array`.

    One ``asarray`` per chunk, on the device the backend in force gives NumPy chunks (the
    emulator under ``backend("emulate")``); CuPy chunks stay on their GPU. Our functions here
    and in ``infini_cupy`` keep Array chunks, and ``compute()`` joins them with
    :func:`infini_cupy.concat` into one Array.

    Parameters
    ----------
    x : dask.array.Array, or what ``dask.array.from_array`` takes
        A NumPy/CuPy array, an Array, a nested list, a scalar.
    chunks : optional
        How to cut an ``x`` that is no Dask array (Dask's ``from_array`` chunks).

    Returns
    -------
    dask.array.Array

    Raises
    ------
    TypeError
        An ``x`` whose dtype is neither boolean nor numeric (strings, objects).

    Examples
    --------
    >>> import numpy as np, dask.array as da, infini_cupy as xp
    >>> from infini_cupy import dask as xd
    >>> with xp.backend("emulate"):
    ...     y = xd.add(xd.asarray(np.arange(6.0).reshape(2, 3), chunks=(1, 3)), 1)
    ...     type(y._meta).__name__, y.compute()
    ('Array', Array([[1., 2., 3.],
           [4., 5., 6.]], device='emulator'))
    """
    if not isinstance(x, da.Array):
        x = da.from_array(x, chunks=chunks)
    _check_dask(x, "asarray", sizes=False)
    backend = _xp.get_backend()
    meta = _in_backend(backend, _xp.asarray, meta_from_array(x, ndim=x.ndim))
    return _layer("asarray", _to_array_chunk, tuple(range(x.ndim)), [x, tuple(range(x.ndim))],
                  meta, backend)


def _concatenate_arrays(arrays, axis=0):
    return _xp.concat(list(arrays), axis=axis)


# compute() and rechunking join chunks with the chunk type's concatenate: ours for Arrays
# (NumPy's would turn them into NumPy arrays through __array__).
concatenate_lookup.register(_xp.Array)(_concatenate_arrays)
# da.percentile: per chunk, np.percentile (ours through __array_function__), as for CuPy
percentile_lookup.register(_xp.Array, percentile_lookup.dispatch(np.ndarray))
# An Array beside a Dask array (x + d, x == d, np.add(x, d)): Dask's operators take it as a
# chunk type below theirs, as they take NumPy's and CuPy's, rather than declining (Python's
# TypeError, or identity's False for ==).
register_chunk_type(_xp.Array)


__all__ = ["asarray", "rearrange", "astype", "where", "matmul", *ELEMENTWISE_NAMES]
