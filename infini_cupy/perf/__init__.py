"""The performance model, pure Python: the device table (:mod:`.devices`), the recorded kernel
costs (:mod:`.kernel_costs`), the sector model (:mod:`.sectors`) and the limits and predicted
fraction (:mod:`.limits`) that the planners, the bench and gpu-check all call."""
