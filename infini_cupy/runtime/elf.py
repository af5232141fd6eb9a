"""The one ELF reader of cubins: what a cubin must be before the driver gets it (a complete
CUDA ELF file, for the architecture it is loaded on), and the sections and ``.nv.info``
attributes the SASS reader (:mod:`infini_cupy.readers.sass`) takes its figures from.

Pure Python (no CUDA, nothing else of the package): the launchers (:mod:`.nvrtc`,
:mod:`.cuda`) check every cubin with :func:`problem`.

A cubin ends with its program header table, so a file one byte short (what CuPy's
``nvrtc.getCUBIN`` returns: it strips a "trailing NUL" as for PTX, and a cubin has none) is
refused by ``nvdisasm`` and may be by the driver. :func:`problem` says what is wrong with a
binary, or None; the launcher checks every cubin it writes and every one it loads from disk.

>>> problem(b"\\x7fELF" + bytes(60))
'not a 64-bit little-endian ELF file'
"""

from __future__ import annotations

import struct

EM_CUDA = 190  # ELF e_machine of NVIDIA GPU code
_HEADER = struct.Struct("<HHIQQQIHHHHHH")  # e_type .. e_shstrndx, after the 16-byte e_ident
_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym: name, info, other, section, value, size
SHT_NOBITS = 8
EIATTR_FRAME_SIZE, EIATTR_REGCOUNT = 0x11, 0x2F  # .nv.info attributes: stack bytes, registers
EIATTR_KPARAM_INFO = 0x17  # .nv.info.<kernel>: one entry per parameter (ordinal, offset, size)


def problem(binary: bytes, arch: str | None = None) -> str | None:
    """Why ``binary`` is not a complete cubin (for ``sm_XX`` ``arch``, when given), or None.

    Complete: the ELF header, the program and section header tables and every section with
    contents lie within the file; the machine is a CUDA GPU; for ELF ABI version 8 (CUDA 12.8
    and later), the architecture in ``e_flags`` is ``arch``'s.
    """
    size = len(binary)
    if size < 16 + _HEADER.size or binary[:4] != b"\x7fELF":
        return "not an ELF file" if binary[:4] != b"\x7fELF" else f"{size} bytes: no ELF header"
    if binary[4] != 2 or binary[5] != 1:
        return "not a 64-bit little-endian ELF file"
    (_, machine, _, _, phoff, shoff, flags, _, phentsize, phnum, shentsize, shnum,
     _) = _HEADER.unpack_from(binary, 16)
    if machine != EM_CUDA:
        return f"ELF machine {machine}, not a CUDA GPU ({EM_CUDA})"
    for what, offset, count, entry in (("program", phoff, phnum, phentsize),
                                       ("section", shoff, shnum, shentsize)):
        if count and offset + count * entry > size:
            return (f"truncated: its {what} header table ends at byte {offset + count * entry}, "
                    f"the file has {size}")
    for index in range(shnum if shentsize == _SECTION.size else 0):
        fields = _SECTION.unpack_from(binary, shoff + index * shentsize)
        kind, offset, length = fields[1], fields[4], fields[5]
        if kind != SHT_NOBITS and offset + length > size:
            return f"truncated: section {index} ends at byte {offset + length}, the file has {size}"
    if arch is not None and arch.startswith("sm_") and binary[8] == 8:
        built = (flags >> 8) & 0xFF
        wanted = int(arch.split("_")[1].rstrip("af"))
        if built != wanted:
            return f"built for sm_{built}, not {arch}"
    return None


def _section_headers(binary: bytes) -> list[tuple]:
    """Every Elf64_Shdr of ``binary``, as :data:`_SECTION` unpacks it."""
    (*_, shoff, _flags, _ehsize, _phentsize, _phnum, shentsize, shnum,
     _shstrndx) = _HEADER.unpack_from(binary, 16)
    return [_SECTION.unpack_from(binary, shoff + k * shentsize) for k in range(shnum)]


def _section_names(binary: bytes, headers: list[tuple]) -> list[str]:
    shstrndx = _HEADER.unpack_from(binary, 16)[-1]
    names_at = headers[shstrndx][4]
    return [binary[names_at + header[0]:binary.index(b"\0", names_at + header[0])].decode()
            for header in headers]


def sections(binary: bytes) -> dict[str, tuple[int, int, int, int]]:
    """name -> (type, offset, size, info) of every section of a cubin."""
    headers = _section_headers(binary)
    return {name: (kind, offset, size, info) for name, (_, kind, _flags, _addr, offset, size,
                                                         _link, info, _align, _entsize)
            in zip(_section_names(binary, headers), headers)}


def _values(binary: bytes, offset: int, size: int):
    """(attribute, payload offset, payload length) of each EIFMT_SVAL entry of the .nv.info
    section at ``offset`` (the others carry no payload to read)."""
    at, end = offset, offset + size
    while at + 4 <= end:
        fmt, attr, length = struct.unpack_from("<BBH", binary, at)
        if fmt == 0x04:  # EIFMT_SVAL: a payload of `length` bytes
            yield attr, at + 4, length
            at += 4 + length
        else:
            at += 4


def _info_entries(binary: bytes, found: dict, attribute: int):
    """(symbol index, value) of each (symbol, value) entry of ``attribute`` in .nv.info."""
    if ".nv.info" not in found:
        return
    _, offset, size, _ = found[".nv.info"]
    for attr, payload, length in _values(binary, offset, size):
        if attr == attribute and length >= 8:
            yield struct.unpack_from("<II", binary, payload)


def info_values(binary: bytes, found: dict, attribute: int) -> list[int]:
    """The values of one (symbol, value) attribute of the .nv.info section: stack bytes
    (EIATTR_FRAME_SIZE) or registers (EIATTR_REGCOUNT) per function."""
    return [value for _, value in _info_entries(binary, found, attribute)]


def symbols(binary: bytes, found: dict) -> list[tuple[str, str]]:
    """(name, name of the section it lies in) of each symbol of ``.symtab``, by symbol index
    (what .nv.info entries and ``nvdisasm -fun`` point at): a kernel and the subroutines it
    calls (``$__internal_*`` division helpers) lie in the kernel's ``.text.<lowered name>``."""
    if ".symtab" not in found or ".strtab" not in found:
        return []
    section_names = _section_names(binary, _section_headers(binary))
    _, offset, size, _ = found[".symtab"]
    _, strings, _, _ = found[".strtab"]
    out = []
    for at in range(offset, offset + size - _SYMBOL.size + 1, _SYMBOL.size):
        name, _info, _other, index, _value, _size = _SYMBOL.unpack_from(binary, at)
        out.append((binary[strings + name:binary.index(b"\0", strings + name)].decode(),
                    section_names[index] if index < len(section_names) else ""))
    return out


def info_by_code(binary: bytes, found: dict, table: list,
                 attribute: int) -> dict[str, list[int]]:
    """``.text.<lowered name> -> values`` of one .nv.info attribute (:func:`info_values`) for
    the functions in each code section (``table``: :func:`symbols`): a cubin of several
    kernels, read kernel by kernel."""
    out: dict[str, list[int]] = {}
    for index, value in _info_entries(binary, found, attribute):
        if index < len(table) and table[index][1].startswith(".text."):
            out.setdefault(table[index][1], []).append(value)
    return out


def parameter_sizes(binary: bytes) -> dict[str, tuple[int, ...]]:
    """``kernel -> byte size of each parameter`` of every kernel of a cubin (lowered names),
    as the driver reads them: the EIATTR_KPARAM_INFO entries of each kernel's
    ``.nv.info.<kernel>`` section (ordinal at bytes 4-5 of the payload, size in the top 14
    bits of its last word), what PTX declares as the entry's ``.param``s."""
    found = sections(binary)
    out = {}
    for name, (_, offset, size, _) in found.items():
        if not name.startswith(".nv.info."):
            continue
        sizes = {}
        for attr, payload, length in _values(binary, offset, size):
            if attr == EIATTR_KPARAM_INFO and length >= 12:
                _, ordinal, _, flags = struct.unpack_from("<IHHI", binary, payload)
                sizes[ordinal] = (flags >> 18) & 0x3FFF
        out[name[len(".nv.info."):]] = tuple(sizes[k] for k in sorted(sizes))
    return out
