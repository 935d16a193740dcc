"""The parity-aware BPE trainer: ``algo="parity-bpe"``, and the options of ``phase1="parity-bpe"`` for
BoundlessBPE and SuperBPE (:mod:`fastsw.trainers.parity` learns the merges; :mod:`fastsw.trainers.parity_fast` is
its fast twin)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from numbers import Real
from typing import ClassVar, Optional

from fastsw.trainers.algorithms.bpe import fit_phase1
from fastsw.trainers.base import Common, OptionError, Run, Trainer, TrainerConfig, option
from fastsw.trainers.parity import EXHAUSTED, VARIANTS, parity_phase1, parity_record, replay_counts


@dataclass
class ParityConfig(TrainerConfig):
    """Parity-aware BPE's options (``algo="parity-bpe"``, or ``phase1="parity-bpe"`` of BoundlessBPE and
    SuperBPE)."""

    help_title: ClassVar[str] = "parity-aware BPE"
    help_text: ClassVar[str] = (
        "--algo parity-bpe, or --phase1 parity-bpe with --algo boundless/superbpe: each "
        "merge comes from the language that is worst off (needs --lang)."
    )
    help_order: ClassVar[int] = 3
    applies: ClassVar[Optional[str]] = (
        "parity-aware BPE; add {algo:'parity-bpe} (or {phase1:'parity-bpe} with {algo:'boundless} or {algo:'superbpe})"
    )

    dev: Optional[dict] = option(
        None,
        "multi-parallel dev text of LANG (one per --lang language, the same number "
        "of documents each; several files per language are read in order): each merge "
        "comes from the language whose dev text needs the most tokens",
        metavar="LANG=PATH",
        action="append",
    )
    ratios: Optional[dict] = option(
        None,
        "target compression ratio R > 0 of LANG (one per --lang language), "
        "instead of --dev: each merge comes from the language furthest below its target",
        flag="--ratio",
        metavar="LANG=R",
        action="append",
    )
    global_merges: Optional[int] = option(
        None, "hybrid: the first N merges are ordinary BPE on the summed counts (default: 0)", metavar="N", type=int
    )
    parity_variant: Optional[str] = option(
        None,
        "base (default) or window: a language chosen too often in the last --window steps is passed over",
        choices=VARIANTS,
    )
    window: Optional[int] = option(
        None, "with --parity-variant window: steps remembered (default: 100)", metavar="W", type=int
    )
    alpha: Optional[Real] = option(
        None,
        "with --parity-variant window: a language may take at most A / (languages) of the window (default: 2)",
        metavar="A",
        type=Fraction,
    )
    min_frequency: Optional[int] = option(
        None, "a language whose best pair occurs fewer than F times is exhausted (default: 2)", metavar="F", type=int
    )
    parity_exhausted: Optional[str] = option(
        None,
        "skip (default): pass an exhausted language over and go on "
        "with the others until the vocabulary is reached; stop: stop training "
        "there (the published script's rule)",
        choices=EXHAUSTED,
    )

    def validate(self, common: Common) -> None:
        self.resolved: Optional[dict] = parity_options(self, common)


_PLACEHOLDERS = {"dev=": "{language: dev text}", "ratios=": "{language: target compression ratio}"}
PARITY_FIELDS = tuple(f.name for f in ParityConfig.options())


def parity_options(config, common: Common) -> dict:
    """The parity-aware options of ``config`` (a :class:`ParityConfig` or a config with its fields) with their
    defaults, checked before any text is read."""
    if common.weighted is not None:
        raise OptionError(
            "{%s:=} does not apply to parity-aware BPE: it balances the languages itself (each step "
            "takes the worst-off language's best pair by that language's own counts, which a weight "
            "would only scale); leave it out, or use {algo:'bpe}" % common.weighted
        )
    dev, ratios = config.dev, config.ratios
    if dev is None and ratios is None:
        raise OptionError(
            "parity-aware BPE needs {dev:=*} (multi-parallel dev texts) or {ratios:=*}: exactly one of "
            "{dev:=} or {ratios:=}",
            **_PLACEHOLDERS,
        )
    if dev is not None and ratios is not None:
        raise OptionError(
            "give either {dev:=*} (multi-parallel dev texts) or {ratios:=*}, not both: parity-aware "
            "BPE needs exactly one of them",
            **_PLACEHOLDERS,
        )
    for name, value in (("dev", dev), ("ratios", ratios)):
        if value is not None and (not isinstance(value, dict) or not value):
            raise OptionError(
                "{%s:=} must be a non-empty dict {{language: ...}}, one entry per training language" % name
            )
    if ratios is not None:
        for lang, r in ratios.items():
            if isinstance(r, bool) or not isinstance(r, Real) or not r > 0:  # type: ignore[operator]
                raise OptionError("{ratios}[%r]=%r must be a number > 0 (a target compression ratio)" % (lang, r))
    out = {
        "dev": dev,
        "ratios": ratios,
        "global_merges": 0 if config.global_merges is None else config.global_merges,
        "variant": "base" if config.parity_variant is None else config.parity_variant,
        "window": 100 if config.window is None else config.window,
        "alpha": 2 if config.alpha is None else config.alpha,
        "min_frequency": 2 if config.min_frequency is None else config.min_frequency,
        "exhausted": "skip" if config.parity_exhausted is None else config.parity_exhausted,
    }
    if out["variant"] not in VARIANTS:
        raise OptionError("{parity_variant:v} is not one of %s" % ", ".join(VARIANTS), parity_variant=out["variant"])
    if out["exhausted"] not in EXHAUSTED:
        raise OptionError(
            "{parity_exhausted:v} is not one of %s" % ", ".join(EXHAUSTED), parity_exhausted=out["exhausted"]
        )
    if out["variant"] != "window":
        for name in ("window", "alpha"):
            if getattr(config, name) is not None:
                raise OptionError("{%s:=} applies to {parity_variant:'window}; add it or leave {%s} out" % (name, name))
    from fastsw.corpus.counting import as_integer

    for name, low in (("global_merges", 0), ("window", 1), ("min_frequency", 1)):
        if as_integer(out[name]) is None or out[name] < low:
            raise OptionError("{%s:v} must be an integer >= %d" % (name, low), **{name: out[name]})
        out[name] = as_integer(out[name])
    return out


def parity_phase1_on(run: Run, n_merges: int, parity: dict, *, progress=None, replay: bool = False):
    """Parity-aware phase 1 of ``run`` on its backend (the fast twin on numba); records
    ``training_info["parity"]``. Returns ``(merges, words, token_bytes, result, keys)``, ``keys`` BoundlessBPE's
    :func:`replay_counts` when ``replay``."""
    counts = run.counts
    if run.stages.name == "numba":  # the fast twin (fastsw.trainers.parity_fast): packed words, same results
        from fastsw.trainers.parity_fast import parity_phase1_packed

        merges, words, token_bytes, result = parity_phase1_packed(
            counts, run.alphabet, run.rules, n_merges, parity, run.dev_counts, progress=progress
        )
    else:
        merges, words, token_bytes, result = parity_phase1(
            counts, run.alphabet, run.rules, n_merges, parity, run.dev_counts, progress=progress
        )
    keys = replay_counts(merges, words, counts.counts, len(run.alphabet)) if replay else None
    if run.stages.name != "numba":
        words = run.stages.adopt_words(words)
    run.info["parity"] = parity_record(parity, result, counts.languages, run.dev_counts)
    return merges, words, token_bytes, result, keys


def note_parity_stop(run: Run, parity: dict, got: int, wanted: int) -> None:
    """The note of a parity-aware phase 1 that stopped before ``wanted`` merges."""
    if run.counts.pretokens and got < wanted:
        why = (
            "the language chosen next had no pair left"
            if parity["exhausted"] == "stop"
            else "no language had a pair left"
        )
        run.note(
            f"parity-aware BPE stopped after {got} of {wanted} phase-1 merges: {why} occurring at least "
            f"min_frequency={parity['min_frequency']} times; the model is smaller than requested"
        )


class ParityBPETrainer(Trainer):
    """``algo="parity-bpe"``: BPE whose every merge comes from the language that is worst off; the model is a
    plain BPE model (``tok.algo == "bpe"``)."""

    name = "parity-bpe"
    title = "parity-aware BPE"
    summary = "parity-aware BPE (--lang texts and --dev or --ratio; a plain BPE model)"
    Config = ParityConfig

    def parity(self) -> Optional[dict]:
        return self.config.resolved

    def check(self, pretokenizer, common: Common) -> None:
        check_parity_pretokenizer(pretokenizer)

    def fit(self, run: Run):
        n = run.vocab_size - len(run.alphabet)
        parity = self.config.resolved
        merges = fit_phase1(run, n, parity, learner=parity_phase1_on).merges
        note_parity_stop(run, parity, len(merges), n)
        return run.tokenizer([(l, r, c, False) for l, r, c in merges], algo="bpe")


def check_parity_pretokenizer(pretok) -> None:
    """Parity-aware BPE cannot train with SCRIPT v3, whose learner has no merge rule
    (:mod:`fastsw.pretokenizers.script_v3`)."""
    if pretok.has_merge_rule:
        raise ValueError(
            f"parity-aware BPE cannot train with pretokenizer {pretok.name!r}: its "
            "merges would not respect SCRIPT's rule that a token is whole characters; use algo='bpe', "
            "'boundless' or 'superbpe' (phase1='bpe') with SCRIPT, or another pre-tokenizer"
        )
