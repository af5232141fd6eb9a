"""The test suite's batches of emulator kernels (every variant of an op group, of a copy
family) built at g++'s -O0: a batch of 30 to 900 kernels compiles 2.5 times faster there than
at the default -O1, and the tests run them on small arrays (tests/runtime/test_emulate_cache.py
checks that both levels give the same bits). A single kernel compiles as fast at either
level (parsing the source is most of it, and comes precompiled), so the others stay at the
level users get. ``INFINI_CUPY_EMULATOR_OPTIMIZE`` set for the run builds the batches at its
level too."""

from __future__ import annotations

import contextlib
import os

from infini_cupy import config

BATCH_LEVEL = "0"


def batch_built():
    """The block's emulator compiles at :data:`BATCH_LEVEL`, unless the run sets a level."""
    if os.environ.get(config.EMULATOR_OPTIMIZE_VAR, "").strip():
        return contextlib.nullcontext()
    return config.emulator_optimized(BATCH_LEVEL)
