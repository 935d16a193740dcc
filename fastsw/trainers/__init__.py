"""Training: counts in, merges out.

:mod:`.train` holds :func:`fastsw.train`. Each algorithm keeps its reference module, its fast driver and its Numba
kernels side by side: :mod:`.bpe` + :mod:`.superword` (reference), :mod:`.bpe_fast` and :mod:`.bpe_kernels`;
:mod:`.parity`, :mod:`.parity_fast`, :mod:`.parity_kernels`; :mod:`.mingram` and :mod:`.mingram_kernels`."""
