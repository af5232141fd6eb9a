"""Strided copies (rearrange): layout normalization (:mod:`.layout`), the seed planner's
block/grid split (:mod:`.planner`), staged tiles (:mod:`.tile_planner`), the plan cache
(:mod:`.plan_cache`) and the copy itself (:mod:`.copy`: ``rearrange_``)."""
