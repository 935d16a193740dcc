"""Numba kernels of MinGram (the fast path of :mod:`fastsw.trainers.mingram`): a trie of token prefixes in flat arrays,
the per-pretoken dynamic program of MINGRAM.md section 2.1, the E-step over packed pretokens, the batch
encoder and the MinGram-PP (``mi``) pruning scores.

The trie: node 0 is the root; the child of ``node`` along atomic id ``sym`` is found in an open-addressing
hash table ``keys`` (int64, ``node * n_sym + sym``, -1 = empty slot) / ``vals`` (int32 child node) whose size is
a power of two at least twice the number of nodes; ``node_tok`` (int32, one per node) is the token index that
ends at the node, -1 for none. Token indices are whatever the driver numbers the tokens by (seed ids during
training, model ids when encoding); ``tok_len`` (int32) gives each token's length in atoms and ``cost``
(float64) its ``d(t) = score_delta * lp(t)`` (0.0 when ``score_delta == 0``).

Each kernel compiles one signature (the drivers coerce every argument) and is plain arrays in, arrays out.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastsw._compiling import stamp_module
from fastsw.encoding.encode_kernels import _ID_MASK, _long_hash, _long_lookup, _pack, _short_hash, _short_lookup

_EPS = 1e-12
#: Most int32 entries of the dense first two trie levels (4 MB); byte alphabets need at most 256 * 257.
_DENSE_ENTRIES = 1 << 20


@njit(cache=True, nogil=True, inline="always")
def _slot(key, mask):
    # the low 32 bits times a 31-bit odd constant stay below 2**63: no overflow, also as plain Python
    k = np.int64(key)
    h = (k & 0xFFFFFFFF) * 0x5BD1E995
    h ^= (h >> 29) ^ (k >> 32)
    return h & mask


@njit(cache=True, nogil=True)
def _child(keys, vals, mask, node, sym, n_sym):
    key = node * n_sym + sym
    i = _slot(key, mask)
    while True:
        k = keys[i]
        if k == key:
            return vals[i]
        if k == -1:
            return -1
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def _build_trie(tok_sym, tok_off, order, n_sym):
    """The trie of the tokens ``order`` (int64 token indices, in model order: a later token with the same
    atomic sequence shadows an earlier one) whose atoms are ``tok_sym[tok_off[t]:tok_off[t + 1]]`` (int32,
    int64). Returns ``(keys, vals, node_tok)`` as described in the module docstring."""
    total = 1
    for t in order:
        total += tok_off[t + 1] - tok_off[t]
    size = 4
    while size < 2 * total:
        size *= 2
    mask = size - 1
    keys = np.full(size, -1, np.int64)
    vals = np.full(size, -1, np.int32)
    node_tok = np.full(total, -1, np.int32)
    n_nodes = 1
    for t in order:
        node = 0
        for j in range(tok_off[t], tok_off[t + 1]):
            key = node * n_sym + tok_sym[j]
            i = _slot(key, mask)
            while keys[i] != -1 and keys[i] != key:
                i = (i + 1) & mask
            if keys[i] == -1:
                keys[i] = key
                vals[i] = n_nodes
                n_nodes += 1
            node = vals[i]
        node_tok[node] = t
    return keys, vals, node_tok[:n_nodes].copy()


@njit(cache=True, nogil=True)
def _dense_rows(keys, vals, n_nodes, n_sym, max_entries):
    """The first two levels of the trie as dense int32 rows of ``n_sym`` children (-1 none): row 0 is the
    root's, row r >= 1 that of the r-th child of the root (when all rows fit in ``max_entries``). Returns
    ``(dense, row)``, ``row[node]`` the node's row or -1 (then its children are found in the hash table).
    The first steps of every walk, the most frequent, need no hash probe."""
    mask = keys.shape[0] - 1
    row = np.full(n_nodes, -1, np.int32)
    row[0] = 0
    first = np.full(n_sym, -1, np.int32)
    k = 0
    for a in range(n_sym):
        first[a] = _child(keys, vals, mask, 0, a, n_sym)
        if first[a] >= 0:
            k += 1
    n_rows = 1 + k if (1 + k) * n_sym <= max_entries else 1
    dense = np.full(n_rows * n_sym, -1, np.int32)
    dense[:n_sym] = first
    r = 1
    if n_rows > 1:
        for a in range(n_sym):
            node = first[a]
            if node >= 0:
                row[node] = r
                for b in range(n_sym):
                    dense[r * n_sym + b] = _child(keys, vals, mask, node, b, n_sym)
                r += 1
    return dense, row


@njit(cache=True, nogil=True)
def _viterbi(sym, start, end, keys, vals, dense, row, n_sym, node_tok, cost, best, back):
    """MINGRAM.md 2.1 on ``sym[start:end]``: fills ``best[0..n]`` and ``back[0..n]`` (the last writer's token
    index, -1 none). Candidates for an end arrive in increasing start; one within 1e-12 of the best so far
    replaces it (last write wins)."""
    mask = keys.shape[0] - 1
    n = end - start
    best[0] = 0.0
    back[0] = -1
    for i in range(1, n + 1):
        best[i] = -np.inf
        back[i] = -1
    for p in range(n):
        if p > 0 and back[p] < 0:
            continue
        base = best[p]
        node = dense[sym[start + p]]
        e = p + 1
        while node >= 0:
            t = node_tok[node]
            if t >= 0:
                cand = (base + cost[t]) - 1.0
                if cand >= best[e] - _EPS:
                    best[e] = cand
                    back[e] = t
            if e == n:
                break
            r = row[node]
            if r >= 0:
                node = dense[r * n_sym + sym[start + e]]
            else:
                node = _child(keys, vals, mask, node, sym[start + e], n_sym)
            e += 1


@njit(cache=True, nogil=True)
def _emit_path(back, tok_len, n, out, n_out):
    """Write the path that :func:`_viterbi` left in ``back`` for a pretoken of ``n`` symbols to
    ``out[n_out:]`` in text order (the back-pointers run from the end); returns the new ``n_out``."""
    m = 0
    e = n
    while e > 0:
        m += 1
        e -= tok_len[back[e]]
    e = n
    j = n_out + m
    while e > 0:
        j -= 1
        out[j] = back[e]
        e -= tok_len[back[e]]
    return n_out + m


@njit(cache=True, nogil=True)
def _e_step(
    sym, offsets, counts, keys, vals, dense, row, n_sym, node_tok, tok_len, cost, n_tokens, w0, w1, shortcut, stop
):
    """Hard E-step over the packed pretokens ``w0..w1-1`` (atoms ``sym`` int32, ``offsets`` int64, ``counts``
    int64): each pretoken's best path adds its count to ``usage[t]`` (int64, ``n_tokens``, returned) for every
    token on it. With ``shortcut`` (the driver checked that every finite cost is in (-0.5, 0]) a pretoken that
    is one token is that token without the program. Stops early when ``stop[0]`` is set (Ctrl-C)."""
    usage = np.zeros(n_tokens, np.int64)
    mask = keys.shape[0] - 1
    longest = 0
    for w in range(w0, w1):
        longest = max(longest, offsets[w + 1] - offsets[w])
    best = np.empty(longest + 1, np.float64)
    back = np.empty(longest + 1, np.int32)
    for w in range(w0, w1):
        if (w & 4095) == 0 and stop[0] != 0:
            break
        start = offsets[w]
        end = offsets[w + 1]
        if shortcut and end > start:
            node = dense[sym[start]]
            j = start + 1
            while node >= 0 and j < end:
                r = row[node]
                if r >= 0:
                    node = dense[r * n_sym + sym[j]]
                else:
                    node = _child(keys, vals, mask, node, sym[j], n_sym)
                j += 1
            if node >= 0 and node_tok[node] >= 0:
                usage[node_tok[node]] += counts[w]
                continue
        _viterbi(sym, start, end, keys, vals, dense, row, n_sym, node_tok, cost, best, back)
        f = counts[w]
        e = end - start
        while e > 0:
            t = back[e]
            usage[t] += f
            e -= tok_len[t]
    return usage


@njit(cache=True, nogil=True)
def _segment_all(sym, offsets, keys, vals, n_sym, node_tok, tok_len, cost):
    """Every packed pretoken's path as token indices: ``(paths int32, path_offsets int64)``."""
    n_words = offsets.shape[0] - 1
    dense, row = _dense_rows(keys, vals, node_tok.shape[0], n_sym, _DENSE_ENTRIES)
    longest = 0
    for w in range(n_words):
        longest = max(longest, offsets[w + 1] - offsets[w])
    best = np.empty(longest + 1, np.float64)
    back = np.empty(longest + 1, np.int32)
    out = np.empty(offsets[n_words], np.int32)
    out_off = np.zeros(n_words + 1, np.int64)
    n_out = 0
    for w in range(n_words):
        start = offsets[w]
        end = offsets[w + 1]
        _viterbi(sym, start, end, keys, vals, dense, row, n_sym, node_tok, cost, best, back)
        n_out = _emit_path(back, tok_len, end - start, out, n_out)
        out_off[w + 1] = n_out
    return out[:n_out].copy(), out_off


@njit(cache=True, nogil=True)
def _encode_docs(
    data,
    piece_ends,
    doc_pieces,
    byte_ids,
    keys,
    vals,
    dense,
    row,
    n_sym,
    node_tok,
    tok_len,
    cost,
    sc_short,
    sc_long,
    tb,
    shortcut,
    byte_ends,
):
    """Encode UTF-8 ``data`` (uint8) cut into pretokens: document ``d`` has pretokens
    ``doc_pieces[d]..doc_pieces[d + 1]`` whose character end offsets within the document are ``piece_ends``
    (int64; in bytes when ``byte_ends``, as for atom pieces, :mod:`fastsw.encoding.encode_fast`). Each byte becomes its
    atomic id (``byte_ids``, int32 by byte); with ``shortcut`` a pretoken that
    is one token is emitted without the program, found by one probe of the BPE encoder's whole-pretoken tables
    (``sc_short``/``sc_long`` over the token bytes ``tb``, :mod:`fastsw.encoding.encode_kernels`). Returns
    ``(ids int32, offsets int64)``."""
    n_data = data.shape[0]
    n_docs = doc_pieces.shape[0] - 1
    sym = np.empty(n_data, np.int32)
    for i in range(n_data):
        sym[i] = byte_ids[data[i]]
    out = np.empty(n_data, np.int32)
    offsets = np.zeros(n_docs + 1, np.int64)
    cap = 64
    best = np.empty(cap + 1, np.float64)
    back = np.empty(cap + 1, np.int32)
    pos = 0
    n_out = 0
    for d in range(n_docs):
        prev = 0
        for k in range(doc_pieces[d], doc_pieces[d + 1]):
            n_chars = piece_ends[k] - prev
            prev = piece_ends[k]
            start = pos
            if byte_ends:
                pos += n_chars
            else:
                for _ in range(n_chars):
                    pos += 1
                    while pos < n_data and (data[pos] & 0xC0) == 0x80:
                        pos += 1
            end = pos
            n = end - start
            if n == 0:
                continue
            if shortcut:
                if n <= 8:
                    key = _pack(data, start, n)
                    t = _short_lookup(sc_short, key, n, _short_hash(key, n))
                else:
                    t = _long_lookup(sc_long, tb, data, start, end, _long_hash(data, start, end))
                if t >= 0:
                    out[n_out] = t & _ID_MASK  # its tables mark no eligibility: the id
                    n_out += 1
                    continue
            if n > cap:
                while cap < n:
                    cap *= 2
                best = np.empty(cap + 1, np.float64)
                back = np.empty(cap + 1, np.int32)
            _viterbi(sym, start, end, keys, vals, dense, row, n_sym, node_tok, cost, best, back)
            n_out = _emit_path(back, tok_len, n, out, n_out)
        offsets[d + 1] = n_out
    return out[:n_out].copy(), offsets


@njit(cache=True, nogil=True, inline="always")
def _min_cover(sym, start, n, keys, vals, mask, n_sym, node_tok, out, reverse):
    """``out[i]`` = the fewest tokens covering atoms ``[0, i)`` of the pretoken ``sym[start : start + n]``
    (``reverse``: atoms ``[i, n)``), ``n + 1`` where none does; the twin of ``fastsw.trainers.mingram._min_cover``.
    Inlined: each call site's ``reverse`` is a constant, so each compiles to its own loop without the test."""
    big = n + 1
    for i in range(n + 1):
        out[i] = big
    out[n if reverse else 0] = 0
    for k in range(n):
        p = n - 1 - k if reverse else k
        if not reverse and out[p] >= big:
            continue  # no cover reaches p: nothing to extend
        node = 0
        for e in range(p + 1, n + 1):
            node = _child(keys, vals, mask, node, sym[start + e - 1], n_sym)
            if node < 0:
                break
            if node_tok[node] >= 0:
                if reverse:
                    if out[e] + 1 < out[p]:
                        out[p] = out[e] + 1
                elif out[p] + 1 < out[e]:
                    out[e] = out[p] + 1


@njit(cache=True, nogil=True)
def _mi_scores(sym, offsets, counts, keys, vals, n_sym, node_tok, tok_len, cost, n_atoms, lmax, n_tokens):
    """MinGram-PP scores (MINGRAM.md 1.7): for each packed pretoken, F (fewest tokens covering each prefix)
    and B (each suffix) over the whole vocabulary, then for each non-atomic token t on the model's path over
    [s, e): ``mi[t] += count * min(inner, outer)`` (int64, ``n_tokens``); the twin of
    ``fastsw.trainers.mingram.mi_scores_reference``."""
    mask = keys.shape[0] - 1
    mi = np.zeros(n_tokens, np.int64)
    dense, row = _dense_rows(keys, vals, node_tok.shape[0], n_sym, _DENSE_ENTRIES)
    n_words = offsets.shape[0] - 1
    longest = 0
    for w in range(n_words):
        longest = max(longest, offsets[w + 1] - offsets[w])
    best = np.empty(longest + 1, np.float64)
    back = np.empty(longest + 1, np.int32)
    F = np.empty(longest + 1, np.int64)
    B = np.empty(longest + 1, np.int64)
    path = np.empty(longest + 1, np.int32)
    for w in range(n_words):
        start = offsets[w]
        end = offsets[w + 1]
        n = end - start
        _min_cover(sym, start, n, keys, vals, mask, n_sym, node_tok, F, False)
        _min_cover(sym, start, n, keys, vals, mask, n_sym, node_tok, B, True)
        K = F[n]
        _viterbi(sym, start, end, keys, vals, dense, row, n_sym, node_tok, cost, best, back)
        m = 0
        e = n
        while e > 0:
            path[m] = back[e]
            m += 1
            e -= tok_len[back[e]]
        f = counts[w]
        s = 0
        for k in range(m - 1, -1, -1):
            t = path[k]
            e = s + tok_len[t]
            if t >= n_atoms:
                have = False
                v_min = 0
                for j in range(s + 1, e):
                    v = F[j] + B[j] - K
                    if not have or v < v_min:
                        v_min = v
                        have = True
                lo = e - lmax
                if lo < 0:
                    lo = 0
                cap = s + lmax
                if cap > n:
                    cap = n
                for s2 in range(lo, s + 1):
                    node = 0
                    hi = s2 + lmax
                    if hi > n:
                        hi = n
                    for e2 in range(s2 + 1, hi + 1):
                        node = _child(keys, vals, mask, node, sym[start + e2 - 1], n_sym)
                        if node < 0:
                            break
                        if e2 >= e and (s2 != s or e2 != e) and node_tok[node] >= 0 and e2 <= cap:
                            v = F[s2] + B[e2] + 1 - K
                            if not have or v < v_min:
                                v_min = v
                                have = True
                if have:
                    mi[t] += f * v_min
            s = e
    return mi


# the kernels' cache entries are stamped with the files of the jitted code they call, too
stamp_module(__name__)
