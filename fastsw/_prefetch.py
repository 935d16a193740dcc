"""Memory hints shared by the training and encoding kernels, no effect on results, and no-ops when the kernels run as
plain Python (``NUMBA_DISABLE_JIT=1``):

* ``_prefetch(arr, i)``: ask the CPU to start loading ``arr[i]`` into its caches (LLVM's ``llvm.prefetch``; never
  faults);
* ``_advise_huge(arr)``: ask Linux for transparent huge pages on a large array before it is filled.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils, config
from numba.extending import intrinsic

if config.DISABLE_JIT:  # type: ignore[attr-defined]  # set from the environment at import

    def _prefetch(arr, i):
        """A no-op when the kernels run as plain Python."""
else:

    @intrinsic
    def _prefetch(typingctx, arr, i):
        """Ask the CPU to start loading ``arr[i]`` into the cache (``llvm.prefetch``:
        never faults, no effect on results). An intrinsic, not a kernel."""

        def codegen(context, builder, sig, args):
            aryty = sig.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
            i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
            # the typed-pointer name; LLVM with opaque pointers upgrades it
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
            builder.call(fn, [i8p, i32(0), i32(3), i32(1)])  # read, high locality, data
            return context.get_dummy_value()

        return types.void(arr, i), codegen


#: transparent huge pages: their size on x86-64 and arm64 Linux, and the advice that asks for them there
_HUGE = 1 << 21
_MADV_HUGEPAGE = 14

if config.DISABLE_JIT:  # type: ignore[attr-defined]

    def _madvise_huge(addr, length):
        """A no-op when the kernels run as plain Python."""
else:

    @intrinsic
    def _madvise_huge(typingctx, addr, length):
        """``madvise(addr, length, MADV_HUGEPAGE)`` on Linux (its result ignored: advice only); nothing elsewhere."""

        def codegen(context, builder, sig, args):
            if sys.platform.startswith("linux"):
                i8p = ir.IntType(8).as_pointer()
                i64 = ir.IntType(64)
                i32 = ir.IntType(32)
                start = context.cast(builder, args[0], sig.args[0], types.int64)
                size = context.cast(builder, args[1], sig.args[1], types.int64)
                fnty = ir.FunctionType(i32, [i8p, i64, i32])
                fn = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
                builder.call(fn, [builder.inttoptr(start, i8p), size, i32(_MADV_HUGEPAGE)])
            return context.get_dummy_value()

        return types.void(addr, length), codegen


@njit(cache=True, inline="always")
def _advise_huge(arr):
    """Ask Linux for transparent huge pages on the 2 MB-aligned part of ``arr``'s memory when it spans at least 4
    MB, before its pages are first touched, as NumPy does for the arrays it allocates (the kernels' own arrays come
    from Numba's allocator, which does not): a random access into a large array then rarely misses the TLB, and
    filling it faults once per 2 MB instead of once per 4 kB. No effect on results."""
    nbytes = np.int64(arr.size) * np.int64(arr.itemsize)
    if nbytes >= 2 * _HUGE:
        p = np.int64(arr.ctypes.data)
        start = (p + (_HUGE - 1)) & ~np.int64(_HUGE - 1)
        end = (p + nbytes) & ~np.int64(_HUGE - 1)
        if end > start:
            _madvise_huge(start, end - start)
