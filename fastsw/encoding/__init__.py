"""Encoding with a trained model: the fast driver :mod:`.encode_fast` around the Numba kernels
:mod:`.encode_kernels` (the reference is the merge engine of :mod:`fastsw.trainers.bpe`), the kernel's C entry for
one text per call :mod:`.c_entry`, the variant for three-byte alphabets :mod:`.wide_fast`, and corpora to training shards, :mod:`.shard`."""
