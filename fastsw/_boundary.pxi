# Included by _pretok.pyx: the compiled twin of fastsw.boundary.marked_pretokens (the marker schemes' groups,
# spans and marking, SPEC section 9) and of the counting loop over its pieces. The reference is the plain-Python
# rule in fastsw/boundary.py (and fastsw.counting.CountTable.add); the class table (cls: uint16 class id per code
# point, kind: uint8 per class id) is the same object for both. The caps decision of a span that is not all ASCII
# calls the reference's own caps_code; an all-ASCII span is decided here by the same rule (tests compare both).
#
# _segment does the work once: groups, spans and marking, written as piece *descriptors* (start, end, caps code,
# markers, lowercase) into a C buffer -- no str is made. boundary_pretokenize turns them into strs;
# MarkedCounter counts them straight from the descriptors (a hash of the piece's characters, an open-addressing
# table of piece numbers, a str made only for a piece seen for the first time), like the default patterns' Counter.

from cpython.unicode cimport PyUnicode_4BYTE_KIND, Py_UNICODE_ISLOWER
from cpython.list cimport PyList_GET_ITEM
from cpython.mem cimport PyMem_Realloc
from libc.stdint cimport uint64_t

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


cdef struct PieceDesc:
    Py_ssize_t start, end   # characters [start, end) of the (filtered) text; for obj >= 0: unused
    Py_ssize_t obj          # >= 0: the piece is objs[obj] (a lowercased non-ASCII caps span); else -1
    uint32_t code           # the caps code before the opening marker, or 0
    uint8_t left, right     # a marker before / after the characters
    uint8_t lower           # ASCII letters written lowercased


cdef class _Scheme:
    """The scheme's switches and tables, and the scratch buffers of one segmentation (reused across documents)."""
    cdef const uint16_t[::1] cls
    cdef const uint8_t[::1] kind
    cdef bint punct, digit, shift, caps, single_char_shift, drop_unlisted
    cdef int min_caps_length
    cdef Py_UCS4 mark, shift_ch, caps_ch
    cdef object caps_fn
    cdef Py_ssize_t cap
    cdef Py_ssize_t* gstart
    cdef uint16_t* gclass
    cdef uint8_t* skind
    cdef Py_ssize_t* sfirst
    cdef Py_ssize_t* slast
    cdef uint8_t* elided
    cdef PieceDesc* pieces
    cdef Py_ssize_t n_pieces
    cdef list objs
    cdef str text          # the text the descriptors refer to (after drop_unlisted)

    def __cinit__(self, const uint16_t[::1] cls, const uint8_t[::1] kind, bint punct, bint digit, bint shift,
                  bint caps, bint single_char_shift, int min_caps_length, bint drop_unlisted, str marker,
                  str shift_code, str caps_code_char, object caps_fn):
        self.cls, self.kind = cls, kind
        self.punct, self.digit, self.shift, self.caps = punct, digit, shift, caps
        self.single_char_shift, self.min_caps_length, self.drop_unlisted = single_char_shift, min_caps_length, \
            drop_unlisted
        self.mark, self.shift_ch, self.caps_ch = ord(marker), ord(shift_code), ord(caps_code_char)
        self.caps_fn = caps_fn
        self.cap = 0
        self.objs = []

    def __dealloc__(self):
        self._free()

    cdef void _free(self):
        PyMem_Free(self.gstart); PyMem_Free(self.gclass); PyMem_Free(self.skind); PyMem_Free(self.sfirst)
        PyMem_Free(self.slast); PyMem_Free(self.elided); PyMem_Free(self.pieces)
        self.gstart = NULL; self.gclass = NULL; self.skind = NULL; self.sfirst = NULL; self.slast = NULL
        self.elided = NULL; self.pieces = NULL
        self.cap = 0

    cdef int _reserve(self, Py_ssize_t n) except -1:
        if n + 1 <= self.cap:
            return 0
        self._free()
        cap = max(n + 1, 1024)
        self.gstart = <Py_ssize_t*> PyMem_Malloc(cap * sizeof(Py_ssize_t))
        self.gclass = <uint16_t*> PyMem_Malloc(cap * sizeof(uint16_t))
        self.skind = <uint8_t*> PyMem_Malloc(cap * sizeof(uint8_t))
        self.sfirst = <Py_ssize_t*> PyMem_Malloc(cap * sizeof(Py_ssize_t))
        self.slast = <Py_ssize_t*> PyMem_Malloc(cap * sizeof(Py_ssize_t))
        self.elided = <uint8_t*> PyMem_Malloc(cap * sizeof(uint8_t))
        self.pieces = <PieceDesc*> PyMem_Malloc(cap * sizeof(PieceDesc))
        if (self.gstart == NULL or self.gclass == NULL or self.skind == NULL or self.sfirst == NULL
                or self.slast == NULL or self.elided == NULL or self.pieces == NULL):
            self._free()
            raise MemoryError()
        self.cap = cap
        return 0

    cdef inline void _emit(self, Py_ssize_t s, Py_ssize_t e, Py_ssize_t obj, uint32_t code, bint left, bint right,
                           bint lower):
        cdef PieceDesc* p = &self.pieces[self.n_pieces]
        p.start, p.end, p.obj, p.code, p.left, p.right, p.lower = s, e, obj, code, left, right, lower
        self.n_pieces += 1

    cdef int segment(self, str text) except -1:
        """Descriptors of the pieces of ``text`` in ``self.pieces[:self.n_pieces]`` (``self.text``: the text
        they refer to). The rule of ``fastsw.boundary.marked_pretokens``."""
        cdef int tkind = PyUnicode_KIND(text)
        cdef void* data = PyUnicode_DATA(text)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, g, ng = 0, ns = 0, s, pos
        cdef Py_UCS4 ch
        cdef uint16_t c, cur
        cdef uint8_t gk, sk
        cdef bint any_unlisted = False, marked_prev, marked_next, left_mark, right_mark, ascii_span
        cdef Py_ssize_t n_upper, n_lower, length
        cdef uint32_t code_ch
        cdef str t, code, low
        cdef const uint16_t[::1] cls = self.cls
        cdef const uint8_t[::1] kind = self.kind
        self.n_pieces = 0
        self.objs = []
        for i in range(n):
            ch = PyUnicode_READ(tkind, data, i)
            if 0xD800 <= ch <= 0xDFFF:
                from .alphabet import check_utf8
                check_utf8(text)
            if self.drop_unlisted and kind[cls[ch]] == BK_UNLISTED:
                any_unlisted = True
        if any_unlisted:
            text = "".join([x for x in text if kind[cls[ord(x)]] != BK_UNLISTED])
            tkind = PyUnicode_KIND(text)
            data = PyUnicode_DATA(text)
            n = PyUnicode_GET_LENGTH(text)
        self.text = text
        if n == 0:
            return 0
        self._reserve(n)
        # 1. groups
        cur = 0
        for i in range(n):
            ch = PyUnicode_READ(tkind, data, i)
            c = cls[ch]
            if ng > 0:
                if c == cur:
                    continue
                if kind[c] == BK_INHERITED and not (i - self.gstart[ng - 1] == 1
                                                    and PyUnicode_READ(tkind, data, i - 1) == 0x20):
                    continue
            self.gstart[ng] = i
            self.gclass[ng] = c
            ng += 1
            cur = c
        self.gstart[ng] = n
        # 2. spans
        for g in range(ng):
            gk = kind[self.gclass[g]]
            if gk == BK_WORD:
                if ns > 0 and self.skind[ns - 1] == BK_WORD:
                    self.slast[ns - 1] = g
                    continue
                sk = BK_WORD
            elif self.gstart[g + 1] - self.gstart[g] == 1 and PyUnicode_READ(tkind, data, self.gstart[g]) == 0x20:
                sk = BK_SPACE
            elif gk == BK_DIGIT or gk == BK_PUNCT:
                sk = gk
            else:
                sk = BK_OTHER
            self.skind[ns] = sk
            self.sfirst[ns] = g
            self.slast[ns] = g
            ns += 1
        # 3. elided spaces
        for s in range(ns):
            self.elided[s] = 0
            if self.skind[s] == BK_SPACE and 0 < s < ns - 1:
                sk = self.skind[s - 1]
                marked_prev = sk == BK_WORD or (sk == BK_PUNCT and self.punct) or (sk == BK_DIGIT and self.digit)
                sk = self.skind[s + 1]
                marked_next = sk == BK_WORD or (sk == BK_PUNCT and self.punct) or (sk == BK_DIGIT and self.digit)
                self.elided[s] = marked_prev and marked_next
        # 4. pieces
        for s in range(ns):
            sk = self.skind[s]
            if sk == BK_SPACE:
                if not self.elided[s]:
                    self._emit(self.gstart[self.sfirst[s]], self.gstart[self.sfirst[s]] + 1, -1, 0, 0, 0, 0)
                continue
            if sk == BK_WORD:
                code_ch = 0
                ascii_span = False
                if self.shift or self.caps:
                    ch = PyUnicode_READ(tkind, data, self.gstart[self.sfirst[s]])
                    # a span whose first character is a lowercase letter is neither title nor upper case
                    # (str.istitle/isupper), so it takes no code: only other spans are examined
                    if (0x41 <= ch <= 0x5A) or (ch >= 128 and not Py_UNICODE_ISLOWER(ch)):
                        # an all-ASCII span (a word span's ASCII characters are Latin letters) is decided here
                        # by caps_code's rule; any other span asks caps_code itself
                        n_upper = n_lower = 0
                        ascii_span = True
                        for i in range(self.gstart[self.sfirst[s]], self.gstart[self.slast[s] + 1]):
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
                            if (self.shift and (length >= 2 or self.single_char_shift) and n_upper == 1
                                    and PyUnicode_READ(tkind, data, self.gstart[self.sfirst[s]]) <= 0x5A):
                                code_ch = self.shift_ch
                            elif self.caps and length >= self.min_caps_length and n_lower == 0:
                                code_ch = self.caps_ch
                        else:
                            t = PyUnicode_Substring(text, self.gstart[self.sfirst[s]], self.gstart[self.slast[s] + 1])
                            code = self.caps_fn(t, self.shift, self.caps, self.single_char_shift,
                                                self.min_caps_length)
                            if code:
                                # lowercased by one lower() call, cut back at the group boundaries
                                low = t.lower()
                                pos = self.gstart[self.sfirst[s]]
                                for g in range(self.sfirst[s], self.slast[s] + 1):
                                    piece = low[self.gstart[g] - pos:self.gstart[g + 1] - pos]
                                    if g == self.sfirst[s]:
                                        piece = code + chr(self.mark) + piece
                                    if g == self.slast[s]:
                                        piece = piece + chr(self.mark)
                                    self.objs.append(piece)
                                    self._emit(0, 0, len(self.objs) - 1, 0, g == self.sfirst[s],
                                               g == self.slast[s], 0)
                                continue
                for g in range(self.sfirst[s], self.slast[s] + 1):
                    self._emit(self.gstart[g], self.gstart[g + 1], -1, code_ch if g == self.sfirst[s] else 0,
                               g == self.sfirst[s], g == self.slast[s], code_ch != 0)
                continue
            left_mark = (((sk == BK_PUNCT and self.punct) or (sk == BK_DIGIT and self.digit)) and s > 0
                         and self.elided[s - 1])
            right_mark = (((sk == BK_PUNCT and self.punct) or (sk == BK_DIGIT and self.digit)) and s < ns - 1
                          and self.elided[s + 1])
            self._emit(self.gstart[self.sfirst[s]], self.gstart[self.sfirst[s] + 1], -1, 0, left_mark, right_mark, 0)
        return 0

    cdef str piece_str(self, Py_ssize_t k):
        """The str of piece ``k``."""
        cdef PieceDesc* p = &self.pieces[k]
        if p.obj >= 0:
            return <str> self.objs[p.obj]
        if p.code == 0 and not p.left and not p.right and not p.lower:
            return PyUnicode_Substring(self.text, p.start, p.end)
        return _marked_piece(PyUnicode_KIND(self.text), PyUnicode_DATA(self.text), p.start, p.end, p.code,
                             p.left, p.right, self.mark, p.lower)


cdef str _marked_piece(int tkind, void* data, Py_ssize_t s, Py_ssize_t e, Py_UCS4 code, bint left, bint right,
                       Py_UCS4 marker, bint ascii_lower=False):
    """``code`` (if not 0) + ``marker`` (if ``left``) + text[s:e] + ``marker`` (if ``right``) as one new str,
    built in place (one allocation instead of three concatenations). The atoms are lone surrogates, so the
    string's maximum character is at least U+D800: UCS2, or UCS4 when the piece has an astral character (a str
    must use the smallest kind that holds its characters). ``ascii_lower``: the piece is ASCII letters, written
    lowercased (what ``str.lower`` does to them)."""
    cdef Py_ssize_t i, n = (e - s) + (code != 0) + left + right, k = 0
    cdef Py_UCS4 top = 0xDFFF
    cdef uint32_t v
    if code == 0 and not left and not right:  # only lowercased: an ASCII str
        top = 0x7F
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
    cdef _Scheme sch = _Scheme(cls, kind, punct, digit, shift, caps, single_char_shift, min_caps_length,
                               drop_unlisted, marker, shift_code, caps_code_char, caps_fn)
    sch.segment(text)
    return [sch.piece_str(k) for k in range(sch.n_pieces)]


# ---- counting -------------------------------------------------------------------------------------------------------

cdef inline uint64_t _fnv_step(uint64_t h, uint32_t v):
    h ^= v
    return h * <uint64_t> 0x100000001B3


cdef class MarkedCounter:
    """Pretokens (and letter runs) of documents under a marker scheme, counted from the piece descriptors: the
    compiled twin of ``fastsw.counting.CountTable`` over ``BoundaryPretokenizer.pretokenize_reference``. A piece is
    found by a 64-bit FNV-1a hash of its characters (atoms included) in an open-addressing table of piece
    numbers and compared character by character with the stored str; a str is made only for a new piece.
    ``pretokens()`` gives ``(list of str, counts list, has_letter list)`` in first-seen order, ``runs`` the letter
    runs (cut between a piece ending with a marker and one starting with one, ``run_break``) as a dict."""
    cdef _Scheme sch
    cdef object has_letter
    cdef bint collect_runs
    cdef list strs
    cdef int64_t* counts
    cdef uint8_t* letter
    cdef Py_ssize_t n, cap
    cdef int64_t* slots       # piece number + 1, 0 = empty
    cdef uint64_t* hashes
    cdef Py_ssize_t n_slots
    cdef public dict runs
    cdef public object n_documents, n_bytes

    def __cinit__(self, _Scheme sch, object has_letter, bint collect_runs):
        self.sch = sch
        self.has_letter = has_letter
        self.collect_runs = collect_runs
        self.strs = []
        self.runs = {}
        self.n_documents = 0
        self.n_bytes = 0
        self.n = self.cap = 0
        self.n_slots = 1 << 16
        self.slots = <int64_t*> PyMem_Malloc(self.n_slots * sizeof(int64_t))
        self.hashes = <uint64_t*> PyMem_Malloc(self.n_slots * sizeof(uint64_t))
        if self.slots == NULL or self.hashes == NULL:
            raise MemoryError()
        memset(self.slots, 0, self.n_slots * sizeof(int64_t))

    def __dealloc__(self):
        PyMem_Free(self.counts); PyMem_Free(self.letter); PyMem_Free(self.slots); PyMem_Free(self.hashes)

    cdef int _grow_table(self) except -1:
        cdef Py_ssize_t old = self.n_slots, i, j, m
        cdef int64_t* slots = self.slots
        cdef uint64_t* hashes = self.hashes
        self.n_slots = old * 2
        self.slots = <int64_t*> PyMem_Malloc(self.n_slots * sizeof(int64_t))
        self.hashes = <uint64_t*> PyMem_Malloc(self.n_slots * sizeof(uint64_t))
        if self.slots == NULL or self.hashes == NULL:
            raise MemoryError()
        memset(self.slots, 0, self.n_slots * sizeof(int64_t))
        m = self.n_slots - 1
        for i in range(old):
            if slots[i]:
                j = <Py_ssize_t> (hashes[i] & m)
                while self.slots[j]:
                    j = (j + 1) & m
                self.slots[j] = slots[i]
                self.hashes[j] = hashes[i]
        PyMem_Free(slots); PyMem_Free(hashes)
        return 0

    cdef Py_ssize_t _number(self, Py_ssize_t k) except -1:
        """The number of piece ``k`` of the current segmentation (a new number, and its str, when first seen)."""
        cdef _Scheme sch = self.sch
        cdef PieceDesc* p = &sch.pieces[k]
        cdef str obj = None, stored, piece
        cdef int tkind, okind
        cdef void* data
        cdef void* odata
        cdef Py_ssize_t i, length, j, m, idx, pos
        cdef uint64_t h = <uint64_t> 0xCBF29CE484222325
        cdef uint32_t v
        cdef bint same
        if p.obj >= 0:
            obj = <str> sch.objs[p.obj]
            tkind = PyUnicode_KIND(obj)
            data = PyUnicode_DATA(obj)
            length = PyUnicode_GET_LENGTH(obj)
            for i in range(length):
                h = _fnv_step(h, PyUnicode_READ(tkind, data, i))
        else:
            tkind = PyUnicode_KIND(sch.text)
            data = PyUnicode_DATA(sch.text)
            length = (p.end - p.start) + (p.code != 0) + p.left + p.right
            if p.code:
                h = _fnv_step(h, p.code)
            if p.left:
                h = _fnv_step(h, sch.mark)
            for i in range(p.start, p.end):
                v = PyUnicode_READ(tkind, data, i)
                if p.lower and 0x41 <= v <= 0x5A:
                    v = v + 0x20
                h = _fnv_step(h, v)
            if p.right:
                h = _fnv_step(h, sch.mark)
        m = self.n_slots - 1
        j = <Py_ssize_t> (h & m)
        while self.slots[j]:
            if self.hashes[j] == h:
                idx = self.slots[j] - 1
                stored = <str> PyList_GET_ITEM(self.strs, idx)
                if PyUnicode_GET_LENGTH(stored) == length:
                    if obj is not None:
                        same = stored == obj
                    else:
                        okind = PyUnicode_KIND(stored)
                        odata = PyUnicode_DATA(stored)
                        pos = 0
                        same = True
                        if p.code:
                            same = PyUnicode_READ(okind, odata, 0) == p.code
                            pos = 1
                        if same and p.left:
                            same = PyUnicode_READ(okind, odata, pos) == sch.mark
                            pos += 1
                        if same:
                            for i in range(p.start, p.end):
                                v = PyUnicode_READ(tkind, data, i)
                                if p.lower and 0x41 <= v <= 0x5A:
                                    v = v + 0x20
                                if PyUnicode_READ(okind, odata, pos) != v:
                                    same = False
                                    break
                                pos += 1
                    if same:
                        return idx
            j = (j + 1) & m
        # a new piece
        piece = obj if obj is not None else sch.piece_str(k)
        if self.n == self.cap:
            self.cap = max(2 * self.cap, 4096)
            self.counts = <int64_t*> PyMem_Realloc(self.counts, self.cap * sizeof(int64_t))
            self.letter = <uint8_t*> PyMem_Realloc(self.letter, self.cap * sizeof(uint8_t))
            if self.counts == NULL or self.letter == NULL:
                raise MemoryError()
        idx = self.n
        self.strs.append(piece)
        self.counts[idx] = 0
        self.letter[idx] = 1 if self.has_letter(piece) else 0
        self.n += 1
        self.slots[j] = idx + 1
        self.hashes[j] = h
        if 2 * self.n > self.n_slots:
            self._grow_table()
        return idx

    def add_batch(self, list docs):
        cdef _Scheme sch = self.sch
        cdef Py_ssize_t k, idx
        cdef list run = []
        cdef bint prev_right, cut
        cdef object key
        for doc in docs:
            if type(doc) is not str:
                raise TypeError(f"documents must be str, not {type(doc).__name__}")
            sch.segment(<str> doc)
            run = []
            prev_right = False
            for k in range(sch.n_pieces):
                idx = self._number(k)
                self.counts[idx] += 1
                if not self.collect_runs:
                    continue
                # run_break: the previous piece ends with a marker and this one starts with one (after a code)
                cut = prev_right and sch.pieces[k].left
                prev_right = sch.pieces[k].right
                if self.letter[idx] and not (cut and len(run) > 0):
                    run.append(idx)
                else:
                    if len(run) >= 2:
                        key = tuple(run)
                        self.runs[key] = self.runs.get(key, 0) + 1
                    run = [idx] if self.letter[idx] else []
            if len(run) >= 2:
                key = tuple(run)
                self.runs[key] = self.runs.get(key, 0) + 1
            self.n_documents += 1
            self.n_bytes += len(doc) if (<str> doc).isascii() else len((<str> doc).encode("utf-8"))

    def pretokens(self):
        """``(pretokens, counts, has_letter)``: lists in first-seen order."""
        return (list(self.strs), [self.counts[i] for i in range(self.n)], [self.letter[i] != 0 for i in range(self.n)])


def marked_counter(const uint16_t[::1] cls, const uint8_t[::1] kind, bint punct, bint digit, bint shift, bint caps,
                   bint single_char_shift, int min_caps_length, bint drop_unlisted, str marker, str shift_code,
                   str caps_code_char, object caps_fn, object has_letter, bint collect_runs):
    """A :class:`MarkedCounter` for one scheme (the arguments of :func:`boundary_pretokenize`)."""
    return MarkedCounter(_Scheme(cls, kind, punct, digit, shift, caps, single_char_shift, min_caps_length,
                                 drop_unlisted, marker, shift_code, caps_code_char, caps_fn), has_letter, collect_runs)
