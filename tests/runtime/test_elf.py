"""Reading a cubin (infini_cupy/runtime/elf.py, infini_cupy/readers/sass.py): its sections and SASS, on what NVRTC makes
for sm_90."""

from infini_cupy.runtime.nvrtc import compile_program
from infini_cupy.readers import sass
from infini_cupy.runtime import elf


def test_registers_and_shared_memory_of_a_compiled_kernel():
    program = compile_program("transpose.cu", ["tiled_copy<4, 1, 1, 0, 0>"], "sm_90")
    image = program.binary
    found = elf.sections(image)
    lowered = program.lowered_names["tiled_copy<4, 1, 1, 0, 0>"]
    kind, _, size, _ = found[f".nv.shared.{lowered}"]
    assert kind == 8 and size == 16896 + 1024  # the compact tile and sm_90's reserved 1 KiB
    assert 16 <= max(elf.info_values(image, found, elf.EIATTR_REGCOUNT)) <= 64
    assert ".text." + lowered in sass.disassemble(image)
