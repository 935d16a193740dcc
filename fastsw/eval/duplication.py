"""Vocabulary duplication of a model (seed 002 Table 5), for ``fastsw inspect`` and ``fastsw eval``.

The formula is :func:`fastsw.eval.metrics.vocab_duplication`'s; this module only decides what a model's entries look like
to it: plain token bytes, or, for a model whose pre-tokenizer emits atoms (boundary markers and caps codes,
:mod:`fastsw.pretokenizers.boundary`), the entries' readable form with the caps codes as ``case_codes``. It is separate from
:mod:`fastsw.pretokenizers.boundary` so that the pre-tokenizers never import the metrics (and through them the tokenizer).
"""

from __future__ import annotations

from typing import Dict

from fastsw.alphabet import atom_text
from fastsw.pretokenizers.boundary import CAPS, SHIFT
from fastsw.eval.metrics import vocab_duplication

__all__ = ["model_duplication"]


def model_duplication(tok) -> Dict[str, float]:
    """Seed 002 Table 5 for a model: ``{"space": s, "case": c}``, the shares of vocabulary entries that duplicate
    another by one leading space or by capitalization (:func:`fastsw.eval.metrics.vocab_duplication`, reused as it is).
    A model with atoms is measured on its entries' readable form (its pre-tokenizer's ``entry_text``: markers as ``¦``, caps codes as
    ``↑``/``⇑``), with the caps codes as ``case_codes``, so ``↑¦the¦`` and ``¦The¦`` duplicate ``¦the¦``. (In that
    form a text character ``¦``, ``↑`` or ``⇑`` reads like an atom; it only matters for entries that hold one.)

        >>> import fastsw
        >>> model_duplication(fastsw.train(["The the the", "the The"], algo="bpe", vocab_size=248))["case"] > 0
        True
    """
    vocab = list(tok.vocab)
    if hasattr(tok.alphabet, "atoms"):
        entries = []
        readable = tok.pretokenizer.entry_text  # markers as ¦ ↑ ⇑; SCRIPT: its atoms back to characters
        for tb in vocab:
            try:
                entries.append(readable(atom_text(tb)).encode("utf-8"))
            except UnicodeDecodeError:  # a partial character: no case, and a space test on its bytes
                entries.append(tb)
        return vocab_duplication(entries, case_codes=(SHIFT.shown, CAPS.shown))
    return vocab_duplication(vocab)
