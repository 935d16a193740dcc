"""Numba kernels for the fast encoding path (SPEC section 7).

Private functions over contiguous numpy arrays only: no Python objects, no I/O.
The driver :mod:`fastsw.fast_encode` builds the tables once per tokenizer and
coerces every input (ids int32, lengths and offsets int64, text uint8), so each
kernel compiles exactly one signature. The reference these kernels must agree
with, id for id, is :meth:`fastsw.tokenizer.Tokenizer.encode_ordinary` with
``backend="python"`` (:func:`fastsw.bpe.apply_merges` per pretoken and per run).

Design notes
------------
* Rank tables: open addressing with linear probing in one int64 array of
  ``(key, value)`` slots, interleaved so that a probe touches one cache line (the
  lookups of a shortcut miss are memory-bound). Key ``left << 32 | right`` (-1 =
  empty slot), value ``rank << 32 | new id``, so comparing two values compares
  ranks first. Ranks are unique per pair (the tokenizer keeps the first merge of
  a duplicated pair), so the smallest value names one pair.
* Whole-pretoken shortcut: a table of the reachable tokens' byte strings keyed by
  a 64-bit FNV-1a hash, one 32-byte slot per entry in an int64 array ``sc``:
  ``[hash, length << 32 | id (-1 = empty), offset in tb, 0]``. A hit is confirmed
  by comparing the bytes against the flat vocabulary (``tb`` uint8); keeping the
  offset in the slot saves a dependent load of ``tb_off``. (Measured: packing the
  first 16 bytes into the slot instead was slower on English text.)
* Miss cache: a pretoken that misses the shortcut is merged once per kernel call
  and later occurrences in the same call copy its ids. The cache is allocated
  per call (direct-mapped, at most ``2 ** _MISS_CACHE_BITS`` slots, an entry
  overwritten on collision) and points into the call's own text and output, so
  threads share no mutable state. Only pieces of >= 2 ids are cached: they never
  join a supermerge run, so their ids never move once the run before them has
  been flushed.
* Merging one sequence (a pretoken's atomic ids, or a run of eligible
  single-token pretokens for the supermerges) happens in place in the output
  buffer. Short sequences (``n <= short_limit``) keep each adjacent pair's table
  value in a small array, merge the leftmost lowest-rank pair and re-look-up only
  its two neighbours (O(n) per merge, and n is small). Longer ones use a linked
  list (``nxt``/``prv``), one bucket of candidate positions per rank and a
  min-heap of the ranks present: O(n log n) overall, so ``"a" * 10**6`` or a
  megabyte-long pretoken is never quadratic.
* Why both loops give the reference's answer (the reference applies the lowest
  rank present to all its non-overlapping occurrences left to right, then
  repeats). (1) Both take the lowest rank present and, within it, the leftmost
  position first (a merge keeps its left node, so positions keep their order).
  (2) A merge ``x y -> z`` only creates pairs containing ``z``; every merge whose
  pair contains ``z`` comes later in the merge list than the merge that created
  ``z`` (a merge may only use existing ids), and ranks follow merge order, so a
  new pair always has a *higher* rank than the one being applied. Hence all
  occurrences of rank r that exist when r becomes the minimum are applied before
  any other rank, exactly as the reference applies r to the whole sequence, and
  no occurrence of r appears while r is being applied. (3) Taking equal-rank
  positions left to right and skipping one whose pair is no longer ``x y`` is the
  reference's left-to-right non-overlapping scan: in ``a a a`` merging positions
  (0, 1) destroys the pair at (1, 2), which is then skipped. (4) A skipped
  (stale) candidate never becomes valid again: a position's pair only ever
  changes to larger ids (merged tokens have larger ids than their parts), so it
  never returns to ``x y``. (5) A sequence ``x x ... x`` of n equal ids has one
  pair, ``x x``; the reference replaces its non-overlapping occurrences left to
  right, giving ``z`` n // 2 times and, when n is odd, a final ``x``. The long
  loop does this step in one pass (and again while the result is one run), then
  continues from the result as from any other sequence. (Measured: ``"a" * 10**6``
  took 66 ms in the bucket loop, about 2 ms this way.)
"""
from __future__ import annotations

import numpy as np
from numba import njit

_FNV_OFFSET = np.int64(-3750763034362895579)  # 0xcbf29ce484222325 as int64
_FNV_PRIME = np.int64(1099511628211)
_MIX = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as int64
_LOW32 = np.int64(0xFFFFFFFF)
_MISS_CACHE_BITS = 14  # at most 16384 miss-cache slots per kernel call


@njit(cache=True, nogil=True)
def _pair_slot(table, key):
    """Linear probing over the int64 ``table`` of ``(key, value)`` slots (a power of
    two of them, key -1 = empty): the slot holding ``key`` or the empty slot where
    it belongs."""
    mask = (table.shape[0] >> 1) - 1
    h = key * _MIX
    h ^= h >> 29
    s = h & mask
    while True:
        k = table[2 * s]
        if k == key or k == -1:
            return s
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _pair_lookup(table, left, right):
    """``rank << 32 | new id`` of the merge ``(left, right)``, or -1."""
    key = (np.int64(left) << 32) | np.int64(right)
    s = _pair_slot(table, key)
    if table[2 * s] == key:
        return table[2 * s + 1]
    return np.int64(-1)


@njit(cache=True, nogil=True)
def _build_pair_table(lefts, rights, ranks, news, size):
    """A rank table of ``size`` slots (power of two, > 2 x entries) from int64
    ``lefts``, ``rights``, ``ranks``, ``news``: int64 array of 2 x size."""
    table = np.full(2 * size, -1, np.int64)
    for i in range(lefts.shape[0]):
        key = (lefts[i] << 32) | rights[i]
        s = _pair_slot(table, key)
        if table[2 * s] == -1:
            table[2 * s] = key
            table[2 * s + 1] = (ranks[i] << 32) | news[i]
    return table


@njit(cache=True, nogil=True)
def _hash_bytes(data, start, end):
    """64-bit FNV-1a of uint8 ``data[start:end]`` (as int64, wrapping)."""
    h = _FNV_OFFSET
    for i in range(start, end):
        h ^= np.int64(data[i])
        h *= _FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def _build_bytes_table(tb, tb_off, ids, size):
    """The shortcut table: ``size`` slots (power of two, > 2 x entries) of four
    int64 each holding the int32 token ``ids`` (bytes in uint8 ``tb`` with int64
    ``tb_off``) by the hash of their bytes; see the module notes."""
    sc = np.zeros(4 * size, np.int64)
    for s in range(size):
        sc[4 * s + 1] = -1
    mask = size - 1
    for i in range(ids.shape[0]):
        t = ids[i]
        h = _hash_bytes(tb, tb_off[t], tb_off[t + 1])
        s = (h ^ (h >> 31)) & mask
        while sc[4 * s + 1] != -1:
            s = (s + 1) & mask
        sc[4 * s] = h
        sc[4 * s + 1] = ((tb_off[t + 1] - tb_off[t]) << 32) | np.int64(t)
        sc[4 * s + 2] = tb_off[t]
    return sc


@njit(cache=True, nogil=True)
def _shortcut_lookup(sc, tb, tb_off, text, start, end, h):
    """The id of the reachable token spelled by uint8 ``text[start:end]`` (whose
    hash is ``h``), or -1."""
    mask = (sc.shape[0] >> 2) - 1
    s = (h ^ (h >> 31)) & mask
    n = end - start
    while True:
        meta = sc[4 * s + 1]
        if meta == -1:
            return np.int32(-1)
        if sc[4 * s] == h and (meta >> 32) == n:
            t = np.int32(meta & _LOW32)
            o = sc[4 * s + 2]
            same = True
            for i in range(n):
                if tb[o + i] != text[start + i]:
                    same = False
                    break
            if same:
                return t
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def _merge_scan(buf, a, n, table, ranks):
    """Merges on int32 ``buf[a:a+n]`` in place for short sequences; int64 ``ranks``
    (>= n) is scratch holding the table value of each adjacent pair. Each step
    merges the leftmost pair of lowest rank and re-looks-up only its two
    neighbours; by the module notes this is the reference's order. Returns the
    new length."""
    none = np.int64(0x7FFFFFFFFFFFFFFF)
    for i in range(n - 1):
        v = _pair_lookup(table, buf[a + i], buf[a + i + 1])
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
            v = _pair_lookup(table, buf[a + at], buf[a + at + 1])
            ranks[at] = v if v >= 0 else none
        else:
            ranks[at] = none
        if at > 0:
            v = _pair_lookup(table, buf[a + at - 1], buf[a + at])
            ranks[at - 1] = v if v >= 0 else none
    return n


@njit(cache=True, nogil=True)
def _heap_push(heap, size, key):
    i = size
    heap[i] = key
    while i > 0:
        p = (i - 1) >> 1
        if heap[p] <= key:
            break
        heap[i] = heap[p]
        i = p
    heap[i] = key
    return size + 1


@njit(cache=True, nogil=True)
def _heap_pop(heap, size):
    """Remove the minimum (the caller read ``heap[0]``); returns the new size."""
    size -= 1
    last = heap[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] >= last:
            break
        heap[i] = heap[c]
        i = c
    if size > 0:
        heap[i] = last
    return size


@njit(cache=True, nogil=True)
def _bucket_add(head, pool_pos, pool_next, n_pool, heap, size, rank, pos):
    """Add position ``pos`` to rank ``rank``'s bucket (a linked list in the pool),
    pushing the rank on the heap when its bucket was empty. Returns (n_pool, size)."""
    if head[rank] == -1:
        size = _heap_push(heap, size, rank)
    pool_pos[n_pool] = pos
    pool_next[n_pool] = head[rank]
    head[rank] = n_pool
    return n_pool + 1, size


@njit(cache=True, nogil=True)
def _merge_long(buf, a, n, table, nxt, prv, heap, head, pool_pos, pool_next, order):
    """Rank buckets on int32 ``buf[a:a+n]`` in place; returns the new length.

    Scratch: int32 ``nxt``/``prv`` (>= n, the linked list), int64 ``heap`` (>= 3n,
    a min-heap of the distinct ranks present), int32 ``head`` (one bucket head per
    rank, all -1 on entry and again on return), int32 ``pool_pos``/``pool_next``/
    ``order`` (>= 3n: every candidate (rank, position) ever created; at most n - 1
    initial ones and two per merge). When a rank becomes the minimum, its bucket's
    positions are put in ascending order and applied left to right, skipping those
    whose pair changed (module notes (1)-(4)); a sequence of one repeated id first
    takes the arithmetic step of note (5). Cost: O(n log n) in all, and O(n) per
    distinct rank when buckets arrive in order.
    """
    # a sequence of one repeated id x (e.g. "a" * 10**6) has the single pair x x:
    # its first merge step is arithmetic (module note (5)); repeat while it stays one run
    while n >= 2:
        x = buf[a]
        same = True
        for i in range(1, n):
            if buf[a + i] != x:
                same = False
                break
        if not same:
            break
        v = _pair_lookup(table, x, x)
        if v < 0:
            return n
        new = np.int32(v & _LOW32)
        half = n >> 1
        for i in range(half):
            buf[a + i] = new
        if n & 1:
            buf[a + half] = x
        n = half + (n & 1)
    if n < 2:
        return n
    size = 0
    n_pool = 0
    for i in range(n):
        nxt[i] = i + 1
        prv[i] = i - 1
    for i in range(n - 1):
        v = _pair_lookup(table, buf[a + i], buf[a + i + 1])
        if v >= 0:
            n_pool, size = _bucket_add(head, pool_pos, pool_next, n_pool, heap, size, v >> 32, i)
    while size > 0:
        rank = heap[0]
        size = _heap_pop(heap, size)
        # the bucket lists positions newest first; restore ascending order
        k = 0
        e = head[rank]
        head[rank] = -1
        while e != -1:
            order[k] = pool_pos[e]
            k += 1
            e = pool_next[e]
        descending = True
        for q in range(1, k):
            if order[q] > order[q - 1]:
                descending = False
                break
        if descending:
            for q in range(k // 2):
                t = order[q]
                order[q] = order[k - 1 - q]
                order[k - 1 - q] = t
        else:
            order[:k].sort()
        for q in range(k):
            i = order[q]
            j = nxt[i]
            if j < 0 or j >= n:
                continue  # i was merged away, or is the last node now
            v = _pair_lookup(table, buf[a + i], buf[a + j])
            if v < 0 or (v >> 32) != rank:
                continue  # stale: the pair at i changed
            new = np.int32(v & _LOW32)
            buf[a + i] = new
            m = nxt[j]
            nxt[i] = m
            nxt[j] = -1
            # new pairs have higher ranks than ``rank`` (module note (2)): they go to
            # later buckets, never to the one being applied
            if m < n:
                prv[m] = i
                v = _pair_lookup(table, new, buf[a + m])
                if v >= 0:
                    n_pool, size = _bucket_add(head, pool_pos, pool_next, n_pool, heap, size, v >> 32, i)
            p = prv[i]
            if p >= 0:
                v = _pair_lookup(table, buf[a + p], new)
                if v >= 0:
                    n_pool, size = _bucket_add(head, pool_pos, pool_next, n_pool, heap, size, v >> 32, p)
    w = a
    i = 0
    while i < n:
        buf[w] = buf[a + i]
        w += 1
        i = nxt[i]
    return w - a


@njit(cache=True, nogil=True)
def _merge(buf, a, n, table, short_limit, nxt, prv, heap, head, pool_pos, pool_next, order):
    """Merges on int32 ``buf[a:a+n]`` in place: the scan loop up to ``short_limit``
    (``heap`` as its scratch), rank buckets above (scratch as in ``_merge_long``).
    Returns the new length."""
    if n < 2:
        return n
    if n <= short_limit:
        return _merge_scan(buf, a, n, table, heap)
    return _merge_long(buf, a, n, table, nxt, prv, heap, head, pool_pos, pool_next, order)


@njit(cache=True, nogil=True)
def _n_ranks(table):
    """One more than the largest rank in a rank table (0 when empty)."""
    r = np.int64(0)
    for s in range(table.shape[0] >> 1):
        if table[2 * s] != -1:
            r = max(r, (table[2 * s + 1] >> 32) + 1)
    return r


@njit(cache=True, nogil=True)
def _merge_one(ids, table, short_limit):
    """Merges applied to a copy of int32 ``ids`` (for tests and single runs)."""
    n = ids.shape[0]
    buf = ids.copy()
    cap = max(n, 1)
    m = _merge(buf, 0, n, table, short_limit, np.empty(cap, np.int32), np.empty(cap, np.int32),
               np.empty(3 * cap, np.int64), np.full(max(_n_ranks(table), 1), -1, np.int32),
               np.empty(3 * cap, np.int32), np.empty(3 * cap, np.int32), np.empty(3 * cap, np.int32))
    return buf[:m].copy()


@njit(cache=True, nogil=True)
def _encode_docs(text, piece_ends, doc_pieces, byte_ids, sc, tb, tb_off,
                 r_table, s_table, n_heads, eligible, use_shortcut, use_super, short_limit):
    """Encode a batch of documents.

    Reads: uint8 ``text`` (the documents' UTF-8 bytes, concatenated), int64
    ``piece_ends`` (each pretoken's end offset in code points from the start of
    its document, all documents in order; the driver has checked that each
    document's last end is its length), int64 ``doc_pieces`` (n_docs + 1 offsets
    into ``piece_ends``), int32
    ``byte_ids`` (256: atomic id of each byte), the shortcut table, the rank
    tables and ``n_heads`` (more than the largest rank in either), uint8
    ``eligible`` (per regular id) and int64 flags. Returns ``(ids int32, offsets
    int64 of n_docs + 1)``; document d's ids are ``ids[offsets[d]:offsets[d + 1]]``.
    Supermerge runs never cross documents.
    """
    n_pieces = piece_ends.shape[0]
    n_docs = doc_pieces.shape[0] - 1
    # byte boundaries of the pretokens (code points -> bytes by the UTF-8 lead bytes)
    bounds = np.empty(n_pieces + 1, np.int64)
    pos = 0
    longest = 1
    bounds[0] = 0
    for d in range(n_docs):
        if doc_pieces[d + 1] - doc_pieces[d] > longest:
            longest = doc_pieces[d + 1] - doc_pieces[d]
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
    nxt = np.empty(longest, np.int32)
    prv = np.empty(longest, np.int32)
    heap = np.empty(3 * longest, np.int64)
    pool_pos = np.empty(3 * longest, np.int32)
    pool_next = np.empty(3 * longest, np.int32)
    order = np.empty(3 * longest, np.int32)
    head = np.empty(0, np.int32)  # bucket heads: allocated by the first long sequence
    out = np.empty(max(pos, 1), np.int32)
    out_off = np.zeros(n_docs + 1, np.int64)
    # miss cache (see the module notes): direct-mapped by hash; per slot the
    # hash, the piece's byte start and length, and where its ids sit in ``out``
    mc_bits = 6
    while mc_bits < _MISS_CACHE_BITS and (1 << mc_bits) < n_pieces:
        mc_bits += 1
    mc_mask = (1 << mc_bits) - 1
    mc = np.full(4 << mc_bits, -1, np.int64)
    w = 0
    for d in range(n_docs):
        run_start = w
        run_len = 0
        for k in range(doc_pieces[d], doc_pieces[d + 1]):
            s = bounds[k]
            e = bounds[k + 1]
            n = 0
            cached = False
            slot = 0
            h = np.int64(0)
            if use_shortcut:
                h = _hash_bytes(text, s, e)
                t = _shortcut_lookup(sc, tb, tb_off, text, s, e, h)
                if t >= 0:
                    out[w] = t
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
                for i in range(e - s):
                    out[w + i] = byte_ids[text[s + i]]
                if e - s > short_limit and head.shape[0] == 0:
                    head = np.full(n_heads, -1, np.int32)
                n = _merge(out, w, e - s, r_table, short_limit, nxt, prv, heap, head,
                           pool_pos, pool_next, order)
            if n == 1 and eligible[out[w]] != 0:
                if run_len == 0:
                    run_start = w
                run_len += 1
                w += 1
                continue
            if run_len >= 2 and use_super:
                if run_len > short_limit and head.shape[0] == 0:
                    head = np.full(n_heads, -1, np.int32)
                m = _merge(out, run_start, run_len, s_table, short_limit, nxt, prv, heap, head,
                           pool_pos, pool_next, order)
                if m < run_len:
                    dst = run_start + m
                    for i in range(n):
                        out[dst + i] = out[w + i]
                    w = dst
            run_len = 0
            if use_shortcut and n >= 2 and not cached and w <= _LOW32:
                # ids at out[w:w+n] stay put from here on (later runs start after them)
                mc[slot] = h
                mc[slot + 1] = s
                mc[slot + 2] = e - s
                mc[slot + 3] = (np.int64(n) << 32) | w
            w += n
        if run_len >= 2 and use_super:
            if run_len > short_limit and head.shape[0] == 0:
                head = np.full(n_heads, -1, np.int32)
            m = _merge(out, run_start, run_len, s_table, short_limit, nxt, prv, heap, head,
                       pool_pos, pool_next, order)
            w = run_start + m
        out_off[d + 1] = w
    return out[:w].copy(), out_off
