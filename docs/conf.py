"""Sphinx configuration of the infini_cupy documentation (``python -m sphinx -W docs docs/_build/html``).

Nothing here needs the network: no intersphinx. The API reference pages are written at build
time from ``infini_cupy.__all__`` (``_ext/apigen.py``), so a new public name appears without
editing the docs; the Performance pages' charts are drawn from the records (``_ext/perf_charts.py``,
matplotlib) and the elementwise accuracy table rendered from ``user/accuracy.json``
(``_ext/accuracy.py``). The notebooks are copied in from ``../notebooks``: from
``$INFINI_CUPY_DOCS_NOTEBOOKS`` when it names a folder of executed copies (the test suite
executes them once and hands them over), else executed here (myst-nb, in emulation).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # the checkout's infini_cupy, installed or not

import infini_cupy  # noqa: E402

project = "infini_cupy"
copyright = "the infini_cupy authors; Apache-2.0"
version = release = infini_cupy.__version__

extensions = [
    "myst_nb",
    "sphinx_design",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "apigen",
    "notebooks",
    "accuracy",
    "perf_charts",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
templates_path = []
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme = "pydata_sphinx_theme"
html_title = f"infini_cupy {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": [], "getting_started": [], "changelog": []}  # no section navigation there

# MyST: fenced code, ::: directives, heading anchors for cross-page links
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]

# Notebooks: executed by the test suite and copied in (see notebooks.py), else run here.
nb_execution_mode = "off" if os.environ.get("INFINI_CUPY_DOCS_NOTEBOOKS") else "auto"
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_merge_streams = True

# autodoc + numpydoc: the docstrings are numpydoc; members are listed by apigen's pages
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
add_module_names = False
