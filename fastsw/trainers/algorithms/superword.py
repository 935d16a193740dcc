"""The BoundlessBPE (``algo="boundless"``) and SuperBPE (``algo="superbpe"``) trainers: phase 1 (BPE or
parity-aware BPE), the supermerge candidates of the letter runs, phase 2 (:mod:`fastsw.trainers.superword` on the
reference path, :mod:`fastsw.trainers.bpe_fast` on the fast one)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar, Optional

from fastsw.trainers.algorithms.bpe import fit_phase1, note_short_phase1
from fastsw.trainers.algorithms.parity_bpe import (
    PARITY_FIELDS,
    ParityConfig,
    check_parity_pretokenizer,
    note_parity_stop,
    parity_options,
    parity_phase1_on,
)
from fastsw.trainers.base import Common, OptionError, Run, Trainer, option
from fastsw.trainers.superword import interleave

_GREEDY = "BoundlessBPE and SuperBPE; add {algo:'boundless} or {algo:'superbpe}"
_SPLIT = "BoundlessBPE and SuperBPE with {greedy_split:=}; add {algo:'boundless} or {algo:'superbpe}"
_PHASE1 = (
    "BoundlessBPE and SuperBPE (the phase-1 trainer); add {algo:'boundless} or {algo:'superbpe}, or for a "
    "plain parity-aware model use {algo:'parity-bpe}"
)


@dataclass
class SuperwordConfig(ParityConfig):
    """The options of BoundlessBPE and SuperBPE: the phase-1 trainer (with parity-aware BPE's options) and the
    greedy split of supermerge candidates (Algorithm 2)."""

    help_title: ClassVar[str] = "BoundlessBPE and SuperBPE supermerge candidates"
    help_text: ClassVar[str] = "--algo boundless (Algorithm 1 decides the split itself) or superbpe"
    help_order: ClassVar[int] = 2

    phase1: Optional[str] = option(
        None,
        "phase-1 trainer of --algo boundless/superbpe (default: bpe)",
        choices=("bpe", "parity-bpe"),
        applies=_PHASE1,
        group=ParityConfig,
    )
    greedy_split: bool = option(
        False, "split supermerge candidates into frequent n-grams (boundless/superbpe)", applies=_GREEDY
    )
    min_count_floor: int = option(
        15,
        "with --greedy-split: lower bound of the n-gram min count (default: 15)",
        metavar="N",
        type=int,
        applies=_SPLIT,
    )
    max_ngram_len: int = option(
        30, "with --greedy-split: longest n-gram (default: 30)", metavar="N", type=int, applies=_SPLIT
    )

    def validate(self, common: Common) -> None:
        from fastsw.corpus.counting import as_integer

        if self.phase1 not in (None, "bpe", "parity-bpe"):
            raise OptionError("{phase1:v} is not one of 'bpe', 'parity-bpe'", phase1=self.phase1)
        self.resolved = None
        if self.phase1 == "parity-bpe":
            self.resolved = parity_options(self, common)
        else:
            for name in PARITY_FIELDS:
                if getattr(self, name) is not None:
                    raise OptionError("{%s:=} applies to " % name + (ParityConfig.applies_text(name) or ""))
        if as_integer(self.min_count_floor) is None or self.min_count_floor < 0:
            raise OptionError(
                "{min_count_floor} must be a non-negative integer, not {min_count_floor:r}",
                min_count_floor=self.min_count_floor,
            )
        if as_integer(self.max_ngram_len) is None or self.max_ngram_len < 2:
            raise OptionError(
                "{max_ngram_len} must be an integer >= 2, not {max_ngram_len:r}", max_ngram_len=self.max_ngram_len
            )
        self.min_count_floor = as_integer(self.min_count_floor) or 0
        self.max_ngram_len = as_integer(self.max_ngram_len) or 0


@dataclass
class BoundlessConfig(SuperwordConfig):
    """BoundlessBPE's options: Algorithm 1 decides the number of supermerges itself."""


@dataclass
class SuperBPEConfig(SuperwordConfig):
    """SuperBPE's options: ``supermerges`` fixed supermerges after ``vocab_size - supermerges`` phase-1 tokens."""

    help_title: ClassVar[str] = "SuperBPE"
    help_text: ClassVar[str] = (
        "--algo superbpe: phase 1 learns --vocab-size minus S regular merges, phase 2 S supermerges"
    )
    help_order: ClassVar[int] = 1
    applies: ClassVar[Optional[str]] = (
        "SuperBPE; add {algo:'superbpe} (BoundlessBPE decides the number of supermerges itself)"
    )

    supermerges: Optional[int] = option(
        None, "number of supermerges (--algo superbpe only; must be < --vocab-size)", metavar="S", type=int
    )

    def validate(self, common: Common) -> None:
        from fastsw.corpus.counting import as_integer

        if self.supermerges is None:
            raise OptionError(
                "{algo:'superbpe} needs {supermerges:=S}, the number of supermerges (phase 1 then "
                "learns {vocab_size} - S tokens)"
            )
        supermerges = as_integer(self.supermerges)
        if supermerges is None or supermerges <= 0:
            raise OptionError(
                "{supermerges} must be a positive integer, not {supermerges:r}", supermerges=self.supermerges
            )
        self.supermerges = supermerges
        if supermerges >= common.vocab_size:
            raise OptionError(
                "{supermerges:v} must be smaller than {vocab_size:v}",
                supermerges=supermerges,
                vocab_size=common.vocab_size,
            )
        if common.alphabet == "bytes":  # known before reading the corpus: fail fast
            from fastsw.alphabet import default_alphabet

            n_alpha = len(default_alphabet(common.profile))
            if common.vocab_size - supermerges < n_alpha:
                raise OptionError(
                    "{vocab_size:v} - {supermerges} is smaller than the %d-token alphabet; use "
                    "{vocab_size} >= %d" % (n_alpha, n_alpha + 1 + supermerges),
                    vocab_size=common.vocab_size,
                )
        super().validate(common)


class _SuperwordTrainer(Trainer):
    """Phase 1 (BPE or parity-aware BPE), the supermerge candidates of the letter runs, phase 2."""

    needs_runs = True

    def parity(self) -> Optional[dict]:
        return self.config.resolved

    def check(self, pretokenizer, common: Common) -> None:
        if self.parity() is not None:
            check_parity_pretokenizer(pretokenizer)

    def record(self) -> dict:
        c = self.config
        return {
            "supermerges": getattr(c, "supermerges", None),
            "greedy_split": c.greedy_split,
            "min_count_floor": c.min_count_floor,
            "max_ngram_len": c.max_ngram_len,
        }

    def phase2(self, run: Run, phase1, cands, token_bytes, n_alpha: int):
        """The supermerges: ``[(left, right, count, is_supermerge)]`` in order."""
        raise NotImplementedError

    def fit(self, run: Run):
        n_alpha = len(run.alphabet)
        n_phase1 = self.phase1_merges(run.vocab_size - n_alpha)
        parity = self.parity()
        p1 = fit_phase1(run, n_phase1, parity, learner=parity_phase1_on, replay=self.name == "boundless")
        if parity is not None:
            note_parity_stop(run, parity, len(p1.merges), n_phase1)
        else:
            note_short_phase1(run, len(p1.merges), n_phase1)
        stages, counts, info = run.stages, run.counts, run.info
        t0 = time.perf_counter()
        tok1 = run.model_class(
            alphabet=run.alphabet,
            merges=[(l, r, c, False) for l, r, c in p1.merges],
            pretokenizer=run.pretokenizer,
            profile=run.profile,
            algo="bpe",
        )
        # 4. supermerge candidates
        if run.count_candidates is None:
            cands = stages.candidates(counts, p1.words, tok1)
        else:  # counted from the text on a cluster (fastsw.corpus.distributed)
            cands = run.count_candidates(stages, counts, p1.words, tok1)
        forbidden = run.pretokenizer.supermerge_forbidden
        if forbidden is not None:  # e.g. never two touching boundary markers in one token (SPEC section 9)
            cands = stages.cut(cands, tok1.vocab, forbidden)
        if not run.from_counts:  # the candidates replace the letter runs (freed for phase 2 on big corpora)
            counts.letter_runs = {}
        info["unique_candidates"] = stages.n_candidates(cands)
        # 5. optional greedy split (Algorithm 2), min_count = max(c_min, floor)
        c = self.config
        if c.greedy_split:
            cands = stages.split(cands, p1.merges[-1][2] if p1.merges else 0, c.min_count_floor, c.max_ngram_len)
            info["unique_candidates_after_split"] = stages.n_candidates(cands)
        info["seconds"]["aggregate_candidates"] = time.perf_counter() - t0
        # 6. phase 2
        merges = self.phase2(run, p1, cands, list(tok1.vocab), n_alpha)
        # a superword model's regular merges are a prefix of phase 1's (BoundlessBPE replays them
        # in order), so tok1's reachable tokens carry over without encoding them again
        return run.tokenizer(merges, algo=self.name, reachability=tok1.reachability())


class BoundlessTrainer(_SuperwordTrainer):
    """``algo="boundless"``: BoundlessBPE (Algorithm 1) interleaves supermerges with phase 1's merges."""

    name = "boundless"
    title = "BoundlessBPE"
    summary = "BoundlessBPE decides the supermerges itself"
    Config = BoundlessConfig

    def phase2(self, run: Run, p1, cands, token_bytes, n_alpha: int):
        bar = run.bar("phase 2 (BoundlessBPE)", total=len(p1.merges))
        if p1.replay is None:
            steps = run.stages.boundless(p1.merges, cands, token_bytes, n_alpha, run.rules, progress=bar)
            merges = interleave(steps, n_alpha)
        else:  # Algorithm 1 compares with the replay keys; the model keeps the parity merges' own counts
            keyed = [(l, r, key) for (l, r, _), key in zip(p1.merges, p1.replay)]
            steps = run.stages.boundless(keyed, cands, token_bytes, n_alpha, run.rules, progress=bar)
            merges = interleave(steps, n_alpha)
            regular = iter(p1.merges)
            merges = [m if m[3] else m[:2] + (next(regular)[2], False) for m in merges]
        n_reg = sum(kind == "r" for kind, *_ in steps)
        if len(merges) < len(p1.merges):
            run.note(
                f"BoundlessBPE stopped at vocabulary {n_alpha + len(merges)}: no supermerge pair was left, "
                f"so the remaining {len(p1.merges) - n_reg} regular merges were dropped (Algorithm 1's "
                "loop condition); use algo='bpe' for a plain model"
            )
        run.info["seconds"]["phase2"] = bar.close()
        return merges


class SuperBPETrainer(_SuperwordTrainer):
    """``algo="superbpe"``: ``supermerges`` supermerges after ``vocab_size - supermerges`` phase-1 tokens."""

    name = "superbpe"
    title = "SuperBPE"
    summary = "--supermerges S fixed supermerges"
    Config = SuperBPEConfig

    def phase1_merges(self, n_free: int) -> int:
        return n_free - self.config.supermerges

    def phase2(self, run: Run, p1, cands, token_bytes, n_alpha: int):
        n_super = self.config.supermerges
        bar = run.bar("phase 2 (SuperBPE)", total=n_super)
        supers = run.stages.superbpe(cands, token_bytes, n_super, run.rules, progress=bar)
        merges = [(l, r, c, False) for l, r, c in p1.merges] + [(l, r, c, True) for l, r, c in supers]
        if len(supers) < n_super:
            run.note(f"supermerge pairs ran out after {len(supers)} of {n_super} supermerges")
        run.info["seconds"]["phase2"] = bar.close()
        return merges
