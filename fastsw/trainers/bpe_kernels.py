"""Numba kernels for the fast training path (the merge loop of phase 1 and phase 2).

Private functions over contiguous numpy arrays only: no Python objects, no I/O.
The driver :mod:`fastsw.trainers.bpe_fast` coerces its inputs once (ids int32, offsets and
counts int64, token bytes uint8), so every kernel compiles exactly one signature.
The reference these kernels must agree with, merge for merge and count for count,
is :class:`fastsw.trainers.bpe.PairMerger`.

Design notes: see docs/internals.md, section "Phase 1: the merge loop".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastsw._compiling import stamp_module
from fastsw._prefetch import _advise_huge, _prefetch


@njit(cache=True, inline="always")
def _grow(a, cap):
    """A copy of ``a`` (int32, int64 or uint8) with capacity ``cap`` (>= len(a)); the tail is undefined. Inlined
    into each caller (growing is rare), so one body serves every dtype and no signature is compiled for it."""
    b = np.empty(cap, a.dtype)
    _advise_huge(b)
    for i in range(a.shape[0]):  # a loop: a slice copy compiles its shape-mismatch error message too
        b[i] = a[i]
    return b


_MAX_ID = 2**31 - 1  # pair and word ids are stored in 32 bits


@njit(cache=True)
def _kth_smallest(a, k):
    """The value ``np.sort(a)[k]`` (``0 <= k < len(a)``), found in place (``a`` is reordered): a
    quickselect with three-way partitions (runs of equal counts are common) around pivots picked by a
    fixed pseudo-random sequence. ``np.partition`` gives the same value but its compilation (with
    ``np.unique`` and a sort for its argument checks) costs more than the merge loop's own."""
    lo = np.int64(0)
    hi = np.int64(a.shape[0]) - 1
    seed = np.uint64(0x9E3779B97F4A7C15)
    while lo < hi:
        seed = seed * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
        pivot = a[lo + np.int64((seed >> np.uint64(33)) % np.uint64(hi - lo + 1))]
        # a[lo:lt] < pivot, a[lt:i] == pivot, a[gt+1:hi+1] > pivot
        lt, i, gt = lo, lo, hi
        while i <= gt:
            v = a[i]
            if v < pivot:
                a[i] = a[lt]
                a[lt] = v
                lt += 1
                i += 1
            elif v > pivot:
                a[i] = a[gt]
                a[gt] = v
                gt -= 1
            else:
                i += 1
        if k < lt:
            hi = lt - 1
        elif k > gt:
            lo = gt + 1
        else:
            return pivot
    return a[k]


@njit(cache=True)
def _hash(key):
    """32 well-mixed bits (a non-negative int64) of a pair key ``left << 32 | right``."""
    h = ((key >> 32) * 0x9E3779B1) ^ ((key & 0xFFFFFFFF) * 0x85EBCA77)  # < 2**63: no overflow
    return (h ^ (h >> 32)) & 0xFFFFFFFF


@njit(cache=True)
def _find(htab, rec, key, fp):
    """Linear probing over the int64 hash table ``htab`` (-1 = empty slot, else
    ``fp << 32 | pair id``; the home slot of hash ``fp`` is ``fp * len(htab) >> 32``).
    A slot whose stored hash equals ``fp`` is confirmed on the pair's key
    ``rec[3 * id]``. Returns the pair id, or ``-1 - s`` for the empty slot ``s``
    where ``key`` belongs."""
    n = htab.shape[0]
    s = (fp * n) >> 32
    while True:
        v = htab[s]
        if v == -1:
            return -1 - s
        if ((v >> 32) & 0xFFFFFFFF) == fp:
            q = v & 0xFFFFFFFF
            if rec[3 * q] == key:
                return q
        s += 1
        if s == n:
            s = 0


@njit(cache=True)
def _rehash(htab, size):
    """A new hash table of ``size`` slots holding the entries of ``htab`` (the
    stored hashes place them; the pair records are not read)."""
    out = np.empty(size, np.int64)
    _advise_huge(out)  # before the pages are first touched (np.full would fill them at once)
    for i in range(size):
        out[i] = -1
    for i in range(htab.shape[0]):
        v = htab[i]
        if v != -1:
            s = (((v >> 32) & 0xFFFFFFFF) * size) >> 32
            while out[s] != -1:
                s += 1
                if s == size:
                    s = 0
            out[s] = v
    return out


@njit(cache=True)
def _pair_id(htab, rec, plen, n_pairs, x, y):
    """The id of pair ``(x, y)``, creating it (count 0, no occurrences) when new (its language columns, if any,
    are the caller's: :func:`_add_count`).

    The caller has made room: the pair arrays have capacity > ``n_pairs`` and the
    hash table has a free slot. Returns ``(pair id, new n_pairs)``.
    """
    key = (np.int64(x) << 32) | np.int64(y)
    fp = _hash(key)
    q = _find(htab, rec, key, fp)
    if q >= 0:
        return q, n_pairs
    htab[-1 - q] = (fp << 32) | n_pairs
    rec[3 * n_pairs] = key
    rec[3 * n_pairs + 1] = 0
    rec[3 * n_pairs + 2] = -1
    plen[n_pairs] = 0
    return n_pairs, n_pairs + 1


@njit(cache=True, inline="always")
def _add_count(pcount, n_lang, col, q, created, c):
    """Add ``c`` to pair ``q``'s count in language column ``col`` (none when ``n_lang`` is 0: BPE), zeroing its
    ``n_lang`` columns first when the pair was just ``created``. Inlined: it runs once per pair."""
    if n_lang > 0:
        if created:
            for l in range(n_lang):
                pcount[q * n_lang + l] = 0
        pcount[q * n_lang + col] += c


@njit(cache=True)
def _room_for_pairs(pairs, n_lang, need):
    """The pair table ``pairs = (htab, rec, plen, pcount)`` with room for ``need`` pairs: the pair arrays (and the
    ``n_lang`` count columns per pair of ``pcount``) grown by 1.25x (each growth briefly holds old and new) and the
    hash table by 1.5x at 3/4 load, or the same arrays when they already fit."""
    htab, rec, plen, pcount = pairs
    cap = plen.shape[0]
    if need > cap:
        cap = max(cap + cap // 4, need)
        if cap > _MAX_ID:
            raise ValueError("too many pairs for the merge loop (pair ids are 32-bit)")
        rec = _grow(rec, 3 * cap)
        plen = _grow(plen, cap)
    if cap * n_lang > pcount.shape[0]:
        pcount = _grow(pcount, cap * n_lang)
    if 4 * need > 3 * htab.shape[0]:
        size = htab.shape[0]
        while 4 * need > 3 * size:
            size += size // 2
        htab = _rehash(htab, size)
    return htab, rec, plen, pcount


@njit(cache=True)
def _compact(occ, plen, rec, n_pairs, floor):
    """Move the occurrence segments of pairs ``0 .. n_pairs - 1`` that can still be
    chosen (count above ``floor``) to the front of ``occ``, keeping their order
    (segments lie in ``occ`` in pair id order); drop the others. Returns the used
    length."""
    k = 0
    for q in range(n_pairs):
        n = plen[q]
        if n == 0:
            continue
        if rec[3 * q + 1] <= floor:
            plen[q] = 0
            continue
        s = rec[3 * q + 2]
        if s != k:
            for i in range(n):
                occ[k + i] = occ[s + i]
            rec[3 * q + 2] = k
        k += n
    return k


@njit(cache=True)
def _cmp_bytes(tb, tb_off, x, y):
    """Compare token ``x``'s bytes with token ``y``'s (uint8 ``tb``, int64
    ``tb_off``): -1, 0 or 1; unsigned bytes, a proper prefix first."""
    if x == y:
        return 0
    ox = tb_off[x]
    oy = tb_off[y]
    nx = tb_off[x + 1] - ox
    ny = tb_off[y + 1] - oy
    n = min(nx, ny)
    for i in range(n):
        a = tb[ox + i]
        b = tb[oy + i]
        if a != b:
            return -1 if a < b else 1
    if nx == ny:
        return 0
    return -1 if nx < ny else 1


@njit(cache=True)
def _prefix_key(tb, tb_off, t):
    """Token ``t``'s first 8 bytes, zero-padded, big-endian, with the sign bit
    flipped: where two tokens' prefix keys differ, their order is the order of
    their byte strings (equal keys decide nothing)."""
    o = tb_off[t]
    n = min(tb_off[t + 1] - o, 8)
    v = np.int64(0)
    for i in range(8):
        v <<= 8
        if i < n:
            v |= np.int64(tb[o + i])
    return v ^ (np.int64(1) << 63)


@njit(cache=True)
def _cmp_token(tpre, tb, tb_off, x, y):
    """Token ``x``'s bytes against token ``y``'s (-1, 0 or 1): the prefix keys
    ``tpre`` decide when they differ, else the bytes themselves."""
    if x == y:
        return 0
    if tpre[x] != tpre[y]:
        return -1 if tpre[x] < tpre[y] else 1
    return _cmp_bytes(tb, tb_off, x, y)


@njit(cache=True)
def _better(kp, cp, kq, cq, tpre, tb, tb_off, tie_bytes):
    """True when the pair with key ``kp`` (``left << 32 | right``) and count ``cp``
    ranks strictly above the pair with key ``kq`` and count ``cq``: higher count,
    then the smaller tie key. Comparing keys compares ``(left id, right id)``; with
    ``tie_bytes`` the tokens' byte strings come first, decided by their prefix keys
    ``tpre`` when those differ."""
    if cp != cq:
        return cp > cq
    if tie_bytes != 0 and kp != kq:
        c = _cmp_token(tpre, tb, tb_off, kp >> 32, kq >> 32)
        if c != 0:
            return c < 0
        c = _cmp_token(tpre, tb, tb_off, kp & 0xFFFFFFFF, kq & 0xFFFFFFFF)
        if c != 0:
            return c < 0
    return kp < kq


# ---- lazy max-heaps of pair keys and counts: a heap is the region hk/hc[base : base + size] (BPE has one at
# base 0; parity-aware BPE one per language in the same arrays). Inlined into each caller, where BPE's base 0 and
# summed column are constants: called, they cost BPE's phase 1 about 15 % more CPU than BPE's own heap had
# (`python bench/bench_phase1.py --mb 20 --merges 30000 --rounds 5`: 0.585 s against 0.507 s, medians of 3
# alternating runs); inlined, 0.495 s against 0.479 s (medians of 6)


@njit(cache=True, inline="always")
def _move(hk, hc, base, dst, src):
    """Heap entry ``src`` to position ``dst`` of the heap at ``base``."""
    hk[base + dst] = hk[base + src]
    hc[base + dst] = hc[base + src]


@njit(cache=True, inline="always")
def _move_in(hk, hc, base, i, p, c):
    """Key ``p`` with count ``c`` to position ``i`` of the heap at ``base``."""
    hk[base + i] = p
    hc[base + i] = c


@njit(cache=True, inline="always")
def _sift_down(hk, hc, base, size, i, tpre, tb, tb_off, tie_bytes):
    """Restore the order of the heap at ``base`` below position ``i``."""
    p = hk[base + i]
    c = hc[base + i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        other = child + 1
        if other < size and _better(
            hk[base + other], hc[base + other], hk[base + child], hc[base + child], tpre, tb, tb_off, tie_bytes
        ):
            child = other
        if not _better(hk[base + child], hc[base + child], p, c, tpre, tb, tb_off, tie_bytes):
            break
        _move(hk, hc, base, i, child)
        i = child
    _move_in(hk, hc, base, i, p, c)


@njit(cache=True, inline="always")
def _push(hk, hc, base, size, p, c, tpre, tb, tb_off, tie_bytes):
    """Push key ``p`` with count ``c`` onto the heap at ``base`` (capacity must allow it); returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _better(p, c, hk[base + parent], hc[base + parent], tpre, tb, tb_off, tie_bytes):
            break
        _move(hk, hc, base, i, parent)
        i = parent
    _move_in(hk, hc, base, i, p, c)
    return size + 1


@njit(cache=True, inline="always")
def _column(rec, pcount, n_lang, q, h):
    """Pair ``q``'s count in column ``h``: language ``h``, or the sum when ``h == n_lang`` (BPE: ``n_lang`` 0)."""
    if h == n_lang:
        return rec[3 * q + 1]
    return pcount[q * n_lang + h]


@njit(cache=True, inline="always")
def _top(hk, hc, base, size, h, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes):
    """The best pair of the heap at ``base`` on column ``h`` (:func:`_column`): re-key stale tops with their current
    count, drop those at or below ``floor``. Returns ``(pair id or -1 when none is left, new heap size)``."""
    while size > 0:
        key = hk[base]
        q = _find(htab, rec, key, _hash(key))
        current = _column(rec, pcount, n_lang, q, h)
        if hc[base] == current:
            return q, size
        if current > floor:
            hc[base] = current
        else:
            size -= 1
            hk[base] = hk[base + size]
            hc[base] = hc[base + size]
        _sift_down(hk, hc, base, size, np.int64(0), tpre, tb, tb_off, tie_bytes)
    return -1, size


@njit(cache=True, inline="always")
def _allowed(key, tkind, rule):
    """Whether the pair ``key`` (``left << 32 | right``) may be merged: ``rule[kind of left, kind of right]``
    is the new token's kind, or -1 for a forbidden merge (see :func:`_merge_loop`)."""
    return rule[tkind[key >> 32], tkind[key & 0xFFFFFFFF]] >= 0


@njit(cache=True)
def _push_created(heap_key, heap_count, hsize, rec, first, last, floor, tpre, tb, tb_off, tie_bytes, tkind, rule):
    """Push the pairs ``first .. last - 1`` whose count is above ``floor`` and that the merge rule allows;
    returns the heap size."""
    for q in range(first, last):
        if rec[3 * q + 1] > floor and _allowed(rec[3 * q], tkind, rule):
            hsize = _push(
                heap_key, heap_count, np.int64(0), hsize, rec[3 * q], rec[3 * q + 1], tpre, tb, tb_off, tie_bytes
            )
    return hsize


@njit(cache=True, inline="always")
def _pair_counts(x, y, i, last_eq, overlapping):
    """:func:`fastsw.trainers.bpe.word_pairs`'s rule for every walk over a word's pairs: whether the pair ``x y`` at
    position ``i`` counts, and the walk's next ``last_eq`` (start at -2). Inlined: it runs once per pair."""
    if x == y and overlapping == 0:
        if last_eq == i - 1:
            return False, -2
        return True, i
    return True, last_eq


# ---- the merge loop's words and pair table, shared with parity-aware BPE (:mod:`fastsw.trainers.parity_kernels`):
# ``words = (tokens, offsets, lengths, word_counts, word_lang, word_lw)`` (int32 tokens; int64 offsets, lengths and
# counts; per word its language, int32, and its length weight, int64, both read only when ``n_lang`` > 0, so BPE
# passes empty arrays) and ``pairs = (htab, rec, plen, pcount)`` (``pcount``: ``n_lang`` counts per pair, one per
# language, beside the summed count in ``rec``)


@njit(cache=True)
def _count_words(words, n_lang, w, overlapping, pairs, n_pairs, tq, t0):
    """The initial pair counts (summed, and per language when ``n_lang`` > 0) of the words from ``w`` on;
    ``tq[o - t0 + i]`` gets the pair at position ``i`` of the word at ``o`` when it is the pair's first
    occurrence in the word, else -1 (``rec[3 * q + 2]`` is the last word counted in pair ``q``'s ``plen``).
    Stops before a word the pair arrays or the hash table lack room for; returns ``(w, n_pairs)`` (``w`` =
    n_words when done). A separate function for the reason given at :func:`_rewrite_words`."""
    tokens, offsets, lengths, word_counts, word_lang, _ = words
    htab, rec, plen, pcount = pairs
    n_words = offsets.shape[0] - 1
    while w < n_words:
        o = offsets[w]
        L = lengths[w]
        if L < 2:
            w += 1
            continue
        need = n_pairs + L + 1
        if need > plen.shape[0] or 4 * need > 3 * htab.shape[0]:
            return w, n_pairs
        c = word_counts[w]
        col = word_lang[w] if n_lang > 0 else 0
        last_eq = -2
        for i in range(L - 1):
            x = tokens[o + i]
            y = tokens[o + i + 1]
            counted, last_eq = _pair_counts(x, y, i, last_eq, overlapping)
            if not counted:
                tq[o - t0 + i] = -1
                continue
            q, n = _pair_id(htab, rec, plen, n_pairs, x, y)
            rec[3 * q + 1] += c
            _add_count(pcount, n_lang, col, q, n != n_pairs, c)
            n_pairs = n
            if rec[3 * q + 2] != w:
                rec[3 * q + 2] = w
                plen[q] += 1
                tq[o - t0 + i] = q
            else:
                tq[o - t0 + i] = -1
        w += 1
    return w, n_pairs


@njit(cache=True)
def _rewrite_words(words, n_lang, overlapping, pairs, n_pairs, occ, seg, t, seg_n, a, b, new, bufs, n_buf, win, drop):
    """Merge ``(a, b)`` into ``new`` in the words ``occ[seg + t : seg + seg_n]``,
    updating pair counts (summed, and the word's language column when ``n_lang`` > 0, where also
    ``drop[lang] += replacements × length weight``) and collecting the new token's occurrences in
    ``bufs = (buf_q, buf_w)``. Stops early, before changing a word, when the pair arrays, the hash
    table or the buffer lack room for it. Returns ``(t, n_pairs, n_buf)``: where
    it stopped (``seg_n`` when done) and the new sizes.

    A separate function, so that its arrays are loop invariants (the caller
    grows them between calls)."""
    tokens, offsets, lengths, word_counts, word_lang, word_lw = words
    htab, rec, plen, pcount = pairs
    buf_q, buf_w = bufs
    win_lo, win_hi, win_n = win
    while t < seg_n:
        # the words ahead are scattered in memory: fetch their offset, length and
        # count 12 words ahead and their first tokens 6 words ahead
        if t + 12 < seg_n:
            w2 = occ[seg + t + 12]
            _prefetch(offsets, w2)
            _prefetch(lengths, w2)
            _prefetch(word_counts, w2)
            if n_lang > 0:
                _prefetch(word_lang, w2)
        if t + 6 < seg_n:
            _prefetch(tokens, offsets[occ[seg + t + 6]])
        w = occ[seg + t]
        o = offsets[w]
        L = lengths[w]

        # windows around the replacements, in the old word's coordinates: a
        # replacement at i changes the pairs of tokens i-1 .. i+2; with the
        # non-overlapping rule the window is widened to the whole runs of
        # equal tokens at its ends, so a window's pairs count the same inside
        # it as in the word. Windows that overlap are joined.
        n_win = 0
        cur_n = 0
        cur_lo = 0
        cur_hi = 0
        i = 0
        while i < L - 1:
            if tokens[o + i] != a or tokens[o + i + 1] != b:
                i += 1
                continue
            lo = i - 1 if i > 0 else 0
            hi = i + 3 if i + 3 < L else L
            if overlapping == 0:
                # widen to whole runs of equal tokens, walking only through tokens
                # the current window does not cover: reaching cur_hi - 1 going left
                # joins the windows anyway, and a walk right from inside the window
                # would stop at cur_hi (a run boundary or L), so each token is walked
                # at most twice per word (linear in a run of 10^6 equal tokens)
                floor = cur_hi - 1 if cur_n > 0 else 0
                while lo > floor and lo > 0 and tokens[o + lo - 1] == tokens[o + lo]:
                    lo -= 1
                if cur_n == 0 or hi > cur_hi:
                    while hi < L and tokens[o + hi] == tokens[o + hi - 1]:
                        hi += 1
            if cur_n > 0 and lo < cur_hi:
                cur_hi = max(cur_hi, hi)
                cur_n += 1
            else:
                if cur_n > 0:
                    win_lo[n_win] = cur_lo
                    win_hi[n_win] = cur_hi
                    win_n[n_win] = cur_n
                    n_win += 1
                cur_lo = lo
                cur_hi = hi
                cur_n = 1
            i += 2
        if cur_n == 0:
            t += 1
            continue  # stale entry: an earlier merge removed the pair from this word
        win_lo[n_win] = cur_lo
        win_hi[n_win] = cur_hi
        win_n[n_win] = cur_n
        n_win += 1
        c = word_counts[w]
        col = word_lang[w] if n_lang > 0 else 0

        need = n_pairs + L + 1
        if need > plen.shape[0] or 4 * need > 3 * htab.shape[0] or n_buf + L > buf_q.shape[0]:
            return t, n_pairs, n_buf  # the caller makes room, then calls again from t

        if c != 0:  # old pairs of each window out (a word counted 0 times, a dev text's, changes no count)
            for v in range(n_win):
                last_eq = -2
                for i in range(win_lo[v], win_hi[v] - 1):
                    x = tokens[o + i]
                    y = tokens[o + i + 1]
                    counted, last_eq = _pair_counts(x, y, i, last_eq, overlapping)
                    if not counted:
                        continue
                    key = (np.int64(x) << 32) | np.int64(y)
                    q = _find(htab, rec, key, _hash(key))
                    rec[3 * q + 1] -= c
                    if n_lang > 0:
                        pcount[q * n_lang + col] -= c

        # rewrite in place from the first replacement, left to right, non-overlapping
        i = win_lo[0]
        k = i
        while i < L:
            if i + 1 < L and tokens[o + i] == a and tokens[o + i + 1] == b:
                tokens[o + k] = new
                i += 2
            else:
                tokens[o + k] = tokens[o + i]
                i += 1
            k += 1
        if n_lang > 0:
            drop[col] += (L - k) * word_lw[w]
        L = k
        lengths[w] = L

        # new pairs of each window in (a window shifts left by one token per
        # replacement before it and shrinks by one per replacement inside it);
        # only pairs with the new token are new to the word's occurrences
        shift = 0
        for v in range(n_win):
            lo = win_lo[v] - shift
            shift += win_n[v]
            hi = win_hi[v] - shift
            last_eq = -2
            for i in range(lo, hi - 1):
                x = tokens[o + i]
                y = tokens[o + i + 1]
                counted, last_eq = _pair_counts(x, y, i, last_eq, overlapping)
                if not counted:
                    continue
                q, n = _pair_id(htab, rec, plen, n_pairs, x, y)
                rec[3 * q + 1] += c
                _add_count(pcount, n_lang, col, q, n != n_pairs, c)
                n_pairs = n
                if (x == new or y == new) and rec[3 * q + 2] != w:
                    rec[3 * q + 2] = w
                    plen[q] += 1
                    buf_q[n_buf] = q
                    buf_w[n_buf] = w
                    n_buf += 1

        t += 1
    return t, n_pairs, n_buf


@njit(cache=True)
def _rewrite_segment(words, n_lang, overlapping, pairs, n_pairs, occ, seg, seg_n, a, b, new, bufs, win, drop):
    """Merge ``(a, b)`` into ``new`` in every word of the occurrence segment ``occ[seg : seg + seg_n]``
    (:func:`_rewrite_words`, the pair table and the buffers grown between its calls). Returns ``(pairs,
    n_pairs, bufs, n_buf)``."""
    lengths = words[2]
    n_buf = np.int64(0)
    t = np.int64(0)
    while True:
        t, n_pairs, n_buf = _rewrite_words(
            words, n_lang, overlapping, pairs, n_pairs, occ, seg, t, seg_n, a, b, new, bufs, n_buf, win, drop
        )
        if t >= seg_n:
            return pairs, n_pairs, bufs, n_buf
        L = lengths[occ[seg + t]]
        pairs = _room_for_pairs(pairs, n_lang, n_pairs + L + 1)
        buf_q, buf_w = bufs
        if n_buf + L > buf_q.shape[0]:
            buf_cap = max(buf_q.shape[0] + buf_q.shape[0] // 2, n_buf + L)
            bufs = (_grow(buf_q, buf_cap), _grow(buf_w, buf_cap))


@njit(cache=True)
def _token_table(tb_in, tb_off_in, steps):
    """The vocabulary's bytes ``tb`` (a copy of ``tb_in``), its offsets with room for ``steps`` more tokens, and
    the tokens' prefix keys (:func:`_prefix_key`, same room): ``(tb, tb_off, tpre)``."""
    n_tokens = tb_off_in.shape[0] - 1
    tb = _grow(tb_in, tb_in.shape[0])  # a copy (``tb_in.copy()`` would compile one more implementation)
    tb_off = _grow(tb_off_in, n_tokens + 1 + steps)
    tpre = np.empty(n_tokens + steps, np.int64)
    for t in range(n_tokens):
        tpre[t] = _prefix_key(tb, tb_off, t)
    return tb, tb_off, tpre


@njit(cache=True)
def _add_token(tb, tb_off, tpre, tb_used, a, b, new):
    """Token ``new`` = token ``a``'s bytes then ``b``'s, appended to the table of :func:`_token_table` (``tb_used``
    bytes used). Returns ``(tb, tb_used)`` (``tb`` grown when full)."""
    la = tb_off[a + 1] - tb_off[a]
    lb = tb_off[b + 1] - tb_off[b]
    if tb_used + la + lb > tb.shape[0]:
        tb = _grow(tb, max(2 * tb.shape[0], tb_used + la + lb))
    for i in range(la):
        tb[tb_used + i] = tb[tb_off[a] + i]
    for i in range(lb):
        tb[tb_used + la + i] = tb[tb_off[b] + i]
    tb_used += la + lb
    tb_off[new + 1] = tb_used
    tpre[new] = _prefix_key(tb, tb_off, new)
    return tb, tb_used


@njit(cache=True)
def _initial_pairs(words, n_lang, overlapping):
    """The pair table of the words' initial pairs. Returns ``(pairs, n_pairs, tq, t0, win)``: ``tq`` as in
    :func:`_count_words` (``t0`` the first word's offset), ``win`` the replacement windows' scratch arrays of
    :func:`_rewrite_words` (``(lo, hi, n)``, room for the longest word)."""
    offsets, lengths = words[1], words[2]
    n_words = offsets.shape[0] - 1
    if n_words > _MAX_ID:
        raise ValueError("too many words for the merge loop (word ids are 32-bit)")
    # pairs: rec[3q] = key (left << 32 | right), rec[3q + 1] = count, rec[3q + 2] =
    # start of the occurrence segment occ[start:start + plen[q]] (while the segment
    # is being collected: the last word added)
    cap = 1024
    htab = np.full(4096, -1, np.int64)
    pairs = (htab, np.empty(3 * cap, np.int64), np.empty(cap, np.int32), np.empty(cap * n_lang, np.int64))
    n_pairs = np.int64(0)  # typed, so helpers compile one signature
    max_len = 0
    n_tok = 0
    for w in range(n_words):
        max_len = max(max_len, lengths[w])
        n_tok += lengths[w]
    n_win = max_len // 2 + 1
    win = (np.empty(n_win, np.int64), np.empty(n_win, np.int64), np.empty(n_win, np.int64))
    tq = np.empty(n_tok, np.int32)
    _advise_huge(tq)
    t0 = offsets[0] if n_words > 0 else 0
    w = np.int64(0)
    while True:
        w, n_pairs = _count_words(words, n_lang, w, overlapping, pairs, n_pairs, tq, t0)
        if w >= n_words:
            return pairs, n_pairs, tq, t0, win
        pairs = _room_for_pairs(pairs, n_lang, n_pairs + lengths[w] + 1)


@njit(cache=True)
def _initial_segments(offsets, lengths, tq, t0, rec, plen, n_pairs, floor):
    """The occurrence segments of the initial pairs counted above ``floor`` (the others get none), in pair id
    order, each in word order, from ``tq`` (:func:`_initial_pairs`). Returns ``(occ, n_occ)``: the occurrence
    array (with room to grow) and its used length."""
    n_occ = np.int64(0)
    for q in range(n_pairs):
        if rec[3 * q + 1] <= floor:
            plen[q] = 0
        rec[3 * q + 2] = n_occ
        n_occ += plen[q]
    occ = np.empty(n_occ + n_occ // 8 + 1024, np.int32)
    _advise_huge(occ)
    for w in range(offsets.shape[0] - 1):
        o = offsets[w] - t0
        for i in range(lengths[w] - 1):
            q = tq[o + i]
            if q >= 0 and plen[q] > 0:
                occ[rec[3 * q + 2]] = w
                rec[3 * q + 2] += 1
    for q in range(n_pairs):
        rec[3 * q + 2] -= plen[q]
    return occ, n_occ


@njit(cache=True)
def _new_segments(occ, n_occ, rec, plen, first, n_pairs, bufs, n_buf, floor):
    """A merge's occurrences ``bufs = (buf_q, buf_w)`` become the segments of the pairs ``first .. n_pairs - 1``
    created in it (those counted at or below ``floor`` get none), appended in pair id order (compacting, then
    growing, when full). Returns ``(occ, n_occ)``."""
    buf_q, buf_w = bufs
    for q in range(first, n_pairs):
        if rec[3 * q + 1] <= floor:
            plen[q] = 0  # never chosen: no segment
    if n_occ + n_buf > occ.shape[0]:
        n_occ = _compact(occ, plen, rec, first, floor)
        occ_cap = occ.shape[0]
        if 4 * (n_occ + n_buf) > 3 * occ_cap:
            occ = _grow(occ[:n_occ], max(occ_cap + occ_cap // 4, n_occ + n_buf + n_buf // 2))
    for q in range(first, n_pairs):
        rec[3 * q + 2] = n_occ
        n_occ += plen[q]
    for t in range(n_buf):
        q = buf_q[t]
        if plen[q] > 0:
            occ[rec[3 * q + 2]] = buf_w[t]
            rec[3 * q + 2] += 1
    for q in range(first, n_pairs):
        rec[3 * q + 2] -= plen[q]
    return occ, n_occ


@njit(cache=True, nogil=True)
def _merge_loop(
    tokens,
    offsets,
    word_counts,
    tb_in,
    tb_off_in,
    overlapping,
    tie_bytes,
    max_steps,
    use_replay,
    replay,
    tkind_in,
    rule,
    prune_top,
    stop,
):
    """The merge loop over aggregated words, optionally interleaved with a replay of
    regular merges (BoundlessBPE, Algorithm 1).

    Reads ``offsets`` (int64, n_words + 1), ``word_counts`` (int64, n_words),
    ``tb_in``/``tb_off_in`` (uint8 bytes of the current vocabulary, int64 offsets
    of length n_tokens + 1) and ``replay`` (int64 counts of the regular merges; used
    when ``use_replay`` is 1). Rewrites ``tokens`` (int32) in place.

    Without replay: up to ``max_steps`` merges, each the best pair. With replay:
    up to ``max_steps`` steps; a step takes the best pair only when its count is
    strictly greater than ``replay[j]``, else it takes regular merge ``j``; the loop
    stops when no pair is left. New tokens get ids ``n_tokens, n_tokens + 1, ...``.

    ``prune_top`` (without replay; 0 = off): keep heap entries and segments only
    for pairs counted above the ``prune_top + 1``-th largest initial count (a guess at
    a floor the chosen pairs stay above). The result is exact whenever the loop
    never runs out of such pairs while others are left; otherwise ``exact`` is 0
    and the caller runs again without pruning (on the original ``tokens``).

    Merge rule (atomic tokens that must not merge freely, e.g. SCRIPT's no partial characters, see
    :func:`fastsw.pretokenizers.script_v3.merge_allowed`): ``tkind_in`` (uint8, n_tokens) gives each token a kind and
    ``rule`` (int8, K x K) the kind of the token ``left + right`` makes, -1 where that merge is forbidden. A
    forbidden pair is counted like any other but never gets a heap entry, so it is never chosen (kinds never
    change, so a forbidden pair stays forbidden). No rule: all kinds 0 and ``rule = [[0]]``.

    ``stop`` (int64, 1 element) is polled before each step: when another thread sets
    ``stop[0]`` (Ctrl-C, see :func:`fastsw._interrupt.call_kernel`) the loop ends there,
    with the steps done so far (the caller discards them). Releases the GIL.

    Returns ``(n_steps, kinds, lefts, rights, pair_counts, lengths, exact)``: per
    step, ``kinds`` (int8: 1 = merge of a pair, 0 = regular replay step), the pair
    and its count (int64); ``lengths`` (int64, n_words) the final word lengths;
    ``exact`` 1 unless pruning made the result unreliable.
    """
    # A pair whose count is at or below ``floor`` can never be chosen: with replay
    # a pair is taken only when its count exceeds replay[j] >= min(replay), and a
    # pair's count never grows after the step that creates it. Such pairs get no
    # occurrence segment and no heap entry (with replay, about 9 in 10 pairs).
    # Without replay the floor is a guess (``prune_top``): every chosen pair is
    # above it, so it beats every pruned pair, as long as the heap does not run dry
    # while pruned pairs are left (then ``exact`` is 0).
    floor = np.int64(0)
    if use_replay != 0 and replay.shape[0] > 0:
        floor = replay[0]
        for k in range(replay.shape[0]):
            floor = min(floor, replay[k])
        floor = max(floor, np.int64(0))
    lengths = np.empty(offsets.shape[0] - 1, np.int64)  # a loop: ``offsets[1:] - offsets[:-1]`` compiles a ufunc
    for w in range(lengths.shape[0]):
        lengths[w] = offsets[w + 1] - offsets[w]
    n_tokens = tb_off_in.shape[0] - 1
    tb, tb_off, tpre = _token_table(tb_in, tb_off_in, max(max_steps, 0))
    tb_used = tb_off[n_tokens]
    tkind = np.empty(n_tokens + max(max_steps, 0), np.uint8)
    for t in range(n_tokens):
        tkind[t] = tkind_in[t]

    # ---- initial pair counts (no language columns: n_lang 0)
    n_lang = np.int64(0)
    drop = np.empty(0, np.int64)
    words = (tokens, offsets, lengths, word_counts, np.empty(0, np.int32), np.empty(0, np.int64))
    pairs, n_pairs, tq, t0, win = _initial_pairs(words, n_lang, overlapping)
    htab, rec, plen, pcount = pairs

    # ---- the guessed floor without replay: the prune_top-th largest initial count
    guessed = False
    if use_replay == 0 and prune_top > 0 and n_pairs > prune_top:
        initial = np.empty(n_pairs, np.int64)
        for q in range(n_pairs):
            initial[q] = rec[3 * q + 1]
        # the (prune_top + 1)-th largest: the prune_top largest stay above it (ties aside)
        floor = _kth_smallest(initial, n_pairs - prune_top - 1)
        guessed = floor > 0
        initial = np.empty(0, np.int64)

    occ, n_occ = _initial_segments(offsets, lengths, tq, t0, rec, plen, n_pairs, floor)
    tq = np.empty(0, np.int32)  # free it

    # ---- heap of all pairs with a positive count (bottom-up heapify), one region at ``base`` 0 of its arrays
    base = np.int64(0)
    hsize = np.int64(0)
    for q in range(n_pairs):
        if rec[3 * q + 1] > floor and _allowed(rec[3 * q], tkind, rule):
            hsize += 1
    heap_cap = max(hsize + hsize // 8, 1024)
    heap_key = np.empty(heap_cap, np.int64)
    heap_count = np.empty(heap_cap, np.int64)
    _advise_huge(heap_key)
    _advise_huge(heap_count)
    hsize = np.int64(0)
    for q in range(n_pairs):
        if rec[3 * q + 1] > floor and _allowed(rec[3 * q], tkind, rule):
            heap_key[hsize] = rec[3 * q]
            heap_count[hsize] = rec[3 * q + 1]
            hsize += 1
    for i in range(hsize // 2 - 1, -1, -1):
        _sift_down(heap_key, heap_count, base, hsize, np.int64(i), tpre, tb, tb_off, tie_bytes)

    # the step's new occurrences (pair, word), before they become segments
    bufs = (np.empty(1024, np.int32), np.empty(1024, np.int32))

    # every step writes its entry of all four (a replay step: pair 0, 0), so they start empty: ``np.zeros`` would
    # compile its own implementation per dtype on a fresh install (about 0.5 s of the loop's compilation)
    n_out = max(max_steps, 0)
    kinds = np.empty(n_out, np.int8)
    out_left = np.empty(n_out, np.int32)
    out_right = np.empty(n_out, np.int32)
    out_count = np.empty(n_out, np.int64)
    n_steps = 0
    j = 0

    while n_steps < max_steps:
        if stop[0] != 0:  # one load per step: no measurable cost (see fastsw.trainers.bpe_fast)
            break
        # ---- best pair: re-key or drop stale tops
        best, hsize = _top(
            heap_key, heap_count, base, hsize, n_lang, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes
        )
        if best < 0:
            # no pair above the floor: no pair will ever be taken again, and nothing
            # changes during replay steps, so every remaining step replays a regular
            # merge while any pair is left (Algorithm 1's loop condition)
            left = False
            if floor > 0:
                for q in range(n_pairs):
                    if rec[3 * q + 1] > 0 and _allowed(rec[3 * q], tkind, rule):
                        left = True
                        break
            if not left:
                break
            if guessed:  # pairs are left below the guessed floor: not the exact result
                return n_steps, kinds, out_left, out_right, out_count, lengths, 0
            while n_steps < max_steps and j < replay.shape[0]:
                kinds[n_steps] = 0
                out_left[n_steps] = 0
                out_right[n_steps] = 0
                out_count[n_steps] = replay[j]
                j += 1
                n_steps += 1
            break
        best_count = rec[3 * best + 1]
        if use_replay != 0 and best_count <= replay[j]:
            kinds[n_steps] = 0
            out_left[n_steps] = 0
            out_right[n_steps] = 0
            out_count[n_steps] = replay[j]
            j += 1
            n_steps += 1
            continue
        a = rec[3 * best] >> 32
        b = rec[3 * best] & 0xFFFFFFFF
        kinds[n_steps] = 1
        out_left[n_steps] = a
        out_right[n_steps] = b
        out_count[n_steps] = best_count
        n_steps += 1

        # ---- the new token, then every word of the pair's occurrence segment rewritten
        new = n_tokens
        n_tokens += 1
        tb, tb_used = _add_token(tb, tb_off, tpre, tb_used, a, b, new)
        tkind[new] = rule[tkind[a], tkind[b]]
        first_new_pair = n_pairs
        seg = rec[3 * best + 2]
        seg_n = np.int64(plen[best])
        plen[best] = 0
        pairs, n_pairs, bufs, n_buf = _rewrite_segment(
            words, n_lang, overlapping, pairs, n_pairs, occ, seg, seg_n, a, b, new, bufs, win, drop
        )
        htab, rec, plen, pcount = pairs
        occ, n_occ = _new_segments(occ, n_occ, rec, plen, np.int64(first_new_pair), n_pairs, bufs, n_buf, floor)

        # ---- heap entries for the pairs with the new token, the only pairs whose
        # count can grow (merging only shortens runs and never joins old tokens);
        # they are exactly the pairs created during this step
        n_created = n_pairs - first_new_pair
        if hsize + n_created > heap_key.shape[0]:
            heap_cap = max(heap_key.shape[0] + heap_key.shape[0] // 4, hsize + n_created)
            heap_key = _grow(heap_key[:hsize], heap_cap)
            heap_count = _grow(heap_count[:hsize], heap_cap)
        hsize = _push_created(
            heap_key,
            heap_count,
            np.int64(hsize),
            rec,
            np.int64(first_new_pair),
            n_pairs,
            floor,
            tpre,
            tb,
            tb_off,
            tie_bytes,
            tkind,
            rule,
        )

    return n_steps, kinds, out_left, out_right, out_count, lengths, 1


@njit(cache=True)
def _pair_slot(table, key):
    """The slot of ``key`` in the open-addressing table ``table`` (int64, 2 entries per slot: the key, -1 for
    an empty slot, and its weight; a power of two of at most 2**31 slots): where it is, or the empty slot where
    it goes. The home slot is ``_hash(key) * n_slots >> 32`` (no overflow, also as plain Python)."""
    n_slots = table.shape[0] >> 1
    mask = n_slots - 1
    s = (_hash(key) * n_slots) >> 32
    while table[2 * s] != key and table[2 * s] != -1:
        s = (s + 1) & mask
    return s


#: Positions ahead whose pair's slot :func:`_cut_weights` fetches: the table is far larger than the caches, so
#: each position's look-up is a miss, which the fetch overlaps with the positions in between.
CUT_AHEAD = 16


@njit(cache=True)
def _cut_weights(tokens, offsets, counts, table, pid):
    """The first pass of the candidate cut (:func:`fastsw.trainers.bpe_fast.cut_candidates`, then
    :func:`_cut_candidates`): the weight of each adjacent token pair summed in ``table`` (empty: all keys -1), each
    position's slot noted in ``pid``. Returns the number of distinct pairs, or -1 as soon as one more would make
    the table more than half full (the caller starts again with a table twice as large). Keeping the growth out of
    this loop made the pass 35-40 % faster (0.60 -> 0.37 s CPU on 100 MB of English's 10.5 M positions): re-pointing
    the slots noted so far inside the loop kept the compiler from tightening it."""
    limit = table.shape[0] >> 2
    n_slots = table.shape[0] >> 1
    last = tokens.shape[0] - 1 - CUT_AHEAD
    n_pairs = 0
    for w in range(offsets.shape[0] - 1):
        c = counts[w]
        for i in range(offsets[w], offsets[w + 1] - 1):
            if i < last:  # the home slot of the position CUT_AHEAD on (across words too) is on its way
                ahead = (np.int64(tokens[i + CUT_AHEAD]) << 32) | np.int64(tokens[i + CUT_AHEAD + 1])
                _prefetch(table, 2 * ((_hash(ahead) * n_slots) >> 32))
            key = (np.int64(tokens[i]) << 32) | np.int64(tokens[i + 1])
            s = _pair_slot(table, key)
            if table[2 * s] == -1:
                if n_pairs == limit:
                    return -1
                table[2 * s] = key
                table[2 * s + 1] = 0
                n_pairs += 1
            pid[i] = s
            table[2 * s + 1] += c
    return n_pairs


@njit(cache=True)
def _cut_candidates(tokens, offsets, counts, pid, cut, marker):
    """Cut packed candidates at the boundaries no merge can ever cross (BoundlessBPE's phase 2): the passes
    after :func:`_cut_weights` (see :func:`fastsw.trainers.bpe_fast.cut_candidates`, which runs it and decides
    which pairs are cut).

    Reads ``tokens`` (int32), ``offsets`` (int64, n_words + 1, starting at 0), ``counts`` (int64), ``pid`` (int32
    over the tokens: each position's slot, as :func:`_cut_weights` noted it) and ``cut`` (bool, one flag per
    slot: the pair there weighs at most the floor; far smaller than the table of weights). ``pid`` is overwritten. A
    first pass counts the cut positions through the flags, turning ``pid`` into one cut flag per position as it
    goes (the flags of a large table are tens of MB, so each look-up is a cache miss: one per position, not two),
    and a second writes the output reading ``pid`` sequentially.

    Returns ``(ids, new_offsets, sentinel)``: the words with ``marker`` (int32, an id above every token)
    inserted at each cut position (one int32 array, int64 offsets), ready for
    ``fastsw.pretokenizers._pretok.aggregate_runs`` with ``marker`` mapped to -1; and ``sentinel`` (int64, 3 entries)
    ``(a, b, count)`` of the first cut position in a word of positive count (count -1 if none), which
    the caller keeps as a word ``[a, b]`` so that a pair stays left whenever one did before.
    """
    n_words = offsets.shape[0] - 1
    n_tok = tokens.shape[0]
    n_cut = 0
    for w in range(n_words):
        for i in range(offsets[w], offsets[w + 1] - 1):
            flag = np.int32(cut[pid[i]])
            pid[i] = flag
            n_cut += flag
    ids = np.empty(n_tok + n_cut, np.int32)
    new_offsets = np.empty(n_words + 1, np.int64)
    _advise_huge(ids)
    _advise_huge(new_offsets)
    sentinel = np.full(3, -1, np.int64)
    o = 0
    new_offsets[0] = 0
    for w in range(n_words):
        end = offsets[w + 1]
        for i in range(offsets[w], end - 1):
            ids[o] = tokens[i]
            o += 1
            if pid[i]:
                ids[o] = marker
                o += 1
                if sentinel[2] < 0 and counts[w] > 0:
                    sentinel[0] = tokens[i]
                    sentinel[1] = tokens[i + 1]
                    sentinel[2] = counts[w]
        if end > offsets[w]:
            ids[o] = tokens[end - 1]
            o += 1
        new_offsets[w + 1] = o
    return ids, new_offsets, sentinel


KERNELS = (
    _grow,
    _kth_smallest,
    _hash,
    _find,
    _rehash,
    _pair_id,
    _add_count,
    _room_for_pairs,
    _compact,
    _cmp_bytes,
    _pair_counts,
    _prefix_key,
    _cmp_token,
    _better,
    _move,
    _move_in,
    _sift_down,
    _push,
    _column,
    _top,
    _allowed,
    _push_created,
    _count_words,
    _rewrite_words,
    _rewrite_segment,
    _token_table,
    _add_token,
    _initial_pairs,
    _initial_segments,
    _new_segments,
    _merge_loop,
    _pair_slot,
    _cut_weights,
    _cut_candidates,
)

#: Helpers of the merge loop that, on a fresh install, a background process compiles into Numba's on-disk cache
#: while the training process compiles the loop (:func:`fastsw.trainers.bpe_fast.compile_ahead`). The
#: loop's type inference meets its helpers in the order of its source and these last (:func:`_add_token`, then
#: :func:`_rewrite_segment`, :func:`_new_segments` and :func:`_push_created`), so by then it finds them in the cache
#: and loads them instead of compiling them; the background process starts about a second later than the loop's
#: compilation, so it compiles them in the order the loop meets them, the largest part (:func:`_rewrite_words`)
#: first. A helper the loop reaches before it is in the cache is compiled in both processes (the same code, a
#: second core's time); the helpers the loop meets first (:func:`_initial_pairs`, :func:`_token_table`, ...) are
#: left to it, and the background process loads those of them it needs once the loop has compiled them. Each with
#: the one signature the loop calls it with (a test checks that no helper gets a second one).
_WORDS_T = "Tuple((int32[::1], int64[::1], int64[::1], int64[::1], int32[::1], int64[::1]))"  # the words' arrays
_PAIRS_T = "Tuple((int64[::1], int64[::1], int32[::1], int64[::1]))"  # the pair table's arrays
AHEAD = (
    (
        _rewrite_words,
        f"({_WORDS_T}, int64, int64, {_PAIRS_T}, int64, int32[::1], int64, int64, int64, int64, int64, int64,"
        " UniTuple(int32[::1], 2), int64, UniTuple(int64[::1], 3), int64[::1])",
    ),
    (_add_token, "(uint8[::1], int64[::1], int64[::1], int64, int64, int64, int64)"),
    (
        _rewrite_segment,
        f"({_WORDS_T}, int64, int64, {_PAIRS_T}, int64, int32[::1], int64, int64, int64, int64, int64,"
        " UniTuple(int32[::1], 2), UniTuple(int64[::1], 3), int64[::1])",
    ),
    (
        _new_segments,
        "(int32[::1], int64, int64[::1], int32[::1], int64, int64, UniTuple(int32[::1], 2), int64, int64)",
    ),
    (
        _push_created,
        "(int64[::1], int64[::1], int64, int64[::1], int64, int64, int64, int64[::1], uint8[::1], int64[::1], int64,"
        " uint8[::1], int8[:, ::1])",
    ),
)


# the kernels' cache entries are stamped with the files of the jitted code they call, too
stamp_module(__name__)
