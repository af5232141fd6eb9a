"""The charts of :doc:`/performance/h100`, drawn at build time from the records.

- ``h100_libraries.png``: ours, CuPy and torch per bench case, fractions of a device copy,
  from the table under "The bench's cases" of ``performance/h100.md`` (the page is that
  run's record; a new run rewrites the table and the chart follows);
- ``h100_model.png``: the H100's measurement (``tests/tools/h100_measured.json``) against the
  model's prediction for the plan that ran, when it ran (the same table), and today's where
  it predicts otherwise (``tests/tools/model_baseline.json``, what CI computes).

Both are written to ``performance/generated/`` (not in git) with matplotlib's Agg backend,
again only when a record (or this file) is newer than the chart.
"""

from __future__ import annotations

import json
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
H100_PAGE = DOCS / "performance" / "h100.md"
MEASURED = ROOT / "tests" / "tools" / "h100_measured.json"
PREDICTED = ROOT / "tests" / "tools" / "model_baseline.json"
OUT = DOCS / "performance" / "generated"
AGREE = 0.1  # tests/support/measured_record.py's agreement band (docs do not import tests)
SUITE_COLORS = {"rearrange": "tab:blue", "elementwise": "tab:orange", "ttc": "tab:green"}


def library_rows(page: Path = H100_PAGE) -> list[tuple]:
    """(case, ours, CuPy, torch, model) per row of the table under "The bench's cases".

    Parameters
    ----------
    page : Path
        The Markdown page holding the table.

    Returns
    -------
    list of tuple
        Fractions of a device-to-device copy (model: the fraction the model predicted then
        for the plan that ran); None where the table has a dash.
    """
    lines = page.read_text().splitlines()
    start = lines.index("## The bench's cases")
    header, rows = None, []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set(cells[0]) <= {"-", " "}:
            row = dict(zip(header, cells))
            rows.append((row["case"], _fraction(row["ours"]), _fraction(row["CuPy"]),
                         _fraction(row["torch"]), _fraction(row["model"])))
    return rows


def _fraction(cell: str) -> float | None:
    return None if cell in ("-", "") else float(cell)


def model_points() -> list[tuple[str, str, float, float | None, float]]:
    """(case, suite, measured, predicted then, predicted today) for every measured case the
    model predicts today.

    Returns
    -------
    list of tuple
        Fractions of a copy: measured on the H100 (``h100_measured.json``); predicted for the
        plan that ran, when it ran (the page's table; None for cases not in it); predicted
        today for the plan the planner makes now (``model_baseline.json``).
    """
    today = json.loads(PREDICTED.read_text())["predicted_fraction"]
    then = {row[0]: row[4] for row in library_rows()}
    return [(c["case"], c["suite"], c["measured_fraction"], then.get(c["case"]), today[c["case"]])
            for c in json.loads(MEASURED.read_text())["cases"] if c["case"] in today]


def draw_libraries(path: Path) -> None:
    """Horizontal bars: ours, CuPy and torch per case."""
    import matplotlib.pyplot as plt
    import numpy as np

    rows = library_rows()
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) + 1.2))
    for k, (label, color) in enumerate((("ours", "tab:green"), ("CuPy", "tab:blue"),
                                        ("torch", "tab:orange"))):
        values = [np.nan if r[k + 1] is None else r[k + 1] for r in rows]
        ax.barh(y + (k - 1) * 0.27, values, height=0.27, label=label, color=color)
    ax.set_yticks(y, [r[0] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xlabel("fraction of a device-to-device copy (H100)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw_model(path: Path) -> None:
    """Scatter: predicted against measured, the band of agreement shaded; filled markers
    for the model of the run, hollow ones for today's where it predicts otherwise."""
    import matplotlib.pyplot as plt

    points = model_points()
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    ax.fill_between([0, 1.2], [-AGREE, 1.2 - AGREE], [AGREE, 1.2 + AGREE], color="0.9",
                    label=f"within {AGREE}")
    ax.plot([0, 1.2], [0, 1.2], color="gray", linewidth=0.8)
    for suite, color in SUITE_COLORS.items():
        chosen = [p for p in points if p[1] == suite and p[3] is not None]
        if chosen:
            ax.scatter([p[2] for p in chosen], [p[3] for p in chosen], s=18, color=color,
                       label=f"{suite}, model of the run")
        moved = [p for p in points if p[1] == suite and (p[3] is None or abs(p[4] - p[3]) > 0.02)]
        if moved:
            ax.scatter([p[2] for p in moved], [p[4] for p in moved], s=22, facecolors="none",
                       edgecolors=color, label=f"{suite}, today's model")
    ax.set_xlim(0, 1.2)
    ax.set_ylim(0, 1.2)
    ax.set_xlabel("measured on the H100 (fraction of a copy)")
    ax.set_ylabel("predicted by the model")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


HERE = Path(__file__).resolve()
CHARTS = {"h100_libraries.png": (draw_libraries, (H100_PAGE, HERE)),
          "h100_model.png": (draw_model, (H100_PAGE, MEASURED, PREDICTED, HERE))}


def write_charts(out: Path = OUT) -> list[Path]:
    """Draw every chart whose records are newer than it (or that is missing).

    Parameters
    ----------
    out : Path
        The folder of the PNG files.

    Returns
    -------
    list of Path
        Every chart's path, drawn now or before.
    """
    import matplotlib

    matplotlib.use("Agg")
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (draw, records) in CHARTS.items():
        path = out / name
        if not path.exists() or path.stat().st_mtime < max(r.stat().st_mtime for r in records):
            draw(path)
        paths.append(path)
    return paths


def _on_builder_inited(app) -> None:
    write_charts()


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
