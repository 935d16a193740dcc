# Included by _pretok.pyx: the compiled counter (pre-tokenize and count without Python objects).
#
# ``fastsw.corpus.counting.count_corpus_reference`` is the readable specification: a ``Counter`` fed the
# same documents holds the same multiset of (pretoken, count) and of (letter run, count).
#
# Design notes: see docs/internals.md, section "Counting".

from libc.stdlib cimport malloc
from libc.string cimport memcpy
from libc.stdint cimport int32_t, uint64_t

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)

cdef extern from *:
    """
    #if defined(__linux__)
    #include <sys/mman.h>
    #endif
    /* Ask for transparent huge pages on the 2 MB-aligned part of a block of at least 4 MB (as numpy does for
       its arrays); a no-op where the system has no such advice. */
    static void fastsw_advise_huge(void* p, size_t n) {
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        const size_t huge = (size_t)1 << 21;
        size_t start, end;
        if (p == NULL || n < 2 * huge) return;
        start = ((size_t)p + huge - 1) & ~(huge - 1);
        end = ((size_t)p + n) & ~(huge - 1);
        if (end > start) madvise((void*)start, end - start, MADV_HUGEPAGE);
    #else
        (void)p; (void)n;
    #endif
    }
    """
    # A table's slots are probed at random: on 4 KB pages nearly every probe of a large table misses the TLB.
    # Called on the slots when they are allocated (they are never grown in place; the arrays that grow by
    # realloc are left alone, since moving a block can split its huge pages).
    void fastsw_advise_huge(void* p, size_t n) nogil

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FASTSW_COUNT_PREFETCH(p) __builtin_prefetch(p)
    #else
    #define FASTSW_COUNT_PREFETCH(p) ((void)(p))
    #endif
    """
    void FASTSW_COUNT_PREFETCH(const void* p) nogil


cdef struct SeqTable:
    uint32_t* items      # the sequences, concatenated
    int64_t n_items
    int64_t items_cap
    int64_t* offsets     # entry e is items[offsets[e]:offsets[e + 1]]
    int64_t* counts
    uint64_t* hashes     # the key of each entry (see _hash_seq)
    int64_t n            # entries
    int64_t cap          # capacity of offsets (cap + 1), counts, hashes
    uint64_t* slots      # (tag << 32) | entry number, or all ones when empty (see _table_find_or_add)
    int64_t n_slots      # a power of two


# A slot holds the entry number in its low 32 bits and, above them, a tag: the high 32 bits of the
# mixed key, whose low bits chose the slot. A probe compares the tag in the slot it already read and
# looks at the entry's key (another cache line, often another page) only when the tags agree, so a
# new sequence -- most letter runs -- costs one cache miss instead of one per occupied slot passed.
# EMPTY_SLOT: all ones (entry 0xFFFFFFFF, never used: at most 0xFFFFFFFE entries)


cdef int _table_init(SeqTable* t) noexcept nogil:
    t.items_cap = 1024
    t.cap = 256
    t.n_slots = 1024
    t.n_items = 0
    t.n = 0
    t.items = <uint32_t*> malloc(t.items_cap * sizeof(uint32_t))
    t.offsets = <int64_t*> malloc((t.cap + 1) * sizeof(int64_t))
    t.counts = <int64_t*> malloc(t.cap * sizeof(int64_t))
    t.hashes = <uint64_t*> malloc(t.cap * sizeof(uint64_t))
    t.slots = <uint64_t*> malloc(t.n_slots * sizeof(uint64_t))
    if t.items == NULL or t.offsets == NULL or t.counts == NULL or t.hashes == NULL or t.slots == NULL:
        return -1
    memset(t.slots, 0xFF, t.n_slots * sizeof(uint64_t))
    t.offsets[0] = 0
    return 0


cdef void _table_free(SeqTable* t) noexcept nogil:
    free(t.items)
    free(t.offsets)
    free(t.counts)
    free(t.hashes)
    free(t.slots)
    t.items = NULL
    t.offsets = NULL
    t.counts = NULL
    t.hashes = NULL
    t.slots = NULL


cdef inline uint64_t _mix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    return h


cdef inline uint64_t _hash_seq(const char_t* s, Py_ssize_t n) noexcept nogil:
    """The key of the values ``s[0:n]`` (the same for every storage type holding the same values).

    A short sequence (at most 7 values, each < 256: most pretokens) is its own key: the values
    packed into bytes with the length above them, so equal keys mean equal sequences. Any other
    sequence gets a hash with the top bit set, so it never equals a short key, and equal keys
    must still be confirmed by comparing the values."""
    cdef uint64_t h, packed = 0
    cdef Py_ssize_t i
    if n <= 7:
        for i in range(n):
            if s[i] >= 256:
                break
            packed |= (<uint64_t> s[i]) << (8 * i)
        else:
            return packed | (<uint64_t> n << 56)
    h = 0x9E3779B97F4A7C15ULL ^ <uint64_t> n
    for i in range(n):
        h = ((h << 5) | (h >> 59)) ^ <uint64_t> s[i]
        h *= 0x517cc1b727220a95ULL
    return _mix(h) | 0x8000000000000000ULL


cdef int _table_rehash(SeqTable* t) noexcept nogil:
    cdef int64_t n_slots = 2 * t.n_slots, e, s
    cdef int64_t mask = n_slots - 1
    cdef uint64_t m
    cdef uint64_t* slots = <uint64_t*> malloc(n_slots * sizeof(uint64_t))
    if slots == NULL:
        return -1
    fastsw_advise_huge(slots, n_slots * sizeof(uint64_t))
    memset(slots, 0xFF, n_slots * sizeof(uint64_t))
    for e in range(t.n):
        m = _mix(t.hashes[e])
        s = <int64_t> (m & <uint64_t> mask)
        while slots[s] != 0xFFFFFFFFFFFFFFFFULL:
            s = (s + 1) & mask
        slots[s] = (m & 0xFFFFFFFF00000000ULL) | <uint64_t> e
    free(t.slots)
    t.slots = slots
    t.n_slots = n_slots
    return 0


cdef int64_t _table_find_or_add(SeqTable* t, const char_t* s, Py_ssize_t n, uint64_t h,
                                bint* added) noexcept nogil:
    """The entry holding ``s[0:n]`` (key ``h`` from ``_hash_seq``), appended with count 0 if new
    (``added[0]`` set); -1 when out of memory."""
    cdef int64_t mask = t.n_slots - 1
    cdef uint64_t m = _mix(h)
    cdef uint64_t tag = m & 0xFFFFFFFF00000000ULL, v
    cdef int64_t slot = <int64_t> (m & <uint64_t> mask), e, o, i, cap
    cdef const uint32_t* item
    cdef bint same
    added[0] = False
    while True:
        v = t.slots[slot]
        if v == 0xFFFFFFFFFFFFFFFFULL:
            break
        if (v & 0xFFFFFFFF00000000ULL) != tag:
            slot = (slot + 1) & mask
            continue
        e = <int64_t> (v & 0xFFFFFFFFULL)
        if not (h >> 63):
            if t.hashes[e] == h:
                return e  # a short key is the sequence itself
        elif t.offsets[e + 1] - t.offsets[e] == n:
            # a long key whose tag agrees: the values decide (the entry's stored key would be one more
            # cache miss, and equal values mean equal keys)
            item = t.items + t.offsets[e]
            same = True
            for i in range(n):
                if item[i] != <uint32_t> s[i]:
                    same = False
                    break
            if same:
                return e
        slot = (slot + 1) & mask
    # a new entry
    if t.n_items + n > t.items_cap:
        cap = max(2 * t.items_cap, t.n_items + n)
        item = <uint32_t*> realloc(t.items, cap * sizeof(uint32_t))
        if item == NULL:
            return -1
        t.items = <uint32_t*> item
        t.items_cap = cap
    if t.n >= 0xFFFFFFFELL:
        return -1  # the slots hold 32-bit entry numbers
    if t.n == t.cap:
        cap = 2 * t.cap
        if _realloc64(&t.offsets, cap + 1) < 0 or _realloc64(&t.counts, cap) < 0 \
                or _realloc64(<int64_t**> &t.hashes, cap) < 0:
            return -1
        t.cap = cap
    for i in range(n):
        t.items[t.n_items + i] = <uint32_t> s[i]
    e = t.n
    t.n_items += n
    t.offsets[e + 1] = t.n_items
    t.counts[e] = 0
    t.hashes[e] = h
    t.slots[slot] = tag | <uint64_t> e
    t.n += 1
    added[0] = True
    if 2 * t.n > t.n_slots and _table_rehash(t) < 0:
        return -1
    return e


cdef int _table_presize(SeqTable* t, int64_t n) noexcept nogil:
    """Slots for ``n`` entries at load <= 1/2 in the empty table ``t``; -1 when out of memory."""
    cdef int64_t n_slots = t.n_slots
    cdef uint64_t* slots
    while n_slots < 2 * n:
        n_slots *= 2
    if n_slots == t.n_slots:
        return 0
    slots = <uint64_t*> malloc(n_slots * sizeof(uint64_t))
    if slots == NULL:
        return -1
    fastsw_advise_huge(slots, n_slots * sizeof(uint64_t))
    memset(slots, 0xFF, n_slots * sizeof(uint64_t))
    free(t.slots)
    t.slots = slots
    t.n_slots = n_slots
    return 0


cdef int _realloc64(int64_t** p, int64_t n) noexcept nogil:
    cdef int64_t* q = <int64_t*> realloc(p[0], n * sizeof(int64_t))
    if q == NULL:
        return -1
    p[0] = q
    return 0


cdef class _Block:
    """A ``malloc``'d block that numpy arrays view without a copy (``np.frombuffer``); freed with the last
    array that views it. How a table's arrays leave the C side: a copy would touch every page again (a
    page fault each, and twice the memory until the table is freed)."""
    cdef void* data
    cdef Py_ssize_t nbytes
    cdef Py_ssize_t shape[1]

    def __getbuffer__(self, Py_buffer* buf, int flags):
        self.shape[0] = self.nbytes
        buf.buf = self.data
        buf.obj = self
        buf.len = self.nbytes
        buf.readonly = 0
        buf.itemsize = 1
        buf.format = "B"
        buf.ndim = 1
        buf.shape = self.shape
        buf.strides = NULL
        buf.suboffsets = NULL
        buf.internal = NULL

    def __releasebuffer__(self, Py_buffer* buf):
        pass

    def __dealloc__(self):
        free(self.data)


cdef object _hand_over(void** p, int64_t n, Py_ssize_t itemsize, dtype):
    """The first ``n`` items of the block ``p[0]`` as a numpy array of ``dtype`` that owns the block
    (trimmed to size); ``p[0]`` becomes NULL."""
    cdef void* data = p[0]
    cdef void* trimmed
    p[0] = NULL
    if n == 0:
        free(data)
        return np.empty(0, dtype=dtype)
    trimmed = realloc(data, n * itemsize)
    if trimmed != NULL:
        data = trimmed
    cdef _Block block = _Block.__new__(_Block)
    block.data = data
    block.nbytes = n * itemsize
    return np.frombuffer(block, dtype=dtype)


cdef tuple _take_table(SeqTable* t):
    """``(items as int32, offsets, counts)`` of ``t`` without copying; ``t`` is left empty (initialised again),
    or freed (all NULL) when memory ran out."""
    free(t.slots)
    free(t.hashes)
    t.slots = NULL
    t.hashes = NULL
    items = _hand_over(<void**> &t.items, t.n_items, sizeof(uint32_t), np.int32)
    offsets = _hand_over(<void**> &t.offsets, t.n + 1, sizeof(int64_t), np.int64)
    counts = _hand_over(<void**> &t.counts, t.n, sizeof(int64_t), np.int64)
    if _table_init(t) < 0:
        _table_free(t)
        raise MemoryError()
    return items, offsets, counts


cdef enum:
    CACHE_SLOTS = 16384  # a power of two: the slot is the top CACHE_BITS bits of a hash; 256 KB, within L2
    CACHE_SHIFT = 50  # 64 - CACHE_BITS (14)
    WINDOW = 4096  # pretokens matched before they are counted (80 KB of scratch, whatever the document)
    AHEAD = 8  # the pretoken table's slot of the pretoken this many ahead is fetched while one is counted
    RUN_AHEAD = 16  # aggregate_runs: the single_token entry of the run position this many ahead is fetched


cdef struct CountState:
    SeqTable pre         # pretokens (code points) and their counts
    uint8_t* letter      # per pretoken: 1 when it contains a \p{L}
    int64_t letter_cap
    SeqTable runs        # letter runs (pretoken indices) and their counts, as a list (_list_append)
    bint collect_runs
    int64_t ends[WINDOW]        # scratch: pretoken ends of the current window
    uint32_t window_ids[WINDOW]  # scratch: their pretoken indices
    uint64_t window_keys[WINDOW]  # scratch: their keys (_hash_seq)
    uint32_t* ids        # scratch: the pretoken indices of the current letter run
    int64_t ids_cap
    int64_t run_len
    Chunks chunks        # scratch: script chunks of one document
    int64_t n_documents
    int64_t n_bytes
    uint64_t cache_key[CACHE_SLOTS]   # a direct-mapped cache of keys -> pretoken entries, so the most
    int64_t cache_entry[CACHE_SLOTS]  # frequent pretokens are found without probing the big table


cdef inline int64_t _utf8_length(const char_t* s, Py_ssize_t n) noexcept nogil:
    """UTF-8 length of ``s[0:n]`` (a lone surrogate counts 3 bytes, as with 'surrogatepass')."""
    cdef int64_t total = n
    cdef Py_ssize_t i
    cdef uint32_t c
    for i in range(n):
        c = s[i]
        total += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)
    return total


cdef inline int64_t _add_pretoken(CountState* st, const Tables* tb, const char_t* s, Py_ssize_t n) noexcept nogil:
    """Count one occurrence of the pretoken ``s[0:n]``; its entry, or -1 when out of memory."""
    return _add_keyed(st, tb, s, n, _hash_seq(s, n))


cdef inline Py_ssize_t _cache_slot(uint64_t h) noexcept nogil:
    """The slot of the key ``h`` in the pretoken cache."""
    return <Py_ssize_t> ((h ^ (h >> 29)) * 0x9E3779B97F4A7C15ULL >> CACHE_SHIFT)


cdef inline int64_t _add_keyed(CountState* st, const Tables* tb, const char_t* s, Py_ssize_t n,
                               uint64_t h) noexcept nogil:
    """:func:`_add_pretoken` given the pretoken's key ``h`` (``_hash_seq(s, n)``).

    The cache holds the last entry seen under each slot. A short key is the pretoken itself; a long one
    (a hash) is confirmed against the entry's code points, which for a frequent pretoken are in cache:
    so a frequent long word costs no probe of the big table's slots and keys either."""
    cdef Py_ssize_t slot = _cache_slot(h)
    cdef int64_t e, i, o
    cdef bint added, same
    cdef uint8_t letter
    cdef const uint32_t* item
    if st.cache_key[slot] == h:
        e = st.cache_entry[slot]
        same = True
        if h >> 63:
            o = st.pre.offsets[e]
            if st.pre.offsets[e + 1] - o != n:
                same = False
            else:
                item = st.pre.items + o
                for i in range(n):
                    if item[i] != <uint32_t> s[i]:
                        same = False
                        break
        if same:
            st.pre.counts[e] += 1
            return e
    e = _table_find_or_add(&st.pre, s, n, h, &added)
    if e < 0:
        return -1
    st.cache_key[slot] = h
    st.cache_entry[slot] = e
    if added:
        letter = 0
        for i in range(n):
            if tb.cls[s[i]] & PT_LETTER:
                letter = 1
                break
        if _new_letter(st, e, letter) < 0:
            return -1
    st.pre.counts[e] += 1
    return e


cdef int _new_letter(CountState* st, int64_t e, uint8_t letter) noexcept nogil:
    """Record the letter flag of the new pretoken entry ``e``; -1 when out of memory."""
    cdef int64_t cap
    cdef uint8_t* grown
    if e >= st.letter_cap:
        cap = 2 * st.letter_cap
        grown = <uint8_t*> realloc(st.letter, cap)
        if grown == NULL:
            return -1
        st.letter = grown
        st.letter_cap = cap
    st.letter[e] = letter
    return 0


cdef int64_t _add_str(SeqTable* t, str s, bint* added) noexcept:
    """``_table_find_or_add`` for the code points of ``s`` (any storage kind)."""
    cdef int kind = PyUnicode_KIND(s)
    cdef void* data = PyUnicode_DATA(s)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s)
    if kind == PyUnicode_1BYTE_KIND:
        return _table_find_or_add(t, <const uint8_t*> data, n, _hash_seq(<const uint8_t*> data, n), added)
    if kind == PyUnicode_2BYTE_KIND:
        return _table_find_or_add(t, <const uint16_t*> data, n, _hash_seq(<const uint16_t*> data, n), added)
    return _table_find_or_add(t, <const uint32_t*> data, n, _hash_seq(<const uint32_t*> data, n), added)


cdef int _add_runs(CountState* st, const uint32_t* items, const int64_t* offsets, const int64_t* counts,
                   int64_t n_runs, const int64_t* remap, int64_t n_remap) noexcept nogil:
    """Add ``n_runs`` letter runs of another table (run ``r``: the pretoken indices
    ``items[offsets[r]:offsets[r + 1]]``, counted ``counts[r]`` times), re-indexed through ``remap``
    (that table's pretoken index -> this one's); -1 when out of memory, -2 for an index outside ``remap``."""
    cdef int64_t r, k, o, m, cap = 0
    cdef uint32_t* buf = NULL
    cdef int rc = 0
    for r in range(n_runs):
        o = offsets[r]
        m = offsets[r + 1] - o
        if m > cap:
            cap = max(m, 2 * cap)
            free(buf)
            buf = <uint32_t*> malloc(cap * sizeof(uint32_t))
            if buf == NULL:
                return -1
        for k in range(m):
            if items[o + k] >= <uint64_t> n_remap:
                rc = -2
                break
            buf[k] = <uint32_t> remap[items[o + k]]
        if rc < 0:
            break
        if _list_append(&st.runs, buf, m, counts[r]) < 0:
            rc = -1
            break
    free(buf)
    return rc


cdef int _list_append(SeqTable* t, const uint32_t* s, int64_t n, int64_t count) noexcept nogil:
    """Append the sequence ``s[0:n]`` with ``count`` to ``t`` used as a plain list (no key, no slot: a letter
    run is appended as it is read and aggregated once, by whoever reads the runs); -1 when out of memory."""
    cdef int64_t cap, i
    cdef uint32_t* grown
    if t.n_items + n > t.items_cap:
        cap = max(2 * t.items_cap, t.n_items + n)
        grown = <uint32_t*> realloc(t.items, cap * sizeof(uint32_t))
        if grown == NULL:
            return -1
        t.items = grown
        t.items_cap = cap
    if t.n == t.cap:
        cap = 2 * t.cap
        if _realloc64(&t.offsets, cap + 1) < 0 or _realloc64(&t.counts, cap) < 0:
            return -1
        t.cap = cap
    for i in range(n):
        t.items[t.n_items + i] = s[i]
    t.n_items += n
    t.counts[t.n] = count
    t.n += 1
    t.offsets[t.n] = t.n_items
    return 0


cdef int _aggregate_list(const SeqTable* src, SeqTable* dst) noexcept nogil:
    """Add the sequences of the list ``src`` (see :func:`_list_append`) to the table ``dst``, each once with
    its count summed (first-seen order); -1 when out of memory."""
    cdef int64_t r, o, e
    cdef bint added
    for r in range(src.n):
        o = src.offsets[r]
        e = _table_find_or_add(dst, src.items + o, src.offsets[r + 1] - o,
                               _hash_seq(src.items + o, src.offsets[r + 1] - o), &added)
        if e < 0:
            return -1
        dst.counts[e] += src.counts[r]
    return 0


cdef inline int _end_run(CountState* st) noexcept nogil:
    """Append the current letter run (if it has >= 2 pretokens) to the run list and start a new one."""
    if st.run_len >= 2 and _list_append(&st.runs, st.ids, st.run_len, 1) < 0:
        return -1
    st.run_len = 0
    return 0


cdef int _count_window(CountState* st, const Tables* tb, const char_t* s, Py_ssize_t start,
                       Py_ssize_t n_pieces) noexcept nogil:
    """Count the ``n_pieces`` pretokens whose ends are in ``st.ends`` (the first starts at ``start``)
    and extend the current letter run with them.

    The keys come first, so that while one pretoken is counted the table's slot of the one ``AHEAD`` of it
    (when the cache does not hold it) is already on its way: the lookups of a large table are bound by memory
    latency, one random slot each."""
    cdef Py_ssize_t k, end, first = start
    cdef int64_t e, cap
    cdef uint64_t h
    cdef uint32_t* grown
    for k in range(n_pieces):
        end = st.ends[k]
        st.window_keys[k] = _hash_seq(s + start, end - start)
        start = end
    start = first
    for k in range(n_pieces):
        if k + AHEAD < n_pieces:
            h = st.window_keys[k + AHEAD]
            if st.cache_key[_cache_slot(h)] != h:
                FASTSW_COUNT_PREFETCH(&st.pre.slots[_mix(h) & <uint64_t> (st.pre.n_slots - 1)])
        end = st.ends[k]
        e = _add_keyed(st, tb, s + start, end - start, st.window_keys[k])
        if e < 0:
            return -1
        st.window_ids[k] = <uint32_t> e
        start = end
    if not st.collect_runs:
        return 0
    for k in range(n_pieces):
        e = st.window_ids[k]
        if st.letter[e]:
            if st.run_len == st.ids_cap:
                cap = max(64, 2 * st.ids_cap)
                grown = <uint32_t*> realloc(st.ids, cap * sizeof(uint32_t))
                if grown == NULL:
                    return -1
                st.ids = grown
                st.ids_cap = cap
            st.ids[st.run_len] = <uint32_t> e
            st.run_len += 1
        elif _end_run(st) < 0:
            return -1
    return 0


cdef int _count_text(CountState* st, const Tables* tb, const uint8_t* scripts,
                     const uint8_t* specific_by_script, bint script_chunking,
                     const char_t* s, Py_ssize_t length) noexcept nogil:
    """Pre-tokenize one document and add its pretokens and letter runs; -1 when out of memory.

    The matchers of ``_scan`` fill a window of ``WINDOW`` pretoken ends, which is then counted, so
    the scratch memory is the window, the chunk bounds and the current letter run, never one slot
    per code point or per pretoken of the document."""
    cdef Py_ssize_t n_chunks, c, i, n, k, start
    cdef int64_t whole[2]
    cdef uint8_t main_only = 0
    cdef const int64_t* bounds
    cdef const uint8_t* specific
    st.n_documents += 1
    st.n_bytes += _utf8_length(s, length)
    if length == 0:
        return 0
    if script_chunking:
        n_chunks = _script_chunks(s, length, scripts, specific_by_script, &st.chunks)
        if n_chunks < 0:
            return -1
        bounds = st.chunks.bounds
        specific = st.chunks.specific
    else:
        whole[0] = 0
        whole[1] = length
        n_chunks = 1
        bounds = whole
        specific = &main_only
    st.run_len = 0
    for c in range(n_chunks):
        i = bounds[c]
        n = bounds[c + 1]
        while i < n:
            start = i
            k = 0
            if specific[c]:
                while i < n and k < WINDOW:
                    i = _match_specific(s, tb, i, n)
                    st.ends[k] = i
                    k += 1
            else:
                while i < n and k < WINDOW:
                    i = _match_main(s, tb, i, n)
                    st.ends[k] = i
                    k += 1
            if _count_window(st, tb, s, start, k) < 0:
                return -1
    if st.collect_runs and _end_run(st) < 0:
        return -1
    return 0


cdef class Counter:
    """Pretoken and letter-run counts of the documents given to :meth:`add_batch`.

    ``Counter(scanner, collect_runs)``: ``scanner`` is the :class:`Scanner` of the pre-tokenizer
    (its letter test is ``\\p{L}``). Not thread-safe: use one ``Counter`` per thread (they release
    the GIL while counting) and :meth:`merge` them.
    """
    cdef CountState st
    cdef Scanner scanner
    cdef bint ok

    def __cinit__(self, Scanner scanner not None, bint collect_runs):
        self.scanner = scanner
        memset(&self.st, 0, sizeof(CountState))
        memset(self.st.cache_key, 0xFF, sizeof(self.st.cache_key))  # all ones: never a key (_hash_seq)
        self.st.collect_runs = collect_runs
        self.st.letter_cap = 256
        self.st.letter = <uint8_t*> malloc(self.st.letter_cap)
        self.ok = (_table_init(&self.st.pre) == 0 and _table_init(&self.st.runs) == 0
                   and self.st.letter != NULL)
        if not self.ok:
            raise MemoryError()

    def __dealloc__(self):
        _table_free(&self.st.pre)
        _table_free(&self.st.runs)
        free(self.st.letter)
        free(self.st.ids)
        free(self.st.chunks.bounds)
        free(self.st.chunks.specific)

    @property
    def n_documents(self):
        return self.st.n_documents

    @property
    def n_bytes(self):
        return self.st.n_bytes

    @property
    def n_pretokens(self):
        return self.st.pre.n

    @property
    def scratch_bytes(self):
        """Bytes of per-document scratch memory held (the current run's indices and the chunk bounds)."""
        return self.st.ids_cap * 4 + self.st.chunks.capacity * 9

    @property
    def collect_runs(self):
        return bool(self.st.collect_runs)

    def add_batch(self, list docs):
        """Count every document of ``docs`` (a list of ``str``), without the GIL."""
        cdef Py_ssize_t n = len(docs), i
        cdef int rc = 0
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
        with nogil:  # ``docs`` keeps every buffer alive
            for i in range(n):
                if kinds[i] == PyUnicode_1BYTE_KIND:
                    rc = _count_text(&self.st, &sc.tb, sc.scripts, sc.specific_by_script, sc.script_chunking,
                                     <const uint8_t*> datas[i], lengths[i])
                elif kinds[i] == PyUnicode_2BYTE_KIND:
                    rc = _count_text(&self.st, &sc.tb, sc.scripts, sc.specific_by_script, sc.script_chunking,
                                     <const uint16_t*> datas[i], lengths[i])
                else:
                    rc = _count_text(&self.st, &sc.tb, sc.scripts, sc.specific_by_script, sc.script_chunking,
                                     <const uint32_t*> datas[i], lengths[i])
                if rc < 0:
                    break
        PyMem_Free(kinds)
        PyMem_Free(datas)
        PyMem_Free(lengths)
        if rc < 0:
            self.ok = False
            raise MemoryError("out of memory while counting")

    def merge(self, Counter other not None):
        """Add ``other``'s counts (documents, bytes, pretokens, runs) to this counter."""
        cdef SeqTable* src = &other.st.pre
        cdef int64_t j, e, o
        cdef bint added
        cdef int rc = 0
        if not (self.ok and other.ok):
            raise RuntimeError("a Counter ran out of memory earlier; its counts are incomplete")
        if self.st.collect_runs != other.st.collect_runs:
            raise ValueError("cannot merge a counter with letter runs and one without")
        cdef int64_t* remap = <int64_t*> PyMem_Malloc(max(src.n, 1) * sizeof(int64_t))
        if remap == NULL:
            raise MemoryError()
        with nogil:
            for j in range(src.n):
                o = src.offsets[j]
                e = _table_find_or_add(&self.st.pre, src.items + o, src.offsets[j + 1] - o, src.hashes[j], &added)
                if e < 0 or (added and _new_letter(&self.st, e, other.st.letter[j]) < 0):
                    rc = -1
                    break
                self.st.pre.counts[e] += src.counts[j]
                remap[j] = e
            if rc == 0 and self.st.collect_runs:
                rc = _add_runs(&self.st, other.st.runs.items, other.st.runs.offsets, other.st.runs.counts,
                               other.st.runs.n, remap, src.n)
        PyMem_Free(remap)
        self._merged(rc, other.st.n_documents, other.st.n_bytes)

    def merge_table(self, list pretokens, const int64_t[::1] counts, const uint8_t[::1] has_letter, runs,
                    int64_t n_documents, int64_t n_bytes):
        """Add a table given as arrays: what :meth:`pretokens` and :meth:`runs` of another counter
        return (``runs`` None for a counter without letter runs). How a worker process's counts come
        back (a ``Counter`` does not pickle; its arrays do)."""
        cdef Py_ssize_t n = len(pretokens), j, n_runs = 0
        cdef int64_t e
        cdef bint added
        cdef int rc = 0
        cdef const int32_t[::1] run_ids = None
        cdef const int64_t[::1] run_offsets = None, run_counts = None
        if not self.ok:
            raise RuntimeError("this Counter ran out of memory earlier; its counts are incomplete")
        if counts.shape[0] != n or has_letter.shape[0] != n:
            raise ValueError("counts and has_letter must have one entry per pretoken")
        if (runs is None) == bool(self.st.collect_runs):
            raise ValueError("cannot merge a counter with letter runs and one without")
        if runs is not None:
            run_ids, run_offsets, run_counts = runs
            n_runs = run_counts.shape[0]
            if run_offsets.shape[0] != n_runs + 1 or run_offsets[0] != 0 or run_offsets[n_runs] > run_ids.shape[0]:
                raise ValueError("run offsets do not match the run ids")
        cdef int64_t* remap = <int64_t*> PyMem_Malloc(max(n, 1) * sizeof(int64_t))
        if remap == NULL:
            raise MemoryError()
        try:
            for j in range(n):
                piece = pretokens[j]
                if type(piece) is not str:
                    raise TypeError(f"pretokens must be str, not {type(piece).__name__}")
                e = _add_str(&self.st.pre, <str> piece, &added)
                if e < 0 or (added and _new_letter(&self.st, e, has_letter[j] != 0) < 0):
                    rc = -1
                    break
                self.st.pre.counts[e] += counts[j]
                remap[j] = e
            if rc == 0 and n_runs:
                with nogil:
                    rc = _add_runs(&self.st, <const uint32_t*> &run_ids[0], &run_offsets[0], &run_counts[0],
                                   n_runs, remap, n)
        finally:
            PyMem_Free(remap)
        if rc == -2:
            raise IndexError(f"a letter run refers to a pretoken outside 0..{n - 1}")
        self._merged(rc, n_documents, n_bytes)

    cdef _merged(self, int rc, int64_t n_documents, int64_t n_bytes):
        if rc < 0:
            self.ok = False
            raise MemoryError("out of memory while merging counters")
        self.st.n_documents += n_documents
        self.st.n_bytes += n_bytes

    def pretokens(self):
        """``(pretokens, counts, has_letter)``: a list of ``str`` in first-seen order, ``int64`` and
        ``uint8`` numpy arrays."""
        cdef SeqTable* t = &self.st.pre
        cdef Py_ssize_t e
        cdef list out = PyList_New(t.n)
        for e in range(t.n):
            piece = PyUnicode_FromKindAndData(4, t.items + t.offsets[e], t.offsets[e + 1] - t.offsets[e])
            Py_INCREF(piece)
            PyList_SET_ITEM(out, e, piece)
        counts = np.empty(t.n, dtype=np.int64)
        letter = np.empty(t.n, dtype=np.uint8)
        cdef int64_t[::1] cv = counts
        cdef uint8_t[::1] lv = letter
        for e in range(t.n):
            cv[e] = t.counts[e]
            lv[e] = self.st.letter[e]
        return out, counts, letter

    def runs(self):
        """``(ids, offsets, counts)``: the distinct letter runs as numpy arrays (``int32`` pretoken indices of
        all runs concatenated, ``int64`` offsets with one more entry than runs, ``int64`` counts), in the order
        they were first seen."""
        cdef SeqTable t
        if not self.ok:
            raise RuntimeError("this Counter ran out of memory earlier; its counts are incomplete")
        if _table_init(&t) < 0:
            _table_free(&t)
            raise MemoryError()
        cdef int rc
        with nogil:
            rc = _aggregate_list(&self.st.runs, &t)
        try:
            if rc < 0:
                raise MemoryError()
            return _take_table(&t)
        finally:
            _table_free(&t)

    def take_runs(self):
        """What :meth:`runs` returns; the counter keeps no letter runs afterwards (counting more documents
        starts them again from none)."""
        runs = self.runs()
        _table_free(&self.st.runs)
        if _table_init(&self.st.runs) < 0:
            self.ok = False
            raise MemoryError()
        return runs

    def take_raw_runs(self):
        """The letter runs as they were read, without a copy: ``(ids, offsets, counts)`` as :meth:`runs`
        returns them, except that a run read several times may be there several times (each with its
        count; in the order read). Aggregating them costs a hash per run, which
        ``fastsw.pretokenizers._pretok.aggregate_runs`` does anyway while it makes the supermerge candidates,
        and most letter runs occur once. The counter keeps no letter runs afterwards."""
        if not self.ok:
            raise RuntimeError("this Counter ran out of memory earlier; its counts are incomplete")
        return _take_table(&self.st.runs)


cdef struct _PieceBatch:
    # pieces waiting to be counted in one batch: their values concatenated, and per piece its start, length,
    # count and key
    uint32_t* values
    int64_t n_values
    int64_t values_cap
    int64_t* start
    int64_t* length
    int64_t* count
    uint64_t* keys
    int64_t n
    int64_t cap


cdef int _batch_room(_PieceBatch* b, int64_t values) noexcept nogil:
    """Room for ``values`` more values and one more piece; -1 when out of memory."""
    cdef int64_t cap
    cdef uint32_t* grown
    if b.n_values + values > b.values_cap:
        cap = max(2 * b.values_cap, b.n_values + values)
        grown = <uint32_t*> realloc(b.values, cap * sizeof(uint32_t))
        if grown == NULL:
            return -1
        b.values = grown
        b.values_cap = cap
    if b.n == b.cap:
        cap = 2 * b.cap
        if (_realloc64(&b.start, cap) < 0 or _realloc64(&b.length, cap) < 0 or _realloc64(&b.count, cap) < 0
                or _realloc64(<int64_t**> &b.keys, cap) < 0):
            return -1
        b.cap = cap
    return 0


cdef int _add_pieces(SeqTable* t, _PieceBatch* b) noexcept nogil:
    """Add the batch's pieces to ``t`` in order (their keys first, so that the slot of the piece ``AHEAD`` is
    fetched while one is added) and empty the batch; -1 when out of memory."""
    cdef int64_t k, e
    cdef uint64_t h
    cdef bint added
    for k in range(b.n):
        b.keys[k] = _hash_seq(b.values + b.start[k], b.length[k])
    for k in range(b.n):
        if k + AHEAD < b.n:
            h = b.keys[k + AHEAD]
            FASTSW_COUNT_PREFETCH(&t.slots[_mix(h) & <uint64_t> (t.n_slots - 1)])
        e = _table_find_or_add(t, b.values + b.start[k], b.length[k], b.keys[k], &added)
        if e < 0:
            return -1
        t.counts[e] += b.count[k]
    b.n = 0
    b.n_values = 0
    return 0


def aggregate_runs(const int32_t[::1] run_ids, const int64_t[::1] run_offsets, const int64_t[::1] run_counts,
                   const int64_t[::1] single_token, bint presize=True):
    """Supermerge candidates from letter runs given as flat arrays (see :meth:`Counter.runs`);
    the packed twin of :func:`fastsw.trainers.superword.aggregate_candidates` (the same multiset).

    ``single_token[p]`` is pretoken ``p``'s phase-1 token when that is one eligible token, else -1.
    Every run is cut at its other pretokens; each piece of >= 2 tokens adds the run's count to
    that token sequence. Returns ``(tokens, offsets, counts)``: ``int32`` token ids of all
    candidates concatenated, ``int64`` offsets (one more than candidates) and ``int64`` counts.
    The pieces are added to the table in batches of about ``WINDOW``, in order (see :func:`_add_pieces`).

    With ``presize`` (for letter runs and candidates, most of which are distinct) the table starts with the
    slots that half as many entries as runs need, instead of doubling from a few as entries come: each
    doubling moves every entry to a new slot, and the last one holds the old slots and the new together.
    When at least half the runs are distinct (about two thirds of English candidates are), the table would
    have grown to these slots anyway. ``presize=False`` for pieces that mostly repeat (the candidate cut's).
    """
    cdef SeqTable t
    cdef _PieceBatch b
    cdef Py_ssize_t n_runs = run_counts.shape[0], n_single = single_token.shape[0], n_ids = run_ids.shape[0]
    cdef int64_t r, i, o, m, start, e, bad = -1
    cdef int rc = 0
    if run_offsets.shape[0] != n_runs + 1:
        raise ValueError("run_offsets must have one more entry than run_counts")
    if n_runs and (run_offsets[0] != 0 or run_offsets[n_runs] > run_ids.shape[0]):
        raise ValueError("run_offsets do not match run_ids")
    memset(&b, 0, sizeof(_PieceBatch))
    b.values_cap = 4 * WINDOW
    b.cap = WINDOW
    b.values = <uint32_t*> malloc(b.values_cap * sizeof(uint32_t))
    b.start = <int64_t*> malloc(b.cap * sizeof(int64_t))
    b.length = <int64_t*> malloc(b.cap * sizeof(int64_t))
    b.count = <int64_t*> malloc(b.cap * sizeof(int64_t))
    b.keys = <uint64_t*> malloc(b.cap * sizeof(uint64_t))
    try:
        if (_table_init(&t) < 0 or b.values == NULL or b.start == NULL or b.length == NULL or b.count == NULL
                or b.keys == NULL):
            raise MemoryError()
        if presize and _table_presize(&t, n_runs // 2) < 0:
            raise MemoryError()
        with nogil:
            for r in range(n_runs):
                o = run_offsets[r]
                m = run_offsets[r + 1] - o
                start = b.n_values  # the current piece's first value in the batch
                for i in range(m + 1):
                    if i < m:
                        if o + i + RUN_AHEAD < n_ids:  # the pretoken's entry in single_token (megabytes) on its way
                            e = run_ids[o + i + RUN_AHEAD]
                            if <uint64_t> e < <uint64_t> n_single:
                                FASTSW_COUNT_PREFETCH(&single_token[e])
                        e = run_ids[o + i]
                        if e < 0 or e >= n_single:
                            bad = e
                            rc = -2
                            break
                        e = single_token[e]
                        if e >= 0:
                            if _batch_room(&b, 1) < 0:
                                rc = -1
                                break
                            b.values[b.n_values] = <uint32_t> e
                            b.n_values += 1
                            continue
                    if b.n_values - start >= 2:
                        b.start[b.n] = start
                        b.length[b.n] = b.n_values - start
                        b.count[b.n] = run_counts[r]
                        b.n += 1
                    else:
                        b.n_values = start  # a piece of one token: dropped
                    start = b.n_values
                if rc < 0:
                    break
                if b.n >= WINDOW and _add_pieces(&t, &b) < 0:
                    rc = -1
                    break
            if rc == 0 and _add_pieces(&t, &b) < 0:
                rc = -1
        if rc == -2:
            raise IndexError(f"a letter run refers to pretoken {bad}, outside 0..{n_single - 1}")
        if rc < 0:
            raise MemoryError()
        return _take_table(&t)
    finally:
        free(b.values)
        free(b.start)
        free(b.length)
        free(b.count)
        free(b.keys)
        _table_free(&t)


cdef void* _addr_i64(int64_t[::1] a):
    return <void*> &a[0]
