"""Numba kernels for the fast training path (the merge loop of phase 1 and phase 2).

Private functions over contiguous numpy arrays only: no Python objects, no I/O.
The driver :mod:`fastsw.fast` coerces its inputs once (ids int32, offsets and
counts int64, token bytes uint8), so every kernel compiles exactly one signature.
The reference these kernels must agree with, merge for merge and count for count,
is :class:`fastsw.bpe.PairMerger`.

Design notes
------------
* Words live in one int32 array ``tokens`` with int64 ``offsets``; word ``w``
  occupies ``tokens[offsets[w]:offsets[w] + lengths[w]]``. A merge rewrites a
  word *in place* (left-to-right compaction, so the word only shrinks) instead of
  keeping ``prev``/``next`` linked lists: a touched word is rescanned anyway to
  recount its pairs, so compaction costs nothing extra and keeps the scans
  sequential in memory.
* Pair ids come from an open-addressing hash table in two arrays (key
  ``left << 32 | right`` -> pair id). Per pair: ``left``, ``right``, ``count``
  (int64) and the head of a singly linked occurrence list of word ids kept in
  flat arrays (``occ_word``, ``occ_next``). A word is added to a pair's list when
  the pair appears in the word for the first time; entries go stale when a merge
  removes the pair from the word and are skipped when the word no longer holds
  the pair (as the reference's ``where`` sets do).
* Deltas are exact for both counting rules because a touched word's pairs are
  counted once before and once after its rewrite (old ones subtracted, new ones
  added, each times the word's count).
* Selection uses a lazy max-heap in arrays (``heap_pair``, ``heap_count``): an
  entry at the top whose stored count is stale is re-keyed with the current count
  (or dropped at zero); a pair whose count grew during a merge is pushed again.
  Every pair with a positive count then always has an entry whose stored count is
  >= its current count, so the first valid top is the exact maximum of the total
  order ``(count desc, tie key)``, the same order the reference's heap uses.
* Tie key: ``hf`` compares ``(left id, right id)``; ``paper`` compares the left
  tokens' byte strings, then the right ones (unsigned bytes, a proper prefix
  first), then the ids (different tokens can spell the same bytes). Token bytes
  live in a flat uint8 array with int64 offsets that grows as merges add tokens,
  because a static rank of the byte strings would not cover new tokens.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _grow_i32(a, cap):
    """A copy of int32 ``a`` with capacity ``cap`` (>= len(a)); the tail is undefined."""
    b = np.empty(cap, np.int32)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def _grow_i64(a, cap):
    """A copy of int64 ``a`` with capacity ``cap`` (>= len(a)); the tail is undefined."""
    b = np.empty(cap, np.int64)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def _grow_u8(a, cap):
    """A copy of uint8 ``a`` with capacity ``cap`` (>= len(a)); the tail is undefined."""
    b = np.empty(cap, np.uint8)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def _slot(hkeys, key):
    """Open addressing with linear probing over int64 ``hkeys`` (size a power of two,
    -1 = empty): the slot holding ``key``, or the empty slot where it belongs."""
    mask = hkeys.shape[0] - 1
    left = key >> 32
    right = key & 0xFFFFFFFF
    h = (left * 0x9E3779B1) ^ (right * 0x85EBCA77)
    h ^= h >> 17
    s = h & mask
    while True:
        k = hkeys[s]
        if k == key or k == -1:
            return s
        s = (s + 1) & mask


@njit(cache=True)
def _rehash(hkeys, hvals, size):
    """A new table of ``size`` slots (power of two) holding the entries of
    ``hkeys``/``hvals`` (int64 keys, int32 pair ids)."""
    keys = np.full(size, -1, np.int64)
    vals = np.empty(size, np.int32)
    for i in range(hkeys.shape[0]):
        k = hkeys[i]
        if k != -1:
            s = _slot(keys, k)
            keys[s] = k
            vals[s] = hvals[i]
    return keys, vals


@njit(cache=True)
def _pair_id(hkeys, hvals, pleft, pright, pcount, phead, pstamp, pmark, n_pairs, x, y):
    """The id of pair ``(x, y)``, creating it (count 0, no occurrences) when new.

    The caller has made room: ``pleft``.. have capacity > ``n_pairs`` and the hash
    table is at most half full. Returns ``(pair id, new n_pairs)``.
    """
    key = (np.int64(x) << 32) | np.int64(y)
    s = _slot(hkeys, key)
    if hkeys[s] != -1:
        return np.int64(hvals[s]), n_pairs
    hkeys[s] = key
    hvals[s] = n_pairs
    pleft[n_pairs] = x
    pright[n_pairs] = y
    pcount[n_pairs] = 0
    phead[n_pairs] = -1
    pstamp[n_pairs] = -1
    pmark[n_pairs] = -1
    return n_pairs, n_pairs + 1


@njit(cache=True)
def _add_occurrence(occ_word, occ_next, phead, pstamp, q, w, touch, n_occ):
    """Record word ``w`` in pair ``q``'s occurrence list once per ``touch``; returns n_occ."""
    if pstamp[q] == touch:
        return n_occ
    pstamp[q] = touch
    occ_word[n_occ] = w
    occ_next[n_occ] = phead[q]
    phead[q] = n_occ
    return n_occ + 1


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
def _better(p, cp, q, cq, pleft, pright, tb, tb_off, tie_bytes):
    """True when pair ``p`` with count ``cp`` ranks strictly above pair ``q`` with
    count ``cq``: higher count, then the smaller tie key."""
    if cp != cq:
        return cp > cq
    lp = pleft[p]
    lq = pleft[q]
    rp = pright[p]
    rq = pright[q]
    if tie_bytes != 0:
        c = _cmp_bytes(tb, tb_off, lp, lq)
        if c != 0:
            return c < 0
        c = _cmp_bytes(tb, tb_off, rp, rq)
        if c != 0:
            return c < 0
    if lp != lq:
        return lp < lq
    return rp < rq


@njit(cache=True)
def _sift_down(heap_pair, heap_count, size, i, pleft, pright, tb, tb_off, tie_bytes):
    """Restore the max-heap below position ``i`` (int32 ``heap_pair``, int64 ``heap_count``)."""
    p = heap_pair[i]
    c = heap_count[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        other = child + 1
        if other < size and _better(heap_pair[other], heap_count[other], heap_pair[child],
                                    heap_count[child], pleft, pright, tb, tb_off, tie_bytes):
            child = other
        if not _better(heap_pair[child], heap_count[child], p, c, pleft, pright, tb, tb_off, tie_bytes):
            break
        heap_pair[i] = heap_pair[child]
        heap_count[i] = heap_count[child]
        i = child
    heap_pair[i] = p
    heap_count[i] = c


@njit(cache=True)
def _push(heap_pair, heap_count, size, p, c, pleft, pright, tb, tb_off, tie_bytes):
    """Push pair ``p`` with count ``c`` (capacity must allow it); returns the new size."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _better(p, c, heap_pair[parent], heap_count[parent], pleft, pright, tb, tb_off, tie_bytes):
            break
        heap_pair[i] = heap_pair[parent]
        heap_count[i] = heap_count[parent]
        i = parent
    heap_pair[i] = p
    heap_count[i] = c
    return size + 1


@njit(cache=True)
def _merge_loop(tokens, offsets, word_counts, tb_in, tb_off_in, overlapping, tie_bytes,
                max_steps, use_replay, replay):
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

    Returns ``(n_steps, kinds, lefts, rights, pair_counts, lengths)``: per step,
    ``kinds`` (int8: 1 = merge of a pair, 0 = regular replay step), the pair and
    its count (int64); ``lengths`` (int64, n_words) the final word lengths.
    """
    n_words = offsets.shape[0] - 1
    lengths = offsets[1:] - offsets[:-1]
    n_tokens = tb_off_in.shape[0] - 1
    tb = tb_in.copy()
    tb_off = _grow_i64(tb_off_in, n_tokens + 1 + max(max_steps, 0))
    tb_used = tb_off[n_tokens]

    cap = 1024
    pleft = np.empty(cap, np.int32)
    pright = np.empty(cap, np.int32)
    pcount = np.empty(cap, np.int64)
    phead = np.empty(cap, np.int64)
    pstamp = np.empty(cap, np.int64)
    pbefore = np.empty(cap, np.int64)
    pmark = np.empty(cap, np.int64)
    n_pairs = np.int64(0)  # typed, so helpers compile one signature
    hkeys = np.full(4096, -1, np.int64)
    hvals = np.empty(4096, np.int32)
    occ_cap = 4096
    occ_word = np.empty(occ_cap, np.int32)
    occ_next = np.empty(occ_cap, np.int64)
    n_occ = np.int64(0)
    touched = np.empty(1024, np.int32)
    word_stamp = np.full(max(n_words, 1), -1, np.int64)
    touch = 0

    # ---- initial pair counts and occurrence lists
    for w in range(n_words):
        o = offsets[w]
        L = lengths[w]
        if L < 2:
            continue
        need = n_pairs + L + 1
        if need > cap:
            cap = max(2 * cap, need)
            pleft = _grow_i32(pleft, cap)
            pright = _grow_i32(pright, cap)
            pcount = _grow_i64(pcount, cap)
            phead = _grow_i64(phead, cap)
            pstamp = _grow_i64(pstamp, cap)
            pbefore = _grow_i64(pbefore, cap)
            pmark = _grow_i64(pmark, cap)
        if 2 * need > hkeys.shape[0]:
            size = hkeys.shape[0]
            while 2 * need > size:
                size *= 2
            hkeys, hvals = _rehash(hkeys, hvals, size)
        if n_occ + L > occ_cap:
            occ_cap = max(2 * occ_cap, n_occ + L)
            occ_word = _grow_i32(occ_word, occ_cap)
            occ_next = _grow_i64(occ_next, occ_cap)
        touch += 1
        c = word_counts[w]
        last_eq = -2
        for i in range(L - 1):
            x = tokens[o + i]
            y = tokens[o + i + 1]
            if x == y and overlapping == 0:
                if last_eq == i - 1:
                    last_eq = -2
                    continue
                last_eq = i
            q, n_pairs = _pair_id(hkeys, hvals, pleft, pright, pcount, phead, pstamp, pmark, n_pairs, x, y)
            pcount[q] += c
            n_occ = _add_occurrence(occ_word, occ_next, phead, pstamp, q, np.int64(w), touch, n_occ)

    # ---- heap of all pairs with a positive count (bottom-up heapify)
    heap_cap = max(2 * n_pairs, 1024)
    heap_pair = np.empty(heap_cap, np.int32)
    heap_count = np.empty(heap_cap, np.int64)
    hsize = 0
    for q in range(n_pairs):
        if pcount[q] > 0:
            heap_pair[hsize] = q
            heap_count[hsize] = pcount[q]
            hsize += 1
    for i in range(hsize // 2 - 1, -1, -1):
        _sift_down(heap_pair, heap_count, np.int64(hsize), np.int64(i), pleft, pright, tb, tb_off, tie_bytes)

    n_out = max(max_steps, 0)
    kinds = np.zeros(n_out, np.int8)
    out_left = np.zeros(n_out, np.int32)
    out_right = np.zeros(n_out, np.int32)
    out_count = np.zeros(n_out, np.int64)
    n_steps = 0
    j = 0
    n_merged = 0

    while n_steps < max_steps:
        # ---- best pair: re-key or drop stale tops
        best = -1
        while hsize > 0:
            q = heap_pair[0]
            current = pcount[q]
            if heap_count[0] == current:
                best = q
                break
            if current > 0:
                heap_count[0] = current
            else:
                hsize -= 1
                heap_pair[0] = heap_pair[hsize]
                heap_count[0] = heap_count[hsize]
            _sift_down(heap_pair, heap_count, np.int64(hsize), np.int64(0), pleft, pright, tb, tb_off, tie_bytes)
        if best < 0:
            break
        best_count = pcount[best]
        if use_replay != 0 and best_count <= replay[j]:
            kinds[n_steps] = 0
            out_count[n_steps] = replay[j]
            j += 1
            n_steps += 1
            continue
        a = pleft[best]
        b = pright[best]
        kinds[n_steps] = 1
        out_left[n_steps] = a
        out_right[n_steps] = b
        out_count[n_steps] = best_count
        n_steps += 1

        # ---- the new token's bytes
        new = n_tokens
        n_tokens += 1
        la = tb_off[a + 1] - tb_off[a]
        lb = tb_off[b + 1] - tb_off[b]
        if tb_used + la + lb > tb.shape[0]:
            tb = _grow_u8(tb, max(2 * tb.shape[0], tb_used + la + lb))
        for i in range(la):
            tb[tb_used + i] = tb[tb_off[a] + i]
        for i in range(lb):
            tb[tb_used + la + i] = tb[tb_off[b] + i]
        tb_used += la + lb
        tb_off[new + 1] = tb_used

        # ---- rewrite every word on the pair's occurrence list
        mark = n_merged
        n_merged += 1
        n_touched = 0
        e = phead[best]
        phead[best] = -1
        while e != -1:
            w = occ_word[e]
            e = occ_next[e]
            if word_stamp[w] == mark:
                continue
            word_stamp[w] = mark
            o = offsets[w]
            L = lengths[w]
            found = False
            for i in range(L - 1):
                if tokens[o + i] == a and tokens[o + i + 1] == b:
                    found = True
                    break
            if not found:
                continue  # stale entry: an earlier merge removed the pair from this word
            need = n_pairs + L + 1
            if need > cap:
                cap = max(2 * cap, need)
                pleft = _grow_i32(pleft, cap)
                pright = _grow_i32(pright, cap)
                pcount = _grow_i64(pcount, cap)
                phead = _grow_i64(phead, cap)
                pstamp = _grow_i64(pstamp, cap)
                pbefore = _grow_i64(pbefore, cap)
                pmark = _grow_i64(pmark, cap)
            if 2 * need > hkeys.shape[0]:
                size = hkeys.shape[0]
                while 2 * need > size:
                    size *= 2
                hkeys, hvals = _rehash(hkeys, hvals, size)
            if n_occ + L > occ_cap:
                occ_cap = max(2 * occ_cap, n_occ + L)
                occ_word = _grow_i32(occ_word, occ_cap)
                occ_next = _grow_i64(occ_next, occ_cap)
            if n_touched + 2 * L > touched.shape[0]:
                touched = _grow_i32(touched, max(2 * touched.shape[0], n_touched + 2 * L))
            touch += 1
            c = word_counts[w]

            # old pairs out
            last_eq = -2
            for i in range(L - 1):
                x = tokens[o + i]
                y = tokens[o + i + 1]
                if x == y and overlapping == 0:
                    if last_eq == i - 1:
                        last_eq = -2
                        continue
                    last_eq = i
                key = (np.int64(x) << 32) | np.int64(y)
                q = hvals[_slot(hkeys, key)]
                if pmark[q] != mark:
                    pmark[q] = mark
                    pbefore[q] = pcount[q]
                    touched[n_touched] = q
                    n_touched += 1
                pcount[q] -= c
                pstamp[q] = touch

            # rewrite in place, left to right, non-overlapping
            i = 0
            k = 0
            while i < L:
                if i + 1 < L and tokens[o + i] == a and tokens[o + i + 1] == b:
                    tokens[o + k] = new
                    i += 2
                else:
                    tokens[o + k] = tokens[o + i]
                    i += 1
                k += 1
            L = k
            lengths[w] = L

            # new pairs in
            last_eq = -2
            for i in range(L - 1):
                x = tokens[o + i]
                y = tokens[o + i + 1]
                if x == y and overlapping == 0:
                    if last_eq == i - 1:
                        last_eq = -2
                        continue
                    last_eq = i
                q, n_pairs = _pair_id(hkeys, hvals, pleft, pright, pcount, phead, pstamp, pmark, n_pairs,
                                      x, y)
                if pmark[q] != mark:
                    pmark[q] = mark
                    pbefore[q] = pcount[q]
                    touched[n_touched] = q
                    n_touched += 1
                pcount[q] += c
                n_occ = _add_occurrence(occ_word, occ_next, phead, pstamp, q, np.int64(w), touch, n_occ)

        # ---- pairs whose count grew get a fresh heap entry
        if hsize + n_touched > heap_pair.shape[0]:
            heap_cap = max(2 * heap_pair.shape[0], hsize + n_touched)
            heap_pair = _grow_i32(heap_pair, heap_cap)
            heap_count = _grow_i64(heap_count, heap_cap)
        for t in range(n_touched):
            q = touched[t]
            if pcount[q] > pbefore[q]:
                hsize = _push(heap_pair, heap_count, hsize, q, pcount[q], pleft, pright, tb, tb_off,
                              tie_bytes)

    return n_steps, kinds, out_left, out_right, out_count, lengths


KERNELS = (_grow_i32, _grow_i64, _grow_u8, _slot, _rehash, _pair_id, _add_occurrence, _cmp_bytes, _better, _sift_down, _push,
           _merge_loop)
