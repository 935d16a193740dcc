"""The reference BPE engine: pair counting, merge selection, merge application.

Plain Python, written to be read against SPEC sections 3-7. The same engine
learns phase-1 merges (its "words" are aggregated pretokens) and supermerges
(its "words" are aggregated supermerge candidates, sequences of phase-1 tokens).

Design notes: see docs/internals.md, section "Phase 1: the merge loop" (the reference).
"""

from __future__ import annotations

import heapq
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from fastsw.alphabet import Profile

Pair = Tuple[int, int]


def word_pairs(word: Sequence[int], overlapping: bool) -> Dict[Pair, int]:
    """Pair counts of one word.

    With ``overlapping=False`` a run of n equal tokens counts its pair floor(n/2)
    times: the pair at position i is skipped when the same pair was counted at
    position i-1 (``aaaa`` -> a+a twice, ``aaa`` -> once).
    """
    counts: Dict[Pair, int] = {}
    last_counted_equal = -2
    for i in range(len(word) - 1):
        a, b = word[i], word[i + 1]
        if a == b and not overlapping:
            if last_counted_equal == i - 1:
                last_counted_equal = -2
                continue
            last_counted_equal = i
        counts[(a, b)] = counts.get((a, b), 0) + 1
    return counts


def replace_pair(word: Sequence[int], left: int, right: int, new: int) -> List[int]:
    """Replace every non-overlapping ``left right`` by ``new``, scanning left to right."""
    out: List[int] = []
    i, n = 0, len(word)
    while i < n:
        if i + 1 < n and word[i] == left and word[i + 1] == right:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def apply_merges(ids: Sequence[int], ranks: Dict[Pair, Tuple[int, int]]) -> List[int]:
    """Encode with merge rules: the lowest-rank applicable pair first, all of its
    non-overlapping occurrences left to right, until no rule applies.

    ``ranks`` maps ``(left, right)`` to ``(rank, new id)``.
    """
    word = list(ids)
    while len(word) >= 2:
        best = None
        for pair in zip(word, word[1:]):
            r = ranks.get(pair)
            if r is not None and (best is None or r[0] < best[0]):
                best = r
                best_pair = pair
        if best is None:
            break
        word = replace_pair(word, best_pair[0], best_pair[1], best[1])
    return word


#: Pair counts are 64-bit in the fast kernels; both paths refuse words whose pair counts could pass this.
MAX_PAIR_TOTAL = (1 << 63) - 1


def check_pair_total(total: int, limit: Optional[int] = MAX_PAIR_TOTAL) -> None:
    """Raise ``ValueError`` when ``total`` -- the sum over the words of ``count * (length - 1)``, a bound on
    every pair count the merge loop can reach -- is beyond ``limit`` (``2**63-1``). Both paths call it before
    merging (the fast path's kernel would wrap around; the reference must give the same answer). ``limit=None``:
    no limit, for the reference path training on weighted counts that only exact Python ints can hold (see
    :func:`fastsw.corpus.counting.int64_overflow`).

        >>> check_pair_total(2 ** 63 - 1)  # fits
        >>> check_pair_total(2 ** 63)
        Traceback (most recent call last):
        ...
        ValueError: the counts are too large to train on: ... 9223372036854775808 pair occurrences, ...
    """
    if limit is not None and total > limit:
        raise ValueError(
            f"the counts are too large to train on: count x (length - 1) summed over the words gives "
            f"{total} pair occurrences, more than 2**63-1 = {MAX_PAIR_TOTAL} (pair counts are "
            "64-bit); divide the counts"
        )


class PairMerger:
    """Aggregated words, their pair counts, and the merge loop's state.

    ``words[i]`` is a list of token ids occurring ``counts[i]`` times;
    ``token_bytes[id]`` is the byte string of each token (grows as merges add
    tokens) and gives the ``paper`` tie key; the ``hf`` tie key is the id pair.

    ``merge_rule`` (optional) ``(kinds, table)``: ``kinds[id]`` is a small int per token and
    ``table[left kind][right kind]`` the kind of the token a merge makes, or -1 when the merge is
    forbidden (SCRIPT v3: never a partial character, :func:`fastsw.pretokenizers.script_v3.merge_rule`). A forbidden
    pair is counted but never chosen; :meth:`add_token` records a new token's kind.
    """

    def __init__(
        self,
        words: Iterable[Sequence[int]],
        counts: Iterable[int],
        token_bytes: List[bytes],
        profile: Profile,
        max_total: Optional[int] = MAX_PAIR_TOTAL,
        merge_rule=None,
    ):
        self.words: List[List[int]] = [list(w) for w in words]
        self.counts: List[int] = list(counts)
        self.token_bytes = token_bytes
        self.overlapping = profile.overlapping
        self.tie_by_bytes = profile.tie == "bytes"
        self.kinds: List[int] = []  # with a merge rule: the kind of every token
        self.table: Optional[List[List[int]]] = None
        if merge_rule is not None:
            kinds, table = merge_rule
            self.kinds = [int(k) for k in kinds] + [0] * (len(token_bytes) - len(kinds))
            self.table = [[int(x) for x in row] for row in table]
        if max_total is not None:
            check_pair_total(sum(c * (len(w) - 1) for w, c in zip(self.words, self.counts) if len(w) > 1), max_total)
        self.pair_counts: Dict[Pair, int] = {}
        self.where: Dict[Pair, set] = {}
        for i, (w, c) in enumerate(zip(self.words, self.counts)):
            for pair, k in word_pairs(w, self.overlapping).items():
                self.pair_counts[pair] = self.pair_counts.get(pair, 0) + k * c
                self.where.setdefault(pair, set()).add(i)
        self.heap = [self._entry(p, c) for p, c in self.pair_counts.items() if c > 0]
        heapq.heapify(self.heap)

    def _entry(self, pair: Pair, count: int):
        key: tuple
        if self.tie_by_bytes:
            key = (self.token_bytes[pair[0]], self.token_bytes[pair[1]])
        else:
            key = pair
        return (-count, key, pair)

    def best(self) -> Optional[Tuple[int, Pair]]:
        """The pair with the highest count (ties: the profile's smaller key), or None."""
        heap = self.heap
        while heap:
            neg, _, pair = heap[0]
            current = self.pair_counts.get(pair, 0)
            if current == -neg and self.allowed(pair):
                return current, pair
            heapq.heappop(heap)
            if not self.allowed(pair):
                continue  # a forbidden pair stays forbidden: drop it
            if current > 0:
                heapq.heappush(heap, self._entry(pair, current))
        return None

    def allowed(self, pair: Pair) -> bool:
        """Whether the merge rule (if any) lets ``pair`` merge."""
        return self.table is None or self.table[self.kinds[pair[0]]][self.kinds[pair[1]]] >= 0

    def add_token(self, pair: Pair) -> None:
        """Record the kind of the token that merging ``pair`` makes (a no-op without a merge rule)."""
        if self.table is not None:
            self.kinds.append(self.table[self.kinds[pair[0]]][self.kinds[pair[1]]])

    def merge(self, pair: Pair, new_id: int) -> int:
        """Merge ``pair`` into token ``new_id`` everywhere; returns the weighted
        number of replacements. ``token_bytes[new_id]`` must already exist."""
        left, right = pair
        deltas: Dict[Pair, int] = {}
        replaced = 0
        for i in self.where.pop(pair, ()):
            word = self.words[i]
            new_word = replace_pair(word, left, right, new_id)
            if len(new_word) == len(word):
                continue  # stale index entry: the pair left this word earlier
            c = self.counts[i]
            replaced += (len(word) - len(new_word)) * c
            for p, k in word_pairs(word, self.overlapping).items():
                deltas[p] = deltas.get(p, 0) - k * c
            for p, k in word_pairs(new_word, self.overlapping).items():
                deltas[p] = deltas.get(p, 0) + k * c
                self.where.setdefault(p, set()).add(i)
            self.words[i] = new_word
        for p, d in deltas.items():
            if d == 0:
                continue
            value = self.pair_counts.get(p, 0) + d
            if value > 0:
                self.pair_counts[p] = value
            else:
                self.pair_counts.pop(p, None)
            if d > 0:
                heapq.heappush(self.heap, self._entry(p, value))
        return replaced


def learn_merges(
    words: Sequence[Sequence[int]],
    counts: Sequence[int],
    token_bytes: List[bytes],
    profile: Profile,
    n_merges: int,
    progress=None,
    max_total: Optional[int] = MAX_PAIR_TOTAL,
    merge_rule=None,
):
    """Phase-1 BPE: learn up to ``n_merges`` merges over aggregated words (pair totals beyond ``max_total``
    are refused: :func:`check_pair_total`; ``None`` lifts the limit). ``merge_rule``: pairs that must never
    merge (see :class:`PairMerger`).

    Returns ``(merges, final_words)``: ``merges`` is a list of ``(left, right,
    count)`` in rank order (merge k creates id ``len(alphabet) + k``); new tokens
    are appended to ``token_bytes``. Stops early when no pair is left.
    """
    merger = PairMerger(words, counts, token_bytes, profile, max_total, merge_rule)
    merges: List[Tuple[int, int, int]] = []
    while len(merges) < n_merges:
        best = merger.best()
        if best is None:
            break
        count, (left, right) = best
        new_id = len(token_bytes)
        token_bytes.append(token_bytes[left] + token_bytes[right])
        merger.add_token((left, right))
        merger.merge((left, right), new_id)
        merges.append((left, right, count))
        if progress is not None:
            progress.update(1)
    return merges, merger.words
