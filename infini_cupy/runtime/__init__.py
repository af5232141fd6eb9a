"""Running kernels: the one launch entry point (:mod:`.launch`), the kernel sources
(:mod:`.sources`), by-value struct arguments (:mod:`.structs`), the cubin check
(:mod:`.elf`), and the two launchers behind it: ``cuda`` (:mod:`.cuda`, NVRTC through CuPy;
:mod:`.nvrtc` drives NVRTC without a GPU) and ``emulate`` (:mod:`.emulate`, the same sources
built by g++ and run on the CPU)."""
