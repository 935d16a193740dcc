# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled pre-tokenizer for the two default patterns (and tiktoken's others, ``_cl100k.pxi``); ``regex.findall`` is
its reference.

The module also holds the compiled counter (``Counter``, included from ``_counter.pxi``: pre-tokenize
and count pretokens and letter runs without a ``str`` per pretoken; its reference is
``fastsw.corpus.counting.CountTable``) and ``aggregate_runs`` (supermerge candidates from packed letter runs;
its reference is ``fastsw.trainers.superword.aggregate_candidates``): they share the matchers and the tables. ``_boundary.pxi`` adds
``MarkScheme`` and ``MarkCounter``, the marker schemes' pre-tokenizer and counter (reference:
``fastsw.pretokenizers.boundary.marked_pretokens``). ``_rank_splits.pxi`` builds the tables of a tiktoken
vocabulary (``fastsw.io.tiktoken_vocab``).

``fastsw.pretokenizers.pretokenize.Pretokenizer.pretokenize_reference`` (the ``regex`` path) is the readable
specification: for ``GPT4O_PATTERN`` and ``SCRIPT_SPECIFIC_PATTERN`` this module must return
exactly the same pretokens, chunk by chunk.  It reads the class bits of
:func:`fastsw.pretokenizers._unicode.pretoken_table` (derived from the same ``regex`` module) and the contraction
case folds of :func:`fastsw.pretokenizers._unicode.contraction_folds`.

How each alternative of ``GPT4O_PATTERN`` is reproduced at a position ``i`` of a chunk ``[i, n)``
(P = ``[^\\r\\n\\p{L}\\p{N}]``, U = the upper class, W = the lower class; Lm, Lo and M are in
both U and W, so W minus U is Ll and U minus W is Lu/Lt):

1. ``P? U* W+ C?`` -- the greedy ``P?`` first tries to take ``c[i]``, then ``U* W+`` from ``j``:
   ``U*`` takes the maximal U run ``[j, k)``; if ``c[k]`` is W (then it is Ll) ``W+`` takes the W
   run from ``k``; otherwise ``U*`` gives back one code point at a time, and the first ``p < k``
   (from the right) with ``c[p]`` in W ends the match at ``p + 1``.  If that fails with the
   prefix, it is retried without it (only possible when ``c[i]`` is a mark: a mark is both a
   prefix and a W, so ``M Lu .`` matches just the mark here).
2. ``P? U+ W* C?`` -- the U run, then the W run; always succeeds once one U is there.
3. ``\\p{N}{1,3}``.
4. `` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*``.
5. ``\\s*[\\r\\n]+`` -- ends just after the last ``\\r``/``\\n`` of the whitespace run.
6. ``\\s+(?!\\S)`` -- the whitespace run to the chunk end, or all of it but its last code point
   when that leaves at least one.
7. ``\\s+``.

``C`` is ``(?i:'s|'t|'re|'ve|'m|'ll|'d)?``; the alternatives start with different letters, so
the first that matches is the only one.  ``SCRIPT_SPECIFIC_PATTERN`` replaces 1 and 2 by
`` ?\\p{L}\\p{M}*``.  Every code point is L, M, N, ``\\s`` or the class of 4, so the matches tile the
chunk.  ``(?!\\S)`` and the contractions never look past the chunk end, as ``regex`` on the chunk's
slice does not.

Design notes: see docs/internals.md, section "Pre-tokenization".
"""

from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.unicode cimport (PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA,
                              PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ)
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

import numpy as np

cdef extern from "Python.h":
    str PyUnicode_Substring(str text, Py_ssize_t start, Py_ssize_t end)

cdef enum:
    N_CODE_POINTS = 0x110000
    PT_LETTER = 1
    PT_UPPER = 2
    PT_LOWER = 4
    PT_MARK = 8
    PT_NUMBER = 16
    PT_SPACE = 32
    PT_FOLD = 64
    INHERITED = 2  # script ids as in fastsw.pretokenizers._unicode: 0 Unknown, 1 Common, 2 Inherited
    FIRST_REAL = 3  # ids >= 3 are real scripts

ctypedef fused char_t:  # the code units of the three str kinds (Py_UCS1, Py_UCS2, Py_UCS4)
    uint8_t
    uint16_t
    uint32_t


cdef struct Tables:
    const uint8_t* cls  # pretoken_table(), length 0x110000
    const uint32_t* fold_cps  # contraction_folds()[0]
    const uint8_t* fold_letters  # contraction_folds()[1]
    Py_ssize_t n_folds


cdef inline bint _is_prefix(Py_UCS4 c, uint8_t t) noexcept nogil:
    """``[^\\r\\n\\p{L}\\p{N}]``"""
    return c != 13 and c != 10 and not (t & (PT_LETTER | PT_NUMBER))


cdef inline bint _is_punct(uint8_t t) noexcept nogil:
    """``[^\\s\\p{L}\\p{N}]``"""
    return not (t & (PT_SPACE | PT_LETTER | PT_NUMBER))


cdef inline uint8_t _fold(const Tables* tb, Py_UCS4 c) noexcept nogil:
    """The contraction letter (ASCII lower case) that ``c`` matches under ``(?i)``, else 0."""
    cdef Py_ssize_t m
    if not (tb.cls[c] & PT_FOLD):
        return 0
    for m in range(tb.n_folds):
        if tb.fold_cps[m] == c:
            return tb.fold_letters[m]
    return 0


cdef inline Py_ssize_t _contraction(const char_t* s, const Tables* tb, Py_ssize_t e,
                                    Py_ssize_t n) noexcept nogil:
    """``(?i:'s|'t|'re|'ve|'m|'ll|'d)?`` at ``e``: the new end."""
    cdef uint8_t a, b
    if e + 1 >= n or s[e] != 39:  # 39 = "'"
        return e
    a = _fold(tb, s[e + 1])
    if a == 0:
        return e
    if a == 115 or a == 116 or a == 109 or a == 100:  # s t m d
        return e + 2
    if e + 2 >= n:
        return e
    b = _fold(tb, s[e + 2])
    if (a == 114 or a == 118) and b == 101:  # re ve
        return e + 3
    if a == 108 and b == 108:  # ll
        return e + 3
    return e


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FASTSW_CTZ64(x) ((int) __builtin_ctzll(x))
    #else
    static int FASTSW_CTZ64(unsigned long long x) { int k = 0; while (!(x & 1ULL)) { x >>= 1; k++; } return k; }
    #endif
    #if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define FASTSW_LITTLE_ENDIAN 0
    #else
    #define FASTSW_LITTLE_ENDIAN 1
    #endif
    """
    int FASTSW_CTZ64(unsigned long long x) noexcept nogil
    bint FASTSW_LITTLE_ENDIAN  # the word tricks of _lower_run read code unit 0 as the low bits


cdef inline unsigned long long _ascii_lower_lanes16(unsigned long long x) noexcept nogil:
    """Bit i (0..3) set: 16-bit code unit i of the word ``x`` is ASCII ``a``-``z``."""
    cdef unsigned long long lo = x & 0x007F007F007F007FULL
    cdef unsigned long long t = (x & 0xFF80FF80FF80FF80ULL) >> 7  # per lane 0 .. 0x1FF, nonzero: not ASCII
    t = ((t + 0x00FF00FF00FF00FFULL) | t) & 0x0100010001000100ULL  # bit 8 of a lane: not ASCII
    cdef unsigned long long low = (lo + 0x001F001F001F001FULL) & ~(lo + 0x0005000500050005ULL) & ~(t >> 1)
    # bits 7, 23, 39, 55 -> bits 48..51 (no other product lands there), then to 0..3
    return ((((low >> 7) & 0x0001000100010001ULL) * 0x0001000200040008ULL) >> 48) & 0xF


cdef inline Py_ssize_t _lower_run(const char_t* s, const uint8_t* cls, Py_ssize_t k, Py_ssize_t n) noexcept nogil:
    """``[W]*`` from ``k``: the end of the run of W code points. ASCII ``a``-``z`` (the only ASCII code points in W:
    they are Ll) are taken eight code units per step (one 64-bit word in the 1-byte kind, two in the 2-byte kind),
    with word arithmetic instead of a branch per code point, whose loop exit the branch predictor cannot guess; the
    first code unit that is not ``a``-``z`` goes through the class table, which decides whether the run goes on (a
    non-ASCII W). The 4-byte kind and the last code units of a text take the table per code point. Measured on 2 MB
    of English (mostly 2-byte ``str``: curly quotes): ``scan_utf8`` 10.8 -> 9.7 ms. Its reference is the ``regex``
    path like the rest of the scanner (tests/test_scanner_word_runs.py puts a run's end at every offset)."""
    cdef unsigned long long x, y, lo, low
    while k < n:
        if char_t is uint8_t:
            if FASTSW_LITTLE_ENDIAN and k + 8 <= n:
                memcpy(&x, s + k, 8)
                lo = x & 0x7F7F7F7F7F7F7F7FULL  # per byte below 0x80: no carry into the next byte
                # bit 7 of a byte: lo >= 0x61 ('a') and lo < 0x7B ('z' + 1) and the byte is ASCII
                low = (lo + 0x1F1F1F1F1F1F1F1FULL) & ~(lo + 0x0505050505050505ULL) & ~x & 0x8080808080808080ULL
                if low == 0x8080808080808080ULL:
                    k += 8
                    continue
                k += FASTSW_CTZ64(~low & 0x8080808080808080ULL) >> 3
        elif char_t is uint16_t:
            if FASTSW_LITTLE_ENDIAN and k + 8 <= n:
                memcpy(&x, s + k, 8)
                memcpy(&y, s + k + 4, 8)
                low = (_ascii_lower_lanes16(x) | (_ascii_lower_lanes16(y) << 4)) ^ 0xFF  # bit i: code unit i is not a-z
                if low == 0:
                    k += 8
                    continue
                k += FASTSW_CTZ64(low)
        if cls[s[k]] & PT_LOWER:
            k += 1
        else:
            break
    return k


cdef inline Py_ssize_t _upper_star_lower_plus(const char_t* s, const uint8_t* cls, Py_ssize_t j,
                                              Py_ssize_t n) noexcept nogil:
    """``[U]*[W]+`` at ``j`` with regex's backtracking: the end, or -1."""
    cdef Py_ssize_t k = j, p
    while k < n and cls[s[k]] & PT_UPPER:
        k += 1
    if k < n and cls[s[k]] & PT_LOWER:
        return _lower_run(s, cls, k + 1, n)
    p = k - 1  # U* gives back one code point at a time
    while p >= j:
        if cls[s[p]] & PT_LOWER:
            return p + 1
        p -= 1
    return -1


cdef inline Py_ssize_t _upper_plus_lower_star(const char_t* s, const uint8_t* cls, Py_ssize_t j,
                                              Py_ssize_t n) noexcept nogil:
    """``[U]+[W]*`` at ``j`` (``c[j]`` is known to be U): the end."""
    cdef Py_ssize_t k = j + 1
    while k < n and cls[s[k]] & PT_UPPER:
        k += 1
    return _lower_run(s, cls, k, n)


cdef inline Py_ssize_t _common_tail(const char_t* s, const uint8_t* cls, Py_ssize_t i,
                                    Py_ssize_t n) noexcept nogil:
    """The alternatives shared by both patterns, from ``\\p{N}{1,3}`` on: the end of the match."""
    cdef Py_UCS4 c = s[i]
    cdef uint8_t t = cls[c]
    cdef Py_ssize_t k, last_newline
    if t & PT_NUMBER:  # \p{N}{1,3}
        k = i + 1
        while k < n and k < i + 3 and cls[s[k]] & PT_NUMBER:
            k += 1
        return k
    k = -1  # ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
    if c == 32 and i + 1 < n and _is_punct(cls[s[i + 1]]):
        k = i + 2
    elif _is_punct(t):
        k = i + 1
    if k >= 0:
        while k < n and _is_punct(cls[s[k]]):
            k += 1
        while k < n and (s[k] == 13 or s[k] == 10 or s[k] == 47):
            k += 1
        return k
    # c is \s here
    k = i
    last_newline = -1
    while k < n and cls[s[k]] & PT_SPACE:
        if s[k] == 13 or s[k] == 10:
            last_newline = k
        k += 1
    if last_newline >= 0:  # \s*[\r\n]+
        return last_newline + 1
    if k == n:  # \s+(?!\S) at the chunk end
        return n
    if k - i >= 2:  # \s+(?!\S): leave the last space for the next pretoken
        return k - 1
    return i + 1  # \s+ (k == i + 1); also the unreachable "no class" case keeps one code point


cdef inline Py_ssize_t _match_main(const char_t* s, const Tables* tb, Py_ssize_t i,
                                   Py_ssize_t n) noexcept nogil:
    """The end of the ``GPT4O_PATTERN`` match at ``i`` of the chunk ``[.., n)``."""
    cdef const uint8_t* cls = tb.cls
    cdef Py_UCS4 c = s[i]
    cdef uint8_t t = cls[c]
    cdef bint prefix = _is_prefix(c, t)
    cdef Py_ssize_t e
    # 1. P? U* W+ C?
    if prefix and i + 1 < n:
        e = _upper_star_lower_plus(s, cls, i + 1, n)
        if e >= 0:
            return _contraction(s, tb, e, n)
    if t & (PT_UPPER | PT_LOWER):
        e = _upper_star_lower_plus(s, cls, i, n)
        if e >= 0:
            return _contraction(s, tb, e, n)
    # 2. P? U+ W* C?
    if prefix and i + 1 < n and cls[s[i + 1]] & PT_UPPER:
        return _contraction(s, tb, _upper_plus_lower_star(s, cls, i + 1, n), n)
    if t & PT_UPPER:
        return _contraction(s, tb, _upper_plus_lower_star(s, cls, i, n), n)
    return _common_tail(s, cls, i, n)


cdef inline Py_ssize_t _match_specific(const char_t* s, const Tables* tb, Py_ssize_t i,
                                       Py_ssize_t n) noexcept nogil:
    """The end of the ``SCRIPT_SPECIFIC_PATTERN`` match at ``i`` of the chunk ``[.., n)``."""
    cdef const uint8_t* cls = tb.cls
    cdef Py_UCS4 c = s[i]
    cdef Py_ssize_t k = -1
    if c == 32 and i + 1 < n and cls[s[i + 1]] & PT_LETTER:  # ' ?\p{L}\p{M}*'
        k = i + 2
    elif cls[c] & PT_LETTER:
        k = i + 1
    if k >= 0:
        while k < n and cls[s[k]] & PT_MARK:
            k += 1
        return k
    return _common_tail(s, cls, i, n)


cdef Py_ssize_t _scan(const char_t* s, const Tables* tb, const int64_t* chunk_bounds,
                      const uint8_t* chunk_specific, Py_ssize_t n_chunks, int64_t* ends) noexcept nogil:
    """Write the end offset of every pretoken into ``ends``; return how many.

    ``chunk_bounds`` (``n_chunks + 1`` int64) are the chunk starts followed by the text length;
    ``chunk_specific[c]`` is 1 when chunk ``c`` uses ``SCRIPT_SPECIFIC_PATTERN``.  ``ends`` must
    hold one slot per code point.
    """
    cdef Py_ssize_t c, i, n, count = 0
    for c in range(n_chunks):
        i = chunk_bounds[c]
        n = chunk_bounds[c + 1]
        if chunk_specific[c]:
            while i < n:
                i = _match_specific(s, tb, i, n)
                ends[count] = i
                count += 1
        else:
            while i < n:
                i = _match_main(s, tb, i, n)
                ends[count] = i
                count += 1
    return count


cdef int _ascii_script(const uint8_t* scripts) noexcept nogil:
    """The one real script of the ASCII code points in ``scripts`` (Latin in Unicode's data), or -2 when there
    are several or none (then no ASCII block is passed over)."""
    cdef int c, sid, found = -2
    for c in range(128):
        sid = scripts[c]
        if sid >= FIRST_REAL:
            if found == -2:
                found = sid
            elif found != sid:
                return -2
    return found


cdef inline bint _ascii_block(const char_t* p) noexcept nogil:
    """Whether the 8 code units at ``p`` are all ASCII (read as 64-bit words, unaligned)."""
    cdef uint64_t w[4]
    if char_t is uint8_t:
        memcpy(w, p, 8)
        return (w[0] & 0x8080808080808080ULL) == 0
    elif char_t is uint16_t:
        memcpy(w, p, 16)
        return ((w[0] | w[1]) & 0xFF80FF80FF80FF80ULL) == 0
    else:
        memcpy(w, p, 32)
        return ((w[0] | w[1] | w[2] | w[3]) & 0xFFFFFF80FFFFFF80ULL) == 0


cdef Py_ssize_t _script_chunks(const char_t* s, Py_ssize_t length, const uint8_t* scripts,
                               const uint8_t* specific_by_script, Chunks* out) noexcept nogil:
    """Script chunking fused into the scanner: the rules of :mod:`fastsw.pretokenizers.chunking`, whose
    ``script_chunks`` the tests compare against (through the pretokens).

    Reads ``scripts`` (:func:`fastsw.pretokenizers._unicode.script_table`); writes the chunk starts then
    ``length`` into ``out.bounds`` and each chunk's pattern flag into ``out.specific``, growing
    them with ``realloc``; returns the number of chunks, or -1 when out of memory.
    """
    cdef Py_ssize_t i = 0, start = 0, last, n = 0
    cdef int cur = -1, sid
    # the real script of ASCII's letters; below, blocks of ASCII code points are passed over unread in a chunk
    # of that script, where none of them can start another chunk (not worth checking on a short text)
    cdef int ascii_script = _ascii_script(scripts) if length >= 64 else -2
    # Before the first real script nothing is cut: find it.
    while i < length:
        sid = scripts[s[i]]
        i += 1
        if sid >= FIRST_REAL:
            cur = sid
            break
    # The common path is one table read and one well-predicted branch per code point: only a change of
    # real script (rare) stops it. The cut goes after the chunk's last real or Inherited code point,
    # found then by looking back over the Common ones before the change (each looked at once: the look
    # stops at the latest real code point, at or after the chunk's start).
    while i < length:
        if cur == ascii_script:
            while i + 8 <= length and _ascii_block(s + i):
                i += 8
            if i == length:
                break
        sid = scripts[s[i]]
        if sid >= FIRST_REAL and sid != cur:
            last = i
            while last > start and scripts[s[last - 1]] < INHERITED:
                last -= 1
            if n + 2 > out.capacity and _grow(out) < 0:
                return -1
            out.bounds[n] = start
            out.specific[n] = specific_by_script[cur]
            n += 1
            start = last
            cur = sid
        i += 1
    if n + 2 > out.capacity and _grow(out) < 0:
        return -1
    out.bounds[n] = start
    out.specific[n] = specific_by_script[cur] if cur != -1 else 0
    n += 1
    out.bounds[n] = length
    return n


cdef struct Chunks:
    int64_t* bounds  # chunk starts, then the text length
    uint8_t* specific  # 1 when the chunk uses SCRIPT_SPECIFIC_PATTERN
    Py_ssize_t capacity


cdef int _grow(Chunks* out) noexcept nogil:
    cdef Py_ssize_t capacity = 2 * out.capacity + 16
    cdef int64_t* bounds = <int64_t*> realloc(out.bounds, capacity * sizeof(int64_t))
    if bounds == NULL:
        return -1
    out.bounds = bounds
    cdef uint8_t* specific = <uint8_t*> realloc(out.specific, capacity * sizeof(uint8_t))
    if specific == NULL:
        return -1
    out.specific = specific
    out.capacity = capacity
    return 0


cdef Py_ssize_t _chunk_and_scan(str text, const Tables* tb, const uint8_t* scripts,
                                const uint8_t* specific_by_script, int64_t* ends) except -2:
    """Script chunking then scanning (mode "script"); returns the number of pretokens."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text), n, count = 0
    cdef Chunks chunks
    chunks.bounds = NULL
    chunks.specific = NULL
    chunks.capacity = 0
    with nogil:
        if kind == PyUnicode_1BYTE_KIND:
            n = _script_chunks(<const uint8_t*> data, length, scripts, specific_by_script, &chunks)
            if n >= 0:
                count = _scan(<const uint8_t*> data, tb, chunks.bounds, chunks.specific, n, ends)
        elif kind == PyUnicode_2BYTE_KIND:
            n = _script_chunks(<const uint16_t*> data, length, scripts, specific_by_script, &chunks)
            if n >= 0:
                count = _scan(<const uint16_t*> data, tb, chunks.bounds, chunks.specific, n, ends)
        else:
            n = _script_chunks(<const uint32_t*> data, length, scripts, specific_by_script, &chunks)
            if n >= 0:
                count = _scan(<const uint32_t*> data, tb, chunks.bounds, chunks.specific, n, ends)
        free(chunks.bounds)
        free(chunks.specific)
    if n < 0:
        raise MemoryError()
    return count


def script_chunks(str text, const uint8_t[::1] scripts):
    """The chunks of the fused chunker as ``(start, end, script)``, for the tests that compare it with
    its pure-Python twin :func:`fastsw.pretokenizers.chunking.script_chunks_py` (the scanner itself never makes them).

    ``scripts`` is :func:`fastsw.pretokenizers._unicode.script_table`. The chunker records each chunk's entry of a
    per-script table; an identity table makes that entry the script id (0, never a real script, for the
    one chunk of a text without any; reported as -1 like the twin).
    """
    if scripts.shape[0] < 0x110000:
        raise ValueError(f"table has {scripts.shape[0]} entries; expected 0x110000 (use script_table())")
    cdef uint8_t identity[256]
    cdef int k
    for k in range(256):
        identity[k] = k
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text), n, c
    cdef Chunks chunks
    chunks.bounds = NULL
    chunks.specific = NULL
    chunks.capacity = 0
    if length == 0:
        return []
    if kind == PyUnicode_1BYTE_KIND:
        n = _script_chunks(<const uint8_t*> data, length, &scripts[0], identity, &chunks)
    elif kind == PyUnicode_2BYTE_KIND:
        n = _script_chunks(<const uint16_t*> data, length, &scripts[0], identity, &chunks)
    else:
        n = _script_chunks(<const uint32_t*> data, length, &scripts[0], identity, &chunks)
    try:
        if n < 0:
            raise MemoryError()
        return [(chunks.bounds[c], chunks.bounds[c + 1], chunks.specific[c] if chunks.specific[c] else -1)
                for c in range(n)]
    finally:
        free(chunks.bounds)
        free(chunks.specific)

cdef Py_ssize_t _dispatch(str text, const Tables* tb, const int64_t* bounds, const uint8_t* specific,
                          Py_ssize_t n_chunks, int64_t* ends) noexcept:
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    with nogil:
        if kind == PyUnicode_1BYTE_KIND:
            return _scan(<const uint8_t*> data, tb, bounds, specific, n_chunks, ends)
        elif kind == PyUnicode_2BYTE_KIND:
            return _scan(<const uint16_t*> data, tb, bounds, specific, n_chunks, ends)
        else:
            return _scan(<const uint32_t*> data, tb, bounds, specific, n_chunks, ends)


cdef enum:
    CACHE_SIZE = 4096  # pretoken string cache slots (a power of two)
    CACHE_MAX_LEN = 16  # longer pretokens are not cached


cdef class Scanner:
    """The compiled pre-tokenizer with its tables; one per ``Pretokenizer``.

    ``Scanner(table, fold_cps, fold_letters, scripts, specific_by_script, script_chunking)``:
    :func:`fastsw.pretokenizers._unicode.pretoken_table`, :func:`fastsw.pretokenizers._unicode.contraction_folds`,
    :func:`fastsw.pretokenizers._unicode.script_table`, a ``uint8`` array of 256 flags, 1 for the script ids
    whose chunks use ``SCRIPT_SPECIFIC_PATTERN`` (a text without a real script uses
    ``GPT4O_PATTERN``), and whether to chunk by script (mode "script") or match the whole text
    with ``GPT4O_PATTERN`` (mode "simple"); ``pattern`` 1, 2 or 3 matches the whole text with cl100k_base's
    pattern, its older spelling (Llama 3's) or GPT-2's instead (``_cl100k.pxi``).

    Design note (the cache of recent pretokens): see docs/internals.md, section "Pre-tokenization".
    """
    cdef Tables tb
    cdef object _arrays  # keeps the table buffers alive
    cdef uint8_t specific_by_script[256]
    cdef const uint8_t* scripts
    cdef bint script_chunking
    cdef int pattern  # 0: GPT4O_PATTERN (and script chunks); 1 CL100K_PATTERN, 2 CL100K_LEGACY_PATTERN, 3 GPT2_PATTERN
    # (_cl100k.pxi, whole text)
    cdef PyObject* cache[CACHE_SIZE]

    def __cinit__(self, const uint8_t[::1] table, const uint32_t[::1] fold_cps,
                  const uint8_t[::1] fold_letters, const uint8_t[::1] scripts,
                  const uint8_t[::1] specific_by_script, bint script_chunking, int pattern=0):
        cdef Py_ssize_t k
        if pattern not in (0, 1, 2, 3) or (pattern != 0 and script_chunking):
            raise ValueError("pattern must be 0 (GPT-4o), or without script chunking 1 (cl100k_base), 2 (cl100k_base's "
                             "older spelling) or 3 (GPT-2)")
        self.pattern = pattern
        memset(self.cache, 0, sizeof(self.cache))
        if table.shape[0] < N_CODE_POINTS:
            raise ValueError(f"table has {table.shape[0]} entries; expected 0x110000 (use pretoken_table())")
        if fold_cps.shape[0] != fold_letters.shape[0]:
            raise ValueError("fold_cps and fold_letters must have the same length (use contraction_folds())")
        if scripts.shape[0] < N_CODE_POINTS:
            raise ValueError(f"scripts has {scripts.shape[0]} entries; expected 0x110000 (use script_table())")
        if specific_by_script.shape[0] != 256:
            raise ValueError("specific_by_script must have 256 entries, one per script id")
        self._arrays = (table, fold_cps, fold_letters, scripts)
        self.scripts = &scripts[0]
        self.script_chunking = script_chunking
        self.tb.cls = &table[0]
        self.tb.n_folds = fold_cps.shape[0]
        self.tb.fold_cps = &fold_cps[0] if self.tb.n_folds else NULL
        self.tb.fold_letters = &fold_letters[0] if self.tb.n_folds else NULL
        for k in range(256):
            self.specific_by_script[k] = specific_by_script[k]

    def __dealloc__(self):
        cdef Py_ssize_t k
        for k in range(CACHE_SIZE):
            Py_XDECREF(self.cache[k])
            self.cache[k] = NULL

    cdef Py_ssize_t _ends(self, str text, int64_t** ends_out) except -1:
        """Scan ``text``; ``*ends_out`` receives a ``PyMem_Malloc``ed array the caller frees."""
        cdef Py_ssize_t length = len(text), count
        cdef int64_t* ends = NULL
        cdef int64_t whole[2]
        cdef uint8_t main_only = 0
        ends_out[0] = NULL
        if length == 0:
            return 0
        ends = <int64_t*> PyMem_Malloc(length * sizeof(int64_t))
        if ends == NULL:
            raise MemoryError()
        if self.pattern != 0:
            count = _dispatch_cl100k(text, &self.tb, ends, self.pattern)
        elif not self.script_chunking:
            whole[0] = 0
            whole[1] = length
            count = _dispatch(text, &self.tb, whole, &main_only, 1, ends)
        else:
            try:
                count = _chunk_and_scan(text, &self.tb, self.scripts, self.specific_by_script, ends)
            except MemoryError:
                PyMem_Free(ends)
                raise
        ends_out[0] = ends
        return count

    def pretoken_ends(self, str text):
        """The end offset (code points) of every pretoken of ``text``: ``int64`` numpy array."""
        cdef int64_t* ends = NULL
        cdef Py_ssize_t count = self._ends(text, &ends), k
        out = np.empty(count, dtype=np.int64)
        cdef int64_t[::1] view = out
        for k in range(count):
            view[k] = ends[k]
        PyMem_Free(ends)
        return out

    def pretokenize(self, str text):
        """The pretokens of ``text``: a list of ``str`` that concatenate to ``text``."""
        cdef int64_t* ends = NULL
        cdef Py_ssize_t count = self._ends(text, &ends)
        cdef int kind = PyUnicode_KIND(text)
        cdef void* data = PyUnicode_DATA(text)
        cdef list out
        try:
            out = PyList_New(count)
            if kind == PyUnicode_1BYTE_KIND:
                self._fill(out, text, <const uint8_t*> data, ends, count)
            elif kind == PyUnicode_2BYTE_KIND:
                self._fill(out, text, <const uint16_t*> data, ends, count)
            else:
                self._fill(out, text, <const uint32_t*> data, ends, count)
        finally:
            PyMem_Free(ends)
        return out

    cdef int _fill(self, list out, str text, const char_t* s, const int64_t* ends,
                   Py_ssize_t count) except -1:
        cdef Py_ssize_t k, m, start = 0, end, length
        cdef uint32_t h
        cdef PyObject* hit
        cdef int hit_kind
        cdef void* hit_data
        cdef bint same
        for k in range(count):
            end = ends[k]
            length = end - start
            piece = None
            if length <= CACHE_MAX_LEN:
                h = 2166136261u ^ <uint32_t> length  # FNV-1a over the code points
                for m in range(start, end):
                    h = (h ^ <uint32_t> s[m]) * 16777619u
                h = (h ^ (h >> 15)) & (CACHE_SIZE - 1)
                hit = self.cache[h]
                if hit != NULL and PyUnicode_GET_LENGTH(<object> hit) == length:
                    hit_kind = PyUnicode_KIND(<object> hit)
                    hit_data = PyUnicode_DATA(<object> hit)
                    same = True
                    for m in range(length):
                        if PyUnicode_READ(hit_kind, hit_data, m) != s[start + m]:
                            same = False
                            break
                    if same:
                        piece = <object> hit
                if piece is None:
                    piece = PyUnicode_Substring(text, start, end)
                    Py_XDECREF(self.cache[h])
                    Py_INCREF(piece)
                    self.cache[h] = <PyObject*> piece
            else:
                piece = PyUnicode_Substring(text, start, end)
            Py_INCREF(piece)
            PyList_SET_ITEM(out, k, piece)
            start = end
        return 0


include "_counter.pxi"
include "_cl100k.pxi"
include "_boundary.pxi"
include "_slices.pxi"
include "_one_text.pxi"
include "_rank_splits.pxi"


def ids_to_list(const int32_t[::1] ids, list objects):
    """The token ids ``ids`` (int32) as a list of the shared ``int`` objects ``objects[id]`` (the fast encoder's
    output as Python ints: one reference copy per token, no new ``int``; ``fastsw.encoding.encode_fast.FastEncoder.to_list``).
    Its reference is ``ids.tolist()``; an id outside ``objects`` raises IndexError."""
    return _id_list(&ids[0] if ids.shape[0] else NULL, ids.shape[0], objects)


def ids_to_lists(const int32_t[::1] ids, const int64_t[::1] offsets, list objects):
    """``[ids[offsets[d]:offsets[d + 1]].tolist() for d ...]`` from the shared ``int`` objects ``objects[id]``, in one
    pass (a batch's lists, ``fastsw.encoding.encode_fast.FastEncoder.encode_lists``); reference as in :func:`ids_to_list`.
    Offsets must be non-decreasing within ``0 .. len(ids)``."""
    cdef Py_ssize_t n = ids.shape[0], m = len(objects), n_docs = offsets.shape[0] - 1, k, d, a, b
    cdef PyObject* p
    cdef list inner
    for k in range(n):
        if ids[k] < 0 or ids[k] >= m:
            raise IndexError(f"token id {ids[k]} is outside the vocabulary (0..{m - 1})")
    if n_docs < 0:
        raise ValueError("offsets must have at least one entry")
    for d in range(n_docs):
        if offsets[d] < 0 or offsets[d] > offsets[d + 1] or offsets[d + 1] > n:
            raise ValueError(f"offsets must be non-decreasing within 0..{n}")
    cdef list out = PyList_New(n_docs)
    for d in range(n_docs):
        a = offsets[d]
        b = offsets[d + 1]
        inner = PyList_New(b - a)
        for k in range(a, b):
            p = PyList_GET_ITEM(objects, ids[k])
            Py_INCREF(<object>p)
            PyList_SET_ITEM(inner, k - a, <object>p)
        Py_INCREF(inner)
        PyList_SET_ITEM(out, d, inner)
    return out
