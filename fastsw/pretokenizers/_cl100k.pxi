# Included by _pretok.pyx: the compiled scanners of tiktoken's other patterns, whole text only (``simple`` mode, no
# script chunks): cl100k_base's (``CL100K_PATTERN``, ``Scanner`` pattern 1), its older spelling, which Llama 3's
# tokenizer uses and which cuts whitespace before the text's end otherwise (``CL100K_LEGACY_PATTERN``, pattern 2),
# and GPT-2's (r50k_base, p50k_base: ``GPT2_PATTERN``, pattern 3). Their reference is ``regex`` on the same
# pattern (``Pretokenizer.pretokenize_reference``); the tests compare the two on every corpus language and on
# Hypothesis text, and the ids with tiktoken's. Which pattern a ``Pretokenizer`` runs here is decided by meaning,
# not by spelling (``fastsw.pretokenizers.pretokenize.compiled_pattern``).
#
# cl100k_base's pattern:
#
# How each alternative is reproduced at a position ``i`` of the text ``[i, n)`` (same class bits as the
# GPT-4o scanner: L, N, \s, and the (?i) contraction folds; note that \p{M} is not a letter here):
#
# 1. ``'(?i:[sdmt]|ll|ve|re)`` -- an apostrophe and a contraction (the letters fold as in GPT-4o's).
# 2. ``[^\r\n\p{L}\p{N}]?+\p{L}++`` -- the possessive ``?+`` takes ``c[i]`` when it is in the prefix
#    class and never gives it back, so then a letter must follow at ``i + 1``; a letter at ``i`` (not in
#    the prefix class) starts the run itself. The letter run is maximal.
# 3. ``\p{N}{1,3}+``.
# 4. `` ?[^\s\p{L}\p{N}]++[\r\n]*+`` -- as GPT-4o's fourth alternative without ``/`` in the tail.
# 5. ``\s++$`` -- a whitespace run that reaches the end of the text (``regex``'s ``$`` also matches
#    before a final ``\n``, but a maximal whitespace run never stops just before one).
# 6. ``\s*[\r\n]`` -- the whitespace run up to and including its last ``\r``/``\n`` (backtracking).
# 7. ``\s+(?!\S)`` -- the run but its last code point, when that leaves at least one.
# 8. ``\s`` -- one whitespace code point.
#
# Every code point is L, N, \s or in the class of 4 (marks included), so the matches tile the text.
#
# The older spelling, ``(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
# ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+``, matches as 1 to 4 above (the greedy quantifiers
# never give back here: nothing after them in their alternative could match what they give back) but has no
# ``\s++$``: a whitespace run holding a newline ends after its last ``\r``/``\n`` even at the text's end
# (``"a\n  "`` is ``a``, ``\n``, ``  `` there, ``a``, ``\n  `` with the current spelling). That is the
# whitespace rule of GPT-4o's pattern (``_common_tail``); ``legacy`` selects it.
#
# GPT-2's pattern, ``'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+``
# (tiktoken spells it ``'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s``, the
# same pretokens), at ``i`` (``_match_gpt2``):
#
# 1. the contractions, case-sensitive, ASCII only.
# 2.-4. an optional space, then a maximal run of letters, of numbers (no limit of 3), or of the class
#    ``[^\s\p{L}\p{N}]`` (no newline tail).
# 5. a whitespace run: to the text's end when it reaches it, else all of it but its last code point when that
#    leaves one (the space then starts the next word), else the one code point.


cdef inline Py_ssize_t _match_cl100k(const char_t* s, const Tables* tb, Py_ssize_t i,
                                     Py_ssize_t n, bint legacy) noexcept nogil:
    """The end of the ``CL100K_PATTERN`` match (``CL100K_LEGACY_PATTERN`` if ``legacy``) at ``i`` of the text
    ``[.., n)``."""
    cdef const uint8_t* cls = tb.cls
    cdef Py_UCS4 c = s[i]
    cdef uint8_t t = cls[c]
    cdef uint8_t a, b
    cdef Py_ssize_t k, last_newline
    # 1. '(?i:[sdmt]|ll|ve|re)
    if c == 39 and i + 1 < n:
        a = _fold(tb, s[i + 1])
        if a == 115 or a == 100 or a == 109 or a == 116:  # s d m t
            return i + 2
        if a != 0 and i + 2 < n:
            b = _fold(tb, s[i + 2])
            if (a == 108 and b == 108) or (a == 118 and b == 101) or (a == 114 and b == 101):  # ll ve re
                return i + 3
    # 2. [^\r\n\p{L}\p{N}]?+\p{L}++
    k = -1
    if t & PT_LETTER:
        k = i + 1
    elif _is_prefix(c, t) and i + 1 < n and cls[s[i + 1]] & PT_LETTER:
        k = i + 2
    if k >= 0:
        while k < n and cls[s[k]] & PT_LETTER:
            k += 1
        return k
    # 3. \p{N}{1,3}+
    if t & PT_NUMBER:
        k = i + 1
        while k < n and k < i + 3 and cls[s[k]] & PT_NUMBER:
            k += 1
        return k
    # 4. ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
    if c == 32 and i + 1 < n and _is_punct(cls[s[i + 1]]):
        k = i + 2
    elif _is_punct(t):
        k = i + 1
    if k >= 0:
        while k < n and _is_punct(cls[s[k]]):
            k += 1
        while k < n and (s[k] == 13 or s[k] == 10):
            k += 1
        return k
    # c is \s here
    k = i
    last_newline = -1
    while k < n and cls[s[k]] & PT_SPACE:
        if s[k] == 13 or s[k] == 10:
            last_newline = k
        k += 1
    if k == n and not legacy:  # 5. \s++$
        return n
    if last_newline >= 0:  # 6. \s*[\r\n]
        return last_newline + 1
    if k == n:  # legacy: \s+(?!\S) to the end
        return n
    if k - i >= 2:  # 7. \s+(?!\S)
        return k - 1
    return i + 1  # 8. \s


cdef inline Py_ssize_t _match_gpt2(const char_t* s, const Tables* tb, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """The end of the ``GPT2_PATTERN`` match at ``i`` of the text ``[.., n)``."""
    cdef const uint8_t* cls = tb.cls
    cdef Py_UCS4 c = s[i], a, b
    cdef uint8_t t = cls[c], want
    cdef Py_ssize_t k
    # 1. 's|'t|'re|'ve|'m|'ll|'d
    if c == 39 and i + 1 < n:
        a = s[i + 1]
        if a == 115 or a == 116 or a == 109 or a == 100:  # s t m d
            return i + 2
        if i + 2 < n:
            b = s[i + 2]
            if ((a == 114 or a == 118) and b == 101) or (a == 108 and b == 108):  # re ve ll
                return i + 3
    # 2.-4. ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': the class of c, or of the code point after a space
    if c == 32 and i + 1 < n and not (cls[s[i + 1]] & PT_SPACE):
        k = i + 2
        t = cls[s[i + 1]]
    elif not (t & PT_SPACE):
        k = i + 1
    else:
        k = -1
    if k >= 0:
        if t & PT_LETTER:
            while k < n and cls[s[k]] & PT_LETTER:
                k += 1
        elif t & PT_NUMBER:
            while k < n and cls[s[k]] & PT_NUMBER:
                k += 1
        else:
            while k < n and _is_punct(cls[s[k]]):
                k += 1
        return k
    # 5. c is \s: \s+(?!\S), else \s+
    k = i + 1
    while k < n and cls[s[k]] & PT_SPACE:
        k += 1
    if k == n:
        return n
    if k - i >= 2:
        return k - 1
    return k


cdef Py_ssize_t _scan_cl100k(const char_t* s, const Tables* tb, Py_ssize_t n, int64_t* ends,
                             int pattern) noexcept nogil:
    """Write the end offset of every pretoken of ``s[0:n]`` into ``ends`` (one slot per code point) for the
    ``Scanner`` pattern ``pattern`` (1 cl100k_base, 2 its older spelling, 3 GPT-2); return how many."""
    cdef Py_ssize_t i = 0, count = 0
    if pattern == 3:
        while i < n:
            i = _match_gpt2(s, tb, i, n)
            ends[count] = i
            count += 1
    elif pattern == 2:
        while i < n:
            i = _match_cl100k(s, tb, i, n, True)
            ends[count] = i
            count += 1
    else:
        while i < n:
            i = _match_cl100k(s, tb, i, n, False)
            ends[count] = i
            count += 1
    return count


cdef Py_ssize_t _dispatch_cl100k(str text, const Tables* tb, int64_t* ends, int pattern) noexcept:
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    with nogil:
        if kind == PyUnicode_1BYTE_KIND:
            return _scan_cl100k(<const uint8_t*> data, tb, n, ends, pattern)
        elif kind == PyUnicode_2BYTE_KIND:
            return _scan_cl100k(<const uint16_t*> data, tb, n, ends, pattern)
        else:
            return _scan_cl100k(<const uint32_t*> data, tb, n, ends, pattern)
