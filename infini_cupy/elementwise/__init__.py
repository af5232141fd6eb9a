"""Elementwise functions on our kernels: the op table (:mod:`.ops`), kernel name expressions
(:mod:`.kernels`), call planning (:mod:`.plan`), the launcher (:mod:`.launcher`: validation,
promotion, outputs, launches) and the short path of repeated signatures (:mod:`.short_path`)."""
