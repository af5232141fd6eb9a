"""Static reading of a kernel's sm_90 code: what NVRTC makes of one name expression, read from
its cubin (:mod:`infini_cupy.runtime.elf`) and from the SASS ``nvdisasm`` prints; no GPU.

Per kernel variant, :func:`read_kernel` gives a :class:`KernelSass`:

- from the cubin: **registers** per thread, **static shared memory** and **local memory**
  (stack frame) per thread;
- from the SASS: the **hot loops** (the innermost loop around each global access: a branch
  back to an earlier address closes a loop), and for each its instructions per iteration
  (the heaviest path through its body: one side of each branch), the widths of its global loads
  and stores (``LDG.E.128``: 16 bytes), **instructions per byte** moved, the global loads a
  thread has in flight (those issued before the first instruction that uses a loaded
  register, on the path through the body with the most), and its calls to the 64-bit **division helpers**
  (``CALL.REL`` to ``__cuda_sm20_div_s64`` and the like); **spills** (``LDL``/``STL``);
  and the **per-tile instructions**: those of the loop around the hot loops (a staged copy's
  loop over tiles) outside them.

Compiling and disassembling take about a second per variant, so results are cached on disk
under ``$INFINI_CUPY_CACHE_DIR/sass``, keyed by the expanded source, the name expression,
the architecture and the NVRTC version; :func:`read_kernels` reads many variants at once, from
one program (:func:`read_program`: one ``nvdisasm`` run for them all).

>>> k = read_kernel("transpose.cu", "tiled_copy<4, 1, 1, 0, 0>")
>>> k.registers, k.spills, k.main_load.load_widths, k.helper_calls
(48, 0, (4, 4, 4, 4), ())
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import config
from ..runtime.nvrtc import compile_program, nvrtc_version
from ..runtime.sources import expanded_source
from ..runtime.elf import EIATTR_FRAME_SIZE, EIATTR_REGCOUNT, info_by_code, sections, symbols

NVDISASM_HINT = "pip install nvidia-cuda-nvdisasm (the wheel of NVRTC's CUDA major version)"


@functools.lru_cache(maxsize=1)
def nvdisasm() -> str:
    """Path of ``nvdisasm``: the nvidia-cuda-nvdisasm wheel's, else one on PATH;
    RuntimeError saying what to install."""
    try:
        import nvidia

        for root in nvidia.__path__:
            for found in sorted(glob.glob(os.path.join(root, "*", "bin", "nvdisasm"))):
                if os.access(found, os.X_OK):
                    return found
    except ImportError:
        pass
    found = shutil.which("nvdisasm")
    if found:
        return found
    raise RuntimeError(f"reading SASS needs nvdisasm: {NVDISASM_HINT}")


def disassemble(cubin: bytes, functions=()) -> str:
    """``nvdisasm -c`` of a cubin (its code sections only); of the code sections of
    ``functions`` alone (symbol indices, :func:`infini_cupy.runtime.elf.symbols`) when given."""
    with tempfile.TemporaryDirectory(prefix="infini_cupy-sass-") as folder:
        path = Path(folder) / "kernel.cubin"
        path.write_bytes(cubin)
        only = ["-fun", ",".join(map(str, functions))] if functions else []
        done = subprocess.run([nvdisasm(), "-c", "-g", *only, str(path)], capture_output=True,
                              text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"nvdisasm failed: {done.stderr.strip()}")
    return done.stdout


ARCH = "sm_90"
FORMAT = 7  # bump when what is cached changes
DIVISION_HELPER = re.compile(r"__cuda_sm\d+_(div|rem|urem|udiv)\w*")


@dataclass(frozen=True)
class Loop:
    """One hot loop: the innermost loop around some global accesses."""

    start: int  # byte offsets in the kernel's code: the loop's first instruction
    end: int  # ...and its back-edge branch
    instructions: int  # per iteration: the heaviest path through the body (no helper bodies)
    load_widths: tuple[int, ...]  # bytes of each global load per iteration (LDG: 1-16)
    store_widths: tuple[int, ...]  # bytes of each global store
    shared_accesses: int  # LDS/STS per iteration
    loads_in_flight: int  # global loads issued before the first use of any of them
    bytes_in_flight: int  # their bytes
    helper_calls: tuple[str, ...]  # division helpers called per iteration
    # global -> shared copies (LDGSTS, cp.async) per iteration: no register waits on them, so
    # every iteration's stay in flight until the wait after the loop
    async_copies: int = 0

    @property
    def bytes(self) -> int:
        """Global bytes a thread moves per iteration."""
        return sum(self.load_widths) + sum(self.store_widths)

    @property
    def instructions_per_byte(self) -> float:
        return self.instructions / self.bytes if self.bytes else float("inf")


@dataclass(frozen=True)
class KernelSass:
    """What the sm_90 code of one kernel variant says about its speed."""

    source: str
    name: str  # name expression
    arch: str
    registers: int  # per thread
    shared_bytes: int  # static shared memory per block (with the 1 KiB sm_90 reserves)
    local_bytes: int  # stack frame per thread (local memory)
    spills: int  # LDL/STL instructions
    instructions: int  # the kernel's code, helpers included
    loops: tuple[Loop, ...] = field(default_factory=tuple)  # hot loops, in code order
    # instructions of the loop around the hot loops (over tiles), outside them: per tile
    per_block_instructions: int = 0

    @property
    def helper_calls(self) -> tuple[str, ...]:
        """Division helpers called in hot loops (sorted, distinct)."""
        return tuple(sorted({c for loop in self.loops for c in loop.helper_calls}))

    def _main(self, loads: bool, stores: bool):
        """The widest loop of a kind, the leanest of those: the path of aligned ascending rows
        the planners aim for (rarer paths, descending or chained rows, cost more)."""
        kind = [lp for lp in self.loops
                if bool(lp.load_widths) == loads and bool(lp.store_widths) == stores]
        if not kind:
            return None
        return max(kind, key=lambda lp: (lp.bytes, -lp.instructions_per_byte))

    @property
    def main_copy(self) -> Loop | None:
        """The main loop that both loads and stores (elementwise, the seed kernels)."""
        return self._main(True, True)

    @property
    def main_load(self) -> Loop | None:
        """The main loop that loads only (a staged copy's phase 1), or the copy loop."""
        return self.main_copy or self._main(True, False)

    @property
    def main_store(self) -> Loop | None:
        return self.main_copy or self._main(False, True)

    @property
    def instructions_per_byte(self) -> float:
        """Instructions a thread issues per global byte it moves, over the whole copy: the
        main copy loop's, or the mean of the main load and store loops' (each phase of a
        staged copy moves half the bytes)."""
        if self.main_copy:
            return self.main_copy.instructions_per_byte
        phases = [lp for lp in (self.main_load, self.main_store) if lp]
        if not phases:
            return float("inf")
        return sum(lp.instructions_per_byte for lp in phases) / len(phases)

    @property
    def bytes_in_flight(self) -> int:
        """Global load bytes a thread has in flight in its main load loop (per iteration; an
        asynchronous loop keeps every iteration's in flight, see :attr:`asynchronous`)."""
        loop = self.main_load
        return loop.bytes_in_flight if loop else 0

    @property
    def asynchronous(self) -> bool:
        """The main load loop copies global -> shared asynchronously (cp.async): a thread's
        loads of a whole phase are in flight at once."""
        loop = self.main_load
        return bool(loop and loop.async_copies)

    @property
    def widest_access(self) -> int:
        """The widest global access of the main loops, bytes."""
        widths = [w for lp in (self.main_load, self.main_store) if lp
                  for w in lp.load_widths + lp.store_widths]
        return max(widths, default=0)


# ---------------------------------------------------------------- SASS text

_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_LABEL = re.compile(r"^([.$\w]+):\s*$")
_REGISTER = re.compile(r"(?<![A-Z])R(\d+)(\.64)?")
_TARGET = re.compile(r"`\(([^)]+)\)")


@dataclass
class _Op:
    offset: int
    opcode: str
    operands: list[str]
    text: str
    guard: str = ""  # the predicate, as written after "@" ("!P0"); "" for none

    @property
    def predicated(self) -> bool:
        return self.guard not in ("", "PT")

    @property
    def base(self) -> str:
        return self.opcode.split(".")[0]


def _parse(text: str):
    """(instructions, label -> offset, function labels in order)."""
    ops, labels, pending, functions = [], {}, [], []
    for line in text.splitlines():
        m = _INSTRUCTION.match(line)
        if m:
            offset, body = int(m.group(1), 16), m.group(2)
            guard = ""
            if body.startswith("@"):
                guard, body = body.split(None, 1)
                guard = guard[1:]
            opcode, _, rest = body.partition(" ")
            ops.append(_Op(offset, opcode, [o.strip() for o in rest.split(",") if o.strip()], body,
                           guard))
            for label in pending:
                labels[label] = offset
            pending = []
            continue
        m = _LABEL.match(line.strip())
        if m:
            pending.append(m.group(1))
            if not m.group(1).startswith("."):
                functions.append(m.group(1))
    return ops, labels, functions


def _width(op: _Op) -> int:
    """Bytes of a load or store instruction."""
    mods = op.opcode.split(".")[1:]
    for mod, width in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if mod in mods:
            return width
    return 4


def _is_global(op: _Op) -> bool:
    return op.base in ("LDG", "STG", "LD", "ST", "LDGSTS")


def _registers(operand: str) -> set[int]:
    regs = set()
    for m in _REGISTER.finditer(operand):
        regs.add(int(m.group(1)))
        if m.group(2):
            regs.add(int(m.group(1)) + 1)
    return regs


def _sources(op: _Op) -> set[int]:
    no_destination = op.base in ("ST", "STG", "STS", "STL", "RED", "BRA", "EXIT", "BAR", "CALL",
                                 "RET", "ISETP", "FSETP", "DSETP", "BSYNC", "BSSY", "WARPSYNC")
    operands = op.operands if no_destination else op.operands[1:]
    regs = set().union(*(_registers(o) for o in operands)) if operands else set()
    if not no_destination and op.operands and op.operands[0].startswith("["):
        regs |= _registers(op.operands[0])
    return regs


def _in_flight_from(ops: list[_Op]) -> tuple[int, int]:
    """(loads, bytes) issued from ``ops[0]`` on, falling through, before the first instruction
    that reads a loaded register (or the path leaves: an unconditional branch)."""
    pending: set[int] = set()
    loads = nbytes = 0
    for op in ops:
        if _sources(op) & pending:
            break
        if op.base in ("LDG", "LD") and op.operands:
            first = _registers(op.operands[0])
            width = _width(op)
            if first:
                low = min(first)
                pending |= set(range(low, low + max(1, width // 4)))
            loads += 1
            nbytes += width
        elif op.base == "LDGSTS":  # lands in shared memory: no register to wait on
            loads += 1
            nbytes += _width(op)
        if op.base in ("BRA", "EXIT", "RET") and not op.predicated:
            break
    return loads, nbytes


def _in_flight(body: list[_Op], leaders: set[int] = frozenset()) -> tuple[int, int]:
    """The most (loads, bytes) in flight at once on a path through a loop body: counted from
    its start and from each branch target or instruction after a branch in it (``leaders``:
    offsets), so a rare path listed first (the end of a row: one unit) does not hide the main
    one (a full trip: every load before any store)."""
    starts = [0] + [k for k, op in enumerate(body)
                    if op.offset in leaders or k and body[k - 1].base == "BRA"]
    return max((_in_flight_from(body[k:]) for k in starts), key=lambda f: (f[1], f[0]))


def _heaviest_path(ops: list[_Op], labels: dict, lo: int, hi: int, free=()) -> int:
    """Instructions on the heaviest path from offset ``lo`` to the branch at ``hi`` through
    the code between them, forward branches only (one side of each branch, not both), the
    instructions inside the ``free`` ranges not counted. The static count when no path
    reaches ``hi``."""
    body = [op for op in ops if lo <= op.offset <= hi]
    index = {op.offset: k for k, op in enumerate(body)}
    best = [None] * len(body)
    best[0] = 0
    for k, op in enumerate(body):
        if best[k] is None:
            continue
        here = best[k] + (0 if any(a <= op.offset <= b for a, b in free) else 1)
        if k == len(body) - 1:
            return here
        targets = []
        m = _TARGET.search(op.text) if op.base == "BRA" else None
        if m and m.group(1) in labels and labels[m.group(1)] in index:
            if labels[m.group(1)] > op.offset:
                targets.append(index[labels[m.group(1)]])
        ends = op.base in ("BRA", "EXIT", "RET") and not op.predicated
        if not ends:
            targets.append(k + 1)
        for t in targets:
            best[t] = here if best[t] is None else max(best[t], here)
    return sum(1 for op in body if not any(a <= op.offset <= b for a, b in free))


def _cold_ranges(ops: list[_Op], labels: dict) -> list[tuple[int, int]]:
    """Code a warp enters only when a vote finds a lane that needs it (``__any_sync``:
    ``VOTE.ANY P0, ...`` then ``@!P0 BRA`` over it, or ``@P0 BRA`` to it past the common
    code), the rare path of a loop (the staged copies' words at a row's end, their rounds
    with a step where no lane works): (first, last) offsets."""
    cold = []
    for k, op in enumerate(ops):
        if op.base != "VOTE" or "ANY" not in op.opcode or not op.operands:
            continue
        vote = op.operands[0]
        for branch in ops[k + 1:k + 257]:  # the scheduler may move work in between
            if branch.base == "BRA":
                m = _TARGET.search(branch.text)
                target = labels.get(m.group(1), 0) if m else 0
                if branch.guard == "!" + vote and target > branch.offset:
                    inside = [o.offset for o in ops if branch.offset < o.offset < target]
                    if inside:
                        cold.append((inside[0], inside[-1]))
                elif branch.guard == vote and target > branch.offset:
                    # the rare code laid out after the common one, which jumps over it
                    # (``@P0 BRA rare; common; BRA join; rare: ...; join:``)
                    over = [o for o in ops if branch.offset < o.offset < target
                            and o.base == "BRA" and not o.predicated]
                    m = _TARGET.search(over[-1].text) if over else None
                    join = labels.get(m.group(1), 0) if m else 0
                    inside = [o.offset for o in ops if target <= o.offset < join]
                    if inside:
                        cold.append((inside[0], inside[-1]))
                break
            if branch.operands and branch.operands[0] == vote:  # the vote's predicate rewritten
                break
    return cold


def analyze(text: str) -> tuple[int, int, list[Loop], int]:
    """(instructions, spills, hot loops, per-block instructions) of one kernel's SASS
    (``nvdisasm -c`` output). Per-block instructions: those of the loop around the hot loops
    (a staged copy's loop over tiles) outside them, once per tile. A hot loop's figures are
    its common path's: code behind a warp vote (:func:`_cold_ranges`) is left out, with its
    accesses."""
    ops, labels, functions = _parse(text)
    cold = _cold_ranges(ops, labels)
    loops = []
    for op in ops:
        if op.base == "BRA":
            m = _TARGET.search(op.text)
            if m and m.group(1) in labels and labels[m.group(1)] <= op.offset:
                loops.append((labels[m.group(1)], op.offset))
    hot = set()
    for op in ops:
        if _is_global(op):
            around = [lp for lp in loops if lp[0] <= op.offset <= lp[1]]
            if around:
                hot.add(min(around, key=lambda lp: lp[1] - lp[0]))
    result = []
    for start, end in sorted(hot):
        body = [op for op in ops if start <= op.offset <= end
                and not any(a <= op.offset <= b for a, b in cold)]
        calls = []
        for op in body:
            if op.base == "CALL":
                m = _TARGET.search(op.text)
                if m:
                    calls.append(m.group(1))
        # Helper bodies are not counted: the compiler guards each 64-bit division with an
        # inline 32-bit path, the one taken when the operands fit (the usual case).
        count = _heaviest_path(ops, labels, start, end, cold)
        loads = tuple(_width(op) for op in body if op.base in ("LDG", "LD", "LDGSTS"))
        stores = tuple(_width(op) for op in body if op.base in ("STG", "ST"))
        shared = sum(op.base in ("LDS", "STS", "LDSM") for op in body)
        in_flight, in_flight_bytes = _in_flight(body, set(labels.values()))
        division = tuple(DIVISION_HELPER.search(c).group(0) for c in calls
                         if DIVISION_HELPER.search(c))
        copies = sum(op.base == "LDGSTS" for op in body)
        result.append(Loop(start, end, count, loads, stores, shared, in_flight, in_flight_bytes,
                           division, copies))
    spills = sum(op.base in ("LDL", "STL") for op in ops)
    # A backward branch into the middle of a hot loop is a rare path placed out of line
    # jumping back, not a loop around it.
    around = [lp for lp in loops if not any(a < lp[0] <= b for a, b in hot)]
    outer = {min((lp for lp in around if lp[0] <= start and end <= lp[1] and lp != (start, end)),
                 key=lambda lp: lp[1] - lp[0], default=None) for start, end in hot}
    outer.discard(None)
    # (the rare paths not counted either: behind a vote, a tile's usual rounds skip them)
    per_block = sum(_heaviest_path(ops, labels, lo, hi, hot | set(cold)) for lo, hi in outer)
    return len(ops), spills, result, per_block


# ---------------------------------------------------------------- one kernel variant


def _cache_path(source: str, name: str, arch: str) -> Path:
    key = hashlib.sha256(repr((FORMAT, expanded_source(source), name, arch,
                               nvrtc_version())).encode()).hexdigest()[:32]
    return config.cache_dir() / "sass" / f"{key}.json"


def _from_json(data: dict) -> KernelSass:
    loops = tuple(Loop(**{k: tuple(v) if isinstance(v, list) else v for k, v in lp.items()})
                  for lp in data.pop("loops"))
    return KernelSass(**data, loops=loops)


def _code_listings(text: str) -> dict[str, str]:
    """``.text.<lowered name> -> its listing`` of an ``nvdisasm -c`` listing of several code
    sections: each kernel's code with the subroutines it calls, offsets from 0 in each."""
    listings: dict[str, list[str]] = {}
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("\t.section\t.text."):
            current = listings.setdefault(line.split("\t")[2].split(",")[0], [])
        current.append(line)
    return {section: "\n".join(lines) for section, lines in listings.items()}


def read_program(program, names=None) -> dict[str, KernelSass]:
    """``name -> KernelSass`` of ``names`` (default: all) of a compiled program for an
    ``sm_XX`` (:class:`infini_cupy.runtime.nvrtc.CompiledProgram`), each as a program of that
    name alone gives it: NVRTC compiles each name expression's kernel apart, and one
    ``nvdisasm`` run prints the code sections of them all."""
    names = list(dict.fromkeys(program.lowered_names if names is None else names))
    cubin = program.binary
    found = sections(cubin)
    table = symbols(cubin, found)
    wanted = {f".text.{program.lowered_names[name]}" for name in names}
    listings = _code_listings(disassemble(cubin, [index for index, (symbol, section)
                                                  in enumerate(table) if section in wanted
                                                  and symbol == section[len(".text."):]]))
    registers = info_by_code(cubin, found, table, EIATTR_REGCOUNT)
    frames = info_by_code(cubin, found, table, EIATTR_FRAME_SIZE)
    read = {}
    for name in names:
        lowered = program.lowered_names[name]
        code = f".text.{lowered}"
        shared = found.get(f".nv.shared.{lowered}")
        instructions, spills, loops, per_block = analyze(listings.get(code, ""))
        read[name] = KernelSass(program.source, name, program.arch,
                                max(registers.get(code, ()), default=0),
                                shared[2] if shared else 0, max(frames.get(code, ()), default=0),
                                spills, instructions, tuple(loops), per_block)
    return read


def compile_and_read_all(source: str, names, arch: str = ARCH) -> dict[str, KernelSass]:
    """:func:`read_program` of ``names`` compiled together in one NVRTC program (no cache)."""
    return read_program(compile_program(source, list(dict.fromkeys(names)), arch))


def compile_and_read(source: str, name: str, arch: str = ARCH) -> KernelSass:
    """Compile one name expression with NVRTC and read its cubin and SASS (no cache)."""
    return compile_and_read_all(source, [name], arch)[name]


_read: dict[tuple[str, str, str], KernelSass] = {}  # this process's, beside the disk's


def read_kernels(source: str, names, arch: str = ARCH,
                 programs_for=None) -> dict[str, KernelSass]:
    """:func:`read_kernel` of each of ``names``. Those neither this process nor the disk cache
    holds are compiled together in one program (:func:`compile_and_read_all`: one NVRTC parse
    and one ``nvdisasm`` run, most of a variant's second, for them all), or taken from
    ``programs_for(those names)``: compiled programs holding them, built with the run time's
    options or with options that change no code (ptxas's report), as a caller that compiled
    them already for another reason has them."""
    read, missing = {}, []
    for name in dict.fromkeys(names):
        key = (source, name, arch)
        if key not in _read:
            try:
                _read[key] = _from_json(json.loads(_cache_path(*key).read_text()))
            except (OSError, ValueError, TypeError, KeyError):
                missing.append(name)
                continue
        read[name] = _read[key]
    if not missing:
        return read
    found = {}
    for program in (programs_for(missing) if programs_for is not None else ()):
        held = [name for name in missing if name in program.lowered_names and name not in found]
        if held and (program.source, program.arch) == (source, arch):
            found.update(read_program(program, held))
    rest = [name for name in missing if name not in found]
    found.update(compile_and_read_all(source, rest, arch) if rest else {})
    for name, kernel in found.items():
        _read[(source, name, arch)] = read[name] = kernel
        path = _cache_path(source, name, arch)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(asdict(kernel)))
            os.replace(temporary, path)
        except OSError:  # an unwritable cache costs time, not results
            pass
    return read


def read_kernel(source: str, name: str, arch: str = ARCH) -> KernelSass:
    """:func:`compile_and_read`, cached on disk (and in memory) per kernel variant."""
    return read_kernels(source, [name], arch)[name]


def kernel_sass(source: str, name: str):
    """The variant's :class:`KernelSass`, or None where NVRTC or nvdisasm is missing."""
    try:
        return read_kernel(source, name)
    except RuntimeError:
        return None
