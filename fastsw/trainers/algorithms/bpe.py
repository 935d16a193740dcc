"""The BPE trainer (``algo="bpe"``), and phase 1 of every trainer: BPE merges on the run's backend
(:mod:`fastsw.trainers.bpe` on the reference path, :mod:`fastsw.trainers.bpe_fast` on the fast one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from fastsw.trainers.base import Run, Trainer, TrainerConfig


@dataclass
class Phase1:
    """What phase 1 leaves: ``merges`` ``(left, right, count)``, ``words`` (every pretoken's final token ids, as the
    backend gives them), ``token_bytes`` (the tokens' bytes); with parity-aware phase 1, ``parity`` (the
    :class:`~fastsw.trainers.parity.ParityMerges`) and ``replay`` (BoundlessBPE's comparison keys)."""

    merges: list
    words: object
    token_bytes: list
    parity: object = None
    replay: Optional[list] = None


def fit_phase1(run: Run, n_merges: int, parity: Optional[dict] = None, *, learner=None, replay: bool = False) -> Phase1:
    """Phase 1 of every trainer: ``n_merges`` BPE merges on ``run.stages``, or parity-aware ones with the
    ``parity`` options and their ``learner`` (:func:`fastsw.trainers.parity.parity_phase1_on`; ``replay``: also
    BoundlessBPE's keys). Records ``seconds["phase1"]`` and the JIT warmup; notes an empty corpus."""
    if parity is None:
        bar = run.bar("phase 1 merges", total=n_merges)
        out = Phase1(*run.stages.phase1(run.counts, run.alphabet, run.profile, n_merges, progress=bar))
    else:
        bar = run.bar("phase 1 merges (parity-aware)", total=n_merges)
        out = Phase1(*learner(run, n_merges, parity, progress=bar, replay=replay))
    run.info["seconds"]["phase1"] = bar.close()
    if run.stages.warmup_seconds is not None:
        run.info["seconds"]["jit_warmup"] = run.stages.warmup_seconds
    if not run.counts.pretokens:
        run.note("the corpus is empty (no pretokens): the model is just the alphabet")
    return out


def note_short_phase1(run: Run, got: int, wanted: int) -> None:
    """The note of a phase 1 that ran out of pairs (unless the corpus was empty)."""
    if run.counts.pretokens and got < wanted:
        run.note(f"pairs ran out after {got} of {wanted} phase-1 merges; the model is smaller than requested")


@dataclass
class BPEConfig(TrainerConfig):
    """Plain BPE has no options beyond :func:`fastsw.train`'s own."""


class BPETrainer(Trainer):
    """``algo="bpe"``: regular merges only (phase 1 alone)."""

    name = "bpe"
    title = "BPE"
    summary = "regular merges only (default, as fastsw.train())"
    Config = BPEConfig

    def fit(self, run: Run):
        n = run.vocab_size - len(run.alphabet)
        merges = fit_phase1(run, n).merges
        note_short_phase1(run, len(merges), n)
        return run.tokenizer([(l, r, c, False) for l, r, c in merges], algo="bpe")
