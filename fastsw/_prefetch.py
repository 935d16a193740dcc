"""``_prefetch(arr, i)``: ask the CPU to start loading ``arr[i]`` into its caches from inside a Numba kernel (LLVM's
``llvm.prefetch``; never faults, no effect on results), shared by the training and encoding kernels. A no-op when
the kernels run as plain Python (``NUMBA_DISABLE_JIT=1``)."""

from __future__ import annotations

from llvmlite import ir
from numba import types
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
