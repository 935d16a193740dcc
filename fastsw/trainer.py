"""Training driver: counting, phase 1, aggregation, phase 2 (SPEC sections 4-6).

``train`` streams documents once: each is pre-tokenized, its pretokens are
counted, and (for the superword algorithms) its *letter runs* are aggregated
(see :mod:`fastsw.superword`). Everything after that works on aggregated counts
only, so a corpus larger than memory trains as long as its counts fit.
"""
from __future__ import annotations

import os
import time
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .alphabet import Alphabet, CharAlphabet, default_alphabet, get_profile
from .bpe import learn_merges
from .pretokenize import Pretokenizer, make_pretokenizer
from .progress import Progress
from .readers import iter_documents
from .superword import (aggregate_candidates, boundless_phase2, interleave, split_candidates,
                        superbpe_phase2)
from .tokenizer import ALGOS, Tokenizer


class Counts:
    """Aggregated pretokens (and letter runs) of a corpus.

    ``pretokens[i]`` occurs ``counts[i]`` times; ``letter_runs`` maps runs of
    pretoken indices (maximal runs of >= 2 letter-containing pretokens inside one
    document) to their counts.
    """

    def __init__(self):
        self.index: Dict[str, int] = {}
        self.pretokens: List[str] = []
        self.counts: List[int] = []
        self.has_letter: List[bool] = []
        self.letter_runs: Dict[Tuple[int, ...], int] = {}
        self.n_documents = 0
        self.n_bytes = 0


def count_corpus(documents: Iterable[str], pretokenizer: Pretokenizer, *, collect_runs: bool,
                 progress: Optional[Progress] = None) -> Counts:
    """Stream ``documents`` once; aggregate pretokens (and letter runs)."""
    c = Counts()
    index, counts, letter = c.index, c.counts, c.has_letter
    runs = c.letter_runs
    for doc in documents:
        run: List[int] = []
        for piece in pretokenizer.pretokenize(doc):
            i = index.get(piece)
            if i is None:
                i = index[piece] = len(c.pretokens)
                c.pretokens.append(piece)
                counts.append(0)
                letter.append(pretokenizer.has_letter(piece))
            counts[i] += 1
            if not collect_runs:
                continue
            if letter[i]:
                run.append(i)
            else:
                if len(run) >= 2:
                    key = tuple(run)
                    runs[key] = runs.get(key, 0) + 1
                run = []
        if len(run) >= 2:
            key = tuple(run)
            runs[key] = runs.get(key, 0) + 1
        c.n_documents += 1
        c.n_bytes += len(doc.encode("utf-8", "surrogatepass"))
        if progress is not None:
            progress.update(1, extra=f"docs, {c.n_bytes / 1e6:.1f} MB")
    return c


def phase1(counts: Counts, alphabet: Alphabet, profile: str, n_merges: int, progress=None,
           learn=learn_merges):
    """Phase-1 BPE over aggregated pretokens.

    Returns ``(merges, words, token_bytes)``: merges ``(left, right, count)`` in
    rank order, each pretoken's final token sequence, and the vocabulary bytes.
    """
    words = [alphabet.initial_ids(p) for p in counts.pretokens]
    token_bytes = list(alphabet.tokens)
    merges, words = learn(words, counts.counts, token_bytes, get_profile(profile), n_merges,
                          progress=progress)
    return merges, words, token_bytes


def phase1_tokenizer(alphabet, merges, pretokenizer, profile) -> Tokenizer:
    return Tokenizer(alphabet=alphabet, merges=[(l, r, c, False) for l, r, c in merges],
                     pretokenizer=pretokenizer, profile=profile, algo="bpe")


def candidates(counts: Counts, words: Sequence[Sequence[int]], tok1: Tokenizer) -> Dict[Tuple[int, ...], int]:
    """Supermerge candidates (tuples of phase-1 token ids -> count)."""
    single = [w[0] if len(w) == 1 and tok1.is_eligible(w[0]) else -1 for w in words]
    return aggregate_candidates(counts.letter_runs, single)




class _Engine:
    """The merge-loop implementations of one backend."""

    def __init__(self, name, learn_merges, boundless_phase2, superbpe_phase2, warmup_seconds=None):
        self.name = name
        self.learn_merges = learn_merges
        self.boundless_phase2 = boundless_phase2
        self.superbpe_phase2 = superbpe_phase2
        self.warmup_seconds = warmup_seconds


BACKENDS = ("auto", "numba", "python")


def _engine(backend: str, progress: bool) -> _Engine:
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} is not one of {', '.join(BACKENDS)}")
    if backend == "auto":
        backend = "python" if os.environ.get("FASTSW_PUREPYTHON") == "1" else "numba"
    if backend == "python":
        return _Engine("python", learn_merges, boundless_phase2, superbpe_phase2)
    from . import fast  # imports numba: only when the fast path is used
    # Compiling the kernel takes seconds on the first run; later runs load it from
    # Numba's cache. Either way it is timed and shown, never hidden in a stage.
    with Progress("loading Numba kernels (compiled on first use)", enabled=progress) as bar:
        fast.warmup()
    return _Engine("numba", fast.learn_merges_fast, fast.boundless_phase2_fast, fast.superbpe_phase2_fast,
                   warmup_seconds=time.perf_counter() - bar.start)


def _check_options(algo, vocab_size, supermerges, profile, alphabet, greedy_split, min_count_floor,
                   max_ngram_len):
    if algo not in ALGOS:
        raise ValueError(f"algo={algo!r} is not one of {', '.join(ALGOS)}")
    get_profile(profile)
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool) or vocab_size <= 0:
        raise ValueError(f"vocab_size must be a positive integer, not {vocab_size!r}")
    if algo == "superbpe":
        if supermerges is None:
            raise ValueError("algo='superbpe' needs supermerges=S, the number of supermerges "
                             "(phase 1 then learns vocab_size - S tokens)")
        if not isinstance(supermerges, int) or supermerges <= 0:
            raise ValueError(f"supermerges must be a positive integer, not {supermerges!r}")
        if supermerges >= vocab_size:
            raise ValueError(f"supermerges={supermerges} must be smaller than vocab_size={vocab_size}")
    elif supermerges is not None:
        raise ValueError(f"supermerges is only used with algo='superbpe' (got algo={algo!r}); "
                         "BoundlessBPE decides the number of supermerges itself")
    if alphabet not in ("bytes", "chars"):
        raise ValueError(f"alphabet={alphabet!r} is not one of 'bytes', 'chars'")
    if alphabet == "chars" and profile != "hf":
        raise ValueError("the character-level alphabet follows the 'hf' rules (overlapping counts, id "
                         "ties); pass profile='hf'")
    if alphabet == "bytes":  # known before reading the corpus: fail fast
        n_alpha = len(default_alphabet(profile))
        if vocab_size - (supermerges or 0) < n_alpha:
            raise ValueError(f"vocab_size={vocab_size}{' - supermerges' if supermerges else ''} is smaller "
                             f"than the {n_alpha}-token alphabet; use vocab_size >= "
                             f"{n_alpha + 1 + (supermerges or 0)}")
    if greedy_split and algo == "bpe":
        raise ValueError("greedy_split splits supermerge candidates; use it with algo='boundless' or 'superbpe'")
    if not isinstance(min_count_floor, int) or min_count_floor < 0:
        raise ValueError(f"min_count_floor must be a non-negative integer, not {min_count_floor!r}")
    if not isinstance(max_ngram_len, int) or max_ngram_len < 2:
        raise ValueError(f"max_ngram_len must be an integer >= 2, not {max_ngram_len!r}")


def train(inputs, *, algo: str = "bpe", vocab_size: int, supermerges: Optional[int] = None,
          profile: str = "paper", pretokenizer="script", alphabet: str = "bytes",
          byte_fallback: bool = False, greedy_split: bool = False, min_count_floor: int = 15,
          max_ngram_len: int = 30, special_tokens: Sequence[str] = (), text_field: str = "text",
          doc_mode: str = "auto", separator: Optional[str] = None, progress: bool = False,
          backend: str = "auto") -> Tokenizer:
    """Train a BPE, BoundlessBPE or SuperBPE tokenizer.

    Args:
        inputs: a path (``str`` or ``os.PathLike``; ``.jsonl``, ``.jsonl.gz``, plain
            text), or an iterable whose items are documents (``str``) or files
            (``pathlib.Path``). Streamed once.
        algo: ``"bpe"``, ``"boundless"`` (Algorithm 1 decides the regular/supermerge
            split) or ``"superbpe"`` (``supermerges`` fixed supermerges).
        vocab_size: total vocabulary (alphabet + merges; special tokens excluded).
            For SuperBPE, phase 1 learns ``vocab_size - supermerges``.
        profile: ``"paper"`` (reproduces the paper's reference implementation) or
            ``"hf"`` (reproduces HF tokenizers' BpeTrainer).
        pretokenizer: ``"script"`` (default), ``"simple"``, a config dict or a
            :class:`~fastsw.pretokenize.Pretokenizer`.
        alphabet: ``"bytes"`` (the profile's byte alphabet) or ``"chars"``
            (seed 001's character-level variant; needs ``profile="hf"``), with
            ``byte_fallback`` for characters outside it.
        greedy_split: split supermerge candidates into frequent n-grams
            (Algorithm 2) with ``min_count = max(c_min, min_count_floor)`` and n-grams
            up to ``max_ngram_len``.
        special_tokens: strings given ids after the vocabulary (off by default).
        text_field, doc_mode, separator: how files are read (see
            :func:`fastsw.readers.iter_documents`).
        progress: draw progress bars on stderr.
        backend: ``"numba"`` (the fast merge kernels), ``"python"`` (the plain
            reference path) or ``"auto"`` (numba unless ``FASTSW_PUREPYTHON=1``).
            Both give identical models.

    Returns a :class:`Tokenizer`; ``tok.training_info`` holds the stage timings,
    corpus statistics and notes (e.g. that pairs ran out before ``vocab_size``).
    """
    _check_options(algo, vocab_size, supermerges, profile, alphabet, greedy_split, min_count_floor,
                   max_ngram_len)
    special_tokens = list(special_tokens)
    if len(set(special_tokens)) != len(special_tokens) or any(not isinstance(s, str) or not s
                                                              for s in special_tokens):
        raise ValueError("special_tokens must be distinct non-empty strings")
    pretok = make_pretokenizer(pretokenizer)
    prof = get_profile(profile)
    engine = _engine(backend, progress)
    info: dict = {"backend": engine.name, "options": {"algo": algo, "vocab_size": vocab_size, "supermerges": supermerges,
                              "profile": profile, "greedy_split": greedy_split,
                              "min_count_floor": min_count_floor, "max_ngram_len": max_ngram_len},
                  "seconds": {}, "notes": []}

    documents = iter_documents(inputs, text_field=text_field, doc_mode=doc_mode, separator=separator)
    bar = Progress("pre-tokenizing", enabled=progress)
    counts = count_corpus(documents, pretok, collect_runs=algo != "bpe", progress=bar)
    info["seconds"]["pretokenize_and_count"] = bar.close()
    info["documents"] = counts.n_documents
    info["bytes"] = counts.n_bytes
    info["unique_pretokens"] = len(counts.pretokens)

    if alphabet == "bytes":
        alpha: Alphabet = default_alphabet(profile)
    else:
        alpha = CharAlphabet({ch for p in counts.pretokens for ch in p}, byte_fallback=byte_fallback)
    n_alpha = len(alpha)
    if vocab_size < n_alpha:
        raise ValueError(f"vocab_size={vocab_size} is smaller than the {n_alpha}-token alphabet; "
                         f"use vocab_size >= {n_alpha}")
    n_super = supermerges if algo == "superbpe" else 0
    n_phase1 = vocab_size - n_alpha - n_super
    if n_phase1 < 0:
        raise ValueError(f"vocab_size - supermerges = {vocab_size - n_super} is smaller than the "
                         f"{n_alpha}-token alphabet")

    bar = Progress("phase 1 merges", total=n_phase1, enabled=progress)
    merges1, words, token_bytes = phase1(counts, alpha, profile, n_phase1, progress=bar,
                                         learn=engine.learn_merges)
    info["seconds"]["phase1"] = bar.close()
    if engine.warmup_seconds is not None:
        info["seconds"]["jit_warmup"] = engine.warmup_seconds
    if len(merges1) < n_phase1:
        info["notes"].append(f"pairs ran out after {len(merges1)} of {n_phase1} phase-1 merges; "
                             "the model is smaller than requested")

    if algo == "bpe":
        merges = [(l, r, c, False) for l, r, c in merges1]
    else:
        t0 = time.perf_counter()
        tok1 = phase1_tokenizer(alpha, merges1, pretok, profile)
        cands = candidates(counts, words, tok1)
        info["unique_candidates"] = len(cands)
        if greedy_split:
            c_min = merges1[-1][2] if merges1 else 0
            cands = split_candidates(cands, c_min, min_count_floor, max_ngram_len)
            info["unique_candidates_after_split"] = len(cands)
        info["seconds"]["aggregate_candidates"] = time.perf_counter() - t0
        token_bytes = list(tok1.vocab)
        if algo == "boundless":
            bar = Progress("phase 2 (BoundlessBPE)", total=len(merges1), enabled=progress)
            steps = engine.boundless_phase2(merges1, cands, token_bytes, n_alpha, prof, progress=bar)
            merges = interleave(steps, n_alpha)
            n_reg = sum(kind == "r" for kind, *_ in steps)
            if len(merges) < len(merges1):
                info["notes"].append(
                    f"BoundlessBPE stopped at vocabulary {n_alpha + len(merges)}: no supermerge pair was left, "
                    f"so the remaining {len(merges1) - n_reg} regular merges were dropped (Algorithm 1's "
                    "loop condition); use algo='bpe' for a plain model")
        else:
            bar = Progress("phase 2 (SuperBPE)", total=n_super, enabled=progress)
            supers = engine.superbpe_phase2(cands, token_bytes, n_super, prof, progress=bar)
            merges = [(l, r, c, False) for l, r, c in merges1] + [(l, r, c, True) for l, r, c in supers]
            if len(supers) < n_super:
                info["notes"].append(f"supermerge pairs ran out after {len(supers)} of {n_super} "
                                     "supermerges")
        info["seconds"]["phase2"] = bar.close()

    vocab_total = n_alpha + len(merges)
    specials = {s: vocab_total + i for i, s in enumerate(special_tokens)}
    tok = Tokenizer(alphabet=alpha, merges=merges, pretokenizer=pretok, profile=profile, algo=algo,
                    special_tokens=specials, training_info=info)
    info["regular_merges"] = tok.n_regular
    info["supermerges"] = tok.n_super
    return tok
