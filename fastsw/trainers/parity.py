"""Parity-aware BPE, the plain-Python reference (SPEC section 8; seed 001).

Parity-aware BPE (Foroutan et al.) learns merges from one training text per language and, at every step,
takes the merge from the language that is currently worst off: the one whose multi-parallel dev text needs
the most tokens, or, with target compression ratios instead of dev texts, the one whose training text is
furthest below its target. The merge is then applied to every language's training and dev words.

This module owns only that selection loop, over plain data: per-language aggregated words (lists of token
ids with counts). Pair counting, tie-breaking and merge application are :class:`fastsw.trainers.bpe.PairMerger`'s,
one merger per language (plus one over all languages' words for the hybrid's global steps, plus one per dev
text, whose ``merge`` return value is exactly that dev text's drop in length, so dev lengths are updated
incrementally and the dev text is never re-encoded). Reading text, pre-tokenizing and counting belong to
the caller (:mod:`fastsw.corpus.counting`).

The anchor is the published script (``parity_aware_learn_bpe.py`` of cimeister/parity-aware-bpe, MIT):
same language choices, dev lengths and merges on inputs without count ties. Differences, on purpose:

* count ties go by the fastsw profile (``paper``: smaller byte pair; ``hf``: smaller id pair) where the
  script takes the *largest* string pair;
* pairs are counted by the profile's rule: the script counts overlapping pairs, as the ``hf`` profile does;
* target-ratio comparisons are exact (``fractions.Fraction``), where the script uses floats;
* by default (``exhausted="skip"``) a language with no pair left occurring ``min_frequency`` times is passed
  over and the run goes on with the others; the script stops there (``exhausted="stop"``). With the default
  ``script`` pre-tokenizer Thai runs out first: every Thai letter is its own pretoken, so its words are
  single characters whose few byte pairs are soon merged.
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction
from numbers import Real
from typing import Dict, Hashable, List, NamedTuple, Optional, Sequence, Tuple

from fastsw._types import Number
from fastsw.alphabet import Profile, get_profile
from fastsw.trainers.bpe import PairMerger

Lang = Hashable
Words = Tuple[Sequence[Sequence[int]], Sequence[int]]

VARIANTS = ("base", "window")

#: What a step does when the chosen language has no pair left occurring ``min_frequency`` times: ``"skip"``
#: (default) passes it over and takes the next worst-off language, so training goes on until every language
#: is exhausted; ``"stop"`` ends training there (the published script's rule).
EXHAUSTED = ("skip", "stop")


class ParityMerges(NamedTuple):
    """What :func:`learn_parity_merges` returns.

    ``merges``: ``(left, right, count)`` in rank order, ``count`` being the pair's count in the column it
    was chosen from (the chosen language's, or the summed one for a global step).
    ``languages``: per merge, the chosen language, ``None`` for a global (hybrid) step.
    ``lengths``: the lengths the choice is made on, one ``{lang: tokens}`` per state: ``lengths[0]`` before
    the first merge, ``lengths[k + 1]`` after merge ``k``. With dev texts these are the dev texts' token
    counts; with target ratios, the training texts'.
    ``words``: per language, its training words after all merges (parallel to the input words); None from the
    fast path, which returns the words as packed arrays beside this record.
    """

    merges: List[Tuple[int, int, int]]
    languages: List[Optional[Lang]]
    lengths: List[Dict[Lang, int]]
    words: Optional[Dict[Lang, List[List[int]]]]


def _check_words(what: str, lang, value) -> Tuple[List[Sequence[int]], List[int]]:
    try:
        words, counts = value
    except (TypeError, ValueError):
        raise TypeError(
            f"{what}[{lang!r}] must be a pair (words, counts) of token-id lists and their counts, "
            f"got {type(value).__name__}"
        ) from None
    words, counts = list(words), list(counts)
    if len(words) != len(counts):
        raise ValueError(f"{what}[{lang!r}] has {len(words)} words but {len(counts)} counts; give one count per word")
    if any(c < 0 for c in counts):
        raise ValueError(f"{what}[{lang!r}] has a negative count; counts must be >= 0")
    if sum(c * len(w) for w, c in zip(words, counts)) == 0:
        raise ValueError(f"language {lang!r} has no text in {what}: give it a non-empty text or leave the language out")
    return words, counts


class ParityArgs(NamedTuple):
    """:func:`check_parity_args`' result: the arguments checked and normalised (``ratios`` and ``alpha`` as
    ``Fraction``, ``alpha`` only for the window variant; ``train``/``dev`` as ``{lang: (words list, counts
    list)}``; ``columns`` the count columns), and the loop's other options as given."""

    profile: Profile
    languages: List[Lang]
    train: Dict[Lang, Tuple[List[Sequence[int]], List[int]]]
    dev: Optional[Dict[Lang, Tuple[List[Sequence[int]], List[int]]]]
    ratios: Optional[Dict[Lang, Fraction]]
    columns: int
    alpha: Optional[Fraction]  # the window variant's, else None
    global_merges: int
    variant: str
    window: int
    min_frequency: int
    exhausted: str


#: The options of :func:`learn_parity_merges` that ``parity_options`` (``training_info["parity"]``) holds under the
#: same names.
LOOP_OPTIONS = ("global_merges", "variant", "window", "alpha", "min_frequency", "exhausted")


def loop_options(parity: dict) -> dict:
    """The keywords of :func:`learn_parity_merges` that a trainer's resolved parity options give."""
    return {name: parity[name] for name in LOOP_OPTIONS}


def check_parity_args(
    train_words,
    profile,
    n_merges,
    *,
    dev_words=None,
    dev_sizes=None,
    ratios=None,
    global_merges=0,
    variant="base",
    window=100,
    alpha=2,
    min_frequency=2,
    exhausted="skip",
) -> ParityArgs:
    """Check :func:`learn_parity_merges`' arguments (one clear ``ValueError``/``TypeError`` each); shared by the
    reference and the fast path (:mod:`fastsw.trainers.parity_fast`), so both refuse the same input the same way."""
    if isinstance(profile, str):
        profile = get_profile(profile)
    elif not isinstance(profile, Profile):
        raise TypeError(f"profile must be a profile name ('paper' or 'hf') or a Profile, got {profile!r}")
    if not isinstance(train_words, dict) or not train_words:
        raise ValueError("train_words must be a non-empty dict {language: (words, counts)}")
    langs = list(train_words)
    train = {lang: _check_words("train_words", lang, train_words[lang]) for lang in langs}
    for name, value, low in (("n_merges", n_merges, 0), ("global_merges", global_merges, 0), ("window", window, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    if variant not in VARIANTS:
        raise ValueError(f"variant={variant!r} is not one of {', '.join(VARIANTS)}")
    if exhausted not in EXHAUSTED:
        raise ValueError(f"exhausted={exhausted!r} is not one of {', '.join(EXHAUSTED)}")
    if (dev_words is None) == (ratios is None):
        raise ValueError(
            "give exactly one of dev_words (multi-parallel dev texts) or ratios (target compression ratio per language)"
        )
    columns = len(langs) + (1 if global_merges else 0)
    if variant == "window":
        if isinstance(alpha, bool) or not isinstance(alpha, Real) or alpha * len(langs) < columns:
            need = Fraction(columns, len(langs))
            raise ValueError(f"alpha={alpha!r} would let the window exclude every language; use alpha >= {need}")
        alpha = Fraction(alpha)

    def same_languages(what: str, keys) -> None:
        missing = [lang for lang in langs if lang not in keys]
        extra = [lang for lang in keys if lang not in train_words]
        if extra:
            raise ValueError(
                f"{what} names language(s) {', '.join(map(repr, extra))} with no training text; "
                "give their training text too or leave them out"
            )
        if missing:
            raise ValueError(
                f"{what} is missing language(s) {', '.join(map(repr, missing))}; give one per training language"
            )

    dev = None
    if dev_words is not None:
        same_languages("dev_words", dev_words)
        if dev_sizes is not None:
            same_languages("dev_sizes", dev_sizes)
            if len({dev_sizes[lang] for lang in langs}) > 1:
                sizes = ", ".join(f"{lang}: {dev_sizes[lang]}" for lang in langs)
                raise ValueError(
                    f"the dev texts are not parallel: their numbers of documents differ ({sizes}); "
                    "give multi-parallel dev texts (line i of each is the same content)"
                )
        dev = {lang: _check_words("dev_words", lang, dev_words[lang]) for lang in langs}
        target = None
    else:
        same_languages("ratios", ratios)
        for lang in langs:
            r = ratios[lang]
            if isinstance(r, bool) or not isinstance(r, Real) or not r > 0:
                raise ValueError(f"ratios[{lang!r}]={r!r} must be a number > 0")
        target = {lang: Fraction(ratios[lang]) for lang in langs}
    options = (global_merges, variant, window, min_frequency, exhausted)
    return ParityArgs(profile, langs, train, dev, target, columns, alpha if variant == "window" else None, *options)


def learn_parity_merges(
    train_words: Dict[Lang, Words],
    token_bytes: List[bytes],
    profile,
    n_merges: int,
    *,
    dev_words: Optional[Dict[Lang, Words]] = None,
    dev_sizes: Optional[Dict[Lang, int]] = None,
    ratios: Optional[Dict[Lang, Number]] = None,
    global_merges: int = 0,
    variant: str = "base",
    window: int = 100,
    alpha: Number = 2,
    min_frequency: int = 2,
    exhausted: str = "skip",
    progress=None,
) -> ParityMerges:
    """Learn up to ``n_merges`` parity-aware BPE merges.

    ``train_words`` maps each language (in the order that breaks ties: the first wins) to ``(words,
    counts)``, its aggregated training pretokens as token-id lists. ``token_bytes`` is the vocabulary so
    far (new tokens are appended, merge k creating id ``len(token_bytes)`` at that time); ``profile`` a
    :class:`~fastsw.alphabet.Profile` or its name. Give exactly one of

    * ``dev_words``: the same languages' multi-parallel dev texts, pre-tokenized and counted the same way
      (``dev_sizes``, their number of documents, is checked to be equal when given): each step chooses
      the language whose dev text needs the most tokens, Σ len(word) × count;
    * ``ratios``: a target compression ratio (> 0) per language: each step chooses the language with the
      lowest (initial training length / current training length) / ratio, compared exactly.

    Ties go to the first language. The chosen language's best pair is taken by its own counts, with the
    profile's counting and tie rule (the published script breaks count ties by the largest string pair;
    fastsw follows its profile), and merged in every language's training and dev words. A language whose
    best count is below ``min_frequency`` (or that has no pair left) is exhausted; it stays so, since a merge
    only creates pairs that occur at most as often as the merged pair did in that language. With
    ``exhausted="skip"`` (default) the next worst-off language is taken instead and the run stops when every
    language is exhausted; with ``exhausted="stop"`` the run stops at the first exhausted choice (the
    published script's rule). A global step stops the run when the summed column is exhausted (then every
    language is).

    Hybrid: the first ``global_merges`` steps are ordinary BPE steps on the counts summed over languages.
    ``variant="window"``: a language is allowed only if its number of selections among the last ``window``
    language-chosen steps, divided by ``window``, is at most ``alpha`` / C, C being the number of count
    columns (the languages, plus the summed column when hybrid, as in the published script); languages are
    tried in order of the criterion until one is allowed; with ``exhausted="skip"``, when every allowed
    language is exhausted, the worst-off language that is not is taken (the window cannot balance languages
    that have nothing left).

        >>> tb = [bytes([b]) for b in range(256)]
        >>> a, b, c = ord("a"), ord("b"), ord("c")
        >>> train = {"x": ([[a, b, a, b]], [5]), "y": ([[c, a, c, a]], [1])}
        >>> dev = {"x": ([[a, b]], [1]), "y": ([[c, a, c, a]], [1])}
        >>> out = learn_parity_merges(train, tb, "hf", 3, dev_words=dev)  # y, then x on a tie, then y is exhausted
        >>> out.languages, [tb[l] + tb[r] for l, r, _ in out.merges]  # so x takes the third step
        (['y', 'x', 'x'], [b'ca', b'ab', b'abab'])
        >>> out.lengths
        [{'x': 2, 'y': 4}, {'x': 2, 'y': 2}, {'x': 1, 'y': 2}, {'x': 1, 'y': 2}]
        >>> tb = [bytes([b]) for b in range(256)]
        >>> learn_parity_merges(train, tb, "hf", 3, dev_words=dev, exhausted="stop").languages  # the script's rule
        ['y', 'x']
    """
    args = check_parity_args(
        train_words,
        profile,
        n_merges,
        dev_words=dev_words,
        dev_sizes=dev_sizes,
        ratios=ratios,
        global_merges=global_merges,
        variant=variant,
        window=window,
        alpha=alpha,
        min_frequency=min_frequency,
        exhausted=exhausted,
    )
    profile, langs, train, columns, alpha = args.profile, args.languages, args.train, args.columns, args.alpha
    dev_mergers: Dict[Lang, PairMerger] = {}
    if args.dev is not None:
        for lang in langs:
            dev_mergers[lang] = PairMerger(*args.dev[lang], token_bytes, profile)
        lengths = {lang: sum(len(w) * c for w, c in zip(m.words, m.counts)) for lang, m in dev_mergers.items()}
    else:
        target = args.ratios
        lengths = {lang: sum(len(w) * c for w, c in zip(*train[lang])) for lang in langs}
        initial = dict(lengths)

    mergers = {lang: PairMerger(words, counts, token_bytes, profile) for lang, (words, counts) in train.items()}
    summed = None
    if global_merges:
        summed = PairMerger(
            [w for lang in langs for w in train[lang][0]],
            [c for lang in langs for c in train[lang][1]],
            token_bytes,
            profile,
        )

    if dev_words is not None:

        def order() -> List[Lang]:  # most dev tokens first; stable sort keeps the first on ties
            return sorted(langs, key=lambda lang: -lengths[lang])
    else:

        def order() -> List[Lang]:  # lowest (initial / current) / ratio first, exact
            return sorted(langs, key=lambda lang: Fraction(initial[lang], lengths[lang]) / target[lang])

    history: deque = deque(maxlen=window)
    merges: List[Tuple[int, int, int]] = []
    chosen: List[Optional[Lang]] = []
    length_history = [dict(lengths)]

    def usable(best) -> bool:
        return best is not None and best[0] >= min_frequency

    for step in range(n_merges):
        if step < global_merges:
            lang, best = None, summed.best()
        else:
            ranked = order()
            if variant == "window":
                allowed = [l for l in ranked if history.count(l) * columns <= alpha * window]
                ranked = allowed + [l for l in ranked if l not in allowed]  # the others only when skipping
            else:
                allowed = ranked
            for lang in ranked if exhausted == "skip" else allowed[:1]:
                best = mergers[lang].best()
                if usable(best):
                    break
            if variant == "window" and usable(best):
                history.append(lang)
        if not usable(best):
            break
        count, (left, right) = best
        new_id = len(token_bytes)
        token_bytes.append(token_bytes[left] + token_bytes[right])
        if summed is not None:
            if step + 1 < global_merges:
                summed.merge((left, right), new_id)
            else:
                summed = None  # the summed column is not used again
        for l in langs:
            shortened = mergers[l].merge((left, right), new_id)
            if dev_words is None:
                lengths[l] -= shortened
            else:
                lengths[l] -= dev_mergers[l].merge((left, right), new_id)
        merges.append((left, right, count))
        chosen.append(lang)
        length_history.append(dict(lengths))
        if progress is not None:
            progress.update(1)
    return ParityMerges(merges, chosen, length_history, {lang: m.words for lang, m in mergers.items()})


# ---------------------------------------------------------------------------------------------------------------
# phase 1 of fastsw.train on the reference path: the language columns of a count table


def check_parity_languages(parity: dict, languages) -> None:
    """The training languages are known: parity-aware BPE needs them, and dev/ratios name exactly them."""
    if languages is None:
        raise ValueError(
            "parity-aware BPE trains on one text per language: give inputs as a dict {language: "
            "inputs}, or lang_field= with JSONL files, or count tables with languages ('fastsw count "
            "--lang')"
        )
    name = "dev" if parity["dev"] is not None else "ratios"
    keys = list(parity[name])
    extra = [lang for lang in keys if lang not in languages]
    if extra:
        raise ValueError(
            f"{name}= names language(s) {', '.join(map(repr, extra))} with no training text (training "
            f"languages: {', '.join(languages)}); give their training text too or leave them out"
        )
    missing = [lang for lang in languages if lang not in keys]
    if missing:
        raise ValueError(
            f"{name}= is missing language(s) {', '.join(map(repr, missing))}; give one per training language"
        )


def _plain_number(x):
    """A JSON-friendly number for ``training_info``: ints and floats as they are, other rationals as ``"p/q"``."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return x
    f = Fraction(x)
    return f"{f.numerator}/{f.denominator}"


#: ``{language: (words as initial ids, their counts)}``, what :func:`learn_parity_merges` takes.
LanguageWords = Dict[Hashable, Tuple[Sequence[Sequence[int]], Sequence[int]]]


def parity_phase1(counts, alphabet, profile, n_merges: int, parity: dict, dev_counts=None, progress=None):
    """Phase 1 with parity-aware BPE (:func:`learn_parity_merges`, the reference; the numba backend runs its twin
    :func:`fastsw.trainers.parity_fast.parity_phase1_packed`) over the language columns of ``counts``;
    ``dev_counts`` are the dev texts' tables (``{language: Counts}``, counted like the training text) when
    ``parity["dev"]`` is used. Returns ``(merges, words, token_bytes, result)``: ``words`` the final token ids of
    every pretoken of ``counts`` (a list, as :meth:`fastsw.trainers.superword.ReferenceBackend.phase1` gives),
    ``result`` the :class:`ParityMerges`.

    A pretoken's final word depends only on its initial ids and the merges, so it is taken from the first
    language that has the pretoken."""
    tables = counts.by_language()
    train_words: LanguageWords = {
        lang: ([alphabet.initial_ids(p) for p in t.pretokens], t.counts) for lang, t in tables.items()
    }
    dev_words: Optional[LanguageWords] = None
    dev_sizes = None
    if dev_counts is not None:
        dev_words = {
            lang: ([alphabet.initial_ids(p) for p in dev_counts[lang].pretokens], dev_counts[lang].counts)
            for lang in tables
        }
        dev_sizes = {lang: dev_counts[lang].n_documents for lang in tables}
    token_bytes = list(alphabet.tokens)
    result = learn_parity_merges(
        train_words,
        token_bytes,
        profile,
        n_merges,
        dev_words=dev_words,
        dev_sizes=dev_sizes,
        ratios=None if parity["ratios"] is None else {l: parity["ratios"][l] for l in tables},
        progress=progress,
        **loop_options(parity),
    )
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


def parity_record(parity: dict, result, languages, dev_counts) -> dict:
    """``training_info["parity"]``: the options and, compactly, the run: ``chosen`` is per merge the index of the
    chosen language in ``languages`` (-1 for a global step of the hybrid), ``lengths`` the criterion's token
    counts before the first and after the last merge (dev texts', or training texts' with ratios)."""
    index = {lang: k for k, lang in enumerate(languages)}
    record = {
        "variant": parity["variant"],
        "languages": list(languages),
        "criterion": "dev" if parity["dev"] is not None else "ratios",
        "global_merges": parity["global_merges"],
        "min_frequency": parity["min_frequency"],
        "exhausted": parity["exhausted"],
        "chosen": [-1 if lang is None else index[lang] for lang in result.languages],
        "lengths": {"initial": result.lengths[0], "final": result.lengths[-1]},
    }
    if parity["variant"] == "window":
        record.update(window=parity["window"], alpha=_plain_number(parity["alpha"]))
    if parity["ratios"] is not None:
        record["ratios"] = {lang: _plain_number(parity["ratios"][lang]) for lang in languages}
    if dev_counts is not None:
        record["dev_documents"] = dev_counts[languages[0]].n_documents
    return record
