"""``fastsw._borrow._borrow``, the view without a reference count that the encoding kernel passes to its inlined
supermerge helpers: it reads and writes the same data as the array it borrows from, and an inlined helper called
on it compiles without the atomic reference counting it takes on the array itself."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from fastsw._borrow import _borrow


@njit(inline="always")
def _bump(a, i, b):
    if a[i] > b[i]:
        a[i] -= b[i]
        return a[i]
    a[i] += b[i]
    return -a[i]


@njit(inline="always")
def _segment(a, i, n, b):
    """Shaped like the kernel's segment merge: a branch per length, an inlined helper in one of them."""
    if n == 2:
        return a[i] + b[0]
    if n == 3:
        return _bump(a, i, b)
    for k in range(n):
        a[i] += b[k]
    return a[i]


@njit
def _plain(a, b):
    t = 0
    for i in range(a.shape[0]):
        if a[i] & 1:
            t += _segment(a, i, a[i] % 5, b)
    return t


@njit
def _borrowed(a, b):
    t = 0
    for i in range(a.shape[0]):
        if a[i] & 1:
            t += _segment(_borrow(a), i, a[i] % 5, _borrow(b))
    return t


@njit
def _view_facts(a):
    v = _borrow(a)
    v[0] = 99
    return v.shape[0], v.strides[0], v.sum()


def test_a_borrowed_view_is_the_same_data_and_changes_no_result():
    a = np.arange(50, dtype=np.int64) * 7 % 13
    b = np.arange(50, dtype=np.int64) % 5 + 1
    a2 = a.copy()
    assert _borrowed(a2, b) == _plain(a, b)
    assert np.array_equal(a2, a)  # the writes through the view reached the array
    c = np.arange(20, dtype=np.int32)[::3]  # not contiguous: shape and strides kept
    n, stride, total = _view_facts(c)
    assert (n, stride, c[0]) == (7, 12, 99)
    assert total == int(c.sum())


def _increfs(fn, *args):
    """The calls of ``NRT_incref`` (an atomic increment each) in ``fn``'s optimised LLVM module."""
    fn(*args)
    return fn.inspect_llvm(fn.signatures[0]).count("call void @NRT_incref(")


@pytest.mark.skipif(not hasattr(_plain, "inspect_llvm"), reason="needs Numba's compiler (NUMBA_DISABLE_JIT is set)")
def test_an_inlined_helper_on_borrowed_arrays_takes_no_reference_counts():
    a = np.zeros(4, np.int64)
    assert _increfs(_plain, a, a) > 0  # the helper's parameters take references on the arrays themselves
    assert _increfs(_borrowed, a, a) == 0
