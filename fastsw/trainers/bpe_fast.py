"""The fast training path: drivers around the Numba merge loop in :mod:`fastsw.trainers.bpe_kernels`.

Each driver has exactly the contract of its reference counterpart and returns
identical results (merges with counts, final words, appended token bytes):

* :func:`learn_merges_fast` -- :func:`fastsw.trainers.bpe.learn_merges` (phase 1);
* :func:`boundless_phase2_packed` -- :func:`fastsw.trainers.superword.boundless_phase2`;
* :func:`superbpe_phase2_packed` -- :func:`fastsw.trainers.superword.superbpe_phase2`;

the last two over packed candidates (:func:`pack_candidates`).

The trainer calls :class:`FastBackend`, whose stages use the packed variants (:func:`learn_merges_packed`,
:func:`boundless_phase2_packed`, :func:`superbpe_phase2_packed`) over flat arrays (:func:`pack_pretokens`,
``fastsw.pretokenizers._pretok.aggregate_runs``): no Python object per word or candidate between counting and the model.

The drivers own the Python objects: they pack the words into one int32 array
with int64 offsets, the counts into int64 and the vocabulary's bytes into one
uint8 array, call the single kernel ``_merge_loop`` once, and turn its arrays back
into Python lists and ints. Inputs are coerced to one dtype each, so the kernel
compiles one signature (``warmup()`` compiles it ahead of time; with
``cache=True`` later processes load it from disk). The kernel runs in a worker
thread through :func:`fastsw._interrupt.call_kernel`, so Ctrl-C stops it and
raises a plain ``KeyboardInterrupt``. It polls a stop flag once per merge step:
no measurable cost (10 MB of English, CPU time, median of 20 runs, polling vs not:
phase 1 to 32768 tokens 0.403 vs 0.411 s, BoundlessBPE phase 2 0.375 vs 0.410 s,
8000 SuperBPE supermerges 0.352 vs 0.370 s; the spread between runs was larger).

Design notes: see docs/internals.md, section "Phase 1: the merge loop" (the driver) and section "Supermerge
candidates and phase 2" (the candidate cut).
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from itertools import chain
from typing import Dict, List, Sequence, Tuple

import numpy as np

from fastsw._config import gc_paused
from fastsw._interrupt import call_kernel
from fastsw.trainers.bpe_kernels import AHEAD, _cut_candidates, _cut_weights, _merge_loop
from fastsw.alphabet import get_profile, has_utf8
from fastsw.trainers.bpe import check_pair_total
from fastsw.corpus.counting import weighted_total
from fastsw.corpus.memory import check_candidates, check_cut, check_phase2
from fastsw.trainers.superword import split_candidates

_INT64_MAX = (1 << 63) - 1
#: ``prune=True`` keeps the pairs above the ``max(PRUNE_FACTOR * steps, PRUNE_MIN)``-th largest initial count
#: (tests set both to 1 so that the guess often fails and the exact rerun happens).
PRUNE_FACTOR = 8
PRUNE_MIN = 4096
_ID_LIMIT = (1 << 31) - 1
#: SuperBPE cuts its candidates at the ``max(CUT_FACTOR * supermerges, PRUNE_MIN)``-th largest pair weight, and
#: keeps the result when every supermerge counts more (else it reruns on the whole candidates); 0: no cut
CUT_FACTOR = 4


@gc_paused()
def _pack_words(words: Sequence[Sequence[int]], counts: Sequence[int]):
    words = [w if isinstance(w, (list, tuple)) else list(w) for w in words]
    counts = list(counts)
    if len(words) != len(counts):
        raise ValueError(f"got {len(words)} words but {len(counts)} counts; pass one count per word")
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    tokens = np.fromiter(chain.from_iterable(words), dtype=np.int64, count=total)
    if total and (tokens.min() < 0 or tokens.max() > _ID_LIMIT):
        raise ValueError("token ids must be in 0..2**31-1 for the fast path; use the reference path")
    if counts and (min(counts) < 0 or max(counts) > _INT64_MAX):
        raise ValueError("word counts must be in 0..2**63-1 for the fast path; use the reference path")
    word_counts = np.array(counts, dtype=np.int64) if counts else np.zeros(0, dtype=np.int64)
    return (np.ascontiguousarray(tokens, dtype=np.int32), offsets, np.ascontiguousarray(word_counts, dtype=np.int64))


def _pack_bytes(token_bytes: Sequence[bytes]):
    lens = np.fromiter((len(b) for b in token_bytes), dtype=np.int64, count=len(token_bytes))
    tb_off = np.zeros(len(token_bytes) + 1, dtype=np.int64)
    np.cumsum(lens, out=tb_off[1:])
    tb = np.frombuffer(b"".join(token_bytes), dtype=np.uint8).copy()
    if tb.shape[0] == 0:
        tb = np.zeros(1, dtype=np.uint8)  # the kernel grows it; never empty
    return np.ascontiguousarray(tb, dtype=np.uint8), tb_off


def pack_pretokens(pretokens: Sequence[str], counts: Sequence[int], alphabet):
    """Pretokens with their counts as packed words of initial ids ``(tokens, offsets, counts)``: the
    packed form of ``[alphabet.initial_ids(p) for p in pretokens]``. A byte alphabet maps all the
    UTF-8 bytes through one lookup table at once; other alphabets go through ``initial_ids``."""
    from fastsw.alphabet import ATOM_ERRORS, AtomAlphabet, ByteAlphabet, lone_surrogate_error

    # an alphabet of bytes and one-byte atom codes (boundary markers) also maps byte by byte (fastsw.alphabet)
    atoms = isinstance(alphabet, AtomAlphabet) and alphabet.short_only
    if not isinstance(alphabet, ByteAlphabet) and not atoms:
        return _pack_words([alphabet.initial_ids(p) for p in pretokens], counts)
    packed = _pack_short_atoms(pretokens) if atoms else None
    if packed is not None:
        data, lengths = packed
    else:
        with gc_paused():
            try:
                encoded = [p.encode("utf-8", ATOM_ERRORS) if atoms else p.encode("utf-8") for p in pretokens]
            except UnicodeEncodeError:
                raise lone_surrogate_error(next(p for p in pretokens if not has_utf8(p))) from None
            lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
            data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    lut = np.array([alphabet.id_of_byte(b) for b in range(256)], dtype=np.int32)
    tokens = lut[data]
    if tokens.size and tokens.min() < 0:  # cannot happen for UTF-8 of a str: every byte it uses has an id
        raise ValueError("a pretoken uses a byte outside the alphabet")
    try:
        word_counts = np.array(counts, dtype=np.int64) if len(counts) else np.zeros(0, dtype=np.int64)
    except OverflowError:
        raise ValueError("pretoken counts must be in 0..2**63-1") from None
    if word_counts.size and word_counts.min() < 0:
        raise ValueError("word counts must be non-negative")
    return np.ascontiguousarray(tokens, dtype=np.int32), offsets, word_counts


def _pack_short_atoms(pretokens: Sequence[str]):
    """``(bytes as uint8 array, length per pretoken)`` of the pretokens' token bytes when every atom in them has a
    one-byte code (boundary markers, caps codes), else None (then the ``ATOM_ERRORS`` codec spells them and
    reports what is wrong): :func:`fastsw.alphabet.atom_bytes_packed`, which spells all pretokens at once instead
    of calling the codec's Python error handler per atom (0.64 -> 0.16 s on 20 MB of English under
    ``boundary[w,p,d]+caps``; the default pre-tokenizer's packing takes 0.06 s)."""
    from fastsw.alphabet import atom_bytes_packed

    try:
        data, lengths = atom_bytes_packed(pretokens)
    except (UnicodeEncodeError, ValueError):
        return None
    if (data >= 0xF5).any() and not (data[data >= 0xF5] >= 0xF8).all():
        return None  # a three-byte atom: not a one-byte alphabet's
    return data, lengths


def _pair_total(offsets, word_counts) -> int:
    """``sum(count * (length - 1))`` over the packed words, exact, for :func:`fastsw.trainers.bpe.check_pair_total`."""
    return weighted_total(np.maximum(np.diff(offsets) - 1, 0), word_counts)


def _reachable_merges(offsets, word_counts) -> int:
    """An upper bound on the merges the words can give: each merge replaces at least one pair in a word of
    positive count, so it shortens those words by at least one token in all. ``learn_merges(n_merges=...)``
    with a larger ``n_merges`` (say ``vocab_size=10**10``) runs out of pairs before it anyway."""
    pairs = np.maximum(np.diff(offsets) - 1, 0)
    return int(pairs[word_counts > 0].sum())


def _rule_arrays(merge_rule, n_tokens: int):
    """The kernel's merge-rule arrays ``(kinds uint8[n_tokens], table int8[K, K])`` for a ``merge_rule``
    ``(kinds of the first tokens, table)`` (see :class:`fastsw.trainers.bpe.PairMerger`), or for none (every merge
    allowed)."""
    tkind = np.zeros(n_tokens, dtype=np.uint8)
    if merge_rule is None:
        return tkind, np.zeros((1, 1), dtype=np.int8)
    kinds, table = merge_rule
    kinds = np.asarray(kinds, dtype=np.uint8)
    tkind[: len(kinds)] = kinds
    return tkind, np.ascontiguousarray(table, dtype=np.int8)


def _run_packed(
    tokens,
    offsets,
    word_counts,
    token_bytes,
    profile,
    max_steps: int,
    replay=None,
    prune: bool = False,
    merge_rule=None,
):
    """The merge loop over packed words (``tokens`` is rewritten in place).

    ``prune`` (without replay): let the kernel keep only the pairs above the
    ``PRUNE_FACTOR * max_steps``-th largest initial count; when that guess turns out too high
    (the kernel says the result is not exact), run again without it. For SuperBPE's
    few thousand supermerges over millions of candidate pairs this skips most of the
    heap and occurrence segments."""
    if tokens.shape[0] and int(tokens.max()) >= len(token_bytes):
        raise ValueError(
            f"a word uses token id {int(tokens.max())} but token_bytes has only {len(token_bytes)} entries"
        )
    check_pair_total(_pair_total(offsets, word_counts))
    use_replay = replay is not None
    if not use_replay:
        # the kernel sizes its vocabulary and output arrays by max_steps: never more than can happen
        max_steps = min(max_steps, _reachable_merges(offsets, word_counts))
    tb, tb_off = _pack_bytes(token_bytes)
    replay_arr = np.ascontiguousarray(np.array(replay if use_replay else [], dtype=np.int64), dtype=np.int64)
    prune_top = max(PRUNE_FACTOR * max_steps, PRUNE_MIN) if prune and not use_replay else 0
    original = tokens.copy() if prune_top else None
    args = (
        offsets,
        word_counts,
        tb,
        tb_off,
        int(bool(profile.overlapping)),
        int(profile.tie == "bytes"),
        int(max(max_steps, 0)),
        int(use_replay),
        replay_arr,
        *_rule_arrays(merge_rule, len(token_bytes)),
    )
    n_steps, kinds, lefts, rights, step_counts, lengths, exact = call_kernel(_merge_loop, tokens, *args, prune_top)
    if not exact:
        tokens[:] = original
        n_steps, kinds, lefts, rights, step_counts, lengths, exact = call_kernel(_merge_loop, tokens, *args, 0)
    n_steps = int(n_steps)
    return (
        tokens,
        offsets,
        lengths,
        kinds[:n_steps].tolist(),
        lefts[:n_steps].tolist(),
        rights[:n_steps].tolist(),
        step_counts[:n_steps].tolist(),
    )


def _unpack_words(tokens, offsets, lengths) -> List[List[int]]:
    with gc_paused():
        flat = tokens.tolist()
        return [flat[o : o + n] for o, n in zip(offsets[:-1].tolist(), lengths.tolist())]


def learn_merges_fast(
    words: Sequence[Sequence[int]],
    counts: Sequence[int],
    token_bytes: List[bytes],
    profile,
    n_merges: int,
    progress=None,
    merge_rule=None,
):
    """Phase-1 BPE on the fast path; same contract and results as
    :func:`fastsw.trainers.bpe.learn_merges`: returns ``(merges, final_words)`` with
    ``merges`` a list of ``(left, right, count)`` and appends the new tokens to
    ``token_bytes``. ``progress`` (if given) is advanced once at the end."""
    tokens, offsets, word_counts = _pack_words(words, counts)
    merges, lengths = learn_merges_packed(
        tokens, offsets, word_counts, token_bytes, profile, n_merges, progress=progress, merge_rule=merge_rule
    )
    return merges, _unpack_words(tokens, offsets, lengths)


def learn_merges_packed(
    tokens,
    offsets,
    word_counts,
    token_bytes: List[bytes],
    profile,
    n_merges: int,
    progress=None,
    prune: bool = False,
    merge_rule=None,
):
    """:func:`learn_merges_fast` over packed words (see :func:`pack_pretokens`); ``tokens`` is rewritten in
    place. Returns ``(merges, lengths)``: the final word ``w`` is ``tokens[offsets[w]:offsets[w] + lengths[w]]``.
    ``merge_rule``: as in :func:`fastsw.trainers.bpe.learn_merges`."""
    tokens, offsets, lengths, _, lefts, rights, step_counts = _run_packed(
        tokens, offsets, word_counts, token_bytes, profile, n_merges, prune=prune, merge_rule=merge_rule
    )
    merges: List[Tuple[int, int, int]] = []
    for left, right, count in zip(lefts, rights, step_counts):
        token_bytes.append(token_bytes[left] + token_bytes[right])
        merges.append((left, right, count))
    if progress is not None and merges:
        progress.update(len(merges))
    return merges, lengths


def cut_candidates(candidates, floor: int, n_tokens: int, top: int = 0):
    """Packed candidates ``(tokens, offsets, counts)`` cut at every position whose token pair (counted by
    positions, times the candidate's count) weighs at most ``floor``, the pieces of >= 2 tokens
    re-aggregated by count (``fastsw.pretokenizers._pretok.aggregate_runs``), plus one word ``[a, b]`` for the first cut
    pair when there was one (see ``fastsw.trainers.bpe_kernels._cut_candidates``). Merge loops whose pairs must
    count more than ``floor`` to be taken (BoundlessBPE: ``floor`` = the smallest regular-merge count) give
    the same merges, counts and stopping step on the cut candidates as on the whole ones. ``n_tokens``: the
    vocabulary size (every id is below it). ``top`` > 0: the floor is the ``top + 1``-th largest pair weight
    instead (see :func:`superbpe_phase2_packed`); returns ``(cut candidates, floor used)`` then.

    The weight of an adjacent pair ``(a, b)`` is an upper bound on the count of ``(a, b)`` and of every pair made
    later across one of its positions (a token's last and first phase-1 tokens never change), so no merge ever
    crosses a position whose pair weighs at most ``floor``, and the words split there without changing any pair
    above it. One hashing pass (``_cut_weights``) sums the weights in a table of int64 key/weight slots (linear
    probing, at most half full, so a lookup is one cache miss; sized for ~0.4 distinct pairs per token, started
    again twice as large when that is too small) and notes each position's slot; the table then becomes one cut
    flag per slot and is freed before the output is written. The table and the slots are numpy arrays, which get
    transparent huge pages where the system offers them: the pass probes the table at random, and on 4 KB pages
    nearly every probe missed the TLB and every first touch of a page faulted."""
    from fastsw.pretokenizers._pretok import aggregate_runs

    tokens, offsets, counts = candidates
    if (floor <= 0 and top <= 0) or not len(counts):
        return (candidates, 0) if top > 0 else candidates
    check_pair_total(_pair_total(offsets, counts))  # the pair weights below are sums of these
    n_tok = tokens.shape[0]
    bits = 16
    while (1 << bits) < n_tok // 4:  # ~ distinct pairs / 0.4 on English candidates
        bits += 1
    pid = np.empty(n_tok, np.int32)  # written at every position the passes read
    while True:
        table = np.full(2 << bits, -1, np.int64)
        n_pairs = _cut_weights(tokens, offsets, counts, table, pid)
        if n_pairs >= 0:
            break
        if bits >= 31:
            raise ValueError("too many distinct pairs for the candidate cut (slots are 32-bit)")
        del table  # freed before the larger one
        bits += 1
    keys, weights = table[0::2], table[1::2]
    if top > 0:
        floor = 0
        if n_pairs > top:
            floor = int(np.partition(weights[keys != -1], n_pairs - top - 1)[n_pairs - top - 1])
    cut = (keys != -1) & (weights <= floor)
    del table, keys, weights
    ids, new_offsets, sentinel = _cut_candidates(tokens, offsets, counts, pid, cut, np.int32(n_tokens))
    del pid, cut
    if ids.shape[0] > tokens.shape[0]:
        single = np.arange(n_tokens + 1, dtype=np.int64)
        single[n_tokens] = -1
        tokens, offsets, counts = aggregate_runs(ids, new_offsets, counts, single, presize=False)  # mostly repeats
        del ids, new_offsets
        if sentinel[2] > 0:
            tokens = np.concatenate([tokens, sentinel[:2].astype(np.int32)])
            offsets = np.append(offsets, offsets[-1] + 2)
            counts = np.append(counts, sentinel[2])
        candidates = (tokens, offsets, counts)
    return (candidates, int(floor)) if top > 0 else candidates


def _cut_for_boundless(candidates, replay, n_tokens: int):
    cut = cut_candidates(tuple(candidates), min(replay) if replay else 0, n_tokens)
    if isinstance(candidates, list):
        candidates[:] = cut
    return cut


def boundless_phase2_packed(
    regular: Sequence[Tuple[int, int, int]],
    candidates,
    token_bytes: List[bytes],
    n_alphabet: int,
    profile,
    progress=None,
    cut: bool = True,
):
    """Algorithm 1 on the fast path, with the candidates packed: ``(tokens, offsets, counts)`` arrays. Same
    contract and results as :func:`fastsw.trainers.superword.boundless_phase2` (steps ``(kind, index, left, right,
    count)``, supermerge tokens appended to ``token_bytes``).

    A supermerge is taken only when its count exceeds the current regular merge's, so never at or below the
    smallest regular count: the candidates are first cut where no merge can ever join them
    (:func:`cut_candidates`), which leaves the result unchanged. A ``list`` of the three arrays is replaced
    by the cut arrays in place (so the caller's whole candidates are freed before the merge loop).
    ``cut=False``: the candidates were cut already (:meth:`FastBackend.boundless` checks the memory between)."""
    regular = list(regular)
    replay = [c for _, _, c in regular]
    if cut:
        candidates = _cut_for_boundless(candidates, replay, len(token_bytes))
    _, _, _, kinds, lefts, rights, step_counts = _run_packed(
        *candidates, token_bytes, profile, len(regular), replay=replay
    )
    del candidates
    steps = []
    j = 0
    for kind, left, right, count in zip(kinds, lefts, rights, step_counts):
        if kind == 1:
            new_id = len(token_bytes)
            token_bytes.append(token_bytes[left] + token_bytes[right])
            steps.append(("s", new_id, left, right, count))
        else:
            l, r, c = regular[j]
            steps.append(("r", j, l, r, c))
            j += 1
    if progress is not None and steps:
        progress.update(len(steps))
    return steps


def superbpe_phase2_packed(candidates, token_bytes: List[bytes], n_super: int, profile, progress=None):
    """SuperBPE's phase 2 on the fast path over packed candidates (see :func:`boundless_phase2_packed`); same
    contract and results as :func:`fastsw.trainers.superword.superbpe_phase2`."""
    # Cut at a guessed floor (the CUT_FACTOR * n_super-th largest pair weight): exact when every supermerge
    # taken counts more than it (then no pair at a cut, all at or below it, could have been taken, and no
    # merge crossed a cut); otherwise run again on the whole candidates.
    whole = tuple(candidates)
    cut, floor = (
        cut_candidates(whole, 0, len(token_bytes), top=max(CUT_FACTOR * n_super, PRUNE_MIN))
        if CUT_FACTOR > 0
        else (whole, 0)
    )
    if cut[0] is not whole[0]:  # something was cut (else the arrays are the same and the run below is the one)
        trial = list(token_bytes)
        merges, _ = learn_merges_packed(*cut, trial, profile, n_super, prune=True)
        del cut
        if all(count > floor for _, _, count in merges):
            token_bytes[len(token_bytes) :] = trial[len(token_bytes) :]
            if progress is not None and merges:
                progress.update(len(merges))
            return merges
    merges, _ = learn_merges_packed(*whole, token_bytes, profile, n_super, progress=progress, prune=True)
    return merges


def pack_candidates(candidates: Dict[Tuple[int, ...], int]):
    """The reference's candidates (tuple of ids -> count) packed ``(tokens, offsets, counts)``."""
    return _pack_words(list(candidates.keys()), list(candidates.values()))


def unpack_candidates(packed) -> Dict[Tuple[int, ...], int]:
    """Packed candidates ``(tokens, offsets, counts)`` as the reference's dict (tuple of ids -> count)."""
    tokens, offsets, cand_counts = packed
    flat, bounds = tokens.tolist(), offsets.tolist()
    return {tuple(flat[bounds[k] : bounds[k + 1]]): c for k, c in enumerate(cand_counts.tolist())}


class FastBackend:
    """The training stages on the fast path: :class:`fastsw.trainers.superword.ReferenceBackend`'s methods with the
    same results (its example gives the same with ``FastBackend()``), but phase 1's words are packed
    ``(tokens, offsets, lengths)`` and the candidates packed ``(tokens, offsets, counts)`` arrays.
    ``warmup_seconds``: the time the kernels took to load. ``loading``: a :class:`KernelLoad` still loading the
    merge loop; the stages that run it wait for it first (and ``warmup_seconds`` is its time)."""

    name = "numba"

    def __init__(self, warmup_seconds=None, loading=None):
        self._warmup_seconds = warmup_seconds
        self._loading = loading

    @property
    def warmup_seconds(self):
        if self._loading is not None:
            return self._loading.seconds
        return self._warmup_seconds

    def _loaded(self) -> None:
        if self._loading is not None:
            self._loading.wait()

    def phase1(self, counts, alphabet, profile: str, n_merges: int, progress=None):
        self._loaded()
        tokens, offsets, word_counts = pack_pretokens(counts.pretokens, counts.counts, alphabet)
        token_bytes = list(alphabet.tokens)
        merges, lengths = learn_merges_packed(
            tokens,
            offsets,
            word_counts,
            token_bytes,
            get_profile(profile),
            n_merges,
            progress=progress,
            merge_rule=getattr(alphabet, "merge_rule", None),
        )
        return merges, (tokens, offsets, lengths), token_bytes

    @staticmethod
    def adopt_words(words: Sequence[Sequence[int]]):
        """Phase-1 words computed elsewhere (parity-aware BPE's reference phase 1), one token-id list per
        pretoken, packed ``(tokens, offsets, lengths)`` as :meth:`phase1` returns them."""
        tokens, offsets, _ = _pack_words(words, [0] * len(words))
        return tokens, offsets, np.diff(offsets)

    def candidates(self, counts, words, tok1):
        """Candidates from packed phase-1 words and packed letter runs (``fastsw.pretokenizers._pretok.aggregate_runs``)."""
        tokens, offsets, lengths = words
        eligible = np.fromiter((tok1.is_eligible(t) for t in range(len(tok1.vocab))), dtype=bool, count=len(tok1.vocab))
        first = tokens[offsets[:-1]] if len(lengths) else np.zeros(0, dtype=np.int32)
        single = np.where((lengths == 1) & eligible[first], first, -1).astype(np.int64)
        return self.aggregate(counts, single)

    @staticmethod
    def aggregate(counts, single_token):
        """Packed candidates from the letter runs of ``counts`` given each pretoken's single eligible token (or
        -1): ``fastsw.pretokenizers._pretok.aggregate_runs``, after checking that they fit in memory. (:mod:`fastsw.corpus.distributed`
        calls it per shard.) A list, so that phase 2 can replace the arrays by smaller ones (see
        :func:`boundless_phase2_packed`)."""
        from fastsw.pretokenizers._pretok import aggregate_runs

        run_ids, run_offsets, run_counts = counts.read_runs()
        check_candidates(len(run_counts), len(run_ids))
        return list(aggregate_runs(run_ids, run_offsets, run_counts, np.asarray(single_token, dtype=np.int64)))

    @staticmethod
    def merge_candidates(tables):
        """Packed candidate tables (of parts of a corpus) added up, the packed twin of
        :meth:`fastsw.trainers.superword.ReferenceBackend.merge_candidates`: the tables are concatenated and aggregated
        again by ``aggregate_runs``, each token standing for itself (every candidate is a run of >= 2 eligible
        tokens, so none is cut)."""
        from fastsw.pretokenizers._pretok import aggregate_runs

        tables = list(tables)
        if len(tables) == 1:
            return list(tables[0])
        tokens = np.concatenate([t[0] for t in tables]).astype(np.int32, copy=False)
        counts = np.concatenate([t[2] for t in tables]).astype(np.int64, copy=False)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(np.concatenate([np.diff(t[1]) for t in tables]), out=offsets[1:])
        identity = np.arange(int(tokens.max()) + 1 if tokens.size else 0, dtype=np.int64)
        return list(aggregate_runs(tokens, offsets, counts, identity))

    @staticmethod
    def n_candidates(candidates) -> int:
        return len(candidates[2])

    def split(self, candidates, c_min: int, floor: int, max_len: int):
        split = split_candidates(unpack_candidates(candidates), c_min, floor, max_len)
        return pack_candidates(split)

    @staticmethod
    def cut(candidates, token_bytes, forbidden):
        """The reference's cut (:func:`fastsw.pretokenizers.boundary.cut_candidates`) on packed candidates."""
        from fastsw.pretokenizers.boundary import cut_candidates

        return pack_candidates(cut_candidates(unpack_candidates(candidates), token_bytes, forbidden))

    def boundless(self, regular, candidates, *args, **kwargs):
        """:func:`boundless_phase2_packed`, after checking that its working set fits in memory
        (:func:`fastsw.corpus.memory.check_phase2`)."""
        check_cut(len(candidates[2]), len(candidates[0]))
        self._loaded()
        phase2_ready()
        regular = list(regular)
        cut = _cut_for_boundless(candidates, [c for _, _, c in regular], len(args[0]))
        check_phase2(len(cut[2]), len(cut[0]))
        return boundless_phase2_packed(regular, cut, *args, cut=False, **kwargs)

    def superbpe(self, candidates, *args, **kwargs):
        """:func:`superbpe_phase2_packed`, after checking that its working set fits in memory."""
        check_phase2(len(candidates[2]), len(candidates[0]))
        self._loaded()
        phase2_ready()
        return superbpe_phase2_packed(candidates, *args, **kwargs)


def load_in_background():
    """A :class:`KernelLoad` of the merge loop when Numba's on-disk cache holds it (else None: it compiles, in the
    caller's thread)."""
    global _loading
    if _loadable():
        _loading = KernelLoad()
        return _loading
    return None


def _loadable() -> bool:
    """Whether the merge loop is not in this process yet but in Numba's on-disk cache."""
    from fastsw import _compiling

    return hasattr(_merge_loop, "signatures") and not _merge_loop.signatures and _compiling.in_disk_cache(_merge_loop)


class KernelLoad:
    """The merge loop loaded from Numba's on-disk cache (:func:`warmup`) in a thread, while this one goes on (a
    training run counts its corpus meanwhile). Nearly all of the loading is Numba's own first set-up in a process
    (the imports of its compiler's registries), which the run would otherwise wait for before counting, with all
    cores but one idle (``python bench/bench_train.py --mb 50 --vocab 32768`` shows it as ``jit_warmup``); SciPy's
    linear algebra, which one of those imports would pull in, is left out (:func:`fastsw._compiling.defer_blas_probe`:
    about 0.45 -> 0.23 s of CPU time). For kernels that are cached only: a kernel that compiles takes seconds and is compiled in the
    calling thread, where Ctrl-C stops it (:func:`fastsw._interrupt.call_kernel`).

    >>> load = KernelLoad()
    >>> load.wait()  # the kernels can run now (an error while loading is raised here)
    >>> load.seconds >= 0
    True
    """

    def __init__(self):
        self.seconds = None  # how long loading took, once done
        self._error = None
        self._thread = threading.Thread(target=self._run, name="fastsw-load-kernels", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from fastsw import _compiling

        start = time.perf_counter()
        try:
            _compiling.defer_blas_probe()  # about 40 % of the loading (a compilation, by contrast, takes seconds)
            warmup(phase2=False)
        except BaseException as e:  # noqa: B902 -- raised again in the thread that waits (wait)
            self._error = e
        self.seconds = time.perf_counter() - start

    def wait(self) -> None:
        """Wait until the kernels are loaded (Ctrl-C stops the waiting); raise what loading raised, if anything."""
        while self._thread.is_alive():
            self._thread.join(0.1)
        if self._error is not None:
            error, self._error = self._error, None
            raise error


@contextmanager
def compile_notice(callback):
    """Call ``callback()`` once if a Numba kernel compiles inside the block (Numba's on-disk
    cache was cold, e.g. on the first run after installing); loading a kernel from the cache
    calls nothing. Numba's ``"numba:compile"`` event fires only for a real compilation."""
    from numba.core import event

    class _First(event.Listener):
        fired = False

        def on_start(self, ev):
            if not self.fired:
                self.fired = True
                callback()

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", _First()):
        yield


#: The kernels of phase 2 alone: BoundlessBPE's and SuperBPE's candidate cut (both phases run the merge loop).
PHASE2_KERNELS = (_cut_weights, _cut_candidates)
_ahead = None  # the process compiling kernels ahead into Numba's on-disk cache (compile_ahead)
_loading = None  # the thread loading the merge loop from that cache (load_in_background)


def compile_ahead(phase2: bool) -> None:
    """On a fresh install, start a background process (:func:`fastsw._compiling.start`) that compiles, into Numba's
    on-disk cache, the merge loop's helpers of ``fastsw.trainers.bpe_kernels.AHEAD`` (:func:`warmup_helpers`;
    unless the loop is cached) and, with ``phase2``, then the phase-2 kernels (:func:`warmup_phase2`; unless
    they are cached). Meanwhile this process compiles the merge loop, which loads those helpers from the cache
    when it reaches them, and runs phase 1; phase 2 waits for the process (:func:`phase2_ready`) and loads its
    kernels from the cache. Runs without a phase 2 (BPE) never compile the phase-2 kernels."""
    global _ahead
    from fastsw import _compiling

    if _ahead is not None or _compiling.usable_cpus() < 2:  # one CPU: everything compiles here, as it is needed
        return
    helpers = not _compiling.ready((_merge_loop,))
    phase2 = phase2 and not _compiling.ready(PHASE2_KERNELS)
    if helpers or phase2:
        _ahead = _compiling.start(
            f"{__name__}:"
            + ("warmup_ahead" if helpers and phase2 else "warmup_helpers" if helpers else "warmup_phase2")
        )


def phase2_ready() -> None:
    """Wait for the background process of :func:`compile_ahead`, if one runs (the phase-2 kernels then load from
    the cache; if it failed, they compile here at their first call)."""
    global _ahead
    if _ahead is not None:
        from fastsw import _compiling

        process, _ahead = _ahead, None
        _compiling.finish(process)


def stop_compiling_ahead() -> None:
    """End and reap the background process of :func:`compile_ahead` if it still runs (a run without a phase 2,
    or one that ends early: an error, Ctrl-C), and wait for the thread of :func:`load_in_background` (loading
    takes a fraction of a second and cannot be stopped; no thread is left running). What it compiled stays in
    the cache."""
    global _ahead, _loading
    if _loading is not None:
        loading, _loading = _loading, None
        try:
            loading.wait()
        except Exception:  # noqa: BLE001 - the run ends anyway; a stage that needed the kernels raised it
            pass
    if _ahead is not None:
        from fastsw import _compiling

        process, _ahead = _ahead, None
        _compiling.stop(process)


def warmup(phase2: bool = True) -> None:
    """Compile (or load from the cache) the merge loop on a tiny input for both profiles, and with ``phase2``
    the phase-2 kernels (:func:`warmup_phase2`)."""
    from fastsw.alphabet import get_profile

    tb = [bytes([i]) for i in range(4)]
    for name in ("paper", "hf"):
        learn_merges_fast([[0, 1, 0, 1, 2], [1, 1, 1]], [3, 2], list(tb), get_profile(name), 3)
    if phase2:
        warmup_phase2()


def warmup_helpers() -> None:
    """Compile (or load from the cache) the merge loop's helpers of ``fastsw.trainers.bpe_kernels.AHEAD``, each
    with its signature (a tuple of types: the key under which the loop's compilation looks them up)."""
    from numba.core import sigutils

    for kernel, signature in AHEAD:
        if hasattr(kernel, "compile"):  # NUMBA_DISABLE_JIT=1: a plain function, nothing compiles
            kernel.compile(tuple(sigutils.normalize_signature(signature)[0]))


def warmup_phase2() -> None:
    """Compile (or load from the cache) :data:`PHASE2_KERNELS` on a tiny input (a floor of 5 cuts the pair
    ``(2, 3)``), and nothing else."""
    cut_candidates(pack_candidates({(0, 1, 2): 4, (2, 3): 1}), 5, 4)


def warmup_ahead() -> None:
    """:func:`warmup_helpers`, then :func:`warmup_phase2`."""
    warmup_helpers()
    warmup_phase2()
