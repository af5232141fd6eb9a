"""Readers of what NVRTC and the emulator produce: a kernel's SASS (:mod:`.sass`, over the
cubin's ELF sections that :mod:`infini_cupy.runtime.elf` reads), the emulator's coalescing
and bank-conflict traces (:mod:`.coalescing`, :mod:`.bank_conflicts`) and sampled launches
of a plan (:mod:`.sampled_launches`)."""
