"""Reading a cubin (infini_cupy/tools/cubin.py): its ELF extent and sections, on a hand-made
image and on what NVRTC makes for sm_90."""

import struct

from infini_cupy.runtime.nvrtc import compile_program
from infini_cupy.tools import cubin


def test_a_truncated_cubin_is_padded_to_its_elf_extent():
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    struct.pack_into("<Q", header, 0x28, 64)  # section headers right after the header
    struct.pack_into("<HHHH", header, 0x36, 56, 0, 64, 1)
    image = bytes(header) + bytes(64)  # one (null) section header
    assert cubin.whole_cubin(image[:-1]) == image
    assert cubin.whole_cubin(image) == image


def test_registers_and_shared_memory_of_a_compiled_kernel():
    program = compile_program("transpose.cu", ["tiled_copy<4, 1, 1, 0>"], "sm_90")
    image = cubin.whole_cubin(program.binary)
    found = cubin.sections(image)
    lowered = program.lowered_names["tiled_copy<4, 1, 1, 0>"]
    kind, _, size, _ = found[f".nv.shared.{lowered}"]
    assert kind == 8 and size == 16896 + 1024  # the compact tile and sm_90's reserved 1 KiB
    assert 16 <= max(cubin.info_values(image, found, cubin.EIATTR_REGCOUNT)) <= 64
    assert ".text." + lowered in cubin.disassemble(image)
