"""Seed 001's toy experiment: language weights from target byte shares, on XQuAD.

Five languages of the parallel XQuAD set (``../shared/corpus/parallel/``): the first 16 paragraphs of
``xquad.dev.<lang>.jsonl`` train, the first 8 of ``xquad.test.<lang>.jsonl`` evaluate (seed 001 used 16/8 sentences
of its own toy set, which we do not have; paragraphs are longer, so the numbers differ, the direction does not).
Byte-level BPE with the 256-byte alphabet (``profile="hf"``), 256 merges, ``pretokenizer="none"`` (one pretoken per
paragraph: merges may cross spaces, never paragraphs), no normalization. Three conditions, each language weighted
``w = 100000 * p / B`` (exact Fractions, no sampling; ``fastsw.train(shares=...)``):

* uniform: every language 1/5 of the weighted bytes;
* 80 % English: English 4/5, every other language 1/20;
* "50 % English": the square roots of the 80 % shares, normalised to sum to 1. The square roots are floats, so each
  is read as an exact Fraction of its value rounded to 4 decimals (``Fraction("0.8944")``, ``Fraction("0.2236")``)
  before normalising; at 4 decimals sqrt(1/20) = sqrt(4/5) / 4 still holds, so English gets exactly 1/2 and every
  other language 1/8.

Evaluation applies no weights: the token count of each language's 8 paragraphs, the Gini coefficient of those counts
(``fastsw.eval.metrics.gini``; 0 = parity) and the compression, sentences (paragraphs, all languages) per token
(``fastsw.eval.metrics.sentences_per_token``). Prints a markdown table::

    python examples/seed001_weights.py            # FASTSW_SHARED=/path/to/shared, or ../shared next to the repo

The scaled integer counts of five languages' shares pass 64 bits, so these models train on the python backend
(exact big integers; the ``backend`` column says so) and take a few seconds each.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import fastsw
from fastsw.eval.metrics import gini, sentences_per_token

LANGUAGES = ("en", "de", "ru", "zh", "ar")
N_TRAIN, N_EVAL, N_MERGES = 16, 8, 256


def default_data() -> Path:
    shared = os.environ.get("FASTSW_SHARED")
    root = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return root / "corpus" / "parallel"


def paragraphs(data: Path, split: str, lang: str, n: int):
    """The first ``n`` paragraphs (``text`` fields) of ``xquad.<split>.<lang>.jsonl`` in ``data``."""
    with open(data / f"xquad.{split}.{lang}.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line, _ in zip(f, range(n))]


def conditions(languages=LANGUAGES):
    """``{condition: {language: share}}`` with exact Fraction shares summing to 1 (the first language is English)."""
    en, others = languages[0], languages[1:]
    uniform = {lang: Fraction(1, len(languages)) for lang in languages}
    eighty = {en: Fraction(4, 5), **{lang: Fraction(1, 5) / len(others) for lang in others}}
    roots = {lang: Fraction(f"{math.sqrt(p):.4f}") for lang, p in eighty.items()}  # floats, 4 decimals, exact
    fifty = {lang: r / sum(roots.values()) for lang, r in roots.items()}
    return {"uniform": uniform, "80 % English": eighty, "50 % English": fifty}


def run(data: Path = None, languages=LANGUAGES, n_train: int = N_TRAIN, n_eval: int = N_EVAL, n_merges: int = N_MERGES):
    """Train one model per condition and evaluate it: a list of rows ``{"condition", "shares", "tokens"
    ({language: count}), "gini", "compression", "backend"}``."""
    data = data or default_data()
    train = {lang: paragraphs(data, "dev", lang, n_train) for lang in languages}
    test = {lang: paragraphs(data, "test", lang, n_eval) for lang in languages}
    rows = []
    for name, shares in conditions(languages).items():
        with warnings.catch_warnings():  # the fallback to exact big integers is expected here: see the module doc
            warnings.simplefilter("ignore", fastsw.OptionWarning)
            tok = fastsw.train(
                train, shares=shares, algo="bpe", vocab_size=256 + n_merges, profile="hf", pretokenizer="none"
            )
        tokens = {lang: sum(len(ids) for ids in tok.encode_batch(test[lang])) for lang in languages}
        rows.append(
            {
                "condition": name,
                "shares": shares,
                "tokens": tokens,
                "gini": gini(tokens),
                "compression": sentences_per_token(n_eval * len(languages), sum(tokens.values())),
                "backend": tok.training_info["backend"],
            }
        )
    return rows


def markdown(rows, languages=LANGUAGES) -> str:
    """The rows of :func:`run` as a markdown table."""
    head = (
        ["condition", "English share"]
        + [f"tokens {lang}" for lang in languages]
        + ["English % of tokens", "Gini", "compression", "backend"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        total = sum(r["tokens"].values())
        cells = [r["condition"], f"{float(r['shares'][languages[0]]):.1%}"]
        cells += [str(r["tokens"][lang]) for lang in languages]
        cells += [
            f"{r['tokens'][languages[0]] / total:.1%}",
            f"{r['gini']:.4f}",
            f"{r['compression']:.5f}",
            r["backend"],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder with xquad.{dev,test}.<lang>.jsonl (default: $FASTSW_SHARED/corpus/parallel)",
    )
    args = p.parse_args(argv)
    print(markdown(run(args.data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
