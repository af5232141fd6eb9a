"""Permutation benchmark sets for ``python -m infini_cupy bench``: the TTC set (the 57
transpositions of rank 2 to 6 that TTC, HPTT and cuTT publish: 19 permutations, none of whose
indices can be fused, each at three shapes: balanced, skewed along the first index, skewed
along the index that becomes the first) and random permutations of rank 2 to 8.

TTC states permutations column-major (index 0 varies fastest): ``B[i_perm[0], i_perm[1],
...] = A[i_0, i_1, ...]``. Here A is a C-contiguous NumPy array with those dims reversed and
``rearrange_`` copies it into a C-contiguous B. Shapes hold ``elements`` elements (TTC uses
200 MiB of float32; emulation, about 2**18).

>>> [(c.name, c.emulated_shape) for c in ttc_cases()][:3]
[('ttc 1,0 balanced', (512, 512)), ('ttc 1,0 long first', (2736, 96)), ('ttc 1,0 long new first', (96, 2736))]
"""

from __future__ import annotations

import math

import numpy as np

from ..cases import Case, permute

TTC_PERMUTATIONS = (
    ((1, 0),),
    ((0, 2, 1), (1, 0, 2), (2, 1, 0)),
    ((0, 3, 2, 1), (2, 1, 3, 0), (2, 0, 3, 1), (1, 0, 3, 2), (3, 2, 1, 0)),
    ((0, 4, 2, 1, 3), (3, 2, 1, 4, 0), (2, 0, 4, 1, 3), (1, 3, 0, 4, 2), (4, 3, 2, 1, 0)),
    ((0, 3, 2, 5, 4, 1), (3, 2, 0, 5, 1, 4), (2, 0, 4, 1, 5, 3), (3, 2, 5, 1, 0, 4),
     (5, 4, 3, 2, 1, 0)),
)
GPU_ELEMENTS = 200 * 2**20 // 4  # TTC's 200 MiB of float32
EMULATED_ELEMENTS = 2**18
_MULTIPLE = 16  # TTC keeps both stride-1 lengths multiples of 16


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def _ttc_sizes(perm, elements: int) -> list[list[int]]:
    """Three column-major sizes for ``perm``: balanced; the first index ``skew`` times longer;
    the index that becomes first ``skew`` times longer (another one shorter to compensate)."""
    rank = len(perm)
    first = perm[0] if perm[0] != 0 else perm[1]
    base = max(2, round(elements ** (1 / rank)))
    skew = 3 if rank >= 6 else 6
    shapes = []
    for stretched in (None, 0, first):
        size = [base] * rank
        if stretched is not None:
            size[stretched] *= skew
            shrink = next(i for i in range(rank) if i != stretched)
            size[shrink] = max(2, size[shrink] // skew)
        # both stride-1 indices (A's 0, B's perm[0]) multiples of 16, as TTC has them
        for d in (0, perm[0]):
            size[d] = _round_up(size[d], _MULTIPLE)
        # the longest dim absorbs what rounding changed, to stay near `elements`
        longest = size.index(max(size))
        rest = math.prod(size) // size[longest]
        size[longest] = max(2, elements // rest)
        if longest in (0, perm[0]):
            size[longest] = _round_up(size[longest], _MULTIPLE)
        shapes.append(size)
    return shapes


def _numpy_order(perm) -> tuple[int, ...]:
    """TTC's column-major ``perm`` as the C-order permutation of the reversed dims."""
    rank = len(perm)
    return tuple(rank - 1 - perm[rank - 1 - b] for b in range(rank))


def _y_shape(order, size) -> tuple[int, ...]:
    x_shape = size[::-1]
    return tuple(x_shape[a] for a in order)


def ttc_cases(dtype: str = "float32") -> tuple[Case, ...]:
    cases = []
    for perms in TTC_PERMUTATIONS:
        for perm in perms:
            order = _numpy_order(perm)
            variants = zip(("balanced", "long first", "long new first"),
                           _ttc_sizes(perm, GPU_ELEMENTS), _ttc_sizes(perm, EMULATED_ELEMENTS))
            for variant, gpu_size, emulated_size in variants:
                name = f"ttc {','.join(map(str, perm))} {variant}"
                cases.append(Case("ttc", name, dtype, _y_shape(order, gpu_size),
                                  _y_shape(order, emulated_size), permute(order)))
    return tuple(cases)


def random_cases(count: int = 28, elements: int = EMULATED_ELEMENTS, seed: int = 0,
                 dtypes=("float32", "float16", "int8", "float64")) -> tuple[Case, ...]:
    """Random permutations of rank 2 to 8 (never the identity) of random shapes holding about
    ``elements`` elements, cycling through ``dtypes``."""
    rng = np.random.default_rng(seed)
    cases = []
    for k in range(count):
        rank = 2 + k % 7
        perm = tuple(int(i) for i in rng.permutation(rank))
        while perm == tuple(range(rank)):
            perm = tuple(int(i) for i in rng.permutation(rank))
        weights = rng.uniform(0.3, 1.7, rank)
        lengths = np.maximum(2, np.round(elements ** (weights / weights.sum()))).astype(int)
        shape = tuple(int(n) for n in lengths)
        y_shape = tuple(shape[i] for i in perm)
        dtype = dtypes[k % len(dtypes)]
        name = f"random {','.join(map(str, perm))} {'x'.join(map(str, shape))} {dtype}"
        cases.append(Case("random", name, dtype, y_shape, None, permute(perm)))
    return tuple(cases)
