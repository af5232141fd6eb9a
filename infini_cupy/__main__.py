"""Command line: ``python -m infini_cupy demo``."""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infini_cupy")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run copies and elementwise ops on the GPU (else in emulation), check them"
    )
    demo.add_argument("--backend", choices=("auto", "cuda", "emulate"), default="auto")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(args.backend)
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":
    sys.exit(main())
