"""The ``gpu-check`` command and its steps: the command (:mod:`.command`), the environment
(:mod:`.environment`), the smoke cases (:mod:`.smoke`), the bench's key rows
(:mod:`.bench_step`), the Nsight Compute profile (:mod:`.nsight_profile`) and the failures
plugin (:mod:`.failures`)."""
