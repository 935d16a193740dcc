# Included by _pretok.pyx: the compiled twin of fastsw.boundary.marked_pretokens (the marker schemes' groups,
# spans and marking, SPEC section 9). The reference is the plain-Python rule in fastsw/boundary.py; the class
# table (cls: uint16 class id per code point, kind: uint8 per class id) is the same object for both, and the caps
# decision calls the reference's own caps_code (only for word spans that do not start with an ASCII lowercase
# letter), so the rule is written once. One pass builds the groups into C arrays, a second the spans, a third
# the pretoken strings.

cdef enum:
    BK_OTHER = 0
    BK_WORD = 1
    BK_DIGIT = 2
    BK_PUNCT = 3
    BK_INHERITED = 4
    BK_UNLISTED = 5
    BK_SPACE = 6   # span kind only: a group that is exactly one space


def boundary_pretokenize(str text, const uint16_t[::1] cls, const uint8_t[::1] kind, bint punct, bint digit,
                         bint shift, bint caps, bint single_char_shift, int min_caps_length, bint drop_unlisted,
                         str marker, str shift_code, str caps_code_char, object caps_fn):
    """The pretokens of ``text`` under a marker scheme (atoms given as the one-character strs ``marker``,
    ``shift_code``, ``caps_code_char``); ``caps_fn`` is :func:`fastsw.boundary.caps_code`. Same result as
    :func:`fastsw.boundary.marked_pretokens`."""
    cdef int tkind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, g, ng = 0, ns = 0, s, k
    cdef Py_UCS4 ch
    cdef uint16_t c, cur
    cdef bint any_unlisted = False
    for i in range(n):
        ch = PyUnicode_READ(tkind, data, i)
        if 0xD800 <= ch <= 0xDFFF:
            from .alphabet import check_utf8
            check_utf8(text)
        if drop_unlisted and kind[cls[ch]] == BK_UNLISTED:
            any_unlisted = True
    if any_unlisted:
        text = "".join([x for x in text if kind[cls[ord(x)]] != BK_UNLISTED])
        tkind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        n = PyUnicode_GET_LENGTH(text)
    if n == 0:
        return []
    cdef Py_ssize_t* gstart = <Py_ssize_t*> PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
    cdef uint16_t* gclass = <uint16_t*> PyMem_Malloc((n + 1) * sizeof(uint16_t))
    # spans: kind, first group, last group (inclusive)
    cdef uint8_t* skind = <uint8_t*> PyMem_Malloc((n + 1) * sizeof(uint8_t))
    cdef Py_ssize_t* sfirst = <Py_ssize_t*> PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* slast = <Py_ssize_t*> PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
    cdef uint8_t* elided = <uint8_t*> PyMem_Malloc((n + 1) * sizeof(uint8_t))
    if gstart == NULL or gclass == NULL or skind == NULL or sfirst == NULL or slast == NULL or elided == NULL:
        PyMem_Free(gstart); PyMem_Free(gclass); PyMem_Free(skind); PyMem_Free(sfirst); PyMem_Free(slast)
        PyMem_Free(elided)
        raise MemoryError()
    cdef uint8_t gk, sk
    cdef bint marked_prev, marked_next
    cdef list out = []
    cdef str t, code, low, piece, left, right
    cdef Py_ssize_t pos, e
    try:
        # 1. groups
        cur = 0
        for i in range(n):
            ch = PyUnicode_READ(tkind, data, i)
            c = cls[ch]
            if ng > 0:
                if c == cur:
                    continue
                if kind[c] == BK_INHERITED and not (i - gstart[ng - 1] == 1
                                                    and PyUnicode_READ(tkind, data, i - 1) == 0x20):
                    continue
            gstart[ng] = i
            gclass[ng] = c
            ng += 1
            cur = c
        gstart[ng] = n
        # 2. spans
        for g in range(ng):
            gk = kind[gclass[g]]
            if gk == BK_WORD:
                if ns > 0 and skind[ns - 1] == BK_WORD:
                    slast[ns - 1] = g
                    continue
                sk = BK_WORD
            elif gstart[g + 1] - gstart[g] == 1 and PyUnicode_READ(tkind, data, gstart[g]) == 0x20:
                sk = BK_SPACE
            elif gk == BK_DIGIT or gk == BK_PUNCT:
                sk = gk
            else:
                sk = BK_OTHER
            skind[ns] = sk
            sfirst[ns] = g
            slast[ns] = g
            ns += 1
        # 3. elided spaces
        for s in range(ns):
            elided[s] = 0
            if skind[s] == BK_SPACE and 0 < s < ns - 1:
                sk = skind[s - 1]
                marked_prev = sk == BK_WORD or (sk == BK_PUNCT and punct) or (sk == BK_DIGIT and digit)
                sk = skind[s + 1]
                marked_next = sk == BK_WORD or (sk == BK_PUNCT and punct) or (sk == BK_DIGIT and digit)
                elided[s] = marked_prev and marked_next
        # 4. pretokens
        for s in range(ns):
            sk = skind[s]
            if sk == BK_SPACE:
                if not elided[s]:
                    out.append(" ")
                continue
            if sk == BK_WORD:
                code = ""
                if shift or caps:
                    ch = PyUnicode_READ(tkind, data, gstart[sfirst[s]])
                    if not (ch < 128 and not (0x41 <= ch <= 0x5A)):
                        t = PyUnicode_Substring(text, gstart[sfirst[s]], gstart[slast[s] + 1])
                        code = caps_fn(t, shift, caps, single_char_shift, min_caps_length)
                if code:
                    low = t.lower()
                    pos = gstart[sfirst[s]]
                    for g in range(sfirst[s], slast[s] + 1):
                        piece = low[gstart[g] - pos:gstart[g + 1] - pos]
                        if g == sfirst[s]:
                            piece = code + marker + piece
                        if g == slast[s]:
                            piece = piece + marker
                        out.append(piece)
                elif sfirst[s] == slast[s]:
                    out.append(marker + PyUnicode_Substring(text, gstart[sfirst[s]], gstart[sfirst[s] + 1]) + marker)
                else:
                    for g in range(sfirst[s], slast[s] + 1):
                        piece = PyUnicode_Substring(text, gstart[g], gstart[g + 1])
                        if g == sfirst[s]:
                            piece = marker + piece
                        if g == slast[s]:
                            piece = piece + marker
                        out.append(piece)
                continue
            piece = PyUnicode_Substring(text, gstart[sfirst[s]], gstart[sfirst[s] + 1])
            if (sk == BK_PUNCT and punct) or (sk == BK_DIGIT and digit):
                if s > 0 and elided[s - 1]:
                    piece = marker + piece
                if s < ns - 1 and elided[s + 1]:
                    piece = piece + marker
            out.append(piece)
        return out
    finally:
        PyMem_Free(gstart); PyMem_Free(gclass); PyMem_Free(skind); PyMem_Free(sfirst); PyMem_Free(slast)
        PyMem_Free(elided)
