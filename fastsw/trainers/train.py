"""Training driver: resolve the options, read and count, fit, build the model (SPEC sections 4-6).

``train`` resolves its options into a trainer (:mod:`fastsw.trainers.registry`; the interface is
:mod:`fastsw.trainers.base`) whose config holds its own options, checked before any text is read. It then streams
the documents once: each is pre-tokenized, its pretokens are counted, and (for the trainers that learn supermerges)
its *letter runs* are aggregated (see :mod:`fastsw.corpus.counting` and :mod:`fastsw.trainers.superword`).
Everything after that is the trainer's ``fit`` on the aggregated counts only, so a corpus larger than memory trains
as long as its counts fit; ``train(from_counts=...)`` starts from saved count tables instead of text and gives the
same model.

The merge stages are the methods of one backend object per run, :class:`fastsw.trainers.superword.ReferenceBackend`
or :class:`fastsw.trainers.bpe_fast.FastBackend` (same methods, same results); no trainer asks which one it has.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from fractions import Fraction
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from fastsw._config import resolve_backend
from fastsw._types import Number, PathLike, PretokenizerSpec, TrainInputs
from fastsw.alphabet import PROFILE_ALPHABETS, Alphabet, CharAlphabet, default_alphabet, get_profile
from fastsw.corpus.counting import (
    PARALLEL_MIN_BYTES,
    Counts,
    count_corpus,
    count_corpus_parallel,  # noqa: F401 (re-exported)
    as_integer,
    capped_workers,
    count_languages,
    default_workers,
    int64_overflow,
    language_weights,
    load_counts,
    native_counting,
    weighted_counts,
)
from fastsw.pretokenizers.base import BasePretokenizer
from fastsw.pretokenizers.pretokenize import Pretokenizer, check_normalize, make_pretokenizer
from fastsw.notes import OptionWarning, VocabularyNotReachedWarning
from fastsw.progress import Progress
from fastsw.corpus.readers import iter_documents, iter_language_documents
from fastsw.trainers.base import Common, OptionError, Run, Trainer
from fastsw.trainers.parity import check_parity_languages, replay_counts  # noqa: F401 (re-exported)
from fastsw.trainers.registry import get_trainer, trainers
from fastsw.trainers.superword import ReferenceBackend
from fastsw.tokenizer import Tokenizer


def phase1_tokenizer(alphabet, merges, pretokenizer, profile) -> Tokenizer:
    return Tokenizer(
        alphabet=alphabet,
        merges=[(l, r, c, False) for l, r, c in merges],
        pretokenizer=pretokenizer,
        profile=profile,
        algo="bpe",
    )


#: The largest ``vocab_size`` accepted (ids and counts are 64-bit). Any size beyond what the corpus can reach
#: costs what a reachable one costs: the merge loops stop when pairs run out.
MAX_VOCAB_SIZE = (1 << 63) - 1


#: Said once (with ``progress``) when Numba's on-disk cache is cold and the training kernels compile (the merge
#: loop and the candidate cut; ``python bench/bench_coldstart.py`` measures it).
COMPILE_NOTICE = "compiling the training kernels (first run only, ~10 s)"


def _backend(backend: str, progress: bool, phase2: bool):
    """The stages of one run: :class:`ReferenceBackend`, or :class:`fastsw.trainers.bpe_fast.FastBackend` once the
    merge loop is loaded. On a fresh install a background process compiles part of the loop's helpers meanwhile
    and, with ``phase2`` (a run that takes supermerges), phase 2's own kernels
    (:func:`fastsw.trainers.bpe_fast.compile_ahead`)."""
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

        fast_train.compile_ahead(phase2)
        loading = fast_train.load_in_background()  # cached: loaded beside the counting, phase 1 waits for it
        if loading is None:
            with fast_train.compile_notice(say_compiling):
                fast_train.warmup(phase2=False)
    return fast_train.FastBackend(warmup_seconds=time.perf_counter() - bar.start, loading=loading)


def _stop_compiling_ahead() -> None:
    """End the background compilation of the run if it still runs (no phase 2, an error, Ctrl-C)."""
    fast_train = sys.modules.get("fastsw.trainers.bpe_fast")
    if fast_train is not None:
        fast_train.stop_compiling_ahead()


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
    reason = f"the weighted counts (scaled to exact integers, x{shown}) are too large for 64-bit training: {reason}"
    if stages.name == "numba" and backend == "numba":
        raise ValueError(
            f"{reason}; backend='numba' counts in 64 bits: use backend='python' (exact, slower), or "
            "round the weights or shares to a few digits"
        )
    note = None
    if stages.name == "numba":
        note = (
            f"{reason}; training on backend='python' (exact big integers, slower) instead of numba; "
            "round the weights or shares to a few digits to train on numba"
        )
        warnings.warn(note, OptionWarning, stacklevel=3)
    return ReferenceBackend(big_counts=True), note


def __getattr__(name: str):  # the reference stages under their names before the training seam (deprecated)
    if name not in ("phase1", "candidates"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"fastsw.trainer.{name} is deprecated; use fastsw.trainers.superword.ReferenceBackend().{name}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(ReferenceBackend(), name)


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
            raise ValueError(
                f"workers must be a positive integer (or None: all cores for large input files), not {workers!r}"
            )
        n, note = capped_workers(as_integer(workers), default_workers(), f"workers={workers}")
        if note:
            warnings.warn(note, OptionWarning, stacklevel=4)  # at train()'s caller
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
        raise ValueError(
            "the count table does not record its pretokenizer; count it with fastsw.corpus.counting "
            "(count_corpus or 'fastsw count')"
        )
    pretok = Pretokenizer.from_config(counts.pretokenizer_config)
    if pretokenizer is not None and make_pretokenizer(pretokenizer) != pretok:
        raise ValueError(
            f"pretokenizer={pretokenizer!r} differs from the pretokenizer the counts were made with "
            f"({pretok!r}); leave pretokenizer unset to use the counts' own"
        )
    return pretok


def resolve(
    *,
    algo: str,
    vocab_size,
    profile: str = "paper",
    alphabet: str = "bytes",
    byte_fallback: bool = False,
    weights=None,
    shares=None,
    special_tokens: Sequence[str] = (),
    options: Dict[str, Any],
) -> Tuple[Trainer, Common]:
    """The trainer of ``algo`` with its validated config, from ``train()``'s options: the common ones and
    ``options`` (every trainer's options as keywords; those of another trainer must keep their defaults). Every
    rule about options is checked here, before any text is read; a broken one is one
    :class:`~fastsw.trainers.base.OptionError` (the CLI calls this too, and names flags instead)."""
    cls = get_trainer(algo)
    get_profile(profile)
    if as_integer(vocab_size) is None or vocab_size <= 0:
        raise OptionError("{vocab_size} must be a positive integer, not {vocab_size:r}", vocab_size=vocab_size)
    vocab_size = as_integer(vocab_size)
    if vocab_size > MAX_VOCAB_SIZE:
        raise OptionError(
            "{vocab_size:v} is beyond 2**63-1, the largest fastsw accepts; use a smaller {vocab_size} "
            "(any size beyond what the corpus can reach gives the same model, with a note that pairs "
            "ran out)",
            vocab_size=vocab_size,
        )
    if alphabet not in ("bytes", "chars"):
        raise OptionError("{alphabet:v} is not one of 'bytes', 'chars'", alphabet=alphabet)
    if alphabet == "chars" and "chars" not in PROFILE_ALPHABETS[profile]:
        raise OptionError(
            "the character-level alphabet follows the 'hf' rules (overlapping counts, id ties); pass {profile:'hf}"
        )
    if byte_fallback and alphabet != "chars":
        raise OptionError("{byte_fallback:=} is used only with {alphabet:'chars} (a byte alphabet covers every text)")
    fields = {f.name: f for f in cls.Config.options()}
    known = {f.name: f for t in trainers() for f in t.Config.options()}
    for name, value in options.items():
        if name in fields:
            continue
        if name not in known:
            raise TypeError(f"train() got an unexpected keyword argument {name!r}")
        if value is not None and value != known[name].default:
            raise OptionError("{%s:=} applies to " % name + _applies(name))
    common = Common(
        algo=algo,
        vocab_size=vocab_size,
        profile=profile,
        alphabet=alphabet,
        weighted="weights" if weights is not None else "shares" if shares is not None else None,
    )
    config = cls.Config(**{name: options[name] for name in fields if name in options})
    config.validate(common)
    if alphabet == "bytes":  # known before reading the corpus: fail fast
        n_alpha = len(default_alphabet(profile))
        if vocab_size < n_alpha:
            raise OptionError(
                "{vocab_size:v} is smaller than the %d-token alphabet; use {vocab_size} >= %d" % (n_alpha, n_alpha + 1),
                vocab_size=vocab_size,
            )
    if isinstance(special_tokens, (str, bytes)):
        raise TypeError(
            f"special_tokens must be a list of strings, e.g. [{special_tokens!r}], not a single "
            f"{type(special_tokens).__name__} (its characters would each become a token)"
        )
    special_tokens = list(special_tokens)
    if len(set(special_tokens)) != len(special_tokens) or any(not isinstance(s, str) or not s for s in special_tokens):
        raise OptionError("{special_tokens} must be distinct non-empty strings")
    return cls(config), common


def _applies(name: str) -> str:
    """Which trainers take option ``name`` (a template): its field's ``applies`` text, else their names."""
    takers = [t for t in trainers() if any(f.name == name for f in t.Config.options())]
    for t in takers:
        text = t.Config.applies_text(name)
        if text:
            return text
    requires = next(
        (
            f.metadata.get("requires")
            for t in takers
            for f in t.Config.options()
            if f.name == name and f.metadata.get("requires")
        ),
        None,
    )
    titles = " and ".join(t.title for t in takers)
    return (
        titles
        + (" with {%s:=}" % requires if requires else "")
        + "; add "
        + " or ".join("{algo:'%s}" % t.name for t in takers)
    )


def _read_and_count(
    inputs,
    trainer: Trainer,
    parity,
    *,
    from_counts,
    pretokenizer,
    normalize,
    text_field,
    doc_mode,
    separator,
    progress,
    backend,
    workers,
    weights,
    shares,
    lang_field,
    count_candidates,
    common: Common,
):
    """Stages 1-2 of :func:`train`: the count tables (read from ``from_counts`` or counted from ``inputs``), the
    pre-tokenizer, the normalization, the backend's stages, ``training_info`` and the dev texts' counts."""
    algo = common.algo
    needs_runs = trainer.needs_runs  # only supermerges need the letter runs (phase 2's candidates)
    form = check_normalize(normalize)
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
            check_parity_languages(parity, list(inputs))
    elif lang_field is not None and workers is not None:
        raise ValueError("with lang_field the languages are counted in this process; leave workers unset")
    elif (weights is not None or shares is not None) and not tagged and from_counts is None:
        raise ValueError(
            f"{'weights' if weights is not None else 'shares'}= applies to languages; give inputs as "
            "a dict {language: inputs}, or lang_field= with JSONL files, or count tables with "
            "languages"
        )
    if from_counts is not None:
        if inputs is not None:
            raise ValueError("give either inputs (text) or from_counts (count tables), not both")
        counts = load_counts(from_counts)
        pretok = _pretokenizer_for_counts(counts, pretokenizer)
        if needs_runs and not counts.has_runs and count_candidates is None:
            raise ValueError(
                f"algo={algo!r} needs letter runs, but the count table was made without them "
                "(collect_runs=False / 'fastsw count --no-runs'); count again with runs, or use "
                "algo='bpe'"
            )
        if workers is not None:
            raise ValueError("workers applies to counting text; with from_counts there is nothing to count")
        if normalize is not None and form != counts.normalize:
            raise ValueError(
                f"normalize={normalize!r} differs from the normalization the counts were made with "
                f"({counts.normalize!r}); leave normalize unset to use the counts' own"
            )
        form = counts.normalize
        if lang_field is not None:
            raise ValueError("lang_field applies to reading JSONL text; count tables already hold their languages")
        if (weights is not None or shares is not None) and counts.languages is None:
            raise ValueError(
                f"{'weights' if weights is not None else 'shares'}= applies to languages, but the "
                "count table has none; count each language with 'fastsw count --lang LANG=PATH'"
            )
    else:
        if inputs is None:
            raise ValueError(
                "train() needs inputs (a path, a list of paths or an iterable of str documents) or from_counts="
            )
        pretok = make_pretokenizer("script" if pretokenizer is None else pretokenizer)
        n_workers = None if tagged else _counting_workers(inputs, workers, collect_runs=needs_runs)
    trainer.check(pretok, common)
    if not pretok.splits_text and needs_runs:
        raise OptionError(
            "{algo:v} needs a pre-tokenizer that splits documents into words: supermerges join runs of "
            ">= 2 pretokens, and {pretokenizer:'none} makes one pretoken per document; use {algo:'bpe} "
            "with {pretokenizer:'none}, or {pretokenizer:'script}",
            algo=algo,
        )
    stages = _backend(backend, progress, phase2=needs_runs)
    record = {
        "supermerges": None,
        "greedy_split": False,
        "min_count_floor": 15,
        "max_ngram_len": 30,
        **trainer.record(),
    }
    info: dict = {
        "backend": stages.name,
        "options": {
            "algo": algo,
            "vocab_size": common.vocab_size,
            "supermerges": record.pop("supermerges"),
            "profile": common.profile,
            **record,
        },
        "seconds": {},
        "notes": [],
    }
    if form is not None:
        info["options"]["normalize"] = form
    phase1 = getattr(trainer.config, "phase1", None)
    if phase1 is not None:
        info["options"]["phase1"] = phase1

    # 2. pre-tokenize and count
    def count(inputs, n_workers, language=""):
        documents = iter_documents(inputs, text_field=text_field, doc_mode=doc_mode, separator=separator)
        if workers is None and native_counting(pretok):
            # the compiled counter: threads in this process, no pickling
            threads = default_workers()
            bar = Progress(
                "pre-tokenizing" + language + (f" ({threads} threads)" if threads > 1 else ""), enabled=progress
            )
            counts = count_corpus(
                documents, pretok, collect_runs=needs_runs, progress=bar, threads=threads, normalize=form
            )
            info["counting_threads"] = threads
        else:
            label = "pre-tokenizing" + language + (f" ({n_workers} workers)" if n_workers > 1 else "")
            bar = Progress(label, enabled=progress)
            counts = count_corpus_parallel(
                documents, pretok, collect_runs=needs_runs, workers=n_workers, progress=bar, normalize=form
            )
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
            raise ValueError(
                f"the dev texts are not parallel: their numbers of documents differ ({shown}); give "
                "multi-parallel dev texts (document i of each is the same content in every language)"
            )
        return tables

    dev_counts = None
    if parity is not None and parity["dev"] is not None and isinstance(inputs, dict):
        dev_counts = count_dev(list(inputs))  # before the (larger) training text: a bad dev text fails fast
    if from_counts is None and isinstance(inputs, dict):  # one count column per language
        counts = Counts.from_languages(
            {name: count(inp, _counting_workers(inp, workers, needs_runs), f" {name}") for name, inp in inputs.items()}
        )
    elif from_counts is None and lang_field is not None:
        bar = Progress("pre-tokenizing", enabled=progress)
        counts = count_languages(
            iter_language_documents(inputs, lang_field=lang_field, text_field=text_field),
            pretok,
            collect_runs=needs_runs,
            progress=bar,
            normalize=form,
        )
        info["seconds"]["pretokenize_and_count"] = bar.close()
    elif from_counts is None:
        counts = count(inputs, n_workers)
    else:
        info["from_counts"] = True
    if parity is not None:  # the language columns drive parity-aware phase 1 (weights were refused)
        check_parity_languages(parity, counts.languages)
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
    return counts, pretok, form, stages, info, dev_counts


def train(
    inputs: TrainInputs = None,
    *,
    algo: str = "bpe",
    vocab_size: int,
    supermerges: Optional[int] = None,
    profile: str = "paper",
    pretokenizer: PretokenizerSpec = None,
    normalize: Optional[str] = None,
    alphabet: str = "bytes",
    byte_fallback: bool = False,
    greedy_split: bool = False,
    min_count_floor: int = 15,
    max_ngram_len: int = 30,
    special_tokens: Sequence[str] = (),
    text_field: Optional[str] = None,
    doc_mode: str = "auto",
    separator: Optional[str] = None,
    progress: bool = False,
    backend: str = "auto",
    workers: Optional[int] = None,
    from_counts: Union[Counts, PathLike, Sequence[Union[Counts, PathLike]], None] = None,
    weights: Optional[Mapping[str, Number]] = None,
    shares: Optional[Mapping[str, Number]] = None,
    lang_field: Optional[str] = None,
    phase1: Optional[str] = None,
    dev: Optional[Mapping[str, Any]] = None,
    ratios: Optional[Mapping[str, Number]] = None,
    global_merges: Optional[int] = None,
    parity_variant: Optional[str] = None,
    window: Optional[int] = None,
    alpha: Optional[Number] = None,
    min_frequency: Optional[int] = None,
    parity_exhausted: Optional[str] = None,
    overshoot: Optional[float] = None,
    em_iterations: Optional[int] = None,
    score_delta: Optional[float] = None,
    prune_criterion: Optional[str] = None,
    refill: bool = False,
    _count_candidates: Any = None,
    **options: Any,
) -> Tokenizer:
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

    ``algo`` names a trainer of :mod:`fastsw.trainers.registry` (:class:`fastsw.trainers.Trainer`): the five above,
    or one added with :func:`fastsw.trainers.register_trainer`, whose options are keywords too (``**options``). Each
    option belongs to the trainers whose config has it; given with another ``algo`` (not at its default) it is an
    error that says which ``algo`` takes it. Every option is checked before any text is read.

    Ctrl-C raises ``KeyboardInterrupt`` in every stage (the merge kernels run in a worker
    thread and stop at their next merge step; no thread is left running).

    Returns a :class:`Tokenizer`; ``tok.training_info`` holds the stage timings,
    corpus statistics and notes.

    ``_count_candidates(stages, counts, words, tok1)`` (internal, :func:`fastsw.corpus.distributed.train`) counts the
    supermerge candidates of stage 4 elsewhere (from the text again, with the phase-1 model ``tok1``), so
    ``from_counts`` tables need no letter runs.
    """
    trainer, common = resolve(
        algo=algo,
        vocab_size=vocab_size,
        profile=profile,
        alphabet=alphabet,
        byte_fallback=byte_fallback,
        weights=weights,
        shares=shares,
        special_tokens=special_tokens,
        options=dict(
            supermerges=supermerges,
            greedy_split=greedy_split,
            min_count_floor=min_count_floor,
            max_ngram_len=max_ngram_len,
            phase1=phase1,
            dev=dev,
            ratios=ratios,
            global_merges=global_merges,
            parity_variant=parity_variant,
            window=window,
            alpha=alpha,
            min_frequency=min_frequency,
            parity_exhausted=parity_exhausted,
            overshoot=overshoot,
            em_iterations=em_iterations,
            score_delta=score_delta,
            prune_criterion=prune_criterion,
            refill=refill,
            **options,
        ),
    )
    vocab_size, special_tokens = common.vocab_size, list(special_tokens)
    parity = trainer.parity()
    if parity is not None and inputs is not None and not isinstance(inputs, dict) and lang_field is None:
        check_parity_languages(parity, None)  # before reading: the text has no languages
    # 1-2. read and count (or load count tables)
    try:
        source = _read_and_count(
            inputs,
            trainer,
            parity,
            from_counts=from_counts,
            pretokenizer=pretokenizer,
            normalize=normalize,
            text_field=text_field,
            doc_mode=doc_mode,
            separator=separator,
            progress=progress,
            backend=backend,
            workers=workers,
            weights=weights,
            shares=shares,
            lang_field=lang_field,
            count_candidates=_count_candidates,
            common=common,
        )
        counts, pretok, form, stages, info, dev_counts = source
        # 3. the alphabet and the room it leaves
        own_alphabet = pretok.make_alphabet(
            profile
        )  # a scheme with atoms beyond bytes (markers, SCRIPT; fastsw.alphabet)
        if own_alphabet is not None:
            if alphabet != "bytes":
                raise ValueError(
                    f"alphabet={alphabet!r} does not go with pretokenizer {pretok.name!r}"
                    ", whose alphabet is the profile's bytes plus its atoms; leave alphabet unset"
                )
            alph: Alphabet = own_alphabet
        elif alphabet == "bytes":
            alph = default_alphabet(profile)
        else:
            alph = CharAlphabet({ch for p in counts.pretokens for ch in p}, byte_fallback=byte_fallback)
        n_alpha = len(alph)
        if vocab_size < n_alpha:
            raise OptionError(
                "{vocab_size:v} is smaller than the %d-token alphabet; use {vocab_size} >= %d" % (n_alpha, n_alpha),
                vocab_size=vocab_size,
            )
        if trainer.phase1_merges(vocab_size - n_alpha) < 0:
            n_super = vocab_size - n_alpha - trainer.phase1_merges(vocab_size - n_alpha)
            raise OptionError(
                "{vocab_size} - {supermerges} = %d is smaller than the %d-token alphabet"
                % (vocab_size - n_super, n_alpha)
            )
        # 4-6. fit: the trainer's stages
        run = Run(
            counts=counts,
            alphabet=alph,
            pretokenizer=pretok,
            profile=profile,
            rules=get_profile(profile),
            vocab_size=vocab_size,
            stages=stages,
            info=info,
            normalize=form,
            special_tokens=special_tokens,
            progress=progress,
            dev_counts=dev_counts,
            from_counts=from_counts is not None,
            count_candidates=_count_candidates,
            model_class=Tokenizer,
        )
        tok = trainer.fit(run)
    finally:
        _stop_compiling_ahead()
    for note in info["notes"]:  # each says how the vocabulary fell short of vocab_size
        warnings.warn(note, VocabularyNotReachedWarning, stacklevel=2)
    return tok
