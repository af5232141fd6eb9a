"""The ``bench`` command and its suites: the command (:mod:`.command`), the Array wrapper's and
xp.fuse's suites (:mod:`.array_suite`, :mod:`.fusion_suite`), the permutation cases
(:mod:`.permutation_cases`), the GB/s helper (:mod:`.gbps`) and the model's columns
(:mod:`.model_columns`)."""
