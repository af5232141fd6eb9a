"""SciPy's tests marked skip or xfail for ``array_api_strict`` run on Arrays too (the stand-in
takes array_api_strict's place in SciPy's backends): only the markers naming that backend
are dropped; ``np_only``, ``cpu_only`` and the rest stay. Loaded with ``-p scipy_unskip``
after ``-p array_api_strict``."""

import sys
import types


def _without_strict_markers(node):
    """``node`` as SciPy's marker reader sees it, less the markers naming array_api_strict."""
    def iter_markers(name):
        return [m for m in node.iter_markers(name) if tuple(m.args) != ("array_api_strict",)]

    return types.SimpleNamespace(node=types.SimpleNamespace(iter_markers=iter_markers))


def pytest_collection_finish(session):
    scipy_conftest = sys.modules.get("scipy.conftest")
    if scipy_conftest is None:
        return
    read_markers = scipy_conftest._backends_kwargs_from_request

    def markers_for_arrays(request, skip_or_xfail):
        return read_markers(_without_strict_markers(request.node), skip_or_xfail)

    scipy_conftest._backends_kwargs_from_request = markers_for_arrays
