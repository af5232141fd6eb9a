"""The ``warmup`` command and its steps: the command (:mod:`.command`), the GPU cache warmed
without a GPU (:mod:`.warm_cache`) and the writer of the recorded kernel costs
(:mod:`.record_costs`)."""
