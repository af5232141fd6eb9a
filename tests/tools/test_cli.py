"""The ``plan`` and ``warmup`` commands: what they print for known layouts, and their errors."""

from __future__ import annotations

import io
import re
import shutil

import numpy as np
import pytest

from infini_cupy.__main__ import main
from infini_cupy.strided.planner import plan_rearrange
from infini_cupy.readers import sampled_launches
from infini_cupy.tools.warmup import command as warmup

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="emulation needs g++")


def plan_output(capsys, *argv) -> str:
    assert main(["plan", *argv]) == 0
    return capsys.readouterr().out


@needs_gxx
def test_plan_of_an_nchw_to_nhwc_copy_is_a_coalesced_staged_transpose(capsys):
    out = plan_output(capsys, "--shape", "8,64,224,224", "--src-strides", "C",
                      "--dst-strides", "3211264,1,14336,64", "--dtype", "float32")
    assert "shape (8, 64, 224, 224), float32 (4 bytes)" in out
    assert "dst strides (3211264, 1, 14336, 64) elements = (12845056, 4, 57344, 256) bytes" in out
    # normalized: H and W merged into one dim of 50176, C innermost in dst
    assert "1   50176         256           4" in out
    assert "tiled_copy<4, 4, 4, 0, 0>" in out and "staged transpose" in out
    assert "6272 blocks x 256 threads" in out
    assert "emulated over the first 64 of 6272 blocks" in out
    efficiencies = re.findall(r"(?:reads |writes) (\d\.\d+) \(", out)
    assert len(efficiencies) == 2 and min(map(float, efficiencies)) >= 0.9


@needs_gxx
def test_plan_without_tiles_shows_the_seed_split_and_its_strided_reads(capsys):
    out = plan_output(capsys, "--case", "67,45:1,67:C:float32", "--no-tiles",
                      "--profile-blocks", "4")
    assert "rearrange<4, 2, 2, 2, int>" in out
    assert "block dims" in out and "grid dims" in out
    # both dims split 32-wide, neither length a multiple of 32
    assert "grid[0] * 32 + block[0] < 67" in out and "grid[1] * 32 + block[1] < 45" in out
    assert "emulated over the first 4 of 6 blocks" in out
    reads = next(line for line in out.splitlines() if line.strip().startswith("reads"))
    assert float(reads.split()[1]) < 0.2  # one sector per 4-byte lane on the read side


def test_plan_of_a_broadcast_row_copies_8_bytes_per_thread(capsys):
    out = plan_output(capsys, "--shape", "30,40", "--src-strides", "0,1", "--dtype", "int8",
                      "--no-profile")
    assert "unit 8 bytes per thread access, 150 units" in out
    assert "rearrange<8, 2, 1, 0, int>" in out
    assert "constraints: none" in out
    assert "coalescing" not in out


@needs_gxx
def test_plan_outside_the_kernel_matrix_uses_the_flat_index_kernel(capsys):
    strides = ",".join(str(3**p) for p in (0, 2, 4, 6, 1, 3, 5, 7))
    out = plan_output(capsys, "--shape", ",".join(["3"] * 8), "--src-strides", strides,
                      "--dtype", "float32", "--no-tiles")
    assert "rearrange_general<4, int>" in out and "flat-index kernel" in out
    assert "26 blocks x 256 threads" in out
    assert "emulated over all blocks" in out


def test_plan_of_a_permutation_of_short_dims_packs_tiles(capsys):
    # The layout above with staged plans allowed, chosen by coalescing alone: tiles spanning
    # several dims on each side. (By default the model keeps the flat-index kernel.) The whole
    # 3^8 array is one run on both sides, whose run tables (4 bytes per element each) leave
    # room in 48 KiB for part of it per tile.
    strides = ",".join(str(3**p) for p in (0, 2, 4, 6, 1, 3, 5, 7))
    default = plan_output(capsys, "--shape", ",".join(["3"] * 8), "--src-strides", strides,
                          "--dtype", "float32", "--no-profile")
    assert "rearrange_general<4, int>" in default
    out = plan_output(capsys, "--shape", ",".join(["3"] * 8), "--src-strides", strides,
                      "--dtype", "float32", "--coalescing")
    assert "packed_copy<4, " in out and "packed staged copy" in out
    assert "phase 1 reads in src order" in out and "phase 2 writes in dst order" in out
    efficiencies = re.findall(r"(?:reads |writes) (\d\.\d+) \(", out)
    assert len(efficiencies) == 2 and min(map(float, efficiencies)) >= 0.9


def test_plan_with_an_offset_source_narrows_the_unit(capsys):
    aligned = plan_output(capsys, "--shape", "4,64", "--dtype", "float32", "--no-profile")
    offset = plan_output(capsys, "--shape", "4,64", "--dtype", "float32", "--no-profile",
                         "--src-offset", "1")
    assert "unit 32 bytes" in aligned
    assert "element 0 at 4 bytes into a sector" in offset and "unit 4 bytes" in offset


def test_plan_of_an_empty_array_launches_nothing(capsys):
    out = plan_output(capsys, "--shape", "0,5", "--dtype", "float64")
    assert "none: nothing to copy" in out


@pytest.mark.parametrize("argv, message", [
    (["--shape", "3,4", "--src-strides", "1"], "1 strides for 2 dims"),
    (["--shape", "3,x"], "comma-separated integers"),
    (["--shape", "3,4", "--dst-strides", "0,1"], "overlaps itself"),
    (["--case", "3,4:C:C"], "SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE"),
    ([], "give --shape"),
])
def test_plan_reports_bad_layouts(capsys, argv, message):
    assert main(["plan", *argv]) == 2
    assert message in capsys.readouterr().out


@needs_gxx
@pytest.mark.parametrize("tiles", [True, False])
def test_sampled_profile_matches_the_full_launch_on_a_small_layout(tiles):
    shape, itemsize = (96, 80), 4
    dst, src = (320, 4), (4, 384)
    plan = plan_rearrange(shape, dst, src, itemsize, tiles=tiles)
    full, blocks = sampled_launches.profile_plan(plan, shape, dst, src, np.float32,
                                         max_blocks=plan.grid_blocks)
    assert blocks == plan.grid_blocks
    sampled, blocks = sampled_launches.profile_plan(plan, shape, dst, src, np.float32, max_blocks=1)
    assert blocks == 1
    assert 0 < sampled.reads.requests < full.reads.requests
    if tiles:
        assert full.reads.efficiency > 0.9 and full.writes.efficiency > 0.9


def test_warmup_compiles_20_variants_for_sm_90_through_nvrtc(capsys):
    pytest.importorskip("cupy")
    assert main(["warmup", "--arch", "sm_90", "--limit", "20"]) == 0
    captured = capsys.readouterr()
    assert "compiled 20 of 20 variants (rearrange.cu 20) for sm_90 through NVRTC" in captured.out
    assert "0 failures" in captured.out
    assert "NVRTC sm_90 [" in captured.err and "20/20" in captured.err


def test_warmup_source_filter_and_unknown_sources(capsys):
    pairs = warmup.selected_variants(["transpose.cu"], 5)
    assert len(pairs) == 5 and {s for s, _ in pairs} == {"transpose.cu"}
    assert main(["warmup", "--arch", "sm_90", "--source", "nope.cu"]) == 2
    assert "unknown source(s) nope.cu" in capsys.readouterr().out


def test_warmup_without_gpu_or_arch_says_what_to_do(capsys, monkeypatch):
    monkeypatch.setattr(warmup, "gpu_available", lambda: False)
    assert main(["warmup"]) == 2
    out = capsys.readouterr().out
    assert "--arch" in out and "--backend emulate" in out


@pytest.mark.parametrize("flags", [["--archive", "warm.tar.xz"], ["--native-python", "python3"],
                                   ["--variants", "all"]])
def test_warmup_flags_of_a_cache_dir_need_one(flags, capsys, tmp_path):
    """``--archive``, ``--native-python`` and ``--variants`` fill a ``--cache-dir``; without
    one they did nothing, silently, and warmup exited 0."""
    assert main(["warmup", "--arch", "sm_90", *flags]) == 2
    assert f"{flags[0]} needs --cache-dir" in capsys.readouterr().out
    assert not (tmp_path / "warm.tar.xz").exists()


def test_warmup_batches_keep_sources_apart():
    pairs = [("a.cu", "x"), ("a.cu", "y"), ("a.cu", "z"), ("b.cu", "w")]
    assert warmup.batches(pairs, 2) == [("a.cu", ("x", "y")), ("a.cu", ("z",)), ("b.cu", ("w",))]


def test_progress_bar_redraws_on_a_terminal_and_writes_lines_otherwise():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal, log = Terminal(), io.StringIO()
    for stream in (terminal, log):
        bar = warmup.Progress(20, "test", stream, width=10)
        for _ in range(20):
            bar.update(1)
    assert terminal.getvalue().count("\r") == 20 and terminal.getvalue().endswith("20/20   0.0 s\n")
    lines = log.getvalue().splitlines()
    assert 2 <= len(lines) <= 11 and lines[-1].startswith("test [##########] 20/20")
    assert "\r" not in log.getvalue()


@needs_gxx
def test_warmup_failures_are_counted_and_named(capsys, monkeypatch):
    def broken(source, names):
        raise RuntimeError("compiler says no\nmore details")

    monkeypatch.setattr(warmup, "_emulate_batch", broken)
    assert main(["warmup", "--backend", "emulate", "--source", "transpose.cu", "--limit", "3"]) == 1
    out = capsys.readouterr().out
    assert "compiled 0 of 3 variants" in out and "3 failures" in out
    assert "FAILED transpose.cu: tiled_copy<" in out and "compiler says no" in out


def test_warmup_on_a_gpu_compiles_each_variant_through_the_runtime(capsys, monkeypatch):
    """Without --arch on a GPU machine: one runtime.get_kernel per name expression (what a
    first launch compiles, so CuPy's disk cache holds exactly what later runs load)."""
    from infini_cupy.runtime import cuda as runtime

    compiled = []
    monkeypatch.setattr(warmup, "gpu_available", lambda: True)
    monkeypatch.setattr(runtime, "get_kernel", lambda source, name: compiled.append((source, name)))
    monkeypatch.setattr(warmup, "_current_device", lambda: "GPU 0 (test device, sm_90)")
    assert main(["warmup", "--source", "elementwise.cu", "--limit", "5"]) == 0
    assert compiled == warmup.selected_variants(["elementwise.cu"], 5)
    out = capsys.readouterr().out
    assert "compiled 5 of 5 variants (elementwise.cu 5) for GPU 0 (test device, sm_90)" in out


@pytest.mark.parametrize("argv, message", [
    (["warmup", "--arch", "foo"], "argument --arch: expected an architecture such as sm_90"),
    (["warmup", "--arch", "sm_90", "--limit", "-3"], "argument --limit: expected 1 or more"),
    (["warmup", "--jobs", "0"], "argument --jobs: expected 1 or more"),
    (["plan", "--shape", "64,48", "--profile-blocks", "0"], "--profile-blocks: expected 1 or more"),
    (["plan", "--shape", "64,48", "--max-threads", "two"], "--max-threads: expected a whole"),
])
def test_values_no_command_could_use_are_argparse_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2 and message in capsys.readouterr().err


def test_plan_refuses_a_case_beside_the_options_it_holds(capsys):
    assert main(["plan", "--case", "64,48:1,64:C:float32", "--shape", "3"]) == 2
    assert "--case holds the layout: give it or --shape, not both" in capsys.readouterr().out
