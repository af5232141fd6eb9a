"""The examples of the functions the namespace delegates to NumPy or CuPy (and of ``clip``,
``finfo``, ``iinfo``, ``diff``, ``from_dlpack``, the creation functions): doctest lines, run by
``pytest --doctest-modules`` from ``infini_cupy`` (``linalg`` and ``fft`` from
:mod:`.docstrings`'s ``__test__``). :func:`.docstrings.install` appends each, after
``>>> import infini_cupy as xp``, as the function's numpydoc "Examples" section.

The printed results are literals pasted from a run (nothing is computed at import). The
inputs keep them exact and the same with every BLAS and LAPACK: small integers, diagonal and
triangular matrices, powers of two; where a factorization's signs are LAPACK's choice
(``qr``, ``svd``, ``eig``'s vectors) the example shows shapes and the rounded product, not
the factors.
"""

from __future__ import annotations

EXAMPLES: dict[str, str] = {
    "arange": """\
>>> xp.arange(4, device="cpu")
Array([0, 1, 2, 3], device='cpu')
>>> xp.arange(0.0, 1.0, 0.25, device="cpu")
Array([0.  , 0.25, 0.5 , 0.75], device='cpu')
""",
    "argmax": """\
>>> x = xp.asarray([[1, 5, 2], [7, 0, 3]], device="cpu")
>>> xp.argmax(x)
Array(3, device='cpu')
>>> xp.argmax(x, axis=1)
Array([1, 0], device='cpu')
""",
    "argmin": """\
>>> x = xp.asarray([[1, 5, 2], [7, 0, 3]], device="cpu")
>>> xp.argmin(x)
Array(4, device='cpu')
>>> xp.argmin(x, axis=0)
Array([0, 1, 0], device='cpu')
""",
    "argsort": """\
>>> x = xp.asarray([3, 1, 2], device="cpu")
>>> xp.argsort(x)
Array([1, 2, 0], device='cpu')
>>> xp.argsort(x, descending=True)
Array([0, 2, 1], device='cpu')
""",
    "broadcast_arrays": """\
>>> a = xp.asarray([[1], [2]], device="cpu")
>>> b = xp.asarray([10, 20, 30], device="cpu")
>>> p, q = xp.broadcast_arrays(a, b)
>>> p.shape, q.shape
((2, 3), (2, 3))
>>> q
Array([[10, 20, 30],
       [10, 20, 30]], device='cpu')
""",
    "broadcast_to": """\
>>> x = xp.asarray([1, 2, 3], device="cpu")
>>> xp.broadcast_to(x, (2, 3))
Array([[1, 2, 3],
       [1, 2, 3]], device='cpu')
""",
    "can_cast": """\
>>> xp.can_cast(xp.int8, xp.int16)
True
>>> xp.can_cast(xp.float64, xp.int64)
False
>>> xp.can_cast(xp.asarray([1, 2], dtype=xp.uint8, device="cpu"), xp.int16)
True
""",
    "count_nonzero": """\
>>> x = xp.asarray([[0, 1, 2], [3, 0, 0]], device="cpu")
>>> xp.count_nonzero(x)
Array(3, device='cpu')
>>> xp.count_nonzero(x, axis=1)
Array([2, 1], device='cpu')
""",
    "cumulative_prod": """\
>>> x = xp.asarray([1, 2, 3, 4], device="cpu")
>>> xp.cumulative_prod(x)
Array([ 1,  2,  6, 24], device='cpu')
""",
    "cumulative_sum": """\
>>> x = xp.asarray([1, 2, 3, 4], device="cpu")
>>> xp.cumulative_sum(x)
Array([ 1,  3,  6, 10], device='cpu')
>>> xp.cumulative_sum(x, include_initial=True)
Array([ 0,  1,  3,  6, 10], device='cpu')
""",
    "diff": """\
>>> x = xp.asarray([1, 4, 9, 16], device="cpu")
>>> xp.diff(x)
Array([3, 5, 7], device='cpu')
>>> xp.diff(x, n=2)
Array([2, 2], device='cpu')
""",
    "empty": """\
>>> x = xp.empty((2, 3), device="cpu")
>>> x.shape, x.dtype
((2, 3), dtype('float64'))
""",
    "empty_like": """\
>>> x = xp.asarray([[1, 2, 3]], dtype=xp.int8, device="cpu")
>>> y = xp.empty_like(x)
>>> y.shape, y.dtype, y.device
((1, 3), dtype('int8'), Device('cpu'))
""",
    "expand_dims": """\
>>> x = xp.asarray([1, 2], device="cpu")
>>> xp.expand_dims(x, axis=0)
Array([[1, 2]], device='cpu')
>>> xp.expand_dims(x, axis=-1).shape
(2, 1)
""",
    "eye": """\
>>> xp.eye(2, device="cpu")
Array([[1., 0.],
       [0., 1.]], device='cpu')
>>> xp.eye(2, 3, k=1, dtype=xp.int8, device="cpu")
Array([[0, 1, 0],
       [0, 0, 1]], dtype=int8, device='cpu')
""",
    "finfo": """\
>>> xp.finfo(xp.float32).eps
1.1920928955078125e-07
>>> xp.finfo(xp.float64).bits
64
>>> xp.finfo(xp.complex64).dtype
dtype('float32')
""",
    "iinfo": """\
>>> xp.iinfo(xp.int8).min, xp.iinfo(xp.int8).max
(-128, 127)
>>> xp.iinfo(xp.uint16).max
65535
""",
    "flip": """\
>>> x = xp.asarray([[1, 2], [3, 4]], device="cpu")
>>> xp.flip(x)
Array([[4, 3],
       [2, 1]], device='cpu')
>>> xp.flip(x, axis=1)
Array([[2, 1],
       [4, 3]], device='cpu')
""",
    "from_dlpack": """\
>>> x = xp.asarray([1, 2, 3], device="cpu")
>>> xp.from_dlpack(x)
Array([1, 2, 3], device='cpu')
""",
    "full": """\
>>> xp.full((2, 2), 7, device="cpu")
Array([[7, 7],
       [7, 7]], device='cpu')
>>> xp.full(3, 0.5, dtype=xp.float32, device="cpu")
Array([0.5, 0.5, 0.5], dtype=float32, device='cpu')
""",
    "isdtype": """\
>>> xp.isdtype(xp.int8, "integral")
True
>>> xp.isdtype(xp.float32, ("integral", "complex floating"))
False
""",
    "isin": """\
>>> x = xp.asarray([1, 2, 3, 4], device="cpu")
>>> xp.isin(x, xp.asarray([2, 4], device="cpu"))
Array([False,  True, False,  True], device='cpu')
""",
    "linspace": """\
>>> xp.linspace(0, 1, 5, device="cpu")
Array([0.  , 0.25, 0.5 , 0.75, 1.  ], device='cpu')
>>> xp.linspace(0, 1, 4, endpoint=False, device="cpu")
Array([0.  , 0.25, 0.5 , 0.75], device='cpu')
""",
    "matmul": """\
>>> a = xp.asarray([[1, 2], [3, 4]], device="cpu")
>>> b = xp.asarray([[5], [6]], device="cpu")
>>> xp.matmul(a, b)
Array([[17],
       [39]], device='cpu')
""",
    "matrix_transpose": """\
>>> x = xp.asarray([[1, 2, 3], [4, 5, 6]], device="cpu")
>>> xp.matrix_transpose(x)
Array([[1, 4],
       [2, 5],
       [3, 6]], device='cpu')
""",
    "max": """\
>>> x = xp.asarray([[1, 5, 2], [7, 0, 3]], device="cpu")
>>> xp.max(x)
Array(7, device='cpu')
>>> xp.max(x, axis=0)
Array([7, 5, 3], device='cpu')
""",
    "min": """\
>>> x = xp.asarray([[1, 5, 2], [7, 0, 3]], device="cpu")
>>> xp.min(x)
Array(0, device='cpu')
>>> xp.min(x, axis=1, keepdims=True)
Array([[1],
       [0]], device='cpu')
""",
    "meshgrid": """\
>>> a = xp.asarray([1, 2, 3], device="cpu")
>>> b = xp.asarray([10, 20], device="cpu")
>>> X, Y = xp.meshgrid(a, b)
>>> X
Array([[1, 2, 3],
       [1, 2, 3]], device='cpu')
>>> Y
Array([[10, 10, 10],
       [20, 20, 20]], device='cpu')
""",
    "moveaxis": """\
>>> x = xp.zeros((2, 3, 4), device="cpu")
>>> xp.moveaxis(x, 0, -1).shape
(3, 4, 2)
""",
    "nonzero": """\
>>> x = xp.asarray([0, 3, 0, 5], device="cpu")
>>> xp.nonzero(x)
(Array([1, 3], device='cpu'),)
""",
    "ones": """\
>>> xp.ones(3, device="cpu")
Array([1., 1., 1.], device='cpu')
>>> xp.ones((2, 2), dtype=xp.int8, device="cpu")
Array([[1, 1],
       [1, 1]], dtype=int8, device='cpu')
""",
    "ones_like": """\
>>> x = xp.asarray([[1, 2, 3]], dtype=xp.int8, device="cpu")
>>> xp.ones_like(x)
Array([[1, 1, 1]], dtype=int8, device='cpu')
""",
    "permute_dims": """\
>>> x = xp.asarray([[1, 2, 3], [4, 5, 6]], device="cpu")
>>> xp.permute_dims(x, (1, 0))
Array([[1, 4],
       [2, 5],
       [3, 6]], device='cpu')
>>> xp.permute_dims(xp.zeros((2, 3, 4), device="cpu"), (2, 0, 1)).shape
(4, 2, 3)
""",
    "prod": """\
>>> x = xp.asarray([[1, 2], [3, 4]], device="cpu")
>>> xp.prod(x)
Array(24, device='cpu')
>>> xp.prod(x, axis=1)
Array([ 2, 12], device='cpu')
""",
    "result_type": """\
>>> xp.result_type(xp.int8, xp.uint8)
dtype('int16')
>>> xp.result_type(xp.float32, 1.0)
dtype('float32')
>>> xp.result_type(xp.asarray([1], dtype=xp.int16, device="cpu"), xp.float32)
dtype('float32')
""",
    "searchsorted": """\
>>> x1 = xp.asarray([1, 3, 5, 7], device="cpu")
>>> x2 = xp.asarray([4, 5], device="cpu")
>>> xp.searchsorted(x1, x2)
Array([2, 2], device='cpu')
>>> xp.searchsorted(x1, x2, side="right")
Array([2, 3], device='cpu')
""",
    "sort": """\
>>> x = xp.asarray([3, 1, 2], device="cpu")
>>> xp.sort(x)
Array([1, 2, 3], device='cpu')
>>> xp.sort(x, descending=True)
Array([3, 2, 1], device='cpu')
""",
    "sum": """\
>>> x = xp.asarray([[1, 2], [3, 4]], device="cpu")
>>> xp.sum(x)
Array(10, device='cpu')
>>> xp.sum(x, axis=0)
Array([4, 6], device='cpu')
>>> xp.sum(xp.asarray([100, 100], dtype=xp.int8, device="cpu")).dtype
dtype('int64')
""",
    "take": """\
>>> x = xp.asarray([10, 20, 30], device="cpu")
>>> xp.take(x, xp.asarray([2, 0], device="cpu"))
Array([30, 10], device='cpu')
""",
    "take_along_axis": """\
>>> x = xp.asarray([[10, 30, 20], [60, 40, 50]], device="cpu")
>>> xp.take_along_axis(x, xp.argsort(x, axis=1), axis=1)
Array([[10, 20, 30],
       [40, 50, 60]], device='cpu')
""",
    "tensordot": """\
>>> a = xp.asarray([[1, 2], [3, 4]], device="cpu")
>>> b = xp.asarray([[1, 0], [0, 1]], device="cpu")
>>> xp.tensordot(a, b, axes=1)
Array([[1, 2],
       [3, 4]], device='cpu')
>>> xp.tensordot(a, b, axes=2)
Array(5, device='cpu')
""",
    "tril": """\
>>> x = xp.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]], device="cpu")
>>> xp.tril(x)
Array([[1, 0, 0],
       [4, 5, 0],
       [7, 8, 9]], device='cpu')
>>> xp.tril(x, k=-1)
Array([[0, 0, 0],
       [4, 0, 0],
       [7, 8, 0]], device='cpu')
""",
    "triu": """\
>>> x = xp.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]], device="cpu")
>>> xp.triu(x)
Array([[1, 2, 3],
       [0, 5, 6],
       [0, 0, 9]], device='cpu')
>>> xp.triu(x, k=1)
Array([[0, 2, 3],
       [0, 0, 6],
       [0, 0, 0]], device='cpu')
""",
    "unique_all": """\
>>> x = xp.asarray([3, 1, 3, 2, 1], device="cpu")
>>> u = xp.unique_all(x)
>>> u.values
Array([1, 2, 3], device='cpu')
>>> u.indices
Array([1, 3, 0], device='cpu')
>>> u.inverse_indices
Array([2, 0, 2, 1, 0], device='cpu')
>>> u.counts
Array([2, 1, 2], device='cpu')
""",
    "unique_counts": """\
>>> x = xp.asarray([3, 1, 3, 2, 1], device="cpu")
>>> values, counts = xp.unique_counts(x)
>>> values
Array([1, 2, 3], device='cpu')
>>> counts
Array([2, 1, 2], device='cpu')
""",
    "unique_inverse": """\
>>> x = xp.asarray([3, 1, 3, 2, 1], device="cpu")
>>> values, inverse = xp.unique_inverse(x)
>>> values
Array([1, 2, 3], device='cpu')
>>> inverse
Array([2, 0, 2, 1, 0], device='cpu')
>>> xp.take(values, inverse)
Array([3, 1, 3, 2, 1], device='cpu')
""",
    "unique_values": """\
>>> x = xp.asarray([3, 1, 3, 2, 1], device="cpu")
>>> xp.unique_values(x)
Array([1, 2, 3], device='cpu')
""",
    "vecdot": """\
>>> a = xp.asarray([[1, 2, 3], [4, 5, 6]], device="cpu")
>>> b = xp.asarray([1, 0, 1], device="cpu")
>>> xp.vecdot(a, b)
Array([ 4, 10], device='cpu')
""",
    "where": """\
>>> x = xp.asarray([1, -2, 3, -4], device="cpu")
>>> xp.where(x > 0, x, 0)
Array([1, 0, 3, 0], device='cpu')
""",
    "zeros": """\
>>> xp.zeros(3, device="cpu")
Array([0., 0., 0.], device='cpu')
>>> xp.zeros((2, 2), dtype=xp.int8, device="cpu")
Array([[0, 0],
       [0, 0]], dtype=int8, device='cpu')
""",
    "zeros_like": """\
>>> x = xp.asarray([[1.5, 2.5]], device="cpu")
>>> xp.zeros_like(x)
Array([[0., 0.]], device='cpu')
>>> xp.zeros_like(x, dtype=xp.int8)
Array([[0, 0]], dtype=int8, device='cpu')
""",
    "clip": """\
>>> x = xp.asarray([0.5, 1.0, 2.5], device="cpu")
>>> xp.clip(x, 1.0, 2.0)
Array([1., 1., 2.], device='cpu')
>>> xp.clip(x, max=1.0)
Array([0.5, 1. , 1. ], device='cpu')
""",
    # infini_cupy.linalg
    "linalg.cholesky": """\
>>> a = xp.asarray([[4.0, 2.0], [2.0, 5.0]], device="cpu")
>>> xp.linalg.cholesky(a)
Array([[2., 0.],
       [1., 2.]], device='cpu')
>>> xp.linalg.cholesky(a, upper=True)
Array([[2., 1.],
       [0., 2.]], device='cpu')
""",
    "linalg.cross": """\
>>> a = xp.asarray([1, 0, 0], device="cpu")
>>> b = xp.asarray([0, 1, 0], device="cpu")
>>> xp.linalg.cross(a, b)
Array([0, 0, 1], device='cpu')
""",
    "linalg.det": """\
>>> a = xp.asarray([[2.0, 1.0], [0.0, 4.0]], device="cpu")
>>> xp.linalg.det(a)
Array(8., device='cpu')
""",
    "linalg.diagonal": """\
>>> x = xp.asarray([[1, 2, 3], [4, 5, 6]], device="cpu")
>>> xp.linalg.diagonal(x)
Array([1, 5], device='cpu')
>>> xp.linalg.diagonal(x, offset=1)
Array([2, 6], device='cpu')
""",
    "linalg.eig": """\
>>> a = xp.asarray([[2.0, 0.0], [0.0, 3.0]], device="cpu")
>>> w = xp.linalg.eig(a)
>>> w.eigenvalues
Array([2.+0.j, 3.+0.j], device='cpu')
>>> w.eigenvectors.shape
(2, 2)
""",
    "linalg.eigh": """\
>>> a = xp.asarray([[3.0, 0.0], [0.0, 2.0]], device="cpu")
>>> w = xp.linalg.eigh(a)
>>> w.eigenvalues
Array([2., 3.], device='cpu')
>>> w.eigenvectors.shape
(2, 2)
""",
    "linalg.eigvals": """\
>>> a = xp.asarray([[2.0, 0.0], [0.0, 3.0]], device="cpu")
>>> xp.linalg.eigvals(a)
Array([2.+0.j, 3.+0.j], device='cpu')
""",
    "linalg.eigvalsh": """\
>>> a = xp.asarray([[3.0, 0.0], [0.0, 2.0]], device="cpu")
>>> xp.linalg.eigvalsh(a)
Array([2., 3.], device='cpu')
""",
    "linalg.inv": """\
>>> a = xp.asarray([[2.0, 0.0], [0.0, 4.0]], device="cpu")
>>> xp.linalg.inv(a)
Array([[0.5 , 0.  ],
       [0.  , 0.25]], device='cpu')
""",
    "linalg.matrix_norm": """\
>>> a = xp.asarray([[3.0, 0.0], [0.0, 4.0]], device="cpu")
>>> xp.linalg.matrix_norm(a)
Array(5., device='cpu')
>>> xp.linalg.matrix_norm(a, ord=1)
Array(4., device='cpu')
""",
    "linalg.matrix_power": """\
>>> a = xp.asarray([[1, 1], [0, 1]], device="cpu")
>>> xp.linalg.matrix_power(a, 3)
Array([[1, 3],
       [0, 1]], device='cpu')
""",
    "linalg.matrix_rank": """\
>>> a = xp.asarray([[1.0, 2.0], [2.0, 4.0]], device="cpu")
>>> xp.linalg.matrix_rank(a)
Array(1, device='cpu')
>>> xp.linalg.matrix_rank(xp.eye(3, device="cpu"))
Array(3, device='cpu')
""",
    "linalg.outer": """\
>>> a = xp.asarray([1, 2], device="cpu")
>>> b = xp.asarray([3, 4, 5], device="cpu")
>>> xp.linalg.outer(a, b)
Array([[ 3,  4,  5],
       [ 6,  8, 10]], device='cpu')
""",
    "linalg.pinv": """\
>>> a = xp.asarray([[1.0, 1.0], [1.0, -1.0]], device="cpu")
>>> xp.linalg.pinv(a)
Array([[ 0.5,  0.5],
       [ 0.5, -0.5]], device='cpu')
""",
    "linalg.qr": """\
>>> a = xp.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device="cpu")
>>> q, r = xp.linalg.qr(a)
>>> q.shape, r.shape
((3, 2), (2, 2))
>>> xp.round(q @ r, decimals=8)
Array([[1., 2.],
       [3., 4.],
       [5., 6.]], device='cpu')
""",
    "linalg.slogdet": """\
>>> a = xp.asarray([[-2.0, 0.0], [0.0, 1.0]], device="cpu")
>>> sign, logabsdet = xp.linalg.slogdet(a)
>>> sign
Array(-1., device='cpu')
>>> logabsdet
Array(0.69314718, device='cpu')
""",
    "linalg.solve": """\
>>> a = xp.asarray([[2.0, 0.0], [0.0, 4.0]], device="cpu")
>>> b = xp.asarray([2.0, 8.0], device="cpu")
>>> xp.linalg.solve(a, b)
Array([1., 2.], device='cpu')
""",
    "linalg.svd": """\
>>> a = xp.asarray([[2.0, 2.0], [1.0, -1.0], [1.0, -1.0]], device="cpu")
>>> u, s, vh = xp.linalg.svd(a, full_matrices=False)
>>> u.shape, s.shape, vh.shape
((3, 2), (2,), (2, 2))
>>> s
Array([2.82842712, 2.        ], device='cpu')
>>> xp.round(u * s @ vh, decimals=8)
Array([[ 2.,  2.],
       [ 1., -1.],
       [ 1., -1.]], device='cpu')
""",
    "linalg.svdvals": """\
>>> a = xp.asarray([[3.0, 0.0], [0.0, 4.0]], device="cpu")
>>> xp.linalg.svdvals(a)
Array([4., 3.], device='cpu')
""",
    "linalg.trace": """\
>>> x = xp.asarray([[1, 2], [3, 4]], device="cpu")
>>> xp.linalg.trace(x)
Array(5, device='cpu')
>>> xp.linalg.trace(x, offset=1)
Array(2, device='cpu')
""",
    "linalg.vector_norm": """\
>>> x = xp.asarray([3.0, -4.0], device="cpu")
>>> xp.linalg.vector_norm(x)
Array(5., device='cpu')
>>> xp.linalg.vector_norm(x, ord=1)
Array(7., device='cpu')
>>> xp.linalg.vector_norm(x, ord=xp.inf)
Array(4., device='cpu')
""",
    # infini_cupy.fft
    "fft.fft": """\
>>> x = xp.asarray([1.0, 0.0, 0.0, 0.0], device="cpu")
>>> xp.fft.fft(x)
Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], device='cpu')
""",
    "fft.ifft": """\
>>> x = xp.asarray([4.0, 0.0, 0.0, 0.0], device="cpu")
>>> xp.fft.ifft(x)
Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], device='cpu')
""",
    "fft.fftn": """\
>>> x = xp.asarray([[1.0, 0.0], [0.0, 0.0]], device="cpu")
>>> xp.fft.fftn(x)
Array([[1.+0.j, 1.+0.j],
       [1.+0.j, 1.+0.j]], device='cpu')
""",
    "fft.ifftn": """\
>>> x = xp.asarray([[4.0, 0.0], [0.0, 0.0]], device="cpu")
>>> xp.fft.ifftn(x)
Array([[1.+0.j, 1.+0.j],
       [1.+0.j, 1.+0.j]], device='cpu')
""",
    "fft.rfft": """\
>>> x = xp.asarray([1.0, 0.0, 0.0, 0.0], device="cpu")
>>> xp.fft.rfft(x)
Array([1.+0.j, 1.+0.j, 1.+0.j], device='cpu')
""",
    "fft.irfft": """\
>>> x = xp.asarray([4.0, 0.0, 0.0], device="cpu")
>>> xp.fft.irfft(x)
Array([1., 1., 1., 1.], device='cpu')
""",
    "fft.rfftn": """\
>>> x = xp.asarray([[1.0, 0.0], [0.0, 0.0]], device="cpu")
>>> xp.fft.rfftn(x)
Array([[1.+0.j, 1.+0.j],
       [1.+0.j, 1.+0.j]], device='cpu')
""",
    "fft.irfftn": """\
>>> x = xp.asarray([[4.0, 0.0], [0.0, 0.0]], device="cpu")
>>> xp.fft.irfftn(x)
Array([[1., 1.],
       [1., 1.]], device='cpu')
""",
    "fft.hfft": """\
>>> x = xp.asarray([1.0, 0.0, 0.0], device="cpu")
>>> xp.fft.hfft(x)
Array([1., 1., 1., 1.], device='cpu')
""",
    "fft.ihfft": """\
>>> x = xp.asarray([4.0, 0.0, 0.0, 0.0], device="cpu")
>>> xp.fft.ihfft(x)
Array([1.-0.j, 1.-0.j, 1.-0.j], device='cpu')
""",
    "fft.fftfreq": """\
>>> xp.fft.fftfreq(4, device="cpu")
Array([ 0.  ,  0.25, -0.5 , -0.25], device='cpu')
>>> xp.fft.fftfreq(4, d=0.5, device="cpu")
Array([ 0. ,  0.5, -1. , -0.5], device='cpu')
""",
    "fft.rfftfreq": """\
>>> xp.fft.rfftfreq(4, device="cpu")
Array([0.  , 0.25, 0.5 ], device='cpu')
""",
    "fft.fftshift": """\
>>> f = xp.fft.fftfreq(4, device="cpu")
>>> xp.fft.fftshift(f)
Array([-0.5 , -0.25,  0.  ,  0.25], device='cpu')
""",
    "fft.ifftshift": """\
>>> f = xp.asarray([-0.5, -0.25, 0.0, 0.25], device="cpu")
>>> xp.fft.ifftshift(f)
Array([ 0.  ,  0.25, -0.5 , -0.25], device='cpu')
""",
}
