"""The package's version, show_config, --version, and the kernel-load log."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from importlib import metadata

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime.emulate import launcher as emulate_launcher


def test_version_is_the_installed_metadata():
    try:
        installed = metadata.version("infini_cupy")
    except metadata.PackageNotFoundError:
        assert xp.__version__ == "0+unknown"
        pytest.skip("infini_cupy is not installed (a checkout on sys.path): no package "
                    "metadata to compare the version with")
    assert xp.__version__ == installed


def test_version_on_the_command_line():
    done = subprocess.run([sys.executable, "-m", "infini_cupy", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"infini_cupy {xp.__version__}"


def test_show_config_names_what_a_bug_report_needs():
    out = io.StringIO()
    xp.show_config(file=out)
    text = out.getvalue()
    for key in ("infini_cupy", "numpy", "cupy", "devices", "backend", "nvrtc", "cuda launch",
                "cache folder"):
        assert any(line.startswith(key + " ") for line in text.splitlines()), key
    assert f"backend              {xp.get_backend()}" in text
    with xp.backend("emulate"):
        assert xp.about.config_info()["backend"] == "emulate"
    from infini_cupy.runtime import cuda

    with cuda.launch_mechanism("compiled"):
        assert xp.about.config_info()["cuda launch"] == "compiled"



def test_show_config_hints_are_whole_without_cupy_or_a_driver(pytestconfig):
    """Without CuPy the NVRTC line says what to install, whole; with CuPy and no driver the
    devices line says no driver is there (the CUDA runtime's "driver version is
    insufficient" would send a reader looking for a driver update)."""
    code = ("import sys; sys.modules['cupy'] = None\n"
            "import infini_cupy as xp; info = xp.about.config_info()\n"
            "print(info['nvrtc']); print(info['devices'])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    nvrtc, devices = done.stdout.splitlines()
    assert nvrtc.startswith("not found: ") and nvrtc.endswith("with a CUDA 12 driver)"), nvrtc
    assert "pip install 'infini_cupy[cuda13]'" in nvrtc
    assert devices == "cpu, emulator"
    standin = pytestconfig.getoption("--backend").startswith("cuda-standin")  # a device, no driver
    if not xp.about._driver_present() and not standin:
        info = xp.about.config_info()
        if info["cupy"] != "not installed":
            assert info["devices"] == "cpu, emulator, none (no NVIDIA driver (libcuda.so.1))"

def test_kernel_loads_log_once_and_launches_do_not(caplog):
    x = np.arange(6, dtype=np.uint16)
    with xp.backend("emulate"):
        xp.negative(x)  # loaded (compiled or from disk) before the test looks
        emulate_launcher.forget_loaded()
        with caplog.at_level(logging.INFO, logger="infini_cupy"):
            np.testing.assert_array_equal(xp.negative(x), -x)  # a load from the disk cache
            loads = [r.getMessage() for r in caplog.records if r.name == "infini_cupy"]
            caplog.clear()
            xp.negative(x)  # the cached launch path: nothing
            assert [r for r in caplog.records if r.name == "infini_cupy"] == []
    assert len(loads) == 1, loads
    assert "ew_contig<ic::OpNegative, uint16_t, uint16_t>" in loads[0]
    assert "emulate" in loads[0] and " ms, disk cache" in loads[0]


def test_the_package_is_silent_by_default():
    code = ("import numpy as np, infini_cupy as xp\n"
            "from infini_cupy.runtime.emulate import launcher\n"
            "with xp.backend('emulate'):\n"
            "    xp.negative(np.arange(3, dtype=np.int32)); launcher.forget_loaded()\n"
            "    xp.negative(np.arange(3, dtype=np.int32))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and done.stderr == ""
