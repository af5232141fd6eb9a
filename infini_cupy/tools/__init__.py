"""The command-line tools (``python -m infini_cupy COMMAND``): ``demo``, ``bench``
(:mod:`.bench`, cases in :mod:`.cases`, GPU throughput in :mod:`.bench_gpu`), ``plan``,
``warmup``, and the coalescing profiler they share (:mod:`.profiler`). Each command module
has ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``."""
