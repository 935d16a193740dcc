"""Numba kernel for parity-aware BPE (the fast twin of :func:`fastsw.trainers.parity.learn_parity_merges`).

Private functions over contiguous numpy arrays only; the driver is :mod:`fastsw.trainers.parity_fast`. The pair
table, hashing, tie order, heaps, occurrence segments and the rewriting of words (with a count column per language)
are :mod:`fastsw.trainers.bpe_kernels`' (imported, not copied); what is new here is what parity-aware BPE adds to
the merge loop: one heap per language and the choice of the language.

Design notes: see docs/internals.md, section "Parity-aware BPE".
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastsw._compiling import stamp_module
from fastsw.trainers.bpe_kernels import (
    _add_token,
    _column,
    _initial_pairs,
    _initial_segments,
    _new_segments,
    _push,
    _rewrite_segment,
    _sift_down,
    _token_table,
    _top,
)

_DIGIT = 30
_MASK = (1 << _DIGIT) - 1


# ---- heaps: heap h holds keys/counts at hk/hc[hb[h] : hb[h] + hs[h]], capacity hcap[h]


@njit(cache=True)
def _htop(hk, hc, hb, hs, h, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes):
    """Heap ``h``'s best pair (:func:`fastsw.trainers.bpe_kernels._top` on column ``h``), or -1."""
    best, hs[h] = _top(hk, hc, hb[h], hs[h], h, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes)
    return best


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
    floor = max(min_frequency - 1, np.int64(0))
    lengths = offsets[1:] - offsets[:-1]
    n_tokens = tb_off_in.shape[0] - 1
    steps = max(max_steps, 0)
    tb, tb_off, tpre = _token_table(tb_in, tb_off_in, steps)
    tb_used = tb_off[n_tokens]
    words = (tokens, offsets, lengths, word_counts, word_lang, word_lw)
    pairs, n_pairs, tq, t0, win = _initial_pairs(words, n_lang, overlapping)
    htab, rec, plen, pcount = pairs
    occ, n_occ = _initial_segments(offsets, lengths, tq, t0, rec, plen, n_pairs, floor)
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
            _sift_down(hk, hc, hb[h], hs[h], np.int64(i), tpre, tb, tb_off, tie_bytes)

    bufs = (np.empty(1024, np.int32), np.empty(1024, np.int32))

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
            lang = np.int64(-1)  # typed: a literal -1 reaching the helpers would compile them once more for it
            best = _htop(hk, hc, hb, hs, h, htab, rec, pcount, n_lang, floor, tpre, tb, tb_off, tie_bytes)
            if best < 0 or _column(rec, pcount, n_lang, best, h) < min_frequency:
                break
        else:
            for l in range(n_lang):
                tried[l] = 0
            best = -1
            while True:
                lang = np.int64(-1)
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

        # ---- the new token, then every entry of the pair's segment rewritten
        new = n_tokens
        n_tokens += 1
        tb, tb_used = _add_token(tb, tb_off, tpre, tb_used, a, b, new)
        first_new_pair = n_pairs
        seg = rec[3 * best + 2]
        seg_n = np.int64(plen[best])
        plen[best] = 0
        for l in range(n_lang):
            drop[l] = 0
        pairs, n_pairs, bufs, n_buf = _rewrite_segment(
            words, n_lang, overlapping, pairs, n_pairs, occ, seg, seg_n, a, b, new, bufs, win, drop
        )
        htab, rec, plen, pcount = pairs
        n_steps += 1
        for l in range(n_lang):
            cur[l] -= drop[l]
            hist_len[n_steps, l] = cur[l]
        occ, n_occ = _new_segments(occ, n_occ, rec, plen, np.int64(first_new_pair), n_pairs, bufs, n_buf, floor)

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
                    hs[g] = _push(hk, hc, hb[g], hs[g], rec[3 * q], c, tpre, tb, tb_off, tie_bytes)

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
    _htop,
    _hreserve,
    _mul_digits,
    _ratio_less,
    _parity_loop,
    _gather_words,
    _final_words,
)


# the kernels' cache entries are stamped with the files of the jitted code they call, too
stamp_module(__name__)
