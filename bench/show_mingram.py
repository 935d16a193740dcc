"""Seed 002's comparison for one language: BPE vs MinGram x the default pre-tokenizer vs boundary markers with
caps codes, at one vocabulary size (the shape of the paper's Tables 4 and 5).

Trains the four models on the first N MB of ``../shared/corpus/en/train.jsonl.gz`` and measures on the next
``--eval-mb`` MB (text none of them saw): bytes per token, the share of pretokens (occurrences, under each
model's own pre-tokenizer) that are one token, and vocabulary duplication (:func:`fastsw.duplication.
model_duplication`: entries that differ from another only by a leading space, or only by case).

    python bench/show_mingram.py --mb 50 --vocab 32768

Writes ``bench/results/show-mingram-en-<mb>MB-<vocab>.md``. Not a timing benchmark.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
from _corpus import SHARED, read_docs  # noqa: E402

SCHEMES = {"default": None, "boundary[w,p,d]+caps": "boundary[w,p,d]+caps"}


def measure(tok, docs, n_bytes: int) -> dict:
    from fastsw.corpus.counting import count_corpus
    from fastsw.eval.duplication import model_duplication

    ids, _ = tok.encode_batch_to_numpy(docs)
    counts = count_corpus(docs, tok.pretokenizer, collect_runs=False)
    single = total = 0
    for piece, n in zip(counts.pretokens, counts.counts):
        total += n
        if len(tok.encode_pretoken(piece)) == 1:
            single += n
    dup = model_duplication(tok)
    return {
        "bytes_per_token": n_bytes / len(ids),
        "single_token_pretokens": single / total if total else 0.0,
        "dup_space": dup["space"],
        "dup_case": dup["case"],
        "vocab_size": tok.vocab_size,
    }


def main() -> None:
    import fastsw

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--eval-mb", type=float, default=5)
    ap.add_argument("--vocab", type=int, default=32768)
    ap.add_argument("--overshoot", type=float, default=1.15, help="MinGram's seed factor (the paper grids' 1.15)")
    args = ap.parse_args()
    docs, n_train = read_docs(SHARED / "corpus" / "en" / "train.jsonl.gz", int(args.mb * 1e6))
    held, n_held = read_docs(
        SHARED / "corpus" / "en" / "train.jsonl.gz", int(args.eval_mb * 1e6), skip_bytes=int(args.mb * 1e6)
    )
    rows = []
    warnings.simplefilter("ignore")
    for scheme, pretok in SCHEMES.items():
        for algo in ("bpe", "mingram"):
            t = time.perf_counter()
            extra = {"overshoot": args.overshoot} if algo == "mingram" else {}
            tok = fastsw.train(docs, algo=algo, vocab_size=args.vocab, pretokenizer=pretok, **extra)
            row = {"algo": algo, "scheme": scheme, "train_s": time.perf_counter() - t, **measure(tok, held, n_held)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    out = HERE / "results" / f"show-mingram-en-{args.mb:g}MB-{args.vocab}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"# BPE vs MinGram x default vs boundary[w,p,d]+caps: English, trained on {args.mb:g} MB, vocab "
        f"{args.vocab} (MinGram overshoot {args.overshoot}), measured on the next {args.eval_mb:g} MB",
        "",
        "| algo | pre-tokenizer | vocab | bytes/token | pretokens in one token | dup. space % | dup. case % |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['algo']} | {r['scheme']} | {r['vocab_size']} | {r['bytes_per_token']:.3f} | "
            f"{100 * r['single_token_pretokens']:.1f} % | {100 * r['dup_space']:.1f} | "
            f"{100 * r['dup_case']:.1f} |"
        )
    out.write_text("\n".join(lines) + "\n")
    (out.with_suffix(".json")).write_text(json.dumps(rows, indent=1))
    print(out.read_text())


if __name__ == "__main__":
    main()
