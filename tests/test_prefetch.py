"""``fastsw._prefetch``, the memory hints the kernels share. ``_prefetch`` compiles inside a kernel, at any index of
the array (first, last, a computed slot), and changes nothing the kernel computes; ``_advise_huge`` asks for
transparent huge pages on a large array."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numba import njit

from fastsw._prefetch import _prefetch
from fastsw.trainers.bpe_kernels import _grow


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


def _vm_flags(address: int) -> list:
    """The ``VmFlags`` of the mapping of this process that holds ``address`` (Linux's ``/proc/self/smaps``)."""
    inside = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside and head == "VmFlags:":
                return line.split()[1:]
    raise AssertionError("no mapping holds the address")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="transparent huge pages are Linux's")
@pytest.mark.skipif(not hasattr(_grow, "signatures"), reason="NUMBA_DISABLE_JIT=1: the advice is compiled code")
def test_a_large_kernel_array_asks_for_huge_pages():
    # the merge loop's arrays grow through _grow: one of 16 MB carries MADV_HUGEPAGE ("hg") before it is filled,
    # as NumPy's own large arrays do, and keeps its values
    big = _grow(np.arange(10, dtype=np.int64), 1 << 21)
    assert big[:10].tolist() == list(range(10)) and big.shape == (1 << 21,)
    assert "hg" in _vm_flags(big.ctypes.data + big.nbytes // 2)
