"""Numba kernel for parity-aware BPE (the fast twin of :func:`fastsw.trainers.parity.learn_parity_merges`).

Private functions over contiguous numpy arrays only; the driver is :mod:`fastsw.trainers.parity_fast`. The pair
table, hashing, tie order and occurrence segments are :mod:`fastsw.trainers.bpe_kernels`' (imported, not
copied); what is new here is what parity-aware BPE adds to the merge loop.

Design notes: see docs/internals.md, section "Parity-aware BPE".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastsw.trainers.bpe_kernels import (
    _better,
    _compact,
    _find,
    _grow_i32,
    _grow_i64,
    _grow_u8,
    _hash,
    _pair_counts,
    _pair_id,
    _prefetch,
    _prefix_key,
    _room_for_pairs,
)

_DIGIT = 30
_MASK = (1 << _DIGIT) - 1


@njit(cache=True)
def _room(rec, plen, htab, pcount, n_lang, need):
    """:func:`fastsw.trainers.bpe_kernels._room_for_pairs`, with the per-language count columns grown alongside."""
    rec, plen, htab = _room_for_pairs(rec, plen, htab, need)
    if plen.shape[0] * n_lang > pcount.shape[0]:
        pcount = _grow_i64(pcount, plen.shape[0] * n_lang)
    return rec, plen, htab, pcount


@njit(cache=True)
def _new_pair(htab, rec, plen, pcount, n_lang, n_pairs, x, y):
    """:func:`fastsw.trainers.bpe_kernels._pair_id`, zeroing a new pair's language columns."""
    q, n = _pair_id(htab, rec, plen, n_pairs, x, y)
    if n != n_pairs:
        for l in range(n_lang):
            pcount[q * n_lang + l] = 0
    return q, n


@njit(cache=True)
def _count_entries(
    tokens, offsets, lengths, word_counts, word_lang, n_lang, w, overlapping, htab, rec, plen, pcount, n_pairs, tq, t0
):
    """The initial pair counts (summed and per language) of the entries from ``w`` on; ``tq`` as in
    :func:`fastsw.trainers.bpe_kernels._count_words`. Stops before an entry that lacks room; returns
    ``(w, n_pairs)``."""
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
        col = word_lang[w]
        last_eq = -2
        for i in range(L - 1):
            x = tokens[o + i]
            y = tokens[o + i + 1]
            counted, last_eq = _pair_counts(x, y, i, last_eq, overlapping)
            if not counted:
                tq[o - t0 + i] = -1
                continue
            q, n_pairs = _new_pair(htab, rec, plen, pcount, n_lang, n_pairs, x, y)
            rec[3 * q + 1] += c
            pcount[q * n_lang + col] += c
            if rec[3 * q + 2] != w:
                rec[3 * q + 2] = w
                plen[q] += 1
                tq[o - t0 + i] = q
            else:
                tq[o - t0 + i] = -1
        w += 1
    return w, n_pairs


@njit(cache=True)
def _rewrite_entries(
    tokens,
    offsets,
    lengths,
    word_counts,
    word_lang,
    word_lw,
    n_lang,
    drop,
    occ,
    seg,
    t,
    seg_n,
    a,
    b,
    new,
    overlapping,
    htab,
    rec,
    plen,
    pcount,
    n_pairs,
    buf_q,
    buf_w,
    n_buf,
    win_lo,
    win_hi,
    win_n,
):
    """Merge ``(a, b)`` into ``new`` in the entries ``occ[seg + t : seg + seg_n]``: the windowed count deltas
    of :func:`fastsw.trainers.bpe_kernels._rewrite_words`, applied to the summed column and the entry's language
    column, and ``drop[lang] += replacements × length weight``. Stops before an entry that lacks room;
    returns ``(t, n_pairs, n_buf)``."""
    while t < seg_n:
        if t + 12 < seg_n:  # the entries ahead are scattered: fetch them early (as _rewrite_words does)
            w2 = occ[seg + t + 12]
            _prefetch(offsets, w2)
            _prefetch(lengths, w2)
            _prefetch(word_counts, w2)
            _prefetch(word_lang, w2)
        if t + 6 < seg_n:
            _prefetch(tokens, offsets[occ[seg + t + 6]])
        w = occ[seg + t]
        o = offsets[w]
        L = lengths[w]
        # the replacement windows: the same loop as _train_kernels._rewrite_words (kept inline there and here:
        # a shared @njit helper, called or inline="always", cost 17 % of BPE's phase 1 on 50 MB, 0.79 -> 0.92 s)
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
        col = word_lang[w]

        need = n_pairs + L + 1
        if need > plen.shape[0] or 4 * need > 3 * htab.shape[0] or n_buf + L > buf_q.shape[0]:
            return t, n_pairs, n_buf

        if c != 0:  # old pairs of each window out
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
                    pcount[q * n_lang + col] -= c

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
        drop[col] += (L - k) * word_lw[w]
        L = k
        lengths[w] = L

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
                q, n_pairs = _new_pair(htab, rec, plen, pcount, n_lang, n_pairs, x, y)
                rec[3 * q + 1] += c
                pcount[q * n_lang + col] += c
                if (x == new or y == new) and rec[3 * q + 2] != w:
                    rec[3 * q + 2] = w
                    plen[q] += 1
                    buf_q[n_buf] = q
                    buf_w[n_buf] = w
                    n_buf += 1
        t += 1
    return t, n_pairs, n_buf


# ---- heaps: heap h holds keys/counts at hk/hc[hb[h] : hb[h] + hs[h]], capacity hcap[h]


@njit(cache=True)
def _hsift_down(hk, hc, base, size, i, tpre, tb, tb_off, tie_bytes):
    """Restore heap ``base``'s max-heap order below position ``i``."""
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
        hk[base + i] = hk[base + child]
        hc[base + i] = hc[base + child]
        i = child
    hk[base + i] = p
    hc[base + i] = c


@njit(cache=True)
def _hpush(hk, hc, base, size, p, c, tpre, tb, tb_off, tie_bytes):
    """Push key ``p`` with count ``c`` onto the heap at ``base`` (room checked by the caller)."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _better(p, c, hk[base + parent], hc[base + parent], tpre, tb, tb_off, tie_bytes):
            break
        hk[base + i] = hk[base + parent]
        hc[base + i] = hc[base + parent]
        i = parent
    hk[base + i] = p
    hc[base + i] = c


@njit(cache=True)
def _column(rec, pcount, n_lang, q, h):
    """Pair ``q``'s count in column ``h``: language ``h``, or the sum when ``h == n_lang``."""
    if h == n_lang:
        return rec[3 * q + 1]
    return pcount[q * n_lang + h]


@njit(cache=True)
def _htop(hk, hc, hb, hs, h, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes):
    """Heap ``h``'s best pair (stale tops re-keyed, those at or below ``floor`` dropped), or -1."""
    base = hb[h]
    while hs[h] > 0:
        key = hk[base]
        q = _find(htab, rec, key, _hash(key))
        current = _column(rec, pcount, n_lang, q, h)
        if hc[base] == current:
            return q
        if current > floor:
            hc[base] = current
        else:
            hs[h] -= 1
            hk[base] = hk[base + hs[h]]
            hc[base] = hc[base + hs[h]]
        _hsift_down(hk, hc, base, hs[h], np.int64(0), tpre, tb, tb_off, tie_bytes)
    return -1


@njit(cache=True)
def _hreserve(hk, hc, hb, hs, hcap, h, hend):
    """Room for one more entry in heap ``h``: a full heap moves to the end of the arrays with 1.5x its
    capacity; when the end is reached, every heap is copied into new arrays. Returns ``(hk, hc, hend)``."""
    if hs[h] < hcap[h]:
        return hk, hc, hend
    cap = max(hcap[h] + hcap[h] // 2, np.int64(64))
    if hend + cap > hk.shape[0]:
        total = cap
        for g in range(hb.shape[0]):
            if g != h:
                total += hs[g] + hs[g] // 4 + 64
        nk = np.empty(total + total // 4, np.int64)
        nc = np.empty(total + total // 4, np.int64)
        end = np.int64(0)
        for g in range(hb.shape[0]):
            gc = cap if g == h else hs[g] + hs[g] // 4 + 64
            for i in range(hs[g]):
                nk[end + i] = hk[hb[g] + i]
                nc[end + i] = hc[hb[g] + i]
            hb[g] = end
            hcap[g] = gc
            end += gc
        return nk, nc, end
    for i in range(hs[h]):
        hk[hend + i] = hk[hb[h] + i]
        hc[hend + i] = hc[hb[h] + i]
    hb[h] = hend
    hcap[h] = cap
    return hk, hc, hend + cap


# ---- exact comparison of ratio criteria


@njit(cache=True)
def _mul_digits(num, l, x, out):
    """``out`` = the base-2**30 digits of ``num[l] × x`` (``num`` int64 rows of digits, ``x`` < 2**63)."""
    n = num.shape[1]
    for k in range(out.shape[0]):
        out[k] = 0
    xd0 = x & _MASK
    xd1 = (x >> _DIGIT) & _MASK
    xd2 = x >> (2 * _DIGIT)
    for i in range(n):
        d = num[l, i]
        if d == 0:
            continue
        carry = np.int64(0)
        for j in range(3):
            xd = xd0 if j == 0 else (xd1 if j == 1 else xd2)
            t = out[i + j] + d * xd + carry
            out[i + j] = t & _MASK
            carry = t >> _DIGIT
        k = i + 3
        while carry != 0:
            t = out[k] + carry
            out[k] = t & _MASK
            carry = t >> _DIGIT
            k += 1


@njit(cache=True)
def _ratio_less(num, i, j, cur, ta, tb2):
    """True when language ``i``'s criterion ``K_i / cur_i`` is below language ``j``'s (``K_l = num[l] / D``):
    ``num[i] × cur[j] < num[j] × cur[i]``, exactly."""
    _mul_digits(num, i, cur[j], ta)
    _mul_digits(num, j, cur[i], tb2)
    for k in range(ta.shape[0] - 1, -1, -1):
        if ta[k] != tb2[k]:
            return ta[k] < tb2[k]
    return False


@njit(cache=True, nogil=True)
def _parity_loop(
    tokens,
    offsets,
    word_counts,
    word_lang,
    word_lw,
    n_lang,
    tb_in,
    tb_off_in,
    overlapping,
    tie_bytes,
    max_steps,
    global_merges,
    min_frequency,
    skip,
    lengths0,
    use_ratios,
    ratio_num,
    window,
    allowance,
    stop,
):
    """Parity-aware BPE's merge loop over entries (see the module notes); rewrites ``tokens`` in place.

    ``word_lang`` (int32) and ``word_lw`` (int64) per entry; ``lengths0`` (int64, ``n_lang``) the criterion
    lengths before the first merge; ``use_ratios`` 1: choose by ``ratio_num`` (int64 ``n_lang × digits``),
    else the largest length; ``window`` > 0: the moving-window variant, a language allowed while chosen at
    most ``allowance`` times among the last ``window`` choices. The first ``global_merges`` steps use the
    summed column. A language whose best count is below ``min_frequency`` (or that has no pair) is exhausted:
    with ``skip`` 1 the next worst-off language is tried (allowed ones first, then, when every allowed one is
    exhausted, the others) and the loop stops when every language is exhausted; with ``skip`` 0 the loop stops
    at the first exhausted choice (the published script's rule). It also stops when a global step's summed
    column is exhausted, after ``max_steps`` merges, or when ``stop[0]`` is set.

    Returns ``(n_steps, lefts, rights, counts, chosen, lengths, word_lengths)``: per step the pair, its count
    in the chosen column and the chosen language (-1: global step); ``lengths`` (``(max_steps + 1) ×
    n_lang``) the criterion lengths before the first step and after each; the entries' final lengths."""
    n_words = offsets.shape[0] - 1
    if n_words > 2**31 - 1:
        raise ValueError("too many words for the merge loop (word ids are 32-bit)")
    floor = max(min_frequency - 1, np.int64(0))
    lengths = offsets[1:] - offsets[:-1]
    n_tokens = tb_off_in.shape[0] - 1
    steps = max(max_steps, 0)
    tb = tb_in.copy()
    tb_off = _grow_i64(tb_off_in, n_tokens + 1 + steps)
    tb_used = tb_off[n_tokens]
    tpre = np.empty(n_tokens + steps, np.int64)
    for t in range(n_tokens):
        tpre[t] = _prefix_key(tb, tb_off, t)

    cap = 1024
    rec = np.empty(3 * cap, np.int64)
    plen = np.empty(cap, np.int32)
    pcount = np.empty(cap * n_lang, np.int64)
    n_pairs = np.int64(0)
    htab = np.full(4096, -1, np.int64)
    max_len = 0
    n_tok = 0
    for w in range(n_words):
        max_len = max(max_len, lengths[w])
        n_tok += lengths[w]
    win_lo = np.empty(max_len // 2 + 1, np.int64)
    win_hi = np.empty(max_len // 2 + 1, np.int64)
    win_n = np.empty(max_len // 2 + 1, np.int64)

    tq = np.empty(n_tok, np.int32)
    t0 = offsets[0] if n_words > 0 else 0
    w = np.int64(0)
    while True:
        w, n_pairs = _count_entries(
            tokens,
            offsets,
            lengths,
            word_counts,
            word_lang,
            n_lang,
            w,
            overlapping,
            htab,
            rec,
            plen,
            pcount,
            n_pairs,
            tq,
            t0,
        )
        if w >= n_words:
            break
        rec, plen, htab, pcount = _room(rec, plen, htab, pcount, n_lang, n_pairs + lengths[w] + 1)

    n_occ = np.int64(0)
    for q in range(n_pairs):
        if rec[3 * q + 1] <= floor:
            plen[q] = 0
        rec[3 * q + 2] = n_occ
        n_occ += plen[q]
    occ_cap = n_occ + n_occ // 8 + 1024
    occ = np.empty(occ_cap, np.int32)
    for w in range(n_words):
        o = offsets[w] - t0
        for i in range(lengths[w] - 1):
            q = tq[o + i]
            if q >= 0 and plen[q] > 0:
                occ[rec[3 * q + 2]] = w
                rec[3 * q + 2] += 1
    for q in range(n_pairs):
        rec[3 * q + 2] -= plen[q]
    tq = np.empty(0, np.int32)

    # ---- heaps: one per language, plus the summed column's when hybrid
    n_heaps = n_lang + (1 if global_merges > 0 else 0)
    hb = np.zeros(n_heaps, np.int64)
    hs = np.zeros(n_heaps, np.int64)
    hcap = np.zeros(n_heaps, np.int64)
    for q in range(n_pairs):
        if rec[3 * q + 1] > floor:
            for h in range(n_heaps):
                if _column(rec, pcount, n_lang, q, h) > floor:
                    hcap[h] += 1
    hend = np.int64(0)
    for h in range(n_heaps):
        hb[h] = hend
        hcap[h] = hcap[h] + hcap[h] // 8 + 64
        hend += hcap[h]
    hk = np.empty(hend + hend // 4, np.int64)
    hc = np.empty(hend + hend // 4, np.int64)
    for q in range(n_pairs):
        if rec[3 * q + 1] > floor:
            for h in range(n_heaps):
                c = _column(rec, pcount, n_lang, q, h)
                if c > floor:
                    hk[hb[h] + hs[h]] = rec[3 * q]
                    hc[hb[h] + hs[h]] = c
                    hs[h] += 1
    for h in range(n_heaps):
        for i in range(hs[h] // 2 - 1, -1, -1):
            _hsift_down(hk, hc, hb[h], hs[h], np.int64(i), tpre, tb, tb_off, tie_bytes)

    buf_cap = 1024
    buf_q = np.empty(buf_cap, np.int32)
    buf_w = np.empty(buf_cap, np.int32)

    out_left = np.zeros(steps, np.int32)
    out_right = np.zeros(steps, np.int32)
    out_count = np.zeros(steps, np.int64)
    out_lang = np.zeros(steps, np.int32)
    hist_len = np.zeros((steps + 1, n_lang), np.int64)
    cur = lengths0.copy()
    for l in range(n_lang):
        hist_len[0, l] = cur[l]
    drop = np.zeros(n_lang, np.int64)
    ta = np.zeros(ratio_num.shape[1] + 4, np.int64)
    tb2 = np.zeros(ratio_num.shape[1] + 4, np.int64)
    ring = np.zeros(max(window, 1), np.int64)
    in_window = np.zeros(n_lang, np.int64)
    n_ring = 0
    ring_pos = 0
    n_steps = 0
    tried = np.zeros(n_lang, np.int64)

    while n_steps < steps:
        if stop[0] != 0:
            break
        # ---- the column: the summed one for a global step, else the worst-off allowed language; with
        # ``skip`` a language whose best pair is below min_frequency is passed over (the next worst-off one is
        # tried, allowed ones first; the window is ignored when every allowed language is exhausted)
        if n_steps < global_merges:
            h = n_lang
            lang = -1
            best = _htop(hk, hc, hb, hs, h, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes)
            if best < 0 or _column(rec, pcount, n_lang, best, h) < min_frequency:
                break
        else:
            for l in range(n_lang):
                tried[l] = 0
            best = -1
            while True:
                lang = -1
                for rule in range(2):  # 0: the window's allowed languages; 1 (skip only): any language
                    for l in range(n_lang):
                        if tried[l] != 0 or (rule == 0 and window > 0 and in_window[l] > allowance):
                            continue
                        if lang < 0:
                            lang = l
                        elif use_ratios != 0:
                            if _ratio_less(ratio_num, l, lang, cur, ta, tb2):
                                lang = l
                        elif cur[l] > cur[lang]:
                            lang = l
                    if lang >= 0 or skip == 0:
                        break
                if lang < 0:
                    break
                best = _htop(hk, hc, hb, hs, lang, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes)
                if best >= 0 and _column(rec, pcount, n_lang, best, lang) >= min_frequency:
                    break
                best = -1
                if skip == 0:
                    break
                tried[lang] = 1
            if best < 0:
                break
            if window > 0:
                if n_ring == window:
                    in_window[ring[ring_pos]] -= 1
                else:
                    n_ring += 1
                ring[ring_pos] = lang
                in_window[lang] += 1
                ring_pos += 1
                if ring_pos == window:
                    ring_pos = 0
            h = lang
        best_count = _column(rec, pcount, n_lang, best, h)
        a = rec[3 * best] >> 32
        b = rec[3 * best] & 0xFFFFFFFF
        out_left[n_steps] = a
        out_right[n_steps] = b
        out_count[n_steps] = best_count
        out_lang[n_steps] = lang

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
        tpre[new] = _prefix_key(tb, tb_off, new)

        # ---- rewrite every entry of the pair's segment
        first_new_pair = n_pairs
        seg = rec[3 * best + 2]
        seg_n = plen[best]
        plen[best] = 0
        n_buf = np.int64(0)
        t = np.int64(0)
        for l in range(n_lang):
            drop[l] = 0
        while True:
            t, n_pairs, n_buf = _rewrite_entries(
                tokens,
                offsets,
                lengths,
                word_counts,
                word_lang,
                word_lw,
                n_lang,
                drop,
                occ,
                seg,
                t,
                np.int64(seg_n),
                a,
                b,
                new,
                overlapping,
                htab,
                rec,
                plen,
                pcount,
                n_pairs,
                buf_q,
                buf_w,
                n_buf,
                win_lo,
                win_hi,
                win_n,
            )
            if t >= seg_n:
                break
            L = lengths[occ[seg + t]]
            rec, plen, htab, pcount = _room(rec, plen, htab, pcount, n_lang, n_pairs + L + 1)
            if n_buf + L > buf_cap:
                buf_cap = max(buf_cap + buf_cap // 2, n_buf + L)
                buf_q = _grow_i32(buf_q, buf_cap)
                buf_w = _grow_i32(buf_w, buf_cap)
        n_steps += 1
        for l in range(n_lang):
            cur[l] -= drop[l]
            hist_len[n_steps, l] = cur[l]

        # ---- the step's occurrences become segments (as in _merge_loop)
        for q in range(first_new_pair, n_pairs):
            if rec[3 * q + 1] <= floor:
                plen[q] = 0
        if n_occ + n_buf > occ_cap:
            n_occ = _compact(occ, plen, rec, np.int64(first_new_pair), floor)
            if 4 * (n_occ + n_buf) > 3 * occ_cap:
                occ_cap = max(occ_cap + occ_cap // 4, n_occ + n_buf + n_buf // 2)
                occ = _grow_i32(occ[:n_occ], occ_cap)
        for q in range(first_new_pair, n_pairs):
            rec[3 * q + 2] = n_occ
            n_occ += plen[q]
        for t in range(n_buf):
            q = buf_q[t]
            if plen[q] > 0:
                occ[rec[3 * q + 2]] = buf_w[t]
                rec[3 * q + 2] += 1
        for q in range(first_new_pair, n_pairs):
            rec[3 * q + 2] -= plen[q]

        # ---- the created pairs onto the heaps of the columns they have count in
        global_left = n_steps < global_merges
        for q in range(first_new_pair, n_pairs):
            if rec[3 * q + 1] <= floor:
                continue
            for g in range(n_heaps):
                if g == n_lang and not global_left:
                    continue
                c = _column(rec, pcount, n_lang, q, g)
                if c > floor:
                    hk, hc, hend = _hreserve(hk, hc, hb, hs, hcap, g, hend)
                    _hpush(hk, hc, hb[g], hs[g], rec[3 * q], c, tpre, tb, tb_off, tie_bytes)
                    hs[g] += 1

    return n_steps, out_left, out_right, out_count, out_lang, hist_len, lengths


@njit(cache=True)
def _gather_words(tokens, offsets, idx, new_offsets):
    """The words ``idx`` of packed ``tokens``/``offsets``, packed one after another at ``new_offsets``."""
    out = np.empty(new_offsets[-1], np.int32)
    for k in range(idx.shape[0]):
        o = offsets[idx[k]]
        for i in range(new_offsets[k + 1] - new_offsets[k]):
            out[new_offsets[k] + i] = tokens[o + i]
    return out


@njit(cache=True)
def _final_words(e_tokens, tokens, has, src, n, offsets):
    """Packed words at ``offsets``: word ``w`` is ``e_tokens[src[w]:src[w] + n[w]]`` when ``has[w]``, else
    ``tokens[src[w]:src[w] + n[w]]`` (its initial ids)."""
    out = tokens.copy()
    for w in range(has.shape[0]):
        o = offsets[w]
        s = src[w]
        if has[w]:
            for i in range(n[w]):
                out[o + i] = e_tokens[s + i]
    return out


KERNELS = (
    _room,
    _new_pair,
    _count_entries,
    _rewrite_entries,
    _hsift_down,
    _hpush,
    _column,
    _htop,
    _hreserve,
    _mul_digits,
    _ratio_less,
    _parity_loop,
    _gather_words,
    _final_words,
)
