"""Numba kernels for the fast encoding path (SPEC section 7).

Private functions over contiguous numpy arrays only: no Python objects, no I/O.
Pretoken boundaries: the driver passes code-point offsets; when a batch is ASCII
(as many bytes as code points) they are byte offsets as they are, otherwise the
kernel walks the UTF-8 lead bytes.
The driver :mod:`fastsw.encoding.encode_fast` builds the tables once per tokenizer and
coerces every input (ids int32, lengths and offsets int64, text uint8), so each
kernel compiles exactly one signature. The reference these kernels must agree
with, id for id, is :meth:`fastsw.tokenizer.Tokenizer.encode_ordinary` with
``backend="python"`` (:func:`fastsw.trainers.bpe.apply_merges` per pretoken and per run).

Design notes: see docs/internals.md, section "Encoding": the kernel's tables, the merge loops and the numbered
notes this module refers to -- (1)-(3) and (5) why both merge loops give the reference's answer, (5) runs of
one id, (6) rank mode, (7) whole characters first, (8) few merges, (9) the wide byte table of SCRIPT models --
and the supermerge runs.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit

from fastsw._borrow import _borrow
from fastsw._compiling import stamp_module
from fastsw._prefetch import _prefetch

# The pair hashes multiply uint64s and are meant to wrap modulo 2**64. Compiled, they do so silently; run as
# plain Python (NUMBA_DISABLE_JIT=1, the kernels' twin test mode) numpy warns on every wrap. Only this module's
# wraps are silenced.
warnings.filterwarnings("ignore", "overflow encountered in scalar multiply", RuntimeWarning, module=__name__)

# Hashing multiplies in uint64: Numba emits signed int64 arithmetic with LLVM's
# ``nsw`` flag, so a wrapping int64 multiply is undefined behaviour that LLVM may
# fold away (it did: a pair lookup of ``(x, x)`` hashed to a constant).
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.int64(0xFFFFFFFF)
#: A shortcut entry's value (:func:`_short_lookup`, :func:`_long_lookup`): the token id in the low 31 bits and, in a
#: model with supermerges, bit 31 set when the token is eligible (``flags & 1``; :func:`mark_eligible`), so that a
#: pretoken found whole knows whether it joins a supermerge run without a second, dependent load of ``flags``
_ID_MASK = np.int64(0x7FFFFFFF)
_ELIGIBLE_SHIFT = 31
_MISS_CACHE_BITS = 14  # at most 16384 miss-cache slots per kernel call
_DIRECT_SHIFT = 9  # direct rank-table entries: every pair of ids below 2 ** 9 (the bytes and the first 256 merges
_DIRECT_IDS = 1 << _DIRECT_SHIFT  # of a byte-level model), at left << _DIRECT_SHIFT | right: 2 MB
_DIRECT = _DIRECT_IDS * _DIRECT_IDS
_FILTER_BITS = 22  # then a filter of the hashed pairs: 2 ** 22 bits (512 kB) ...
_FILTER = 1 << (_FILTER_BITS - 6)  # ... in this many int64 words
_HASHED = _DIRECT + _FILTER  # then the hash region
_COMPACT_BITS = 21  # the compact hash region's fields: left, right and new id, 21 bits each ...
_COMPACT_ID = (1 << _COMPACT_BITS) - 1  # ... so every id below this (its mask)
_PAIR_BITS = 18  # the supermerge pair filter: a bit set of 2 ** 18 bits (32 kB)
_CROSS_WORDS = 1 << (_PAIR_BITS - 6)  # the cross filter's bits follow the pair filter's in ``s_bits``
_FEW_PAIRS = 16  # a long sequence with at most this many pairs that merge skips the tournament tree
_FEW_MERGES = 32  # ... for at most this many merges (module note (8))
_AHEAD = 4  # the long-text loop prefetches the shortcut slot of the pretoken this many places ahead


@njit(cache=True, nogil=True)
def _pair_slot(table, key):
    """The first probe of the pair ``key`` (``left << 32 | right``) in the hash region of the int64 rank ``table``
    (after the ``_DIRECT`` direct entries and the ``_FILTER`` filter words): a slot number, below the region's
    power-of-two count of slots (two int64 each, or one in the compact layout: :func:`_is_compact`)."""
    n = table.shape[0] - _HASHED
    mask = (n - 1 if n & 1 else n >> 1) - 1  # compact: n - 1 slots, then the difference
    h = np.uint64(key) * _MIX
    h ^= h >> np.uint64(29)
    return np.int64(h & np.uint64(mask))


@njit(cache=True, nogil=True)
def _is_compact(table):
    """Whether the rank ``table``'s hash region is compact: one int64 per slot, ``left << 42 | right << 21 | new
    id`` (-1 = empty), then one last word, the difference ``new id - rank`` that every pair of the table shares
    (module notes: the rank tables). Its length after the filter is odd; two int64 per slot make it even."""
    return (table.shape[0] - _HASHED) & 1 == 1


@njit(cache=True, nogil=True)
def _hashed_value(table, left, right):
    """``rank << 32 | new id`` of the pair ``(left, right)`` (not both below 256) in the hash region of the rank
    ``table`` (either layout: :func:`_is_compact`), or -1. Linear probing from :func:`_pair_slot`."""
    key = (np.int64(left) << 32) | np.int64(right)
    s = _pair_slot(table, key)
    n = table.shape[0] - _HASHED
    if n & 1:
        mask = n - 2
        want = (np.int64(left) << _COMPACT_BITS) | np.int64(right)
        while True:
            x = table[_HASHED + s]
            if (x >> _COMPACT_BITS) == want:
                new = x & _COMPACT_ID
                return ((new - table[_HASHED + n - 1]) << 32) | new
            if x == -1:
                return np.int64(-1)
            s = (s + 1) & mask
    mask = (n >> 1) - 1
    while True:
        k = table[_HASHED + 2 * s]
        if k == key:
            return table[_HASHED + 2 * s + 1]
        if k == -1:
            return np.int64(-1)
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _filter_bit(key):
    """The bit (0 .. 64 * _FILTER - 1) of the pair ``key`` in a rank table's filter."""
    return np.int64((np.uint64(key) * _MIX) >> np.uint64(64 - _FILTER_BITS))


@njit(cache=True, nogil=True, inline="always")
def _direct_slot(left, right):
    """The direct entry of the pair ``(left, right)`` in a rank table, ``left << _DIRECT_SHIFT | right``, when both
    ids are below ``_DIRECT_IDS``; else -1 (the pair is hashed)."""
    if (left | right) < _DIRECT_IDS:
        return (np.int64(left) << _DIRECT_SHIFT) | np.int64(right)
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _pair_lookup(table, left, right):
    """``rank << 32 | new id`` of the merge ``(left, right)``, or -1. Pairs of two
    ids below ``_DIRECT_IDS`` (every pair of atoms, and of the first merges' tokens) are one direct load; other
    pairs whose filter bit is clear (most pairs without a merge) one load in the 512 kB filter."""
    d = _direct_slot(left, right)
    if d >= 0:
        return table[d]
    key = (np.int64(left) << 32) | np.int64(right)
    # the pair's first slot is fetched while its filter word is read: a pair that passes the filter (most of those
    # looked up while merging a pretoken) then waits for one cache miss, not two in a row
    s = _pair_slot(table, key)
    _prefetch(table, _HASHED + (s if (table.shape[0] - _HASHED) & 1 else 2 * s))
    b = _filter_bit(key)
    if (table[_DIRECT + (b >> 6)] >> (b & 63)) & 1 == 0:
        return np.int64(-1)
    return _hashed_value(table, left, right)


@njit(cache=True, nogil=True)
def _pair_probe(table, left, right):
    """``rank << 32 | new id`` of the pair ``(left, right)``, or -1, read from the hash region alone: for the
    supermerge table, built with every pair hashed (:func:`_build_pair_table`'s ``hash_direct``), whose pairs the
    supermerges' pair filter ``s_bits`` has let through. Nearly every such pair has a merge, so the table's filter
    word would be one more memory access that rejects almost nothing; and 40 % of the supermerge pairs probed in
    French text are pairs of two ids below ``_DIRECT_IDS``, so a test for the direct region would be a branch the
    predictor misses."""
    return _hashed_value(table, left, right)


@njit(cache=True, nogil=True, inline="always")
def _prefetch_pair(table, left, right, want):
    """Start loading the hash slot that :func:`_pair_probe` reads first for the pair ``(left, right)`` of the
    supermerge ``table`` when ``want`` is 1: it is probed when a run's segment ends, a pretoken or more after its
    pairs are known, and the probe then finds the slot in the caches. With ``want`` 0, the hash region's first
    slot: the caller prefetches for every token of a run without a branch on ``want`` (the filter bits, which the
    branch predictor cannot guess and which arrive late)."""
    s = _pair_slot(table, (np.int64(left) << 32) | np.int64(right)) * want
    _prefetch(table, _HASHED + (s if _is_compact(table) else 2 * s))


@njit(cache=True, nogil=True)
def _build_pair_table(lefts, rights, ranks, news, size, hash_direct):
    """A rank table from int64 ``lefts``, ``rights``, ``ranks``, ``news``: int64
    array of ``_DIRECT`` direct entries (pairs of ids < ``_DIRECT_IDS``), ``_FILTER`` words of the
    hashed pairs' filter bits, then ``size`` hash slots (power of two, > 2 x entries):
    one int64 each when every id is below ``_COMPACT_ID`` and every new id is its rank plus one same difference
    (tiktoken's vocabularies, where a token's rank is its id), followed by that difference (:func:`_is_compact`),
    else two int64 each, ``[left << 32 | right, rank << 32 | new id]``. The first of duplicated pairs is kept.
    With ``hash_direct`` (the supermerge table, probed by :func:`_pair_probe`), the pairs of direct entries are
    also hashed: every pair is in the hash region, and the direct entries stay for :func:`_pair_lookup`."""
    compact = lefts.shape[0] > 0
    diff = np.int64(0)
    if compact:
        diff = news[0] - ranks[0]
        for i in range(lefts.shape[0]):
            if (
                lefts[i] >= _COMPACT_ID
                or rights[i] >= _COMPACT_ID
                or news[i] >= _COMPACT_ID
                or news[i] - ranks[i] != diff
            ):
                compact = False
                break
    table = np.full(_HASHED + (size + 1 if compact else 2 * size), -1, np.int64)
    table[_DIRECT:_HASHED] = 0
    if compact:
        table[table.shape[0] - 1] = diff
    mask = size - 1
    for i in range(lefts.shape[0]):
        d = _direct_slot(lefts[i], rights[i])
        if d >= 0:
            if table[d] == -1:
                table[d] = (ranks[i] << 32) | news[i]
            if not hash_direct:
                continue
        key = (lefts[i] << 32) | rights[i]
        s = _pair_slot(table, key)
        if compact:
            want = (lefts[i] << _COMPACT_BITS) | rights[i]
            while table[_HASHED + s] != -1 and (table[_HASHED + s] >> _COMPACT_BITS) != want:
                s = (s + 1) & mask
            if table[_HASHED + s] != -1:
                continue
            table[_HASHED + s] = (want << _COMPACT_BITS) | news[i]
        else:
            while table[_HASHED + 2 * s] != -1 and table[_HASHED + 2 * s] != key:
                s = (s + 1) & mask
            if table[_HASHED + 2 * s] != -1:
                continue
            table[_HASHED + 2 * s] = key
            table[_HASHED + 2 * s + 1] = (ranks[i] << 32) | news[i]
        b = _filter_bit(key)
        table[_DIRECT + (b >> 6)] |= np.int64(1) << (b & 63)
    return table


@njit(cache=True, nogil=True)
def _pair_bit(left, right):
    """The filter bit (0 .. 2 ** _PAIR_BITS - 1) of the pair ``(left, right)``."""
    h = ((np.uint64(left) * _MIX) ^ np.uint64(right)) * _MIX
    return np.int64(h >> np.uint64(64 - _PAIR_BITS))


@njit(cache=True, nogil=True)
def _build_pair_bits(lefts, rights):
    """The filter of a rank table's pairs (int64 ``lefts``, ``rights``): uint64
    array of ``2 ** _PAIR_BITS`` bits, the bit of every pair set. A pair whose bit
    is clear has no merge; a set bit may be a collision (about 3 % of the bits are
    set for 7,000 supermerges)."""
    bits = np.zeros(1 << (_PAIR_BITS - 6), np.uint64)
    for i in range(lefts.shape[0]):
        b = _pair_bit(lefts[i], rights[i])
        bits[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
    return bits


_CHAR_KEYS = 0x110000  # the character table's keys: a code point, or 0x110000 + a code point for " " + that character
_CHAR_BLOCKS = (2 * _CHAR_KEYS) >> 8  # its block map: one entry per 256 keys


@njit(cache=True, nogil=True)
def _utf8_char(data, start, end):
    """``(code point, length)`` of the UTF-8 character of 2-4 bytes at uint8 ``data[start:end]`` that ends at or
    before ``end``, or ``(-1, 1)``: ASCII, a byte that cannot start one, too few bytes, a byte that is not a
    continuation, an overlong form, a surrogate or a value above U+10FFFF (every character has one entry)."""
    b = np.int64(data[start])
    if b < 0xC2 or b > 0xF4:
        return np.int64(-1), np.int64(1)
    if b < 0xE0:
        n = 2
        cp = b & 0x1F
    elif b < 0xF0:
        n = 3
        cp = b & 0x0F
    else:
        n = 4
        cp = b & 0x07
    if start + n > end:
        return np.int64(-1), np.int64(1)
    for j in range(1, n):
        c = np.int64(data[start + j])
        if c < 0x80 or c > 0xBF:
            return np.int64(-1), np.int64(1)
        cp = (cp << 6) | (c & 0x3F)
    if (n == 3 and (cp < 0x800 or 0xD800 <= cp <= 0xDFFF)) or (n == 4 and not 0x10000 <= cp <= 0x10FFFF):
        return np.int64(-1), np.int64(1)
    return cp, np.int64(n)


@njit(cache=True, nogil=True)
def _unit_key(data, start, end):
    """The character table's key of the unit that is exactly uint8 ``data[start:end]`` (a character of 2-4 bytes:
    its code point; a space and one: ``_CHAR_KEYS`` + its code point), or -1 when those bytes are not a unit."""
    n = end - start
    if n < 2 or n > 5:
        return np.int64(-1)
    spaced = np.int64(1) if data[start] == 0x20 else np.int64(0)
    cp, size = _utf8_char(data, start + spaced, end)
    if cp < 0 or spaced + size != n:
        return np.int64(-1)
    return cp + spaced * _CHAR_KEYS


def _byte_classes():
    """The classes of the bytes next to a unit, as two uint8 tables by byte value. Before a unit (the last byte of
    the token on its left): 0 for ASCII, 1 + k for the continuation byte 0x80 + k, and 65 for a byte that cannot
    end a character. After a unit (the first byte of the token on its right): 0 for ASCII, 1 + k for the lead
    byte 0xC2 + k, and 52 for a byte that cannot start a character. The last class of each is never allowed."""
    left = np.full(256, 65, np.uint8)
    left[:0x80] = 0
    left[0x80:0xC0] = np.arange(1, 65)
    right = np.full(256, 52, np.uint8)
    right[:0x80] = 0
    right[0xC2:0xF5] = np.arange(1, 52)
    return left, right


_LEFT_CLASS, _RIGHT_CLASS = _byte_classes()
_LEFT_CLASSES = 65  # ASCII and the 64 continuation bytes (class 65: never)
_RIGHT_CLASSES = 52  # ASCII and the 51 lead bytes 0xC2-0xF4 (class 52: never)
# int64 per key in the character table: the unit's id, then the allowed classes before it (3 words of 32 bits)
# and after it (2 words): class c is bit c & 31 of word c >> 5
_RECORD = 6


@njit(cache=True, nogil=True)
def _build_char_table(tb, tb_off, byte_ids, table, lefts, rights, ranks):
    """The table of the units a missed pretoken may start from as their token (module note (7)): one character of
    2-4 bytes, or a space and such a character.

    Reads the flat vocabulary ``tb``/``tb_off`` (int64 offsets, regular ids), int32 ``byte_ids`` (the atomic id of
    every byte), the rank ``table`` and its pairs as int64 ``lefts``, ``rights``, ``ranks``. Returns an int64 array:
    ``_CHAR_BLOCKS`` block entries (the offset in this array of a block of 256 keys, or -1), then the blocks: a
    record of ``_RECORD`` int64 per key: its unit's token id (-1: none), then the classes of byte
    (``_byte_classes``) allowed just before it and just after it, as bits (see ``_RECORD``). A
    unit's key is its character's code point, plus ``_CHAR_KEYS`` after a space. A token is entered when its
    bytes are a unit that the merge loops build into that token alone and some neighbour is allowed; a class is
    allowed when note (7)'s conditions hold for every token on the other side whose edge byte is of that class.
    """
    n_tok = tb_off.shape[0] - 1
    never = np.int64(1) << 62
    # 1. each unit alone, in the merge loops' order (the lowest value, leftmost first), tracing the partial
    #    tokens at its ends with the highest rank used up to the step that consumes each
    n_cand = 0  # tokens whose bytes are a unit (the trace's arrays are sized by them, not by the vocabulary)
    for t in range(n_tok):
        if _unit_key(tb, tb_off[t], tb_off[t + 1]) >= 0:
            n_cand += 1
    unit_tok = np.empty(n_cand, np.int64)
    unit_key = np.empty(n_cand, np.int64)
    ends = np.empty((n_cand, 5, 2, 2), np.int64)  # per unit, up to 5 (token, bound) on its left / right end
    n_ends = np.zeros((n_cand, 2), np.int64)
    need = np.zeros((n_tok, 2), np.bool_)  # tokens whose merges on their left (0) / right (1) side are needed
    n_units = 0
    seq = np.empty(5, np.int64)
    for t in range(n_tok):
        o = tb_off[t]
        n = tb_off[t + 1] - o
        key = _unit_key(tb, o, o + n)
        if key < 0:
            continue
        for j in range(n):
            seq[j] = byte_ids[tb[o + j]]
        u = n_units
        n_ends[u, 0] = 0
        n_ends[u, 1] = 0
        m = n
        top = np.int64(-1)
        while m >= 2:
            best = np.int64(0x7FFFFFFFFFFFFFFF)
            at = -1
            for j in range(m - 1):
                v = _pair_lookup(table, seq[j], seq[j + 1])
                if v >= 0 and v < best:
                    best = v
                    at = j
            if at < 0:
                break
            top = max(top, best >> 32)
            if at == 0:  # the left end's partial is consumed: no merge onto it may rank up to here
                ends[u, n_ends[u, 0], 0, 0] = seq[0]
                ends[u, n_ends[u, 0], 0, 1] = top
                n_ends[u, 0] += 1
            if at == m - 2:  # the right end's partial is consumed
                ends[u, n_ends[u, 1], 1, 0] = seq[m - 1]
                ends[u, n_ends[u, 1], 1, 1] = top
                n_ends[u, 1] += 1
            seq[at] = best & _LOW32
            for j in range(at + 1, m - 1):
                seq[j] = seq[j + 1]
            m -= 1
        if m != 1 or seq[0] != t:
            continue
        for side in range(2):  # no merge with the finished token may rank before its last part is made
            ends[u, n_ends[u, side], side, 0] = t
            ends[u, n_ends[u, side], side, 1] = top
            n_ends[u, side] += 1
            for k in range(n_ends[u, side]):
                need[ends[u, k, side, 0], side] = True
        unit_tok[u] = t
        unit_key[u] = key
        n_units += 1
    # 2. the lowest rank of the merges onto each needed token, per class of the token on the other side
    slot = np.full((n_tok, 2), -1, np.int64)
    n_slots = np.zeros(2, np.int64)
    for t in range(n_tok):
        for side in range(2):
            if need[t, side]:
                slot[t, side] = n_slots[side]
                n_slots[side] += 1
    # side 0: merges (y, token) by the class of y's last byte; side 1: merges (token, y) by y's first byte
    lowest = np.full((2, max(n_slots[0], n_slots[1], 1), _LEFT_CLASSES), never, np.int64)
    for i in range(lefts.shape[0]):
        a = lefts[i]
        b = rights[i]
        if a < 0 or b < 0 or a >= n_tok or b >= n_tok:
            continue
        k = slot[a, 1]  # a unit's right end (a) and what starts on its right (b)
        if k >= 0:
            c = _RIGHT_CLASS[tb[tb_off[b]]]
            if c < _RIGHT_CLASSES and ranks[i] < lowest[1, k, c]:
                lowest[1, k, c] = ranks[i]
        k = slot[b, 0]  # a unit's left end (b) and what ends on its left (a)
        if k >= 0:
            c = _LEFT_CLASS[tb[tb_off[a + 1] - 1]]
            if c < _LEFT_CLASSES and ranks[i] < lowest[0, k, c]:
                lowest[0, k, c] = ranks[i]
    # 3. the units' records: a class of neighbour is allowed if no merge with it ranks up to the end's bound
    records = np.empty(_RECORD * n_units, np.int64)
    keys = np.empty(n_units, np.int64)
    n_kept = 0
    for u in range(n_units):
        r = _RECORD * n_kept
        records[r] = unit_tok[u]
        records[r + 1 : r + _RECORD] = 0
        for side in range(2):  # the classes before the unit in words r + 1 .. r + 3, after it in r + 4, r + 5
            for c in range(_LEFT_CLASSES if side == 0 else _RIGHT_CLASSES):
                allowed = True
                for k in range(n_ends[u, side]):
                    if lowest[side, slot[ends[u, k, side, 0], side], c] <= ends[u, k, side, 1]:
                        allowed = False
                if allowed:
                    records[r + 1 + 3 * side + (c >> 5)] |= np.int64(1) << (c & 31)
        if records[r + 1 : r + _RECORD].max() == 0:
            continue  # allowed only alone: a whole pretoken, which the shortcut has
        keys[n_kept] = unit_key[u]
        n_kept += 1
    # 4. the lookup: the block map, then blocks of 256 records (one per key; a record's id is -1 for no unit)
    blocks = np.full(_CHAR_BLOCKS, -1, np.int64)
    n_blocks = 0
    for k in range(n_kept):
        if blocks[keys[k] >> 8] < 0:
            blocks[keys[k] >> 8] = _CHAR_BLOCKS + 256 * _RECORD * n_blocks
            n_blocks += 1
    out = np.full(_CHAR_BLOCKS + 256 * _RECORD * n_blocks, -1, np.int64)
    out[:_CHAR_BLOCKS] = blocks
    for k in range(n_kept):
        r = blocks[keys[k] >> 8] + _RECORD * (keys[k] & 255)
        for j in range(_RECORD):
            out[r + j] = records[_RECORD * k + j]
    return out


@njit(cache=True, nogil=True, inline="always")
def _initial_ids(text, s, e, byte_ids, chars, out, w):
    """Write the atomic ids of the pretoken ``text[s:e]`` at ``out[w:]``: each byte's id, except that a unit (a
    character of 2-4 bytes, or a space and one) found in the table ``chars`` (:func:`_build_char_table`) that
    allows the bytes around it is written as its token (module note (7)); with a wide ``byte_ids`` (more than 256
    entries: module note (9)), each three-byte atom code is one id, and a character found in ``chars`` (then the
    table of :func:`fastsw.encoding.wide_fast.wide_chars`) is its token or its two atoms. Returns the number of ids
    written.
    (The table look-up is written out here: as a helper function it cost three times as much.)"""
    if byte_ids.shape[0] != 256:
        # a wide alphabet's table (module note (9)): a three-byte atom code 0xF5, 0x80 | slot >> 6, 0x80 | slot & 0x3F
        # is one id, byte_ids[256 + slot]; a UTF-8 character found in ``chars`` (for a wide alphabet, its table of
        # characters: :func:`fastsw.encoding.wide_fast.wide_chars`) is its token (its two atoms' pair merges) or
        # its two atoms; any other byte is its byte's id
        m = 0
        i = s
        while i < e:
            b = text[i]
            if b == 0xF5 and i + 3 <= e:
                out[w + m] = byte_ids[256 + (((np.int64(text[i + 1]) & 0x3F) << 6) | (np.int64(text[i + 2]) & 0x3F))]
                m += 1
                i += 3
                continue
            cp = np.int64(b)
            n = np.int64(1)
            if b >= 0x80:
                cp, n = _utf8_char(text, i, e)
            if cp >= 0:
                blk = chars[cp >> 8]
                if blk >= 0:
                    v = chars[blk + (cp & 255)]
                    if v >= 0:  # the character's token
                        out[w + m] = np.int32(v)
                        m += 1
                        i += n
                        continue
                    if v < -1:  # its two atoms: -2 - (block slot << 11 | index slot)
                        x = -2 - v
                        out[w + m] = byte_ids[256 + (x >> 11)]
                        out[w + m + 1] = byte_ids[256 + (x & 0x7FF)]
                        m += 2
                        i += n
                        continue
            out[w + m] = byte_ids[b]
            m += 1
            i += 1
        return m
    if chars.shape[0] <= _CHAR_BLOCKS:  # no character table (atoms): the bytes
        for i in range(s, e):
            out[w + i - s] = byte_ids[text[i]]
        return e - s
    m = 0
    i = s
    while i < e:
        b = text[i]
        if (
            0xE0 <= b < 0xF0
            and i + 3 <= e
            and 0x80 <= text[i + 1] < 0xC0
            and 0x80 <= text[i + 2] < 0xC0
            and chars[((np.int64(b) & 0x0F) << 4) | ((np.int64(text[i + 1]) & 0x3F) >> 2)] < 0
        ):
            # a three-byte character in a block of 256 code points without any unit (the English model on Thai):
            # its bytes, without decoding it (the ids the byte-by-byte path below gives it)
            out[w + m] = byte_ids[b]
            out[w + m + 1] = byte_ids[text[i + 1]]
            out[w + m + 2] = byte_ids[text[i + 2]]
            m += 3
            i += 3
            continue
        if b >= 0xC2 or (b == 0x20 and i + 2 < e and text[i + 1] >= 0xC2):
            spaced = 1 if b == 0x20 else 0
            cp, n = _utf8_char(text, i + spaced, e)
            if cp >= 0:
                key = cp + spaced * _CHAR_KEYS
                end = i + spaced + n
                blk = chars[key >> 8]
                t = np.int64(-1)
                if blk >= 0:
                    r = blk + _RECORD * (key & 255)
                    t = chars[r]
                    if t >= 0 and i > s:
                        c = np.int64(_LEFT_CLASS[text[i - 1]])
                        if (chars[r + 1 + (c >> 5)] >> (c & 31)) & 1 == 0:
                            t = -1
                    if t >= 0 and end < e:
                        c = np.int64(_RIGHT_CLASS[text[end]])
                        if (chars[r + 4 + (c >> 5)] >> (c & 31)) & 1 == 0:
                            t = -1
                if t >= 0:
                    out[w + m] = t
                    m += 1
                    i = end
                    continue
        out[w + m] = byte_ids[b]
        m += 1
        i += 1
    return m


@njit(cache=True, nogil=True)
def _pack(data, start, n):
    """Up to 8 bytes of uint8 ``data[start:start+n]`` as one little-endian int64."""
    k = np.int64(0)
    for i in range(n):
        k |= np.int64(data[start + i]) << (8 * i)
    return k


@njit(cache=True, nogil=True)
def _pack8(data, start):
    """The 8 bytes of uint8 ``data[start:start+8]`` as one little-endian int64 (the caller has checked that they
    exist): straight-line loads at an unsigned index (no negative-index fix-up), which LLVM combines into one
    8-byte load."""
    p = np.uint64(start)
    return (
        np.int64(data[p])
        | (np.int64(data[p + np.uint64(1)]) << 8)
        | (np.int64(data[p + np.uint64(2)]) << 16)
        | (np.int64(data[p + np.uint64(3)]) << 24)
        | (np.int64(data[p + np.uint64(4)]) << 32)
        | (np.int64(data[p + np.uint64(5)]) << 40)
        | (np.int64(data[p + np.uint64(6)]) << 48)
        | (np.int64(data[p + np.uint64(7)]) << 56)
    )


@njit(cache=True, nogil=True)
def _low_bytes(n):
    """The int64 mask of the low ``1 <= n <= 8`` bytes (``_pack8(..) & _low_bytes(n)`` is ``_pack(.., n)``)."""
    return np.int64(np.uint64(0xFFFFFFFFFFFFFFFF) >> np.uint64(64 - 8 * n))


@njit(cache=True, nogil=True)
def _short_hash(key, n):
    """Hash (int64) of a piece of ``n <= 8`` bytes packed in ``key``."""
    h = (np.uint64(key) + np.uint64(n)) * _MIX
    return np.int64(h ^ (h >> np.uint64(32)))


@njit(cache=True, nogil=True)
def _long_hash(data, start, end):
    """Hash (int64) of uint8 ``data[start:end]`` (any length), eight bytes per step."""
    h = _FNV_OFFSET ^ np.uint64(end - start)
    i = start
    while i + 8 <= end:
        h = (h ^ np.uint64(_pack8(data, i))) * _MIX
        h ^= h >> np.uint64(32)
        i += 8
    if i < end:
        if i + 8 <= data.shape[0]:
            w = _pack8(data, i) & _low_bytes(end - i)
        else:
            w = _pack(data, i, end - i)
        h = (h ^ np.uint64(w)) * _MIX
        h ^= h >> np.uint64(32)
    return np.int64(h)


@njit(cache=True, nogil=True, inline="always")
def _empty_slots(size, width):
    """A shortcut table of ``size`` empty slots of ``width`` int64 (a slot's second word -1, the rest 0)."""
    sc = np.zeros(width * size, np.int64)
    for s in range(size):
        sc[width * s + 1] = -1
    return sc


@njit(cache=True, nogil=True)
def _build_short_table(tb, tb_off, ids, size):
    """The shortcut table of tokens of at most 8 bytes: ``size`` slots (power of
    two, > 2 x entries) of two int64, ``[packed bytes, length << 32 | id]``
    (-1 = empty); see the module notes."""
    sc = _empty_slots(size, 2)
    mask = size - 1
    for i in range(ids.shape[0]):
        t = ids[i]
        n = tb_off[t + 1] - tb_off[t]
        key = _pack(tb, tb_off[t], n)
        s = _short_hash(key, n) & mask
        while sc[2 * s + 1] != -1:
            s = (s + 1) & mask
        sc[2 * s] = key
        sc[2 * s + 1] = (n << 32) | np.int64(t)
    return sc


@njit(cache=True, nogil=True)
def _build_long_table(tb, tb_off, ids, size):
    """The shortcut table of tokens longer than 8 bytes: ``size`` slots (power of
    two, > 2 x entries) of four int64 ``[hash, length << 32 | id (-1 = empty),
    offset in tb, 0]``; see the module notes."""
    sc = _empty_slots(size, 4)
    mask = size - 1
    for i in range(ids.shape[0]):
        t = ids[i]
        h = _long_hash(tb, tb_off[t], tb_off[t + 1])
        s = (h ^ (h >> 31)) & mask
        while sc[4 * s + 1] != -1:
            s = (s + 1) & mask
        sc[4 * s] = h
        sc[4 * s + 1] = ((tb_off[t + 1] - tb_off[t]) << 32) | np.int64(t)
        sc[4 * s + 2] = tb_off[t]
    return sc


@njit(cache=True, nogil=True)
def _short_lookup(sc, key, n, h):
    """The value (``_ID_MASK``: the id; bit ``_ELIGIBLE_SHIFT``: eligible) of the reachable token of ``n <= 8`` bytes
    packed in ``key`` (hash ``h``), or -1."""
    mask = (sc.shape[0] >> 1) - 1
    s = h & mask
    want = np.int64(n) << 32
    while True:
        meta = sc[2 * s + 1]
        if meta == -1:
            return np.int64(-1)
        if sc[2 * s] == key and (meta & ~_LOW32) == want:
            return meta & _LOW32
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _long_lookup(sc, tb, text, start, end, h):
    """The value (as :func:`_short_lookup`'s) of the reachable token spelled by uint8 ``text[start:end]`` (longer
    than 8 bytes, hash ``h``), or -1."""
    mask = (sc.shape[0] >> 2) - 1
    s = (h ^ (h >> 31)) & mask
    n = end - start
    while True:
        meta = sc[4 * s + 1]
        if meta == -1:
            return np.int64(-1)
        if sc[4 * s] == h and (meta >> 32) == n:
            t = meta & _LOW32
            o = sc[4 * s + 2]
            same = True
            i = 0
            while i + 8 <= n:  # eight bytes per compare, then the tail
                if _pack8(tb, o + i) != _pack8(text, start + i):
                    same = False
                    break
                i += 8
            if same:
                for j in range(i, n):
                    if tb[o + j] != text[start + j]:
                        same = False
                        break
            if same:
                return t
        s = (s + 1) & mask


@njit(cache=True, nogil=True, inline="always")
def _bit_lookup(table, bits, left, right):
    """``_pair_lookup`` of a pair whose bit in the pair filter ``bits`` is tested first (a clear bit: no merge,
    without probing the table). Inlined: the supermerge segments' lookups are independent loads that the CPU
    overlaps, where a call each would run them one after another."""
    b = _pair_bit(left, right)
    if (bits[b >> 6] >> np.uint64(b & 63)) & np.uint64(1) == 0:
        return np.int64(-1)
    return _pair_probe(table, left, right)


@njit(cache=True, nogil=True, inline="always")
def _filtered_lookup(table, bits, use_bits, left, right):
    """``_pair_lookup``, first testing the pair's bit in the filter ``bits`` when
    ``use_bits`` (:func:`_bit_lookup`). Inlined, with a direct entry read in place: most lookups of the scan loop
    (72 % with ``o200k_base`` on Finnish) are one load each, which a call would serialise with the next."""
    if use_bits:
        return _bit_lookup(table, bits, left, right)
    d = _direct_slot(left, right)
    if d >= 0:
        return table[d]
    return _pair_lookup(table, left, right)


@njit(cache=True, nogil=True, inline="always")
def _merge_scan(buf, a, n, table, ranks, bits, use_bits):
    """Merges on int32 ``buf[a:a+n]`` in place for short sequences; int64 ``ranks``
    (>= n) is scratch holding the table value of each adjacent pair. Each step
    merges the leftmost pair of lowest rank and re-looks-up only its two
    neighbours; by the module notes this is the reference's order. With
    ``use_bits``, lookups go through the pair filter ``bits`` first (the
    supermerges: most adjacent pairs of a run have none). Returns the new length."""
    none = np.int64(0x7FFFFFFFFFFFFFFF)
    for i in range(n - 1):
        v = _filtered_lookup(table, bits, use_bits, buf[a + i], buf[a + i + 1])
        ranks[i] = v if v >= 0 else none
    while n >= 2:
        best = none
        at = -1
        for i in range(n - 1):
            if ranks[i] < best:
                best = ranks[i]
                at = i
        if at < 0:
            break
        buf[a + at] = np.int32(best & _LOW32)
        for i in range(at + 1, n - 1):
            buf[a + i] = buf[a + i + 1]
            ranks[i] = ranks[i + 1]
        n -= 1
        if at + 1 < n:
            v = _filtered_lookup(table, bits, use_bits, buf[a + at], buf[a + at + 1])
            ranks[at] = v if v >= 0 else none
        else:
            ranks[at] = none
        if at > 0:
            v = _filtered_lookup(table, bits, use_bits, buf[a + at - 1], buf[a + at])
            ranks[at - 1] = v if v >= 0 else none
    return n


@njit(cache=True, nogil=True, inline="always")
def _merge_three(buf, a, table, bits):
    """The merges of int32 ``buf[a:a+3]`` in place (the order of :func:`_merge_scan`, lookups through the pair
    filter ``bits``), without its scratch and loops: the lower of the two pairs (the left one on a tie), then the
    one pair left. For the supermerge segments of three tokens. Returns the new length."""
    v1 = _bit_lookup(table, bits, buf[a], buf[a + 1])
    v2 = _bit_lookup(table, bits, buf[a + 1], buf[a + 2])
    if v1 < 0 and v2 < 0:
        return 3
    if v2 < 0 or (v1 >= 0 and v1 <= v2):
        buf[a] = np.int32(v1 & _LOW32)
        buf[a + 1] = buf[a + 2]
    else:
        buf[a + 1] = np.int32(v2 & _LOW32)
    v = _bit_lookup(table, bits, buf[a], buf[a + 1])
    if v < 0:
        return 2
    buf[a] = np.int32(v & _LOW32)
    return 1


@njit(cache=True, nogil=True)
def _tree_set(tree, size, leaf, key):
    """Set leaf ``leaf`` of the tournament tree ``tree`` (int64, leaves from
    ``size``) to ``key`` and restore the minima above it, stopping
    where an ancestor already holds the new minimum."""
    k = size + leaf
    tree[k] = key
    while k > 1:
        sib = tree[k ^ 1]
        k >>= 1
        m = key if key < sib else sib
        if tree[k] == m:
            break
        tree[k] = m
        key = m


@njit(cache=True, nogil=True, inline="always")
def _tree_leaves(buf, a, n, table, t, size, nid):
    """The leaves of the tournament tree ``t`` (``t[size + i]``, ``rank << 32 | i`` or
    INT64_MAX) and ``nid`` from one lookup per pair of int32 ``buf[a:a+n]``; the key of
    each pair that merges is also written to ``t[0], t[1], ...`` in order (the few-pairs
    list of :func:`_merge_few`; ``n <= size``, so it never reaches the leaves). Returns
    how many pairs merge."""
    none = np.int64(0x7FFFFFFFFFFFFFFF)
    c = 0
    for i in range(n - 1):
        v = _pair_lookup(table, buf[a + i], buf[a + i + 1])
        if v >= 0:
            key = ((v >> 32) << 32) | i
            t[size + i] = key
            t[c] = key
            c += 1
            nid[i] = np.int32(v & _LOW32)
        else:
            t[size + i] = none
    return c


@njit(cache=True, nogil=True)
def _merge_few(buf, a, n, table, cand, c, nid):
    """Merges on int32 ``buf[a:a+n]`` while few pairs merge (module note (8)): ``cand[:c]``
    (int64) lists the keys ``rank << 32 | i`` of the pairs that merge, ``nid[i]`` their new
    ids. Each step takes the smallest key (the lowest rank, leftmost), marks the right node
    gone (-1 in ``buf``, positions never move) and looks up the merged node's two new
    pairs; at the end the nodes left are compacted. Stops early, compacted, when the list
    would outgrow ``_FEW_PAIRS`` or after ``_FEW_MERGES`` merges (each walk over gone
    nodes stays short). Returns ``n' << 1 | done``: the new length and 1 when no pair is
    left, 0 when the caller must go on with the tree. Relies on every id in ``buf[a:a+n]`` being >= 0 (true: a
    text's bytes and every merge map to ids), since -1 is the mark of a gone node."""
    done = 1
    gone = 0
    while c > 0:
        q = 0
        for r in range(1, c):
            if cand[r] < cand[q]:
                q = r
        i = np.int64(cand[q] & _LOW32)
        new = nid[i]
        j = i + 1
        while buf[a + j] < 0:
            j += 1
        buf[a + i] = new
        buf[a + j] = -1
        gone += 1
        m = j + 1
        while m < n and buf[a + m] < 0:
            m += 1
        p = i - 1
        while p >= 0 and buf[a + p] < 0:
            p -= 1
        # drop the merged pair, the one on its left (changed) and the one on its right (gone)
        w = 0
        for r in range(c):
            pos = cand[r] & _LOW32
            if pos != i and pos != p and pos != j:
                cand[w] = cand[r]
                w += 1
        c = w
        if m < n:
            v = _pair_lookup(table, new, buf[a + m])
            if v >= 0:
                cand[c] = ((v >> 32) << 32) | i
                nid[i] = np.int32(v & _LOW32)
                c += 1
        if p >= 0:
            v = _pair_lookup(table, buf[a + p], new)
            if v >= 0:
                cand[c] = ((v >> 32) << 32) | p
                nid[p] = np.int32(v & _LOW32)
                c += 1
        if c > _FEW_PAIRS or gone >= _FEW_MERGES:
            done = 0 if c > 0 else 1
            break
    w = a
    for k in range(a, a + n):
        if buf[k] >= 0:
            buf[w] = buf[k]
            w += 1
    return ((w - a) << 1) | done


@njit(cache=True, nogil=True, inline="always")
def _merge_tree(buf, a, n, table, nxt, prv, tree, nid):
    """Merges on int32 ``buf[a:a+n]`` in place (the order of ``_merge_scan``: the
    lowest rank, leftmost first), with the pairs' keys in a tournament tree: a
    merge costs three O(log n) leaf updates instead of an O(n) scan and shift.
    When at most ``_FEW_PAIRS`` pairs (and a quarter of them) merge at the start, :func:`_merge_few` works on
    their list instead and builds no tree unless it stops early (module note (8)).

    Scratch: int32 ``nxt``/``prv``/``nid`` (>= n: the linked list of nodes, the new
    id of each node's pair) and int64 ``tree`` (2 P entries, P a power of two >= n;
    only the first 2 P' are used, P' the power of two >= n). Leaf i holds the pair
    starting at node i as ``rank << 32 | i`` (so equal ranks compare leftmost
    first), or INT64_MAX when there is no merge or node i is gone. Returns the
    new length.
    """
    if n < 2:
        return n
    none = np.int64(0x7FFFFFFFFFFFFFFF)
    size = 1
    while size < n:
        size <<= 1
    t = tree  # the first 2 * size entries (a slice would cost a reference count per call)
    c = _tree_leaves(buf, a, n, table, t, size, nid)
    if c <= _FEW_PAIRS and 4 * c <= n:
        if c == 0:
            return n
        got = _merge_few(buf, a, n, table, t, np.int64(c), nid)  # c may be typed the literal 0: one signature
        n = got >> 1
        if (got & 1) != 0 or n < 2:
            return n
        size = 1
        while size < n:
            size <<= 1
        _tree_leaves(buf, a, n, table, t, size, nid)
    for i in range(n - 1, size):
        t[size + i] = none
    for k in range(size - 1, 0, -1):
        x = t[2 * k]
        y = t[2 * k + 1]
        t[k] = x if x < y else y
    for i in range(n):
        nxt[i] = i + 1
        prv[i] = i - 1
    while t[1] != none:
        i = np.int64(t[1] & _LOW32)
        j = nxt[i]
        new = nid[i]
        buf[a + i] = new
        m = nxt[j]
        nxt[i] = m
        _tree_set(t, size, j, none)
        key = none
        if m < n:
            prv[m] = i
            v = _pair_lookup(table, new, buf[a + m])
            if v >= 0:
                key = ((v >> 32) << 32) | i
                nid[i] = np.int32(v & _LOW32)
        _tree_set(t, size, i, key)
        p = prv[i]
        if p >= 0:
            key = none
            v = _pair_lookup(table, buf[a + p], new)
            if v >= 0:
                key = ((v >> 32) << 32) | p
                nid[p] = np.int32(v & _LOW32)
            _tree_set(t, size, p, key)
    w = a
    i = 0
    while i < n:
        buf[w] = buf[a + i]
        w += 1
        i = nxt[i]
    return w - a


@njit(cache=True, nogil=True, inline="always")
def _halve_runs(buf, a, n, table):
    """Module note (5): while int32 ``buf[a:a+n]`` is one id ``x`` repeated, apply the
    merge of ``x x`` arithmetically (``n // 2`` new ids, then ``x`` when n is odd).
    Returns the new length (unchanged when the sequence is not one repeated id)."""
    while n >= 2:
        x = buf[a]
        for i in range(1, n):
            if buf[a + i] != x:
                return n
        v = _pair_lookup(table, x, x)
        if v < 0:
            return n
        new = np.int32(v & _LOW32)
        # rank mode (module note (6)): the step is the reference's only if neither pair it makes
        # (new x, new new) has a lower rank than x x; otherwise the general loop decides
        v2 = _pair_lookup(table, new, x)
        v3 = _pair_lookup(table, new, new)
        if (v2 >= 0 and v2 < v) or (v3 >= 0 and v3 < v):
            return n
        half = n >> 1
        for i in range(half):
            buf[a + i] = new
        if n & 1:
            buf[a + half] = x
        n = half + (n & 1)
    return n


@njit(cache=True, nogil=True)
def _merge_long(buf, a, n, table, nxt, prv, tree, nid):
    """Merges on a long int32 ``buf[a:a+n]`` in place: the arithmetic step of a
    sequence of one repeated id (:func:`_halve_runs`), then the tournament tree
    (:func:`_merge_tree`, same scratch). Returns the new length."""
    n = _halve_runs(buf, a, n, table)
    return _merge_tree(buf, a, n, table, nxt, prv, tree, nid)


@njit(cache=True, nogil=True)
def _tree_size(n):
    """Entries of the ``tree`` scratch of :func:`_merge_tree` for sequences of up to ``n`` ids."""
    size = 1
    while size < n:
        size <<= 1
    return 2 * size


@njit(cache=True, nogil=True)
def _merge(buf, a, n, table, short_limit, ranks, nxt, prv, tree, nid):
    """Merges on int32 ``buf[a:a+n]`` in place: the scan loop up to ``short_limit``
    (int64 scratch ``ranks`` >= n), the long loop above (scratch as in
    ``_merge_tree``). Returns the new length."""
    if n < 2:
        return n
    if n <= short_limit:
        return _merge_scan(buf, a, n, table, ranks, ranks, 0)
    return _merge_long(buf, a, n, table, nxt, prv, tree, nid)


@njit(cache=True, nogil=True)
def _merge_one(ids, table, short_limit):
    """Merges applied to a copy of int32 ``ids`` (for tests and single runs)."""
    n = ids.shape[0]
    buf = ids.copy()
    cap = max(n, 1)
    m = _merge(
        buf,
        0,
        n,
        table,
        short_limit,
        np.empty(cap, np.int64),
        np.empty(cap, np.int32),
        np.empty(cap, np.int32),
        np.empty(_tree_size(cap), np.int64),
        np.empty(cap, np.int32),
    )
    return buf[:m].copy()


@njit(cache=True, nogil=True, inline="always")
def _merge_segment(out, a, n, s_table, s_bits, heap, short_limit, nxt, prv, tree, nid):
    """Supermerges on the run segment ``out[a:a+n]`` (``n`` >= 2, some pair passing the pair filter) in place;
    returns its new length. Most segments are two tokens: one lookup, no call. Inlined (a call passes each array
    as seven words: a called helper measured ~9 % slower on superword models, 35.2 -> 38.4 ms per 2 MB)."""
    if n == 2:
        v = _pair_probe(s_table, out[a], out[a + 1])  # its bit is set
        if v >= 0:
            out[a] = np.int32(v & _LOW32)
            return np.int64(1)
        return np.int64(2)
    if n == 3:
        return _merge_three(out, a, s_table, s_bits)
    if n <= short_limit:
        return _merge_scan(out, a, n, s_table, heap, s_bits, 1)
    return _merge_long(out, a, n, s_table, nxt, prv, tree, nid)


@njit(cache=True, nogil=True)
def _encode_docs(
    text,
    piece_ends,
    doc_pieces,
    byte_ids,
    sc_short,
    sc_long,
    tb,
    r_table,
    s_table,
    s_bits,
    flags,
    chars,
    use_shortcut,
    use_super,
    short_limit,
):
    """Encode a batch of documents.

    Reads: uint8 ``text`` (the documents' UTF-8 bytes, concatenated), int64
    ``piece_ends`` (each pretoken's end offset in code points from the start of
    its document, all documents in order; the driver has checked that each
    document's last end is its length), int64 ``doc_pieces`` (n_docs + 1 offsets
    into ``piece_ends``), int32
    ``byte_ids`` (256: atomic id of each byte), the two shortcut tables and the
    flat vocabulary ``tb``, the rank tables, uint8 ``flags`` per regular id (1:
    eligible), the
    character table ``chars`` (:func:`_build_char_table`; ``_CHAR_BLOCKS`` entries of
    -1: none) and int64 switches. ``s_bits`` is the supermerges' pair filter
    (:func:`_build_pair_bits`) followed by the cross filter (the module notes): runs
    are cut where the cross filter says no supermerge can join the two sides, and a
    segment none of whose pairs passes the pair filter is left as it is. Returns
    ``(ids int32, offsets int64 of n_docs + 1)``; document d's ids are
    ``ids[offsets[d]:offsets[d + 1]]`` (``ids`` is a view of the output buffer).
    Supermerge runs never cross documents.
    """
    n_pieces = piece_ends.shape[0]
    n_text = text.shape[0]
    n_docs = doc_pieces.shape[0] - 1
    # byte boundaries of the pretokens (code points -> bytes by the UTF-8 lead bytes;
    # for ASCII text, code points are bytes)
    bounds = np.empty(n_pieces + 1, np.int64)
    bounds[0] = 0
    longest = 1
    n_chars = 0
    for d in range(n_docs):
        if doc_pieces[d + 1] > doc_pieces[d]:
            n_chars += piece_ends[doc_pieces[d + 1] - 1]
        if doc_pieces[d + 1] - doc_pieces[d] > longest:
            longest = doc_pieces[d + 1] - doc_pieces[d]
    pos = 0
    if n_chars == text.shape[0]:
        for d in range(n_docs):
            prev_end = 0
            for k in range(doc_pieces[d], doc_pieces[d + 1]):
                e = piece_ends[k]
                if e - prev_end > longest:
                    longest = e - prev_end
                bounds[k + 1] = pos + e
                prev_end = e
            pos += prev_end
    else:
        for d in range(n_docs):
            prev_end = 0
            for k in range(doc_pieces[d], doc_pieces[d + 1]):
                start = pos
                for _ in range(piece_ends[k] - prev_end):
                    b = text[pos]
                    if b < 0x80:
                        pos += 1
                    elif b < 0xE0:
                        pos += 2
                    elif b < 0xF0:
                        pos += 3
                    else:
                        pos += 4
                prev_end = piece_ends[k]
                bounds[k + 1] = pos
                if pos - start > longest:
                    longest = pos - start
    if byte_ids.shape[0] != 256:
        # a wide alphabet (module note (9)): a one-byte character may be written as its two atoms, so a piece has at
        # most twice as many ids as bytes
        longest *= 2
        pos *= 2
    heap = np.empty(min(longest, max(short_limit, 1)), np.int64)  # the scan loop's pair values
    if longest > short_limit:
        nxt = np.empty(longest, np.int32)
        prv = np.empty(longest, np.int32)
        nid = np.empty(longest, np.int32)
        tree = np.empty(_tree_size(longest), np.int64)
    else:
        nxt = np.empty(1, np.int32)
        prv = np.empty(1, np.int32)
        nid = np.empty(1, np.int32)
        tree = np.empty(2, np.int64)
    out = np.empty(max(pos, 1), np.int32)
    out_off = np.zeros(n_docs + 1, np.int64)
    # miss cache (see the module notes): direct-mapped by hash; per slot the
    # hash, the piece's byte start and length, and where its ids sit in ``out``
    mc_bits = 6
    while mc_bits < _MISS_CACHE_BITS and (4 << mc_bits) < n_pieces:
        mc_bits += 1
    mc_mask = (1 << mc_bits) - 1
    mc = np.full(4 << mc_bits, -1, np.int64)
    short_mask = (sc_short.shape[0] >> 1) - 1
    long_mask = (sc_long.shape[0] >> 2) - 1
    # np.int64(0), not 0: a variable holding the literal 0 on some path would make the helpers it is passed to
    # compile once more for the literal (Numba specialises calls on literal arguments)
    w = np.int64(0)
    # views of the arrays without reference counts (fastsw._borrow) for the inlined helpers of the supermerge
    # segments and of the missed pretokens' scan loop, whose parameters would otherwise take atomic counts each
    # time a segment ends or a pretoken is merged; the arrays outlive the loop
    out_v, heap_v, s_table_v, s_bits_v = _borrow(out), _borrow(heap), _borrow(s_table), _borrow(s_bits)
    r_table_v = _borrow(r_table)
    nxt_v, prv_v, tree_v, nid_v = _borrow(nxt), _borrow(prv), _borrow(tree), _borrow(nid)
    for d in range(n_docs):
        run_start = w
        run_len = np.int64(0)
        run_can = 0  # 1: some adjacent pair of the run may have a supermerge
        last = doc_pieces[d + 1] - _AHEAD
        for k in range(doc_pieces[d], doc_pieces[d + 1]):
            s = bounds[k]
            e = bounds[k + 1]
            n = np.int64(0)
            if use_shortcut and k < last:
                # the shortcut slot of a pretoken a few places ahead (short ones: nearly all): its cache miss
                # overlaps this pretoken's work instead of stalling that one's look-up
                ps = bounds[k + _AHEAD]
                pn = bounds[k + _AHEAD + 1] - ps
                if pn > 8:
                    ph = _long_hash(text, ps, ps + pn)
                    _prefetch(sc_long, 4 * ((ph ^ (ph >> 31)) & long_mask))
                elif ps + 8 <= n_text:
                    ph = _short_hash(_pack8(text, ps) & _low_bytes(pn), pn)
                    _prefetch(sc_short, 2 * (ph & short_mask))
            cached = False
            slot = 0
            h = np.int64(0)
            eligible = np.int64(-1)  # known from the shortcut entry: 0 or 1
            if use_shortcut:
                if e - s <= 8:
                    if s + 8 <= n_text:  # one 8-byte load and a mask: no loop over the piece's length
                        key = _pack8(text, s) & _low_bytes(e - s)
                    else:
                        key = _pack(text, s, e - s)
                    h = _short_hash(key, e - s)
                    t = _short_lookup(sc_short, key, e - s, h)
                else:
                    h = _long_hash(text, s, e)
                    t = _long_lookup(sc_long, tb, text, s, e, h)
                if t >= 0:
                    out[w] = t & _ID_MASK
                    eligible = t >> _ELIGIBLE_SHIFT
                    n = 1
                else:
                    slot = 4 * ((h ^ (h >> 29)) & mc_mask)
                    if mc[slot] == h and mc[slot + 2] == e - s:
                        o = mc[slot + 1]
                        cached = True
                        for i in range(e - s):
                            if text[o + i] != text[s + i]:
                                cached = False
                                break
                        if cached:
                            n = mc[slot + 3] >> 32
                            src = mc[slot + 3] & _LOW32
                            for i in range(n):
                                out[w + i] = out[src + i]
            if n == 0:
                n = _initial_ids(text, s, e, byte_ids, chars, out, w)
                if n <= short_limit:
                    n = _merge_scan(out_v, w, n, r_table_v, heap_v, s_bits_v, 0)
                else:
                    n = _merge_long(out, w, n, r_table, nxt, prv, tree, nid)
            # one eligible token: it joins the run (models without supermerges have no runs: a plain BPE model
            # marks most ids eligible, and tracking their runs cost it 7-12 % of the kernel's time)
            one = use_super != 0 and n == 1 and (eligible if eligible >= 0 else np.int64(flags[out[w]] & 1)) != 0
            soft = 0
            pair = 0
            if one:
                # a segment of the run goes on unless no supermerge can ever join its two sides (module notes);
                # no branch on the filter bits (they are hard to predict): the state is updated arithmetically
                b = _pair_bit(out[max(w - 1, 0)], out[w])
                sh = np.uint64(b & 63)
                soft = np.int64((s_bits[_CROSS_WORDS + (b >> 6)] >> sh) & np.uint64(1)) & np.int64(run_len > 0)
                pair = np.int64((s_bits[b >> 6] >> sh) & np.uint64(1))
                # a pair of the segment that may merge: its table entry loads meanwhile (no branch)
                _prefetch_pair(s_table_v, out[max(w - 1, 0)], out[w], pair & soft)
            if run_can > soft:  # the segment before ends here and may have a supermerge
                m = _merge_segment(
                    out_v, run_start, run_len, s_table_v, s_bits_v, heap_v, short_limit, nxt_v, prv_v, tree_v, nid_v
                )
                if m < run_len:
                    dst = run_start + m
                    for i in range(n):
                        out[dst + i] = out[w + i]
                    w = dst
            if one:
                run_can = soft & (run_can | pair)
                run_start = run_start if soft else w
                run_len = run_len * soft + 1
                w += 1
                continue
            run_len = 0
            run_can = 0
            if use_shortcut and n >= 2 and not cached and w <= _LOW32:
                # ids at out[w:w+n] stay put from here on (later runs start after them)
                mc[slot] = h
                mc[slot + 1] = s
                mc[slot + 2] = e - s
                mc[slot + 3] = (np.int64(n) << 32) | w
            w += n
        if run_can:  # the segment at the document's end
            w = run_start + _merge_segment(
                out_v, run_start, run_len, s_table_v, s_bits_v, heap_v, short_limit, nxt_v, prv_v, tree_v, nid_v
            )
        out_off[d + 1] = w
    return out[:w], out_off


# the kernels' cache entries are stamped with the files of the jitted code they call, too
stamp_module(__name__)
