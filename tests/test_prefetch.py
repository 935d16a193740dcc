"""``fastsw._prefetch._prefetch``, the prefetch hint the training and encoding kernels share: it compiles inside a
kernel, at any index of the array (first, last, a computed slot), and changes nothing the kernel computes."""

from __future__ import annotations

import numpy as np
from numba import njit

from fastsw._prefetch import _prefetch


@njit
def _sum_with_hints(a, stride):
    total = 0
    n = a.shape[0]
    for i in range(n):
        _prefetch(a, (i * stride) % n)  # another entry than the one read
        total += a[i]
    _prefetch(a, n - 1)
    return total


def test_prefetch_compiles_in_a_kernel_and_changes_no_result():
    a = np.arange(10_007, dtype=np.int64) * 3 - 5
    assert _sum_with_hints(a, 7919) == int(a.sum())
    b = np.array([7], dtype=np.int32)
    assert _sum_with_hints(b, 1) == 7
