"""The README's first command: the demo runs (in emulation here) and every result matches."""

from infini_cupy.__main__ import main


def test_demo_runs_and_matches_numpy(capsys, backend_name):
    assert main(["demo", "--backend", backend_name]) == 0
    out = capsys.readouterr().out
    assert "all results matched NumPy" in out
    assert "FAIL" not in out
    assert "kernels: rearrange<" in out or "kernels: tiled_copy<" in out


def test_demo_says_which_figures_include_a_compile(capsys, backend_name):
    from infini_cupy.runtime import recent
    from infini_cupy.runtime.emulate import launcher as emulate_launcher

    import pytest

    if backend_name != "emulate":
        pytest.skip("the cuda launcher keeps its kernels per process: nothing to forget")
    emulate_launcher.forget_loaded()  # every kernel the demo launches is loaded again
    recent.forget_all()
    assert main(["demo", "--backend", backend_name]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ok")]
    assert rows and all("incl. load" in row or "incl. compile" in row for row in rows), rows
