"""Command line: ``python -m infini_cupy {demo,bench,plan,warmup,gpu-check} ...``.

Each command is a module of :mod:`infini_cupy.tools` (``tools/plan_command.py``,
``tools/bench/command.py``, ...) with ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``; this file only dispatches.
"""

from __future__ import annotations

import argparse
import sys

from .about import package_version
from .tools import demo
from .tools import plan_command as plan
from .tools.bench import command as bench
from .tools.gpu_check import command as gpu_check
from .tools.warmup import command as warmup

COMMANDS = {"demo": demo, "bench": bench, "plan": plan, "warmup": warmup, "gpu-check": gpu_check}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infini_cupy")
    parser.add_argument("--version", action="version", version=f"infini_cupy {package_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        module.add_arguments(commands.add_parser(name, help=module.HELP,
                                                  description=module.HELP))
    args = parser.parse_args(argv)
    return COMMANDS[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
