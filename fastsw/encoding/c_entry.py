"""The encoding kernel as a C function, for the compiled one-text path (``fastsw.pretokenizers._pretok.OneText``).

A call of the Numba dispatcher type-checks and unboxes each of :func:`fastsw.encoding.encode_kernels._encode_docs`'s
fifteen arguments and boxes the two arrays it returns; on a short text that costs more than the encoding. Here the
same kernel is wrapped in a Numba ``cfunc`` over raw pointers and lengths (:data:`SIGNATURE`): the extension scans
the text into its own buffers, calls the function's address, and builds the list of ids, with no numpy array
and no Python object in between. The wrapper adds no rule of its own: the ids are ``_encode_docs``'s, copied to the
caller's buffer.

Compiling the wrapper takes a few seconds (Numba links and optimises the kernel with it) and loading it from Numba's
on-disk cache a few hundredths, so :func:`address` never compiles in the calling process unless asked:
:func:`fastsw.encoding.encode_fast.warmup` (the background compilation of a fresh install) compiles it into the
cache, and until it is there the driver keeps to the dispatcher's path (the same ids).
"""

from __future__ import annotations

from typing import Optional

from numba import carray, types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from fastsw._compiling import stamp_with_callees
from fastsw.encoding import encode_kernels as K

_P8 = types.CPointer(types.uint8)
_P32 = types.CPointer(types.int32)
_P64 = types.CPointer(types.int64)
_PU64 = types.CPointer(types.uint64)
_N = types.int64
#: ``n_ids(text, n_text, ends, doc_pieces, byte_ids, sc_short, n, sc_long, n, tb, n, r_table, n, s_table, n, s_bits,
#: n, flags, n, chars, n, use_shortcut, use_super, short_limit, out)``: each table a pointer and its length in
#: items (``byte_ids``: 256), ``ends`` the pretokens' byte ends (``doc_pieces[1]`` of them, ``doc_pieces[0]`` = 0),
#: ``out`` room for ``n_text`` int32 ids (a byte-level token is at least one byte).
SIGNATURE = types.int64(
    _P8,
    _N,
    _P64,
    _P64,
    _P32,
    _P64,
    _N,
    _P64,
    _N,
    _P8,
    _N,
    _P64,
    _N,
    _P64,
    _N,
    _PU64,
    _N,
    _P8,
    _N,
    _P64,
    _N,
    _N,
    _N,
    _N,
    _P32,
)


@intrinsic
def _readonly(typingctx, arr):
    """``arr`` typed read-only (the same data model): the kernel's one signature takes its text read-only."""
    sig = arr.copy(readonly=True)(arr)

    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])

    return sig, codegen


def _one_text(
    text,
    n_text,
    ends,
    doc_pieces,
    byte_ids,
    sc_short,
    n_sc_short,
    sc_long,
    n_sc_long,
    tb,
    n_tb,
    r_table,
    n_r_table,
    s_table,
    n_s_table,
    s_bits,
    n_s_bits,
    flags,
    n_flags,
    chars,
    n_chars,
    use_shortcut,
    use_super,
    short_limit,
    out,
):
    """:func:`fastsw.encoding.encode_kernels._encode_docs` on one document given as pointers (:data:`SIGNATURE`):
    writes its int32 ids to ``out`` and returns how many."""
    ids, _ = K._encode_docs(
        _readonly(carray(text, n_text)),
        carray(ends, doc_pieces[1]),
        carray(doc_pieces, 2),
        carray(byte_ids, 256),
        carray(sc_short, n_sc_short),
        carray(sc_long, n_sc_long),
        carray(tb, n_tb),
        carray(r_table, n_r_table),
        carray(s_table, n_s_table),
        carray(s_bits, n_s_bits),
        carray(flags, n_flags),
        carray(chars, n_chars),
        use_shortcut,
        use_super,
        short_limit,
    )
    for i in range(ids.shape[0]):
        out[i] = ids[i]
    return ids.shape[0]


_compiled = None  # the CFunc, once loaded or compiled


def address(compile: bool = False) -> Optional[int]:
    """The address of the compiled :func:`_one_text` (C signature :data:`SIGNATURE`), loaded from Numba's on-disk
    cache; when it is not there, compiled (a few seconds) if ``compile``, else None. Also None when the kernels run
    as plain Python (``NUMBA_DISABLE_JIT=1``)."""
    global _compiled
    if _compiled is None:
        if not hasattr(K._encode_docs, "signatures"):
            return None
        from numba.core.ccallback import CFunc

        from fastsw._compiling import in_disk_cache

        cf = CFunc(_one_text, (SIGNATURE.args, SIGNATURE.return_type), {}, {"nopython": True, "nogil": True})
        cf.enable_caching()
        stamp_with_callees([cf], __name__)  # it holds the encoding kernel's code, not only this file's
        if not (compile or in_disk_cache(cf)):
            return None
        cf.compile()  # loads it from the cache when it is there
        _compiled = cf
    return _compiled.address
