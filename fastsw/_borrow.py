"""``_borrow(arr)``: the same array without its reference count, for passing an array that the kernel holds anyway
to a helper compiled ``inline="always"`` inside a hot loop. Numba binds each array parameter of an inlined helper
to a new variable, which takes a reference (an atomic increment, and an atomic decrement where the variable dies)
that its reference-count pruning often leaves in place; a view without a reference count (no ``meminfo``, as an
array Numba did not allocate) makes both a test of a null pointer that LLVM folds away. The view must not outlive
the array it borrows from: pass it straight to the helper, never return or store it. The identity when the
kernels run as plain Python (``NUMBA_DISABLE_JIT=1``)."""

from __future__ import annotations

from numba import types
from numba.core import cgutils, config
from numba.extending import intrinsic

if config.DISABLE_JIT:  # type: ignore[attr-defined]  # set from the environment at import

    def _borrow(arr):
        """The array itself when the kernels run as plain Python."""
        return arr
else:

    @intrinsic
    def _borrow(typingctx, arr):
        """``arr`` with a null ``meminfo``: the same data, shape and strides, no reference count. An intrinsic."""
        if not isinstance(arr, types.Array):
            return None

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
            return ary._getvalue()

        return arr(arr), codegen
