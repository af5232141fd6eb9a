"""Shared-memory bank conflicts of a staged copy's tile, and the pitch and row spreads that
avoid them.

Pure Python (NumPy), for :mod:`.tile_planner`. Element ``(i0, i1)`` of a tile sits at slot
``i0 * pitch + i1``. A warp step of a pass whose rows are short (virtual rows of 8 or 16 work
items) covers several rows at once; with consecutive rows, one pitch cannot put both phases'
steps on distinct banks. A 16 x 16 float32 tile read along dim 0 takes rows ``r, r + 1`` of
16 slots ``pitch`` apart (distinct banks for a pitch of 2 mod 4 words) and writes rows
``i0, i0 + 1`` of 16 consecutive slots (distinct banks for a pitch of 16 mod 32 words). The
kernel can take a step's rows ``spread`` apart instead (``TilePass::spread_rows``); with a
pitch of 18 and rows 8 apart on the write side, both phases are conflict-free.

Where the other phase's rows are short and one run (chained), the run is conflict-free only
with a pitch of the rows' length modulo 32 words: a linear run of slots. A row length of a
multiple of 2, 4 or 8 words then sends the transposing phase's 32 consecutive items of one
row (slots ``pitch`` apart) to a half, a quarter or an eighth of the banks. The kernel can
take K rows per warp step on that side instead, ``32 / K`` items of each
(``TilePass::group_rows``, ``TilePlan.read_rows``): with a pitch of K times an odd number
of words, each row's items fill the banks of one residue modulo K, and K consecutive rows
fill them all, whatever each row's lead.

:func:`spread_layout` searches pitches from the planner's, spreads of 1 to 16, K rows per
step on the transposing side (and, for a chained pass of rows that are whole sectors, its
rows walked one by one) for the fewest wavefronts (then warp steps, then the smallest
pitch), walking each pass's first warp steps as the kernel does (``TilePass::locate``) and
counting wavefronts as the emulator's trace does (:mod:`infini_cupy.readers.bank_conflicts`:
32 banks of 4 bytes, 8-byte accesses per half warp, 16-byte ones per quarter warp).

>>> side = TilePass(rows=16, row_len=16, vector=1, rows_per_step=1, fixed_spread=1,
...                 chained=False, lead=0, along_pitch=True)       # phase 1: along dim 0
>>> write = TilePass(rows=16, row_len=16, vector=1, rows_per_step=1, fixed_spread=1,
...                  chained=False, lead=0, along_pitch=False)     # phase 2: along dim 1
>>> cost(4, side, 17, 1), cost(4, write, 17, 1)        # (wavefronts, ideal, warp steps)
((16, 8, 8), (16, 8, 8))
>>> spread_layout(4, (side, write), 17, 16 * 17 + 512, 16)[:3]  # pitch, read, write spreads
(18, 1, 8)

Rows of 6 float32 chained on the write side, 49-long columns read along the pitch:

>>> column = TilePass(rows=6, row_len=49, vector=1, rows_per_step=1, fixed_spread=1,
...                   chained=False, lead=0, along_pitch=True, uniform=False)
>>> run = TilePass(rows=49, row_len=6, vector=1, rows_per_step=1, fixed_spread=1,
...                chained=True, lead=0, along_pitch=False, uniform=False)
>>> pitch, _, _, read, _ = spread_layout(4, (column, run), 7, 49 * 7 + 512, 49, least_pitch=6)
>>> pitch, read.rows_per_step, read.grouped     # 2 columns a step, 16 items of each
(6, 2, True)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from ..perf.devices import BANKS, SECTOR
from ..perf.distinct import distinct as distinct_values

SPREADS = (1, 2, 4, 8, 16)  # row spacings a short-row pass may take (powers of 2)
SAMPLED_STEPS = 16  # warp steps of a pass the estimate walks (the pattern repeats)
# Pitches tried past the first conflict-free one whose spreads idle some lanes (rows not a
# multiple of a spread group): one of them may need no idle lane.
MORE_PITCHES = 4


@dataclass(frozen=True)
class TilePass:
    """One phase over a full tile, as ``TilePass`` in kernels_src/transpose.cu walks it.

    rows, row_len: rows of the pass and their length (elements); vector: elements per global
    access; rows_per_step: R (4 for 16-byte accesses, else 1; K for a grouped pass);
    fixed_spread: S, the row spacing of a pass of R > 1; chained: the rows are one run; lead:
    vectors from the sector boundary to the first row's start (every row's where ``uniform``);
    along_pitch: slots along a row step by the pitch (phase 1 of a transpose), else by 1;
    uniform: the rows share their lead (else the kernel leaves room for any lead, and a
    virtual row longer than a warp step is whole warp steps: the pass is modelled with
    ``lead`` 0, which gives its banks exactly where each warp step stays in one row or, grouped
    along the pitch, covers whole bank periods of each row; a chained run of unknown lead is
    modelled over every lead); grouped: the Grouped variants' walk of K = ``rows_per_step``
    rows per step (``TilePass::group_rows``), ``fixed_spread`` apart; words: byte units
    moved in 4-byte words (``TilePass::WORDS``: a work item is a word of the run, ``lead`` in
    units); lead_step: where rows start anywhere in a sector but a constant stride apart,
    how many vectors each row's lead is past the one before's (modulo a sector), else -1.
    """

    rows: int
    row_len: int
    vector: int
    rows_per_step: int
    fixed_spread: int
    chained: bool
    lead: int
    along_pitch: bool
    uniform: bool = True
    grouped: bool = False
    words: bool = False
    lead_step: int = -1

    def lead_count(self, unit: int) -> int:
        """Leads a row may have: vectors per sector (units, for ``words``)."""
        return SECTOR // (self.vector * unit)

    def per_item(self, unit: int) -> int:
        """Elements per work item: the vector, or a 4-byte word's units (``words``)."""
        return 4 // unit if self.words else self.vector

    def room(self, unit: int) -> int:
        """Work items' units the kernel leaves before a row's first (vectors; units for
        ``words``): its lead, or room for any."""
        return self.lead if self.uniform or self.chained else self.lead_count(unit) - 1

    def virtual_row(self, unit: int) -> int:
        """Work items per virtual row of an R == 1 pass (its run's, when chained)."""
        sec = SECTOR // (self.per_item(unit) * unit)
        units = (self.rows * self.row_len if self.chained else self.row_len) // self.vector
        items = units + self.room(unit)
        if self.words:
            items = -(-items // self.per_item(unit))
        vl = -(-items // sec) * sec
        return vl if self.uniform or self.chained or vl <= 32 else -(-vl // 32) * 32

    def can_spread(self, unit: int) -> bool:
        """Short rows the kernel may take ``spread`` apart (``TilePass::spread_rows``)."""
        vl = self.virtual_row(unit)
        return self.rows_per_step == 1 and not self.chained and self.uniform and vl < 32 \
            and 32 % vl == 0 and not self.words

    def row_groups(self, unit: int):
        """Grouped walks of K rows per step (``TilePass::group_rows`` with ``rows_per_step``
        K > 1), ``spread`` apart, that this pass may take: along the pitch (the transposing
        side, whose K rows fill each other's banks whatever their leads), separate ascending
        rows in accesses narrower than 16 bytes, vl = 32 / K items (whole sectors) a row."""
        width = self.vector * unit
        if not self.along_pitch or self.chained or self.rows_per_step != 1 or width >= 16 \
                or self.words:
            return []
        return [replace(self, rows_per_step=k, fixed_spread=s, grouped=True)
                for k in (2, 4, 8) if 32 // k * width >= SECTOR and k < self.rows
                for s in SPREADS[:3] if k * s <= max(self.rows, 2 * k)]


def _items(unit: int, p: TilePass, spread: int, leads: tuple[int, int] | None = None):
    """(warp step, lane, first element's index along the row (the run, when chained), row)
    of the active lanes of the pass's first warp steps, and the pass's warp steps in all;
    with ``leads`` (first, step), row r's lead is ``(first + r * step) % sec`` vectors (rows
    of different leads), else every row's is the pass's ``lead``."""
    units = (p.rows * p.row_len if p.chained else p.row_len) // p.vector
    if p.rows_per_step == 1:
        vl = p.virtual_row(unit)
        if spread > 1 and p.can_spread(unit):
            k_rows = 32 // vl
            steps = -(-p.rows // (k_rows * spread)) * spread
            g = np.repeat(np.arange(min(steps, SAMPLED_STEPS)), 32)
            lane = np.tile(np.arange(32), g.size // 32)
            q = lane % vl
            r = g // spread * (k_rows * spread) + lane // vl * spread + g % spread
        else:
            total = vl if p.chained else p.rows * vl
            steps = -(-total // 32)
            i = np.arange(min(total, SAMPLED_STEPS * 32))
            g, lane = i // 32, i % 32
            r, q = (np.zeros_like(i), i) if p.chained else (i // vl, i % vl)
    else:
        lanes = 32 // p.rows_per_step
        chunks = -(-(units + p.room(unit)) // lanes)
        groups = -(-p.rows // (p.rows_per_step * p.fixed_spread)) * p.fixed_spread
        steps = groups * chunks
        g = np.repeat(np.arange(min(steps, SAMPLED_STEPS)), 32)
        lane = np.tile(np.arange(32), g.size // 32)
        big, c = g // chunks, g % chunks
        r = big // p.fixed_spread * (p.rows_per_step * p.fixed_spread) \
            + lane // lanes * p.fixed_spread + big % p.fixed_spread
        q = c * lanes + lane % lanes
    if p.words:  # word q holds units 4 q - lead ... of the run: active where one is in it
        e = q * p.per_item(unit) - p.lead
        active = (e + p.per_item(unit) > 0) & (e < units) & (r < p.rows)
    else:
        sec = p.lead_count(unit)
        lead = p.lead if leads is None else (leads[0] + r * leads[1]) % sec
        pos = q - lead
        active = (pos >= 0) & (pos < units) & (r < p.rows)
        e = pos * p.vector
    return g[active], lane[active], e[active], r[active], steps


@functools.lru_cache(maxsize=4096)
def cost(unit: int, p: TilePass, pitch: int, spread: int) -> tuple[int, int, int]:
    """(wavefronts, conflict-free ideal, warp steps in all) of the pass's first warp steps with
    this pitch and row spread (one shared access per element of a vector, as the kernel);
    a chained run of unknown lead (``uniform`` False), summed over every lead."""
    if p.chained and not p.uniform:
        sec = p.lead_count(unit)
        # words: leads in units, one of each residue modulo a word (spread over the sector)
        leads = range(0, sec, 9) if p.words else range(sec)
        each = [cost(unit, replace(p, uniform=True, lead=lead), pitch, spread) for lead in leads]
        return (sum(c[0] for c in each) / len(each), sum(c[1] for c in each) / len(each),
                max(c[2] for c in each))
    if p.grouped and not p.uniform:
        # K rows of different leads per step: rows sharing words (2-byte units, rows 1 apart
        # along the pitch) meet in one bank unless their leads agree, rows `spread` apart
        # shift each other's banks by their leads' difference. Rows a stride apart: each
        # first row's lead, the worst taken; else the worse of equal leads and leads that
        # differ row to row.
        sec = p.lead_count(unit)
        patterns = [(0, 0), (0, 1)] if p.lead_step < 0 else \
            [(first, p.lead_step) for first in range(sec)]
        return max(_cost(unit, p, pitch, spread, leads) for leads in patterns)
    return _cost(unit, p, pitch, spread, None)


def _cost(unit, p, pitch, spread, leads):
    g, lane, e, r, steps = _items(unit, p, spread, leads)
    if g.size == 0:
        return 0, 0, steps
    sh_row, sh_along = (1, pitch) if p.along_pitch else (pitch, 1)
    words_per = max(1, unit // 4)
    per_phase = 32 // words_per  # lanes served together
    phases = (g - g.min()) * 4 + lane // per_phase  # one warp instruction's phase per element
    n_phases = int(phases.max()) + 1
    waves = ideal = 0
    run = p.rows * p.row_len if p.chained else p.row_len
    for k in range(p.per_item(unit)):  # the item's elements: one instruction each
        ek, rk, inside = e + k, r, slice(None)
        if p.words:  # a word's units outside the run are not moved
            inside = (ek >= 0) & (ek < run)
            ek, rk = ek[inside], rk[inside]
        if p.chained:
            rk, ek = ek // p.row_len, ek % p.row_len
        slot = rk * sh_row + ek * sh_along
        word = ((slot * unit // 4)[:, None] + np.arange(words_per)).reshape(-1)
        if word.size == 0:
            continue
        span = int(word.max()) + 1
        phase = np.repeat(phases[inside], words_per)
        distinct = distinct_values(phase * span + word)  # each word once per phase (a broadcast)
        phase_of, bank_of = distinct // span, distinct % span % BANKS
        per_bank = np.bincount(phase_of * BANKS + bank_of, minlength=n_phases * BANKS)
        waves += int(per_bank.reshape(n_phases, BANKS).max(axis=1).sum())
        words = np.bincount(phase_of, minlength=n_phases)
        ideal += int(np.sum(-(-words // BANKS)))
    return waves, ideal, steps


def _pass_cost(unit, p, pitch, spread):
    """Wavefronts of the whole pass (the sampled steps' average times its steps), its steps."""
    waves, ideal, steps = cost(unit, p, pitch, spread)
    sampled = min(steps, SAMPLED_STEPS)
    return (waves * steps / sampled if sampled else 0.0), steps, waves <= ideal


def options(unit: int, p: TilePass, row_groups: bool = True):
    """(pass, spread) choices for one phase: its own walk; spreads from SPREADS where its rows
    are short; and for a chained pass whose rows are whole sectors from a sector boundary
    (row by row, they waste no sector), its rows walked one by one, spread likewise."""
    passes = [p]
    sec = p.lead_count(unit)
    if p.chained and p.uniform and p.lead == 0 and p.row_len // p.vector % sec == 0:
        passes.append(replace(p, chained=False))
    return [(q, s) for q in passes for s in (SPREADS if q.can_spread(unit) else (1,))] \
        + [(g, 1) for q in passes for g in (q.row_groups(unit) if row_groups else ())]


def spread_layout(unit: int, passes, pitch: int, capacity_elements: int, rows_of_pitch: int,
                  least_pitch: int | None = None, row_groups: bool = True):
    """(pitch, phase 1 spread, phase 2 spread, phase 1 pass, phase 2 pass) taking the fewest
    wavefronts over both passes, then the fewest warp steps, then the smallest pitch: pitches
    from ``pitch`` up to one bank period (``128 / unit`` elements) on, while ``rows_of_pitch``
    rows of it (the tile's dim-0 extent) fit the capacity, each pass as
    :func:`options` allows (where neither has rows to group, the pitch alone: two chained
    runs of short rows may find none that serves both, 17 x 12 float16 for one, and take the
    fewest wavefronts). The search stops at the first pitch whose passes are conflict-free in no more
    warp steps than their own walks take, or MORE_PITCHES past the first conflict-free one.
    With ``least_pitch`` (the rows' length), each pitch is tried as the smallest one from there
    of the same banks (a pitch's banks repeat every bank period). ``row_groups``: whether
    the transposing pass may take K rows per warp step (:meth:`TilePass.row_groups`)."""
    choices_of = [options(unit, p, row_groups) for p in passes]
    best = first_clean = None
    period = max(1, 128 // unit)
    for tried, candidate in enumerate(range(pitch, pitch + period)):
        if least_pitch is not None:
            candidate = least_pitch + (candidate - least_pitch) % period
        if rows_of_pitch * candidate > capacity_elements:
            if least_pitch is None:
                break
            continue
        total, steps, fewest, clean, chosen = 0.0, 0, 0, True, []
        for p, choices in zip(passes, choices_of):
            # K rows per step only where they save wavefronts (their walk costs more per tile)
            def rank(choice):
                waves, steps, _ = _pass_cost(unit, choice[0], candidate, choice[1])
                return waves, choice[0].grouped, steps

            q, s = min(choices, key=rank)
            waves, n, free = _pass_cost(unit, q, candidate, s)
            total, steps, clean = total + waves, steps + n, clean and free
            fewest += _pass_cost(unit, p, candidate, 1)[1]
            chosen.append((q, s))
        key = (round(total, 6), steps, candidate)
        if best is None or key < best[0]:
            best = key, (candidate, *(s for _, s in chosen), *(q for q, _ in chosen))
        if clean and steps <= fewest:
            break  # conflict-free, no lane idled: no other pitch does better
        if clean and first_clean is None:
            first_clean = tried
        if first_clean is not None and tried - first_clean >= MORE_PITCHES:
            break
    return best[1] if best else (pitch, 1, 1, *passes)
