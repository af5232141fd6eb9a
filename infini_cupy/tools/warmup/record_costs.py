"""Record the instruction costs the planner weighs (``infini_cupy/perf/kernel_costs.json``):
every name expression the planners can return, read from NVRTC's sm_90 code by
:mod:`infini_cupy.readers.sass` (NVRTC and nvdisasm, no GPU; about a second per variant, cached).

Run after changing a kernel source: ``python -m infini_cupy.tools.warmup.record_costs``.
"""

from __future__ import annotations

import json
import sys

from ...runtime.nvrtc import nvrtc_version
from ...perf import kernel_costs
from ...strided.packed_planner import all_packed_kernel_names
from ...strided.seed_planner import all_kernel_names
from ...strided.tile_planner import all_tiled_kernel_names
from ...readers import sass


def recorded_kernels() -> list[tuple[str, str]]:
    """(source, name expression) of the variants the table records: every staged, packed and
    flat-index variant, and of the seed kernels the heaviest per unit and index type (5 block
    dims, 5 grid dims, 2 constraints), which bounds the others."""
    seed = [n for n in all_kernel_names() if n.startswith("rearrange_general<")
            or n == kernel_costs.table_key(n)]
    return ([("rearrange.cu", n) for n in seed]
            + [("transpose.cu", n) for n in all_tiled_kernel_names()]
            + [("packed.cu", n) for n in all_packed_kernel_names()])


def record(source: str, name: str) -> list:
    """One variant's :class:`~infini_cupy.perf.kernel_costs.Cost`, as the table holds it."""
    code = sass.read_kernel(source, name)
    return [round(code.instructions_per_byte, 2), code.per_block_instructions, code.registers,
            code.shared_bytes, code.bytes_in_flight, int(code.asynchronous)]


def main(argv=None) -> int:
    kernels = {}
    for i, (source, name) in enumerate(recorded_kernels()):
        kernels[name] = record(source, name)
        if i % 100 == 0:
            print(f"{i} variants read", file=sys.stderr)
    table = {"about": "per variant: instructions per global byte in its hot loops, instructions "
                      "per tile of its loop over tiles, registers, static shared bytes, bytes of "
                      "loads in flight per thread, 1 where they are asynchronous copies (cp.async), read from NVRTC's sm_90 code by "
                      "infini_cupy.readers.sass; written by python -m infini_cupy.tools.warmup.record_costs",
             "arch": sass.ARCH, "nvrtc": ".".join(map(str, nvrtc_version())), "kernels": kernels}
    # One variant per line: a kernel change shows in the diff as the lines it moves.
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in kernels.items()]
    head = json.dumps({k: v for k, v in table.items() if k != "kernels"}, indent=1)[:-2]
    kernel_costs.TABLE.write_text(head + ',\n "kernels": {\n' + ",\n".join(lines) + "\n }\n}\n")
    print(f"{len(kernels)} variants recorded in {kernel_costs.TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
