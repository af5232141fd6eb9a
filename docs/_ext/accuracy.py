"""The accuracy table of :doc:`/user/elementwise`, rendered from ``docs/user/accuracy.json``.

The JSON is the one place of the table's data: ``tests/elementwise/test_accuracy.py``
measures the ``cpu`` (or, on a CPU with AVX-512, ``cpu_avx512``) and ``emulator`` columns
against it, and this extension's ``accuracy-table`` directive renders it as a Markdown table
in the page, the ``cpu_avx512`` entry in parentheses in the ``cpu`` cell where it differs.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

TABLE = Path(__file__).resolve().parent.parent / "user" / "accuracy.json"
DEVICES = ("cpu", "emulator", "cuda")
AVX512_COLUMN = "cpu_avx512"  # NumPy's AVX-512 loops: shown beside cpu's where they differ
DTYPES = ("float32", "float64")
# Correctly rounded by definition (IEEE 754 basic operations) wherever they run; any other
# function measured correctly rounded is so on the sampled inputs only.
IEEE_OPERATIONS = {"add", "subtract", "multiply", "divide", "sqrt", "reciprocal", "square"}


def cell(name: str, entry) -> str:
    """One table cell: ``exact``, ``CR`` (``CR*`` where only sampled), ``≤ N``, or ``—``.

    Parameters
    ----------
    name : str
        The function's name.
    entry : str, int or None
        Its entry in the JSON: ``"exact"``, ``"cr"``, a step count, or None.

    Returns
    -------
    str
        The cell's Markdown.
    """
    if entry is None:
        return "—"
    if entry == "exact":
        return "exact"
    if entry == "cr":
        return "CR" if name in IEEE_OPERATIONS else "CR*"
    return f"≤ {entry}"


def markdown_table(table: dict) -> list[str]:
    """The table as Markdown lines: one row per function, a column per dtype and device.

    Parameters
    ----------
    table : dict
        ``accuracy.json`` read: ``{"functions": {name: {device: {dtype: entry}}}}``.

    Returns
    -------
    list of str
        The lines of a pipe table.
    """
    header = ["function"] + [f"{device} {dtype}" for dtype in DTYPES for device in DEVICES]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, devices in table["functions"].items():
        cells = [f"`{name}`"] + [device_cell(name, devices, device, dtype)
                                 for dtype in DTYPES for device in DEVICES]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def device_cell(name: str, devices: dict, device: str, dtype: str) -> str:
    """A device's cell; ``cpu``'s with the AVX-512 entry in parentheses where it differs.

    Parameters
    ----------
    name : str
        The function's name.
    devices : dict
        Its row of the JSON: ``{device: {dtype: entry}}``.
    device, dtype : str
        The column.

    Returns
    -------
    str
        The cell's Markdown.

    Examples
    --------
    >>> row = {"cpu": {"float32": 1}, "cpu_avx512": {"float32": 2}}
    >>> device_cell("tan", row, "cpu", "float32")
    '≤ 1 (≤ 2)'
    """
    text = cell(name, devices[device][dtype])
    if device == "cpu" and AVX512_COLUMN in devices:
        other = cell(name, devices[AVX512_COLUMN][dtype])
        if other != text:
            text += f" ({other})"
    return text


class AccuracyTable(SphinxDirective):
    """``accuracy-table``: the table of ``docs/user/accuracy.json``."""

    has_content = False

    def run(self):
        self.env.note_dependency(str(TABLE))
        table = json.loads(TABLE.read_text())
        holder = nodes.container(classes=["accuracy-table"])
        self.state.nested_parse(StringList(markdown_table(table), source=str(TABLE)),
                                self.content_offset, holder)
        return [holder]


def setup(app):
    app.add_directive("accuracy-table", AccuracyTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
