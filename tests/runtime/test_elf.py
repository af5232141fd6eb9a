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


def test_parameter_sizes_are_those_the_ptx_declares():
    """The stand-in reads a cubin's parameters as the driver does (.nv.info), not from a
    second compile to PTX: the same sizes, kernel by kernel."""
    from tests.support.ptx import ptx_parameters

    names = ["tiled_copy<4, 1, 1, 0, 0>", "tiled_copy<2, 8, 8, 0, 1>"]  # structs of 280, 32
    program = compile_program("transpose.cu", names, "sm_90")
    assert elf.parameter_sizes(program.binary) == ptx_parameters(program.ptx)
    assert len(elf.parameter_sizes(program.binary)) == 2
