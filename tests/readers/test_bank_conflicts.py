"""Bank-conflict counting (infini_cupy/readers/bank_conflicts.py): one warp access at a time
against the bank rules, then a whole staged copy traced by the emulator."""

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime.emulate import launcher as emulator
from infini_cupy.runtime.emulate.launcher import TRACE_DTYPE
from infini_cupy.readers import bank_conflicts
from infini_cupy.tools.cases import aligned_alloc

BASE = 1 << 20  # a 128-byte boundary


def warp_access(offsets, size, is_write=False):
    """Shared-memory records of one warp instruction: lane i at BASE + offsets[i]."""
    r = np.zeros(len(offsets), TRACE_DTYPE)
    r["thread"] = np.arange(len(offsets))
    r["address"] = BASE + np.asarray(offsets, np.uint64)
    r["bytes"] = size
    r["is_write"] = is_write
    r["shared"] = True
    return r


def reference_wavefronts(offsets, size):
    """The bank rule spelled out: per phase (32 // (size / 4) lanes), the most distinct words
    of one bank."""
    lanes = 32 // max(1, size // 4)
    total = 0
    for start in range(0, len(offsets), lanes):
        words = {(BASE + o) // 4 + k for o in offsets[start:start + lanes]
                 for k in range(max(1, size // 4))}
        per_bank = {}
        for w in words:
            per_bank.setdefault(w % 32, set()).add(w)
        total += max(len(v) for v in per_bank.values())
    return total


@pytest.mark.parametrize("size, stride, expected_ratio", [
    (4, 4, 1.0),      # lane i -> bank i
    (4, 8, 2.0),      # two lanes per bank
    (4, 132, 1.0),    # odd word pitch (a padded tile's column)
    (4, 128, 32.0),   # a column of an unpadded 32 x 32 fp32 tile
    (4, 0, 1.0),      # one word for every lane: broadcast
    (1, 1, 1.0),      # bytes sharing words
    (2, 2, 1.0),
    (8, 8, 1.0),      # per half warp: 16 lanes x 8 bytes fill the banks once
    (8, 16, 2.0),
    (16, 16, 1.0),    # per quarter warp
    (16, 32, 2.0),
])
def test_one_warp_access(size, stride, expected_ratio):
    offsets = [lane * stride for lane in range(32)]
    stats = bank_conflicts.count(warp_access(offsets, size))
    assert stats.requests == 1
    assert stats.wavefronts == reference_wavefronts(offsets, size)
    assert stats.ratio == expected_ratio


def test_random_addresses_match_the_rule():
    rng = np.random.default_rng(7)
    for _ in range(20):
        size = int(rng.choice([1, 2, 4, 8, 16]))
        offsets = [int(o) * size for o in rng.integers(0, 512, 32)]
        assert bank_conflicts.count(warp_access(offsets, size)).wavefronts == \
            reference_wavefronts(offsets, size)


def test_reads_and_writes_are_separate_instructions():
    both = np.concatenate([warp_access([4 * i for i in range(32)], 4),
                           warp_access([128 * i for i in range(32)], 4, is_write=True)])
    order = np.lexsort((np.arange(both.size) // 32, both["thread"]))
    stats = bank_conflicts.count(both[order])
    assert (stats.requests, stats.wavefronts, stats.ideal) == (2, 33, 2)


def test_32_byte_accesses_are_two_pieces():
    stats = bank_conflicts.count(warp_access([32 * i for i in range(32)], 32))
    assert stats.requests == 2 and stats.ratio == 2.0  # each piece: lanes 2 words apart


def test_padded_transpose_tile_is_conflict_free():
    """The staged transpose's odd pitch: both phases of an fp32 transpose without conflicts,
    on the traced kernel."""
    x = aligned_alloc((256, 256), np.float32)  # 256-byte aligned, as CuPy allocates
    x[...] = np.arange(x.size).reshape(x.shape)
    x = x.T
    y = aligned_alloc(x.shape, np.float32)
    with xp.backend("emulate"), emulator.tracing() as trace:
        xp.rearrange_(y, x)
    np.testing.assert_array_equal(y, x)
    (launch,) = trace.launches
    assert launch.name.startswith("tiled_copy") and launch.shared.size
    stats = bank_conflicts.count_launch(launch)
    assert stats.requests > 0 and stats.ratio == 1.0
