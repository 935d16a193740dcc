# Included by _pretok.pyx (after _counter.pxi): the compiled twin of fastsw.pretokenizers.boundary.marked_pretokens (the marker
# schemes' groups, spans, marking and caps codes, SPEC section 9) and the counter over its pieces. The reference is
# the plain-Python rule in fastsw/pretokenizers/boundary.py (and fastsw.corpus.counting.CountTable); the class table (cls: uint16 class
# id per code point, kind: uint8 per class id) and the case table (fastsw.pretokenizers.boundary.case_table) are shared with it.
#
# One segmentation, two consumers. _mark_document segments a document without the GIL into piece *descriptors*
# (start, end, caps code, markers, lowercase) over the document's own buffer (or the buffer without unlisted code
# points, for drop_unlisted); MarkScheme.pretokenize turns them into strs, and MarkCounter (a Counter: the same
# table, cache, letter flags, letter runs, merge and export as the default patterns' counter, _counter.pxi) counts
# them without the GIL, one counter per thread. Nothing here is a second hash table.
#
# The caps decision is str.istitle / str.isupper / str.lower's, read from Python's own case predicates
# (Py_UNICODE_ISUPPER/ISLOWER/ISTITLE, pure table look-ups) and a per-code-point table of full lowercase mappings
# built by str.lower (case_table). The one context-dependent lowercase mapping of str.lower, the final sigma of
# U+03A3, is left to the reference's caps_code under the GIL (a span holding a capital sigma that may take a code).

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_4BYTE_KIND
from libc.stdint cimport uint64_t

cdef enum:
    BK_OTHER = 0
    BK_WORD = 1
    BK_DIGIT = 2
    BK_PUNCT = 3
    BK_INHERITED = 4
    BK_UNLISTED = 5
    BK_SPACE = 6   # span kind only: a group that is exactly one space

# case_table entries: the full lowercase mapping when it is one code point (LOW_CP bits), LOW_ROUND when that
# code point's uppercase is the code point itself, LOW_COMPLEX when the lowercase is not one code point
cdef enum:
    LOW_CP = 0x1FFFFF
    LOW_UPPER = 0x200000     # Py_UNICODE_ISUPPER (added by add_case_flags)
    LOW_LOWER = 0x400000     # Py_UNICODE_ISLOWER
    LOW_TITLE = 0x800000     # Py_UNICODE_ISTITLE
    LOW_ROUND = 0x40000000
    LOW_COMPLEX = 0x80000000
    CAPITAL_SIGMA = 0x3A3


cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    bint _uc_isupper "Py_UNICODE_ISUPPER" (Py_UCS4 ch) nogil
    bint _uc_islower "Py_UNICODE_ISLOWER" (Py_UCS4 ch) nogil
    bint _uc_istitle "Py_UNICODE_ISTITLE" (Py_UCS4 ch) nogil


ctypedef fused piece_t:  # the buffer the descriptors refer to: the document (any kind) or MarkScratch.filt
    uint8_t
    uint16_t
    uint32_t


cdef struct MarkRules:
    const uint16_t* cls      # class id per code point
    const uint8_t* kind      # BK_* per class id
    const uint32_t* low      # case_table()
    bint punct, digit, shift, caps, single_char_shift, drop_unlisted
    int min_caps_length
    uint32_t mark, shift_ch, caps_ch
    PyObject* caps_fn        # fastsw.pretokenizers.boundary.caps_code (kept alive by the MarkScheme)


cdef struct MarkPiece:
    int64_t start, end       # code points [start, end) of the segmented buffer
    uint32_t code            # the caps code before the opening marker, or 0
    uint8_t left, right      # a marker before / after the characters
    uint8_t lower            # the characters are read lowercased from MarkScratch.low


cdef struct MarkScratch:  # scratch of one segmentation, reused across documents (one per MarkScheme and thread)
    int64_t cap              # capacity of the per-code-point arrays below
    int64_t* gstart
    uint16_t* gclass
    uint8_t* skind
    int64_t* sfirst
    int64_t* slast
    uint8_t* elided
    uint32_t* low            # low[i]: the lowercased code point i of a span that took a caps code
    MarkPiece* pieces
    int64_t n_pieces
    uint32_t* filt           # the document without unlisted code points (drop_unlisted)
    int64_t filt_cap
    bint filtered            # the descriptors refer to filt, not to the document
    uint32_t* buf            # one piece's code points
    int64_t buf_cap


cdef void _scratch_free(MarkScratch* m) noexcept nogil:
    free(m.gstart); free(m.gclass); free(m.skind); free(m.sfirst); free(m.slast); free(m.elided); free(m.low)
    free(m.pieces); free(m.filt); free(m.buf)
    memset(m, 0, sizeof(MarkScratch))


cdef int _scratch_reserve(MarkScratch* m, int64_t n) noexcept nogil:
    """Room for a document of ``n`` code points; -1 when out of memory."""
    cdef int64_t cap
    if n + 1 <= m.cap:
        return 0
    cap = max(n + 1, 1024)
    free(m.gstart); free(m.gclass); free(m.skind); free(m.sfirst); free(m.slast); free(m.elided); free(m.low)
    free(m.pieces)
    m.gstart = <int64_t*> malloc(cap * sizeof(int64_t))
    m.gclass = <uint16_t*> malloc(cap * sizeof(uint16_t))
    m.skind = <uint8_t*> malloc(cap * sizeof(uint8_t))
    m.sfirst = <int64_t*> malloc(cap * sizeof(int64_t))
    m.slast = <int64_t*> malloc(cap * sizeof(int64_t))
    m.elided = <uint8_t*> malloc(cap * sizeof(uint8_t))
    m.low = <uint32_t*> malloc(cap * sizeof(uint32_t))
    m.pieces = <MarkPiece*> malloc(cap * sizeof(MarkPiece))
    m.cap = cap
    if (m.gstart == NULL or m.gclass == NULL or m.skind == NULL or m.sfirst == NULL or m.slast == NULL
            or m.elided == NULL or m.low == NULL or m.pieces == NULL):
        m.cap = 0
        return -1
    return 0


cdef int _grow_u32(uint32_t** p, int64_t* cap, int64_t n) noexcept nogil:
    cdef uint32_t* q
    if n <= cap[0]:
        return 0
    q = <uint32_t*> realloc(p[0], max(n, 2 * cap[0], 64) * sizeof(uint32_t))
    if q == NULL:
        return -1
    p[0] = q
    cap[0] = max(n, 2 * cap[0], 64)
    return 0


cdef inline void _emit(MarkScratch* m, int64_t s, int64_t e, uint32_t code, bint left, bint right,
                       bint lower) noexcept nogil:
    cdef MarkPiece* p = &m.pieces[m.n_pieces]
    p.start, p.end, p.code, p.left, p.right, p.lower = s, e, code, left, right, lower
    m.n_pieces += 1


cdef int64_t _caps_by_python(const MarkRules* r, MarkScratch* m, const char_t* s, int64_t a,
                             int64_t b) noexcept nogil:
    """The reference's caps_code on ``s[a:b]`` (and its ``lower()`` into ``m.low``), under the GIL; -4 if it
    raised."""
    cdef int64_t i
    with gil:
        try:
            t = PyUnicode_FromKindAndData(sizeof(char_t), s + a, b - a)
            code = (<object> r.caps_fn)(t, r.shift, r.caps, r.single_char_shift, r.min_caps_length)
            if not code:
                return 0
            low = t.lower()
            for i in range(b - a):
                m.low[a + i] = ord(low[i])
            return ord(code)
        except BaseException:
            return -4


cdef int64_t _caps(const MarkRules* r, MarkScratch* m, const char_t* s, int64_t a, int64_t b) noexcept nogil:
    """The caps code of the word span ``s[a:b]`` (0 for none), with its lowercase in ``m.low[a:b]`` when it takes
    one: ``fastsw.pretokenizers.boundary.caps_code``'s rule (str.istitle, str.isupper, str.lower, per code point)."""
    cdef uint32_t ch = s[a], v
    cdef int64_t i, n = b - a
    cdef bint up, lo, ti, prev_cased = False, title_ok = True, title_cased = False, upper_ok = True
    cdef bint upper_cased = False, complex_low = False, sigma = False, ok
    cdef uint32_t code = 0
    # a span whose first character is lowercase is neither title nor upper case
    if r.low[ch] & LOW_LOWER:
        return 0
    for i in range(a, b):
        ch = s[i]
        v = r.low[ch]
        up = (v & LOW_UPPER) != 0
        lo = (v & LOW_LOWER) != 0
        ti = (v & LOW_TITLE) != 0
        # str.istitle: upper/title case only after an uncased character, lowercase only after a cased one
        if up or ti:
            if prev_cased:
                title_ok = False
            prev_cased = title_cased = True
        elif lo:
            if not prev_cased:
                title_ok = False
            prev_cased = title_cased = True
        else:
            prev_cased = False
        # str.isupper: no lowercase or titlecase character, at least one uppercase one
        if lo or ti:
            upper_ok = False
        elif up:
            upper_cased = True
        if v & LOW_COMPLEX:
            complex_low = True
        if ch == CAPITAL_SIGMA:
            sigma = True
    if not ((title_ok and title_cased) or (upper_ok and upper_cased)):
        return 0
    if complex_low:  # str.lower changes the length: caps_code gives no code
        return 0
    if sigma:
        return _caps_by_python(r, m, s, a, b)
    if r.shift and (n >= 2 or r.single_char_shift) and (r.low[s[a]] & LOW_ROUND):
        ok = True
        for i in range(a + 1, b):
            if (r.low[s[i]] & LOW_CP) != s[i]:
                ok = False
                break
        if ok:
            code = r.shift_ch
    if code == 0 and r.caps and n >= r.min_caps_length:
        ok = True
        for i in range(a, b):
            if not (r.low[s[i]] & LOW_ROUND):
                ok = False
                break
        if ok:
            code = r.caps_ch
    if code:
        for i in range(a, b):
            m.low[i] = r.low[s[i]] & LOW_CP
    return code


cdef int64_t _segment(const MarkRules* r, MarkScratch* m, const char_t* s, int64_t n) noexcept nogil:
    """Descriptors of the pieces of ``s[0:n]`` in ``m.pieces[:m.n_pieces]``: groups, spans, elided spaces,
    markers and caps codes, the rule of ``fastsw.pretokenizers.boundary.marked_pretokens``. 0, or -1 when out of memory, -4 when
    the reference's caps_code raised."""
    cdef int64_t i, g, ng = 0, ns = 0, k, a, b
    cdef int64_t code
    cdef uint32_t ch
    cdef uint16_t c, cur = 0
    cdef uint8_t gk, sk
    cdef bint marked_prev, marked_next, left_mark, right_mark
    m.n_pieces = 0
    if n == 0:
        return 0
    if _scratch_reserve(m, n) < 0:
        return -1
    # 1. groups: runs of one class; Inherited characters join the group before them, except right after a group
    #    that is exactly one space
    for i in range(n):
        ch = s[i]
        c = r.cls[ch]
        if ng > 0:
            if c == cur:
                continue
            if r.kind[c] == BK_INHERITED and not (i - m.gstart[ng - 1] == 1 and s[i - 1] == 0x20):
                continue
        m.gstart[ng] = i
        m.gclass[ng] = c
        ng += 1
        cur = c
    m.gstart[ng] = n
    # 2. spans: a word span is a run of word groups; a group that is exactly one space is a space span
    for g in range(ng):
        gk = r.kind[m.gclass[g]]
        if gk == BK_WORD:
            if ns > 0 and m.skind[ns - 1] == BK_WORD:
                m.slast[ns - 1] = g
                continue
            sk = BK_WORD
        elif m.gstart[g + 1] - m.gstart[g] == 1 and s[m.gstart[g]] == 0x20:
            sk = BK_SPACE
        elif gk == BK_DIGIT or gk == BK_PUNCT:
            sk = gk
        else:
            sk = BK_OTHER
        m.skind[ns] = sk
        m.sfirst[ns] = g
        m.slast[ns] = g
        ns += 1
    # 3. a space is elided when it is neither first nor last and both neighbours are marked
    for k in range(ns):
        m.elided[k] = 0
        if m.skind[k] == BK_SPACE and 0 < k < ns - 1:
            sk = m.skind[k - 1]
            marked_prev = sk == BK_WORD or (sk == BK_PUNCT and r.punct) or (sk == BK_DIGIT and r.digit)
            sk = m.skind[k + 1]
            marked_next = sk == BK_WORD or (sk == BK_PUNCT and r.punct) or (sk == BK_DIGIT and r.digit)
            m.elided[k] = marked_prev and marked_next
    # 4. pieces
    for k in range(ns):
        sk = m.skind[k]
        a = m.gstart[m.sfirst[k]]
        if sk == BK_SPACE:
            if not m.elided[k]:
                _emit(m, a, a + 1, 0, False, False, False)
            continue
        if sk == BK_WORD:
            b = m.gstart[m.slast[k] + 1]
            code = _caps(r, m, s, a, b) if (r.shift or r.caps) else 0
            if code < 0:
                return code
            for g in range(m.sfirst[k], m.slast[k] + 1):
                _emit(m, m.gstart[g], m.gstart[g + 1], <uint32_t> code if g == m.sfirst[k] else 0,
                      g == m.sfirst[k], g == m.slast[k], code != 0)
            continue
        left_mark = ((sk == BK_PUNCT and r.punct) or (sk == BK_DIGIT and r.digit)) and k > 0 and m.elided[k - 1]
        right_mark = (((sk == BK_PUNCT and r.punct) or (sk == BK_DIGIT and r.digit)) and k < ns - 1
                      and m.elided[k + 1])
        _emit(m, a, m.gstart[m.sfirst[k] + 1], 0, left_mark, right_mark, False)
    return 0


cdef int64_t _mark_document(const MarkRules* r, MarkScratch* m, const char_t* s, int64_t n) noexcept nogil:
    """Segment one document (``_segment``), first without its unlisted code points under ``drop_unlisted``
    (``m.filtered``: the descriptors then refer to ``m.filt``). -3 when the text holds a lone surrogate (no
    UTF-8: the caller raises the reference's error)."""
    cdef int64_t i, j
    cdef bint unlisted = False
    m.filtered = False
    if char_t is not uint8_t:
        for i in range(n):
            if 0xD800 <= s[i] <= 0xDFFF:
                return -3
    if r.drop_unlisted:
        for i in range(n):
            if r.kind[r.cls[s[i]]] == BK_UNLISTED:
                unlisted = True
                break
    if not unlisted:
        return _segment(r, m, s, n)
    if _grow_u32(&m.filt, &m.filt_cap, n) < 0:
        return -1
    j = 0
    for i in range(n):
        if r.kind[r.cls[s[i]]] != BK_UNLISTED:
            m.filt[j] = s[i]
            j += 1
    m.filtered = True
    return _segment(r, m, <const uint32_t*> m.filt, j)


cdef int64_t _piece_codes(const MarkRules* r, MarkScratch* m, const MarkPiece* p, const piece_t* s) noexcept nogil:
    """The code points of piece ``p`` (atoms as lone surrogates) into ``m.buf``; its length, or -1."""
    cdef int64_t i, k = 0
    if _grow_u32(&m.buf, &m.buf_cap, p.end - p.start + 3) < 0:
        return -1
    if p.code:
        m.buf[k] = p.code
        k += 1
    if p.left:
        m.buf[k] = r.mark
        k += 1
    if p.lower:
        for i in range(p.start, p.end):
            m.buf[k] = m.low[i]
            k += 1
    else:
        for i in range(p.start, p.end):
            m.buf[k] = s[i]
            k += 1
    if p.right:
        m.buf[k] = r.mark
        k += 1
    return k


def add_case_flags(uint32_t[::1] low):
    """Add Python's own case predicates (``LOW_UPPER``, ``LOW_LOWER``, ``LOW_TITLE``: ``Py_UNICODE_ISUPPER``,
    ``ISLOWER``, ``ISTITLE``, what ``str.isupper``/``istitle`` read per character) to every filled entry of
    :func:`fastsw.pretokenizers.boundary.case_table`, so the caps decision reads one table entry per character."""
    cdef Py_ssize_t cp
    if low.shape[0] < N_CODE_POINTS:
        raise ValueError("low must have 0x110000 entries")
    for cp in range(N_CODE_POINTS):
        if low[cp]:
            low[cp] |= ((LOW_UPPER if _uc_isupper(cp) else 0) | (LOW_LOWER if _uc_islower(cp) else 0)
                        | (LOW_TITLE if _uc_istitle(cp) else 0))


cdef class MarkScheme:
    """A marker scheme's rules and one segmentation's scratch (not shared between threads).

    ``MarkScheme(cls, kind, low, punct, digit, shift, caps, single_char_shift, min_caps_length, drop_unlisted,
    marker, shift_code, caps_code_char, caps_fn)``: :func:`fastsw.pretokenizers.boundary.class_table`'s ``cls`` and ``kind``,
    :func:`fastsw.pretokenizers.boundary.case_table`, the scheme's switches, the atoms as one-character strs and
    :func:`fastsw.pretokenizers.boundary.caps_code`."""
    cdef MarkRules r
    cdef MarkScratch m
    cdef object _keep

    def __cinit__(self, const uint16_t[::1] cls, const uint8_t[::1] kind, const uint32_t[::1] low, bint punct,
                  bint digit, bint shift, bint caps, bint single_char_shift, int min_caps_length, bint drop_unlisted,
                  str marker, str shift_code, str caps_code_char, object caps_fn):
        memset(&self.m, 0, sizeof(MarkScratch))
        if cls.shape[0] < N_CODE_POINTS or low.shape[0] < N_CODE_POINTS:
            raise ValueError("cls and low must have 0x110000 entries (use class_table() and case_table())")
        self._keep = (cls, kind, low, caps_fn)
        self.r.cls, self.r.kind, self.r.low = &cls[0], &kind[0], &low[0]
        self.r.punct, self.r.digit, self.r.shift, self.r.caps = punct, digit, shift, caps
        self.r.single_char_shift, self.r.min_caps_length, self.r.drop_unlisted = single_char_shift, \
            min_caps_length, drop_unlisted
        self.r.mark, self.r.shift_ch, self.r.caps_ch = ord(marker), ord(shift_code), ord(caps_code_char)
        self.r.caps_fn = <PyObject*> caps_fn

    def __dealloc__(self):
        _scratch_free(&self.m)

    def copy(self):
        """The same rules with scratch of its own (for another thread)."""
        cls, kind, low, caps_fn = self._keep
        return MarkScheme(cls, kind, low, self.r.punct, self.r.digit, self.r.shift, self.r.caps,
                          self.r.single_char_shift, self.r.min_caps_length, self.r.drop_unlisted, chr(self.r.mark),
                          chr(self.r.shift_ch), chr(self.r.caps_ch), caps_fn)

    def pretokenize(self, str text):
        """The pretokens of ``text`` (atoms as lone surrogates); the same as
        :func:`fastsw.pretokenizers.boundary.marked_pretokens`."""
        cdef int kind = PyUnicode_KIND(text)
        cdef void* data = PyUnicode_DATA(text)
        cdef int64_t n = PyUnicode_GET_LENGTH(text), rc
        if kind == PyUnicode_1BYTE_KIND:
            rc = _mark_document(&self.r, &self.m, <const uint8_t*> data, n)
        elif kind == PyUnicode_2BYTE_KIND:
            rc = _mark_document(&self.r, &self.m, <const uint16_t*> data, n)
        else:
            rc = _mark_document(&self.r, &self.m, <const uint32_t*> data, n)
        _check_rc(rc, text)
        if self.m.filtered:
            return self._strs(<const uint32_t*> self.m.filt, None)
        if kind == PyUnicode_1BYTE_KIND:
            return self._strs(<const uint8_t*> data, text)
        if kind == PyUnicode_2BYTE_KIND:
            return self._strs(<const uint16_t*> data, text)
        return self._strs(<const uint32_t*> data, text)

    cdef list _strs(self, const piece_t* s, str text):
        cdef list out = PyList_New(self.m.n_pieces)
        cdef int64_t k, length
        cdef MarkPiece* p
        for k in range(self.m.n_pieces):
            p = &self.m.pieces[k]
            if text is not None and not (p.code or p.left or p.right or p.lower):
                piece = PyUnicode_Substring(text, p.start, p.end)
            else:
                length = _piece_codes(&self.r, &self.m, p, s)
                if length < 0:
                    raise MemoryError()
                piece = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, self.m.buf, length)
            Py_INCREF(piece)
            PyList_SET_ITEM(out, k, piece)
        return out


cdef struct ByteOut:  # token bytes of pieces (the fast encoder's input), and each piece's end in bytes
    uint8_t* data
    int64_t n, cap
    int64_t* ends
    int64_t n_ends, ends_cap


cdef inline int _out_reserve(ByteOut* o, int64_t more_bytes) noexcept nogil:
    cdef int64_t cap
    cdef void* q
    if o.n + more_bytes > o.cap:
        cap = max(2 * o.cap, o.n + more_bytes, 4096)
        q = realloc(o.data, cap)
        if q == NULL:
            return -1
        o.data, o.cap = <uint8_t*> q, cap
    if o.n_ends + 1 > o.ends_cap:
        cap = max(2 * o.ends_cap, 1024)
        q = realloc(o.ends, cap * sizeof(int64_t))
        if q == NULL:
            return -1
        o.ends, o.ends_cap = <int64_t*> q, cap
    return 0


cdef inline int64_t _put_utf8(uint8_t* o, uint32_t c) noexcept nogil:
    if c < 0x80:
        o[0] = c
        return 1
    if c < 0x800:
        o[0] = 0xC0 | (c >> 6)
        o[1] = 0x80 | (c & 0x3F)
        return 2
    if c < 0x10000:
        o[0] = 0xE0 | (c >> 12)
        o[1] = 0x80 | ((c >> 6) & 0x3F)
        o[2] = 0x80 | (c & 0x3F)
        return 3
    o[0] = 0xF0 | (c >> 18)
    o[1] = 0x80 | ((c >> 12) & 0x3F)
    o[2] = 0x80 | ((c >> 6) & 0x3F)
    o[3] = 0x80 | (c & 0x3F)
    return 4


cdef int _pieces_bytes(const MarkRules* r, MarkScratch* m, const piece_t* s, ByteOut* o) noexcept nogil:
    """Append the token bytes of the last segmentation's pieces (``fastsw.alphabet.atom_bytes``: UTF-8, an atom as
    its one-byte code ``0xF8 + slot``) to ``o``, with each piece's end in bytes from the document's start."""
    cdef int64_t k, i, start = o.n
    cdef MarkPiece* p
    for k in range(m.n_pieces):
        p = &m.pieces[k]
        if _out_reserve(o, 4 * (p.end - p.start) + 3) < 0:
            return -1
        if p.code:
            o.data[o.n] = 0xF8 + (p.code - 0xD800)
            o.n += 1
        if p.left:
            o.data[o.n] = 0xF8 + (r.mark - 0xD800)
            o.n += 1
        if p.lower:
            for i in range(p.start, p.end):
                o.n += _put_utf8(o.data + o.n, m.low[i])
        else:
            for i in range(p.start, p.end):
                o.n += _put_utf8(o.data + o.n, s[i])
        if p.right:
            o.data[o.n] = 0xF8 + (r.mark - 0xD800)
            o.n += 1
        o.ends[o.n_ends] = o.n - start
        o.n_ends += 1
    return 0


def mark_token_bytes(MarkScheme scheme not None, list texts):
    """``(data, piece_ends, doc_pieces)`` for the fast encoder's kernel: the token bytes of every pretoken of
    ``texts`` under ``scheme`` (``atom_bytes`` of :meth:`MarkScheme.pretokenize`'s pieces, concatenated), each
    pretoken's end in bytes from its document's start (``int64``), and the documents' first pretokens (``int64``,
    one more than documents). No str is made per pretoken."""
    cdef Py_ssize_t n = len(texts), i
    cdef int64_t rc = 0
    cdef int kind
    cdef void* data
    cdef ByteOut o
    memset(&o, 0, sizeof(ByteOut))
    doc_pieces = np.zeros(n + 1, dtype=np.int64)
    cdef int64_t[::1] dp = doc_pieces
    try:
        for i in range(n):
            text = texts[i]
            if type(text) is not str:
                raise TypeError(f"texts must be str, not {type(text).__name__}")
            kind = PyUnicode_KIND(text)
            data = PyUnicode_DATA(text)
            if kind == PyUnicode_1BYTE_KIND:
                rc = _mark_document(&scheme.r, &scheme.m, <const uint8_t*> data, PyUnicode_GET_LENGTH(text))
            elif kind == PyUnicode_2BYTE_KIND:
                rc = _mark_document(&scheme.r, &scheme.m, <const uint16_t*> data, PyUnicode_GET_LENGTH(text))
            else:
                rc = _mark_document(&scheme.r, &scheme.m, <const uint32_t*> data, PyUnicode_GET_LENGTH(text))
            _check_rc(rc, text)
            if scheme.m.filtered:
                rc = _pieces_bytes(&scheme.r, &scheme.m, <const uint32_t*> scheme.m.filt, &o)
            elif kind == PyUnicode_1BYTE_KIND:
                rc = _pieces_bytes(&scheme.r, &scheme.m, <const uint8_t*> data, &o)
            elif kind == PyUnicode_2BYTE_KIND:
                rc = _pieces_bytes(&scheme.r, &scheme.m, <const uint16_t*> data, &o)
            else:
                rc = _pieces_bytes(&scheme.r, &scheme.m, <const uint32_t*> data, &o)
            if rc < 0:
                raise MemoryError()
            dp[i + 1] = o.n_ends
        out = PyBytes_FromStringAndSize(<char*> o.data, o.n) if o.n else b""
        ends = np.empty(o.n_ends, dtype=np.int64)
        if o.n_ends:
            memcpy(_addr_i64(ends), o.ends, o.n_ends * sizeof(int64_t))
        return out, ends, doc_pieces
    finally:
        free(o.data)
        free(o.ends)


cdef _check_rc(int64_t rc, str text):
    if rc == -3:
        from fastsw.alphabet import check_utf8
        check_utf8(text)
        raise ValueError("the text holds a lone surrogate (no UTF-8)")  # check_utf8 raised already
    if rc == -1:
        raise MemoryError("out of memory while pre-tokenizing")
    if rc == -4:
        raise RuntimeError("fastsw.pretokenizers.boundary.caps_code raised while pre-tokenizing (run with FASTSW_PUREPYTHON=1 "
                           "to see the error)")


# ---- counting -------------------------------------------------------------------------------------------------------

cdef inline int _run_append(CountState* st, int64_t e) noexcept nogil:
    cdef int64_t cap
    cdef uint32_t* grown
    if st.run_len == st.ids_cap:
        cap = max(64, 2 * st.ids_cap)
        grown = <uint32_t*> realloc(st.ids, cap * sizeof(uint32_t))
        if grown == NULL:
            return -1
        st.ids = grown
        st.ids_cap = cap
    st.ids[st.run_len] = <uint32_t> e
    st.run_len += 1
    return 0


cdef int _count_pieces(CountState* st, const Tables* tb, const MarkRules* r, MarkScratch* m,
                       const piece_t* s) noexcept nogil:
    """Count the pieces of the last segmentation (over ``s``) and their letter runs; -1 when out of memory.

    A piece of at most 7 code points below 256 has an exact 64-bit key (the code points packed as in
    ``_hash_seq``'s short keys, its markers and caps code in bits 59-62, which no short key uses), looked up in the
    counter's cache of frequent pretokens before the table: so ``¦the¦`` is found with one comparison, like
    `` the`` by the default counter. Letter runs are cut between a piece that ends with a marker and one that
    starts with one (``BoundaryPretokenizer.run_break``)."""
    cdef int64_t k, i, e, n
    cdef uint64_t key, packed
    cdef uint32_t v
    cdef Py_ssize_t slot = 0
    cdef bint short_key, prev_right = False
    cdef MarkPiece* p
    st.run_len = 0
    for k in range(m.n_pieces):
        p = &m.pieces[k]
        n = p.end - p.start
        short_key = n <= 7
        key = 0
        if short_key:
            packed = 0
            for i in range(n):
                v = m.low[p.start + i] if p.lower else s[p.start + i]
                if v >= 256:
                    short_key = False
                    break
                packed |= (<uint64_t> v) << (8 * i)
            if short_key:
                key = (packed | (<uint64_t> n << 56) | (<uint64_t> p.left << 59) | (<uint64_t> p.right << 60)
                       | (<uint64_t> (p.code != 0 and p.code == r.shift_ch) << 61)
                       | (<uint64_t> (p.code != 0 and p.code == r.caps_ch) << 62))
                slot = _cache_slot(key)
        if short_key and st.cache_key[slot] == key:
            e = st.cache_entry[slot]
            st.pre.counts[e] += 1
        else:
            n = _piece_codes(r, m, p, s)
            if n < 0:
                return -1
            e = _add_pretoken(st, tb, <const uint32_t*> m.buf, n)
            if e < 0:
                return -1
            if short_key:
                st.cache_key[slot] = key
                st.cache_entry[slot] = e
        if not st.collect_runs:
            continue
        if st.letter[e] and not (prev_right and p.left and st.run_len > 0):
            if _run_append(st, e) < 0:
                return -1
        else:
            if _end_run(st) < 0:
                return -1
            if st.letter[e] and _run_append(st, e) < 0:
                return -1
        prev_right = p.right
    if st.collect_runs and _end_run(st) < 0:
        return -1
    return 0


cdef int64_t _count_marked(CountState* st, const Tables* tb, const MarkRules* r, MarkScratch* m, const char_t* s,
                           int64_t n) noexcept nogil:
    """Segment and count one document; 0, or the negative code of ``_mark_document``."""
    cdef int64_t rc
    st.n_documents += 1
    st.n_bytes += _utf8_length(s, n)
    rc = _mark_document(r, m, s, n)
    if rc < 0:
        return rc
    if m.filtered:
        return _count_pieces(st, tb, r, m, <const uint32_t*> m.filt)
    return _count_pieces(st, tb, r, m, s)


cdef class MarkCounter(Counter):
    """The :class:`Counter` of a marker scheme: the same table, letter flags, letter runs, ``merge``,
    ``merge_table``, ``pretokens`` and ``runs``; :meth:`add_batch` segments with the scheme instead of the default
    patterns, without the GIL (one counter per thread). ``MarkCounter(scanner, collect_runs)`` then
    :meth:`set_scheme` (``scanner``: any :class:`Scanner`, for its ``\\p{L}`` letter table); the twin of
    ``fastsw.corpus.counting.CountTable`` over ``BoundaryPretokenizer.pretokenize_reference``."""
    cdef MarkScheme scheme

    def set_scheme(self, MarkScheme scheme not None):
        self.scheme = scheme

    def add_batch(self, list docs):
        """Count every document of ``docs`` (a list of ``str``), without the GIL."""
        cdef Py_ssize_t n = len(docs), i, bad = -1
        cdef int64_t rc = 0
        if self.scheme is None:
            raise RuntimeError("MarkCounter.set_scheme was not called")
        if not self.ok:
            raise RuntimeError("this Counter ran out of memory earlier; its counts are incomplete")
        for i in range(n):
            if type(docs[i]) is not str:
                raise TypeError(f"documents must be str, not {type(docs[i]).__name__} (item {i} of the batch)")
        cdef int* kinds = <int*> PyMem_Malloc(max(n, 1) * sizeof(int))
        cdef void** datas = <void**> PyMem_Malloc(max(n, 1) * sizeof(void*))
        cdef Py_ssize_t* lengths = <Py_ssize_t*> PyMem_Malloc(max(n, 1) * sizeof(Py_ssize_t))
        if kinds == NULL or datas == NULL or lengths == NULL:
            PyMem_Free(kinds)
            PyMem_Free(datas)
            PyMem_Free(lengths)
            raise MemoryError()
        for i in range(n):
            doc = docs[i]
            kinds[i] = PyUnicode_KIND(doc)
            datas[i] = PyUnicode_DATA(doc)
            lengths[i] = PyUnicode_GET_LENGTH(doc)
        cdef Scanner sc = self.scanner
        cdef MarkScheme ms = self.scheme
        with nogil:  # ``docs`` keeps every buffer alive
            for i in range(n):
                if kinds[i] == PyUnicode_1BYTE_KIND:
                    rc = _count_marked(&self.st, &sc.tb, &ms.r, &ms.m, <const uint8_t*> datas[i], lengths[i])
                elif kinds[i] == PyUnicode_2BYTE_KIND:
                    rc = _count_marked(&self.st, &sc.tb, &ms.r, &ms.m, <const uint16_t*> datas[i], lengths[i])
                else:
                    rc = _count_marked(&self.st, &sc.tb, &ms.r, &ms.m, <const uint32_t*> datas[i], lengths[i])
                if rc < 0:
                    bad = i
                    break
        PyMem_Free(kinds)
        PyMem_Free(datas)
        PyMem_Free(lengths)
        if rc < 0:
            self.ok = False
            _check_rc(rc, docs[bad])


def mark_counter(Scanner scanner not None, MarkScheme scheme not None, bint collect_runs):
    """A :class:`MarkCounter` counting with (a copy of) ``scheme``."""
    c = MarkCounter(scanner, collect_runs)
    c.set_scheme(scheme.copy())
    return c


# ---- counting pieces given by their ends (SCRIPT's plain grouping) -------------------------------------------------

cdef int _count_ends(CountState* st, const Tables* tb, const char_t* s, const int64_t* ends,
                     int64_t n_ends) noexcept nogil:
    """Count the pieces ``s[ends[k - 1]:ends[k]]`` of one text (and their letter runs) through the default counter's
    window (``_count_window``); -1 when out of memory."""
    cdef int64_t j = 0, k, q, start = 0
    st.run_len = 0
    while j < n_ends:
        k = min(<int64_t> WINDOW, n_ends - j)
        for q in range(k):
            st.ends[q] = ends[j + q]
        if _count_window(st, tb, s, start, k) < 0:
            return -1
        start = ends[j + k - 1]
        j += k
    if st.collect_runs and _end_run(st) < 0:
        return -1
    return 0


cdef class EndsCounter(Counter):
    """The :class:`Counter` (same table, letter flags and runs, merge, export) for pieces a pre-tokenizer gives as
    end offsets: :meth:`add_ends` counts, without the GIL, the pieces ``text[ends[k - 1]:ends[k]]``. SCRIPT's
    plain grouping (``fastsw.pretokenizers.script_v3``: a Numba kernel makes the ends) counts its characters this way and spells
    the distinct pieces once at the end."""

    def add_ends(self, list texts, list ends, list originals):
        """Count the pieces of every ``texts[i]`` cut at ``ends[i]`` (``int64`` arrays, the last equal to the
        text's length); ``originals[i]`` is the document ``texts[i]`` came from (its UTF-8 bytes are counted)."""
        cdef Py_ssize_t n = len(texts), i
        cdef int rc = 0
        cdef const int64_t[::1] e
        if len(ends) != n or len(originals) != n:
            raise ValueError("texts, ends and originals must have the same length")
        if not self.ok:
            raise RuntimeError("this Counter ran out of memory earlier; its counts are incomplete")
        for i in range(n):
            if type(texts[i]) is not str or type(originals[i]) is not str:
                raise TypeError("texts and originals must be str")
        cdef int* kinds = <int*> PyMem_Malloc(max(n, 1) * sizeof(int) * 2)
        cdef void** datas = <void**> PyMem_Malloc(max(n, 1) * sizeof(void*) * 2)
        cdef int64_t* lengths = <int64_t*> PyMem_Malloc(max(n, 1) * sizeof(int64_t) * 3)
        cdef const int64_t** eps = <const int64_t**> PyMem_Malloc(max(n, 1) * sizeof(int64_t*))
        if kinds == NULL or datas == NULL or lengths == NULL or eps == NULL:
            PyMem_Free(kinds); PyMem_Free(datas); PyMem_Free(lengths); PyMem_Free(eps)
            raise MemoryError()
        try:
            for i in range(n):
                e = ends[i]
                t = texts[i]
                o = originals[i]
                kinds[i], datas[i], lengths[i] = PyUnicode_KIND(t), PyUnicode_DATA(t), PyUnicode_GET_LENGTH(t)
                kinds[n + i], datas[n + i], lengths[n + i] = PyUnicode_KIND(o), PyUnicode_DATA(o), \
                    PyUnicode_GET_LENGTH(o)
                lengths[2 * n + i] = e.shape[0]
                if (e[e.shape[0] - 1] if e.shape[0] else 0) != lengths[i]:
                    raise ValueError(f"the ends of text {i} do not end at its length")
                eps[i] = &e[0] if e.shape[0] else NULL
            with nogil:  # ``texts``, ``originals`` and ``ends`` keep every buffer alive
                for i in range(n):
                    self.st.n_documents += 1
                    if kinds[n + i] == PyUnicode_1BYTE_KIND:
                        self.st.n_bytes += _utf8_length(<const uint8_t*> datas[n + i], lengths[n + i])
                    elif kinds[n + i] == PyUnicode_2BYTE_KIND:
                        self.st.n_bytes += _utf8_length(<const uint16_t*> datas[n + i], lengths[n + i])
                    else:
                        self.st.n_bytes += _utf8_length(<const uint32_t*> datas[n + i], lengths[n + i])
                    if lengths[2 * n + i] == 0:
                        continue
                    if kinds[i] == PyUnicode_1BYTE_KIND:
                        rc = _count_ends(&self.st, &self.scanner.tb, <const uint8_t*> datas[i], eps[i],
                                         lengths[2 * n + i])
                    elif kinds[i] == PyUnicode_2BYTE_KIND:
                        rc = _count_ends(&self.st, &self.scanner.tb, <const uint16_t*> datas[i], eps[i],
                                         lengths[2 * n + i])
                    else:
                        rc = _count_ends(&self.st, &self.scanner.tb, <const uint32_t*> datas[i], eps[i],
                                         lengths[2 * n + i])
                    if rc < 0:
                        break
        finally:
            PyMem_Free(kinds); PyMem_Free(datas); PyMem_Free(lengths); PyMem_Free(eps)
        if rc < 0:
            self.ok = False
            raise MemoryError("out of memory while counting")
