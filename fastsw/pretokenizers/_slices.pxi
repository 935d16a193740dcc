# Included by _pretok.pyx after the Scanner class: the fast encoder's input in one call per slice of documents.
#
# ``scan_utf8(scanner, texts)`` does, for a list of documents, what the encoder's driver did in Python per
# document: the pretoken end offsets (``Scanner.pretoken_ends``), the documents' UTF-8 bytes
# (``"".join(texts).encode("utf-8")``) and the code point -> byte conversion of the ends (which the kernel did by
# walking UTF-8 lead bytes). One pass per document, all of it with the GIL released, so the threads of a batch
# run it in parallel (the former per-document path held the GIL for a ``PyMem_Malloc``, a copy into a new numpy
# array and the UTF-8 encode). Its plain-Python twin is ``fastsw.encoding.encode_fast.pieces_reference`` (the pretokens
# of ``Pretokenizer.pretokenize_reference``, the ``regex`` path, their ends as byte offsets from the lengths of
# their UTF-8, and ``str.encode``); tests/test_encode_slices.py asserts equal arrays on every corpus language and
# Hypothesis text.

from cpython.bytes cimport PyBytes_FromStringAndSize  # Cython's own declaration (also cimported by _boundary.pxi)


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    char* PyBytes_AS_STRING(object o)
    object PyByteArray_FromStringAndSize(const char* v, Py_ssize_t n)
    char* PyByteArray_AS_STRING(object o)


cdef inline Py_ssize_t _utf8_size(const char_t* s, Py_ssize_t n) noexcept nogil:
    """The UTF-8 length of ``s[0:n]`` (a lone surrogate counts 3 bytes; :func:`_utf8_ends` rejects it)."""
    cdef Py_ssize_t i, total = n
    cdef uint32_t c
    for i in range(n):
        c = s[i]
        total += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
    return total


cdef Py_ssize_t _utf8_ends(const char_t* s, int64_t* ends, Py_ssize_t count, uint8_t* out) noexcept nogil:
    """Write the UTF-8 of the code points up to ``ends[count - 1]`` to ``out`` and turn each of ``ends[0:count]``
    (code point offsets) into the byte offset it stands for. Returns the bytes written, or -1 at a lone
    surrogate (not encodable; the driver then names it)."""
    cdef Py_ssize_t i = 0, k, w = 0, e
    cdef uint32_t c
    for k in range(count):
        e = ends[k]
        while i < e:
            c = s[i]
            i += 1
            if c < 0x80:
                out[w] = <uint8_t> c
                w += 1
            elif c < 0x800:
                out[w] = <uint8_t> (0xC0 | (c >> 6))
                out[w + 1] = <uint8_t> (0x80 | (c & 0x3F))
                w += 2
            elif c < 0x10000:
                if 0xD800 <= c < 0xE000:
                    return -1
                out[w] = <uint8_t> (0xE0 | (c >> 12))
                out[w + 1] = <uint8_t> (0x80 | ((c >> 6) & 0x3F))
                out[w + 2] = <uint8_t> (0x80 | (c & 0x3F))
                w += 3
            else:
                out[w] = <uint8_t> (0xF0 | (c >> 18))
                out[w + 1] = <uint8_t> (0x80 | ((c >> 12) & 0x3F))
                out[w + 2] = <uint8_t> (0x80 | ((c >> 6) & 0x3F))
                out[w + 3] = <uint8_t> (0x80 | (c & 0x3F))
                w += 4
        ends[k] = w
    return w


cdef Py_ssize_t _utf8_ends_sparse(const char_t* s, Py_ssize_t n, int64_t* ends, Py_ssize_t count, uint8_t* out,
                                  int64_t* wide) noexcept nogil:
    """:func:`_utf8_ends` for a text whose code points are mostly ASCII (``wide`` has room for one slot per
    non-ASCII code point): the text is encoded as a whole, ASCII eight bytes (1-byte kind) or four code points
    (2-byte kind) at a time, recording where the non-ASCII code points are; then each end moves by the extra
    bytes of the non-ASCII code points before it. No per-code-point or per-pretoken loop with an unpredictable
    trip count where the text is ASCII (measured on English with a few curly quotes: 2.9 -> 0.9 ns per code
    point for the conversion, against 4.3 ns for the scan)."""
    cdef Py_ssize_t i = 0, w = 0, k, e, nw = 0, q = 0
    cdef int64_t extra = 0
    cdef unsigned long long x
    cdef uint32_t c, packed
    while i < n:
        if char_t is uint8_t:
            if i + 8 <= n:
                memcpy(&x, s + i, 8)
                if (x & 0x8080808080808080ULL) == 0:
                    memcpy(out + w, &x, 8)
                    i += 8
                    w += 8
                    continue
        elif char_t is uint16_t:
            if i + 4 <= n:
                memcpy(&x, s + i, 8)
                if (x & 0xFF80FF80FF80FF80ULL) == 0:
                    packed = <uint32_t> ((x & 0xFFULL) | ((x >> 8) & 0xFF00ULL) | ((x >> 16) & 0xFF0000ULL)
                                         | ((x >> 24) & 0xFF000000ULL))
                    memcpy(out + w, &packed, 4)
                    i += 4
                    w += 4
                    continue
        c = s[i]
        if c < 0x80:
            out[w] = <uint8_t> c
            w += 1
        else:
            wide[nw] = i
            nw += 1
            if c < 0x800:
                out[w] = <uint8_t> (0xC0 | (c >> 6))
                out[w + 1] = <uint8_t> (0x80 | (c & 0x3F))
                w += 2
            elif c < 0x10000:
                if 0xD800 <= c < 0xE000:
                    return -1
                out[w] = <uint8_t> (0xE0 | (c >> 12))
                out[w + 1] = <uint8_t> (0x80 | ((c >> 6) & 0x3F))
                out[w + 2] = <uint8_t> (0x80 | (c & 0x3F))
                w += 3
            else:
                out[w] = <uint8_t> (0xF0 | (c >> 18))
                out[w + 1] = <uint8_t> (0x80 | ((c >> 12) & 0x3F))
                out[w + 2] = <uint8_t> (0x80 | ((c >> 6) & 0x3F))
                out[w + 3] = <uint8_t> (0x80 | (c & 0x3F))
                w += 4
        i += 1
    for k in range(count):
        e = ends[k]
        while q < nw and wide[q] < e:
            c = s[wide[q]]
            extra += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
            q += 1
        ends[k] = e + extra
    return w


cdef Py_ssize_t _scan_any(Scanner sc, const char_t* s, Py_ssize_t n, int64_t* ends) noexcept nogil:
    """``Scanner._ends`` on raw code units: the pretoken ends of ``s[0:n]`` written to ``ends`` (one slot per code
    point), in the scanner's mode; returns how many, or -1 when out of memory (script chunks)."""
    cdef int64_t whole[2]
    cdef uint8_t main_only = 0
    cdef Chunks chunks
    cdef Py_ssize_t n_chunks, count = 0
    if n == 0:
        return 0
    if sc.pattern == 1:
        return _scan_cl100k(s, &sc.tb, n, ends)
    if not sc.script_chunking:
        whole[0] = 0
        whole[1] = n
        return _scan(s, &sc.tb, whole, &main_only, 1, ends)
    chunks.bounds = NULL
    chunks.specific = NULL
    chunks.capacity = 0
    n_chunks = _script_chunks(s, n, sc.scripts, sc.specific_by_script, &chunks)
    if n_chunks >= 0:
        count = _scan(s, &sc.tb, chunks.bounds, chunks.specific, n_chunks, ends)
    free(chunks.bounds)
    free(chunks.specific)
    return count if n_chunks >= 0 else -1


cdef Py_ssize_t _one_doc(Scanner sc, int kind, const void* data, Py_ssize_t n, Py_ssize_t size, bint ascii,
                         int64_t* ends, uint8_t* out) noexcept nogil:
    """Scan one document and write its UTF-8 to ``out``; its ends become byte offsets. Returns the number of
    pretokens, -1 out of memory, -2 pretokens that do not end at the text's end, -3 a lone surrogate."""
    cdef Py_ssize_t count, w
    if kind == PyUnicode_1BYTE_KIND:
        count = _scan_any(sc, <const uint8_t*> data, n, ends)
    elif kind == PyUnicode_2BYTE_KIND:
        count = _scan_any(sc, <const uint16_t*> data, n, ends)
    else:
        count = _scan_any(sc, <const uint32_t*> data, n, ends)
    if count < 0:
        return -1
    if (ends[count - 1] if count else 0) != n:
        return -2
    if ascii:  # the code units are the UTF-8 bytes and the ends are byte offsets already
        memcpy(out, data, n)
        return count
    cdef int64_t* wide
    if 8 * (size - n) <= n:  # at most one code point in eight is not ASCII (size - n bounds their number)
        wide = <int64_t*> malloc(max(size - n, 1) * sizeof(int64_t))
        if wide == NULL:
            return -1
        if kind == PyUnicode_1BYTE_KIND:
            w = _utf8_ends_sparse(<const uint8_t*> data, n, ends, count, out, wide)
        elif kind == PyUnicode_2BYTE_KIND:
            w = _utf8_ends_sparse(<const uint16_t*> data, n, ends, count, out, wide)
        else:
            w = _utf8_ends_sparse(<const uint32_t*> data, n, ends, count, out, wide)
        free(wide)
    elif kind == PyUnicode_1BYTE_KIND:
        w = _utf8_ends(<const uint8_t*> data, ends, count, out)
    elif kind == PyUnicode_2BYTE_KIND:
        w = _utf8_ends(<const uint16_t*> data, ends, count, out)
    else:
        w = _utf8_ends(<const uint32_t*> data, ends, count, out)
    return -3 if w < 0 else count


def scan_utf8(Scanner scanner, list texts):
    """The fast encoder's input for ``texts`` (a list of ``str``): ``(data, ends, doc_pieces)`` with ``data`` the
    documents' UTF-8 bytes concatenated (uint8, read-only: a view of a ``bytes``, at least one byte), ``ends`` every pretoken's end as a *byte*
    offset from the start of its document (int64, documents in order) and ``doc_pieces`` (int64, ``len(texts) + 1``)
    the offsets of each document's pretokens in ``ends``. Returns None when a text holds a lone surrogate (not
    encodable as UTF-8; the caller reports it). The GIL is released for the scans and the encoding.

    >>> scan_utf8(Pretokenizer(mode="simple")._any_scanner(), ["Hi there", "é"])  # doctest: +SKIP
    (array([72, 105, 32, 116, 104, 101, 114, 101, 195, 169], dtype=uint8), array([2, 8, 2]), array([0, 2, 3]))
    """
    cdef tuple docs = tuple(texts)  # our own references: the strings stay alive while the GIL is released
    cdef Py_ssize_t n_docs = len(docs), d, n, total_cp = 0, total_bytes = 0
    cdef str text
    for d in range(n_docs):
        if type(docs[d]) is not str:
            raise TypeError(f"encode expects str, got {type(docs[d]).__name__}")
    cdef int* kinds = <int*> PyMem_Malloc(max(n_docs, 1) * sizeof(int))
    cdef const void** datas = <const void**> PyMem_Malloc(max(n_docs, 1) * sizeof(void*))
    cdef Py_ssize_t* lengths = <Py_ssize_t*> PyMem_Malloc(max(n_docs, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* sizes = <Py_ssize_t*> PyMem_Malloc(max(n_docs, 1) * sizeof(Py_ssize_t))
    cdef uint8_t* asciis = <uint8_t*> PyMem_Malloc(max(n_docs, 1))
    cdef int status = 0
    cdef uint8_t* out
    try:
        if kinds == NULL or datas == NULL or lengths == NULL or sizes == NULL or asciis == NULL:
            raise MemoryError()
        for d in range(n_docs):
            text = docs[d]
            kinds[d] = PyUnicode_KIND(text)
            datas[d] = PyUnicode_DATA(text)
            lengths[d] = PyUnicode_GET_LENGTH(text)
            asciis[d] = PyUnicode_IS_ASCII(text)
            total_cp += lengths[d]
        with nogil:
            for d in range(n_docs):
                n = lengths[d]
                if asciis[d]:
                    sizes[d] = n
                elif kinds[d] == PyUnicode_1BYTE_KIND:
                    sizes[d] = _utf8_size(<const uint8_t*> datas[d], n)
                elif kinds[d] == PyUnicode_2BYTE_KIND:
                    sizes[d] = _utf8_size(<const uint16_t*> datas[d], n)
                else:
                    sizes[d] = _utf8_size(<const uint32_t*> datas[d], n)
                total_bytes += sizes[d]
        # a fresh bytes object is writable until published (np.frombuffer of it is read-only, as the kernel's
        # one signature wants); doc_pieces and the ends share one bytearray. No typed memoryviews: acquiring
        # them cost more than a short document's scan.
        data = PyBytes_FromStringAndSize(NULL, max(total_bytes, 1))
        out = <uint8_t*> PyBytes_AS_STRING(data)
        out[0] = 0
        offsets = PyByteArray_FromStringAndSize(NULL, (n_docs + 1 + max(total_cp, 1)) * sizeof(int64_t))
        status = _fill_slice(scanner, n_docs, kinds, datas, lengths, sizes, asciis, out,
                             (<int64_t*> PyByteArray_AS_STRING(offsets)) + n_docs + 1,
                             <int64_t*> PyByteArray_AS_STRING(offsets))
    finally:
        PyMem_Free(kinds)
        PyMem_Free(datas)
        PyMem_Free(lengths)
        PyMem_Free(sizes)
        PyMem_Free(asciis)
    if status == -1:
        raise MemoryError()
    if status == -2:
        raise RuntimeError("the pre-tokenizer's pretokens do not concatenate back to the text; "
                           "this is a bug in the pre-tokenizer (encode with backend='python')")
    if status == -3:
        return None
    both = np.frombuffer(offsets, np.int64)
    return np.frombuffer(data, np.uint8), both[n_docs + 1:n_docs + 1 + both[n_docs]], both[:n_docs + 1]


cdef int _fill_slice(Scanner scanner, Py_ssize_t n_docs, const int* kinds, const void** datas,
                     const Py_ssize_t* lengths, const Py_ssize_t* sizes, const uint8_t* asciis, uint8_t* out, int64_t* e,
                     int64_t* doc_pieces) noexcept:
    """The scans and encodings of :func:`scan_utf8` into its buffers, without the GIL; 0 or the first error of
    :func:`_one_doc` (-1, -2, -3)."""
    cdef Py_ssize_t d, count, filled = 0, w = 0
    cdef int status = 0
    doc_pieces[0] = 0
    with nogil:
        for d in range(n_docs):
            # a document's pretokens go right after the previous document's: filled + lengths[d] <= total code points
            count = _one_doc(scanner, kinds[d], datas[d], lengths[d], sizes[d], asciis[d], e + filled, out + w)
            if count < 0:
                status = <int> count
                break
            if count:
                w += e[filled + count - 1]
            filled += count
            doc_pieces[d + 1] = filled
    return status
