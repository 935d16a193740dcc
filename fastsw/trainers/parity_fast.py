"""Parity-aware BPE on the fast path: the driver of :func:`fastsw.trainers.parity_kernels._parity_loop`.

Two entry points with the reference's results (:func:`fastsw.trainers.parity.learn_parity_merges`, the plain-Python
twin: same merges and counts, language choices, criterion lengths and final words):

* :func:`learn_parity_merges_fast`, the reference's contract over ``{language: (words, counts)}``;
* :func:`parity_phase1_packed`, the trainer's: a language-column count table (:class:`fastsw.corpus.counting.Counts`)
  in, packed phase-1 words ``(tokens, offsets, lengths)`` of every pretoken out.

Both check their arguments with the reference's :func:`fastsw.trainers.parity.check_parity_args`, pack the words as
*entries* (one per pretoken and language that has it, then one per dev pretoken and language, see
:mod:`fastsw.trainers.parity_kernels`), turn exact rationals into integers for the kernel (the target-ratio
criterion as base-2**30 digits over one common denominator; the window's allowance ``floor(alpha × window /
columns)``) and run the kernel once through :func:`fastsw._interrupt.call_kernel` (Ctrl-C safe).

Design notes: see docs/internals.md, section "Parity-aware BPE".
"""

from __future__ import annotations

from fractions import Fraction
from math import lcm
from typing import List

import numpy as np

from fastsw._interrupt import call_kernel
from fastsw.trainers.parity_kernels import _final_words, _gather_words, _parity_loop
from fastsw.corpus.counting import weighted_total
from fastsw.trainers.bpe import check_pair_total
from fastsw.trainers.bpe_fast import _pack_bytes, _pack_words, _pair_total, _reachable_merges, pack_pretokens
from fastsw.trainers.parity import ParityArgs, ParityMerges, check_parity_args, loop_options

_INT64_MAX = (1 << 63) - 1
_DIGIT = 30


def _ratio_digits(initial: List[int], targets: List[Fraction]) -> np.ndarray:
    """``K_l = initial_l / target_l`` as integers ``N_l = K_l × D`` over one common denominator ``D``, in rows of
    base-2**30 digits (least significant first): comparing ``N_i × cur_j`` with ``N_j × cur_i`` compares the
    reference's ``Fraction(initial_i, cur_i) / target_i`` with language j's, exactly."""
    ks = [Fraction(i) / t for i, t in zip(initial, targets)]
    d = 1
    for k in ks:
        d = lcm(d, k.denominator)
    nums = [k.numerator * (d // k.denominator) for k in ks]
    n_digits = max(1, max((n.bit_length() + _DIGIT - 1) // _DIGIT for n in nums))
    out = np.zeros((len(nums), n_digits), np.int64)
    for row, n in enumerate(nums):
        for j in range(n_digits):
            out[row, j] = (n >> (_DIGIT * j)) & ((1 << _DIGIT) - 1)
    return out


def _weighted_length(offsets, counts) -> int:
    """``Σ length × count`` over packed words, exact."""
    return weighted_total(np.diff(offsets), counts)


def _run(entries, n_lang: int, lengths0: List[int], token_bytes: List[bytes], args: ParityArgs, n_merges: int):
    """The kernel over packed entries ``(tokens, offsets, counts, langs, length weights)``; appends the new
    tokens to ``token_bytes``. Returns ``(merges, chosen column indices, lengths array, final entry lengths)``."""
    tokens, offsets, counts, langs, lw = entries
    profile, variant, window = args.profile, args.variant, args.window
    if tokens.shape[0] and int(tokens.max()) >= len(token_bytes):
        raise ValueError(
            f"a word uses token id {int(tokens.max())} but token_bytes has only {len(token_bytes)} entries"
        )
    check_pair_total(_pair_total(offsets, counts))
    if max(lengths0) > _INT64_MAX:
        raise ValueError("the texts are too long for the fast path's 64-bit lengths; use backend='python'")
    steps = min(n_merges, _reachable_merges(offsets, counts))
    if args.ratios is not None:
        ratio_num = _ratio_digits(lengths0, [args.ratios[lang] for lang in args.languages])
    else:
        ratio_num = np.zeros((n_lang, 1), np.int64)
    allowance = 0
    if args.alpha is not None:  # the window variant's (check_parity_args gives it for that variant only)
        allowance = int(args.alpha * window // args.columns)  # floor, exact: count * columns <= alpha * window
    tb, tb_off = _pack_bytes(token_bytes)
    out = call_kernel(
        _parity_loop,
        tokens,
        offsets,
        counts,
        langs,
        lw,
        np.int64(n_lang),
        tb,
        tb_off,
        int(bool(profile.overlapping)),
        int(profile.tie == "bytes"),
        int(steps),
        int(args.global_merges),
        int(args.min_frequency),
        int(args.exhausted == "skip"),
        np.array(lengths0, dtype=np.int64),
        int(args.ratios is not None),
        ratio_num,
        int(window if variant == "window" else 0),
        int(allowance),
    )
    n_steps, lefts, rights, step_counts, chosen, hist, entry_lengths = out
    n_steps = int(n_steps)
    merges = []
    for left, right, count in zip(lefts[:n_steps].tolist(), rights[:n_steps].tolist(), step_counts[:n_steps].tolist()):
        token_bytes.append(token_bytes[left] + token_bytes[right])
        merges.append((left, right, count))
    return merges, chosen[:n_steps].tolist(), hist[: n_steps + 1], entry_lengths


def _concat(parts):
    """Packed word lists ``[(tokens, offsets, counts), ...]`` as one, with each part's language index and the
    count array of each part for the length weights."""
    tokens = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int32)
    sizes = [len(p[2]) for p in parts]
    offsets = np.zeros(sum(sizes) + 1, np.int64)
    at, base = 0, 0
    for p, n in zip(parts, sizes):
        offsets[at + 1 : at + n + 1] = p[1][1:] - p[1][0] + base
        base += int(p[1][-1] - p[1][0])
        at += n
    return np.ascontiguousarray(tokens, dtype=np.int32), offsets


def _entries(train_parts, dev_parts):
    """Entries from per-language packed training words and (optionally) dev words: ``(tokens, offsets,
    training counts, languages, length weights)``; the length weight is the dev count with dev texts, the
    training count without."""
    parts = list(train_parts) + list(dev_parts or [])
    tokens, offsets = _concat(parts)
    n_lang = len(train_parts)
    langs = np.concatenate(
        [np.full(len(p[2]), k % n_lang, np.int32) for k, p in enumerate(parts)] + [np.zeros(0, np.int32)]
    )
    zero = [np.zeros(len(p[2]), np.int64) for p in dev_parts or []]
    counts = np.concatenate([p[2] for p in train_parts] + zero + [np.zeros(0, np.int64)])
    if dev_parts:
        lw = np.concatenate(
            [np.zeros(len(p[2]), np.int64) for p in train_parts] + [p[2] for p in dev_parts] + [np.zeros(0, np.int64)]
        )
    else:
        lw = counts.copy()
    return tokens, offsets, counts, np.ascontiguousarray(langs, dtype=np.int32), lw


def learn_parity_merges_fast(
    train_words, token_bytes: List[bytes], profile, n_merges: int, *, progress=None, **options
) -> ParityMerges:
    """:func:`fastsw.trainers.parity.learn_parity_merges` on the fast path: same arguments (``options`` are its
    keyword options, checked by the same :func:`~fastsw.trainers.parity.check_parity_args`), same result.

    >>> tb = [bytes([b]) for b in range(256)]
    >>> a, b, c = ord("a"), ord("b"), ord("c")
    >>> train = {"x": ([[a, b, a, b]], [5]), "y": ([[c, a, c, a]], [1])}
    >>> dev = {"x": ([[a, b]], [1]), "y": ([[c, a, c, a]], [1])}
    >>> out = learn_parity_merges_fast(train, tb, "hf", 3, dev_words=dev)
    >>> out.languages, [tb[l] + tb[r] for l, r, _ in out.merges]
    (['y', 'x', 'x'], [b'ca', b'ab', b'abab'])
    >>> tb = [bytes([b]) for b in range(256)]
    >>> learn_parity_merges_fast(train, tb, "hf", 3, dev_words=dev, exhausted="stop").languages
    ['y', 'x']
    """
    args = check_parity_args(train_words, profile, n_merges, **options)
    langs = args.languages
    train_parts = [_pack_words(*args.train[lang]) for lang in langs]
    dev_parts = None if args.dev is None else [_pack_words(*args.dev[lang]) for lang in langs]
    source = dev_parts if dev_parts is not None else train_parts
    lengths0 = [_weighted_length(p[1], p[2]) for p in source]
    entries = _entries(train_parts, dev_parts)
    merges, chosen, hist, entry_lengths = _run(entries, len(langs), lengths0, token_bytes, args, n_merges)
    if progress is not None and merges:
        progress.update(len(merges))
    tokens, offsets = entries[0], entries[1]
    flat, starts, lens = tokens.tolist(), offsets[:-1].tolist(), entry_lengths.tolist()
    words, at = {}, 0
    for lang, part in zip(langs, train_parts):
        n = len(part[2])
        words[lang] = [flat[starts[k] : starts[k] + lens[k]] for k in range(at, at + n)]
        at += n
    rows = hist.tolist()
    return ParityMerges(
        merges, [None if k < 0 else langs[k] for k in chosen], [dict(zip(langs, row)) for row in rows], words
    )


def parity_phase1_packed(counts, alphabet, profile, n_merges: int, parity: dict, dev_counts=None, progress=None):
    """:func:`fastsw.trainers.parity.parity_phase1` on the fast path: the same merges and
    :class:`~fastsw.trainers.parity.ParityMerges` (whose ``words`` is ``None`` here), and the phase-1 words of every
    pretoken of ``counts`` packed ``(tokens, offsets, lengths)`` as :meth:`fastsw.trainers.bpe_fast.FastBackend.phase1`
    gives them. Returns ``(merges, words, token_bytes, result)``.

    A pretoken's final word is its first language's entry; a pretoken with no count in any column keeps its
    initial ids, as in the reference."""
    langs = list(counts.languages)
    tokens, offsets, _ = pack_pretokens(counts.pretokens, [0] * len(counts.pretokens), alphabet)
    columns = []
    for column in counts.language_counts:
        try:
            columns.append(np.array(column, dtype=np.int64))
        except OverflowError:
            raise ValueError(
                "a language's pretoken count is beyond 2**63-1, too large for the fast path; use backend='python'"
            ) from None
    lengths = np.diff(offsets)

    def part(idx, cnt):
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        offs = np.zeros(len(idx) + 1, np.int64)
        np.cumsum(lengths[idx], out=offs[1:])
        return _gather_words(tokens, offsets, idx, offs), offs, np.ascontiguousarray(cnt, dtype=np.int64)

    train_idx = [np.flatnonzero(col > 0) for col in columns]
    train_parts = [part(idx, col[idx]) for idx, col in zip(train_idx, columns)]
    dev_parts = dev_sizes = None
    if dev_counts is not None:
        dev_parts = []
        for lang in langs:
            t = dev_counts[lang]
            dev_parts.append(pack_pretokens(t.pretokens, t.counts, alphabet))
        dev_sizes = {lang: dev_counts[lang].n_documents for lang in langs}
    source = dev_parts if dev_parts is not None else train_parts
    lengths0 = [_weighted_length(p[1], p[2]) for p in source]
    for what, parts in (("train_words", train_parts), ("dev_words", dev_parts or [])):
        for lang, p in zip(langs, parts):  # the reference's check (fastsw.trainers.parity._check_words), same message
            if _weighted_length(p[1], p[2]) == 0:
                raise ValueError(
                    f"language {lang!r} has no text in {what}: give it a non-empty text or leave the language out"
                )
    ratios = None if parity["ratios"] is None else {lang: parity["ratios"][lang] for lang in langs}
    # the reference's checks, on stand-ins of the right shape (the words themselves are checked above)
    stand_in = {lang: ([[0]], [1]) for lang in langs}
    args = check_parity_args(
        stand_in,
        profile,
        n_merges,
        dev_words=None if dev_parts is None else stand_in,
        dev_sizes=dev_sizes,
        ratios=ratios,
        **loop_options(parity),
    )
    entries = _entries(train_parts, dev_parts)
    token_bytes = list(alphabet.tokens)
    merges, chosen, hist, entry_lengths = _run(entries, len(langs), lengths0, token_bytes, args, n_merges)
    if progress is not None and merges:
        progress.update(len(merges))
    # every pretoken's final word: its first language's entry (entries run language by language)
    first = np.full(len(counts.pretokens), -1, np.int64)
    at = 0
    for idx in train_idx:
        unset = first[idx] < 0
        first[idx[unset]] = at + np.flatnonzero(unset)
        at += len(idx)
    e_tokens, e_offsets = entries[0], entries[1]
    has = first >= 0
    src_off = np.where(has, e_offsets[:-1][np.maximum(first, 0)], offsets[:-1])
    out_len = np.where(has, entry_lengths[np.maximum(first, 0)], lengths)
    out_tokens = _final_words(e_tokens, tokens, has, src_off, out_len, offsets)
    rows = hist.tolist()
    result = ParityMerges(
        merges, [None if k < 0 else langs[k] for k in chosen], [dict(zip(langs, row)) for row in rows], None
    )
    return merges, (out_tokens, offsets, out_len.astype(np.int64)), token_bytes, result
