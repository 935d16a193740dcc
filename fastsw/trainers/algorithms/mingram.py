"""The MinGram trainer (``algo="mingram"``): a BPE seed ``overshoot`` times the target (phase 1), then
:func:`fastsw.trainers.mingram.train_from_seed` (Hard EM and the prunes; :mod:`fastsw.trainers.mingram_fast` on
the fast path)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

from fastsw.trainers.algorithms.bpe import fit_phase1
from fastsw.trainers.base import OptionError, Run, Trainer, TrainerConfig, option
from fastsw.trainers.mingram import CRITERIA, MAX_SEED_MERGES, check_mingram_options, train_from_seed


@dataclass
class MinGramConfig(TrainerConfig):
    """MinGram's options (MINGRAM.md 1.9); None takes the default (:data:`DEFAULTS`)."""

    help_title: ClassVar[str] = "MinGram"
    help_text: ClassVar[str] = (
        "--algo mingram: a BPE seed of floor((N - alphabet) * overshoot) merges, Hard EM on "
        "the minimum-token-count path, one flat prune to --vocab-size"
    )
    help_order: ClassVar[int] = 4

    overshoot: Optional[float] = option(
        None,
        "seed size factor >= 1 (default 1.1, the seed authors' code; their paper grids used 1.15)",
        metavar="F",
        type=float,
    )
    em_iterations: Optional[int] = option(None, "E/M steps per round (default 2)", metavar="K", type=int)
    score_delta: Optional[float] = option(
        None, "path score sum(D * log_prob - 1) (default 1e-5; 0 = pure minimum token count)", metavar="D", type=float
    )
    prune_criterion: Optional[str] = option(
        None, "flat prune by usage count (default) or MinGram-PP's extra-token cost (mi)", choices=CRITERIA
    )
    refill: bool = option(
        False, "re-add the best dropped tokens when the model ends below --vocab-size (the seed authors' code does not)"
    )

    def validate(self, common=None) -> None:
        self.resolved = check_mingram_options(
            self.overshoot, self.em_iterations, self.score_delta, self.prune_criterion
        )
        self.resolved["refill"] = bool(self.refill)


class MinGramTrainer(Trainer):
    """``algo="mingram"``: a BPE seed ``overshoot`` times the target, Hard EM, one flat prune
    (:func:`train_from_seed`); the model is a :class:`MinGramTokenizer`."""

    name = "mingram"
    title = "MinGram"
    summary = "MinGram (a BPE seed pruned to the minimum-token-count vocabulary)"
    Config = MinGramConfig

    def phase1_merges(self, n_free: int) -> int:  # the BPE seed overshoots the target (MINGRAM.md 1.1)
        factor = self.config.resolved["overshoot"]
        if n_free * factor > MAX_SEED_MERGES:
            raise OptionError(
                "{overshoot:v} asks for a BPE seed of %d x %r merges, beyond 2**63-1, the largest "
                "fastsw trains; use a small factor such as 1.1 or 1.15" % (n_free, factor),
                overshoot=factor,
            )
        return int(n_free * factor)

    def fit(self, run: Run):
        options = self.config.resolved
        n_seed = self.phase1_merges(run.vocab_size - len(run.alphabet))
        p1 = fit_phase1(run, n_seed)
        if run.counts.pretokens and len(p1.merges) < n_seed:
            run.note(
                f"the MinGram BPE seed ran out of pairs after {len(p1.merges)} of {n_seed} merges "
                f"(overshoot {options['overshoot']}); MinGram trains on the smaller seed"
            )
        bar = run.bar("MinGram E/M steps")
        tok = train_from_seed(
            run.counts,
            run.alphabet,
            run.pretokenizer,
            run.profile,
            p1.merges,
            p1.words,
            run.vocab_size,
            options,
            run.stages.name,
            run.info,
            normalize=run.normalize,
            special_tokens=run.special_tokens,
            progress=bar,
            token_bytes=p1.token_bytes,
        )
        bar.close()
        return tok
