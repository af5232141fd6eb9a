"""A pytest plugin of ``gpu-check``'s pytest steps: every failure's report, written the moment
it comes in, to the file ``$INFINI_CUPY_FAILURES`` names. pytest prints tracebacks only at
the end of a session, which a step stopped at its time limit never reaches; this file still
says why each failure failed.

Loaded with ``-p infini_cupy.tools.gpu_check.failures``; under pytest-xdist the controller writes
(it receives every worker's reports), the workers do not.
"""

from __future__ import annotations

import os

FILE_VAR = "INFINI_CUPY_FAILURES"

# Asked of the session's config, not of $PYTEST_XDIST_WORKER: a pytest started from inside an
# xdist worker inherits that variable and is no worker itself.
_writes = True


def pytest_configure(config):
    global _writes
    _writes = not hasattr(config, "workerinput")


def pytest_runtest_logreport(report):
    path = os.environ.get(FILE_VAR)
    if not path or not report.failed or not _writes:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(f"FAILED {report.nodeid} ({report.when})\n{report.longreprtext}\n\n")
