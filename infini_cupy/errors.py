"""Exceptions of our own (everything else raises the array API standard's built-in types)."""

from __future__ import annotations


class KernelCompileError(RuntimeError):
    """A kernel source failed to compile (NVRTC or the emulator's g++).

    The message names the kernel, the compiler options, the compiler's log and the numbered
    source, so the failing line can be read without opening any file.
    """

    def __init__(self, compiler: str, names, options, log: str, numbered_source: str):
        self.compiler = compiler
        self.names = tuple(names)
        self.options = tuple(options)
        self.log = log
        super().__init__(
            f"{compiler} failed to compile {', '.join(self.names)}\n"
            f"options: {' '.join(self.options)}\n"
            f"log:\n{log.strip()}\n"
            f"source:\n{numbered_source}"
        )


class KernelFault(RuntimeError):
    """An emulated kernel did something that would be undefined on the GPU.

    Raised for out-of-bounds global accesses, naming kernel, block, thread and address.
    """
