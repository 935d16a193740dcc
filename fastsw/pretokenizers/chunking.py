"""Script chunking (SPEC section 2.2): cut a document into runs of one Unicode script.

Walk the code points with their ``Script`` (from :func:`fastsw.pretokenizers._unicode.script_table`):

* Common and Unknown code points join the chunk that *follows* them.
* Inherited code points (combining marks) stay with the chunk *before* them: once a real script
  has started, an Inherited code point after some Commons pulls those Commons back too.
* Leading Commons and leading Inherited code points join the first real-script chunk.
* A real script equal to the current chunk's script continues the chunk (Commons in between stay
  inside).  A different real script starts a new chunk right after the current chunk's last
  non-Common code point (real or Inherited).
* The last chunk runs to the end of the text (trailing Commons stay with it).
* A text with no real script is one chunk with script -1; an empty text has no chunks.

Example: ``'德国HYDAC电磁球阀 can be hard.'`` -> ``德国`` (Han) | ``HYDAC`` (Latin) |
``电磁球阀`` (Han) | ``' can be hard.'`` (Latin).  Kana and Han are different scripts; ``ー``
(U+30FC) is Common.

Chunks are ``(start, end, script)`` tuples of code point offsets.  This module is the plain-Python
side of the rule, used by the reference pre-tokenizer; the compiled side is fused into the scanner
(``_script_chunks`` in ``fastsw/pretokenizers/_pretok.pyx``), and tests compare the two through
``fastsw.pretokenizers._pretok.script_chunks`` on adversarial Unicode and the shared fixtures.
"""

import numpy as np

from fastsw.pretokenizers._unicode import INHERITED, script_table

__all__ = ["script_chunks", "script_chunks_py"]

FIRST_REAL = INHERITED + 1  # script ids >= 3 are real scripts


def script_chunks_py(text, table):
    """Chunks of ``text`` as ``(start, end, script)``: the plain-Python twin of the scanner's chunker.

    ``table`` is the uint8 script table of length 0x110000 (any contiguous buffer).
    """
    table = np.frombuffer(table, dtype=np.uint8)
    if len(table) < 0x110000:
        raise ValueError(f"table has {len(table)} entries; expected 0x110000 (use script_table())")
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    chunks = []
    start = last = 0  # last: just after the current chunk's last non-Common code point
    cur = -1  # the current chunk's script, -1 before the first real script
    for i, sid in enumerate(table[codes].tolist()):
        if sid >= FIRST_REAL:
            if cur != -1 and sid != cur:  # a new script: cut after the last non-Common
                chunks.append((start, last, cur))
                start = last
            cur = sid
            last = i + 1
        elif sid == INHERITED and cur != -1:  # stays with the chunk before it
            last = i + 1
    if text:
        chunks.append((start, len(text), cur))
    return chunks


def script_chunks(text):
    """Split ``text`` into script chunks ``(start, end, script)``; see the module docstring."""
    return script_chunks_py(text, script_table())
