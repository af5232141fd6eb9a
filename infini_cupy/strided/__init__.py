"""Strided copies (rearrange): layout normalization (:mod:`.layout`), the seed planner's
block/grid split (:mod:`.seed_planner`), staged and packed tiles (:mod:`.tile_planner`,
:mod:`.packed_planner`), the chooser among them (:mod:`.planner`), the plan cache
(:mod:`.plan_cache`) and the copy itself (:mod:`.copy`: ``rearrange_``)."""
