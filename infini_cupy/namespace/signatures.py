"""The standard's signatures (2025.12), as data: for every function of the namespace that is
not elementwise, its parameter list and which parameters take arrays.

Copied from the standard's stubs (``array_api_stubs/_2025_12``: annotations dropped,
positional-only ``/`` and keyword-only ``*`` markers kept) with our extensions added: ``out=``
on ``clip``, and the functions that are not in the standard. :mod:`.boundary` compiles each
entry into the public function, so ``inspect.signature`` reports exactly this and the markers
are enforced.

Array parameters: ``x`` a single array (or scalar), ``[arrays]`` a sequence of arrays,
``*arrays`` the ``*args`` of arrays (and dtypes, for ``result_type``), ``?x`` an array or a
sequence of arrays (``rearrange``, which stacks a list as einops does).
"""

from __future__ import annotations

# name -> (parameter list, array parameters)
NAMESPACE = {
    # creation
    "arange": ("start, /, stop=None, step=1, *, dtype=None, device=None", ""),
    "asarray": ("obj, /, *, dtype=None, device=None, copy=None", "?obj"),
    "empty": ("shape, *, dtype=None, device=None", ""),
    "empty_like": ("x, /, *, dtype=None, device=None", "x"),
    "eye": ("n_rows, n_cols=None, /, *, k=0, dtype=None, device=None", ""),
    "from_dlpack": ("x, /, *, device=None, copy=None", "~x"),
    "full": ("shape, fill_value, *, dtype=None, device=None", ""),
    "full_like": ("x, /, fill_value, *, dtype=None, device=None", "x"),
    # start and stop: 0-d Arrays too (unwrapped: NumPy's linspace would dispatch back)
    "linspace": ("start, stop, /, num, *, dtype=None, device=None, endpoint=True",
                 "~start ~stop"),
    "meshgrid": ("*arrays, indexing='xy'", "*arrays"),
    "ones": ("shape, *, dtype=None, device=None", ""),
    "ones_like": ("x, /, *, dtype=None, device=None", "x"),
    "tril": ("x, /, *, k=0", "x"),
    "triu": ("x, /, *, k=0", "x"),
    "zeros": ("shape, *, dtype=None, device=None", ""),
    "zeros_like": ("x, /, *, dtype=None, device=None", "x"),
    # data_type
    "astype": ("x, dtype, /, *, copy=True, device=None", "x"),
    "can_cast": ("from_, to, /", "from_"),
    "finfo": ("type, /", "type"),
    "iinfo": ("type, /", "type"),
    "isdtype": ("dtype, kind", ""),
    "result_type": ("*arrays_and_dtypes", "*arrays_and_dtypes"),
    # elementwise
    "clip": ("x, /, min=None, max=None, *, out=None", "x ~min ~max out"),
    # indexing
    "take": ("x, indices, /, *, axis=None", "x indices"),
    "take_along_axis": ("x, indices, /, *, axis=-1", "x indices"),
    # linear_algebra
    "matmul": ("x1, x2, /", "x1 x2"),
    "matrix_transpose": ("x, /", "x"),
    "tensordot": ("x1, x2, /, *, axes=2", "x1 x2"),
    "vecdot": ("x1, x2, /, *, axis=-1", "x1 x2"),
    # manipulation
    "broadcast_arrays": ("*arrays", "*arrays"),
    "broadcast_shapes": ("*shapes", ""),
    "broadcast_to": ("x, /, shape", "x"),
    "concat": ("arrays, /, *, axis=0", "[arrays]"),
    "expand_dims": ("x, /, axis", "x"),
    "flip": ("x, /, *, axis=None", "x"),
    "moveaxis": ("x, source, destination, /", "x"),
    "permute_dims": ("x, /, axes", "x"),
    "repeat": ("x, repeats, /, *, axis=None", "x ~repeats"),  # a NumPy integer: a count
    "reshape": ("x, /, shape, *, copy=None", "x"),
    "roll": ("x, /, shift, *, axis=None", "x"),
    "squeeze": ("x, /, axis", "x"),
    "stack": ("arrays, /, *, axis=0", "[arrays]"),
    "tile": ("x, repetitions, /", "x"),
    "unstack": ("x, /, *, axis=0", "x"),
    # searching
    "argmax": ("x, /, *, axis=None, keepdims=False", "x"),
    "argmin": ("x, /, *, axis=None, keepdims=False", "x"),
    "count_nonzero": ("x, /, *, axis=None, keepdims=False", "x"),
    "nonzero": ("x, /", "x"),
    "searchsorted": ("x1, x2, /, *, side='left', sorter=None", "x1 x2 sorter"),
    # NumPy scalars: values; where(condition) alone is nonzero(condition), as NumPy's, CuPy's
    # and torch's (scikit-learn's roc_curve calls xp.where(mask)[0])
    "where": ("condition, x1=None, x2=None, /", "condition ~x1 ~x2"),
    # set
    "isin": ("x1, x2, /, *, invert=False", "x1 x2"),
    "unique_all": ("x, /", "x"),
    "unique_counts": ("x, /", "x"),
    "unique_inverse": ("x, /", "x"),
    "unique_values": ("x, /", "x"),
    # sorting
    "argsort": ("x, /, *, axis=-1, descending=False, stable=True", "x"),
    "sort": ("x, /, *, axis=-1, descending=False, stable=True", "x"),
    # statistical
    "cumulative_sum": ("x, /, *, axis=None, dtype=None, include_initial=False", "x"),
    "cumulative_prod": ("x, /, *, axis=None, dtype=None, include_initial=False", "x"),
    "max": ("x, /, *, axis=None, keepdims=False", "x"),
    "mean": ("x, /, *, axis=None, keepdims=False", "x"),
    "min": ("x, /, *, axis=None, keepdims=False", "x"),
    "prod": ("x, /, *, axis=None, dtype=None, keepdims=False", "x"),
    "std": ("x, /, *, axis=None, correction=0.0, keepdims=False", "x"),
    "sum": ("x, /, *, axis=None, dtype=None, keepdims=False", "x"),
    "var": ("x, /, *, axis=None, correction=0.0, keepdims=False", "x"),
    # utility
    "all": ("x, /, *, axis=None, keepdims=False", "x"),
    "any": ("x, /, *, axis=None, keepdims=False", "x"),
    # n and axis also by position, in NumPy's order, as NumPy, CuPy and torch take them
    # (scikit-learn's roc_curve calls xp.diff(fps, 2))
    "diff": ("x, /, n=1, axis=-1, *, prepend=None, append=None", "x prepend append"),
    # not in the standard
    "rearrange": ("x, pattern=None, /, **axes_lengths", "?x"),
    "ascontiguousarray": ("x, /", "x"),
    "to_device": ("x, device, /, *, stream=None", "x"),
    "rearrange_": ("y, x", "y x"),
}

# the functions of the namespace that are also linalg's (matmul, ...) are the same objects
LINALG = {
    "cholesky": ("x, /, *, upper=False", "x"),
    "cross": ("x1, x2, /, *, axis=-1", "x1 x2"),
    "det": ("x, /", "x"),
    "diagonal": ("x, /, *, offset=0", "x"),
    "eig": ("x, /", "x"),
    "eigh": ("x, /", "x"),
    "eigvals": ("x, /", "x"),
    "eigvalsh": ("x, /", "x"),
    "inv": ("x, /", "x"),
    "matrix_norm": ("x, /, *, keepdims=False, ord='fro'", "x"),
    "matrix_power": ("x, n, /", "x"),
    "matrix_rank": ("x, /, *, rtol=None", "x rtol"),
    "outer": ("x1, x2, /", "x1 x2"),
    "pinv": ("x, /, *, rtol=None", "x rtol"),
    "qr": ("x, /, *, mode='reduced'", "x"),
    "slogdet": ("x, /", "x"),
    "solve": ("x1, x2, /", "x1 x2"),
    "svd": ("x, /, *, full_matrices=True", "x"),
    "svdvals": ("x, /", "x"),
    "trace": ("x, /, *, offset=0, dtype=None", "x"),
    "vector_norm": ("x, /, *, axis=None, keepdims=False, ord=2", "x"),
}

FFT = {
    "fft": ("x, /, *, n=None, axis=-1, norm='backward'", "x"),
    "ifft": ("x, /, *, n=None, axis=-1, norm='backward'", "x"),
    "fftn": ("x, /, *, s=None, axes=None, norm='backward'", "x"),
    "ifftn": ("x, /, *, s=None, axes=None, norm='backward'", "x"),
    "rfft": ("x, /, *, n=None, axis=-1, norm='backward'", "x"),
    "irfft": ("x, /, *, n=None, axis=-1, norm='backward'", "x"),
    "rfftn": ("x, /, *, s=None, axes=None, norm='backward'", "x"),
    "irfftn": ("x, /, *, s=None, axes=None, norm='backward'", "x"),
    "hfft": ("x, /, *, n=None, axis=-1, norm='backward'", "x"),
    "ihfft": ("x, /, *, n=None, axis=-1, norm='backward'", "x"),
    "fftfreq": ("n, /, *, d=1.0, dtype=None, device=None", ""),
    "rfftfreq": ("n, /, *, d=1.0, dtype=None, device=None", ""),
    "fftshift": ("x, /, *, axes=None", "x"),
    "ifftshift": ("x, /, *, axes=None", "x"),
}

# always return a new Array: no array argument tells them whether the caller uses Arrays
CREATION = frozenset({
    "arange", "asarray", "empty", "eye", "from_dlpack", "full", "linspace", "ones", "zeros",
    "fftfreq", "rfftfreq",
})
