"""Command line: ``python -m infini_cupy {demo,bench,plan,warmup} ...``.

Each command lives in its own module, which provides ``add_arguments(parser)`` and
``run(args) -> int`` and a one-line ``HELP``; this file only dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = {
    "demo": "infini_cupy.demo",
    "bench": "infini_cupy.bench",
    "plan": "infini_cupy.plan_cli",
    "warmup": "infini_cupy.warmup",
}


def _available():
    """Command modules that exist (a command is added by writing its module)."""
    for name, module_name in COMMANDS.items():
        try:
            yield name, importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name != module_name:
                raise


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infini_cupy")
    commands = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, module in _available():
        modules[name] = module
        module.add_arguments(commands.add_parser(name, help=module.HELP))
    args = parser.parse_args(argv)
    return modules[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
