"""Reading a cubin (infini_cupy/tools/cubin.py): its sections and SASS, on what NVRTC makes
for sm_90."""

from infini_cupy.runtime.nvrtc import compile_program
from infini_cupy.tools import cubin


def test_registers_and_shared_memory_of_a_compiled_kernel():
    program = compile_program("transpose.cu", ["tiled_copy<4, 1, 1, 0, 0>"], "sm_90")
    image = program.binary
    found = cubin.sections(image)
    lowered = program.lowered_names["tiled_copy<4, 1, 1, 0, 0>"]
    kind, _, size, _ = found[f".nv.shared.{lowered}"]
    assert kind == 8 and size == 16896 + 1024  # the compact tile and sm_90's reserved 1 KiB
    assert 16 <= max(cubin.info_values(image, found, cubin.EIATTR_REGCOUNT)) <= 64
    assert ".text." + lowered in cubin.disassemble(image)
