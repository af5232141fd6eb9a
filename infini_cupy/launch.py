"""One entry point for launching a kernel, whatever the backend.

Everything above this call (planning, caching, argument packing, grid sizes) is shared by
the ``cuda`` and ``emulate`` backends: only the launcher below differs.

Arguments, in kernel parameter order:
- an array (``cupy.ndarray`` for cuda, ``numpy.ndarray`` for emulate): passed as a pointer to
  its element 0 (``a.data.ptr`` / ``a.ctypes.data``), which with negative strides is not the
  lowest address; the emulator bounds-checks accesses against each array's byte extent;
- a NumPy scalar (``np.int64(3)``, ``np.float32(2)``): passed by value;
- a NumPy structured scalar (``np.void``, built with ``align=True``): a struct passed by value.
"""

from __future__ import annotations


def _dim3(d) -> tuple[int, int, int]:
    if isinstance(d, int):
        return (d, 1, 1)
    d = tuple(int(v) for v in d)
    return d + (1,) * (3 - len(d))


def launch(source: str, name: str, grid, block, args, *, backend: str, shared_mem: int = 0):
    """Launch kernel ``name`` (a name expression) of ``kernels_src/<source>``."""
    grid, block = _dim3(grid), _dim3(block)
    if backend == "cuda":
        from . import runtime

        runtime.launch(source, name, grid, block, args, shared_mem)
    elif backend == "emulate":
        from . import emulator

        emulator.launch(source, name, grid, block, args, shared_mem)
    else:
        raise ValueError(f"backend {backend!r} does not launch kernels")


def prepare(source: str, names, *, backend: str) -> None:
    """Compile ``names`` ahead of their first launch (emulate: in one shared library)."""
    if backend == "cuda":
        from . import runtime

        for name in names:
            runtime.get_function(source, name)
    elif backend == "emulate":
        from . import emulator

        emulator.prepare(source, tuple(names))
