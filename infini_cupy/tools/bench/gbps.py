"""GB/s on a GPU for ``python -m infini_cupy bench``: our kernel against a device-to-device
copy of as many bytes, CuPy (``cupy.ascontiguousarray`` or the ufunc) and torch when installed.

Bytes moved: a copy reads and writes its destination's size; an elementwise call reads its
array inputs and writes its output. Times are CUDA-event averages over repeated calls.
"""

from __future__ import annotations

import numpy as np

from ..cases import call_parts


def seconds_per_call(fn, repeats=20) -> float:
    import cupy

    fn()
    cupy.cuda.Device().synchronize()
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    end.synchronize()
    return cupy.cuda.get_elapsed_time(start, end) / 1e3 / repeats


def _elementwise_parts(operands, library):
    """(op, inputs, out) of an elementwise case; ``library`` computes the output when the
    case passes none (CuPy on a GPU, NumPy for the model)."""
    op, inputs, keywords = call_parts(operands)
    out = keywords.get("out")
    return op, inputs, getattr(library, op)(*inputs) if out is None else out


def _elementwise_bytes(inputs, out) -> int:
    return sum(a.nbytes for a in inputs if hasattr(a, "nbytes")) + out.nbytes


def moved_bytes(case, operands, library=np) -> int:
    """The bytes a call is credited with: a copy reads and writes its destination's size; an
    elementwise call reads its array inputs and writes its output."""
    if not case.elementwise:
        return 2 * operands[0].nbytes
    _, inputs, out = _elementwise_parts(operands, library)
    return _elementwise_bytes(inputs, out)


def throughput(case, operands, call) -> dict:
    """GB/s of our kernel, of a device-to-device copy of as many bytes, CuPy and torch."""
    import cupy

    if case.elementwise:
        op, inputs, out = _elementwise_parts(operands, cupy)
        moved = _elementwise_bytes(inputs, out)

        def cupy_call():
            getattr(cupy, op)(*inputs, out=out)
    else:
        y, x = operands
        moved = 2 * y.nbytes

        def cupy_call():
            cupy.ascontiguousarray(x)
    half = max(moved // 2, 1)
    a, b = cupy.empty(half, np.uint8), cupy.empty(half, np.uint8)

    def copy_call():
        cupy.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, half, 3,
                                      cupy.cuda.get_current_stream().ptr)

    record = {
        "gbps": round(moved / seconds_per_call(call) / 1e9, 1),
        "copy_gbps": round(2 * half / seconds_per_call(copy_call) / 1e9, 1),
        "cupy_gbps": round(moved / seconds_per_call(cupy_call) / 1e9, 1),
        "torch_gbps": None,
    }
    torch_call = torch_equivalent(case, operands)
    if torch_call is not None:
        record["torch_gbps"] = round(moved / seconds_per_call(torch_call) / 1e9, 1)
    return record


def torch_module():
    """``torch``, the rival timed beside ours, or None where it does not import: not
    installed, or refusing this process's ``cuda.bindings`` (torch 2.13 beside the CuPy
    stand-in's driver raises ValueError, "CUstream size changed")."""
    try:
        import torch
    except (ImportError, ValueError, OSError):
        return None
    return torch


def torch_equivalent(case, operands):
    """torch's way to do the case, or None: without torch, or where an operand has a
    negative stride (torch has none: its ``from_dlpack`` aborts the process on one)."""
    if any(s < 0 for a in operands if hasattr(a, "strides") for s in a.strides):
        return None
    torch = torch_module()
    if torch is None:
        return None
    if case.elementwise:
        op, inputs, keywords = call_parts(operands)
        tensors = [torch.from_dlpack(a) if hasattr(a, "__dlpack__") else a for a in inputs]
        tensors = [a.item() if isinstance(a, np.generic) else a for a in tensors]
        function = getattr(torch, op)
        if "out" in keywords:
            out = torch.from_dlpack(keywords["out"])
            return lambda: function(*tensors, out=out)
        return lambda: function(*tensors)
    y, x = operands
    tx, ty = torch.from_dlpack(x), torch.from_dlpack(y)
    return lambda: ty.copy_(tx)
