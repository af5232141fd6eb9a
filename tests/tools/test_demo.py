"""The README's first command: the demo runs (in emulation here) and every result matches."""

from infini_cupy.__main__ import main


def test_demo_runs_and_matches_numpy(capsys, backend_name):
    assert main(["demo", "--backend", backend_name]) == 0
    out = capsys.readouterr().out
    assert "all results matched NumPy" in out
    assert "FAIL" not in out
    assert "kernels: rearrange<" in out or "kernels: tiled_copy<" in out
