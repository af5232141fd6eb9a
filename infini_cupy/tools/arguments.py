"""Argument types the commands share: argparse's own error (``usage: ...``, status 2) for a
value no command could use, on the machine that prepares the command."""

from __future__ import annotations

import argparse
import re


def positive_int(text: str) -> int:
    """An int of 1 or more (``--limit``, ``--jobs``, ``--profile-blocks``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def gpu_arch(text: str) -> str:
    """An NVRTC architecture, ``sm_XY`` or ``compute_XY`` (``sm_90``, ``sm_90a``)."""
    if not re.fullmatch(r"(sm|compute)_\d{2,3}[af]?", text):
        raise argparse.ArgumentTypeError(f"expected an architecture such as sm_90, got {text!r}")
    return text
