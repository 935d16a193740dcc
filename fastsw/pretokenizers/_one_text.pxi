# Included by _pretok.pyx after _slices.pxi: one text to its list of ids in one call, for the fast encoder.
#
# ``OneText(scanner, address, tables, objects, use_super, short_limit).encode(text, shortcut)`` scans ``text`` with
# ``_one_doc`` (what ``scan_utf8`` does per document) into buffers of its own, calls the encoding kernel through the
# C function at ``address`` (``fastsw.encoding.c_entry``: the Numba kernel ``_encode_docs`` behind a C signature over
# pointers), and returns the ids as a list of the shared ``int`` objects. No numpy array is made and the Numba
# dispatcher is not involved: on a short text those fixed costs were larger than the scan and the merges together.
# Its reference is the driver's path through ``scan_utf8`` and the dispatcher
# (``fastsw.encoding.encode_fast.FastEncoder.encode`` with ``USE_ONE_TEXT = False``); tests assert equal ids.

from libc.stdint cimport uint64_t

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_FindChar(str text, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2
    Py_UCS4 PyUnicode_READ_CHAR(str text, Py_ssize_t index)

ctypedef int64_t (*one_text_kernel)(const uint8_t* text, int64_t n_text, const int64_t* ends,
                                    const int64_t* doc_pieces, const int32_t* byte_ids,
                                    const int64_t* sc_short, int64_t n_sc_short, const int64_t* sc_long,
                                    int64_t n_sc_long, const uint8_t* tb, int64_t n_tb, const int64_t* r_table,
                                    int64_t n_r_table, const int64_t* s_table, int64_t n_s_table,
                                    const uint64_t* s_bits, int64_t n_s_bits, const uint8_t* flags, int64_t n_flags,
                                    const int64_t* chars, int64_t n_chars, int64_t use_shortcut, int64_t use_super,
                                    int64_t short_limit, int32_t* out) noexcept nogil

cdef list _id_list(const int32_t* ids, Py_ssize_t n, list objects):
    """``[objects[i] for i in ids[0:n]]`` (a reference copy per id, no new ``int``); IndexError for an id outside
    ``objects``."""
    cdef Py_ssize_t m = len(objects), k
    cdef PyObject* p
    for k in range(n):
        if ids[k] < 0 or ids[k] >= m:
            raise IndexError(f"token id {ids[k]} is outside the vocabulary (0..{m - 1})")
    cdef list out = PyList_New(n)
    for k in range(n):
        p = PyList_GET_ITEM(objects, ids[k])
        Py_INCREF(<object>p)
        PyList_SET_ITEM(out, k, <object>p)
    return out


cdef class TextCache:
    """Short texts -> their ids (tuples), kept by ``OneText`` for the texts of at most ``chars`` characters it
    encodes with the shortcut on. A text is kept the second time it is seen: the first time it only goes into
    ``seen`` (a set of texts, cleared when it holds ``4 * limit``), so a stream of distinct texts costs a dict and
    a set lookup per call and never the copy of its ids, and a text that repeats is a dict lookup from its second
    call on. At most ``limit`` texts (``texts``); when full it is cleared. The rule of the tokenizer's
    ``_TextCache`` (the twin, for encoders without a ``OneText``), done here without a Python call.

    >>> c = TextCache(4, 128); c.remember("hi", [1, 2]); c.get("hi")
    >>> c.remember("hi", [1, 2]); c.get("hi")
    (1, 2)
    """
    cdef readonly dict texts
    cdef readonly set seen
    cdef readonly Py_ssize_t limit, chars

    def __cinit__(self, Py_ssize_t limit, Py_ssize_t chars):
        if limit < 1 or chars < 0:
            raise ValueError("limit must be >= 1 and chars >= 0")
        self.texts = {}
        self.seen = set()
        self.limit = limit
        self.chars = chars

    cpdef object get(self, str text):
        """The ids of ``text`` (a tuple) if kept, else None."""
        return self.texts.get(text)

    cpdef remember(self, str text, list ids):
        """Note ``text``, whose ids are ``ids``; keep them if it was noted before."""
        if text not in self.seen:
            if len(self.seen) >= 4 * self.limit:
                self.seen.clear()
            self.seen.add(text)
            return
        if len(self.texts) >= self.limit:
            self.texts.clear()
        self.texts[text] = tuple(ids)


cdef enum:
    ONE_TEXT_STACK = 256  # code points whose buffers fit on the stack; a longer text's are allocated


cdef class OneText:
    """A model's encoder of one text per call (``fastsw.encoding.encode_fast.FastEncoder.encode``).

    ``OneText(scanner, address, tables, objects, use_super, short_limit)``: the compiled ``Scanner``, the address
    of ``fastsw.encoding.c_entry``'s C function, the kernel's model tables in its order (``byte_ids`` int32 of
    256, ``sc_short``, ``sc_long`` int64, ``tb`` uint8, ``r_table``, ``s_table`` int64, ``s_bits`` uint64,
    ``flags`` uint8, ``chars`` int64; all contiguous, kept alive here), the list of ``int`` objects by id,
    and the kernel's switches.
    """
    cdef Scanner scanner
    cdef one_text_kernel kernel
    cdef object _keep  # the tables and the id objects, alive while this object is
    cdef list objects
    cdef const int32_t* byte_ids
    cdef const int64_t* sc_short
    cdef const int64_t* sc_long
    cdef const uint8_t* tb
    cdef const int64_t* r_table
    cdef const int64_t* s_table
    cdef const uint64_t* s_bits
    cdef const uint8_t* flags
    cdef const int64_t* chars
    cdef int64_t n_sc_short, n_sc_long, n_tb, n_r_table, n_s_table, n_s_bits, n_flags, n_chars
    cdef int64_t use_super, short_limit
    cdef readonly TextCache cache  # None: no whole-text cache

    def __cinit__(self, Scanner scanner, size_t address, tuple tables, list objects, int64_t use_super,
                  int64_t short_limit, TextCache cache=None):
        if address == 0:
            raise ValueError("address must be the kernel's C function (fastsw.encoding.c_entry.address())")
        if len(tables) != 9:
            raise ValueError("tables must be the kernel's nine model tables, in its order")
        cdef const int32_t[::1] byte_ids = tables[0]
        cdef const int64_t[::1] sc_short = tables[1]
        cdef const int64_t[::1] sc_long = tables[2]
        cdef const uint8_t[::1] tb = tables[3]
        cdef const int64_t[::1] r_table = tables[4]
        cdef const int64_t[::1] s_table = tables[5]
        cdef const uint64_t[::1] s_bits = tables[6]
        cdef const uint8_t[::1] flags = tables[7]
        cdef const int64_t[::1] chars = tables[8]
        if byte_ids.shape[0] != 256:
            raise ValueError("byte_ids must have 256 entries")
        self.scanner = scanner
        self.kernel = <one_text_kernel> address
        self._keep = (tables, objects)
        self.objects = objects
        self.byte_ids = &byte_ids[0]
        self.sc_short, self.n_sc_short = &sc_short[0], sc_short.shape[0]
        self.sc_long, self.n_sc_long = &sc_long[0], sc_long.shape[0]
        self.tb, self.n_tb = &tb[0], tb.shape[0]
        self.r_table, self.n_r_table = &r_table[0], r_table.shape[0]
        self.s_table, self.n_s_table = &s_table[0], s_table.shape[0]
        self.s_bits, self.n_s_bits = &s_bits[0], s_bits.shape[0]
        self.flags, self.n_flags = &flags[0], flags.shape[0]
        self.chars, self.n_chars = &chars[0], chars.shape[0]
        self.use_super = use_super
        self.short_limit = short_limit
        self.cache = cache

    cdef Py_ssize_t _run(self, int kind, const void* data, Py_ssize_t n, Py_ssize_t size, bint ascii, int64_t* ends,
                         uint8_t* utf8, int32_t* ids, bint shortcut) noexcept nogil:
        """Scan ``n`` code units into ``ends`` and ``utf8`` (``_one_doc``) and run the kernel into ``ids``: the number
        of ids, or ``_one_doc``'s error (-1, -2, -3)."""
        cdef int64_t doc_pieces[2]
        cdef Py_ssize_t count = _one_doc(self.scanner, kind, data, n, size, ascii, ends, utf8)
        if count < 0:
            return count
        doc_pieces[0] = 0
        doc_pieces[1] = count
        return self.kernel(utf8, size, ends, doc_pieces, self.byte_ids, self.sc_short, self.n_sc_short, self.sc_long,
                           self.n_sc_long, self.tb, self.n_tb, self.r_table, self.n_r_table, self.s_table,
                           self.n_s_table, self.s_bits, self.n_s_bits, self.flags, self.n_flags, self.chars,
                           self.n_chars, shortcut, self.use_super, self.short_limit, ids)

    def encode(self, str text, bint shortcut=True, str stops=None):
        """The ids of ``text`` (a list of ``int``), or None when it holds a lone surrogate (not encodable as
        UTF-8; the caller reports it). With ``stops``: False, and no encoding, when ``text`` holds any of its
        characters (the first characters of the special tokens that ``encode`` must look for). A short text
        with the shortcut on goes through ``cache`` (when given)."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), k
        cdef object ids
        if stops is not None:
            for k in range(PyUnicode_GET_LENGTH(stops)):
                if PyUnicode_FindChar(text, PyUnicode_READ_CHAR(stops, k), 0, n, 1) != -1:
                    return False
        cdef TextCache cache = self.cache
        if cache is None or not shortcut or n > cache.chars:
            return self._encode(text, n, shortcut)
        ids = cache.texts.get(text)
        if ids is not None:
            return list(<tuple> ids)
        ids = self._encode(text, n, shortcut)
        if ids is not None:
            cache.remember(text, <list> ids)
        return ids

    cdef object _encode(self, str text, Py_ssize_t n, bint shortcut):
        """:meth:`encode` without the stops and the cache."""
        cdef Py_ssize_t size, m
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* data = PyUnicode_DATA(text)
        cdef bint ascii = PyUnicode_IS_ASCII(text)
        cdef int64_t ends_stack[ONE_TEXT_STACK]
        cdef uint8_t bytes_stack[4 * ONE_TEXT_STACK + 8]
        cdef int32_t ids_stack[4 * ONE_TEXT_STACK + 8]
        cdef int64_t* ends = ends_stack
        cdef uint8_t* utf8 = bytes_stack
        cdef int32_t* ids = ids_stack
        if n == 0:
            return []
        if ascii:
            size = n
        elif kind == PyUnicode_1BYTE_KIND:
            size = _utf8_size(<const uint8_t*> data, n)
        elif kind == PyUnicode_2BYTE_KIND:
            size = _utf8_size(<const uint16_t*> data, n)
        else:
            size = _utf8_size(<const uint32_t*> data, n)
        if n > ONE_TEXT_STACK:
            ends = <int64_t*> PyMem_Malloc(n * sizeof(int64_t))
            utf8 = <uint8_t*> PyMem_Malloc(size)
            ids = <int32_t*> PyMem_Malloc(size * sizeof(int32_t))
        try:
            if ends == NULL or utf8 == NULL or ids == NULL:
                raise MemoryError()
            if n > ONE_TEXT_STACK:  # a longer text: other threads run meanwhile (the kernel's nogil)
                with nogil:
                    m = self._run(kind, data, n, size, ascii, ends, utf8, ids, shortcut)
            else:  # a short one: releasing the GIL would cost more than it lets others do
                m = self._run(kind, data, n, size, ascii, ends, utf8, ids, shortcut)
            if m == -1:
                raise MemoryError()
            if m == -2:
                raise RuntimeError("the pre-tokenizer's pretokens do not concatenate back to the text; "
                                   "this is a bug in the pre-tokenizer (encode with backend='python')")
            if m == -3:
                return None
            return _id_list(ids, m, self.objects)
        finally:
            if n > ONE_TEXT_STACK:
                PyMem_Free(ends)
                PyMem_Free(utf8)
                PyMem_Free(ids)
