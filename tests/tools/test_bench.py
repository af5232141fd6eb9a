"""``python -m infini_cupy bench``: case parsing, the suites' layouts, and the JSON it writes
(small layouts only: the suites themselves are for the command line).

The bench profiles in emulation on host arrays whatever the suite's backend; under
``--backend cuda`` the CLI run without ``--backend`` (auto) also measures on the GPU."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from infini_cupy.__main__ import main
from infini_cupy.tools.bench import command as bench
from infini_cupy.tools import cases as bench_cases

REQUIRED = {"case", "shape", "dtype", "kernel", "read_efficiency", "write_efficiency", "host_us"}


def numpy_alloc(shape, dtype):
    return np.empty(shape, dtype)


@pytest.mark.parametrize("spec, message", [
    ("3,4:C:C", "4 fields"),
    ("3,x:1,3:C:float32", "SHAPE must be comma-separated integers"),
    ("3,4:1:C:float32", "SRC_STRIDES: 1 strides for 2 dims"),
    ("3,4:1,3:1:float32", "DST_STRIDES: 1 strides for 2 dims"),
    ("3,4:1,3:C:float99", "unknown dtype"),
    ("3,4:1,3:C:object", "DTYPE: a copy supports boolean and numeric dtypes.*object"),
    ("3,4:1,3:C:U4", "DTYPE: a copy supports boolean and numeric dtypes.*U4"),
    ("3,4:1,3:C:>f4", "DTYPE: a copy supports .* native byte order.*>f4"),
])
def test_bad_cases_are_named(spec, message):
    with pytest.raises(bench_cases.CaseSyntaxError, match=message):
        bench_cases.parse_case(spec)


def test_a_case_builds_the_strided_views_it_describes():
    y, x = bench_cases.parse_case("5,7:-7,0:1,5:int16").build(numpy_alloc, None, None)
    assert x.shape == y.shape == (5, 7) and x.strides == (-14, 0) and y.strides == (2, 10)
    assert x[0, 0] == x[0, 6] and (x[:, 0] == x[::-1, 0][::-1]).all()
    y, x = bench_cases.parse_case("0,3:3,1:C:float32").build(numpy_alloc, None, None)
    assert x.shape == y.shape == (0, 3)


@pytest.mark.parametrize("case", bench_cases.REARRANGE_SUITE + bench_cases.ELEMENTWISE_SUITE
                         + bench_cases.SIGNATURE_SUITE, ids=lambda c: c.name)
def test_suite_cases_build_at_their_emulated_size(case):
    shape = tuple(max(1, n // 16) for n in case.emulated_shape)  # the same layout, smaller
    operands = case.build(numpy_alloc, shape, case.dtype)
    if case.suite == "rearrange":
        y, x = operands
        assert y.shape == x.shape == shape and y.dtype == x.dtype == np.dtype(case.dtype)
    else:
        op, inputs, keywords = bench_cases.call_parts(operands)
        assert op in ("add", "multiply", "exp", "pow") and inputs[0].shape == shape
        assert set(keywords) <= {"out"}


@pytest.mark.parametrize("case", bench_cases.SIGNATURE_SUITE, ids=lambda c: c.name)
def test_each_signature_kind_repeats_through_the_short_path(case, monkeypatch):
    """What the signatures suite times is the short path: after the first call of a case, a
    repeat skips the launcher's full call, and both equal NumPy."""
    import infini_cupy as xp
    from infini_cupy.elementwise import launcher
    from infini_cupy.runtime import recent

    full = []
    original = launcher._apply
    monkeypatch.setattr(launcher, "_apply", lambda *args: full.append(1) or original(*args))
    recent.forget_all()
    op, inputs, keywords = bench_cases.call_parts(case.build(numpy_alloc, (24, 40), case.dtype))
    expected = getattr(np, op)(*inputs)
    with xp.backend("emulate"):
        for _ in range(2):
            result = getattr(xp, op)(*inputs, **keywords)
            np.testing.assert_allclose(result, expected, rtol=1e-6)
            assert result is keywords.get("out", result)
    assert len(full) == 1


def test_cli_writes_one_record_per_case(tmp_path, capsys):
    path = tmp_path / "bench.json"
    assert main(["bench", "--case", "96,80:1,96:C:float32", "--case", "70,70:1,70:C:float16",
                 "--backend", "emulate", "--json", str(path)]) == 0
    records = json.loads(path.read_text())
    assert [r["case"] for r in records] == ["96,80:1,96:C:float32", "70,70:1,70:C:float16"]
    for record in records:
        assert REQUIRED <= set(record) and record["kernel"].startswith("tiled_copy<")
        assert record["read_efficiency"] >= 0.9 and record["write_efficiency"] >= 0.9
        assert 0 < record["host_us"] < 1000 and record["nvrtc_ms"] > 0 and record["warm_ms"] > 0
    out = capsys.readouterr().out
    assert "96,80:1,96:C:float32" in out and "compile: 2 variants; cold NVRTC" in out


def test_cli_compares_with_the_seed_planner(tmp_path):
    path = tmp_path / "seed.json"
    assert main(["bench", "--case", "64,64:1,64:C:float32", "--planner", "seed", "--no-compile",
                 "--json", str(path)]) == 0
    record, = json.loads(path.read_text())
    assert record["kernel"].startswith("rearrange<4,") and record["planner"] == "seed"
    assert record["read_efficiency"] == pytest.approx(0.125)


def test_cli_rejects_a_malformed_case(capsys):
    assert main(["bench", "--case", "3,4:1,4"]) == 2
    assert "SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE" in capsys.readouterr().err


def test_a_suite_case_measured_small():
    case = next(c for c in bench_cases.ELEMENTWISE_SUITE if c.name == "add contiguous fp16")
    record = bench.measure(dataclasses.replace(case, emulated_shape=(64, 96)), "emulate")
    assert record["kernel"].startswith("ew_contig<ic::OpAdd")
    assert record["read_efficiency"] == record["write_efficiency"] == 1.0
    assert record["profiled_shape"] == [64, 96] and record["host_us"] > 0


def test_permutation_sets():
    """The TTC set (57 = 19 permutations x 3 shapes, no fusable indices) and the random set
    (ranks 2-8, never the identity): each case copies a permuted C-contiguous array into a
    C-contiguous one of the shape it names."""
    from infini_cupy.tools.bench.permutation_cases import TTC_PERMUTATIONS, random_cases, ttc_cases

    ttc = ttc_cases()
    assert len(ttc) == 57 and sum(map(len, TTC_PERMUTATIONS)) == 19
    for perms in TTC_PERMUTATIONS:  # no two indices adjacent in A stay adjacent in B
        for perm in perms:
            assert all(perm[k + 1] != perm[k] + 1 for k in range(len(perm) - 1)), perm
    randoms = random_cases()
    assert {len(c.shape) for c in randoms} == set(range(2, 9))
    for case in ttc[::7] + randoms[::5]:
        shape = tuple(max(1, n // 4) for n in case.emulated_shape or case.shape)
        y, x = case.build(numpy_alloc, shape, case.dtype)
        assert y.shape == x.shape == shape and y.flags.c_contiguous
        assert x.base is not None and x.base.flags.c_contiguous and not x.flags.c_contiguous


def test_best_efficiency_counts_distinct_sectors():
    from infini_cupy.readers.coalescing import best_efficiency

    buffer = bench_cases.aligned_alloc((64, 64), "float32")  # 256-byte aligned, like CuPy's
    assert best_efficiency(buffer) == 1.0
    assert best_efficiency(buffer[:, 1:]) == 252 / 256  # each row: 252 bytes in 8 sectors
    assert best_efficiency(buffer[:, ::8]) == 4 / 32  # one element per sector
    assert best_efficiency(np.broadcast_to(buffer[0], (5, 64))) == 1.0  # distinct elements once


def test_cli_measures_the_array_wrapper(tmp_path, capsys):
    path = tmp_path / "array.json"
    assert main(["bench", "--suite", "array", "--backend", "emulate", "--json", str(path)]) == 0
    records = json.loads(path.read_text())
    assert records and all(r["suite"] == "array" for r in records)
    cpu = [r for r in records if r["case"].startswith("cpu: ")]
    ratios = [r for r in records if "ratio" in r and r not in cpu]
    for r in records:
        if r in ratios or r in cpu:
            continue
        assert r["array_us"] > 0 and r["bare_us"] > 0
        assert r["overhead_us"] == pytest.approx(r["array_us"] - r["bare_us"], abs=2e-3)
    # the launch-bound calls against np.add: a host call costs more than NumPy's cheapest
    assert [r["case"][7:] for r in ratios if "layer" not in r["case"]] == [
        "xp.add(x, x)", "x + y", "x * 2.0", "xp.exp(x)", "rearrange_(y, x.T) (cached)",
        "fused exp(x*y+x)-y", "lazy() exp(x*y+x)-y", "xp.add(x, y, out=z)", "fused exp(x*y+x)-y, out=z", "z += x",
        "z *= 2.0"]
    layers = [r for r in ratios if "layer" in r["case"]]
    assert len(layers) == 6 and all(r["ratio"] > 0 and r["host_us"] > 0 for r in ratios)
    # the whole call costs more than its launch alone (the machine's noise is far smaller)
    assert layers[-1]["host_us"] > layers[0]["host_us"]
    # cpu Arrays against NumPy's own calls: an elementwise call is NumPy's work and more
    # (a remembered data-type answer may beat NumPy's: no ratio floor for those)
    assert [r["case"][5:] for r in cpu][:5] == ["xp.add(x, y)", "x * 2.0", "x > 0",
                                                "xp.exp(x)", "xp.add(x, y, out=z)"]
    assert all(r["ratio"] > 0.5 for r in cpu[:5])
    assert all(r["numpy_us"] > 0 and r["host_us"] > 0 for r in cpu)
    out = capsys.readouterr().out
    assert "Array wrapper, per call" in out and "x np.add" in out
    assert "cpu Arrays against NumPy" in out


def test_host_ratio_measures_the_ratio_of_two_calls():
    """A call that does the reference's work twice costs twice as much. Into a preallocated
    output: two new 256 KiB results alive at once take the allocator past its reuse (mmap
    per call), which read 2.9 where one took 1."""
    from infini_cupy.tools.bench.command import host_ratio

    a = np.ones((256, 256), np.float32)
    out = np.empty_like(a)

    def twice():
        np.add(a, a, out=out)
        np.add(a, a, out=out)

    ratio, host_us = host_ratio(twice, lambda: np.add(a, a, out=out))
    assert 1.6 < ratio < 2.5 and host_us > 0


def test_cli_fusion_suite_one_launch_and_inputs_plus_outputs_moved(tmp_path, capsys):
    path = tmp_path / "fusion.json"
    assert main(["bench", "--suite", "fusion", "--backend", "emulate", "--no-compile",
                 "--json", str(path)]) == 0
    records = [r for r in json.loads(path.read_text()) if r["suite"] == "fusion"]
    assert len(records) == 6
    for r in records:
        assert r["launches"] == 1 and r["unfused_launches"] >= 2
        assert r["bytes"] == r["inputs_plus_outputs"] < r["unfused_bytes"]
        assert r["kernel"].startswith("ew_fused_")
        assert r["fused_us"] > 0 and r["unfused_us"] > 0  # which is faster: the GPU's record
        # the plain calls inside xp.lazy(): one launch too; where runs eagerly, in the array
        # library (its bytes are not ours to count)
        assert r["lazy_launches"] == 1 and r["lazy_us"] > 0
        assert r["lazy_bytes"] == r["bytes"] or r["case"].startswith("fusion: mask-select")
    assert "fusion (emulated" in capsys.readouterr().out
    # what warmup compiles ahead for the suite is what it launches
    from infini_cupy.tools.bench import fusion_suite as bench_fusion

    assert bench_fusion.kernel_names() == [r["kernel"] for r in records]


def test_no_trace_needs_a_gpu(capsys):
    assert main(["bench", "--case", "64,64:1,64:C:float32", "--backend", "emulate",
                 "--no-trace"]) == 2
    assert "--no-trace measures GB/s on a GPU" in capsys.readouterr().err


def test_no_trace_records_the_launched_kernels_beside_the_throughput(monkeypatch, backend_name):
    # The GPU-only path, run in emulation: NumPy arrays for CuPy's, a fixed throughput.
    if backend_name != "emulate":
        pytest.skip("the stand-in for CuPy's allocator is NumPy: emulation only")
    from infini_cupy.tools.bench import gbps as bench_gpu

    monkeypatch.setattr(bench, "cupy_alloc", bench_cases.aligned_alloc)
    monkeypatch.setattr(bench_gpu, "throughput",
                        lambda case, operands, call: {"gbps": 1500.0, "copy_gbps": 3000.0})
    case = dataclasses.replace(bench_cases.parse_case("2001,2001:1,2001:C:float32"),
                               shape=(300, 200))
    record = bench.measure_gpu(case)
    assert record["kernel"].startswith("tiled_copy<4,") and record["launches"] == 1
    assert record["measured_fraction"] == 0.5 and record["shape"] == [300, 200]
    assert record["block_threads"][0] % 32 == 0 and "read_efficiency" not in record
    assert "0.500 of a copy" in bench._row({**record, "cupy_gbps": 900.0, "torch_gbps": None})


def test_torch_is_not_timed_on_negative_strides():
    # torch's from_dlpack aborts the process on a negative stride (seen on an H100 run).
    x = np.zeros((4, 5), np.float32)[::-1]
    case = bench_cases.parse_case("4,5:5,1:C:float32")
    from infini_cupy.tools.bench import gbps as bench_gpu

    assert bench_gpu.torch_equivalent(case, (np.zeros((4, 5), np.float32), x)) is None


def test_help_names_the_quick_suites_with_their_durations(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    for suite in ("array", "fusion", "signatures", "elementwise"):
        assert f"--suite {suite}" in out, suite
    assert "--backend emulate" in out and " s" in out


def test_predicting_without_nvdisasm_says_so_once(monkeypatch, capsys):
    from infini_cupy.readers import sass
    from infini_cupy.tools.bench import model_columns

    def no_nvdisasm():
        raise RuntimeError(f"reading SASS needs nvdisasm: {sass.NVDISASM_HINT}")

    monkeypatch.setattr(model_columns, "kernel_sass", lambda source, name: None)  # as read_kernel
    monkeypatch.setattr(sass, "nvdisasm", no_nvdisasm)
    assert main(["bench", "--case", "64,64:1,64:C:float32", "--case", "70,70:1,70:C:float16",
                 "--backend", "emulate", "--no-compile"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "without SASS" in line]
    assert lines == ["predicted without SASS (nvdisasm not found) on 2 of 2 cases: install "
                     "nvidia-cuda-nvdisasm for the docs' figures"]


def test_no_sass_line_when_every_case_had_its_sass():
    from infini_cupy.tools.bench import model_columns

    records = [{"case": "a", "predicted_fraction": 0.9, "sass": {}}, {"case": "b"}]
    assert model_columns.sass_note(records) is None
    records[0] = {"case": "a", "predicted_fraction": 0.9, "sass_missing": "no SASS read"}
    assert model_columns.sass_note(records).startswith("predicted without SASS (")
