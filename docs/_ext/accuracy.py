"""The accuracy table of :doc:`/user/elementwise`, rendered from ``docs/user/accuracy.json``.

The JSON is the one place of the table's data: ``tests/elementwise/test_accuracy.py``
measures the ``cpu`` and ``emulator`` columns against it, and this extension's
``accuracy-table`` directive renders every column as a Markdown table in the page.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

TABLE = Path(__file__).resolve().parent.parent / "user" / "accuracy.json"
DEVICES = ("cpu", "emulator", "cuda")
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
        cells = [f"`{name}`"] + [cell(name, devices[device][dtype])
                                 for dtype in DTYPES for device in DEVICES]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


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
