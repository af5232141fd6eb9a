"""Shared-memory bank conflicts, counted from the emulator's trace of ``ic::lds``/``ic::sts``.

Shared memory serves a warp's access instruction in *wavefronts*: it has 32 banks of 4 bytes
(word ``w`` lives in bank ``w % 32``) and each bank delivers one word per wavefront, so the
lanes asking for different words of one bank are served one after another (the same word is
broadcast). Accesses of 8 bytes are processed per half warp (16 lanes x 8 bytes fill the 32
banks once), 16-byte ones per quarter warp, as on NVIDIA GPUs since Kepler; wider ones split
into 16-byte pieces. For every warp access this counts

- **wavefronts**: per phase, the most distinct words any one bank must deliver;
- **ideal**: per phase, the distinct words asked for over 32 (rounded up): what a
  conflict-free layout of the same words would cost;

and the **conflict ratio** wavefronts / ideal is 1.0 without bank conflicts, 8.0 when each
access is serialized 8 ways. Warp accesses are recognized as the profiler recognizes global
ones: the k-th shared read (write) of each lane of a warp.

>>> import numpy as np
>>> from infini_cupy.runtime.emulate.launcher import TRACE_DTYPE
>>> r = np.zeros(32, TRACE_DTYPE); r["thread"] = np.arange(32); r["bytes"] = 4
>>> r["address"] = np.arange(32) * 4            # lane i -> bank i: conflict-free
>>> count(r).ratio
1.0
>>> r["address"] = np.arange(32) * 128          # 32 words of bank 0
>>> count(r).ratio
32.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..perf.devices import BANKS
from ..perf.distinct import distinct, distinct_counts
from ..runtime.emulate.launcher import direction_ranks

WORD = 4
PIECE = 16  # the widest shared access one instruction makes (LDS.128 / STS.128)


@dataclass(frozen=True)
class BankStats:
    """Shared-memory accesses of one launch (or several, summed)."""

    requests: int  # warp access instructions
    wavefronts: int  # what the banks serve them in
    ideal: int  # what a conflict-free layout of the same words would take

    @property
    def ratio(self) -> float:
        """wavefronts / ideal: 1.0 without bank conflicts (and when nothing is accessed)."""
        return self.wavefronts / self.ideal if self.ideal else 1.0

    def __add__(self, other: BankStats) -> BankStats:
        return BankStats(self.requests + other.requests, self.wavefronts + other.wavefronts,
                         self.ideal + other.ideal)


NO_SHARED = BankStats(0, 0, 0)


def _pieces(records: np.ndarray, rank: np.ndarray):
    """Records of more than 16 bytes cut into 16-byte pieces: (records, rank, piece index)."""
    count = np.maximum(1, -(-records["bytes"].astype(np.int64) // PIECE))
    if records.size == 0 or count.max() == 1:
        return records, rank, np.zeros(records.size, np.int64)
    out, rank = np.repeat(records, count), np.repeat(rank, count)
    piece = np.arange(out.size) - np.repeat(np.cumsum(count) - count, count)
    out["address"] += (piece * PIECE).astype(np.uint64)
    out["bytes"] = np.minimum(out["bytes"].astype(np.int64) - piece * PIECE, PIECE)
    return out, rank, piece


def count(records: np.ndarray) -> BankStats:
    """Bank statistics of shared-memory trace records (TRACE_DTYPE, grouped by block and
    thread in program order, as the emulator returns them)."""
    if records.size == 0:
        return NO_SHARED
    records, rank, piece = _pieces(records, direction_ranks(records))
    size = records["bytes"].astype(np.int64)
    lanes_per_phase = 32 // np.maximum(1, np.maximum(size, WORD) // WORD)
    phase = (records["thread"] % 32).astype(np.int64) // lanes_per_phase
    warp = (records["thread"] // 32).astype(np.int64)
    block = records["block"].astype(np.int64)
    # One integer per (block, warp, direction, k-th access, piece): a warp instruction; times
    # 4 plus the phase (at most 4 per instruction).
    n_warps, n_rank, n_piece = int(warp.max()) + 1, int(rank.max()) + 1, int(piece.max()) + 1
    instruction = (((block * n_warps + warp) * 2 + records["is_write"]) * n_rank + rank) * n_piece + piece
    phase_key = instruction * 4 + phase
    # Words, relative to a bank-0 word at or below each block's lowest (each block's shared
    # memory is its worker's: far from the others').
    word = (records["address"] // np.uint64(WORD)).astype(np.int64)
    starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
    lowest = np.minimum.reduceat(word, starts) // BANKS * BANKS
    word -= np.repeat(lowest, np.diff(np.r_[starts, word.size]))
    last = word + (size - 1) // WORD  # accesses are aligned: 1 to 4 words each
    words_per = last - word + 1
    offset = np.arange(words_per.sum()) - np.repeat(np.cumsum(words_per) - words_per, words_per)
    word = np.repeat(word, words_per) + offset
    phase_key = np.repeat(phase_key, words_per)
    span = int(word.max()) + 1
    if (int(phase_key.max()) + 1) * span >= 2**63:  # pragma: no cover - astronomically large
        raise ValueError("shared-memory trace too large to count (key overflows int64)")
    phase_words = distinct(phase_key * span + word)  # each word once per phase
    phase_of, word_of = phase_words // span, phase_words % span
    phases, words_in_phase = distinct_counts(phase_of)
    bank_key, per_bank = distinct_counts(phase_of * BANKS + word_of % BANKS)
    group = np.flatnonzero(np.r_[True, bank_key[1:] // BANKS != bank_key[:-1] // BANKS])
    wavefronts = np.maximum.reduceat(per_bank, group)
    ideal = -(-words_in_phase // BANKS)
    return BankStats(int(distinct(instruction).size), int(wavefronts.sum()), int(ideal.sum()))


def count_launch(launch) -> BankStats:
    """Bank statistics of one traced launch (:class:`~infini_cupy.runtime.emulate.launcher.LaunchTrace`)."""
    return count(launch.shared)
