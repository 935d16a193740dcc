# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Compiled script chunker; ``fastsw.chunking.script_chunks_py`` is its pure-Python twin.

The rules are documented in :mod:`fastsw.chunking`; both implementations must return identical lists.
Design note: one pass over the ``str`` with ``Py_UCS4`` characters (no UTF-32 copy), one table
lookup per code point, and a Python tuple only per chunk.
"""

cdef enum:
    N_CODE_POINTS = 0x110000
    INHERITED = 2  # ids as in fastsw._unicode: 0 Unknown, 1 Common, 2 Inherited
    FIRST_REAL = 3  # ids >= 3 are real scripts


def script_chunks(str text, const unsigned char[::1] table):
    """Split ``text`` into ``(start, end, script)`` chunks (code point offsets, no gaps).

    ``table`` is :func:`fastsw._unicode.script_table` (uint8, length 0x110000); ids 0, 1, 2 are
    Unknown, Common and Inherited, larger ids are real scripts.  ``script`` is -1 for the single
    chunk of a text without any real script; an empty text gives ``[]``.
    """
    if table.shape[0] < N_CODE_POINTS:
        raise ValueError(f"table has {table.shape[0]} entries; expected 0x110000 (use script_table())")
    cdef list chunks = []
    cdef Py_ssize_t i = 0, start = 0, last = 0  # last: just after the chunk's last non-Common code point
    cdef int cur = -1, sid
    cdef Py_UCS4 ch
    for ch in text:
        sid = table[ch]
        if sid >= FIRST_REAL:
            if cur != -1 and sid != cur:
                chunks.append((start, last, cur))
                start = last
            cur = sid
            last = i + 1
        elif sid == INHERITED and cur != -1:  # Inherited stays with the chunk before it
            last = i + 1
        i += 1
    if i:
        chunks.append((start, i, cur))
    return chunks
