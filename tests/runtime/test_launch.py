"""The one launch entry point: the launcher registry, recording, and the hooks the bench uses
instead of patching the library (launches skipped, outputs from an allocator)."""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import arrays, config
from infini_cupy.runtime import cuda
from infini_cupy.runtime.emulate import launcher as emulate_launcher
from infini_cupy.runtime.launch import (LAUNCHERS, launch, launcher_replaced, launches_skipped,
                                        recording)


def test_each_kernel_backend_has_a_launcher(pytestconfig):
    standin = pytestconfig.getoption("--backend") == "cuda-standin-launches"  # via cuda
    assert set(LAUNCHERS) == {"cuda", "emulate"} and LAUNCHERS["cuda"] is cuda
    assert (LAUNCHERS["emulate"] is emulate_launcher) != standin
    for launcher in LAUNCHERS.values():
        assert callable(launcher.launch) and callable(launcher.prepare)
    with pytest.raises(ValueError, match="'numpy' does not launch kernels"):
        launch("rearrange.cu", "rearrange<4, 1, 1, 0>", 1, 32, (), backend="numpy")


def test_a_launcher_replaced_for_a_block_comes_back():
    seen, previous = [], LAUNCHERS["emulate"]

    class Recorder:
        def launch(self, *args):
            seen.append(args[:2])

        def prepare(self, source, names):
            pass

    with launcher_replaced("emulate", Recorder()):
        launch("rearrange.cu", "rearrange<4, 1, 1, 0>", 1, 32, (), backend="emulate")
    assert seen == [("rearrange.cu", "rearrange<4, 1, 1, 0>")]
    assert LAUNCHERS["emulate"] is previous


def test_skipped_launches_are_recorded_and_write_nothing(backend_name, to_device, to_host):
    x = to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = to_device(np.zeros((4, 3), np.float32))
    with recording() as launches, launches_skipped():
        xp.rearrange_(y, x.T)
    assert [r.name for r in launches] and not to_host(y).any()
    xp.rearrange_(y, x.T)  # the same layout again, launched: the plan was cached, not broken
    np.testing.assert_array_equal(to_host(y), to_host(x).T)


def test_outputs_come_from_the_allocator_in_force(backend_name, to_device, to_host):
    given = []

    def alloc(shape, dtype):
        given.append(arrays.array_module(backend_name).zeros(shape, dtype))
        return given[-1]

    a = np.arange(6.0).reshape(2, 3)
    with arrays.outputs_from(alloc):
        result = xp.multiply(to_device(a), 2.0)
    assert len(given) == 1 and result is given[0]
    np.testing.assert_array_equal(to_host(result), a * 2)
    assert xp.multiply(to_device(a), 2.0) is not given[0]  # outside the block: a new array


@pytest.mark.parametrize("value", ["abc", "0", "-2"])
def test_a_bad_thread_count_names_the_variable(monkeypatch, value):
    monkeypatch.setenv(config.EMULATOR_THREADS_VAR, value)
    with pytest.raises(ValueError, match=f"INFINI_CUPY_EMULATOR_THREADS={value!r}"):
        config.emulator_threads(2)
    monkeypatch.setenv(config.EMULATOR_THREADS_VAR, "3")
    assert config.emulator_threads(2) == 3
