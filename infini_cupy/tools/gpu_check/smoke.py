"""The GPU smoke: one case per kernel family against NumPy, small enough to run under
``compute-sanitizer``. ``gpu-check`` runs it as ``python -m infini_cupy.tools.gpu_check.smoke``
with ``CUDA_LAUNCH_BLOCKING=1`` (a fault is reported at the launch that made it), then again
under ``compute-sanitizer --tool memcheck``; it prints one JSON object per case.

The cases take the device's converters, so the tests run them in emulation, every launch
through the cuda launcher and the stand-in for CuPy (``tests/tools/test_gpu_check.py``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback

import numpy as np

from ... import config, dtypes


class CaseNotRun(Exception):
    """A case this installation cannot run (its reason in the record's ``not_run``): not a
    failure of the GPU's."""
from ...arrays import as_strided
from ...runtime.launch import recording
from ...strided.plan_cache import coalescing_plans
from ..cases import parse_layout


def _strided(to_device, shape, strides_in_elements, dtype, rng):
    """A device view of ``shape`` with these element strides (negative ones too), holding
    random values, and its NumPy twin."""
    dtype = np.dtype(dtype)
    span = sum((n - 1) * abs(s) for n, s in zip(shape, strides_in_elements)) + 1
    base = rng.standard_normal(span).astype(dtype)
    first = sum((n - 1) * -s for n, s in zip(shape, strides_in_elements) if s < 0)
    strides = tuple(s * dtype.itemsize for s in strides_in_elements)
    return (as_strided(to_device(base)[first:], shape, strides),
            as_strided(base[first:], shape, strides))


def _cases(to_device, rng, device_count: int):
    """(name, run() -> (result, expected, exact), expected kernel-name fragment or None)."""
    import infini_cupy as xp

    flat = rng.standard_normal(1 << 20).astype(np.float32)

    def contiguous():
        y = to_device(np.zeros_like(flat))
        xp.rearrange_(y, to_device(flat))
        return y, flat, True

    mat = rng.standard_normal((1000, 777)).astype(np.float32)
    yield "copy .T float32 1000x777", lambda: (xp.rearrange(to_device(mat).T), mat.T, True), None
    yield "contiguous copy float32 4 MiB", contiguous, None

    def general_7d():  # broadcast dims between strided ones: more than 5 dims to split
        shape, src, _, dtype = parse_layout("3,2,5,2,3,2,4", "0,1,0,-2,0,4,0", "C", "float32")
        x, host = _strided(to_device, shape, src, dtype, rng)
        return xp.rearrange(x), np.ascontiguousarray(host), True

    yield "7-d broadcast layout float32 (flat-index kernel)", general_7d, "rearrange_general<"

    shape, src, dst, dtype = parse_layout("501,501", "1,501", "C", "float16")

    def packed_dynamic():  # planned by coalescing: the model gives it to the staged transpose
        x, host = _strided(to_device, shape, src, dtype, rng)
        with coalescing_plans():
            return xp.rearrange(x), np.ascontiguousarray(host), True

    yield "odd float16 transpose, tile > 48 KiB", packed_dynamic, ", 2>"  # packed_copy<2, 4, 2>

    a = rng.standard_normal((333, 257)).astype(np.float32)
    b = rng.standard_normal(257).astype(np.float32)
    yield "add float32 broadcast", lambda: (xp.add(to_device(a), to_device(b)), a + b, True), "ew_"
    yield "exp float32 transposed", lambda: (xp.exp(to_device(a).T), np.exp(a.T), False), "ew_"
    ints = rng.integers(-1000, 1000, (129, 65)).astype(np.int32)
    yield "astype int32 -> float16", (
        lambda: (xp.astype(to_device(ints)[:, ::2], xp.float16), ints[:, ::2].astype(np.float16),
                 True)), "ew_"
    wide = rng.standard_normal((64, 130)).astype(np.float32)
    if dtypes.BFLOAT16 is None:  # no ml_dtypes >= 0.7 (a GPU image's 0.6): no bfloat16 to test

        def bfloat16_cast():
            raise CaseNotRun(dtypes.BFLOAT16_HINT)
    else:

        def bfloat16_cast():
            return (xp.astype(to_device(wide).T, dtypes.BFLOAT16),
                    wide.T.astype(dtypes.BFLOAT16), True)
    yield "astype float32 -> bfloat16", bfloat16_cast, "ew_"

    def fresh_thread():
        """The packed float16 transpose (its kernel loaded and opted in to more than 48 KiB
        by this thread, above) from a thread that never touched CUDA, after memory was freed
        to CuPy's pool and taken again (a thread with pool memory and no current context)."""
        for _ in range(3):
            del_me = to_device(np.ones(1 << 16, np.float32))
            del del_me
        out = {}

        def work():
            try:
                with config.backend(backend), recording() as launches, coalescing_plans():
                    x, host = _strided(to_device, shape, src, dtype, rng)
                    out["y"], out["expected"] = xp.rearrange(x), np.ascontiguousarray(host)
                outer.extend(launches)  # recording() is per thread
            except BaseException as e:  # reported by the caller
                out["error"] = e

        backend = config.get_backend()
        outer = _hooks_of_caller()
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        if "error" in out:
            raise out["error"]
        return out["y"], out["expected"], True

    yield "odd float16 transpose from a fresh thread", fresh_thread, ", 2>"
    if device_count >= 2:
        import cupy

        def second_device():
            with cupy.cuda.Device(1):
                x = cupy.asarray(mat)
            with cupy.cuda.Device(0):  # the arrays' device is not the current one
                y = xp.rearrange(x.T)
            assert y.device.id == 1, f"result on device {y.device.id}"
            return y, mat.T, True

        yield "copy .T on device 1 while device 0 is current", second_device, None


_current_records: list = []  # the records of the case running now (run_cases)


def _hooks_of_caller() -> list:
    return _current_records[-1] if _current_records else []


def run_cases(to_device, to_host, device_count: int = 1, seed: int = 0,
              only=None) -> list[dict]:
    """Run every case; one record each (name, ok, kernels, ms, error); ``ok`` is None, with
    the reason in ``not_run``, for a case this installation cannot run."""
    rng = np.random.default_rng(seed)
    records = []
    for name, case, kernel in _cases(to_device, rng, device_count):
        if only and not any(part in name for part in only):
            continue
        record = {"case": name, "ok": False, "kernels": [], "error": None}
        start = time.perf_counter()
        try:
            with recording() as launches:
                _current_records.append(launches)
                try:
                    got, expected, exact = case()
                finally:
                    _current_records.pop()
                got = to_host(got)
            record["kernels"] = sorted({r.name for r in launches})
            record["ok"] = _matches(got, expected, exact)
            if not record["ok"]:
                record["error"] = "differs from NumPy"
            elif kernel is not None and not any(kernel in k for k in record["kernels"]):
                record["ok"] = False
                record["error"] = f"expected a {kernel}... kernel"
        except CaseNotRun as e:
            record["ok"], record["not_run"] = None, str(e)
        except Exception as e:  # each case reports; the next one still runs
            record["error"] = "".join(traceback.format_exception_only(type(e), e)).strip()
        record["ms"] = round((time.perf_counter() - start) * 1e3, 2)
        records.append(record)
    return records


def _matches(got, expected, exact: bool) -> bool:
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if exact:
        return np.array_equal(got.view(np.uint8), np.ascontiguousarray(expected).view(np.uint8))
    return np.allclose(got, expected, rtol=2e-6, atol=0)


def main(argv=None) -> int:
    """On the GPU: every case (or those whose name holds one of the arguments), one JSON line
    each; exit 1 if any failed."""
    import cupy

    only = list(sys.argv[1:] if argv is None else argv)
    with config.backend("cuda"):
        records = run_cases(cupy.asarray, cupy.asnumpy, cupy.cuda.runtime.getDeviceCount(),
                            only=only)
    cupy.cuda.runtime.deviceSynchronize()
    for record in records:
        print(json.dumps(record), flush=True)
    return 0 if all(r["ok"] is not False for r in records) else 1


if __name__ == "__main__":  # pragma: no cover - run by gpu-check on a GPU
    sys.exit(main())
