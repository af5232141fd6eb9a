"""The ``emulate`` backend: kernel sources built by g++ (:mod:`.build`) and run on the CPU
with CUDA semantics, every global access checked and optionally traced (:mod:`.launcher`)."""
