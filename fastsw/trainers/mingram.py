"""MinGram: seed 002's minimum-token-count Unigram learner (SPEC section 12, ``../shared/MINGRAM.md``).

This module owns MinGram training after the BPE seed, its model (:class:`MinGramTokenizer`), its model file
and its interop (the ``semingram-v1`` import here; the HF ``Unigram`` export is
:func:`fastsw.io.interop.hf_unigram_json`). The BPE seed is fastsw's own phase 1
(:mod:`fastsw.trainers.bpe` / :mod:`fastsw.trainers.bpe_fast`) with ``floor(add * overshoot)`` merges; :func:`fastsw.train`
calls :func:`train_from_seed` with its words.

Training (MINGRAM.md 1.1-1.8), as the seed authors' code behaves:

* lp0(t) = ln(max(1, c(t)) / sum max(1, c)) from the seed's final segmentation counts c;
* Hard EM: the E-step segments every unique pretoken by the program of :func:`viterbi` and adds its count to
  every token on the path; the M-step drops non-atomic tokens with usage 0 and sets lp = ln(N / sum N)
  (-inf for an unused atomic token);
* ``em_iterations`` E/M steps, then, while the model is larger than ``vocab_size``, one flat prune to the
  target (``"usage_count"``: atomic tokens, then the others by descending lp, stable; or ``"mi"``,
  MinGram-PP) and again; a final prune to the target ("Finalize") and a metadata-only E-step.

The size can end *below* ``vocab_size`` (MINGRAM.md 1.8): a round-2 M-step drops tokens whose usage fell to 0
after the prune, or the zero-count drops of round 1 already went below the target. fastsw reproduces it and
warns (:class:`~fastsw.notes.VocabularyNotReachedWarning`); ``refill=True`` instead re-adds the best tokens
the last prune (then the M-steps, latest first) dropped, up to the target, and re-estimates lp once without
dropping anything.

Encoding (MINGRAM.md 2): each pretoken independently, path score ``sum(score_delta * lp(t) - 1)``, the
update ``cand >= best[e] - 1e-12`` with candidates in increasing start (last write wins, so the earlier
tokens of a path are the long ones: ``aaa`` -> ``[aa, a]``).

Design notes: see docs/internals.md, section "MinGram".
"""

from __future__ import annotations

import json
import math
from itertools import chain
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from fastsw.pretokenizers._unicode import UNICODE_VERSION
from fastsw.alphabet import Alphabet, ByteAlphabet, alphabet_from_config
from fastsw.files import atomic_write_text
from fastsw.pretokenizers.pretokenize import Pretokenizer
from fastsw.io.model_file import approximate_error, model_fields
from fastsw.tokenizer import Tokenizer
from fastsw.trainers.base import OptionError

#: The score an atomic token with lp = -inf gets in a :class:`MinGramTokenizer` (MINGRAM.md 2.3, M:112-114).
LOG_PROB_FLOOR = -100.0
#: The largest BPE seed (merges) an overshoot may ask for: fastsw's largest vocabulary, 2**63-1.
MAX_SEED_MERGES = (1 << 63) - 1
#: MINGRAM.md 1.9 defaults. ``overshoot`` is the code default; the seed paper's grids used 1.15.
DEFAULTS = {"overshoot": 1.1, "em_iterations": 2, "score_delta": 1e-5, "prune_criterion": "usage_count"}
PAPER_OVERSHOOT = 1.15
CRITERIA = ("usage_count", "mi")
MAX_OUTER_ITERATIONS = 100
_EPS = 1e-12
_NEG_INF = float("-inf")


# ---------------------------------------------------------------------------------------------------------------
# options


def check_mingram_options(overshoot, em_iterations, score_delta, prune_criterion) -> dict:
    """MinGram's training options with defaults filled in; one :class:`~fastsw.trainers.base.OptionError` per bad
    value, saying what works."""
    out = dict(DEFAULTS)
    if overshoot is not None:
        if isinstance(overshoot, bool) or not isinstance(overshoot, (int, float)) or not math.isfinite(overshoot):
            raise OptionError(
                "{overshoot} must be a number >= 1 (the seed BPE learns floor(add * overshoot) merges), "
                "not {overshoot:r}",
                overshoot=overshoot,
            )
        if overshoot < 1:
            raise OptionError(
                "{overshoot:v} is below 1: the BPE seed would be smaller than the target and MinGram "
                "only removes tokens; use {overshoot} >= 1 (API default 1.1, the seed paper's grids "
                "1.15)",
                overshoot=overshoot,
            )
        if overshoot > MAX_SEED_MERGES:
            raise OptionError(
                "{overshoot:v} asks for a BPE seed beyond 2**63-1 merges, the largest fastsw trains; "
                "use a small factor such as 1.1 or 1.15 (a seed larger than the corpus can reach stops "
                "when pairs run out)",
                overshoot=overshoot,
            )
        out["overshoot"] = float(overshoot)
    if em_iterations is not None:
        if isinstance(em_iterations, bool) or not isinstance(em_iterations, (int, np.integer)) or em_iterations < 1:
            raise OptionError(
                "{em_iterations} must be an integer >= 1 (E/M steps per round; default 2), not {em_iterations:r}",
                em_iterations=em_iterations,
            )
        out["em_iterations"] = int(em_iterations)
    if score_delta is not None:
        if (
            isinstance(score_delta, bool)
            or not isinstance(score_delta, (int, float))
            or not math.isfinite(score_delta)
            or score_delta < 0
        ):
            raise OptionError(
                "{score_delta} must be a finite number >= 0 (default 1e-5; 0 = pure minimum token "
                "count), not {score_delta:r}",
                score_delta=score_delta,
            )
        out["score_delta"] = float(score_delta)
    if prune_criterion is not None:
        if prune_criterion not in CRITERIA:
            raise OptionError(
                "{prune_criterion:v} is not one of " + ", ".join(CRITERIA), prune_criterion=prune_criterion
            )
        out["prune_criterion"] = prune_criterion
    return out


def costs(lp: np.ndarray, score_delta: float) -> np.ndarray:
    """d(t) = score_delta * lp(t), or exactly 0.0 when score_delta == 0 (so 0 * -inf is never NaN)."""
    lp = np.asarray(lp, dtype=np.float64)
    if score_delta == 0:
        return np.zeros(lp.shape[0], np.float64)
    return np.ascontiguousarray(score_delta * lp, dtype=np.float64)


# ---------------------------------------------------------------------------------------------------------------
# the reference path: a dict trie, the program, the E-step, the prunes


def build_trie_reference(token_atoms: Sequence[Sequence[int]], order: Sequence[int]):
    """``(children, node_tok)``: node 0 is the root, ``children[node]`` a dict atom -> node, ``node_tok[node]``
    the token ending there (-1 none). Tokens are inserted in ``order``; a later one shadows an equal one."""
    children: List[dict] = [{}]
    node_tok = [-1]
    for t in order:
        node = 0
        for a in token_atoms[t]:
            nxt = children[node].get(a)
            if nxt is None:
                nxt = len(children)
                children[node][a] = nxt
                children.append({})
                node_tok.append(-1)
            node = nxt
        node_tok[node] = t
    return children, node_tok


def viterbi(atoms: Sequence[int], trie, cost, token_len) -> List[int]:
    """MINGRAM.md 2.1: the best path of one pretoken (its atomic ids) as token indices.

    ``cost[t]`` is ``score_delta * lp(t)``; for each start p in increasing order, the tokens matching
    ``atoms[p:]`` (shortest first) offer ``(best[p] + cost) - 1``, which replaces ``best[e]`` when it is at
    least ``best[e] - 1e-12``, so among ties the latest start (the shortest last token) wins.

        >>> trie = build_trie_reference([(0,), (0, 0)], [0, 1])
        >>> viterbi([0, 0, 0], trie, [0.0, 0.0], [1, 2])     # 'aaa' with {a, aa} -> [aa, a]
        [1, 0]
    """
    children, node_tok = trie
    n = len(atoms)
    best = [0.0] + [_NEG_INF] * n
    back = [-1] * (n + 1)
    for p in range(n):
        if p > 0 and back[p] < 0:
            continue
        base = best[p]
        node = 0
        for e in range(p + 1, n + 1):
            node = children[node].get(atoms[e - 1])
            if node is None:
                break
            t = node_tok[node]
            if t < 0:
                continue
            cand = (base + cost[t]) - 1.0
            if cand >= best[e] - _EPS:
                best[e] = cand
                back[e] = t
    path = []
    e = n
    while e > 0:
        t = back[e]
        if t < 0:
            raise ValueError("a pretoken has no segmentation: an atomic token is missing from the model")
        path.append(t)
        e -= token_len[t]
    path.reverse()
    return path


def e_step_reference(words, counts, token_atoms, order, cost, n_tokens) -> List[int]:
    """Hard E-step: usage N[t] (Python ints) over all words (lists of atomic ids) with their counts."""
    trie = build_trie_reference(token_atoms, order)
    token_len = [len(a) for a in token_atoms]
    usage = [0] * n_tokens
    for w, f in zip(words, counts):
        for t in viterbi(w, trie, cost, token_len):
            usage[t] += f
    return usage


def prune_usage_reference(order: Sequence[int], lp, n_atoms: int, target: int) -> List[int]:
    """MINGRAM.md 1.6: keep the atomic tokens (in order), then the others by descending lp (stable) until
    ``target`` tokens; new order = atomic tokens, then the kept ones in sorted order."""
    required = [t for t in order if t < n_atoms]
    rest = sorted((t for t in order if t >= n_atoms), key=lambda t: lp[t], reverse=True)  # stable
    return required + rest[: max(0, target - len(required))]


def _min_cover(atoms, trie, reverse=False):
    """F[i] = the fewest tokens covering atoms[0:i) (``reverse``: B[i] for atoms[i:n))."""
    children, node_tok = trie
    n = len(atoms)
    big = n + 1
    cover = [big] * (n + 1)
    cover[n if reverse else 0] = 0
    for p in range(n - 1, -1, -1) if reverse else range(n):  # each start after every cover it reads
        if not reverse and cover[p] >= big:
            continue  # no cover of atoms[0:p) to extend
        node = 0
        for e in range(p + 1, n + 1):
            node = children[node].get(atoms[e - 1])
            if node is None:
                break
            if node_tok[node] >= 0:  # atoms[p:e) is a token
                if reverse:
                    cover[p] = min(cover[p], cover[e] + 1)
                else:
                    cover[e] = min(cover[e], cover[p] + 1)
    return cover


def mi_scores_reference(words, counts, token_atoms, order, cost, n_atoms, n_tokens) -> List[int]:
    """MINGRAM.md 1.7 (MinGram-PP): MI[t], the extra tokens the corpus would need without t, summed over
    the occurrences of t on the model's own paths (Python ints)."""
    trie = build_trie_reference(token_atoms, order)
    children, node_tok = trie
    token_len = [len(a) for a in token_atoms]
    lmax = max((token_len[t] for t in order), default=1)
    mi = [0] * n_tokens
    for w, f in zip(words, counts):
        n = len(w)
        F = _min_cover(w, trie)
        B = _min_cover(w, trie, reverse=True)
        K = F[n]
        s = 0
        for t in viterbi(w, trie, cost, token_len):
            e = s + token_len[t]
            if t >= n_atoms:
                inner = min((F[j] + B[j] - K for j in range(s + 1, e)), default=None)
                outer = None
                for s2 in range(max(0, e - lmax), s + 1):
                    node = 0
                    for e2 in range(s2 + 1, min(s2 + lmax, n) + 1):
                        node = children[node].get(w[e2 - 1])
                        if node is None:
                            break
                        if e2 >= e and (s2, e2) != (s, e) and node_tok[node] >= 0 and e2 <= min(s + lmax, n):
                            v = F[s2] + B[e2] + 1 - K
                            if outer is None or v < outer:
                                outer = v
                cands = [v for v in (inner, outer) if v is not None]
                if cands:
                    mi[t] += f * min(cands)
            s = e
    return mi


def prune_mi(order: Sequence[int], lp, mi, n_atoms: int, target: int) -> List[int]:
    """MINGRAM.md 1.7: remove the first ``min(max(0, |M| - target), #non-atomic)`` non-atomic tokens after a
    stable sort by (MI, lp) ascending; survivors keep model order. One rule for both paths (the scores
    come from :func:`mi_scores_reference` or its kernel twin)."""
    rest = [t for t in order if t >= n_atoms]
    n_rm = min(max(0, len(order) - target), len(rest))
    gone = set(sorted(rest, key=lambda t: (mi[t], lp[t]))[:n_rm])
    return [t for t in order if t not in gone]


# ---------------------------------------------------------------------------------------------------------------
# the shared rules: lp0, M-step, objective, the main loop


def initial_log_probs(seed_counts) -> np.ndarray:
    """lp0(t) = ln(max(1, c(t)) / sum_u max(1, c(u))) over the whole seed (MINGRAM.md 1.1)."""
    c = [max(1, int(x)) for x in seed_counts]
    total = sum(c)
    return np.log(np.array([x / total for x in c], dtype=np.float64))


def m_step(order: Sequence[int], usage, n_atoms: int, lp: np.ndarray):
    """MINGRAM.md 1.4: drop non-atomic tokens with usage 0 (model order kept), then lp = ln(N / sum N) over
    the kept ones (-inf for N = 0). Writes ``lp`` in place; returns ``(new order, removed)``."""
    order_arr = np.asarray(order, dtype=np.int64)
    n_used = np.asarray(usage, dtype=np.int64)[order_arr]
    keep = (order_arr < n_atoms) | (n_used > 0)
    kept_arr = order_arr[keep]
    total = int(n_used[keep].sum())
    # counts below 2**53 are exact floats, so the quotient is the correctly rounded N / sum N
    ratios = n_used[keep].astype(np.float64) / float(total) if total else np.zeros(kept_arr.size)
    with np.errstate(divide="ignore"):
        lp[kept_arr] = np.log(ratios)
    return kept_arr.tolist(), len(order) - int(kept_arr.size)


def objective(order, usage, lp, n_atoms_in_corpus: int) -> float:
    """J = -sum_t N[t] lp(t) / (atoms in the corpus); infinite when a path uses a -inf token."""
    s = 0.0
    for t in order:
        if usage[t]:
            s += int(usage[t]) * float(lp[t])
    return -s / n_atoms_in_corpus if n_atoms_in_corpus else 0.0


class MinGramResult:
    """What :func:`learn_mingram` returns: ``order`` (seed ids in final model order), ``lp`` (float64 by
    seed id, raw: -inf kept), ``usage`` (the last E-step's, by seed id) and ``metadata`` (the reference's
    fields: objective, total_tokens, tokens/pretoken, num_iterations, totals_removed), plus ``history`` (the
    model after each step, for tests and reports) and ``notes``."""

    def __init__(self, order, lp, usage, metadata, history, notes):
        self.order, self.lp, self.usage, self.metadata, self.history, self.notes = (
            order,
            lp,
            usage,
            metadata,
            history,
            notes,
        )


def learn_mingram(
    words,
    counts,
    token_atoms: Sequence[Sequence[int]],
    seed_counts,
    n_atoms: int,
    target: int,
    *,
    em_iterations: int = 2,
    score_delta: float = 1e-5,
    prune_criterion: str = "usage_count",
    refill: bool = False,
    backend: str = "python",
    n_sym: Optional[int] = None,
    progress=None,
) -> MinGramResult:
    """Hard-EM MinGram from a seed (MINGRAM.md 1.1-1.8).

    ``words``: the corpus' unique pretokens as atomic ids, either a list of lists (``backend="python"``) or
    packed ``(sym int32, offsets int64)`` (either backend); ``counts`` their counts. ``token_atoms``: the seed
    tokens' atomic sequences by seed id (ids ``0..n_atoms-1`` are the atomic tokens, which are never pruned);
    ``seed_counts``: c(t) of the seed's final segmentation; ``target``: the total size V*.

        >>> atoms = [(0,), (1,), (0, 1)]                      # a, b, ab
        >>> r = learn_mingram([[0, 1], [0, 1], [1]], [3, 1, 2], atoms, [0, 2, 4], 2, 3)
        >>> r.order, [round(x, 4) for x in r.lp]
        ([0, 1, 2], [-inf, -0.6931, -0.6931])
    """
    if isinstance(words, tuple):
        sym, offsets = words
        sym = np.ascontiguousarray(sym, dtype=np.int32)
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        bounds = offsets.tolist()
        flat = sym.tolist()
        word_lists = None if backend == "numba" else [flat[a:b] for a, b in zip(bounds, bounds[1:])]
    else:
        word_lists = [list(w) for w in words]
        lengths = np.fromiter(map(len, word_lists), np.int64, len(word_lists))
        offsets = np.zeros(len(word_lists) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        sym = np.fromiter((a for w in word_lists for a in w), np.int32, int(offsets[-1]))
    counts_arr = np.asarray(counts, dtype=np.int64) if len(counts) else np.zeros(0, np.int64)
    lengths = np.diff(offsets)
    n_tokens = len(token_atoms)
    from fastsw.corpus.counting import weighted_total  # training only: `import fastsw` leaves the counter out

    n_atoms_corpus = weighted_total(lengths, counts_arr)
    # every pretoken has an atom: no more pretokens than atoms (exact Python ints near 2**63)
    n_pretokens = int(counts_arr.sum()) if n_atoms_corpus < 2**62 else sum(int(c) for c in counts)
    counts = counts_arr if backend == "numba" else [int(c) for c in counts]
    if n_sym is None:
        n_sym = max(n_atoms, int(sym.max()) + 1 if sym.size else 1)
    lat = None
    if backend == "numba":
        from fastsw.trainers.mingram_fast import FastLattice, mi_scores_fast

        lat = FastLattice(sym, offsets, counts, token_atoms, n_sym)

    def e_step(order, lp):
        cost = costs(lp, score_delta)
        if lat is not None:
            return lat.e_step(order, cost).tolist()
        return e_step_reference(word_lists, counts, token_atoms, order, cost.tolist(), n_tokens)

    def mi_scores(order, lp):
        cost = costs(lp, score_delta)
        if lat is not None:
            return mi_scores_fast(lat, order, cost, n_atoms).tolist()
        return mi_scores_reference(word_lists, counts, token_atoms, order, cost.tolist(), n_atoms, n_tokens)

    def prune(order, lp, keep):
        if prune_criterion == "mi":
            return prune_mi(order, lp.tolist(), mi_scores(order, lp), n_atoms, keep)
        if lat is not None:  # numpy's stable sort of -lp: the same order as the reference's sorted()
            required = [t for t in order if t < n_atoms]
            rest = np.array([t for t in order if t >= n_atoms], dtype=np.int64)
            ranked = rest[np.argsort(-lp[rest], kind="stable")] if rest.size else rest
            return required + ranked[: max(0, keep - len(required))].tolist()
        return prune_usage_reference(order, lp.tolist(), n_atoms, keep)

    lp = initial_log_probs(seed_counts)
    order = list(range(n_tokens))
    removed: Dict[str, List[int]] = {"M Step Low Count": [], "Prune/Score": [], "Finalize": []}
    history: List[tuple] = [("seed", list(order), lp.copy(), None)]
    dropped: List[List[int]] = []  # refill candidates, newest first
    iterations = 0
    usage = None
    for it in range(1, MAX_OUTER_ITERATIONS + 1):
        iterations = it
        for _ in range(em_iterations):
            usage = e_step(order, lp)
            before = order
            order, n_removed = m_step(order, usage, n_atoms, lp)
            kept = set(order)
            dropped.insert(0, [t for t in before if t not in kept])
            removed["M Step Low Count"].append(n_removed)
            history.append(("em", list(order), lp.copy(), list(usage)))
            if progress is not None:
                progress.update(1)
        if len(order) <= target:
            break
        new = prune(order, lp, target)
        kept = set(new)
        dropped.insert(0, [t for t in _prune_rank(order, lp, n_atoms) if t not in kept])
        removed["Prune/Score"].append(len(order) - len(new))
        order = new
        history.append(("prune", list(order), lp.copy(), None))
    final = prune(order, lp, target) if len(order) > target else order
    removed["Finalize"].append(len(order) - len(final))
    order = final
    notes = []
    if len(order) < target and refill:
        have = set(order)
        for group in dropped:
            for t in group:
                if len(order) >= target:
                    break
                if t not in have:
                    order.append(t)
                    have.add(t)
        usage = e_step(order, lp)
        total = sum(int(usage[t]) for t in order)
        with np.errstate(divide="ignore"):
            lp[np.array(order, np.int64)] = np.log(np.array([int(usage[t]) / total for t in order], np.float64))
        history.append(("refill", list(order), lp.copy(), list(usage)))
    elif len(order) < target:
        notes.append(
            f"MinGram ended at {len(order)} tokens, {target - len(order)} below vocab_size={target} "
            "(MINGRAM.md 1.8: the seed authors' code does not refill: a larger overshoot gives a larger "
            "seed; refill=True re-adds the best dropped tokens)"
        )
    usage = e_step(order, lp)  # metadata only: lp is not re-estimated (MINGRAM.md 1.5)
    alive = np.zeros(n_tokens, bool)
    alive[np.array(order, np.int64)] = True
    lp[~alive] = np.nan
    total_tokens = sum(int(usage[t]) for t in order)
    metadata = {
        "objective": objective(order, usage, lp, n_atoms_corpus),
        "total_tokens": total_tokens,
        "tokens/pretoken": total_tokens / n_pretokens if n_pretokens else 0.0,
        "num_iterations": iterations,
        "totals_removed": removed,
    }
    return MinGramResult(order, lp, usage, metadata, history, notes)


def _prune_rank(order, lp, n_atoms):
    """Non-atomic tokens by descending lp (stable): the order the refill takes pruned tokens back in."""
    return sorted((t for t in order if t >= n_atoms), key=lambda t: float(lp[t]), reverse=True)


# ---------------------------------------------------------------------------------------------------------------
# training from fastsw's BPE seed


def seed_token_atoms(n_alpha: int, merges) -> List[Tuple[int, ...]]:
    """Each seed token's atomic sequence by id: the alphabet's ids, then merge k = left + right."""
    atoms: List[Tuple[int, ...]] = [(i,) for i in range(n_alpha)]
    for left, right, *_ in merges:
        atoms.append(atoms[left] + atoms[right])
    return atoms


def seed_counts_from_words(words, counts, n_tokens: int) -> List[int]:
    """c(t): occurrences of t in the seed's final segmentation, weighted by pretoken count. ``words`` is a list of
    id lists (reference backend) or packed ``(tokens, offsets, lengths)`` (fast backend)."""
    out = [0] * n_tokens
    if isinstance(words, tuple):
        tokens, offsets, lengths = words
        lengths = np.asarray(lengths, np.int64)
        starts = np.asarray(offsets[:-1], np.int64)
        idx = np.repeat(starts, lengths) + (
            np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        )
        acc = np.zeros(n_tokens, np.int64)
        np.add.at(acc, np.asarray(tokens, np.int64)[idx], np.repeat(np.asarray(counts, np.int64), lengths))
        return acc.tolist()
    for w, f in zip(words, counts):
        for t in w:
            out[t] += f
    return out


def train_from_seed(
    counts,
    alphabet: Alphabet,
    pretokenizer: Pretokenizer,
    profile: str,
    merges,
    words,
    vocab_size: int,
    options: dict,
    backend: str,
    info: dict,
    normalize=None,
    special_tokens=None,
    progress=None,
    token_bytes=None,
) -> "MinGramTokenizer":
    """The MinGram stage of :func:`fastsw.train`: the BPE seed's ``merges`` and final ``words`` (as the
    backend's phase 1 returns them) -> a :class:`MinGramTokenizer` of at most ``vocab_size`` tokens."""
    n_alpha = len(alphabet)
    token_atoms = seed_token_atoms(n_alpha, merges)
    seed_c = seed_counts_from_words(words, counts.counts, len(token_atoms))
    if backend == "numba":
        from fastsw.trainers.bpe_fast import pack_pretokens

        sym, offsets, _ = pack_pretokens(counts.pretokens, counts.counts, alphabet)
        corpus: Union[Tuple[np.ndarray, np.ndarray], List[List[int]]] = (sym, offsets)
    else:
        corpus = [alphabet.initial_ids(p) for p in counts.pretokens]
    t0 = time.perf_counter()
    result = learn_mingram(
        corpus,
        counts.counts,
        token_atoms,
        seed_c,
        n_alpha,
        vocab_size,
        em_iterations=options["em_iterations"],
        score_delta=options["score_delta"],
        prune_criterion=options["prune_criterion"],
        refill=options.get("refill", False),
        backend=backend,
        n_sym=n_alpha,
        progress=progress,
    )
    info["seconds"]["mingram_em"] = time.perf_counter() - t0
    info["notes"].extend(result.notes)
    ids = sorted(result.order)  # dense ids in ascending seed id
    lp_raw = [float(result.lp[t]) for t in ids]
    if token_bytes is None or len(token_bytes) != len(token_atoms):
        token_bytes = [b"".join(alphabet.tokens[a] for a in atoms) for atoms in token_atoms]
    token_bytes = [token_bytes[t] for t in ids]
    record = {
        "overshoot": options["overshoot"],
        "em_iterations": options["em_iterations"],
        "score_delta": options["score_delta"],
        "prune_criterion": options["prune_criterion"],
        "refill": bool(options.get("refill", False)),
        "seed_merges": len(merges),
        "seed_size": len(token_atoms),
        "target": vocab_size,
        "neg_inf_tokens": [i for i, x in enumerate(lp_raw) if x == _NEG_INF],
        "log_prob_floor": LOG_PROB_FLOOR,
    }
    record.update(result.metadata)
    info["mingram"] = record
    specials = {s: len(ids) + i for i, s in enumerate(special_tokens or ())}
    return MinGramTokenizer(
        alphabet=alphabet,
        tokens=[token_atoms[t] for t in ids],
        log_probs=lp_raw,
        seed_ids=ids,
        pretokenizer=pretokenizer,
        profile=profile,
        score_delta=options["score_delta"],
        special_tokens=specials,
        training_info=info,
        normalize=normalize,
        _token_bytes=token_bytes,
    )


# ---------------------------------------------------------------------------------------------------------------
# the model


class MinGramTokenizer(Tokenizer):
    """A MinGram model: tokens (atomic sequences) with log-probabilities, encoded per pretoken by the
    minimum-token-count program. The same encoding and decoding API as a BPE :class:`fastsw.Tokenizer`
    (``encode``, ``encode_ordinary``, ``encode_batch``, ``encode_to_numpy``, ``encode_batch_to_numpy``, ``encode_with_offsets``,
    ``decode``, ``decode_bytes``, ``get_vocab``, ``save``, ...); ``merges`` is empty and ``log_probs`` holds
    the scores by id (-inf floored at -100, see docs/internals.md, section "MinGram").

        >>> import fastsw
        >>> tok = fastsw.train(["hug pug pun bun hugs"] * 3, algo="mingram", vocab_size=260)
        >>> tok.algo, tok.decode(tok.encode("hugs and puns"))
        ('mingram', 'hugs and puns')
    """

    algo = "mingram"

    def __init__(
        self,
        *,
        alphabet: Alphabet,
        tokens: Sequence[Sequence[int]],
        log_probs: Sequence[float],
        pretokenizer: Pretokenizer,
        profile: str = "paper",
        score_delta: float = 1e-5,
        seed_ids: Optional[Sequence[int]] = None,
        special_tokens: Optional[Dict[str, int]] = None,
        training_info: Optional[dict] = None,
        backend: str = "auto",
        normalize: Optional[str] = None,
        _token_bytes=None,
    ):
        self._init_settings(alphabet, pretokenizer, profile, backend, normalize, training_info)
        self.score_delta = float(score_delta)
        n_alpha = len(alphabet)
        tokens = [t if type(t) is tuple else tuple(map(int, t)) for t in tokens]
        if len(tokens) != len(log_probs):
            raise ValueError(f"{len(tokens)} tokens but {len(log_probs)} log-probabilities")
        present = {t[0] for t in tokens if len(t) == 1}
        missing = [a for a in range(n_alpha) if a not in present]
        if missing:
            raise ValueError(
                f"the tokens do not cover the atomic alphabet: {len(missing)} of its {n_alpha} atomic "
                f"tokens are missing (first: id {missing[0]}, {alphabet.tokens[missing[0]]!r}); every "
                "atomic token must be in a MinGram model, or some text could not be encoded"
            )
        flat = np.fromiter(chain.from_iterable(tokens), np.int64)
        if not all(tokens) or (flat.size and (flat.min() < 0 or flat.max() >= n_alpha)):
            raise ValueError(f"a token has an empty atomic sequence or an atomic id outside 0..{n_alpha - 1}")
        self.tokens = tokens
        lp = np.array([float(x) for x in log_probs], dtype=np.float64)
        if np.isnan(lp).any() or (lp > 0).any() or (lp == np.inf).any():
            raise ValueError("log-probabilities must be numbers <= 0 (-inf allowed for atomic tokens)")
        self._raw_log_probs = lp.copy()
        lp[lp == -np.inf] = LOG_PROB_FLOOR
        self.log_probs = tuple(lp.tolist())
        self.seed_ids = tuple(int(s) for s in seed_ids) if seed_ids is not None else tuple(range(len(tokens)))
        self._cost = costs(lp, self.score_delta)
        self._shortcut_ok = bool(len(tokens) == 0 or ((self._cost <= 0).all() and (self._cost > -0.5).all()))
        if _token_bytes is None:
            _token_bytes = [b"".join(alphabet.tokens[a] for a in t) for t in tokens]
        self._token_bytes = tuple(_token_bytes)
        self._token_len = [len(t) for t in tokens]
        self._by_atoms = {t: i for i, t in enumerate(tokens)}
        self._merges = ()
        self._regular_ranks = {}
        self._super_ranks = {}
        self._set_special_tokens(special_tokens, len(tokens))
        self._plans = {}
        self._cache = {}
        self._shortcut = {}
        for i, tb in enumerate(self._token_bytes):
            self._shortcut[tb] = i  # a later id shadows an equal one, as in the trie
        self._eligible = frozenset()

    def __repr__(self) -> str:
        return (
            f"<fastsw.MinGramTokenizer profile={self.profile} vocab_size={self.vocab_size} "
            f"score_delta={self.score_delta}>"
        )

    def reachability(self):
        raise TypeError("a MinGram model has no merges, so no reachability tables")

    def encode_pretoken(self, piece: str, *, shortcut: bool = True) -> List[int]:
        """The minimum-token-count path of one pretoken (the reference program, :func:`viterbi`)."""
        atoms = self.alphabet.initial_ids(piece)
        if shortcut and self._shortcut_ok:
            tid = self._by_atoms.get(tuple(atoms))
            if tid is not None:
                return [tid]
        return viterbi(atoms, self._trie, self._cost_list, self._token_len)

    @property
    def _trie(self):
        """The reference path's dict trie, built on first use (the fast path never needs it)."""
        trie = self.__dict__.get("_ref_trie")
        if trie is None:
            trie = self._ref_trie = build_trie_reference(self.tokens, range(len(self.tokens)))
        return trie

    @property
    def _cost_list(self):
        cl = self.__dict__.get("_cl")
        if cl is None:
            cl = self._cl = self._cost.tolist()
        return cl

    def _new_fast_encoder(self):
        from fastsw.trainers.mingram_fast import MinGramFastEncoder

        return MinGramFastEncoder(self)

    # -- files ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The model file's JSON object (format ``fastsw`` version 1, ``algo: "mingram"``)."""
        data = {
            "format": "fastsw",
            "format_version": 1,
            "algo": "mingram",
            "profile": self.profile,
            "alphabet": self.alphabet.to_config(),
            "pretokenizer": self.pretokenizer.to_config(),
            "score_delta": self.score_delta,
            "log_prob_floor": LOG_PROB_FLOOR,
            "tokens": [self._token_record(i) for i in range(len(self.tokens))],
            "special_tokens": dict(self._special_tokens),
            "training": self.training_info,
            "unicode_version": UNICODE_VERSION,
        }
        if self.normalize is not None:
            data["normalize"] = self.normalize
        return data

    def _token_record(self, i: int) -> dict:
        rec = {"id": i, "hex": self._token_bytes[i].hex(), "log_prob": self.log_probs[i], "seed_id": self.seed_ids[i]}
        if not isinstance(self.alphabet, ByteAlphabet):
            rec["atoms"] = list(self.tokens[i])
        return rec

    def save(self, path) -> None:
        """Write the model (fastsw's JSON model format with ``algo: "mingram"``) atomically."""
        atomic_write_text(path, json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n")

    def inspect_json(self) -> dict:
        """``fastsw inspect MODEL --json``: ``{"algo", "vocab_size", "tokens": [{"id", "hex", "log_prob"}]}``."""
        names = {}
        atoms = getattr(self.alphabet, "atoms", None)
        if atoms:  # marker / caps-code atoms: named, not hex (their bytes are fastsw's internal codes)
            names = {self.alphabet.n_base + k: a.name for k, a in enumerate(atoms)}  # type: ignore[attr-defined]

        def record(i):
            t = self.tokens[i]
            if len(t) == 1 and t[0] in names:
                return {"id": i, "atomic": names[t[0]], "log_prob": self.log_probs[i]}
            return {"id": i, "hex": self._token_bytes[i].hex(), "log_prob": self.log_probs[i]}

        return {
            "algo": "mingram",
            "profile": self.profile,
            "vocab_size": self.vocab_size,
            "score_delta": self.score_delta,
            "tokens": [record(i) for i in range(len(self.tokens))],
        }

    @classmethod
    def load(cls, path) -> Tokenizer:
        """Read a model written by :meth:`save` (or any fastsw model file; see :func:`fastsw.load`)."""
        return Tokenizer.load(path)


def mingram_from_data(path, data: dict) -> dict:
    """The :class:`MinGramTokenizer` keyword arguments of a parsed ``algo: "mingram"`` model file; every
    failure is a ``ValueError`` naming the file and field."""

    def bad(field, problem):
        return ValueError(f"{path}: field {field}: {problem}")

    known = model_fields("score_delta", "log_prob_floor", "tokens")
    for field in data:
        if field not in known:
            raise bad(field, f"unknown field; a MinGram model has {', '.join(known)}")
    for field in ("profile", "alphabet", "pretokenizer", "tokens"):
        if field not in data:
            raise bad(field, "missing")
    try:
        alphabet = alphabet_from_config(data["alphabet"])
        pretokenizer = Pretokenizer.from_config(data["pretokenizer"])
    except (ValueError, TypeError, KeyError) as e:
        raise ValueError(f"{path}: invalid model file: {e}") from e
    score_delta = data.get("score_delta", DEFAULTS["score_delta"])
    try:
        check_mingram_options(None, None, score_delta, None)
    except ValueError as e:
        raise bad("score_delta", str(e)) from None
    tokens_in = data["tokens"]
    if not isinstance(tokens_in, list):
        raise bad("tokens", "must be an array of {id, hex, log_prob}")
    tokens, lps, seeds = [], [], []
    first_of: dict = {}  # a token's atoms -> its id: each token once
    for i, rec in enumerate(tokens_in):
        if not isinstance(rec, dict) or rec.get("id") != i:
            raise bad(f"tokens[{i}]", f"must be an object with id {i} (tokens are stored in id order)")
        try:
            tb = bytes.fromhex(rec["hex"])
            lp = float(rec["log_prob"])
        except (KeyError, TypeError, ValueError) as e:
            raise bad(f"tokens[{i}]", f"needs hex (the token's bytes) and log_prob ({e})") from e
        if "atoms" in rec:
            atoms = rec["atoms"]
        elif isinstance(alphabet, ByteAlphabet):
            atoms = [alphabet.id_of_byte(b) for b in tb]
        else:
            raise bad(f"tokens[{i}]", "needs atoms (the atomic ids) for a non-byte alphabet")
        try:
            first = first_of.setdefault(tuple(atoms), i)
        except TypeError:
            raise bad(f"tokens[{i}]", f"atoms must be an array of atomic ids, not {atoms!r:.60}") from None
        if first != i:
            raise bad(
                f"tokens[{i}]",
                f"has the same bytes as tokens[{first}] ({tb!r:.60}); a MinGram vocabulary "
                "holds each token once, so the file was damaged or edited",
            )
        tokens.append(atoms)
        lps.append(lp)
        seeds.append(rec.get("seed_id", i))
    kwargs = {
        "alphabet": alphabet,
        "tokens": tokens,
        "log_probs": lps,
        "seed_ids": seeds,
        "pretokenizer": pretokenizer,
        "profile": data["profile"],
        "score_delta": score_delta,
        "special_tokens": data.get("special_tokens", {}),
        "training_info": data.get("training", {}),
    }
    if data.get("normalize") is not None:
        kwargs["normalize"] = data["normalize"]
    return kwargs


# ---------------------------------------------------------------------------------------------------------------
# the fast path (fastsw.trainers.mingram_fast)


def warmup() -> None:
    """Compile (or load from Numba's cache) the MinGram kernels, one signature each."""
    atoms = [(0,), (1,), (0, 1)]
    for backend_words in (([0, 1, 1], [0, 2, 3]),):
        sym = np.array(backend_words[0], np.int32)
        off = np.array(backend_words[1], np.int64)
        learn_mingram((sym, off), [2, 1], atoms, [0, 1, 2], 2, 3, backend="numba", prune_criterion="mi")


# ---------------------------------------------------------------------------------------------------------------
# interop: the seed authors' semingram-v1 files

_NORMALIZATIONS = {None: None, "NFC": "nfc", "NFKC": "nfkc"}


def load_semingram(path, *, allow_approximate: bool = False) -> MinGramTokenizer:
    """Load a model file of the seed authors' MinGram (``info.version == "semingram-v1"``, JSON, gzipped when
    the name ends in ``.gz``; ``-Infinity``/``Infinity`` literals accepted) whose pre-tokenizer fastsw
    implements: ``UTF8Pretokenizer`` (byte-level atoms ``starting_token_id + byte``) with a regex (fastsw's
    ``simple`` mode with that pattern) or without one (``none`` mode), NFC/NFKC or no normalization. Their
    ``ScriptPretokenizer`` (SCRIPT block/index atoms) and digit-group tokens are not implemented: a
    ``ValueError`` says so.

    Ids are dense in **ascending original id** (the nanochat adapter's scheme, not ``reindex=True``'s file
    order), so the 256 byte tokens come first in byte order; the alphabet is ``bytes256`` (profile ``hf``).
    Scores: ``metadata.config.score_delta`` (default 1e-5); -inf is floored at -100 (MINGRAM.md 3), as for every
    :class:`MinGramTokenizer`. Differences that remain: the authors' pre-tokenizer drops unassigned and
    private-use code points (``remove_unassigned``) and ``re.findall`` drops text no regex alternative matches;
    fastsw keeps both as bytes (the default GPT-4o pattern matches every character). A file with
    ``remove_unassigned`` set is therefore refused (``ValueError``) unless ``allow_approximate=True``, as every
    import and export that would not be exact."""
    import gzip

    path = Path(path)
    try:
        raw = (
            gzip.open(path, "rt", encoding="utf-8").read()
            if path.name.endswith(".gz")
            else path.read_text(encoding="utf-8")
        )
        data = json.loads(raw)
    except FileNotFoundError:
        raise ValueError(f"{path}: model file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, EOFError) as e:
        raise ValueError(f"{path}: not a readable semingram-v1 JSON file ({e})") from e
    version = (data.get("info") or {}).get("version") if isinstance(data, dict) else None
    if version != "semingram-v1":
        raise ValueError(
            f"{path}: info.version is {version!r}, not 'semingram-v1' (a fastsw model loads with fastsw.load)"
        )
    pt = data.get("pretokenizer") or {}
    cls, cfg = pt.get("config_class"), pt.get("config") or {}
    if cls != "UTF8Pretokenizer":
        raise ValueError(
            f"{path}: pretokenizer {cls!r} is not one fastsw implements (only the byte-level "
            "UTF8Pretokenizer imports; SCRIPT encodings have no fastsw pre-tokenizer)"
        )
    if cfg.get("digit_handling") is not None:
        raise ValueError(
            f"{path}: digit_handling={cfg['digit_handling']!r} adds digit-group atoms that fastsw's "
            "pre-tokenizers do not produce"
        )
    if cfg.get("normalization") not in _NORMALIZATIONS:
        raise ValueError(f"{path}: normalization {cfg.get('normalization')!r} is not one of NFC, NFKC or none")
    start = cfg.get("starting_token_id", 1)
    pattern = cfg.get("regex_pattern")
    pretok = Pretokenizer(mode="none") if pattern is None else Pretokenizer(mode="simple", main_pattern=pattern)
    alphabet = ByteAlphabet("bytes256")
    records = data.get("tokens")
    if not isinstance(records, list):
        raise ValueError(f"{path}: field tokens must be a list of {{id, atomic_tokens, log_prob}}")
    try:
        records = sorted(records, key=lambda r: int(r["id"]))
        tokens = [
            [alphabet.id_of_byte(int(a) - start) if 0 <= int(a) - start < 256 else -1 for a in r["atomic_tokens"]]
            for r in records
        ]
        lps = [float(r["log_prob"]) for r in records]
        seeds = [int(r["id"]) for r in records]
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: field tokens: each needs id, atomic_tokens and log_prob ({e})") from e
    if any(-1 in t for t in tokens):
        raise ValueError(f"{path}: an atomic id is outside {start}..{start + 255} (the byte atoms)")
    config = (data.get("metadata") or {}).get("config") or {}
    info = {
        "imported": {
            "format": "semingram-v1",
            "path": str(path),
            "ids": "dense, ascending original id",
            "metadata": data.get("metadata"),
            "pretokenizer": pt,
        }
    }
    try:
        tok = MinGramTokenizer(
            tokens=tokens,
            log_probs=lps,
            seed_ids=seeds,
            score_delta=float(config.get("score_delta", DEFAULTS["score_delta"])),
            alphabet=alphabet,
            pretokenizer=pretok,
            normalize=_NORMALIZATIONS[cfg.get("normalization")],
            profile="hf",
            training_info=info,
        )
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from e
    if cfg.get("remove_unassigned") and not allow_approximate:
        raise approximate_error(
            f"{path}: fastsw's import of this model",
            [
                "its pre-tokenizer drops unassigned and private-use code points (remove_unassigned), fastsw encodes "
                "them as bytes, so texts with such characters get other tokens"
            ],
        )
    return tok
