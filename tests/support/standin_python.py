"""``python -m tests.support.standin_python -m MODULE ARGS``: what ``gpu-check`` starts on a
GPU (its smoke, bench, profile and pytest steps), run here against the stand-in for CuPy's device side
(tests/tools/test_gpu_check.py sets ``gpu_check.PYTHON`` to this): the smoke's cases and the
bench's rows through the cuda launcher and the stand-in, at small sizes, the launch-cost
breakdown (``infini_cupy.tools.gpu_check.launch_costs``) on the stand-ins' device arrays with no
kernel run, and pytest with ``--backend cuda-standin`` for ``--backend cuda``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time

import numpy as np


class StandinKit:
    """gpu_bench's rows on NumPy arrays at small sizes, host-timed (the figures mean nothing
    here; the rows, their checks against NumPy and the report are what is tested)."""

    copy_bytes = 1 << 16
    fused_shape = (64, 48)
    library = calls_library = np
    backend = "emulate"
    host_repeat = (3, 1)  # each call an emulated launch: a few

    @staticmethod
    def synchronize() -> None:
        pass

    def alloc(self, shape, dtype):
        from infini_cupy.tools.cases import aligned_alloc

        return aligned_alloc(shape, dtype)

    @staticmethod
    def to_host(a):
        return np.asarray(a)

    @staticmethod
    def shape(case):
        return tuple(min(n, 40) for n in (case.emulated_shape or case.shape))

    @staticmethod
    def seconds(fn) -> float:
        start = time.perf_counter()
        fn()
        return max(time.perf_counter() - start, 1e-9)

    def copy_seconds(self, nbytes: int) -> float:
        a, b = np.ones(nbytes // 2, np.uint8), np.zeros(nbytes // 2, np.uint8)
        return self.seconds(lambda: np.copyto(b, a))

    @staticmethod
    def torch_call(case, operands):
        return None

    @staticmethod
    def torch_gelu(x):
        return None


@contextlib.contextmanager
def kernels_not_run():
    """The stand-ins check each launch's arguments, decode no buffer and run no kernel: what is
    left is host time (the launch-cost breakdown's stand-in figures)."""
    from infini_cupy.runtime.emulate import launcher as emulator
    from tests.support import driver_standin

    real, emulator.launch = emulator.launch, lambda *args, **kwargs: None
    decode, driver_standin._decode = driver_standin._decode, lambda *args: []
    try:
        yield
    finally:
        emulator.launch, driver_standin._decode = real, decode


def main(argv) -> int:
    if argv[:1] != ["-m"] or len(argv) < 2:
        raise SystemExit("usage: python -m tests.support.standin_python -m MODULE ARGS")
    module, args = argv[1], argv[2:]
    if module == "pytest":
        import pytest

        args = ["cuda-standin" if a == "cuda" and i and args[i - 1] == "--backend" else a
                for i, a in enumerate(args)]
        return pytest.main(args)
    import infini_cupy as xp
    from infini_cupy.runtime import launch
    from tests.support import cupy_standin

    if module == "infini_cupy.tools.gpu_check.launch_costs":
        from infini_cupy.tools.gpu_check import launch_costs

        with cupy_standin.installed(), cupy_standin.as_cupy() as cupy, kernels_not_run():
            return launch_costs.main(args, cupy=cupy)
    with cupy_standin.installed(), xp.backend("emulate"), \
            launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()):
        if module == "infini_cupy.tools.gpu_check.smoke":
            from infini_cupy.tools.gpu_check import smoke as gpu_smoke

            records = gpu_smoke.run_cases(lambda a: a, np.asarray, only=args)
            for record in records:
                print(json.dumps(record), flush=True)
            return 0 if all(r["ok"] for r in records) else 1
        if module == "infini_cupy.tools.gpu_check.bench_step":
            from infini_cupy.tools.gpu_check import bench_step as gpu_bench

            return gpu_bench.main(args, kit=StandinKit())
        if module == "infini_cupy.tools.gpu_check.nsight_profile":
            from infini_cupy.tools.gpu_check import nsight_profile as gpu_profile

            kit = StandinKit()
            gpu_profile.run_cases(args, kit.alloc, kit.shape, lambda: None)
            return 0
    raise SystemExit(f"the stand-in runs no {module}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
