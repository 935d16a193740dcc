"""Training driver: counting, phase 1, aggregation, phase 2 (SPEC sections 4-6).

``train`` streams documents once: each is pre-tokenized, its pretokens are
counted, and (for the superword algorithms) its *letter runs* are aggregated
(see :mod:`fastsw.corpus.counting` and :mod:`fastsw.trainers.superword`). Everything after that
works on aggregated counts only, so a corpus larger than memory trains as long
as its counts fit; ``train(from_counts=...)`` starts from saved count tables
instead of text and gives the same model.

The stages after counting are the methods of one backend object per run,
:class:`fastsw.trainers.superword.ReferenceBackend` or :class:`fastsw.trainers.bpe_fast.FastBackend`
(same methods, same results); ``train`` never asks which one it has.
"""
from __future__ import annotations

import os
import time
import warnings
from fractions import Fraction
from numbers import Real
from typing import Any, Mapping, Optional, Sequence, Union

from fastsw._config import resolve_backend
from fastsw._types import Number, PathLike, PretokenizerSpec, TrainInputs
from fastsw.alphabet import PROFILE_ALPHABETS, Alphabet, CharAlphabet, default_alphabet, get_profile
from fastsw.corpus.counting import (PARALLEL_MIN_BYTES, Counts, count_corpus, count_corpus_parallel,  # noqa: F401 (re-exported)
                       as_integer, capped_workers, count_languages, default_workers, int64_overflow,
                       language_weights, load_counts, native_counting, weighted_counts)
from fastsw.pretokenizers.base import BasePretokenizer
from fastsw.pretokenizers.pretokenize import Pretokenizer, check_normalize, make_pretokenizer
from fastsw.notes import OptionWarning, VocabularyNotReachedWarning
from fastsw.trainers.parity import EXHAUSTED as PARITY_EXHAUSTED, VARIANTS as PARITY_VARIANTS, learn_parity_merges
from fastsw.progress import Progress
from fastsw.corpus.readers import iter_documents, iter_language_documents
from fastsw.trainers.superword import ReferenceBackend, interleave
from fastsw.tokenizer import ALGOS, Tokenizer


def phase1_tokenizer(alphabet, merges, pretokenizer, profile) -> Tokenizer:
    return Tokenizer(alphabet=alphabet, merges=[(l, r, c, False) for l, r, c in merges],
                     pretokenizer=pretokenizer, profile=profile, algo="bpe")


#: The largest ``vocab_size`` accepted (ids and counts are 64-bit). Any size beyond what the corpus can reach
#: costs what a reachable one costs: the merge loops stop when pairs run out.
MAX_VOCAB_SIZE = (1 << 63) - 1


#: Said once (with ``progress``) when Numba's on-disk cache is cold and the training kernels compile (the merge
#: loop and the candidate cut; ``python bench/bench_coldstart.py`` measures it).
COMPILE_NOTICE = "compiling the training kernels (first run only, ~10 s)"


def _backend(backend: str, progress: bool):
    """The stages of one run: :class:`ReferenceBackend`, or :class:`fastsw.trainers.bpe_fast.FastBackend` once the
    Numba kernels are loaded."""
    if resolve_backend(backend) == "python":
        return ReferenceBackend()
    from fastsw.trainers import bpe_fast as fast_train  # imports numba: only when the fast path is used
    # Compiling the training kernels takes seconds on the first run; later runs load them from Numba's
    # cache. Either way it is timed and shown, never hidden in a stage. The encoding kernels are not
    # among them: the model's reachability check takes the reference path while they are not compiled
    # (fastsw.encoding.encode_fast.kernels_ready), so a training run compiles only what it runs.
    with Progress("loading Numba kernels", enabled=progress) as bar:
        def say_compiling():
            if progress:
                bar.stream.write(COMPILE_NOTICE + "\n")
                bar.stream.flush()

        with fast_train.compile_notice(say_compiling):
            fast_train.warmup()
    return fast_train.FastBackend(warmup_seconds=time.perf_counter() - bar.start)


def _backend_for_weighted(counts: Counts, backend: str, stages, scale: str):
    """``(stages, note)``: ``stages`` when the weighted ``counts`` fit the 64-bit kernels; else the reference
    path over exact Python ints, with the note that says so (also warned, from backend="auto"; backend="numba"
    is an error)."""
    reason = int64_overflow(counts)
    if reason is None:
        return stages, None
    factor = Fraction(scale)
    try:
        shown = f"{float(factor):.3g}"
    except OverflowError:  # a weight such as 1e-400: the scale has hundreds of digits
        shown = f"1e{len(str(factor.numerator // factor.denominator)) - 1}"
    reason = (f"the weighted counts (scaled to exact integers, x{shown}) are too large for "
              f"64-bit training: {reason}")
    if stages.name == "numba" and backend == "numba":
        raise ValueError(f"{reason}; backend='numba' counts in 64 bits: use backend='python' (exact, slower), or "
                         "round the weights or shares to a few digits")
    note = None
    if stages.name == "numba":
        note = (f"{reason}; training on backend='python' (exact big integers, slower) instead of numba; "
                "round the weights or shares to a few digits to train on numba")
        warnings.warn(note, OptionWarning, stacklevel=3)
    return ReferenceBackend(big_counts=True), note


def __getattr__(name: str):  # the reference stages under their names before the training seam (deprecated)
    if name not in ("phase1", "candidates"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"fastsw.trainer.{name} is deprecated; use fastsw.trainers.superword.ReferenceBackend().{name}",
                  DeprecationWarning, stacklevel=2)
    return getattr(ReferenceBackend(), name)


#: What ``train(algo=...)`` takes: the model algorithms, plus ``"parity-bpe"``, which trains a plain BPE model
#: (saved with algo ``"bpe"``; ``training_info["parity"]`` records the parity run).
TRAIN_ALGOS = ALGOS + ("parity-bpe", "mingram")


def _check_options(algo, vocab_size, supermerges, profile, alphabet, greedy_split, min_count_floor,
                   max_ngram_len):
    """Check train()'s options; return the integer ones as ints ``(vocab_size, supermerges, min_count_floor,
    max_ngram_len)`` (any ``numbers.Integral`` but ``bool`` is an integer, e.g. ``numpy.int64(300)``)."""
    if algo not in TRAIN_ALGOS:
        raise ValueError(f"algo={algo!r} is not one of {', '.join(TRAIN_ALGOS)}")
    get_profile(profile)
    if as_integer(vocab_size) is None or vocab_size <= 0:
        raise ValueError(f"vocab_size must be a positive integer, not {vocab_size!r}")
    vocab_size = as_integer(vocab_size)
    if vocab_size > MAX_VOCAB_SIZE:
        raise ValueError(f"vocab_size={vocab_size} is beyond 2**63-1, the largest fastsw accepts; use a smaller "
                         "vocab_size (any size beyond what the corpus can reach gives the same model, with a note "
                         "that pairs ran out)")
    if algo == "superbpe":
        if supermerges is None:
            raise ValueError("algo='superbpe' needs supermerges=S, the number of supermerges "
                             "(phase 1 then learns vocab_size - S tokens)")
        if as_integer(supermerges) is None or supermerges <= 0:
            raise ValueError(f"supermerges must be a positive integer, not {supermerges!r}")
        supermerges = as_integer(supermerges)
        if supermerges >= vocab_size:
            raise ValueError(f"supermerges={supermerges} must be smaller than vocab_size={vocab_size}")
    elif supermerges is not None:
        raise ValueError(f"supermerges is only used with algo='superbpe' (got algo={algo!r}); "
                         "BoundlessBPE decides the number of supermerges itself")
    if alphabet not in ("bytes", "chars"):
        raise ValueError(f"alphabet={alphabet!r} is not one of 'bytes', 'chars'")
    if alphabet == "chars" and "chars" not in PROFILE_ALPHABETS[profile]:
        raise ValueError("the character-level alphabet follows the 'hf' rules (overlapping counts, id "
                         "ties); pass profile='hf'")
    if alphabet == "bytes":  # known before reading the corpus: fail fast
        n_alpha = len(default_alphabet(profile))
        if vocab_size - (supermerges or 0) < n_alpha:
            raise ValueError(f"vocab_size={vocab_size}{' - supermerges' if supermerges else ''} is smaller "
                             f"than the {n_alpha}-token alphabet; use vocab_size >= "
                             f"{n_alpha + 1 + (supermerges or 0)}")
    if greedy_split and algo in ("bpe", "parity-bpe", "mingram"):
        raise ValueError("greedy_split splits supermerge candidates; use it with algo='boundless' or 'superbpe'")
    if as_integer(min_count_floor) is None or min_count_floor < 0:
        raise ValueError(f"min_count_floor must be a non-negative integer, not {min_count_floor!r}")
    if as_integer(max_ngram_len) is None or max_ngram_len < 2:
        raise ValueError(f"max_ngram_len must be an integer >= 2, not {max_ngram_len!r}")
    return vocab_size, supermerges, as_integer(min_count_floor), as_integer(max_ngram_len)


def _counting_workers(inputs, workers: Optional[int], collect_runs: bool) -> int:
    """``train``'s rule for ``workers=None``: all cores when ``inputs`` are files (a path, or a list/tuple of
    ``os.PathLike``) holding at least ``PARALLEL_MIN_BYTES`` (16 MB) on disk; otherwise one (in-process).

    With letter runs (BoundlessBPE, SuperBPE) the default is one process unless there
    are at least 4 cores: runs are mostly unique, so every worker's table is about as
    large as its share of the text and the serial merge ate the gain (measured on 2
    cores: 18.6 MB/s serial, 18.9 MB/s with 2 workers, on 10 MB of English).

    A given ``workers`` above the cores is capped at them, with an :class:`~fastsw.notes.OptionWarning`."""
    if workers is not None:
        if as_integer(workers) is None or workers < 1:
            raise ValueError(f"workers must be a positive integer (or None: all cores for large input files), "
                             f"not {workers!r}")
        n, note = capped_workers(as_integer(workers), default_workers(), f"workers={workers}")
        if note:
            warnings.warn(note, OptionWarning, stacklevel=3)  # at train()'s caller
        return n
    if isinstance(inputs, (str, os.PathLike)):
        paths = [inputs]
    elif isinstance(inputs, (list, tuple)) and inputs and all(isinstance(x, os.PathLike) for x in inputs):
        paths = list(inputs)
    else:
        return 1
    if collect_runs and default_workers() < 4:
        return 1
    size = 0
    for path in paths:
        try:
            size += os.path.getsize(path)
        except OSError:
            pass  # the reader reports missing files with a clear message
    return default_workers() if size >= PARALLEL_MIN_BYTES else 1


def _pretokenizer_for_counts(counts: Counts, pretokenizer) -> BasePretokenizer:
    if counts.pretokenizer_config is None:
        raise ValueError("the count table does not record its pretokenizer; count it with fastsw.corpus.counting "
                         "(count_corpus or 'fastsw count')")
    pretok = Pretokenizer.from_config(counts.pretokenizer_config)
    if pretokenizer is not None and make_pretokenizer(pretokenizer) != pretok:
        raise ValueError(f"pretokenizer={pretokenizer!r} differs from the pretokenizer the counts were made with "
                         f"({pretok!r}); leave pretokenizer unset to use the counts' own")
    return pretok


_PARITY_OPTIONS = ("dev", "ratios", "global_merges", "parity_variant", "window", "alpha", "min_frequency",
                   "parity_exhausted")


def _check_mingram_options(algo, phase1, overshoot, em_iterations, score_delta, prune_criterion, refill):
    """MinGram's options with defaults (:func:`fastsw.trainers.mingram.check_mingram_options`), or None for another algo
    (then none of them may be given)."""
    given = [name for name, v in (("overshoot", overshoot), ("em_iterations", em_iterations),
                                  ("score_delta", score_delta), ("prune_criterion", prune_criterion)) if v is not None]
    if refill:
        given.append("refill")
    if algo != "mingram":
        if given:
            raise ValueError(f"{given[0]}= applies to MinGram; add algo='mingram'")
        return None
    if phase1 is not None:
        raise ValueError("phase1= applies to algo='boundless'/'superbpe'; MinGram's seed is plain BPE")
    from fastsw.trainers.mingram import check_mingram_options
    options = check_mingram_options(overshoot, em_iterations, score_delta, prune_criterion)
    options["refill"] = bool(refill)
    return options


def _check_parity_options(algo, phase1, options: dict, weights, shares) -> Optional[dict]:
    """The parity-aware options of ``train`` with their defaults, or None when phase 1 is plain BPE (then none
    of them may be given). Checked before any text is read."""
    if phase1 not in (None, "bpe", "parity-bpe"):
        raise ValueError(f"phase1={phase1!r} is not one of 'bpe', 'parity-bpe'")
    if phase1 is not None and algo in ("bpe", "parity-bpe"):
        raise ValueError(f"phase1= chooses the phase-1 trainer of algo='boundless' or 'superbpe' (got algo={algo!r})"
                         "; for a plain parity-aware model use algo='parity-bpe'")
    given = [name for name in _PARITY_OPTIONS if options[name] is not None]
    if algo != "parity-bpe" and phase1 != "parity-bpe":
        if given:
            raise ValueError(f"{given[0]}= applies to parity-aware BPE; add algo='parity-bpe' (or phase1='parity-bpe'"
                             " with algo='boundless'/'superbpe')")
        return None
    if weights is not None or shares is not None:
        raise ValueError(f"{'weights' if weights is not None else 'shares'}= does not apply to parity-aware BPE: it "
                         "balances the languages itself (each step takes the worst-off language's best pair by that "
                         "language's own counts, which a weight would only scale); leave it out, or use algo='bpe'")
    dev, ratios = options["dev"], options["ratios"]
    if (dev is None) == (ratios is None):
        raise ValueError("parity-aware BPE needs exactly one of dev={language: dev text} (multi-parallel dev texts) "
                         "or ratios={language: target compression ratio}" + (", not both" if dev is not None else ""))
    for name, value in (("dev", dev), ("ratios", ratios)):
        if value is not None and (not isinstance(value, dict) or not value):
            raise ValueError(f"{name}= must be a non-empty dict {{language: ...}}, one entry per training language")
    if ratios is not None:
        for lang, r in ratios.items():
            if isinstance(r, bool) or not isinstance(r, Real) or not r > 0:
                raise ValueError(f"ratios[{lang!r}]={r!r} must be a number > 0 (a target compression ratio)")
    out = {"dev": dev, "ratios": ratios,
           "global_merges": 0 if options["global_merges"] is None else options["global_merges"],
           "variant": "base" if options["parity_variant"] is None else options["parity_variant"],
           "window": 100 if options["window"] is None else options["window"],
           "alpha": 2 if options["alpha"] is None else options["alpha"],
           "min_frequency": 2 if options["min_frequency"] is None else options["min_frequency"],
           "exhausted": "skip" if options["parity_exhausted"] is None else options["parity_exhausted"]}
    if out["variant"] not in PARITY_VARIANTS:
        raise ValueError(f"parity_variant={out['variant']!r} is not one of {', '.join(PARITY_VARIANTS)}")
    if out["exhausted"] not in PARITY_EXHAUSTED:
        raise ValueError(f"parity_exhausted={out['exhausted']!r} is not one of {', '.join(PARITY_EXHAUSTED)}")
    if out["variant"] != "window":
        for name in ("window", "alpha"):
            if options[name] is not None:
                raise ValueError(f"{name}= applies to parity_variant='window'; add it or leave {name} out")
    for name, low in (("global_merges", 0), ("window", 1), ("min_frequency", 1)):
        if as_integer(out[name]) is None or out[name] < low:
            raise ValueError(f"{name}={out[name]!r} must be an integer >= {low}")
        out[name] = as_integer(out[name])
    return out


def _check_parity_languages(parity: dict, languages) -> None:
    """The training languages are known: parity-aware BPE needs them, and dev/ratios name exactly them."""
    if languages is None:
        raise ValueError("parity-aware BPE trains on one text per language: give inputs as a dict {language: "
                         "inputs}, or lang_field= with JSONL files, or count tables with languages ('fastsw count "
                         "--lang')")
    name = "dev" if parity["dev"] is not None else "ratios"
    keys = list(parity[name])
    extra = [lang for lang in keys if lang not in languages]
    if extra:
        raise ValueError(f"{name}= names language(s) {', '.join(map(repr, extra))} with no training text (training "
                         f"languages: {', '.join(languages)}); give their training text too or leave them out")
    missing = [lang for lang in languages if lang not in keys]
    if missing:
        raise ValueError(f"{name}= is missing language(s) {', '.join(map(repr, missing))}; give one per training "
                         "language")


def _plain_number(x):
    """A JSON-friendly number for ``training_info``: ints and floats as they are, other rationals as ``"p/q"``."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return x
    f = Fraction(x)
    return f"{f.numerator}/{f.denominator}"


def parity_phase1(counts: Counts, alphabet, profile, n_merges: int, parity: dict, dev_counts=None, progress=None):
    """Phase 1 with parity-aware BPE (:func:`fastsw.trainers.parity.learn_parity_merges`, the reference; the numba
    backend runs its twin :func:`fastsw.trainers.parity_fast.parity_phase1_packed`) over the language columns of
    ``counts``; ``dev_counts`` are the dev texts' tables (``{language: Counts}``, counted like the training
    text) when ``parity["dev"]`` is used. Returns ``(merges, words, token_bytes, result)``: ``words`` the final
    token ids of every pretoken of ``counts`` (a list, as
    :meth:`fastsw.trainers.superword.ReferenceBackend.phase1` gives), ``result`` the :class:`~fastsw.trainers.parity.ParityMerges`.

    A pretoken's final word depends only on its initial ids and the merges, so it is taken from the first
    language that has the pretoken."""
    tables = counts.by_language()
    train_words = {lang: ([alphabet.initial_ids(p) for p in t.pretokens], t.counts) for lang, t in tables.items()}
    dev_words = dev_sizes = None
    if dev_counts is not None:
        dev_words = {lang: ([alphabet.initial_ids(p) for p in dev_counts[lang].pretokens], dev_counts[lang].counts)
                     for lang in tables}
        dev_sizes = {lang: dev_counts[lang].n_documents for lang in tables}
    token_bytes = list(alphabet.tokens)
    result = learn_parity_merges(train_words, token_bytes, profile, n_merges, dev_words=dev_words,
                                 dev_sizes=dev_sizes,
                                 ratios=None if parity["ratios"] is None else {l: parity["ratios"][l] for l in tables},
                                 global_merges=parity["global_merges"], variant=parity["variant"],
                                 window=parity["window"], alpha=parity["alpha"],
                                 min_frequency=parity["min_frequency"], exhausted=parity["exhausted"],
                                 progress=progress)
    final: dict = {}
    for lang, t in tables.items():
        for p, w in zip(t.pretokens, result.words[lang]):
            final.setdefault(p, w)
    # a pretoken with no count in any column occurs in no letter run either; its initial ids stand in
    words = [final[p] if p in final else alphabet.initial_ids(p) for p in counts.pretokens]
    return result.merges, words, token_bytes, result


def replay_counts(merges, words, word_counts, n_alphabet: int):
    """The counts BoundlessBPE (Algorithm 1) compares supermerges with when phase 1 is parity-aware.

    Algorithm 1 takes a supermerge when its count exceeds the next regular merge's; with ordinary BPE the
    counts never increase, so every token a supermerge uses was created already. Parity-aware merges carry the
    chosen language's count, which can increase, so the keys are made safe: ``key[j] = max over k >= j of
    max(count[k], single[k])``, ``single[k]`` being the occurrences of merge k's token as a whole pretoken (an
    upper bound of any candidate pair count that uses it). A supermerge that beats ``key[j]`` then uses only
    tokens of merges before j. With ordinary BPE's merges the keys are the counts themselves. ``words`` may be
    packed ``(tokens, offsets, lengths)`` arrays (the fast path's)."""
    if isinstance(words, tuple):
        tokens, offsets, lengths = words
        ones = [i for i, n in enumerate(lengths.tolist()) if n == 1]
        words = [[t] for t in tokens[offsets[ones]].tolist()] if ones else []
        word_counts = [word_counts[i] for i in ones]
    single = [0] * len(merges)
    for word, count in zip(words, word_counts):
        if len(word) == 1 and word[0] >= n_alphabet:
            single[word[0] - n_alphabet] += count
    keys = [0] * len(merges)
    running = 0
    for k in range(len(merges) - 1, -1, -1):
        running = max(running, merges[k][2], single[k])
        keys[k] = running
    return keys


def _parity_record(parity: dict, result, languages, dev_counts) -> dict:
    """``training_info["parity"]``: the options and, compactly, the run: ``chosen`` is per merge the index of the
    chosen language in ``languages`` (-1 for a global step of the hybrid), ``lengths`` the criterion's token
    counts before the first and after the last merge (dev texts', or training texts' with ratios)."""
    index = {lang: k for k, lang in enumerate(languages)}
    record = {"variant": parity["variant"], "languages": list(languages),
              "criterion": "dev" if parity["dev"] is not None else "ratios",
              "global_merges": parity["global_merges"], "min_frequency": parity["min_frequency"],
              "exhausted": parity["exhausted"],
              "chosen": [-1 if lang is None else index[lang] for lang in result.languages],
              "lengths": {"initial": result.lengths[0], "final": result.lengths[-1]}}
    if parity["variant"] == "window":
        record.update(window=parity["window"], alpha=_plain_number(parity["alpha"]))
    if parity["ratios"] is not None:
        record["ratios"] = {lang: _plain_number(parity["ratios"][lang]) for lang in languages}
    if dev_counts is not None:
        record["dev_documents"] = dev_counts[languages[0]].n_documents
    return record


def train(inputs: TrainInputs = None, *, algo: str = "bpe", vocab_size: int, supermerges: Optional[int] = None,
          profile: str = "paper", pretokenizer: PretokenizerSpec = None, normalize: Optional[str] = None,
          alphabet: str = "bytes",
          byte_fallback: bool = False, greedy_split: bool = False, min_count_floor: int = 15,
          max_ngram_len: int = 30, special_tokens: Sequence[str] = (), text_field: Optional[str] = None,
          doc_mode: str = "auto", separator: Optional[str] = None, progress: bool = False,
          backend: str = "auto", workers: Optional[int] = None,
          from_counts: Union[Counts, PathLike, Sequence[Union[Counts, PathLike]], None] = None,
          weights: Optional[Mapping[str, Number]] = None, shares: Optional[Mapping[str, Number]] = None,
          lang_field: Optional[str] = None, phase1: Optional[str] = None, dev: Optional[Mapping[str, Any]] = None,
          ratios: Optional[Mapping[str, Number]] = None,
          global_merges: Optional[int] = None, parity_variant: Optional[str] = None, window: Optional[int] = None,
          alpha: Optional[Number] = None, min_frequency: Optional[int] = None, parity_exhausted: Optional[str] = None,
          overshoot: Optional[float] = None,
          em_iterations: Optional[int] = None, score_delta: Optional[float] = None,
          prune_criterion: Optional[str] = None, refill: bool = False, _count_candidates: Any = None) -> Tokenizer:
    """Train a BPE, BoundlessBPE, SuperBPE or parity-aware BPE tokenizer.

    Args:
        inputs: a path (``str`` or ``os.PathLike``; ``.jsonl``, ``.jsonl.gz``, plain
            text), or an iterable whose items are documents (``str``) or files
            (``pathlib.Path``). Streamed once. Leave it out with ``from_counts``.
        algo: ``"bpe"``, ``"boundless"`` (Algorithm 1 decides the regular/supermerge
            split), ``"superbpe"`` (``supermerges`` fixed supermerges) or ``"parity-bpe"``
            (parity-aware BPE, see below; the model is a plain BPE model, ``tok.algo == "bpe"``).
        vocab_size: total vocabulary (alphabet + merges; special tokens excluded).
            For SuperBPE, phase 1 learns ``vocab_size - supermerges``.
        profile: ``"paper"`` (reproduces the paper's reference implementation) or
            ``"hf"`` (reproduces HF tokenizers' BpeTrainer).
        pretokenizer: ``"script"`` (the default for text), ``"simple"``, a config dict or a
            :class:`~fastsw.pretokenizers.pretokenize.Pretokenizer`. With ``from_counts`` the counts'
            own pretokenizer is used (giving a different one is an error). ``"none"`` makes
            each document one pretoken (merges may cross spaces); it needs ``algo="bpe"``.
        normalize: ``None`` (default: lossless, the text is never changed), ``"nfc"`` or
            ``"nfkc"``: each document is normalized before pre-tokenization, and the model
            normalizes every text it encodes the same way (nothing else: no whitespace
            collapsing, no lowercasing). ``"none"`` is an explicit None. With ``from_counts``
            the counts' own normalization is used; a different ``normalize`` is an error.
        alphabet: ``"bytes"`` (the profile's byte alphabet) or ``"chars"``
            (seed 001's character-level variant; needs ``profile="hf"``), with
            ``byte_fallback`` for characters outside it.
        greedy_split: split supermerge candidates into frequent n-grams
            (Algorithm 2) with ``min_count = max(c_min, min_count_floor)`` and n-grams
            up to ``max_ngram_len``.
        special_tokens: strings given ids after the vocabulary (off by default).
        text_field, doc_mode, separator: how files are read (see
            :func:`fastsw.corpus.readers.iter_documents`). ``text_field`` (default ``"text"``) applies to
            ``.jsonl``/``.ndjson`` files; given with a plain-text file it is ignored with an
            :class:`~fastsw.notes.OptionWarning`.
        progress: draw progress bars on stderr.
        backend: ``"numba"`` (the fast merge kernels), ``"python"`` (the plain
            reference path) or ``"auto"`` (numba unless ``FASTSW_PUREPYTHON=1``).
            Both give identical models.
        workers: processes that pre-tokenize and count (:func:`fastsw.corpus.counting.count_corpus_parallel`).
            ``None`` (default): with the compiled counter (the default patterns), one thread per
            core in this process; otherwise all cores when ``inputs`` are files (a path, or a
            list of ``pathlib.Path``) of at least 16 MB on disk, else in this process (an
            iterable of ``str`` documents is always counted in-process unless ``workers`` is
            given; BoundlessBPE/SuperBPE count in-process on fewer than 4 cores).
            ``1``: in this process, one thread. More than the cores: the cores, with an
            :class:`~fastsw.notes.OptionWarning`. The model does not depend on it.
        from_counts: train from saved count tables instead of text: a
            :class:`~fastsw.corpus.counting.Counts`, a count file written by ``Counts.save`` /
            ``fastsw count``, or a list of them (merged). Gives the same model as training on
            the text that was counted. BoundlessBPE and SuperBPE need tables counted with
            letter runs (``collect_runs=True``, i.e. without ``--no-runs``).
        weights, shares, lang_field: language-tagged training. ``inputs`` as a dict
            ``{language: inputs}`` (each value anything ``inputs`` takes), or JSONL files whose
            ``lang_field`` names each line's language, or ``from_counts`` tables with languages
            (``fastsw count --lang``). ``weights={language: w}`` (w > 0: int, float, Fraction
            or ``"3/2"``; languages left out weigh 1) multiplies that language's counts, so a
            weight of 2 trains exactly as if its text were included twice. ``shares={language:
            p}`` (summing to exactly 1) sets ``w = 100000 * p / bytes of the language``.
            Weights are exact: counts are multiplied by the weights times the least common
            multiple of their denominators (scaled integers; see :func:`fastsw.corpus.counting.scaled_weights`;
            ``training_info["weight_scale"]`` is that factor, so merge counts are scaled by it). When the
            scaled counts do not fit 64 bits (shares over many languages), ``backend="auto"`` trains on the
            python backend (exact big integers) with an :class:`~fastsw.notes.OptionWarning`, and
            ``backend="numba"`` is an error.
            ``training_info`` records languages, weights (``"p/q"``) and bytes per language;
            its ``documents`` and ``bytes`` are the text read, ``weighted_documents`` and
            ``weighted_bytes`` (``"p/q"``) the totals with every language's text times its weight.

                >>> import fastsw
                >>> tok = fastsw.train({"en": ["the cat"], "de": ["die Katze"]}, weights={"de": 2},
                ...                    algo="bpe", vocab_size=250)
                >>> tok.training_info["weights"]
                {'en': '1/1', 'de': '2/1'}
                >>> tok.training_info["documents"], tok.training_info["weighted_documents"]
                (2, '3/1')

    Parity-aware BPE (``algo="parity-bpe"``, or ``phase1="parity-bpe"`` for BoundlessBPE/SuperBPE's phase 1;
    :func:`fastsw.trainers.parity.learn_parity_merges`) needs language-tagged input, and exactly one of

    * ``dev={language: dev text}`` (anything ``inputs`` takes, read the same way): multi-parallel dev texts
      (the same number of documents each), pre-tokenized, normalized and counted like the training text;
      each merge comes from the language whose dev text needs the most tokens (the first on ties);
    * ``ratios={language: R}`` (R > 0): each merge comes from the language furthest below its target
      compression ratio on its training text.

    ``global_merges=N`` (hybrid): the first N merges are ordinary BPE on the summed counts.
    ``parity_variant="window"`` with ``window=W`` (default 100) and ``alpha=A`` (default 2): a language chosen
    more than ``A / languages`` of the last W steps is passed over. A language whose best pair occurs fewer
    than ``min_frequency`` (default 2) times is exhausted: by default (``parity_exhausted="skip"``) it is
    passed over and training goes on with the others until the vocabulary is reached or every language is
    exhausted; ``parity_exhausted="stop"`` stops there (the published script's rule). Count ties follow ``profile``
    (the published script takes the largest string pair). ``weights``/``shares`` are refused: parity-aware BPE
    balances the languages itself. It runs on the reference path with either backend.
    ``training_info["parity"]`` records the options and the run: ``chosen`` (per merge, the index of the chosen
    language in ``languages``; -1 for a global step) and the criterion's token counts before and after.

        >>> import fastsw
        >>> tok = fastsw.train({"en": ["the cat", "the dog"], "de": ["die Katze", "die Hunde"]},
        ...                    algo="parity-bpe", vocab_size=246, dev={"en": ["the dog"], "de": ["die Hunde"]})
        >>> [tok.vocab[i] for i in range(len(tok.vocab) - 3, len(tok.vocab))]  # de, de, then en on a tie
        [b'di', b'die', b'he']
        >>> info = tok.training_info["parity"]
        >>> tok.algo, info["languages"], info["chosen"], info["lengths"]
        ('bpe', ['en', 'de'], [1, 1, 0], {'initial': {'en': 7, 'de': 9}, 'final': {'en': 6, 'de': 7}})

    When the corpus cannot give ``vocab_size`` tokens (pairs run out; an empty corpus gives just
    the alphabet), the model is smaller: train warns with a
    :class:`~fastsw.notes.VocabularyNotReachedWarning` per note (the text the CLI prints), and
    keeps the notes in ``training_info["notes"]``. Any ``vocab_size`` up to ``2**63-1`` costs no
    more than the largest reachable one.

        >>> import warnings, fastsw
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     tok = fastsw.train(["doc one", "doc two"], algo="bpe", vocab_size=1000)
        >>> [str(w.message) for w in caught] == tok.training_info["notes"]
        True

    MinGram (``algo="mingram"``, :mod:`fastsw.trainers.mingram`): a BPE seed of ``floor((vocab_size - alphabet) *
    overshoot)`` merges (``overshoot`` >= 1, default 1.1 as the seed authors' code; their paper grids used
    1.15), then Hard EM (``em_iterations`` E/M steps per round, default 2) on the minimum-token-count path
    with scores ``score_delta`` (default 1e-5) * lp - 1, and one flat prune to ``vocab_size``
    (``prune_criterion="usage_count"``, or ``"mi"`` for MinGram-PP); atomic tokens are never pruned. The size
    may end below ``vocab_size`` (a :class:`~fastsw.notes.VocabularyNotReachedWarning`) unless
    ``refill=True``. Returns a :class:`fastsw.trainers.mingram.MinGramTokenizer`.

    Ctrl-C raises ``KeyboardInterrupt`` in every stage (the merge kernels run in a worker
    thread and stop at their next merge step; no thread is left running).

    Returns a :class:`Tokenizer`; ``tok.training_info`` holds the stage timings,
    corpus statistics and notes.

    ``_count_candidates(stages, counts, words, tok1)`` (internal, :func:`fastsw.corpus.distributed.train`) counts the
    supermerge candidates of stage 4 elsewhere (from the text again, with the phase-1 model ``tok1``), so
    ``from_counts`` tables need no letter runs.
    """
    vocab_size, supermerges, min_count_floor, max_ngram_len = _check_options(
        algo, vocab_size, supermerges, profile, alphabet, greedy_split, min_count_floor, max_ngram_len)
    parity = _check_parity_options(algo, phase1, {"dev": dev, "ratios": ratios, "global_merges": global_merges,
                                                  "parity_variant": parity_variant, "window": window,
                                                  "alpha": alpha, "min_frequency": min_frequency,
                                                  "parity_exhausted": parity_exhausted},
                                   weights, shares)
    requested_algo = algo
    mingram_options = _check_mingram_options(algo, phase1, overshoot, em_iterations, score_delta,
                                             prune_criterion, refill)
    if algo == "parity-bpe":
        algo = "bpe"  # from here on: a BPE model whose phase 1 is parity-aware
    # only supermerges need the letter runs (phase 2's candidates); BPE and MinGram work on pretokens alone
    needs_runs = algo not in ("bpe", "mingram")
    form = check_normalize(normalize)
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError(f"special_tokens must be a list of strings, e.g. [{special_tokens!r}], not a single "
                        f"{type(special_tokens).__name__} (its characters would each become a token)")
    special_tokens = list(special_tokens)
    if len(set(special_tokens)) != len(special_tokens) or any(not isinstance(s, str) or not s
                                                              for s in special_tokens):
        raise ValueError("special_tokens must be distinct non-empty strings")

    # 1. read: saved count tables, or the text that stage 2 streams
    tagged = isinstance(inputs, dict) or lang_field is not None
    if isinstance(inputs, dict):
        if lang_field is not None:
            raise ValueError("give either inputs as a dict {language: inputs} or lang_field=, not both")
        if not inputs:
            raise ValueError("inputs is an empty dict; give at least one language and its text")
        for name in inputs:
            if not isinstance(name, str) or not name:
                raise ValueError(f"language names must be non-empty strings, not {name!r}")
        language_weights(list(inputs), [1] * len(inputs), weights=weights, shares=shares)  # fail before reading
        if parity is not None:
            _check_parity_languages(parity, list(inputs))
    elif lang_field is not None and workers is not None:
        raise ValueError("with lang_field the languages are counted in this process; leave workers unset")
    elif (weights is not None or shares is not None) and not tagged and from_counts is None:
        raise ValueError(f"{'weights' if weights is not None else 'shares'}= applies to languages; give inputs as "
                         "a dict {language: inputs}, or lang_field= with JSONL files, or count tables with "
                         "languages")
    if from_counts is not None:
        if inputs is not None:
            raise ValueError("give either inputs (text) or from_counts (count tables), not both")
        counts = load_counts(from_counts)
        pretok = _pretokenizer_for_counts(counts, pretokenizer)
        if needs_runs and not counts.has_runs and _count_candidates is None:
            raise ValueError(f"algo={algo!r} needs letter runs, but the count table was made without them "
                             "(collect_runs=False / 'fastsw count --no-runs'); count again with runs, or use "
                             "algo='bpe'")
        if workers is not None:
            raise ValueError("workers applies to counting text; with from_counts there is nothing to count")
        if normalize is not None and form != counts.normalize:
            raise ValueError(f"normalize={normalize!r} differs from the normalization the counts were made with "
                             f"({counts.normalize!r}); leave normalize unset to use the counts' own")
        form = counts.normalize
        if lang_field is not None:
            raise ValueError("lang_field applies to reading JSONL text; count tables already hold their languages")
        if (weights is not None or shares is not None) and counts.languages is None:
            raise ValueError(f"{'weights' if weights is not None else 'shares'}= applies to languages, but the "
                             "count table has none; count each language with 'fastsw count --lang LANG=PATH'")
    else:
        if inputs is None:
            raise ValueError("train() needs inputs (a path, a list of paths or an iterable of str documents) "
                             "or from_counts=")
        pretok = make_pretokenizer("script" if pretokenizer is None else pretokenizer)
        n_workers = None if tagged else _counting_workers(inputs, workers, collect_runs=needs_runs)
    if parity is not None and pretok.has_merge_rule:  # its learner applies no merge rule (fastsw.pretokenizers.script_v3)
        raise ValueError(f"parity-aware BPE cannot train with pretokenizer {pretok.name!r}: its "
                         "merges would not respect SCRIPT's rule that a token is whole characters; use algo='bpe', "
                         "'boundless' or 'superbpe' (phase1='bpe') with SCRIPT, or another pre-tokenizer")
    if not pretok.splits_text and needs_runs:
        raise ValueError(f"algo={algo!r} needs a pre-tokenizer that splits documents into words: supermerges "
                         f"join runs of >= 2 pretokens, and pretokenizer={pretok.name!r} makes one pretoken per "
                         f"document; use algo='bpe' with pretokenizer={pretok.name!r}, or pretokenizer='script'")
    prof = get_profile(profile)
    stages = _backend(backend, progress)
    info: dict = {"backend": stages.name, "options": {"algo": requested_algo, "vocab_size": vocab_size, "supermerges": supermerges,
                              "profile": profile, "greedy_split": greedy_split,
                              "min_count_floor": min_count_floor, "max_ngram_len": max_ngram_len},
                  "seconds": {}, "notes": []}
    if form is not None:
        info["options"]["normalize"] = form
    if phase1 is not None:
        info["options"]["phase1"] = phase1

    # 2. pre-tokenize and count
    def count(inputs, n_workers, language=""):
        documents = iter_documents(inputs, text_field=text_field, doc_mode=doc_mode, separator=separator)
        if workers is None and native_counting(pretok):
            # the compiled counter: threads in this process, no pickling
            threads = default_workers()
            bar = Progress("pre-tokenizing" + language + (f" ({threads} threads)" if threads > 1 else ""),
                           enabled=progress)
            counts = count_corpus(documents, pretok, collect_runs=needs_runs, progress=bar, threads=threads,
                                  normalize=form)
            info["counting_threads"] = threads
        else:
            label = "pre-tokenizing" + language + (f" ({n_workers} workers)" if n_workers > 1 else "")
            bar = Progress(label, enabled=progress)
            counts = count_corpus_parallel(documents, pretok, collect_runs=needs_runs, workers=n_workers,
                                           progress=bar, normalize=form)
            info["counting_workers"] = n_workers
        info["seconds"]["pretokenize_and_count"] = info["seconds"].get("pretokenize_and_count", 0.0) + bar.close()
        return counts

    def count_dev(languages):  # parity-aware BPE's dev texts, counted like the training text
        tables = {}
        for lang in languages:
            tables[lang] = count(parity["dev"][lang], 1, f" dev {lang}")
            if tables[lang].n_bytes == 0:
                raise ValueError(f"the dev text of language {lang!r} is empty; give it a dev text with documents")
        sizes = {lang: t.n_documents for lang, t in tables.items()}
        if len(set(sizes.values())) > 1:
            shown = ", ".join(f"{lang}: {n}" for lang, n in sizes.items())
            raise ValueError(f"the dev texts are not parallel: their numbers of documents differ ({shown}); give "
                             "multi-parallel dev texts (document i of each is the same content in every language)")
        return tables

    dev_counts = None
    if parity is not None and parity["dev"] is not None and isinstance(inputs, dict):
        dev_counts = count_dev(list(inputs))  # before the (larger) training text: a bad dev text fails fast
    if from_counts is None and isinstance(inputs, dict):  # one count column per language
        counts = Counts.from_languages({name: count(inp, _counting_workers(inp, workers, needs_runs), f" {name}")
                                        for name, inp in inputs.items()})
    elif from_counts is None and lang_field is not None:
        bar = Progress("pre-tokenizing", enabled=progress)
        counts = count_languages(iter_language_documents(inputs, lang_field=lang_field, text_field=text_field),
                                 pretok, collect_runs=needs_runs, progress=bar, normalize=form)
        info["seconds"]["pretokenize_and_count"] = bar.close()
    elif from_counts is None:
        counts = count(inputs, n_workers)
    else:
        info["from_counts"] = True
    if parity is not None:  # the language columns drive parity-aware phase 1 (weights were refused)
        _check_parity_languages(parity, counts.languages)
        if parity["dev"] is not None and dev_counts is None:
            dev_counts = count_dev(counts.languages)
        info["languages"] = list(counts.languages)
        info["language_bytes"] = dict(zip(counts.languages, counts.language_bytes))
    real_documents, real_bytes = counts.n_documents, counts.n_bytes  # the text read, before any weight
    if parity is None and counts.languages is not None:
        # weighted counts (scaled integers) drive the unchanged merge loops; the model reports the text it read
        # as documents/bytes, and the weighted totals (each language's text times its exact weight) apart
        counts, record = weighted_counts(counts, weights=weights, shares=shares)
        info.update(record)
        scale = Fraction(record["weight_scale"])
        for key, total in (("weighted_documents", counts.n_documents), ("weighted_bytes", counts.n_bytes)):
            exact = Fraction(total) / scale
            info[key] = f"{exact.numerator}/{exact.denominator}"
        stages, note = _backend_for_weighted(counts, backend, stages, record["weight_scale"])
        info["backend"] = stages.name
        if note:
            info["backend_note"] = note
    info["documents"] = real_documents
    info["bytes"] = real_bytes
    info["unique_pretokens"] = len(counts.pretokens)

    # 3. phase 1: the alphabet, the merges it leaves room for, the merges
    own_alphabet = pretok.make_alphabet(profile)  # a scheme with atoms beyond bytes (markers, SCRIPT; fastsw.alphabet)
    if own_alphabet is not None:
        if alphabet != "bytes":
            raise ValueError(f"alphabet={alphabet!r} does not go with pretokenizer {pretok.name!r}"
                             ", whose alphabet is the profile's bytes plus its atoms; leave alphabet unset")
        alph: Alphabet = own_alphabet
    elif alphabet == "bytes":
        alph = default_alphabet(profile)
    else:
        alph = CharAlphabet({ch for p in counts.pretokens for ch in p}, byte_fallback=byte_fallback)
    n_alpha = len(alph)
    if vocab_size < n_alpha:
        raise ValueError(f"vocab_size={vocab_size} is smaller than the {n_alpha}-token alphabet; "
                         f"use vocab_size >= {n_alpha}")
    n_super = supermerges if algo == "superbpe" else 0
    n_phase1 = vocab_size - n_alpha - n_super
    if mingram_options is not None:  # the BPE seed overshoots the target (MINGRAM.md 1.1)
        factor = mingram_options["overshoot"]
        if n_phase1 * factor > MAX_VOCAB_SIZE:
            raise ValueError(f"overshoot={factor!r} asks for a BPE seed of {n_phase1} x {factor!r} merges, beyond "
                             "2**63-1, the largest fastsw trains; use a small factor such as 1.1 or 1.15")
        n_phase1 = int(n_phase1 * factor)
    if n_phase1 < 0:
        raise ValueError(f"vocab_size - supermerges = {vocab_size - n_super} is smaller than the "
                         f"{n_alpha}-token alphabet")

    if parity is None:
        bar = Progress("phase 1 merges", total=n_phase1, enabled=progress)
        merges1, words, token_bytes = stages.phase1(counts, alph, profile, n_phase1, progress=bar)
    else:
        bar = Progress("phase 1 merges (parity-aware)", total=n_phase1, enabled=progress)
        if stages.name == "numba":  # the fast twin (fastsw.trainers.parity_fast): packed words, same results
            from fastsw.trainers.parity_fast import parity_phase1_packed
            merges1, words, token_bytes, result = parity_phase1_packed(counts, alph, prof, n_phase1, parity,
                                                                       dev_counts, progress=bar)
        else:
            merges1, words, token_bytes, result = parity_phase1(counts, alph, prof, n_phase1, parity, dev_counts,
                                                                progress=bar)
        replay = replay_counts(merges1, words, counts.counts, n_alpha) if algo == "boundless" else None
        if stages.name != "numba":
            words = stages.adopt_words(words)
        info["parity"] = _parity_record(parity, result, counts.languages, dev_counts)
    info["seconds"]["phase1"] = bar.close()
    if stages.warmup_seconds is not None:
        info["seconds"]["jit_warmup"] = stages.warmup_seconds
    if not counts.pretokens:
        info["notes"].append("the corpus is empty (no pretokens): the model is just the alphabet")
    elif len(merges1) < n_phase1 and parity is not None:
        why = ("the language chosen next had no pair left" if parity["exhausted"] == "stop"
               else "no language had a pair left")
        info["notes"].append(f"parity-aware BPE stopped after {len(merges1)} of {n_phase1} phase-1 merges: {why} "
                             f"occurring at least min_frequency={parity['min_frequency']} times; the model is "
                             "smaller than requested")
    elif len(merges1) < n_phase1 and mingram_options is not None:
        info["notes"].append(f"the MinGram BPE seed ran out of pairs after {len(merges1)} of {n_phase1} merges "
                             f"(overshoot {mingram_options['overshoot']}); MinGram trains on the smaller seed")
    elif len(merges1) < n_phase1:
        info["notes"].append(f"pairs ran out after {len(merges1)} of {n_phase1} phase-1 merges; "
                             "the model is smaller than requested")

    if algo == "mingram":
        from fastsw.trainers.mingram import train_from_seed
        bar = Progress("MinGram E/M steps", enabled=progress)
        tok = train_from_seed(counts, alph, pretok, profile, merges1, words, vocab_size, mingram_options,
                              stages.name, info, normalize=form, special_tokens=special_tokens, progress=bar,
                              token_bytes=token_bytes)
        bar.close()
        for note in info["notes"]:
            warnings.warn(note, VocabularyNotReachedWarning, stacklevel=2)
        return tok
    if algo == "bpe":
        merges = [(l, r, c, False) for l, r, c in merges1]
    else:
        t0 = time.perf_counter()
        tok1 = phase1_tokenizer(alph, merges1, pretok, profile)
        # 4. supermerge candidates
        if _count_candidates is None:
            cands = stages.candidates(counts, words, tok1)
        else:  # counted from the text on a cluster (fastsw.corpus.distributed)
            cands = _count_candidates(stages, counts, words, tok1)
        forbidden = pretok.supermerge_forbidden
        if forbidden is not None:  # e.g. never two touching boundary markers in one token (SPEC section 9)
            cands = stages.cut(cands, tok1.vocab, forbidden)
        if from_counts is None:  # the candidates replace the letter runs (freed for phase 2 on big corpora)
            counts.letter_runs = {}
        info["unique_candidates"] = stages.n_candidates(cands)
        # 5. optional greedy split (Algorithm 2), min_count = max(c_min, floor)
        if greedy_split:
            cands = stages.split(cands, merges1[-1][2] if merges1 else 0, min_count_floor, max_ngram_len)
            info["unique_candidates_after_split"] = stages.n_candidates(cands)
        info["seconds"]["aggregate_candidates"] = time.perf_counter() - t0
        # 6. phase 2
        token_bytes = list(tok1.vocab)
        if algo == "boundless":
            bar = Progress("phase 2 (BoundlessBPE)", total=len(merges1), enabled=progress)
            if parity is None:
                steps = stages.boundless(merges1, cands, token_bytes, n_alpha, prof, progress=bar)
                merges = interleave(steps, n_alpha)
            else:  # Algorithm 1 compares with the replay keys; the model keeps the parity merges' own counts
                keyed = [(l, r, key) for (l, r, _), key in zip(merges1, replay)]
                steps = stages.boundless(keyed, cands, token_bytes, n_alpha, prof, progress=bar)
                merges = interleave(steps, n_alpha)
                regular = iter(merges1)
                merges = [m if m[3] else m[:2] + (next(regular)[2], False) for m in merges]
            n_reg = sum(kind == "r" for kind, *_ in steps)
            if len(merges) < len(merges1):
                info["notes"].append(
                    f"BoundlessBPE stopped at vocabulary {n_alpha + len(merges)}: no supermerge pair was left, "
                    f"so the remaining {len(merges1) - n_reg} regular merges were dropped (Algorithm 1's "
                    "loop condition); use algo='bpe' for a plain model")
        else:
            bar = Progress("phase 2 (SuperBPE)", total=n_super, enabled=progress)
            supers = stages.superbpe(cands, token_bytes, n_super, prof, progress=bar)
            merges = [(l, r, c, False) for l, r, c in merges1] + [(l, r, c, True) for l, r, c in supers]
            if len(supers) < n_super:
                info["notes"].append(f"supermerge pairs ran out after {len(supers)} of {n_super} "
                                     "supermerges")
        info["seconds"]["phase2"] = bar.close()

    # 7. the model
    vocab_total = n_alpha + len(merges)
    specials = {s: vocab_total + i for i, s in enumerate(special_tokens)}
    # a superword model's regular merges are a prefix of phase 1's (BoundlessBPE replays them
    # in order), so tok1's reachable tokens carry over without encoding them again
    tok = Tokenizer(alphabet=alph, merges=merges, pretokenizer=pretok, profile=profile, algo=algo,
                    special_tokens=specials, training_info=info, normalize=form,
                    _reachability=tok1.reachability() if algo != "bpe" else None)
    info["regular_merges"] = tok.n_regular
    info["supermerges"] = tok.n_super
    for note in info["notes"]:  # each says how the vocabulary fell short of vocab_size
        warnings.warn(note, VocabularyNotReachedWarning, stacklevel=2)
    return tok
