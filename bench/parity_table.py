"""Ordinary BPE against parity-aware BPE (plain, hybrid, window) on real multilingual text: Gini and compression
on XQuAD's test split (the shape of seed 001's Table 1), and training time against BPE's on the same text.

Training text: the first ``--mb`` MB of each ``../shared/corpus/<lang>/train.jsonl.gz`` (the sizes read are
printed; ar, hi and my have less). Two setups:

* ``xquad7``: the 7 languages with an XQuAD dev text (ar, de, en, hi, ru, th, zh), dev = ``parallel/xquad.dev.*``
  (120 parallel documents each);
* ``all12``: all 12 languages, target compression ratio 1 each (XQuAD has no fi, fr, ja, ko or my text, so the
  dev criterion cannot cover them).

Variants: ``BPE``; ``PA-BPE``; ``hybrid`` (the first half of the merges ordinary BPE, seed 001's Table 2);
``window`` (``window=100, alpha=2``). Each tokenizer encodes ``parallel/xquad.test.<lang>`` (120 parallel
documents) of the 7 XQuAD languages; the table gives the Gini coefficient of the per-language token counts
(``fastsw.eval.metrics.gini``; 0 = every language needs the same number of tokens) and the compression (seed 001:
documents / tokens over all 7 test texts, ``fastsw.eval.metrics.sentences_per_token``), the merges learned (PA-BPE
stops when the language it chooses has no pair left seen twice) and the ``train()`` wall time (numba backend,
after a warm-up) with its ratio to BPE's on the same text.

``--pretokenizer simple`` (GPT-4o's pattern over whole documents) lets Thai, Chinese and Burmese words be merged:
with the default ``script`` pre-tokenizer their pretokens are single letters, so their token counts soon reach a
floor, and plain PA-BPE with dev texts keeps choosing Thai (the longest dev text) until it has no pair left.

    python bench/parity_table.py --mb 1 --vocab 8192 32768 [--pretokenizer simple] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from _corpus import SHARED, read_docs  # noqa: E402  (bench/ is on sys.path when run as a script)

import fastsw  # noqa: E402
from fastsw.files import atomic_open  # noqa: E402
from fastsw.eval.metrics import gini, sentences_per_token  # noqa: E402
from fastsw.notes import VocabularyNotReachedWarning  # noqa: E402

LANGS = ["ar", "de", "en", "fi", "fr", "hi", "ja", "ko", "my", "ru", "th", "zh"]
XQUAD = ["ar", "de", "en", "hi", "ru", "th", "zh"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0, help="MB of training text per language (at most)")
    ap.add_argument("--vocab", type=int, nargs="+", default=[8192, 32768])
    ap.add_argument("--setups", nargs="+", default=["xquad7", "all12"], choices=["xquad7", "all12"])
    ap.add_argument(
        "--pretokenizer",
        default="script",
        choices=["script", "simple"],
        help="script (default: Han, Thai, Myanmar, ... one letter per pretoken) or simple (GPT-4o)",
    )
    ap.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = ap.parse_args()
    warnings.simplefilter("ignore", VocabularyNotReachedWarning)  # the early stop is in the table
    limit = int(args.mb * 1e6)
    train, sizes = {}, {}
    for lang in LANGS:
        train[lang], sizes[lang] = read_docs(SHARED / "corpus" / lang / "train.jsonl.gz", limit)
    par = SHARED / "corpus" / "parallel"
    dev = {lang: read_docs(par / f"xquad.dev.{lang}.jsonl")[0] for lang in XQUAD}
    test = {lang: read_docs(par / f"xquad.test.{lang}.jsonl")[0] for lang in XQUAD}
    n_docs = {len(d) for d in test.values()}
    assert len(n_docs) == 1, "xquad.test.* must be parallel"
    n_docs = n_docs.pop()
    shown = ", ".join(f"{lang} {sizes[lang] / 1e6:.2f}" for lang in LANGS)
    print(f"training text (MB): {shown}")

    fastsw.train(["warm up the kernels"], vocab_size=300, backend="numba")
    fastsw.train(
        {"a": ["warm up"], "b": ["up warm"]},
        algo="parity-bpe",
        ratios={"a": 1, "b": 1},
        vocab_size=300,
        backend="numba",
    )

    lines = [
        f"Pre-tokenizer `{args.pretokenizer}`. Training text: first {args.mb:g} MB per language ({shown} MB); "
        "evaluation: `xquad.test` of "
        f"{', '.join(XQUAD)} ({n_docs} parallel documents each). Gini of per-language test token counts "
        "(lower = fairer), compression = documents / tokens over the 7 test texts (higher = shorter). "
        "Time: `train()` wall, numba backend.",
        "",
        "| setup | vocab | tokenizer | merges | Gini | compression | tokens en / hi / th | train() (s) | "
        "time / BPE's |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for setup in args.setups:
        langs = XQUAD if setup == "xquad7" else LANGS
        inputs = {lang: train[lang] for lang in langs}
        criterion = (
            {"dev": {lang: dev[lang] for lang in langs}} if setup == "xquad7" else {"ratios": dict.fromkeys(langs, 1)}
        )
        for vocab in args.vocab:
            variants = [
                ("BPE", {"algo": "bpe"}),
                ("PA-BPE", {"algo": "parity-bpe", **criterion}),
                ("PA-BPE hybrid", {"algo": "parity-bpe", "global_merges": (vocab - 256) // 2, **criterion}),
                ("PA-BPE window", {"algo": "parity-bpe", "parity_variant": "window", **criterion}),
            ]
            bpe_time = None
            for label, kw in variants:
                t0 = time.perf_counter()
                tok = fastsw.train(inputs, vocab_size=vocab, backend="numba", pretokenizer=args.pretokenizer, **kw)
                seconds = time.perf_counter() - t0
                bpe_time = bpe_time or seconds
                counts = {lang: sum(len(ids) for ids in tok.encode_batch(test[lang])) for lang in XQUAD}
                g = gini(counts)
                comp = sentences_per_token(n_docs * len(XQUAD), sum(counts.values()))
                row = (
                    f"| {setup} | {vocab} | {label} | {tok.n_regular} | {g:.4f} | {comp:.5f} | "
                    f"{counts['en']} / {counts['hi']} / {counts['th']} | {seconds:.2f} | "
                    f"{seconds / bpe_time:.2f}x |"
                )
                lines.append(row)
                print(row, flush=True)
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    if args.markdown:
        with atomic_open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
