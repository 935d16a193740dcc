# Included by _pretok.pyx: the compiled twin of fastsw.boundary.marked_pretokens (the marker schemes' groups,
# spans and marking, SPEC section 9). The reference is the plain-Python rule in fastsw/boundary.py; the class
# table (cls: uint16 class id per code point, kind: uint8 per class id) is the same object for both, and the caps
# decision calls the reference's own caps_code (only for word spans that do not start with an ASCII lowercase
# letter), so the rule is written once. One pass builds the groups into C arrays, a second the spans, a third
# the pretoken strings.

from cpython.unicode cimport PyUnicode_4BYTE_KIND

cdef enum:
    BK_OTHER = 0
    BK_WORD = 1
    BK_DIGIT = 2
    BK_PUNCT = 3
    BK_INHERITED = 4
    BK_UNLISTED = 5
    BK_SPACE = 6   # span kind only: a group that is exactly one space


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void PyUnicode_WRITE(int kind, void* data, Py_ssize_t index, Py_UCS4 value)


cdef str _marked_piece(int tkind, void* data, Py_ssize_t s, Py_ssize_t e, Py_UCS4 code, bint left, bint right,
                       Py_UCS4 marker, bint ascii_lower=False):
    """``code`` (if not 0) + ``marker`` (if ``left``) + text[s:e] + ``marker`` (if ``right``) as one new str,
    built in place (one allocation instead of three concatenations). The atoms are lone surrogates, so the
    string's maximum character is at least U+D800: UCS2, or UCS4 when the piece has an astral character (a str
    must use the smallest kind that holds its characters). ``ascii_lower``: the piece is ASCII letters, written
    lowercased (what ``str.lower`` does to them)."""
    cdef Py_ssize_t i, n = (e - s) + (code != 0) + left + right, k = 0
    cdef Py_UCS4 ch, top = 0xDFFF
    if tkind == PyUnicode_4BYTE_KIND:
        for i in range(s, e):
            if PyUnicode_READ(tkind, data, i) > 0xFFFF:
                top = 0x10FFFF
                break
    cdef object out = PyUnicode_New(n, top)
    cdef int okind = PyUnicode_KIND(out)
    cdef void* odata = PyUnicode_DATA(out)
    if code != 0:
        PyUnicode_WRITE(okind, odata, k, code)
        k += 1
    if left:
        PyUnicode_WRITE(okind, odata, k, marker)
        k += 1
    cdef uint32_t v
    for i in range(s, e):
        v = PyUnicode_READ(tkind, data, i)
        if ascii_lower and 0x41 <= v <= 0x5A:
            v = v + 0x20
        PyUnicode_WRITE(okind, odata, k, v)
        k += 1
    if right:
        PyUnicode_WRITE(okind, odata, k, marker)
    return <str> out


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
    cdef bint marked_prev, marked_next, left_mark, right_mark, ascii_span
    cdef Py_UCS4 mark = ord(marker), code_ch
    cdef Py_ssize_t n_upper, n_lower, length
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
                        # an ASCII span (letters only: a word span's ASCII characters are Latin letters) is
                        # decided here with the same rule as caps_code; any other span asks caps_code itself
                        n_upper = n_lower = 0
                        ascii_span = True
                        for i in range(gstart[sfirst[s]], gstart[slast[s] + 1]):
                            ch = PyUnicode_READ(tkind, data, i)
                            if ch >= 128:
                                ascii_span = False
                                break
                            if ch <= 0x5A:
                                n_upper += 1
                            else:
                                n_lower += 1
                        if ascii_span:
                            length = n_upper + n_lower
                            if (shift and (length >= 2 or single_char_shift) and n_upper == 1
                                    and PyUnicode_READ(tkind, data, gstart[sfirst[s]]) <= 0x5A):
                                code_ch = ord(shift_code)
                            elif caps and length >= min_caps_length and n_lower == 0:
                                code_ch = ord(caps_code_char)
                            else:
                                code_ch = 0
                            if code_ch:
                                for g in range(sfirst[s], slast[s] + 1):
                                    out.append(_marked_piece(tkind, data, gstart[g], gstart[g + 1],
                                                             code_ch if g == sfirst[s] else 0, g == sfirst[s],
                                                             g == slast[s], mark, True))
                                continue
                        else:
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
                else:
                    for g in range(sfirst[s], slast[s] + 1):
                        if g == sfirst[s] or g == slast[s]:
                            out.append(_marked_piece(tkind, data, gstart[g], gstart[g + 1], 0, g == sfirst[s],
                                                     g == slast[s], mark))
                        else:
                            out.append(PyUnicode_Substring(text, gstart[g], gstart[g + 1]))
                continue
            left_mark = ((sk == BK_PUNCT and punct) or (sk == BK_DIGIT and digit)) and s > 0 and elided[s - 1]
            right_mark = ((sk == BK_PUNCT and punct) or (sk == BK_DIGIT and digit)) and s < ns - 1 and elided[s + 1]
            if left_mark or right_mark:
                out.append(_marked_piece(tkind, data, gstart[sfirst[s]], gstart[sfirst[s] + 1], 0, left_mark,
                                         right_mark, mark))
            else:
                out.append(PyUnicode_Substring(text, gstart[sfirst[s]], gstart[sfirst[s] + 1]))
        return out
    finally:
        PyMem_Free(gstart); PyMem_Free(gclass); PyMem_Free(skind); PyMem_Free(sfirst); PyMem_Free(slast)
        PyMem_Free(elided)


from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE


def count_pieces(list pieces, dict index, list pretokens, list counts, list letter, object has_letter,
                 bint collect_runs, dict runs, str marker="", str skipped=""):
    """The compiled twin of the loop of ``fastsw.counting.CountTable.add`` over one document's ``pieces``: the
    same updates of ``index`` (piece -> its number), ``pretokens``, ``counts`` (Python ints), ``letter``
    (``has_letter(piece)`` for each new piece) and, with ``collect_runs``, ``runs`` (each maximal run of >= 2
    letter-containing pieces, as a tuple of numbers -> count). Used for pre-tokenizers whose pieces are not
    substrings of the text (the marker schemes), where the default patterns' counter does not apply."""
    cdef Py_ssize_t k, n = PyList_GET_SIZE(pieces), i, j, plen
    cdef object piece, key, prev = None
    cdef PyObject* found
    cdef list run = []
    cdef bint breaks = len(marker) == 1, cut
    cdef Py_UCS4 mark = ord(marker) if breaks else 0, ch
    for k in range(n):
        piece = <object> PyList_GET_ITEM(pieces, k)
        found = PyDict_GetItem(index, piece)
        if found == NULL:
            i = len(pretokens)
            PyDict_SetItem(index, piece, i)
            pretokens.append(piece)
            counts.append(1)
            letter.append(bool(has_letter(piece)))
        else:
            i = <Py_ssize_t> (<object> found)
            counts[i] = <object> PyList_GET_ITEM(counts, i) + 1
        if not collect_runs:
            continue
        cut = False
        if breaks and prev is not None and PyUnicode_READ(PyUnicode_KIND(prev), PyUnicode_DATA(prev),
                                                          PyUnicode_GET_LENGTH(prev) - 1) == mark:
            plen = PyUnicode_GET_LENGTH(piece)
            j = 0
            while j < plen:
                ch = PyUnicode_READ(PyUnicode_KIND(piece), PyUnicode_DATA(piece), j)
                if ch == mark:
                    cut = True
                    break
                if ch not in skipped:
                    break
                j += 1
        prev = piece
        if <object> PyList_GET_ITEM(letter, i) and not (cut and len(run) > 0):
            run.append(i)
        else:
            if len(run) >= 2:
                key = tuple(run)
                runs[key] = runs.get(key, 0) + 1
            run = [i] if <object> PyList_GET_ITEM(letter, i) else []
    if len(run) >= 2:
        key = tuple(run)
        runs[key] = runs.get(key, 0) + 1
