"""The command-line tools (``python -m infini_cupy COMMAND``), one module or folder per command:
``demo`` (:mod:`.demo`), ``plan`` (:mod:`.plan_command`), ``bench`` (:mod:`.bench`), ``gpu-check``
(:mod:`.gpu_check`) and ``warmup`` (:mod:`.warmup`); the case parser they share is
:mod:`.cases`. Each command module has ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``."""
