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
  word *in place* (left-to-right compaction from the first replacement, so the
  word only shrinks) instead of keeping ``prev``/``next`` linked lists; the scan
  that finds the replacements is sequential in memory.
* Pair ids come from an open-addressing hash table in one int64 array (slot ``s``:
  key ``left << 32 | right`` at ``2 * s``, pair id at ``2 * s + 1``, so a lookup
  touches one cache line). Per pair: ``left``, ``right`` (int32, read by the heap)
  and, side by side in ``pdat`` (int64, stride 4), the count, the head of a singly
  linked occurrence list of word ids (flat arrays ``occ_word``, ``occ_next``) and
  a stamp. A word is added to a pair's list when the pair appears in the word for
  the first time; entries go stale when a merge removes the pair from the word
  and are skipped when the word no longer holds the pair (as the reference's
  ``where`` sets do).
* Deltas are local: a touched word is recounted only in windows around its
  replacements. A replacement at ``i`` changes the pairs of tokens ``i-1 .. i+2``;
  with the ``paper`` (non-overlapping) rule a run of n equal tokens counts
  floor(n/2), so the window is widened to the whole runs of equal tokens at both
  ends. Each window then starts and ends on a run boundary in the old word and in
  the new one (the new token is fresh, so it never extends a neighbouring run),
  and its pairs count the same inside it as in the word; overlapping windows are
  joined. The old window's pairs are subtracted and the new window's added, each
  times the word's count, which gives the reference's whole-word deltas exactly
  for both rules. (On 20 MB of English the windows span ~54 % of the touched
  words' tokens in phase 1 and ~41 % in phase 2.)
* Only pairs with the new token can gain count in a merge (merging never makes
  two old tokens adjacent and only shortens runs), and they are all created
  during that merge, so the pairs to push on the heap are the ids created in the
  step; only they can be new to a word's occurrence lists.
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
def _slot(htab, key):
    """Open addressing with linear probing over the int64 hash table ``htab``: slot
    ``s`` holds a key (``left << 32 | right``, -1 = empty) at ``2 * s`` and its pair
    id at ``2 * s + 1``; the number of slots is a power of two. Returns the slot
    holding ``key``, or the empty slot where it belongs."""
    mask = (htab.shape[0] >> 1) - 1
    left = key >> 32
    right = key & 0xFFFFFFFF
    h = (left * 0x9E3779B1) ^ (right * 0x85EBCA77)
    h ^= h >> 17
    s = h & mask
    while True:
        k = htab[2 * s]
        if k == key or k == -1:
            return s
        s = (s + 1) & mask


@njit(cache=True)
def _rehash(htab, size):
    """A new hash table of ``size`` slots (power of two) holding the entries of ``htab``."""
    out = np.full(2 * size, -1, np.int64)
    for i in range(htab.shape[0] >> 1):
        k = htab[2 * i]
        if k != -1:
            s = _slot(out, k)
            out[2 * s] = k
            out[2 * s + 1] = htab[2 * i + 1]
    return out


@njit(cache=True)
def _pair_id(htab, pleft, pright, pdat, n_pairs, x, y):
    """The id of pair ``(x, y)``, creating it (count 0, no occurrences) when new.

    The caller has made room: ``pleft``.. have capacity > ``n_pairs`` and the hash
    table is at most half full. Returns ``(pair id, new n_pairs)``.
    """
    key = (np.int64(x) << 32) | np.int64(y)
    s = _slot(htab, key)
    if htab[2 * s] != -1:
        return htab[2 * s + 1], n_pairs
    htab[2 * s] = key
    htab[2 * s + 1] = n_pairs
    pleft[n_pairs] = x
    pright[n_pairs] = y
    pdat[4 * n_pairs] = 0
    pdat[4 * n_pairs + 1] = -1
    pdat[4 * n_pairs + 2] = -1
    return n_pairs, n_pairs + 1


@njit(cache=True)
def _add_occurrence(occ_word, occ_next, pdat, q, w, touch, n_occ):
    """Record word ``w`` in pair ``q``'s occurrence list once per ``touch``; returns n_occ."""
    if pdat[4 * q + 2] == touch:
        return n_occ
    pdat[4 * q + 2] = touch
    occ_word[n_occ] = w
    occ_next[n_occ] = pdat[4 * q + 1]
    pdat[4 * q + 1] = n_occ
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
    pdat = np.empty(4 * cap, np.int64)
    n_pairs = np.int64(0)  # typed, so helpers compile one signature
    htab = np.full(2 * 4096, -1, np.int64)
    occ_cap = 4096
    occ_word = np.empty(occ_cap, np.int32)
    occ_next = np.empty(occ_cap, np.int64)
    n_occ = np.int64(0)
    max_len = 0
    for w in range(n_words):
        max_len = max(max_len, lengths[w])
    win_lo = np.empty(max_len // 2 + 1, np.int64)
    win_hi = np.empty(max_len // 2 + 1, np.int64)
    win_n = np.empty(max_len // 2 + 1, np.int64)
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
            pdat = _grow_i64(pdat, 4 * cap)
        if 4 * need > htab.shape[0]:
            size = htab.shape[0] >> 1
            while 2 * need > size:
                size *= 2
            htab = _rehash(htab, size)
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
            q, n_pairs = _pair_id(htab, pleft, pright, pdat, n_pairs, x, y)
            pdat[4 * q] += c
            n_occ = _add_occurrence(occ_word, occ_next, pdat, q, np.int64(w), touch, n_occ)

    # ---- heap of all pairs with a positive count (bottom-up heapify)
    heap_cap = max(2 * n_pairs, 1024)
    heap_pair = np.empty(heap_cap, np.int32)
    heap_count = np.empty(heap_cap, np.int64)
    hsize = 0
    for q in range(n_pairs):
        if pdat[4 * q] > 0:
            heap_pair[hsize] = q
            heap_count[hsize] = pdat[4 * q]
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

    while n_steps < max_steps:
        # ---- best pair: re-key or drop stale tops
        best = -1
        while hsize > 0:
            q = heap_pair[0]
            current = pdat[4 * q]
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
        best_count = pdat[4 * best]
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
        first_new_pair = n_pairs
        e = pdat[4 * best + 1]
        pdat[4 * best + 1] = -1
        while e != -1:
            w = occ_word[e]
            e = occ_next[e]
            o = offsets[w]
            L = lengths[w]
            c = word_counts[w]

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
                    while lo > 0 and tokens[o + lo - 1] == tokens[o + lo]:
                        lo -= 1
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
                continue  # stale entry: an earlier merge removed the pair from this word
            win_lo[n_win] = cur_lo
            win_hi[n_win] = cur_hi
            win_n[n_win] = cur_n
            n_win += 1

            need = n_pairs + L + 1
            if need > cap:
                cap = max(2 * cap, need)
                pleft = _grow_i32(pleft, cap)
                pright = _grow_i32(pright, cap)
                pdat = _grow_i64(pdat, 4 * cap)
            if 4 * need > htab.shape[0]:
                size = htab.shape[0] >> 1
                while 2 * need > size:
                    size *= 2
                htab = _rehash(htab, size)
            if n_occ + L > occ_cap:
                occ_cap = max(2 * occ_cap, n_occ + L)
                occ_word = _grow_i32(occ_word, occ_cap)
                occ_next = _grow_i64(occ_next, occ_cap)
            touch += 1

            # old pairs of each window out
            for v in range(n_win):
                last_eq = -2
                for i in range(win_lo[v], win_hi[v] - 1):
                    x = tokens[o + i]
                    y = tokens[o + i + 1]
                    if x == y and overlapping == 0:
                        if last_eq == i - 1:
                            last_eq = -2
                            continue
                        last_eq = i
                    key = (np.int64(x) << 32) | np.int64(y)
                    q = htab[2 * _slot(htab, key) + 1]
                    pdat[4 * q] -= c

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
            L = k
            lengths[w] = L

            # new pairs of each window in (a window shifts left by one token per
            # replacement before it and shrinks by one per replacement inside it);
            # only pairs with the new token are new to the word's occurrence lists
            shift = 0
            for v in range(n_win):
                lo = win_lo[v] - shift
                shift += win_n[v]
                hi = win_hi[v] - shift
                last_eq = -2
                for i in range(lo, hi - 1):
                    x = tokens[o + i]
                    y = tokens[o + i + 1]
                    if x == y and overlapping == 0:
                        if last_eq == i - 1:
                            last_eq = -2
                            continue
                        last_eq = i
                    q, n_pairs = _pair_id(htab, pleft, pright, pdat, n_pairs,
                                          x, y)
                    pdat[4 * q] += c
                    if x == new or y == new:
                        n_occ = _add_occurrence(occ_word, occ_next, pdat, q, np.int64(w), touch, n_occ)

        # ---- heap entries for the pairs with the new token, the only pairs whose
        # count can grow (merging only shortens runs and never joins old tokens);
        # they are exactly the pairs created during this step
        n_created = n_pairs - first_new_pair
        if hsize + n_created > heap_pair.shape[0]:
            heap_cap = max(2 * heap_pair.shape[0], hsize + n_created)
            heap_pair = _grow_i32(heap_pair, heap_cap)
            heap_count = _grow_i64(heap_count, heap_cap)
        for q in range(first_new_pair, n_pairs):
            if pdat[4 * q] > 0:
                hsize = _push(heap_pair, heap_count, hsize, np.int32(q), pdat[4 * q], pleft, pright, tb,
                              tb_off, tie_bytes)

    return n_steps, kinds, out_left, out_right, out_count, lengths


KERNELS = (_grow_i32, _grow_i64, _grow_u8, _slot, _rehash, _pair_id, _add_occurrence, _cmp_bytes, _better, _sift_down, _push,
           _merge_loop)
