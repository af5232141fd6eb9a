"""The performance model, pure Python: the device table (:mod:`.devices`), the recorded kernel
costs (:mod:`.kernel_costs`), the sector model (:mod:`.sectors`) and the limits and predicted
fraction (:mod:`.limits`) that the planners, the bench and the plan command all call
(gpu-check's profile step picks the cases where it and an H100 disagree most)."""
