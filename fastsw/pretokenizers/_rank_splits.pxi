# Included by _pretok.pyx: the tables of a tiktoken vocabulary (``fastsw.io.tiktoken_vocab``), each in one compiled
# pass over plain arrays, each with a plain-Python twin that tests/io/test_tiktoken_vocab.py holds it to:
#
# * ``parse_rank_lines(data)``: a rank file in tiktoken's layout (``base64 rank`` lines) as one byte table of the
#   tokens and their ranks (twin: ``_parse_plain_python``, ``bytes.split`` and ``binascii``);
# * ``rank_tokens(tb, tb_off)``: the token list and its ``{token: id}`` dict (twin: slices and ``dict(zip(...))``);
# * ``rank_splits(tb, tb_off)``: every two-way split of every token, rows ``(left, right, token)`` with
#   ``tokens[left] + tokens[right] == tokens[token]``, by token then by the length of ``left`` -- the table that rank
#   mode's encoder reads (twin: ``two_way_splits``, prefixes and suffixes looked up in a dict). The tokens go into an
#   open-addressing hash table (FNV-1a over their bytes, linear probing, one uint32 per slot: the token's id + 1
#   under the top bits of its hash), each prefix of a token is looked up with the hash carried over from the
#   previous prefix, the suffix only when the prefix is a token, and a lookup answers only after comparing the
#   bytes, so no hash collision can give a wrong row. The lookups are bound by memory latency (a random slot
#   each), so the slots of a batch of cuts are fetched ahead, together.

cdef extern from "string.h":
    int memcmp(const void* a, const void* b, size_t n) nogil

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FASTSW_PREFETCH(p) __builtin_prefetch(p)
    #else
    #define FASTSW_PREFETCH(p) ((void)(p))
    #endif
    """
    void FASTSW_PREFETCH(const void* p) nogil


cdef inline uint64_t _rs_step(uint64_t h, uint8_t b) noexcept nogil:
    """One byte of FNV-1a (start: 0xCBF29CE484222325ULL)."""
    return (h ^ b) * 0x100000001B3ULL


cdef struct _RankTable:
    uint32_t* slots  # 0: empty; else (tag << id_bits) | (id + 1)
    uint64_t mask
    int shift  # a hash's slot: (h * mix) >> shift
    int id_bits
    const uint8_t* tb
    const int64_t* tb_off


cdef inline uint64_t _rs_slot(const _RankTable* rt, uint64_t h) noexcept nogil:
    return (h * 0x9E3779B97F4A7C15ULL) >> rt.shift


cdef inline uint32_t _rs_tag(const _RankTable* rt, uint64_t h) noexcept nogil:
    """The top bits of ``h`` that a slot keeps above its id (none when the ids take all 32 bits)."""
    if rt.id_bits >= 32:
        return 0
    return <uint32_t>(h >> (32 + rt.id_bits)) << rt.id_bits


cdef inline int64_t _rs_find(const _RankTable* rt, uint64_t h, Py_ssize_t start, Py_ssize_t n) noexcept nogil:
    """The id of the token spelled by ``tb[start:start + n]`` (FNV-1a hash ``h``), or -1."""
    cdef uint64_t s = _rs_slot(rt, h)
    cdef uint32_t e, tag = _rs_tag(rt, h)
    cdef uint32_t low = <uint32_t>((<uint64_t>1 << rt.id_bits) - 1)
    cdef int64_t t
    while True:
        e = rt.slots[s]
        if e == 0:
            return -1
        if (e & ~low) == tag:
            t = <int64_t>(e & low) - 1
            if rt.tb_off[t + 1] - rt.tb_off[t] == n and memcmp(rt.tb + rt.tb_off[t], rt.tb + start, n) == 0:
                return t
        s = (s + 1) & rt.mask


cdef enum:
    _BATCH = 512  # cuts looked up together: their slots are fetched ahead, all at once


def rank_splits(const uint8_t[::1] tb, const int64_t[::1] tb_off):
    """Every two-way split of the tokens ``tb[tb_off[t]:tb_off[t + 1]]`` (ids below 2**31 - 1): int32 array
    ``(k, 3)`` of rows ``(left, right, token)``, by token then split (the file's header says how)."""
    cdef Py_ssize_t n = tb_off.shape[0] - 1
    cdef Py_ssize_t t, i, a, length, k = 0, bound = 0, m, c, hits
    cdef int bits = 4
    while (<Py_ssize_t>1 << bits) < 2 * n:
        bits += 1
    cdef _RankTable rt
    rt.mask = (<uint64_t>1 << bits) - 1
    rt.shift = 64 - bits
    rt.id_bits = 1
    while (<Py_ssize_t>1 << rt.id_bits) <= n:
        rt.id_bits += 1
    cdef uint64_t s, h, prefix_hash = 0
    cdef int64_t x, y
    for t in range(n):
        bound += max(tb_off[t + 1] - tb_off[t] - 1, 0)
    slots_arr = np.zeros(<Py_ssize_t>1 << bits, np.uint32)
    out_arr = np.empty((max(bound, 1), 3), np.int32)
    cdef uint32_t[::1] slots_v = slots_arr
    cdef int32_t[:, ::1] out = out_arr
    # one batch of cuts: the token, the prefix length, its hash; then the prefix hits with their suffix's hash
    cdef int64_t cut_token[_BATCH]
    cdef int64_t cut_at[_BATCH]
    cdef uint64_t cut_hash[_BATCH]
    cdef int64_t hit_left[_BATCH]
    cdef Py_ssize_t hit_cut[_BATCH]
    rt.slots = &slots_v[0]
    rt.tb = &tb[0] if tb.shape[0] else NULL
    rt.tb_off = &tb_off[0]
    cdef const uint8_t* data = rt.tb
    with nogil:
        for t in range(n):
            h = 0xCBF29CE484222325ULL
            for i in range(tb_off[t], tb_off[t + 1]):
                h = _rs_step(h, data[i])
            s = _rs_slot(&rt, h)
            while rt.slots[s] != 0:
                s = (s + 1) & rt.mask
            rt.slots[s] = _rs_tag(&rt, h) | <uint32_t>(t + 1)
        t = 0
        i = 1
        while t < n:
            m = 0  # gather up to _BATCH cuts, from token t's cut i on, and fetch their slots
            while t < n and m < _BATCH:
                a = tb_off[t]
                length = tb_off[t + 1] - a
                if i >= length:
                    t += 1
                    i = 1
                    continue
                if i == 1:
                    prefix_hash = 0xCBF29CE484222325ULL
                prefix_hash = _rs_step(prefix_hash, data[a + i - 1])  # the hash of the prefix of i bytes
                cut_token[m] = t
                cut_at[m] = i
                cut_hash[m] = prefix_hash
                FASTSW_PREFETCH(&rt.slots[_rs_slot(&rt, prefix_hash)])
                m += 1
                i += 1
            hits = 0
            for c in range(m):
                a = tb_off[cut_token[c]]
                x = _rs_find(&rt, cut_hash[c], a, cut_at[c])
                if x < 0:
                    continue
                h = 0xCBF29CE484222325ULL
                for s in range(<uint64_t>(a + cut_at[c]), <uint64_t>tb_off[cut_token[c] + 1]):
                    h = _rs_step(h, data[s])
                cut_hash[c] = h  # now the suffix's
                FASTSW_PREFETCH(&rt.slots[_rs_slot(&rt, h)])
                hit_left[hits] = x
                hit_cut[hits] = c
                hits += 1
            for c in range(hits):
                a = tb_off[cut_token[hit_cut[c]]] + cut_at[hit_cut[c]]
                y = _rs_find(&rt, cut_hash[hit_cut[c]], a, tb_off[cut_token[hit_cut[c]] + 1] - a)
                if y >= 0:
                    out[k, 0] = <int32_t>hit_left[c]
                    out[k, 1] = <int32_t>y
                    out[k, 2] = <int32_t>cut_token[hit_cut[c]]
                    k += 1
    return out_arr[:k].copy()


cdef inline int _b64_value(uint8_t c) noexcept nogil:
    """The 6 bits of a base64 character, -1 for any other byte."""
    if c >= 65 and c <= 90:
        return c - 65
    if c >= 97 and c <= 122:
        return c - 71
    if c >= 48 and c <= 57:
        return c + 4
    if c == 43:
        return 62
    if c == 47:
        return 63
    return -1


def parse_rank_lines(const uint8_t[::1] data):
    """``(token bytes, tb_off, ranks)`` of a rank file written the way tiktoken writes one: lines ``base64 rank``
    (standard base64 with its padding, one space, the rank in decimal digits), each ended by a newline but perhaps
    the last; token ``t`` is ``tb[tb_off[t]:tb_off[t + 1]]`` and ``ranks[t]`` its rank, in the file's order. None
    for anything else (another layout, a character that is not base64, a rank that is no plain number, an empty
    token): the caller then reads the file line by line and names what is wrong. Its plain-Python twin is the
    whole-file path of ``fastsw.io.tiktoken_vocab._parse_plain`` (``bytes.split``, ``binascii.a2b_base64``)."""
    cdef Py_ssize_t n = data.shape[0], i = 0, start, length, lines = 0, t = 0, w = 0, g
    cdef int v0, v1, v2, v3, pad
    cdef int64_t rank
    if n == 0:
        return None
    for g in range(n):
        lines += data[g] == 10
    lines += data[n - 1] != 10
    tb_arr = np.empty(n // 4 * 3 + 3, np.uint8)
    off_arr = np.empty(lines + 1, np.int64)
    ranks_arr = np.empty(lines, np.int64)
    cdef uint8_t[::1] tb = tb_arr
    cdef int64_t[::1] off = off_arr
    cdef int64_t[::1] ranks = ranks_arr
    cdef bint ok = True
    with nogil:
        off[0] = 0
        while i < n:
            start = i
            while i < n and data[i] != 32:
                i += 1
            length = i - start
            if i == n or length == 0 or length % 4 or t == lines:
                ok = False
                break
            for g in range(start, i, 4):
                v0 = _b64_value(data[g])
                v1 = _b64_value(data[g + 1])
                pad = 0
                if g + 4 == i and data[g + 3] == 61:  # "=" ends the token: one or two padding characters
                    pad = 2 if data[g + 2] == 61 else 1
                v2 = _b64_value(data[g + 2]) if pad < 2 else 0
                v3 = _b64_value(data[g + 3]) if pad < 1 else 0
                if v0 < 0 or v1 < 0 or v2 < 0 or v3 < 0:
                    ok = False
                    break
                tb[w] = <uint8_t>((v0 << 2) | (v1 >> 4))
                w += 1
                if pad < 2:
                    tb[w] = <uint8_t>(((v1 & 15) << 4) | (v2 >> 2))
                    w += 1
                if pad < 1:
                    tb[w] = <uint8_t>(((v2 & 3) << 6) | v3)
                    w += 1
            if not ok:
                break
            i += 1  # the space
            rank = 0
            start = i
            while i < n and data[i] >= 48 and data[i] <= 57 and i - start < 18:
                rank = rank * 10 + (data[i] - 48)
                i += 1
            if i == start or (i < n and data[i] != 10):
                ok = False
                break
            i += 1  # the newline (or the end)
            ranks[t] = rank
            t += 1
            off[t] = w
    if not ok or t != lines:
        return None
    return PyBytes_FromStringAndSize(<char*>&tb[0], w), off_arr, ranks_arr


def rank_tokens(bytes tb, const int64_t[::1] tb_off):
    """``(tokens, {token: id})`` of the byte table ``tb``, ``tb_off`` (token ``t`` is ``tb[tb_off[t]:tb_off[t + 1]]``,
    all distinct): the list and the dict a rank-mode tokenizer holds, in one loop. Its
    plain-Python twin: ``[tb[a:b] for a, b in zip(offs, offs[1:])]`` and ``dict(zip(tokens, range(n)))``."""
    cdef Py_ssize_t n = tb_off.shape[0] - 1, t
    cdef const char* p = PyBytes_AS_STRING(tb)
    tokens = PyList_New(n)
    cdef dict ids = {}
    for t in range(n):
        token = PyBytes_FromStringAndSize(p + tb_off[t], tb_off[t + 1] - tb_off[t])
        Py_INCREF(token)
        PyList_SET_ITEM(tokens, t, token)
        ids[token] = t
    return tokens, ids
