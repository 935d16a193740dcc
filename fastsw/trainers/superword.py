"""Phase 2 on the reference path: supermerge candidates, greedy n-gram
splitting, BoundlessBPE (Algorithm 1) and SuperBPE (SPEC sections 5-6), and
:class:`ReferenceBackend`, the stages of :func:`fastsw.train` on this path.

Candidates are never built from whole documents kept in memory. While counting
pretokens, the counter also aggregates *letter runs*: maximal runs of two or more
consecutive pretokens that contain a letter (a superset of the candidates, since
every eligible pretoken contains a letter). Once phase 1 knows which pretokens
became single eligible tokens, each letter run is cut at the ineligible
pretokens and the pieces of length >= 2 are re-aggregated by count.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

from fastsw.alphabet import get_profile
from fastsw.trainers.bpe import MAX_PAIR_TOTAL, PairMerger, learn_merges

Seq = Tuple[int, ...]


def aggregate_candidates(letter_runs: Dict[Seq, int], single_token: Sequence[int]) -> Dict[Seq, int]:
    """Supermerge candidates from aggregated letter runs.

    ``letter_runs`` maps runs of pretoken indices to counts; ``single_token[p]``
    is the phase-1 token of pretoken ``p`` when ``p`` is an eligible single-token
    pretoken, else -1. Returns runs of phase-1 token ids (length >= 2) -> count.
    """
    out: Dict[Seq, int] = {}
    for run, count in letter_runs.items():
        piece: List[int] = []
        for p in run:
            t = single_token[p]
            if t >= 0:
                piece.append(t)
                continue
            if len(piece) >= 2:
                key = tuple(piece)
                out[key] = out.get(key, 0) + count
            piece = []
        if len(piece) >= 2:
            key = tuple(piece)
            out[key] = out.get(key, 0) + count
    return out


def frequent_ngrams(candidates: Dict[Seq, int], min_count: int, max_len: int) -> Set[Seq]:
    """Algorithm 2: n-grams (2 <= n <= max_len) of candidate tokens with count >= min_count.

    Pass n adds a candidate's count to each of its n-grams (every start position),
    for n >= 2 only when both (n-1)-subgrams already reach ``min_count``; then n-grams
    (n >= 2) below ``min_count`` are dropped (unigrams stay for the bound). A pass
    that leaves the table's size unchanged ends the search.
    """
    table: Dict[Seq, int] = {}
    for n in range(1, max_len + 1):
        before = len(table)
        for seq, count in candidates.items():
            for i in range(len(seq) - n + 1):
                if n > 1 and (
                    table.get(seq[i : i + n - 1], 0) < min_count or table.get(seq[i + 1 : i + n], 0) < min_count
                ):
                    continue
                gram = seq[i : i + n]
                table[gram] = table.get(gram, 0) + count
        if n > 1:
            table = {g: c for g, c in table.items() if len(g) == 1 or c >= min_count}
        if len(table) == before:
            break
    return {g for g in table if len(g) >= 2}


def greedy_split(candidates: Dict[Seq, int], frequent: Set[Seq], max_len: int) -> Dict[Seq, int]:
    """Cut each candidate left to right into the longest frequent n-gram starting at
    each position (else one token); re-aggregate the pieces of length >= 2."""
    out: Dict[Seq, int] = {}
    for seq, count in candidates.items():
        i, n = 0, len(seq)
        while i < n:
            step = 1
            for length in range(min(max_len, n - i), 1, -1):
                if seq[i : i + length] in frequent:
                    step = length
                    break
            if step >= 2:
                piece = seq[i : i + step]
                out[piece] = out.get(piece, 0) + count
            i += step
    return out


def split_candidates(candidates: Dict[Seq, int], c_min: int, floor: int, max_len: int) -> Dict[Seq, int]:
    """Optional step 5 of the paper: greedy n-gram splitting with
    ``min_count = max(c_min, floor)``."""
    frequent = frequent_ngrams(candidates, max(c_min, floor), max_len)
    return greedy_split(candidates, frequent, max_len)


def boundless_phase2(
    regular: Sequence[Tuple[int, int, int]],
    candidates: Dict[Seq, int],
    token_bytes: List[bytes],
    n_alphabet: int,
    profile,
    progress=None,
    max_total: Optional[int] = MAX_PAIR_TOTAL,
):
    """Algorithm 1 (``max_total``: see :func:`fastsw.trainers.bpe.learn_merges`). ``regular`` are the phase-1 merges
    ``(left, right, count)``; ``token_bytes`` the phase-1 vocabulary (supermerge tokens are appended to it,
    numbered after the phase-1 vocabulary while training).

    Returns the interleaved merge list ``[(kind, index, left, right, count)]`` in
    final id order, with ``kind`` ``"r"`` (index = phase-1 rank) or ``"s"`` (index =
    the working id of the supermerge token), left/right in working ids.
    """
    merger = PairMerger(list(candidates.keys()), list(candidates.values()), token_bytes, profile, max_total)
    target = n_alphabet + len(regular)
    steps = []
    j = 0
    size = n_alphabet
    while size < target:
        best = merger.best()
        if best is None:
            break  # no supermerge pair left: the remaining regular merges are dropped
        count_s, (s1, s2) = best
        if count_s > regular[j][2]:
            new_id = len(token_bytes)
            token_bytes.append(token_bytes[s1] + token_bytes[s2])
            merger.merge((s1, s2), new_id)
            steps.append(("s", new_id, s1, s2, count_s))
        else:
            left, right, count_r = regular[j]
            steps.append(("r", j, left, right, count_r))
            j += 1
        size += 1
        if progress is not None:
            progress.update(1)
    return steps


def superbpe_phase2(
    candidates: Dict[Seq, int], token_bytes: List[bytes], n_super: int, profile, progress=None, max_total=MAX_PAIR_TOTAL
) -> List[Tuple[int, int, int]]:
    """SuperBPE: exactly ``n_super`` supermerges (fewer if pairs run out), ids after
    the phase-1 vocabulary: phase 1's merge loop over the candidates (:func:`learn_merges`, whose ``progress`` and
    ``max_total`` these are). Returns ``[(left, right, count)]``."""
    words, counts = list(candidates.keys()), list(candidates.values())
    return learn_merges(words, counts, token_bytes, profile, n_super, progress=progress, max_total=max_total)[0]


def interleave(steps, n_alphabet: int) -> List[Tuple[int, int, int, bool]]:
    """Turn Algorithm 1's steps into final merges ``(left, right, count, is_super)``
    with ids in the interleaved order (alphabet ids unchanged)."""
    final_of: Dict[int, int] = {i: i for i in range(n_alphabet)}
    merges: List[tuple] = []
    for kind, index, left, right, count in steps:
        new_final = n_alphabet + len(merges)
        if left not in final_of or right not in final_of:
            raise RuntimeError("internal error: a merge uses a token that was not created yet")
        merges.append((final_of[left], final_of[right], count, kind == "s"))
        working = n_alphabet + index if kind == "r" else index
        final_of[working] = new_final
    return merges


class ReferenceBackend:
    """The training stages on the reference path, over Python lists and dicts. :func:`fastsw.train` calls
    one backend per run, stage by stage; the fast twin :class:`fastsw.trainers.bpe_fast.FastBackend` has the same
    methods and results, with words and candidates kept as packed arrays.

        >>> import fastsw
        >>> from fastsw.alphabet import default_alphabet
        >>> from fastsw.corpus.counting import count_corpus
        >>> counts = count_corpus(["the cat sat on the mat"], fastsw.Pretokenizer(), collect_runs=True)
        >>> merges, words, vocab = ReferenceBackend().phase1(counts, default_alphabet("paper"), "paper", 3)
        >>> [vocab[len(vocab) - 3:], [count for _, _, count in merges]]
        [[b'at', b'he', b'the'], [3, 2, 2]]
    """

    name = "python"
    warmup_seconds = None  # nothing to compile

    def __init__(self, big_counts: bool = False):
        # big_counts: weighted counts scaled to integers beyond 64 bits (fastsw.corpus.counting.int64_overflow) train
        # exactly on Python ints; otherwise the merge loops refuse pair totals beyond 2**63-1 as the kernels do
        self.max_total = None if big_counts else MAX_PAIR_TOTAL

    def phase1(self, counts, alphabet, profile: str, n_merges: int, progress=None):
        """Phase-1 BPE over aggregated pretokens (a :class:`~fastsw.corpus.counting.Counts`). Returns
        ``(merges, words, token_bytes)``: merges ``(left, right, count)`` in rank order, each pretoken's
        final token sequence, and the vocabulary bytes."""
        words = [alphabet.initial_ids(p) for p in counts.pretokens]
        token_bytes = list(alphabet.tokens)
        merges, words = learn_merges(
            words,
            counts.counts,
            token_bytes,
            get_profile(profile),
            n_merges,
            progress=progress,
            max_total=self.max_total,
            merge_rule=getattr(alphabet, "merge_rule", None),
        )
        return merges, words, token_bytes

    @staticmethod
    def adopt_words(words: List[List[int]]) -> List[List[int]]:
        """Phase-1 words computed elsewhere (parity-aware BPE's reference phase 1), one token-id list per
        pretoken, in the form :meth:`candidates` takes: here, as they are."""
        return words

    def candidates(self, counts, words, tok1) -> Dict[Seq, int]:
        """Supermerge candidates (tuples of phase-1 token ids -> count) from the letter runs of ``counts``,
        phase 1's ``words`` and the phase-1 tokenizer ``tok1`` (which tokens are eligible)."""
        single = [w[0] if len(w) == 1 and tok1.is_eligible(w[0]) else -1 for w in words]
        return self.aggregate(counts, single)

    @staticmethod
    def aggregate(counts, single_token) -> Dict[Seq, int]:
        """Candidates from the letter runs of ``counts`` given each pretoken's single eligible token (or -1):
        :func:`aggregate_candidates`. (:mod:`fastsw.corpus.distributed` calls it per shard.)"""
        return aggregate_candidates(counts.letter_runs, single_token)

    @staticmethod
    def merge_candidates(tables) -> Dict[Seq, int]:
        """Candidate tables (of parts of a corpus) added up: the candidates of the whole.

        >>> ReferenceBackend.merge_candidates([{(1, 2): 3}, {(1, 2): 1, (2, 1): 5}])
        {(1, 2): 4, (2, 1): 5}
        """
        out: Dict[Seq, int] = {}
        for table in tables:
            for cand, count in table.items():
                out[cand] = out.get(cand, 0) + count
        return out

    n_candidates = staticmethod(len)
    split = staticmethod(split_candidates)

    @staticmethod
    def cut(candidates, token_bytes, forbidden):
        """Candidates cut where ``forbidden(left bytes, right bytes)`` (:func:`fastsw.pretokenizers.boundary.cut_candidates`)."""
        from fastsw.pretokenizers.boundary import cut_candidates

        return cut_candidates(candidates, token_bytes, forbidden)

    def boundless(self, *args, **kwargs):
        """:func:`boundless_phase2` (Algorithm 1) under this backend's count limit."""
        return boundless_phase2(*args, max_total=self.max_total, **kwargs)

    def superbpe(self, *args, **kwargs):
        """:func:`superbpe_phase2` under this backend's count limit."""
        return superbpe_phase2(*args, max_total=self.max_total, **kwargs)
