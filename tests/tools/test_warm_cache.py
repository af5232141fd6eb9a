"""``warmup --arch sm_90 --cache-dir DIR`` without a GPU: what gpu-check launches, planned as
on an H100, compiled into the launcher's own cache format, then loaded by the launcher with
no compile."""

from __future__ import annotations

import io
import json
import shutil
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("cupy")  # NVRTC

from infini_cupy import config  # noqa: E402
from infini_cupy.__main__ import main  # noqa: E402
from infini_cupy.runtime import cuda, native  # noqa: E402
from infini_cupy.tools.warmup import warm_cache  # noqa: E402
from infini_cupy.tools.warmup.command import Progress  # noqa: E402
from tests.support import cupy_standin  # noqa: E402
from tests.support.ci import skip_outside_ci  # noqa: E402


def test_plans_are_the_target_gpu_s():
    """Plans as on an H100 (a block may opt in to 227 KiB): the smoke's packed float16
    transpose in dynamic shared memory, the bench's transposes and fused expression."""
    with cuda.planning_for(warm_cache.OPTIN["sm_90"]):
        assert cuda.max_dynamic_shared() == 232448
    smoke = warm_cache.smoke_variants("sm_90")
    assert any(name.startswith("packed_copy<") and name.endswith(", 2>") for _, name in smoke)
    bench = warm_cache.bench_variants("sm_90")
    sources = {source for source, _ in bench}
    assert {"transpose.cu", "elementwise.cu"} <= sources
    assert any(name.startswith("ew_fused_") for _, name in bench)


def test_a_warmed_folder_is_loaded_without_a_compile(tmp_path, monkeypatch):
    pairs = {("rearrange.cu", "rearrange<4, 1, 1, 0>"), ("packed.cu", "packed_copy<2, 4, 2>")}
    seconds, failures = warm_cache.fill(tmp_path, pairs, "sm_90", jobs=2)
    assert failures == []
    assert len(list((tmp_path / "cubin").glob("*.bin"))) == 2
    resumed = Progress(len(pairs), "compiling", stream=io.StringIO())
    _, again = warm_cache.fill(tmp_path, pairs, "sm_90", 2, resumed)  # kept, not compiled
    assert again == [] and resumed.done == len(pairs)  # the cached ones count as done
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    monkeypatch.setattr(cuda, "counts", {"hits": 0, "compiles": 0})
    with cupy_standin.installed(capabilities=(90,)):
        for source, name in pairs:
            cuda.get_kernel(source, name)
    assert cuda.counts == {"hits": 2, "compiles": 0}


def test_the_sample_s_variants_come_from_its_emulated_run():
    seen = warm_cache.sample_variants("sm_90", ["tests/strided/test_rearrange_kernels.py"])
    assert len(seen) >= 5 and all(source.endswith(".cu") for source, _ in seen)


def test_warmup_writes_the_cache_and_its_archive(tmp_path, capsys):
    folder, packed = tmp_path / "warm", tmp_path / "warm.tar.xz"
    assert main(["warmup", "--arch", "sm_90", "--cache-dir", str(folder), "--variants", "all",
                 "--source", "packed.cu", "--limit", "2", "--jobs", "2",
                 "--archive", str(packed)]) == 0
    out = capsys.readouterr().out
    assert "2 of 2 variants" in out and "MiB" in out and "archive:" in out
    about = [json.loads(p.read_text()) for p in (folder / "cubin").glob("*.json")]
    assert {a["arch"] for a in about} == {"sm_90"} and all(a["nvrtc"] for a in about)
    unpacked = warm_cache.unpacked(packed, tmp_path / "unpacked")
    assert sorted(p.read_bytes() for p in (unpacked / "cubin").iterdir()) == \
        sorted(p.read_bytes() for p in (folder / "cubin").iterdir())
    assert main(["warmup", "--cache-dir", str(folder)]) == 2  # needs --arch


def test_warmup_carries_the_compiled_hot_path_for_another_python(tmp_path, capsys):
    """``--native-python``: hot_calls.c built for that interpreter into DIR/native and the
    archive, where the GPU machine's Python finds it (here this interpreter stands for it)."""
    if shutil.which("g++") is None or not (
            Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        skip_outside_ci("no g++ or Python.h here: no compiled hot path")
    folder, packed = tmp_path / "warm", tmp_path / "warm.tar.xz"
    assert main(["warmup", "--arch", "sm_90", "--cache-dir", str(folder), "--variants", "all",
                 "--source", "packed.cu", "--limit", "1", "--native-python", sys.executable,
                 "--archive", str(packed)]) == 0
    built = native.library_path(folder)
    assert built.is_file() and f"compiled hot path for {sys.executable}" in capsys.readouterr().out
    unpacked = warm_cache.unpacked(packed, tmp_path / "unpacked")
    assert native.library_path(unpacked).read_bytes() == built.read_bytes()
    assert main(["warmup", "--arch", "sm_90", "--cache-dir", str(folder), "--variants", "all",
                 "--source", "packed.cu", "--limit", "1", "--native-python",
                 str(tmp_path / "no-python")]) == 1
    assert "FAILED the compiled hot path" in capsys.readouterr().out
