"""The tutorial notebooks in the site: ``../notebooks/*.ipynb`` copied to ``notebooks/``.

With ``$INFINI_CUPY_DOCS_NOTEBOOKS`` naming a folder of executed copies (the test suite
executes every notebook once and hands them over) those are copied and rendered as they are;
otherwise the stored notebooks (without outputs) are copied and myst-nb executes them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def copy_notebooks(app) -> None:
    source = Path(app.srcdir).parent / "notebooks"
    executed = os.environ.get("INFINI_CUPY_DOCS_NOTEBOOKS")
    target = Path(app.srcdir) / "notebooks"
    target.mkdir(exist_ok=True)
    for path in sorted(source.glob("*.ipynb")):
        chosen = Path(executed) / path.name if executed else path
        destination = target / path.name
        if not destination.exists() or destination.read_bytes() != chosen.read_bytes():
            shutil.copyfile(chosen, destination)


def setup(app):
    app.connect("builder-inited", copy_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
