"""``python -m infini_cupy plan``: how a layout becomes a launch, printed step by step.

Strides are given in ELEMENTS, comma-separated, or ``C`` / ``F`` for a contiguous layout
(the convention of the bench's ``--case SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE``); the planner
works in bytes and so does the printout. The coalescing efficiency is measured in emulation
(the CPU emulator traces every global access of the planned kernel; see
:mod:`infini_cupy.readers.coalescing`) over the first ``--profile-blocks`` blocks of the launch.

>>> from infini_cupy.__main__ import main
>>> main(["plan", "--shape", "64,48", "--src-strides", "1,64", "--dtype", "float32",
...       "--no-profile"])  # doctest: +ELLIPSIS
layout      shape (64, 48), float32 (4 bytes)
...
plan        tiled_copy<4, 4, 4, 0, 0>
...
0
"""

from __future__ import annotations

import shutil
import textwrap

from ..perf import limits
from ..perf.devices import H100
from ..readers import sass
from ..readers.sampled_launches import PROFILE_BLOCKS, profile_plan
from ..strided.layout import normalize_layout
from .arguments import positive_int
from ..strided.packed_planner import PackedPlan
from ..strided.plan_cache import pack
from ..strided.planner import plan_rearrange
from ..strided.seed_planner import GeneralRearrangePlan, RearrangePlan, units_per_thread
from ..strided.tile_planner import TilePlan
from .cases import CaseSyntaxError, parse_layout, split_case

HELP = "print the plan (normalized dims, unit, block/grid split, kernel) of a strided copy"
LABEL = 12  # width of the section labels on the left
WIDTH = 100  # columns of the printout


def add_arguments(parser) -> None:
    parser.add_argument("--shape", help="lengths, comma-separated: 8,64,224,224")
    parser.add_argument("--src-strides", default="C",
                        help="source strides in elements, comma-separated (0: broadcast; "
                             "negative: reversed), or C / F (default C)")
    parser.add_argument("--dst-strides", default="C", help="destination strides, as above")
    parser.add_argument("--dtype", default="float32", help="element type (default float32)")
    parser.add_argument("--case", help="SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE in one argument "
                                       "(the bench's --case), instead of the four above")
    parser.add_argument("--src-offset", type=int, default=0,
                        help="elements between a 32-byte boundary and the source's element 0 "
                             "(an offset view; default 0)")
    parser.add_argument("--dst-offset", type=int, default=0, help="the same for the destination")
    parser.add_argument("--max-threads", type=positive_int, default=1024, help="thread budget per block")
    parser.add_argument("--no-tiles", action="store_true",
                        help="the seed-style plan (no shared-memory staging) for comparison")
    parser.add_argument("--coalescing", action="store_true",
                        help="choose by coalescing alone: packed tiles wherever they coalesce "
                             "better, whatever instructions they issue (for comparison)")
    parser.add_argument("--no-profile", action="store_true",
                        help="skip measuring coalescing in the emulator (needs g++)")
    parser.add_argument("--profile-blocks", type=positive_int, default=PROFILE_BLOCKS,
                        help=f"blocks to run under the emulator's tracing (default {PROFILE_BLOCKS})")


def _table(header, rows) -> list[str]:
    """Right-aligned columns."""
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells]


def _dims_table(lengths, dst, src, name="dim") -> list[str]:
    rows = [(i, n, d, s) for i, (n, d, s) in enumerate(zip(lengths, dst, src))]
    return ["  " + line for line in _table((name, "length", "dst stride", "src stride"), rows)]


def section(label: str, lines) -> str:
    """``label`` in a left column, the lines (wrapped at WIDTH columns) beside it."""
    out = []
    for line in lines:
        if len(line) <= WIDTH - LABEL:
            out.append(line)
        else:
            indent = " " * (len(line) - len(line.lstrip()))
            out += textwrap.wrap(line, WIDTH - LABEL, initial_indent=indent,
                                 subsequent_indent=indent + "  ")
    return "\n".join(f"{label if i == 0 else '':{LABEL}s}{line}".rstrip()
                     for i, line in enumerate(out))


def describe_layout(layout) -> list[str]:
    """Lines describing a :class:`~infini_cupy.strided.layout.NormalizedLayout`."""
    return [
        f"unit {layout.unit} bytes per thread access, {layout.total} units to copy "
        f"({layout.contiguous_bytes} bytes contiguous in both before the vector width)",
        "length-1 dims dropped, sorted by |dst stride|, chained dims merged (bytes):",
        *_dims_table(layout.shape, layout.dst_strides, layout.src_strides),
    ]


def plan_kind(plan) -> str:
    """One line: which family of kernel the plan launches, and why."""
    if isinstance(plan, TilePlan):
        if plan.read_along == 0:
            return ("staged transpose: the dims contiguous in src and in dst differ, so each "
                    "tile is read along src's and written along dst's, through shared memory")
        return "staged copy: rows start off sector boundaries; each side aligns its own accesses"
    if isinstance(plan, PackedPlan):
        if plan.shared_bytes:
            return ("packed staged copy in dynamic shared memory: rows start anywhere in a "
                    "sector, so only tiles beyond 48 KiB make runs long enough on both sides; "
                    "read in src order and written in dst order")
        return ("packed staged copy: contiguous dims are short, so each tile spans several dims "
                "on each side, read in src order and written in dst order through shared memory")
    if isinstance(plan, GeneralRearrangePlan):
        return ("flat-index kernel: the split needs more than 5 block or grid dims, outside "
                "the kernel matrix")
    return "kernel matrix: the threads of a block walk the block dims, blocks the grid dims"


def describe_plan(plan) -> list[str]:
    """Lines describing a plan of any kind (strides in bytes)."""
    lines = [plan.kernel, plan_kind(plan)]
    if isinstance(plan, RearrangePlan):
        lines.append(f"block dims (thread index, last fastest), {plan.block_elements} elements:")
        lines += _dims_table(plan.block_len, plan.dst_block_stride, plan.src_block_stride,
                             "block")
        lines.append("grid dims (block index, last fastest):")
        lines += _dims_table(plan.grid_len, plan.dst_grid_stride, plan.src_grid_stride, "grid")
        if plan.constraints:
            lines.append("constraints (split dims the block part does not divide):")
            lines += [f"  grid[{c.grid_idx}] * {c.grid_div_block} + block[{c.block_idx}] "
                      f"< {c.total_len}" for c in plan.constraints]
        else:
            lines.append("constraints: none (every split divides its dim)")
    elif isinstance(plan, GeneralRearrangePlan):
        lines.append(f"thread i copies element i of the C-order enumeration ({plan.total}):")
        lines += _dims_table(plan.shape, plan.dst_strides, plan.src_strides)
    elif isinstance(plan, PackedPlan):
        lines += _describe_packed(plan)
    else:
        lines += _describe_tiles(plan)
    return lines


def _side_table(side) -> list[str]:
    rows = []
    for k, (n, full, stride, slot) in enumerate(zip(side.length, side.full, side.stride, side.slot)):
        what = "run" if k < side.run else "row"
        rows.append((k, what, f"{n}" if n == full else f"{n} of {full}", stride, slot))
    return ["  " + line for line in _table(("dim", "part", "length", "stride", "slot"), rows)]


def _describe_packed(plan: PackedPlan) -> list[str]:
    kib = plan.capacity * plan.unit / 1024
    variant = ("dynamic shared memory" if plan.shared_bytes else
               "wide variant" if plan.wide else "compact variant")
    lines = [f"tile of {plan.tile_elements} elements of {plan.unit} bytes "
             f"({variant}, {kib:.4g} KiB), {plan.tiles} tiles; "
             f"predicted reads {plan.predicted[0]:.3f}, writes {plan.predicted[1]:.3f} of the "
             "sector limit"]
    for name, side, memory in (("phase 1 reads", plan.read, "src"),
                               ("phase 2 writes", plan.write, "dst")):
        walk = ("virtual rows from sector boundaries" if side.aligned else "dense items")
        lines.append(f"{name} in {memory} order, runs of the first {side.run} dim(s), {walk}"
                     + (", rows equally aligned" if side.uniform else "") + " (bytes):")
        lines += _side_table(side)
    lines.append("outer dims (block index, last fastest; chunk indices of split dims):")
    lines += _dims_table(plan.outer_len, plan.outer_dst_stride, plan.outer_src_stride, "outer")
    return lines


def _describe_tiles(plan: TilePlan) -> list[str]:
    kib = plan.capacity * plan.unit / 1024
    shifted = (f", first tiles shifted by ({plan.shift0}, {plan.shift1})"
               if plan.shift0 or plan.shift1 else "")
    lines = [
        f"tile {plan.tile0} x {plan.tile1} elements of {plan.unit} bytes, shared-memory pitch "
        f"{plan.pitch} ({'wide' if plan.wide else 'compact'} variant, {kib:g} KiB); "
        f"{plan.tiles0} x {plan.tiles1} tiles{shifted}",
        "tiled dims (bytes):",
        *["  " + line for line in _table(
            ("tiled", "length", "dst stride", "src stride"),
            [(0, plan.len0, plan.dst_stride0, plan.src_stride0),
             (1, plan.len1, plan.dst_stride1, plan.src_stride1)])],
        f"reads along dim {plan.read_along}, {plan.read_vector} element(s) per access"
        + (", rows chained" if plan.read_chained else "")
        + _spread_note(plan.read_spread, plan.read_rows)
        + f"; writes along dim 1, {plan.write_vector} element(s) per access"
        + (", rows chained" if plan.write_chained else "") + _spread_note(plan.write_spread),
    ]
    if plan.batch_len:
        lines.append("batch dims (one tile per index):")
        lines += _dims_table(plan.batch_len, plan.dst_batch_stride, plan.src_batch_stride,
                             "batch")
    if plan.src_offset or plan.dst_offset:
        lines.append(f"element 0 at dst + {plan.dst_offset}, src + {plan.src_offset} bytes "
                     "(reversed dims walked upwards from their far end)")
    return lines


def _spread_note(spread: int, rows: int = 1) -> str:
    if rows > 1:
        return (f", {rows} rows {spread} apart per warp access, {32 // rows} lanes each "
                "(no bank conflicts)")
    return (f", a warp access's short rows {spread} apart (no bank conflicts)"
            if spread > 1 else "")


def describe_launch(plan, layout) -> list[str]:
    per_block = layout.total / plan.grid_blocks if plan.grid_blocks else 0
    blocks = "1 block" if plan.grid_blocks == 1 else f"{plan.grid_blocks} blocks"
    per_block = f"{per_block:,.0f}" if per_block >= 10 else f"{per_block:.3g}"
    lines = [f"{blocks} x {plan.block_threads} threads, {per_block} units per block"]
    if isinstance(plan, (RearrangePlan, GeneralRearrangePlan)) and plan.grid_blocks:
        lines.append(f"launched as {plan.launch_blocks} blocks (sized for {H100.sms} SMs), "
                     f"{units_per_thread(plan.unit)} units per thread per trip, "
                     f"{plan.kernel.rsplit(', ', 1)[1][:-1]} index arithmetic")
    return lines


def describe_model(plan, layout, profile) -> list[str]:
    """The H100 model's lines (:mod:`infini_cupy.perf.limits`): the kernel's SASS figures, its limits and
    the predicted fraction of a device-to-device copy."""
    source, grid, _, _, shared_mem = pack(plan)  # the launched grid
    code = sass.kernel_sass(source, plan.kernel)
    lines = []
    if code is None:
        lines.append(f"no SASS read ({sass.NVDISASM_HINT}); issue and latency limits left out")
    else:
        lines.append(
            f"sm_90: {code.registers} registers, {code.shared_bytes + shared_mem} bytes of "
            f"shared memory per block, {code.local_bytes} of local memory, {code.spills} spills; "
            f"{len(code.loops)} hot loop(s), {code.instructions_per_byte:.2f} instructions per "
            f"byte in them, {code.per_block_instructions} per tile; "
            f"{code.bytes_in_flight} load bytes in flight per thread (widest access "
            f"{code.widest_access} bytes)"
            + (f"; 64-bit division helpers in hot loops: {', '.join(code.helper_calls)}"
               if code.helper_calls else ""))
    p = limits.predict_profile(
        profile, kernel=code, grid_blocks=grid, block_threads=plan.block_threads,
        dynamic_shared=shared_mem,
        tile_bytes=limits.tile_bytes(plan, layout.total * layout.unit))
    device = p.device
    lines.append(
        f"{p.blocks_per_sm} blocks per SM (limited by {p.occupancy_limiter}), "
        f"{p.waves:.2f} waves over {device.sms} SMs; {p.bytes_in_flight_per_sm / 1024:.1f} KiB "
        f"of loads in flight per SM (Little's law: {device.little_bytes / 1024:.1f} KiB for "
        f"reads and writes); {p.instructions_per_byte:.2f} instructions per byte with the "
        "per-tile ones")
    lines.append("limits (fraction of a device-to-device copy): " + ", ".join(
        f"{name} {value:.2f}" for name, value in p.limits.items()))
    lines.append(f"predicted {p.fraction:.2f} of an {device.name} copy "
                 f"({device.dram_bytes_per_s / 1e12:.2f} TB/s), limited by {p.limiter}")
    return lines


def _layout_args(args):
    if args.case:
        given = [flag for flag, value in (
            ("--shape", args.shape), ("--src-strides", args.src_strides != "C"),
            ("--dst-strides", args.dst_strides != "C"), ("--dtype", args.dtype != "float32"))
            if value]
        if given:
            raise CaseSyntaxError(f"--case holds the layout: give it or {', '.join(given)}, "
                                  "not both")
        return parse_layout(*split_case(args.case), what="--case")
    if args.shape:
        return parse_layout(args.shape, args.src_strides, args.dst_strides, args.dtype,
                            names=("--shape", "--src-strides", "--dst-strides", "--dtype"))
    raise CaseSyntaxError("give --shape (with --src-strides, --dst-strides, --dtype) or --case")


def run(args) -> int:
    try:
        shape, src, dst, dtype = _layout_args(args)
    except (ValueError, TypeError) as e:
        print(f"plan: {e}")
        return 2
    size = dtype.itemsize
    src_bytes, dst_bytes = tuple(s * size for s in src), tuple(s * size for s in dst)
    dst_address, src_address = args.dst_offset * size % 32, args.src_offset * size % 32
    lines = [f"shape {shape}, {dtype} ({size} bytes)"]
    for name, strides, in_bytes, address in (("src", src, src_bytes, src_address),
                                             ("dst", dst, dst_bytes, dst_address)):
        lines.append(f"{name} strides {strides} elements = {in_bytes} bytes"
                     + (f", element 0 at {address} bytes into a sector" if address else ""))
    print(section("layout", lines))
    try:
        layout = normalize_layout(shape, dst_bytes, src_bytes, size,
                                  dst_address=dst_address, src_address=src_address)
        plan = plan_rearrange(shape, dst_bytes, src_bytes, size, max_threads=args.max_threads,
                              dst_address=dst_address, src_address=src_address,
                              tiles=not args.no_tiles, weigh_issue=not args.coalescing)
    except ValueError as e:
        print(f"plan: {e}")
        return 2
    print(section("normalized", describe_layout(layout)))
    print(section("plan", describe_plan(plan)))
    if plan.empty:
        print(section("launch", ["none: nothing to copy"]))
        return 0
    print(section("launch", describe_launch(plan, layout)))
    if args.no_profile:
        return 0
    if shutil.which("g++") is None:
        print(section("coalescing", ["not measured: the emulator needs g++"]))
        return 0
    try:
        profile, blocks = profile_plan(plan, shape, dst_bytes, src_bytes, dtype,
                                       dst_address=dst_address, src_address=src_address,
                                       max_blocks=args.profile_blocks)
    except MemoryError:
        print(section("coalescing", ["not measured: the arrays' address ranges could not be "
                                     "reserved"]))
        return 0
    scope = "all" if blocks == plan.grid_blocks else f"the first {blocks} of {plan.grid_blocks}"
    lines = [f"emulated over {scope} blocks: bytes used / bytes of the 32-byte sectors "
             "fetched (1.0 is ideal)"]
    for name, stats in (("reads", profile.reads), ("writes", profile.writes)):
        lines.append(f"{name:6s} {stats.efficiency:.3f} ({stats.sectors_per_request:.1f} sectors "
                     f"per warp access; {stats.block_efficiency:.3f} per block)")
    if profile.shared.requests:
        lines.append(f"shared {profile.shared.ratio:.3f} wavefronts per conflict-free wavefront "
                     f"(bank conflicts; 1.0 is ideal) over {profile.shared.requests} warp accesses")
    print(section("coalescing", lines))
    print(section("H100 model", describe_model(plan, layout, profile)))
    return 0
